/* SPDX-License-Identifier: Apache-2.0 */
/* The cold exec worker: a process forked from the daemon for an exec of a session without a warm
 * host. It resolves the exec's policy, calls cordon_run() -- the same code path as `cordon run`,
 * so an exec is exactly as confined as a run -- and writes the run's events and result back to
 * the daemon over a pipe ("E" + an event line, "R" + the result line). The daemon never runs a
 * sandbox in its own process: a run that wedges or crashes takes only its worker. */
#include "daemon/daemon.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "run/events.h"
#include "util/util.h"

extern char **environ;

/* ---- the exec worker (a child of the daemon) ------------------------------------------------ */

typedef struct worker_ctx {
        int fd;
} worker_ctx;

static void worker_write(int fd, const char *p, size_t n) {
        while (n > 0) {
                ssize_t w = write(fd, p, n);
                if (w < 0 && errno == EINTR)
                        continue;
                if (w <= 0)
                        _exit(1);
                p += w;
                n -= (size_t) w;
        }
}

static void worker_event(void *userdata, const char *line, size_t len) {
        const worker_ctx *w = userdata;
        worker_write(w->fd, "E", 1);
        worker_write(w->fd, line, len); /* ends in '\n' */
}

/* stdin given inline: a memfd, so the command reads it at its own pace and the daemon never
 * blocks writing into a pipe nobody reads (for a cold exec the worker's, for a warm one the
 * daemon's own: session-warm.c). */
static cordon_command_answer approved(void *userdata, const cordon_command_question *q) {
        (void) userdata;
        (void) q;
        return CORDON_COMMAND_APPROVE;
}

cordon_command_ask_fn exec_command_approver(const proto_exec *e) {
        return e->command_approved ? approved : NULL;
}

int exec_stdin_fd(const proto_exec *e) {
        if (!e->stdin_data)
                return open("/dev/null", O_RDONLY | O_CLOEXEC);
        int fd = (int) syscall(SYS_memfd_create, "cordon-stdin", MFD_CLOEXEC);
        if (fd < 0)
                return -1;
        size_t off = 0;
        while (off < e->stdin_len) {
                ssize_t w = write(fd, e->stdin_data + off, e->stdin_len - off);
                if (w < 0 && errno == EINTR)
                        continue;
                if (w <= 0)
                        break;
                off += (size_t) w;
        }
        if (off < e->stdin_len || lseek(fd, 0, SEEK_SET) != 0) {
                (void) close(fd);
                return -1;
        }
        return fd;
}

static void write_result(int fd, int r, const cordon_run_result *res, const cordon_error *err) {
        json_t *o = r < 0 ? json_pack("{s:{s:s,s:s}}", "error", "code", cordon_code_name(err->code),
                                      "message", err->message)
                          : json_pack("{s:i,s:s,s:i}", "exitCode", res->exit_code, "backend",
                                      cordon_backend_to_string(res->backend), "violations",
                                      (int) res->violations);
        char *txt = o ? json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
        if (txt) {
                worker_write(fd, "R", 1);
                worker_write(fd, txt, strlen(txt));
                worker_write(fd, "\n", 1);
        }
}

_noreturn_ void exec_worker_main(daemon_t *d, session *s, const proto_exec *e, int fd,
                                 const strv *widening) {
        (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
        (void) prctl(PR_SET_NAME, "cordond-exec", 0, 0, 0);
        sigset_t all;
        sigemptyset(&all);
        (void) sigprocmask(SIG_SETMASK, &all, NULL);
        (void) signal(SIGPIPE, SIG_DFL);
        int in = exec_stdin_fd(e), null = open("/dev/null", O_WRONLY | O_CLOEXEC);
        if (in < 0 || null < 0 || dup2(in, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0)
                _exit(1);
        cordon_error err = { 0 };
        cordon_run_result res = { 0 };
        cordon_policy *pol = NULL;
        int r = exec_resolve_policy(d, s, e->policy_override, e->cwd, unconfined_what(s), &pol,
                                    &err);
        /* cordon_run() takes the workspace from the working directory, as `cordon run` does:
         * the session's, never the daemon's (a cold exec would otherwise run in, and may write
         * to, whatever directory cordond was started from). */
        if (r >= 0 && chdir(s->workdir) < 0)
                r = cordon_set_error(&err, CORDON_LAUNCH_FAILED, errno,
                                     "cannot enter the session's workdir '%s': %s", s->workdir,
                                     strerror(errno));
        /* The exec's variables are set as given, as in a warm exec (the session host): on purpose,
         * like env.set; the daemon's own environment is filtered by the plan as for any run. */
        for (size_t i = 0; r >= 0 && i < e->n_env; i++) {
                char *eq = strchr(e->env[i], '=');
                *eq = '\0';
                r = cordon_policy_env_set(pol, e->env[i], eq + 1);
                *eq = '=';
                if (r < 0)
                        r = cordon_set_error(&err, CORDON_POLICY_INVALID, -r,
                                             "params.env: %s cannot be set", e->env[i]);
        }
        worker_ctx w = { .fd = fd };
        /* stdout and stderr come back as events (captured); fd 1/2 here are /dev/null. */
        cordon_run_options opts;
        cordon_run_options_init(&opts);
        opts.backend = s->backend;
        opts.environ = environ;
        opts.on_event = worker_event;
        opts.event_userdata = &w;
        opts.capture = CORDON_CAPTURE_STDOUT | CORDON_CAPTURE_STDERR;
        opts.on_command_ask = exec_command_approver(e);
        if (r >= 0 && widening->n > 0) {
                /* The approved escalation is part of this exec's record, before it starts. */
                events ev;
                events_init(&ev, worker_event, &w, s->id);
                events_escalation(&ev, (const char *const *) widening->v, widening->n);
        }
        if (r >= 0)
                r = cordon_run(pol, e->argv, &opts, &res, &err);
        write_result(fd, r, &res, &err);
        _exit(0);
}
