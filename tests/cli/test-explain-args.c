/* SPDX-License-Identifier: Apache-2.0 */
/* The command-line options this area adds (src/cli/args.c): run --json=DEST, --quiet,
 * --capture, and `cordon explain`'s --events, --status, --stderr, --json; each accepted form and
 * each refused one, with the exact message. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "cli/args.h"

#define CWD "/home/u/proj"

static int parse_list(cli_args *a, cordon_error *err, const char *const *list) {
        char *argv[32] = { (char *) "cordon" };
        int argc = 1;
        for (; list[argc - 1]; argc++)
                argv[argc] = (char *) list[argc - 1];
        *err = (cordon_error) { 0 };
        return cli_args_parse(argc, argv, CWD, a, err);
}
#define PARSE(a, err, ...) parse_list((a), (err), (const char *const[]) { __VA_ARGS__, NULL })

static void expect_error(const char *const *list, cordon_code code, const char *message) {
        cli_args a;
        cordon_error err;
        assert_int_equal(parse_list(&a, &err, list), -EINVAL);
        assert_string_equal(cordon_code_name(err.code), cordon_code_name(code));
        assert_string_equal(err.message, message);
        assert_null(a.argv);
        assert_int_equal(a.json_fd, -1);
}
#define EXPECT_ERROR(code, message, ...)                                                          \
        expect_error((const char *const[]) { __VA_ARGS__, NULL }, (code), (message))

static void test_run_report_options(void **state) {
        cli_args a;
        cordon_error err;
        assert_int_equal(PARSE(&a, &err, "run", "--json=out/s.json", "--quiet", "--", "true"), 0);
        assert_string_equal(a.json_path, CWD "/out/s.json");
        assert_int_equal(a.json_fd, -1);
        assert_true(a.quiet);
        assert_false(a.capture);
        assert_string_equal(a.argv[0], "true");
        cli_args_done(&a);
        assert_null(a.json_path);
        assert_int_equal(a.json_fd, -1);
        assert_int_equal(PARSE(&a, &err, "run", "--events", "fd:3", "--capture", "--json=fd:4",
                               "true"), 0);
        assert_int_equal(a.json_fd, 4);
        assert_int_equal(a.events_fd, 3);
        assert_true(a.capture);
        cli_args_done(&a);
        /* The command's own --json stays the command's. */
        assert_int_equal(PARSE(&a, &err, "run", "jq", "--json"), 0);
        assert_int_equal(a.json_fd, -1);
        assert_null(a.json_path);
        assert_string_equal(a.argv[1], "--json");
        cli_args_done(&a);
}

static void test_run_report_refused(void **state) {
        EXPECT_ERROR(CORDON_USAGE, "--json needs a destination for run: --json=FILE or "
                     "--json=fd:N (N >= 3; fds 1 and 2 carry the command's own output) (see "
                     "'cordon run --help')", "run", "--json", "true");
        EXPECT_ERROR(CORDON_POLICY_INVALID, "--json: 'fd:2' is not a usable descriptor; use a "
                     "file path or fd:N with N >= 3 (fds 0-2 are the command's stdio)", "run",
                     "--json=fd:2", "true");
        EXPECT_ERROR(CORDON_POLICY_INVALID, "--json: empty value; use a file path or fd:N with "
                     "N >= 3 (fds 0-2 are the command's stdio)", "run", "--json=", "true");
        EXPECT_ERROR(CORDON_USAGE, "--json given twice; give it once (see 'cordon run --help')", "run",
                     "--json=a", "--json=b", "true");
        EXPECT_ERROR(CORDON_USAGE, "--capture needs --events FILE|fd:N: the captured output goes "
                     "into the events (see 'cordon run --help')", "run", "--capture", "true");
        EXPECT_ERROR(CORDON_USAGE, "--json and --events need different destinations (see "
                     "'cordon run --help')", "run", "--json=fd:3", "--events", "fd:3", "true");
        EXPECT_ERROR(CORDON_USAGE, "--json and --events need different destinations (see "
                     "'cordon run --help')", "run", "--json=e", "--events", CWD "/e", "true");
        EXPECT_ERROR(CORDON_USAGE, "option '--quiet' takes no value: write '--quiet' alone (see "
                     "'cordon run --help')",
                     "run", "--quiet=yes", "true");
        /* --quiet, --capture and --json=DEST are run's; --status and --stderr explain's. */
        EXPECT_ERROR(CORDON_USAGE, "option '--quiet' does not apply to this command (see 'cordon "
                     "probe --help')",
                     "probe", "--quiet");
        EXPECT_ERROR(CORDON_USAGE, "option '--status' does not apply to this command (see 'cordon "
                     "run --help')", "run",
                     "--status", "1", "true");
}

static void test_explain_options(void **state) {
        cli_args a;
        cordon_error err;
        assert_int_equal(PARSE(&a, &err, "explain", "--events", "ev.jsonl", "--status=125",
                               "--stderr", "/tmp/err", "--json"), 0);
        assert_int_equal(a.command, CLI_COMMAND_EXPLAIN);
        assert_string_equal(a.events_path, CWD "/ev.jsonl");
        assert_true(a.status_set);
        assert_int_equal(a.status, 125);
        assert_string_equal(a.stderr_path, "/tmp/err");
        assert_true(a.json);
        cli_args_done(&a);
        assert_null(a.stderr_path);
        assert_int_equal(PARSE(&a, &err, "explain", "--status", "0"), 0);
        assert_true(a.status_set);
        assert_int_equal(a.status, 0);
        cli_args_done(&a);
        assert_int_equal(PARSE(&a, &err, "explain", "--help"), 0);
        assert_int_equal(a.command, CLI_COMMAND_HELP);
        assert_int_equal(a.help_topic, CLI_COMMAND_EXPLAIN);
        cli_args_done(&a);
        assert_int_equal(PARSE(&a, &err, "help", "explain"), 0);
        assert_int_equal(a.help_topic, CLI_COMMAND_EXPLAIN);
        cli_args_done(&a);
}

static void test_explain_refused(void **state) {
        EXPECT_ERROR(CORDON_USAGE, "nothing to explain: give --events FILE, --status N or "
                     "--stderr FILE (see 'cordon explain --help')", "explain");
        EXPECT_ERROR(CORDON_USAGE, "--status: '256' is not an exit status 0-255 (see 'cordon "
                     "explain --help')", "explain", "--status", "256");
        EXPECT_ERROR(CORDON_USAGE, "--status: '-1' is not an exit status 0-255 (see 'cordon "
                     "explain --help')", "explain", "--status=-1");
        EXPECT_ERROR(CORDON_USAGE, "--stderr given twice; give it once (see 'cordon explain --help')",
                     "explain", "--stderr", "a", "--stderr", "b");
        EXPECT_ERROR(CORDON_USAGE, "unexpected argument 'events.jsonl' (see 'cordon explain "
                     "--help')", "explain", "events.jsonl");
        EXPECT_ERROR(CORDON_USAGE, "option '--writable' does not apply to this command (see "
                     "'cordon explain --help')",
                     "explain", "--writable", "/x");
        EXPECT_ERROR(CORDON_USAGE, "option '--status' needs a value: '--status VALUE' or "
                     "'--status=VALUE' (see 'cordon explain --help')", "explain", "--status");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_run_report_options),
                cmocka_unit_test(test_run_report_refused),
                cmocka_unit_test(test_explain_options),
                cmocka_unit_test(test_explain_refused),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
