/* SPDX-License-Identifier: Apache-2.0 */
/* cordond's sessions and execs.
 *
 * A session holds a policy layer and a backend. Each exec resolves its policy per call
 * (docs/policy.md, "Layers and resolution": approved escalation > session > deployment
 * default). A cold exec runs in an exec worker (session-worker.c), a warm one in the session's
 * sandbox through libcordon's session handle (session-warm.c), a terminal through terminal.c. */
#include "daemon/daemon.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "linux/process.h"
#include "plan/plan.h"
#include "policy/policy.h"
#include "util/util.h"

extern char **environ;

static const char *const state_names[] = {
        [SESSION_CREATED] = "created", [SESSION_WARM] = "warm",
        [SESSION_ACTIVE] = "active",   [SESSION_SUSPENDED] = "suspended",
        [SESSION_DESTROYED] = "destroyed", [SESSION_ERROR] = "error",
};

const char *session_state_name(session_state s) {
        return (unsigned) s <= SESSION_ERROR ? state_names[s] : "?";
}

static session *find_session(daemon_t *d, const char *id) {
        for (session *s = d->sessions; s; s = s->next)
                if (strcmp(s->id, id) == 0 && s->state != SESSION_DESTROYED)
                        return s;
        return NULL;
}

void session_reply_error(client *c, uint64_t id, cordon_code code, const char *msg) {
        (void) client_send(c, proto_error_line(id, code, msg));
}

/* {"sessionId", "backend", "state", "error", "details"} (docs/design/daemon.md). */
static char *handle_json(const session *s) {
        json_t *err = s->state == SESSION_ERROR
                              ? json_pack("{s:s,s:s}", "code", cordon_code_name(s->error.code),
                                          "message", s->error.message)
                              : json_null();
        json_t *o = json_pack("{s:s,s:s,s:s,s:o,s:{s:s,s:i}}", "sessionId", s->id, "backend",
                              cordon_backend_to_string(s->backend), "state",
                              session_state_name(s->state), "error", err, "details", "workdir",
                              s->workdir ? s->workdir : "", "running", (int) s->running);
        if (!o)
                return NULL;
        char *txt = json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII);
        json_decref(o);
        return txt;
}

void reply_handle(client *c, uint64_t id, const session *s) {
        _cleanup_free_ char *h = handle_json(s);
        (void) client_send(c, h ? proto_result_line(id, h) : NULL);
}

static int random_id(char out[PROTO_ID_MAX + 1]) {
        uint8_t b[12];
        if (getrandom(b, sizeof(b), 0) != (ssize_t) sizeof(b))
                return -EIO;
        int n = snprintf(out, PROTO_ID_MAX + 1, "s-");
        for (size_t i = 0; i < sizeof(b); i++)
                n += snprintf(out + n, (size_t) (PROTO_ID_MAX + 1 - n), "%02x", b[i]);
        return 0;
}

/* The policy an exec runs under, resolved by the same library call as `cordon run`'s
 * (cordon_settings_resolve, docs/policy.md, "Layers and resolution", and docs/settings.md): managed
 * settings > approved escalation > the session's layer > user > project settings of the session's
 * workspace > deployment default. `unconfined` (NULL for a confined run) names an unconfined one,
 * which the settings must allow: a resolved policy carries the managed settings, so no launch
 * enforces their allowUnsandboxedCommands for it — the resolver's caller does, as the CLI does. */
int exec_resolve_policy(daemon_t *d, const session *s, const char *override, const char *cwd,
                        const char *unconfined, cordon_policy **ret, cordon_error *err) {
        cordon_policy *esc = NULL;
        /* The exec's override and its directory make up the approved escalation layer. */
        int r = override || cwd ? cordon_policy_new(&esc, err) : 0;
        if (r >= 0 && override)
                r = cordon_policy_load_string(esc, override, strlen(override), "policyOverride",
                                              err);
        if (r >= 0 && cwd)
                r = cordon_policy_set_workdir(esc, cwd);
        cordon_settings *st = NULL;
        cordon_settings_options so = { .cwd = s->workdir, .home = d->home,
                                       .managed_path = d->managed_settings,
                                       .command_line = s->layer, .approved_escalation = esc };
        if (r >= 0)
                r = cordon_settings_resolve(&so, &st, err);
        if (r >= 0 && unconfined)
                r = cordon_settings_check_unconfined(st, unconfined, err);
        if (r >= 0) {
                *ret = policy_dup(cordon_settings_policy(st));
                if (!*ret)
                        r = cordon_set_error(err, CORDON_LAUNCH_FAILED, ENOMEM, "out of memory");
        }
        cordon_settings_free(st);
        cordon_policy_free(esc);
        return r;
}

/* For fs.* (fs-rpc.c): the live session named `id`, and the policy its execs run under. */
session *session_find(daemon_t *d, const char *id) {
        return find_session(d, id);
}

int session_resolve_policy(daemon_t *d, const session *s, cordon_policy **ret, cordon_error *err) {
        return exec_resolve_policy(d, s, NULL, NULL, NULL, ret, err);
}

const char *unconfined_what(const session *s) {
        return s->backend == CORDON_BACKEND_NONE ? "backend none" : NULL;
}

/* Validates the session by planning it once: a policy the backend cannot enforce fails here, at
 * launch, rather than at its first exec. */
static int check_session(daemon_t *d, session *s, cordon_error *err) {
        cordon_policy *res = NULL;
        int r = exec_resolve_policy(d, s, NULL, NULL, unconfined_what(s), &res, err);
        if (r < 0)
                return r;
        plan *p = NULL;
        r = plan_build(res, d->home, s->workdir, environ, &p, err);
        plan_free(p);
        cordon_policy_free(res);
        return r;
}

void session_launch(daemon_t *d, client *c, const proto_request *rq) {
        if (d->n_sessions >= DAEMON_MAX_SESSIONS) {
                session_reply_error(c, rq->id, CORDON_LAUNCH_FAILED, "too many sessions (1024)");
                return;
        }
        session *s = calloc(1, sizeof(*s));
        if (!s || random_id(s->id) < 0 || cordon_policy_new(&s->layer, NULL) < 0) {
                free(s);
                session_reply_error(c, rq->id, CORDON_LAUNCH_FAILED, "out of memory");
                return;
        }
        s->state = SESSION_CREATED;
        s->analytics_fd = -1;
        s->backend = d->sandbox_off ? CORDON_BACKEND_NONE : rq->launch.backend;
        s->workdir = strdup(rq->launch.workdir ? rq->launch.workdir : d->home);
        int r = s->workdir ? 0 : -ENOMEM;
        const char *pj = rq->launch.policy_json;
        if (r >= 0 && pj)
                r = cordon_policy_load_string(s->layer, pj, strlen(pj), "params.policy", &s->error);
        /* The policy's sessionId names the session (and every event of its execs); else the
         * generated one does. */
        if (r >= 0 && s->layer->session_id) {
                if (find_session(d, s->layer->session_id))
                        r = cordon_set_error(&s->error, CORDON_POLICY_INVALID, EEXIST,
                                             "params.policy.sessionId: a session with this id "
                                             "exists");
                else
                        (void) snprintf(s->id, sizeof(s->id), "%s", s->layer->session_id);
        }
        if (r >= 0 && !s->layer->session_id)
                r = cordon_policy_set_session_id(s->layer, s->id);
        if (r >= 0)
                r = session_analytics_open(d, s, rq->launch.analytics, &s->error);
        if (r >= 0)
                r = check_session(d, s, &s->error);
        s->host = (host_link){ .kind = WATCH_HOST, .s = s };
        s->next = d->sessions;
        d->sessions = s;
        d->n_sessions++;
        /* A confined session is warm: its sandbox is built now, once, by its host. */
        /* docs/design/backends.md: an explicitly named backend never steps down. Warm sessions are
         * built by the native backend, or by the microvm backend (a VM booted once serves the
         * execs: docs/design/microvm.md "Lifecycle"); a landlock session runs each exec as a
         * cold run of that backend. */
        if (r >= 0 && (s->backend == CORDON_BACKEND_NATIVE || s->backend == CORDON_BACKEND_AUTO ||
                       s->backend == CORDON_BACKEND_MICROVM)) {
                r = host_launch(d, s, c, rq->id, &s->error);
                if (r >= 0)
                        return; /* answered once the sandbox is ready (host_on_readable) */
        }
        s->state = r < 0 ? SESSION_ERROR : SESSION_WARM;
        daemon_log("session %s: %s (%s)", s->id, session_state_name(s->state),
                   cordon_backend_to_string(s->backend));
        reply_handle(c, rq->id, s);
}

void session_list(daemon_t *d, client *c, const proto_request *rq) {
        json_t *a = json_array();
        for (session *s = d->sessions; a && s; s = s->next) {
                if (s->state == SESSION_DESTROYED)
                        continue;
                _cleanup_free_ char *h = handle_json(s);
                json_t *o = h ? json_loads(h, 0, NULL) : NULL;
                if (!o || json_array_append_new(a, o) < 0) {
                        json_decref(a);
                        a = NULL;
                }
        }
        json_t *res = a ? json_pack("{s:o}", "sessions", a) : NULL;
        _cleanup_free_ char *txt = res ? json_dumps(res, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
        json_decref(res);
        (void) client_send(c, txt ? proto_result_line(rq->id, txt) : NULL);
}

/* ---- execs ---------------------------------------------------------------------------------- */

/* SIGKILL to every child of `parent` (found in /proc: PPid) and to its process group. */
static void kill_children_of(pid_t parent) {
        DIR *dir = opendir("/proc");
        if (!dir)
                return;
        struct dirent *e;
        while ((e = readdir(dir))) {
                char path[300], buf[512];
                if (e->d_name[0] < '1' || e->d_name[0] > '9')
                        continue;
                (void) snprintf(path, sizeof(path), "/proc/%s/status", e->d_name);
                FILE *f = fopen(path, "re");
                if (!f)
                        continue;
                pid_t ppid = -1;
                while (fgets(buf, sizeof(buf), f))
                        if (sscanf(buf, "PPid: %d", &ppid) == 1)
                                break;
                fclose(f);
                if (ppid != parent)
                        continue;
                pid_t pid = (pid_t) atoi(e->d_name);
                (void) kill(-pid, SIGKILL); /* a command leads its own group (setsid) */
                (void) kill(pid, SIGKILL);
        }
        closedir(dir);
}

static void kill_exec(exec_run *x) {
        /* The worker is the launcher of its sandbox: every sandbox process dies with it. The
         * command of an unconfined (backend none) session has no PID namespace: it and its
         * process group are killed first, by name, as the worker's children. */
        if (x->pid > 0) {
                kill_children_of(x->pid);
                (void) kill(x->pid, SIGKILL);
        }
}

static void session_free(session *s) {
        session_analytics_close(s);
        cordon_policy_free(s->layer);
        free(s->workdir);
        free(s);
}

void session_destroy(daemon_t *d, client *c, const proto_request *rq) {
        session *s = find_session(d, rq->session_id);
        if (!s) {
                session_reply_error(c, rq->id, CORDON_USAGE, "no such session");
                return;
        }
        for (exec_run *x = d->execs; x; x = x->next)
                if (x->s == s)
                        kill_exec(x);
        host_close(d, s);
        s->state = SESSION_DESTROYED;
        daemon_log("session %s: destroyed", s->id);
        reply_handle(c, rq->id, s);
}

void session_suspend(daemon_t *d, client *c, const proto_request *rq, bool suspend) {
        session *s = find_session(d, rq->session_id);
        if (!s) {
                session_reply_error(c, rq->id, CORDON_USAGE, "no such session");
                return;
        }
        if (!s->host.handle || s->state == SESSION_ERROR || s->state == SESSION_CREATED) {
                session_reply_error(c, rq->id, CORDON_USAGE,
                                    "only a warm session (a confined one that started) can be "
                                    "suspended");
                return;
        }
        if (suspend == (s->state == SESSION_SUSPENDED)) {
                reply_handle(c, rq->id, s); /* already there: idempotent */
                return;
        }
        /* Every process of the session stops (or continues): the cgroup v2 freezer, else init's
         * signals; its execs' clients simply see no output meanwhile. */
        cordon_error err = { 0 };
        if ((suspend ? cordon_session_suspend : cordon_session_resume)(s->host.handle, &err) < 0) {
                session_reply_error(c, rq->id, CORDON_LAUNCH_FAILED,
                                    "the session's sandbox is gone");
                return;
        }
        s->state = suspend ? SESSION_SUSPENDED : s->running ? SESSION_ACTIVE : SESSION_WARM;
        daemon_log("session %s: %s", s->id, session_state_name(s->state));
        reply_handle(c, rq->id, s);
}

/* session.egressAnswer: passed to the session's host; the outcome is the egress.answer event in
 * the asking exec's stream (an answer too late, or for no open question, changes nothing). */
void session_egress_answer(daemon_t *d, client *c, const proto_request *rq) {
        session *s = find_session(d, rq->session_id);
        if (!s) {
                session_reply_error(c, rq->id, CORDON_USAGE, "no such session");
                return;
        }
        cordon_error err = { 0 };
        if (!s->host.handle ||
            cordon_session_egress_answer(s->host.handle, rq->ask_id, rq->answer, &err) < 0) {
                session_reply_error(c, rq->id, s->host.handle ? err.code : CORDON_USAGE,
                                    s->host.handle ? err.message
                                                   : "only a warm session asks about egress");
                return;
        }
        reply_handle(c, rq->id, s);
}

void sessions_destroy_all(daemon_t *d) {
        for (exec_run *x = d->execs; x; x = x->next)
                kill_exec(x);
        for (exec_run *x = d->execs; x; x = x->next)
                if (x->pid > 0) {
                        while (waitpid(x->pid, NULL, 0) < 0 && errno == EINTR)
                                ;
                        x->pid = -1;
                }
        /* Each session ends in order: cordon_session_destroy() returns once its host has
         * ended it (a host still there after 3 s is killed): SIGTERM must leave nothing
         * running. A backend-none terminal's shell is killed, then waited for. */
        for (session *s = d->sessions; s; s = s->next) {
                host_close(d, s);
                s->state = SESSION_DESTROYED;
        }
        for (exec_run *x = d->execs; x; x = x->next) {
                cordon_process_free(TAKE_PTR(x->proc)); /* before its pipe: the run's thread */
                terminal_free(x);
        }
        /* The daemon is a subreaper (main.c): what a killed exec worker leaves behind comes
         * back here — a sandbox winding down, or the command of an unconfined (backend none)
         * session, which has no PID namespace to die with. Kill and reap every child and its
         * process group until none is left (bounded), so that after SIGTERM nothing the daemon
         * started is still running. */
        for (int waited = 0; waited < 3000; waited += 5) {
                kill_children_of(getpid());
                pid_t w = waitpid(-1, NULL, WNOHANG);
                if (w < 0 && errno == ECHILD)
                        break;
                if (w <= 0)
                        (void) usleep(5000);
        }
}

/* ---- the daemon's side of an exec ------------------------------------------------------------ */

int exec_watch(daemon_t *d, exec_run *x, bool on) {
        if (x->events_fd < 0)
                return 0;
        struct epoll_event ev = { .events = EPOLLIN, .data.ptr = x };
        if (epoll_ctl(d->epfd, on ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, x->events_fd, &ev) < 0 &&
            errno != EEXIST && errno != ENOENT)
                return -errno;
        return 0;
}

/* The fields of an exec's override that widen the session's resolved policy. */
static int override_widening(daemon_t *d, const session *s, const char *override, strv *out,
                             cordon_error *err) {
        cordon_policy *base = NULL, *over = NULL;
        int r = cordon_policy_new(&over, err);
        if (r >= 0)
                r = cordon_policy_load_string(over, override, strlen(override),
                                              "params.policyOverride", err);
        if (r >= 0)
                r = exec_resolve_policy(d, s, NULL, NULL, NULL, &base, err);
        if (r >= 0)
                r = policy_widening_fields(base, over, out);
        if (r == -ENOMEM)
                (void) cordon_set_error(err, CORDON_LAUNCH_FAILED, ENOMEM, "out of memory");
        cordon_policy_free(base);
        cordon_policy_free(over);
        return r;
}

void session_exec(daemon_t *d, client *c, proto_request *rq) {
        session *s = find_session(d, rq->exec.session_id);
        if (!s) {
                session_reply_error(c, rq->id, CORDON_USAGE, "no such session");
                return;
        }
        if (s->state == SESSION_ERROR || s->state == SESSION_SUSPENDED) {
                session_reply_error(c, rq->id, CORDON_USAGE,
                                    s->state == SESSION_ERROR ? "the session failed to start"
                                                      : "the session is suspended");
                return;
        }
        /* Warm: the session's sandbox runs it, unless this exec brings a policy of its own,
         * which needs a sandbox built for that policy (a cold run in a worker). */
        if (s->host.handle && s->state != SESSION_CREATED && !rq->exec.policy_override) {
                exec_warm(d, c, s, rq);
                return;
        }
        /* docs/policy.md, "Layers and resolution": an override that widens the session's policy
         * runs only as an approved escalation, and says so in the exec's events; one that only
         * narrows needs nothing. */
        _cleanup_(strv_done) strv widening = { 0 };
        cordon_error werr = { 0 };
        if (rq->exec.policy_override && override_widening(d, s, rq->exec.policy_override,
                                                          &widening, &werr) < 0) {
                session_reply_error(c, rq->id, werr.code, werr.message);
                return;
        }
        if (widening.n > 0 && !rq->exec.escalation_approved) {
                char list[512] = "";
                for (size_t i = 0; i < widening.n; i++)
                        (void) snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
                                        i ? ", " : "", widening.v[i]);
                char msg[700];
                (void) snprintf(msg, sizeof(msg),
                                "params.policyOverride widens the session's policy (%s); run it "
                                "only as an approved escalation: set \"escalationApproved\": true",
                                list);
                session_reply_error(c, rq->id, CORDON_POLICY_INVALID, msg);
                return;
        }
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0) {
                session_reply_error(c, rq->id, CORDON_LAUNCH_FAILED, "cannot create the exec pipe");
                return;
        }
        pid_t pid = fork();
        if (pid == 0) {
                /* The worker holds nothing of the daemon's: not the listener, not other
                 * clients' connections, not other sessions' hosts. */
                if (process_close_fds_keep(&p[1], 1) < 0)
                        _exit(1);
                exec_worker_main(d, s, &rq->exec, p[1], &widening);
        }
        (void) close(p[1]);
        exec_run *x = pid > 0 ? exec_add(d, c, s, rq->id) : NULL;
        if (!x) {
                (void) close(p[0]);
                if (pid > 0) {
                        (void) kill(pid, SIGKILL);
                        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
                                ;
                }
                session_reply_error(c, rq->id, CORDON_LAUNCH_FAILED,
                                    pid < 0 ? "fork failed" : "out of memory");
                return;
        }
        x->pid = pid;
        x->events_fd = p[0];
        (void) fcntl(p[0], F_SETFL, O_NONBLOCK);
        if (exec_watch(d, x, true) < 0)
                kill_exec(x);
}

static void exec_line(exec_run *x, const char *line, size_t len) {
        if (len == 0)
                return;
        if (line[0] == 'R' && !x->got_result) {
                x->got_result = true;
                x->result = strndup(line + 1, len - 1);
                return;
        }
        if (line[0] == 'E')
                exec_analytics_event(x, line + 1, len - 1);
        if (line[0] == 'E' && x->term)
                terminal_event(x->d, x, line + 1, len); /* the JSON and its '\n'; in order */
        else if (line[0] == 'E' && x->owner)
                (void) client_send(x->owner, proto_event_line(x->request_id, line + 1, len - 1));
}

static void exec_finish_stream(daemon_t *d, exec_run *x) {
        (void) exec_watch(d, x, false);
        (void) close(x->events_fd);
        x->events_fd = -1;
}

void exec_on_readable(daemon_t *d, exec_run *x) {
        for (int round = 0; round < 16 && x->events_fd >= 0; round++) {
                if (x->owner && client_queued(x->owner) > DAEMON_OUT_MAX) {
                        /* Backpressure: the worker blocks on the pipe, the command on its
                         * output; nothing grows without bound. */
                        x->paused = true;
                        (void) exec_watch(d, x, false);
                        return;
                }
                if (x->cap - x->len < 65536) {
                        size_t cap = x->cap ? x->cap * 2 : 65536;
                        char *nb = realloc(x->buf, cap);
                        if (!nb) {
                                kill_exec(x);
                                return;
                        }
                        x->buf = nb;
                        x->cap = cap;
                }
                ssize_t n = read(x->events_fd, x->buf + x->len, x->cap - x->len);
                if (n < 0 && (errno == EAGAIN || errno == EINTR))
                        return;
                if (n <= 0) {
                        exec_finish_stream(d, x);
                        return;
                }
                x->len += (size_t) n;
                size_t start = 0;
                for (size_t i = 0; i < x->len; i++)
                        if (x->buf[i] == '\n') {
                                exec_line(x, x->buf + start, i - start);
                                start = i + 1;
                        }
                memmove(x->buf, x->buf + start, x->len - start);
                x->len -= start;
                /* Event lines are bounded (32 KiB); anything longer is not from our worker. */
                if (x->len > 1024 * 1024) {
                        kill_exec(x);
                        exec_finish_stream(d, x);
                        return;
                }
        }
}

/* ---- the ends of execs --------------------------------------------------------------------- */

/* Reading an exec's source again: its worker's pipe, its session's link, its PTY. */
static void exec_unpause(daemon_t *d, exec_run *x) {
        x->paused = false;
        if (x->term)
                terminal_update(d, x);
        /* The session's link, whoever's queue paused it: if another client is still over the
         * bound, the next readiness pauses it again. */
        (void) host_watch(d, &x->s->host, true);
        if (x->events_fd >= 0)
                (void) exec_watch(d, x, true);
}

void exec_resume_paused(daemon_t *d, client *c) {
        for (exec_run *x = d->execs; x; x = x->next)
                if (x->owner == c && x->paused)
                        exec_unpause(d, x);
}

void exec_client_gone(daemon_t *d, client *c) {
        for (exec_run *x = d->execs; x; x = x->next)
                if (x->owner == c) {
                        x->owner = NULL;
                        kill_exec(x);
                        warm_kill(x);
                        /* A paused exec's source must be read again, or the host (blocked
                         * writing to us) would never read its "K" line. */
                        if (x->paused)
                                exec_unpause(d, x);
                }
}

void exec_reap(daemon_t *d) {
        /* __WNOTHREAD: only this thread's children — the exec workers, the session hosts it
         * forked (libcordon waits for those by pidfd, and does not mind), the orphans that
         * come back to this subreaper. Never those of libcordon's own threads: a backend-none
         * terminal's shell is waited for by its run's thread, for its exit status. */
        for (;;) {
                pid_t w = waitpid(-1, NULL, WNOHANG | __WNOTHREAD);
                if (w <= 0)
                        return;
                for (exec_run *x = d->execs; x; x = x->next)
                        if (x->pid == w)
                                x->pid = -1;
        }
}

/* The exec's response: its result, or an error response when the run failed (like `cordon run`
 * exiting 125 with a fatal line) or its worker/host died without a result. */
static char *exec_response(const exec_run *x) {
        if ((!x->result || x->warm) && x->s->state == SESSION_DESTROYED)
                return proto_error_line(x->request_id, CORDON_KILLED,
                                        "the session was destroyed: everything in it was killed");
        if (!x->result)
                return proto_error_line(x->request_id, CORDON_LAUNCH_FAILED,
                                        x->warm ? "the session's sandbox ended"
                                                : "the exec worker died");
        json_t *o = json_loads(x->result, 0, NULL);
        json_t *e = json_object_get(o, "error");
        char *line;
        if (json_is_object(e)) {
                const char *code = json_string_value(json_object_get(e, "code"));
                cordon_code cc = CORDON_LAUNCH_FAILED;
                for (int k = CORDON_OK + 1; code && k <= CORDON_USAGE + 4; k++)
                        if (strcmp(cordon_code_name((cordon_code) k), code) == 0)
                                cc = (cordon_code) k;
                line = proto_error_line(x->request_id, cc,
                                        json_string_value(json_object_get(e, "message")));
        } else {
                line = proto_result_line(x->request_id, x->result);
        }
        json_decref(o);
        return line;
}

/* An exec is over when its worker has exited and its stream is drained: then its response. */
void exec_collect(daemon_t *d) {
        exec_run **pp = &d->execs;
        while (*pp) {
                exec_run *x = *pp;
                if (x->pid > 0 || x->events_fd >= 0 || (x->warm && !x->done)) {

                        pp = &x->next;
                        continue;
                }
                exec_analytics_end(x);
                if (x->owner)
                        (void) client_send(x->owner, exec_response(x));
                if (x->s->running > 0 && --x->s->running == 0 && x->s->state == SESSION_ACTIVE)
                        x->s->state = SESSION_WARM;
                *pp = x->next;
                cordon_process_free(x->proc);
                terminal_free(x);
                free(x->buf);
                free(x->result);
                free(x);
        }
        /* Destroyed sessions are freed once nothing refers to them. */
        session **sp = &d->sessions;
        while (*sp) {
                session *s = *sp;
                if (s->state == SESSION_DESTROYED && s->running == 0) {
                        *sp = s->next;
                        d->n_sessions--;
                        session_free(s);
                        /* The last session gone: hand glibc's kept free memory back, so an
                         * idle daemon's RSS returns to its baseline (BENCHMARKS.md). */
                        if (d->n_sessions == 0)
                                (void) malloc_trim(0);
                } else {
                        sp = &s->next;
                }
        }
}
