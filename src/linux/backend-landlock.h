/* SPDX-License-Identifier: Apache-2.0 */
/* The landlock backend (docs/design/backends.md; docs/design/landlock-backend.md): for Linux hosts
 * where user namespaces are not usable (Ubuntu 24.04's AppArmor restriction, unprivileged
 * containers). No namespace at all: Landlock decides what may be read, executed and written and
 * which TCP port may be reached, the seccomp filter and the creation-rule supervisor do the rest.
 *
 *   launcher (cordon_run)
 *     ├─ cordon-proxy: the egress proxy on the host's 127.0.0.1 (two ephemeral ports, per-run
 *     │  credentials: net/proxy-loopback.h)
 *     └─ cordon-guard: dies with the launcher; nothing else. Its death (the launcher's timeout
 *          │  and cancel paths SIGKILL it) is what tells the monitor to tear the run down.
 *          └─ cordon-monitor: child subreaper, no capabilities, no_new_privs, non-dumpable,
 *               │  Landlock layer "monitor"; the creation-rule supervisor. When the command
 *               │  exits or the guard dies, it SIGKILLs every process left under it (orphans are
 *               │  reparented to it), since there is no PID namespace to do so.
 *               └─ the command: Landlock layer "command" (it cannot signal the monitor: signal
 *                  scoping), the stacked socket filter, the landlock seccomp program with its
 *                  listener handed to the monitor, then setsid, rlimits, workdir, fds, env, exec.
 *
 * Without a PID namespace the command sees the host's processes in /proc; Landlock keeps it from
 * ptracing them (so from their memory and environ) and, with signal scoping, from signalling them. */
#pragma once

#include "linux/creds.h"
#include "linux/proxy-proc.h"
#include "linux/run-dirs.h"
#include "plan/landlock-plan.h"

typedef struct landlock_run {
        int abi;
        char *tmpdir;        /* the run's private TMPDIR under /tmp, removed by _done() */
        char *ca_dir;        /* TLS inspection's bundle directory under /tmp, or NULL; likewise */
        after_run reaper;    /* removes both when the run ends, the launcher killed too */
        proxy_proc proxy;    /* the loopback proxy; whoever runs the command takes it */
        landlock_plan *lp;
        strv writable;       /* the writable roots and tmpdir: where metadata may change */
} landlock_run;

#define LANDLOCK_RUN_INIT                                                                   \
        { .proxy = { .pid = -1, .listen_ch = -1, .report_fd = -1 },                         \
          .reaper = AFTER_RUN_INIT }

/* Whether this kernel can run the backend at all (Landlock ABI >= LANDLOCK_PLAN_MIN_ABI): 0, or
 * -errno with CORDON_SANDBOX_UNAVAILABLE saying what is missing. Cheap: the ABI is cached. */
int landlock_backend_available(cordon_error *err);

/* The run's credentials (creds.h): the caller's home (the file store's place; NULL: the plan
 * binds none) and the brokers' run, whose after-run processes the launch finishes. */
typedef struct landlock_creds {
        const char *home;
        creds_run *run;
} landlock_creds;

/* In the launcher, after plan_build() and the cgroup: refuses what the backend cannot enforce
 * (CORDON_POLICY_UNENFORCEABLE naming it), creates the private TMPDIR and, when the plan
 * inspects TLS (request rules, gitPush, credentials), the directory of TLS inspection's bundle,
 * starts their reaper, then reads the credentials' secrets (brokers issue theirs), makes the
 * session CA (tls-bundle.h) and writes the bundle, starts the loopback proxy with the CA and the
 * secrets and wipes the launcher's copies (only the proxy keeps a key or a secret), points the
 * plan's environment at all of them, and plans the Landlock layers. On failure nothing is left
 * running and `lr` is clean. */
int landlock_run_prepare(plan *p, landlock_run *lr, const landlock_creds *lc,
                         cordon_error *err);

/* Stops the proxy if it was not taken, removes TMPDIR with what the command left in it and the
 * bundle directory (through the reaper, which it waits for), frees. */
void landlock_run_done(landlock_run *lr);

/* The launcher's child: becomes cordon-guard and starts the monitor and the command. Failures
 * before exec go over report_fd like the native backend's. Never returns. */
_noreturn_ void landlock_sandbox_main(const plan *p, const landlock_run *lr, char *const argv[],
                                      int report_fd, pid_t launcher);
