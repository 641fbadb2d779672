/* SPDX-License-Identifier: Apache-2.0 */
/* The public session handle (cordon_session_*): a warm session's host process
 * (session-host.c) and the link to it. The link carries lines both ways (docs/design/library.md):
 *   to the host    "Y<id> <json>" with the command's stdio attached (SCM_RIGHTS), "G<id> <sig>",
 *                  "K<id>", "P", "C", "Q";
 *   from the host  "S" (ready) or "F<error json>" once, then "E<id> <event json>" per event and
 *                  "R<id> <result json>" when an exec ends.
 * Who reads the link:
 *   - threaded (the default): a thread per session forks the host (the host dies with the
 *     thread that forked it: PR_SET_PDEATHSIG) and reads the link; it delivers each exec's events
 *     to its callbacks and its result to its handle (process-handle.h);
 *   - CORDON_SESSION_EVENT_LOOP: no thread of ours. The caller's thread forks the host, and the
 *     caller's loop polls cordon_session_fd() and calls cordon_session_dispatch(), which reads
 *     what the link holds and delivers it on that thread.
 * Execs are session-exec.c. */
#include "linux/session-handle.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "run/events.h"
#include "linux/process-handle.h"
#include "linux/process.h"
#include "linux/session-host.h"
#include "policy/policy.h"
#include "util/fork-gate.h"
#include "settings/settings.h"

extern char **environ;

#define SESSION_KNOWN_FLAGS (CORDON_SESSION_EVENT_LOOP | CORDON_SESSION_NO_MANAGED_SETTINGS | \
                             CORDON_SESSION_EGRESS_ANSWERS)
#define SESSION_QUIT_MS 3000 /* how long destroy waits for the host to end the session */

void cordon_session_options_init(cordon_session_options *opts) {
        if (opts)
                *opts = (cordon_session_options) { .size = sizeof(*opts) };
}

const char *cordon_session_state_to_string(cordon_session_state state) {
        static const char *const names[] = { "created", "warm", "active", "suspended",
                                             "destroyed", "error" };
        return (unsigned) state < ELEMENTSOF(names) ? names[state] : "unknown";
}

/* ---- the link ------------------------------------------------------------------------------ */

int session_link_send(cordon_session *s, const char *line, const int *fds, size_t n_fds) {
        union {
                char buf[CMSG_SPACE(sizeof(int) * 3)];
                struct cmsghdr align;
        } ctl;
        size_t len = strlen(line), off = 0;
        int r = 0;
        if (n_fds > 3)
                return -EINVAL;
        pthread_mutex_lock(&s->write_lock);
        while (off < len && r == 0) {
                struct iovec iov = { .iov_base = (char *) line + off, .iov_len = len - off };
                struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
                if (off == 0 && n_fds > 0) {
                        mh.msg_control = ctl.buf;
                        mh.msg_controllen = CMSG_SPACE(sizeof(int) * n_fds);
                        struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
                        *c = (struct cmsghdr) { .cmsg_level = SOL_SOCKET,
                                                .cmsg_type = SCM_RIGHTS,
                                                .cmsg_len = CMSG_LEN(sizeof(int) * n_fds) };
                        memcpy(CMSG_DATA(c), fds, sizeof(int) * n_fds);
                }
                ssize_t w = sendmsg(s->link, &mh, MSG_NOSIGNAL);
                if (w < 0 && errno == EINTR)
                        continue;
                if (w <= 0)
                        r = w < 0 ? -errno : -EPIPE;
                else
                        off += (size_t) w;
        }
        pthread_mutex_unlock(&s->write_lock);
        return r;
}

session_exec *session_exec_find(cordon_session *s, uint64_t id) {
        for (session_exec *e = s->execs; e; e = e->next)
                if (e->id == id)
                        return e;
        return NULL;
}

void session_exec_end(cordon_session *s, uint64_t id, int r, const cordon_run_result *ret,
                      const cordon_error *err) {
        pthread_mutex_lock(&s->lock);
        cordon_process *p = NULL;
        for (session_exec **e = &s->execs; *e; e = &(*e)->next)
                if ((*e)->id == id) {
                        session_exec *gone = *e;
                        p = gone->proc;
                        *e = gone->next;
                        free(gone);
                        break;
                }
        if (!s->execs && s->state == CORDON_SESSION_ACTIVE)
                s->state = CORDON_SESSION_WARM;
        pthread_mutex_unlock(&s->lock);
        if (p)
                process_set_result(p, r, ret, err);
}

/* ---- what the host says -------------------------------------------------------------------- */

static cordon_code code_from_name(const char *name) {
        for (int k = CORDON_OK + 1; name && k < _CORDON_CODE_MAX; k++)
                if (strcmp(cordon_code_name((cordon_code) k), name) == 0)
                        return (cordon_code) k;
        return CORDON_LAUNCH_FAILED;
}

cordon_backend session_backend(const cordon_session *s) {
        return s->opts.backend == CORDON_BACKEND_MICROVM ? CORDON_BACKEND_MICROVM
                                                         : CORDON_BACKEND_NATIVE;
}

/* A cordon_error from {"code", "message"}. */
static void error_from_json(json_t *o, cordon_error *err) {
        const char *msg = json_string_value(json_object_get(o, "message"));
        (void) cordon_set_error(err, code_from_name(json_string_value(json_object_get(o, "code"))),
                                EIO, "%s", msg ? msg : "the session failed");
}

/* "R": the exec's result, {"exitCode", "waitStatus", "violations"} or {"error": {...}}. */
static void on_result(cordon_session *s, uint64_t id, const char *json) {
        json_t *o = json_loads(json, 0, NULL);
        json_t *e = json_object_get(o, "error");
        cordon_run_result ret = { .backend = session_backend(s) };
        cordon_error err = { 0 };
        int r = 0;
        if (!o || e) {
                error_from_json(e, &err);
                r = err.code == CORDON_TIMEOUT ? -ETIME : err.code == CORDON_KILLED ? -ECANCELED
                                                                                    : -EIO;
        } else {
                ret.exit_code = (int) json_integer_value(json_object_get(o, "exitCode"));
                ret.wait_status = (int) json_integer_value(json_object_get(o, "waitStatus"));
                ret.violations = (unsigned) json_integer_value(json_object_get(o, "violations"));
        }
        json_decref(o);
        session_exec_end(s, id, r, &ret, &err);
}

/* A "violation" event, for the exec's on_violation: {"action", "target", "raw": {"syscall",
 * "rule", "count"}}. */
static void deliver_violation(const cordon_process *p, const char *json, size_t len) {
        json_t *o = json_loadb(json, len, 0, NULL);
        const char *type = json_string_value(json_object_get(o, "type"));
        if (type && strcmp(type, "violation") == 0) {
                json_t *raw = json_object_get(o, "raw");
                const char *sys = json_string_value(json_object_get(raw, "syscall"));
                const char *rule = json_string_value(json_object_get(raw, "rule"));
                const char *target = json_string_value(json_object_get(o, "target"));
                json_t *count = json_object_get(raw, "count");
                cordon_violation v = {
                        .action = json_string_value(json_object_get(o, "action")),
                        .syscall = sys ? sys : "", .target = target ? target : "",
                        .rule = rule ? rule : "",
                        .count = count ? (uint64_t) json_integer_value(count) : 1 };
                if (v.action && strcmp(v.action, "repository") != 0)
                        p->l.opts.on_violation(p->l.opts.userdata, &v);
        }
        json_decref(o);
}

/* "E": an event of an exec, to its callbacks. The handle stays valid meanwhile: only the
 * reader of the link (session_exec_end) removes it from the list while it runs, and only after
 * its result is in is it freed. */
static void on_event(cordon_session *s, uint64_t id, const char *json) {
        pthread_mutex_lock(&s->lock);
        session_exec *e = session_exec_find(s, id);
        cordon_process *p = e ? e->proc : NULL;
        pthread_mutex_unlock(&s->lock);
        if (!p)
                return;
        size_t len = strlen(json);
        char *line = malloc(len + 2);
        if (!line)
                return;
        memcpy(line, json, len);
        line[len] = '\n';
        line[len + 1] = '\0';
        unsigned gate = fork_gate_pause(); /* the caller's code */
        if (p->l.opts.on_violation)
                deliver_violation(p, json, len);
        if (p->l.opts.on_event)
                p->l.opts.on_event(p->l.opts.event_userdata, line, len + 1);
        fork_gate_resume(gate);
        free(line);
}

/* The host's first line: "S" (the sandbox is ready) or "F<error>" (it could not be built). */
static void on_start_line(cordon_session *s, const char *line) {
        pthread_mutex_lock(&s->lock);
        if (line[0] == 'S') {
                s->start_result = 0;
                s->state = s->execs ? CORDON_SESSION_ACTIVE : CORDON_SESSION_WARM;
        } else {
                json_t *o = line[0] == 'F' ? json_loads(line + 1, 0, NULL) : NULL;
                error_from_json(o, &s->start_err);
                json_decref(o);
                s->start_result = -EIO;
                s->error = s->start_err;
                s->state = CORDON_SESSION_ERROR;
        }
        pthread_mutex_unlock(&s->lock);
}

static void on_line(cordon_session *s, char *line) {
        if (s->start_result == 1) {
                on_start_line(s, line);
                return;
        }
        char *sp = strchr(line, ' ');
        if (!sp || (line[0] != 'E' && line[0] != 'R'))
                return;
        uint64_t id = strtoull(line + 1, NULL, 10);
        if (line[0] == 'E')
                on_event(s, id, sp + 1);
        else
                on_result(s, id, sp + 1);
}

/* Reads what the link holds now (without blocking in event-loop mode) into lines; false at its
 * end (or on a line longer than any the host writes). */
static bool link_read(cordon_session *s) {
        if (s->cap - s->len < 65536) {
                size_t cap = s->cap ? s->cap * 2 : 65536;
                char *nb = cap <= SESSION_LINE_MAX ? realloc(s->buf, cap) : NULL;
                if (!nb)
                        return false;
                s->buf = nb;
                s->cap = cap;
        }
        ssize_t n;
        FORK_GATE_PAUSED(n = recv(s->link, s->buf + s->len, s->cap - s->len - 1,
                                  s->event_loop ? MSG_DONTWAIT : 0));
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
                return true;
        if (n <= 0)
                return false;
        s->len += (size_t) n;
        size_t start = 0;
        for (size_t i = 0; i < s->len; i++)
                if (s->buf[i] == '\n') {
                        s->buf[i] = '\0';
                        on_line(s, s->buf + start);
                        start = i + 1;
                }
        memmove(s->buf, s->buf + start, s->len - start);
        s->len -= start;
        return true;
}

/* The link ended: the host is gone, and with it the sandbox. Every exec ends in error. */
static void host_ended(cordon_session *s) {
        pthread_mutex_lock(&s->lock);
        bool destroyed = s->state == CORDON_SESSION_DESTROYED;
        if (s->state == CORDON_SESSION_CREATED)
                (void) cordon_set_error(&s->error, CORDON_LAUNCH_FAILED, EPIPE,
                                        "the session's sandbox host ended while starting");
        else if (s->state != CORDON_SESSION_ERROR && !destroyed)
                (void) cordon_set_error(&s->error, CORDON_LAUNCH_FAILED, EPIPE,
                                        "the session's sandbox ended");
        if (!destroyed)
                s->state = CORDON_SESSION_ERROR;
        if (s->start_result == 1) {
                s->start_err = s->error;
                s->start_result = -EPIPE;
        }
        s->link_ended = true;
        pthread_mutex_unlock(&s->lock);
        cordon_error err = { 0 };
        (void) cordon_set_error(&err, CORDON_LAUNCH_FAILED, EPIPE,
                                destroyed ? "the session was destroyed"
                                          : "the session's sandbox ended");
        for (;;) {
                pthread_mutex_lock(&s->lock);
                uint64_t id = s->execs ? s->execs->id : 0;
                bool any = s->execs != NULL;
                pthread_mutex_unlock(&s->lock);
                if (!any)
                        break;
                session_exec_end(s, id, -EPIPE, NULL, &err);
        }
}

/* ---- the host process ---------------------------------------------------------------------- */

/* Forks the host from the calling thread (it dies with that thread: PR_SET_PDEATHSIG). */
static int fork_host(cordon_session *s, cordon_error *err) {
        int sp[2];
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, errno, "socketpair: %s",
                                        strerror(errno));
        pid_t pid = fork();
        if (pid == 0) {
                if (process_close_fds_keep(&sp[1], 1) < 0)
                        _exit(125);
                if (s->opts.environ)
                        environ = (char **) s->opts.environ; /* this process only */
                session_host_main(s->policy, s->opts.backend, s->id, s->home, s->cwd, sp[1]);
        }
        int e = errno;
        (void) close(sp[1]);
        if (pid < 0) {
                (void) close(sp[0]);
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, e, "fork: %s", strerror(e));
        }
        s->host = pid;
        s->link = sp[0];
        /* Before any exec line: the host knows whether to hold questions for an answer. A host
         * that has already ended (it refused the launch at once: danger-full-access, a policy it
         * cannot enforce) cannot take it, and that is no error of its own: its answer, read
         * next, says why it ended. Failing here instead reported "the host is gone" in place of
         * that reason whenever the host was quicker than this line. */
        if (s->opts.flags & CORDON_SESSION_EGRESS_ANSWERS)
                (void) session_link_send(s, "W\n", NULL, 0);
        /* Before anything can reap it: the pidfd names this very process, also once a reaper of
         * the caller's (an event loop's waitpid(-1)) has collected it. */
        s->host_pidfd = (int) syscall(SYS_pidfd_open, pid, 0);
        return 0;
}

static void host_kill(cordon_session *s) {
        if (s->host_pidfd >= 0)
                (void) syscall(SYS_pidfd_send_signal, s->host_pidfd, SIGKILL, NULL, 0);
        else if (s->host > 0)
                (void) kill(s->host, SIGKILL);
}

/* Collects the host's exit; ECHILD (the caller's own reaper collected it) is fine. */
static void host_reap(cordon_session *s) {
        if (s->host <= 0)
                return;
        unsigned gate = fork_gate_pause();
        if (s->host_pidfd >= 0) {
                siginfo_t si;
                while (waitid((idtype_t) P_PIDFD, (id_t) s->host_pidfd, &si, WEXITED) < 0 &&
                       errno == EINTR)
                        ;
        } else {
                while (waitpid(s->host, NULL, 0) < 0 && errno == EINTR)
                        ;
        }
        fork_gate_resume(gate);
        s->host = -1;
}

/* Threaded mode: the host's answer, read on the session's thread. */
static void *session_thread(void *arg) {
        cordon_session *s = arg;
        fork_gate_enter(); /* the library's own thread: out of the gate only while it waits */
        int r = fork_host(s, &s->start_err);
        if (r >= 0) {
                s->start_result = 1;
                while (s->start_result == 1)
                        if (!link_read(s))
                                host_ended(s);
                r = s->start_result;
                if (r < 0)
                        host_reap(s);
        }
        s->start_result = r;
        (void) eventfd_write(s->start_fd, 1);
        if (r >= 0) {
                while (!s->link_ended && link_read(s))
                        ;
                if (!s->link_ended)
                        host_ended(s);
        }
        fork_gate_leave();
        return NULL;
}

/* ---- launch -------------------------------------------------------------------------------- */

static void session_free(cordon_session *s) {
        safe_close(s->link);
        safe_close(s->host_pidfd);
        safe_close(s->start_fd);
        free(s->buf);
        free(s->home);
        free(s->cwd);
        strv_done(&s->env);
        cordon_policy_free(s->policy);
        cordon_policy_free(s->managed);
        pthread_mutex_destroy(&s->lock);
        pthread_mutex_destroy(&s->write_lock);
        free(s);
}

/* The caller's options as this library knows them: a smaller struct (an older caller) leaves
 * the rest at its defaults; a flag this library does not know is refused, never ignored. */
static int options_read(const cordon_session_options *in, cordon_session_options *out,
                        cordon_error *err) {
        cordon_session_options_init(out);
        int r = options_read_sized(out, sizeof(*out), in, "cordon_session_options", err);
        if (r < 0)
                return r;
        if (out->flags & ~(unsigned) SESSION_KNOWN_FLAGS)
                return cordon_set_error(err, CORDON_USAGE, EINVAL,
                                        "cordon_session_options.flags: unknown flags 0x%x",
                                        out->flags & ~(unsigned) SESSION_KNOWN_FLAGS);
        if (out->backend != CORDON_BACKEND_AUTO && out->backend != CORDON_BACKEND_NATIVE &&
            out->backend != CORDON_BACKEND_MICROVM)
                return cordon_set_error(err, CORDON_POLICY_UNENFORCEABLE, ENOTSUP,
                                        "a warm session runs on the native or microvm backend "
                                        "only, not %s; hint: run each command with "
                                        "cordon_spawn() instead",
                                        cordon_backend_to_string(out->backend));
        return 0;
}

static void no_listener(void *userdata, const char *line, size_t len) {
        (void) userdata;
        (void) line;
        (void) len;
}

/* The session's options, its home and directory. */
static int session_new(const cordon_policy *policy, const cordon_session_options *opts,
                       cordon_session **ret, cordon_error *err) {
        cordon_session *s = calloc(1, sizeof(*s));
        if (!s)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, ENOMEM, "out of memory");
        *s = (cordon_session) { .host = -1, .host_pidfd = -1, .link = -1, .start_fd = -1,
                                .opts = *opts,
                                .event_loop = opts->flags & CORDON_SESSION_EVENT_LOOP };
        pthread_mutex_init(&s->lock, NULL);
        pthread_mutex_init(&s->write_lock, NULL);
        char *const *env = s->opts.environ ? s->opts.environ : environ;
        s->policy = policy_dup(policy);
        s->home = home_dir_of(env);
        s->cwd = s->opts.cwd ? strdup(s->opts.cwd) : getcwd(NULL, 0);
        s->opts.cwd = NULL; /* the caller's string: s->cwd is ours */
        s->start_fd = s->event_loop ? -1 : eventfd(0, EFD_CLOEXEC);
        int r = 0;
        for (size_t i = 0; env && env[i] && r >= 0; i++)
                r = strv_push(&s->env, env[i]);
        if (!s->policy || r < 0) {
                session_free(s);
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, ENOMEM, "out of memory");
        }
        if (!s->home || !s->cwd || (!s->event_loop && s->start_fd < 0)) {
                int e = errno ? errno : ENOMEM;
                session_free(s);
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, e,
                                        "cannot determine the home or current directory");
        }
        *ret = s;
        return 0;
}

/* The administrator's managed settings over the caller's policy (settings-managed.c), unless
 * the caller opted out: applied here, on the caller's thread and before the host is forked, so
 * that a managed file that fails the launch fails it with its own error, and the host builds
 * the sandbox from the policy that holds them — its own launch (session-host.c) never reads
 * them again. Then the session's id: the sessionId of the policy that runs, else a random UUID
 * (as a run's events have: events_init() makes one only for a stream that has a listener). */
static int session_managed(cordon_session *s, cordon_error *err) {
        int r = 0;
        if (!(s->opts.flags & CORDON_SESSION_NO_MANAGED_SETTINGS))
                r = settings_managed_apply(s->policy, s->cwd, s->home, s->opts.backend,
                                           &s->managed, err);
        if (r < 0)
                return r;
        if (s->managed) { /* the session runs this one, and its file operations plan from it */
                cordon_policy_free(s->policy);
                s->policy = TAKE_PTR(s->managed);
        }
        events ev;
        events_init(&ev, no_listener, NULL, s->policy->session_id);
        (void) snprintf(s->id, sizeof(s->id), "%s", ev.session_id);
        return 0;
}

/* Threaded mode: the session's thread forks the host and answers once it is ready. */
static int launch_threaded(cordon_session *s, cordon_error *err) {
        /* The session's thread takes no signal: the caller's handlers run on its threads. */
        sigset_t all, old;
        sigfillset(&all);
        (void) pthread_sigmask(SIG_SETMASK, &all, &old);
        int e = pthread_create(&s->thread, NULL, session_thread, s);
        (void) pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (e != 0)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, e,
                                        "cannot start the session's thread: %s", strerror(e));
        /* Out of the gate while the session's thread forks the host: it waits for us otherwise. */
        unsigned gate = fork_gate_pause();
        eventfd_t one;
        while (eventfd_read(s->start_fd, &one) < 0 && errno == EINTR)
                ;
        int r = s->start_result;
        if (r < 0) {
                if (err)
                        *err = s->start_err;
                (void) pthread_join(s->thread, NULL);
        }
        fork_gate_resume(gate);
        return r;
}

int cordon_session_launch(const cordon_policy *policy, const cordon_session_options *opts,
                          cordon_session **ret, cordon_error *err) {
        if (!policy || !ret)
                return cordon_set_error(err, CORDON_USAGE, EINVAL,
                                        "cordon_session_launch: no policy or no handle to fill");
        *ret = NULL;
        cordon_session_options o;
        cordon_session *s = NULL;
        int r = options_read(opts, &o, err);
        if (r >= 0)
                r = session_new(policy, &o, &s, err);
        if (r < 0 || !s)
                return r < 0 ? r : -ENOMEM;
        if ((r = session_managed(s, err)) < 0) {
                session_free(s);
                return r;
        }
        if (s->event_loop) {
                /* The host's answer comes through cordon_session_dispatch(). */
                s->start_result = 1;
                s->loop_thread = pthread_self();
                r = fork_host(s, err);
        } else {
                r = launch_threaded(s, err);
        }
        if (r < 0) {
                session_free(s);
                return r;
        }
        *ret = s;
        return 0;
}

cordon_session_state cordon_session_get_state(const cordon_session *s) {
        if (!s)
                return CORDON_SESSION_ERROR;
        pthread_mutex_lock((pthread_mutex_t *) &s->lock);
        cordon_session_state st = s->state;
        pthread_mutex_unlock((pthread_mutex_t *) &s->lock);
        return st;
}

const char *cordon_session_id(const cordon_session *s) {
        return s ? s->id : NULL;
}

const cordon_error *cordon_session_error(const cordon_session *s) {
        if (!s || cordon_session_get_state(s) != CORDON_SESSION_ERROR)
                return NULL;
        return &s->error;
}

/* ---- the caller's event loop ---------------------------------------------------------------- */

int cordon_session_fd(const cordon_session *s) {
        return s && s->event_loop ? s->link : -1;
}

int cordon_session_dispatch(cordon_session *s, cordon_error *err) {
        if (!s || !s->event_loop)
                return cordon_set_error(err, CORDON_USAGE, EINVAL,
                                        "cordon_session_dispatch: %s",
                                        s ? "the session was not launched with "
                                            "CORDON_SESSION_EVENT_LOOP"
                                          : "no session");
        if (!s->link_ended && !link_read(s))
                host_ended(s);
        if (s->link_ended)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, EPIPE,
                                        "the session's sandbox host is gone: stop watching "
                                        "cordon_session_fd()");
        return 0;
}

bool session_event_loop(const cordon_session *s) {
        return s->event_loop;
}

bool session_exec_wait_blocks(const cordon_session *s) {
        return s->event_loop && pthread_equal(pthread_self(), s->loop_thread);
}

/* ---- suspend, resume, destroy ------------------------------------------------------------- */

static int set_suspended(cordon_session *s, bool on, cordon_error *err) {
        if (!s)
                return cordon_set_error(err, CORDON_USAGE, EINVAL, "no session");
        pthread_mutex_lock(&s->lock);
        cordon_session_state st = s->state;
        bool usable = st == CORDON_SESSION_WARM || st == CORDON_SESSION_ACTIVE ||
                      st == CORDON_SESSION_SUSPENDED;
        bool already = (st == CORDON_SESSION_SUSPENDED) == on;
        if (usable && !already)
                s->state = on ? CORDON_SESSION_SUSPENDED
                              : s->execs ? CORDON_SESSION_ACTIVE : CORDON_SESSION_WARM;
        pthread_mutex_unlock(&s->lock);
        if (!usable)
                return cordon_set_error(err, CORDON_USAGE, EPIPE,
                                        "the session is %s: only a running session can be %s",
                                        cordon_session_state_to_string(st),
                                        on ? "suspended" : "resumed");
        if (already)
                return 0; /* idempotent */
        int r = session_link_send(s, on ? "P\n" : "C\n", NULL, 0);
        if (r < 0)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, -r,
                                        "the session's sandbox is gone");
        return 0;
}

int cordon_session_egress_answer(cordon_session *s, uint64_t id, cordon_egress_answer answer,
                                 cordon_error *err) {
        if (!s || !(s->opts.flags & CORDON_SESSION_EGRESS_ANSWERS))
                return cordon_set_error(err, CORDON_USAGE, EINVAL,
                                        "the session was not launched with "
                                        "CORDON_SESSION_EGRESS_ANSWERS");
        if (answer != CORDON_EGRESS_DENY && answer != CORDON_EGRESS_ALLOW_ONCE &&
            answer != CORDON_EGRESS_ALLOW_SESSION)
                return cordon_set_error(err, CORDON_USAGE, EINVAL, "not an egress answer");
        if (id > UINT32_MAX)
                return 0; /* no question has such an id: nothing to answer */
        char line[48];
        (void) snprintf(line, sizeof(line), "A%llu %d\n", (unsigned long long) id, (int) answer);
        if (session_link_send(s, line, NULL, 0) < 0)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, EPIPE,
                                        "the session's sandbox is gone");
        return 0;
}

int cordon_session_suspend(cordon_session *s, cordon_error *err) {
        return set_suspended(s, true, err);
}

int cordon_session_resume(cordon_session *s, cordon_error *err) {
        return set_suspended(s, false, err);
}

/* Event-loop mode: what the host still writes is read and dropped (a host blocked writing to a
 * link nobody reads would never see "Q") until it has exited, at most SESSION_QUIT_MS. */
static void await_quit(cordon_session *s) {
        struct timespec t0, t;
        (void) clock_gettime(CLOCK_MONOTONIC, &t0);
        bool eof = false;
        for (;;) {
                (void) clock_gettime(CLOCK_MONOTONIC, &t);
                long ms = (t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000;
                if (ms >= SESSION_QUIT_MS || (eof && s->host_pidfd < 0)) {
                        /* Without a pidfd the link's end is all we can see of the host. */
                        if (!eof)
                                host_kill(s);
                        return;
                }
                struct pollfd pfd[2] = { { .fd = eof ? -1 : s->link, .events = POLLIN },
                                         { .fd = s->host_pidfd, .events = POLLIN } };
                if (poll(pfd, 2, (int) (SESSION_QUIT_MS - ms)) < 0 && errno != EINTR)
                        return;
                if (pfd[1].revents & POLLIN)
                        return; /* the host has exited */
                char drop[16384];
                if ((pfd[0].revents & (POLLIN | POLLHUP | POLLERR)) &&
                    recv(s->link, drop, sizeof(drop), MSG_DONTWAIT) == 0)
                        eof = true;
        }
}

/* The host ends the session in order on "Q" (its cgroup removed); one that has not ended after
 * 3 s is killed: destroy leaves nothing running. */
void cordon_session_destroy(cordon_session *s) {
        if (!s)
                return;
        pthread_mutex_lock(&s->lock);
        s->state = CORDON_SESSION_DESTROYED;
        pthread_mutex_unlock(&s->lock);
        (void) session_link_send(s, "Q\n", NULL, 0);
        (void) shutdown(s->link, SHUT_WR);
        unsigned gate = fork_gate_pause(); /* waits for the host, and for the session's thread */
        if (s->event_loop) {
                await_quit(s);
                host_ended(s);
        } else {
                struct timespec until;
                (void) clock_gettime(CLOCK_REALTIME, &until);
                until.tv_sec += SESSION_QUIT_MS / 1000;
                if (pthread_timedjoin_np(s->thread, NULL, &until) != 0) {
                        host_kill(s);
                        (void) pthread_join(s->thread, NULL);
                }
        }
        host_reap(s);
        fork_gate_resume(gate);
        session_free(s);
}
