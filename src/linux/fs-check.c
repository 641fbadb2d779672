/* SPDX-License-Identifier: Apache-2.0 */
/* What the plan allows the policy-checked file operations to do with one path, and the small
 * syscall wrappers they use (fs-internal.h). The decisions read only the plan that plan_build()
 * made for the backend: the deepest mount over a path says what the sandbox shows there (a
 * writable root, the read-only host, a protected read-only bind, a hidden secret, a private
 * tmpfs), the name rules say what may come into existence, paths.secrets what may never be
 * read. */
#include "linux/fs-internal.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdarg.h>
#include <stdio.h>
#include <strings.h>
#include <sys/syscall.h>

#include "plan/name-rules.h"
#include "util/uapi.h"

/* ---- errors --------------------------------------------------------------------------------- */

_printf_(4, 0) static int set_verror(fs_ctx *c, cordon_code code, int errnum, const char *fmt,
                                    va_list ap) {
        c->err.code = code;
        c->err.sys_errno = errnum;
        (void) vsnprintf(c->err.message, sizeof(c->err.message), fmt, ap);
        return -errnum;
}

int fs_fail(fs_ctx *c, int errnum, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        int r = set_verror(c, CORDON_EXEC_FAILED, errnum > 0 ? errnum : EIO, fmt, ap);
        va_end(ap);
        return r;
}

int fs_usage(fs_ctx *c, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        int r = set_verror(c, CORDON_USAGE, EINVAL, fmt, ap);
        va_end(ap);
        return r;
}

int fs_refuse(fs_ctx *c, const char *action, const char *target, const char *rule,
              const char *fmt, ...) {
        c->refusal.action = action;
        (void) snprintf(c->refusal.target, sizeof(c->refusal.target), "%s", target);
        (void) snprintf(c->refusal.rule, sizeof(c->refusal.rule), "%s", rule);
        va_list ap;
        va_start(ap, fmt);
        int r = set_verror(c, CORDON_POLICY_UNENFORCEABLE, EACCES, fmt, ap);
        va_end(ap);
        return r;
}

/* ---- paths ---------------------------------------------------------------------------------- */

int fs_normalize(fs_ctx *c, const char *path, char **ret) {
        const char *why = policy_check_path(path);
        if (why)
                return fs_usage(c, "path '%.200s' %s", path ? path : "", why);
        int r = path_normalize(path, ret);
        return r < 0 ? fs_usage(c, "path '%.200s' cannot be normalised", path) : 0;
}

int fs_split(fs_ctx *c, const char *path, char dir[static PATH_MAX],
             char name[static NAME_MAX + 1]) {
        const char *slash = strrchr(path, '/');
        if (!slash || !slash[1])
                return fs_fail(c, EISDIR, "'%s' is a directory", path);
        size_t dn = slash == path ? 1 : (size_t) (slash - path);
        if (dn >= PATH_MAX || strlen(slash + 1) > NAME_MAX)
                return fs_fail(c, ENAMETOOLONG, "'%.200s': name too long", path);
        memcpy(dir, path, dn);
        dir[dn] = '\0';
        strcpy(name, slash + 1);
        return 0;
}

static bool is_glob(const char *rule) {
        return strpbrk(rule, "*?") != NULL;
}

/* `path` is `rule` or beneath it. A glob rule (docs/policy.md) matches the path or one of its
 * leading directories, wildcards never crossing '/', as the plan reads it. */
static bool rule_covers(const char *rule, const char *path) {
        if (!is_glob(rule))
                return path_startswith(path, rule);
        char buf[PATH_MAX];
        size_t n = strlen(path);
        if (n >= sizeof(buf))
                return true; /* cannot be checked: counts as covered */
        memcpy(buf, path, n + 1);
        for (size_t i = n; i > 0; i--)
                if (i == n || buf[i] == '/') {
                        buf[i] = '\0';
                        if (name_glob_match(rule, buf, true))
                                return true;
                }
        return false;
}

/* The op that decides what the sandbox shows at `path`: the deepest one over it, and of two at
 * the same path the later (mounted on top). NULL when the plan has none (danger-full-access). */
static const mount_op *covering_mount(const plan *p, const char *path) {
        const mount_op *best = NULL;
        for (size_t i = 0; i < p->n_mounts; i++)
                if (path_startswith(path, p->mounts[i].path) &&
                    (!best || strlen(p->mounts[i].path) >= strlen(best->path)))
                        best = &p->mounts[i];
        return best;
}

bool fs_is_secret(const plan *p, const char *path) {
        const mount_op *m = covering_mount(p, path);
        if (m && m->kind == MOUNT_OP_HIDE)
                return true;
        for (size_t i = 0; i < p->paths.secrets.n; i++)
                if (rule_covers(p->paths.secrets.v[i], path))
                        return true;
        return false;
}

/* The calling process's /proc, /dev and /sys are not the sandbox's: /proc/self/environ would be
 * the caller's environment (unscrubbed; cordond's, for its fs.* methods), /dev/tty its terminal.
 * Reads stop at /proc and /dev, writes at all three, in every mode: these operations handle
 * files, not kernel interfaces. */
static const char *kernel_prefix(const char *path, bool write) {
        static const char *const prefixes[] = { "/proc", "/dev", "/sys" };
        for (size_t i = 0; i < ELEMENTSOF(prefixes) - !write; i++)
                if (path_startswith(path, prefixes[i]))
                        return prefixes[i];
        return NULL;
}

/* What the sandbox shows at `path` when it is not a writable root: the refusal. */
static int refuse_mount(fs_ctx *c, const mount_op *m, const char *path, const char *action) {
        switch (m->kind) {
        case MOUNT_OP_ROOT_RO:
                return fs_refuse(c, action, path, "outside the writable roots",
                                 "'%s' is outside the session's writable roots", path);
        case MOUNT_OP_BIND_RO:
                return fs_refuse(c, action, path, m->path,
                                 "'%s' is beneath '%s' (%s), which the sandbox keeps read-only",
                                 path, m->path, m->why ? m->why : "read-only");
        case MOUNT_OP_HIDE:
                /* A secret's cover, or a read narrowing's (plan/plan-reads.c). */
                if (m->why && strcmp(m->why, "secret") != 0)
                        return fs_refuse(c, action, path, m->path,
                                         "'%s' is hidden: '%s' is %s (blockReadsOutsideWorkdirs)",
                                         path, m->path, m->why);
                return fs_refuse(c, action, path, m->path, "'%s' is in the secret set ('%s')",
                                 path, m->path);
        case MOUNT_OP_TMPFS:
        case MOUNT_OP_DEV:
        case MOUNT_OP_PROC:
                return fs_refuse(c, action, path, m->path,
                                 "'%s' is in the sandbox's private %s, which file operations "
                                 "do not reach", path, m->path);
        case MOUNT_OP_BIND_RW:
        case _MOUNT_OP_MAX:
        default:
                return fs_refuse(c, action, path, "unknown mount",
                                 "'%s': unknown mount in the plan", path);
        }
}

int fs_check_read(fs_ctx *c, const char *path) {
        const char *k = kernel_prefix(path, false);
        if (k)
                return fs_refuse(c, "file-read*", path, k,
                                 "'%s' is under %s, a kernel interface of the caller, not the "
                                 "sandbox's", path, k);
        const mount_op *m = covering_mount(c->plan, path);
        if (m && m->kind != MOUNT_OP_ROOT_RO && m->kind != MOUNT_OP_BIND_RW &&
            m->kind != MOUNT_OP_BIND_RO)
                return refuse_mount(c, m, path, "file-read*");
        for (size_t i = 0; i < c->plan->paths.secrets.n; i++) {
                const char *rule = c->plan->paths.secrets.v[i];
                if (rule_covers(rule, path))
                        return fs_refuse(c, "file-read*", path, rule,
                                         "'%s' is in the secret set ('%s')", path, rule);
        }
        return 0;
}

static bool ascii_name(const char *path) {
        const char *name = strrchr(path, '/');
        for (const char *s = name ? name : path; *s; s++)
                if ((unsigned char) *s >= 0x80)
                        return false;
        return true;
}

/* A directory holding HEAD, objects, refs or commondir is one git may read config from
 * (docs/design/git-repos.md). */
static bool git_shaped(const char *dir) {
        static const char *const markers[] = { "HEAD", "objects", "refs", "commondir" };
        _cleanup_close_ int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        struct stat st;
        for (size_t i = 0; fd >= 0 && i < ELEMENTSOF(markers); i++)
                if (fstatat(fd, markers[i], &st, AT_SYMLINK_NOFOLLOW) == 0)
                        return true;
        return fd < 0 && errno != ENOENT; /* unknown: treated as a repository (fail closed) */
}

/* The supervisor vets what a repository created in the sandbox may hold; writes and edits here
 * do not parse git config, so they write neither a repository's config nor a file in its hooks
 * directory (host git would obey what they wrote). */
static int refuse_repo_file(fs_ctx *c, const char *path) {
        char dir[PATH_MAX];
        const char *slash = strrchr(path, '/');
        size_t dl = slash ? (size_t) (slash - path) : 0;
        if (!slash || dl == 0 || dl >= sizeof(dir) || !name_rules_persistent(&c->plan->names, path))
                return 0;
        memcpy(dir, path, dl);
        dir[dl] = '\0';
        const char *name = slash + 1, *parent = strrchr(dir, '/');
        bool config = name_could_be("config", name, 0) || name_could_be("config.worktree", name, 0);
        if (config && git_shaped(dir))
                return fs_refuse(c, "file-write*", path, "git: a repository's config",
                                 "'%s' is a git repository's config: file operations do not "
                                 "write it (use git config inside the sandbox)", path);
        if (parent && parent > dir && name_could_be("hooks", parent + 1, 0)) {
                dir[parent - dir] = '\0';
                if (git_shaped(dir))
                        return fs_refuse(c, "file-write*", path, "git: a hooks directory",
                                         "'%s' is in a git repository's hooks directory: file "
                                         "operations do not write there", path);
        }
        return 0;
}

int fs_check_write(fs_ctx *c, const char *path, bool resolved, const char **ret_root) {
        const char *k = kernel_prefix(path, true);
        if (k)
                return fs_refuse(c, "file-write*", path, k,
                                 "'%s' is under %s: file operations do not write kernel "
                                 "interfaces", path, k);
        const mount_op *m = resolved ? covering_mount(c->plan, path) : NULL;
        if (m && m->kind != MOUNT_OP_BIND_RW)
                return refuse_mount(c, m, path, "file-write*");
        /* The file replaces (is renamed onto) the name: the rename rules apply, which also refuse
         * an ancestor of a protected path (a file named .git would point git elsewhere) and any
         * path through a .cordon directory (project settings a later run would read). A
         * non-ASCII name may fold to a denied one on a casefolding directory: matched widely. */
        const char *rule = NULL;
        name_verdict v = name_rules_check(&c->plan->names, NAME_CHECK_RENAME_TARGET, path,
                                          ascii_name(path) ? NAME_CHECK_EXACT_BYTES : 0, &rule);
        if (v == NAME_DENIED_NAME)
                return fs_refuse(c, "file-create-name", path, rule,
                                 "'%s': the name matches '%s', which may not be created "
                                 "(denyCreateNames)", path, rule);
        if (v != NAME_ALLOWED)
                return fs_refuse(c, "file-write*", path, rule ? rule : "protected",
                                 "'%s' is a protected path or an ancestor of one ('%s')", path,
                                 rule ? rule : "?");
        int r = refuse_repo_file(c, path);
        if (r < 0)
                return r;
        if (ret_root)
                *ret_root = m ? m->path : "/";
        return 0;
}

/* ---- hard links into the secret set --------------------------------------------------------- */

/* Looks for inode (dev, ino) in the tree at `fd` (a directory, consumed), `depth` levels down,
 * visiting at most *budget entries. 1: found, 0: not, -E2BIG: the budget ran out. */
static int tree_has_inode(int fd, dev_t dev, ino_t ino, unsigned depth, unsigned *budget) {
        DIR *d = fdopendir(fd);
        if (!d) {
                (void) close(fd);
                return 0; /* unreadable: nothing in it can have been linked by us either */
        }
        int r = 0;
        struct dirent *e;
        while (r == 0 && (e = readdir(d))) {
                if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                        continue;
                if ((*budget)-- == 0) {
                        r = -E2BIG;
                        break;
                }
                struct stat st;
                if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        continue;
                if (st.st_dev == dev && st.st_ino == ino)
                        r = 1;
                else if (S_ISDIR(st.st_mode) && depth > 0) {
                        int sub = openat(dirfd(d), e->d_name,
                                         O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                        if (sub >= 0)
                                r = tree_has_inode(sub, dev, ino, depth - 1, budget);
                }
        }
        (void) closedir(d);
        return r;
}

int fs_check_secret_inode(fs_ctx *c, const struct stat *st, const char *path) {
        if (!S_ISREG(st->st_mode) || st->st_nlink <= 1)
                return 0;
        unsigned budget = 4096;
        const strv *secrets = &c->plan->paths.secrets;
        for (size_t i = 0; i < secrets->n; i++) {
                const char *s = secrets->v[i];
                struct stat ss;
                if (is_glob(s) || lstat(s, &ss) < 0)
                        continue;
                int r = ss.st_dev == st->st_dev && ss.st_ino == st->st_ino;
                if (!r && S_ISDIR(ss.st_mode)) {
                        int fd = open(s, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                        r = fd < 0 ? 0 : tree_has_inode(fd, st->st_dev, st->st_ino, 3, &budget);
                }
                if (r == -E2BIG)
                        return fs_refuse(c, "file-read*", path, s,
                                         "'%s' has %ju links and the secret set ('%s') is too "
                                         "large to rule out that one of them is a secret", path,
                                         (uintmax_t) st->st_nlink, s);
                if (r > 0)
                        return fs_refuse(c, "file-read*", path, s,
                                         "'%s' is a hard link to a file in the secret set ('%s')",
                                         path, s);
        }
        return 0;
}

/* ---- syscall wrappers ----------------------------------------------------------------------- */

int fs_openat2(int dirfd, const char *path, int flags, uint64_t resolve) {
        struct open_how how = { .flags = (uint64_t) (flags | O_CLOEXEC), .resolve = resolve };
        for (unsigned tries = 0;; tries++) {
                long fd = syscall(__NR_openat2, dirfd, path, &how, sizeof(how));
                if (fd >= 0)
                        return (int) fd;
                /* EAGAIN: a concurrent rename raced the walk's ".." checks; EINTR: a signal. */
                if ((errno != EAGAIN && errno != EINTR) || tries >= 16)
                        return -errno;
        }
}

int fs_fd_path(int fd, char buf[static PATH_MAX]) {
        char link[64];
        (void) snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        ssize_t n = readlink(link, buf, PATH_MAX);
        if (n < 0)
                return -errno;
        if (n >= PATH_MAX)
                return -ENAMETOOLONG;
        buf[n] = '\0';
        /* "/x (deleted)", or a name outside our root: nothing to check a rule against. */
        struct stat st;
        if (buf[0] != '/' || fstat(fd, &st) < 0 || st.st_nlink == 0)
                return -ENOENT;
        return 0;
}

int fs_reopen(int pathfd, int flags) {
        char link[64];
        (void) snprintf(link, sizeof(link), "/proc/self/fd/%d", pathfd);
        int fd;
        do
                fd = open(link, flags | O_NOCTTY | O_CLOEXEC);
        while (fd < 0 && errno == EINTR);
        return fd < 0 ? -errno : fd;
}

int fs_mount_id(int fd, uint64_t *ret) {
        struct statx sx;
        if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &sx) < 0)
                return -errno;
        if (!(sx.stx_mask & STATX_MNT_ID))
                return -EOPNOTSUPP;
        *ret = sx.stx_mnt_id;
        return 0;
}
