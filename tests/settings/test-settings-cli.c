/* SPDX-License-Identifier: Apache-2.0 */
/* The cordon binary with settings files (docs/settings.md, docs/cli.md): --settings, policy show
 * --explain, settings import, the warnings for ignored settings, unconfined runs the settings
 * forbid, an excludedCommands entry running outside the sandbox (and a near miss that does not),
 * and failIfUnavailable on a host without a sandbox. argv[1] is the cordon binary. */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <seccomp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "tmptree.h"
#include "run-binary.h"

static const char *cordon_path;
static char *root;

static run_result R;

/* Blocks user namespaces and Landlock, as a restricted host would. */
static int restrict_features(void) {
        scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
        int r = ctx ? seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(unshare), 0) : -1;
        if (r == 0)
                r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS),
                                     SCMP_SYS(landlock_create_ruleset), 0);
        if (r == 0)
                r = seccomp_load(ctx);
        seccomp_release(ctx);
        return r;
}

/* In the child: cordon runs in root/ws with HOME=root/home and the managed settings at
 * root/managed.json. */
static int enter_tree(void *data) {
        if (chdir(tmptree_at(root, "ws")) < 0 || setenv("HOME", tmptree_at(root, "home"), 1) < 0 ||
            setenv("CORDON_MANAGED_SETTINGS", tmptree_at(root, "managed.json"), 1) < 0)
                return -1;
        return 0;
}

/* The same, as on a host without user namespaces and Landlock. */
static int enter_tree_restricted(void *data) {
        return enter_tree(data) < 0 ? -1 : restrict_features();
}
#define RUN(res, ...)                                                                             \
        run_binary((res), cordon_path, (const char *const[]) { __VA_ARGS__, NULL }, enter_tree,   \
                   NULL)
#define RUN_RESTRICTED(res, ...)                                                                  \
        run_binary((res), cordon_path, (const char *const[]) { __VA_ARGS__, NULL },               \
                   enter_tree_restricted, NULL)

static int setup(void **state) {
        root = tmptree_new_workspace("settings");
        return 0;
}

static int teardown(void **state) {
        tmptree_remove(root);
        root = NULL;
        return 0;
}

static void test_settings_flag(void **state) {
        tmptree_write(root, "s.json", "{\"sandbox\": {\"denyRead\": [\"/var/tmp/s-secret\"]}}", 0644);
        RUN(&R, "policy", "show", "--json", "--settings", "../s.json");
        assert_int_equal(R.status, 0);
        assert_string_equal(R.err, "");
        json_t *j = json_loads(R.out, 0, NULL);
        assert_non_null(j);
        json_t *deny = json_object_get(json_object_get(j, "policy"), "denyRead");
        assert_string_equal(json_string_value(json_array_get(deny, 0)), "/var/tmp/s-secret");
        json_decref(j);

        /* A bad file: one fatal line with its position, nothing run. */
        tmptree_write(root, "bad.json", "{\n  \"sandbox\": {\"denyRead\": [\"relative\"]}\n}", 0644);
        RUN(&R, "run", "--settings", "../bad.json", "--", "true");
        char want[PATH_MAX + 256];
        snprintf(want, sizeof(want), "cordon: fatal: POLICY_INVALID: %s:2:28: key "
                 "'sandbox.denyRead[0]': 'relative' must be an absolute path; use an absolute "
                 "path without '..', e.g. \"/home/me/project\"\n", tmptree_at(root, "bad.json"));
        assert_fatal(&R, want);
        RUN(&R, "run", "--settings", "../missing.json", "--", "true");
        assert_int_equal(R.status, 125);
        assert_non_null(strstr(R.err, "cannot open the settings file"));
}

static void test_explain(void **state) {
        tmptree_write(root, "home/.config/cordon/settings.json",
                    "{\"sandbox\": {\"denyWrite\": [\"/var/tmp/dw\"]}}", 0644);
        RUN(&R, "policy", "show", "--explain");
        assert_int_equal(R.status, 0);
        char want[PATH_MAX + 128];
        snprintf(want, sizeof(want), "  denyWrite                /var/tmp/dw                "
                 "           user settings %s:1:14 (sandbox.denyWrite)\n",
                 tmptree_at(root, "home/.config/cordon/settings.json"));
        assert_non_null(strstr(R.out, want));
        assert_non_null(strstr(R.out, "  mode                     workspace-write"));
        RUN(&R, "policy", "show", "--explain", "--json");
        assert_int_equal(R.status, 0);
        json_t *j = json_loads(R.out, 0, NULL);
        assert_non_null(j);
        assert_true(json_is_array(json_object_get(j, "sources")));
        assert_true(json_is_object(json_object_get(j, "policy")));
        json_decref(j);
        RUN(&R, "policy", "show", "--explain", "--seatbelt");
        assert_int_equal(R.status, 125);
}

static void test_import(void **state) {
        tmptree_write(root, "srt.json",
                    "{\"filesystem\": {\"denyRead\": [\"~/.ssh\"], \"allowWrite\": [\".\"], "
                    "\"denyWrite\": []},\n"
                    " \"network\": {\"allowedDomains\": [\"github.com\"], \"deniedDomains\": [], "
                    "\"allowLocalBinding\": true},\n"
                    " \"cordon\": {\"bestEffort\": [\"network.allowLocalBinding\"]}}\n",
                    0644);
        RUN(&R, "settings", "import", "../srt.json");
        assert_int_equal(R.status, 0);
        char want[4 * PATH_MAX];
        snprintf(want, sizeof(want),
                 "{\n  \"sandbox\": {\n    \"bindMounts\": [\n      {\n        \"hostPath\": "
                 "\"%s\",\n        \"readOnly\": false\n      }\n    ],\n    \"denyRead\": [\n"
                 "      \"%s\"\n    ],\n    \"networkEnabled\": true,\n    \"egressAllowlist\": [\n"
                 "      \"github.com\"\n    ]\n  }\n}\n",
                 tmptree_at(root, "ws"), tmptree_at(root, "home/.ssh"));
        assert_string_equal(R.out, want);
        snprintf(want, sizeof(want),
                 "cordon: warning: %s:2:90: network.allowLocalBinding: left out: not honoured "
                 "(marked best-effort): the command has its own loopback: a server it starts is "
                 "not reachable from the host\n"
                 "cordon: warning: %s: relative paths and the workspace were resolved against %s: "
                 "the output is for that directory\n",
                 tmptree_at(root, "srt.json"), tmptree_at(root, "srt.json"), tmptree_at(root, "ws"));
        assert_string_equal(R.err, want);

        tmptree_write(root, "srt.json", "{\"network\": {\"allowedDomains\": [\"*.com\"]}}", 0644);
        RUN(&R, "settings", "import", "../srt.json");
        snprintf(want, sizeof(want), "cordon: fatal: POLICY_INVALID: %s:1:33: key "
                 "'network.allowedDomains[0]': '*.com' is too broad: '*.' needs at least two "
                 "labels after it (\"*.example.com\"); write \"example.com\", \"*.example.com\" or "
                 "\"example.com:443\"\n", tmptree_at(root, "srt.json"));
        assert_fatal(&R, want);
        RUN(&R, "settings", "import");
        assert_fatal(&R, "cordon: fatal: USAGE: 'cordon settings import' needs a FILE (see "
                         "'cordon help settings')\n");
        RUN(&R, "settings", "export", "x");
        assert_fatal(&R, "cordon: fatal: USAGE: unknown settings subcommand 'export'; the "
                         "subcommands are import, trust, untrust and trusted (see 'cordon help "
                         "settings')\n");
}

/* --upstream-proxy: the password never reaches any output of policy show (text, --json,
 * --explain) nor an error; settings import writes it whole (a conversion the user asked for). */
static void test_upstream_proxy(void **state) {
        static const char url[] = "http://alice:s3cr3t@proxy.example:3128";
        const char *const shows[][4] = { { "--json", NULL }, { "--explain", NULL },
                                         { "--explain", "--json" }, { NULL } };
        for (size_t i = 0; i < sizeof(shows) / sizeof(shows[0]); i++) {
                if (shows[i][0] && shows[i][1])
                        RUN(&R, "policy", "show", "--upstream-proxy", url, shows[i][0],
                            shows[i][1]);
                else if (shows[i][0])
                        RUN(&R, "policy", "show", "--upstream-proxy", url, shows[i][0]);
                else
                        RUN(&R, "policy", "show", "--upstream-proxy", url);
                assert_int_equal(R.status, 0);
                assert_null(strstr(R.out, "s3cr3t"));
                assert_null(strstr(R.err, "s3cr3t"));
                assert_non_null(strstr(R.out, "http://alice:****@proxy.example:3128"));
        }
        RUN(&R, "run", "--upstream-proxy", "http://alice:s3cr3t@proxy.example", "--", "true");
        assert_fatal(&R, "cordon: fatal: POLICY_INVALID: --upstream-proxy: the value has no port "
                         "(write host:PORT, e.g. http://proxy.example:3128); use "
                         "http://[user:password@]host:port or "
                         "socks5://[user:password@]host:port\n");
        tmptree_write(root, "up.json",
                      "{\"sandbox\": {\"egressUpstream\": \"socks5h://alice:s3cr3t@gw:1080\"}}",
                      0644);
        RUN(&R, "settings", "import", "../up.json");
        assert_int_equal(R.status, 0);
        assert_non_null(strstr(R.out, "\"egressUpstream\": \"socks5://alice:s3cr3t@gw:1080\""));
}

static void test_mandate_in_run(void **state) {
        tmptree_write(root, "managed.json", "{\"allowUnsandboxedCommands\": false}", 0644);
        tmptree_write(root, "ws/.cordon/settings.json",
                    "{\"sandbox\": {\"egressAllowlist\": [\"x.example.com\"]}}", 0644);
        RUN(&R, "run", "--", "true");
        char want[2 * PATH_MAX + 256];
        snprintf(want, sizeof(want), "cordon: warning: project settings %s:1:14: "
                 "sandbox.egressAllowlist 'x.example.com': adds an allowed domain; ignored because "
                 "managed settings (%s) forbid unsandboxed commands\n",
                 tmptree_at(root, "ws/.cordon/settings.json"), tmptree_at(root, "managed.json"));
        assert_string_equal(R.err, want);
        assert_int_equal(R.status, 0);

        RUN(&R, "run", "--sandbox", "off", "--", "true");
        assert_int_equal(R.status, 125);
        snprintf(want, sizeof(want), "cordon: fatal: POLICY_INVALID: --sandbox off: unsandboxed "
                 "commands are forbidden by managed settings %s:1:2 (allowUnsandboxedCommands: "
                 "false); run the command sandboxed\n", tmptree_at(root, "managed.json"));
        assert_non_null(strstr(R.err, want));
}

static void test_excluded_command(void **state) {
        char outside[PATH_MAX], outside2[PATH_MAX], json[2 * PATH_MAX];
        snprintf(outside, sizeof(outside), "%s/outside", root);
        snprintf(outside2, sizeof(outside2), "%s/outside2", root);
        snprintf(json, sizeof(json), "{\"excludedCommands\": [\"touch %s\"]}", outside);
        tmptree_write(root, "home/.config/cordon/settings.json", json, 0644);

        /* The whole line matches: it runs outside the sandbox, and cordon says so, once. */
        RUN(&R, "run", "touch", outside);
        assert_int_equal(R.status, 0);
        char want[3 * PATH_MAX];
        snprintf(want, sizeof(want), "cordon: warning: the command runs UNPROTECTED (no sandbox): "
                 "excludedCommands entry 'touch %s' in user settings %s:1:23\n", outside,
                 tmptree_at(root, "home/.config/cordon/settings.json"));
        assert_string_equal(R.err, want);
        assert_int_equal(access(outside, F_OK), 0);

        /* A shell around it, or another argument: sandboxed, and the write outside refused. */
        char line[PATH_MAX + 16];
        snprintf(line, sizeof(line), "touch %s", outside2);
        RUN(&R, "run", "--", "sh", "-c", line);
        assert_int_not_equal(R.status, 0);
        assert_null(strstr(R.err, "UNPROTECTED"));
        assert_int_equal(access(outside2, F_OK), -1);
        RUN(&R, "run", "--", "touch", outside, outside2);
        assert_int_not_equal(R.status, 0);
        assert_null(strstr(R.err, "UNPROTECTED"));
        assert_int_equal(access(outside2, F_OK), -1);
}

/* A sandboxed command cannot write the next run's settings (a configuration-based escape). */
static void test_project_settings_protected(void **state) {
        RUN(&R, "run", "--", "sh", "-c", "mkdir -p .cordon && echo '{}' > .cordon/settings.json");
        assert_int_not_equal(R.status, 0);
        assert_int_equal(access(tmptree_at(root, "ws/.cordon/settings.json"), F_OK), -1);
        tmptree_write(root, "ws/.cordon/settings.json", "{}", 0644);
        RUN(&R, "run", "--", "sh", "-c", "echo '{\"sandbox\": {}}' > .cordon/settings.json");
        assert_int_not_equal(R.status, 0);
        RUN(&R, "run", "--", "sh", "-c", "mv .cordon .cordon-old");
        assert_int_not_equal(R.status, 0);
        assert_int_equal(access(tmptree_at(root, "ws/.cordon/settings.json"), F_OK), 0);
        /* The rest of the workspace stays writable. */
        RUN(&R, "run", "--", "sh", "-c", "echo ok > file");
        assert_int_equal(R.status, 0);
}

/* cordon settings trust / trusted / untrust, and the warning that names the step. */
static void test_trust_commands(void **state) {
        RUN(&R, "settings", "trust");
        assert_int_equal(R.status, 125);
        assert_non_null(strstr(R.err, "cordon: fatal: USAGE: no project settings file for"));
        const char *file = tmptree_at(root, "ws/.cordon/settings.json");
        char path[PATH_MAX];
        snprintf(path, sizeof(path), "%s", file);
        tmptree_write(root, "ws/.cordon/settings.json",
                    "{\"sandbox\": {\"egressAllowlist\": [\"x.example.com\"]}}", 0644);
        RUN(&R, "policy", "show", "--json");
        assert_int_equal(R.status, 0);
        char want[2 * PATH_MAX + 256];
        snprintf(want, sizeof(want), "cordon: warning: project settings %s:1:14: "
                 "sandbox.egressAllowlist 'x.example.com': adds an allowed domain; ignored because "
                 "the project settings are not trusted; to trust this exact content, run outside "
                 "the sandbox: cordon settings trust %s\n", path, path);
        assert_string_equal(R.err, want);
        assert_null(strstr(R.out, "x.example.com"));

        RUN(&R, "settings", "trust");
        assert_int_equal(R.status, 0);
        assert_non_null(strstr(R.out, "  sandbox.egressAllowlist 'x.example.com' (line 1, column "
                                      "14): adds an allowed domain\n"));
        RUN(&R, "policy", "show", "--json");
        assert_string_equal(R.err, "");
        assert_non_null(strstr(R.out, "x.example.com"));
        RUN(&R, "settings", "trusted");
        assert_int_equal(R.status, 0);
        assert_true(strncmp(R.out, "trusted  ", 9) == 0);
        assert_non_null(strstr(R.out, path));
        RUN(&R, "settings", "trusted", "--json");
        json_t *j = json_loads(R.out, 0, NULL);
        assert_non_null(j);
        assert_string_equal(json_string_value(json_object_get(json_array_get(j, 0), "state")),
                            "trusted");
        json_decref(j);

        /* From inside the sandbox the step fails and the store stays as it is. */
        struct stat before, after;
        assert_int_equal(stat(tmptree_at(root, "home/.config/cordon/trusted-projects.json"),
                              &before), 0);
        RUN(&R, "run", "--", cordon_path, "settings", "untrust");
        assert_int_not_equal(R.status, 0);
        assert_int_equal(stat(tmptree_at(root, "home/.config/cordon/trusted-projects.json"), &after),
                         0);
        assert_int_equal(before.st_ino, after.st_ino);
        assert_int_equal(before.st_mtime, after.st_mtime);

        RUN(&R, "settings", "untrust");
        assert_int_equal(R.status, 0);
        assert_non_null(strstr(R.out, "Untrusted"));
        RUN(&R, "settings", "untrust", path);
        assert_int_equal(R.status, 0);
        assert_non_null(strstr(R.out, "was not trusted"));
        RUN(&R, "settings", "trust", "../home");
        assert_int_equal(R.status, 125);

        /* A broken store is an error with its position. */
        tmptree_write(root, "home/.config/cordon/trusted-projects.json", "{\"trusted\": 1}", 0600);
        RUN(&R, "settings", "trusted");
        assert_int_equal(R.status, 125);
        assert_non_null(strstr(R.err, "trusted-projects.json:1:13: key 'trusted': expected an "
                                      "array"));
}

static void test_fail_if_unavailable(void **state) {
        /* Fail closed by default on a host without a sandbox... */
        RUN_RESTRICTED(&R, "run", "--", "true");
        assert_int_equal(R.status, 125);
        assert_non_null(strstr(R.err, "cordon: fatal: SANDBOX_UNAVAILABLE: refusing to run the "
                                      "command unconfined"));
        /* ...unless a settings file says failIfUnavailable: false, and then loudly. */
        tmptree_write(root, "home/.config/cordon/settings.json", "{\"failIfUnavailable\": false}",
                    0644);
        RUN_RESTRICTED(&R, "run", "--", "true");
        assert_int_equal(R.status, 0);
        char want[PATH_MAX + 256];
        snprintf(want, sizeof(want), "cordon: warning: the command runs UNPROTECTED (no sandbox): "
                 "no sandbox is available on this host and user settings %s:1:2 "
                 "(failIfUnavailable: false)\n",
                 tmptree_at(root, "home/.config/cordon/settings.json"));
        assert_string_equal(R.err, want);
        /* The same host with a sandbox runs confined: nothing said. */
        RUN(&R, "run", "--", "true");
        assert_int_equal(R.status, 0);
        assert_string_equal(R.err, "");
}

int main(int argc, char *argv[]) {
        if (argc < 2) {
                fprintf(stderr, "usage: %s PATH-TO-CORDON\n", argv[0]);
                return 2;
        }
        /* Absolute: each run starts in another directory. */
        cordon_path = realpath(argv[1], NULL);
        if (!cordon_path)
                return 2;
        umask(022);
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_settings_flag, setup, teardown),
                cmocka_unit_test_setup_teardown(test_explain, setup, teardown),
                cmocka_unit_test_setup_teardown(test_import, setup, teardown),
                cmocka_unit_test_setup_teardown(test_upstream_proxy, setup, teardown),
                cmocka_unit_test_setup_teardown(test_mandate_in_run, setup, teardown),
                cmocka_unit_test_setup_teardown(test_excluded_command, setup, teardown),
                cmocka_unit_test_setup_teardown(test_project_settings_protected, setup, teardown),
                cmocka_unit_test_setup_teardown(test_trust_commands, setup, teardown),
                cmocka_unit_test_setup_teardown(test_fail_if_unavailable, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
