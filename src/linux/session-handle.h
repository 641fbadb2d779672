/* SPDX-License-Identifier: Apache-2.0 */
/* The session handle's insides, shared by session-handle.c (launch, the host's link, the
 * session's thread or the caller's loop, suspend, destroy) and session-exec.c (execs: their
 * requests, stdio, signals, kills). */
#pragma once

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cordon/cordon.h"
#include "run/events.h"
#include "util/util.h" /* strv */

#define SESSION_LINE_MAX (4 * 1024 * 1024) /* as the host's (session-host-internal.h) */

typedef struct session_exec {
        uint64_t id;
        cordon_process *proc;
        struct session_exec *next;
} session_exec;

struct cordon_session {
        char id[EVENTS_ID_MAX];
        pid_t host;               /* the host process, a child of the thread that forked it */
        int host_pidfd;           /* ... a pidfd for it (-1: none): kill and wait by it, since
                                   * an event loop's own reaper (waitpid(-1)) may reap the host */
        int link;                 /* our end of the host's line socket */
        bool event_loop;          /* CORDON_SESSION_EVENT_LOOP: no thread of ours */
        pthread_t thread;         /* threaded: the session's thread */
        pthread_t loop_thread;    /* event loop: the thread that launched (the host's parent) */
        /* The launch, handed to the thread and answered by it. The policy (the caller's, with
         * the administrator's managed settings applied unless it opted out: session_managed()),
         * home and directory are the session's own copies, which the host is built from; with
         * `env` (a copy of the environment the host got) they are what cordon_session_fs_*
         * (fs-api.c) plan from at every call: the inputs the session's sandbox was planned from. */
        cordon_policy *policy;
        cordon_policy *managed;   /* during the launch only: the managed settings applied */
        cordon_session_options opts;
        char *home, *cwd;
        strv env;                 /* opts.environ, else environ, at the launch */
        int start_fd;             /* an eventfd: the thread has launched (or failed to) */
        int start_result;         /* 1 while the host has not answered */
        cordon_error start_err;
        pthread_mutex_t write_lock; /* one line at a time onto the link */
        pthread_mutex_t lock;     /* guards the fields below */
        cordon_session_state state;
        cordon_error error;       /* state ERROR: why */
        bool link_ended;          /* the host's link reached its end (event loop) */
        session_exec *execs;      /* running */
        uint64_t next_id;
        char *buf;                /* the partial line read from the link */
        size_t len, cap;
};

/* session-handle.c */
/* The backend the session's execs run on: microvm when asked for, else native. */
cordon_backend session_backend(const cordon_session *s);
/* One line to the host, with `fds` (at most 3) attached to its first byte. 0, or -errno
 * (-EPIPE: the host is gone). */
int session_link_send(cordon_session *s, const char *line, const int *fds, size_t n_fds);
/* The running exec `id` (under s->lock), or NULL. */
session_exec *session_exec_find(cordon_session *s, uint64_t id);
/* The exec's entry leaves the list; its handle, no longer reachable from here, gets `r`. */
void session_exec_end(cordon_session *s, uint64_t id, int r, const cordon_run_result *ret,
                      const cordon_error *err);
