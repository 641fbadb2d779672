/* SPDX-License-Identifier: Apache-2.0 */
/* The command line of `cordon`, parsed into a plain struct: no globals, no I/O, no filesystem
 * access (relative paths are made absolute against the `cwd` string the caller passes). Values
 * are checked for syntax here (sizes, durations, modes, backends); the policy setters check the
 * rest when cli-policy.c applies them. Fuzzed by fuzz/fuzz-cli-args.c. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cordon/cordon.h"

typedef enum cli_command {
        CLI_COMMAND_HELP = 0,    /* cordon, cordon help [TOPIC], --help, -h, CMD --help */
        CLI_COMMAND_VERSION,     /* cordon version, --version */
        CLI_COMMAND_RUN,         /* cordon run [OPTIONS] [--] CMD [ARG...] */
        CLI_COMMAND_PROBE,       /* cordon probe [--json] */
        CLI_COMMAND_POLICY_SHOW, /* cordon policy show [--json | --seatbelt] [OPTIONS] */
        CLI_COMMAND_EXPLAIN,     /* cordon explain [--events FILE] [--status N] [--stderr FILE]
                                  * [--json] */
        CLI_COMMAND_SETTINGS_IMPORT, /* cordon settings import FILE */
        CLI_COMMAND_SETTINGS_TRUST,   /* cordon settings trust [PATH] */
        CLI_COMMAND_SETTINGS_UNTRUST, /* cordon settings untrust [PATH] */
        CLI_COMMAND_SETTINGS_TRUSTED, /* cordon settings trusted [--json] */
        CLI_COMMAND_SESSION_LAUNCH,  /* cordon session launch [POLICY OPTIONS] [--socket PATH] */
        CLI_COMMAND_SESSION_LIST,    /* cordon session list [--json] [--socket PATH] */
        CLI_COMMAND_SESSION_DESTROY, /* cordon session destroy [--socket PATH] SESSION */
        CLI_COMMAND_EXEC,            /* cordon exec SESSION [--cwd DIR] [--env NAME=VALUE]...
                                      * [--socket PATH] [--] CMD [ARG...] */
        CLI_COMMAND_TERMINAL,        /* cordon terminal [--native] [--socket PATH] SESSION */
        CLI_COMMAND_CACHE,           /* cordon cache list | cordon cache clear [TOOL] */
        CLI_COMMAND_MCP,             /* cordon mcp [POLICY OPTIONS]: an MCP server on stdio */
        CLI_COMMAND_SECRET_SET,      /* cordon secret set NAME (the value on stdin) */
        CLI_COMMAND_SECRET_LIST,     /* cordon secret list [--json] */
        CLI_COMMAND_SECRET_RM,       /* cordon secret rm NAME */
} cli_command;

/* The policy flags, applied to the session layer in the order given. */
typedef enum cli_flag {
        CLI_FLAG_POLICY = 0,       /* path: a JSON policy file */
        CLI_FLAG_MODE,             /* mode */
        CLI_FLAG_WRITABLE,         /* path */
        CLI_FLAG_READ_ONLY,        /* path */
        CLI_FLAG_PROTECT,          /* path */
        CLI_FLAG_RUNNER_STATE_DIR, /* path */
        CLI_FLAG_DENY_READ,        /* path */
        CLI_FLAG_DENY_WRITE,       /* path */
        CLI_FLAG_DENY_CREATE_NAME, /* text: file-name glob */
        CLI_FLAG_ALLOW_CREATE_NAME, /* text: file-name glob */
        CLI_FLAG_ALLOW_CREATE_PATH, /* path (or path glob) */
        CLI_FLAG_ENV_PASS,         /* text: variable name */
        CLI_FLAG_ENV_SET,          /* text: NAME, text2: VALUE */
        CLI_FLAG_ENV_SCRUB,        /* text: variable-name glob */
        CLI_FLAG_WORKDIR,          /* path */
        CLI_FLAG_SESSION_ID,       /* text */
        CLI_FLAG_TIMEOUT,          /* number: milliseconds */
        CLI_FLAG_MEMORY,           /* number: bytes */
        CLI_FLAG_PIDS,             /* number */
        CLI_FLAG_CPU,              /* number: seconds */
        CLI_FLAG_CPUS,             /* number: the microvm backend's vCPUs */
        CLI_FLAG_TMP_SIZE,         /* number: bytes */
        CLI_FLAG_SHM_SIZE,         /* number: bytes */
        CLI_FLAG_NO_NETWORK,       /* no value */
        CLI_FLAG_ALLOW_DOMAIN,     /* text: host pattern */
        CLI_FLAG_DENY_DOMAIN,      /* text: host pattern */
        CLI_FLAG_RESOLVE,          /* text: NAME, text2: ADDRESS */
        CLI_FLAG_UPSTREAM_PROXY,   /* text: the egressUpstream URL (may hold a password) */
        CLI_FLAG_BLOCK_READS,      /* no value: blockReadsOutsideWorkdirs */
        CLI_FLAG_ALLOW_READ,       /* path: allowRead */
        CLI_FLAG_EGRESS_ASK,       /* no value: egressMode "ask" */
        CLI_FLAG_ASK_TIMEOUT,      /* number: egressAskTimeout, milliseconds */
        CLI_FLAG_MICROVM_ACCEL,    /* text: microvm.accel, kvm or tcg */
        _CLI_FLAG_MAX,
} cli_flag;

typedef struct cli_setting {
        cli_flag flag;
        char *text;      /* owned; paths are absolute; limits keep the text as typed */
        char *text2;     /* owned; --env-set's VALUE */
        uint64_t number;
        cordon_mode mode;
} cli_setting;

typedef struct cli_args {
        cli_command command;
        cli_command help_topic;  /* HELP: the command asked about; HELP = general help */
        bool json;               /* probe, policy show */
        bool seatbelt;           /* policy show --seatbelt: the macOS Seatbelt profile */
        bool sandbox_set;        /* --sandbox given */
        bool sandbox;            /* its value (true = on) */
        bool backend_set;
        cordon_backend backend;  /* AUTO unless --backend */
        char *events_path;       /* run --events FILE: owned, absolute; NULL otherwise */
        int events_fd;           /* run --events fd:N: N (>= 3); -1 otherwise */
        char *json_path;         /* run --json=FILE: owned, absolute; NULL otherwise */
        int json_fd;             /* run --json=fd:N: N (>= 3); -1 otherwise */
        bool quiet;              /* run --quiet: no refusal lines on a terminal */
        bool capture;            /* run --capture: stdout/stderr also as events */
        char *stderr_path;       /* explain --stderr FILE: owned, absolute */
        char *analytics_path;    /* run --analytics FILE: owned, absolute */
        bool status_set;         /* explain --status N given */
        int status;              /* its value, 0-255 */
        cli_setting *settings;   /* owned, in command-line order */
        size_t n_settings;
        char **argv;             /* run, exec: the command, owned and NULL-terminated; else NULL */
        char **settings_files;   /* run, policy show: each --settings FILE (owned, absolute) */
        size_t n_settings_files;
        bool explain;            /* policy show --explain: where each value came from */
        char *import_path;       /* settings import FILE: owned, absolute */
        char *trust_target;      /* settings trust|untrust PATH: owned, absolute; NULL = cwd */
        char *socket_path;       /* session, exec --socket PATH: owned, absolute; NULL = default */
        char *session_id;        /* session destroy, exec: SESSION, owned, non-empty */
        char *exec_cwd;          /* exec --cwd DIR: owned, absolute */
        char **exec_env;         /* exec --env NAME=VALUE (owned, in order, NAME non-empty) */
        size_t n_exec_env;
        bool terminal_native;    /* terminal --native: inside the session's sandbox */
        bool cache_clear;        /* cache clear (else cache list) */
        char *cache_tool;        /* cache clear TOOL: owned; NULL = every cache */
        char *secret_name;       /* secret set|rm NAME: owned, a valid secret name */
} cli_args;

/* The option's spelling ("--writable") and what a good value looks like, for messages. */
const char *cli_flag_name(cli_flag flag);
const char *cli_flag_hint(cli_flag flag);

/* `s` made fit for a one-line message in `buf`: control and non-ASCII bytes become '?' (a hostile
 * argument must not forge extra diagnostic lines); long values are cut with "...". */
const char *cli_quote(const char *s, char *buf, size_t size);
#define CLI_QUOTE(s) cli_quote((s), (char[160]) { 0 }, 160)

/* What an option's value is, for `cordon completion` (src/cli/completion.c). */
typedef enum cli_value_kind {
        CLI_VALUE_NONE = 0, /* a switch */
        CLI_VALUE_TEXT,     /* a value nothing can guess: a name, a number, a pattern */
        CLI_VALUE_PATH,     /* a file or directory */
        CLI_VALUE_MODE,     /* --mode */
        CLI_VALUE_BACKEND,  /* --backend */
        CLI_VALUE_ON_OFF,   /* --sandbox */
} cli_value_kind;

typedef struct cli_option {
        const char *name;     /* "--writable", "-h" */
        cli_value_kind value;
        bool inline_only;     /* the value only as "--name=VALUE" (run's --json=FILE|fd:N) */
} cli_option;

/* The options the parser accepts after `command`'s words (CLI_COMMAND_SESSION_LAUNCH: after
 * "session launch"), read from the parser's own tables: fills at most `max` entries of `ret` and
 * returns how many there are. */
size_t cli_command_options(cli_command command, cli_option *ret, size_t max);

/* Parses argv (argv[0] is the program name and is ignored). `cwd` must be absolute. Returns 0, or
 * -EINVAL with `err` set: CORDON_USAGE for unknown options, missing values, a missing command or
 * conflicting options ("<what> (see 'cordon run --help')"); CORDON_POLICY_INVALID for a bad value
 * ("--flag: <what>; <hint>"). On failure *ret is left empty. -ENOMEM on allocation failure. */
int cli_args_parse(int argc, char *const argv[], const char *cwd, cli_args *ret,
                   cordon_error *err);

/* Frees what cli_args_parse allocated; leaves *a empty (events_fd and json_fd -1). Safe on a
 * zeroed struct. */
void cli_args_done(cli_args *a);
