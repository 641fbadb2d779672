/* SPDX-License-Identifier: Apache-2.0 */
/* The process handle's insides, shared by process-handle.c (cordon_spawn, cordon_process_*) and
 * session-handle.c (cordon_session_exec: a handle whose run is the session's). */
#pragma once

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "cordon/cordon.h"
#include "linux/launch.h"

struct cordon_process {
        launch l;
        int pidfd;           /* the forked process's (cordon_process_pidfd) */
        int command_pidfd;   /* the command's, -1 when the kernel named only its pid */
        pid_t command_pid;   /* in this PID namespace */
        int kill_fd;         /* an eventfd: cordon_process_kill() asks the run's thread */
        int done_fd;         /* an eventfd, readable once the result is in */
        pthread_t thread;
        /* The launch, handed to the run's thread and answered by it. */
        const cordon_policy *policy;
        char *const *argv;
        int start_fd;        /* an eventfd: the run's thread has launched (or failed to) */
        int start_result;
        cordon_error *start_err;
        pthread_mutex_t lock; /* guards the fields below */
        bool joined;
        bool in_session;     /* a session exec: no launch or thread of its own */
        cordon_session *session; /* ... its session, NULL once the result is in */
        uint64_t exec_id;    /* ... its id in the session */
        int result;
        cordon_run_result ret;
        cordon_error err;
};

/* A handle with the callbacks of `o` and its eventfds; no launch yet. */
int process_new(const cordon_spawn_options *o, cordon_process **ret, cordon_error *err);
/* The result is in (r, *ret or *err): cordon_process_wait() returns it from now on. */
void process_set_result(cordon_process *p, int r, const cordon_run_result *ret,
                        const cordon_error *err);
bool process_done(const cordon_process *p);
void process_release(cordon_process *p);
/* The caller's options as this library knows them (cordon_spawn_options.size). */
int process_options_read(const cordon_spawn_options *in, cordon_spawn_options *out,
                         cordon_error *err);

/* session-handle.c: what a session exec's handle asks of its session; -ESRCH when the exec is
 * over, another -errno when the session is gone. */
int session_exec_signal(cordon_session *s, uint64_t exec_id, int sig);
int session_exec_kill(cordon_session *s, uint64_t exec_id);
/* Event-loop mode (CORDON_SESSION_EVENT_LOOP): kills the exec and ends its handle at once
 * (CORDON_KILLED), for a handle freed while it runs. */
void session_exec_forget(cordon_session *s, uint64_t exec_id);
bool session_event_loop(const cordon_session *s);
/* Whether waiting on an exec of `s` from this thread can never end: an event-loop session's
 * results come only through dispatch on the thread that launched it. */
bool session_exec_wait_blocks(const cordon_session *s);
