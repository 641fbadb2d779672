/* SPDX-License-Identifier: Apache-2.0 */
/* The emulated syscalls. Each one: copy its memory arguments once, NOTIF_ID_VALID, resolve on the
 * caller's behalf, check the name rules on the path actually about to be created, and perform
 * the call on the supervisor's copy. Nothing is ever answered with
 * SECCOMP_USER_NOTIF_FLAG_CONTINUE: the caller's memory (the path, a symlink on the way) may
 * change between any check and the kernel's own re-read (pitfall 1). */
#include "linux/supervisor-internal.h"

#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/un.h>

#include "plan/name-rules.h"

static int arg_int(const request *r, unsigned i) {
        return (int) r->n->data.args[i]; /* the kernel reads these as int, so do we */
}

static uint64_t arg_ptr(const request *r, unsigned i) {
        return r->n->data.args[i];
}

static mode_t arg_mode(const request *r, unsigned i) {
        return (mode_t) (uint16_t) r->n->data.args[i]; /* umode_t */
}

/* Copies the path argument(s) into r->path[0] (and r->path[1] unless addr2 is UINT64_MAX), then
 * validates the notification: after this, the request acts only on its own copies. */
static int copy_path_and_validate(request *r, uint64_t addr, uint64_t addr2) {
        int e = target_copy_string(r, addr, r->path[0], PATH_MAX);
        if (e == 0 && addr2 != UINT64_MAX)
                e = target_copy_string(r, addr2, r->path[1], PATH_MAX);
        if (e == 0)
                e = target_validate(r);
        return e;
}

/* Rule verdict for the resolved name: 0 (NAME_ALLOWED), a positive name_verdict (denied,
 * *ret_rule set), or -errno. */
static int rules_verdict(request *r, resolved *res, name_check_kind kind, const char **ret_rule) {
        int e = res->path[0] ? 0 : resolved_path(r, res);
        if (e < 0)
                return e;
        return (int) name_rules_check(r->s->rules, kind, res->path, resolved_check_flags(res),
                                      ret_rule);
}

/* The landlock backend has no read-only mount under an existing protected file, and the
 * supervisor holds every write right beneath the writable roots: an O_CREAT open that finds
 * .git/config (`echo x >> .git/config`) must not write it on the caller's behalf. A denied *name*
 * (an existing .env) may still be opened, as in the native backend. */
static bool wants_write(int flags) {
        return (flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC);
}

static bool refuse_existing_write(const request *r, int denied, int flags) {
        return r->s->landlock && denied == NAME_DENIED_PROTECTED && wants_write(flags);
}

/* A denied name that already exists makes the call fail the way the kernel would (EEXIST for
 * mkdir -p on an existing .vscode) without a violation: nothing new comes into existence. */
static int refuse_new_name(request *r, resolved *res, const char *rule, int exists_err) {
        struct stat st;
        if (fstatat(res->dir_fd, res->name, &st, AT_SYMLINK_NOFOLLOW) == 0)
                return -exists_err;
        return request_refuse(r, res->path, rule);
}

/* Resolves and checks the name a mkdir/mknod/symlink/link/bind would create. Its final
 * component is never followed by those calls, so the name checked is the name created. */
static int prepare_new_name(request *r, int dirfd, const char *path, name_check_kind kind,
                            int exists_err, bool dir_ok, resolved *res) {
        int e = resolve_parent(r, dirfd, path, res);
        if (e < 0)
                return e;
        if (res->in_target_proc)
                return -ENOENT; /* procfs takes no new names (what the kernel answers there) */
        if (resolved_is_dot(res))
                return -exists_err;
        struct stat st;
        if (res->trailing_slash && !dir_ok) /* "x/" names a directory: kernel semantics */
                return fstatat(res->dir_fd, res->name, &st, AT_SYMLINK_NOFOLLOW) == 0 ? -exists_err
                                                                                      : -ENOENT;
        const char *rule = NULL;
        e = rules_verdict(r, res, kind, &rule);
        if (e < 0)
                return e;
        return e ? refuse_new_name(r, res, rule, exists_err) : 0;
}

static int errno_or(int r) {
        return r < 0 ? -errno : r;
}

/* ---- open, openat, creat ------------------------------------------------------------------------ */

/* The caller's open of something that exists, through the pinned inode (so a swap of the name
 * after the checks changes nothing). An existing FIFO may wait for its peer: that wait happens on
 * a pool thread (supervisor-blocked.c), or one FIFO would stall every creation (pitfall 5). */
static int open_existing(request *r, int pin, const struct stat *st, int flags) {
        int oflags = (flags & ~(O_CREAT | O_EXCL | O_NOFOLLOW)) | O_NOCTTY | O_CLOEXEC;
        int acc = flags & O_ACCMODE;
        if (S_ISFIFO(st->st_mode) && !(flags & O_NONBLOCK) && acc != O_RDWR) {
                if (acc == O_WRONLY) {
                        /* A reader present: a non-blocking open succeeds at once, as the
                         * blocking one would. Then the caller's flags are restored. */
                        int fd = supervisor_reopen(r->s, pin, oflags | O_NONBLOCK);
                        if (fd != -ENXIO) { /* opened, or failed for another reason */
                                (void) close(pin);
                                if (fd >= 0 && fcntl(fd, F_SETFL, oflags & ~O_NONBLOCK) < 0) {
                                        int e = -errno;
                                        (void) close(fd);
                                        return e;
                                }
                                return fd;
                        }
                }
                return supervisor_hand_off_open(r, pin, oflags);
        }
        int fd = supervisor_reopen(r->s, pin, oflags);
        (void) close(pin);
        return fd;
}

static int open_caller_tty(request *r, int flags);

/* The final component of an open, outside procfs: O_CREAT, or a write open of an existing file
 * (which never creates). Returns an fd, -errno, or 0 with *ret_follow set and the symlink text in
 * `link` (the caller's open would follow it: the text is resolved and checked as a new path). */
static int open_final(request *r, resolved *res, int flags, mode_t mode, char link[static PATH_MAX],
                      bool *ret_follow) {
        if (resolved_is_dot(res) || res->trailing_slash)
                return -EISDIR; /* O_CREAT on "dir/", "." or "..": the kernel's answer */
        const char *rule = NULL;
        int denied = rules_verdict(r, res, NAME_CHECK_CREATE, &rule);
        if (denied < 0)
                return denied;
        bool creating = flags & O_CREAT;
        for (unsigned attempt = 0; attempt < 8; attempt++) {
                if (!denied && creating) {
                        git_guard g = { 0 };
                        int fd = git_check_create(r, res, false, &g);
                        /* O_EXCL|O_NOFOLLOW: this creates exactly the name checked, or nothing. */
                        if (fd == 0)
                                fd = errno_or(openat(res->dir_fd, res->name,
                                                     flags | O_CREAT | O_EXCL | O_NOFOLLOW |
                                                             O_NOCTTY | O_CLOEXEC, mode));
                        git_guard_release(&g);
                        if (fd != -EEXIST)
                                return fd;
                        if (flags & O_EXCL)
                                return -EEXIST;
                } else if (creating && (flags & O_EXCL))
                        return request_refuse(r, res->path, rule);
                /* The name exists (or may not be created): open what is there, never creating. */
                int pin = openat(res->dir_fd, res->name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
                if (pin < 0) {
                        if (errno != ENOENT || !creating)
                                return -errno;
                        if (denied)
                                return request_refuse(r, res->path, rule);
                        continue; /* unlinked since: create after all */
                }
                struct stat st;
                if (fstat(pin, &st) < 0) {
                        int e = -errno;
                        (void) close(pin);
                        return e;
                }
                if (S_ISLNK(st.st_mode)) {
                        ssize_t n = readlinkat(pin, "", link, PATH_MAX);
                        int e = errno;
                        (void) close(pin);
                        if (flags & O_NOFOLLOW)
                                return -ELOOP;
                        if (n < 0)
                                return -e;
                        if (n >= PATH_MAX)
                                return -ENAMETOOLONG;
                        link[n] = '\0';
                        *ret_follow = true;
                        return 0;
                }
                if (S_ISDIR(st.st_mode)) {
                        (void) close(pin);
                        return -EISDIR;
                }
                if (S_ISCHR(st.st_mode) && st.st_rdev == makedev(5, 0)) {
                        (void) close(pin);
                        return open_caller_tty(r, flags); /* /dev/tty: the caller's, not ours */
                }
                if (refuse_existing_write(r, denied, flags)) {
                        (void) close(pin);
                        return request_refuse(r, res->path, rule);
                }
                int e = wants_write(flags) ? git_check_write(r, res) : 0;
                if (e < 0) {
                        (void) close(pin);
                        return e;
                }
                return open_existing(r, pin, &st, flags);
        }
        return -EAGAIN; /* the name kept changing under us: the caller is racing itself */
}

/* The final component beneath the caller's own /proc/<pid> (/dev/stdout, /proc/self/fd/1): the
 * magic link is followed without O_CREAT, so nothing can be created, and it leads to the
 * caller's own file. */
/* The access mode (O_ACCMODE) the caller's fd behind /proc/<pid>/fd/<name> was opened with, or
 * -ENOENT when `name` in `dirfd` is not an fd link (exe, cwd, root, map_files/...). */
static int caller_fd_access(int dirfd, const char *name) {
        char rel[NAME_MAX + 16], buf[512];
        (void) snprintf(rel, sizeof(rel), "../fdinfo/%s", name);
        _cleanup_close_ int fd = openat(dirfd, rel, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return -errno;
        ssize_t n = read(fd, buf, sizeof(buf) - 1);
        if (n <= 0)
                return -EIO;
        buf[n] = '\0';
        const char *f = strstr(buf, "\nflags:");
        if (!f)
                return -EIO;
        errno = 0;
        unsigned long v = strtoul(f + 8, NULL, 8);
        return errno ? -errno : (int) (v & O_ACCMODE);
}

/* The supervisor is not in the command's Landlock domain, and a magic link leads to the file on
 * whatever mount the caller's fd came from (stdin inherited from the host: a host mount, not the
 * sandbox's read-only view). So reopening through a magic link may never add write access the
 * caller's fd did not have: `cordon run sh -c 'echo x >> /dev/stdin' < ~/notes.txt` must not
 * write the host file. Write intent through any other magic link (exe, ...) is refused. */
static int check_magic_write(request *r, resolved *res, int flags) {
        bool wants_write = (flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC);
        if (!wants_write)
                return 0;
        int acc = caller_fd_access(res->dir_fd, res->name);
        if (acc == O_WRONLY || acc == O_RDWR)
                return 0;
        return request_refuse(r, res->path,
                              "write access through a magic link the caller holds read-only");
}

static int open_in_proc(request *r, resolved *res, int flags) {
        if (resolved_is_dot(res) || res->trailing_slash)
                return -EISDIR;
        int pin = openat(res->dir_fd, res->name,
                         O_PATH | O_CLOEXEC | (flags & O_NOFOLLOW ? O_NOFOLLOW : 0));
        if (pin < 0)
                return -errno; /* ENOENT: procfs creates nothing, as for the caller */
        struct stat st;
        int e = fstat(pin, &st) < 0        ? -errno
                : (flags & O_EXCL)          ? -EEXIST
                : S_ISLNK(st.st_mode)       ? -ELOOP /* O_NOFOLLOW on a magic link */
                : S_ISDIR(st.st_mode)       ? -EISDIR
                                            : 0;
        if (e == 0)
                e = check_magic_write(r, res, flags);
        if (e < 0) {
                (void) close(pin);
                return e;
        }
        return open_existing(r, pin, &st, flags);
}

/* /dev/tty names the opener's controlling terminal; opened by the supervisor (which has none) it
 * would fail with ENXIO. The caller's terminal is reopened through the caller's own fd 0, 1 or 2
 * on it (its /proc/<tid>/fd/N, with no more access than that fd has); none: ENXIO, as the kernel
 * answers a process without one. */
static int open_caller_tty(request *r, int flags) {
        char buf[1024];
        _cleanup_close_ int fd = openat(r->tid_fd, "stat", O_RDONLY | O_CLOEXEC);
        ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
        if (n <= 0)
                return -ENXIO;
        buf[n] = '\0';
        const char *p = strrchr(buf, ')'); /* comm may hold anything but ends before this */
        unsigned long long tty = 0;
        if (!p || sscanf(p + 2, "%*c %*d %*d %*d %llu", &tty) != 1 || tty == 0)
                return -ENXIO;
        _cleanup_close_ int fds = openat(r->tid_fd, "fd", O_PATH | O_DIRECTORY | O_CLOEXEC);
        int want = flags & O_ACCMODE;
        for (int i = 0; fds >= 0 && i <= 2; i++) {
                char name[16];
                struct stat st;
                (void) snprintf(name, sizeof(name), "%d", i);
                if (fstatat(fds, name, &st, 0) < 0 || !S_ISCHR(st.st_mode) ||
                    (unsigned long long) st.st_rdev != tty)
                        continue;
                int acc = caller_fd_access(fds, name);
                if (acc < 0 || (want != O_WRONLY && acc == O_WRONLY) ||
                    (want != O_RDONLY && acc == O_RDONLY))
                        continue; /* never more access than the caller's own fd has */
                int t = openat(fds, name, (flags & ~(O_CREAT | O_EXCL | O_NOFOLLOW | O_TRUNC)) |
                                                  O_NOCTTY | O_CLOEXEC);
                return t < 0 ? -errno : t;
        }
        return -ENXIO;
}

static int open_emulated(request *r, int dirfd, const char *path, int flags, mode_t mode) {
        char link[PATH_MAX], cur[PATH_MAX];
        _cleanup_close_ int link_dir = -1; /* where a relative symlink text starts */
        strcpy(cur, path); /* both PATH_MAX: the copy was NUL-terminated within PATH_MAX */
        for (unsigned links = 0;; links++) {
                resolved res = RESOLVED_INIT;
                int e = link_dir >= 0 ? resolve_parent_at(r, link_dir, cur, &res)
                                      : resolve_parent(r, dirfd, cur, &res);
                bool follow = false;
                if (e == 0)
                        e = res.in_target_proc ? open_in_proc(r, &res, flags)
                                               : open_final(r, &res, flags, mode, link, &follow);
                if (!follow) {
                        resolved_done(&res);
                        return e;
                }
                /* Expand the symlink as text, as the kernel would: relative to the link's
                 * directory, absolute from the root; every name it leads to is checked again. */
                if (links + 1 >= SUPERVISOR_MAX_LINKS) {
                        resolved_done(&res);
                        return -ELOOP;
                }
                safe_close(link_dir);
                link_dir = TAKE_FD(res.dir_fd);
                memcpy(cur, link, sizeof(cur));
        }
}

static int do_open(request *r, int dirfd, uint64_t path, int flags, mode_t mode) {
        int e = copy_path_and_validate(r, path, UINT64_MAX);
        if (e < 0)
                return e;
        /* O_PATH never arrives (the filter lets the kernel ignore O_CREAT there); O_TMPFILE with
         * O_CREAT and O_CREAT|O_DIRECTORY are EINVAL since Linux 6.4; without O_CREAT only write
         * opens arrive, never with O_DIRECTORY (the filter). */
        if (flags & (O_PATH | __O_TMPFILE | O_DIRECTORY))
                return -EINVAL;
        r->returns_fd = true;
        r->cloexec = flags & O_CLOEXEC;
        return open_emulated(r, dirfd, r->path[0], flags, mode & 07777);
}

static int op_open(request *r) {
        return do_open(r, AT_FDCWD, arg_ptr(r, 0), arg_int(r, 1), arg_mode(r, 2));
}

static int op_openat(request *r) {
        return do_open(r, arg_int(r, 0), arg_ptr(r, 1), arg_int(r, 2), arg_mode(r, 3));
}

static int op_creat(request *r) {
        return do_open(r, AT_FDCWD, arg_ptr(r, 0), O_CREAT | O_WRONLY | O_TRUNC, arg_mode(r, 1));
}

/* ---- mkdir, mknod, symlink ------------------------------------------------------------------- */

static int do_mkdir(request *r, int dirfd, uint64_t path, mode_t mode) {
        int e = copy_path_and_validate(r, path, UINT64_MAX);
        if (e < 0)
                return e;
        resolved res = RESOLVED_INIT;
        e = prepare_new_name(r, dirfd, r->path[0], NAME_CHECK_CREATE, EEXIST, true, &res);
        char name[NAME_MAX + 2];
        git_guard g = { 0 };
        if (e == 0)
                e = git_check_create(r, &res, true, &g);
        if (e == 0)
                e = errno_or(mkdirat(res.dir_fd, resolved_name_arg(&res, name), mode));
        git_guard_release(&g);
        resolved_done(&res);
        return e;
}

static int op_mkdir(request *r) {
        return do_mkdir(r, AT_FDCWD, arg_ptr(r, 0), arg_mode(r, 1));
}

static int op_mkdirat(request *r) {
        return do_mkdir(r, arg_int(r, 0), arg_ptr(r, 1), arg_mode(r, 2));
}

static int do_mknod(request *r, int dirfd, uint64_t path, mode_t mode) {
        switch (mode & S_IFMT) {
        case 0:
                mode |= S_IFREG;
                break;
        case S_IFREG:
        case S_IFIFO:
        case S_IFSOCK:
                break;
        case S_IFCHR:
        case S_IFBLK:
        case S_IFDIR:
                /* Device nodes are never made on the caller's behalf: the supervisor may hold
                 * capabilities in a user namespace where the caller's mknod would be refused. */
                return -EPERM;
        default:
                return -EINVAL;
        }
        int e = copy_path_and_validate(r, path, UINT64_MAX);
        if (e < 0)
                return e;
        resolved res = RESOLVED_INIT;
        e = prepare_new_name(r, dirfd, r->path[0], NAME_CHECK_CREATE, EEXIST, false, &res);
        char name[NAME_MAX + 2];
        git_guard g = { 0 };
        if (e == 0)
                e = git_check_create(r, &res, false, &g);
        if (e == 0)
                e = errno_or(mknodat(res.dir_fd, resolved_name_arg(&res, name), mode, 0));
        git_guard_release(&g);
        resolved_done(&res);
        return e;
}

static int op_mknod(request *r) {
        return do_mknod(r, AT_FDCWD, arg_ptr(r, 0), arg_mode(r, 1));
}

static int op_mknodat(request *r) {
        return do_mknod(r, arg_int(r, 0), arg_ptr(r, 1), arg_mode(r, 2));
}

/* symlink(target, linkpath): the new name is checked like a rename target — it may not be an
 * ancestor of a protected path either: `ln -s elsewhere .git` would give `.git/config` a second
 * existence through `elsewhere/config`. The target text is data (creating through a dangling link
 * later is an open, checked then). */
static int do_symlink(request *r, uint64_t target, int dirfd, uint64_t linkpath) {
        int e = copy_path_and_validate(r, linkpath, target);
        if (e < 0)
                return e;
        if (r->path[1][0] == '\0')
                return -ENOENT;
        resolved res = RESOLVED_INIT;
        e = prepare_new_name(r, dirfd, r->path[0], NAME_CHECK_RENAME_TARGET, EEXIST, false, &res);
        char name[NAME_MAX + 2];
        git_guard g = { 0 };
        if (e == 0)
                e = git_check_create(r, &res, false, &g);
        if (e == 0)
                e = errno_or(symlinkat(r->path[1], res.dir_fd, resolved_name_arg(&res, name)));
        git_guard_release(&g);
        resolved_done(&res);
        return e;
}

static int op_symlink(request *r) {
        return do_symlink(r, arg_ptr(r, 0), AT_FDCWD, arg_ptr(r, 1));
}

static int op_symlinkat(request *r) {
        return do_symlink(r, arg_ptr(r, 0), arg_int(r, 1), arg_ptr(r, 2));
}

/* ---- link, linkat --------------------------------------------------------------------------- */

/* Linking through a magic link of the caller (/proc/<tid>/fd/N): the file must not be a protected
 * one opened earlier, or it would get a second, unprotected name. An O_TMPFILE file has no path
 * ("/dir/#123 (deleted)" is not protected). */
static int check_magic_source(request *r, int dirfd, const char *name) {
        char spath[PATH_MAX];
        ssize_t n = readlinkat(dirfd, name, spath, sizeof(spath) - 1);
        if (n <= 0 || spath[0] != '/')
                return 0; /* pipe:[..], anon_inode:[..]: linkat itself fails */
        spath[n] = '\0';
        const char *rule = NULL;
        if (name_rules_check(r->s->rules, NAME_CHECK_RENAME_SOURCE, spath, 0, &rule) != NAME_ALLOWED)
                return request_refuse(r, spath, rule);
        return 0;
}

/* linkat(fd, "", ..., AT_EMPTY_PATH): the file behind the caller's descriptor (an O_TMPFILE
 * file, typically), reached through /proc/<tid>/fd/N, which is the caller's own. */
static int link_from_fd(request *r, int olddirfd, const resolved *dst) {
        char src[32], name[NAME_MAX + 2];
        struct stat st;
        if (olddirfd == AT_FDCWD)
                strcpy(src, "cwd");
        else if (olddirfd < 0)
                return -EBADF;
        else
                (void) snprintf(src, sizeof(src), "fd/%d", olddirfd);
        if (fstatat(r->tid_fd, src, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? -EBADF : -errno;
        int e = check_magic_source(r, r->tid_fd, src);
        if (e < 0)
                return e;
        return errno_or(linkat(r->tid_fd, src, dst->dir_fd, resolved_name_arg(dst, name),
                               AT_SYMLINK_FOLLOW));
}

/* Resolves a link source, expanding final symlinks (AT_SYMLINK_FOLLOW) as text like open does. */
static int resolve_link_source(request *r, int dirfd, bool follow, resolved *res) {
        char cur[PATH_MAX], link[PATH_MAX];
        _cleanup_close_ int link_dir = -1;
        memcpy(cur, r->path[1], sizeof(cur));
        for (unsigned links = 0; links < SUPERVISOR_MAX_LINKS; links++) {
                int e = link_dir >= 0 ? resolve_parent_at(r, link_dir, cur, res)
                                      : resolve_parent(r, dirfd, cur, res);
                if (e < 0 || !follow || res->in_target_proc)
                        return e;
                ssize_t n = readlinkat(res->dir_fd, res->name, link, sizeof(link));
                if (n < 0)
                        return 0; /* not a symlink (EINVAL) or absent: linkat will say */
                if ((size_t) n >= sizeof(link))
                        return -ENAMETOOLONG;
                link[n] = '\0';
                safe_close(link_dir);
                link_dir = TAKE_FD(res->dir_fd);
                memcpy(cur, link, sizeof(cur));
        }
        return -ELOOP;
}

static int link_from_path(request *r, int olddirfd, int flags, const resolved *dst) {
        resolved src = RESOLVED_INIT;
        char sname[NAME_MAX + 2], dname[NAME_MAX + 2];
        const char *rule = NULL;
        int e = resolve_link_source(r, olddirfd, flags & AT_SYMLINK_FOLLOW, &src);
        if (e < 0)
                goto out;
        if (src.in_target_proc) {
                /* /proc/self/fd/N: the kernel follows the caller's own magic link (O_TMPFILE). */
                if (flags & AT_SYMLINK_FOLLOW)
                        e = check_magic_source(r, src.dir_fd, src.name);
                if (e == 0)
                        e = errno_or(linkat(src.dir_fd, src.name, dst->dir_fd,
                                            resolved_name_arg(dst, dname), flags & AT_SYMLINK_FOLLOW));
                goto out;
        }
        if (!resolved_is_dot(&src)) {
                e = rules_verdict(r, &src, NAME_CHECK_RENAME_SOURCE, &rule);
                if (e > 0) /* a second name for a protected file */
                        e = request_refuse(r, src.path, rule);
                if (e == 0)
                        e = git_check_link_source(r, &src);
                if (e != 0)
                        goto out;
        }
        e = errno_or(linkat(src.dir_fd, resolved_name_arg(&src, sname), dst->dir_fd,
                            resolved_name_arg(dst, dname), 0));
out:
        resolved_done(&src);
        return e;
}

static int do_link(request *r, int olddirfd, uint64_t oldpath, int newdirfd, uint64_t newpath,
                   int flags) {
        if (flags & ~(AT_SYMLINK_FOLLOW | AT_EMPTY_PATH))
                return -EINVAL;
        int e = copy_path_and_validate(r, newpath, oldpath);
        if (e < 0)
                return e;
        if (r->path[1][0] == '\0' && !(flags & AT_EMPTY_PATH))
                return -ENOENT;
        resolved dst = RESOLVED_INIT;
        e = prepare_new_name(r, newdirfd, r->path[0], NAME_CHECK_RENAME_TARGET, EEXIST, false, &dst);
        git_guard g = { 0 };
        if (e == 0)
                e = git_check_create(r, &dst, false, &g);
        if (e == 0)
                e = r->path[1][0] == '\0' ? link_from_fd(r, olddirfd, &dst)
                                          : link_from_path(r, olddirfd, flags, &dst);
        git_guard_release(&g);
        resolved_done(&dst);
        return e;
}

static int op_link(request *r) {
        return do_link(r, AT_FDCWD, arg_ptr(r, 0), AT_FDCWD, arg_ptr(r, 1), 0);
}

static int op_linkat(request *r) {
        return do_link(r, arg_int(r, 0), arg_ptr(r, 1), arg_int(r, 2), arg_ptr(r, 3), arg_int(r, 4));
}

/* ---- rename, renameat, renameat2 ---------------------------------------------------------------- */

/* Source: not protected, beneath or an ancestor of a protected path. Target: the create rules
 * plus "not an ancestor of a protected path" (a prepared directory renamed into place).
 * RENAME_EXCHANGE moves both names, so each side is both a source and a target. Renaming onto an
 * existing denied name is refused too: it would replace that file by one the rules never saw. */
static int rename_checks(request *r, resolved *from, resolved *to, unsigned flags) {
        const char *rule = NULL;
        int e = rules_verdict(r, from, NAME_CHECK_RENAME_SOURCE, &rule);
        if (e > 0)
                return request_refuse(r, from->path, rule);
        if (e == 0)
                e = rules_verdict(r, to, NAME_CHECK_RENAME_TARGET, &rule);
        if (e > 0)
                return request_refuse(r, to->path, rule);
        if (e < 0 || !(flags & RENAME_EXCHANGE))
                return e;
        e = rules_verdict(r, to, NAME_CHECK_RENAME_SOURCE, &rule);
        if (e > 0)
                return request_refuse(r, to->path, rule);
        if (e == 0)
                e = rules_verdict(r, from, NAME_CHECK_RENAME_TARGET, &rule);
        if (e > 0)
                return request_refuse(r, from->path, rule);
        return e;
}

static int do_rename(request *r, int olddirfd, uint64_t oldpath, int newdirfd, uint64_t newpath,
                     unsigned flags) {
        int e = copy_path_and_validate(r, newpath, oldpath);
        if (e < 0)
                return e;
        resolved from = RESOLVED_INIT, to = RESOLVED_INIT;
        char fname[NAME_MAX + 2], tname[NAME_MAX + 2];
        e = resolve_parent(r, olddirfd, r->path[1], &from);
        if (e == 0)
                e = resolve_parent(r, newdirfd, r->path[0], &to);
        if (e == 0 && (from.in_target_proc || to.in_target_proc))
                e = -EXDEV;
        /* "." and ".." are never renamed (EBUSY): the kernel refuses before anything moves. */
        git_guard g = { 0 };
        bool done = false;
        if (e == 0 && !resolved_is_dot(&from) && !resolved_is_dot(&to)) {
                e = rename_checks(r, &from, &to, flags);
                if (e == 0)
                        e = git_check_rename(r, &from, &to, flags, &g, &done);
        }
        if (e == 0 && !done)
                e = errno_or((int) syscall(SYS_renameat2, from.dir_fd, resolved_name_arg(&from, fname),
                                           to.dir_fd, resolved_name_arg(&to, tname), flags));
        git_guard_release(&g);
        resolved_done(&from);
        resolved_done(&to);
        return e;
}

static int op_rename(request *r) {
        return do_rename(r, AT_FDCWD, arg_ptr(r, 0), AT_FDCWD, arg_ptr(r, 1), 0);
}

static int op_renameat(request *r) {
        return do_rename(r, arg_int(r, 0), arg_ptr(r, 1), arg_int(r, 2), arg_ptr(r, 3), 0);
}

static int op_renameat2(request *r) {
        return do_rename(r, arg_int(r, 0), arg_ptr(r, 1), arg_int(r, 2), arg_ptr(r, 3),
                         (unsigned) arg_int(r, 4));
}

/* ---- bind --------------------------------------------------------------------------------------- */

/* bind() takes no directory fd, so the worker (which has its own cwd: CLONE_FS was unshared)
 * changes into the checked parent and binds the bare name. getsockname() then reports that
 * name rather than the caller's original path (pitfall 9). */
static int bind_unix_path(request *r, int sock, resolved *res) {
        struct sockaddr_un sun = { .sun_family = AF_UNIX };
        char name[NAME_MAX + 2];
        resolved_name_arg(res, name);
        if (strlen(name) >= sizeof(sun.sun_path))
                return -ENAMETOOLONG;
        strcpy(sun.sun_path, name);
        if (fchdir(res->dir_fd) < 0)
                return -errno;
        return errno_or(bind(sock, (struct sockaddr *) &sun,
                             (socklen_t) (offsetof(struct sockaddr_un, sun_path) + strlen(name) + 1)));
}

static int op_bind(request *r) {
        int len = arg_int(r, 2);
        if (len < 0 || (size_t) len > sizeof(r->addr))
                return -EINVAL;
        /* The socket is taken before ID_VALID too: a pidfd opened later could name a new
         * process that reused the tid. */
        int e = target_copy_mem(r, arg_ptr(r, 1), r->addr, (size_t) len);
        if (e == 0)
                e = target_dup_fd(r, arg_int(r, 0));
        if (e == 0)
                e = target_validate(r);
        if (e < 0)
                return e;
        int domain = 0;
        socklen_t dl = sizeof(domain);
        if (getsockopt(r->sock_fd, SOL_SOCKET, SO_DOMAIN, &domain, &dl) < 0)
                return -errno; /* ENOTSOCK */
        const struct sockaddr_un *sun = (const struct sockaddr_un *) r->addr;
        size_t off = offsetof(struct sockaddr_un, sun_path);
        bool pathname = domain == AF_UNIX && (size_t) len > off && sun->sun_family == AF_UNIX &&
                        sun->sun_path[0] != '\0';
        /* The landlock backend shares the host's network namespace, so an abstract name bound
         * here is one host clients look up (X11's @/tmp/.X11-unix/X0, a D-Bus address): the
         * command could pose as that server. Landlock's scoping stops only the other direction.
         * Native runs have an abstract namespace of their own. */
        if (!pathname && domain == AF_UNIX && r->s->landlock) {
                static const char rule[] = "abstract Unix socket names are shared with the host "
                                           "on the landlock backend";
                supervisor_report_refusal(r->s, &(supervisor_report) { .action = "network-outbound",
                                                                      .syscall = "bind",
                                                                      .target = "@", .rule = rule },
                                          "bind", rule);
                return -EPERM;
        }
        if (!pathname) /* other families, abstract and autobind names: no file name appears */
                return errno_or(bind(r->sock_fd, (const struct sockaddr *) r->addr, (socklen_t) len));
        size_t plen = strnlen(sun->sun_path, (size_t) len - off);
        memcpy(r->path[0], sun->sun_path, plen);
        r->path[0][plen] = '\0';
        resolved res = RESOLVED_INIT;
        e = prepare_new_name(r, AT_FDCWD, r->path[0], NAME_CHECK_CREATE, EADDRINUSE, false, &res);
        if (e == 0)
                e = bind_unix_path(r, r->sock_fd, &res);
        resolved_done(&res);
        return e;
}

/* ---- rmdir, unlink, unlinkat ------------------------------------------------------------------------ */

/* A protected directory, or an ancestor of a protected path, may not be removed: an empty .claude
 * removed today is a host change, and removing is renaming away by other means. The landlock
 * backend notifies the unlink of files too (no read-only mount protects an existing .git/config
 * there): `flags` 0 removes a file, AT_REMOVEDIR a directory. */
static int do_remove(request *r, int dirfd, uint64_t path, int flags) {
        int e = copy_path_and_validate(r, path, UINT64_MAX);
        if (e < 0)
                return e;
        resolved res = RESOLVED_INIT;
        char name[NAME_MAX + 2];
        const char *rule = NULL;
        e = resolve_parent(r, dirfd, r->path[0], &res);
        /* "." and "..", and procfs, are refused by the kernel itself (EINVAL, ENOTEMPTY, EPERM). */
        if (e == 0 && !res.in_target_proc && !resolved_is_dot(&res)) {
                e = rules_verdict(r, &res, NAME_CHECK_RENAME_SOURCE, &rule);
                if (e > 0)
                        e = request_refuse(r, res.path, rule);
        }
        if (e == 0)
                e = errno_or(unlinkat(res.dir_fd, resolved_name_arg(&res, name), flags));
        resolved_done(&res);
        return e;
}

#ifdef SYS_rmdir
static int op_rmdir(request *r) {
        return do_remove(r, AT_FDCWD, arg_ptr(r, 0), AT_REMOVEDIR);
}

static int op_unlink(request *r) {
        return do_remove(r, AT_FDCWD, arg_ptr(r, 0), 0);
}
#endif

static int op_unlinkat(request *r) {
        if (arg_int(r, 2) & ~AT_REMOVEDIR)
                return -EINVAL;
        return do_remove(r, arg_int(r, 0), arg_ptr(r, 1), arg_int(r, 2));
}

/* ---- Dispatch ------------------------------------------------------------------------------------ */

static const supervisor_op_entry ops[] = {
#ifdef SYS_open
        { SYS_open, "open", op_open },
        { SYS_creat, "creat", op_creat },
        { SYS_mkdir, "mkdir", op_mkdir },
        { SYS_mknod, "mknod", op_mknod },
        { SYS_rename, "rename", op_rename },
        { SYS_link, "link", op_link },
        { SYS_symlink, "symlink", op_symlink },
        { SYS_rmdir, "rmdir", op_rmdir },
        { SYS_unlink, "unlink", op_unlink }, /* notified in the landlock backend only */
#endif
        { SYS_openat, "openat", op_openat },
        { SYS_mkdirat, "mkdirat", op_mkdirat },
        { SYS_mknodat, "mknodat", op_mknodat },
        { SYS_renameat, "renameat", op_renameat },
        { SYS_renameat2, "renameat2", op_renameat2 },
        { SYS_linkat, "linkat", op_linkat },
        { SYS_symlinkat, "symlinkat", op_symlinkat },
        { SYS_bind, "bind", op_bind },
        { SYS_connect, "connect", op_connect }, /* with allowUnixSockets; landlock backend */
        { SYS_unlinkat, "unlinkat", op_unlinkat },
};

supervisor_op_fn supervisor_op_find(const supervisor_op_entry *t, size_t n, int nr,
                                    const char **ret_name) {
        for (size_t i = 0; i < n; i++)
                if (t[i].nr == nr) {
                        *ret_name = t[i].name;
                        return t[i].fn;
                }
        return NULL;
}

supervisor_op_fn supervisor_op_lookup(int nr, const char **ret_name) {
        supervisor_op_fn fn = supervisor_op_find(ops, ELEMENTSOF(ops), nr, ret_name);
        return fn ? fn : supervisor_meta_op_lookup(nr, ret_name);
}
