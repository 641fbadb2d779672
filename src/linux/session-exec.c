/* SPDX-License-Identifier: Apache-2.0 */
/* A session's execs (cordon_session_exec): the request to the session's host, "Y<id> {argv,
 * env, cwd, capture, tty}" with the command's stdio attached, and what the exec's handle asks of
 * the session afterwards: a signal ("G<id> <sig>"), a kill ("K<id>"). The host's answers come
 * back through session-handle.c. */
#include "linux/session-handle.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "linux/process-handle.h"

/* {"argv", "env", "cwd", "capture", "tty"} of a "Y" line. */
static char *exec_request_json(char *const argv[], const cordon_spawn_options *o) {
        json_t *a = json_array(), *env = json_array();
        for (size_t i = 0; a && argv[i]; i++)
                (void) json_array_append_new(a, json_string(argv[i]));
        for (size_t i = 0; env && o->environ && o->environ[i]; i++)
                (void) json_array_append_new(env, json_string(o->environ[i]));
        json_t *req = json_pack("{s:o,s:o,s:i,s:b}", "argv", a, "env", env, "capture",
                                (int) o->capture, "tty", (o->flags & CORDON_SPAWN_TTY) != 0);
        if (req && o->cwd)
                (void) json_object_set_new(req, "cwd", json_string(o->cwd));
        char *txt = req ? json_dumps(req, JSON_COMPACT) : NULL;
        json_decref(req);
        return txt;
}

/* The command's stdio as descriptors to send: the caller's, or /dev/null (opened here, closed
 * by the caller of this in `opened`). A captured stream's is /dev/null too: the host puts a
 * pipe of its own in its place. */
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

/* What a session exec cannot take: descriptors above stdio; capture of a stream that has a
 * descriptor of the caller's (the host would have to write each chunk on to it, and a slow
 * reader there would stall the host and with it every exec of the session). */
static int exec_check_options(const cordon_spawn_options *o, cordon_error *err) {
        if (o->n_fds)
                return cordon_set_error(err, CORDON_USAGE, ENOTSUP,
                                        "cordon_session_exec: descriptors above stdio are not "
                                        "available for a session's exec; hint: use "
                                        "cordon_spawn()");
        if ((o->capture & CORDON_CAPTURE_STDOUT && o->stdout_fd != CORDON_FD_NULL) ||
            (o->capture & CORDON_CAPTURE_STDERR && o->stderr_fd != CORDON_FD_NULL))
                return cordon_set_error(err, CORDON_USAGE, ENOTSUP,
                                        "cordon_session_exec: a captured stream's fd must be "
                                        "CORDON_FD_NULL (its output comes as events only); "
                                        "hint: give the command a pipe of yours instead");
        if (o->flags & CORDON_SPAWN_TTY && !isatty(o->stdin_fd))
                return cordon_set_error(err, CORDON_USAGE, ENOTTY,
                                        "cordon_session_exec: CORDON_SPAWN_TTY needs a terminal "
                                        "as stdin_fd (fd %d is not one)", o->stdin_fd);
        /* Refused, not ignored: the exec runs in the session's sandbox, built under the managed
         * settings or not at cordon_session_launch(); a caller setting the flag expects
         * something this exec cannot give. */
        if (o->flags & CORDON_SPAWN_NO_MANAGED_SETTINGS)
                return cordon_set_error(err, CORDON_USAGE, EINVAL,
                                        "cordon_session_exec: CORDON_SPAWN_NO_MANAGED_SETTINGS "
                                        "does not apply to an exec: the session's sandbox was "
                                        "built at its launch; hint: launch the session with "
                                        "CORDON_SESSION_NO_MANAGED_SETTINGS, or use "
                                        "cordon_spawn()");
        return 0;
}

static int exec_check(cordon_session *s, char *const argv[], const cordon_spawn_options *o,
                      cordon_error *err) {
        if (!argv || !argv[0] || !argv[0][0])
                return cordon_set_error(err, CORDON_USAGE, EINVAL, "no command to run");
        int r = exec_check_options(o, err);
        if (r < 0)
                return r;
        cordon_session_state st = cordon_session_get_state(s);
        if (st == CORDON_SESSION_ERROR || st == CORDON_SESSION_DESTROYED)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, EPIPE,
                                        "the session is %s: its sandbox is gone",
                                        cordon_session_state_to_string(st));
        /* The command policy of the session's policy (docs/policy.md), as for a run. */
        return policy_check_command(s->policy, argv, o->on_command_ask, o->ask_userdata, err);
}

/* The handle, listed under a new id before its line is sent (its result may come at once). */
static uint64_t exec_register(cordon_session *s, cordon_process *p, session_exec *e) {
        pthread_mutex_lock(&s->lock);
        uint64_t id = ++s->next_id;
        p->in_session = true;
        p->session = s;
        p->exec_id = id;
        p->l.backend = session_backend(s);
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
        int r = session_link_send(s, line, fds, 3);
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
                        session_exec_end(s, id, r, NULL, NULL);
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
        bool running = session_exec_find(s, id) != NULL;
        pthread_mutex_unlock(&s->lock);
        if (!running)
                return -ESRCH;
        char line[64];
        (void) snprintf(line, sizeof(line), "%c%llu %d\n", kind, (unsigned long long) id, arg);
        return session_link_send(s, line, NULL, 0);
}

int session_exec_signal(cordon_session *s, uint64_t exec_id, int sig) {
        return exec_line(s, exec_id, 'G', sig);
}

int session_exec_kill(cordon_session *s, uint64_t exec_id) {
        return exec_line(s, exec_id, 'K', 0);
}

/* Event-loop mode: a handle freed while its command runs cannot wait for a result that only
 * the caller's own dispatch would deliver. The command is killed and the handle leaves the
 * session at once: what the host still says about it finds no exec and is dropped. */
void session_exec_forget(cordon_session *s, uint64_t exec_id) {
        (void) exec_line(s, exec_id, 'K', 0);
        cordon_error err = { 0 };
        (void) cordon_set_error(&err, CORDON_KILLED, ECANCELED,
                                "the exec's handle was freed while it ran: it was killed");
        session_exec_end(s, exec_id, -ECANCELED, NULL, &err);
}
