/* SPDX-License-Identifier: Apache-2.0 */
/* Settings resolution (src/settings/, docs/settings.md) on real files under /var/tmp: precedence
 * for every pair of layers, the administrator's mandate and its report, the switches, the
 * protection of the settings files themselves, the ownership check, and --explain's sources. */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <seccomp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "cordon/cordon.h"
#include "policy/policy.h"
#include "tmptree.h"

#define PROJECT "ws/.cordon/settings.json"
#define USER "home/.config/cordon/settings.json"
#define MANAGED "managed.json"

typedef struct fixture {
        char *root;
        const char *files[4];
        size_t n_files;
        cordon_policy *cmdline;
} fixture;

static char file_paths[4][PATH_MAX];

static int resolve(fixture *f, cordon_settings **ret, cordon_error *err) {
        char cwd[PATH_MAX], home[PATH_MAX], managed[PATH_MAX];
        snprintf(cwd, sizeof(cwd), "%s/ws", f->root);
        snprintf(home, sizeof(home), "%s/home", f->root);
        snprintf(managed, sizeof(managed), "%s/%s", f->root, MANAGED);
        cordon_settings_options o = { .cwd = cwd, .home = home, .managed_path = managed,
                                      .files = f->files, .n_files = f->n_files,
                                      .command_line = f->cmdline };
        return cordon_settings_resolve(&o, ret, err);
}

static cordon_settings *resolve_ok(fixture *f) {
        cordon_settings *s = NULL;
        cordon_error err = { 0 };
        int r = resolve(f, &s, &err);
        if (r < 0)
                fail_msg("resolve failed: %s", err.message);
        return s;
}

/* The error message of a failing resolve. */
static const char *resolve_err(fixture *f) {
        static cordon_error err;
        cordon_settings *s = NULL;
        memset(&err, 0, sizeof(err));
        assert_true(resolve(f, &s, &err) < 0);
        assert_null(s);
        assert_int_equal(err.code, CORDON_POLICY_INVALID);
        return err.message;
}

static void fixture_done(fixture *f) {
        cordon_policy_free(f->cmdline);
        tmptree_remove(f->root);
        *f = (fixture){ 0 };
}

static void add_file(fixture *f, const char *rel, const char *content) {
        tmptree_write(f->root, rel, content, 0644);
        snprintf(file_paths[f->n_files], PATH_MAX, "%s/%s", f->root, rel);
        f->files[f->n_files] = file_paths[f->n_files];
        f->n_files++;
}

/* ---- precedence --------------------------------------------------------------------------- */

enum { L_PROJECT, L_USER, L_FILE, L_CMDLINE, L_MANAGED, N_LAYERS };
static const char *const layer_names[N_LAYERS] = { "project", "user", "settings", "command line",
                                                    "managed" };

/* Layer `l` sets limits.timeout and adds a denyRead entry of its own. */
static void set_layer(fixture *f, int l, uint64_t timeout, const char *deny) {
        if (l == L_CMDLINE) {
                assert_int_equal(cordon_policy_new(&f->cmdline, NULL), 0);
                assert_int_equal(cordon_policy_set_timeout_ms(f->cmdline, timeout), 0);
                assert_int_equal(cordon_policy_add_deny_read(f->cmdline, deny), 0);
                return;
        }
        char json[512];
        snprintf(json, sizeof(json),
                 "{\"sandbox\": {\"limits\": {\"timeout\": %" PRIu64 "}, \"denyRead\": [\"%s\"]}}",
                 timeout, deny);
        if (l == L_FILE)
                add_file(f, "cli.json", json);
        else
                tmptree_write(f->root, l == L_PROJECT ? PROJECT : l == L_USER ? USER : MANAGED, json,
                            0644);
}

static const json_t *source_of(const json_t *explain, const char *key, const char *value) {
        size_t i;
        json_t *e;
        json_array_foreach(json_object_get(explain, "sources"), i, e)
                if (strcmp(json_string_value(json_object_get(e, "key")), key) == 0 &&
                    strcmp(json_string_value(json_object_get(e, "value")), value) == 0)
                        return e;
        fail_msg("no source for %s = %s", key, value);
        return NULL;
}

static json_t *explain_json(const cordon_settings *s) {
        char *text = NULL;
        cordon_error err = { 0 };
        assert_int_equal(cordon_settings_to_json(s, &text, &err), 0);
        json_t *j = json_loads(text, 0, NULL);
        assert_non_null(j);
        free(text);
        return j;
}

/* The tmpfs sizes are limits like the others: a settings file's reach the resolved policy (a
 * field the copy left out would be accepted and silently ignored) and are explained. */
static void test_tmpfs_sizes_carried(void **state) {
        fixture f = { .root = tmptree_new_workspace("settings") };
        tmptree_write(f.root, USER,
                    "{\"sandbox\": {\"limits\": {\"tmpSize\": \"64M\", \"shmSize\": \"8M\"}}}",
                    0644);
        cordon_settings *s = resolve_ok(&f);
        const cordon_policy *p = cordon_settings_policy(s);
        assert_int_equal(p->tmp_bytes, 64ULL << 20);
        assert_int_equal(p->shm_bytes, 8ULL << 20);
        json_t *j = explain_json(s);
        assert_string_equal(json_string_value(json_object_get(
                                    source_of(j, "limits.tmpSize", "67108864"), "layer")),
                            "user");
        assert_non_null(source_of(j, "limits.shmSize", "8388608"));
        json_decref(j);
        cordon_settings_free(s);
        fixture_done(&f);
}

static void test_precedence_every_pair(void **state) {
        for (int a = 0; a < N_LAYERS; a++)
                for (int b = a + 1; b < N_LAYERS; b++) {
                        fixture f = { .root = tmptree_new_workspace("settings") };
                        set_layer(&f, a, 1000 + (uint64_t) a, "/var/tmp/deny-low");
                        set_layer(&f, b, 1000 + (uint64_t) b, "/var/tmp/deny-high");
                        cordon_settings *s = resolve_ok(&f);
                        const cordon_policy *p = cordon_settings_policy(s);
                        /* The scalar from the higher layer, the list from both. */
                        if (p->timeout_ms != 1000 + (uint64_t) b)
                                fail_msg("%s over %s: timeout %" PRIu64, layer_names[b],
                                         layer_names[a], p->timeout_ms);
                        assert_true(strv_contains(&p->deny_read, "/var/tmp/deny-low"));
                        assert_true(strv_contains(&p->deny_read, "/var/tmp/deny-high"));
                        json_t *j = explain_json(s);
                        char v[32];
                        snprintf(v, sizeof(v), "%d", 1000 + b);
                        assert_string_equal(json_string_value(json_object_get(
                                                    source_of(j, "limits.timeout", v), "layer")),
                                            layer_names[b]);
                        assert_string_equal(json_string_value(json_object_get(
                                                    source_of(j, "denyRead", "/var/tmp/deny-low"),
                                                    "layer")),
                                            layer_names[a]);
                        json_decref(j);
                        cordon_settings_free(s);
                        fixture_done(&f);
                }
}

/* The switches live in files only: every pair of file layers, both directions. */
static void test_switch_precedence(void **state) {
        static const int files[] = { L_PROJECT, L_USER, L_FILE, L_MANAGED };
        for (size_t a = 0; a < 4; a++)
                for (size_t b = a + 1; b < 4; b++)
                        for (int low = 0; low < 2; low++) {
                                fixture f = { .root = tmptree_new_workspace("settings") };
                                const int ls[2] = { files[a], files[b] };
                                for (int k = 0; k < 2; k++) {
                                        /* low: the lower layer says false, the higher true. */
                                        const char *json = (k == 0) == (low == 1)
                                                                   ? "{\"failIfUnavailable\": false}"
                                                                   : "{\"failIfUnavailable\": true}";
                                        if (ls[k] == L_FILE)
                                                add_file(&f, "cli.json", json);
                                        else
                                                tmptree_write(f.root,
                                                            ls[k] == L_PROJECT ? PROJECT
                                                            : ls[k] == L_USER  ? USER
                                                                               : MANAGED,
                                                            json, 0644);
                                }
                                cordon_settings *s = resolve_ok(&f);
                                assert_int_equal(cordon_settings_fail_if_unavailable(s), low == 1);
                                cordon_settings_free(s);
                                fixture_done(&f);
                        }
}

static void test_settings_files_in_order(void **state) {
        fixture f = { .root = tmptree_new_workspace("settings") };
        add_file(&f, "one.json", "{\"sandbox\": {\"mode\": \"read-only\"}}");
        add_file(&f, "two.json", "{\"sandbox\": {\"mode\": \"workspace-write\"}}");
        cordon_settings *s = resolve_ok(&f);
        assert_int_equal(cordon_policy_get_mode(cordon_settings_policy(s)),
                         CORDON_MODE_WORKSPACE_WRITE);
        cordon_settings_free(s);
        fixture_done(&f);
}

/* ---- the administrator's mandate ---------------------------------------------------------- */

static const char loosening_project[] =
        "{\n"
        "  \"sandbox\": {\n"
        "    \"mode\": \"danger-full-access\",\n"
        "    \"networkEnabled\": true,\n"
        "    \"bindMounts\": [{\"hostPath\": \"/var/tmp/x-rw\"}, {\"hostPath\": \"/var/tmp/x-ro\", "
        "\"readOnly\": true}],\n"
        "    \"hosts\": {\"api.example.com\": \"10.0.0.1\"},\n"
        "    \"runnerStateDirs\": [\"/var/tmp/state\"],\n"
        "    \"egressAllowlist\": [\"evil.example.com\"],\n"
        "    \"allowUnixSockets\": [\"/run/docker.sock\"],\n"
        "    \"env\": {\"pass\": [\"GITHUB_TOKEN\", \"LANG\"]},\n"
        "    \"denyRead\": [\"/var/tmp/secret\"]\n"
        "  },\n"
        "  \"excludedCommands\": [\"docker ps\"],\n"
        "  \"allowUnsandboxedCommands\": true,\n"
        "  \"failIfUnavailable\": false\n"
        "}\n";

static void assert_note(const cordon_settings *s, size_t i, const char *file, const char *key,
                        const char *value, unsigned line, unsigned col, const char *what,
                        const char *mandate) {
        const cordon_settings_note *n = cordon_settings_ignored(s, i);
        assert_non_null(n);
        assert_string_equal(n->layer, "project");
        assert_string_equal(n->file, file);
        assert_string_equal(n->key, key);
        if (value)
                assert_string_equal(n->value, value);
        else
                assert_null(n->value);
        if (n->line != line || n->column != col)
                fail_msg("%s: at %u:%u, expected %u:%u", key, n->line, n->column, line, col);
        char why[1024];
        snprintf(why, sizeof(why), "%s; ignored because %s", what, mandate);
        assert_string_equal(n->why, why);
}

static void test_mandate_ignores_project_loosening(void **state) {
        fixture f = { .root = tmptree_new_workspace("settings") };
        tmptree_write(f.root, MANAGED, "{\"allowUnsandboxedCommands\": false}", 0644);
        tmptree_write(f.root, PROJECT, loosening_project, 0644);
        tmptree_write(f.root, USER,
                    "{\"sandbox\": {\"egressAllowlist\": [\"ok.example.com\"]},\n"
                    " \"excludedCommands\": [\"ls -l\"]}",
                    0644);
        cordon_settings *s = resolve_ok(&f);
        char proj[PATH_MAX], mandate[PATH_MAX + 64];
        snprintf(proj, sizeof(proj), "%s/%s", f.root, PROJECT);
        snprintf(mandate, sizeof(mandate), "managed settings (%s/%s) forbid unsandboxed commands",
                 f.root, MANAGED);
        assert_int_equal(cordon_settings_n_ignored(s), 11);
        assert_note(s, 0, proj, "sandbox.mode", NULL, 3, 5, "turns the sandbox off", mandate);
        assert_note(s, 1, proj, "sandbox.networkEnabled", NULL, 4, 5, "turns the network on",
                    mandate);
        assert_note(s, 2, proj, "sandbox.bindMounts", "/var/tmp/x-rw", 5, 5,
                    "adds a writable path", mandate);
        assert_note(s, 3, proj, "sandbox.hosts", "api.example.com", 6, 5,
                    "overrides a host's address", mandate);
        assert_note(s, 4, proj, "sandbox.runnerStateDirs", "/var/tmp/state", 7, 5,
                    "adds a writable path", mandate);
        assert_note(s, 5, proj, "sandbox.egressAllowlist", "evil.example.com", 8, 5,
                    "adds an allowed domain", mandate);
        assert_note(s, 6, proj, "sandbox.allowUnixSockets", "/run/docker.sock", 9, 5,
                    "allows connecting to a Unix socket", mandate);
        assert_note(s, 7, proj, "sandbox.env.pass", "GITHUB_TOKEN", 10, 13,
                    "passes a secret-looking variable", mandate);
        assert_note(s, 8, proj, "allowUnsandboxedCommands", "true", 14, 3,
                    "allows unsandboxed commands", mandate);
        assert_note(s, 9, proj, "failIfUnavailable", "false", 15, 3,
                    "allows running unconfined when no sandbox is available", mandate);
        assert_note(s, 10, proj, "excludedCommands[0]", "docker ps", 13, 24,
                    "runs a command outside the sandbox", mandate);

        /* What stays: tightening project settings, and everything from the user layer. */
        const cordon_policy *p = cordon_settings_policy(s);
        assert_int_equal(cordon_policy_get_mode(p), CORDON_MODE_WORKSPACE_WRITE);
        assert_true(strv_contains(&p->deny_read, "/var/tmp/secret"));
        assert_true(strv_contains(&p->env_pass, "LANG"));
        assert_false(strv_contains(&p->env_pass, "GITHUB_TOKEN"));
        assert_false(strv_contains(&p->egress_allowlist, "evil.example.com"));
        assert_true(strv_contains(&p->egress_allowlist, "ok.example.com"));
        assert_int_equal(p->runner_state_dirs.n, 0);
        assert_int_equal(p->allow_unix_sockets.n, 0);
        assert_int_equal(p->n_hosts, 0);
        bool ro = false, rw = false;
        for (size_t i = 0; i < p->n_binds; i++) {
                ro |= strcmp(p->binds[i].host_path, "/var/tmp/x-ro") == 0 && p->binds[i].read_only;
                rw |= strcmp(p->binds[i].host_path, "/var/tmp/x-rw") == 0;
        }
        assert_true(ro);
        assert_false(rw);
        assert_true(cordon_settings_fail_if_unavailable(s));
        assert_false(cordon_settings_allow_unsandboxed(s));

        cordon_excluded_match m;
        const char *why = NULL;
        const char *docker[] = { "docker", "ps", NULL }, *ls[] = { "ls", "-l", NULL };
        assert_int_equal(cordon_settings_match_excluded(s, (char **) docker, NULL, &m, &why), 0);
        assert_null(why);
        assert_int_equal(cordon_settings_match_excluded(s, (char **) ls, NULL, &m, &why), 1);
        assert_string_equal(m.layer, "user");
        assert_string_equal(m.entry, "ls -l");
        assert_int_equal(m.line, 2);
        assert_int_equal(m.column, 23);
        cordon_settings_free(s);
        fixture_done(&f);
}

static void test_lock_domains(void **state) {
        fixture f = { .root = tmptree_new_workspace("settings") };
        tmptree_write(f.root, MANAGED,
                    "{\"lockDomains\": true, \"sandbox\": {\"egressAllowlist\": [\"corp.example\"]}}",
                    0644);
        tmptree_write(f.root, PROJECT, "{\"sandbox\": {\"egressAllowlist\": [\"x.example.com\"]}}",
                    0644);
        add_file(&f, "cli.json", "{\"sandbox\": {\"egressAllowlist\": [\"y.example.com\"]}}");
        cordon_settings *s = resolve_ok(&f);
        const cordon_policy *p = cordon_settings_policy(s);
        assert_true(strv_contains(&p->egress_allowlist, "corp.example"));
        assert_true(strv_contains(&p->egress_allowlist, "y.example.com"));
        assert_false(strv_contains(&p->egress_allowlist, "x.example.com"));
        assert_int_equal(cordon_settings_n_ignored(s), 1);
        char why[PATH_MAX + 128];
        snprintf(why, sizeof(why), "adds an allowed domain; ignored because managed settings "
                 "(%s/%s) lock the domain list", f.root, MANAGED);
        assert_string_equal(cordon_settings_ignored(s, 0)->why, why);
        assert_string_equal(cordon_settings_ignored(s, 0)->value, "x.example.com");
        /* Locking domains alone does not forbid an explicit unconfined run. */
        assert_int_equal(cordon_settings_check_unconfined(s, "--sandbox off", NULL), 0);
        cordon_settings_free(s);

        /* Only the administrator can lock. */
        tmptree_write(f.root, USER, "{\"lockDomains\": true}", 0644);
        char msg[PATH_MAX + 256];
        snprintf(msg, sizeof(msg), "%s/%s:1:2: key 'lockDomains': only managed settings can lock "
                 "the domain list; move it to the managed settings file "
                 "(/etc/cordon/managed-settings.json)", f.root, USER);
        assert_string_equal(resolve_err(&f), msg);
        fixture_done(&f);
}

/* Without a mandate, the project file's loosening items are ignored until its exact content is
 * trusted (docs/settings.md); trusted, it is a layer like the others. */
static void test_no_mandate_project_loosens_only_trusted(void **state) {
        fixture f = { .root = tmptree_new_workspace("settings") };
        tmptree_write(f.root, MANAGED, "{\"allowUnsandboxedCommands\": true}", 0644);
        tmptree_write(f.root, PROJECT, loosening_project, 0644);
        cordon_settings *s = resolve_ok(&f);
        char proj[PATH_MAX], why[PATH_MAX + 256];
        snprintf(proj, sizeof(proj), "%s/%s", f.root, PROJECT);
        snprintf(why, sizeof(why), "the project settings are not trusted; to trust this exact "
                 "content, run outside the sandbox: cordon settings trust %s", proj);
        assert_int_equal(cordon_settings_n_ignored(s), 11);
        assert_note(s, 0, proj, "sandbox.mode", NULL, 3, 5, "turns the sandbox off", why);
        assert_note(s, 5, proj, "sandbox.egressAllowlist", "evil.example.com", 8, 5,
                    "adds an allowed domain", why);
        assert_note(s, 10, proj, "excludedCommands[0]", "docker ps", 13, 24,
                    "runs a command outside the sandbox", why);
        const cordon_policy *p = cordon_settings_policy(s);
        assert_int_equal(cordon_policy_get_mode(p), CORDON_MODE_WORKSPACE_WRITE);
        assert_false(strv_contains(&p->egress_allowlist, "evil.example.com"));
        assert_true(strv_contains(&p->deny_read, "/var/tmp/secret"));
        assert_true(cordon_settings_fail_if_unavailable(s));
        assert_string_equal(cordon_settings_project_file(s), proj);
        assert_false(cordon_settings_project_trusted(s));

        cordon_error err = { 0 };
        assert_int_equal(cordon_settings_trust_project(s, NULL, &err), 0);
        cordon_settings_free(s);
        s = resolve_ok(&f);
        p = cordon_settings_policy(s);
        assert_true(cordon_settings_project_trusted(s));
        assert_int_equal(cordon_settings_n_ignored(s), 0);
        assert_int_equal(cordon_policy_get_mode(p), CORDON_MODE_DANGER_FULL_ACCESS);
        assert_true(strv_contains(&p->egress_allowlist, "evil.example.com"));
        assert_false(cordon_settings_fail_if_unavailable(s));
        cordon_settings_free(s);
        fixture_done(&f);
}

/* ---- switches ----------------------------------------------------------------------------- */

static void test_switch_defaults_and_refusals(void **state) {
        fixture f = { .root = tmptree_new_workspace("settings") };
        cordon_settings *s = resolve_ok(&f);
        assert_true(cordon_settings_fail_if_unavailable(s));
        assert_true(cordon_settings_allow_unsandboxed(s));
        assert_int_equal(cordon_settings_check_unconfined(s, "--sandbox off", NULL), 0);
        cordon_settings_free(s);

        tmptree_write(f.root, MANAGED, "{\n  \"allowUnsandboxedCommands\": false\n}", 0644);
        s = resolve_ok(&f);
        cordon_error err = { 0 };
        assert_int_equal(cordon_settings_check_unconfined(s, "--sandbox off", &err), -EPERM);
        char msg[PATH_MAX + 256];
        snprintf(msg, sizeof(msg), "--sandbox off: unsandboxed commands are forbidden by managed "
                 "settings %s/%s:2:3 (allowUnsandboxedCommands: false); run the command sandboxed",
                 f.root, MANAGED);
        assert_string_equal(err.message, msg);
        assert_int_equal(err.code, CORDON_POLICY_INVALID);
        cordon_settings_free(s);

        /* A user file (a layer allowed to loosen) cannot undo the administrator's switch... */
        tmptree_write(f.root, USER, "{\"allowUnsandboxedCommands\": true}", 0644);
        s = resolve_ok(&f);
        assert_false(cordon_settings_allow_unsandboxed(s));
        cordon_settings_free(s);
        /* ...and danger-full-access from any layer is refused outright, never confined quietly. */
        assert_int_equal(cordon_policy_new(&f.cmdline, NULL), 0);
        assert_int_equal(cordon_policy_set_mode(f.cmdline, CORDON_MODE_DANGER_FULL_ACCESS), 0);
        snprintf(msg, sizeof(msg), "mode danger-full-access: unsandboxed commands are forbidden by "
                 "managed settings %s/%s:2:3 (allowUnsandboxedCommands: false); run the command "
                 "sandboxed", f.root, MANAGED);
        assert_string_equal(resolve_err(&f), msg);
        fixture_done(&f);
}

/* A probe taken where user namespaces and Landlock fail, as on a restricted host. */
static void restrict_features(void) {
        scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
        assert_non_null(ctx);
        assert_int_equal(seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(unshare), 0), 0);
        assert_int_equal(seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS),
                                          SCMP_SYS(landlock_create_ruleset), 0),
                         0);
        assert_int_equal(seccomp_load(ctx), 0);
        seccomp_release(ctx);
}

/* In a child: the backend chosen for AUTO on a restricted host under the given user file. */
static int backend_on_restricted_host(fixture *f, const char *user) {
        if (user)
                tmptree_write(f->root, USER, user, 0644);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                restrict_features();
                cordon_settings *s = NULL;
                cordon_probe *probe = NULL;
                const char *why = NULL;
                if (resolve(f, &s, NULL) < 0 || cordon_probe_run(&probe, NULL) < 0)
                        _exit(100);
                cordon_backend b = cordon_settings_backend(s, CORDON_BACKEND_AUTO, probe, &why);
                if ((b == CORDON_BACKEND_NONE) != (why != NULL))
                        _exit(101);
                if (why && !strstr(why, "no sandbox is available on this host and user settings "))
                        _exit(102);
                _exit((int) b);
        }
        int status;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        return WEXITSTATUS(status);
}

static void test_fail_if_unavailable(void **state) {
        fixture f = { .root = tmptree_new_workspace("settings") };
        /* Without a sandbox: only failIfUnavailable false steps down, only to none. (Children
         * first: the probe's facts are cached per process, and a child inherits the cache.) */
        assert_int_equal(backend_on_restricted_host(&f, "{}"), CORDON_BACKEND_AUTO);
        assert_int_equal(backend_on_restricted_host(&f, "{\"failIfUnavailable\": false}"),
                         CORDON_BACKEND_NONE);
        /* Not when unsandboxed commands are forbidden. */
        tmptree_write(f.root, MANAGED, "{\"allowUnsandboxedCommands\": false}", 0644);
        assert_int_equal(backend_on_restricted_host(&f, NULL), CORDON_BACKEND_AUTO);
        assert_int_equal(unlink(tmptree_at(f.root, MANAGED)), 0);

        /* This host has a sandbox: AUTO stays AUTO whatever the switch says. */
        cordon_settings *s = resolve_ok(&f);
        cordon_probe *probe = NULL;
        assert_int_equal(cordon_probe_run(&probe, NULL), 0);
        cordon_backend b = cordon_settings_backend(s, CORDON_BACKEND_AUTO, probe, NULL);
        assert_int_equal(cordon_settings_backend(s, CORDON_BACKEND_NATIVE, probe, NULL),
                         CORDON_BACKEND_NATIVE);
        cordon_probe_free(probe);
        cordon_settings_free(s);
        fixture_done(&f);
        if (b != CORDON_BACKEND_AUTO)
                skip(); /* no sandbox on this host to begin with */
}

/* ---- protection of the settings files ----------------------------------------------------- */

static void test_settings_files_protected(void **state) {
        fixture f = { .root = tmptree_new_workspace("settings") };
        add_file(&f, "cli.json", "{}");
        /* The user file is a link into the workspace: its target must be protected too. */
        tmptree_write(f.root, "ws/conf/user.json", "{}", 0644);
        assert_int_equal(mkdir(tmptree_at(f.root, "home/.config"), 0755), 0);
        assert_int_equal(mkdir(tmptree_at(f.root, "home/.config/cordon"), 0755), 0);
        assert_int_equal(symlink(tmptree_at(f.root, "ws/conf/user.json"), tmptree_at(f.root, USER)),
                         0);
        cordon_settings *s = resolve_ok(&f);
        const cordon_policy *p = cordon_settings_policy(s);
        assert_true(strv_contains(&p->protected_paths, tmptree_at(f.root, "ws/.cordon")));
        assert_true(strv_contains(&p->protected_paths, tmptree_at(f.root, "home/.config/cordon")));
        assert_true(strv_contains(&p->protected_paths, tmptree_at(f.root, "cli.json")));
        assert_true(strv_contains(&p->protected_paths, tmptree_at(f.root, "ws/conf/user.json")));
        assert_int_equal(p->protected_paths.n, 4);
        assert_true(strv_contains(&p->env_scrub, "CORDON_MANAGED_SETTINGS"));
        cordon_settings_free(s);
        fixture_done(&f);
}

/* ---- ownership: settings that grant authority must come from a file only we control -------- */

static void test_permission_check(void **state) {
        static const char grants[] = "{\"sandbox\": {\"egressAllowlist\": [\"x.example.com\"]}}";
        fixture f = { .root = tmptree_new_workspace("settings") };
        add_file(&f, "dir/cli.json", grants);
        const char *path = file_paths[0];
        assert_int_equal(chmod(path, 0664), 0);
        char msg[PATH_MAX * 2 + 256];
        snprintf(msg, sizeof(msg), "%s: the settings grant authority (sandbox.egressAllowlist) but "
                 "the file is writable by other users (mode 0664); run chmod go-w %s", path, path);
        assert_string_equal(resolve_err(&f), msg);
        assert_int_equal(chmod(path, 0644), 0);
        cordon_settings_free(resolve_ok(&f));

        /* A directory others can write lets them swap the file; a sticky one does not. */
        assert_int_equal(chmod(tmptree_at(f.root, "dir"), 0777), 0);
        snprintf(msg, sizeof(msg), "%s: the settings grant authority (sandbox.egressAllowlist) but "
                 "the file's directory is writable by other users (mode 0777), who could replace "
                 "it; run chmod go-w on the directory", path);
        assert_string_equal(resolve_err(&f), msg);
        assert_int_equal(chmod(tmptree_at(f.root, "dir"), 01777), 0);
        cordon_settings_free(resolve_ok(&f));

        /* A file that only restricts may be writable by others: nothing to gain from it. */
        tmptree_write(f.root, "dir/cli.json", "{\"sandbox\": {\"denyRead\": [\"/var/tmp/s\"]}}",
                    0666);
        cordon_settings_free(resolve_ok(&f));

        /* Not a managed file: whoever else can edit the administrator's deny rules can drop
         * them, so it is refused whatever it says. */
        tmptree_write(f.root, MANAGED, "{\"sandbox\": {\"denyRead\": [\"/var/tmp/s\"]}}", 0666);
        snprintf(msg, sizeof(msg), "%s: managed settings bind every run but the file is writable "
                 "by other users (mode 0666); run chmod go-w %s", tmptree_at(f.root, MANAGED),
                 tmptree_at(f.root, MANAGED));
        assert_string_equal(resolve_err(&f), msg);
        assert_int_equal(chmod(tmptree_at(f.root, MANAGED), 0644), 0);
        cordon_settings_free(resolve_ok(&f));
        if (geteuid() == 0) {
                assert_int_equal(chown(tmptree_at(f.root, MANAGED), 65534, 65534), 0);
                snprintf(msg, sizeof(msg), "%s: managed settings bind every run but the file "
                         "belongs to uid 65534, who could change them; make root its owner: "
                         "chown root %s", tmptree_at(f.root, MANAGED), tmptree_at(f.root, MANAGED));
                assert_string_equal(resolve_err(&f), msg);
                assert_int_equal(chown(tmptree_at(f.root, MANAGED), 0, 0), 0);
        }

        /* Owned by another (non-root) user. */
        if (geteuid() == 0) {
                tmptree_write(f.root, "dir/cli.json", grants, 0644);
                assert_int_equal(chown(path, 65534, 65534), 0);
                snprintf(msg, sizeof(msg), "%s: the settings grant authority "
                         "(sandbox.egressAllowlist) but the file belongs to uid 65534, who could "
                         "change them; copy it to a file you own", path);
                assert_string_equal(resolve_err(&f), msg);
        }
        fixture_done(&f);
}

/* ---- --explain ---------------------------------------------------------------------------- */

static void test_explain(void **state) {
        fixture f = { .root = tmptree_new_workspace("settings") };
        tmptree_write(f.root, USER, "{\n  \"sandbox\": {\n    \"denyRead\": [\"/var/tmp/s\"]\n  }\n}",
                    0644);
        add_file(&f, "cli.json", "{\"excludedCommands\": [\"git status\"]}");
        cordon_settings *s = resolve_ok(&f);
        json_t *j = explain_json(s);
        const json_t *src = source_of(j, "denyRead", "/var/tmp/s");
        assert_string_equal(json_string_value(json_object_get(src, "layer")), "user");
        assert_string_equal(json_string_value(json_object_get(src, "file")),
                            tmptree_at(f.root, USER));
        assert_string_equal(json_string_value(json_object_get(src, "sourceKey")),
                            "sandbox.denyRead");
        assert_int_equal(json_integer_value(json_object_get(src, "line")), 3);
        assert_int_equal(json_integer_value(json_object_get(src, "column")), 5);
        src = source_of(j, "mode", "workspace-write");
        assert_string_equal(json_string_value(json_object_get(src, "layer")), "default");
        json_t *ex = json_array_get(json_object_get(j, "excludedCommands"), 0);
        assert_string_equal(json_string_value(json_object_get(ex, "entry")), "git status");
        assert_string_equal(json_string_value(json_object_get(ex, "layer")), "settings");
        assert_true(json_is_object(json_object_get(j, "policy")));
        assert_true(json_is_true(json_object_get(json_object_get(j, "failIfUnavailable"),
                                                 "value")));
        json_decref(j);

        char *text = NULL;
        assert_int_equal(cordon_settings_to_text(s, &text, NULL), 0);
        char want[PATH_MAX + 128];
        snprintf(want, sizeof(want), "user settings %s:3:5 (sandbox.denyRead)",
                 tmptree_at(f.root, USER));
        assert_non_null(strstr(text, want));
        assert_non_null(strstr(text, "  denyRead                 /var/tmp/s"));
        snprintf(want, sizeof(want), "--settings file %s:1:23 (excludedCommands[0])",
                 tmptree_at(f.root, "cli.json"));
        assert_non_null(strstr(text, want));
        free(text);
        cordon_settings_free(s);
        fixture_done(&f);
}

int main(void) {
        umask(022);
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_precedence_every_pair),
                cmocka_unit_test(test_tmpfs_sizes_carried),
                cmocka_unit_test(test_switch_precedence),
                cmocka_unit_test(test_settings_files_in_order),
                cmocka_unit_test(test_mandate_ignores_project_loosening),
                cmocka_unit_test(test_lock_domains),
                cmocka_unit_test(test_no_mandate_project_loosens_only_trusted),
                cmocka_unit_test(test_switch_defaults_and_refusals),
                cmocka_unit_test(test_fail_if_unavailable),
                cmocka_unit_test(test_settings_files_protected),
                cmocka_unit_test(test_permission_check),
                cmocka_unit_test(test_explain),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
