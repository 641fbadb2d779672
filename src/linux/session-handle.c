/* SPDX-License-Identifier: Apache-2.0 */
/* The public session handle (cordon_session_*): a warm session's host process
 * (session-host.c) and the link to it. The link carries lines both ways (docs/design/library.md):
 *   to the host    "Y<id> <json>" with the command's stdio attached (SCM_RIGHTS), "G<id> <sig>",
 *                  "K<id>", "P", "C", "Q";
 *   from the host  "S" (ready) or "F<error json>" once, then "E<id> <event json>" per event and
 *                  "R<id> <result json>" when an exec ends.
 * A thread per session forks the host (the host dies with the thread that forked it:
 * PR_SET_PDEATHSIG) and reads the link: it delivers each exec's events to its callbacks and its
 * result to its handle (process-handle.h). */
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
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "linux/events.h"
#include "linux/process-handle.h"
#include "linux/process.h"
#include "linux/session-host.h"
#include "policy/policy.h"

extern char **environ;

#define SESSION_LINE_MAX (4 * 1024 * 1024) /* as the host's (session-host-internal.h) */

typedef struct session_exec {
        uint64_t id;
        cordon_process *proc;
        struct session_exec *next;
} session_exec;

struct cordon_session {
        char id[EVENTS_ID_MAX];
        pid_t host;               /* the host process, a child of `thread` */
        int link;                 /* our end of the host's line socket */
        pthread_t thread;
        /* The launch, handed to the thread and answered by it. */
        const cordon_policy *policy;
        cordon_session_options opts;
        char *home, *cwd;
        int start_fd;             /* an eventfd: the thread has launched (or failed to) */
        int start_result;
        cordon_error start_err;
        pthread_mutex_t write_lock; /* one line at a time onto the link */
        pthread_mutex_t lock;     /* guards the fields below */
        cordon_session_state state;
        bool suspended;
        session_exec *execs;      /* running */
        uint64_t next_id;
        char *buf;                /* the thread's partial line */
        size_t len, cap;
};

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

/* One line to the host, with `fds` attached to its first byte. 0, or -errno (-EPIPE: the host
 * is gone). */
static int link_send(cordon_session *s, const char *line, const int *fds, size_t n_fds) {
        union {
                char buf[CMSG_SPACE(sizeof(int) * 3)];
                struct cmsghdr align;
        } ctl;
        size_t len = strlen(line), off = 0;
        int r = 0;
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

static session_exec *exec_find(cordon_session *s, uint64_t id) {
        for (session_exec *e = s->execs; e; e = e->next)
                if (e->id == id)
                        return e;
        return NULL;
}

/* The exec's entry leaves the list; its handle, no longer reachable from here, gets `r`. */
static void exec_end(cordon_session *s, uint64_t id, int r, const cordon_run_result *ret,
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
        cordon_run_result ret = { .backend = CORDON_BACKEND_NATIVE };
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
        exec_end(s, id, r, &ret, &err);
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

/* "E": an event of an exec, to its callbacks. The handle stays valid meanwhile: only this
 * thread (exec_end) removes it from the list, and only after its result is in is it freed. */
static void on_event(cordon_session *s, uint64_t id, const char *json) {
        pthread_mutex_lock(&s->lock);
        session_exec *e = exec_find(s, id);
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
        if (p->l.opts.on_violation)
                deliver_violation(p, json, len);
        if (p->l.opts.on_event)
                p->l.opts.on_event(p->l.opts.event_userdata, line, len + 1);
        free(line);
}

static void on_line(cordon_session *s, char *line) {
        char *sp = strchr(line, ' ');
        if (!sp || (line[0] != 'E' && line[0] != 'R'))
                return;
        uint64_t id = strtoull(line + 1, NULL, 10);
        if (line[0] == 'E')
                on_event(s, id, sp + 1);
        else
                on_result(s, id, sp + 1);
}

/* Reads what the link holds now into lines, calling `fn` for each; false at its end. */
static bool link_read(cordon_session *s, void (*fn)(cordon_session *, char *)) {
        if (s->cap - s->len < 65536) {
                size_t cap = s->cap ? s->cap * 2 : 65536;
                char *nb = cap <= SESSION_LINE_MAX ? realloc(s->buf, cap) : NULL;
                if (!nb)
                        return false;
                s->buf = nb;
                s->cap = cap;
        }
        ssize_t n = read(s->link, s->buf + s->len, s->cap - s->len - 1);
        if (n < 0 && errno == EINTR)
                return true;
        if (n <= 0)
                return false;
        s->len += (size_t) n;
        size_t start = 0;
        for (size_t i = 0; i < s->len; i++)
                if (s->buf[i] == '\n') {
                        s->buf[i] = '\0';
                        fn(s, s->buf + start);
                        start = i + 1;
                }
        memmove(s->buf, s->buf + start, s->len - start);
        s->len -= start;
        return true;
}

/* ---- launch and the session's thread ----------------------------------------------------------- */

/* The host's first line: "S" or "F<error>". */
static void on_start_line(cordon_session *s, char *line) {
        if (s->start_result != 1)
                return; /* answered already */
        if (line[0] == 'S') {
                s->start_result = 0;
                return;
        }
        json_t *o = line[0] == 'F' ? json_loads(line + 1, 0, NULL) : NULL;
        error_from_json(o, &s->start_err);
        json_decref(o);
        s->start_result = -EIO;
}

static int fork_host(cordon_session *s) {
        int sp[2];
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0)
                return cordon_set_error(&s->start_err, CORDON_LAUNCH_FAILED, errno,
                                        "socketpair: %s", strerror(errno));
        pid_t pid = fork();
        if (pid == 0) {
                if (process_close_fds_keep(&sp[1], 1) < 0)
                        _exit(125);
                if (s->opts.environ)
                        environ = (char **) s->opts.environ; /* this process only */
                session_host_main(s->policy, s->id, s->home, s->cwd, sp[1]);
        }
        int e = errno;
        (void) close(sp[1]);
        if (pid < 0) {
                (void) close(sp[0]);
                return cordon_set_error(&s->start_err, CORDON_LAUNCH_FAILED, e, "fork: %s",
                                        strerror(e));
        }
        s->host = pid;
        s->link = sp[0];
        return 0;
}

/* The host's answer: 0 once it is ready, or -errno with start_err set (it is reaped then). */
static int await_host(cordon_session *s) {
        s->start_result = 1;
        while (s->start_result == 1)
                if (!link_read(s, on_start_line)) {
                        (void) cordon_set_error(&s->start_err, CORDON_LAUNCH_FAILED, EPIPE,
                                                "the session's sandbox host ended while "
                                                "starting");
                        s->start_result = -EPIPE;
                }
        if (s->start_result < 0) {
                while (waitpid(s->host, NULL, 0) < 0 && errno == EINTR)
                        ;
                s->host = -1;
        }
        return s->start_result;
}

/* The link ended: the host is gone, and with it the sandbox. Every exec ends in error. */
static void host_ended(cordon_session *s) {
        pthread_mutex_lock(&s->lock);
        bool destroyed = s->state == CORDON_SESSION_DESTROYED;
        if (!destroyed)
                s->state = CORDON_SESSION_ERROR;
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
                exec_end(s, id, -EPIPE, NULL, &err);
        }
}

static void *session_thread(void *arg) {
        cordon_session *s = arg;
        int r = fork_host(s);
        if (r >= 0)
                r = await_host(s);
        s->start_result = r;
        (void) eventfd_write(s->start_fd, 1);
        if (r < 0)
                return NULL;
        while (link_read(s, on_line))
                ;
        host_ended(s);
        return NULL;
}

static void session_free(cordon_session *s) {
        safe_close(s->link);
        safe_close(s->start_fd);
        free(s->buf);
        free(s->home);
        free(s->cwd);
        pthread_mutex_destroy(&s->lock);
        pthread_mutex_destroy(&s->write_lock);
        free(s);
}

/* The session's options, its id, its home and directory. */
static int session_new(const cordon_policy *policy, const cordon_session_options *opts,
                       cordon_session **ret, cordon_error *err) {
        cordon_session *s = calloc(1, sizeof(*s));
        if (!s)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, ENOMEM, "out of memory");
        *s = (cordon_session) { .host = -1, .link = -1, .policy = policy };
        pthread_mutex_init(&s->lock, NULL);
        pthread_mutex_init(&s->write_lock, NULL);
        cordon_session_options_init(&s->opts);
        if (opts)
                memcpy(&s->opts, opts, opts->size < sizeof(s->opts) ? opts->size : sizeof(s->opts));
        s->opts.size = sizeof(s->opts);
        events ev; /* the policy's session id, else a random UUID (as a run's events have) */
        events_init(&ev, NULL, policy->session_id);
        (void) snprintf(s->id, sizeof(s->id), "%s", ev.session_id);
        s->home = home_dir_of(s->opts.environ ? s->opts.environ : environ);
        s->cwd = s->opts.cwd ? strdup(s->opts.cwd) : getcwd(NULL, 0);
        s->start_fd = eventfd(0, EFD_CLOEXEC);
        if (!s->home || !s->cwd || s->start_fd < 0) {
                int e = errno ? errno : ENOMEM;
                session_free(s);
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, e,
                                        "cannot determine the home or current directory");
        }
        *ret = s;
        return 0;
}

int cordon_session_launch(const cordon_policy *policy, const cordon_session_options *opts,
                          cordon_session **ret, cordon_error *err) {
        if (!policy || !ret)
                return cordon_set_error(err, CORDON_USAGE, EINVAL,
                                        "cordon_session_launch: no policy or no handle to fill");
        *ret = NULL;
        if (opts && opts->size < sizeof(size_t))
                return cordon_set_error(err, CORDON_USAGE, EINVAL,
                                        "cordon_session_options.size is not set; hint: call "
                                        "cordon_session_options_init() first");
        if (opts && opts->backend != CORDON_BACKEND_AUTO && opts->backend != CORDON_BACKEND_NATIVE)
                return cordon_set_error(err, CORDON_POLICY_UNENFORCEABLE, ENOTSUP,
                                        "a warm session runs on the native backend only, not "
                                        "%s; hint: run each command with cordon_spawn() instead",
                                        cordon_backend_to_string(opts->backend));
        cordon_session *s = NULL;
        int r = session_new(policy, opts, &s, err);
        if (r < 0)
                return r;
        /* The session's thread takes no signal: the caller's handlers run on its threads. */
        sigset_t all, old;
        sigfillset(&all);
        (void) pthread_sigmask(SIG_SETMASK, &all, &old);
        int e = pthread_create(&s->thread, NULL, session_thread, s);
        (void) pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (e != 0) {
                session_free(s);
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, e,
                                        "cannot start the session's thread: %s", strerror(e));
        }
        eventfd_t one;
        while (eventfd_read(s->start_fd, &one) < 0 && errno == EINTR)
                ;
        s->policy = NULL;
        if ((r = s->start_result) < 0) {
                if (err)
                        *err = s->start_err;
                (void) pthread_join(s->thread, NULL);
                session_free(s);
                return r;
        }
        s->state = CORDON_SESSION_WARM;
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

/* ---- execs ---------------------------------------------------------------------------------- */

/* {"argv", "env", "cwd"} of a "Y" line. */
static char *exec_request_json(char *const argv[], const cordon_spawn_options *o) {
        json_t *a = json_array(), *env = json_array();
        for (size_t i = 0; a && argv[i]; i++)
                (void) json_array_append_new(a, json_string(argv[i]));
        for (size_t i = 0; env && o->environ && o->environ[i]; i++)
                (void) json_array_append_new(env, json_string(o->environ[i]));
        json_t *req = json_pack("{s:o,s:o}", "argv", a, "env", env);
        if (req && o->cwd)
                (void) json_object_set_new(req, "cwd", json_string(o->cwd));
        char *txt = req ? json_dumps(req, JSON_COMPACT) : NULL;
        json_decref(req);
        return txt;
}

/* The command's stdio as descriptors to send: the caller's, or /dev/null (opened here, closed
 * by the caller of this in `opened`). */
static int exec_stdio(const cordon_spawn_options *o, int fds[3], int opened[3],
                      cordon_error *err) {
        int want[3] = { o->stdin_fd, o->stdout_fd, o->stderr_fd };
        for (int i = 0; i < 3; i++) {
                opened[i] = -1;
                fds[i] = want[i];
                if (want[i] == CORDON_FD_NULL)
                        fds[i] = opened[i] = open("/dev/null", O_RDWR | O_CLOEXEC);
                if (fds[i] < 0 || fcntl(fds[i], F_GETFD) < 0)
                        return cordon_set_error(err, CORDON_USAGE, EBADF,
                                                "cordon_session_exec: fd %d for the command's "
                                                "fd %d is not open", want[i], i);
        }
        return 0;
}

static int exec_check(cordon_session *s, char *const argv[], const cordon_spawn_options *o,
                      cordon_error *err) {
        if (!argv || !argv[0] || !argv[0][0])
                return cordon_set_error(err, CORDON_USAGE, EINVAL, "no command to run");
        if (o->n_fds || o->capture)
                return cordon_set_error(err, CORDON_USAGE, ENOTSUP,
                                        "cordon_session_exec: %s are not available for a "
                                        "session's exec; hint: use cordon_spawn()",
                                        o->n_fds ? "descriptors above stdio" : "capture");
        cordon_session_state st = cordon_session_get_state(s);
        if (st == CORDON_SESSION_ERROR || st == CORDON_SESSION_DESTROYED)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, EPIPE,
                                        "the session is %s: its sandbox is gone",
                                        cordon_session_state_to_string(st));
        return 0;
}

/* The handle, listed under a new id before its line is sent (its result may come at once). */
static uint64_t exec_register(cordon_session *s, cordon_process *p, session_exec *e) {
        pthread_mutex_lock(&s->lock);
        uint64_t id = ++s->next_id;
        p->in_session = true;
        p->session = s;
        p->exec_id = id;
        p->l.backend = CORDON_BACKEND_NATIVE;
        *e = (session_exec) { .id = id, .proc = p, .next = s->execs };
        s->execs = e;
        if (s->state == CORDON_SESSION_WARM)
                s->state = CORDON_SESSION_ACTIVE;
        pthread_mutex_unlock(&s->lock);
        return id;
}

static int exec_send(cordon_session *s, uint64_t id, const char *json, const int fds[3]) {
        char *line = NULL;
        if (asprintf(&line, "Y%llu %s\n", (unsigned long long) id, json) < 0)
                return -ENOMEM;
        int r = link_send(s, line, fds, 3);
        free(line);
        return r;
}

int cordon_session_exec(cordon_session *s, char *const argv[], const cordon_spawn_options *opts,
                        cordon_process **ret, cordon_error *err) {
        if (!s || !ret)
                return cordon_set_error(err, CORDON_USAGE, EINVAL,
                                        "cordon_session_exec: no session or no handle to fill");
        *ret = NULL;
        cordon_spawn_options o;
        int fds[3], opened[3] = { -1, -1, -1 };
        int r = process_options_read(opts, &o, err);
        if (r >= 0)
                r = exec_check(s, argv, &o, err);
        if (r >= 0)
                r = exec_stdio(&o, fds, opened, err);
        _cleanup_free_ char *json = r >= 0 ? exec_request_json(argv, &o) : NULL;
        session_exec *e = r >= 0 ? malloc(sizeof(*e)) : NULL;
        cordon_process *p = NULL;
        if (r >= 0 && (!json || !e))
                r = cordon_set_error(err, CORDON_LAUNCH_FAILED, ENOMEM, "out of memory");
        if (r >= 0)
                r = process_new(&o, &p, err);
        if (r >= 0) {
                uint64_t id = exec_register(s, p, e);
                e = NULL;
                if ((r = exec_send(s, id, json, fds)) < 0) {
                        exec_end(s, id, r, NULL, NULL);
                        (void) cordon_set_error(err, CORDON_LAUNCH_FAILED, -r,
                                                "the session's sandbox is gone: %s",
                                                strerror(-r));
                }
        }
        for (int i = 0; i < 3; i++)
                safe_close(opened[i]);
        free(e);
        if (r < 0) {
                process_release(p);
                return r;
        }
        *ret = p;
        return 0;
}

/* "<kind><id> <arg>" about a running exec ('G' a signal, 'K' a kill); -ESRCH when it is over. */
static int exec_line(cordon_session *s, uint64_t id, char kind, int arg) {
        pthread_mutex_lock(&s->lock);
        bool running = exec_find(s, id) != NULL;
        pthread_mutex_unlock(&s->lock);
        if (!running)
                return -ESRCH;
        char line[64];
        (void) snprintf(line, sizeof(line), "%c%llu %d\n", kind, (unsigned long long) id, arg);
        return link_send(s, line, NULL, 0);
}

int session_exec_signal(cordon_session *s, uint64_t exec_id, int sig) {
        return exec_line(s, exec_id, 'G', sig);
}

int session_exec_kill(cordon_session *s, uint64_t exec_id) {
        return exec_line(s, exec_id, 'K', 0);
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
        int r = link_send(s, on ? "P\n" : "C\n", NULL, 0);
        if (r < 0)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, -r,
                                        "the session's sandbox is gone");
        return 0;
}

int cordon_session_suspend(cordon_session *s, cordon_error *err) {
        return set_suspended(s, true, err);
}

int cordon_session_resume(cordon_session *s, cordon_error *err) {
        return set_suspended(s, false, err);
}

/* The host ends the session in order on "Q" (its cgroup removed); one that has not ended after
 * 3 s is killed: destroy leaves nothing running. */
void cordon_session_destroy(cordon_session *s) {
        if (!s)
                return;
        pthread_mutex_lock(&s->lock);
        s->state = CORDON_SESSION_DESTROYED;
        pthread_mutex_unlock(&s->lock);
        (void) link_send(s, "Q\n", NULL, 0);
        (void) shutdown(s->link, SHUT_WR);
        struct timespec until;
        (void) clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += 3;
        if (pthread_timedjoin_np(s->thread, NULL, &until) != 0) {
                (void) kill(s->host, SIGKILL);
                (void) pthread_join(s->thread, NULL);
        }
        while (s->host > 0 && waitpid(s->host, NULL, 0) < 0 && errno == EINTR)
                ;
        session_free(s);
}
