/* SPDX-License-Identifier: Apache-2.0 */
/* Shared by the session host's files: session-host.c (the sandbox, execs, refusals) and
 * session-host-terminal.c (session.terminal). */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "linux/events.h"
#include "linux/proxy-proc.h"
#include "linux/session-init.h"
#include "plan/plan.h"
#include "report/report.h"

#define HOST_EXECS_MAX SESSION_EXECS_MAX
#define HOST_LINE_MAX (4 * 1024 * 1024)
#define HOST_ENDED_MAX 1024
#define HOST_FDQ_MAX 48
/* Connections to the proxy remembered for attribution (session-host-conns.c): one per connection
 * the proxy can hold at once (PROXY_MAX_CONNS). */
#define HOST_CONNS_MAX 4096

typedef struct host_conn {
        char client[REPORT_ENDPOINT_MAX]; /* the connection (report_conn_key()) */
        pid_t sid;                        /* the connecting caller's session id, 0: unknown */
} host_conn;

typedef struct host host;

typedef struct host_exec {
        host *h;
        uint64_t id;
        events ev;
        int out, err;         /* the command's stdout/stderr pipes (read ends) */
        int rpt;              /* its report channel: EXEC_FAILED before exec, EOF after */
        bool terminal;        /* a session.terminal: `out` is the PTY master (input goes there) */
        bool library;         /* a cordon_session_exec(): the caller's stdio, no output events */
        pid_t local_pid;      /* a backend-none terminal: the host's own child */
        int pidfd;            /* ... and its pidfd (readable when it exits) */
        bool started, exited;
        pid_t leader;         /* the command's pid in the sandbox = its session id (STARTED) */
        int64_t deadline;     /* limits.timeout: monotonic ms, 0 = none */
        bool timed_out;
        int status;
        bool have_fatal;
        cordon_error fatal;
        unsigned violations;
} host_exec;

struct host {
        int dch;              /* the daemon */
        int rep;              /* the session's report channel (monitor, init, supervisor) */
        int ctl;              /* init */
        proxy_proc px;
        pid_t monitor;
        plan *p;
        char session_id[EVENTS_ID_MAX];
        host_exec *execs[HOST_EXECS_MAX];
        size_t n_execs;
        /* Session ids of execs that ended, newest last: their leftovers' refusals reach no exec.
         * A session id stays reserved while any process of its session lives (the kernel does
         * not hand out a pid still used as a session id), so one cannot name a newer exec. */
        pid_t ended[HOST_ENDED_MAX];
        size_t n_ended;
        char *in;
        size_t in_len, in_cap;
        /* Descriptors that came with the launcher's lines (SCM_RIGHTS), oldest first: each "Y"
         * line takes the next three, its command's stdio. */
        int fdq[HOST_FDQ_MAX];
        size_t n_fdq;
        host_conn conns[HOST_CONNS_MAX]; /* a ring: conns_next is the oldest when full */
        size_t n_conns, conns_next;
};

/* Every event of an exec goes to the daemon tagged with the exec's id (an events sink). */
void host_on_event(void *userdata, const char *line, size_t len);
/* Ends an exec that could not start: its error event and result; frees it. */
void host_fail_exec(host *h, host_exec *x, int e, const char *what);
void host_fail_exec_error(host *h, host_exec *x, const cordon_error *err);
host_exec *host_find_exec(host *h, uint64_t id);

/* session-host-conns.c: who connected to the proxy from `client` (REPORT_CONNECTION). */
void host_conn_record(host *h, pid_t sid, const char *client);
/* The session id of the newest record for `client`; false when none is remembered. */
bool host_conn_sid(const host *h, const char *client, pid_t *ret);

/* session-host-terminal.c */
void host_start_terminal(host *h, uint64_t id, const char *json);
/* "I<id> <json string>": keyboard input; "Z<id> <cols> <rows>": a resize. */
void host_terminal_io(host *h, char kind, uint64_t id, const char *arg);
/* A backend-none terminal's shell ended (its pidfd is readable). */
void host_local_exited(host_exec *x);
