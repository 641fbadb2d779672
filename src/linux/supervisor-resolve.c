/* SPDX-License-Identifier: Apache-2.0 */
/* Resolving a path as the caller would, from inside the supervisor (pitfall 2 of the notes).
 *
 * The supervisor resolves in its own context, so anything that means "the current process"
 * would name the supervisor: /proc/self, /proc/thread-self, /dev/fd, /dev/std*, and any symlink
 * into them. Without the rules below, open("x/../../proc/self/mem", O_CREAT|O_RDWR) hands the
 * supervisor's own memory to the caller. The rules:
 *   1. A leading /proc/self, /proc/thread-self, /dev/fd, /dev/stdin|stdout|stderr is rewritten
 *      to the caller's /proc/<tgid>[/task/<tid>][/fd[/N]] and walked beneath it; only there are
 *      magic links followed, and they lead to the caller's own objects.
 *   2. Everything else is walked with RESOLVE_NO_MAGICLINKS.
 *   3. A parent directory on procfs reached any other way is refused.
 * The final component is never resolved here: each operation decides how to treat it. */
#include "linux/supervisor-internal.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>

#include "plan/name-rules.h"

/* From <linux/fs.h>, which cannot be included here (it pulls in <linux/mount.h>, shadowed by
 * src/linux/mount.h). */
#define FS_IOC_GETFLAGS_ _IOR('f', 1, long)
#define FS_CASEFOLD_FL_ 0x40000000

void resolved_done(resolved *res) {
        res->dir_fd = safe_close(res->dir_fd);
}

bool resolved_is_dot(const resolved *res) {
        return streq(res->name, ".") || streq(res->name, "..");
}

const char *resolved_name_arg(const resolved *res, char buf[static NAME_MAX + 2]) {
        size_t n = strlen(res->name);
        memcpy(buf, res->name, n);
        if (res->trailing_slash)
                buf[n++] = '/';
        buf[n] = '\0';
        return buf;
}

/* Splits `path` (non-empty) into the directory part and the final component. "a/b/" → "a/",
 * "b" with trailing_slash; "/" → "/", "."; "b" → ".", "b". */
static int split_last(const char *path, char dir[static PATH_MAX], resolved *res) {
        size_t len = strlen(path), end = len;
        while (end > 0 && path[end - 1] == '/')
                end--;
        if (end == 0) { /* only slashes: the root itself */
                strcpy(dir, len > 0 ? "/" : ".");
                strcpy(res->name, ".");
                return 0;
        }
        size_t start = end;
        while (start > 0 && path[start - 1] != '/')
                start--;
        if (end - start > NAME_MAX)
                return -ENAMETOOLONG;
        memcpy(res->name, path + start, end - start);
        res->name[end - start] = '\0';
        res->trailing_slash = end < len;
        if (start == 0)
                strcpy(dir, ".");
        else {
                memcpy(dir, path, start);
                dir[start] = '\0';
        }
        return 0;
}

static int sys_openat2_dir(int startfd, const char *path) {
        struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
                                .resolve = RESOLVE_NO_MAGICLINKS };
        for (unsigned tries = 0;; tries++) {
                long fd = syscall(__NR_openat2, startfd, path, &how, sizeof(how));
                if (fd >= 0)
                        return (int) fd;
                /* EAGAIN: a concurrent rename raced the walk's ".." checks; retry a little. */
                if (errno != EAGAIN || tries >= 16)
                        return -errno;
        }
}

static bool is_procfs(int fd) {
        struct statfs sf;
        /* Unknown means "maybe": fail closed. */
        return fstatfs(fd, &sf) < 0 || sf.f_type == PROC_SUPER_MAGIC;
}

/* Rule 2 and 3: a walk that follows ordinary symlinks as the caller would (same root, same mount
 * namespace, same credentials) but never a magic link, and never ends in a procfs directory. */
static int resolve_general(request *r, int startfd, const char *path, resolved *ret) {
        char dir[PATH_MAX];
        int e = split_last(path, dir, ret);
        if (e < 0)
                return e;
        int fd = sys_openat2_dir(startfd, dir);
        if (fd < 0)
                return fd;
        if (is_procfs(fd)) {
                /* e.g. a symlink to /proc/self: in the supervisor it names the supervisor. */
                (void) close(fd);
                return request_refuse(r, path, "procfs outside the caller's own /proc/<pid>");
        }
        ret->dir_fd = fd;
        ret->in_target_proc = false;
        return 0;
}

/* A magic link met beneath the caller's /proc/<pid> (cwd, root, fd/N): follow it, which leads to
 * the caller's own directory, and resolve `rest` plus the final component from there as an
 * ordinary path. */
static int jump_magic_link(request *r, int dirfd, const char *comp, const char *rest,
                           resolved *ret) {
        char path[PATH_MAX];
        while (*rest == '/')
                rest++;
        int len = snprintf(path, sizeof(path), "%s%s%s%s", rest, *rest ? "/" : "", ret->name,
                           ret->trailing_slash ? "/" : "");
        if (len < 0 || (size_t) len >= sizeof(path))
                return -ENAMETOOLONG;
        _cleanup_close_ int jumped = openat(dirfd, comp, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (jumped < 0)
                return -errno;
        return resolve_general(r, jumped, path, ret);
}

/* Rule 1: walk beneath the caller's /proc/<pid> directory. ".." may not leave it (EXDEV, as
 * RESOLVE_BENEATH). The only symlinks there are magic links to the caller's own files and
 * directories: see jump_magic_link(). */
static int walk_proc(request *r, int base, const char *rel, resolved *ret) {
        char dir[PATH_MAX];
        int e = split_last(*rel ? rel : ".", dir, ret);
        if (e < 0)
                return e;
        _cleanup_close_ int cur = fcntl(base, F_DUPFD_CLOEXEC, 3);
        if (cur < 0)
                return -errno;
        unsigned depth = 0;
        for (const char *p = dir;;) {
                while (*p == '/')
                        p++;
                size_t n = strcspn(p, "/");
                if (n == 0)
                        break;
                char comp[NAME_MAX + 1];
                if (n > NAME_MAX)
                        return -ENAMETOOLONG;
                memcpy(comp, p, n);
                comp[n] = '\0';
                p += n;
                if (streq(comp, "."))
                        continue;
                if (streq(comp, "..") && depth == 0)
                        return -EXDEV;
                _cleanup_close_ int next = openat(cur, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
                struct stat st;
                if (next < 0 || fstat(next, &st) < 0)
                        return -errno;
                if (S_ISLNK(st.st_mode))
                        return jump_magic_link(r, cur, comp, p, ret);
                if (!S_ISDIR(st.st_mode))
                        return -ENOTDIR;
                depth = streq(comp, "..") ? depth - 1 : depth + 1;
                safe_close(cur);
                cur = TAKE_FD(next);
        }
        ret->dir_fd = TAKE_FD(cur);
        ret->in_target_proc = true;
        return 0;
}

/* Matches leading components of an absolute path against `prefix` ("proc/self"), allowing
 * repeated slashes; returns what follows (possibly "") or NULL. */
static const char *match_prefix(const char *path, const char *prefix) {
        const char *p = path;
        for (const char *q = prefix; *q;) {
                while (*p == '/')
                        p++;
                size_t n = strcspn(q, "/");
                if (strncmp(p, q, n) != 0 || (p[n] != '/' && p[n] != '\0'))
                        return NULL;
                p += n;
                q += n;
                while (*q == '/')
                        q++;
        }
        while (*p == '/')
                p++;
        return p;
}

/* Rewrites the names of "the current process" to the caller's /proc entries. Returns 1 and fills
 * *ret when `path` starts with one, 0 otherwise. */
static int resolve_self_alias(request *r, const char *path, resolved *ret) {
        static const struct {
                const char *prefix;
                bool thread; /* /proc/<tgid>/task/<tid> instead of /proc/<tgid> */
                const char *sub, *fd;
        } aliases[] = {
                { "proc/self", false, NULL, NULL },  { "proc/thread-self", true, NULL, NULL },
                { "dev/fd", false, "fd", NULL },     { "dev/stdin", false, "fd", "0" },
                { "dev/stdout", false, "fd", "1" },  { "dev/stderr", false, "fd", "2" },
        };
        for (size_t i = 0; i < ELEMENTSOF(aliases); i++) {
                const char *rest = match_prefix(path, aliases[i].prefix);
                if (!rest)
                        continue;
                char base[64], rel[PATH_MAX];
                if (aliases[i].thread)
                        (void) snprintf(base, sizeof(base), "%d/task/%u", r->tgid, r->n->pid);
                else
                        (void) snprintf(base, sizeof(base), "%d%s%s", r->tgid,
                                        aliases[i].sub ? "/" : "", aliases[i].sub ? aliases[i].sub : "");
                int len = snprintf(rel, sizeof(rel), "%s%s%s", aliases[i].fd ? aliases[i].fd : "",
                                   aliases[i].fd && *rest ? "/" : "", rest);
                if (len < 0 || (size_t) len >= sizeof(rel))
                        return -ENAMETOOLONG;
                _cleanup_close_ int basefd = openat(r->s->proc_fd, base,
                                                    O_PATH | O_DIRECTORY | O_CLOEXEC);
                if (basefd < 0)
                        return errno == ENOENT ? -ESRCH : -errno;
                int e = walk_proc(r, basefd, rel, ret);
                return e < 0 ? e : 1;
        }
        return 0;
}

/* Where a relative path starts: the caller's cwd or its dirfd, reopened from /proc/<tid>, which
 * is bound to the task (these magic links are ours to follow: we built the path). */
static int open_start(request *r, int dirfd) {
        char name[32];
        if (dirfd == AT_FDCWD)
                strcpy(name, "cwd");
        else if (dirfd < 0)
                return -EBADF;
        else
                (void) snprintf(name, sizeof(name), "fd/%d", dirfd);
        int fd = openat(r->tid_fd, name, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT && dirfd != AT_FDCWD ? -EBADF : -errno;
        return fd;
}

/* A bare name ("foo.o", as compilers write them): its parent is the start directory itself, an
 * O_PATH directory fd already, so it is taken as the parent rather than reopened as "." (what
 * resolve_general would do: the same directory, two syscalls more). The procfs rule holds. */
static int take_start(request *r, const char *path, int *start, resolved *ret) {
        char dir[PATH_MAX];
        int e = split_last(path, dir, ret);
        if (e < 0)
                return e;
        if (is_procfs(*start))
                return request_refuse(r, path, "procfs outside the caller's own /proc/<pid>");
        ret->dir_fd = TAKE_FD(*start);
        ret->in_target_proc = false;
        return 0;
}

static void resolved_reset(resolved *ret) {
        ret->path[0] = '\0';
        ret->trailing_slash = false;
        ret->in_target_proc = false;
        ret->dir_fd = safe_close(ret->dir_fd);
}

int resolve_parent(request *r, int dirfd, const char *path, resolved *ret) {
        resolved_reset(ret);
        if (!r->validated)
                return -EPERM; /* acting before ID_VALID would trust a possibly recycled tid */
        if (path[0] == '\0')
                return -ENOENT;
        if (path[0] == '/') {
                int e = resolve_self_alias(r, path, ret);
                if (e != 0)
                        return e < 0 ? e : 0;
                /* The supervisor shares the caller's root and mount namespace (the filter denies
                 * chroot, pivot_root, setns, unshare and mount), so an absolute path means the
                 * same thing here. */
                return resolve_general(r, AT_FDCWD, path, ret);
        }
        _cleanup_close_ int start = open_start(r, dirfd);
        if (start < 0)
                return start;
        if (!strchr(path, '/'))
                return take_start(r, path, &start, ret);
        return resolve_general(r, start, path, ret);
}

int resolve_parent_at(request *r, int startfd, const char *path, resolved *ret) {
        resolved_reset(ret);
        if (!r->validated)
                return -EPERM;
        if (path[0] == '\0')
                return -ENOENT;
        if (path[0] == '/')
                return resolve_parent(r, AT_FDCWD, path, ret);
        return resolve_general(r, startfd, path, ret);
}

int resolved_path(request *r, resolved *res) {
        char dir[PATH_MAX];
        /* The kernel's own name for the directory (d_path), relative to our root, which is the
         * caller's. The worker's cwd is private (CLONE_FS was unshared), so fchdir() + getcwd()
         * is a cheap way to ask: no /proc lookup. getcwd() fails with ENOENT for a deleted
         * directory (which accepts no new names anyway) and returns "(unreachable)/..." for one
         * outside our root, which cannot be checked: nothing is created in either case. */
        if (fchdir(res->dir_fd) < 0 || !getcwd(dir, sizeof(dir)))
                return errno == ERANGE ? -ENAMETOOLONG : -errno;
        if (dir[0] != '/')
                return -ENOENT;
        int len = snprintf(res->path, sizeof(res->path), "%s%s%s", dir, streq(dir, "/") ? "" : "/",
                           res->name);
        if (len < 0 || (size_t) len >= sizeof(res->path))
                return -ENAMETOOLONG;
        return 0;
}

/* Unicode case folding (ext4/f2fs/tmpfs "casefold" directories) can make a non-ASCII name equal
 * to a denied ASCII one (U+212A KELVIN SIGN folds to 'k'). Only filesystems known to fold nothing
 * beyond ASCII, or directories without the casefold flag, get exact byte matching. */
unsigned resolved_check_flags(const resolved *res) {
        bool ascii = true;
        for (const char *c = res->name; *c; c++)
                if ((unsigned char) *c >= 0x80)
                        ascii = false;
        if (ascii)
                return NAME_CHECK_EXACT_BYTES;
        struct statfs sf;
        if (fstatfs(res->dir_fd, &sf) < 0)
                return 0;
        switch ((unsigned long) sf.f_type) {
        case BTRFS_SUPER_MAGIC:
        case XFS_SUPER_MAGIC: /* ascii-ci folds ASCII only, which the rules always do */
                return NAME_CHECK_EXACT_BYTES;
        case EXT4_SUPER_MAGIC:
        case F2FS_SUPER_MAGIC:
        case TMPFS_MAGIC:
        case OVERLAYFS_SUPER_MAGIC: /* reports the flags of the real directory */
                break;
        default:
                return 0; /* unknown: may fold (vfat, exfat, ntfs3, cifs, 9p to a macOS host) */
        }
        _cleanup_close_ int fd = openat(res->dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        int attr = 0;
        if (fd < 0 || ioctl(fd, FS_IOC_GETFLAGS_, &attr) < 0)
                return 0;
        return attr & FS_CASEFOLD_FL_ ? 0 : NAME_CHECK_EXACT_BYTES;
}
