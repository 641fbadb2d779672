/* SPDX-License-Identifier: Apache-2.0 */
/* The denial decoder (docs/design/errors.md; public API: cordon_explanation_* in
 * include/cordon/cordon.h).
 *
 * Three files, one mechanism each:
 *   explain.c         ingestion (events lines, stderr text, exit status) and the classification;
 *   explain-advice.c  per violation: a short phrase, the policy change that would allow it (or
 *                     why none can), table-driven by the violation's action;
 *   explain-render.c  the result as JSON (the `cordon run --json` summary and `cordon explain
 *                     --json`) and as text for people.
 *
 * Every count and size is bounded (constants below): the inputs come from runs of a hostile
 * command, which chooses how many refusals it provokes and what it prints. Every string taken
 * from the input is cleaned once on the way in (explain_clean_text) so neither the JSON nor the
 * text output can carry control characters or invalid UTF-8 onto a terminal. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "cordon/cordon.h"

#define EXPLAIN_EVENT_LINE_MAX (64u * 1024u) /* longer than any line cordon emits (32 KiB) */
#define EXPLAIN_VIOLATIONS_MAX 256u          /* distinct entries kept; more are only counted */
#define EXPLAIN_STDERR_LINE_MAX 4096u        /* per scanned stderr line; longer lines overlap */
#define EXPLAIN_QUOTE_MAX 240u               /* bytes of a stderr line quoted in a hint */
#define EXPLAIN_TEXT_MAX 2048u               /* any other string taken from the input */

/* One kind of inferred hint (explain.c's table); the index is the kind. */
typedef struct explain_hint {
        uint64_t count;                  /* stderr lines that matched */
        char line[EXPLAIN_QUOTE_MAX + 4]; /* the first such line, cleaned and cut */
} explain_hint;

#define EXPLAIN_HINT_KINDS 8u

/* A line scanner over one stderr source: the one the caller hands over (cordon's own stderr,
 * fatal line included) or the one rebuilt from `stderr` capture events (the command's only). */
typedef struct explain_scan {
        bool used;
        char line[EXPLAIN_STDERR_LINE_MAX];
        size_t len;
        bool overlong;           /* the current line did not fit: it cannot be the fatal line */
        unsigned line_kinds;     /* hint kinds already counted for the current line */
        char last[EXPLAIN_STDERR_LINE_MAX]; /* the last complete non-empty line */
        size_t last_len;         /* 0: none, or it was overlong */
        explain_hint hints[EXPLAIN_HINT_KINDS];
        /* A line of the command's said something a refusal could have caused (a hint, or words
         * such as "denied", "refused", "proxy", "403"): without one, refusals are not taken for
         * the cause of a failure (explain.c, refusal_plausible()). */
        bool refusal_words;
} explain_scan;

typedef struct explain_violation {
        char *action, *target, *rule, *syscall; /* cleaned, never NULL */
        char *reason;            /* raw.reason (a deny entry's), cleaned; "" when none */
        char *method, *path;     /* raw.method, raw.path (network-request), cleaned; "" when none */
        char *ref;               /* raw.ref (a push the git push gateway refused), or "" */
        uint64_t count;
        /* Filled by explain_advise(); owned. change is NULL when no policy change allows it. */
        char *summary, *change, *why;
        bool network;            /* a network refusal: the proxy-variables note applies */
        cordon_explained_violation pub;
} explain_violation;

typedef enum explain_terminal {
        TERMINAL_NONE = 0,
        TERMINAL_EXIT,
        TERMINAL_KILLED,
        TERMINAL_ERROR,
} explain_terminal;

struct cordon_explanation {
        /* ---- input ---- */
        char *carry;             /* an events line without its '\n' yet */
        size_t carry_len;
        uint64_t line_no;        /* events lines seen */
        bool has_status;
        int status;
        explain_scan given;      /* cordon_explanation_add_stderr() */
        explain_scan captured;   /* stderr capture events */
        /* ---- the run, as its events tell it (a "starting" event resets this part) ---- */
        bool started;
        char *session_id, *requested_backend, *backend; /* NULL when not told */
        int64_t start_ms, end_ms; /* -1 when not told */
        explain_terminal terminal;
        int exit_code;
        char *signal;            /* "SIGKILL" or NULL */
        char *killed_reason;     /* "timeout", "oom", "manual", "" when unknown */
        char *error_code;        /* "LAUNCH_FAILED" ... */
        char *error_message;
        bool error_from_stderr;  /* the error came from the fatal line, not an event */
        explain_violation *v;
        size_t n_v;
        uint64_t v_not_listed;   /* refusals beyond EXPLAIN_VIOLATIONS_MAX distinct entries */
        /* ---- result ---- */
        bool finished;
        cordon_outcome outcome;
        int result_exit_code;    /* -1 when unknown */
        char *reason;            /* one sentence */
        char *killed_change;     /* the change a limit kill asks for, or NULL */
        bool network_note;
        const explain_scan *hint_source; /* the scan whose hints are reported, or NULL */
};

/* A hint kind: the words looked for, a stable name, and what it suggests. */
typedef struct explain_hint_def {
        const char *needle;
        const char *kind;
        const char *note;
        bool network;
} explain_hint_def;
extern const explain_hint_def explain_hint_defs[EXPLAIN_HINT_KINDS];

/* ---- explain-advice.c ---- */

/* Fills v->summary, change, why, network for v's action. Returns 0 or -ENOMEM. */
int explain_advise(explain_violation *v);
/* The change a `killed` reason asks for ("--timeout DURATION ..."), or NULL. Static storage. */
const char *explain_killed_change(const char *reason);
/* `s` as one shell word: unchanged when it is made of safe characters only, else in single
 * quotes with every ' written '\''. Caller frees; NULL on allocation failure. */
char *explain_shell_quote(const char *s);

/* ---- explain-render.c ---- */

/* Copies at most `max` bytes of s[0..len) into a new string, replacing control characters,
 * DEL, C1 controls and invalid UTF-8 with '?' and cutting at a character boundary with "..."
 * when longer. Caller frees; NULL on allocation failure. */
char *explain_clean_text(const char *s, size_t len, size_t max);
