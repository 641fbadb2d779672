/* SPDX-License-Identifier: Apache-2.0 */
/* One sandboxed command, as the launcher holds it from cordon_spawn() to its result. Shared by
 * the files of the launch sequence (docs/design/library.md):
 *   launch.c          the front (plan, checks, cgroup), the backend ladder, fork, start, finish
 *   launch-backends.c the backends (native, landlock, none, microvm) behind one table
 *   launch-fds.c      the descriptors the caller hands to the command: checked, then mapped
 *   run-collect.c     reading what the sandbox reports until it ends, into the run's result
 *   process-handle.c  the public handle (cordon_spawn, cordon_process_*) and cordon_run */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cordon/cordon.h"
#include "linux/backend-landlock.h"
#include "linux/capture.h"
#include "linux/creds.h"
#include "linux/cgroup.h"
#include "run/events.h"
#include "run/run-backend.h"
#include "report/report.h"
#include "linux/proxy-proc.h"
#include "linux/vm-host.h"
#include "plan/plan.h"

/* The callbacks and knobs of one run, copied from the caller's cordon_run_options or
 * cordon_spawn_options once their size has been checked (process-handle.c). The launch's own
 * copy: it has no `size`, as nothing but this library ever makes one. */
typedef struct launch_options {
        cordon_backend backend;
        char *const *environ;   /* NULL: environ */
        cordon_violation_fn on_violation;
        void *userdata;         /* for on_violation and on_backend_note */
        cordon_event_fn on_event;
        void *event_userdata;
        int cancel_fd;          /* > 2, else none */
        unsigned capture;       /* CORDON_CAPTURE_* */
        void (*on_backend_note)(void *userdata, cordon_backend used, const char *why);
        cordon_egress_ask_fn on_egress_ask; /* NULL: every question denied at once */
        void *ask_userdata;                 /* for on_egress_ask and on_command_ask */
        cordon_command_ask_fn on_command_ask; /* NULL: an "ask" rule refuses */
} launch_options;

/* What the run has seen so far (run-collect.c fills it from the report channels). */
typedef struct run_state {
        const launch_options *opts;
        events *ev;
        cordon_backend backend; /* the one running, named by "ready" */
        bool ready;             /* the command was about to be executed */
        bool started;           /* its process said so (REPORT_STARTED) */
        bool until_ready;       /* a warm session: the start is the sandbox's readiness */
        bool want_sender;       /* REPORT_STARTED names the command's process (report_sender_on) */
        int command_pidfd;      /* ... a pidfd for it (-1: none; SO_PASSPIDFD missing) */
        pid_t command_pid;      /* ... and its pid in the launcher's PID namespace (0: unknown) */
        int proxy_fd;           /* the proxy's reports; -1 when there is none or it died (the
                                 * launch still owns and closes px.report_fd) */
        unsigned violations;
        bool have_status;
        int status;             /* the command's wait status */
        bool have_fatal;
        cordon_error fatal;     /* the first failure reported */
        int64_t deadline;       /* limits.timeout, CLOCK_MONOTONIC ms; -1: none */
        bool timed_out;
        const run_cgroup *cg;   /* enforces limits.memory/pids, or NULL */
        uint64_t pids;          /* the ceiling it enforces (for the report) */
        int cancel_fd;          /* opts->cancel_fd, or -1 */
        int kill_fd;            /* readable: cordon_process_kill() asked; -1 for cordon_run */
        const char *killed;     /* "oom" or "manual" once one of those ended the run */
        /* The ask mode (run-ask.c): the destinations answered ALLOW_SESSION, so a question
         * already queued for one is answered without asking again. */
        strv ask_session;
} run_state;

/* run-ask.c: a message of the ask mode from the proxy (REPORT_EGRESS_ASK: asks on_egress_ask
 * and answers; REPORT_EGRESS_DECIDED: the "egress.answer" event). False for other messages. */
bool run_ask_handle(run_state *st, const report_msg *m);

/* The caller's descriptors for the command (cordon_spawn_options). */
typedef struct launch_fds {
        int stdio[3];           /* the caller's fd for the command's 0, 1, 2; -1: /dev/null */
        cordon_fd_map map[CORDON_SPAWN_FDS_MAX];
        size_t n_map;
} launch_fds;

typedef struct launch launch;
typedef struct proxy_channels proxy_channels;

/* A backend as the launch sequence drives it (launch-backends.c): its entry in Linux's table of
 * backends (run/run-backend.h: id, whether it confines, whether this host can run it), first, so
 * the table's entries are these, and the hooks of each step. Every hook but child_main may be
 * NULL: nothing to do at that step. */
typedef struct launch_backend {
        run_backend base;
        /* In the launcher, after the plan and the cgroup: what the backend builds first. */
        int (*prepare)(launch *l, cordon_error *err);
        /* Before the fork: the egress proxy's channels (l->px). */
        int (*proxy_open)(launch *l, proxy_channels *pch, cordon_error *err);
        /* After the fork: the proxy's start (the sandbox is killed when it fails). */
        int (*proxy_start)(launch *l, proxy_channels *pch, cordon_error *err);
        /* In the forked child, after its descriptors are in place: the sandbox's first stage. */
        _noreturn_ void (*child_main)(launch *l, char *const argv[], int report_fd,
                                      pid_t launcher);
        /* After the run (or a failed attempt at it): what prepare() built. */
        void (*done)(launch *l);
} launch_backend;

extern const launch_backend launch_backend_native, launch_backend_landlock,
        launch_backend_none, launch_backend_microvm;
/* The backend that runs `id`, picked from Linux's table by run_backend_pick() (AUTO: native,
 * which may step down to landlock: launch.c's ladder). Every backend is in the table. */
const launch_backend *launch_backend_for(cordon_backend id);

struct launch {
        launch_options opts;     /* the callbacks and knobs, copied from the caller's */
        launch_fds fds;
        const char *cwd;         /* NULL: getcwd() */
        const char *home;        /* NULL: from the environment (home_dir_of) */
        bool tty;                /* fd 0 is a terminal: the command's controlling one */
        bool want_command_pidfd; /* the command's pidfd is wanted (cordon_process_signal) */
        int kill_fd;             /* readable: kill the sandbox (cordon_process_kill); -1 */
        /* >= 0: a warm session (session-host.c): its init serves exec requests on this socket
         * (session-init.h) and the launch is complete once the sandbox is ready. */
        int session_ctl;
        cordon_backend backend;  /* the backend running the command */
        events ev;
        plan *p;
        const launch_backend *be; /* the backend of the current attempt */
        bool have_landlock;
        landlock_run lr;         /* the landlock backend's run (have_landlock) */
        vm_host vm;              /* the microvm backend's VMM and kernel (plan->vm) */
        /* The running attempt at a backend. */
        int report_fd;           /* the sandbox's report channel, the launcher's end */
        bool at_eof;             /* ... read to its end already */
        proxy_proc px;
        /* TLS inspection's session CA (tls-bundle.h) until the proxy is forked with it. */
        struct tls_ca *tls_ca;
        /* credentials (creds.h): the secrets until the proxy is forked with them, and the
         * home their store is in (NULL: the plan binds none). */
        struct cred_set *creds;
        char *creds_home;
        creds_run creds_run;     /* brokered credentials: revoked at launch_done() */
        capture cap;
        pid_t child;             /* the process the launcher forked (cordon_process_pid) */
        int child_pidfd;
        run_state st;
};

/* launch.c */
void launch_init(launch *l);
/* The administrator's managed settings over the caller's `policy`, for a cordon_run() or
 * cordon_spawn() about to launch with `l`'s options, directory and home (settings-managed.c):
 * *ret is NULL when there is nothing to apply — no managed file, a policy that
 * cordon_settings_resolve() produced, `opt_out` (CORDON_SPAWN_NO_MANAGED_SETTINGS) — and the
 * launch runs `policy`; else a copy with them applied that the launch runs instead and the caller
 * frees after launch_start(). Decided before the event stream starts, so that its sessionId is
 * the policy's that runs. 0, or -errno with `err` set: nothing may run then. */
int launch_managed(const launch *l, const cordon_policy *policy, bool opt_out,
                   cordon_policy **ret, cordon_error *err);
/* The front of the run and its start: plans `policy`, checks what it can enforce, creates the
 * cgroup, forks the sandbox (stepping down from native to the landlock backend as
 * docs/design/backends.md allows) and reads its reports until the command's process has started.
 * 0, or -errno with `err` set (then everything the attempt built is gone again). */
int launch_start(launch *l, const cordon_policy *policy, char *const argv[], cordon_error *err);
/* Reads the rest of the run, reaps the sandbox and fills `ret`; 0 or -errno with `err` set. */
int launch_finish(launch *l, cordon_run_result *ret, cordon_error *err);
/* Frees what launch_start() built and launch_finish() did not (after a finish: nothing). */
void launch_done(launch *l);

/* launch-fds.c */
/* Refuses a descriptor the command could reach past the policy through (a directory, a
 * protected file open read-only, an unconnected or datagram socket). */
int launch_fds_check(const launch_fds *f, const plan *p, cordon_error *err);
/* In the forked child, first thing: the caller's descriptors onto the command's numbers. The
 * launch's own descriptors that stay open (`own`, updated; own[0] is the report channel) are
 * moved above every number the mapping uses first, so no dup2() lands on one. On failure
 * reports LAUNCH_FAILED on the report channel and exits 125. */
void launch_fds_child(const launch_fds *f, int *const own[], size_t n_own);
/* Whether the mapping is the identity (stdio 0, 1, 2 and nothing more): nothing to do. */
bool launch_fds_identity(const launch_fds *f);

/* run-collect.c */
/* Whether the start launch_start() waits for has come: the command's (a run), the sandbox's
 * readiness (a warm session). */
static inline bool run_started(const run_state *st) {
        return st->until_ready ? st->ready : st->started;
}
/* Reads reports, output and the watched descriptors until every sandbox process has closed the
 * report channel (0), or with `until_started` until the command's process has started (1);
 * enforces limits.timeout and the kills. -errno when the channel is lost. */
int run_collect(launch *l, bool until_started);
/* The result of a run whose sandbox has been reaped with wait status `cst` (the command's own
 * for the none backend). */
int run_result(launch *l, int cst, cordon_run_result *ret, cordon_error *err);
