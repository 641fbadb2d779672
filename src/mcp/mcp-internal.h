/* SPDX-License-Identifier: Apache-2.0 */
/* What the files of src/mcp/ share: the server, the calls in flight, the sessions, and the
 * helpers that build tool results. Not part of the interface (mcp.h). */
#pragma once

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "mcp/mcp.h"

#define MCP_CALLS_MAX 64     /* tools/call requests in flight at once */
#define MCP_SESSIONS_MAX 16  /* warm sessions one server keeps */
#define MCP_VIOLATIONS_MAX 64 /* refusals listed in one result (the count says how many more) */

typedef struct mcp_server mcp_server;
typedef struct mcp_slot mcp_slot;

/* One tools/call in flight, run on a thread of its own. */
typedef struct mcp_call {
        struct mcp_call *next;
        mcp_server *srv;
        json_t *id;             /* the request's id */
        json_t *progress_token; /* params._meta.progressToken, or NULL */
        const struct mcp_tool *tool;
        json_t *args;           /* checked against the tool's schema */
        pthread_t thread;
        /* Set under srv->lock; atomic so that the output callbacks read them without it: they
         * run on the library's threads, which must never wait for a thread that holds srv->lock
         * while it calls into the library (a cancellation's kill). */
        _Atomic bool cancelled;     /* notifications/cancelled came: kill, never answer */
        _Atomic uint64_t progress;  /* notifications/progress sent (their "progress" value) */
        _Atomic bool destroyed;     /* its session was destroyed under it (session_destroy) */
        /* Under srv->lock: */
        cordon_process *proc;   /* the command while it runs */
        mcp_slot *slot;         /* the session the command runs in, or NULL */
} mcp_call;

/* A warm session of the server's. */
struct mcp_slot {
        cordon_session *session; /* NULL: a free slot */
        char id[128];
        char *cwd;
        unsigned busy;           /* calls using `session` now (exec start, fs calls) */
        bool doomed;             /* session_destroy: no new user; destroyed once busy is 0 */
        unsigned execs;          /* execs started */
};

struct mcp_server {
        const mcp_config *cfg;
        pthread_mutex_t lock;    /* calls, n_calls, the slots, each call's fields above */
        pthread_cond_t changed;  /* a call ended, or a slot's busy count fell */
        mcp_call *calls;
        size_t n_calls;
        mcp_slot slots[MCP_SESSIONS_MAX];
        pthread_mutex_t out_lock; /* one line at a time on cfg->out_fd */
        bool out_broken;          /* under out_lock: a write failed; the client is gone */
        bool initialized;         /* the initialize request was answered (main thread only) */
        json_t *tools;            /* the tools/list result, built once */
};

typedef struct mcp_tool {
        const char *name;
        const char *title;
        const char *description;
        const char *input_schema; /* JSON text: tools/list shows it, schema.c applies it */
        bool read_only;           /* annotations.readOnlyHint */
        json_t *(*run)(mcp_call *c);
} mcp_tool;

/* tools.c: the table, and the tools/list result built from it (NULL out of memory or a schema
 * that is not JSON: a bug, caught by every test). */
const mcp_tool *mcp_tool_find(const char *name);
json_t *mcp_tools_list(void);
/* Every tool's name (at most `max` of them, in table order) into `ret`, for a "did you mean";
 * returns how many. */
#define MCP_TOOLS_MAX 16
size_t mcp_tool_names(const char **ret, size_t max);
/* The tool's parsed schema (kept in the tools/list result `tools`). */
const json_t *mcp_tool_schema(const json_t *tools, const mcp_tool *t);

/* server.c: writes one line (NUL-terminated, '\n' included) and frees it; false when the client
 * is gone or `line` is NULL (out of memory). */
bool mcp_send(mcp_server *srv, char *line);
/* notifications/progress for `c` when it has a progress token; `message` is UTF-8. */
void mcp_progress(mcp_call *c, const char *message);

/* result.c: tool results. Each returns a new reference ({content, structuredContent,
 * isError}), NULL only out of memory. */
json_t *mcp_result(json_t *structured, const char *text, bool is_error);
json_t *mcp_result_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A failed cordon call: isError, {error: {code, message}, violations: [refusal]} when the policy
 * refused (ref->action set). */
json_t *mcp_result_cordon(const cordon_error *err, const cordon_fs_refusal *ref, const char *path);
/* `bytes` as valid UTF-8 text (invalid sequences and NUL as U+FFFD), caller frees. */
char *mcp_utf8_clean(const char *bytes, size_t len);
/* A JSON string of `s` cleaned so (a path from the host need not be UTF-8, and a JSON string
 * must be); NULL for NULL or out of memory. */
json_t *mcp_json_text(const char *s);
/* An absolute path for a "path"/"cwd" argument: itself, or joined to the server's directory.
 * Caller frees; NULL out of memory. */
char *mcp_abs_path(const mcp_server *srv, const char *path);

/* tool-session.c: a session by id, held busy (release it with mcp_slot_release), or NULL with
 * *ret_result the tool error saying why. */
mcp_slot *mcp_slot_acquire(mcp_server *srv, const char *id, json_t **ret_result);
void mcp_slot_release(mcp_server *srv, mcp_slot *slot);
/* At the end: every session destroyed. */
void mcp_sessions_end(mcp_server *srv);

/* The tools (tool-exec.c, tool-fs.c, tool-session.c). */
json_t *mcp_tool_shell(mcp_call *c);
json_t *mcp_tool_session_exec(mcp_call *c);
json_t *mcp_tool_read_file(mcp_call *c);
json_t *mcp_tool_write_file(mcp_call *c);
json_t *mcp_tool_edit_file(mcp_call *c);
json_t *mcp_tool_list_directory(mcp_call *c);
json_t *mcp_tool_session_create(mcp_call *c);
json_t *mcp_tool_session_destroy(mcp_call *c);
json_t *mcp_tool_session_list(mcp_call *c);
