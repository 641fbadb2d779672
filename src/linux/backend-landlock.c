/* SPDX-License-Identifier: Apache-2.0 */
/* The landlock backend, launcher side: what it refuses, the run's private TMPDIR, the loopback
 * proxy and the Landlock plan (backend-landlock.h; processes: backend-landlock-proc.c). */
#include "linux/backend-landlock.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>

#include "linux/creds.h"
#include "linux/landlock.h"
#include "linux/proxy-loopback.h"
#include "linux/tls-bundle.h"

int landlock_backend_available(cordon_error *err) {
        int abi = landlock_abi();
        if (abi >= LANDLOCK_PLAN_MIN_ABI)
                return 0;
        return cordon_set_error(err, CORDON_SANDBOX_UNAVAILABLE, abi == 0 ? ENOSYS : ENOTSUP,
                                "refusing to run the command unconfined: the landlock backend "
                                "needs Landlock ABI %d (Linux 6.12, for signal scoping: without a "
                                "PID namespace nothing else keeps the command from signalling the "
                                "user's other processes), this kernel has %d; hint: enable "
                                "unprivileged user namespaces for the native backend (see "
                                "'cordon probe'), or boot a newer kernel with lsm=...,landlock",
                                LANDLOCK_PLAN_MIN_ABI, abi);
}

/* What this backend cannot enforce, refused by name (docs/design/backends.md: never run weaker in
 * silence). */
static int check_enforceable(const plan *p, cordon_error *err) {
        if (p->pids && !p->cgroup)
                return cordon_set_error(err, CORDON_POLICY_UNENFORCEABLE, ENOTSUP,
                                        "limits.pids cannot be enforced by the landlock backend "
                                        "without a cgroup: with no user namespace RLIMIT_NPROC "
                                        "counts every process of the user, not the command's; "
                                        "hint: run cordon in a cgroup v2 tree with the pids "
                                        "controller delegated, or drop --pids");
        return 0;
}

/* ---- TMPDIR --------------------------------------------------------------------------------- */

/* The host's /tmp is shared with every process of the machine (native gives the command a
 * private tmpfs): here the command gets a directory of its own, 0700, removed after the run, and
 * no access to the rest of /tmp. */
static int make_tmpdir(plan *p, landlock_run *lr, cordon_error *err) {
        char tmpl[] = "/tmp/cordon-run-XXXXXX";
        if (!mkdtemp(tmpl))
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, errno,
                                        "cannot create the run's private TMPDIR under /tmp: %s",
                                        strerror(errno));
        lr->tmpdir = realpath(tmpl, NULL);
        if (!lr->tmpdir) {
                int e = errno;
                (void) rmdir(tmpl);
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, e, "realpath %s: %s", tmpl,
                                        strerror(e));
        }
        static const char *const vars[] = { "TMPDIR", "TMP", "TEMP", "TEMPDIR" };
        int r = 0;
        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(vars); i++)
                r = strv_env_set(&p->env, vars[i], lr->tmpdir);
        return r < 0 ? cordon_set_error(err, CORDON_LAUNCH_FAILED, -r, "out of memory") : 0;
}

/* ---- TLS inspection's bundle ------------------------------------------------------------- */

/* Without a mount namespace the merged bundle cannot be mounted over the system's path: it is
 * written into a directory of its own under /tmp, which no writable root contains, so the
 * command's Landlock layer grants it no write right there (no write, truncation, creation,
 * removal or rename into it: a command that could replace the bundle would make a later client
 * of the run trust a CA of its own). Reads of it are granted
 * (landlock_plan_options.ca_dir). Made empty when the plan inspects TLS (request rules, gitPush), before the
 * reaper's fork: the CA does not exist yet, so the reaper never has its key in memory. */
static int make_ca_dir(const plan *p, landlock_run *lr, cordon_error *err) {
        if (!policy_req_inspects(&p->net.req))
                return 0;
        char tmpl[] = "/tmp/cordon-ca-XXXXXX";
        if (!mkdtemp(tmpl))
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, errno,
                                        "TLS inspection: cannot create the run's bundle directory "
                                        "under /tmp: %s", strerror(errno));
        lr->ca_dir = realpath(tmpl, NULL);
        if (!lr->ca_dir) {
                int e = errno;
                (void) rmdir(tmpl);
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, e, "realpath %s: %s", tmpl,
                                        strerror(e));
        }
        return 0;
}

/* The session CA (tls-bundle.h), its certificate in the directory and the clients' variables
 * naming the bundle there; the CA itself in *ca for the proxy's fork. No Java truststore: the
 * JVM reads none of the proxy variables (and no name resolves here without the proxy), so no
 * Java client reaches a host on this backend anyway. */
static int make_ca(plan *p, landlock_run *lr, struct tls_ca **ca, cordon_error *err) {
        int r = tls_bundle_prepare(p, false, ca, err);
        if (r < 0 || !lr->ca_dir)
                return r;
        if ((r = tls_bundle_write(p, lr->ca_dir, err)) < 0)
                return r;
        char path[PATH_MAX];
        (void) snprintf(path, sizeof(path), "%s/%s", lr->ca_dir, TLS_BUNDLE_FILE);
        r = plan_ca_bundle_env(p, path);
        return r < 0 ? cordon_set_error(err, CORDON_LAUNCH_FAILED, -r, "out of memory") : 0;
}

/* The run's directories are removed even when the launcher is killed (run-dirs.h). */
static int start_reaper(landlock_run *lr, cordon_error *err) {
        const char *const dirs[] = { lr->tmpdir, lr->ca_dir };
        int r = run_dirs_reaper_start(dirs, ELEMENTSOF(dirs), &lr->reaper);
        return r < 0 ? cordon_set_error(err, CORDON_LAUNCH_FAILED, -r,
                                        "cannot start the process that removes the run's "
                                        "directories: %s", strerror(-r))
                     : 0;
}

/* Where the supervisor lets metadata change (supervisor-meta.c): what the command may write. */
static int writable_set(const plan *p, landlock_run *lr) {
        int r = 0;
        for (size_t i = 0; r >= 0 && i < p->writable_roots.n; i++)
                r = strv_push(&lr->writable, p->writable_roots.v[i]);
        return r >= 0 && lr->tmpdir ? strv_push(&lr->writable, lr->tmpdir) : r;
}

/* ---- entry points --------------------------------------------------------------------------- */

int landlock_run_prepare(plan *p, landlock_run *lr, const landlock_creds *lc,
                         cordon_error *err) {
        *lr = (landlock_run) LANDLOCK_RUN_INIT;
        struct tls_ca *ca = NULL;
        cred_set *creds = NULL;
        int r = landlock_backend_available(err);
        if (r >= 0)
                r = check_enforceable(p, err);
        if (r >= 0)
                r = make_tmpdir(p, lr, err);
        if (r >= 0)
                r = make_ca_dir(p, lr, err);
        if (r >= 0)
                r = start_reaper(lr, err);
        /* After the reaper's fork, so it holds no secret in its copy of this memory; the
         * placeholders go into the plan's environment. */
        if (r >= 0 && lc && lc->home)
                r = creds_prepare(p, lc->home, lc->run, &creds, err);
        if (r >= 0)
                r = make_ca(p, lr, &ca, err);
        proxy_loopback lb = { 0 };
        if (r >= 0)
                r = proxy_spawn_loopback(p, ca, creds, &lr->proxy, &lb, err);
        /* The proxy has them; freed (the key and the secrets wiped) before the guard's fork, so
         * neither the monitor nor the command ever has them in memory. */
        tls_bundle_drop(&ca);
        creds_drop(&creds);
        if (r >= 0 && (r = proxy_loopback_env(p, &lb)) < 0)
                r = cordon_set_error(err, CORDON_LAUNCH_FAILED, -r, "out of memory");
        lr->abi = landlock_abi();
        landlock_plan_options o = { .abi = lr->abi, .tmpdir = lr->tmpdir, .ca_dir = lr->ca_dir,
                                    .proxy_ports = { lb.http_port, lb.socks_port } };
        explicit_bzero(&lb, sizeof(lb));
        if (r >= 0)
                r = landlock_plan_build(p, &o, &lr->lp, err);
        if (r >= 0 && (r = writable_set(p, lr)) < 0)
                r = cordon_set_error(err, CORDON_LAUNCH_FAILED, -r, "out of memory");
        if (r < 0)
                landlock_run_done(lr);
        return r;
}

void landlock_run_done(landlock_run *lr) {
        proxy_proc_stop(&lr->proxy);
        if (lr->reaper.pid > 0) {
                after_run_finish(&lr->reaper); /* it removes them */
        } else {
                if (lr->tmpdir)
                        run_dir_remove(lr->tmpdir);
                if (lr->ca_dir)
                        run_dir_remove(lr->ca_dir);
        }
        free(lr->tmpdir);
        free(lr->ca_dir);
        landlock_plan_free(lr->lp);
        strv_done(&lr->writable);
        *lr = (landlock_run) LANDLOCK_RUN_INIT;
}
