/* SPDX-License-Identifier: Apache-2.0 */
/* The landlock backend, launcher side: what it refuses, the run's private TMPDIR, the loopback
 * proxy and the Landlock plan (backend-landlock.h; processes: backend-landlock-proc.c). */
#include "linux/backend-landlock.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>

#include "linux/landlock.h"
#include "linux/proxy-loopback.h"

/* Deep enough for any build tree; a deeper one the command made on purpose is left behind (in
 * its own 0700 directory) rather than recursed into without bound. */
#define TMPDIR_MAX_DEPTH 256

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

/* rm -rf that never follows a symlink: every step is relative to a directory fd opened with
 * O_NOFOLLOW, so a link the command planted cannot point the removal elsewhere. */
static void remove_children(int dfd, unsigned depth) {
        DIR *d = fdopendir(dfd);
        if (!d) {
                (void) close(dfd);
                return;
        }
        for (struct dirent *de; (de = readdir(d));) {
                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                if (unlinkat(dirfd(d), de->d_name, 0) == 0 || errno != EISDIR)
                        continue;
                int sub = openat(dirfd(d), de->d_name,
                                 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (sub >= 0 && depth < TMPDIR_MAX_DEPTH)
                        remove_children(sub, depth + 1);
                else if (sub >= 0)
                        (void) close(sub);
                (void) unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR); /* may fail: left behind */
        }
        (void) closedir(d);
}

static void remove_tmpdir(const char *path) {
        int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd >= 0)
                remove_children(fd, 0);
        (void) rmdir(path);
}

/* Where the supervisor lets metadata change (supervisor-meta.c): what the command may write. */
static int writable_set(const plan *p, landlock_run *lr) {
        int r = 0;
        for (size_t i = 0; r >= 0 && i < p->writable_roots.n; i++)
                r = strv_push(&lr->writable, p->writable_roots.v[i]);
        return r >= 0 && lr->tmpdir ? strv_push(&lr->writable, lr->tmpdir) : r;
}

/* ---- entry points --------------------------------------------------------------------------- */

int landlock_run_prepare(plan *p, landlock_run *lr, cordon_error *err) {
        *lr = (landlock_run) LANDLOCK_RUN_INIT;
        int r = landlock_backend_available(err);
        if (r >= 0)
                r = check_enforceable(p, err);
        if (r >= 0)
                r = make_tmpdir(p, lr, err);
        proxy_loopback lb = { 0 };
        if (r >= 0)
                r = proxy_spawn_loopback(p, &lr->proxy, &lb, err);
        if (r >= 0 && (r = proxy_loopback_env(p, &lb)) < 0)
                r = cordon_set_error(err, CORDON_LAUNCH_FAILED, -r, "out of memory");
        lr->abi = landlock_abi();
        landlock_plan_options o = { .abi = lr->abi, .tmpdir = lr->tmpdir,
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
        if (lr->tmpdir)
                remove_tmpdir(lr->tmpdir);
        free(lr->tmpdir);
        landlock_plan_free(lr->lp);
        strv_done(&lr->writable);
        *lr = (landlock_run) LANDLOCK_RUN_INIT;
}
