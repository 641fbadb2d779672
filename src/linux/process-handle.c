/* SPDX-License-Identifier: Apache-2.0 */
/* The public process handle (cordon_spawn, cordon_process_*) and cordon_run() over the launch
 * sequence (launch.h). A spawned run has a thread of its own that launches it and reads it to
 * its end: the report channel must be drained while the command runs (a supervisor blocked on a
 * full channel would stall the command), whatever the caller does meanwhile; and the sandbox's
 * first process dies with the thread that forked it (PR_SET_PDEATHSIG is per thread), so that
 * thread must live as long as the run, not as long as the caller's. cordon_run() does both on
 * the caller's thread: one command, no thread to start. */
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "linux/launch.h"
#include "linux/process-handle.h"
#include "run/run-options.h"
#include "util/uapi.h"
#include "policy/policy.h"
#include "util/fork-gate.h"

#define SPAWN_KNOWN_FLAGS (CORDON_SPAWN_TTY | CORDON_SPAWN_NO_MANAGED_SETTINGS)

static void policy_freep(cordon_policy **p) {
        cordon_policy_free(*p);
}

void cordon_spawn_options_init(cordon_spawn_options *opts) {
        if (!opts)
                return;
        *opts = (cordon_spawn_options) { .size = sizeof(*opts), .stdin_fd = 0, .stdout_fd = 1,
                                         .stderr_fd = 2, .cancel_fd = -1 };
}

/* The caller's options as this library knows them: a smaller struct (an older caller) leaves the
 * rest at its defaults; a larger one (a newer caller) may only carry zeros beyond what is known
 * here — a field this library cannot honour is refused, never ignored. */
int process_options_read(const cordon_spawn_options *in, cordon_spawn_options *out,
                         cordon_error *err) {
        cordon_spawn_options_init(out);
        int r = options_read_sized(out, sizeof(*out), in, "cordon_spawn_options", err);
        if (r < 0)
                return r;
        if (out->flags & ~(unsigned) SPAWN_KNOWN_FLAGS)
                return cordon_set_error(err, CORDON_USAGE, EINVAL,
                                        "cordon_spawn_options.flags: unknown flags 0x%x",
                                        out->flags & ~(unsigned) SPAWN_KNOWN_FLAGS);
        return 0;
}

static int check_fd_map(const cordon_spawn_options *o, cordon_error *err) {
        if (o->n_fds > CORDON_SPAWN_FDS_MAX || (o->n_fds && !o->fds))
                return cordon_set_error(err, CORDON_USAGE, E2BIG,
                                        "cordon_spawn_options.fds: %zu entries (at most %d)",
                                        o->n_fds, CORDON_SPAWN_FDS_MAX);
        long max = sysconf(_SC_OPEN_MAX);
        for (size_t i = 0; i < o->n_fds; i++) {
                const cordon_fd_map *m = &o->fds[i];
                if (m->fd < 0 || m->child_fd < 3 || (max > 0 && m->child_fd >= max))
                        return cordon_set_error(err, CORDON_USAGE, EBADF,
                                                "cordon_spawn_options.fds[%zu]: fd %d as the "
                                                "command's fd %d; hint: child_fd is 3 or more "
                                                "(stdio has fields of its own)",
                                                i, m->fd, m->child_fd);
                for (size_t k = 0; k < i; k++)
                        if (o->fds[k].child_fd == m->child_fd)
                                return cordon_set_error(err, CORDON_USAGE, EINVAL,
                                                        "cordon_spawn_options.fds: the "
                                                        "command's fd %d is given twice",
                                                        m->child_fd);
        }
        int std[3] = { o->stdin_fd, o->stdout_fd, o->stderr_fd };
        for (int i = 0; i < 3; i++)
                if (std[i] < CORDON_FD_NULL)
                        return cordon_set_error(err, CORDON_USAGE, EBADF,
                                                "cordon_spawn_options: fd %d for the command's "
                                                "fd %d", std[i], i);
        if (o->flags & CORDON_SPAWN_TTY && !isatty(o->stdin_fd))
                return cordon_set_error(err, CORDON_USAGE, ENOTTY,
                                        "cordon_spawn: CORDON_SPAWN_TTY needs a terminal as "
                                        "stdin_fd (fd %d is not one)", o->stdin_fd);
        return 0;
}

/* The launch's part of the options. */
static void options_apply(const cordon_spawn_options *o, launch *l) {
        l->opts = (launch_options) { .backend = o->backend, .environ = o->environ,
                                     .on_violation = o->on_violation, .userdata = o->userdata,
                                     .on_event = o->on_event,
                                     .event_userdata = o->event_userdata,
                                     .cancel_fd = o->cancel_fd, .capture = o->capture,
                                     .on_backend_note = o->on_backend_note,
                                     .on_egress_ask = o->on_egress_ask,
                                     .ask_userdata = o->ask_userdata,
                                     .on_command_ask = o->on_command_ask };
        l->fds.stdio[0] = o->stdin_fd;
        l->fds.stdio[1] = o->stdout_fd;
        l->fds.stdio[2] = o->stderr_fd;
        if (o->n_fds) /* fds may be NULL then: memcpy() must not see it (UBSan) */
                memcpy(l->fds.map, o->fds, o->n_fds * sizeof(cordon_fd_map));
        l->fds.n_map = o->n_fds;
        l->cwd = o->cwd;
        l->tty = o->flags & CORDON_SPAWN_TTY;
}

/* The same for cordon_run()'s options: the command gets the caller's fds 0-2 (launch_init). */
static void run_options_apply(const cordon_run_options *o, launch *l) {
        l->opts = (launch_options) { .backend = o->backend, .environ = o->environ,
                                     .on_violation = o->on_violation, .userdata = o->userdata,
                                     .on_event = o->on_event,
                                     .event_userdata = o->event_userdata,
                                     .cancel_fd = o->cancel_fd, .capture = o->capture,
                                     .on_backend_note = o->on_backend_note,
                                     .on_egress_ask = o->on_egress_ask,
                                     .ask_userdata = o->ask_userdata,
                                     .on_command_ask = o->on_command_ask };
}

/* The run's end: the result, then done_fd. */
static void run_finish(cordon_process *p) {
        cordon_run_result ret = { 0 };
        cordon_error err = { 0 };
        int r = launch_finish(&p->l, &ret, &err);
        /* After a timeout the stream already ended with "killed": this emits nothing then. */
        if (r < 0)
                events_error(&p->l.ev, &err);
        process_set_result(p, r, &ret, &err);
}

void process_set_result(cordon_process *p, int r, const cordon_run_result *ret,
                        const cordon_error *err) {
        pthread_mutex_lock(&p->lock);
        p->result = r;
        if (ret)
                p->ret = *ret;
        if (err)
                p->err = *err;
        p->session = NULL;
        pthread_mutex_unlock(&p->lock);
        (void) eventfd_write(p->done_fd, 1);
}

/* Launches, tells cordon_spawn() how it went (after which it may no longer touch the caller's
 * argv, policy or error), then reads the run to its end. */
static void *run_thread(void *arg) {
        cordon_process *p = arg;
        fork_gate_enter(); /* the library's own thread: out of the gate only while it waits */
        events_starting(&p->l.ev, p->l.opts.backend);
        int r = launch_start(&p->l, p->policy, p->argv, p->start_err);
        if (r >= 0) {
                p->pidfd = TAKE_FD(p->l.child_pidfd);
                p->command_pidfd = TAKE_FD(p->l.st.command_pidfd);
                p->command_pid = p->l.st.command_pid;
        } else {
                events_error(&p->l.ev, p->start_err);
        }
        p->start_result = r;
        (void) eventfd_write(p->start_fd, 1);
        if (r >= 0)
                run_finish(p);
        fork_gate_leave();
        return NULL;
}

/* The run's thread takes no signal: the caller's handlers run on the caller's threads. */
static int start_thread(cordon_process *p) {
        sigset_t all, old;
        sigfillset(&all);
        (void) pthread_sigmask(SIG_SETMASK, &all, &old);
        int e = pthread_create(&p->thread, NULL, run_thread, p);
        (void) pthread_sigmask(SIG_SETMASK, &old, NULL);
        return -e;
}

void process_release(cordon_process *p) {
        if (!p)
                return;
        launch_done(&p->l);
        safe_close(p->pidfd);
        safe_close(p->command_pidfd);
        safe_close(p->kill_fd);
        safe_close(p->done_fd);
        safe_close(p->start_fd);
        pthread_mutex_destroy(&p->lock);
        free(p);
}

int process_new(const cordon_spawn_options *o, cordon_process **ret, cordon_error *err) {
        cordon_process *p = calloc(1, sizeof(*p));
        if (!p)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, ENOMEM, "out of memory");
        launch_init(&p->l);
        options_apply(o, &p->l);
        p->pidfd = p->command_pidfd = -1;
        pthread_mutex_init(&p->lock, NULL);
        p->kill_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        p->done_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        p->start_fd = eventfd(0, EFD_CLOEXEC);
        if (p->kill_fd < 0 || p->done_fd < 0 || p->start_fd < 0) {
                int e = errno;
                process_release(p);
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, e, "eventfd: %s",
                                        strerror(e));
        }
        p->l.kill_fd = p->kill_fd;
        p->l.want_command_pidfd = true;
        *ret = p;
        return 0;
}

int cordon_spawn(const cordon_policy *policy, char *const argv[],
                 const cordon_spawn_options *opts, cordon_process **ret, cordon_error *err) {
        cordon_spawn_options o;
        cordon_process *p = NULL;
        if (!ret)
                return cordon_set_error(err, CORDON_USAGE, EINVAL, "cordon_spawn: ret is NULL");
        *ret = NULL;
        int r = process_options_read(opts, &o, err);
        if (r >= 0)
                r = check_fd_map(&o, err);
        if (r >= 0)
                r = process_new(&o, &p, err);
        if (r < 0)
                return r;
        cordon_error local = { 0 };
        p->start_err = err ? err : &local;
        /* On the caller's thread, before the run's: a managed file that fails the launch fails it
         * here, and the run's thread launches the policy that holds them. */
        _cleanup_(policy_freep) cordon_policy *managed = NULL;
        r = launch_managed(&p->l, policy, o.flags & CORDON_SPAWN_NO_MANAGED_SETTINGS, &managed,
                           p->start_err);
        if (managed)
                policy = managed;
        events_init(&p->l.ev, p->l.opts.on_event, p->l.opts.event_userdata,
                    policy ? policy->session_id : NULL);
        if (r < 0) {
                /* As a launch that fails on the run's thread tells it (run_thread). */
                events_starting(&p->l.ev, p->l.opts.backend);
                events_error(&p->l.ev, p->start_err);
                process_release(p);
                return r;
        }
        p->policy = policy;
        p->argv = argv;
        if ((r = start_thread(p)) < 0) {
                process_release(p);
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, -r,
                                        "cannot start the run's thread: %s", strerror(-r));
        }
        /* Out of the gate while the run's thread forks the sandbox: it waits for us otherwise. */
        unsigned gate = fork_gate_pause();
        eventfd_t one;
        while (eventfd_read(p->start_fd, &one) < 0 && errno == EINTR)
                ;
        fork_gate_resume(gate);
        p->policy = NULL;
        p->argv = NULL;
        p->start_err = NULL;
        if ((r = p->start_result) < 0) {
                FORK_GATE_PAUSED((void) pthread_join(p->thread, NULL));
                process_release(p);
                return r;
        }
        *ret = p;
        return 0;
}

pid_t cordon_process_pid(const cordon_process *p) {
        return p ? p->l.child : -1;
}

int cordon_process_pidfd(const cordon_process *p) {
        return p ? p->pidfd : -1;
}

int cordon_process_fd(const cordon_process *p) {
        return p ? p->done_fd : -1;
}

cordon_backend cordon_process_backend(const cordon_process *p) {
        return p ? p->l.backend : CORDON_BACKEND_AUTO;
}

bool process_done(const cordon_process *p) {
        struct pollfd pfd = { .fd = p->done_fd, .events = POLLIN };
        return poll(&pfd, 1, 0) > 0;
}

/* To the command's process group through its pidfd (race-free: the pidfd names that process,
 * never one that reused its pid). Kernels before 6.9 cannot signal a group by pidfd: there the
 * pidfd proves the leader alive (a live leader's pid names its group and no other), then
 * kill(-pid) reaches the group. Without a pidfd at all (before 6.5) the pid alone is used while
 * the run is not over. */
static int signal_command(const cordon_process *p, int sig) {
        if (p->command_pidfd >= 0) {
                if (syscall(SYS_pidfd_send_signal, p->command_pidfd, sig, NULL,
                            PIDFD_SIGNAL_PROCESS_GROUP) == 0)
                        return 0;
                if (errno != EINVAL)
                        return -errno;
                if (syscall(SYS_pidfd_send_signal, p->command_pidfd, 0, NULL, 0) < 0)
                        return -errno;
        } else if (p->command_pid <= 0 || process_done(p)) {
                return -ESRCH;
        }
        return kill(-p->command_pid, sig) < 0 ? -errno : 0;
}

int cordon_process_signal(cordon_process *p, int sig, cordon_error *err) {
        if (!p || sig <= 0 || sig >= _NSIG)
                return cordon_set_error(err, CORDON_USAGE, EINVAL,
                                        "cordon_process_signal: signal %d is not one (1-%d)", sig,
                                        _NSIG - 1);
        int r;
        if (p->in_session) {
                /* Under the handle's lock: the session stays until this exec's result is in. */
                pthread_mutex_lock(&p->lock);
                r = p->session ? session_exec_signal(p->session, p->exec_id, sig) : -ESRCH;
                pthread_mutex_unlock(&p->lock);
        } else {
                r = signal_command(p, sig);
        }
        if (r < 0)
                return cordon_set_error(err, CORDON_USAGE, -r,
                                        r == -ESRCH ? "the command has ended: no process to "
                                                      "signal"
                                                    : "cannot signal the command: %s",
                                        strerror(-r));
        return 0;
}

int cordon_process_kill(cordon_process *p, cordon_error *err) {
        if (!p)
                return cordon_set_error(err, CORDON_USAGE, EINVAL, "cordon_process_kill: NULL");
        int r = 0;
        if (p->in_session) {
                pthread_mutex_lock(&p->lock);
                r = p->session ? session_exec_kill(p->session, p->exec_id) : -ESRCH;
                pthread_mutex_unlock(&p->lock);
        } else if (!process_done(p)) {
                (void) eventfd_write(p->kill_fd, 1);
        } else {
                r = -ESRCH;
        }
        if (r < 0)
                return cordon_set_error(err, CORDON_USAGE, -r,
                                        r == -ESRCH ? "the run is over: nothing to kill"
                                                    : "the session is gone");
        return 0;
}

int cordon_process_wait(cordon_process *p, int timeout_ms, cordon_run_result *ret,
                        cordon_error *err) {
        if (!p)
                return cordon_set_error(err, CORDON_USAGE, EINVAL, "cordon_process_wait: NULL");
        if (timeout_ms != 0 && p->in_session && !process_done(p)) {
                pthread_mutex_lock(&p->lock);
                bool blocks = p->session && session_exec_wait_blocks(p->session);
                pthread_mutex_unlock(&p->lock);
                if (blocks)
                        return cordon_set_error(err, CORDON_USAGE, EDEADLK,
                                                "cordon_process_wait: this exec's result comes "
                                                "only through cordon_session_dispatch() on this "
                                                "thread; hint: poll cordon_process_fd() in the "
                                                "loop, or wait with timeout 0");
        }
        struct pollfd pfd = { .fd = p->done_fd, .events = POLLIN };
        int n;
        unsigned gate = fork_gate_pause();
        while ((n = poll(&pfd, 1, timeout_ms < 0 ? -1 : timeout_ms)) < 0 && errno == EINTR)
                ;
        fork_gate_resume(gate);
        if (n == 0)
                return 1;
        /* One waiter joins the run's thread, out of the gate and without the lock: a thread
         * that resumed holding it could wait for a fork that waits for a thread that waits for
         * the lock. The result is in before done_fd fires, so the others need not wait. */
        pthread_mutex_lock(&p->lock);
        bool join = !p->joined && !p->in_session;
        p->joined = true;
        pthread_mutex_unlock(&p->lock);
        if (join)
                FORK_GATE_PAUSED((void) pthread_join(p->thread, NULL));
        pthread_mutex_lock(&p->lock);
        int r = p->result;
        if (ret)
                *ret = p->ret;
        if (r < 0 && err)
                *err = p->err;
        pthread_mutex_unlock(&p->lock);
        return r;
}

void cordon_process_free(cordon_process *p) {
        if (!p)
                return;
        if (!process_done(p)) {
                pthread_mutex_lock(&p->lock);
                cordon_session *s = p->in_session ? p->session : NULL;
                pthread_mutex_unlock(&p->lock);
                if (s && session_event_loop(s))
                        session_exec_forget(s, p->exec_id);
                else
                        (void) cordon_process_kill(p, NULL);
        }
        (void) cordon_process_wait(p, -1, NULL, NULL);
        process_release(p);
}

int cordon_run(const cordon_policy *policy, char *const argv[], const cordon_run_options *opts,
               cordon_run_result *ret, cordon_error *err) {
        /* Refused options end the call before the events stream starts, as for cordon_spawn():
         * the caller learns of it from the return value and `err` alone. */
        cordon_run_options o;
        int r = run_options_read(opts, &o, err);
        if (r < 0) {
                if (ret)
                        *ret = (cordon_run_result) { 0 };
                return r;
        }
        launch l;
        launch_init(&l);
        run_options_apply(&o, &l);
        cordon_error local = { 0 };
        cordon_error *e = err ? err : &local;
        /* No opt-out here: cordon_run_options has no flags (docs/design/library.md). */
        _cleanup_(policy_freep) cordon_policy *managed = NULL;
        r = ret ? launch_managed(&l, policy, false, &managed, e)
                : cordon_set_error(e, CORDON_USAGE, EINVAL, "no command to run");
        if (managed)
                policy = managed;
        events_init(&l.ev, l.opts.on_event, l.opts.event_userdata,
                    policy ? policy->session_id : NULL);
        events_starting(&l.ev, l.opts.backend);
        if (r >= 0)
                r = launch_start(&l, policy, argv, e);
        if (r >= 0)
                r = launch_finish(&l, ret, e);
        else if (ret)
                *ret = (cordon_run_result) { .backend = l.backend };
        safe_close(l.child_pidfd);
        /* After a timeout the stream already ended with "killed": this emits nothing then. */
        if (r < 0)
                events_error(&l.ev, e);
        return r;
}
