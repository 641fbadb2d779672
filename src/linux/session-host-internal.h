/* SPDX-License-Identifier: Apache-2.0 */
/* Shared by the session host's files: session-host.c (the sandbox, execs, refusals) and
 * session-host-conns.c (who connected to the proxy). */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "run/events.h"
#include "linux/creds.h"
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
        int out, err;         /* captured stdout/stderr: the pipes' read ends, else -1 */
        int rpt;              /* its report channel: EXEC_FAILED before exec, EOF after */
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
        int link;             /* the session handle (session-handle.c) */
        int rep;              /* the session's report channel (monitor, init, supervisor) */
        int ctl;              /* init */
        proxy_proc px;
        /* Brokered credentials (creds.h): revoked when the session ends. */
        creds_run creds_run;
        pid_t monitor;
        plan *p;
        cordon_backend backend; /* the launch's: native or microvm */
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
        /* The handle answers the egress ask mode's questions ("W" line,
         * CORDON_SESSION_EGRESS_ANSWERS); false: each is refused at once (session-host-ask.c). */
        bool answers;
};

/* session-host.c: the exec whose command leads session `sid` (NULL if none runs), and the
 * session id of the caller that made the proxy connection `client` (0: unknown). */
host_exec *host_exec_of_sid(host *h, pid_t sid);
pid_t host_client_sid(host *h, const char *client);

/* session-host-env.c: the session's environment (p->env) with an exec request's `env` entries
 * (a JSON array of "NAME=value") set over it, in *out; 0 or -ENOMEM. */
struct json_t;
int host_exec_env(const plan *p, struct json_t *env, strv *out);

/* session-host-ask.c: the proxy's REPORT_EGRESS_ASK / REPORT_EGRESS_DECIDED (false for other
 * messages), and the handle's answer line "A<question id> <answer>". */
bool host_ask_report(host *h, const report_msg *m);
void host_ask_answer(host *h, const char *line);

/* session-host-conns.c: who connected to the proxy from `client` (REPORT_CONNECTION). */
void host_conn_record(host *h, pid_t sid, const char *client);
/* The session id of the newest record for `client`; false when none is remembered. */
bool host_conn_sid(const host *h, const char *client, pid_t *ret);
