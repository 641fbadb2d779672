/* SPDX-License-Identifier: Apache-2.0 */
/* `cordon completion bash|zsh|fish`: a shell completion script, generated from the parser's own
 * option tables (cli_command_options() in args.c) so that it offers exactly the options the
 * parser takes. The build runs this to produce the installed files (contrib/meson.build);
 * tests/install/completion.sh checks each script, in its shell, against `--help`, and
 * tests/cli/test-completion.c that the parser takes every option offered. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/completion.h"

typedef enum operand {
        OPERAND_NONE,
        OPERAND_COMMAND, /* a program and its arguments (run, exec after SESSION) */
        OPERAND_FILE,
        OPERAND_WORDS,   /* one of `words` */
} operand;

typedef struct command_def {
        const char *first;  /* "session" */
        const char *second; /* "launch", or NULL for a one-word command */
        cli_command command;
        const char *what;
        operand operand;
        const char *words;
} command_def;

/* "completion" has no options (cli_command_options(HELP) is empty) and is not a cli_command:
 * cli_main() hands it here before the parser sees it. */
static const command_def commands[] = {
        { "run", NULL, CLI_COMMAND_RUN, "run a command in the sandbox", OPERAND_COMMAND, NULL },
        { "explain", NULL, CLI_COMMAND_EXPLAIN, "classify a finished run", OPERAND_NONE, NULL },
        { "probe", NULL, CLI_COMMAND_PROBE, "report which sandbox backends work", OPERAND_NONE,
          NULL },
        { "policy", "show", CLI_COMMAND_POLICY_SHOW, "print the resolved policy and its plan",
          OPERAND_NONE, NULL },
        { "settings", "import", CLI_COMMAND_SETTINGS_IMPORT,
          "print a settings file as a cordon settings file", OPERAND_FILE, NULL },
        { "settings", "trust", CLI_COMMAND_SETTINGS_TRUST,
          "trust the exact content of a project settings file", OPERAND_FILE, NULL },
        { "settings", "untrust", CLI_COMMAND_SETTINGS_UNTRUST,
          "remove the trust record of a project settings file", OPERAND_FILE, NULL },
        { "settings", "trusted", CLI_COMMAND_SETTINGS_TRUSTED,
          "list the trusted project settings files", OPERAND_NONE, NULL },
        { "cache", "list", CLI_COMMAND_CACHE, "list the sandbox-owned tool caches", OPERAND_NONE,
          NULL },
        { "cache", "clear", CLI_COMMAND_CACHE, "clear the tool caches, or those of one tool",
          OPERAND_WORDS, "npm pnpm yarn bun pip uv cargo go gradle maven" },
        { "secret", "set", CLI_COMMAND_SECRET_SET, "store a secret (the value on stdin)",
          OPERAND_NONE, NULL },
        { "secret", "list", CLI_COMMAND_SECRET_LIST, "list the names of the stored secrets",
          OPERAND_NONE, NULL },
        { "secret", "rm", CLI_COMMAND_SECRET_RM, "remove a secret", OPERAND_NONE, NULL },
        { "session", "launch", CLI_COMMAND_SESSION_LAUNCH, "start a cordond session",
          OPERAND_NONE, NULL },
        { "session", "list", CLI_COMMAND_SESSION_LIST, "list the sessions of cordond", OPERAND_NONE,
          NULL },
        { "session", "destroy", CLI_COMMAND_SESSION_DESTROY, "destroy a cordond session",
          OPERAND_NONE, NULL },
        { "exec", NULL, CLI_COMMAND_EXEC, "run a command in a cordond session", OPERAND_NONE,
          NULL },
        { "terminal", NULL, CLI_COMMAND_TERMINAL, "a terminal in a cordond session",
          OPERAND_NONE, NULL },
        { "mcp", NULL, CLI_COMMAND_MCP, "serve the sandbox as MCP tools on stdio", OPERAND_NONE,
          NULL },
        { "version", NULL, CLI_COMMAND_VERSION, "print the version", OPERAND_NONE, NULL },
        { "help", NULL, CLI_COMMAND_HELP, "print the help, or the help of a command", OPERAND_WORDS,
          "run explain probe policy settings cache secret session exec terminal mcp version help" },
        { "completion", NULL, CLI_COMMAND_HELP, "print a shell completion script",
          OPERAND_WORDS, "bash zsh fish" },
};
#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))
#define MAX_OPTIONS 64

/* The values the parser takes for --mode (cordon_mode_from_string, with its aliases), --backend
 * (cordon_backend_from_string; "docker" is an alias kept for old settings, not offered) and
 * --sandbox. tests/cli/test-completion.c parses each. */
const char cli_completion_modes[] =
        "workspace-write read-only danger-full-access chat review plan orchestrate";
const char cli_completion_backends[] = "auto native landlock microvm none";
const char cli_completion_on_off[] = "on off";

static size_t options_of(const command_def *c, cli_option opts[MAX_OPTIONS]) {
        size_t n = cli_command_options(c->command, opts, MAX_OPTIONS);
        return n < MAX_OPTIONS ? n : MAX_OPTIONS; /* tests/cli checks n < MAX_OPTIONS */
}

/* The command's words as one key: "run", "session launch". */
static const char *key_of(const command_def *c, char buf[64]) {
        (void) snprintf(buf, 64, "%s%s%s", c->first, c->second ? " " : "",
                        c->second ? c->second : "");
        return buf;
}

/* Whether commands[i] is the first of its first word's group ("session launch" of the three). */
static bool starts_group(size_t i) {
        return i == 0 || strcmp(commands[i - 1].first, commands[i].first) != 0;
}

/* The first words, once each, space-separated ("run explain ... session ..."). */
static void print_first_words(FILE *f) {
        for (size_t i = 0; i < N_COMMANDS; i++) {
                bool seen = false;
                for (size_t j = 0; j < i; j++)
                        seen = seen || strcmp(commands[j].first, commands[i].first) == 0;
                if (!seen)
                        fprintf(f, "%s%s", i ? " " : "", commands[i].first);
        }
}

static void print_seconds(FILE *f, const char *first) {
        bool any = false;
        for (size_t i = 0; i < N_COMMANDS; i++)
                if (strcmp(commands[i].first, first) == 0 && commands[i].second) {
                        fprintf(f, "%s%s", any ? " " : "", commands[i].second);
                        any = true;
                }
}

/* Option names of `kind` across all commands, once each, as "a|b|c" (bash/zsh case patterns). */
static bool print_names_of_kind(FILE *f, cli_value_kind kind) {
        const char *seen[N_COMMANDS * MAX_OPTIONS];
        size_t n_seen = 0;
        for (size_t i = 0; i < N_COMMANDS; i++) {
                cli_option opts[MAX_OPTIONS];
                size_t n = options_of(&commands[i], opts);
                for (size_t k = 0; k < n; k++) {
                        bool dup = false;
                        for (size_t s = 0; s < n_seen; s++)
                                dup = dup || strcmp(seen[s], opts[k].name) == 0;
                        if (dup || opts[k].value != kind || opts[k].inline_only)
                                continue;
                        fprintf(f, "%s%s", n_seen ? "|" : "", opts[k].name);
                        seen[n_seen++] = opts[k].name;
                }
        }
        return n_seen > 0;
}

/* ---- bash ---------------------------------------------------------------------------------- */

static void bash_value_cases(FILE *f) {
        static const struct {
                cli_value_kind kind;
                const char *action;
        } actions[] = {
                { CLI_VALUE_PATH, "COMPREPLY=($(compgen -f -- \"$cur\")); return" },
                { CLI_VALUE_MODE, "COMPREPLY=($(compgen -W \"$modes\" -- \"$cur\")); return" },
                { CLI_VALUE_BACKEND,
                  "COMPREPLY=($(compgen -W \"$backends\" -- \"$cur\")); return" },
                { CLI_VALUE_ON_OFF, "COMPREPLY=($(compgen -W \"$onoff\" -- \"$cur\")); return" },
                { CLI_VALUE_TEXT, "return" },
        };
        fputs("        case $prev in\n", f);
        for (size_t i = 0; i < sizeof(actions) / sizeof(actions[0]); i++) {
                fputs("        ", f);
                if (print_names_of_kind(f, actions[i].kind))
                        fprintf(f, ") %s ;;\n", actions[i].action);
                else
                        fputs("__none__) ;;\n", f);
        }
        fputs("        esac\n", f);
}

static void bash_command_cases(FILE *f) {
        fputs("        case $cmd in\n", f);
        for (size_t i = 0; i < N_COMMANDS; i++) {
                char key[64];
                cli_option opts[MAX_OPTIONS];
                size_t n = options_of(&commands[i], opts);
                fprintf(f, "        \"%s\") opts=\"", key_of(&commands[i], key));
                for (size_t k = 0; k < n; k++)
                        fprintf(f, "%s%s%s", k ? " " : "", opts[k].name,
                                opts[k].inline_only ? "=" : "");
                fputs("\"", f);
                if (commands[i].operand == OPERAND_WORDS)
                        fprintf(f, "; words=\"%s\"", commands[i].words);
                fprintf(f, "; operand=%d ;;\n", (int) commands[i].operand);
        }
        fputs("        esac\n", f);
}

static void bash_script(FILE *f) {
        fputs("# bash completion for cordon; generated by `cordon completion bash`\n"
              "# (src/cli/completion.c) from the parser's option tables: do not edit.\n"
              "_cordon() {\n"
              "        local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n"
              "        local cmd=${COMP_WORDS[1]-} at=2 opts= words= operand=0\n"
              "        # \"--opt=value\": bash splits at '=' (COMP_WORDBREAKS)\n"
              "        [ \"$prev\" = = ] && prev=${COMP_WORDS[COMP_CWORD-2]}\n", f);
        fprintf(f, "        local modes=\"%s\"\n"
                   "        local backends=\"%s\" onoff=\"%s\"\n",
                cli_completion_modes, cli_completion_backends, cli_completion_on_off);
        fputs("        if [ \"$COMP_CWORD\" -eq 1 ]; then\n"
              "                COMPREPLY=($(compgen -W \"", f);
        print_first_words(f);
        fputs(" --help -h --version\" -- \"$cur\"))\n"
              "                return\n"
              "        fi\n"
              "        case $cmd in\n", f);
        for (size_t i = 0; i < N_COMMANDS; i++)
                if (commands[i].second && starts_group(i)) {
                        fprintf(f, "        %s)\n"
                                   "                if [ \"$COMP_CWORD\" -eq 2 ]; then\n"
                                   "                        COMPREPLY=($(compgen -W \"",
                                commands[i].first);
                        print_seconds(f, commands[i].first);
                        fputs("\" -- \"$cur\"))\n"
                              "                        return\n"
                              "                fi\n"
                              "                cmd=\"$cmd ${COMP_WORDS[2]}\" at=3 ;;\n", f);
                }
        fputs("        esac\n", f);
        bash_value_cases(f);
        bash_command_cases(f);
        fputs("        case $cur in\n"
              "        -*) COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
              "            [[ ${COMPREPLY-} == *= ]] && compopt -o nospace\n"
              "            return ;;\n"
              "        esac\n"
              "        case $operand in\n"
              "        # the program; its arguments fall back to file names (-o default)\n"
              "        1) [[ $COMP_CWORD -eq $at || $prev == -* ]] &&\n"
              "                   COMPREPLY=($(compgen -c -- \"$cur\")) ;;\n"
              "        2) COMPREPLY=($(compgen -f -- \"$cur\")) ;;\n"
              "        3) [ \"$COMP_CWORD\" -eq \"$at\" ] &&\n"
              "                   COMPREPLY=($(compgen -W \"$words\" -- \"$cur\")) ;;\n"
              "        esac\n"
              "}\n"
              "complete -o default -F _cordon cordon\n", f);
}

/* ---- zsh ----------------------------------------------------------------------------------- */

/* One _arguments spec per option: repeatable, the value after '=' or in the next word. */
static void zsh_option(FILE *f, const cli_option *o) {
        static const char *const actions[] = {
                [CLI_VALUE_NONE] = "",
                [CLI_VALUE_TEXT] = ":value: ",
                [CLI_VALUE_PATH] = ":path:_files",
        };
        fprintf(f, "                        '%s%s%s", o->inline_only ? "" : "*", o->name,
                o->value == CLI_VALUE_NONE ? "" : o->inline_only ? "=-" : "=");
        switch (o->value) {
        case CLI_VALUE_MODE:
                fprintf(f, ":mode:(%s)", cli_completion_modes);
                break;
        case CLI_VALUE_BACKEND:
                fprintf(f, ":backend:(%s)", cli_completion_backends);
                break;
        case CLI_VALUE_ON_OFF:
                fprintf(f, ":sandbox:(%s)", cli_completion_on_off);
                break;
        case CLI_VALUE_NONE:
        case CLI_VALUE_TEXT:
        case CLI_VALUE_PATH:
        default:
                fputs(actions[o->value], f);
                break;
        }
        fputs("' \\\n", f);
}

static void zsh_command_case(FILE *f, const command_def *c) {
        char key[64];
        cli_option opts[MAX_OPTIONS];
        size_t n = options_of(c, opts);
        fprintf(f, "        (\"%s\")\n"
                   "                _arguments -S \\\n", key_of(c, key));
        for (size_t k = 0; k < n; k++)
                zsh_option(f, &opts[k]);
        if (c->operand == OPERAND_COMMAND)
                fputs("                        '*::command:_normal'\n", f);
        else if (c->operand == OPERAND_FILE)
                fputs("                        ':file:_files'\n", f);
        else if (c->operand == OPERAND_WORDS)
                fprintf(f, "                        ':word:(%s)'\n", c->words);
        else
                fputs("                        '*:argument: '\n", f);
        fputs("                ;;\n", f);
}

static void zsh_describe(FILE *f, const char *first) {
        fputs("                local -a subs=(", f);
        for (size_t i = 0; i < N_COMMANDS; i++)
                if (first ? strcmp(commands[i].first, first) == 0 && commands[i].second
                          : starts_group(i))
                        fprintf(f, "'%s:%s' ", first ? commands[i].second : commands[i].first,
                                first || !commands[i].second ? commands[i].what
                                                             : "a group of commands");
        fputs(")\n", f);
}

static void zsh_script(FILE *f) {
        fputs("#compdef cordon\n"
              "# zsh completion for cordon; generated by `cordon completion zsh`\n"
              "# (src/cli/completion.c) from the parser's option tables: do not edit.\n"
              "_cordon() {\n"
              "        local cmd=$words[2] n=2\n"
              "        if (( CURRENT == 2 )); then\n", f);
        zsh_describe(f, NULL);
        fputs("                _describe -t commands 'cordon command' subs\n"
              "                compadd -- --help -h --version\n"
              "                return\n"
              "        fi\n"
              "        case $cmd in\n", f);
        for (size_t i = 0; i < N_COMMANDS; i++)
                if (commands[i].second && starts_group(i)) {
                        fprintf(f, "        (%s)\n"
                                   "                if (( CURRENT == 3 )); then\n",
                                commands[i].first);
                        zsh_describe(f, commands[i].first);
                        fprintf(f, "                _describe -t commands "
                                   "'cordon %s command' subs\n"
                                   "                return\n"
                                   "                fi\n"
                                   "                cmd=\"$cmd $words[3]\" n=3 ;;\n",
                                commands[i].first);
                }
        fputs("        esac\n"
              "        # _arguments takes the command's own words, the command name first.\n"
              "        words=(\"${(@)words[n,-1]}\")\n"
              "        (( CURRENT -= n - 1 ))\n"
              "        case $cmd in\n", f);
        for (size_t i = 0; i < N_COMMANDS; i++)
                zsh_command_case(f, &commands[i]);
        fputs("        esac\n"
              "}\n"
              "if [ \"$funcstack[1]\" = _cordon ]; then\n"
              "        _cordon \"$@\"\n"
              "else\n"
              "        compdef _cordon cordon\n"
              "fi\n", f);
}

/* ---- fish ---------------------------------------------------------------------------------- */

static void fish_option(FILE *f, const char *key, const cli_option *o) {
        if (o->name[1] != '-')
                fprintf(f, "complete -c cordon -n '__cordon_is \"%s\"' -s %s", key, o->name + 1);
        else
                fprintf(f, "complete -c cordon -n '__cordon_is \"%s\"' -l %s", key, o->name + 2);
        switch (o->value) {
        case CLI_VALUE_PATH:
                fputs(" -r -F", f);
                break;
        case CLI_VALUE_TEXT:
                fputs(" -x", f);
                break;
        case CLI_VALUE_MODE:
                fprintf(f, " -x -a '%s'", cli_completion_modes);
                break;
        case CLI_VALUE_BACKEND:
                fprintf(f, " -x -a '%s'", cli_completion_backends);
                break;
        case CLI_VALUE_ON_OFF:
                fprintf(f, " -x -a '%s'", cli_completion_on_off);
                break;
        case CLI_VALUE_NONE:
        default:
                break;
        }
        fputs("\n", f);
}

static void fish_command(FILE *f, const command_def *c) {
        char key[64];
        cli_option opts[MAX_OPTIONS];
        size_t n = options_of(c, opts);
        key_of(c, key);
        if (c->second)
                fprintf(f, "complete -c cordon -n '__cordon_sub %s' -a %s -d '%s'\n", c->first,
                        c->second, c->what);
        for (size_t k = 0; k < n; k++)
                fish_option(f, key, &opts[k]);
        if (c->operand == OPERAND_COMMAND)
                fprintf(f, "complete -c cordon -n '__cordon_is \"%s\"' "
                           "-a '(__fish_complete_command)'\n",
                        key);
        else if (c->operand == OPERAND_FILE)
                fprintf(f, "complete -c cordon -n '__cordon_is \"%s\"' -F\n", key);
        else if (c->operand == OPERAND_WORDS)
                fprintf(f, "complete -c cordon -n '__cordon_is \"%s\"' -a '%s'\n", key, c->words);
}

static void fish_script(FILE *f) {
        fputs("# fish completion for cordon; generated by `cordon completion fish`\n"
              "# (src/cli/completion.c) from the parser's option tables: do not edit.\n"
              "# The command on the line: run, session launch, ...\n"
              "function __cordon_command\n"
              "        set -l w (commandline -opc)\n"
              "        set -q w[2]; or return 1\n"
              "        switch $w[2]\n"
              "        case ", f);
        for (size_t i = 0; i < N_COMMANDS; i++)
                if (commands[i].second && starts_group(i))
                        fprintf(f, "%s ", commands[i].first);
        fputs("\n"
              "                set -q w[3]; or return 1\n"
              "                echo \"$w[2] $w[3]\"\n"
              "        case '*'\n"
              "                echo $w[2]\n"
              "        end\n"
              "end\n"
              "function __cordon_is\n"
              "        set -l c (__cordon_command); and test \"$c\" = \"$argv[1]\"\n"
              "end\n"
              "function __cordon_sub\n"
              "        set -l w (commandline -opc)\n"
              "        test (count $w) -eq 2; and test \"$w[2]\" = \"$argv[1]\"\n"
              "end\n"
              "complete -c cordon -f\n"
              "complete -c cordon -n 'test (count (commandline -opc)) -eq 1' -s h -l help\n"
              "complete -c cordon -n 'test (count (commandline -opc)) -eq 1' -l version\n", f);
        for (size_t i = 0; i < N_COMMANDS; i++)
                if (starts_group(i))
                        fprintf(f, "complete -c cordon -n 'test (count (commandline -opc)) -eq 1' "
                                   "-a %s -d '%s'\n", commands[i].first,
                                commands[i].second ? "a group of commands" : commands[i].what);
        for (size_t i = 0; i < N_COMMANDS; i++)
                fish_command(f, &commands[i]);
}

int cli_cmd_completion(int argc, char *argv[]) {
        static const char usage[] = "Usage: cordon completion bash|zsh|fish\n"
                                    "\n"
                                    "Prints the shell's completion script for cordon on stdout.\n";
        cordon_error err = { .code = CORDON_USAGE };
        if (argc == 3 && (strcmp(argv[2], "--help") == 0 || strcmp(argv[2], "-h") == 0))
                return fputs(usage, stdout) < 0 || fflush(stdout) != 0 ? 125 : 0;
        if (argc != 3) {
                (void) snprintf(err.message, sizeof(err.message),
                                "'cordon completion' needs one shell: bash, zsh or fish");
                return cli_fatal(&err);
        }
        if (strcmp(argv[2], "bash") == 0)
                bash_script(stdout);
        else if (strcmp(argv[2], "zsh") == 0)
                zsh_script(stdout);
        else if (strcmp(argv[2], "fish") == 0)
                fish_script(stdout);
        else {
                (void) snprintf(err.message, sizeof(err.message),
                                "unknown shell '%s'; use bash, zsh or fish", CLI_QUOTE(argv[2]));
                return cli_fatal(&err);
        }
        if (fflush(stdout) != 0 || ferror(stdout)) {
                err = (cordon_error) { .code = CORDON_LAUNCH_FAILED, .sys_errno = errno };
                (void) snprintf(err.message, sizeof(err.message),
                                "cannot write to standard output: %s", strerror(errno));
                return cli_fatal(&err);
        }
        return 0;
}
