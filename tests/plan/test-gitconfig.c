/* SPDX-License-Identifier: Apache-2.0 */
/* The git config reader (src/plan/gitconfig.c). Every expectation here was checked against
 * `git config -f FILE --get-all core.hookspath` (git 2.39): a key git obeys must be found, a
 * section git does not call [core] must not count, and what git rejects is rejected. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>

#include <cmocka.h>

#include "plan/gitconfig.h"

static void values_freep(gitconfig_values *v) {
        gitconfig_values_done(v);
}
#define _cleanup_values_ _cleanup_(values_freep)

static int parse(const char *text, gitconfig_values *v) {
        return gitconfig_parse(text, strlen(text), v);
}

/* Parses `text`, expects success and exactly the hooksPath values given (NULL-terminated). */
static void expect_hooks(const char *text, ...) {
        _cleanup_values_ gitconfig_values v = { 0 };
        int r = parse(text, &v);
        if (r < 0)
                print_message("parse failed (%d) for:\n%s\n", r, text);
        assert_int_equal(r, 0);
        va_list ap;
        va_start(ap, text);
        size_t n = 0;
        for (const char *want; (want = va_arg(ap, const char *)); n++) {
                if (n >= v.hooks_path.n)
                        print_message("missing '%s' for:\n%s\n", want, text);
                assert_true(n < v.hooks_path.n);
                assert_string_equal(v.hooks_path.v[n], want);
        }
        va_end(ap);
        if (v.hooks_path.n != n)
                print_message("extra '%s' for:\n%s\n", v.hooks_path.v[n], text);
        assert_int_equal(v.hooks_path.n, n);
}

static void expect_invalid(const char *text) {
        gitconfig_values v = { 0 };
        assert_int_equal(strv_push(&v.hooks_path, "before"), 0);
        int r = parse(text, &v);
        if (r != -EINVAL)
                print_message("got %d, want -EINVAL, for:\n%s\n", r, text);
        assert_int_equal(r, -EINVAL);
        /* All or nothing: what was there stays, nothing from the bad file is added. */
        assert_int_equal(v.hooks_path.n, 1);
        assert_string_equal(v.hooks_path.v[0], "before");
        assert_int_equal(v.fsmonitor.n, 0);
        assert_int_equal(v.include.n, 0);
        gitconfig_values_done(&v);
}

static void test_core_section(void **state) {
        expect_hooks("[core]\n\thooksPath = .husky\n", ".husky", NULL);
        expect_hooks("[CoRe]\nHOOKSPATH=x\n", "x", NULL);
        expect_hooks("[core] hooksPath = same-line\n", "same-line", NULL);
        expect_hooks("[core]\nhooksPath \t = x", "x", NULL); /* no final newline */
        expect_hooks("[core]\nhooksPath = a\nhooksPath = b\n", "a", "b", NULL);
        expect_hooks("[core]\nhooksPath=x\n[core \"a\"]\nhooksPath=no\n[core]\nhooksPath=y",
                     "x", "y", NULL);
        /* Not [core]: a subsection (quoted or legacy dotted), another name, no section. */
        expect_hooks("[core \"sub\"]\nhooksPath = x\n", NULL);
        expect_hooks("[core \"\"]\nhooksPath = x\n", NULL);
        expect_hooks("[core.sub]\nhooksPath = x\n", NULL);
        expect_hooks("[core.]\nhooksPath = x\n", NULL);
        expect_hooks("[.core]\nhooksPath = x\n", NULL);
        expect_hooks("[score]\nhooksPath = x\n[cores]\nhooksPath = y\n", NULL);
        expect_hooks("hooksPath = x\n[core]\n", NULL);
        expect_hooks("[core]\nhooksPathX = x\nxhooksPath = y\nhooks-path = z\n", NULL);
        /* A key without a value is boolean true, never a path. */
        expect_hooks("[core]\nhooksPath\n", NULL);
}

static void test_values(void **state) {
        expect_hooks("[core]\nhooksPath = \"a # b\" ; c\n", "a # b", NULL);
        expect_hooks("[core]\nhooksPath = x # c\n", "x", NULL);
        expect_hooks("[core]\nhooksPath = x;c\n", "x", NULL);
        expect_hooks("[core]\nhooksPath =   x y   \n", "x y", NULL);
        expect_hooks("[core]\nhooksPath = \" x \"\n", " x ", NULL);
        expect_hooks("[core]\nhooksPath = a\\\nb\n", "ab", NULL);
        expect_hooks("[core]\nhooksPath = \"q\\\"t\\\\\"\n", "q\"t\\", NULL);
        expect_hooks("[core]\nhooksPath = a\\tb\\nc\n", "a\tb\nc", NULL);
        expect_hooks("[core]\n  # comment\n  ; c\nhooksPath = \"x\"y\n", "xy", NULL);
        expect_hooks("[core] ; c\nhooksPath = x\n", "x", NULL);
        expect_hooks("[core]\nhooksPath = \n", "", NULL);
        expect_hooks("[core]\r\nhooksPath = crlf\r\n", "crlf", NULL);
        expect_hooks("\xef\xbb\xbf[core]\nhooksPath = bom\n", "bom", NULL);
        expect_hooks("", NULL);
}

static void test_invalid(void **state) {
        expect_invalid("[core]\nhooksPath = a\\q\n");  /* unknown escape */
        expect_invalid("[core]\nhooksPath = \"a\n");   /* unterminated quote */
        expect_invalid("[core]\nhooks_path = x\n");    /* not a key character */
        expect_invalid("[core]\n1hooksPath = x\n");    /* keys start with a letter */
        expect_invalid("[core]\nhooksPath x\n");       /* no '=' */
        expect_invalid("[ core]\nhooksPath = x\n");
        expect_invalid("[core ]\nhooksPath = x\n");
        expect_invalid("[co_re]\nhooksPath = x\n");
        expect_invalid("[core \"x\" ]\n");
        expect_invalid("[core \"x\n\"]\n");
        expect_invalid("[]\n");
        expect_invalid("[includeif.onbranch:main]\n"); /* ':' only in a quoted subsection */
        expect_invalid("[core");
        expect_invalid("\xef\xbb[core]\nhooksPath = x\n"); /* part of a BOM */
        /* A good entry before the error is not kept either. */
        expect_invalid("[core]\nhooksPath = good\nfsmonitor = ./m\n[include]\npath = i\n!\n");
        gitconfig_values v = { 0 };
        static const char nul[] = "[core]\nhooksPath = a\0b\n";
        assert_int_equal(gitconfig_parse(nul, sizeof(nul) - 1, &v), -EINVAL);
        assert_int_equal(v.hooks_path.n, 0);
}

static void test_fsmonitor_and_includes(void **state) {
        _cleanup_values_ gitconfig_values v = { 0 };
        assert_int_equal(parse("[core]\n\tfsmonitor = \"touch /x\"\n\tfsmonitor = true\n"
                               "[include]\n\tpath = ~/inc\n"
                               "[includeIf \"gitdir:~/work/\"]\n\tpath = rel.inc\n"
                               "[includeif.x]\n\tpath = legacy.inc\n"
                               "[include \"x\"]\n\tpath = no1\n"
                               "[includeIf]\n\tpath = no2\n"
                               "[include.x]\n\tpath = no3\n"
                               "[core]\n\tpath = no4\n",
                               &v),
                         0);
        assert_int_equal(v.fsmonitor.n, 2);
        assert_string_equal(v.fsmonitor.v[0], "touch /x");
        assert_string_equal(v.fsmonitor.v[1], "true");
        assert_int_equal(v.include.n, 3);
        assert_string_equal(v.include.v[0], "~/inc");
        assert_string_equal(v.include.v[1], "rel.inc");
        assert_string_equal(v.include.v[2], "legacy.inc");
        assert_int_equal(v.hooks_path.n, 0);
        /* A second file appends. */
        assert_int_equal(parse("[core]\nhooksPath=h\n", &v), 0);
        assert_int_equal(v.hooks_path.n, 1);
        assert_int_equal(v.include.n, 3);
}

static void test_bounds(void **state) {
        gitconfig_values v = { 0 };
        size_t big = GITCONFIG_MAX_SIZE + 1;
        char *text = malloc(big + 1);
        assert_non_null(text);
        memset(text, '\n', big);
        text[big] = '\0';
        assert_int_equal(gitconfig_parse(text, big, &v), -E2BIG);
        assert_int_equal(gitconfig_parse(text, big - 1, &v), 0); /* exactly the limit */
        /* More values of interest than any real config has. */
        size_t off = (size_t) sprintf(text, "[core]\n");
        for (unsigned i = 0; i <= GITCONFIG_MAX_VALUES; i++)
                off += (size_t) sprintf(text + off, "hooksPath = h%u\n", i);
        assert_int_equal(gitconfig_parse(text, off, &v), -E2BIG);
        assert_int_equal(v.hooks_path.n, 0);
        /* Uninteresting keys do not count. */
        off = (size_t) sprintf(text, "[core]\n");
        for (unsigned i = 0; i <= 2 * GITCONFIG_MAX_VALUES; i++)
                off += (size_t) sprintf(text + off, "editor = e%u\n", i);
        assert_int_equal(gitconfig_parse(text, off, &v), 0);
        free(text);
        gitconfig_values_done(&v);
}

static void test_is_bool(void **state) {
        static const char *const bools[] = { "true", "YES", "On", "false", "no", "OFF", "",
                                             "1", "0", "-1", "+2", "10k", "2M", "1g", "0x10" };
        static const char *const commands[] = { "./fsmon", "touch x", "/usr/bin/watchman",
                                                "truex", "1q", "3g", "99999999999", "k" };
        for (size_t i = 0; i < ELEMENTSOF(bools); i++) {
                if (!gitconfig_is_bool(bools[i]))
                        print_message("'%s' should be a boolean\n", bools[i]);
                assert_true(gitconfig_is_bool(bools[i]));
        }
        for (size_t i = 0; i < ELEMENTSOF(commands); i++) {
                if (gitconfig_is_bool(commands[i]))
                        print_message("'%s' should be a command\n", commands[i]);
                assert_false(gitconfig_is_bool(commands[i]));
        }
        assert_true(gitconfig_is_bool(NULL));
}

/* Random input over the bytes that matter to the grammar: never a crash (the unit suite also
 * runs under ASan+UBSan), and a success never yields more values than the bound. */
/* gitconfig_vet: what git init, clone, remote add, submodule add and worktree add write passes;
 * every key that runs a program or names a file is found and named. */
static int vet(const char *text, const char **key) {
        strv roots = { 0 };
        assert_int_equal(strv_push(&roots, "/ws"), 0);
        *key = NULL;
        int r = gitconfig_vet(text, strlen(text), "/ws/a/.git/modules/sub", &roots, key);
        strv_done(&roots);
        return r;
}

static void test_vet(void **state) {
        (void) state;
        const char *key = NULL;
        static const char *const clean[] = {
                "",
                "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n"
                "\tlogallrefupdates = true\n",
                "[remote \"origin\"]\n\turl = http://127.0.0.1:8080/r.git\n"
                "\tfetch = +refs/heads/*:refs/remotes/origin/*\n[branch \"main\"]\n"
                "\tremote = origin\n\tmerge = refs/heads/main\n",
                "[user]\n\tname = x\n\temail = x@example.invalid\n",
                "[submodule \"sub\"]\n\turl = ../sub\n\tactive = true\n",
                "[core]\n\tworktree = ../../../sub\n", /* from /ws/a/.git/modules/sub: /ws/a/sub */
                "[core]\n\tfsmonitor = false\n[core]\n\tfsmonitor\n",
                "[extensions]\n\tworktreeConfig = true\n",
                "[alias]\n\tst = status -sb\n",
                "[submodule \"x\"]\n\tupdate = rebase\n",
                "[core \"x\"]\n\thooksPath = /evil\n", /* not [core]: git ignores it */
        };
        for (size_t i = 0; i < ELEMENTSOF(clean); i++)
                if (vet(clean[i], &key) != 0)
                        fail_msg("clean config %zu refused (%s)", i, key);
        static const struct {
                const char *text, *key;
        } bad[] = {
                { "[core]\n\tfsmonitor = touch /tmp/x\n", "core.fsmonitor" },
                { "[CORE]\n\tFsMonitor = \"sh -c x\"\n", "core.fsmonitor" },
                { "[core]\n\thooksPath = .husky\n", "core.hookspath" },
                { "[core]\n\tsshCommand = ssh -o ProxyCommand=x\n", "core.sshcommand" },
                { "[core]\n\teditor = vi\n", "core.editor" },
                { "[core]\n\tpager = less\n", "core.pager" },
                { "[core]\n\taskPass = x\n", "core.askpass" },
                { "[core]\n\tworktree = /home/u\n", "core.worktree" },
                { "[core]\n\tworktree = ../../../../../home/u\n", "core.worktree" },
                { "[core]\n\tworktree = ~/x\n", "core.worktree" },
                { "[credential]\n\thelper = !x\n", "credential.helper" },
                { "[credential \"https://x\"]\n\thelper = x\n", "credential.*.helper" },
                { "[filter \"lfs\"]\n\tclean = x\n", "filter.*.clean" },
                { "[filter.lfs]\n\tsmudge = x\n", "filter.*.smudge" },
                { "[filter \"x\"]\n\tprocess = x\n", "filter.*.process" },
                { "[diff \"x\"]\n\ttextconv = x\n", "diff.*.textconv" },
                { "[diff]\n\texternal = x\n", "diff.external" },
                { "[merge \"x\"]\n\tdriver = x %A\n", "merge.*.driver" },
                { "[gpg]\n\tprogram = x\n", "gpg.program" },
                { "[gpg \"ssh\"]\n\tprogram = x\n", "gpg.*.program" },
                { "[sequence]\n\teditor = x\n", "sequence.editor" },
                { "[include]\n\tpath = ../x\n", "include.path" },
                { "[includeIf \"gitdir:/\"]\n\tpath = x\n", "includeif.*.path" },
                { "[uploadpack]\n\tpackObjectsHook = x\n", "uploadpack.packobjectshook" },
                { "[alias]\n\tx = !sh -c y\n", "alias.*" },
                { "[submodule \"x\"]\n\tupdate = !sh\n", "submodule.*.update" },
                { "[remote \"o\"]\n\tuploadpack = x\n", "remote.*.uploadpack" },
                { "[pager]\n\tlog = x\n", "pager.*" },
                { "[sendemail]\n\tsmtpServer = /x\n", "sendemail.*" },
                { "[protocol]\n\tallow = always\n", "protocol.allow" },
                { "[protocol \"ext\"]\n\tallow = always\n", "protocol.*.allow" },
                { "[http]\n\tproxy = http://x\n", "http.proxy" },
                { "[difftool \"x\"]\n\tcmd = x\n", "difftool.*.cmd" },
                { "[core]\n\tbare = false\n[core]\n\tfsmonitor = x\n", "core.fsmonitor" },
                { "[core]\n\tfsmonitor = x\\\n y\n", "core.fsmonitor" },
        };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                if (vet(bad[i].text, &key) != 1)
                        fail_msg("dangerous config %zu passed: %s", i, bad[i].text);
                assert_string_equal(key, bad[i].key);
        }
        /* Replacing a config: what the old one held with the same value stays (the user's
         * husky hooksPath across `git config user.name x`), anything new is still found. */
        static const char old[] = "[core]\n\thooksPath = .husky/_\n[alias]\n\tx = !make\n";
        static const char same[] = "[core]\n\thooksPath = .husky/_\n[user]\n\tname = x\n"
                                   "[alias]\n\tx = !make\n";
        static const char moved[] = "[core]\n\thooksPath = ../../evil\n";
        static const char added[] = "[core]\n\thooksPath = .husky/_\n\tfsmonitor = x\n";
        assert_int_equal(gitconfig_vet_replacing(same, strlen(same), old, strlen(old), "/ws/.git",
                                                 NULL, &key), 0);
        assert_int_equal(gitconfig_vet_replacing(moved, strlen(moved), old, strlen(old),
                                                 "/ws/.git", NULL, &key), 1);
        assert_string_equal(key, "core.hookspath");
        assert_int_equal(gitconfig_vet_replacing(added, strlen(added), old, strlen(old),
                                                 "/ws/.git", NULL, &key), 1);
        assert_string_equal(key, "core.fsmonitor");
        assert_int_equal(gitconfig_vet_replacing(same, strlen(same), "[bad", 4, "/ws/.git", NULL,
                                                 &key), 1); /* an unreadable old keeps nothing */
        /* What git rejects, this reader rejects too: the caller refuses it (fail closed). */
        assert_int_equal(vet("[core\n\tfsmonitor = x\n", &key), -EINVAL);
        assert_int_equal(vet("fsmonitor = \"x\n", &key), -EINVAL);
}

static void test_random_input(void **state) {
        static const char alphabet[] = "[]\"\\ \t\r\n#;=.-_coreCOREhksPathfsmonitrincludeIf~/\xef\xbb\xbf";
        uint64_t seed = 0x9e3779b97f4a7c15ULL;
        char buf[512];
        for (unsigned iter = 0; iter < 20000; iter++) {
                seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
                size_t len = (size_t) (seed >> 33) % sizeof(buf);
                for (size_t i = 0; i < len; i++) {
                        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
                        buf[i] = alphabet[(seed >> 33) % (sizeof(alphabet) - 1)];
                }
                gitconfig_values v = { 0 };
                int r = gitconfig_parse(buf, len, &v);
                assert_true(r == 0 || r == -EINVAL);
                assert_true(v.hooks_path.n + v.fsmonitor.n + v.include.n <= GITCONFIG_MAX_VALUES);
                if (r < 0)
                        assert_int_equal(v.hooks_path.n + v.fsmonitor.n + v.include.n, 0);
                gitconfig_values_done(&v);
        }
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_core_section),  cmocka_unit_test(test_values),
                cmocka_unit_test(test_invalid),       cmocka_unit_test(test_fsmonitor_and_includes),
                cmocka_unit_test(test_bounds),        cmocka_unit_test(test_is_bool),
                cmocka_unit_test(test_random_input),    cmocka_unit_test(test_vet),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
