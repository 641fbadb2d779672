/* SPDX-License-Identifier: Apache-2.0 */
/* cordon_run() through the public API: violations delivered to the caller, exit statuses, the
 * timeout limit, explicit backends that cannot be had, and per-call policies that do not leak
 * into each other. Runs as whoever runs the suite (root in CI, and again as an unprivileged user
 * through tests/integration). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cordon/cordon.h"

typedef struct seen {
        unsigned n;
        char syscall[64], target[PATH_MAX], rule[256];
} seen;

static void record(void *userdata, const cordon_violation *v) {
        seen *s = userdata;
        s->n++;
        assert_string_equal(v->action, "file-create-name");
        snprintf(s->syscall, sizeof(s->syscall), "%s", v->syscall);
        snprintf(s->target, sizeof(s->target), "%s", v->target);
        snprintf(s->rule, sizeof(s->rule), "%s", v->rule);
}

static char workspace[PATH_MAX / 2], home[PATH_MAX];

static int setup(void **state) {
        (void) state;
        const char *base = getenv("CORDON_TEST_TMP") ? getenv("CORDON_TEST_TMP") : "/var/tmp";
        snprintf(workspace, sizeof(workspace), "%s/cordon-launch-XXXXXX", base);
        if (!mkdtemp(workspace))
                return -1;
        snprintf(home, sizeof(home), "%s/home", workspace);
        if (mkdir(home, 0700) < 0)
                return -1;
        char ws[PATH_MAX];
        _Static_assert(sizeof(workspace) + 8 < sizeof(ws), "room for a suffix");
        snprintf(ws, sizeof(ws), "%s/ws", workspace);
        if (mkdir(ws, 0755) < 0 || chdir(ws) < 0)
                return -1;
        return 0;
}

static int teardown(void **state) {
        (void) state;
        char cmd[PATH_MAX + 16];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", workspace);
        return system(cmd) == 0 ? 0 : -1;
}

static cordon_policy *default_policy(void) {
        char cwd[PATH_MAX];
        assert_non_null(getcwd(cwd, sizeof(cwd)));
        cordon_policy *p = NULL;
        cordon_error err = { 0 };
        int r = cordon_policy_new_default(cwd, home, &p, &err);
        if (r < 0)
                fail_msg("default policy: %s", err.message);
        return p;
}

/* Options as cordon_run_options_init() makes them, for the caller to set fields on. */
static cordon_run_options run_options(void) {
        cordon_run_options o;
        cordon_run_options_init(&o);
        return o;
}

static int run(cordon_policy *p, const char *script, cordon_run_options *o, cordon_run_result *res,
               cordon_error *err) {
        char sh[] = "/bin/sh", dash_c[] = "-c", path[] = "PATH=/usr/bin:/bin",
             token[] = "GITHUB_TOKEN=ghp_secret", henv[PATH_MAX + 8];
        char *argv[] = { sh, dash_c, (char *) script, NULL };
        snprintf(henv, sizeof(henv), "HOME=%s", home);
        char *env[] = { henv, path, token, NULL };
        o->environ = env;
        return cordon_run(p, argv, o, res, err);
}

static void test_violation_reported_exactly(void **state) {
        (void) state;
        cordon_policy *p = default_policy();
        seen s = { 0 };
        cordon_run_options o = run_options();
        o.on_violation = record;
        o.userdata = &s;
        cordon_run_result res = { 0 };
        cordon_error err = { 0 };
        assert_int_equal(run(p, "touch .env 2>/dev/null; exit 4", &o, &res, &err), 0);
        assert_int_equal(res.exit_code, 4);
        assert_int_equal(res.backend, CORDON_BACKEND_NATIVE);
        assert_int_equal(s.n, 1);
        assert_int_equal(res.violations, 1);
        char want[PATH_MAX + 8];
        assert_non_null(getcwd(want, sizeof(want) - 8));
        strcat(want, "/.env");
        assert_string_equal(s.target, want);
        assert_string_equal(s.rule, ".env");
        assert_true(strstr(s.syscall, "open") != NULL || strcmp(s.syscall, "creat") == 0);
        assert_int_equal(access(".env", F_OK), -1); /* nothing left behind */
        cordon_policy_free(p);
}

static void test_allowed_run_reports_nothing(void **state) {
        (void) state;
        cordon_policy *p = default_policy();
        seen s = { 0 };
        cordon_run_options o = run_options();
        o.on_violation = record;
        o.userdata = &s;
        cordon_run_result res = { 0 };
        cordon_error err = { 0 };
        assert_int_equal(run(p, "echo x > ok.txt && test -z \"$GITHUB_TOKEN\"", &o, &res, &err), 0);
        assert_int_equal(res.exit_code, 0);
        assert_int_equal(s.n, 0);
        assert_int_equal(access("ok.txt", F_OK), 0);
        cordon_policy_free(p);
}

static void test_signal_status(void **state) {
        (void) state;
        cordon_policy *p = default_policy();
        cordon_run_options o = run_options();
        cordon_run_result res = { 0 };
        cordon_error err = { 0 };
        assert_int_equal(run(p, "kill -USR1 $$", &o, &res, &err), 0);
        assert_true(WIFSIGNALED(res.wait_status));
        assert_int_equal(res.exit_code, 128 + 10);
        cordon_policy_free(p);
}

static void test_timeout_kills_everything(void **state) {
        (void) state;
        cordon_policy *p = default_policy();
        assert_int_equal(cordon_policy_set_timeout_ms(p, 300), 0);
        cordon_run_options o = run_options();
        cordon_run_result res = { 0 };
        cordon_error err = { 0 };
        int r = run(p, "(sleep 30; touch late.txt) & sleep 30", &o, &res, &err);
        assert_true(r < 0);
        assert_int_equal(err.code, CORDON_TIMEOUT);
        sleep(1);
        assert_int_equal(access("late.txt", F_OK), -1);
        cordon_policy_free(p);
}

static void test_explicit_backend_never_steps_down(void **state) {
        (void) state;
        cordon_policy *p = default_policy();
        cordon_run_options o = run_options();
        o.backend = CORDON_BACKEND_MICROVM;
        cordon_run_result res = { 0 };
        cordon_error err = { 0 };
        int r = run(p, "touch ran.txt", &o, &res, &err);
        assert_true(r < 0);
        assert_int_equal(err.code, CORDON_SANDBOX_UNAVAILABLE);
        assert_true(strncmp(err.message, "refusing to run the command unconfined", 38) == 0);
        assert_int_equal(access("ran.txt", F_OK), -1);
        cordon_policy_free(p);
}

/* Two policies in one process: a read-only session next to a writable one, each resolved per
 * call (docs/policy.md, "Layers and resolution"), neither leaking into the other. */
static void test_per_call_policies(void **state) {
        (void) state;
        cordon_policy *def = default_policy();
        cordon_policy *ro = NULL;
        assert_int_equal(cordon_policy_new(&ro, NULL), 0);
        assert_int_equal(cordon_policy_set_mode(ro, CORDON_MODE_READ_ONLY), 0);
        cordon_policy *ro_resolved = NULL, *rw_resolved = NULL;
        cordon_error err = { 0 };
        assert_int_equal(cordon_policy_resolve(def, ro, NULL, &ro_resolved, &err), 0);
        assert_int_equal(cordon_policy_resolve(def, NULL, NULL, &rw_resolved, &err), 0);
        cordon_run_options o = run_options();
        cordon_run_result res = { 0 };
        assert_int_equal(run(ro_resolved, "echo x > ro.txt", &o, &res, &err), 0);
        assert_int_not_equal(res.exit_code, 0);
        assert_int_equal(run(rw_resolved, "echo x > rw.txt", &o, &res, &err), 0);
        assert_int_equal(res.exit_code, 0);
        assert_int_equal(access("ro.txt", F_OK), -1);
        assert_int_equal(access("rw.txt", F_OK), 0);
        /* An approved escalation widens a read-only session for one call only. */
        cordon_policy *esc = NULL, *esc_resolved = NULL;
        assert_int_equal(cordon_policy_new(&esc, NULL), 0);
        assert_int_equal(cordon_policy_set_mode(esc, CORDON_MODE_WORKSPACE_WRITE), 0);
        assert_int_equal(cordon_policy_resolve(def, ro, esc, &esc_resolved, &err), 0);
        assert_int_equal(run(esc_resolved, "echo x > esc.txt", &o, &res, &err), 0);
        assert_int_equal(res.exit_code, 0);
        assert_int_equal(run(ro_resolved, "echo x > ro2.txt", &o, &res, &err), 0);
        assert_int_not_equal(res.exit_code, 0);
        cordon_policy_free(esc_resolved);
        cordon_policy_free(esc);
        cordon_policy_free(ro_resolved);
        cordon_policy_free(rw_resolved);
        cordon_policy_free(ro);
        cordon_policy_free(def);
}


/* Runs `script` with fd 0 replaced by `path` opened with `flags`; restores fd 0. */
static int run_with_stdin(cordon_policy *p, const char *path, int flags, const char *script,
                          cordon_run_result *res, cordon_error *err) {
        int saved = dup(0), fd = open(path, flags | O_CLOEXEC);
        assert_true(saved >= 0 && fd >= 0);
        assert_int_equal(dup2(fd, 0), 0);
        close(fd);
        cordon_run_options o = run_options();
        int r = run(p, script, &o, res, err);
        assert_int_equal(dup2(saved, 0), 0);
        close(saved);
        return r;
}

static void write_file(const char *path, const char *text) {
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs(text, f);
        fclose(f);
}

static void assert_file_is(const char *path, const char *want) {
        char buf[256] = { 0 };
        FILE *f = fopen(path, "r");
        assert_non_null(f);
        size_t n = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[n] = '\0';
        assert_string_equal(buf, want);
}

/* A protected file handed over as a read-only stdin would be reopened for writing through
 * /proc/self/fd/0 on the host's writable mount: the launch is refused and nothing runs. */
static void test_protected_stdin_refused(void **state) {
        (void) state;
        assert_int_equal(mkdir(".vscode", 0755), 0);
        write_file(".vscode/tasks.json", "{}");
        cordon_policy *p = default_policy();
        cordon_run_result res = { 0 };
        cordon_error err = { 0 };
        int r = run_with_stdin(p, ".vscode/tasks.json", O_RDONLY,
                               "echo pwn >> /proc/self/fd/0; touch ran.txt", &res, &err);
        assert_true(r < 0);
        assert_int_equal(err.code, CORDON_POLICY_UNENFORCEABLE);
        assert_non_null(strstr(err.message, "fd 0 is the protected file"));
        assert_int_equal(access("ran.txt", F_OK), -1);
        assert_file_is(".vscode/tasks.json", "{}");
        /* A directory on fd 0 is refused too. */
        r = run_with_stdin(p, ".", O_RDONLY | O_DIRECTORY, "touch ran.txt", &res, &err);
        assert_true(r < 0);
        assert_int_equal(err.code, CORDON_POLICY_UNENFORCEABLE);
        cordon_policy_free(p);
}

/* An ordinary file outside the workspace as stdin: readable, but neither writable nor
 * truncatable through /proc/self/fd/0 (Landlock WRITE_FILE; seccomp refuses truncate(2)). */
static void test_readonly_stdin_stays_readonly(void **state) {
        (void) state;
        char outside[PATH_MAX + 16];
        snprintf(outside, sizeof(outside), "%s/input.txt", home);
        write_file(outside, "data\n");
        cordon_policy *p = default_policy();
        cordon_run_result res = { 0 };
        cordon_error err = { 0 };
        const char *script = "read l && test \"$l\" = data || exit 10; "
                             "(echo pwn >> /proc/self/fd/0) 2>/dev/null && exit 11; "
                             "(echo pwn > /dev/stdin) 2>/dev/null && exit 12; "
                             "python3 -c 'import os,sys; os.truncate(\"/proc/self/fd/0\", 0)' "
                             "2>/dev/null && exit 13; exit 0";
        assert_int_equal(run_with_stdin(p, outside, O_RDONLY, script, &res, &err), 0);
        assert_int_equal(res.exit_code, 0);
        assert_file_is(outside, "data\n");
        cordon_policy_free(p);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_violation_reported_exactly),
                cmocka_unit_test(test_allowed_run_reports_nothing),
                cmocka_unit_test(test_signal_status),
                cmocka_unit_test(test_timeout_kills_everything),
                cmocka_unit_test(test_explicit_backend_never_steps_down),
                cmocka_unit_test(test_per_call_policies),
                cmocka_unit_test(test_protected_stdin_refused),
                cmocka_unit_test(test_readonly_stdin_stays_readonly),
        };
        return cmocka_run_group_tests_name("launch", tests, setup, teardown);
}
