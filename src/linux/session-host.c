/* SPDX-License-Identifier: Apache-2.0 */
/* The warm session host: one process per session, forked by the session handle
 * (session-handle.c, cordon_session_launch). It builds the session's sandbox once, through the
 * launch sequence every run uses (launch.c) — egress proxy, monitor (namespaces, mounts,
 * creation-rule supervisor) and an init that stays up (src/linux/session-init.c) — and then, per
 * exec, only asks init to fork the command. Each exec gets its own event stream
 * (src/linux/events.c), framed for the handle as
 *   "E<exec id> <event json>\n"  and finally  "R<exec id> <result json>\n";
 * the host announces the sandbox with "S\n" (ready) or "F<error json>\n" (it could not be built).
 *
 * Violations: the supervisor serves the whole session and names each refusal's caller by its
 * session id in the sandbox's PID namespace; init starts every exec as a session leader, so the
 * id is the pid of the exec's command and the refusal goes to that exec alone — also when it
 * comes from a process the command left running after it ended (then to no exec). The proxy's
 * refusals go by who connected from the refused connection's address (session-host-conns.c). What
 * cannot be attributed goes to every running exec (see attribute()). The egress ask mode's
 * questions go the same way, as events, and the handle's answers back (session-host-ask.c).
 * Killing this process ends the session: the monitor, init (and with it the PID namespace) and
 * the proxy all die with it. */
#include "linux/session-host.h"
#include "linux/session-host-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "linux/cgroup.h"
#include "run/events.h"
#include "run/run-end.h"
#include "linux/launch.h"
#include "linux/session-init.h"
#include "linux/vm-host.h"
#include "plan/plan.h"
#include "util/util.h"

extern char **environ;

static void send_link(host *h, const char *s, size_t n) {
        while (n > 0) {
                ssize_t w = write(h->link, s, n);
                if (w < 0 && errno == EINTR)
                        continue;
                if (w <= 0)
                        _exit(0); /* the session handle is gone: so is the session */
                s += w;
                n -= (size_t) w;
        }
}

static void send_fatal(host *h, const cordon_error *e) {
        json_t *o = json_pack("{s:s,s:s}", "code", cordon_code_name(e->code), "message",
                              e->message);
        char *t = o ? json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
        char line[4096];
        int n = snprintf(line, sizeof(line), "F%s\n", t ? t : "{}");
        send_link(h, line, (size_t) n < sizeof(line) ? (size_t) n : sizeof(line) - 1);
        free(t);
        json_decref(o);
}

/* Every event of an exec goes to the handle tagged with the exec's id. */
static void host_on_event(void *userdata, const char *line, size_t len) {
        host_exec *x = userdata;
        host *h = x->h;
        char tag[32];
        int n = snprintf(tag, sizeof(tag), "E%llu ", (unsigned long long) x->id);
        send_link(h, tag, (size_t) n);
        send_link(h, line, len);
}

static void send_result(host *h, host_exec *x) {
        json_t *o;
        if (x->have_fatal)
                o = json_pack("{s:{s:s,s:s}}", "error", "code", cordon_code_name(x->fatal.code),
                              "message", x->fatal.message);
        else {
                int st = x->status;
                o = json_pack("{s:i,s:i,s:i}", "exitCode", run_exit_code(st), "waitStatus", st,
                              "violations", (int) x->violations);
        }
        char *t = o ? json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
        json_decref(o);
        char tag[32];
        int n = snprintf(tag, sizeof(tag), "R%llu ", (unsigned long long) x->id);
        send_link(h, tag, (size_t) n);
        send_link(h, t ? t : "{}", t ? strlen(t) : 2);
        send_link(h, "\n", 1);
        free(t);
}

/* ---- building the sandbox ------------------------------------------------------------------- */

/* The session's sandbox, built by the launch sequence every run uses (launch.c) in its session
 * mode: plan, checks, cgroup, egress proxy, monitor; complete once init is ready to serve. The
 * host then holds what the launch made: the report channel, the proxy, the monitor, the plan.
 * `pol` holds the managed settings already (or the caller opted out of them):
 * cordon_session_launch() settled them before the fork (session-handle.c, session_managed). */
static int build(host *h, const cordon_policy *pol, cordon_backend backend, const char *home,
                 const char *workdir, cordon_error *err) {
        int ctl[2];
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ctl) < 0)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, errno, "socketpair: %s",
                                        strerror(errno));
        launch l;
        launch_init(&l);
        l.cwd = workdir;
        l.home = home;
        l.session_ctl = ctl[1];
        /* Brokers issue for the session (docs/settings.md, "credentialBrokers"): its id. */
        (void) snprintf(l.creds_run.id, sizeof(l.creds_run.id), "%s", h->session_id);
        l.opts.backend = backend;
        static char arg0[] = "true"; /* unused: init serves execs instead */
        char *const none[] = { arg0, NULL };
        int r = launch_start(&l, pol, none, err);
        (void) close(ctl[1]);
        if (r < 0) {
                (void) close(ctl[0]);
                return r;
        }
        l.p->session_ctl = -1; /* closed here: only init holds its end */
        h->ctl = ctl[0];
        h->rep = TAKE_FD(l.report_fd);
        h->px = l.px;
        h->monitor = l.child;
        h->p = TAKE_PTR(l.p);
        /* Issued at the session's launch, revoked when it ends (quit()). */
        h->creds_run = l.creds_run;
        free(l.creds_home);
        h->backend = l.backend;
        h->p->vm = NULL; /* launch's, on this stack: the VM is the sandbox's, never the host's */
        safe_close(l.child_pidfd);
        return 0;
}

/* ---- execs ---------------------------------------------------------------------------------- */

static void exec_free(host_exec *x) {
        int *fds[] = { &x->out, &x->err, &x->rpt };
        for (size_t i = 0; i < ELEMENTSOF(fds); i++)
                if (*fds[i] >= 0)
                        (void) close(*fds[i]);
        free(x);
}

/* Ends an exec that could not start: its error event and result; frees it. */
static void host_fail_exec_error(host *h, host_exec *x, const cordon_error *err) {
        x->have_fatal = true;
        x->fatal = *err;
        events_error(&x->ev, &x->fatal);
        send_result(h, x);
        exec_free(x);
}

static void host_fail_exec(host *h, host_exec *x, int e, const char *what) {
        cordon_error err = { 0 };
        (void) cordon_set_error(&err, CORDON_LAUNCH_FAILED, e, "%s: %s", what, strerror(e));
        host_fail_exec_error(h, x, &err);
}

/* The exec's command to init: argv, the session's environment with the exec's variables over
 * it, its directory, its stdio, and a report channel of its own (EXEC_FAILED before exec). */
static int send_request(host *h, host_exec *x, json_t *o, const int stdio[3], uint32_t flags) {
        json_t *argv_j = json_object_get(o, "argv");
        size_t argc = json_array_size(argv_j);
        if (argc == 0)
                return -EINVAL;
        char **argv = calloc(argc + 1, sizeof(char *));
        strv env = { 0 };
        for (size_t i = 0; argv && i < argc; i++)
                if (!(argv[i] = (char *) json_string_value(json_array_get(argv_j, i)))) {
                        free(argv);
                        return -EINVAL;
                }
        const char *cwd = json_string_value(json_object_get(o, "cwd"));
        int pr[2] = { -1, -1 };
        int r = argv && host_exec_env(h->p, json_object_get(o, "env"), &env) >= 0 &&
                                report_channel(pr) == 0
                        ? 0
                        : -EIO;
        if (r == 0)
                r = session_send_exec(h->ctl, (uint32_t) x->id, flags, argv, env.v,
                                      cwd ? cwd : h->p->workdir,
                                      (int[]){ stdio[0], stdio[1], stdio[2], pr[1] });
        safe_close(pr[1]);
        x->rpt = pr[0];
        free(argv);
        strv_done(&env);
        return r;
}

/* The backend the execs run on: the launch's (native, or microvm: its init runs them in the VM). */
static cordon_backend host_backend(const host *h) {
        return h->backend;
}

static host_exec *exec_new(host *h, uint64_t id) {
        host_exec *x = calloc(1, sizeof(*x));
        if (!x)
                return NULL;
        *x = (host_exec){ .h = h, .id = id, .out = -1, .err = -1, .rpt = -1 };
        events_init(&x->ev, host_on_event, x, h->session_id);
        events_starting(&x->ev, host_backend(h));
        return x;
}

static void exec_started(host *h, host_exec *x) {
        events_ready(&x->ev, host_backend(h));
        x->deadline = h->p->timeout_ms ? monotonic_ms() + (int64_t) h->p->timeout_ms : 0;
        h->execs[h->n_execs++] = x;
}

/* The captured streams (the request's CORDON_CAPTURE_* bits): the command's fd 1 or 2 becomes a
 * pipe this host reads into "stdout"/"stderr" events, each after the refusals queued before it
 * (drain_pipe()), in place of the /dev/null the handle sent for it. */
static int capture_pipes(host_exec *x, unsigned want, int stdio[3]) {
        static const unsigned bits[2] = { CORDON_CAPTURE_STDOUT, CORDON_CAPTURE_STDERR };
        int *ends[2] = { &x->out, &x->err };
        for (int i = 0; i < 2; i++) {
                if (!(want & bits[i]))
                        continue;
                int pp[2];
                if (pipe2(pp, O_CLOEXEC) < 0)
                        return -errno;
                safe_close(stdio[i + 1]);
                stdio[i + 1] = pp[1];
                *ends[i] = pp[0];
                (void) fcntl(pp[0], F_SETFL, O_NONBLOCK);
        }
        return 0;
}

/* "Y": cordon_session_exec(). Its stdio are the caller's descriptors, which came with the line;
 * they are checked as a run checks what it hands over (launch-fds.c): the plan is here. */
static void start_exec(host *h, uint64_t id, const char *json, int stdio[3]) {
        host_exec *x = exec_new(h, id);
        json_t *o = x ? json_loads(json, 0, NULL) : NULL;
        unsigned want = (unsigned) json_integer_value(json_object_get(o, "capture"));
        uint32_t flags = json_is_true(json_object_get(o, "tty")) ? SESSION_EXEC_TTY : 0;
        launch_fds f = { .stdio = { stdio[0], stdio[1], stdio[2] } };
        cordon_error e = { 0 };
        int r = !o || stdio[0] < 0 || stdio[1] < 0 || stdio[2] < 0 ? -EINVAL
                : h->n_execs >= HOST_EXECS_MAX                  ? -EBUSY
                                                               : launch_fds_check(&f, h->p, &e);
        /* The VM runs VM_SESSION_EXECS_MAX execs at once, one channel port each
         * (docs/design/microvm.md "Channels"): one more is refused while they run, never queued
         * behind them in silence. */
        if (r >= 0 && h->backend == CORDON_BACKEND_MICROVM && h->n_execs >= VM_SESSION_EXECS_MAX)
                r = cordon_set_error(&e, CORDON_LAUNCH_FAILED, EBUSY,
                                     "a microvm session runs at most %u execs at once and that "
                                     "many are running; hint: wait for one, or use a native "
                                     "session", VM_SESSION_EXECS_MAX);
        if (r >= 0)
                r = capture_pipes(x, want, stdio);
        if (r >= 0)
                r = send_request(h, x, o, stdio, flags);
        for (int i = 0; i < 3; i++)
                safe_close(stdio[i]); /* init holds the command's copies */
        json_decref(o);
        if (!x)
                return;
        if (r < 0 && e.code != CORDON_OK)
                host_fail_exec_error(h, x, &e);
        else if (r < 0)
                host_fail_exec(h, x, -r, "cannot start the command in the session");
        else
                exec_started(h, x);
}

static host_exec *host_find_exec(host *h, uint64_t id) {
        for (size_t i = 0; i < h->n_execs; i++)
                if (h->execs[i]->id == id)
                        return h->execs[i];
        return NULL;
}

static bool drain_reports(host *h, int fd);

/* Reads what a pipe holds now; closes it at EOF (or when `final`: after the command exited, a
 * background process keeping the pipe open must not hold the exec open). */
static void drain_pipe(host_exec *x, int *fd, bool is_err, bool final) {
        char buf[16384];
        while (*fd >= 0) {
                ssize_t n = read(*fd, buf, sizeof(buf));
                if (n < 0 && errno == EINTR)
                        continue;
                if (n > 0) {
                        /* The refusals queued by now first: what was just read may follow one
                         * (the supervisor and the proxy report before the call returns). */
                        (void) drain_reports(x->h, x->h->rep);
                        (void) drain_reports(x->h, x->h->px.report_fd);
                        events_output(&x->ev, is_err, buf, (size_t) n);
                        continue;
                }
                if (n == 0 || final || errno != EAGAIN) {
                        (void) close(*fd);
                        *fd = -1;
                }
                return;
        }
}

static void exec_report(host_exec *x) {
        report_msg m;
        int r = report_read(x->rpt, &m);
        if (r > 0 && m.type == REPORT_FATAL && !x->have_fatal) {
                x->have_fatal = true;
                (void) cordon_set_error(&x->fatal, (cordon_code) m.code, m.sys_errno, "%s",
                                        m.text);
        }
        if (r <= 0 && r != -EBADMSG) {
                (void) close(x->rpt);
                x->rpt = -1;
        }
}

static void remember_ended(host *h, pid_t sid) {
        if (sid <= 0)
                return;
        if (h->n_ended == HOST_ENDED_MAX) {
                memmove(h->ended, h->ended + 1, (HOST_ENDED_MAX - 1) * sizeof(pid_t));
                h->n_ended--;
        }
        h->ended[h->n_ended++] = sid;
}

static void maybe_finish(host *h, size_t i) {
        host_exec *x = h->execs[i];
        if (!x->exited)
                return;
        /* Its refusals were queued before init saw it exit: deliver them while it is running. */
        if (!drain_reports(h, h->rep))
                _exit(0);
        if (!drain_reports(h, h->px.report_fd)) {
                (void) close(h->px.report_fd);
                h->px.report_fd = -1;
        }
        remember_ended(h, x->leader);
        drain_pipe(x, &x->out, false, true);
        drain_pipe(x, &x->err, true, true);
        while (x->rpt >= 0)
                exec_report(x);
        if (x->timed_out) {
                x->have_fatal = true;
                (void) run_timeout_error(&x->fatal, h->p->timeout_ms, "its process group");
        } else if (x->have_fatal)
                events_error(&x->ev, &x->fatal);
        else
                events_exit(&x->ev, x->status, run_exit_code(x->status));
        send_result(h, x);
        exec_free(x);
        h->execs[i] = h->execs[--h->n_execs];
}

static void deliver(host_exec *x, const cordon_violation *v) {
        x->violations += (unsigned) v->count;
        events_violation(&x->ev, v);
}

/* The exec whose command leads session `sid`, NULL if none runs. */
host_exec *host_exec_of_sid(host *h, pid_t sid) {
        for (size_t i = 0; sid > 0 && i < h->n_execs; i++)
                if (h->execs[i]->leader == sid)
                        return h->execs[i];
        return NULL;
}

static bool ended_sid(const host *h, pid_t sid) {
        for (size_t i = 0; sid > 0 && i < h->n_ended; i++)
                if (h->ended[i] == sid)
                        return true;
        return false;
}

static bool all_started(const host *h) {
        for (size_t i = 0; i < h->n_execs; i++)
                if (!h->execs[i]->started && !h->execs[i]->exited)
                        return false;
        return true;
}

static void on_ctl(host *h);

/* Who gets a refusal. By session id: its exec, or nobody when that exec already ended (a
 * process it left behind; no stream is open for it); a proxy refusal by the session id of the
 * connection's maker (host_client_sid()). Not attributable — a proxy refusal on a connection with no
 * record, an aggregate, a process that left its exec's session with setsid() — every running
 * exec gets it, so a refusal is
 * never hidden from the exec that may have caused it. A command's refusal can arrive before
 * init's STARTED names its pid: then init's pending messages are read first (init answers
 * every exec request at once, so this waits at most a moment). */
static void attribute(host *h, int32_t sid, const cordon_violation *v) {
        for (int tries = 0; sid > 0 && !host_exec_of_sid(h, sid) && !ended_sid(h, sid) &&
                            !all_started(h) && tries < 100;
             tries++) {
                struct pollfd pfd = { .fd = h->ctl, .events = POLLIN };
                if (poll(&pfd, 1, 20) > 0)
                        on_ctl(h);
        }
        host_exec *x = host_exec_of_sid(h, sid);
        if (x)
                deliver(x, v);
        else if (!ended_sid(h, sid))
                for (size_t i = 0; i < h->n_execs; i++)
                        deliver(h->execs[i], v);
}

static bool session_report(host *h, int fd);

/* How long a redirected connection's refusal waits for the supervisor's record of it. */
#define REDIRECT_RECORD_MS 250

/* A connection the interception redirected to the proxy (its key names the redirect's port). */
static bool redirected(const char *client) {
        char port[16];
        (void) snprintf(port, sizeof(port), ">%u", (unsigned) PROXY_TRANSPARENT_PORT);
        size_t n = strlen(client), k = strlen(port);
        return n > k && strcmp(client + n - k, port) == 0;
}

/* The proxy refuses a redirected connection as it accepts it, with nothing read: that can come
 * before the supervisor, which performed the connect(), has written its record (it does so as
 * soon as the connect() returns, racing the proxy), so the record is waited for, briefly; no
 * record by then (a process that left its session) reaches every running exec. */
static pid_t redirect_sid(host *h, const char *client) {
        pid_t sid = 0;
        int64_t until = monotonic_ms() + REDIRECT_RECORD_MS;
        for (int64_t left = REDIRECT_RECORD_MS; left > 0; left = until - monotonic_ms()) {
                struct pollfd pfd = { .fd = h->rep, .events = POLLIN };
                int n = poll(&pfd, 1, (int) left);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0 || !session_report(h, h->rep))
                        return 0;
                if (host_conn_sid(h, client, &sid))
                        return sid;
        }
        return 0;
}

/* The session id of the caller that connected to the proxy from where the refused request came
 * (session-host-conns.c); 0 (every running exec) when unknown. The supervisor wrote its record before
 * that connect() returned, so before the client could send the request the proxy refused: what
 * the supervisor's channel holds now is read first and the record is there. */
pid_t host_client_sid(host *h, const char *client) {
        pid_t sid = 0;
        if (!client[0] || h->rep < 0)
                return 0;
        (void) drain_reports(h, h->rep); /* at EOF serve() ends the session next */
        if (host_conn_sid(h, client, &sid))
                return sid;
        return redirected(client) ? redirect_sid(h, client) : 0;
}

/* A refusal from the session's supervisor or proxy; false at EOF (or a broken channel). */
static bool session_report(host *h, int fd) {
        report_msg m;
        int r = report_read(fd, &m);
        if (r == 0 || (r < 0 && r != -EBADMSG))
                return false;
        cordon_violation v;
        if (r > 0 && m.type == REPORT_CONNECTION)
                host_conn_record(h, m.sid, report_msg_client(&m));
        else if (r > 0 && fd == h->px.report_fd && host_ask_report(h, &m))
                ; /* the ask mode's (session-host-ask.c) */
        else if (r > 0 && report_msg_violation(&m, &v))
                attribute(h, m.type == REPORT_VIOLATION ? m.sid
                                                    : host_client_sid(h, report_msg_client(&m)),
                          &v);
        return true;
}

/* Every refusal already queued, before any output is read: the supervisor and the proxy report
 * a refusal before the refused call (or request) returns, so what a command writes after one
 * is read after it, and its exit is seen after it (docs/protocol.md, "Order of events"). False
 * when the channel ended. */
static bool drain_reports(host *h, int fd) {
        for (;;) {
                struct pollfd pfd = { .fd = fd, .events = POLLIN };
                if (fd < 0 || poll(&pfd, 1, 0) <= 0)
                        return true;
                if (!session_report(h, fd))
                        return false;
        }
}

static void on_ctl(host *h) {
        /* serve() calls this for the readiness its poll() saw, and attribute() may have read
         * that very message since: check again rather than block in recv() until init's next
         * message (which may never come while the session waits for this one). */
        struct pollfd pfd = { .fd = h->ctl, .events = POLLIN };
        if (poll(&pfd, 1, 0) <= 0)
                return;
        session_msg m;
        int r = session_read_msg(h->ctl, &m);
        if (r == 0 || (r < 0 && r != -EBADMSG))
                _exit(0); /* init is gone: the session is over */
        host_exec *x = r > 0 ? host_find_exec(h, m.exec_id) : NULL;
        if (!x)
                return;
        if (m.type == SESSION_MSG_STARTED) {
                x->started = true;
                x->leader = m.pid;
        }
        else if (m.type == SESSION_MSG_EXITED) {
                x->exited = true;
                x->status = m.status;
        }
}

static void kill_exec(host *h, uint64_t id) {
        if (host_find_exec(h, id))
                (void) session_send_kill(h->ctl, (uint32_t) id);
}

/* session.suspend / resume: the cgroup v2 freezer when the session has a v2 cgroup (the
 * processes cannot tell: no SIGSTOP reaches their parents), else init stops and continues every
 * process of the session's PID namespace with signals (session-init.c). */
static void freeze(host *h, bool on) {
        const run_cgroup *cg = h->p->cgroup;
        if (cg && cgroup_get_kind(cg) == CGROUP_V2) {
                char path[4096];
                (void) snprintf(path, sizeof(path), "%s/cgroup.freeze", cgroup_get_path(cg));
                int fd = open(path, O_WRONLY | O_CLOEXEC);
                bool ok = fd >= 0 && write(fd, on ? "1" : "0", 1) == 1;
                if (fd >= 0)
                        (void) close(fd);
                if (ok)
                        return;
        }
        (void) session_send_simple(h->ctl, on ? SESSION_MSG_FREEZE : SESSION_MSG_THAW);
}

/* "Q": the session ends in order — the monitor's death takes init and the whole PID
 * namespace; the cgroup is emptied and removed (bounded), the proxy stopped. A host killed
 * outright (the handle's fallback) leaves only an empty cgroup directory behind. */
static _noreturn_ void quit(host *h) {
        proxy_proc_stop(&h->px);
        if (h->monitor > 0)
                (void) kill(h->monitor, SIGKILL);
        /* The reapers revoke once the sandbox is gone (the loop below reaps them too). */
        creds_run_release(&h->creds_run);
        if (h->p->cgroup)
                cgroup_kill(h->p->cgroup);
        /* The host is a subreaper: init comes back to it when the monitor dies, and init's own
         * exit waits until every process of the PID namespace is gone. Reap until nothing is
         * left (bounded), so "destroyed" means nothing of the session runs. */
        for (int waited = 0; waited < 3000; waited += 5) {
                pid_t w = waitpid(-1, NULL, WNOHANG);
                if (w < 0 && errno == ECHILD)
                        break;
                if (w <= 0)
                        (void) usleep(5000);
        }
        if (h->p->cgroup) {
                cgroup_destroy(h->p->cgroup);
                h->p->cgroup = NULL;
        }
        _exit(0);
}

/* The next three queued descriptors (a "Y" line's stdio); -1 for each one missing. */
static void fdq_take3(host *h, int out[3]) {
        for (int i = 0; i < 3; i++) {
                out[i] = -1;
                if (h->n_fdq == 0)
                        continue;
                out[i] = h->fdq[0];
                memmove(h->fdq, h->fdq + 1, --h->n_fdq * sizeof(int));
        }
}

/* Descriptors sent with the launcher's bytes join the queue; beyond its room they are closed
 * (the "Y" lines they belonged to then fail: EINVAL). */
static void fdq_add(host *h, struct msghdr *mh) {
        for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
                if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
                        continue;
                size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                for (size_t k = 0; k < n; k++) {
                        int fd;
                        memcpy(&fd, CMSG_DATA(c) + k * sizeof(int), sizeof(fd));
                        if (h->n_fdq < HOST_FDQ_MAX)
                                h->fdq[h->n_fdq++] = fd;
                        else
                                (void) close(fd);
                }
        }
}

/* One line from the session handle: "Y<id> <json>" (its stdio queued), "K<id>", "G<id> <signal>",
 * "P", "C", "Q", and the ask mode's "W" (the handle answers) and "A<id> <answer>". */
static void launcher_line(host *h, char *line) {
        char *sp = strchr(line, ' ');
        uint64_t id = strtoull(line + 1, NULL, 10);
        if (line[0] == 'Y' && sp) {
                int stdio[3];
                fdq_take3(h, stdio);
                start_exec(h, id, sp + 1, stdio);
        } else if (line[0] == 'P' || line[0] == 'C')
                freeze(h, line[0] == 'P');
        else if (line[0] == 'Q')
                quit(h);
        else if (line[0] == 'K')
                kill_exec(h, id);
        else if (line[0] == 'W')
                h->answers = true;
        else if (line[0] == 'A')
                host_ask_answer(h, line);
        else if (line[0] == 'G' && sp && host_find_exec(h, id))
                (void) session_send_signal(h->ctl, (uint32_t) id, atoi(sp + 1));
}

/* What the launcher wrote: bytes (lines) and, with a "Y" line, its stdio (SCM_RIGHTS). */
static void on_link(host *h) {
        if (h->in_cap - h->in_len < 65536) {
                size_t cap = h->in_cap ? h->in_cap * 2 : 65536;
                char *nb = cap <= HOST_LINE_MAX ? realloc(h->in, cap) : NULL;
                if (!nb)
                        _exit(0);
                h->in = nb;
                h->in_cap = cap;
        }
        union {
                char buf[CMSG_SPACE(sizeof(int) * 16)];
                struct cmsghdr align;
        } ctl;
        struct iovec iov = { .iov_base = h->in + h->in_len, .iov_len = h->in_cap - h->in_len };
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
                             .msg_controllen = sizeof(ctl.buf) };
        ssize_t n = recvmsg(h->link, &mh, MSG_CMSG_CLOEXEC);
        if (n < 0 && errno == EINTR)
                return;
        if (n <= 0)
                quit(h); /* the launcher is gone or closed us: the session ends */
        fdq_add(h, &mh);
        h->in_len += (size_t) n;
        size_t start = 0;
        for (size_t i = 0; i < h->in_len; i++) {
                if (h->in[i] != '\n')
                        continue;
                h->in[i] = '\0';
                launcher_line(h, h->in + start);
                start = i + 1;
        }
        memmove(h->in, h->in + start, h->in_len - start);
        h->in_len -= start;
}

/* limits.timeout per exec: its process group is killed; the stream ends with "killed". */
static int expire(host *h) {
        int64_t now = monotonic_ms(), next = -1;
        for (size_t i = 0; i < h->n_execs; i++) {
                host_exec *x = h->execs[i];
                if (!x->deadline || x->timed_out || x->exited)
                        continue;
                if (x->deadline <= now) {
                        x->timed_out = true;
                        events_killed(&x->ev, "timeout");
                        (void) session_send_kill(h->ctl, (uint32_t) x->id);
                } else if (next < 0 || x->deadline - now < next) {
                        next = x->deadline - now;
                }
        }
        return next > INT32_MAX ? INT32_MAX : (int) next;
}

/* An OOM kill in the session's cgroup takes the whole session (memory.oom.group): every running
 * exec ends with "killed" reason "oom", then the host ends. */
static void check_oom(host *h) {
        cgroup_oom_ack(h->p->cgroup);
        if (cgroup_oom_kills(h->p->cgroup) == 0)
                return;
        cgroup_kill(h->p->cgroup);
        for (size_t i = 0; i < h->n_execs; i++) {
                host_exec *x = h->execs[i];
                events_killed(&x->ev, "oom");
                x->have_fatal = true;
                (void) cordon_set_error(&x->fatal, CORDON_KILLED, ENOMEM,
                                        "the session exceeded limits.memory and was killed");
                send_result(h, x);
        }
        _exit(0);
}

static _noreturn_ void serve(host *h) {
        short oom_events = 0;
        int oom_fd = cgroup_oom_fd(h->p->cgroup, &oom_events);
        for (;;) {
                struct pollfd pfd[5 + 3 * HOST_EXECS_MAX];
                size_t n = 0;
                int fixed[] = { h->link, h->rep, h->px.report_fd, h->ctl, oom_fd };
                for (size_t i = 0; i < ELEMENTSOF(fixed); i++)
                        pfd[n++] = (struct pollfd){ .fd = fixed[i],
                                                    .events = i == 4 ? oom_events : POLLIN };
                for (size_t i = 0; i < h->n_execs; i++) {
                        host_exec *x = h->execs[i];
                        pfd[n++] = (struct pollfd){ .fd = x->out, .events = POLLIN };
                        pfd[n++] = (struct pollfd){ .fd = x->err, .events = POLLIN };
                        pfd[n++] = (struct pollfd){ .fd = x->rpt, .events = POLLIN };
                }
                if (poll(pfd, n, expire(h)) < 0) {
                        if (errno == EINTR)
                                continue;
                        _exit(1);
                }
                const short ready = POLLIN | POLLHUP | POLLERR;
                /* Refusals first, then outputs and exec reports, then exits: an exit is never
                 * reported before its output, output never before the refusal it followed. */
                if (!drain_reports(h, h->rep))
                        _exit(0); /* the monitor is gone: the session is over */
                if (!drain_reports(h, h->px.report_fd)) {
                        (void) close(h->px.report_fd);
                        h->px.report_fd = -1;
                }
                if (oom_fd >= 0 && (pfd[4].revents & oom_events))
                        check_oom(h);
                for (size_t i = 0, k = 5; i < h->n_execs; i++, k += 3) {
                        host_exec *x = h->execs[i];
                        if (pfd[k].revents & ready)
                                drain_pipe(x, &x->out, false, false);
                        if (pfd[k + 1].revents & ready)
                                drain_pipe(x, &x->err, true, false);
                        if (pfd[k + 2].revents & ready)
                                exec_report(x);
                }
                if (pfd[3].revents & ready)
                        on_ctl(h);
                for (size_t i = h->n_execs; i-- > 0;)
                        maybe_finish(h, i);
                if (pfd[0].revents & ready)
                        on_link(h);
        }
}

_noreturn_ void session_host_main(const cordon_policy *pol, cordon_backend backend,
                                  const char *session_id, const char *home, const char *workdir,
                                  int link) {
        (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
        (void) prctl(PR_SET_NAME, "cordond-session", 0, 0, 0);
        (void) prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); /* see quit() */
        sigset_t none;
        sigemptyset(&none);
        (void) sigprocmask(SIG_SETMASK, &none, NULL);
        (void) signal(SIGPIPE, SIG_IGN);
        int null = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (null >= 0)
                for (int i = 0; i < 3; i++)
                        (void) dup2(null, i);
        static host h;
        h = (host){ .link = link, .rep = -1, .ctl = -1,
                    .px = { .pid = -1, .listen_ch = -1, .report_fd = -1 } };
        (void) snprintf(h.session_id, sizeof(h.session_id), "%s", session_id);
        cordon_error err = { 0 };
        if (build(&h, pol, backend, home, workdir, &err) < 0) {
                send_fatal(&h, &err);
                _exit(0);
        }
        send_link(&h, "S\n", 2);
        serve(&h);
}
