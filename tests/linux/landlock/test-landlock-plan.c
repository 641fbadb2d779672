/* SPDX-License-Identifier: Apache-2.0 */
/* The landlock backend's Landlock layers: the plan as data on a real tree (what is carved, what
 * is granted whole), then applied for real in a child, each rule tried both ways: the allowed
 * access works, the refused one fails with EACCES. Also what carving costs, asserted so the
 * documentation stays true: entries created after launch in a carved directory are out of reach,
 * and names inside a secret directory stay listable (READ_DIR cannot be carved). */
#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "linux/landlock-layer.h"
#include "linux/landlock.h"
#include "linux/process.h"
#include "plan/landlock-plan.h"
#include "policy/policy.h"
#include "tmptree.h"
#include "util/uapi.h"

static char *T;
#define P(rel) tmptree_at(T, rel)

static int setup_tree(void **state) {
        (void) state;
        T = tmptree_new();
        static const char *const dirs[] = { "home/.ssh", "home/.config/gh", "home/.config/other",
                                            "home/data/a", "home/data/b", "ws/.git/hooks",
                                            "ws/.vscode", "ws/src", "outside" };
        for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
                tmptree_mkdir(T, dirs[i]);
        tmptree_file(T, "home/.ssh/id_rsa", "KEY");
        tmptree_file(T, "home/.ssh/known_hosts", "host");
        tmptree_file(T, "home/.netrc", "machine x");
        tmptree_file(T, "home/.bashrc", "# rc");
        tmptree_file(T, "home/notes.txt", "notes");
        tmptree_file(T, "home/.config/gh/hosts.yml", "token");
        tmptree_file(T, "home/.config/other/x", "x");
        tmptree_file(T, "home/data/a/token", "glob secret");
        tmptree_file(T, "home/data/a/keep", "keep");
        tmptree_file(T, "ws/.git/config", "[core]");
        tmptree_file(T, "ws/.git/HEAD", "ref: refs/heads/main");
        tmptree_file(T, "ws/.git/hooks/pre-commit.sample", "#!/bin/sh");
        tmptree_file(T, "ws/.vscode/settings.json", "{}");
        tmptree_file(T, "ws/src/a.c", "int a;");
        tmptree_file(T, "ws/file.txt", "file");
        tmptree_file(T, "ws/private.txt", "private");
        tmptree_file(T, "outside/file", "outside");
        return 0;
}

static int teardown_tree(void **state) {
        (void) state;
        tmptree_remove(T);
        T = NULL;
        return 0;
}

static landlock_plan *make_plan(plan **ret_plan, const char *tmpdir, uint16_t port) {
        cordon_policy *pol = NULL;
        cordon_error err = { 0 };
        assert_int_equal(cordon_policy_new_default(P("ws"), P("home"), &pol, &err), 0);
        assert_int_equal(cordon_policy_add_deny_read(pol, P("ws/private.txt")), 0);
        assert_int_equal(cordon_policy_add_deny_read(pol, P("home/data/*/token")), 0);
        plan *pl = NULL;
        int r = plan_build(pol, P("home"), P("ws"), NULL, &pl, &err);
        cordon_policy_free(pol);
        if (r < 0)
                fail_msg("plan_build: %s", err.message);
        landlock_plan_options o = { .abi = LANDLOCK_PLAN_MIN_ABI, .tmpdir = tmpdir,
                                    .proxy_ports = { port, 0 } };
        landlock_plan *lp = NULL;
        r = landlock_plan_build(pl, &o, &lp, &err);
        if (r < 0)
                fail_msg("landlock_plan_build: %s", err.message);
        *ret_plan = pl;
        return lp;
}

/* The access of the rule on exactly `path`, or 0. */
static uint64_t rule_on(const ll_layer *l, const char *path) {
        uint64_t a = 0;
        for (size_t i = 0; i < l->n_rules; i++)
                if (strcmp(l->rules[i].path, path) == 0)
                        a |= l->rules[i].access;
        return a;
}

/* Some rule on `path` or on an ancestor grants `bit`. */
static bool granted(const ll_layer *l, const char *path, uint64_t bit) {
        for (size_t i = 0; i < l->n_rules; i++)
                if ((l->rules[i].access & bit) && path_startswith(path, l->rules[i].path))
                        return true;
        return false;
}

static void test_plan_as_data(void **state) {
        (void) state;
        plan *pl = NULL;
        landlock_plan *lp = make_plan(&pl, NULL, 4242);
        const ll_layer *m = &lp->monitor, *c = &lp->command;
        uint64_t rd = LANDLOCK_ACCESS_FS_READ_FILE;
        /* Secrets: neither they nor their ancestors readable; their siblings are. */
        assert_false(granted(m, P("home/.ssh/id_rsa"), rd));
        assert_false(granted(m, P("home/.netrc"), rd));
        assert_false(granted(m, P("home/.config/gh/hosts.yml"), rd));
        assert_false(granted(m, P("ws/private.txt"), rd));
        assert_false(granted(m, P("home/data/a/token"), rd));
        assert_false(granted(m, P("home/new-later"), rd));
        assert_true(granted(m, P("home/notes.txt"), rd));
        assert_true(granted(m, P("home/.bashrc"), rd));
        assert_true(granted(m, P("home/.config/other/x"), rd));
        assert_true(granted(m, P("home/data/a/keep"), rd));
        assert_true(granted(m, P("ws/src/a.c"), rd));
        assert_true(granted(m, P("outside/file"), rd));
        assert_true(granted(m, "/usr/bin/sh", rd | LANDLOCK_ACCESS_FS_EXECUTE));
        assert_false(granted(m, "/tmp/anything", rd));
        assert_false(granted(m, "/dev/sda", rd));
        assert_true(rule_on(m, "/dev/null") & LANDLOCK_ACCESS_FS_WRITE_FILE);
        assert_int_equal(rule_on(m, "/"), LANDLOCK_ACCESS_FS_READ_DIR);
        /* home/data/b holds no match now, but a token created there later must stay out of
         * reach: data/ is carved, so b/ is too (globs are matched per component). */
        assert_false(granted(m, P("home/data/b/token"), rd));
        /* Writes: every right beneath the workspace for the monitor; file writes carved around
         * what exists of the protected set for the command. */
        assert_true(rule_on(m, P("ws")) & LANDLOCK_ACCESS_FS_MAKE_REG);
        assert_false(granted(m, P("outside/file"), LANDLOCK_ACCESS_FS_WRITE_FILE));
        uint64_t wr = LANDLOCK_ACCESS_FS_WRITE_FILE;
        assert_true(granted(c, P("ws/file.txt"), wr));
        assert_true(granted(c, P("ws/src/a.c"), wr));
        assert_true(granted(c, P("ws/.git/HEAD"), wr));
        assert_false(granted(c, P("ws/.git/config"), wr));
        assert_false(granted(c, P("ws/.git/hooks/pre-commit.sample"), wr));
        assert_false(granted(c, P("ws/.vscode/settings.json"), wr));
        assert_false(granted(c, P("ws/private.txt"), wr));
        assert_false(granted(c, P("ws/created-later"), wr)); /* the documented cost */
        assert_true(strv_contains(&lp->carved_read, P("home")));
        assert_true(strv_contains(&lp->carved_write, P("ws/.git")));
        assert_int_equal(c->handled_fs, LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_TRUNCATE);
        assert_int_equal(m->connect_ports[0], 4242);
        landlock_plan_free(lp);
        plan_free(pl);
}

static void test_old_abi_refused(void **state) {
        (void) state;
        plan *pl = NULL;
        landlock_plan *lp = make_plan(&pl, NULL, 0);
        landlock_plan_free(lp);
        landlock_plan_options o = { .abi = LANDLOCK_PLAN_MIN_ABI - 1 };
        cordon_error err = { 0 };
        lp = NULL;
        assert_true(landlock_plan_build(pl, &o, &lp, &err) < 0);
        assert_null(lp);
        assert_int_equal(err.code, CORDON_SANDBOX_UNAVAILABLE);
        assert_non_null(strstr(err.message, "refusing to run the command unconfined"));
        plan_free(pl);
}

/* A directory that holds a secret must be listed to grant its other entries one by one: when it
 * cannot be (no read permission), the policy is refused, naming the directory. Run without
 * capabilities (root would read it anyway). */
static void test_unlistable_ancestor_refused(void **state) {
        (void) state;
        tmptree_mkdir(T, "locked/inner");
        tmptree_file(T, "locked/inner/secret", "s");
        assert_int_equal(chmod(P("locked/inner"), 0111), 0); /* searchable, not listable */
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                if (geteuid() == 0 && process_drop_capabilities() < 0)
                        _exit(2);
                cordon_policy *pol = NULL;
                cordon_error err = { 0 };
                plan *pl = NULL;
                landlock_plan *lp = NULL;
                if (cordon_policy_new_default(P("ws"), P("home"), &pol, &err) < 0 ||
                    cordon_policy_add_deny_read(pol, P("locked/inner/secret")) < 0 ||
                    plan_build(pol, P("home"), P("ws"), NULL, &pl, &err) < 0)
                        _exit(2);
                landlock_plan_options o = { .abi = LANDLOCK_PLAN_MIN_ABI };
                int r = landlock_plan_build(pl, &o, &lp, &err);
                bool ok = r < 0 && err.code == CORDON_POLICY_UNENFORCEABLE &&
                          strstr(err.message, "cannot list ") &&
                          strstr(err.message, P("locked/inner"));
                if (!ok)
                        fprintf(stderr, "child: %d %s\n", r, err.message);
                _exit(ok ? 0 : 1);
        }
        int st = 0;
        assert_int_equal(waitpid(pid, &st, 0), pid);
        assert_int_equal(chmod(P("locked/inner"), 0755), 0);
        assert_true(WIFEXITED(st));
        assert_int_equal(WEXITSTATUS(st), 0);
}

/* ---- applied for real ---------------------------------------------------------------------- */

static int try_open(const char *path, int flags) {
        int fd = open(path, flags | O_CLOEXEC, 0644);
        if (fd < 0)
                return -errno;
        close(fd);
        return 0;
}

static int try_connect(uint16_t port) {
        int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port),
                                 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        int r = connect(s, (struct sockaddr *) &a, sizeof(a)) < 0 ? -errno : 0;
        close(s);
        return r;
}

static int listener(uint16_t *port) {
        int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t len = sizeof(a);
        assert_int_equal(bind(s, (struct sockaddr *) &a, sizeof(a)), 0);
        assert_int_equal(listen(s, 8), 0);
        assert_int_equal(getsockname(s, (struct sockaddr *) &a, &len), 0);
        *port = ntohs(a.sin_port);
        return s;
}

#define CHECK(cond)                                                                               \
        do {                                                                                      \
                if (!(cond)) {                                                                    \
                        fprintf(stderr, "child: %s:%d: %s\n", __FILE__, __LINE__, #cond);         \
                        _exit(1);                                                                 \
                }                                                                                 \
        } while (0)

static bool lists(const char *dir, const char *name) {
        DIR *d = opendir(dir);
        if (!d)
                return false;
        bool found = false;
        for (struct dirent *de; (de = readdir(d));)
                found |= strcmp(de->d_name, name) == 0;
        closedir(d);
        return found;
}

static _Noreturn void confined_child(const landlock_plan *lp, uint16_t ok_port, uint16_t bad_port,
                                     const char *tmpdir, const char *host_tmp_file) {
        cordon_error err = { 0 };
        CHECK(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0);
        CHECK(landlock_layer_apply(&lp->monitor, landlock_abi(), &err) == 0);
        /* As the supervisor: the monitor layer alone may create in the workspace top level. */
        CHECK(try_open(P("ws/made-by-monitor"), O_CREAT | O_WRONLY) == 0);
        CHECK(landlock_layer_apply(&lp->command, landlock_abi(), &err) == 0);
        CHECK(try_open(P("home/notes.txt"), O_RDONLY) == 0);
        CHECK(try_open(P("home/.ssh/id_rsa"), O_RDONLY) == -EACCES);
        CHECK(try_open(P("home/.netrc"), O_RDONLY) == -EACCES);
        CHECK(try_open(P("ws/private.txt"), O_RDONLY) == -EACCES);
        CHECK(try_open(P("home/data/a/token"), O_RDONLY) == -EACCES);
        CHECK(try_open(P("home/data/a/keep"), O_RDONLY) == 0);
        CHECK(try_open(P("home/created-after-plan"), O_RDONLY) == -EACCES);
        CHECK(lists(P("home/.ssh"), "id_rsa")); /* names stay listable: documented */
        CHECK(try_open("/etc/passwd", O_RDONLY) == 0);
        CHECK(try_open(host_tmp_file, O_RDONLY) == -EACCES);
        CHECK(try_open("/dev/null", O_WRONLY) == 0);
        CHECK(try_open("/dev/urandom", O_RDONLY) == 0);
        CHECK(try_open(P("ws/file.txt"), O_WRONLY) == 0);
        CHECK(try_open(P("ws/src/a.c"), O_RDWR) == 0);
        CHECK(try_open(P("ws/src/new.c"), O_CREAT | O_WRONLY) == 0); /* beneath a granted dir */
        CHECK(try_open(P("ws/.git/config"), O_WRONLY) == -EACCES);
        CHECK(try_open(P("ws/.git/config"), O_RDONLY | O_TRUNC) == -EACCES);
        CHECK(try_open(P("ws/.git/config"), O_RDONLY) == 0);
        CHECK(try_open(P("ws/.vscode/settings.json"), O_WRONLY) == -EACCES);
        CHECK(try_open(P("ws/made-by-monitor"), O_WRONLY) == -EACCES); /* documented cost */
        CHECK(try_open(P("outside/file"), O_WRONLY) == -EACCES);
        CHECK(try_open(P("outside/file"), O_RDONLY | O_TRUNC) == -EACCES);
        CHECK(try_open(P("home/.bashrc"), O_WRONLY) == -EACCES);
        if (tmpdir) {
                char p[4096];
                snprintf(p, sizeof(p), "%s/scratch", tmpdir);
                CHECK(try_open(p, O_CREAT | O_RDWR) == 0);
        }
        CHECK(try_connect(ok_port) == 0);
        CHECK(try_connect(bad_port) == -EACCES);
        int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        CHECK(bind(s, (struct sockaddr *) &a, sizeof(a)) < 0 && errno == EACCES);
        _exit(0);
}

static void test_applied(void **state) {
        (void) state;
        if (landlock_abi() < LANDLOCK_PLAN_MIN_ABI)
                skip();
        char tmpl[] = "/tmp/cordon-ll-test-XXXXXX";
        assert_non_null(mkdtemp(tmpl));
        char host_tmp[] = "/tmp/cordon-ll-host-XXXXXX";
        int hfd = mkstemp(host_tmp);
        assert_true(hfd >= 0);
        close(hfd);
        uint16_t ok_port, bad_port;
        int ok = listener(&ok_port), bad = listener(&bad_port);
        plan *pl = NULL;
        landlock_plan *lp = make_plan(&pl, tmpl, ok_port);
        tmptree_file(T, "home/created-after-plan", "late");
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0)
                confined_child(lp, ok_port, bad_port, tmpl, host_tmp);
        int st = 0;
        assert_int_equal(waitpid(pid, &st, 0), pid);
        char p[4096];
        snprintf(p, sizeof(p), "%s/scratch", tmpl);
        (void) unlink(p);
        (void) rmdir(tmpl);
        (void) unlink(host_tmp);
        (void) unlink(P("ws/made-by-monitor"));
        (void) unlink(P("ws/src/new.c"));
        (void) unlink(P("home/created-after-plan"));
        close(ok);
        close(bad);
        landlock_plan_free(lp);
        plan_free(pl);
        assert_true(WIFEXITED(st));
        assert_int_equal(WEXITSTATUS(st), 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_plan_as_data),
                cmocka_unit_test(test_old_abi_refused),
                cmocka_unit_test(test_unlistable_ancestor_refused),
                cmocka_unit_test(test_applied),
        };
        return cmocka_run_group_tests(tests, setup_tree, teardown_tree);
}
