/* SPDX-License-Identifier: Apache-2.0 */
/* The option table `cordon completion` is generated from (cli_command_options, src/cli/args.c):
 * the parser takes every option it lists for each command, with a value of the kind it says,
 * and the --mode, --backend and --sandbox values the scripts offer (src/cli/completion.c). A
 * completion that offered an option the parser refuses would teach a wrong command line; the
 * other direction, every option of --help offered, is tests/install/completion.sh. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "cli/args.h"
#include "cli/completion.h"

#define CWD "/home/u/proj"
#define MAX_OPTIONS 64 /* completion.c's bound */

typedef struct command_case {
        cli_command command;
        const char *before[3]; /* the command's words, NULL-terminated */
        const char *after[3];  /* what must follow the option for the line to parse */
} command_case;

static const command_case cases[] = {
        { CLI_COMMAND_RUN, { "run" }, { "true" } },
        { CLI_COMMAND_EXPLAIN, { "explain" }, { "--stderr", "/tmp/err" } },
        { CLI_COMMAND_PROBE, { "probe" }, { NULL } },
        { CLI_COMMAND_POLICY_SHOW, { "policy", "show" }, { NULL } },
        { CLI_COMMAND_SETTINGS_IMPORT, { "settings", "import" }, { NULL } },
        { CLI_COMMAND_SETTINGS_TRUSTED, { "settings", "trusted" }, { NULL } },
        { CLI_COMMAND_SESSION_LAUNCH, { "session", "launch" }, { NULL } },
        { CLI_COMMAND_SESSION_LIST, { "session", "list" }, { NULL } },
        { CLI_COMMAND_SESSION_DESTROY, { "session", "destroy" }, { "S1" } },
        { CLI_COMMAND_EXEC, { "exec", "S1" }, { "true" } },
        { CLI_COMMAND_TERMINAL, { "terminal" }, { "S1" } },
};

/* A value the parser takes for `name` (the kinds say what to complete, not what is valid). */
static const char *sample_value(const cli_option *o) {
        static const struct {
                const char *name, *value;
        } samples[] = {
                { "--env-set", "A=b" },     { "--resolve", "dev.test=127.0.0.1" },
                { "--env", "A=b" },         { "--timeout", "30s" },
                { "--memory", "512M" },     { "--pids", "5" }, { "--cpus", "2" },
                { "--cpu", "5" },           { "--status", "0" },
                { "--events", "/tmp/ev" },  { "--json", "/tmp/summary" },
                { "--mode", "read-only" },  { "--backend", "native" },
                { "--sandbox", "on" },      { "--deny-create-name", "*.pem" },
                { "--allow-domain", "example.com" }, { "--deny-domain", "example.com" },
                { "--env-pass", "HOME" },   { "--env-scrub", "*_TOKEN" },
                { "--session-id", "s" },    { "--allow-create-name", "*.test.pem" },
                { "--allow-create-path", "/tmp/x/server.pem" },
                { "--tmp-size", "64M" },    { "--shm-size", "64M" },
                { "--upstream-proxy", "http://proxy.example:3128" },
                { "--ask-timeout", "500ms" },
                { "--microvm-accel", "tcg" },
        };
        for (size_t i = 0; i < sizeof(samples) / sizeof(samples[0]); i++)
                if (strcmp(samples[i].name, o->name) == 0)
                        return samples[i].value;
        return o->value == CLI_VALUE_PATH ? "/tmp/x" : NULL;
}

static int parse_words(const char *const *words, size_t n, cordon_error *err) {
        char *argv[16] = { (char *) "cordon" };
        assert_true(n < 15);
        for (size_t i = 0; i < n; i++)
                argv[i + 1] = (char *) words[i];
        cli_args a;
        int r = cli_args_parse((int) n + 1, argv, CWD, &a, err);
        cli_args_done(&a);
        return r;
}

/* cordon WORDS OPTION [VALUE] AFTER... parses (an --help stops parsing, which is success). */
static void check_option(const command_case *c, const cli_option *o) {
        const char *words[16];
        size_t n = 0;
        char joined[128];
        for (size_t i = 0; i < 3 && c->before[i]; i++)
                words[n++] = c->before[i];
        const char *value = o->value == CLI_VALUE_NONE ? NULL : sample_value(o);
        if (o->value != CLI_VALUE_NONE && !value)
                fail_msg("%s: no sample value in this test for a new option", o->name);
        if (o->inline_only) {
                (void) snprintf(joined, sizeof(joined), "%s=%s", o->name, value);
                words[n++] = joined;
        } else {
                words[n++] = o->name;
                if (value)
                        words[n++] = value;
        }
        /* --capture needs --events */
        if (strcmp(o->name, "--capture") == 0) {
                words[n++] = "--events";
                words[n++] = "/tmp/ev";
        }
        bool is_stderr = strcmp(o->name, "--stderr") == 0;
        for (size_t i = 0; i < 3 && c->after[i] && !(is_stderr && i < 2); i++)
                words[n++] = c->after[i];
        if (c->command == CLI_COMMAND_SETTINGS_IMPORT && strcmp(o->name, "--help") != 0 &&
            strcmp(o->name, "-h") != 0)
                fail_msg("settings import offers %s, which only --help may be", o->name);
        cordon_error err = { 0 };
        int r = parse_words(words, n, &err);
        if (r < 0)
                fail_msg("cordon %s %s: %s", c->before[0], o->name, err.message);
}

static void test_every_offered_option_parses(void **state) {
        (void) state;
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                cli_option opts[MAX_OPTIONS];
                size_t n = cli_command_options(cases[i].command, opts, MAX_OPTIONS);
                assert_true(n < MAX_OPTIONS);
                assert_true(n >= 2); /* -h and --help at least */
                for (size_t k = 0; k < n; k++)
                        check_option(&cases[i], &opts[k]);
        }
}

/* An option the parser does not take for a command is not listed for it. */
static void test_options_are_per_command(void **state) {
        (void) state;
        cli_option opts[MAX_OPTIONS];
        size_t n = cli_command_options(CLI_COMMAND_PROBE, opts, MAX_OPTIONS);
        for (size_t k = 0; k < n; k++)
                assert_string_not_equal(opts[k].name, "--writable");
        n = cli_command_options(CLI_COMMAND_SESSION_LAUNCH, opts, MAX_OPTIONS);
        for (size_t k = 0; k < n; k++)
                assert_string_not_equal(opts[k].name, "--settings"); /* refused there */
        const char *const settings_launch[] = { "session", "launch", "--settings", "/tmp/s" };
        cordon_error err = { 0 };
        assert_int_equal(parse_words(settings_launch, 4, &err), -EINVAL);
        assert_int_equal(cli_command_options(CLI_COMMAND_VERSION, opts, MAX_OPTIONS), 0);
        assert_int_equal(cli_command_options(CLI_COMMAND_HELP, opts, MAX_OPTIONS), 0);
        /* a short buffer still gets the count */
        assert_true(cli_command_options(CLI_COMMAND_RUN, opts, 1) > 1);
}

static void check_values(const char *option, const char *list) {
        char buf[256];
        (void) snprintf(buf, sizeof(buf), "%s", list);
        size_t count = 0;
        for (char *save = NULL, *v = strtok_r(buf, " ", &save); v; v = strtok_r(NULL, " ", &save)) {
                const char *const words[] = { "policy", "show", option, v };
                cordon_error err = { 0 };
                if (parse_words(words, 4, &err) < 0)
                        fail_msg("%s %s: %s", option, v, err.message);
                count++;
        }
        assert_true(count >= 2);
}

static void test_offered_values_parse(void **state) {
        (void) state;
        check_values("--mode", cli_completion_modes);
        check_values("--backend", cli_completion_backends);
        check_values("--sandbox", cli_completion_on_off);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_every_offered_option_parses),
                cmocka_unit_test(test_options_are_per_command),
                cmocka_unit_test(test_offered_values_parse),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
