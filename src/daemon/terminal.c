/* SPDX-License-Identifier: Apache-2.0 */
/* session.terminal, terminal.input, terminal.resize, terminal.close (docs/protocol.md): a PTY the
 * daemon opens (openpty), its slave the shell's stdio and controlling terminal
 * (CORDON_SPAWN_TTY), its master read here into "stdout" events and written with the input.
 *   - backend native: a cordon_session_exec() in the session's sandbox; its events and result
 *     come through the session's dispatch (session-warm.c).
 *   - a microvm session (backend native or microvm): the same exec, which init runs in the
 *     session's VM; the guest command gets a PTY of the guest's own, this PTY is the VMM host's
 *     terminal (docs/design/microvm.md "Terminals"). Closing it is a hangup, not a kill.
 *   - backend none: the user's own shell on the host, unconfined — what an IDE terminal is
 *     (docs/design/daemon.md); the client asked for exactly that, and its events say so. A
 *     cordon_spawn() with the none backend: its events come from the run's own thread, so they
 *     travel through a pipe into this loop (as a cold exec worker's do); its end is watched on
 *     cordon_process_fd().
 * Order: the PTY is read only after "ready" has gone out, and drained before the terminal event
 * (exit, killed, error), so the output sits between them as it did. */
#include "daemon/daemon.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pty.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include "run/events.h"
#include "util/util.h"

extern char **environ;

#define TERMINAL_INPUT_MAX (1024 * 1024) /* input the PTY has not taken yet */

struct terminal {
        int master;
        watch_ref pty;            /* WATCH_PTY on the master */
        uint32_t pty_events;      /* registered with epoll */
        bool hup;                 /* the slave's last holder closed it: nothing more to read */
        bool ready_seen;          /* "ready" went out: output may follow */
        events ev;                /* formats the PTY's output as "stdout" events */
        char *input;              /* terminal.input not yet taken by the PTY */
        size_t input_len;
        int events_w;             /* backend none: the run's thread writes its events here */
        watch_ref done;           /* backend none: WATCH_DONE on cordon_process_fd() */
        bool done_watched;
};

/* ---- the PTY ------------------------------------------------------------------------------ */

void terminal_update(daemon_t *d, exec_run *x) {
        struct terminal *t = x->term;
        if (!t || t->master < 0)
                return;
        uint32_t want = (t->ready_seen && !t->hup && !x->paused ? EPOLLIN : 0) |
                        (t->input_len ? EPOLLOUT : 0);
        if (want == t->pty_events)
                return;
        struct epoll_event ev = { .events = want, .data.ptr = &t->pty };
        int op = !t->pty_events ? EPOLL_CTL_ADD : want ? EPOLL_CTL_MOD : EPOLL_CTL_DEL;
        if (epoll_ctl(d->epfd, op, t->master, &ev) == 0)
                t->pty_events = want;
}

static void pty_output(void *userdata, const char *line, size_t len) {
        exec_run *x = userdata;
        if (x->owner && len > 1)
                (void) client_send(x->owner, proto_event_line(x->request_id, line, len - 1));
}

/* What the master holds now, as "stdout" events (all of it when `final`); at EIO (the slave
 * closed everywhere) reading ends. */
static void pty_read(daemon_t *d, exec_run *x, bool final) {
        struct terminal *t = x->term;
        char buf[16384];
        for (int round = 0; t->master >= 0 && !t->hup && (final || round < 16); round++) {
                if (!final && x->owner && client_queued(x->owner) > DAEMON_OUT_MAX) {
                        x->paused = true; /* backpressure: the shell blocks on the PTY */
                        break;
                }
                ssize_t n = read(t->master, buf, sizeof(buf));
                if (n < 0 && errno == EINTR)
                        continue;
                if (n > 0) {
                        events_output(&t->ev, false, buf, (size_t) n);
                        continue;
                }
                if (n == 0 || errno != EAGAIN)
                        t->hup = true;
                break;
        }
        terminal_update(d, x);
}

static void pty_write(daemon_t *d, exec_run *x) {
        struct terminal *t = x->term;
        size_t off = 0;
        while (off < t->input_len) {
                ssize_t w = write(t->master, t->input + off, t->input_len - off);
                if (w < 0 && errno == EINTR)
                        continue;
                if (w <= 0) {
                        if (w < 0 && errno != EAGAIN)
                                off = t->input_len; /* the PTY is gone: the input with it */
                        break;
                }
                off += (size_t) w;
        }
        memmove(t->input, t->input + off, t->input_len - off);
        t->input_len -= off;
        terminal_update(d, x);
}

void terminal_on_pty(daemon_t *d, watch_ref *w, uint32_t ready) {
        exec_run *x = w->x;
        if (ready & (EPOLLIN | EPOLLHUP | EPOLLERR))
                pty_read(d, x, false);
        if (x->term && (ready & EPOLLOUT))
                pty_write(d, x);
}

/* ---- the terminal's events ------------------------------------------------------------------ */

/* A native terminal's event, from the session's dispatch. */
static void terminal_on_lib_event(void *userdata, const char *line, size_t len) {
        exec_run *x = userdata;
        terminal_event(x->d, x, line, len);
}

void terminal_event(daemon_t *d, exec_run *x, const char *line, size_t len) {
        json_t *o = json_loadb(line, len, 0, NULL);
        const char *type = json_string_value(json_object_get(o, "type"));
        bool last = type && (strcmp(type, "exit") == 0 || strcmp(type, "killed") == 0 ||
                             strcmp(type, "error") == 0);
        bool ready = type && strcmp(type, "ready") == 0;
        json_decref(o);
        if (last && x->term)
                pty_read(d, x, true); /* everything the shell wrote comes before its end */
        if (x->owner && len > 1)
                (void) client_send(x->owner, proto_event_line(x->request_id, line, len - 1));
        if (ready && x->term) {
                x->term->ready_seen = true;
                terminal_update(d, x);
        }
}

/* Backend none: an event from the run's thread, into this loop's pipe ("E" + the line, as a
 * cold exec worker writes them). The pipe holds the few events such a run has. */
static void local_event(void *userdata, const char *line, size_t len) {
        const struct terminal *t = userdata;
        struct iovec iov[2] = { { .iov_base = (char *) "E", .iov_len = 1 },
                                { .iov_base = (char *) line, .iov_len = len } };
        while (writev(t->events_w, iov, 2) < 0 && errno == EINTR)
                ;
}

void terminal_free(exec_run *x) {
        struct terminal *t = x->term;
        if (!t)
                return;
        safe_close(t->master);
        safe_close(t->events_w);
        free(t->input);
        free(t);
        x->term = NULL;
}

void terminal_done(daemon_t *d, exec_run *x) {
        struct terminal *t = x->term;
        if (!t)
                return;
        if (t->pty_events)
                (void) epoll_ctl(d->epfd, EPOLL_CTL_DEL, t->master, NULL);
        if (t->done_watched)
                (void) epoll_ctl(d->epfd, EPOLL_CTL_DEL, cordon_process_fd(x->proc), NULL);
        t->pty_events = 0;
        t->done_watched = false;
        t->master = safe_close(t->master);
        /* Its events pipe: what is left in it was read (terminal_on_done). */
        (void) exec_watch(d, x, false);
        x->events_fd = safe_close(x->events_fd);
}

/* The none terminal's run is over: its last events, then its result. */
void terminal_on_done(daemon_t *d, watch_ref *w) {
        exec_run *x = w->x;
        if (x->events_fd >= 0)
                exec_on_readable(d, x); /* reads until EAGAIN: all of it, it is a few lines */
        warm_finish(d, x);
}

/* ---- opening one --------------------------------------------------------------------------- */

/* Backend native: the shell in the session's sandbox, through its init. */
static int start_native(session *s, exec_run *x, char *const argv[], cordon_spawn_options *o,
                        cordon_error *err) {
        static char term[] = "TERM=xterm-256color";
        char *env[] = { term, NULL };
        o->environ = env; /* set over the session's environment */
        return cordon_session_exec(s->host.handle, argv, o, &x->proc, err);
}

/* The daemon's environment, with TERM unless it has one. Caller frees the array only. */
static char **local_environ(void) {
        static char term[] = "TERM=xterm-256color";
        size_t n = 0;
        bool has_term = false;
        for (; environ[n]; n++)
                has_term = has_term || strncmp(environ[n], "TERM=", 5) == 0;
        char **env = calloc(n + 2, sizeof(char *));
        if (!env)
                return NULL;
        memcpy(env, environ, n * sizeof(char *));
        if (!has_term)
                env[n] = term;
        return env;
}

/* Backend none: cordon_spawn() of the user's own shell on the host, under the session's
 * policy's environment rules and workdir, unconfined by request. */
static int start_local(daemon_t *d, session *s, exec_run *x, char *const argv[],
                       cordon_spawn_options *o, cordon_error *err) {
        struct terminal *t = x->term;
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, errno, "pipe: %s",
                                        strerror(errno));
        (void) fcntl(p[0], F_SETFL, O_NONBLOCK);
        x->events_fd = p[0];
        t->events_w = p[1];
        x->local = true;
        cordon_policy *pol = NULL;
        _cleanup_free_ char **env = local_environ();
        /* A host shell is an unconfined command: allowUnsandboxedCommands: false forbids it. */
        int r = env ? exec_resolve_policy(d, s, NULL, NULL, "an unconfined host terminal", &pol,
                                          err)
                    : cordon_set_error(err, CORDON_LAUNCH_FAILED, ENOMEM, "out of memory");
        if (r >= 0 && cordon_policy_set_session_id(pol, s->id) < 0) /* its events' sessionId */
                r = cordon_set_error(err, CORDON_LAUNCH_FAILED, ENOMEM, "out of memory");
        o->backend = CORDON_BACKEND_NONE;
        o->environ = env;
        o->cwd = s->workdir;
        o->on_event = local_event;
        o->event_userdata = t;
        if (r >= 0)
                r = cordon_spawn(pol, argv, o, &x->proc, err);
        cordon_policy_free(pol);
        exec_on_readable(d, x); /* "starting" and "ready" are in the pipe already */
        if (r < 0)
                return r;
        t->done = (watch_ref){ .kind = WATCH_DONE, .x = x };
        struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &t->done };
        if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, cordon_process_fd(x->proc), &ev) < 0) {
                warm_kill(x);
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, errno, "epoll");
        }
        t->done_watched = true;
        return exec_watch(d, x, true);
}

/* The terminal's state and its PTY, `cols` x `rows`; the slave's descriptor in *slave. */
static int terminal_new(exec_run *x, const proto_terminal *pt, int *slave) {
        struct terminal *t = calloc(1, sizeof(*t));
        if (!t)
                return -ENOMEM;
        *t = (struct terminal){ .master = -1, .events_w = -1, .pty = { WATCH_PTY, x } };
        x->term = t;
        events_init(&t->ev, pty_output, x, x->s->id);
        struct winsize ws = { .ws_col = pt->cols, .ws_row = pt->rows };
        if (openpty(&t->master, slave, NULL, NULL, &ws) < 0)
                return -errno;
        (void) fcntl(t->master, F_SETFD, FD_CLOEXEC);
        (void) fcntl(*slave, F_SETFD, FD_CLOEXEC);
        (void) fcntl(t->master, F_SETFL, O_NONBLOCK);
        return 0;
}

void session_terminal(daemon_t *d, client *c, const proto_request *rq) {
        const proto_terminal *pt = &rq->term;
        session *s = session_find(d, pt->session_id);
        if (!s) {
                session_reply_error(c, rq->id, CORDON_USAGE, "no such session");
                return;
        }
        /* docs/design/daemon.md: a native terminal that cannot be provided fails; it never falls
         * back to a host shell under a sandbox badge. */
        if (!s->host.handle || (s->state != SESSION_WARM && s->state != SESSION_ACTIVE)) {
                session_reply_error(c, rq->id,
                                    pt->native ? CORDON_SANDBOX_UNAVAILABLE : CORDON_USAGE,
                                    "terminals need a running confined session (session.launch "
                                    "with a confining backend)");
                return;
        }
        /* A client that asked for the VM's kernel boundary never gets the host's kernel. */
        if (pt->microvm && s->backend != CORDON_BACKEND_MICROVM) {
                session_reply_error(c, rq->id, CORDON_SANDBOX_UNAVAILABLE,
                                    "a microvm terminal needs a microvm session; hint: "
                                    "session.launch with backend microvm, or ask for backend "
                                    "native");
                return;
        }
        exec_run *x = exec_add(d, c, s, rq->id);
        if (!x) {
                session_reply_error(c, rq->id, CORDON_LAUNCH_FAILED, "out of memory");
                return;
        }
        x->warm = x->terminal = true;
        static char sh[] = "/bin/sh", dash_i[] = "-i";
        char *def[] = { sh, dash_i, NULL };
        char *const *argv = pt->argv ? pt->argv : def;
        int slave = -1;
        cordon_error err = { 0 };
        int r = terminal_new(x, pt, &slave);
        if (r < 0)
                (void) cordon_set_error(&err, CORDON_LAUNCH_FAILED, -r,
                                        "cannot open the terminal: %s", strerror(-r));
        cordon_spawn_options o;
        cordon_spawn_options_init(&o);
        o.stdin_fd = o.stdout_fd = o.stderr_fd = slave;
        o.flags = CORDON_SPAWN_TTY;
        o.on_event = terminal_on_lib_event;
        o.event_userdata = x;
        if (r >= 0)
                r = pt->native ? start_native(s, x, argv, &o, &err)
                               : start_local(d, s, x, argv, &o, &err);
        safe_close(slave); /* the shell holds its own */
        if (r < 0) {
                x->result = exec_error_result(&err);
                terminal_done(d, x);
                x->done = true;
        }
        daemon_log("session %s: terminal %llu (%s)", s->id, (unsigned long long) rq->id,
                   !pt->native                          ? "none: an unconfined host shell"
                   : s->backend == CORDON_BACKEND_MICROVM ? "microvm: inside the session's VM"
                                                          : "native: inside the sandbox");
}

/* ---- input, resize, close ------------------------------------------------------------------ */

static int terminal_input(daemon_t *d, exec_run *x, const char *data, size_t len) {
        struct terminal *t = x->term;
        if (t->input_len + len > TERMINAL_INPUT_MAX)
                return -ENOBUFS;
        char *nb = realloc(t->input, t->input_len + len);
        if (!nb && t->input_len + len > 0)
                return -ENOMEM;
        memcpy(nb + t->input_len, data, len);
        t->input = nb;
        t->input_len += len;
        pty_write(d, x);
        return 0;
}

/* terminal.close. Natively the shell dies by SIGKILL (its request ends with exitCode 137). In a
 * microvm session that would be a SIGKILL frame for the guest command; instead the master
 * closes, which is what a terminal's going away is: the VMM host's reads of its terminal end,
 * the guest agent hangs up the guest command (SIGHUP, its controlling process, as a hangup
 * does) and the exec ends as that command does. A command that survives its hangup still holds
 * the session's one VM: a second terminal.close kills it as natively. */
static void terminal_close(daemon_t *d, exec_run *x) {
        struct terminal *t = x->term;
        if (x->s->backend != CORDON_BACKEND_MICROVM || t->master < 0) {
                warm_kill(x);
                return;
        }
        if (t->pty_events)
                (void) epoll_ctl(d->epfd, EPOLL_CTL_DEL, t->master, NULL);
        t->pty_events = 0;
        t->master = safe_close(t->master);
        t->input_len = 0; /* nobody will read it now */
}

void terminal_control(daemon_t *d, client *c, const proto_request *rq) {
        const proto_terminal *pt = &rq->term;
        exec_run *x = NULL;
        for (exec_run *e = d->execs; e && !x; e = e->next)
                if (e->terminal && e->owner == c && e->request_id == pt->terminal_id && !e->done &&
                    e->term)
                        x = e;
        if (!x) {
                session_reply_error(c, rq->id, CORDON_USAGE, "no such terminal on this connection");
                return;
        }
        int r = 0;
        if (rq->method == PROTO_TERMINAL_INPUT) {
                r = terminal_input(d, x, pt->data, pt->data_len);
        } else if (rq->method == PROTO_TERMINAL_RESIZE) {
                /* A microvm session's VMM host is this PTY's controlling process: the size's
                 * SIGWINCH reaches its pump, which sends the guest a RESIZE frame. */
                struct winsize ws = { .ws_col = pt->cols, .ws_row = pt->rows };
                (void) ioctl(x->term->master, TIOCSWINSZ, &ws);
        } else {
                terminal_close(d, x);
        }
        if (r == -ENOBUFS)
                session_reply_error(c, rq->id, CORDON_USAGE,
                                    "the terminal has 1 MiB of input it has not read yet");
        else if (r < 0)
                session_reply_error(c, rq->id, CORDON_LAUNCH_FAILED, "out of memory");
        else
                (void) client_send(c, proto_result_line(rq->id, "{}"));
}
