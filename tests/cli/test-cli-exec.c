/* SPDX-License-Identifier: Apache-2.0 */
/* The cordon binary's contract (docs/design/errors.md, docs/cli.md): exit statuses, the single
 * fatal line, the single UNPROTECTED warning, nothing on stdout but the command's own output, and
 * the informational commands. argv[1] is the path of the cordon binary (meson passes it). */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "cordon/cordon.h"
#include "run-binary.h"

/* Every command, as the "no command given" and "unknown command" errors list them. */
#define COMMANDS                                                                                  \
        "run, exec, session launch|list|destroy, terminal, explain, policy show, settings "       \
        "import|trust|untrust|trusted, cache list|clear, secret set|list|rm, probe, mcp, "         \
        "completion, version and help"

static const char *cordon_path;

/* Runs cordon with the arguments, stdin from /dev/null. */
#define RUN(res, ...)                                                                             \
        run_binary((res), cordon_path, (const char *const[]) { __VA_ARGS__, NULL }, NULL, NULL)

static run_result R; /* big: static, one run at a time */

static void assert_fatal_prefix(const run_result *res, const char *prefix) {
        assert_int_equal(res->status, 125);
        assert_string_equal(res->out, "");
        assert_memory_equal(res->err, prefix, strlen(prefix));
        const char *nl = strchr(res->err, '\n');
        assert_non_null(nl);
        assert_int_equal(nl[1], '\0'); /* exactly one line */
}

static void test_usage_errors(void **state) {
        RUN(&R, "run");
        assert_fatal(&R, "cordon: fatal: USAGE: no command given: cordon run [OPTIONS] [--] CMD "
                         "[ARG...] (see 'cordon run --help')\n");
        RUN(&R, "run", "--bogus", "true");
        assert_fatal(&R, "cordon: fatal: USAGE: unknown option '--bogus' (see 'cordon run "
                         "--help')\n");
        RUN(&R, "run", "--writable");
        assert_fatal(&R, "cordon: fatal: USAGE: option '--writable' needs a value: '--writable "
                         "VALUE' or '--writable=VALUE' (see 'cordon run --help')\n");
        RUN(&R, "frobnicate");
        assert_fatal(&R, "cordon: fatal: USAGE: unknown command 'frobnicate'; the commands are "
                         COMMANDS " (see 'cordon help')\n");
        RUN(&R, "rnu", "true");
        assert_fatal(&R, "cordon: fatal: USAGE: unknown command 'rnu'; did you mean 'run'? (see "
                         "'cordon help')\n");
        run_binary(&R, cordon_path, (const char *const[]) { NULL }, NULL, NULL); /* no arguments */
        assert_fatal(&R, "cordon: fatal: USAGE: no command given; the commands are " COMMANDS
                         " (see 'cordon help')\n");
        RUN(&R, "run", "--memory", "12Q", "true");
        assert_fatal(&R, "cordon: fatal: POLICY_INVALID: --memory: invalid size '12Q'; use a "
                         "whole number of bytes with an optional unit K, M or G (e.g. 512M, "
                         "2G)\n");
}

/* Values that parse but that the policy setters refuse: the setter's own reason
 * (cordon_policy_last_error), after the flag, before its hint. */
static void test_setter_errors(void **state) {
        RUN(&R, "run", "--writable", "/a/../b", "true");
        assert_fatal_prefix(&R, "cordon: fatal: POLICY_INVALID: --writable: '/a/../b' must not "
                                "contain '..' components; ");
        RUN(&R, "run", "--env-set", "BAD NAME=secret-value", "true");
        assert_fatal_prefix(&R, "cordon: fatal: POLICY_INVALID: --env-set: 'BAD NAME' must match "
                                "[A-Za-z_][A-Za-z0-9_]*; ");
        assert_null(strstr(R.err, "secret-value")); /* a value is never echoed */
        RUN(&R, "run", "--deny-create-name", "a[b", "true");
        assert_fatal_prefix(&R, "cordon: fatal: POLICY_INVALID: --deny-create-name: 'a[b' has a "
                                "'[' without a ']'");
        RUN(&R, "run", "--resolve", "h.test=999.1.1.1", "true");
        assert_fatal_prefix(&R, "cordon: fatal: POLICY_INVALID: --resolve: '999.1.1.1' is not an "
                                "IPv4 address");
}

static void test_policy_files(void **state) {
        char dir[] = "/tmp/cordon-cli-XXXXXX";
        assert_non_null(mkdtemp(dir));
        char bad[PATH_MAX], ro[PATH_MAX];
        snprintf(bad, sizeof(bad), "%s/bad.json", dir);
        snprintf(ro, sizeof(ro), "%s/ro.json", dir);
        FILE *f = fopen(bad, "w");
        fputs("{\n  \"bogusKey\": 1\n}\n", f);
        fclose(f);
        f = fopen(ro, "w");
        fputs("{\"mode\": \"read-only\"}\n", f);
        fclose(f);

        char prefix[PATH_MAX + 64];
        snprintf(prefix, sizeof(prefix), "cordon: fatal: POLICY_INVALID: %s:2:", bad);
        RUN(&R, "run", "--policy", bad, "true");
        assert_fatal_prefix(&R, prefix);
        RUN(&R, "policy", "show", "--policy", "/nonexistent/p.json");
        assert_fatal_prefix(&R, "cordon: fatal: POLICY_INVALID: ");
        assert_non_null(strstr(R.err, "/nonexistent/p.json"));

        /* Files and flags apply in command-line order: the later one wins a scalar. */
        static const struct {
                const char *first[2], *second[2];
                const char *mode;
        } orders[] = {
                { { "--policy", NULL }, { "--mode", "chat" }, "workspace-write" },
                { { "--mode", "chat" }, { "--policy", NULL }, "read-only" },
        };
        for (size_t i = 0; i < 2; i++) {
                const char *a1 = orders[i].first[1] ? orders[i].first[1] : ro;
                const char *b1 = orders[i].second[1] ? orders[i].second[1] : ro;
                RUN(&R, "policy", "show", "--json", orders[i].first[0], a1, orders[i].second[0],
                    b1);
                assert_int_equal(R.status, 0);
                json_t *root = json_loads(R.out, 0, NULL);
                assert_non_null(root);
                json_t *mode = json_object_get(json_object_get(root, "policy"), "mode");
                assert_string_equal(json_string_value(mode), orders[i].mode);
                json_decref(root);
        }
        unlink(bad);
        unlink(ro);
        rmdir(dir);
}

static void test_unprotected_warning(void **state) {
        RUN(&R, "run", "--sandbox", "off", "--", "sh", "-c", "echo out; echo err >&2; exit 7");
        assert_int_equal(R.status, 7);
        assert_string_equal(R.out, "out\n");
        assert_string_equal(R.err, "cordon: warning: the command runs UNPROTECTED (no sandbox): "
                                   "--sandbox off\nerr\n");
        RUN(&R, "run", "--backend=none", "true");
        assert_int_equal(R.status, 0);
        assert_string_equal(R.err, "cordon: warning: the command runs UNPROTECTED (no sandbox): "
                                   "--backend none\n");
        RUN(&R, "run", "--mode", "danger-full-access", "true");
        assert_int_equal(R.status, 0);
        assert_string_equal(R.err, "cordon: warning: the command runs UNPROTECTED (no sandbox): "
                                   "mode danger-full-access\n");
        /* An explicit request for a sandbox next to danger-full-access runs nothing. */
        RUN(&R, "run", "--sandbox", "on", "--mode", "danger-full-access", "--", "sh", "-c",
            "echo ran");
        assert_fatal(&R, "cordon: fatal: POLICY_INVALID: --sandbox: 'on' contradicts mode "
                         "danger-full-access, which runs the command unconfined; drop --sandbox "
                         "on or choose another --mode\n");
        RUN(&R, "run", "--backend", "native", "--mode", "danger-full-access", "true");
        assert_fatal_prefix(&R, "cordon: fatal: POLICY_INVALID: --backend: 'native' contradicts");
}

static void test_exit_status_unconfined(void **state) {
        RUN(&R, "run", "--sandbox=off", "--", "sh", "-c", "kill -KILL $$");
        assert_int_equal(R.status, 128 + 9);
        RUN(&R, "run", "--sandbox=off", "--", "sh", "-c", "exit 125");
        assert_int_equal(R.status, 125);
        /* A command exiting 125 by itself prints no fatal line: only the warning. */
        assert_null(strstr(R.err, "cordon: fatal:"));
}

/* Through the real sandbox (the native backend must be usable: see `cordon probe`). */
static void test_exit_status_confined(void **state) {
        cordon_probe *p = NULL;
        assert_int_equal(cordon_probe_run(&p, NULL), 0);
        char *json = NULL;
        assert_int_equal(cordon_probe_to_json(p, &json, NULL), 0);
        cordon_probe_free(p);
        json_t *root = json_loads(json, 0, NULL);
        free(json);
        bool usable = json_is_string(json_object_get(root, "defaultBackend"));
        json_decref(root);
        if (!usable) {
                /* Fail closed: nothing runs, one fatal line. */
                RUN(&R, "run", "--", "sh", "-c", "echo ran");
                assert_fatal_prefix(&R, "cordon: fatal: SANDBOX_UNAVAILABLE: refusing to run the "
                                        "command unconfined");
                return;
        }
        RUN(&R, "run", "--", "sh", "-c", "echo hi; exit 7");
        assert_int_equal(R.status, 7);
        assert_string_equal(R.out, "hi\n");
        assert_string_equal(R.err, "");
        RUN(&R, "run", "--", "sh", "-c", "kill -TERM $$");
        assert_int_equal(R.status, 128 + 15);
        assert_string_equal(R.out, "");
        RUN(&R, "run", "--", "/nonexistent/command");
        assert_fatal_prefix(&R, "cordon: fatal: EXEC_FAILED: ");
}

static void test_informational(void **state) {
        RUN(&R, "version");
        assert_int_equal(R.status, 0);
        char want[64];
        snprintf(want, sizeof(want), "cordon %s\n", cordon_version());
        assert_string_equal(R.out, want);
        RUN(&R, "--version");
        assert_string_equal(R.out, want);

        RUN(&R, "run", "--help");
        assert_int_equal(R.status, 0);
        assert_string_equal(R.err, "");
        assert_memory_equal(R.out, "Usage: cordon run ", 18);
        RUN(&R, "--help");
        assert_int_equal(R.status, 0);
        assert_memory_equal(R.out, "Usage: cordon COMMAND", 21);

        RUN(&R, "probe", "--json");
        assert_int_equal(R.status, 0);
        json_t *root = json_loads(R.out, JSON_REJECT_DUPLICATES, NULL);
        assert_non_null(root);
        assert_int_equal(json_array_size(json_object_get(root, "backends")), 4);
        json_decref(root);
        RUN(&R, "probe");
        assert_int_equal(R.status, 0);
        assert_memory_equal(R.out, "BACKEND", 7);
        assert_non_null(strstr(R.out, "\nnative "));
}

static void test_policy_show(void **state) {
        char old[PATH_MAX], cwd[] = "/tmp/cordon-cli-XXXXXX";
        assert_non_null(getcwd(old, sizeof(old)));
        assert_non_null(mkdtemp(cwd));
        assert_int_equal(chdir(cwd), 0);
        assert_int_equal(mkdir("rel-dir", 0755), 0); /* a read-only bind must exist */
        char want[PATH_MAX + 16];
        snprintf(want, sizeof(want), "\"%s/rel-dir\"", cwd);
        RUN(&R, "policy", "show", "--json", "--read-only", "rel-dir", "--no-network");
        assert_int_equal(R.status, 0);
        json_t *root = json_loads(R.out, 0, NULL);
        assert_non_null(root);
        assert_non_null(json_object_get(root, "plan"));
        json_decref(root);
        assert_non_null(strstr(R.out, want)); /* made absolute against the cwd */

        RUN(&R, "policy", "show", "--read-only", "rel-dir");
        assert_int_equal(R.status, 0);
        assert_string_equal(R.err, "");
        assert_memory_equal(R.out, "policy:\n", 8);
        assert_non_null(strstr(R.out, "\nplan:\n"));
        snprintf(want, sizeof(want), " %s/rel-dir\n", cwd);
        assert_non_null(strstr(R.out, want));
        assert_int_equal(rmdir("rel-dir"), 0);
        assert_int_equal(chdir(old), 0);
        assert_int_equal(rmdir(cwd), 0);
}

int main(int argc, char *argv[]) {
        if (argc != 2) {
                fprintf(stderr, "usage: %s PATH-TO-CORDON\n", argv[0]);
                return 2;
        }
        cordon_path = realpath(argv[1], NULL); /* tests change directory */
        if (!cordon_path) {
                perror(argv[1]);
                return 2;
        }
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_usage_errors),
                cmocka_unit_test(test_setter_errors),
                cmocka_unit_test(test_policy_files),
                cmocka_unit_test(test_unprotected_warning),
                cmocka_unit_test(test_exit_status_unconfined),
                cmocka_unit_test(test_exit_status_confined),
                cmocka_unit_test(test_informational),
                cmocka_unit_test(test_policy_show),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
