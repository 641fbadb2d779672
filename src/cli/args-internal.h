/* SPDX-License-Identifier: Apache-2.0 */
/* What the two halves of the argument parser share: args.c (messages, values, the option tables
 * and the options loop) and args-commands.c (the commands and their subcommands). Not part of
 * the CLI's interface (args.h). */
#pragma once

#include "cli/args.h"

#define CLI_PRINTF(a, b) __attribute__((format(printf, a, b)))

typedef struct parser {
        int argc;
        char *const *argv;
        int i;           /* next argv index */
        const char *cwd;
        const char *see; /* the help to point at in usage errors */
        bool dashdash;   /* parse_options consumed a "--" */
        cli_args *out;
        cordon_error *err;
} parser;

typedef enum extra_opt {
        EXTRA_HELP,
        EXTRA_SETTINGS,
        EXTRA_SHOW_EXPLAIN,
        EXTRA_JSON,
        EXTRA_SANDBOX,
        EXTRA_BACKEND,
        EXTRA_EVENTS,
        EXTRA_SEATBELT,
        EXTRA_QUIET,
        EXTRA_CAPTURE,
        EXTRA_STATUS,
        EXTRA_STDERR,
        EXTRA_SOCKET,
        EXTRA_CWD,
        EXTRA_ENV,
        EXTRA_NATIVE,
        EXTRA_ANALYTICS,
} extra_opt;

/* What a command lets cli_parse_options() take. */
#define ALLOW_POLICY (1u << 0)  /* the policy flags, --sandbox, --backend */
#define ALLOW_JSON (1u << 1)
#define ALLOW_POSITIONAL (1u << 2) /* stop at the first non-option (run's command) */
#define ALLOW_EVENTS (1u << 3)     /* run's --events */
#define ALLOW_RUN_REPORT (1u << 5) /* run's --json=DEST, --capture */
#define ALLOW_QUIET (1u << 14)     /* run, exec: --quiet */
#define ALLOW_EXPLAIN (1u << 6)    /* explain's --status, --stderr */
#define ALLOW_SEATBELT (1u << 4)   /* policy show --seatbelt */
#define ALLOW_SHOW_EXPLAIN (1u << 12) /* policy show --explain */
#define ALLOW_SOCKET (1u << 7)     /* session, exec: --socket */
#define ALLOW_EXEC (1u << 8)       /* exec's --cwd, --env */
#define ALLOW_TERMINAL (1u << 13)  /* terminal's --native */
#define ALLOW_ANALYTICS (1u << 15) /* run, session launch: --analytics */

int cli_set_error(cordon_error *err, cordon_code code, const char *fmt, ...) CLI_PRINTF(3, 4);
/* A USAGE error pointing at p->see; returns -EINVAL. */
int cli_usage(parser *p, const char *fmt, ...) CLI_PRINTF(2, 3);
/* `in` made absolute against `cwd` (a copy in *ret). */
int cli_make_absolute(const char *cwd, const char *in, char **ret);
int cli_apply_extra(parser *p, extra_opt opt, const char *value);
/* Options until "--", the first positional (with ALLOW_POSITIONAL) or the end. */
int cli_parse_options(parser *p, unsigned allow);
/* Flags that exclude each other. */
int cli_check_conflicts(parser *p);
