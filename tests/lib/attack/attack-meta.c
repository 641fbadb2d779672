/* SPDX-License-Identifier: Apache-2.0 */
/* Metadata changes (issue 11): chmod, chown, utimes and extended attributes by every route the
 * kernel offers — the path, the l* form, the f* form on a read-only fd and on an O_PATH fd, the
 * *at form with AT_EMPTY_PATH, fchmodat2, a magic link, a symlink of an allowed name.
 *
 *   meta ROUTE PATH        the change must be refused (0), else 1; the file is restored
 *   allow-meta ROUTE PATH  the change must work (0), else 1
 *
 * "Worked" is the kernel's answer 0; for removexattr also ENODATA (the call reached the file
 * system and found no attribute: nothing stood in the way). The file's mode, times and the
 * test attribute are put back after a change that worked, so the driver's snapshots stay valid. */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <utime.h>

#include "attack.h"

#define XNAME "user.cordon-it"
#define NR_FCHMODAT2 452
#define NR_SETXATTRAT 463
#define NR_REMOVEXATTRAT 466

struct xattr_args_ { /* <linux/xattr.h>, 6.13 */
        uint64_t value;
        uint32_t size;
        uint32_t flags;
};

static struct stat before;

static int res(long r) {
        return r < 0 ? -errno : 0;
}

/* An fd on `p` opened `flags` (O_RDONLY or O_PATH); -errno when even that fails. */
static int with_fd(const char *p, int flags) {
        int fd = open(p, flags | O_CLOEXEC);
        return fd < 0 ? -errno : fd;
}

static mode_t new_mode(void) {
        return (before.st_mode & 07777) ^ 0044; /* 0600 -> 0644: readable by every user */
}

static const struct timespec old_times[2] = { { .tv_sec = 86400 }, { .tv_sec = 86400 } };

/* ---- routes ------------------------------------------------------------------------------------ */

#define FD_ROUTE(name, flags, call)                                                               \
        static int name(const char *p) {                                                          \
                int fd = with_fd(p, flags);                                                       \
                if (fd < 0)                                                                       \
                        return fd;                                                                \
                int r = res(call);                                                                \
                (void) close(fd);                                                                 \
                return r;                                                                         \
        }

static int r_chmod(const char *p) { return res(chmod(p, new_mode())); }
static int r_fchmodat(const char *p) { return res(fchmodat(AT_FDCWD, p, new_mode(), 0)); }
static int r_fchmodat2(const char *p) {
        return res(syscall(NR_FCHMODAT2, AT_FDCWD, p, new_mode(), AT_SYMLINK_NOFOLLOW));
}
FD_ROUTE(r_fchmod_ro, O_RDONLY, fchmod(fd, new_mode()))
FD_ROUTE(r_fchmod_path, O_PATH, fchmod(fd, new_mode()))
FD_ROUTE(r_fchmodat2_empty, O_PATH, syscall(NR_FCHMODAT2, fd, "", new_mode(), AT_EMPTY_PATH))
static int r_chmod_procfd(const char *p) {
        int fd = with_fd(p, O_PATH);
        if (fd < 0)
                return fd;
        char proc[64];
        snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
        int r = res(chmod(proc, new_mode()));
        (void) close(fd);
        return r;
}
/* A symlink of an allowed name in the cwd (the workspace) pointing at the file. */
static int r_chmod_symlink(const char *p) {
        char link[64];
        snprintf(link, sizeof link, "cordon-it-lnk-meta-%d", (int) getpid());
        if (symlink(p, link) < 0)
                return -errno;
        int r = res(chmod(link, new_mode()));
        (void) unlink(link);
        return r;
}

static int r_chown(const char *p) { return res(chown(p, getuid(), getgid())); }
static int r_lchown(const char *p) { return res(lchown(p, getuid(), getgid())); }
FD_ROUTE(r_fchown_ro, O_RDONLY, fchown(fd, getuid(), getgid()))
FD_ROUTE(r_fchownat_empty, O_PATH, fchownat(fd, "", getuid(), getgid(), AT_EMPTY_PATH))

static int r_utime(const char *p) {
        struct utimbuf u = { 86400, 86400 };
        return res(utime(p, &u));
}
static int r_utimes(const char *p) {
        struct timeval tv[2] = { { 86400, 0 }, { 86400, 0 } };
        return res(utimes(p, tv));
}
static int r_futimesat(const char *p) {
        struct timeval tv[2] = { { 86400, 0 }, { 86400, 0 } };
        return res(syscall(SYS_futimesat, AT_FDCWD, p, tv));
}
static int r_utimensat(const char *p) { return res(utimensat(AT_FDCWD, p, old_times, 0)); }
static int r_utimensat_nofollow(const char *p) {
        return res(utimensat(AT_FDCWD, p, old_times, AT_SYMLINK_NOFOLLOW));
}
static int r_touch_now(const char *p) { return res(utimensat(AT_FDCWD, p, NULL, 0)); }
FD_ROUTE(r_futimens_ro, O_RDONLY, futimens(fd, old_times))
FD_ROUTE(r_utimensat_empty, O_PATH, utimensat(fd, "", old_times, AT_EMPTY_PATH))
FD_ROUTE(r_utimensat_nullpath, O_RDONLY, syscall(SYS_utimensat, fd, NULL, old_times, 0))

static int r_setxattr(const char *p) { return res(setxattr(p, XNAME, "x", 1, 0)); }
/* A value of several pages (the supervisor copies it in steps). ext4 without ea_inode takes at
 * most a block: ENOSPC then means the call reached the file system, as for ENODATA below. */
static int r_setxattr_big(const char *p) {
        static char big[12000];
        memset(big, 'v', sizeof big);
        int r = res(setxattr(p, XNAME, big, sizeof big, 0));
        if (r == -ENOSPC || r == -E2BIG)
                return 0;
        char back[sizeof big];
        if (r == 0 && (getxattr(p, XNAME, back, sizeof back) != (ssize_t) sizeof big ||
                       memcmp(back, big, sizeof big) != 0))
                return -EIO; /* set, but not to what was asked */
        return r;
}
static int r_lsetxattr(const char *p) { return res(lsetxattr(p, XNAME, "x", 1, 0)); }
FD_ROUTE(r_fsetxattr_ro, O_RDONLY, fsetxattr(fd, XNAME, "x", 1, 0))
FD_ROUTE(r_fsetxattr_path, O_PATH, fsetxattr(fd, XNAME, "x", 1, 0))
static int r_setxattrat(const char *p) {
        struct xattr_args_ a = { .value = (uint64_t) (uintptr_t) "x", .size = 1 };
        return res(syscall(NR_SETXATTRAT, AT_FDCWD, p, 0, XNAME, &a, sizeof(a)));
}
/* ENODATA: the call reached the attribute table (no cordon refusal stood in the way). */
static int gone(int r) {
        return r == -ENODATA ? 0 : r;
}
static int r_removexattr(const char *p) { return gone(res(removexattr(p, XNAME))); }
static int r_lremovexattr(const char *p) { return gone(res(lremovexattr(p, XNAME))); }
FD_ROUTE(r_fremovexattr_ro, O_RDONLY, fremovexattr(fd, XNAME))
static int r_fremovexattr_ro_gone(const char *p) { return gone(r_fremovexattr_ro(p)); }
static int r_removexattrat(const char *p) {
        return gone(res(syscall(NR_REMOVEXATTRAT, AT_FDCWD, p, 0, XNAME)));
}

/* chattr +d: FS_NODUMP_FL, which the owner may set, through both ioctl interfaces. */
static int r_setflags(const char *p) {
        int fd = with_fd(p, O_RDONLY | O_NONBLOCK);
        if (fd < 0)
                return fd;
        int flags = 0;
        int r = res(ioctl(fd, FS_IOC_GETFLAGS, &flags));
        if (r == 0) {
                int set = flags | FS_NODUMP_FL;
                r = res(ioctl(fd, FS_IOC_SETFLAGS, &set));
                if (r == 0)
                        (void) ioctl(fd, FS_IOC_SETFLAGS, &flags);
        }
        (void) close(fd);
        return r;
}
static int r_fssetxattr(const char *p) {
        int fd = with_fd(p, O_RDONLY | O_NONBLOCK);
        if (fd < 0)
                return fd;
        struct fsxattr fx, set;
        int r = res(ioctl(fd, FS_IOC_FSGETXATTR, &fx));
        if (r == 0) {
                set = fx;
                set.fsx_xflags |= FS_XFLAG_NODUMP;
                r = res(ioctl(fd, FS_IOC_FSSETXATTR, &set));
                if (r == 0)
                        (void) ioctl(fd, FS_IOC_FSSETXATTR, &fx);
        }
        (void) close(fd);
        return r;
}

typedef struct meta_route {
        const char *name;
        int (*fn)(const char *p);
} meta_route;

static const meta_route routes[] = {
        { "chmod", r_chmod },                   { "fchmodat", r_fchmodat },
        { "fchmodat2-nofollow", r_fchmodat2 },  { "fchmod-ro", r_fchmod_ro },
        { "fchmod-opath", r_fchmod_path },      { "fchmodat2-empty", r_fchmodat2_empty },
        { "chmod-procfd", r_chmod_procfd },     { "chmod-symlink", r_chmod_symlink },
        { "chown", r_chown },                   { "lchown", r_lchown },
        { "fchown-ro", r_fchown_ro },           { "fchownat-empty", r_fchownat_empty },
        { "utime", r_utime },                   { "utimes", r_utimes },
        { "futimesat", r_futimesat },           { "utimensat", r_utimensat },
        { "utimensat-nofollow", r_utimensat_nofollow }, { "touch-now", r_touch_now },
        { "futimens-ro", r_futimens_ro },       { "utimensat-empty", r_utimensat_empty },
        { "utimensat-nullpath", r_utimensat_nullpath },
        { "setxattr", r_setxattr },             { "lsetxattr", r_lsetxattr },
        { "setxattr-big", r_setxattr_big },
        { "fsetxattr-ro", r_fsetxattr_ro },     { "fsetxattr-opath", r_fsetxattr_path },
        { "setxattrat", r_setxattrat },         { "removexattr", r_removexattr },
        { "lremovexattr", r_lremovexattr },     { "fremovexattr-ro", r_fremovexattr_ro_gone },
        { "removexattrat", r_removexattrat },   { "chattr-nodump", r_setflags },
        { "fssetxattr-nodump", r_fssetxattr },  { NULL, NULL },
};

static const meta_route *find(const char *name) {
        for (const meta_route *r = routes; r->name; r++)
                if (strcmp(r->name, name) == 0)
                        return r;
        return NULL;
}

/* Puts back what a change that worked changed (only possible outside the sandbox, or where the
 * change was allowed). */
static void restore(const char *p) {
        struct timespec t[2] = { before.st_atim, before.st_mtim };
        if (fchmodat(AT_FDCWD, p, before.st_mode & 07777, 0) < 0 || utimensat(AT_FDCWD, p, t, 0) < 0)
                fprintf(stderr, "attack: %s: cannot restore %s: %s\n", attack_current, p,
                        strerror(errno));
        (void) removexattr(p, XNAME);
}

/* A file the sandbox hides (the native backend's secrets) cannot even be seen: *ret is that
 * errno. The driver's unconfined control proves the file exists on the host. */
static int run(const char *route, const char *p, int *ret) {
        const meta_route *r = find(route);
        if (!r)
                return harness("unknown route %s", route);
        if (stat(p, &before) < 0) {
                *ret = -errno;
                return -1;
        }
        *ret = r->fn(p);
        if (*ret == 0)
                restore(p);
        return -1;
}

static int cmd_meta(int argc, char **argv) {
        int r = 0, h = run(argv[0], argv[1], &r);
        if (h >= 0)
                return h;
        if (r == 0)
                return escaped("%s %s succeeded", argv[0], argv[1]);
        return refused("%s %s: %s", argv[0], argv[1], strerror(-r));
}

static int cmd_allow_meta(int argc, char **argv) {
        int r = 0, h = run(argv[0], argv[1], &r);
        if (h >= 0)
                return h;
        if (r == 0)
                return worked("%s %s", argv[0], argv[1]);
        return failed("%s %s: %s", argv[0], argv[1], strerror(-r));
}

/* ---- races ---------------------------------------------------------------------------------- */

static atomic_bool race_stop;
static char race_buf[16] = "race-a";

/* Flips the path buffer between race-a (a workspace file) and race-b (a symlink to the target),
 * and the symlink race-sw between the two, by rename: a supervisor that checked one and let the
 * kernel act on the other would change the target. */
static void *race_flipper(void *arg) {
        (void) arg;
        volatile char *b = race_buf;
        while (!atomic_load(&race_stop)) {
                for (int i = 0; i < 64; i++)
                        b[5] = 'b';
                for (int i = 0; i < 64; i++)
                        b[5] = 'a';
                /* Failures only make the race less dense: the verdict is the target's state. */
                int e = rename("race-sw-bad", "race-sw");
                e |= symlink("race-b", "race-sw-bad");
                e |= rename("race-sw-ok", "race-sw");
                e |= symlink("race-a", "race-sw-ok");
                (void) e;
        }
        return NULL;
}

static void race_cleanup(void) {
        const char *names[] = { "race-a", "race-b", "race-sw", "race-sw-ok", "race-sw-bad" };
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
                (void) unlink(names[i]);
}

/* meta-race SECONDS TARGET: chmod and utimensat through the flipping names; TARGET's mode and
 * times must never change, and the workspace file must (or the attempt proves nothing). */
static int cmd_meta_race(int argc, char **argv) {
        const char *target = argv[1];
        struct stat t0, t1;
        if (stat(target, &t0) < 0)
                return refused("%s: not even visible (%s)", target, strerror(errno));
        race_cleanup();
        int fd = open("race-a", O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
        if (fd < 0 || symlink(target, "race-b") < 0 || symlink("race-a", "race-sw-ok") < 0 ||
            symlink("race-b", "race-sw-bad") < 0 || symlink("race-a", "race-sw") < 0)
                return harness("set-up in the cwd: %s", strerror(errno));
        (void) close(fd);
        pthread_t t;
        atomic_store(&race_stop, false);
        if (pthread_create(&t, NULL, race_flipper, NULL) != 0)
                return harness("pthread_create");
        long ok = 0, attempts = 0;
        struct timespec end, now;
        clock_gettime(CLOCK_MONOTONIC, &end);
        end.tv_sec += atoi(argv[0]);
        mode_t m = (t0.st_mode & 07777) ^ 0044;
        do {
                ok += chmod(race_buf, m) == 0;
                ok += chmod("race-sw", m) == 0;
                ok += utimensat(AT_FDCWD, "race-sw", old_times, 0) == 0;
                attempts += 3;
                clock_gettime(CLOCK_MONOTONIC, &now);
        } while (now.tv_sec < end.tv_sec || (now.tv_sec == end.tv_sec && now.tv_nsec < end.tv_nsec));
        atomic_store(&race_stop, true);
        pthread_join(t, NULL);
        race_cleanup();
        if (stat(target, &t1) < 0)
                return harness("stat %s: %s", target, strerror(errno));
        bool changed = t1.st_mode != t0.st_mode || t1.st_mtim.tv_sec != t0.st_mtim.tv_sec ||
                       t1.st_mtim.tv_nsec != t0.st_mtim.tv_nsec;
        if (changed) {
                before = t0;
                restore(target);
                return escaped("%s changed (%ld of %ld calls worked)", target, ok, attempts);
        }
        if (ok == 0)
                return harness("no call worked on the workspace file either (%ld attempts)", attempts);
        return refused("%s unchanged; %ld of %ld calls worked on the workspace file", target, ok,
                       attempts);
}

const attack_cmd attack_meta_cmds[] = {
        { "meta-race", "SECONDS TARGET", 2, cmd_meta_race },
        { "meta", "ROUTE PATH", 2, cmd_meta },
        { "allow-meta", "ROUTE PATH", 2, cmd_allow_meta },
        { NULL, NULL, 0, NULL },
};
