/* SPDX-License-Identifier: Apache-2.0 */
/* The administrator's managed settings at a launch (docs/settings.md, "Library callers";
 * src/settings/settings-managed.c): a library caller that builds its own policy gets them from
 * cordon_run(), cordon_spawn() and cordon_session_launch() unless it opts out explicitly; their
 * allowUnsandboxedCommands refuses backend none and danger-full-access; an invalid or
 * foreign-writable file fails the launch; a policy from cordon_settings_resolve() does not get
 * them a second time. Runs as root and as cordon-test (managed-user).
 *
 * The managed file is the tree's, not /etc/cordon/managed-settings.json: this program links the
 * layers themselves and sets settings_managed_test_path, which libcordon.so does not export and
 * nothing but a test program can set. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cordon/cordon.h"
#include "settings/settings.h"

static char root[PATH_MAX / 2], ws[PATH_MAX], home[PATH_MAX], secret[PATH_MAX],
        managed[PATH_MAX], other[PATH_MAX], henv[PATH_MAX + 8];
static char path_env[] = "PATH=/usr/bin:/bin";
static char *env[] = { henv, path_env, NULL };

static void write_file(const char *path, const char *text, mode_t mode) {
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        assert_true(fputs(text, f) >= 0);
        assert_int_equal(fclose(f), 0);
        assert_int_equal(chmod(path, mode), 0);
}

static int setup(void **state) {
        (void) state;
        const char *base = getenv("CORDON_TEST_TMP") ? getenv("CORDON_TEST_TMP") : "/var/tmp";
        snprintf(root, sizeof(root), "%s/cordon-managed-XXXXXX", base);
        if (!mkdtemp(root))
                return -1;
        snprintf(ws, sizeof(ws), "%s/ws", root);
        snprintf(home, sizeof(home), "%s/home", root);
        snprintf(secret, sizeof(secret), "%s/secret.txt", root);
        snprintf(managed, sizeof(managed), "%s/managed.json", root);
        snprintf(other, sizeof(other), "%s/other.json", root);
        snprintf(henv, sizeof(henv), "HOME=%s", home);
        if (mkdir(ws, 0755) < 0 || mkdir(home, 0700) < 0 || chdir(ws) < 0)
                return -1;
        write_file(secret, "s3cret\n", 0644);
        settings_managed_test_path = managed;
        return 0;
}

static int teardown(void **state) {
        (void) state;
        settings_managed_test_path = NULL;
        char cmd[PATH_MAX + 16];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
        return system(cmd) == 0 ? 0 : -1;
}

/* Each test starts without a managed file. */
static int no_managed(void **state) {
        (void) state;
        (void) unlink(managed);
        return 0;
}

static cordon_policy *own_policy(void) {
        cordon_policy *p = NULL;
        cordon_error err = { 0 };
        if (cordon_policy_new_default(ws, home, &p, &err) < 0)
                fail_msg("default policy: %s", err.message);
        return p;
}

/* The command that tells whether the secret's content can be read: a denyRead entry hides what
 * exists behind an empty file, so the exit status of cat alone would not say. */
static char script[PATH_MAX + 64];
static char *read_argv(void) {
        snprintf(script, sizeof(script), "grep -q s3cret '%s'", secret);
        return script;
}

/* The command ran, and could not read the secret (grep: 1 for the empty file a denyRead entry
 * puts over it, 2 when it cannot be opened at all). */
#define assert_unread(r) assert_in_range((r), 1, 2)

/* cordon_run: the command's exit code (0: the secret was read), or the negative errno. */
static int run_read(const cordon_policy *p, cordon_error *err) {
        char sh[] = "/bin/sh", c[] = "-c";
        char *argv[] = { sh, c, read_argv(), NULL };
        cordon_run_options o;
        cordon_run_options_init(&o);
        o.environ = env;
        cordon_run_result res = { 0 };
        int r = cordon_run(p, argv, &o, &res, err);
        return r < 0 ? r : res.exit_code;
}

/* cordon_spawn + wait, with `flags` and `backend`. */
static int spawn_read(const cordon_policy *p, unsigned flags, cordon_backend backend,
                      cordon_error *err) {
        char sh[] = "/bin/sh", c[] = "-c";
        char *argv[] = { sh, c, read_argv(), NULL };
        cordon_spawn_options o;
        cordon_spawn_options_init(&o);
        o.environ = env;
        o.cwd = ws;
        o.flags = flags;
        o.backend = backend;
        cordon_process *proc = NULL;
        int r = cordon_spawn(p, argv, &o, &proc, err);
        if (r < 0)
                return r;
        cordon_run_result res = { 0 };
        r = cordon_process_wait(proc, -1, &res, err);
        cordon_process_free(proc);
        return r < 0 ? r : res.exit_code;
}

/* A session launched with `flags`, one exec in it. */
static int session_read(const cordon_policy *p, unsigned flags, cordon_error *err) {
        cordon_session_options so;
        cordon_session_options_init(&so);
        so.environ = env;
        so.cwd = ws;
        so.flags = flags;
        cordon_session *s = NULL;
        int r = cordon_session_launch(p, &so, &s, err);
        if (r < 0)
                return r;
        char sh[] = "/bin/sh", c[] = "-c";
        char *argv[] = { sh, c, read_argv(), NULL };
        cordon_spawn_options o;
        cordon_spawn_options_init(&o);
        cordon_process *proc = NULL;
        r = cordon_session_exec(s, argv, &o, &proc, err);
        cordon_run_result res = { 0 };
        if (r >= 0)
                r = cordon_process_wait(proc, -1, &res, err);
        cordon_process_free(proc);
        cordon_session_destroy(s);
        return r < 0 ? r : res.exit_code;
}

static void deny_secret(const char *path, mode_t mode) {
        char json[PATH_MAX + 64];
        snprintf(json, sizeof(json), "{\"sandbox\": {\"denyRead\": [\"%s\"]}}\n", secret);
        write_file(path, json, mode);
}

static void test_no_file_is_nothing(void **state) {
        (void) state;
        cordon_policy *p = own_policy();
        cordon_error err = { 0 };
        assert_int_equal(run_read(p, &err), 0);
        assert_int_equal(spawn_read(p, 0, CORDON_BACKEND_AUTO, &err), 0);
        assert_int_equal(session_read(p, 0, &err), 0);
        cordon_policy_free(p);
}

/* The caller's own policy lets the command read the secret; the managed file denies it. */
static void test_managed_deny_reaches_library_callers(void **state) {
        (void) state;
        deny_secret(managed, 0644);
        cordon_policy *p = own_policy();
        cordon_error err = { 0 };
        assert_unread(run_read(p, &err));
        assert_unread(spawn_read(p, 0, CORDON_BACKEND_AUTO, &err));
        assert_unread(session_read(p, 0, &err));
        /* Only the explicit opt-out runs the caller's policy alone. */
        assert_int_equal(spawn_read(p, CORDON_SPAWN_NO_MANAGED_SETTINGS, CORDON_BACKEND_AUTO,
                                    &err), 0);
        assert_int_equal(session_read(p, CORDON_SESSION_NO_MANAGED_SETTINGS, &err), 0);
        cordon_policy_free(p);
}

/* The harness's own file tools (cordon_fs_*) obey them too: the same policy reads the secret
 * without the managed file, and is refused with it. */
static void test_managed_deny_reaches_file_operations(void **state) {
        (void) state;
        cordon_policy *p = own_policy();
        cordon_error err = { 0 };
        cordon_fs_refusal ref;
        cordon_fs_data d = { 0 };
        assert_int_equal(cordon_fs_read(p, ws, secret, 0, 0, &d, &ref, &err), 0);
        assert_string_equal(d.data, "s3cret\n");
        cordon_fs_data_free(&d);
        deny_secret(managed, 0644);
        assert_true(cordon_fs_read(p, ws, secret, 0, 0, &d, &ref, &err) < 0);
        assert_int_equal(err.code, CORDON_POLICY_UNENFORCEABLE);
        assert_non_null(ref.action);
        assert_string_equal(ref.action, "file-read*");
        cordon_policy_free(p);
}

/* Their scalars win over the caller's, as over every layer in the resolver. */
static void test_managed_scalars_win(void **state) {
        (void) state;
        write_file(managed, "{\"sandbox\": {\"mode\": \"read-only\"}}\n", 0644);
        cordon_policy *p = own_policy();
        assert_int_equal(cordon_policy_set_mode(p, CORDON_MODE_WORKSPACE_WRITE), 0);
        char sh[] = "/bin/sh", c[] = "-c", touch[] = "touch written";
        char *argv[] = { sh, c, touch, NULL };
        cordon_run_options o;
        cordon_run_options_init(&o);
        o.environ = env;
        cordon_run_result res = { 0 };
        cordon_error err = { 0 };
        assert_int_equal(cordon_run(p, argv, &o, &res, &err), 0);
        assert_int_not_equal(res.exit_code, 0);
        assert_int_equal(access("written", F_OK), -1);
        cordon_policy_free(p);
}

static void collect(void *userdata, const char *line, size_t len) {
        char *buf = userdata;
        size_t n = strlen(buf);
        if (n + len >= 4096)
                return;
        memcpy(buf + n, line, len);
        buf[n + len] = '\0';
}

static void test_unsandboxed_forbidden(void **state) {
        (void) state;
        write_file(managed, "{\"allowUnsandboxedCommands\": false}\n", 0644);
        cordon_policy *p = own_policy();
        cordon_error err = { 0 };
        char want[PATH_MAX + 256];
        snprintf(want, sizeof(want), "backend none: unsandboxed commands are forbidden by "
                 "managed settings %s:1:2 (allowUnsandboxedCommands: false); run the command "
                 "sandboxed", managed);
        assert_int_equal(spawn_read(p, 0, CORDON_BACKEND_NONE, &err), -EPERM);
        assert_int_equal(err.code, CORDON_POLICY_INVALID);
        assert_string_equal(err.message, want);

        /* The refusal is the launch's: the event stream says "starting", then the error. */
        char events[4096] = "";
        char sh[] = "/bin/sh", c[] = "-c", t[] = "true";
        char *argv[] = { sh, c, t, NULL };
        cordon_spawn_options o;
        cordon_spawn_options_init(&o);
        o.environ = env;
        o.backend = CORDON_BACKEND_NONE;
        o.on_event = collect;
        o.event_userdata = events;
        cordon_process *proc = NULL;
        assert_int_equal(cordon_spawn(p, argv, &o, &proc, &err), -EPERM);
        assert_null(proc);
        assert_non_null(strstr(events, "\"type\":\"starting\""));
        assert_non_null(strstr(events, "\"type\":\"error\""));
        assert_non_null(strstr(events, "\"code\":\"POLICY_INVALID\""));

        /* danger-full-access from the caller's policy, through cordon_run. */
        assert_int_equal(cordon_policy_set_mode(p, CORDON_MODE_DANGER_FULL_ACCESS), 0);
        snprintf(want, sizeof(want), "mode danger-full-access: unsandboxed commands are "
                 "forbidden by managed settings %s:1:2 (allowUnsandboxedCommands: false); run "
                 "the command sandboxed", managed);
        err = (cordon_error) { 0 };
        assert_int_equal(run_read(p, &err), -EPERM);
        assert_int_equal(err.code, CORDON_POLICY_INVALID);
        assert_string_equal(err.message, want);
        /* A session refuses it for the managed settings before its own reason (no unconfined
         * session at all) comes up. */
        err = (cordon_error) { 0 };
        assert_int_equal(session_read(p, 0, &err), -EPERM);
        assert_string_equal(err.message, want);

        /* The opt-out is the caller's explicit decision: then it runs unconfined. */
        assert_int_equal(spawn_read(p, CORDON_SPAWN_NO_MANAGED_SETTINGS, CORDON_BACKEND_NONE,
                                    &err), 0);
        cordon_policy_free(p);
}

/* A file that fails to load fails the launch: never silently run without it. */
static void test_bad_file_fails_the_launch(void **state) {
        (void) state;
        cordon_policy *p = own_policy();
        cordon_error err = { 0 };
        char want[PATH_MAX * 2 + 128];

        deny_secret(managed, 0666);
        snprintf(want, sizeof(want), "%s: managed settings bind every run but the file is "
                 "writable by other users (mode 0666); run chmod go-w %s", managed, managed);
        assert_int_equal(run_read(p, &err), -EPERM);
        assert_int_equal(err.code, CORDON_POLICY_INVALID);
        assert_string_equal(err.message, want);
        err = (cordon_error) { 0 };
        assert_int_equal(spawn_read(p, 0, CORDON_BACKEND_AUTO, &err), -EPERM);
        assert_string_equal(err.message, want);
        err = (cordon_error) { 0 };
        assert_int_equal(session_read(p, 0, &err), -EPERM);
        assert_string_equal(err.message, want);
        assert_int_equal(spawn_read(p, CORDON_SPAWN_NO_MANAGED_SETTINGS, CORDON_BACKEND_AUTO,
                                    &err), 0);
        if (geteuid() == 0) {
                deny_secret(managed, 0644);
                assert_int_equal(chown(managed, 65534, 65534), 0);
                err = (cordon_error) { 0 };
                assert_int_equal(run_read(p, &err), -EPERM);
                assert_non_null(strstr(err.message, "belongs to uid 65534"));
        }

        write_file(managed, "{\n  \"sandbox\": {\"denyRead\": [\"relative\"]}\n}\n", 0644);
        snprintf(want, sizeof(want), "%s:2:28: key 'sandbox.denyRead[0]': 'relative' must be an "
                 "absolute path; use an absolute path without '..', e.g. \"/home/me/project\"",
                 managed);
        err = (cordon_error) { 0 };
        assert_int_equal(run_read(p, &err), -EINVAL);
        assert_int_equal(err.code, CORDON_POLICY_INVALID);
        assert_string_equal(err.message, want);

        assert_int_equal(unlink(managed), 0);
        assert_int_equal(mkdir(managed, 0755), 0);
        err = (cordon_error) { 0 };
        assert_true(run_read(p, &err) < 0);
        assert_int_equal(err.code, CORDON_POLICY_INVALID);
        assert_non_null(strstr(err.message, "not a regular file"));
        assert_int_equal(rmdir(managed), 0);
        cordon_policy_free(p);
}

static cordon_settings *resolve(const char *managed_path, unsigned flags) {
        cordon_settings_options o = { .cwd = ws, .home = home, .managed_path = managed_path,
                                      .flags = flags | CORDON_SETTINGS_NO_USER |
                                               CORDON_SETTINGS_NO_PROJECT |
                                               CORDON_SETTINGS_NO_TRUST };
        cordon_settings *s = NULL;
        cordon_error err = { 0 };
        if (cordon_settings_resolve(&o, &s, &err) < 0)
                fail_msg("resolve: %s", err.message);
        return s;
}

/* The resolver consulted its managed file (here: another one, which denies nothing); the launch
 * must not stack the launch's (which denies the secret) over it as well. */
static void test_resolved_policy_not_applied_twice(void **state) {
        (void) state;
        deny_secret(managed, 0644);
        write_file(other, "{}\n", 0644);
        cordon_error err = { 0 };
        cordon_settings *s = resolve(other, 0);
        const cordon_policy *resolved = cordon_settings_policy(s);
        assert_int_equal(run_read(resolved, &err), 0);
        assert_int_equal(spawn_read(resolved, 0, CORDON_BACKEND_AUTO, &err), 0);
        assert_int_equal(session_read(resolved, 0, &err), 0);
        /* A copy of it, and the same changed by a setter (cordond sets an exec's environment and
         * session id on its copy), are still the resolved policy. */
        cordon_policy *copy = NULL;
        assert_int_equal(cordon_policy_resolve(resolved, NULL, NULL, &copy, &err), 0);
        assert_int_equal(cordon_policy_set_session_id(copy, "s-1"), 0);
        assert_int_equal(run_read(copy, &err), 0);
        cordon_policy_free(copy);
        /* A layer over it could override what the managed settings set: they apply again. */
        cordon_policy *layer = NULL, *over = NULL;
        assert_int_equal(cordon_policy_new(&layer, NULL), 0);
        assert_int_equal(cordon_policy_set_timeout_ms(layer, 60000), 0);
        assert_int_equal(cordon_policy_resolve(resolved, layer, NULL, &over, &err), 0);
        assert_unread(run_read(over, &err));
        cordon_policy_free(over);
        cordon_policy_free(layer);
        cordon_settings_free(s);

        /* Resolved without the managed settings: they are still to come, at the launch. */
        s = resolve(other, CORDON_SETTINGS_NO_MANAGED);
        assert_unread(run_read(cordon_settings_policy(s), &err));
        cordon_settings_free(s);
        /* Resolved with the same file: it holds them once, the launch adds nothing. */
        s = resolve(managed, 0);
        assert_unread(run_read(cordon_settings_policy(s), &err));
        cordon_settings_free(s);
}

static void test_session_exec_refuses_opt_out(void **state) {
        (void) state;
        cordon_policy *p = own_policy();
        cordon_session_options so;
        cordon_session_options_init(&so);
        so.environ = env;
        so.cwd = ws;
        cordon_session *s = NULL;
        cordon_error err = { 0 };
        assert_int_equal(cordon_session_launch(p, &so, &s, &err), 0);
        char t[] = "true";
        char *argv[] = { t, NULL };
        cordon_spawn_options o;
        cordon_spawn_options_init(&o);
        o.flags = CORDON_SPAWN_NO_MANAGED_SETTINGS;
        cordon_process *proc = NULL;
        assert_int_equal(cordon_session_exec(s, argv, &o, &proc, &err), -EINVAL);
        assert_int_equal(err.code, CORDON_USAGE);
        assert_non_null(strstr(err.message, "CORDON_SESSION_NO_MANAGED_SETTINGS"));
        assert_null(proc);
        cordon_session_destroy(s);
        cordon_policy_free(p);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup(test_no_file_is_nothing, no_managed),
                cmocka_unit_test_setup(test_managed_deny_reaches_library_callers, no_managed),
                cmocka_unit_test_setup(test_managed_deny_reaches_file_operations, no_managed),
                cmocka_unit_test_setup(test_managed_scalars_win, no_managed),
                cmocka_unit_test_setup(test_unsandboxed_forbidden, no_managed),
                cmocka_unit_test_setup(test_bad_file_fails_the_launch, no_managed),
                cmocka_unit_test_setup(test_resolved_policy_not_applied_twice, no_managed),
                cmocka_unit_test_setup(test_session_exec_refuses_opt_out, no_managed),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
