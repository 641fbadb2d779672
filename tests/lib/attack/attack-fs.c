/* SPDX-License-Identifier: Apache-2.0 */
/*
 * attack: filesystem escapes. Reading secrets by every resolution route, writing outside the
 * writable roots, and bringing a protected or denied name into existence by every syscall that can
 * create a name (the creation-rule supervisor's whole surface), plus the allowed counterparts.
 */
#include <dirent.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "attack.h"

#ifndef __NR_openat2
#define __NR_openat2 437
#endif
#define X32_SYSCALL_BIT 0x40000000

static bool exists(const char *p) {
        struct stat st;
        return lstat(p, &st) == 0;
}

/* ---- reading secrets ------------------------------------------------------------------------ */

/* Returns 1 when the fd yields the marker, 0 otherwise. Closes fd. */
static int fd_leaks(int fd) {
        char buf[4096];
        long n = read_some(fd, buf, sizeof buf);
        close(fd);
        return n > 0 && has_marker(buf);
}

static long sys_openat2(int dirfd, const char *path, unsigned long long flags,
                        unsigned long long mode, unsigned long long resolve) {
        struct open_how how = { .flags = flags, .mode = mode, .resolve = resolve };
        return syscall(__NR_openat2, dirfd, path, &how, sizeof how);
}

/* One way of opening the secret; returns an fd or -errno. */
typedef struct read_route {
        const char *name;
        int (*open_fn)(const char *path);
} read_route;

static int rr_plain(const char *p) {
        int fd = open(p, O_RDONLY | O_CLOEXEC);
        return fd < 0 ? -errno : fd;
}

static int rr_proc_root(const char *p) {
        char buf[PATH_MAX];
        snprintf(buf, sizeof buf, "/proc/self/root%s", p);
        return rr_plain(buf);
}

static int rr_proc1_root(const char *p) {
        char buf[PATH_MAX];
        snprintf(buf, sizeof buf, "/proc/1/root%s", p);
        return rr_plain(buf);
}

static int rr_dirfd(const char *p) {
        char a[PATH_MAX], b[PATH_MAX];
        snprintf(a, sizeof a, "%s", p);
        snprintf(b, sizeof b, "%s", p);
        int dfd = open(dirname(a), O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return -errno;
        int fd = openat(dfd, basename(b), O_RDONLY | O_CLOEXEC);
        int e = errno;
        close(dfd);
        return fd < 0 ? -e : fd;
}

static int rr_opath_reopen(const char *p) {
        int pfd = open(p, O_PATH | O_CLOEXEC);
        if (pfd < 0)
                return -errno;
        char buf[64];
        snprintf(buf, sizeof buf, "/proc/self/fd/%d", pfd);
        int fd = open(buf, O_RDONLY | O_CLOEXEC);
        int e = errno;
        close(pfd);
        return fd < 0 ? -e : fd;
}

#define OPENAT2_ROUTE(fn, dir, resolve)                                                           \
        static int fn(const char *p) {                                                            \
                int dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);                            \
                if (dfd < 0)                                                                      \
                        return -errno;                                                            \
                long fd = sys_openat2(dfd, p[0] == '/' && (resolve) ? p + 1 : p,                 \
                                      O_RDONLY | O_CLOEXEC, 0, (resolve));                        \
                int e = errno;                                                                    \
                close(dfd);                                                                       \
                return fd < 0 ? -e : (int) fd;                                                    \
        }
OPENAT2_ROUTE(rr_openat2, "/", 0)
OPENAT2_ROUTE(rr_openat2_beneath, "/", RESOLVE_BENEATH)
OPENAT2_ROUTE(rr_openat2_in_root, "/", RESOLVE_IN_ROOT)
OPENAT2_ROUTE(rr_openat2_nosym, "/", RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)
OPENAT2_ROUTE(rr_openat2_noxdev, "/", RESOLVE_NO_XDEV)

/* O_CREAT on an existing file is an open the supervisor performs on the caller's behalf: if its
 * view of the file system were wider than the command's, this would hand out the secret. */
static int rr_creat_rdonly(const char *p) {
        int fd = open(p, O_RDONLY | O_CREAT | O_CLOEXEC, 0644);
        return fd < 0 ? -errno : fd;
}

static int rr_creat_rdwr(const char *p) {
        int fd = open(p, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        return fd < 0 ? -errno : fd;
}

static const read_route read_routes[] = {
        { "open", rr_plain },
        { "open O_CREAT|O_RDONLY", rr_creat_rdonly },
        { "open O_CREAT|O_RDWR", rr_creat_rdwr },
        { "/proc/self/root", rr_proc_root },
        { "/proc/1/root", rr_proc1_root },
        { "dirfd+openat", rr_dirfd },
        { "O_PATH+/proc/self/fd", rr_opath_reopen },
        { "openat2", rr_openat2 },
        { "openat2 RESOLVE_BENEATH", rr_openat2_beneath },
        { "openat2 RESOLVE_IN_ROOT", rr_openat2_in_root },
        { "openat2 RESOLVE_NO_SYMLINKS", rr_openat2_nosym },
        { "openat2 RESOLVE_NO_XDEV", rr_openat2_noxdev },
};

/* read PATH: every route must fail to yield the marker. */
static int cmd_read(int argc, char **argv) {
        const char *path = argv[0];
        int leaks = 0;
        for (size_t i = 0; i < sizeof read_routes / sizeof read_routes[0]; i++) {
                int fd = read_routes[i].open_fn(path);
                if (fd < 0) {
                        fprintf(stderr, "  %s: %s\n", read_routes[i].name, strerror(-fd));
                        continue;
                }
                int l = fd_leaks(fd);
                fprintf(stderr, "  %s: opened, %s\n", read_routes[i].name,
                        l ? "SECRET READ" : "no secret content");
                leaks += l;
        }
        if (leaks)
                return escaped("%s: secret read by %d route(s)", path, leaks);
        return refused("%s: no route read the secret", path);
}

/* read-late PATH TIMEOUT_MS: keeps trying to read PATH, which the host creates while the sandbox
 * runs (a secret that did not exist at launch, e.g. `aws configure` run meanwhile). */
static int cmd_read_late(int argc, char **argv) {
        long left = atol(argv[1]);
        int tries = 0;
        for (; left > 0; left -= 20, tries++) {
                int fd = open(argv[0], O_RDONLY | O_CLOEXEC);
                if (fd >= 0 && fd_leaks(fd))
                        return escaped("%s became readable after %d tries", argv[0], tries);
                usleep(20000);
        }
        return refused("%s never became readable (%d tries)", argv[0], tries);
}

/* Builds a complete git directory DIR under an allowed name: config with core.fsmonitor (the
 * command host git runs on `git status`), HEAD, objects, refs. Returns 0 or a harness status. */
static int make_evil_gitdir(const char *dir) {
        char p[PATH_MAX];
        static const char *const subdirs[] = { "", "/objects", "/refs", "/refs/heads" };
        for (size_t i = 0; i < sizeof subdirs / sizeof subdirs[0]; i++) {
                snprintf(p, sizeof p, "%s%s", dir, subdirs[i]);
                if (mkdir(p, 0755) < 0 && errno != EEXIST)
                        return harness("mkdir %s: %s", p, strerror(errno));
        }
        snprintf(p, sizeof p, "%s/HEAD", dir);
        int fd = open(p, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0)
                return harness("create %s: %s", p, strerror(errno));
        write_ignored(fd, "ref: refs/heads/main\n", 21);
        close(fd);
        snprintf(p, sizeof p, "%s/config", dir);
        fd = open(p, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0 && errno == EACCES) /* a repository's config written in place (git-repos.md) */
                return refused("create %s: %s", p, strerror(errno));
        if (fd < 0)
                return harness("create %s: %s", p, strerror(errno));
        static const char cfg[] = "[core]\n\trepositoryformatversion = 0\n"
                                  "\tfsmonitor = \"echo cordon-it-fsmonitor-ran >&2; false\"\n";
        write_ignored(fd, cfg, sizeof cfg - 1);
        close(fd);
        return 0;
}

/* gitfile DIR: a crafted git directory, then a `.git` *file* ("gitdir: DIR") pointing at it. Host
 * git in this workspace would obey DIR/config. */
static int cmd_gitfile(int argc, char **argv) {
        const char *dir = argv[0];
        char p[PATH_MAX];
        if (exists(".git"))
                return harness(".git exists in the cwd");
        int r = make_evil_gitdir(dir);
        if (r != 0)
                return r;
        int fd = open(".git", O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
        if (fd < 0)
                return refused("create the .git file: %s", strerror(errno));
        snprintf(p, sizeof p, "gitdir: %s\n", dir);
        write_ignored(fd, p, strlen(p));
        close(fd);
        return escaped("a .git file now points git at %s (with core.fsmonitor)", dir);
}

/* commondir DIR: in a workspace whose .git exists, a crafted git directory and then
 * .git/commondir naming it: git takes config (and objects, refs) from the common dir, so host git
 * would obey DIR/config although .git/config itself is untouched. */
static int cmd_commondir(int argc, char **argv) {
        const char *dir = argv[0];
        char p[PATH_MAX];
        if (!exists(".git/HEAD"))
                return harness("no .git directory in the cwd");
        if (exists(".git/commondir"))
                return harness(".git/commondir exists already");
        int r = make_evil_gitdir(dir);
        if (r != 0)
                return r;
        int fd = open(".git/commondir", O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
        if (fd < 0)
                return refused("create .git/commondir: %s", strerror(errno));
        snprintf(p, sizeof p, "../%s\n", dir);
        write_ignored(fd, p, strlen(p));
        close(fd);
        return escaped(".git/commondir now points git at %s (with core.fsmonitor)", dir);
}

/* list DIR NAME: the names inside a hidden secret directory must not be visible either. */
static int cmd_list(int argc, char **argv) {
        DIR *d = opendir(argv[0]);
        if (!d)
                return refused("opendir %s: %s", argv[0], strerror(errno));
        bool seen = false;
        for (struct dirent *e; (e = readdir(d));)
                seen |= strcmp(e->d_name, argv[1]) == 0;
        closedir(d);
        if (seen)
                return escaped("%s lists %s", argv[0], argv[1]);
        return refused("%s opened but %s not listed", argv[0], argv[1]);
}

/* link-secret SRC DST: a hard link to a hidden secret must not be creatable. */
static int cmd_link_secret(int argc, char **argv) {
        if (link(argv[0], argv[1]) < 0)
                return refused("link %s -> %s: %s", argv[0], argv[1], strerror(errno));
        int fd = open(argv[1], O_RDONLY | O_CLOEXEC);
        int l = fd >= 0 && fd_leaks(fd);
        (void) unlink(argv[1]); /* best effort; the driver checks the host too */
        if (l)
                return escaped("hard link %s reads the secret", argv[1]);
        return escaped("hard link %s -> %s was created (no content read)", argv[1], argv[0]);
}

/* ---- creating names ------------------------------------------------------------------------- */

static char aux_file[64], aux_dir[64], aux_link[64];

static void aux_names(void) {
        snprintf(aux_file, sizeof aux_file, "cordon-it-aux-%d", (int) getpid());
        snprintf(aux_dir, sizeof aux_dir, "cordon-it-auxdir-%d", (int) getpid());
        snprintf(aux_link, sizeof aux_link, "cordon-it-lnk-%d", (int) getpid());
}

static void aux_cleanup(void) {
        (void) unlink(aux_file);
        (void) rmdir(aux_dir);
        (void) unlink(aux_link);
}

/* An allowed, empty regular file in the cwd (the workspace), source of rename/link routes. */
static int make_aux_file(void) {
        int fd = open(aux_file, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0)
                return -errno;
        write_ignored(fd, "aux\n", 4); /* content is irrelevant */
        close(fd);
        return 0;
}

static int ret_fd(int fd) {
        if (fd < 0)
                return -errno;
        write_ignored(fd, "x\n", 2);
        close(fd);
        return 0;
}

static int ret(int r) {
        return r < 0 ? -errno : 0;
}

static int r_open(const char *p) {
        return ret_fd(open(p, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0644));
}
static int r_open_excl(const char *p) {
        return ret_fd(open(p, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600));
}
static int r_creat(const char *p) {
        return ret_fd(creat(p, 0644));
}
static int r_openat(const char *p) {
        char a[PATH_MAX], b[PATH_MAX];
        snprintf(a, sizeof a, "%s", p);
        snprintf(b, sizeof b, "%s", p);
        int dfd = open(dirname(a), O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return -errno;
        int r = ret_fd(openat(dfd, basename(b), O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
        close(dfd);
        return r;
}
static int r_openat2(const char *p) {
        return ret_fd((int) sys_openat2(AT_FDCWD, p, O_CREAT | O_WRONLY | O_CLOEXEC, 0644, 0));
}
static int r_mkdir(const char *p) {
        return ret(mkdir(p, 0755));
}
static int r_mknod(const char *p) {
        return ret(mknod(p, S_IFREG | 0644, 0));
}
static int r_mkfifo(const char *p) {
        return ret(mkfifo(p, 0644));
}
static int r_rename(const char *p) {
        int r = make_aux_file();
        return r < 0 ? r : ret(rename(aux_file, p));
}
static int r_rename_noreplace(const char *p) {
        int r = make_aux_file();
        return r < 0 ? r : ret(renameat2(AT_FDCWD, aux_file, AT_FDCWD, p, RENAME_NOREPLACE));
}
static int r_rename_dir(const char *p) {
        if (mkdir(aux_dir, 0755) < 0)
                return -errno;
        return ret(rename(aux_dir, p));
}
static int r_link(const char *p) {
        int r = make_aux_file();
        return r < 0 ? r : ret(link(aux_file, p));
}
static int r_symlink(const char *p) {
        return ret(symlink("cordon-it-symlink-target", p));
}
/* A dangling symlink with an allowed name, then O_CREAT through it: the kernel would create the
 * link's target, whose name was never passed to any syscall. */
static int r_dangling(const char *p) {
        if (symlink(p, aux_link) < 0)
                return -errno;
        return ret_fd(open(aux_link, O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
}
/* An anonymous O_TMPFILE in the workspace, then given a name by linkat. */
static int r_tmpfile(const char *p) {
        int fd = open(".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
        if (fd < 0)
                return -errno;
        write_ignored(fd, "tmp\n", 4);
        int r = ret(linkat(fd, "", AT_FDCWD, p, AT_EMPTY_PATH));
        close(fd);
        return r;
}
static int r_tmpfile_proc(const char *p) {
        int fd = open(".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
        if (fd < 0)
                return -errno;
        char buf[64];
        snprintf(buf, sizeof buf, "/proc/self/fd/%d", fd);
        int r = ret(linkat(AT_FDCWD, buf, AT_FDCWD, p, AT_SYMLINK_FOLLOW));
        close(fd);
        return r;
}
static int r_bind(const char *p) {
        int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (s < 0)
                return -errno;
        struct sockaddr_un a = { .sun_family = AF_UNIX };
        snprintf(a.sun_path, sizeof a.sun_path, "%s", p);
        int r = ret(bind(s, (struct sockaddr *) &a, sizeof a));
        close(s);
        return r;
}
/* The x32 ABI: same syscall numbers with bit 30 set. A filter that checks only the number and not
 * the ABI bit lets this openat through unfiltered. */
static int r_x32(const char *p) {
        return ret_fd((int) syscall(X32_SYSCALL_BIT | __NR_openat, AT_FDCWD, p,
                                    O_CREAT | O_WRONLY, 0644));
}

/* The ia32 ABI via int $0x80: open is number 5 there, which is `fstat` on x86_64; a filter that
 * does not check the audit arch sees the wrong syscall. The path must live below 4 GiB. */
static long ia32_open(const char *lowpath, long flags, long mode) {
        long r;
        __asm__ volatile("int $0x80"
                         : "=a"(r)
                         : "a"(5L), "b"(lowpath), "c"(flags), "d"(mode)
                         : "r8", "r9", "r10", "r11", "memory");
        return r;
}

static int r_ia32(const char *p) {
        char *low = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT,
                         -1, 0);
        if (low == MAP_FAILED)
                return -errno;
        snprintf(low, 4096, "%s", p);
        /* In a child: a kernel without IA32 emulation answers int $0x80 with SIGSEGV. */
        pid_t pid = fork();
        if (pid == 0) {
                long r = ia32_open(low, O_CREAT | O_WRONLY, 0644);
                _exit(r >= 0 ? 0 : (int) (-r & 0x7f));
        }
        int st = 0;
        if (pid < 0 || waitpid(pid, &st, 0) < 0)
                return -errno;
        munmap(low, 4096);
        if (WIFSIGNALED(st))
                return -ENOSYS;
        return WEXITSTATUS(st) == 0 ? 0 : -WEXITSTATUS(st);
}

/* The parent directory as an O_PATH fd, then the name through /proc/self/fd/N/: the supervisor
 * must resolve /proc/self to the caller, not to itself. */
static int r_procfd(const char *p) {
        char a[PATH_MAX], b[PATH_MAX], via[PATH_MAX + 64];
        snprintf(a, sizeof a, "%s", p);
        snprintf(b, sizeof b, "%s", p);
        int dfd = open(dirname(a), O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return -errno;
        snprintf(via, sizeof via, "/proc/self/fd/%d/%s", dfd, basename(b));
        int r = ret_fd(open(via, O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
        close(dfd);
        return r;
}

static void *thread_open(void *arg) {
        return (void *) (intptr_t) r_open(arg);
}

/* From a second thread: the supervisor must look at /proc/<tid>, not /proc/<pid>. */
static int r_thread(const char *p) {
        pthread_t t;
        void *res = NULL;
        if (pthread_create(&t, NULL, thread_open, (void *) p) != 0)
                return -EAGAIN;
        (void) pthread_join(t, &res);
        return (int) (intptr_t) res;
}

/* A non-dumpable caller: an unprivileged supervisor cannot read its memory and must fail closed
 * rather than let the call through. */
static int r_nondumpable(const char *p) {
        (void) prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
        return r_open(p);
}

/* The path straddles a page boundary ("split") or ends exactly at the end of a page followed by
 * an inaccessible one ("page-end"): a supervisor that copies the path must read both pages, and
 * must not read past the NUL. */
static int page_route(const char *p, bool at_end) {
        long pg = sysconf(_SC_PAGESIZE);
        size_t len = strlen(p) + 1;
        if (len > (size_t) pg)
                return -ENAMETOOLONG;
        char *m = mmap(NULL, (size_t) pg * 3, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED)
                return -errno;
        if (mprotect(m + 2 * pg, (size_t) pg, PROT_NONE) < 0)
                return -errno;
        char *s = at_end ? m + 2 * pg - len : m + pg - len / 2;
        memcpy(s, p, len);
        int r = ret_fd(open(s, O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
        munmap(m, (size_t) pg * 3);
        return r;
}
static int r_page_split(const char *p) {
        return page_route(p, false);
}
static int r_page_end(const char *p) {
        return page_route(p, true);
}

typedef struct create_route {
        const char *name;
        int (*fn)(const char *path);
} create_route;

static const create_route create_routes[] = {
        { "open", r_open },         { "open-excl", r_open_excl },
        { "creat", r_creat },       { "openat", r_openat },
        { "openat2", r_openat2 },   { "mkdir", r_mkdir },
        { "mknod", r_mknod },       { "mkfifo", r_mkfifo },
        { "rename", r_rename },     { "rename-noreplace", r_rename_noreplace },
        { "rename-dir", r_rename_dir }, { "link", r_link },
        { "symlink", r_symlink },   { "dangling", r_dangling },
        { "tmpfile", r_tmpfile },   { "tmpfile-proc", r_tmpfile_proc },
        { "bind", r_bind },         { "x32", r_x32 },
        { "ia32", r_ia32 },         { "procfd", r_procfd },
        { "thread", r_thread },     { "nondumpable", r_nondumpable },
        { "page-split", r_page_split }, { "page-end", r_page_end },
        { NULL, NULL },
};

static const create_route *find_route(const create_route *t, const char *name) {
        for (; t->name; t++)
                if (strcmp(t->name, name) == 0)
                        return t;
        return NULL;
}

/* create ROUTE PATH: PATH must not come into existence. */
static int cmd_create(int argc, char **argv) {
        const create_route *r = find_route(create_routes, argv[0]);
        const char *path = argv[1];
        if (!r)
                return harness("unknown route %s", argv[0]);
        if (exists(path))
                return harness("%s exists before the attempt", path);
        aux_names();
        int res = r->fn(path);
        bool now = exists(path);
        aux_cleanup();
        if (now)
                return escaped("%s %s: call %s, and %s now exists", r->name, path,
                               res == 0 ? "succeeded" : strerror(-res), path);
        if (res == 0)
                return escaped("%s %s: call reported success", r->name, path);
        return refused("%s %s: %s", r->name, path, strerror(-res));
}

/* allow-create ROUTE PATH: the allowed counterpart; PATH must exist afterwards. */
static int cmd_allow_create(int argc, char **argv) {
        const create_route *r = find_route(create_routes, argv[0]);
        const char *path = argv[1];
        if (!r)
                return harness("unknown route %s", argv[0]);
        aux_names();
        int res = r->fn(path);
        bool now = exists(path);
        aux_cleanup();
        if (res == 0 && now)
                return worked("%s %s", r->name, path);
        return failed("%s %s: %s%s", r->name, path, res ? strerror(-res) : "reported success",
                      now ? "" : ", and it does not exist");
}

/* ---- modifying existing protected paths ----------------------------------------------------- */

static bool is_dir(const char *p) {
        struct stat st;
        return lstat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int m_write(const char *p) {
        return ret_fd(open(p, O_WRONLY | O_APPEND | O_CLOEXEC));
}
static int m_trunc(const char *p) {
        return ret_fd(open(p, O_WRONLY | O_TRUNC | O_CLOEXEC));
}
static int m_truncate(const char *p) {
        return ret(truncate(p, 0));
}
static int m_rename_over(const char *p) {
        int r = is_dir(p) ? ret(mkdir(aux_dir, 0755)) : make_aux_file();
        return r < 0 ? r : ret(rename(is_dir(p) ? aux_dir : aux_file, p));
}
static int m_exchange(const char *p) {
        int r = is_dir(p) ? ret(mkdir(aux_dir, 0755)) : make_aux_file();
        const char *src = is_dir(p) ? aux_dir : aux_file;
        if (r < 0)
                return r;
        r = ret(renameat2(AT_FDCWD, src, AT_FDCWD, p, RENAME_EXCHANGE));
        if (r == 0) /* undo, so the host keeps its original for the driver's checks */
                (void) renameat2(AT_FDCWD, src, AT_FDCWD, p, RENAME_EXCHANGE);
        return r;
}
static int m_rename_away(const char *p) {
        char away[PATH_MAX];
        snprintf(away, sizeof away, "cordon-it-away-%d", (int) getpid());
        int r = ret(rename(p, away));
        if (r == 0)
                (void) rename(away, p); /* put it back; the escape is already proven */
        return r;
}
static int m_unlink(const char *p) {
        return ret(is_dir(p) ? rmdir(p) : unlink(p));
}

static int m_write_creat(const char *p) {
        return ret_fd(open(p, O_CREAT | O_WRONLY | O_APPEND | O_CLOEXEC, 0644));
}
static int m_trunc_creat(const char *p) {
        return ret_fd(open(p, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0644));
}
/* A second name for the file under an allowed name, then a write through that name. */
static int m_link_alias(const char *p) {
        if (link(p, aux_file) < 0)
                return -errno;
        return ret_fd(open(aux_file, O_WRONLY | O_APPEND | O_CLOEXEC));
}
/* A symlink with an allowed name pointing at the file, then a write through it. */
static int m_via_symlink(const char *p) {
        char target[PATH_MAX];
        if (p[0] == '/')
                snprintf(target, sizeof target, "%s", p);
        else if (!getcwd(target, sizeof target) ||
                 strlen(target) + strlen(p) + 2 > sizeof target)
                return -ENAMETOOLONG;
        else
                strcat(strcat(target, "/"), p);
        if (symlink(target, aux_link) < 0)
                return -errno;
        return ret_fd(open(aux_link, O_WRONLY | O_APPEND | O_CLOEXEC));
}

static const create_route modify_routes[] = {
        { "write-creat", m_write_creat }, { "trunc-creat", m_trunc_creat },
        { "link-alias", m_link_alias },   { "via-symlink", m_via_symlink },
        { "write", m_write },         { "trunc", m_trunc },
        { "truncate", m_truncate },   { "rename-over", m_rename_over },
        { "exchange", m_exchange },   { "rename-away", m_rename_away },
        { "unlink", m_unlink },       { NULL, NULL },
};

/* modify ROUTE PATH: an existing protected PATH must stay as it is. */
static int cmd_modify(int argc, char **argv) {
        const create_route *r = find_route(modify_routes, argv[0]);
        const char *path = argv[1];
        if (!r)
                return harness("unknown route %s", argv[0]);
        if (!exists(path))
                return harness("%s does not exist before the attempt", path);
        aux_names();
        int res = r->fn(path);
        aux_cleanup();
        if (res == 0)
                return escaped("%s %s succeeded", r->name, path);
        return refused("%s %s: %s", r->name, path, strerror(-res));
}

/* allow-modify ROUTE PATH: the same operation on an ordinary file must work. */
static int cmd_allow_modify(int argc, char **argv) {
        const create_route *r = find_route(modify_routes, argv[0]);
        if (!r)
                return harness("unknown route %s", argv[0]);
        aux_names();
        int res = r->fn(argv[1]);
        aux_cleanup();
        if (res == 0)
                return worked("%s %s", r->name, argv[1]);
        return failed("%s %s: %s", r->name, argv[1], strerror(-res));
}

/* rename-into-git DIR: build DIR/config and DIR/hooks/pre-commit under an allowed name, then move
 * the whole directory into place as .git: no protected name is ever passed to open(). */
static int cmd_rename_into_git(int argc, char **argv) {
        const char *dir = argv[0];
        char p[PATH_MAX];
        if (exists(".git"))
                return harness(".git exists in the cwd");
        if (mkdir(dir, 0755) < 0)
                return harness("mkdir %s: %s", dir, strerror(errno));
        snprintf(p, sizeof p, "%s/config", dir);
        if (r_open(p) < 0)
                return harness("create %s: %s", p, strerror(errno));
        snprintf(p, sizeof p, "%s/hooks", dir);
        if (mkdir(p, 0755) < 0)
                return harness("mkdir %s: %s", p, strerror(errno));
        snprintf(p, sizeof p, "%s/hooks/pre-commit", dir);
        if (r_open(p) < 0)
                return harness("create %s: %s", p, strerror(errno));
        if (rename(dir, ".git") == 0)
                return escaped("renamed %s onto .git: .git/config and .git/hooks now exist", dir);
        return refused("rename %s .git: %s", dir, strerror(errno));
}

const attack_cmd attack_fs_cmds[] = {
        { "read", "PATH", 1, cmd_read },
        { "list", "DIR NAME", 2, cmd_list },
        { "read-late", "PATH TIMEOUT_MS", 2, cmd_read_late },
        { "gitfile", "DIR", 1, cmd_gitfile },
        { "commondir", "DIR", 1, cmd_commondir },
        { "link-secret", "SRC DST", 2, cmd_link_secret },
        { "create", "ROUTE PATH", 2, cmd_create },
        { "allow-create", "ROUTE PATH", 2, cmd_allow_create },
        { "modify", "ROUTE PATH", 2, cmd_modify },
        { "allow-modify", "ROUTE PATH", 2, cmd_allow_modify },
        { "rename-into-git", "DIR", 1, cmd_rename_into_git },
        { NULL, NULL, 0, NULL },
};
