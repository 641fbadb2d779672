/* SPDX-License-Identifier: Apache-2.0 */
/* Seatbelt's refusals, read back (docs/design/seatbelt.md, "Violation reports"). Every deny rule
 * of a cordon profile carries `(with message "cordon-deny RULE SESSION")`; the kernel's Sandbox
 * sender logs each refusal with that message, and `log stream --style ndjson` prints it as one
 * JSON object per line. seatbelt_log_parse() turns one such line into a violation: a pure
 * function of its input (no I/O, no clock), because the line is untrusted (it names paths the
 * command chose) and must be tested and fuzzed where there is no macOS log to read. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cordon/cordon.h"

/* The rules a profile tags its denials with. */
typedef enum seatbelt_rule {
        SBR_PROCESS,     /* signals, task ports, information of other processes */
        SBR_NETWORK,     /* every connection but the session's proxy and allowed sockets */
        SBR_SECRET,      /* the secret set and denyRead */
        SBR_WRITE,       /* outside the writable roots */
        SBR_READ_ONLY,   /* a read-only bind */
        SBR_PROTECTED,   /* the write-deny set */
        SBR_NESTED_GIT,  /* hooks and config of repositories beneath a writable root */
        SBR_RENAME,      /* an ancestor of a denied path or read-only bind */
        SBR_CREATE_NAME, /* denyCreateNames */
        SBR_EXEC,        /* a program in a writable place */
        SBR_PROGRAM,     /* a program that acts outside the sandbox */
        SBR_SERVICE,     /* Apple events, LaunchServices, preference writes, jobs, pasteboard */
        SBR_TTY,         /* a terminal the command did not open itself */
        SBR_COUNT_,
} seatbelt_rule;

/* The word a rule is tagged with in the profile ("secret", "create-name", ...). */
const char *seatbelt_rule_name(seatbelt_rule r);

#define SEATBELT_TAG_PREFIX "cordon-deny "
/* The session word of a profile made for no session (`cordon policy show --seatbelt` of a policy
 * without a sessionId). */
#define SEATBELT_NO_SESSION "-"

typedef struct seatbelt_violation {
        seatbelt_rule rule;
        char process[256];   /* the process's name as the kernel logs it */
        long pid;
        uint64_t count;      /* the kernel's "deny(N)": refusals this line stands for */
        char operation[64];  /* Seatbelt's operation: file-write-create, process-exec, ... */
        char target[4096];   /* the path, address or service, as logged (may be empty) */
} seatbelt_violation;

/* One line of `log stream --style ndjson` (without its '\n'): 1 and *ret filled when it is a
 * Sandbox refusal tagged with `session` by a cordon rule; 0 when it is something else (another
 * sender, another session, an untagged refusal, the stream's header); -EINVAL when it claims to
 * be one but is malformed. Only the Sandbox kernel extension's lines count (senderImagePath),
 * so a command that writes its own log messages cannot forge a refusal. */
int seatbelt_log_parse(const char *line, size_t len, const char *session, seatbelt_violation *ret);

/* The violation event of a parsed line (action, syscall, target, rule, count), pointing into `v`
 * and static strings: valid while `v` is. */
void seatbelt_violation_event(const seatbelt_violation *v, cordon_violation *ret);

/* ---- a stream of lines ---------------------------------------------------------------------- */

#define SEATBELT_LOG_LINE_MAX 65536 /* longer lines are skipped whole (and counted as bad) */

typedef void (*seatbelt_violation_fn)(void *userdata, const seatbelt_violation *v);

/* Splits the bytes `log stream` writes into lines and parses each (no I/O: the caller reads).
 * Initialise with seatbelt_log_reader_init(); heap-allocate it (it holds a line buffer). */
typedef struct seatbelt_log_reader {
        const char *session;
        seatbelt_violation_fn fn;
        void *userdata;
        unsigned violations; /* lines that were this session's refusals */
        unsigned bad;        /* malformed or over-long lines */
        bool skipping;       /* inside an over-long line, until its '\n' */
        size_t len;
        char buf[SEATBELT_LOG_LINE_MAX];
} seatbelt_log_reader;

void seatbelt_log_reader_init(seatbelt_log_reader *r, const char *session,
                              seatbelt_violation_fn fn, void *userdata);
/* Hands every complete line in `data` to the parser, `fn` for each violation; keeps a partial
 * last line for the next call. */
void seatbelt_log_feed(seatbelt_log_reader *r, const char *data, size_t len);
