/* SPDX-License-Identifier: Apache-2.0 */
/* The landlock backend's metadata rule (issue 11, docs/design/landlock-backend.md).
 *
 * Landlock has no right for metadata: chmod, chown, utimes and extended attributes pass it
 * everywhere, and this backend has no read-only mount behind it. Without this file
 * `chmod 0644 ~/.ssh/id_rsa` hands the key to every local user, `chmod +x .git/hooks/pre-commit`
 * arms a hook, and root's command (capabilities dropped, still the owner) could chmod any
 * root-owned file of the host. So every such call is notified (the seccomp table's
 * SECCOMP_PLAN_LANDLOCK_ON metadata rules) and served here:
 *
 *   1. The object is pinned as the kernel would find it: the caller's fd duplicated with
 *      pidfd_getfd (the same open file: fd forms, AT_EMPTY_PATH), or the path resolved as the
 *      creation rules resolve it (supervisor-resolve.c) with every symlink expanded as text,
 *      then the final component opened O_PATH|O_NOFOLLOW.
 *   2. The decision is made on the pinned inode's own name (d_path through /proc/self/fd):
 *      beneath a writable root and not protected (meta-rules.c). An unlinked file with no name
 *      left, a pipe or a socket has no name on any file system and may change.
 *   3. The call is performed on the pin. A rename or a symlink swap after the check redirects
 *      nothing: what was checked is what changes.
 * setxattrat's struct xattr_args is copied once like every other argument. */
#include "linux/supervisor-internal.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/xattr.h>
#include <utime.h>

#include "plan/meta-rules.h"

#define XATTR_VALUE_MAX 65536 /* XATTR_SIZE_MAX: the kernel answers E2BIG beyond */
#define NR_FCHMODAT2 452      /* 6.6; asm-generic, identical on every architecture */
#define NR_SETXATTRAT 463     /* 6.13 */
#define NR_REMOVEXATTRAT 466  /* 6.13 */

typedef enum meta_op { META_CHMOD, META_CHOWN, META_TIMES, META_SETXATTR, META_RMXATTR } meta_op;

typedef struct meta_call {
        meta_op op;
        int dirfd;            /* the caller's dirfd, or its fd for the fd forms */
        uint64_t path;        /* 0: an fd form (no path argument) */
        bool follow;          /* a final symlink is followed (chmod, chown, setxattr, ...) */
        bool empty_path;      /* AT_EMPTY_PATH: "" names dirfd */
        mode_t mode;
        uid_t uid;
        gid_t gid;
        uint64_t times;       /* address of the times argument, 0: now */
        int times_kind;       /* 0: struct timespec[2], 1: struct timeval[2], 2: struct utimbuf */
        uint64_t xname, xvalue;
        size_t xsize;
        int xflags;
        uint64_t xargs;       /* setxattrat: the address of its struct xattr_args, else 0 */
} meta_call;

typedef struct meta_args {
        struct timespec ts[2];
        bool ts_set;
        char *xvalue;
        size_t xsize;
        int xflags;
} meta_args;

/* <linux/xattr.h> (6.13): setxattrat's arguments. */
struct xattr_args_v0 {
        uint64_t value;
        uint32_t size;
        uint32_t flags;
};

static int errno_or(int r) {
        return r < 0 ? -errno : r;
}

static int fd_or_errno(int fd) {
        return fd < 0 ? -errno : fd;
}

static int arg_int(const request *r, unsigned i) {
        return (int) r->n->data.args[i];
}

static uint64_t arg(const request *r, unsigned i) {
        return r->n->data.args[i];
}

/* ---- copying the memory arguments ----------------------------------------------------------- */

static int copy_times(request *r, const meta_call *c, meta_args *a) {
        if (c->times == 0)
                return 0;
        a->ts_set = true;
        if (c->times_kind == 0)
                return target_copy_mem(r, c->times, a->ts, sizeof(a->ts));
        if (c->times_kind == 2) {
                struct utimbuf u;
                int e = target_copy_mem(r, c->times, &u, sizeof(u));
                a->ts[0] = (struct timespec) { .tv_sec = u.actime };
                a->ts[1] = (struct timespec) { .tv_sec = u.modtime };
                return e;
        }
        struct timeval tv[2];
        int e = target_copy_mem(r, c->times, tv, sizeof(tv));
        for (unsigned i = 0; e == 0 && i < 2; i++) {
                if (tv[i].tv_usec < 0 || tv[i].tv_usec >= 1000000)
                        return -EINVAL; /* what utimes(2) answers */
                a->ts[i] = (struct timespec) { .tv_sec = tv[i].tv_sec,
                                               .tv_nsec = tv[i].tv_usec * 1000 };
        }
        return e;
}

/* The xattr name into r->path[1] (XATTR_NAME_MAX 255: ERANGE beyond), the value into a->xvalue. */
static int copy_xattr(request *r, const meta_call *c, meta_args *a) {
        if (c->op != META_SETXATTR && c->op != META_RMXATTR)
                return 0;
        int e = target_copy_string(r, c->xname, r->path[1], 256);
        if (e < 0)
                return e == -ENAMETOOLONG ? -ERANGE : e;
        uint64_t value = c->xvalue;
        a->xsize = c->xsize;
        a->xflags = c->xflags;
        if (c->xargs) { /* copied once, like every other argument */
                struct xattr_args_v0 x;
                if ((e = target_copy_mem(r, c->xargs, &x, sizeof(x))) < 0)
                        return e;
                value = x.value;
                a->xsize = x.size;
                a->xflags = (int) x.flags;
        }
        if (c->op == META_RMXATTR || a->xsize == 0)
                return 0;
        if (a->xsize > XATTR_VALUE_MAX)
                return -E2BIG;
        a->xvalue = malloc(a->xsize);
        if (!a->xvalue)
                return -ENOMEM;
        /* In page-sized steps: target_copy_mem() reads at most PATH_MAX bytes at a time. */
        for (size_t off = 0; off < a->xsize; off += 4096) {
                size_t n = a->xsize - off < 4096 ? a->xsize - off : 4096;
                if ((e = target_copy_mem(r, value + off, a->xvalue + off, n)) < 0)
                        return e;
        }
        return 0;
}

/* ---- pinning the object ----------------------------------------------------------------------- */

/* The final component of a resolved path, never followed by the kernel here: a symlink is
 * expanded as text by the caller's loop (its target might name the supervisor's own /proc/self).
 * Magic links of the caller's own /proc/<pid> are followed: they lead to the caller's objects. */
static int pin_final(request *r, resolved *res, const meta_call *c, char link[static PATH_MAX],
                     bool *ret_follow) {
        bool magic = res->in_target_proc && c->follow;
        int pin = openat(res->dir_fd, res->name, O_PATH | O_CLOEXEC | (magic ? 0 : O_NOFOLLOW));
        if (pin < 0)
                return -errno;
        struct stat st;
        if (fstat(pin, &st) < 0) {
                int e = -errno;
                (void) close(pin);
                return e;
        }
        if (S_ISLNK(st.st_mode) && (c->follow || res->trailing_slash)) {
                ssize_t n = readlinkat(pin, "", link, PATH_MAX);
                int e = errno;
                (void) close(pin);
                if (n < 0)
                        return -e;
                if (n >= PATH_MAX)
                        return -ENAMETOOLONG;
                link[n] = '\0';
                *ret_follow = true;
                return 0;
        }
        if (res->trailing_slash && !S_ISDIR(st.st_mode)) {
                (void) close(pin);
                return -ENOTDIR;
        }
        return pin;
}

static int pin_path(request *r, int dirfd, const char *path, const meta_call *c) {
        char cur[PATH_MAX], link[PATH_MAX];
        _cleanup_close_ int link_dir = -1; /* where a relative symlink text starts */
        strcpy(cur, path); /* both PATH_MAX: the copy was NUL-terminated within PATH_MAX */
        for (unsigned links = 0; links < SUPERVISOR_MAX_LINKS; links++) {
                resolved res = RESOLVED_INIT;
                int e = link_dir >= 0 ? resolve_parent_at(r, link_dir, cur, &res)
                                      : resolve_parent(r, dirfd, cur, &res);
                bool follow = false;
                if (e == 0)
                        e = pin_final(r, &res, c, link, &follow);
                if (!follow) {
                        resolved_done(&res);
                        return e;
                }
                safe_close(link_dir);
                link_dir = TAKE_FD(res.dir_fd);
                memcpy(cur, link, sizeof(cur));
        }
        return -ELOOP;
}

/* Copies the arguments, validates the notification and returns the pinned object (an fd of
 * the supervisor's), or -errno. The caller's fd is duplicated before NOTIF_ID_VALID, as
 * target_dup_fd() requires. */
static int pin_object(request *r, const meta_call *c, meta_args *a, bool *ret_fd_form) {
        bool by_fd = c->path == 0;
        int e = 0;
        if (!by_fd) {
                e = target_copy_string(r, c->path, r->path[0], PATH_MAX);
                if (e == 0 && r->path[0][0] == '\0') {
                        if (!c->empty_path)
                                return -ENOENT;
                        by_fd = c->dirfd != AT_FDCWD;
                }
        }
        if (e == 0 && by_fd)
                e = c->dirfd < 0 ? -EBADF : target_dup_fd(r, c->dirfd);
        if (e == 0)
                e = copy_times(r, c, a);
        if (e == 0)
                e = copy_xattr(r, c, a);
        if (e == 0)
                e = target_validate(r);
        if (e < 0)
                return e;
        *ret_fd_form = c->path == 0;
        if (by_fd)
                return TAKE_FD(r->sock_fd);
        if (r->path[0][0] == '\0') /* AT_FDCWD with AT_EMPTY_PATH: the caller's cwd */
                return fd_or_errno(openat(r->tid_fd, "cwd", O_PATH | O_CLOEXEC));
        return pin_path(r, c->dirfd, r->path[0], c);
}

/* ---- the decision ----------------------------------------------------------------------------- */

static const char rule_deleted[] =
        "metadata of an unlinked name whose file still has other names (they may lie outside the "
        "writable roots)";

static int meta_decide(request *r, int pin) {
        struct stat st;
        char self[32], path[PATH_MAX];
        if (fstat(pin, &st) < 0)
                return -errno;
        (void) snprintf(self, sizeof(self), "self/fd/%d", pin);
        ssize_t n = readlinkat(r->s->proc_fd, self, path, sizeof(path) - 1);
        if (n < 0)
                return -errno;
        if ((size_t) n >= sizeof(path) - 1)
                return -ENAMETOOLONG; /* possibly cut short: never decide on a prefix */
        path[n] = '\0';
        if (path[0] != '/') {
                /* pipe:[..], socket:[..], anon_inode:..: no name on any file system. Anything
                 * else without an absolute name ("(unreachable)/..." of another root or a
                 * detached mount) cannot be vetted. */
                mode_t type = st.st_mode & S_IFMT;
                if (type == S_IFIFO || type == S_IFSOCK || type == 0)
                        return 0;
                return request_refuse_as(r, "file-metadata", path, meta_rule_outside);
        }
        static const char deleted[] = " (deleted)";
        size_t dl = sizeof(deleted) - 1;
        if ((size_t) n > dl && streq(path + n - dl, deleted)) {
                if (st.st_nlink == 0)
                        return 0; /* no name left anywhere (memfd, O_TMPFILE, unlinked) */
                return request_refuse_as(r, "file-metadata", path, rule_deleted);
        }
        static const strv none = { 0 };
        const strv *roots = r->s->landlock->writable ? r->s->landlock->writable : &none;
        const char *rule = NULL;
        if (meta_rules_check(r->s->rules, roots, path, &rule) == META_ALLOWED)
                return 0;
        return request_refuse_as(r, "file-metadata", path, rule);
}

/* ---- performing the call on the pin ------------------------------------------------------------ */

static int meta_perform(request *r, int pin, bool fd_form, const meta_call *c, meta_args *a) {
        char proc[32];
        struct stat st;
        if (fstat(pin, &st) < 0)
                return -errno;
        /* A path through our own /proc/self/fd leads to the pinned inode itself. */
        (void) snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pin);
        bool link = S_ISLNK(st.st_mode);
        switch (c->op) {
        case META_CHMOD:
                if (fd_form)
                        return errno_or(fchmod(pin, c->mode));
                if (link)
                        return -EOPNOTSUPP; /* fchmodat2(AT_SYMLINK_NOFOLLOW) on a symlink */
                return errno_or(fchmodat(AT_FDCWD, proc, c->mode, 0));
        case META_CHOWN:
                if (fd_form)
                        return errno_or(fchown(pin, c->uid, c->gid));
                return errno_or(fchownat(pin, "", c->uid, c->gid, AT_EMPTY_PATH));
        case META_TIMES:
                if (fd_form)
                        return errno_or(futimens(pin, a->ts_set ? a->ts : NULL));
                return errno_or(utimensat(pin, "", a->ts_set ? a->ts : NULL, AT_EMPTY_PATH));
        case META_SETXATTR:
                if (fd_form)
                        return errno_or(fsetxattr(pin, r->path[1], a->xvalue, a->xsize, a->xflags));
                if (link)
                        return -EPERM; /* user.* on a symlink; other namespaces need capabilities */
                return errno_or(setxattr(proc, r->path[1], a->xvalue, a->xsize, a->xflags));
        case META_RMXATTR:
                if (fd_form)
                        return errno_or(fremovexattr(pin, r->path[1]));
                if (link)
                        return -EPERM;
                return errno_or(removexattr(proc, r->path[1]));
        default:
                return -ENOSYS;
        }
}

static int meta_serve(request *r, const meta_call *c) {
        if (!r->s->landlock)
                return -ENOSYS; /* notified only by the landlock program */
        meta_args a = { 0 };
        bool fd_form = false;
        int pin = pin_object(r, c, &a, &fd_form);
        int e = pin < 0 ? pin : meta_decide(r, pin);
        if (e == 0)
                e = meta_perform(r, pin, fd_form, c, &a);
        if (pin >= 0)
                (void) close(pin);
        free(a.xvalue);
        return e;
}

/* ---- the syscalls ------------------------------------------------------------------------------ */

static int serve_at(request *r, meta_call c, int flags) {
        if (flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
                return -EINVAL;
        if (c.path == 0)
                return -EFAULT; /* a NULL path of a path form: what the kernel answers */
        c.follow = !(flags & AT_SYMLINK_NOFOLLOW);
        c.empty_path = flags & AT_EMPTY_PATH;
        return meta_serve(r, &c);
}

/* utimensat(2) and futimesat(2) with a NULL path act on dirfd (flags must be 0); with AT_FDCWD
 * the kernel reads the NULL path and answers EFAULT. */
static int serve_times_at(request *r, meta_call c, int flags) {
        if (c.path != 0 || c.dirfd == AT_FDCWD)
                return serve_at(r, c, flags);
        return flags ? -EINVAL : meta_serve(r, &c);
}

static mode_t mode_arg(const request *r, unsigned i) {
        return (mode_t) (uint16_t) arg(r, i) & 07777; /* umode_t */
}

#define CALL(...) ((meta_call) { __VA_ARGS__ })

#ifdef SYS_chmod
static int op_chmod(request *r) {
        return serve_at(r, CALL(.op = META_CHMOD, .dirfd = AT_FDCWD, .path = arg(r, 0),
                                .mode = mode_arg(r, 1)), 0);
}
static int op_chown(request *r) {
        return serve_at(r, CALL(.op = META_CHOWN, .dirfd = AT_FDCWD, .path = arg(r, 0),
                                .uid = (uid_t) arg(r, 1), .gid = (gid_t) arg(r, 2)), 0);
}
static int op_lchown(request *r) {
        return serve_at(r, CALL(.op = META_CHOWN, .dirfd = AT_FDCWD, .path = arg(r, 0),
                                .uid = (uid_t) arg(r, 1), .gid = (gid_t) arg(r, 2)),
                        AT_SYMLINK_NOFOLLOW);
}
static int op_utime(request *r) {
        return serve_at(r, CALL(.op = META_TIMES, .dirfd = AT_FDCWD, .path = arg(r, 0),
                                .times = arg(r, 1), .times_kind = 2), 0);
}
static int op_utimes(request *r) {
        return serve_at(r, CALL(.op = META_TIMES, .dirfd = AT_FDCWD, .path = arg(r, 0),
                                .times = arg(r, 1), .times_kind = 1), 0);
}
static int op_futimesat(request *r) {
        return serve_times_at(r, CALL(.op = META_TIMES, .dirfd = arg_int(r, 0), .path = arg(r, 1),
                                      .times = arg(r, 2), .times_kind = 1), 0);
}
#endif

static int op_fchmod(request *r) {
        return meta_serve(r, &CALL(.op = META_CHMOD, .dirfd = arg_int(r, 0), .mode = mode_arg(r, 1)));
}
static int op_fchmodat(request *r) {
        return serve_at(r, CALL(.op = META_CHMOD, .dirfd = arg_int(r, 0), .path = arg(r, 1),
                                .mode = mode_arg(r, 2)), 0);
}
static int op_fchmodat2(request *r) {
        return serve_at(r, CALL(.op = META_CHMOD, .dirfd = arg_int(r, 0), .path = arg(r, 1),
                                .mode = mode_arg(r, 2)), arg_int(r, 3));
}
static int op_fchown(request *r) {
        return meta_serve(r, &CALL(.op = META_CHOWN, .dirfd = arg_int(r, 0),
                                   .uid = (uid_t) arg(r, 1), .gid = (gid_t) arg(r, 2)));
}
static int op_fchownat(request *r) {
        return serve_at(r, CALL(.op = META_CHOWN, .dirfd = arg_int(r, 0), .path = arg(r, 1),
                                .uid = (uid_t) arg(r, 2), .gid = (gid_t) arg(r, 3)), arg_int(r, 4));
}
static int op_utimensat(request *r) {
        return serve_times_at(r, CALL(.op = META_TIMES, .dirfd = arg_int(r, 0), .path = arg(r, 1),
                                      .times = arg(r, 2)), arg_int(r, 3));
}

static meta_call xattr_call(const request *r, meta_op op, bool by_fd) {
        return CALL(.op = op, .dirfd = by_fd ? arg_int(r, 0) : AT_FDCWD,
                    .path = by_fd ? 0 : arg(r, 0), .xname = arg(r, 1), .xvalue = arg(r, 2),
                    .xsize = (size_t) arg(r, 3), .xflags = arg_int(r, 4));
}
static int op_setxattr(request *r) {
        return serve_at(r, xattr_call(r, META_SETXATTR, false), 0);
}
static int op_lsetxattr(request *r) {
        return serve_at(r, xattr_call(r, META_SETXATTR, false), AT_SYMLINK_NOFOLLOW);
}
static int op_fsetxattr(request *r) {
        meta_call c = xattr_call(r, META_SETXATTR, true);
        return meta_serve(r, &c);
}
static int op_removexattr(request *r) {
        return serve_at(r, xattr_call(r, META_RMXATTR, false), 0);
}
static int op_lremovexattr(request *r) {
        return serve_at(r, xattr_call(r, META_RMXATTR, false), AT_SYMLINK_NOFOLLOW);
}
static int op_fremovexattr(request *r) {
        meta_call c = xattr_call(r, META_RMXATTR, true);
        return meta_serve(r, &c);
}

/* setxattrat/removexattrat (6.13): a NULL path names dirfd itself. */
static int serve_xattrat(request *r, meta_call c, int flags) {
        if (c.path != 0)
                return serve_at(r, c, flags);
        return flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH) ? -EINVAL : meta_serve(r, &c);
}
static int op_setxattrat(request *r) {
        size_t usize = (size_t) arg(r, 5);
        if (usize < sizeof(struct xattr_args_v0))
                return -EINVAL;
        if (usize > sizeof(struct xattr_args_v0))
                return -E2BIG; /* a later version of the struct: not served */
        return serve_xattrat(r, CALL(.op = META_SETXATTR, .dirfd = arg_int(r, 0), .path = arg(r, 1),
                                     .xname = arg(r, 3), .xargs = arg(r, 4)), arg_int(r, 2));
}
static int op_removexattrat(request *r) {
        return serve_xattrat(r, CALL(.op = META_RMXATTR, .dirfd = arg_int(r, 0), .path = arg(r, 1),
                                     .xname = arg(r, 3)), arg_int(r, 2));
}

static const supervisor_op_entry meta_ops[] = {
#ifdef SYS_chmod
        { SYS_chmod, "chmod", op_chmod },
        { SYS_chown, "chown", op_chown },
        { SYS_lchown, "lchown", op_lchown },
        { SYS_utime, "utime", op_utime },
        { SYS_utimes, "utimes", op_utimes },
        { SYS_futimesat, "futimesat", op_futimesat },
#endif
        { SYS_fchmod, "fchmod", op_fchmod },
        { SYS_fchmodat, "fchmodat", op_fchmodat },
        { NR_FCHMODAT2, "fchmodat2", op_fchmodat2 },
        { SYS_fchown, "fchown", op_fchown },
        { SYS_fchownat, "fchownat", op_fchownat },
        { SYS_utimensat, "utimensat", op_utimensat },
        { SYS_setxattr, "setxattr", op_setxattr },
        { SYS_lsetxattr, "lsetxattr", op_lsetxattr },
        { SYS_fsetxattr, "fsetxattr", op_fsetxattr },
        { SYS_removexattr, "removexattr", op_removexattr },
        { SYS_lremovexattr, "lremovexattr", op_lremovexattr },
        { SYS_fremovexattr, "fremovexattr", op_fremovexattr },
        { NR_SETXATTRAT, "setxattrat", op_setxattrat },
        { NR_REMOVEXATTRAT, "removexattrat", op_removexattrat },
};

supervisor_op_fn supervisor_meta_op_lookup(int nr, const char **ret_name) {
        return supervisor_op_find(meta_ops, ELEMENTSOF(meta_ops), nr, ret_name);
}
