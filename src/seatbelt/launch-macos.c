/* SPDX-License-Identifier: Apache-2.0 */
/* cordon_run() on macOS (built there only; src/linux/launch.c is the Linux version): the same
 * plan, written as a Seatbelt profile (seatbelt.h), applied by /usr/bin/sandbox-exec to the
 * command, which gets the plan's scrubbed environment and a private TMPDIR. Its events are the
 * run core's (src/run/): starting, ready, a violation per refusal the system log reports
 * (log-stream.h), then exit, killed (timeout) or error, as on Linux.
 * What this backend does not do, and why: docs/design/seatbelt.md. */
#include <limits.h>
#include <stdio.h>

#include "plan/tool-caches.h"
#include "policy/policy.h"
#include "run/events.h"
#include "run/run-backend.h"
#include "run/run-end.h"
#include "run/run-options.h"
#include "seatbelt/log-stream.h"
#include "seatbelt/seatbelt-exec.h"
#include "seatbelt/seatbelt.h"
#include "settings/settings.h"

extern char **environ;

static void policy_freep(cordon_policy **p) {
        cordon_policy_free(*p);
}

/* Seatbelt applied by sandbox-exec: this platform's native backend, when the tool is there. */
static int seatbelt_available(cordon_error *err) {
        if (access(SEATBELT_SANDBOX_EXEC, X_OK) < 0)
                return cordon_set_error(err, CORDON_SANDBOX_UNAVAILABLE, errno,
                                        "refusing to run the command unconfined: %s is not "
                                        "usable (%s); hint: macOS: check /usr/bin/sandbox-exec",
                                        SEATBELT_SANDBOX_EXEC, strerror(errno));
        return 0;
}

static const run_backend seatbelt_native = { .id = CORDON_BACKEND_NATIVE, .confined = true,
                                             .available = seatbelt_available };
static const run_backend seatbelt_none = { .id = CORDON_BACKEND_NONE, .confined = false };

/* macOS's table (run/run-backend.h): landlock and microvm are not in it, so asking for them is
 * refused, never answered with another backend. */
static const run_backend *const macos_backends[] = { &seatbelt_native, &seatbelt_none };

/* The backend of this run: none for danger-full-access (asked for by the mode), else the
 * requested one from the table, if this host can run it. */
static int pick_backend(cordon_backend requested, bool danger, const run_backend **ret,
                        cordon_error *err) {
        if (danger)
                requested = CORDON_BACKEND_NONE;
        int r = run_backend_pick(macos_backends, ELEMENTSOF(macos_backends), requested, "macOS",
                                 ret, err);
        if (r >= 0 && (*ret)->available)
                r = (*ret)->available(err);
        return r;
}

/* The per-user temporary directory macOS gives each user (/var/folders/.../T), else /tmp. */
static void temp_base(char *buf, size_t size) {
#ifdef _CS_DARWIN_USER_TEMP_DIR
        size_t n = confstr(_CS_DARWIN_USER_TEMP_DIR, buf, size);
        if (n > 1 && n <= size && buf[0] == '/') {
                if (buf[n - 2] == '/')
                        buf[n - 2] = '\0';
                return;
        }
#endif
        (void) snprintf(buf, size, "/tmp");
}

/* The plan's environment with TMPDIR pointing at the run's private directory. */
static int env_with_tmpdir(const strv *env, const char *tmpdir, strv *out) {
        int r = strv_extend(out, env);
        if (r < 0)
                return r;
        (void) strv_env_unset(out, "TMPDIR"); /* every copy, then the run's own at the end */
        char *t = NULL;
        if (asprintf(&t, "TMPDIR=%s", tmpdir) < 0)
                return -ENOMEM;
        return strv_push_take(out, t);
}

/* How long the log may take: to start streaming (its header), and after the command to deliver
 * the last refusals (quiet for QUIET ms, at most DRAIN ms in all). A refusal the kernel logs
 * later than that is not reported (docs/design/seatbelt.md, "Violation reports"). */
#define LOG_READY_MS 5000
#define LOG_QUIET_MS 300
#define LOG_DRAIN_MS 1500

typedef struct refusals {
        const events *ev;
        const cordon_run_options *opts;
} refusals;

/* One refusal of this run, read back from the log: the caller's callback and the event, as a
 * Linux refusal reaches them (src/linux/run-collect.c). */
static void refused(void *userdata, const seatbelt_violation *sv) {
        const refusals *r = userdata;
        cordon_violation v;
        seatbelt_violation_event(sv, &v);
        if (r->opts->on_violation)
                r->opts->on_violation(r->opts->userdata, &v);
        events_violation(r->ev, &v);
}

/* sandbox-exec with the log streamed meanwhile. Without the stream (no `log`, or it does not
 * start in time) the command still runs, confined as ever: the reports are what is lost, not
 * the sandbox. */
static int exec_reporting(const seatbelt_exec_params *params, const events *ev,
                          const cordon_run_options *opts, seatbelt_exec_result *res,
                          unsigned *violations, cordon_error *err) {
        seatbelt_exec_params x = *params;
        refusals ctx = { .ev = ev, .opts = opts };
        seatbelt_log_stream logs;
        bool reporting = seatbelt_log_stream_start(&logs, SEATBELT_LOG_PROGRAM, ev->session_id,
                                                   LOG_READY_MS, refused, &ctx) >= 0;
        if (reporting) {
                x.on_watch = seatbelt_log_stream_read;
                x.watch_userdata = &logs;
                x.watch_fd = logs.fd;
        }
        events_ready(ev, CORDON_BACKEND_NATIVE);
        int r = seatbelt_exec_run(&x, res, err);
        *violations = reporting ? seatbelt_log_stream_stop(&logs, LOG_QUIET_MS, LOG_DRAIN_MS) : 0;
        return r;
}

static int run_confined(const plan *p, const cordon_policy *policy, char *const argv[],
                        const events *ev, const cordon_run_options *opts,
                        seatbelt_exec_result *res, unsigned *violations, cordon_error *err) {
        char base[PATH_MAX];
        temp_base(base, sizeof(base));
        _cleanup_free_ char *tmpdir = NULL, *profile = NULL;
        int r = seatbelt_tmpdir_create(base, &tmpdir);
        if (r < 0)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, -r,
                                        "cannot create a temporary directory in %s: %s", base,
                                        strerror(-r));
        /* No egress proxy on macOS yet (run() refuses networkEnabled): no TCP destination. */
        seatbelt_params params = { .proxy_port = 0, .tmpdir = tmpdir, .session = ev->session_id };
        strv env = { 0 };
        r = seatbelt_profile(p, policy, &params, &profile, err);
        if (r >= 0 && (r = env_with_tmpdir(&p->env, tmpdir, &env)) < 0)
                r = cordon_set_error(err, CORDON_LAUNCH_FAILED, -r, "out of memory");
        if (r >= 0) {
                seatbelt_exec_params x = { .sandbox_exec = SEATBELT_SANDBOX_EXEC,
                                           .profile = profile, .argv = argv, .envp = env.v,
                                           .workdir = p->workdir, .timeout_ms = p->timeout_ms };
                r = exec_reporting(&x, ev, opts, res, violations, err);
        }
        strv_done(&env);
        /* What the command left in TMPDIR goes; a failure here leaves files, not access. */
        (void) seatbelt_tmpdir_remove(tmpdir);
        return r;
}

/* What this launcher cannot do yet is refused, never ignored: a caller that asked for its
 * output in the events, or for a descriptor that stops the run, would otherwise get a run that
 * silently does neither. */
static int check_options(const cordon_run_options *opts, cordon_error *err) {
        if (opts->capture)
                return cordon_set_error(err, CORDON_USAGE, ENOTSUP,
                                        "capture is not supported on macOS yet; hint: read the "
                                        "command's stdout and stderr yourself");
        if (opts->cancel_fd)
                return cordon_set_error(err, CORDON_USAGE, ENOTSUP,
                                        "cancel_fd is not supported on macOS yet; hint: use "
                                        "limits.timeout");
        return 0;
}

/* cordon_run() once its options are read (run_options_read: never NULL here). */
/* The home and current directory a run plans with. */
static int run_dirs(char *const *env, char **ret_home, char **ret_cwd, cordon_error *err) {
        _cleanup_free_ char *home = home_dir_of(env), *cwd = getcwd(NULL, 0);
        if (!home || !cwd)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, errno ? errno : ENOENT,
                                        "cannot determine the %s directory",
                                        home ? "current" : "home");
        *ret_home = TAKE_PTR(home);
        *ret_cwd = TAKE_PTR(cwd);
        return 0;
}

static int run(const cordon_policy *policy, char *const argv[], const cordon_run_options *opts,
               events *ev, cordon_run_result *ret, cordon_error *err) {
        if (!policy || !argv || !argv[0] || !argv[0][0] || !ret)
                return cordon_set_error(err, CORDON_USAGE, EINVAL, "no command to run");
        int r = check_options(opts, err);
        if (r < 0)
                return r;
        cordon_backend backend = opts->backend;
        char *const *env = opts->environ ? opts->environ : environ;
        _cleanup_free_ char *home = NULL, *cwd = NULL;
        r = run_dirs(env, &home, &cwd, err);
        if (r < 0)
                return r;
        plan *p = NULL;
        /* The tool cache root is created here, not by the (side-effect-free) planner. */
        /* docs/policy.md, "Command policy" */
        r = policy_check_command(policy, argv, opts->on_command_ask, opts->ask_userdata, err);
        if (r >= 0)
                r = tool_caches_prepare(policy, env, home, err);
        if (r >= 0)
                r = plan_build(policy, home, cwd, env, &p, err);
        if (r < 0)
                return r;
        const run_backend *be = NULL;
        r = pick_backend(backend, p->mode == CORDON_MODE_DANGER_FULL_ACCESS, &be, err);
        bool unconfined = r >= 0 && !be->confined;
        seatbelt_exec_result res = { 0 };
        unsigned violations = 0;
        /* docs/design/backends.md: refuse what cannot be enforced rather than drop it. The egress
         * proxy runs in the Linux sandbox's network namespace; on macOS there is none yet, so the
         * allowed destinations could not be reached (the profile allows no TCP without a proxy). */
        if (r >= 0 && !unconfined && p->net.enabled)
                r = cordon_set_error(err, CORDON_POLICY_UNENFORCEABLE, ENOTSUP,
                                     "networkEnabled is true, but the egress proxy does not run "
                                     "on macOS yet; set \"networkEnabled\": false "
                                     "(--no-network)");
        if (r >= 0 && unconfined) {
                seatbelt_exec_params x = { .argv = argv, .envp = p->env.v,
                                           .workdir = p->workdir, .timeout_ms = p->timeout_ms };
                events_ready(ev, CORDON_BACKEND_NONE);
                r = seatbelt_exec_run(&x, &res, err);
        } else if (r >= 0)
                r = run_confined(p, policy, argv, ev, opts, &res, &violations, err);
        uint64_t timeout = p->timeout_ms;
        plan_free(p);
        if (r < 0)
                return r;
        if (res.timed_out) {
                events_killed(ev, "timeout");
                return run_timeout_error(err, timeout, "its process group");
        }
        int st = res.wait_status;
        *ret = (cordon_run_result) {
                .backend = unconfined ? CORDON_BACKEND_NONE : CORDON_BACKEND_NATIVE,
                .wait_status = st,
                .exit_code = run_exit_code(st),
                .violations = violations,
        };
        events_exit(ev, st, ret->exit_code);
        return 0;
}

/* The administrator's managed settings over the caller's policy, as every launch on Linux
 * applies them (src/settings/settings-managed.c): *ret NULL when there is nothing to apply, else
 * the policy to run (caller frees). cordon_run has no opt-out. `opts` as run() takes them. */
static int apply_managed(const cordon_policy *policy, const cordon_run_options *opts,
                         cordon_policy **ret, cordon_error *err) {
        *ret = NULL;
        if (!policy)
                return 0; /* run() refuses it */
        char *const *env = opts->environ ? opts->environ : environ;
        _cleanup_free_ char *home = NULL, *cwd = NULL;
        int r = run_dirs(env, &home, &cwd, err);
        return r < 0 ? r : settings_managed_apply(policy, cwd, home, opts->backend, ret, err);
}

/* The same stream as Linux's; the "violation" events come from the system log, where Seatbelt
 * reports its refusals (docs/design/seatbelt.md, "Violation reports"). A failure ends the stream
 * with "error" (after "killed", the first terminal event stands). The
 * managed settings come first, so that the stream's sessionId is the policy's that runs. */
int cordon_run(const cordon_policy *policy, char *const argv[], const cordon_run_options *opts,
               cordon_run_result *ret, cordon_error *err) {
        cordon_error local = { 0 };
        cordon_error *e = err ? err : &local;
        /* Refused options end the call before the stream starts, as on Linux. */
        cordon_run_options o;
        int r = run_options_read(opts, &o, e);
        if (r < 0)
                return r;
        _cleanup_(policy_freep) cordon_policy *managed = NULL;
        r = apply_managed(policy, &o, &managed, e);
        if (managed)
                policy = managed;
        events ev;
        events_init(&ev, o.on_event, o.event_userdata, policy ? policy->session_id : NULL);
        events_starting(&ev, o.backend);
        if (r >= 0)
                r = run(policy, argv, &o, &ev, ret, e);
        if (r < 0)
                events_error(&ev, e);
        return r;
}
