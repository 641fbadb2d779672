/* SPDX-License-Identifier: Apache-2.0 */
/* The launch sequence: plans the sandbox, checks what it can enforce, starts its processes and
 * the egress proxy, and ends them, driving whichever backend runs through its table
 * (launch-backends.c). What they report is read by run-collect.c; the public handle around it
 * is process-handle.c. */
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "linux/cgroup.h"
#include "linux/launch.h"
#include "linux/creds.h"
#include "linux/probe.h"
#include "plan/tool-caches.h"
#include "policy/policy.h"
#include "report/report.h"
#include "settings/settings.h"
#include "linux/tls-bundle.h"
#include "util/fork-gate.h"

extern char **environ;

static const proxy_proc no_proxy = { .pid = -1, .listen_ch = -1, .report_fd = -1 };

void launch_init(launch *l) {
        *l = (launch) { .fds = { .stdio = { 0, 1, 2 } }, .lr = LANDLOCK_RUN_INIT,
                        .report_fd = -1, .px = no_proxy, .child = -1, .child_pidfd = -1,
                        .kill_fd = -1, .session_ctl = -1 };
        for (int i = 0; i < 2; i++)
                l->cap.s[i] = (capture_stream) { .read_fd = -1, .write_fd = -1 };
}

/* A fresh run_state for an attempt at a backend. A session's limits.timeout is each exec's
 * (session-host.c), not the sandbox's. */
static void attempt_state(launch *l) {
        const plan *p = l->p;
        bool session = l->session_ctl >= 0;
        l->st = (run_state) {
                .opts = &l->opts, .ev = &l->ev, .cg = p->cgroup, .pids = p->pids,
                .backend = l->be->base.id,
                .want_sender = l->want_command_pidfd, .command_pidfd = -1,
                .proxy_fd = l->px.report_fd, .kill_fd = l->kill_fd,
                .cancel_fd = l->opts.cancel_fd > 2 ? l->opts.cancel_fd : -1,
                .until_ready = session,
                .deadline = p->timeout_ms && !session ? monotonic_ms() + (int64_t) p->timeout_ms : -1 };
}

/* In the forked child: the caller's descriptors, the capture pipes, then the sandbox's first
 * stage. Never returns. */
static _noreturn_ void attempt_child(launch *l, char *const argv[], int report_fd, pid_t launcher) {
        (void) close(l->report_fd);
        if (l->px.report_fd >= 0)
                (void) close(l->px.report_fd);
        if (!launch_fds_identity(&l->fds)) {
                int *const own[] = { &report_fd, &l->px.listen_ch, &l->cap.s[0].write_fd,
                                     &l->cap.s[0].read_fd, &l->cap.s[1].write_fd,
                                     &l->cap.s[1].read_fd };
                launch_fds_child(&l->fds, own, ELEMENTSOF(own));
        }
        capture_child(&l->cap, report_fd);
        l->be->child_main(l, argv, report_fd, launcher);
}

/* What an attempt opened before its fork, closed again when the fork or its set-up failed. */
static void attempt_unwind(launch *l, int fds[2], proxy_channels *pch) {
        safe_close(fds[0]);
        safe_close(fds[1]);
        if (pch->lch[1] >= 0)
                l->px.listen_ch = -1; /* closed with the channels */
        proxy_channels_close(pch);
        proxy_proc_stop(&l->px);
        capture_end(&l->cap, -1, -1);
}

/* The report channel, the proxy's channels and the capture pipes. */
static int attempt_open(launch *l, int fds[2], proxy_channels *pch, cordon_error *err) {
        int r = report_channel(fds);
        if (r >= 0 && l->want_command_pidfd)
                r = report_sender_on(fds[0]);
        if (r < 0) {
                safe_close(fds[0]);
                safe_close(fds[1]);
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, r,
                                        "cannot create the report channel: %s", strerror(-r));
        }
        l->px = no_proxy;
        if (l->be->proxy_open && (r = l->be->proxy_open(l, pch, err)) < 0) {
                safe_close(fds[0]);
                safe_close(fds[1]);
                return r;
        }
        const int forward[2] = { l->fds.stdio[1], l->fds.stdio[2] };
        if ((r = capture_open(&l->cap, l->opts.capture, &l->ev, forward)) < 0) {
                attempt_unwind(l, fds, pch);
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, r,
                                        "cannot create the capture pipes: %s", strerror(-r));
        }
        return 0;
}

/* Forks the sandbox and starts the proxy. 0, or -errno with nothing left running. */
static int attempt_fork(launch *l, char *const argv[], cordon_error *err) {
        int fds[2] = { -1, -1 };
        proxy_channels pch = { { -1, -1 }, { -1, -1 } };
        int r = attempt_open(l, fds, &pch, err);
        if (r < 0)
                return r;
        pid_t launcher = getpid();
        l->report_fd = fds[0];
        pid_t child = fork();
        if (child < 0) {
                int e = errno;
                l->report_fd = -1;
                attempt_unwind(l, fds, &pch);
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, e, "fork: %s", strerror(e));
        }
        if (child == 0)
                attempt_child(l, argv, fds[1], launcher);
        l->child = child;
        /* Before anything can reap it: the pidfd names this very process. */
        l->child_pidfd = (int) syscall(SYS_pidfd_open, child, 0);
        safe_close(fds[1]);
        capture_parent(&l->cap);
        if (l->be->proxy_start) {
                r = l->be->proxy_start(l, &pch, err);
                if (r < 0) {
                        (void) kill(child, SIGKILL); /* no proxy: the sandbox must not run */
                        unsigned gate = fork_gate_pause();
                        while (waitpid(child, NULL, 0) < 0 && errno == EINTR)
                                ;
                        fork_gate_resume(gate);
                        l->child = -1;
                        l->report_fd = safe_close(l->report_fd);
                        capture_end(&l->cap, -1, -1);
                        return r;
                }
        }
        safe_close(l->px.listen_ch);
        l->px.listen_ch = -1;
        return 0;
}

/* The rest of an attempt after its start: reads to the end (unless `at_eof`), reaps the
 * sandbox, and turns what it saw into the result. */
static int attempt_end(launch *l, int r, cordon_run_result *ret, cordon_error *err) {
        run_state *st = &l->st;
        if (r > 0)
                r = run_collect(l, false);
        /* Before the exit event: every "stdout"/"stderr" event precedes it. */
        capture_end(&l->cap, r < 0 ? -1 : l->child, st->timed_out ? monotonic_ms() : -1);
        l->report_fd = safe_close(l->report_fd);
        proxy_proc_stop(&l->px); /* the run is over: its tunnels end with it */
        l->px = no_proxy;
        if (r < 0)
                (void) kill(l->child, SIGKILL); /* fail closed: never leave a sandbox unattended */
        int cst = 0;
        unsigned gate = fork_gate_pause(); /* the command may run for hours */
        while (waitpid(l->child, &cst, 0) < 0 && errno == EINTR)
                ;
        fork_gate_resume(gate);
        if (r < 0)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, r,
                                        "lost the report channel: %s", strerror(-r));
        return run_result(l, cst, ret, err);
}

/* One attempt at the current backend, up to the command's start. *ret_ready: whether the
 * command was about to be executed (nothing ran when false). On failure the attempt has ended
 * (reaped, closed) and `err` says why. */
static int attempt(launch *l, char *const argv[], bool *ret_ready, cordon_error *err) {
        int r = attempt_fork(l, argv, err);
        if (r < 0)
                return r;
        attempt_state(l);
        if (!l->be->base.confined)
                events_ready(&l->ev, l->be->base.id); /* nothing to build: ready at once */
        r = run_collect(l, true);
        *ret_ready = !l->be->base.confined || l->st.ready;
        /* Started, and maybe over already (the channel's end came with the start). */
        l->at_eof = r == 0;
        if (r >= 0 && run_started(&l->st) && !l->st.timed_out && !l->st.killed)
                return 0;
        /* Ended before its command started: a set-up failure, a kill, a lost channel. */
        cordon_run_result scratch = { 0 };
        r = attempt_end(l, r, &scratch, err);
        if (r >= 0) /* it ended "well" without starting: not a run the caller can wait for */
                r = cordon_set_error(err, CORDON_LAUNCH_FAILED, ECHILD,
                                     "the sandbox ended before the command started");
        l->child_pidfd = safe_close(l->child_pidfd);
        l->child = -1;
        if (l->st.command_pidfd >= 0)
                l->st.command_pidfd = safe_close(l->st.command_pidfd);
        return r;
}

/* An attempt at backend `be`: what it builds before the fork, then the attempt. */
static int attempt_with(launch *l, const launch_backend *be, char *const argv[], bool *ret_ready,
                        cordon_error *err) {
        l->be = be;
        l->backend = be->base.id;
        int r = be->prepare ? be->prepare(l, err) : 0;
        return r < 0 ? r : attempt(l, argv, ret_ready, err);
}

/* The unspecified backend's ladder (docs/design/backends.md): native, else landlock, else refuse.
 * Native is tried first and costs nothing extra when it works; only when it failed before the
 * command started does the probe (a few milliseconds) say whether this host lacks user namespaces
 * and can run the landlock backend. Then the step down is said once, through on_backend_note. */
static bool step_down_to_landlock(const launch_options *opts) {
        const probe_facts *f = NULL;
        if (probe_facts_get(&f) < 0)
                return false;
        probe_backend b[PROBE_N_BACKENDS];
        probe_evaluate(f, b);
        if (b[0].status != PROBE_UNUSABLE || b[1].status == PROBE_UNUSABLE)
                return false; /* native is usable: its failure was something else, and stands */
        if (opts->on_backend_note) {
                /* The probe's first reason ("user namespaces are not usable (unshare: ...)"). */
                char why[sizeof(b[0].hint)];
                (void) snprintf(why, sizeof(why), "%.*s", (int) strcspn(b[0].hint, ";"),
                                b[0].hint);
                FORK_GATE_PAUSED(opts->on_backend_note(opts->userdata, CORDON_BACKEND_LANDLOCK,
                                                       why));
        }
        return true;
}

/* The requested backend; for AUTO, native and then the step down. */
static int attempt_ladder(launch *l, const launch_backend *be, cordon_backend requested,
                          char *const argv[], cordon_error *err) {
        bool ready = false;
        int r = attempt_with(l, be, argv, &ready, err);
        if (r >= 0 || ready || be != &launch_backend_native || requested != CORDON_BACKEND_AUTO)
                return r; /* an explicitly named backend never steps down */
        if (!step_down_to_landlock(&l->opts))
                return r;
        if (err)
                *err = (cordon_error) { 0 };
        return attempt_with(l, &launch_backend_landlock, argv, &ready, err);
}

/* What a warm session needs: a confining mode and the native backend (its init serves the
 * execs; the landlock backend has none) or the microvm backend (that init boots the VM and
 * hands it each exec), so it never steps down. */
static int session_checks(launch *l, cordon_backend backend, cordon_error *err) {
        if (l->p->mode == CORDON_MODE_DANGER_FULL_ACCESS || backend == CORDON_BACKEND_NONE)
                return cordon_set_error(err, CORDON_POLICY_UNENFORCEABLE, ENOTSUP,
                                        "a warm session cannot be unconfined "
                                        "(danger-full-access): launch it with a confining mode");
        if (backend != CORDON_BACKEND_AUTO && backend != CORDON_BACKEND_NATIVE &&
            backend != CORDON_BACKEND_MICROVM)
                return cordon_set_error(err, CORDON_POLICY_UNENFORCEABLE, ENOTSUP,
                                        "a warm session runs on the native or microvm backend "
                                        "only, not %s; hint: run each command with "
                                        "cordon_spawn() instead",
                                        cordon_backend_to_string(backend));
        l->p->session_ctl = l->session_ctl;
        /* Never steps down: there is nothing below. */
        l->opts.backend = backend == CORDON_BACKEND_MICROVM ? backend : CORDON_BACKEND_NATIVE;
        return 0;
}

/* The descriptors the caller hands over above stdio stay open through every stage. */
static void keep_handed_fds(launch *l) {
        for (size_t i = 0; i < l->fds.n_map; i++)
                l->p->keep_fds[i] = l->fds.map[i].child_fd;
        l->p->n_keep_fds = l->fds.n_map;
}

/* The run's home and directory: the caller's, else from its environment and getcwd(). */
static int launch_dirs(const launch *l, char *const *env, char **ret_home, char **ret_cwd,
                       cordon_error *err) {
        _cleanup_free_ char *home = l->home ? strdup(l->home) : home_dir_of(env);
        _cleanup_free_ char *cwd = l->cwd ? strdup(l->cwd) : getcwd(NULL, 0);
        if (!home || !cwd)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, errno ? errno : ENOENT,
                                        "cannot determine the %s directory",
                                        home ? "current" : "home");
        *ret_home = TAKE_PTR(home);
        *ret_cwd = TAKE_PTR(cwd);
        return 0;
}

int launch_managed(const launch *l, const cordon_policy *policy, bool opt_out,
                   cordon_policy **ret, cordon_error *err) {
        *ret = NULL;
        /* No policy: launch_start() refuses the run. */
        if (opt_out || !policy)
                return 0;
        char *const *env = l->opts.environ ? l->opts.environ : environ;
        _cleanup_free_ char *home = NULL, *cwd = NULL;
        int r = launch_dirs(l, env, &home, &cwd, err);
        return r < 0 ? r
                     : settings_managed_apply(policy, cwd, home, l->opts.backend, ret, err);
}

/* The plan, from the policy and the caller's environment and directory. */
static int launch_plan(launch *l, const cordon_policy *policy, cordon_error *err) {
        char *const *env = l->opts.environ ? l->opts.environ : environ;
        _cleanup_free_ char *home = NULL, *cwd = NULL;
        int r = launch_dirs(l, env, &home, &cwd, err);
        if (r < 0)
                return r;
        /* The tool cache root is created here, not by the (side-effect-free) planner. */
        r = tool_caches_prepare(policy, env, home, err);
        if (r >= 0)
                r = plan_build(policy, home, cwd, env, &l->p, err);
        if (r >= 0)
                l->p->tty = l->tty; /* CORDON_SPAWN_TTY: command_main() makes fd 0 its own */
        if (r >= 0 && l->p->net.req.n_creds && !(l->creds_home = strdup(home)))
                r = cordon_set_error(err, CORDON_LAUNCH_FAILED, ENOMEM, "out of memory");
        return r;
}

int launch_start(launch *l, const cordon_policy *policy, char *const argv[], cordon_error *err) {
        if (!policy || !argv || !argv[0] || !argv[0][0])
                return cordon_set_error(err, CORDON_USAGE, EINVAL, "no command to run");
        cordon_backend backend = l->opts.backend;
        /* The command policy (docs/policy.md): before anything is built, on every backend,
         * none and danger-full-access included. */
        int r = policy_check_command(policy, argv, l->opts.on_command_ask, l->opts.ask_userdata,
                                     err);
        if (r < 0)
                return r;
        r = launch_plan(l, policy, err);
        if (r < 0)
                return r;
        plan *p = l->p;
        bool unconfined = p->mode == CORDON_MODE_DANGER_FULL_ACCESS ||
                          backend == CORDON_BACKEND_NONE;
        if (unconfined)
                backend = CORDON_BACKEND_NONE;
        /* No proxy runs: a placeholder would reach nothing, and the secret has nowhere to go. */
        if (unconfined && p->net.req.n_creds)
                r = cordon_set_error(err, CORDON_USAGE, ENOTSUP,
                                     "credentials need the sandbox's proxy: they cannot be "
                                     "used with danger-full-access or --backend none");
        const launch_backend *be = launch_backend_for(backend);
        l->be = be;
        l->backend = be->base.id;
        keep_handed_fds(l);
        if (r >= 0)
                r = l->session_ctl >= 0 ? session_checks(l, backend, err) : 0;
        /* limits.cpus is the VM's vCPUs: on a backend without a VM nothing would hold the
         * command to it, so such a run is refused rather than run without the limit. */
        if (r >= 0 && p->cpus && be->base.id != CORDON_BACKEND_MICROVM)
                r = cordon_set_error(err, CORDON_POLICY_UNENFORCEABLE, ENOTSUP,
                                     "limits.cpus (%llu) is enforced by the microvm backend "
                                     "only (its vCPUs), not by %s; hint: run with --backend "
                                     "microvm, or drop limits.cpus",
                                     (unsigned long long) p->cpus,
                                     cordon_backend_to_string(be->base.id));
        if (r >= 0 && be->base.available)
                r = be->base.available(err);
        if (r >= 0 && be->base.confined)
                r = launch_fds_check(&l->fds, p, err);
        /* limits.memory and limits.pids: a cgroup of the run's own, or rlimits (linux/cgroup.h). */
        if (r >= 0 && be->base.confined)
                r = cgroup_for_limits(p->memory_bytes, &p->pids, p->pids_default, &p->cgroup,
                                      err);
        /* Without limits, a cgroup of the session's own still serves suspend (the v2 freezer)
         * where one can be created; else suspend stops the processes with signals. */
        if (r >= 0 && l->session_ctl >= 0 && !p->cgroup)
                (void) cgroup_create(NULL, &(cgroup_limits) { 0 }, &p->cgroup);
        if (r >= 0)
                r = attempt_ladder(l, be, l->opts.backend, argv, err);
        if (r < 0)
                launch_done(l);
        return r;
}

int launch_finish(launch *l, cordon_run_result *ret, cordon_error *err) {
        *ret = (cordon_run_result) { .backend = l->backend };
        int r = attempt_end(l, l->at_eof ? 0 : 1, ret, err);
        if (l->st.command_pidfd >= 0)
                l->st.command_pidfd = safe_close(l->st.command_pidfd);
        launch_done(l);
        return r;
}

void launch_done(launch *l) {
        strv_done(&l->st.ask_session);
        tls_bundle_drop(&l->tls_ca);
        creds_drop(&l->creds);
        creds_run_finish(&l->creds_run); /* the brokers revoke what they issued */
        free(l->creds_home);
        l->creds_home = NULL;
        if (l->be && l->be->done)
                l->be->done(l);
        if (l->p) {
                cgroup_destroy(TAKE_PTR(l->p->cgroup));
                plan_free(TAKE_PTR(l->p));
        }
}
