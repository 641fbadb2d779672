/* SPDX-License-Identifier: Apache-2.0 */
/* cordond's insides: the server (server.c: socket, peer credentials, clients, dispatch), the
 * sessions (session.c: states, per-exec policy resolution, exec workers), warm sessions through
 * libcordon's session handle (session-warm.c) and terminals (terminal.c). docs/protocol.md is
 * the contract; docs/design/daemon.md the design. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cordon/cordon.h"
#include "daemon/protocol.h"
#include "run/analytics.h"
#include "util/util.h" /* strv, _noreturn_ */

#define DAEMON_MAX_CLIENTS 256
#define DAEMON_MAX_SESSIONS 1024
#define DAEMON_OUT_MAX (8 * 1024 * 1024) /* queued bytes per client before its execs pause */

/* What an epoll event points at: the first member of each watched object. */
typedef enum watch_kind {
        WATCH_LISTENER = 1,
        WATCH_SIGNAL,
        WATCH_CLIENT,
        WATCH_EXEC,
        WATCH_HOST,
        WATCH_PTY,      /* a terminal's PTY master (exec_run.pty) */
        WATCH_DONE,     /* a backend-none terminal's result fd (exec_run.done_watch) */
} watch_kind;

typedef struct daemon daemon_t;
typedef struct client client;
typedef struct session session;
typedef struct exec_run exec_run;

typedef enum session_state {
        SESSION_CREATED,
        SESSION_WARM,
        SESSION_ACTIVE,
        SESSION_SUSPENDED,
        SESSION_DESTROYED,
        SESSION_ERROR,
} session_state;

const char *session_state_name(session_state s);

/* A warm session's sandbox: libcordon's session handle in event-loop mode (session-warm.c). */
typedef struct host_link {
        watch_kind kind;          /* WATCH_HOST: cordon_session_fd() is readable */
        session *s;
        cordon_session *handle;   /* NULL: no warm sandbox (or no longer) */
        bool watched;
        bool ended;               /* dispatch said the host is gone: never watched again */
        client *launch_client;    /* session.launch waits for the state to leave "created" */
        uint64_t launch_id;
} host_link;

/* An epoll registration of an exec's other descriptors (a terminal's PTY, a result fd). */
typedef struct watch_ref {
        watch_kind kind;
        exec_run *x;
} watch_ref;

struct session {
        char id[PROTO_ID_MAX + 1];
        host_link host;
        session_state state;
        cordon_backend backend;
        cordon_policy *layer;     /* the session's policy layer (from session.launch) */
        char *workdir;            /* absolute */
        cordon_error error;       /* state == SESSION_ERROR */
        unsigned running;         /* execs in flight */
        /* params.analytics (session-analytics.c): the file the records go to (-1: none) and the
         * per-user key they are hashed with. */
        int analytics_fd;
        unsigned char analytics_key[ANALYTICS_KEY_BYTES];
        session *next;
};

/* One exec in flight: a worker process running cordon_run(), its events coming back on a pipe. */
struct exec_run {
        watch_kind kind;          /* WATCH_EXEC */
        daemon_t *d;
        uint64_t request_id;
        client *owner;            /* NULL once the client is gone (the exec is then killed) */
        session *s;
        pid_t pid;
        int events_fd;            /* worker → daemon: "E<event json>\n" and one "R<result>\n" */
        char *buf;                /* partial line */
        size_t len, cap;
        bool got_result;
        char *result;             /* the result JSON (without 'R') */
        bool paused;              /* the owner's queue is full: stop reading (backpressure) */
        bool warm;                /* runs through `proc` (no worker of its own) */
        bool terminal;            /* a session.terminal */
        bool done;                /* warm: the result is in (or the session is gone) */
        cordon_process *proc;     /* warm: a session exec, or a backend-none terminal's spawn */
        bool local;               /* that spawn: a cordon_spawn() of ours, not a session exec */
        struct terminal *term;    /* a terminal's PTY and its state (terminal.c) */
        analytics *analytics;     /* the session has an analytics file: this exec's counts */
        exec_run *next;
};

struct daemon {
        int epfd;
        int listen_fd;
        int signal_fd;
        uid_t uid;
        cordon_backend default_backend;
        bool sandbox_off;
        client *clients;
        size_t n_clients;
        session *sessions;
        size_t n_sessions;
        exec_run *execs;
        bool stopping;
        uint64_t next_exec_id;
        const char *managed_settings; /* NULL: /etc/cordon/managed-settings.json */
        char home[4096];
};

struct client {
        watch_kind kind;          /* WATCH_CLIENT */
        int fd;
        pid_t pid;
        char *in;                 /* partial request line */
        size_t in_len, in_cap;
        char *out;                /* queued response/event bytes */
        size_t out_len, out_off, out_cap;
        uint32_t events;          /* registered with epoll */
        bool closing;             /* flush, then close (after an oversize line) */
        bool dead;
        client *next;
};

/* server.c */
int client_send(client *c, char *line); /* takes the line; -EPIPE when the client is gone */
size_t client_queued(const client *c);
void daemon_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* session.c */
void session_launch(daemon_t *d, client *c, const proto_request *rq);
void session_exec(daemon_t *d, client *c, proto_request *rq);
void session_list(daemon_t *d, client *c, const proto_request *rq);
void session_destroy(daemon_t *d, client *c, const proto_request *rq);
void session_suspend(daemon_t *d, client *c, const proto_request *rq, bool suspend);
void session_egress_answer(daemon_t *d, client *c, const proto_request *rq);
/* session.terminal: a PTY in the session's host (backend none) or sandbox (native); its output
 * streams as "stdout" events of the request, its end is the request's result. */
void session_terminal(daemon_t *d, client *c, const proto_request *rq);
void terminal_control(daemon_t *d, client *c, const proto_request *rq);
void exec_on_readable(daemon_t *d, exec_run *x);
void host_on_readable(daemon_t *d, host_link *l);
void terminal_on_pty(daemon_t *d, watch_ref *w, uint32_t ready);
void terminal_on_done(daemon_t *d, watch_ref *w);
void exec_client_gone(daemon_t *d, client *c);
void exec_resume_paused(daemon_t *d, client *c);
void exec_reap(daemon_t *d);
/* Frees finished execs (after each loop iteration, so no event of the batch sees freed memory). */
void exec_collect(daemon_t *d);

/* session-analytics.c: params.analytics. Open before the session's sandbox is planned. */
int session_analytics_open(daemon_t *d, session *s, const char *path, cordon_error *err);
void session_analytics_close(session *s);
/* A refusal of an fs.* request: one record. */
void session_analytics_violation(const session *s, const cordon_violation *v);
/* One of the exec's event lines (the JSON, `len` bytes): a violation becomes a record. */
void exec_analytics_event(exec_run *x, const char *json, size_t len);
/* The exec's summary record, once its result is in. */
void exec_analytics_end(exec_run *x);
void sessions_destroy_all(daemon_t *d);
int exec_watch(daemon_t *d, exec_run *x, bool on);
/* Shared by session.c, session-worker.c (the cold exec worker), session-warm.c (warm sessions)
 * and terminal.c: an exec's policy (override and cwd may be NULL), the worker's main and its
 * stdin, the warm session's epoll watch, launch and close, and a session handle as a reply. */
int exec_resolve_policy(daemon_t *d, const session *s, const char *override, const char *cwd,
                        const char *unconfined, cordon_policy **ret, cordon_error *err);
/* "backend none" for a session whose execs run unconfined, else NULL (exec_resolve_policy). */
const char *unconfined_what(const session *s);
_noreturn_ void exec_worker_main(daemon_t *d, session *s, const proto_exec *e, int fd,
                                 const strv *widening);
/* {"error": {"code", "message"}}, a result exec_response() answers as an error. */
char *exec_error_result(const cordon_error *err);
/* stdin given inline: a memfd holding it, else /dev/null; -1 on failure. */
int exec_stdin_fd(const proto_exec *e);
/* The exec's command-policy approver: with "commandApproved": true one that approves (the
 * client asked its user), else none (an "ask" rule refuses, saying how to approve). */
cordon_command_ask_fn exec_command_approver(const proto_exec *e);
int host_watch(daemon_t *d, host_link *l, bool on);
/* Starts the session's warm sandbox; answered to `c` once it is ready or failed. */
int host_launch(daemon_t *d, session *s, client *c, uint64_t id, cordon_error *err);
/* Ends the session's sandbox (everything in it dies); its warm execs end without a result. */
void host_close(daemon_t *d, session *s);
/* An exec running through a library handle is asked to end (client gone, session destroyed). */
void warm_kill(exec_run *x);
/* The library handle's result is in: the exec's result JSON, then the exec is done. */
void warm_finish(daemon_t *d, exec_run *x);
/* A new exec_run of `s` for request `rq` of `c`, listed and counted as running. */
exec_run *exec_add(daemon_t *d, client *c, session *s, uint64_t request_id);
void reply_handle(client *c, uint64_t id, const session *s);
void session_reply_error(client *c, uint64_t id, cordon_code code, const char *msg);
/* A warm exec of `s`: cordon_session_exec() with its output captured to events. */
void exec_warm(daemon_t *d, client *c, session *s, proto_request *rq);
/* terminal.c: a terminal's library event (from dispatch, or its pipe), in order with its PTY's
 * output; and a terminal's end (its master closed, its watches gone). */
void terminal_event(daemon_t *d, exec_run *x, const char *line, size_t len);
void terminal_done(daemon_t *d, exec_run *x);
/* The PTY's epoll registration after a pause, a resume or queued input. */
void terminal_update(daemon_t *d, exec_run *x);
void terminal_free(exec_run *x);
/* The session `id` unless destroyed, else NULL. */
session *session_find(daemon_t *d, const char *id);
/* The policy an exec without override runs under (deployment default < session layer): what the
 * fs.* methods hand to cordon_fs_*, so they and the backend share one writable-root set. */
int session_resolve_policy(daemon_t *d, const session *s, cordon_policy **ret, cordon_error *err);

/* fs-rpc.c: fs.read, fs.write, fs.edit, fs.list, fs.stat (docs/protocol.md). */
void fs_request(daemon_t *d, client *c, const proto_request *rq);
