/* SPDX-License-Identifier: Apache-2.0 */
/* cordond's warm sessions, on libcordon's public session handle in event-loop mode
 * (cordon_session_launch with CORDON_SESSION_EVENT_LOOP, docs/design/library.md): the daemon's
 * epoll loop watches cordon_session_fd() and calls cordon_session_dispatch(), which delivers the
 * execs' events (to their callbacks, here) and results (to their handles) on the daemon's
 * thread. A warm exec is a cordon_session_exec(): stdin a memfd of ours holding the request's
 * text, stdout and stderr captured to events (CORDON_FD_NULL), so the host reads them and a
 * refusal comes before the output that followed it. Backpressure: while a client's queue is
 * over DAEMON_OUT_MAX the session's fd is not watched, nothing is dispatched, and the host, then
 * the commands, block on their writes. */
#include "daemon/daemon.h"

#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "util/util.h"

int host_watch(daemon_t *d, host_link *l, bool on) {
        int fd = l->handle ? cordon_session_fd(l->handle) : -1;
        if (fd < 0 || l->watched == on || (on && l->ended))
                return 0;
        struct epoll_event ev = { .events = EPOLLIN, .data.ptr = l };
        if (epoll_ctl(d->epfd, on ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, fd, &ev) < 0)
                return -errno;
        l->watched = on;
        return 0;
}

/* Forks the session's host (from the daemon's thread: it dies with the daemon) with the
 * session's resolved policy; the launch is answered once the state leaves "created". */
int host_launch(daemon_t *d, session *s, client *c, uint64_t id, cordon_error *err) {
        cordon_policy *pol = NULL;
        int r = exec_resolve_policy(d, s, NULL, NULL, NULL, &pol, err);
        /* The session's id names it in every event of its execs (cordon_session_id()). */
        if (r >= 0 && cordon_policy_set_session_id(pol, s->id) < 0)
                r = cordon_set_error(err, CORDON_LAUNCH_FAILED, ENOMEM, "out of memory");
        cordon_session_options so;
        cordon_session_options_init(&so);
        so.cwd = s->workdir;
        so.backend = s->backend == CORDON_BACKEND_MICROVM ? s->backend : CORDON_BACKEND_AUTO;
        /* The ask mode's questions come to the client as egress.ask events of its exec, and
         * its session.egressAnswer answers them (docs/protocol.md). */
        so.flags = CORDON_SESSION_EVENT_LOOP | CORDON_SESSION_EGRESS_ANSWERS;
        if (r >= 0)
                r = cordon_session_launch(pol, &so, &s->host.handle, err);
        cordon_policy_free(pol);
        if (r < 0)
                return r;
        if (host_watch(d, &s->host, true) < 0) {
                cordon_session_destroy(TAKE_PTR(s->host.handle));
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, EIO, "epoll");
        }
        s->host.launch_client = c;
        s->host.launch_id = id;
        return 0;
}

/* ---- warm execs ------------------------------------------------------------------------------ */

exec_run *exec_add(daemon_t *d, client *c, session *s, uint64_t request_id) {
        exec_run *x = calloc(1, sizeof(*x));
        if (!x)
                return NULL;
        *x = (exec_run){ .kind = WATCH_EXEC, .d = d, .request_id = request_id, .owner = c,
                         .s = s, .pid = -1, .events_fd = -1, .next = d->execs };
        d->execs = x;
        s->running++;
        s->state = SESSION_ACTIVE;
        return x;
}

/* {"error": {"code", "message"}}: what exec_response() turns into an error response. */
char *exec_error_result(const cordon_error *err) {
        json_t *o = json_pack("{s:{s:s,s:s}}", "error", "code", cordon_code_name(err->code),
                              "message", err->message);
        char *txt = o ? json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
        json_decref(o);
        return txt;
}

/* {"exitCode", "backend", "violations", "warm"} (docs/protocol.md, session.exec). */
static char *run_result(const cordon_run_result *res) {
        json_t *o = json_pack("{s:i,s:s,s:i,s:b}", "exitCode", res->exit_code, "backend",
                              cordon_backend_to_string(res->backend), "violations",
                              (int) res->violations, "warm", 1);
        char *txt = o ? json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
        json_decref(o);
        return txt;
}

void warm_finish(daemon_t *d, exec_run *x) {
        cordon_run_result res = { 0 };
        cordon_error err = { 0 };
        int r = x->done || !x->proc ? 1 : cordon_process_wait(x->proc, 0, &res, &err);
        if (r == 1)
                return;
        free(x->result);
        x->result = r < 0 ? exec_error_result(&err) : run_result(&res);
        if (x->term)
                terminal_done(d, x);
        x->done = true;
}

/* An exec's event from dispatch: to its client, as the cold worker's are. */
static void warm_on_event(void *userdata, const char *line, size_t len) {
        exec_run *x = userdata;
        if (len > 1)
                exec_analytics_event(x, line, len - 1);
        if (x->term)
                terminal_event(x->d, x, line, len);
        else if (x->owner && len > 1)
                (void) client_send(x->owner, proto_event_line(x->request_id, line, len - 1));
}

void exec_warm(daemon_t *d, client *c, session *s, proto_request *rq) {
        const proto_exec *e = &rq->exec;
        int in = exec_stdin_fd(e);
        exec_run *x = in >= 0 ? exec_add(d, c, s, rq->id) : NULL;
        if (!x) {
                safe_close(in);
                session_reply_error(c, rq->id, CORDON_LAUNCH_FAILED,
                                    "cannot create the exec's stdin");
                return;
        }
        x->warm = true;
        cordon_spawn_options o;
        cordon_spawn_options_init(&o);
        o.stdin_fd = in;
        o.stdout_fd = o.stderr_fd = CORDON_FD_NULL;
        o.capture = CORDON_CAPTURE_STDOUT | CORDON_CAPTURE_STDERR;
        o.environ = e->env;
        o.cwd = e->cwd;
        o.on_event = warm_on_event;
        o.event_userdata = x;
        o.on_command_ask = exec_command_approver(e);
        cordon_error err = { 0 };
        if (cordon_session_exec(s->host.handle, e->argv, &o, &x->proc, &err) < 0) {
                x->result = exec_error_result(&err);
                x->done = true;
        }
        (void) close(in); /* the host holds the command's copy */
}

void warm_kill(exec_run *x) {
        if (!x->proc || x->done)
                return;
        /* A backend-none terminal: its shell's process group; a session exec: through init. */
        if (x->local)
                (void) cordon_process_signal(x->proc, SIGKILL, NULL);
        else
                (void) cordon_process_kill(x->proc, NULL);
}

/* ---- dispatch ------------------------------------------------------------------------------- */

static void launch_answered(session *s) {
        host_link *l = &s->host;
        daemon_log("session %s: %s (%s)", s->id, session_state_name(s->state),
                   cordon_backend_to_string(s->backend));
        if (l->launch_client)
                reply_handle(l->launch_client, l->launch_id, s);
        l->launch_client = NULL;
}

/* "created" ends when the host answers: the sandbox is ready, or why it is not. */
static void check_launch(session *s) {
        cordon_session_state st = cordon_session_get_state(s->host.handle);
        if (s->state != SESSION_CREATED || st == CORDON_SESSION_CREATED)
                return;
        const cordon_error *e = cordon_session_error(s->host.handle);
        if (e) {
                s->error = *e;
                s->state = SESSION_ERROR;
        } else {
                s->state = s->running ? SESSION_ACTIVE : SESSION_WARM;
        }
        launch_answered(s);
}

/* The host died (or was killed): the session is over; its execs have their results. */
static void host_gone(daemon_t *d, session *s) {
        (void) host_watch(d, &s->host, false);
        s->host.ended = true; /* its fd stays readable (end of file) until destroy */
        if (s->state == SESSION_CREATED) {
                const cordon_error *e = cordon_session_error(s->host.handle);
                if (e)
                        s->error = *e;
                else
                        (void) cordon_set_error(&s->error, CORDON_LAUNCH_FAILED, EPIPE,
                                                "the session's sandbox host ended while "
                                                "starting");
                s->state = SESSION_ERROR;
                launch_answered(s);
        } else if (s->state != SESSION_DESTROYED) {
                (void) cordon_set_error(&s->error, CORDON_LAUNCH_FAILED, EPIPE,
                                        "the session's sandbox ended");
                s->state = SESSION_ERROR;
        }
}

void host_on_readable(daemon_t *d, host_link *l) {
        session *s = l->s;
        /* Backpressure: a client that does not read its events pauses the session's output. */
        for (exec_run *x = d->execs; x; x = x->next)
                if (x->s == s && x->owner && client_queued(x->owner) > DAEMON_OUT_MAX) {
                        x->paused = true;
                        (void) host_watch(d, l, false);
                        return;
                }
        cordon_error err = { 0 };
        int r = cordon_session_dispatch(l->handle, &err);
        check_launch(s);
        for (exec_run *x = d->execs; x; x = x->next)
                if (x->s == s && x->warm && !x->local && !x->done)
                        warm_finish(d, x);
        if (r < 0)
                host_gone(d, s);
}

/* Ends a warm session: everything in it dies (cordon_session_destroy() returns once the host
 * has ended it, at most 3 s). Its execs still in flight get an error response, not whatever
 * the library gave their handles. */
void host_close(daemon_t *d, session *s) {
        host_link *l = &s->host;
        for (exec_run *x = d->execs; x; x = x->next) {
                if (x->s != s || !x->warm || x->done)
                        continue;
                if (x->local) {
                        warm_kill(x); /* ends by itself: its result fd is watched */
                        continue;
                }
                free(x->result);
                x->result = NULL;
                if (x->term)
                        terminal_done(d, x);
                x->done = true;
        }
        if (!l->handle)
                return;
        (void) host_watch(d, l, false);
        cordon_session_destroy(TAKE_PTR(l->handle));
}
