/* SPDX-License-Identifier: Apache-2.0 */
/* The git push gateway's pure half (src/net/git-push.c) and gitPush's policy data
 * (src/policy/policy-git-push.c): which requests are pushes, repository normalisation and the
 * paths refused as ambiguous, the receive-pack command section (creation, update, deletion,
 * capabilities, shallow lines, signed pushes, truncation), the verdicts, SSH. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "net/git-push.h"

#define Z40 "0000000000000000000000000000000000000000"
#define A40 "1111111111111111111111111111111111111111"
#define B40 "2222222222222222222222222222222222222222"

static net_host name(const char *text) {
        net_host h = { .kind = NET_HOST_NAME };
        strcpy(h.text, text);
        return h;
}

static void allow(policy_git_push *g, const char *repo, const char *refs, bool del,
                  bool create_only) {
        policy_git_push_rule r = { .repo = (char *) repo, .delete_ok = del,
                                   .create_only = create_only };
        char buf[256];
        strcpy(buf, refs);
        for (char *t = strtok(buf, " "); t; t = strtok(NULL, " "))
                assert_int_equal(strv_push(&r.refs, t), 0);
        assert_int_equal(policy_git_push_add(g, &r), 0);
        strv_done(&r.refs);
}

/* A pkt-line of `s` (its length prefix added) appended at out+*o. */
static void pkt(char *out, size_t *o, const char *s, size_t n) {
        static const char hex[] = "0123456789abcdef";
        for (int i = 0; i < 4; i++)
                out[*o + (size_t) i] = hex[((n + 4) >> (12 - 4 * i)) & 15];
        memcpy(out + *o + 4, s, n);
        *o += n + 4;
}

static size_t body(char *out, const char *const *cmds, size_t n) {
        size_t o = 0;
        for (size_t i = 0; i < n; i++) {
                char line[400];
                int l = snprintf(line, sizeof(line), "%s", cmds[i]);
                if (i == 0) { /* capabilities after a NUL on the first command */
                        memcpy(line + l, "\0report-status side-band-64k\n", 29);
                        l += 29;
                } else {
                        line[l++] = '\n';
                }
                pkt(out, &o, line, (size_t) l);
        }
        memcpy(out + o, "0000PACK", 8);
        return o + 8;
}

static git_push_kind classify(const char *host, const char *method, const char *target,
                              char repo[static GIT_PUSH_REPO_MAX]) {
        net_host h = name(host);
        const char *why = NULL;
        return git_push_classify(&h, method, target, strlen(target), repo, &why);
}

static void test_classify(void **state) {
        (void) state;
        char repo[GIT_PUSH_REPO_MAX];
        assert_int_equal(classify("github.com", "POST", "/org/repo.git/git-receive-pack", repo),
                         GIT_REQ_PUSH);
        assert_string_equal(repo, "github.com/org/repo");
        assert_int_equal(classify("github.com", "POST", "/org/repo/git-receive-pack", repo),
                         GIT_REQ_PUSH);
        assert_string_equal(repo, "github.com/org/repo");
        assert_int_equal(classify("github.com", "GET",
                                  "/org/repo.git/info/refs?service=git-receive-pack", repo),
                         GIT_REQ_ADVERTISE);
        assert_string_equal(repo, "github.com/org/repo");
        /* Fetch and clone are not judged. */
        assert_int_equal(classify("github.com", "GET",
                                  "/org/repo.git/info/refs?service=git-upload-pack", repo),
                         GIT_REQ_OTHER);
        assert_int_equal(classify("github.com", "POST", "/org/repo.git/git-upload-pack", repo),
                         GIT_REQ_OTHER);
        /* Another spelling of a push is refused, never passed: dot segments, encodings, case
         * variants, other methods, extra query parameters. */
        const char *bad[][2] = {
                { "POST", "/org/allowed/../other/git-receive-pack" },
                { "POST", "/org/allowed/./git-receive-pack" },
                { "POST", "/org//repo/git-receive-pack" },
                { "POST", "/org/%72epo/git-receive-pack" },
                { "POST", "/org/repo/git-Receive-Pack" },
                { "PUT", "/org/repo/git-receive-pack" },
                { "POST", "/org/repo/git-receive-pack?x=1" },
                { "GET", "/org/repo/info/refs?service=git-receive-pack&x=1" },
                { "GET", "/org/repo/info/refs?service=git-RECEIVE-pack" },
                { "POST", "/git-receive-pack" },
                { "POST", "/org/repo/git-receive%2Dpack" },
                { "POST", "/org/repo/git-%72eceive-pack" },
                { "POST", "/org/repo/git-receive%252Dpack" },
                { "GET", "/org/repo/info/refs?service=git-receive%2dpack" },
                { "GET", "/org/repo/info/refs?service=git%2Dreceive%2Dpack" },
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                assert_int_equal(classify("github.com", bad[i][0], bad[i][1], repo), GIT_REQ_BAD);
}

static void test_parse(void **state) {
        (void) state;
        char b[4096];
        git_push_cmd c[8];
        size_t n;
        unsigned caps;
        const char *why;
        const char *cmds[] = { Z40 " " A40 " refs/heads/agent/new", A40 " " B40 " refs/heads/x",
                               A40 " " Z40 " refs/heads/old" };
        size_t len = body(b, cmds, 3);
        assert_int_equal(git_push_parse(b, len, c, 8, &n, &caps, &why), 1);
        assert_int_equal(n, 3);
        assert_true(c[0].create && !c[0].del);
        assert_string_equal(c[0].ref, "refs/heads/agent/new");
        assert_true(!c[1].create && !c[1].del);
        assert_true(c[2].del && !c[2].create);
        /* Every prefix short of the flush-pkt asks for more, never a verdict. */
        size_t flush = len - 8;
        for (size_t k = 0; k < flush + 4; k++)
                assert_int_equal(git_push_parse(b, k, c, 8, &n, &caps, &why), 0);
        /* Shallow lines first are skipped; the probe "0000" has no commands. */
        size_t o = 0;
        pkt(b, &o, "shallow " A40 "\n", 49);
        pkt(b, &o, Z40 " " A40 " refs/heads/a\0caps", 40 + 1 + 40 + 14 + 5);
        memcpy(b + o, "0000", 4);
        assert_int_equal(git_push_parse(b, o + 4, c, 8, &n, &caps, &why), 1);
        assert_int_equal(n, 1);
        assert_string_equal(c[0].ref, "refs/heads/a");
        assert_int_equal(git_push_parse("0000", 4, c, 8, &n, &caps, &why), 1);
        assert_int_equal(n, 0);
        /* Refused: a signed push, bad lengths, bad ids, invalid ref names, too many. */
        const char *bad[] = {
                "push-cert\0caps", "xyz", Z40 " " Z40 " refs/heads/a",
                A40 " " B40 " refs/heads/../main", A40 " " B40 " HEAD",
                A40 " " B40 " refs/heads/a b", A40 " " B40 " refs/heads/a.lock",
                A40 " " B40 "  refs/heads/a", "1111 2222 refs/heads/a",
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                o = 0;
                pkt(b, &o, bad[i], i == 0 ? 14 : strlen(bad[i]));
                memcpy(b + o, "0000", 4);
                why = NULL;
                assert_int_equal(git_push_parse(b, o + 4, c, 8, &n, &caps, &why), -1);
                assert_non_null(why);
        }
        assert_int_equal(git_push_parse("00zz", 4, c, 8, &n, &caps, &why), -1);
        assert_int_equal(git_push_parse("0003", 4, c, 8, &n, &caps, &why), -1);
        len = body(b, cmds, 3);
        assert_int_equal(git_push_parse(b, len, c, 2, &n, &caps, &why), -1);
        /* A body that ends without a flush, over the section's limit: refused. */
        static char big[GIT_PUSH_SECTION_MAX];
        memset(big, '0', sizeof(big));
        memcpy(big, "ffff", 4);
        assert_int_equal(git_push_parse(big, sizeof(big), c, 8, &n, &caps, &why), -1);
}

static void test_judge(void **state) {
        (void) state;
        policy_git_push g = { .on = true };
        allow(&g, "GitHub.com/org/repo.git/", "refs/heads/agent/*", false, false);
        allow(&g, "github.com/org/repo", "refs/heads/tmp/*", true, false);
        allow(&g, "github.com/org/repo", "refs/tags/v*", false, true);
        assert_string_equal(g.allow[0].repo, "github.com/org/repo");
        git_push *p = NULL;
        assert_int_equal(git_push_new(&p, &g), 0);
        git_push_verdict v;
        git_push_cmd up = { .ref = "refs/heads/agent/a" };
        git_push_judge(p, "github.com/org/repo", &up, 1, &v);
        assert_true(v.allowed);
        assert_int_equal(v.index, 0);
        git_push_cmd mainc = { .ref = "refs/heads/main" };
        git_push_cmd two[2] = { up, mainc };
        git_push_judge(p, "github.com/org/repo", two, 2, &v);
        assert_false(v.allowed);
        assert_string_equal(v.ref, "refs/heads/main");
        assert_non_null(strstr(v.rule, "refs/heads/main"));
        /* Another repository, even one differing only in case, is not listed. */
        git_push_judge(p, "github.com/org/other", &up, 1, &v);
        assert_false(v.allowed);
        git_push_judge(p, "github.com/Org/repo", &up, 1, &v);
        assert_false(v.allowed);
        /* Deletion needs "delete": true; "update": false allows creation only. */
        git_push_cmd del = { .del = true, .ref = "refs/heads/agent/a" };
        git_push_judge(p, "github.com/org/repo", &del, 1, &v);
        assert_false(v.allowed);
        assert_int_equal(v.index, 0);
        assert_non_null(strstr(v.rule, "\"delete\": true"));
        git_push_cmd deltmp = { .del = true, .ref = "refs/heads/tmp/x" };
        git_push_judge(p, "github.com/org/repo", &deltmp, 1, &v);
        assert_true(v.allowed);
        git_push_cmd tag_new = { .create = true, .ref = "refs/tags/v1" };
        git_push_cmd tag_move = { .ref = "refs/tags/v1" };
        git_push_judge(p, "github.com/org/repo", &tag_new, 1, &v);
        assert_true(v.allowed);
        git_push_judge(p, "github.com/org/repo", &tag_move, 1, &v);
        assert_false(v.allowed);
        assert_non_null(strstr(v.rule, "\"update\": false"));
        /* Advertisement: by repository. */
        git_push_judge_advertise(p, "github.com/org/repo", &v);
        assert_true(v.allowed);
        git_push_judge_advertise(p, "github.com/org/other", &v);
        assert_false(v.allowed);
        /* Git hosts: built-in ones and those of allow entries. */
        net_host gh = name("github.com"), gl = name("gitlab.com"), ex = name("example.com");
        assert_true(git_push_host(p, &gh));
        assert_true(git_push_host(p, &gl));
        assert_false(git_push_host(p, &ex));
        assert_false(git_push_host(NULL, &gh));
        git_push_free(p);
        policy_git_push_clear(&g);
}

static void test_ssh(void **state) {
        (void) state;
        policy_git_push g = { .on = true };
        allow(&g, "git.example.org/team/repo", "refs/heads/*", false, false);
        git_push *p = NULL;
        assert_int_equal(git_push_new(&p, &g), 0);
        char why[256];
        net_host gh = name("github.com"), ssh = name("ssh.github.com"),
                 own = name("git.example.org"), ex = name("example.com");
        assert_true(git_push_ssh_refused(p, &gh, 22, why, sizeof(why)));
        assert_non_null(strstr(why, "use https://github.com/"));
        assert_true(git_push_ssh_refused(p, &ssh, 443, why, sizeof(why)));
        assert_non_null(strstr(why, "https://github.com/"));
        assert_true(git_push_ssh_refused(p, &own, 22, why, sizeof(why)));
        assert_false(git_push_ssh_refused(p, &gh, 443, why, sizeof(why)));
        assert_false(git_push_ssh_refused(p, &ex, 22, why, sizeof(why)));
        assert_false(git_push_ssh_refused(NULL, &gh, 22, why, sizeof(why)));
        git_push_free(p);
        policy_git_push_clear(&g);
        /* Without a gitPush key there is no table: nothing judged. */
        policy_git_push off = { 0 };
        assert_int_equal(git_push_new(&p, &off), 0);
        assert_null(p);
}

static void test_policy_checks(void **state) {
        (void) state;
        assert_null(policy_check_git_repo("github.com/org/repo"));
        assert_null(policy_check_git_repo("git.example.org/a/b/c.git"));
        const char *bad[] = { "github.com", "/org/repo", "https://github.com/org/repo",
                              "github.com/org/../repo", "github.com/org//repo",
                              "github.com/org/re po", "github.com/org/%72epo", "*.github.com/o/r",
                              "github.com:443/org/repo", "github.com/./repo" };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                assert_non_null(policy_check_git_repo(bad[i]));
        assert_null(policy_check_git_ref("refs/heads/agent/*"));
        assert_non_null(policy_check_git_ref("agent/*"));
        assert_non_null(policy_check_git_ref("refs/heads/a b"));
        assert_null(git_push_ref_invalid("refs/heads/a", 12));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_classify), cmocka_unit_test(test_parse),
                cmocka_unit_test(test_judge),    cmocka_unit_test(test_ssh),
                cmocka_unit_test(test_policy_checks),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
