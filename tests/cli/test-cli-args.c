/* SPDX-License-Identifier: Apache-2.0 */
/* The argument parser (src/cli/args.c), exhaustively: every flag in both spellings, repeats,
 * "--", missing values, unknown options, path absolutisation, and the exact error lines. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "cli/args.h"

/* Every command, as the "no command given" and "unknown command" errors list them. */
#define COMMANDS                                                                                  \
        "run, exec, session launch|list|destroy, terminal, explain, policy show, settings "       \
        "import|trust|untrust|trusted, cache list|clear, secret set|list|rm, probe, mcp, "         \
        "completion, version and help"

#define CWD "/home/u/proj"
#define MAX_ARGS 32

/* Parses a NULL-terminated list after "cordon"; returns the parser's result. */
static int parse_list(cli_args *a, cordon_error *err, const char *const *list) {
        char *argv[MAX_ARGS] = { (char *) "cordon" };
        int argc = 1;
        for (; list[argc - 1]; argc++) {
                assert_true(argc < MAX_ARGS - 1);
                argv[argc] = (char *) list[argc - 1];
        }
        argv[argc] = NULL;
        *err = (cordon_error) { 0 };
        return cli_args_parse(argc, argv, CWD, a, err);
}
#define PARSE(a, err, ...) parse_list((a), (err), (const char *const[]) { __VA_ARGS__, NULL })

/* Asserts failure with exactly `code` and `message`, and that nothing was left allocated. */
static void expect_error(const char *const *list, cordon_code code, const char *message) {
        cli_args a;
        cordon_error err;
        int r = parse_list(&a, &err, list);
        assert_int_equal(r, -EINVAL);
        assert_string_equal(cordon_code_name(err.code), cordon_code_name(code));
        assert_string_equal(err.message, message);
        assert_null(a.settings);
        assert_null(a.argv);
        assert_int_equal(a.n_settings, 0);
}
#define EXPECT_ERROR(code, message, ...)                                                          \
        expect_error((const char *const[]) { __VA_ARGS__, NULL }, (code), (message))

/* ---- Every flag, in both spellings ---------------------------------------------------------- */

typedef struct flag_case {
        const char *name;
        const char *value;
        cli_flag flag;
        const char *text;  /* expected text, or NULL */
        const char *text2; /* expected text2, or NULL */
        uint64_t number;
        int mode; /* expected mode, -1 = not checked */
} flag_case;

static const flag_case flag_cases[] = {
        { "--policy", "p.json", CLI_FLAG_POLICY, CWD "/p.json", NULL, 0, -1 },
        { "--mode", "chat", CLI_FLAG_MODE, NULL, NULL, 0, CORDON_MODE_WORKSPACE_WRITE },
        { "--mode", "review", CLI_FLAG_MODE, NULL, NULL, 0, CORDON_MODE_READ_ONLY },
        { "--mode", "danger-full-access", CLI_FLAG_MODE, NULL, NULL, 0,
          CORDON_MODE_DANGER_FULL_ACCESS },
        { "--writable", "/srv/data", CLI_FLAG_WRITABLE, "/srv/data", NULL, 0, -1 },
        { "--read-only", "ref", CLI_FLAG_READ_ONLY, CWD "/ref", NULL, 0, -1 },
        { "--protect", "/srv/orig", CLI_FLAG_PROTECT, "/srv/orig", NULL, 0, -1 },
        { "--runner-state-dir", "state", CLI_FLAG_RUNNER_STATE_DIR, CWD "/state", NULL, 0, -1 },
        { "--deny-read", "/etc/shadow", CLI_FLAG_DENY_READ, "/etc/shadow", NULL, 0, -1 },
        { "--deny-write", "secrets", CLI_FLAG_DENY_WRITE, CWD "/secrets", NULL, 0, -1 },
        { "--deny-create-name", "*.p12", CLI_FLAG_DENY_CREATE_NAME, "*.p12", NULL, 0, -1 },
        { "--env-pass", "GITHUB_TOKEN", CLI_FLAG_ENV_PASS, "GITHUB_TOKEN", NULL, 0, -1 },
        { "--env-set", "LANG=C.UTF-8", CLI_FLAG_ENV_SET, "LANG", "C.UTF-8", 0, -1 },
        { "--env-set", "A=b=c", CLI_FLAG_ENV_SET, "A", "b=c", 0, -1 },
        { "--env-set", "EMPTY=", CLI_FLAG_ENV_SET, "EMPTY", "", 0, -1 },
        { "--env-scrub", "*_KEY", CLI_FLAG_ENV_SCRUB, "*_KEY", NULL, 0, -1 },
        { "--workdir", "sub/dir", CLI_FLAG_WORKDIR, CWD "/sub/dir", NULL, 0, -1 },
        { "--session-id", "s-42", CLI_FLAG_SESSION_ID, "s-42", NULL, 0, -1 },
        { "--timeout", "30", CLI_FLAG_TIMEOUT, "30", NULL, 30000, -1 },
        { "--timeout", "500ms", CLI_FLAG_TIMEOUT, "500ms", NULL, 500, -1 },
        { "--timeout", "2m", CLI_FLAG_TIMEOUT, "2m", NULL, 120000, -1 },
        { "--timeout", "1h", CLI_FLAG_TIMEOUT, "1h", NULL, 3600000, -1 },
        { "--memory", "512M", CLI_FLAG_MEMORY, "512M", NULL, 512ULL << 20, -1 },
        { "--memory", "2G", CLI_FLAG_MEMORY, "2G", NULL, 2ULL << 30, -1 },
        { "--memory", "4096", CLI_FLAG_MEMORY, "4096", NULL, 4096, -1 },
        { "--tmp-size", "512M", CLI_FLAG_TMP_SIZE, "512M", NULL, 512ULL << 20, -1 },
        { "--shm-size", "64M", CLI_FLAG_SHM_SIZE, "64M", NULL, 64ULL << 20, -1 },
        { "--pids", "256", CLI_FLAG_PIDS, "256", NULL, 256, -1 },
        { "--cpu", "600", CLI_FLAG_CPU, "600", NULL, 600, -1 },
        { "--cpus", "2", CLI_FLAG_CPUS, "2", NULL, 2, -1 },
        /* Checked by the setter (cordon_policy_set_egress_upstream), as every policy value. */
        { "--upstream-proxy", "socks5://u:p@gw:1080", CLI_FLAG_UPSTREAM_PROXY,
          "socks5://u:p@gw:1080", NULL, 0, -1 },
        { "--allow-read", "/home/me/ref", CLI_FLAG_ALLOW_READ, "/home/me/ref", NULL, 0, -1 },
        { "--ask-timeout", "500ms", CLI_FLAG_ASK_TIMEOUT, "500ms", NULL, 500, -1 },
};

static void check_setting(const cli_args *a, const flag_case *c) {
        assert_int_equal(a->n_settings, 1);
        const cli_setting *s = &a->settings[0];
        assert_int_equal(s->flag, c->flag);
        assert_string_equal(cli_flag_name(s->flag), c->name);
        if (c->text)
                assert_string_equal(s->text, c->text);
        if (c->text2)
                assert_string_equal(s->text2, c->text2);
        assert_int_equal(s->number, c->number);
        if (c->mode >= 0)
                assert_int_equal(s->mode, c->mode);
}

static void test_every_flag_both_forms(void **state) {
        for (size_t i = 0; i < sizeof(flag_cases) / sizeof(flag_cases[0]); i++) {
                const flag_case *c = &flag_cases[i];
                cli_args a;
                cordon_error err;
                /* --opt value */
                assert_int_equal(PARSE(&a, &err, "run", c->name, c->value, "true"), 0);
                assert_int_equal(a.command, CLI_COMMAND_RUN);
                check_setting(&a, c);
                assert_string_equal(a.argv[0], "true");
                assert_null(a.argv[1]);
                cli_args_done(&a);
                /* --opt=value */
                char joined[256];
                snprintf(joined, sizeof(joined), "%s=%s", c->name, c->value);
                assert_int_equal(PARSE(&a, &err, "run", joined, "true"), 0);
                check_setting(&a, c);
                cli_args_done(&a);
                /* and under policy show */
                assert_int_equal(PARSE(&a, &err, "policy", "show", c->name, c->value), 0);
                assert_int_equal(a.command, CLI_COMMAND_POLICY_SHOW);
                check_setting(&a, c);
                assert_null(a.argv);
                cli_args_done(&a);
        }
}

static void test_no_network(void **state) {
        cli_args a;
        cordon_error err;
        assert_int_equal(PARSE(&a, &err, "run", "--no-network", "true"), 0);
        assert_int_equal(a.n_settings, 1);
        assert_int_equal(a.settings[0].flag, CLI_FLAG_NO_NETWORK);
        assert_null(a.settings[0].text);
        cli_args_done(&a);
        EXPECT_ERROR(CORDON_USAGE,
                     "option '--no-network' takes no value: write '--no-network' alone (see 'cordon run --help')", "run",
                     "--no-network=yes", "true");
        assert_int_equal(PARSE(&a, &err, "run", "--block-reads-outside-workdirs", "true"), 0);
        assert_int_equal(a.n_settings, 1);
        assert_int_equal(a.settings[0].flag, CLI_FLAG_BLOCK_READS);
        assert_null(a.settings[0].text);
        cli_args_done(&a);
        EXPECT_ERROR(CORDON_USAGE,
                     "option '--block-reads-outside-workdirs' takes no value: write "
                     "'--block-reads-outside-workdirs' alone (see 'cordon run --help')",
                     "run", "--block-reads-outside-workdirs=1", "true");
        assert_int_equal(PARSE(&a, &err, "run", "--egress-ask", "true"), 0);
        assert_int_equal(a.n_settings, 1);
        assert_int_equal(a.settings[0].flag, CLI_FLAG_EGRESS_ASK);
        cli_args_done(&a);
        EXPECT_ERROR(CORDON_USAGE,
                     "option '--egress-ask' takes no value: write '--egress-ask' alone (see 'cordon run --help')", "run",
                     "--egress-ask=yes", "true");
}

static void test_sandbox_and_backend(void **state) {
        cli_args a;
        cordon_error err;
        assert_int_equal(PARSE(&a, &err, "run", "--sandbox", "off", "true"), 0);
        assert_true(a.sandbox_set);
        assert_false(a.sandbox);
        assert_int_equal(a.n_settings, 0);
        cli_args_done(&a);
        assert_int_equal(PARSE(&a, &err, "run", "--sandbox=on", "--backend=native", "true"), 0);
        assert_true(a.sandbox_set && a.sandbox);
        assert_true(a.backend_set);
        assert_int_equal(a.backend, CORDON_BACKEND_NATIVE);
        cli_args_done(&a);
        static const struct {
                const char *name;
                cordon_backend b;
        } names[] = {
                { "auto", CORDON_BACKEND_AUTO },         { "native", CORDON_BACKEND_NATIVE },
                { "landlock", CORDON_BACKEND_LANDLOCK }, { "microvm", CORDON_BACKEND_MICROVM },
                { "none", CORDON_BACKEND_NONE },         { "docker", CORDON_BACKEND_NATIVE },
        };
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
                assert_int_equal(PARSE(&a, &err, "run", "--backend", names[i].name, "x"), 0);
                assert_int_equal(a.backend, names[i].b);
                cli_args_done(&a);
        }
        /* Without a flag the backend is auto and the sandbox is not mentioned. */
        assert_int_equal(PARSE(&a, &err, "run", "x"), 0);
        assert_false(a.backend_set || a.sandbox_set);
        assert_int_equal(a.backend, CORDON_BACKEND_AUTO);
        cli_args_done(&a);
}

static void test_conflicts(void **state) {
        EXPECT_ERROR(CORDON_USAGE,
                     "--sandbox off conflicts with --backend native (see 'cordon run --help')",
                     "run", "--sandbox", "off", "--backend", "native", "true");
        EXPECT_ERROR(CORDON_USAGE,
                     "--sandbox on conflicts with --backend none (see 'cordon run --help')",
                     "run", "--backend", "none", "--sandbox", "on", "true");
        EXPECT_ERROR(CORDON_USAGE,
                     "--sandbox off conflicts with --backend microvm (see 'cordon policy show "
                     "--help')",
                     "policy", "show", "--sandbox", "off", "--backend", "microvm");
        /* Agreeing combinations are fine. */
        cli_args a;
        cordon_error err;
        assert_int_equal(PARSE(&a, &err, "run", "--sandbox", "off", "--backend", "none", "x"), 0);
        cli_args_done(&a);
        assert_int_equal(PARSE(&a, &err, "run", "--sandbox", "off", "--backend", "auto", "x"), 0);
        cli_args_done(&a);
}

/* ---- Order, repeats, and where options end ---------------------------------------------------- */

static void test_repeats_keep_order(void **state) {
        cli_args a;
        cordon_error err;
        assert_int_equal(PARSE(&a, &err, "run", "--policy", "/a.json", "--writable", "w1",
                               "--mode", "read-only", "--policy=/b.json", "--writable=/w2",
                               "--mode", "chat", "--", "make"),
                         0);
        assert_int_equal(a.n_settings, 6);
        static const cli_flag want[] = { CLI_FLAG_POLICY, CLI_FLAG_WRITABLE, CLI_FLAG_MODE,
                                         CLI_FLAG_POLICY, CLI_FLAG_WRITABLE, CLI_FLAG_MODE };
        for (size_t i = 0; i < 6; i++)
                assert_int_equal(a.settings[i].flag, want[i]);
        assert_string_equal(a.settings[0].text, "/a.json");
        assert_string_equal(a.settings[1].text, CWD "/w1");
        assert_int_equal(a.settings[2].mode, CORDON_MODE_READ_ONLY);
        assert_string_equal(a.settings[3].text, "/b.json");
        assert_string_equal(a.settings[4].text, "/w2");
        assert_int_equal(a.settings[5].mode, CORDON_MODE_WORKSPACE_WRITE);
        assert_string_equal(a.argv[0], "make");
        cli_args_done(&a);
}

static void test_double_dash_and_first_operand(void **state) {
        cli_args a;
        cordon_error err;
        /* After "--" everything is the command, even option look-alikes. */
        assert_int_equal(PARSE(&a, &err, "run", "--no-network", "--", "--writable", "x", "--"),
                         0);
        assert_int_equal(a.n_settings, 1);
        assert_string_equal(a.argv[0], "--writable");
        assert_string_equal(a.argv[1], "x");
        assert_string_equal(a.argv[2], "--");
        assert_null(a.argv[3]);
        cli_args_done(&a);
        /* The first operand ends the options: the command's own flags stay its own. */
        assert_int_equal(PARSE(&a, &err, "run", "ls", "-l", "--writable", "/x", "--help"), 0);
        assert_int_equal(a.command, CLI_COMMAND_RUN);
        assert_int_equal(a.n_settings, 0);
        assert_string_equal(a.argv[0], "ls");
        assert_string_equal(a.argv[3], "/x");
        assert_string_equal(a.argv[4], "--help");
        cli_args_done(&a);
        /* "-" alone is an operand. */
        assert_int_equal(PARSE(&a, &err, "run", "-"), 0);
        assert_string_equal(a.argv[0], "-");
        cli_args_done(&a);
        /* A value that looks like an option is still the value (getopt semantics). */
        assert_int_equal(PARSE(&a, &err, "run", "--session-id", "--no-network", "true"), 0);
        assert_int_equal(a.n_settings, 1);
        assert_string_equal(a.settings[0].text, "--no-network");
        cli_args_done(&a);
}

static void test_no_command(void **state) {
        EXPECT_ERROR(CORDON_USAGE,
                     "no command given: cordon run [OPTIONS] [--] CMD [ARG...] (see 'cordon run "
                     "--help')",
                     "run");
        EXPECT_ERROR(CORDON_USAGE,
                     "no command given: cordon run [OPTIONS] [--] CMD [ARG...] (see 'cordon run "
                     "--help')",
                     "run", "--no-network", "--");
        EXPECT_ERROR(CORDON_USAGE, "empty command name (see 'cordon run --help')", "run", "");
        cli_args a;
        cordon_error err;
        char *argv[] = { (char *) "cordon", NULL };
        assert_int_equal(cli_args_parse(1, argv, CWD, &a, &err), -EINVAL);
        assert_string_equal(err.message, "no command given; the commands are " COMMANDS
                                         " (see 'cordon help')");
        assert_int_equal(err.code, CORDON_USAGE);
}

/* ---- Usage errors ----------------------------------------------------------------------------- */

static void test_missing_values(void **state) {
        for (int f = 0; f < _CLI_FLAG_MAX; f++) {
                if (f == CLI_FLAG_NO_NETWORK || f == CLI_FLAG_BLOCK_READS || f == CLI_FLAG_EGRESS_ASK)
                        continue;
                char want[256];
                const char *n = cli_flag_name((cli_flag) f);
                snprintf(want, sizeof(want), "option '%s' needs a value: '%s VALUE' or "
                         "'%s=VALUE' (see 'cordon run --help')", n, n, n);
                EXPECT_ERROR(CORDON_USAGE, want, "run", cli_flag_name((cli_flag) f));
                snprintf(want, sizeof(want), "option '%s' needs a value: '%s VALUE' or "
                         "'%s=VALUE' (see 'cordon policy show --help')", n, n, n);
                EXPECT_ERROR(CORDON_USAGE, want, "policy", "show", cli_flag_name((cli_flag) f));
        }
        EXPECT_ERROR(CORDON_USAGE, "option '--sandbox' needs a value: '--sandbox VALUE' or "
                     "'--sandbox=VALUE' (see 'cordon run --help')", "run", "--sandbox");
        EXPECT_ERROR(CORDON_USAGE, "option '--backend' needs a value: '--backend VALUE' or "
                     "'--backend=VALUE' (see 'cordon run --help')", "run", "--backend");
}

static void test_unknown_options(void **state) {
        EXPECT_ERROR(CORDON_USAGE, "unknown option '--bogus' (see 'cordon run --help')", "run",
                     "--bogus", "true");
        EXPECT_ERROR(CORDON_USAGE, "unknown option '--bogus' (see 'cordon run --help')", "run",
                     "--bogus=1", "true");
        EXPECT_ERROR(CORDON_USAGE, "unknown option '-x' (see 'cordon run --help')", "run", "-x",
                     "true");
        /* Prefixes are not abbreviations. */
        EXPECT_ERROR(CORDON_USAGE, "unknown option '--writ' (see 'cordon run --help')", "run",
                     "--writ", "/x", "true");
        /* Bare --json belongs to probe and policy show; run wants --json=DEST (tests/explain);
         * policy flags do not belong to probe. */
        EXPECT_ERROR(CORDON_USAGE, "--json needs a destination for run: --json=FILE or "
                     "--json=fd:N (N >= 3; fds 1 and 2 carry the command's own output) (see "
                     "'cordon run --help')", "run", "--json", "true");
        EXPECT_ERROR(CORDON_USAGE, "option '--writable' does not apply to this command (see "
                     "'cordon probe --help')", "probe", "--writable", "/x");
        EXPECT_ERROR(CORDON_USAGE, "option '--sandbox' does not apply to this command (see "
                     "'cordon probe --help')", "probe", "--sandbox=off");
        EXPECT_ERROR(CORDON_USAGE, "option '--json' takes no value: write '--json' alone (see "
                     "'cordon probe --help')", "probe", "--json=yes");
        /* "Did you mean": the nearest option of this command, within the distance policy keys
         * use (src/util/util.c); options of other commands are not offered. */
        EXPECT_ERROR(CORDON_USAGE, "unknown option '--writeable'; did you mean '--writable'? "
                     "(see 'cordon run --help')", "run", "--writeable", "/x", "true");
        EXPECT_ERROR(CORDON_USAGE, "unknown option '--qiuet'; did you mean '--quiet'? (see "
                     "'cordon exec --help')", "exec", "s", "--qiuet", "--", "true");
        EXPECT_ERROR(CORDON_USAGE, "unknown option '--socet'; did you mean '--socket'? (see "
                     "'cordon session --help')", "session", "list", "--socet", "/s");
        EXPECT_ERROR(CORDON_USAGE, "option '--capture' does not apply to this command (see "
                     "'cordon exec --help')", "exec", "s", "--capture", "--", "true");
        EXPECT_ERROR(CORDON_USAGE, "unknown option '--writable'; options come after the "
                     "command: 'cordon COMMAND --writable ...' (see 'cordon help')",
                     "--writable", "/x");
        EXPECT_ERROR(CORDON_USAGE, "unexpected argument 'extra' (see 'cordon probe --help')",
                     "probe", "extra");
        EXPECT_ERROR(CORDON_USAGE,
                     "unexpected argument 'ls' (see 'cordon policy show --help')", "policy",
                     "show", "ls");
        EXPECT_ERROR(CORDON_USAGE, "unknown option '--' (see 'cordon policy show --help')",
                     "policy", "show", "--");
        /* A very long option is cut, not overflowed. */
        char longopt[600];
        memset(longopt, 'a', sizeof(longopt) - 1);
        longopt[0] = longopt[1] = '-';
        longopt[sizeof(longopt) - 1] = '\0';
        cli_args a;
        cordon_error err;
        assert_int_equal(PARSE(&a, &err, "run", longopt, "x"), -EINVAL);
        assert_int_equal(err.code, CORDON_USAGE);
        assert_non_null(strstr(err.message, "...' (see 'cordon run --help')"));
}

static void test_commands(void **state) {
        EXPECT_ERROR(CORDON_USAGE, "unknown command 'launch'; the commands are " COMMANDS
                     " (see 'cordon help')", "launch");
        EXPECT_ERROR(CORDON_USAGE, "unknown command 'rnu'; did you mean 'run'? (see 'cordon "
                     "help')", "rnu", "true");
        EXPECT_ERROR(CORDON_USAGE, "unknown command 'Exec'; did you mean 'exec'? (see 'cordon "
                     "help')", "Exec", "s", "true");
        EXPECT_ERROR(CORDON_USAGE, "unknown session subcommand 'lst'; did you mean 'list'? "
                     "(see 'cordon session --help')", "session", "lst");
        EXPECT_ERROR(CORDON_USAGE, "unknown option '--json'; options come after the command: 'cordon COMMAND "
                     "--json ...' (see 'cordon help')", "--json");
        EXPECT_ERROR(CORDON_USAGE,
                     "'cordon policy' needs a subcommand: show (see 'cordon policy show "
                     "--help')",
                     "policy");
        EXPECT_ERROR(CORDON_USAGE,
                     "unknown policy subcommand 'edit'; the only one is 'show' (see 'cordon "
                     "policy show --help')",
                     "policy", "edit");
        EXPECT_ERROR(CORDON_USAGE, "unexpected argument 'x' (see 'cordon help')", "version",
                     "x");
        EXPECT_ERROR(CORDON_USAGE, "unknown help topic 'nope' (see 'cordon help')", "help",
                     "nope");
        EXPECT_ERROR(CORDON_USAGE, "unexpected argument 'b' (see 'cordon help')", "help", "run",
                     "b");

        cli_args a;
        cordon_error err;
        assert_int_equal(PARSE(&a, &err, "probe"), 0);
        assert_int_equal(a.command, CLI_COMMAND_PROBE);
        assert_false(a.json);
        cli_args_done(&a);
        assert_int_equal(PARSE(&a, &err, "probe", "--json"), 0);
        assert_true(a.json);
        cli_args_done(&a);
        assert_int_equal(PARSE(&a, &err, "policy", "show", "--json", "--no-network"), 0);
        assert_int_equal(a.command, CLI_COMMAND_POLICY_SHOW);
        assert_true(a.json);
        assert_int_equal(a.n_settings, 1);
        cli_args_done(&a);
        assert_int_equal(PARSE(&a, &err, "version"), 0);
        assert_int_equal(a.command, CLI_COMMAND_VERSION);
        cli_args_done(&a);
        assert_int_equal(PARSE(&a, &err, "--version"), 0);
        assert_int_equal(a.command, CLI_COMMAND_VERSION);
        cli_args_done(&a);
}

static void test_help(void **state) {
        static const struct {
                const char *args[5];
                cli_command topic;
        } cases[] = {
                { { "help" }, CLI_COMMAND_HELP },
                { { "--help" }, CLI_COMMAND_HELP },
                { { "-h" }, CLI_COMMAND_HELP },
                { { "help", "run" }, CLI_COMMAND_RUN },
                { { "help", "probe" }, CLI_COMMAND_PROBE },
                { { "help", "policy" }, CLI_COMMAND_POLICY_SHOW },
                { { "help", "version" }, CLI_COMMAND_VERSION },
                { { "run", "--help" }, CLI_COMMAND_RUN },
                { { "run", "-h" }, CLI_COMMAND_RUN },
                /* --help ends parsing: what follows is not checked. */
                { { "run", "--no-network", "--help", "--bogus" }, CLI_COMMAND_RUN },
                { { "probe", "--help" }, CLI_COMMAND_PROBE },
                { { "policy", "--help" }, CLI_COMMAND_POLICY_SHOW },
                { { "policy", "show", "-h" }, CLI_COMMAND_POLICY_SHOW },
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                cli_args a;
                cordon_error err;
                assert_int_equal(parse_list(&a, &err, cases[i].args), 0);
                assert_int_equal(a.command, CLI_COMMAND_HELP);
                assert_int_equal(a.help_topic, cases[i].topic);
                assert_null(a.argv);
                cli_args_done(&a);
        }
        /* "--help" after "--" or after the command is the command's. */
        cli_args a;
        cordon_error err;
        assert_int_equal(PARSE(&a, &err, "run", "--", "--help"), 0);
        assert_int_equal(a.command, CLI_COMMAND_RUN);
        assert_string_equal(a.argv[0], "--help");
        cli_args_done(&a);
}

/* ---- Values ----------------------------------------------------------------------------------- */

static void test_relative_paths(void **state) {
        static const struct {
                const char *in, *want;
        } cases[] = {
                { "x", CWD "/x" },
                { "./x", CWD "/x" },
                { ".", CWD },
                { "./", CWD },
                { "..", "/home/u" },
                { "../", "/home/u" },
                { "../sib/d", "/home/u/sib/d" },
                { "../../..", "/" },
                { "../../../../../etc", "/etc" },
                { ".//./x//y", CWD "/x//y" },   /* the setter normalises the rest */
                { "x/../y", CWD "/x/../y" },     /* kept: the setter refuses it */
                { "..x", CWD "/..x" },
                { ".hidden", CWD "/.hidden" },
                { "/abs/./p", "/abs/./p" },      /* absolute: untouched */
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                cli_args a;
                cordon_error err;
                assert_int_equal(PARSE(&a, &err, "run", "--writable", cases[i].in, "true"), 0);
                assert_string_equal(a.settings[0].text, cases[i].want);
                cli_args_done(&a);
        }
        /* The root as cwd. */
        char *argv[] = { (char *) "cordon", (char *) "run", (char *) "--deny-read",
                         (char *) "etc", (char *) "--workdir=..", (char *) "t", NULL };
        cli_args a;
        cordon_error err;
        assert_int_equal(cli_args_parse(6, argv, "/", &a, &err), 0);
        assert_string_equal(a.settings[0].text, "/etc");
        assert_string_equal(a.settings[1].text, "/");
        cli_args_done(&a);
        /* Globs and names are not paths: never absolutised. */
        assert_int_equal(PARSE(&a, &err, "run", "--deny-create-name", "x.key", "--env-scrub",
                               "A*", "t"),
                         0);
        assert_string_equal(a.settings[0].text, "x.key");
        assert_string_equal(a.settings[1].text, "A*");
        cli_args_done(&a);
        /* A relative cwd is refused. */
        assert_int_equal(cli_args_parse(6, argv, "rel", &a, &err), -EINVAL);
}

static void test_bad_values(void **state) {
        EXPECT_ERROR(CORDON_POLICY_INVALID,
                     "--tmp-size: invalid size 'lots'; use a whole number of bytes with an optional "
                     "unit K, M or G, 1M to 1T (e.g. 512M, 4G)",
                     "run", "--tmp-size", "lots", "true");
        EXPECT_ERROR(CORDON_POLICY_INVALID,
                     "--memory: invalid size '12Q'; use a whole number of bytes with an optional "
                     "unit K, M or G (e.g. 512M, 2G)",
                     "run", "--memory", "12Q", "true");
        EXPECT_ERROR(CORDON_POLICY_INVALID,
                     "--memory: invalid size '-1'; use a whole number of bytes with an optional "
                     "unit K, M or G (e.g. 512M, 2G)",
                     "run", "--memory=-1", "true");
        EXPECT_ERROR(CORDON_POLICY_INVALID,
                     "--memory: size '99999999999999999999G' is too large; use a whole number of "
                     "bytes with an optional unit K, M or G (e.g. 512M, 2G)",
                     "run", "--memory", "99999999999999999999G", "true");
        EXPECT_ERROR(CORDON_POLICY_INVALID,
                     "--memory: '0' is not a limit (leave --memory out for none); use a whole "
                     "number of bytes with an optional unit K, M or G (e.g. 512M, 2G)",
                     "run", "--memory", "0", "true");
        EXPECT_ERROR(CORDON_POLICY_INVALID,
                     "--timeout: invalid duration '5 min'; use a whole number with an optional "
                     "unit ms, s, m or h (e.g. 30s, 500ms, 2m)",
                     "run", "--timeout", "5 min", "true");
        EXPECT_ERROR(CORDON_POLICY_INVALID,
                     "--timeout: invalid duration '1.5s'; use a whole number with an optional "
                     "unit ms, s, m or h (e.g. 30s, 500ms, 2m)",
                     "run", "--timeout=1.5s", "true");
        EXPECT_ERROR(CORDON_POLICY_INVALID,
                     "--timeout: duration '99999999999999999h' is too large; use a whole number "
                     "with an optional unit ms, s, m or h (e.g. 30s, 500ms, 2m)",
                     "run", "--timeout", "99999999999999999h", "true");
        EXPECT_ERROR(CORDON_POLICY_INVALID,
                     "--timeout: '0ms' is not a limit (leave --timeout out for none); use a whole "
                     "number with an optional unit ms, s, m or h (e.g. 30s, 500ms, 2m)",
                     "run", "--timeout", "0ms", "true");
        EXPECT_ERROR(CORDON_POLICY_INVALID,
                     "--pids: invalid number '1K'; use a whole number of processes (e.g. 256)",
                     "run", "--pids", "1K", "true");
        EXPECT_ERROR(CORDON_POLICY_INVALID,
                     "--pids: number '18446744073709551616' is too large; use a whole number of "
                     "processes (e.g. 256)",
                     "run", "--pids", "18446744073709551616", "true");
        EXPECT_ERROR(CORDON_POLICY_INVALID,
                     "--cpu: invalid number '+5'; use a whole number of CPU seconds (e.g. 600)",
                     "run", "--cpu", "+5", "true");
        EXPECT_ERROR(CORDON_POLICY_INVALID,
                     "--cpu: invalid number ''; use a whole number of CPU seconds (e.g. 600)",
                     "run", "--cpu=", "true");
}

static void test_bad_names(void **state) {
        EXPECT_ERROR(CORDON_POLICY_INVALID,
                     "--mode: unknown mode 'yolo'; use workspace-write (alias chat), read-only "
                     "(aliases review, plan, orchestrate) or danger-full-access",
                     "run", "--mode", "yolo", "true");
        EXPECT_ERROR(CORDON_POLICY_INVALID,
                     "--mode: unknown mode 'Chat'; use workspace-write (alias chat), read-only "
                     "(aliases review, plan, orchestrate) or danger-full-access",
                     "policy", "show", "--mode=Chat");
        /* docs/design/backends.md: an unknown backend on the command line is a usage error. */
        EXPECT_ERROR(CORDON_USAGE,
                     "--backend: unknown backend 'vm'; use auto, native, landlock, microvm or "
                     "none (see 'cordon run --help')",
                     "run", "--backend", "vm", "true");
        EXPECT_ERROR(CORDON_USAGE,
                     "--backend: unknown backend ''; use auto, native, landlock, microvm or none "
                     "(see 'cordon run --help')",
                     "run", "--backend=", "true");
        EXPECT_ERROR(CORDON_POLICY_INVALID,
                     "--sandbox: expected 'on' or 'off', got 'no'; 'off' runs the command "
                     "unprotected",
                     "run", "--sandbox", "no", "true");
        EXPECT_ERROR(CORDON_POLICY_INVALID,
                     "--env-set: expected NAME=VALUE, got 'NOVALUE'; use NAME=VALUE, e.g. "
                     "LANG=C.UTF-8",
                     "run", "--env-set", "NOVALUE", "true");
        EXPECT_ERROR(CORDON_POLICY_INVALID,
                     "--env-set: expected NAME=VALUE, got '=x'; use NAME=VALUE, e.g. LANG=C.UTF-8",
                     "run", "--env-set==x", "true");
        EXPECT_ERROR(CORDON_POLICY_INVALID,
                     "--writable: empty path; give a directory the command may write", "run",
                     "--writable=", "true");
        EXPECT_ERROR(CORDON_POLICY_INVALID,
                     "--policy: empty path; give the path of a JSON policy file", "run",
                     "--policy", "", "true");
        EXPECT_ERROR(CORDON_POLICY_INVALID,
                     "--deny-create-name: empty value; give a file-name glob such as '*.pem' or "
                     "'.env.*'",
                     "run", "--deny-create-name", "", "true");
}

/* A hostile argument cannot put a second line into the one fatal line. */
static void test_messages_stay_one_line(void **state) {
        EXPECT_ERROR(CORDON_USAGE,
                     "unknown option '--x?cordon: fatal: OK' (see 'cordon run --help')", "run",
                     "--x\ncordon: fatal: OK", "true");
        EXPECT_ERROR(CORDON_POLICY_INVALID,
                     "--mode: unknown mode 'a?b?" "?'; use workspace-write (alias chat), read-only "
                     "(aliases review, plan, orchestrate) or danger-full-access",
                     "run", "--mode", "a\rb\xc3\xa9", "true");
}

/* ---- --events ----------------------------------------------------------------------------- */

static void test_events(void **state) {
        (void) state;
        cli_args a;
        cordon_error err;
        /* Without --events: no path, fd -1 (never 0, which is stdin). */
        assert_int_equal(PARSE(&a, &err, "run", "true"), 0);
        assert_null(a.events_path);
        assert_int_equal(a.events_fd, -1);
        cli_args_done(&a);
        /* FILE, both spellings, relative made absolute. */
        assert_int_equal(PARSE(&a, &err, "run", "--events", "ev.jsonl", "true"), 0);
        assert_string_equal(a.events_path, CWD "/ev.jsonl");
        assert_int_equal(a.events_fd, -1);
        cli_args_done(&a);
        assert_int_equal(PARSE(&a, &err, "run", "--events=/tmp/e", "--", "true"), 0);
        assert_string_equal(a.events_path, "/tmp/e");
        cli_args_done(&a);
        /* fd:N */
        assert_int_equal(PARSE(&a, &err, "run", "--events", "fd:3", "true"), 0);
        assert_null(a.events_path);
        assert_int_equal(a.events_fd, 3);
        assert_string_equal(a.argv[0], "true");
        cli_args_done(&a);
        assert_int_equal(PARSE(&a, &err, "run", "--events=fd:2147483647", "true"), 0);
        assert_int_equal(a.events_fd, 2147483647);
        cli_args_done(&a);
        /* After the command it is the command's argument. */
        assert_int_equal(PARSE(&a, &err, "run", "echo", "--events", "fd:x"), 0);
        assert_int_equal(a.events_fd, -1);
        assert_string_equal(a.argv[1], "--events");
        cli_args_done(&a);
}

#define EVENTS_HINT "use a file path or fd:N with N >= 3 (fds 0-2 are the command's stdio)"

static void test_events_bad_values(void **state) {
        (void) state;
        static const char *const bad_fds[] = { "fd:", "fd:x", "fd:-1", "fd:0", "fd:1", "fd:2",
                                               "fd:2147483648", "fd:99999999999999999999",
                                               "fd:3x", "fd: 3" };
        for (size_t i = 0; i < sizeof(bad_fds) / sizeof(bad_fds[0]); i++) {
                char want[256];
                snprintf(want, sizeof(want), "--events: '%s' is not a usable descriptor; %s",
                         bad_fds[i], EVENTS_HINT);
                EXPECT_ERROR(CORDON_POLICY_INVALID, want, "run", "--events", bad_fds[i], "true");
        }
        EXPECT_ERROR(CORDON_POLICY_INVALID, "--events: empty value; " EVENTS_HINT, "run",
                     "--events=", "true");
        EXPECT_ERROR(CORDON_USAGE, "--events given twice; give it once (see 'cordon run --help')", "run",
                     "--events", "a", "--events", "fd:3", "true");
        EXPECT_ERROR(CORDON_USAGE, "option '--events' needs a value: '--events VALUE' or '--events=VALUE' (see 'cordon run --help')",
                     "run", "--events");
        /* Only run streams events. */
        EXPECT_ERROR(CORDON_USAGE, "option '--events' does not apply to this command (see "
                     "'cordon probe --help')",
                     "probe", "--events", "fd:3");
        EXPECT_ERROR(CORDON_USAGE,
                     "option '--events' does not apply to this command (see "
                     "'cordon policy show --help')", "policy",
                     "show", "--events", "fd:3");
}/* cordon cache list | clear [TOOL] (docs/design/tool-caches.md) */
static void test_cache(void **state) {
        cli_args a;
        cordon_error err;
        assert_int_equal(PARSE(&a, &err, "cache", "list"), 0);
        assert_int_equal(a.command, CLI_COMMAND_CACHE);
        assert_false(a.cache_clear);
        assert_null(a.cache_tool);
        cli_args_done(&a);
        assert_int_equal(PARSE(&a, &err, "cache", "clear"), 0);
        assert_true(a.cache_clear);
        assert_null(a.cache_tool);
        cli_args_done(&a);
        assert_int_equal(PARSE(&a, &err, "cache", "clear", "npm"), 0);
        assert_true(a.cache_clear);
        assert_string_equal(a.cache_tool, "npm");
        cli_args_done(&a);
        assert_int_equal(PARSE(&a, &err, "help", "cache"), 0);
        assert_int_equal(a.help_topic, CLI_COMMAND_CACHE);
        cli_args_done(&a);
        EXPECT_ERROR(CORDON_USAGE,
                     "'cordon cache' needs a subcommand: list or clear [TOOL] (see 'cordon help "
                     "cache')",
                     "cache");
        EXPECT_ERROR(CORDON_USAGE,
                     "unknown cache subcommand 'purge'; use list or clear [TOOL] (see 'cordon "
                     "help cache')",
                     "cache", "purge");
        EXPECT_ERROR(CORDON_USAGE, "unexpected argument 'npm' (see 'cordon help cache')",
                     "cache", "list", "npm");
        EXPECT_ERROR(CORDON_USAGE, "unexpected argument 'go' (see 'cordon help cache')",
                     "cache", "clear", "npm", "go");
        EXPECT_ERROR(CORDON_USAGE,
                     "'cordon cache clear' needs a TOOL name, not an empty one (see 'cordon help "
                     "cache')",
                     "cache", "clear", "");
}

/* cordon secret set NAME | list [--json] | rm NAME (docs/design/secrets.md): a value is never an
 * argument. */
static void test_secret(void **state) {
        (void) state;
        cli_args a;
        cordon_error err;
        assert_int_equal(PARSE(&a, &err, "secret", "set", "GITHUB_TOKEN"), 0);
        assert_int_equal(a.command, CLI_COMMAND_SECRET_SET);
        assert_string_equal(a.secret_name, "GITHUB_TOKEN");
        cli_args_done(&a);
        assert_int_equal(PARSE(&a, &err, "secret", "rm", "npm.token"), 0);
        assert_int_equal(a.command, CLI_COMMAND_SECRET_RM);
        assert_string_equal(a.secret_name, "npm.token");
        cli_args_done(&a);
        assert_int_equal(PARSE(&a, &err, "secret", "list"), 0);
        assert_int_equal(a.command, CLI_COMMAND_SECRET_LIST);
        assert_false(a.json);
        cli_args_done(&a);
        assert_int_equal(PARSE(&a, &err, "secret", "list", "--json"), 0);
        assert_true(a.json);
        cli_args_done(&a);
        assert_int_equal(PARSE(&a, &err, "help", "secret"), 0);
        assert_int_equal(a.help_topic, CLI_COMMAND_SECRET_LIST);
        cli_args_done(&a);
        EXPECT_ERROR(CORDON_USAGE,
                     "'cordon secret set' takes the value on standard input, never as an argument "
                     "(other users can read a command line with ps); type it at the prompt, or "
                     "pipe it in: cordon secret set tok < FILE (see 'cordon help secret')",
                     "secret", "set", "tok", "hunter2");
        EXPECT_ERROR(CORDON_USAGE,
                     "'../x' is not a secret name: 1-64 of A-Z a-z 0-9 . _ -, not starting with "
                     "'.' or '-' (see 'cordon help secret')",
                     "secret", "set", "../x");
        EXPECT_ERROR(CORDON_USAGE, "'cordon secret rm' needs a NAME (see 'cordon help secret')",
                     "secret", "rm");
        EXPECT_ERROR(CORDON_USAGE, "unexpected argument 'b' (see 'cordon help secret')", "secret",
                     "rm", "a", "b");
        EXPECT_ERROR(CORDON_USAGE,
                     "unknown secret subcommand 'get'; use set NAME, list or rm NAME (see 'cordon "
                     "help secret')",
                     "secret", "get", "tok");
        EXPECT_ERROR(CORDON_USAGE,
                     "'cordon secret' needs a subcommand: set NAME, list or rm NAME (see 'cordon "
                     "help secret')",
                     "secret");
}

/* cordon mcp [POLICY OPTIONS] (docs/mcp.md): the policy flags and --settings, nothing else. */
static void test_mcp(void **state) {
        cli_args a;
        cordon_error err;
        assert_int_equal(PARSE(&a, &err, "mcp"), 0);
        assert_int_equal(a.command, CLI_COMMAND_MCP);
        assert_null(a.argv);
        cli_args_done(&a);
        assert_int_equal(PARSE(&a, &err, "mcp", "--allow-domain", "example.com", "--writable",
                               "/tmp", "--settings", "/s.json"),
                         0);
        assert_int_equal(a.n_settings, 2);
        assert_int_equal(a.n_settings_files, 1);
        cli_args_done(&a);
        assert_int_equal(PARSE(&a, &err, "help", "mcp"), 0);
        assert_int_equal(a.help_topic, CLI_COMMAND_MCP);
        cli_args_done(&a);
        EXPECT_ERROR(CORDON_USAGE, "unexpected argument 'ls' (see 'cordon mcp --help')",
                     "mcp", "ls");
        EXPECT_ERROR(CORDON_USAGE, "option '--events' does not apply to this command (see "
                     "'cordon mcp --help')",
                     "mcp", "--events", "fd:3");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_every_flag_both_forms),
                cmocka_unit_test(test_no_network),
                cmocka_unit_test(test_sandbox_and_backend),
                cmocka_unit_test(test_conflicts),
                cmocka_unit_test(test_repeats_keep_order),
                cmocka_unit_test(test_double_dash_and_first_operand),
                cmocka_unit_test(test_no_command),
                cmocka_unit_test(test_missing_values),
                cmocka_unit_test(test_unknown_options),
                cmocka_unit_test(test_commands),
                cmocka_unit_test(test_help),
                cmocka_unit_test(test_relative_paths),
                cmocka_unit_test(test_bad_values),
                cmocka_unit_test(test_bad_names),
                cmocka_unit_test(test_messages_stay_one_line),
                cmocka_unit_test(test_events),
                cmocka_unit_test(test_events_bad_values),
                cmocka_unit_test(test_cache),
                cmocka_unit_test(test_secret),
                cmocka_unit_test(test_mcp),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
