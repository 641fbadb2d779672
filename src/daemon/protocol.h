/* SPDX-License-Identifier: Apache-2.0 */
/* The cordond wire protocol (docs/protocol.md): newline-delimited JSON over a Unix stream socket.
 * This module only parses and builds lines: no sockets, no sessions. Every request is validated
 * completely here (types, ranges, unknown keys) before any handler sees it, so handlers work on
 * typed data and a malformed request never half-runs.
 *
 *   request   {"v": 1, "id": 7, "method": "session.exec", "params": {...}}
 *   response  {"v": 1, "id": 7, "result": {...}}   or   {"v": 1, "id": 7, "error": {"code", "message"}}
 *   event     {"v": 1, "id": 7, "event": {...}}    (streamed by session.exec before its response)
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cordon/cordon.h"

#define PROTO_VERSION 1
/* Bytes in one request line, '\n' excluded: room for an fs.write of PROTO_FS_CONTENT_MAX bytes
 * in base64 (4/3 of it) and its envelope. */
#define PROTO_LINE_MAX (12 * 1024 * 1024)
#define PROTO_ARGV_MAX 4096           /* arguments of one exec */
#define PROTO_ENV_MAX 4096            /* variables set by one exec */
#define PROTO_STDIN_MAX (1024 * 1024) /* bytes of stdin given inline */
#define PROTO_ID_MAX 256              /* bytes of a session id */
#define PROTO_FS_CONTENT_MAX (8 * 1024 * 1024) /* bytes of file content in one fs.* request */

typedef enum proto_method {
        PROTO_PROBE,
        PROTO_SESSION_LAUNCH,
        PROTO_SESSION_EXEC,
        PROTO_SESSION_LIST,
        PROTO_SESSION_DESTROY,
        PROTO_SESSION_SUSPEND,
        PROTO_SESSION_RESUME,
        PROTO_FS_READ,
        PROTO_FS_WRITE,
        PROTO_FS_EDIT,
        PROTO_FS_LIST,
        PROTO_FS_STAT,
        PROTO_SESSION_TERMINAL,
        PROTO_TERMINAL_INPUT,
        PROTO_TERMINAL_RESIZE,
        PROTO_TERMINAL_CLOSE,
        PROTO_SESSION_EGRESS_ANSWER,
        _PROTO_METHOD_MAX,
} proto_method;

const char *proto_method_name(proto_method m);

/* session.launch: the session's policy layer (a policy document, docs/policy.md) and backend. */
typedef struct proto_launch {
        char *policy_json;      /* the "policy" member re-serialised, or NULL (defaults only) */
        cordon_backend backend; /* "native" (default), "landlock", "none", ... */
        char *workdir;          /* absolute; the session's default working directory */
        char *analytics;        /* absolute or NULL: the session's analytics file */
} proto_launch;

/* session.exec */
typedef struct proto_exec {
        char session_id[PROTO_ID_MAX + 1];
        char **argv;            /* NULL-terminated, n_argv >= 1 */
        size_t n_argv;
        char *cwd;              /* absolute or NULL */
        char **env;             /* "NAME=value", NULL-terminated, may be empty */
        size_t n_env;
        char *stdin_data;       /* may be NULL */
        size_t stdin_len;
        char *policy_override;  /* a policy document for this exec only, or NULL */
        bool escalation_approved; /* the override widens the session policy on purpose */
        bool command_approved;  /* the user approved what the command policy's "ask" names */
} proto_exec;

/* How file content travels: "utf-8" (a JSON string) or "base64" (RFC 4648, padded). */
typedef enum proto_encoding {
        PROTO_ENCODING_DEFAULT = 0, /* not given: fs.write utf-8; fs.read text when valid UTF-8 */
        PROTO_ENCODING_UTF8,
        PROTO_ENCODING_BASE64,
} proto_encoding;

/* fs.read, fs.write, fs.edit, fs.list, fs.stat (fs-rpc.c, on cordon_fs_* of cordon.h). */
typedef struct proto_fs {
        char session_id[PROTO_ID_MAX + 1];
        char *path;             /* absolute, as given (cordon_fs_* normalises it) */
        proto_encoding encoding;/* fs.read: of the answer; fs.write: of "content" */
        char *content;          /* fs.write: the bytes, NUL-terminated (base64: may hold NUL) */
        size_t content_len;     /* <= PROTO_FS_CONTENT_MAX */
        char *old_string;       /* fs.edit: non-empty UTF-8 text */
        size_t old_len;
        char *new_string;       /* fs.edit: UTF-8 text, may be empty */
        size_t new_len;
        uint64_t offset;        /* fs.read: where to start */
        uint64_t length;        /* fs.read: bytes wanted, <= PROTO_FS_CONTENT_MAX; 0: the rest */
} proto_fs;

#define PROTO_TERM_INPUT_MAX 65536 /* bytes of one terminal.input */

/* session.terminal (a PTY), terminal.input / resize / close. A terminal is named by the id of the
 * session.terminal request that opened it (unique per connection). */
typedef struct proto_terminal {
        char session_id[PROTO_ID_MAX + 1];
        bool native;            /* backend "native": inside the session's sandbox; "none": not */
        bool microvm;           /* backend "microvm": only inside the session's VM (native too) */
        uint16_t cols, rows;
        char **argv;            /* NULL: /bin/sh -i */
        size_t n_argv;
        uint64_t terminal_id;   /* input, resize, close */
        char *data;             /* input: UTF-8 text */
        size_t data_len;
} proto_terminal;

typedef struct proto_request {
        uint64_t id;
        proto_method method;
        char session_id[PROTO_ID_MAX + 1]; /* destroy, suspend, resume */
        proto_launch launch;
        proto_exec exec;
        proto_fs fs;
        proto_terminal term;
        /* session.egressAnswer: the egress.ask event's id and the answer */
        uint64_t ask_id;
        cordon_egress_answer answer;
} proto_request;

/* Parses one request line (without its '\n'). On success returns 0 and fills *out (free with
 * proto_request_done()). On failure returns -EBADMSG, sets err (code USAGE, a message naming the
 * member and what is wrong) and, when the line carried a usable id, *ret_id (else 0) so the error
 * response can name the request it answers. */
int proto_parse_request(const char *line, size_t len, proto_request *out, uint64_t *ret_id,
                        cordon_error *err);
void proto_request_done(proto_request *r);

/* Builders: each returns a malloc'ed line ending in '\n' (NUL-terminated too), or NULL on
 * allocation failure. `result_json` / `event_json` are compact JSON objects. */
char *proto_result_line(uint64_t id, const char *result_json);
char *proto_error_line(uint64_t id, cordon_code code, const char *message);
char *proto_event_line(uint64_t id, const char *event_json, size_t len);
