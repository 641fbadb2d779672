/* SPDX-License-Identifier: Apache-2.0 */
/* The commands of `cordon` and their subcommands: which options each takes (args-internal.h's
 * ALLOW_* bits), its operands, and cli_args_parse(), the entry point (args.h). */
#include "cli/args-internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "secrets/secret-store.h" /* secret_name_valid() */
#include "util/util.h" /* text_nearest(): the "did you mean" of policy files, reused */

/* ---- Commands ----------------------------------------------------------------------------- */

/* The rest of the command line is the command; `synopsis` says where it goes. */
static int copy_command(parser *p, const char *synopsis) {
        size_t n = (size_t) (p->argc - p->i);
        if (n == 0)
                return cli_usage(p, "no command given: %s", synopsis);
        if (p->argv[p->i][0] == '\0')
                return cli_usage(p, "empty command name");
        char **v = calloc(n + 1, sizeof(char *));
        if (!v)
                return -ENOMEM;
        p->out->argv = v;
        for (size_t k = 0; k < n; k++)
                if (!(v[k] = strdup(p->argv[p->i + (int) k])))
                        return -ENOMEM;
        p->i = p->argc;
        return 0;
}

/* --capture puts the output into the events; one destination cannot take both streams. */
static int check_run_report(parser *p) {
        const cli_args *a = p->out;
        if (a->capture && !a->events_path && a->events_fd < 0)
                return cli_usage(p, "--capture needs --events FILE|fd:N: the captured output goes "
                                "into the events");
        if ((a->json_fd >= 0 && a->json_fd == a->events_fd) ||
            (a->json_path && a->events_path && strcmp(a->json_path, a->events_path) == 0))
                return cli_usage(p, "--json and --events need different destinations");
        return 0;
}

static int parse_run(parser *p) {
        p->out->command = CLI_COMMAND_RUN;
        p->see = "cordon run --help";
        int r = cli_parse_options(p, ALLOW_POLICY | ALLOW_POSITIONAL | ALLOW_EVENTS |
                                         ALLOW_RUN_REPORT | ALLOW_QUIET | ALLOW_ANALYTICS);
        if (r != 0)
                return r < 0 ? r : 0;
        r = cli_check_conflicts(p);
        if (r >= 0)
                r = check_run_report(p);
        return r < 0 ? r : copy_command(p, "cordon run [OPTIONS] [--] CMD [ARG...]");
}

static int parse_explain(parser *p) {
        p->out->command = CLI_COMMAND_EXPLAIN;
        p->see = "cordon explain --help";
        int r = cli_parse_options(p, ALLOW_JSON | ALLOW_EVENTS | ALLOW_EXPLAIN);
        if (r != 0)
                return r < 0 ? r : 0;
        const cli_args *a = p->out;
        if (!a->events_path && a->events_fd < 0 && !a->status_set && !a->stderr_path)
                return cli_usage(p, "nothing to explain: give --events FILE, --status N or "
                                    "--stderr FILE");
        return 0;
}

static int parse_probe(parser *p) {
        p->out->command = CLI_COMMAND_PROBE;
        p->see = "cordon probe --help";
        int r = cli_parse_options(p, ALLOW_JSON);
        return r < 0 ? r : 0;
}

static int parse_policy(parser *p) {
        p->see = "cordon policy show --help";
        if (p->i >= p->argc)
                return cli_usage(p, "'cordon policy' needs a subcommand: show");
        const char *sub = p->argv[p->i++];
        p->out->command = CLI_COMMAND_POLICY_SHOW;
        if (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0)
                return cli_apply_extra(p, EXTRA_HELP, NULL) < 0 ? -EINVAL : 0;
        if (strcmp(sub, "show") != 0)
                return cli_usage(p, "unknown policy subcommand '%s'; the only one is 'show'",
                             CLI_QUOTE(sub));
        int r = cli_parse_options(p,
                                  ALLOW_POLICY | ALLOW_JSON | ALLOW_SEATBELT | ALLOW_SHOW_EXPLAIN);
        if (r != 0)
                return r < 0 ? r : 0;
        if (p->out->json && p->out->seatbelt)
                return cli_usage(p, "--json and --seatbelt print different things; choose one");
        if (p->out->explain && p->out->seatbelt)
                return cli_usage(p, "--explain and --seatbelt print different things; choose one");
        return cli_check_conflicts(p);
}

/* cordon settings trust|untrust [PATH], cordon settings trusted [--json] */
static int parse_trust(parser *p, const char *sub) {
        const char *arg = p->i < p->argc ? p->argv[p->i++] : NULL;
        if (arg && (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0))
                return cli_apply_extra(p, EXTRA_HELP, NULL) < 0 ? -EINVAL : 0;
        if (strcmp(sub, "trusted") == 0) {
                p->out->command = CLI_COMMAND_SETTINGS_TRUSTED;
                if (arg && strcmp(arg, "--json") != 0)
                        return cli_usage(p, "unexpected argument '%s'", CLI_QUOTE(arg));
                p->out->json = arg != NULL;
                return p->i < p->argc ? cli_usage(p, "unexpected argument '%s'",
                                              CLI_QUOTE(p->argv[p->i]))
                                      : 0;
        }
        p->out->command = strcmp(sub, "trust") == 0 ? CLI_COMMAND_SETTINGS_TRUST
                                                    : CLI_COMMAND_SETTINGS_UNTRUST;
        if (p->i < p->argc)
                return cli_usage(p, "unexpected argument '%s'", CLI_QUOTE(p->argv[p->i]));
        if (!arg)
                return 0;
        if (!arg[0])
                return cli_usage(p, "'cordon settings %s' needs a PATH, not an empty name", sub);
        return cli_make_absolute(p->cwd, arg, &p->out->trust_target);
}

/* cordon settings import FILE | trust [PATH] | untrust [PATH] | trusted [--json] */
static int parse_settings(parser *p) {
        p->see = "cordon help settings";
        p->out->command = CLI_COMMAND_SETTINGS_IMPORT;
        if (p->i >= p->argc)
                return cli_usage(p, "'cordon settings' needs a subcommand: import FILE, trust "
                                "[PATH], untrust [PATH] or trusted");
        const char *sub = p->argv[p->i++];
        if (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0)
                return cli_apply_extra(p, EXTRA_HELP, NULL) < 0 ? -EINVAL : 0;
        if (strcmp(sub, "trust") == 0 || strcmp(sub, "untrust") == 0 ||
            strcmp(sub, "trusted") == 0)
                return parse_trust(p, sub);
        if (strcmp(sub, "import") != 0)
                return cli_usage(p, "unknown settings subcommand '%s'; the subcommands are import, "
                                "trust, untrust and trusted",
                             CLI_QUOTE(sub));
        if (p->i >= p->argc)
                return cli_usage(p, "'cordon settings import' needs a FILE");
        const char *file = p->argv[p->i++];
        if (strcmp(file, "--help") == 0 || strcmp(file, "-h") == 0)
                return cli_apply_extra(p, EXTRA_HELP, NULL) < 0 ? -EINVAL : 0;
        if (p->i < p->argc)
                return cli_usage(p, "unexpected argument '%s'", CLI_QUOTE(p->argv[p->i]));
        if (!file[0])
                return cli_usage(p, "'cordon settings import' needs a FILE, not an empty name");
        return cli_make_absolute(p->cwd, file, &p->out->import_path);
}

/* cordon cache list | cordon cache clear [TOOL] (docs/design/tool-caches.md) */
static int parse_cache(parser *p) {
        p->see = "cordon help cache";
        p->out->command = CLI_COMMAND_CACHE;
        if (p->i >= p->argc)
                return cli_usage(p, "'cordon cache' needs a subcommand: list or clear [TOOL]");
        const char *sub = p->argv[p->i++];
        if (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0)
                return cli_apply_extra(p, EXTRA_HELP, NULL) < 0 ? -EINVAL : 0;
        if (strcmp(sub, "list") != 0 && strcmp(sub, "clear") != 0)
                return cli_usage(p, "unknown cache subcommand '%s'; use list or clear [TOOL]",
                             CLI_QUOTE(sub));
        p->out->cache_clear = strcmp(sub, "clear") == 0;
        if (p->out->cache_clear && p->i < p->argc) {
                const char *tool = p->argv[p->i++];
                if (strcmp(tool, "--help") == 0 || strcmp(tool, "-h") == 0)
                        return cli_apply_extra(p, EXTRA_HELP, NULL) < 0 ? -EINVAL : 0;
                if (!tool[0])
                        return cli_usage(p, "'cordon cache clear' needs a TOOL name, not an "
                                            "empty one");
                if (!(p->out->cache_tool = strdup(tool)))
                        return -ENOMEM;
        }
        if (p->i < p->argc)
                return cli_usage(p, "unexpected argument '%s'", CLI_QUOTE(p->argv[p->i]));
        return 0;
}

/* cordon secret set NAME | list [--json] | rm NAME (docs/design/secrets.md). A value is never
 * an argument: any user of the machine can read a command line (ps, /proc/PID/cmdline), and a
 * shell keeps it in its history. */
static int parse_secret(parser *p) {
        p->see = "cordon help secret";
        p->out->command = CLI_COMMAND_SECRET_LIST;
        if (p->i >= p->argc)
                return cli_usage(p, "'cordon secret' needs a subcommand: set NAME, list or rm NAME");
        const char *sub = p->argv[p->i++];
        if (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0)
                return cli_apply_extra(p, EXTRA_HELP, NULL) < 0 ? -EINVAL : 0;
        if (strcmp(sub, "list") == 0) {
                int r = cli_parse_options(p, ALLOW_JSON); /* refuses any operand */
                return r < 0 ? r : 0;
        }
        if (strcmp(sub, "set") != 0 && strcmp(sub, "rm") != 0)
                return cli_usage(p, "unknown secret subcommand '%s'; use set NAME, list or rm NAME",
                                 CLI_QUOTE(sub));
        p->out->command = sub[0] == 's' ? CLI_COMMAND_SECRET_SET : CLI_COMMAND_SECRET_RM;
        if (p->i >= p->argc)
                return cli_usage(p, "'cordon secret %s' needs a NAME", sub);
        const char *name = p->argv[p->i++];
        if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0)
                return cli_apply_extra(p, EXTRA_HELP, NULL) < 0 ? -EINVAL : 0;
        if (!secret_name_valid(name))
                return cli_usage(p, "'%s' is not a secret name: 1-%d of A-Z a-z 0-9 . _ -, not "
                                 "starting with '.' or '-'",
                                 CLI_QUOTE(name), SECRET_NAME_MAX);
        if (p->i < p->argc && p->out->command == CLI_COMMAND_SECRET_SET)
                return cli_usage(p, "'cordon secret set' takes the value on standard input, never "
                                 "as an argument (other users can read a command line with ps); "
                                 "type it at the prompt, or pipe it in: cordon secret set %s < FILE",
                                 name);
        if (p->i < p->argc)
                return cli_usage(p, "unexpected argument '%s'", CLI_QUOTE(p->argv[p->i]));
        p->out->secret_name = strdup(name);
        return p->out->secret_name ? 0 : -ENOMEM;
}

/* ---- cordond's clients: session launch|list|destroy, exec -------------------------------- */

/* One positional SESSION (a non-empty argument; the daemon checks the rest). */
static int take_session(parser *p, const char *synopsis) {
        if (p->i >= p->argc)
                return cli_usage(p, "no SESSION given: %s", synopsis);
        const char *id = p->argv[p->i++];
        if (!id[0])
                return cli_usage(p, "empty SESSION: %s", synopsis);
        p->out->session_id = strdup(id);
        return p->out->session_id ? 0 : -ENOMEM;
}

/* cordon session launch: the policy flags build the session's layer (cmd-session.c), as they
 * build the session layer of `cordon run`. Settings files are not read: the daemon's sessions
 * take one policy document, and reading some layers but not others would be a silent gap. */
static int parse_session_launch(parser *p) {
        int r = cli_parse_options(p, ALLOW_POLICY | ALLOW_SOCKET | ALLOW_ANALYTICS);
        if (r != 0)
                return r < 0 ? r : 0;
        if (p->out->n_settings_files > 0)
                return cli_usage(p, "--settings is not read by 'cordon session launch'; give the "
                                "session's policy as flags or --policy FILE");
        return cli_check_conflicts(p);
}

static int parse_session_destroy(parser *p) {
        static const char synopsis[] = "cordon session destroy [--socket PATH] SESSION";
        int r = cli_parse_options(p, ALLOW_SOCKET | ALLOW_POSITIONAL);
        if (r != 0)
                return r < 0 ? r : 0;
        if ((r = take_session(p, synopsis)) < 0)
                return r;
        r = cli_parse_options(p, ALLOW_SOCKET);
        return r < 0 ? r : 0;
}

/* cordon session launch|list|destroy */
static int parse_session(parser *p) {
        static const struct {
                const char *name;
                cli_command command;
        } subs[] = {
                { "launch", CLI_COMMAND_SESSION_LAUNCH },
                { "list", CLI_COMMAND_SESSION_LIST },
                { "destroy", CLI_COMMAND_SESSION_DESTROY },
        };
        p->see = "cordon session --help";
        p->out->command = CLI_COMMAND_SESSION_LAUNCH; /* the topic of `cordon session --help` */
        if (p->i >= p->argc)
                return cli_usage(p, "'cordon session' needs a subcommand: launch, list or destroy");
        const char *sub = p->argv[p->i++];
        if (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0)
                return cli_apply_extra(p, EXTRA_HELP, NULL) < 0 ? -EINVAL : 0;
        for (size_t i = 0; i < sizeof(subs) / sizeof(subs[0]); i++) {
                if (strcmp(sub, subs[i].name) != 0)
                        continue;
                p->out->command = subs[i].command;
                if (subs[i].command == CLI_COMMAND_SESSION_LAUNCH)
                        return parse_session_launch(p);
                if (subs[i].command == CLI_COMMAND_SESSION_DESTROY)
                        return parse_session_destroy(p);
                int r = cli_parse_options(p, ALLOW_JSON | ALLOW_SOCKET);
                return r < 0 ? r : 0;
        }
        const char *names[] = { "launch", "list", "destroy" };
        const char *near = text_nearest(sub, names, ELEMENTSOF(names));
        if (near)
                return cli_usage(p, "unknown session subcommand '%s'; did you mean '%s'?",
                             CLI_QUOTE(sub), near);
        return cli_usage(p, "unknown session subcommand '%s'; use launch, list or destroy",
                     CLI_QUOTE(sub));
}

/* cordon exec SESSION [OPTIONS] [--] CMD [ARG...]: options may come before and after SESSION. */
static int parse_exec(parser *p) {
        static const char synopsis[] = "cordon exec SESSION [OPTIONS] [--] CMD [ARG...]";
        p->out->command = CLI_COMMAND_EXEC;
        p->see = "cordon exec --help";
        unsigned allow = ALLOW_SOCKET | ALLOW_EXEC | ALLOW_POSITIONAL | ALLOW_QUIET;
        int r = cli_parse_options(p, allow);
        if (r != 0)
                return r < 0 ? r : 0;
        if (p->dashdash)
                return cli_usage(p, "no SESSION before '--': %s", synopsis);
        if ((r = take_session(p, synopsis)) < 0)
                return r;
        r = cli_parse_options(p, allow);
        if (r != 0)
                return r < 0 ? r : 0;
        return copy_command(p, synopsis);
}

/* cordon terminal [--native] [--socket PATH] SESSION */
static int parse_terminal(parser *p) {
        static const char synopsis[] = "cordon terminal [--native] [--socket PATH] SESSION";
        p->out->command = CLI_COMMAND_TERMINAL;
        p->see = "cordon terminal --help";
        unsigned allow = ALLOW_SOCKET | ALLOW_TERMINAL | ALLOW_POSITIONAL;
        int r = cli_parse_options(p, allow);
        if (r != 0)
                return r < 0 ? r : 0;
        if ((r = take_session(p, synopsis)) < 0)
                return r;
        r = cli_parse_options(p, ALLOW_SOCKET | ALLOW_TERMINAL);
        return r < 0 ? r : 0;
}

/* cordon mcp [POLICY OPTIONS]: the policy is resolved as for `cordon run` (settings files
 * included); stdin and stdout are the protocol's, so nothing follows the options. */
static int parse_mcp(parser *p) {
        p->out->command = CLI_COMMAND_MCP;
        p->see = "cordon mcp --help";
        int r = cli_parse_options(p, ALLOW_POLICY); /* refuses any operand */
        if (r != 0)
                return r < 0 ? r : 0;
        return cli_check_conflicts(p);
}

static int parse_help(parser *p) {
        static const struct {
                const char *name;
                cli_command topic;
        } topics[] = {
                { "run", CLI_COMMAND_RUN },         { "probe", CLI_COMMAND_PROBE },
                { "policy", CLI_COMMAND_POLICY_SHOW }, { "version", CLI_COMMAND_VERSION },
                { "explain", CLI_COMMAND_EXPLAIN }, { "help", CLI_COMMAND_HELP },
                { "settings", CLI_COMMAND_SETTINGS_IMPORT },
                { "session", CLI_COMMAND_SESSION_LAUNCH }, { "exec", CLI_COMMAND_EXEC },
                { "terminal", CLI_COMMAND_TERMINAL }, { "cache", CLI_COMMAND_CACHE },
                { "mcp", CLI_COMMAND_MCP }, { "secret", CLI_COMMAND_SECRET_LIST },
        };
        p->out->command = CLI_COMMAND_HELP;
        p->out->help_topic = CLI_COMMAND_HELP;
        if (p->i >= p->argc)
                return 0;
        const char *t = p->argv[p->i++];
        if (p->i < p->argc)
                return cli_usage(p, "unexpected argument '%s'", CLI_QUOTE(p->argv[p->i]));
        for (size_t i = 0; i < sizeof(topics) / sizeof(topics[0]); i++)
                if (strcmp(t, topics[i].name) == 0) {
                        p->out->help_topic = topics[i].topic;
                        return 0;
                }
        return cli_usage(p, "unknown help topic '%s'", CLI_QUOTE(t));
}

/* Every command, for "no command given" and "did you mean" (help.c's overview lists the same). */
static const char *const command_names[] = { "run",     "exec",   "session",  "terminal",
                                             "explain", "policy", "settings", "cache", "secret",
                                             "probe",   "mcp",    "completion", "version",
                                             "help" };
#define COMMAND_LIST                                                                              \
        "run, exec, session launch|list|destroy, terminal, explain, policy show, settings "       \
        "import|trust|untrust|trusted, cache list|clear, secret set|list|rm, probe, mcp, completion, version and "   \
        "help"

static int unknown_command(parser *p, const char *cmd) {
        const char *near = text_nearest(cmd, command_names, ELEMENTSOF(command_names));
        if (near)
                return cli_usage(p, "unknown command '%s'; did you mean '%s'?", CLI_QUOTE(cmd),
                                 near);
        return cli_usage(p, "unknown command '%s'; the commands are " COMMAND_LIST, CLI_QUOTE(cmd));
}

static int parse_command(parser *p) {
        if (p->argc < 2)
                return cli_usage(p, "no command given; the commands are " COMMAND_LIST);
        const char *cmd = p->argv[p->i++];
        if (strcmp(cmd, "run") == 0)
                return parse_run(p);
        if (strcmp(cmd, "probe") == 0)
                return parse_probe(p);
        if (strcmp(cmd, "explain") == 0)
                return parse_explain(p);
        if (strcmp(cmd, "policy") == 0)
                return parse_policy(p);
        if (strcmp(cmd, "settings") == 0)
                return parse_settings(p);
        if (strcmp(cmd, "session") == 0)
                return parse_session(p);
        if (strcmp(cmd, "exec") == 0)
                return parse_exec(p);
        if (strcmp(cmd, "terminal") == 0)
                return parse_terminal(p);
        if (strcmp(cmd, "cache") == 0)
                return parse_cache(p);
        if (strcmp(cmd, "mcp") == 0)
                return parse_mcp(p);
        if (strcmp(cmd, "secret") == 0)
                return parse_secret(p);
        if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0)
                return parse_help(p);
        if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0) {
                p->out->command = CLI_COMMAND_VERSION;
                if (p->i < p->argc)
                        return cli_usage(p, "unexpected argument '%s'", CLI_QUOTE(p->argv[p->i]));
                return 0;
        }
        if (cmd[0] == '-')
                return cli_usage(p, "unknown option '%s'; options come after the command: 'cordon "
                                "COMMAND %s ...'", CLI_QUOTE(cmd), CLI_QUOTE(cmd));
        return unknown_command(p, cmd);
}

int cli_args_parse(int argc, char *const argv[], const char *cwd, cli_args *ret,
                   cordon_error *err) {
        *ret = (cli_args) { .events_fd = -1, .json_fd = -1 };
        parser p = { .argc = argc, .argv = argv, .i = 1, .cwd = cwd, .see = "cordon help",
                     .out = ret, .err = err };
        if (!cwd || cwd[0] != '/')
                return cli_set_error(err, CORDON_USAGE, "the current directory is not known");
        int r = parse_command(&p);
        if (r == -ENOMEM) {
                (void) cli_set_error(err, CORDON_LAUNCH_FAILED, "out of memory parsing arguments");
                if (err)
                        err->sys_errno = ENOMEM;
        }
        if (r < 0)
                cli_args_done(ret);
        return r < 0 ? r : 0;
}

