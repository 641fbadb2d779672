/* SPDX-License-Identifier: Apache-2.0 */
/* cordon_run(): plans the sandbox, starts its processes (linux/sandbox.h), and turns what they
 * report into the run's result or a structured error. */
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "linux/backend-landlock.h"
#include "linux/capture.h"
#include "linux/cgroup.h"
#include "linux/events.h"
#include "linux/landlock.h"
#include "linux/probe.h"
#include "linux/proxy-proc.h"
#include "linux/sandbox.h"
#include "plan/name-rules.h"
#include "plan/tool-caches.h"
#include "policy/policy.h"
#include "report/report.h"

extern char **environ;

typedef struct run_state {
        const cordon_run_options *opts;
        cordon_backend backend; /* the one running, named by "ready" */
        bool ready;             /* the command was about to be executed */
        events *ev;
        unsigned violations;
        bool have_status;
        int status;         /* the command's wait status */
        bool have_fatal;
        cordon_error fatal; /* the first failure reported */
        bool timed_out;
        const run_cgroup *cg; /* enforces limits.memory/pids, or NULL */
        uint64_t pids;        /* the ceiling it enforces (for the report) */
        int cancel_fd;        /* opts->cancel_fd, or -1 */
        const char *killed;   /* "oom" or "manual" once one of those ended the run */
} run_state;

static int64_t now_ms(void) {
        struct timespec ts;
        (void) clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

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
        if (st->opts && st->opts->on_violation)
                st->opts->on_violation(st->opts->userdata, &v);
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
                violation_delivered(st, m);
                break;
        case REPORT_READY:
                st->ready = true;
                events_ready(st->ev, st->backend);
                break;
        case REPORT_NET_VIOLATION:
                violation_delivered(st, m);
                break;
        case REPORT_CONNECTION:
                /* Only a warm session's supervisor records connections (supervisor_config
                 * .attribute); one command has nothing to attribute. Ignored. */
                break;
        default:
                break;
        }
}

/* Reads whatever the proxy has reported without waiting (it reports each refusal before the
 * client learns of it, so once the command has ended every refusal it saw is here). */
static void drain_proxy(int proxy_fd, run_state *st) {
        for (;;) {
                struct pollfd pfd = { .fd = proxy_fd, .events = POLLIN };
                if (proxy_fd < 0 || poll(&pfd, 1, 0) <= 0)
                        return;
                report_msg m;
                int r = report_read(proxy_fd, &m);
                if (r <= 0 && r != -EBADMSG)
                        return;
                /* A proxy that could not start (its rules: memory only) fails the run. */
                if (r > 0 && (m.type == REPORT_NET_VIOLATION || m.type == REPORT_FATAL))
                        handle_msg(st, &m);
        }
}

/* What ends a run besides the command and the timeout: an OOM kill in the run's cgroup, or the
 * caller's cancel_fd becoming readable (the CLI's SIGINT/SIGTERM). Two poll entries. */
static void watch_pollfds(const run_state *st, struct pollfd w[2]) {
        short oom_events = 0;
        int oom = st->killed ? -1 : cgroup_oom_fd(st->cg, &oom_events);
        w[0] = (struct pollfd) { .fd = oom, .events = oom_events };
        w[1] = (struct pollfd) { .fd = st->killed ? -1 : st->cancel_fd, .events = POLLIN };
}

/* Kills the sandbox with everything in it (the monitor's death takes the PID namespace along;
 * cgroup.kill reaches every task at once). The "killed" event follows when the run is over. */
static void watch_check(run_state *st, const struct pollfd w[2], pid_t child) {
        if (st->killed)
                return;
        if (w[0].fd >= 0 && w[0].revents) {
                cgroup_oom_ack(st->cg);
                if (cgroup_oom_kills(st->cg) > 0)
                        st->killed = "oom";
        }
        if (!st->killed && w[1].fd >= 0 && (w[1].revents & (POLLIN | POLLHUP | POLLERR)))
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
        if (st->opts && st->opts->on_violation)
                st->opts->on_violation(st->opts->userdata, &v);
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
                                "the run was stopped on request (cancel_fd): the command was "
                                "killed with everything it started");
}

/* Every report queued on the channel now: 1, or 0 at EOF (every sandbox process closed its
 * end), or -errno. */
static int drain_reports(int fd, run_state *st) {
        for (;;) {
                struct pollfd pfd = { .fd = fd, .events = POLLIN };
                if (poll(&pfd, 1, 0) <= 0)
                        return 1;
                report_msg m;
                int r = report_read(fd, &m);
                if (r == 0 || (r < 0 && r != -EBADMSG))
                        return r;
                if (r > 0)
                        handle_msg(st, &m);
        }
}

typedef struct report_fds {
        int fd;        /* the sandbox's report channel */
        int *proxy_fd; /* the proxy's, -1 when none or gone */
        run_state *st;
} report_fds;

/* capture.before_output: the refusals already queued, before the output read just now. The
 * supervisor and the proxy report a refusal before the refused call returns, so whatever that
 * output follows is on a channel by now. End of file is left for collect() to see. */
static void reports_before_output(void *userdata) {
        report_fds *rf = userdata;
        (void) drain_reports(rf->fd, rf->st);
        if (*rf->proxy_fd >= 0)
                drain_proxy(*rf->proxy_fd, rf->st);
}

static int collect_loop(int fd, int *proxy_fd, pid_t child, uint64_t timeout_ms, capture *cap,
                        run_state *st);

/* Reads reports until every sandbox process has closed its end, enforcing limits.timeout. The
 * proxy's reports (proxy_fd, -1 when there is no proxy) are read as they come. */
static int collect(int fd, int proxy_fd, pid_t child, uint64_t timeout_ms, capture *cap,
                   run_state *st) {
        report_fds rf = { .fd = fd, .proxy_fd = &proxy_fd, .st = st };
        cap->before_output = reports_before_output;
        cap->before_output_userdata = &rf;
        int r = collect_loop(fd, &proxy_fd, child, timeout_ms, cap, st);
        cap->before_output = NULL; /* capture_end() pumps the rest: every report is in by then */
        cap->before_output_userdata = NULL;
        return r;
}

static int collect_loop(int fd, int *proxy_fdp, pid_t child, uint64_t timeout_ms, capture *cap,
                        run_state *st) {
        int proxy_fd = *proxy_fdp;
        int64_t deadline = timeout_ms ? now_ms() + (int64_t) timeout_ms : -1;
        for (;;) {
                int wait = -1;
                if (deadline >= 0 && !st->timed_out) {
                        int64_t left = deadline - now_ms();
                        wait = left < 0 ? 0 : left > INT32_MAX ? INT32_MAX : (int) left;
                }
                struct pollfd pfd[6] = { { .fd = fd, .events = POLLIN },
                                         { .fd = proxy_fd, .events = POLLIN } };
                capture_pollfds(cap, &pfd[2]); /* poll() skips the fds that are -1 */
                watch_pollfds(st, &pfd[4]);
                int n = poll(pfd, 6, wait);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0) {
                        /* The monitor's death takes init and the whole PID namespace with it. */
                        st->timed_out = true;
                        (void) kill(child, SIGKILL);
                        events_killed(st->ev, "timeout");
                        continue;
                }
                /* Refusals before output: the supervisor and the proxy report a refusal before
                 * the refused call (or request) returns, so reading every queued report first
                 * puts a refusal ahead of what the command wrote after it (docs/protocol.md,
                 * "Order of events"). */
                if (proxy_fd >= 0 && (pfd[1].revents & (POLLIN | POLLHUP | POLLERR))) {
                        drain_proxy(proxy_fd, st);
                        if (pfd[1].revents & (POLLHUP | POLLERR))
                                proxy_fd = *proxy_fdp = -1; /* the proxy died: nothing leaves */
                }
                int r = drain_reports(fd, st);
                if (r <= 0) {
                        if (r == 0)
                                drain_proxy(proxy_fd, st);
                        return r;
                }
                watch_check(st, &pfd[4], child);
                /* Output waits for a slow reader at most until the deadline (then the stream
                 * closes): limits.timeout holds even against a stalled reader of fd 1. */
                capture_pump(cap, &pfd[2], deadline < 0 ? -1 : st->timed_out ? 0 : deadline);
        }
}

static int finish(run_state *st, int child_status_direct, bool direct,
                  const plan *p, cordon_run_result *ret, cordon_error *err) {
        if (st->killed && !st->timed_out)
                return killed_error(st, p, err);
        if (st->timed_out)
                return cordon_set_error(err, CORDON_TIMEOUT, ETIME,
                                        "the command ran longer than limits.timeout (%llu ms) "
                                        "and was killed with everything it started",
                                        (unsigned long long) p->timeout_ms);
        if (st->have_fatal) {
                if (err)
                        *err = st->fatal;
                return -(st->fatal.sys_errno ? st->fatal.sys_errno : EINVAL);
        }
        int status = direct ? child_status_direct : st->status;
        if (!direct && !st->have_status)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, ECHILD,
                                        "the sandbox monitor ended without reporting the "
                                        "command's status (monitor wait status 0x%x)",
                                        (unsigned) child_status_direct);
        ret->wait_status = status;
        ret->violations = st->violations;
        ret->exit_code = WIFEXITED(status) ? WEXITSTATUS(status)
                         : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 125;
        events_exit(st->ev, status, ret->exit_code);
        return 0;
}

/* `lr`: the landlock backend's run (its proxy is taken), NULL for native or unconfined.
 * *ret_ready: whether the command was about to be executed (nothing ran when false). */
static int spawn_and_wait(const plan *p, char *const argv[], bool confined, landlock_run *lr,
                          const cordon_run_options *opts, events *ev,
                          cordon_run_result *ret, bool *ret_ready, cordon_error *err) {
        int fds[2];
        int r = report_channel(fds);
        if (r < 0)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, r,
                                        "cannot create the report channel: %s", strerror(-r));
        /* The egress proxy's channels first; the proxy itself is forked right after the monitor,
         * so its start overlaps with the monitor's namespace set-up. It waits for the
         * listeners, which the monitor creates inside the sandbox's network namespace. */
        proxy_proc px = { .pid = -1, .listen_ch = -1, .report_fd = -1 };
        proxy_channels pch = { { -1, -1 }, { -1, -1 } };
        if (lr) { /* its proxy listens on the host's loopback already */
                px = lr->proxy;
                lr->proxy = (proxy_proc) { .pid = -1, .listen_ch = -1, .report_fd = -1 };
        } else if (confined && (r = proxy_prepare(&pch, err)) < 0) {
                safe_close(fds[0]);
                safe_close(fds[1]);
                return r;
        }
        if (!lr && confined)
                px.listen_ch = pch.lch[1]; /* the monitor's end */
        capture cap;
        if ((r = capture_open(&cap, opts ? opts->capture : 0, ev)) < 0) {
                safe_close(fds[0]);
                safe_close(fds[1]);
                if (pch.lch[1] >= 0)
                        px.listen_ch = -1; /* closed with the channels */
                proxy_channels_close(&pch);
                proxy_proc_stop(&px);
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, r,
                                        "cannot create the capture pipes: %s", strerror(-r));
        }
        pid_t launcher = getpid();
        pid_t child = fork();
        if (child < 0) {
                int e = errno;
                safe_close(fds[0]);
                safe_close(fds[1]);
                if (pch.lch[1] >= 0)
                        px.listen_ch = -1; /* closed with the channels */
                proxy_channels_close(&pch);
                proxy_proc_stop(&px);
                capture_end(&cap, -1, -1);
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, e, "fork: %s", strerror(e));
        }
        if (child == 0) {
                capture_child(&cap, fds[1]);
                (void) close(fds[0]);
                if (px.report_fd >= 0)
                        (void) close(px.report_fd);
                if (lr)
                        landlock_sandbox_main(p, lr, argv, fds[1], launcher);
                if (confined)
                        sandbox_monitor_main(p, argv, fds[1], launcher, px.listen_ch);
                sandbox_unconfined_main(p, argv, fds[1]);
        }
        safe_close(fds[1]);
        capture_parent(&cap);
        if (!lr && confined) {
                /* Not before: it would hold the capture pipes' sandbox ends until it closes
                 * what it does not need. */
                r = proxy_start(p, &pch, &px, err);
                if (r < 0) {
                        (void) kill(child, SIGKILL); /* no proxy: the sandbox must not run */
                        while (waitpid(child, NULL, 0) < 0 && errno == EINTR)
                                ;
                        safe_close(fds[0]);
                        capture_end(&cap, -1, -1);
                        return r;
                }
        }
        safe_close(px.listen_ch);
        px.listen_ch = -1;
        if (!confined)
                events_ready(ev, CORDON_BACKEND_NONE); /* nothing to build: ready at once */
        run_state st = { .opts = opts, .ev = ev, .cg = p->cgroup, .pids = p->pids,
                         .backend = lr ? CORDON_BACKEND_LANDLOCK : CORDON_BACKEND_NATIVE,
                         .cancel_fd = opts && opts->cancel_fd > 2 ? opts->cancel_fd : -1 };
        r = collect(fds[0], px.report_fd, child, p->timeout_ms, &cap, &st);
        /* Before the exit event: every "stdout"/"stderr" event precedes it. */
        capture_end(&cap, r < 0 ? -1 : child, st.timed_out ? capture_now_ms() : -1);
        *ret_ready = !confined || st.ready;
        safe_close(fds[0]);
        proxy_proc_stop(&px); /* the run is over: its tunnels end with it */
        if (r < 0)
                (void) kill(child, SIGKILL); /* fail closed: never leave a sandbox unattended */
        int cst = 0;
        while (waitpid(child, &cst, 0) < 0 && errno == EINTR)
                ;
        if (r < 0)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, r,
                                        "lost the report channel: %s", strerror(-r));
        watch_finish(&st);
        return finish(&st, cst, !confined, p, ret, err);
}

/* An AF_UNIX socket on fd 0-2 that is not connected to a peer, or a datagram one, could be pointed
 * at any socket the command can name (connect(), sendto() with an address): docker.sock, the
 * session bus. The filter only sees socket() and, with allowUnixSockets, connect(); so such a
 * descriptor is refused. Connected stream sockets (journald's stdout, a harness's socketpair) and
 * listening ones carry nothing further. */
static int check_stdio_socket(int fd, cordon_error *err) {
        int domain = 0, type = 0, listening = 0;
        socklen_t l = sizeof(int);
        if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &l) < 0 || domain != AF_UNIX)
                return 0;
        l = sizeof(int);
        (void) getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &l);
        l = sizeof(int);
        (void) getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &l);
        struct sockaddr_storage peer;
        socklen_t pl = sizeof(peer);
        bool connected = getpeername(fd, (struct sockaddr *) &peer, &pl) == 0;
        if (type != SOCK_DGRAM && (connected || listening))
                return 0;
        return cordon_set_error(err, CORDON_POLICY_UNENFORCEABLE, EPROTOTYPE,
                                "fd %d is an unconnected or datagram Unix socket: the command "
                                "could connect or send it to any socket it can name; hint: pass "
                                "a pipe or a connected stream socket", fd);
}

/* Fds 0-2 reach the command as they are: they refer to the host's mounts, not to the sandbox's
 * read-only view, and Landlock allows writes anywhere beneath a writable root. So a protected file
 * handed over read-only (`cordon run cmd < .git/config`) could be reopened for writing through
 * /proc/self/fd/0, and a directory on fds 0-2 would let openat() reach the protected files
 * beneath it. Both are refused rather than run weaker; a pipe (`cat FILE | cordon run ...`) carries
 * the same data safely. A file the caller opened for writing was handed over on purpose. */
static int check_stdio(const plan *p, cordon_error *err) {
        for (int fd = 0; fd <= 2; fd++) {
                struct stat st;
                int fl = fcntl(fd, F_GETFL);
                if (fl < 0 || fstat(fd, &st) < 0)
                        continue;
                if (S_ISSOCK(st.st_mode)) {
                        int r = check_stdio_socket(fd, err);
                        if (r < 0)
                                return r;
                        continue;
                }
                if (S_ISDIR(st.st_mode))
                        return cordon_set_error(err, CORDON_POLICY_UNENFORCEABLE, EISDIR,
                                                "fd %d is a directory: the command could reach "
                                                "protected files beneath it; hint: pass a file or "
                                                "a pipe", fd);
                if (!S_ISREG(st.st_mode) || (fl & O_ACCMODE) != O_RDONLY)
                        continue;
                char link[32], path[PATH_MAX];
                (void) snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
                ssize_t n = readlink(link, path, sizeof(path) - 1);
                if (n <= 0 || path[0] != '/')
                        continue;
                path[n] = '\0';
                const char *rule = NULL;
                if (name_rules_check_rename_source(&p->names, path, &rule) != NAME_ALLOWED)
                        return cordon_set_error(err, CORDON_POLICY_UNENFORCEABLE, EACCES,
                                                "fd %d is the protected file %s (rule %s): the "
                                                "command could reopen it for writing; hint: pipe "
                                                "it in instead (cat FILE | cordon run ...)",
                                                fd, path, rule ? rule : "?");
        }
        return 0;
}

static int check_backend(cordon_backend b, cordon_error *err) {
        switch (b) {
        case CORDON_BACKEND_AUTO:
        case CORDON_BACKEND_NATIVE:
                break;
        case CORDON_BACKEND_LANDLOCK:
                return landlock_backend_available(err);
        case CORDON_BACKEND_MICROVM:
                /* docs/design/backends.md: an explicitly requested backend never steps down. */
                return cordon_set_error(err, CORDON_SANDBOX_UNAVAILABLE, ENOTSUP,
                                        "refusing to run the command unconfined: the %s backend "
                                        "is not available in this build; hint: use --backend "
                                        "native or landlock (see 'cordon probe')",
                                        cordon_backend_to_string(b));
        case CORDON_BACKEND_NONE:
        default:
                break;
        }
        if (landlock_abi() < 1)
                return cordon_set_error(err, CORDON_SANDBOX_UNAVAILABLE, ENOSYS,
                                        "refusing to run the command unconfined: Landlock is not "
                                        "available on this kernel; hint: enable unprivileged user "
                                        "namespaces and a Landlock-enforcing kernel "
                                        "(lsm=...,landlock), see 'cordon probe'");
        return 0;
}

static int run_landlock(plan *p, char *const argv[], const cordon_run_options *opts, events *ev,
                        cordon_run_result *ret, cordon_error *err) {
        landlock_run lr;
        /* The default process ceiling without a cgroup: RLIMIT_NPROC would count every process
         * of the user on the host here (no user namespace), so it is not applied; a limits.pids
         * the policy sets is refused instead (backend-landlock.c). */
        if (!p->cgroup && p->pids_default)
                p->pids = 0;
        int r = landlock_run_prepare(p, &lr, err);
        if (r < 0)
                return r;
        ret->backend = CORDON_BACKEND_LANDLOCK;
        bool ready = false;
        r = spawn_and_wait(p, argv, true, &lr, opts, ev, ret, &ready, err);
        landlock_run_done(&lr);
        return r;
}

/* The unspecified backend's ladder (docs/design/backends.md): native, else landlock, else refuse.
 * Native is tried first and costs nothing extra when it works; only when it failed before the
 * command started does the probe (a few milliseconds) say whether this host lacks user namespaces
 * and can run the landlock backend. Then the step down is said once, through on_backend_note. */
static bool step_down_to_landlock(const cordon_run_options *opts) {
        const probe_facts *f = NULL;
        if (probe_facts_get(&f) < 0)
                return false;
        probe_backend b[PROBE_N_BACKENDS];
        probe_evaluate(f, b);
        if (b[0].status != PROBE_UNUSABLE || b[1].status == PROBE_UNUSABLE)
                return false; /* native is usable: its failure was something else, and stands */
        if (opts && opts->on_backend_note) {
                /* The probe's first reason ("user namespaces are not usable (unshare: ...)"). */
                char why[sizeof(b[0].hint)];
                (void) snprintf(why, sizeof(why), "%.*s", (int) strcspn(b[0].hint, ";"),
                                b[0].hint);
                opts->on_backend_note(opts->userdata, CORDON_BACKEND_LANDLOCK, why);
        }
        return true;
}

static int run_native(plan *p, char *const argv[], bool confined, cordon_backend requested,
                      const cordon_run_options *opts, events *ev, cordon_run_result *ret,
                      cordon_error *err) {
        bool ready = false;
        int r = spawn_and_wait(p, argv, confined, NULL, opts, ev, ret, &ready, err);
        if (r >= 0 || ready || !confined || requested != CORDON_BACKEND_AUTO)
                return r; /* an explicitly named backend never steps down */
        if (!step_down_to_landlock(opts))
                return r;
        if (err)
                *err = (cordon_error) { 0 };
        return run_landlock(p, argv, opts, ev, ret, err);
}

/* cordon_run() without the events that frame it (starting, error). */
static int run(const cordon_policy *policy, char *const argv[], const cordon_run_options *opts,
               events *ev, cordon_run_result *ret, cordon_error *err) {
        if (!policy || !argv || !argv[0] || !argv[0][0] || !ret)
                return cordon_set_error(err, CORDON_USAGE, EINVAL, "no command to run");
        cordon_backend backend = opts ? opts->backend : CORDON_BACKEND_AUTO;
        char *const *env = opts && opts->environ ? opts->environ : environ;
        _cleanup_free_ char *home = home_dir_of(env);
        _cleanup_free_ char *cwd = getcwd(NULL, 0);
        if (!home || !cwd)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, errno ? errno : ENOENT,
                                        "cannot determine the %s directory",
                                        home ? "current" : "home");
        plan *p = NULL;
        /* The tool cache root is created here, not by the (side-effect-free) planner. */
        int r = tool_caches_prepare(policy, env, home, err);
        if (r >= 0)
                r = plan_build(policy, home, cwd, env, &p, err);
        if (r < 0)
                return r;
        bool unconfined = p->mode == CORDON_MODE_DANGER_FULL_ACCESS ||
                          backend == CORDON_BACKEND_NONE;
        *ret = (cordon_run_result) { .backend = unconfined ? CORDON_BACKEND_NONE
                                                           : CORDON_BACKEND_NATIVE };
        if (unconfined)
                backend = CORDON_BACKEND_NONE;
        r = unconfined ? 0 : check_backend(backend, err);
        if (r >= 0 && !unconfined)
                r = check_stdio(p, err);
        /* limits.memory and limits.pids: a cgroup of the run's own, or rlimits (linux/cgroup.h). */
        if (r >= 0 && !unconfined)
                r = cgroup_for_limits(p->memory_bytes, &p->pids, p->pids_default, &p->cgroup,
                                      err);
        if (r >= 0 && backend == CORDON_BACKEND_LANDLOCK)
                r = run_landlock(p, argv, opts, ev, ret, err);
        else if (r >= 0)
                r = run_native(p, argv, !unconfined, backend, opts, ev, ret, err);
        cgroup_destroy(TAKE_PTR(p->cgroup));
        plan_free(p);
        return r;
}

int cordon_run(const cordon_policy *policy, char *const argv[], const cordon_run_options *opts,
               cordon_run_result *ret, cordon_error *err) {
        events ev;
        events_init(&ev, opts, policy ? policy->session_id : NULL);
        events_starting(&ev, opts ? opts->backend : CORDON_BACKEND_AUTO);
        cordon_error local = { 0 };
        int r = run(policy, argv, opts, &ev, ret, err ? err : &local);
        /* After a timeout the stream already ended with "killed": this emits nothing then. */
        if (r < 0)
                events_error(&ev, err ? err : &local);
        return r;
}
