/* SPDX-License-Identifier: Apache-2.0 */
/* Read narrowing (docs/policy.md, "Read narrowing"): under blockReadsOutsideWorkdirs the users'
 * file directories become unreadable but for the paths the run needs. It stops a command, or a
 * prompt-injected agent, from reading what the user keeps in their home (documents, other
 * projects, browser profiles, the history of other tools) and what other users keep in theirs;
 * the secret set only names the well-known credential files.
 *
 * The narrowed directories are /home, /root, /Users, /var/home, /run/user (the users' runtime
 * sockets), the caller's $HOME and the home of every human account (root, uid >= 1000), as they
 * resolve, unless at or beneath a path the run may read anyway. System directories (/usr, /etc,
 * /opt, ...) stay readable, so tools still run. The exceptions, readable inside a narrowed
 * directory: the writable roots (the workspace, runnerStateDirs, a worktree's shared .git, the
 * tool caches), the read-only binds, and allowRead.
 *
 * Native backend: each narrowed directory is covered (MOUNT_OP_HIDE); the exceptions are mounted
 * on top, and the cover holds only their mountpoints (linux/mount.c). Landlock backend: the
 * directories get no read rule and the exceptions are granted one by one
 * (landlock-plan.c). */
#include <fnmatch.h>
#include <limits.h>
#include <pthread.h>
#include <pwd.h>
#include <stdio.h>

#include "plan/plan-internal.h"
#include "util/fork-gate.h"

const char plan_why_narrowed[] = "outside the workdirs";
const char plan_why_allow_read[] = "allowRead";

static const char *const fixed_dirs[] = {
        "/home", "/root", "/Users", "/var/home", "/run/user", NULL,
};

/* A home directory that is a system directory (a service account's "/", "/usr/sbin",
 * "/nonexistent"): hiding it would break every tool, and it holds no user's files. */
static bool is_system_dir(const char *resolved) {
        static const char *const system[] = {
                "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt",
                "/proc", "/sys", "/dev", "/tmp", "/boot", "/var/empty", "/var/run", NULL,
        };
        if (strcmp(resolved, "/") == 0)
                return true;
        for (size_t i = 0; system[i]; i++)
                if (path_startswith(resolved, system[i]))
                        return true;
        return false;
}

/* Whether `path` is at or beneath a path the run reads anyway: a writable root or a read-only
 * bind (resolved forms). */
static bool beneath_root(const plan_builder *b, const char *path) {
        const plan_root *lists[] = { b->roots, b->ro_binds };
        size_t counts[] = { b->n_roots, b->n_ro_binds };
        for (size_t l = 0; l < ELEMENTSOF(lists); l++)
                for (size_t i = 0; i < counts[l]; i++)
                        if (path_startswith(path, lists[l][i].resolved))
                                return true;
        return false;
}

/* ... or an allowRead entry: a directory inside one is not narrowed (the entry is then read
 * whole, the secrets in it hidden as always). */
static bool beneath_exception(const plan_builder *b, const char *path) {
        if (beneath_root(b, path))
                return true;
        for (size_t i = 0; i < b->policy->allow_read.n; i++) {
                char resolved[PATH_MAX];
                if (realpath(b->policy->allow_read.v[i], resolved) &&
                    path_startswith(path, resolved))
                        return true;
        }
        return false;
}

static int add_candidate(plan_builder *b, strv *dirs, const char *path) {
        char resolved[PATH_MAX];
        bool is_dir = false;
        if (!path || !path_is_absolute(path) || !realpath(path, resolved))
                return 0; /* missing: nothing to read there */
        if (!path_exists(resolved, &is_dir) || !is_dir || is_system_dir(resolved) ||
            beneath_exception(b, resolved))
                return 0;
        return strv_push_unique(dirs, resolved);
}

/* The homes of root and of human accounts (uid >= 1000, not nobody), from the password
 * database. getpwent() keeps one position for the whole process: two threads planning at once
 * would each see part of the database, so one walks it at a time (the lock); and inside the
 * fork gate, so that no child is forked holding NSS's locks. The gate comes first: a thread
 * waiting for it must not hold the lock another entered thread waits for. */
static int add_account_homes(plan_builder *b, strv *dirs) {
        static pthread_mutex_t pwent_lock = PTHREAD_MUTEX_INITIALIZER;
        int r = 0;
        fork_gate_enter();
        pthread_mutex_lock(&pwent_lock);
        setpwent();
        for (struct passwd *pw; r >= 0 && (pw = getpwent());)
                if (pw->pw_uid == 0 || (pw->pw_uid >= 1000 && pw->pw_uid != 65534))
                        r = add_candidate(b, dirs, pw->pw_dir);
        endpwent();
        pthread_mutex_unlock(&pwent_lock);
        fork_gate_leave();
        return r;
}

/* Keeps the outermost of nested directories: the cover of /home already hides /home/me. */
static int outermost(const strv *all, strv *out) {
        int r = 0;
        for (size_t i = 0; r >= 0 && i < all->n; i++) {
                bool nested = false;
                for (size_t j = 0; j < all->n && !nested; j++)
                        nested = j != i && path_startswith(all->v[i], all->v[j]) &&
                                 strcmp(all->v[i], all->v[j]) != 0;
                if (!nested)
                        r = strv_push_unique(out, all->v[i]);
        }
        return r;
}

static bool matches_secret(const strv *secrets, const char *path, const char **rule) {
        for (size_t i = 0; i < secrets->n; i++)
                if (path_is_glob(secrets->v[i])
                            ? fnmatch(secrets->v[i], path, FNM_PATHNAME | FNM_LEADING_DIR) == 0
                            : path_startswith(path, secrets->v[i])) {
                        *rule = secrets->v[i];
                        return true;
                }
        return false;
}

static bool beneath_any(const strv *dirs, const char *path) {
        for (size_t i = 0; i < dirs->n; i++)
                if (path_startswith(path, dirs->v[i]))
                        return true;
        return false;
}

/* An allowRead entry inside a narrowed directory becomes a read-only bind on top of the cover.
 * One inside a secret is refused (the bind would expose what the secret's cover hides); one
 * beneath a writable root or bind is readable already (and a read-only bind there would take
 * the write access away); a missing one has nothing to show. */
static int add_exception(plan_builder *b, const char *entry) {
        char resolved[PATH_MAX];
        const char *rule = NULL;
        bool is_dir = false;
        if (matches_secret(&b->secrets, entry, &rule) ||
            (realpath(entry, resolved) && matches_secret(&b->secrets, resolved, &rule)))
                return cordon_set_error(b->err, CORDON_POLICY_INVALID, EINVAL,
                                        "allowRead '%s' is inside the secret '%s'; a secret "
                                        "stays unreadable: list a path outside it", entry, rule);
        if (!realpath(entry, resolved) || !path_exists(resolved, &is_dir) ||
            beneath_root(b, resolved) || !beneath_any(&b->p->paths.narrowed, resolved))
                return 0;
        int r = strv_push_unique(&b->p->paths.read_exceptions, resolved);
        return r < 0 ? r : plan_add_mount(b->p, MOUNT_OP_BIND_RO, resolved, is_dir,
                                          plan_why_allow_read);
}

int plan_read_narrowing(plan_builder *b) {
        if (!policy_reads_blocked(b->policy))
                return 0;
        strv all = { 0 };
        int r = 0;
        for (size_t i = 0; r >= 0 && fixed_dirs[i]; i++)
                r = add_candidate(b, &all, fixed_dirs[i]);
        if (r >= 0)
                r = add_candidate(b, &all, b->home);
        if (r >= 0)
                r = add_account_homes(b, &all);
        if (r >= 0)
                r = outermost(&all, &b->p->paths.narrowed);
        strv_done(&all);
        for (size_t i = 0; r >= 0 && i < b->p->paths.narrowed.n; i++)
                r = plan_add_mount(b->p, MOUNT_OP_HIDE, b->p->paths.narrowed.v[i], true,
                                   plan_why_narrowed);
        for (size_t i = 0; r >= 0 && i < b->policy->allow_read.n; i++)
                r = add_exception(b, b->policy->allow_read.v[i]);
        return r;
}
