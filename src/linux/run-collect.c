/* SPDX-License-Identifier: Apache-2.0 */
/* What a running sandbox reports, turned into the run's events and result: the report channel
 * (monitor, init, supervisor, the command before exec), the proxy's channel, the captured
 * output, the OOM watch, the caller's cancel_fd and cordon_process_kill(), limits.timeout. */
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "linux/cgroup.h"
#include "linux/launch.h"
#include "run/run-end.h"
#include "util/fork-gate.h"

/* A refusal the supervisor or the proxy reported (report_msg_violation() decodes both). */
static void violation_delivered(run_state *st, const report_msg *m) {
        cordon_violation v;
        if (!report_msg_violation(m, &v))
                return;
        if (strcmp(v.action, "repository") == 0) { /* not a refusal: a "repository" event */
                events_violation(st->ev, &v);
                return;
        }
        st->violations += (unsigned) v.count;
        if (st->opts->on_violation)
                FORK_GATE_PAUSED(st->opts->on_violation(st->opts->userdata, &v));
        events_violation(st->ev, &v);
}

static void handle_msg(run_state *st, const report_msg *m) {
        switch ((report_type) m->type) {
        case REPORT_FATAL:
                if (!st->have_fatal) {
                        st->have_fatal = true;
                        (void) cordon_set_error(&st->fatal, (cordon_code) m->code, m->sys_errno,
                                                "%s", m->text);
                }
                break;
        case REPORT_CHILD_STATUS:
                st->have_status = true;
                st->status = m->status;
                break;
        case REPORT_VIOLATION:
        case REPORT_NET_VIOLATION:
                violation_delivered(st, m);
                break;
        case REPORT_READY:
                st->ready = true;
                events_ready(st->ev, st->backend);
                break;
        case REPORT_STARTED:
                st->started = true;
                break;
        case REPORT_CONNECTION:
                /* Only a warm session's supervisor records connections (supervisor_config
                 * .attribute); one command has nothing to attribute. Ignored. */
                break;
        case REPORT_EGRESS_ASK:
        case REPORT_EGRESS_ANSWER:
        case REPORT_EGRESS_DECIDED:
                /* The proxy's channel only (drain_proxy(): run-ask.c). */
                break;
        default:
                break;
        }
}

/* One report. Until the command's process has said it started, the kernel names each sender
 * (report_sender_on()): STARTED's is the command, whose pidfd cordon_process_signal() keeps. */
static int read_report(int fd, run_state *st) {
        report_msg m;
        if (!st->want_sender || st->started) {
                int r = report_read(fd, &m);
                if (r > 0)
                        handle_msg(st, &m);
                return r;
        }
        int pidfd = -1;
        pid_t pid = 0;
        int r = report_read_sender(fd, &m, &pidfd, &pid);
        if (r > 0 && m.type == REPORT_STARTED) {
                st->command_pidfd = pidfd;
                st->command_pid = pid;
                pidfd = -1;
                report_sender_off(fd);
        }
        if (pidfd >= 0)
                (void) close(pidfd);
        if (r > 0)
                handle_msg(st, &m);
        return r;
}

/* Reads whatever the proxy has reported without waiting (it reports each refusal before the
 * client learns of it, so once the command has ended every refusal it saw is here). */
static void drain_proxy(run_state *st) {
        for (;;) {
                struct pollfd pfd = { .fd = st->proxy_fd, .events = POLLIN };
                if (st->proxy_fd < 0 || poll(&pfd, 1, 0) <= 0)
                        return;
                report_msg m;
                int r = report_read(st->proxy_fd, &m);
                if (r <= 0 && r != -EBADMSG)
                        return;
                /* A proxy that could not start (its rules: memory only) fails the run. */
                if (r > 0 && (m.type == REPORT_NET_VIOLATION || m.type == REPORT_FATAL))
                        handle_msg(st, &m);
                else if (r > 0)
                        (void) run_ask_handle(st, &m); /* the ask mode's (run-ask.c) */
        }
}

/* Every report queued on the channel now: 1, or 0 at EOF (every sandbox process closed its
 * end), or -errno. */
static int drain_reports(int fd, run_state *st) {
        for (;;) {
                struct pollfd pfd = { .fd = fd, .events = POLLIN };
                if (poll(&pfd, 1, 0) <= 0)
                        return 1;
                int r = read_report(fd, st);
                if (r == 0 || (r < 0 && r != -EBADMSG))
                        return r;
        }
}

/* What ends a run besides the command and the timeout: an OOM kill in the run's cgroup, the
 * caller's cancel_fd becoming readable (the CLI's SIGINT/SIGTERM), cordon_process_kill(). */
#define WATCH_N 3
static void watch_pollfds(const run_state *st, struct pollfd w[WATCH_N]) {
        short oom_events = 0;
        int oom = st->killed ? -1 : cgroup_oom_fd(st->cg, &oom_events);
        w[0] = (struct pollfd) { .fd = oom, .events = oom_events };
        w[1] = (struct pollfd) { .fd = st->killed ? -1 : st->cancel_fd, .events = POLLIN };
        w[2] = (struct pollfd) { .fd = st->killed ? -1 : st->kill_fd, .events = POLLIN };
}

/* Kills the sandbox with everything in it (the monitor's death takes the PID namespace along;
 * cgroup.kill reaches every task at once). The "killed" event follows when the run is over. */
static void watch_check(run_state *st, const struct pollfd w[WATCH_N], pid_t child) {
        const short ready = POLLIN | POLLHUP | POLLERR;
        if (st->killed)
                return;
        if (w[0].fd >= 0 && w[0].revents) {
                cgroup_oom_ack(st->cg);
                if (cgroup_oom_kills(st->cg) > 0)
                        st->killed = "oom";
        }
        if (!st->killed && ((w[1].fd >= 0 && (w[1].revents & ready)) ||
                            (w[2].fd >= 0 && (w[2].revents & ready))))
                st->killed = "manual";
        if (st->killed) {
                (void) kill(child, SIGKILL);
                cgroup_kill(st->cg);
        }
}

/* The process ceiling was hit: forks failed with EAGAIN (the command may have gone on, e.g. make
 * retrying, or a fork bomb burning out), one resource-limit violation with the count of failed
 * forks. Only a cgroup counts them; RLIMIT_NPROC failures are not observable from here. */
static void report_pids_hits(run_state *st) {
        uint64_t hits = cgroup_pids_hits(st->cg);
        char rule[96];
        if (hits == 0)
                return;
        (void) snprintf(rule, sizeof(rule), "limits.pids (%llu processes and threads)",
                        (unsigned long long) st->pids);
        cordon_violation v = { .action = "resource-limit", .syscall = "fork", .target = "pids",
                               .rule = rule, .count = hits };
        st->violations += (unsigned) (hits > UINT_MAX ? UINT_MAX : hits);
        if (st->opts->on_violation)
                FORK_GATE_PAUSED(st->opts->on_violation(st->opts->userdata, &v));
        events_violation(st->ev, &v);
}

/* After the run: an OOM kill may have ended it before the watch saw the event (v2 kills the
 * whole cgroup at once, memory.oom.group). Then the stream gets its terminal "killed". A hit
 * process ceiling is reported first: every violation precedes the terminal event. */
static void watch_finish(run_state *st) {
        report_pids_hits(st);
        if (!st->killed && !st->timed_out && cgroup_oom_kills(st->cg) > 0)
                st->killed = "oom";
        if (st->killed)
                events_killed(st->ev, st->killed);
}

static int killed_error(const run_state *st, const plan *p, cordon_error *err) {
        if (strcmp(st->killed, "oom") == 0)
                return cordon_set_error(err, CORDON_KILLED, ENOMEM,
                                        "the command exceeded limits.memory (%llu bytes) and was "
                                        "killed by the kernel's OOM killer with everything it "
                                        "started",
                                        (unsigned long long) p->memory_bytes);
        return cordon_set_error(err, CORDON_KILLED, ECANCELED,
                                "the run was stopped on request (%s): the command was killed "
                                "with everything it started",
                                st->kill_fd >= 0 ? "cordon_process_kill or cancel_fd"
                                                 : "cancel_fd");
}

/* capture.before_output: the refusals already queued, before the output read just now. The
 * supervisor and the proxy report a refusal before the refused call returns, so whatever that
 * output follows is on a channel by now. End of file is left for run_collect() to see. */
static void reports_before_output(void *userdata) {
        launch *l = userdata;
        (void) drain_reports(l->report_fd, &l->st);
        drain_proxy(&l->st);
}

/* The poll timeout for limits.timeout: -1 without a deadline (or once it has passed). */
static int deadline_wait(const run_state *st) {
        if (st->deadline < 0 || st->timed_out)
                return -1;
        int64_t left = st->deadline - monotonic_ms();
        return left < 0 ? 0 : left > INT32_MAX ? INT32_MAX : (int) left;
}

/* One round of the loop: 1 to go on, 0 at EOF of the report channel, -errno. */
static int collect_round(launch *l) {
        run_state *st = &l->st;
        struct pollfd pfd[4 + WATCH_N] = { { .fd = l->report_fd, .events = POLLIN },
                                           { .fd = st->proxy_fd, .events = POLLIN } };
        capture_pollfds(&l->cap, &pfd[2]); /* poll() skips the fds that are -1 */
        watch_pollfds(st, &pfd[4]);
        int n;
        FORK_GATE_PAUSED(n = poll(pfd, ELEMENTSOF(pfd), deadline_wait(st)));
        if (n < 0)
                return errno == EINTR ? 1 : -errno;
        if (n == 0) {
                /* The monitor's death takes init and the whole PID namespace with it. */
                st->timed_out = true;
                (void) kill(l->child, SIGKILL);
                events_killed(st->ev, "timeout");
                return 1;
        }
        /* Refusals before output: the supervisor and the proxy report a refusal before the
         * refused call (or request) returns, so reading every queued report first puts a refusal
         * ahead of what the command wrote after it (docs/protocol.md, "Order of events"). */
        if (st->proxy_fd >= 0 && (pfd[1].revents & (POLLIN | POLLHUP | POLLERR))) {
                drain_proxy(st);
                if (pfd[1].revents & (POLLHUP | POLLERR))
                        st->proxy_fd = -1; /* the proxy died: nothing leaves */
        }
        int r = drain_reports(l->report_fd, st);
        if (r <= 0) {
                if (r == 0)
                        drain_proxy(st);
                return r;
        }
        watch_check(st, &pfd[4], l->child);
        /* Output waits for a slow reader at most until the deadline (then the stream closes):
         * limits.timeout holds even against a stalled reader of fd 1. */
        capture_pump(&l->cap, &pfd[2],
                     st->deadline < 0 ? -1 : st->timed_out ? 0 : st->deadline);
        return 1;
}

int run_collect(launch *l, bool until_started) {
        l->cap.before_output = reports_before_output;
        l->cap.before_output_userdata = l;
        int r;
        while ((r = collect_round(l)) > 0)
                if (until_started && (run_started(&l->st) || l->st.have_fatal ||
                                      l->st.timed_out || l->st.killed))
                        break;
        /* capture_end() pumps the rest: every report is in by then. */
        l->cap.before_output = NULL;
        l->cap.before_output_userdata = NULL;
        return r;
}

int run_result(launch *l, int cst, cordon_run_result *ret, cordon_error *err) {
        run_state *st = &l->st;
        watch_finish(st);
        if (st->killed && !st->timed_out)
                return killed_error(st, l->p, err);
        if (st->timed_out)
                return run_timeout_error(err, l->p->timeout_ms, "everything it started");
        if (st->have_fatal) {
                if (err)
                        *err = st->fatal;
                return -(st->fatal.sys_errno ? st->fatal.sys_errno : EINVAL);
        }
        bool direct = !l->be->base.confined; /* the none backend: the child is the command */
        int status = direct ? cst : st->status;
        if (!direct && !st->have_status)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, ECHILD,
                                        "the sandbox monitor ended without reporting the "
                                        "command's status (monitor wait status 0x%x)",
                                        (unsigned) cst);
        ret->wait_status = status;
        ret->violations = st->violations;
        ret->exit_code = run_exit_code(status);
        events_exit(st->ev, status, ret->exit_code);
        return 0;
}
