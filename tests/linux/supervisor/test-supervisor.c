/* SPDX-License-Identifier: Apache-2.0 */
/* The creation-rule supervisor against a real filtered child: refusals, what stays allowed, and
 * that emulated calls keep the kernel's semantics. Attacks and races: supervisor-attacks.c. */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"
#include "supervisor-tests.h"

/* Runs `fn` confined and checks the child passed and left no denied name on the host. */
void sup_check(scenario_fn fn, void *arg, unsigned workers, void (*host_setup)(sup_env *),
               void (*host_check)(sup_env *)) {
        sup_env *env = NULL;
        assert_int_equal(sup_env_new(&env), 0);
        env->workers = workers;
        if (host_setup)
                host_setup(env);
        int st = sup_run(env, fn, arg);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
                fail_msg("scenario failed: wait status %#x (see stderr above)", st);
        const char *denied = sup_first_denied(env);
        if (denied)
                fail_msg("denied name left on the host: %s", denied);
        if (host_check)
                host_check(env);
        sup_env_free(env);
}

static void assert_host_exists(sup_env *env, const char *rel, mode_t type) {
        char p[2 * PATH_MAX];
        struct stat st;
        snprintf(p, sizeof(p), "%s/%s", env->root, rel);
        if (lstat(p, &st) < 0 || (st.st_mode & S_IFMT) != type)
                fail_msg("expected %s (type %o) on the host", rel, (unsigned) type);
}

/* ---- Refusals ------------------------------------------------------------------------------------ */

static int sc_refusals(sup_env *env, void *arg) {
        (void) env, (void) arg;
        CHECK_OK(mkdir("x", 0755));
        CHECK_ERR(open("x/.env", O_CREAT | O_WRONLY, 0644), EACCES);
        CHECK_ERR(open("a.pem", O_CREAT | O_RDWR, 0600), EACCES);
        CHECK_ERR(creat("b.key", 0644), EACCES);
        CHECK_ERR(openat(AT_FDCWD, ".env.local", O_CREAT | O_WRONLY | O_TRUNC, 0644), EACCES);
        CHECK_ERR(open("A.PEM", O_CREAT | O_WRONLY, 0644), EACCES);
        CHECK_ERR(open(".hidden.pem", O_CREAT | O_WRONLY, 0644), EACCES);
        CHECK_ERR(open("x/../x/./c.key", O_CREAT | O_WRONLY, 0644), EACCES);
        CHECK_ERR(open("x/.env", O_CREAT | O_EXCL | O_WRONLY, 0644), EACCES);
        CHECK_ERR(mkdir("x/.env", 0755), EACCES);
        CHECK_ERR(mkdir("dir.pem/", 0755), EACCES);
        CHECK_ERR(mknod("fifo.key", S_IFIFO | 0644, 0), EACCES);
        CHECK_ERR(mknod("reg.pem", S_IFREG | 0644, 0), EACCES);
        CHECK_ERR(mknod("sock.pem", S_IFSOCK | 0644, 0), EACCES);
        CHECK_ERR(mkfifo("f.pem", 0644), EACCES);
        CHECK_CREATE("foo");
        CHECK_ERR(rename("foo", ".env"), EACCES);
        CHECK_ERR(syscall(SYS_renameat2, AT_FDCWD, "foo", AT_FDCWD, "y.pem", RENAME_NOREPLACE), EACCES);
        CHECK_ERR(renameat(AT_FDCWD, "foo", AT_FDCWD, "x/.env.prod"), EACCES);
        CHECK_ERR(link("foo", "l.key"), EACCES);
        CHECK_ERR(linkat(AT_FDCWD, "foo", AT_FDCWD, "x/l2.pem", 0), EACCES);
        CHECK_ERR(symlink("foo", "s.pem"), EACCES);
        CHECK_ERR(symlinkat("foo", AT_FDCWD, "s.key"), EACCES);
        int d = open("x", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        CHECK(d >= 0);
        CHECK_ERR(openat(d, "k.key", O_CREAT | O_WRONLY, 0644), EACCES);
        CHECK_ERR(mkdirat(d, ".env", 0755), EACCES);
        close(d);
        /* Protected paths that do not exist yet. */
        CHECK_ERR(open(".bashrc", O_CREAT | O_WRONLY | O_APPEND, 0644), EACCES);
        CHECK_ERR(mkdir(".vscode", 0755), EACCES);
        CHECK_ERR(open("HEAD", O_CREAT | O_WRONLY, 0644), EACCES);
        CHECK_OK(mkdir(".git", 0755));
        CHECK_ERR(mkdir(".git/hooks", 0755), EACCES);
        CHECK_ERR(open(".git/config", O_CREAT | O_WRONLY, 0644), EACCES);
        CHECK_ERR(symlink("/tmp", ".git/hooks"), EACCES);
        CHECK_OK(mkdir(".claude", 0755));
        CHECK_ERR(open(".claude/settings.local.json", O_CREAT | O_WRONLY, 0644), EACCES);
        CHECK_CREATE(".claude/other.json");
        /* Every refusal is a plain EACCES, and the process keeps running. */
        CHECK(access("x/.env", F_OK) < 0 && errno == ENOENT);
        return 0;
}

static void check_refusals(sup_env *env) {
        assert_int_equal(sup_violations(env, NULL), 30); /* one per refused call */
        assert_true(sup_violations(env, "/x/.env .env") >= 1);
        assert_true(sup_violations(env, "/a.pem *.pem") == 1);
        assert_true(sup_violations(env, "/.git/hooks") >= 2);
        assert_true(sup_violations(env, "settings*.json") == 1);
}

static void test_refusals(void **state) {
        (void) state;
        sup_check(sc_refusals, NULL, 0, NULL, check_refusals);
}

/* ---- Still allowed ----------------------------------------------------------------------------------- */

static int write_file(const char *path, const char *s) {
        int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0)
                return -1;
        ssize_t n = write(fd, s, strlen(s));
        close(fd);
        return n == (ssize_t) strlen(s) ? 0 : -1;
}

static int read_file(const char *path, char *buf, size_t size) {
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -1;
        ssize_t n = read(fd, buf, size - 1);
        close(fd);
        if (n < 0)
                return -1;
        buf[n] = '\0';
        return 0;
}

static int sc_allowed(sup_env *env, void *arg) {
        (void) env, (void) arg;
        char buf[64];
        CHECK_CREATE("env");
        CHECK_CREATE(".envrc");
        CHECK_CREATE("pem");
        CHECK_CREATE("a.pem.txt");
        CHECK_CREATE(".environment");
        CHECK_OK(rename("env", "renamed"));
        CHECK_OK(link("pem", "pem-hardlink"));
        CHECK_OK(symlink("secret.pem", "points-to-denied")); /* the target text is data */
        CHECK_OK(write_file("a", "A"));
        CHECK_OK(write_file("b", "B"));
        CHECK_OK(syscall(SYS_renameat2, AT_FDCWD, "a", AT_FDCWD, "b", RENAME_EXCHANGE));
        CHECK_OK(read_file("a", buf, sizeof(buf)));
        CHECK(strcmp(buf, "B") == 0);
        CHECK_OK(mkdir(".git", 0755));
        CHECK_OK(mkdir(".git/objects", 0755));
        CHECK_CREATE(".git/HEAD"); /* only the top-level HEAD is protected */
        CHECK_OK(mkfifo("fifo", 0644));
        CHECK_OK(mknod("sock", S_IFSOCK | 0644, 0));
        CHECK_OK(mknod("plain", 0644, 0));
        CHECK_ERR(mknod("dev", S_IFCHR | 0644, makedev(1, 3)), EPERM);
        return 0;
}

static void check_allowed(sup_env *env) {
        assert_int_equal(sup_violations(env, NULL), 0);
        assert_host_exists(env, "renamed", S_IFREG);
        assert_host_exists(env, "pem-hardlink", S_IFREG);
        assert_host_exists(env, "points-to-denied", S_IFLNK);
        assert_host_exists(env, ".git/objects", S_IFDIR);
        assert_host_exists(env, "fifo", S_IFIFO);
        assert_host_exists(env, "sock", S_IFSOCK);
}

static void test_allowed(void **state) {
        (void) state;
        sup_check(sc_allowed, NULL, 0, NULL, check_allowed);
}

/* ---- Semantics preserved ------------------------------------------------------------------------------- */

static int mode_of_fd(int fd) {
        struct stat st;
        return fstat(fd, &st) < 0 ? -1 : (int) (st.st_mode & 07777);
}

static int mode_of(const char *p) {
        struct stat st;
        return lstat(p, &st) < 0 ? -1 : (int) (st.st_mode & 07777);
}

static int sc_modes(sup_env *env, void *arg) {
        (void) env, (void) arg;
        umask(022);
        int fd = open("m022", O_CREAT | O_WRONLY | O_CLOEXEC, 0666);
        CHECK(fd >= 0 && mode_of_fd(fd) == 0644);
        close(fd);
        CHECK_OK(mkdir("d022", 0777));
        CHECK(mode_of("d022") == 0755);
        umask(077);
        fd = open("m077", O_CREAT | O_WRONLY | O_CLOEXEC, 0666);
        CHECK(fd >= 0 && mode_of_fd(fd) == 0600);
        close(fd);
        CHECK_OK(mkdir("d077", 0777));
        CHECK(mode_of("d077") == 0700);
        CHECK_OK(mkfifo("p077", 0666));
        CHECK(mode_of("p077") == 0600);
        umask(0);
        CHECK_OK(mkdir("sticky", 01777));
        CHECK(mode_of("sticky") == 01777);
        return 0;
}

static void *set_umask_077(void *arg) {
        (void) arg;
        umask(077); /* the fs_struct is shared with the main thread */
        return NULL;
}

/* The supervisor keeps each caller's /proc/<tid> and status open across requests (8 per
 * worker) and reads the status afresh every time: a umask changed by the same task, or by
 * another thread sharing its fs_struct, shows at the next create; more short-lived children than
 * slots (each with its own umask, their tids freed and possibly reused) each get their own. */
static int sc_kept_handles(sup_env *env, void *arg) {
        (void) env, (void) arg;
        for (int i = 0; i < 40; i++) {
                mode_t mask = i % 3 == 0 ? 022 : i % 3 == 1 ? 077 : 002;
                char name[32];
                umask(mask);
                snprintf(name, sizeof(name), "self-%d", i);
                int fd = open(name, O_CREAT | O_WRONLY | O_CLOEXEC, 0666);
                CHECK(fd >= 0 && mode_of_fd(fd) == (int) (0666 & ~mask));
                close(fd);
                pid_t c = fork();
                CHECK(c >= 0);
                if (c == 0) {
                        umask(mask ^ 070);
                        snprintf(name, sizeof(name), "child-%d", i);
                        fd = open(name, O_CREAT | O_WRONLY | O_CLOEXEC, 0666);
                        _exit(fd >= 0 && mode_of_fd(fd) == (int) (0666 & ~(mask ^ 070)) ? 0 : 1);
                }
                int st;
                CHECK(waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) == 0);
        }
        umask(022);
        CHECK_CREATE("before-thread");
        pthread_t t;
        CHECK(pthread_create(&t, NULL, set_umask_077, NULL) == 0);
        pthread_join(t, NULL);
        int fd = open("after-thread", O_CREAT | O_WRONLY | O_CLOEXEC, 0666);
        CHECK(fd >= 0 && mode_of_fd(fd) == 0600);
        close(fd);
        return 0;
}

static void test_kept_handles(void **state) {
        (void) state;
        sup_check(sc_kept_handles, NULL, 0, NULL, NULL);
        sup_check(sc_kept_handles, NULL, 1, NULL, NULL);
}

static void test_modes(void **state) {
        (void) state;
        sup_check(sc_modes, NULL, 0, NULL, NULL);
}

static int sc_fds(sup_env *env, void *arg) {
        (void) env, (void) arg;
        int fd = open("c1", O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
        CHECK(fd >= 0 && (fcntl(fd, F_GETFD) & FD_CLOEXEC));
        close(fd);
        fd = open("c2", O_CREAT | O_WRONLY, 0644);
        CHECK(fd >= 0 && !(fcntl(fd, F_GETFD) & FD_CLOEXEC));
        close(fd);
        /* The lowest free descriptor, as open(2) promises. */
        int a = open("/dev/null", O_RDONLY | O_CLOEXEC), b = open("/dev/null", O_RDONLY | O_CLOEXEC);
        CHECK(a >= 0 && b > a);
        close(a);
        fd = open("low", O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
        CHECK(fd == a);
        CHECK(write(fd, "ab", 2) == 2);
        close(fd);
        close(b);
        fd = open("low", O_CREAT | O_WRONLY | O_APPEND | O_CLOEXEC, 0644);
        CHECK(fd >= 0 && (fcntl(fd, F_GETFL) & O_APPEND));
        CHECK(write(fd, "cd", 2) == 2);
        close(fd);
        char buf[16];
        CHECK_OK(read_file("low", buf, sizeof(buf)));
        CHECK(strcmp(buf, "abcd") == 0);
        fd = open("low", O_CREAT | O_RDWR | O_TRUNC | O_CLOEXEC, 0644);
        struct stat st;
        CHECK(fd >= 0 && fstat(fd, &st) == 0 && st.st_size == 0);
        CHECK((fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDWR);
        close(fd);
        fd = open("nb", O_CREAT | O_RDONLY | O_NONBLOCK | O_CLOEXEC, 0644);
        CHECK(fd >= 0 && (fcntl(fd, F_GETFL) & O_NONBLOCK));
        close(fd);
        return 0;
}

static void test_fds(void **state) {
        (void) state;
        sup_check(sc_fds, NULL, 0, NULL, NULL);
}

static int sc_errors(sup_env *env, void *arg) {
        (void) env, (void) arg;
        CHECK_CREATE("exists");
        CHECK_ERR(open("exists", O_CREAT | O_EXCL | O_WRONLY, 0644), EEXIST);
        CHECK_OK(symlink("exists", "lnk"));
        CHECK_ERR(open("lnk", O_CREAT | O_NOFOLLOW | O_WRONLY, 0644), ELOOP);
        CHECK_ERR(open("lnk", O_CREAT | O_EXCL | O_WRONLY, 0644), EEXIST);
        CHECK_OK(mkdir("dir", 0755));
        CHECK_ERR(open("dir", O_CREAT | O_WRONLY, 0644), EISDIR);
        CHECK_ERR(open("dir", O_CREAT | O_RDONLY, 0644), EISDIR);
        CHECK_ERR(open("newdir/", O_CREAT | O_WRONLY, 0644), EISDIR);
        CHECK_ERR(open(".", O_CREAT | O_RDONLY, 0644), EISDIR);
        CHECK_ERR(open("nope/x", O_CREAT | O_WRONLY, 0644), ENOENT);
        CHECK_ERR(open("", O_CREAT | O_WRONLY, 0644), ENOENT);
        CHECK_ERR(open("exists/x", O_CREAT | O_WRONLY, 0644), ENOTDIR);
        CHECK_ERR(openat(987, "x", O_CREAT | O_WRONLY, 0644), EBADF);
        return 0;
}

static int sc_errors2(sup_env *env, void *arg) {
        (void) arg;
        CHECK_ERR(syscall(SYS_open, (char *) 8, O_CREAT | O_WRONLY, 0644), EFAULT);
        char *longp = malloc(PATH_MAX + 16);
        CHECK(longp);
        memset(longp, 'a', PATH_MAX + 15);
        longp[PATH_MAX + 15] = '\0';
        CHECK_ERR(open(longp, O_CREAT | O_WRONLY, 0644), ENAMETOOLONG);
        longp[300] = '\0';
        CHECK_ERR(open(longp, O_CREAT | O_WRONLY, 0644), ENAMETOOLONG);
        free(longp);
        CHECK_ERR(open("x", O_CREAT | O_DIRECTORY | O_RDONLY, 0644), EINVAL);
        CHECK_OK(mkdir("d", 0755));
        CHECK_ERR(mkdir("d", 0755), EEXIST);
        CHECK_ERR(mkdir("d/", 0755), EEXIST);
        CHECK_ERR(mkdir(".", 0755), EEXIST);
        CHECK_ERR(mknod("d/", S_IFIFO | 0644, 0), EEXIST);
        CHECK_ERR(mknod("nod/", S_IFIFO | 0644, 0), ENOENT);
        CHECK_ERR(rename("d", ".."), EBUSY);
        CHECK_ERR(symlink("x", "."), EEXIST);
        CHECK_ERR(link("missing", "l"), ENOENT);
        /* An absolute path ignores the dirfd, even a bad one. */
        char abs[2 * PATH_MAX];
        snprintf(abs, sizeof(abs), "%s/abs.txt", env->root);
        int fd = openat(987, abs, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
        CHECK(fd >= 0);
        close(fd);
        /* Relative to a changed cwd and to a dirfd. */
        CHECK_OK(chdir("d"));
        CHECK_CREATE("rel.txt");
        CHECK_OK(chdir(".."));
        CHECK(access("d/rel.txt", F_OK) == 0);
        int dfd = open("d", O_PATH | O_DIRECTORY | O_CLOEXEC);
        CHECK(dfd >= 0);
        fd = openat(dfd, "viafd.txt", O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
        CHECK(fd >= 0);
        close(fd);
        CHECK_OK(mkdirat(dfd, "sub", 0755));
        CHECK_OK(fchdir(dfd));
        CHECK_CREATE("fchdir.txt");
        CHECK(access("sub", F_OK) == 0 && access("viafd.txt", F_OK) == 0);
        close(dfd);
        return 0;
}

static void test_errors(void **state) {
        (void) state;
        sup_check(sc_errors, NULL, 0, NULL, NULL);
        sup_check(sc_errors2, NULL, 0, NULL, NULL);
}

/* A denied name that exists already may be opened with O_CREAT (nothing new appears), but not
 * with O_EXCL; mkdir of an existing protected directory answers EEXIST (mkdir -p works). */
static void host_existing(sup_env *env) {
        sup_host_file(env, ".env", "SECRET=1");
        sup_host_dir(env, ".vscode");
}

static int sc_existing(sup_env *env, void *arg) {
        (void) env, (void) arg;
        char buf[32];
        int fd = open(".env", O_CREAT | O_RDWR | O_CLOEXEC, 0644);
        CHECK(fd >= 0);
        CHECK(read(fd, buf, 8) == 8 && memcmp(buf, "SECRET=1", 8) == 0);
        close(fd);
        fd = open(".env", O_CREAT | O_WRONLY | O_APPEND | O_CLOEXEC, 0644);
        CHECK(fd >= 0 && write(fd, "\n", 1) == 1);
        close(fd);
        CHECK_ERR(open(".env", O_CREAT | O_EXCL | O_WRONLY, 0644), EACCES);
        CHECK_ERR(mkdir(".vscode", 0755), EEXIST);
        CHECK_ERR(mkdir(".env", 0755), EEXIST);
        /* Through a symlink whose own name is allowed, to an existing denied name: fine. */
        CHECK_OK(symlink(".env", "envlink"));
        fd = open("envlink", O_CREAT | O_RDONLY | O_CLOEXEC, 0644);
        CHECK(fd >= 0);
        close(fd);
        return 0;
}

static void check_existing(sup_env *env) {
        assert_int_equal(sup_violations(env, NULL), 1); /* the O_EXCL one */
}

static void test_existing_denied(void **state) {
        (void) state;
        sup_check(sc_existing, NULL, 0, host_existing, check_existing);
}

/* /dev/stdout and friends reach the caller's own descriptors, not the supervisor's. */
static int sc_self_paths(sup_env *env, void *arg) {
        (void) env, (void) arg;
        int out = open("out.txt", O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0644);
        CHECK(out >= 0 && dup2(out, 1) == 1);
        close(out);
        static const char *const paths[] = { "/dev/stdout", "/proc/self/fd/1", "/dev/fd/1",
                                             "/proc/thread-self/fd/1", "//proc//self//fd//1" };
        for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
                int fd = open(paths[i], O_CREAT | O_WRONLY | O_APPEND | O_CLOEXEC, 0644);
                CHECK(fd >= 0);
                CHECK(write(fd, "X", 1) == 1);
                close(fd);
        }
        CHECK_OK(symlink("/proc/self/fd/1", "to-stdout"));
        int fd = open("to-stdout", O_CREAT | O_WRONLY | O_APPEND | O_CLOEXEC, 0644);
        CHECK(fd >= 0 && write(fd, "Y", 1) == 1);
        close(fd);
        char buf[32];
        CHECK_OK(read_file("out.txt", buf, sizeof(buf)));
        CHECK(strcmp(buf, "XXXXXY") == 0);
        fd = open("/dev/null", O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0644);
        CHECK(fd >= 0 && write(fd, "z", 1) == 1);
        close(fd);
        fd = open("/proc/self/cwd/via-cwd.txt", O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
        CHECK(fd >= 0);
        close(fd);
        CHECK(access("via-cwd.txt", F_OK) == 0);
        CHECK_ERR(open("/proc/self/cwd/cwd.pem", O_CREAT | O_WRONLY, 0644), EACCES);
        CHECK_ERR(open("/proc/self/fd/77", O_CREAT | O_WRONLY, 0644), ENOENT);
        CHECK_ERR(open("/proc/self/fd/1", O_CREAT | O_EXCL | O_WRONLY, 0644), EEXIST);
        CHECK_ERR(open("/proc/self/fd/1", O_CREAT | O_NOFOLLOW | O_WRONLY, 0644), ELOOP);
        CHECK_ERR(mkdir("/proc/self/newdir", 0755), ENOENT);
        /* Our own status, not the supervisor's. */
        fd = open("/proc/self/status", O_CREAT | O_RDONLY | O_CLOEXEC, 0644);
        CHECK(fd >= 0);
        char st[4096], want[64];
        ssize_t n = read(fd, st, sizeof(st) - 1);
        close(fd);
        CHECK(n > 0);
        st[n] = '\0';
        snprintf(want, sizeof(want), "\nPid:\t%d\n", (int) getpid());
        CHECK(strstr(st, want) != NULL);
        return 0;
}

static void test_self_paths(void **state) {
        (void) state;
        sup_check(sc_self_paths, NULL, 0, NULL, NULL);
}

/* ---- Symlinks as the final component ---------------------------------------------------------------- */

static int sc_symlinks(sup_env *env, void *arg) {
        (void) arg;
        CHECK_OK(symlink("secret.pem", "link"));
        CHECK_ERR(open("link", O_CREAT | O_WRONLY, 0644), EACCES);
        CHECK_OK(mkdir("deep", 0755));
        CHECK_OK(symlink("l2", "l1"));
        CHECK_OK(symlink("deep/s.key", "l2"));
        CHECK_ERR(open("l1", O_CREAT | O_WRONLY, 0644), EACCES);
        char abs[2 * PATH_MAX];
        snprintf(abs, sizeof(abs), "%s/abs.pem", env->root);
        CHECK_OK(symlink(abs, "alink"));
        CHECK_ERR(open("alink", O_CREAT | O_WRONLY, 0644), EACCES);
        CHECK_OK(symlink("ok_target.txt", "oklink"));
        CHECK_CREATE("oklink");
        CHECK(access("ok_target.txt", F_OK) == 0);
        CHECK_OK(symlink("loopb", "loopa"));
        CHECK_OK(symlink("loopa", "loopb"));
        CHECK_ERR(open("loopa", O_CREAT | O_WRONLY, 0644), ELOOP);
        CHECK_OK(symlink("deep", "dlink"));
        CHECK_CREATE("dlink/inner.txt");
        CHECK_ERR(open("dlink/inner.pem", O_CREAT | O_WRONLY, 0644), EACCES);
        CHECK_OK(mkdir("sub", 0755));
        CHECK_OK(symlink("../up.pem", "sub/up"));
        CHECK_ERR(open("sub/up", O_CREAT | O_WRONLY, 0644), EACCES);
        CHECK_OK(symlink("../up.txt", "sub/up2"));
        CHECK_CREATE("sub/up2");
        CHECK(access("up.txt", F_OK) == 0);
        CHECK_OK(symlink("new.txt", "dangling"));
        CHECK_ERR(open("dangling", O_CREAT | O_EXCL | O_WRONLY, 0644), EEXIST);
        CHECK(access("new.txt", F_OK) < 0);
        return 0;
}

static void check_symlinks(sup_env *env) {
        assert_true(sup_violations(env, "secret.pem") == 1);
        assert_true(sup_violations(env, "deep/s.key") == 1);
        assert_true(sup_violations(env, "abs.pem") == 1);
}

static void test_symlinks(void **state) {
        (void) state;
        sup_check(sc_symlinks, NULL, 0, NULL, check_symlinks);
}

/* ---- O_TMPFILE, then linkat --------------------------------------------------------------------------- */

static int sc_tmpfile(sup_env *env, void *arg) {
        (void) env, (void) arg;
        int fd = open(".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
        CHECK(fd >= 0);
        CHECK(write(fd, "tmpdata", 7) == 7);
        CHECK_ERR(linkat(fd, "", AT_FDCWD, "t.key", AT_EMPTY_PATH), EACCES);
        char p[64];
        snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
        CHECK_ERR(linkat(AT_FDCWD, p, AT_FDCWD, "t2.pem", AT_SYMLINK_FOLLOW), EACCES);
        CHECK_OK(linkat(fd, "", AT_FDCWD, "t.txt", AT_EMPTY_PATH));
        close(fd);
        char buf[16];
        CHECK_OK(read_file("t.txt", buf, sizeof(buf)));
        CHECK(strcmp(buf, "tmpdata") == 0);
        fd = open(".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
        CHECK(fd >= 0);
        snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
        CHECK_OK(linkat(AT_FDCWD, p, AT_FDCWD, "t2.txt", AT_SYMLINK_FOLLOW));
        close(fd);
        CHECK(access("t2.txt", F_OK) == 0);
        CHECK_ERR(linkat(555, "", AT_FDCWD, "t3.txt", AT_EMPTY_PATH), EBADF);
        /* A protected file, opened on the host side beforehand, gets no second name. */
        fd = open(".git/config", O_RDONLY | O_CLOEXEC);
        CHECK(fd >= 0);
        CHECK_ERR(linkat(fd, "", AT_FDCWD, "config-copy", AT_EMPTY_PATH), EACCES);
        CHECK_ERR(link(".git/config", "config-copy"), EACCES);
        snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
        CHECK_ERR(linkat(AT_FDCWD, p, AT_FDCWD, "config-copy", AT_SYMLINK_FOLLOW), EACCES);
        close(fd);
        CHECK_ERR(linkat(AT_FDCWD, "t.txt", AT_FDCWD, "t4.txt", 0x8000), EINVAL);
        /* AT_SYMLINK_FOLLOW through an ordinary symlink links the file, not the link. */
        CHECK_OK(symlink("t.txt", "tl"));
        CHECK_OK(linkat(AT_FDCWD, "tl", AT_FDCWD, "t5.txt", AT_SYMLINK_FOLLOW));
        struct stat a, b;
        CHECK(lstat("t5.txt", &a) == 0 && stat("t.txt", &b) == 0 && a.st_ino == b.st_ino);
        CHECK_OK(linkat(AT_FDCWD, "tl", AT_FDCWD, "t6", 0));
        CHECK(lstat("t6", &a) == 0 && S_ISLNK(a.st_mode));
        return 0;
}

static void host_git_config(sup_env *env) {
        sup_host_dir(env, ".git");
        sup_host_file(env, ".git/config", "[core]\n");
}

static void test_tmpfile_linkat(void **state) {
        (void) state;
        sup_check(sc_tmpfile, NULL, 0, host_git_config, NULL);
}

/* ---- bind() ------------------------------------------------------------------------------------------ */

static int sc_bind(sup_env *env, void *arg) {
        (void) env, (void) arg;
        CHECK_ERR(socket(AF_UNIX, SOCK_STREAM, 0), EPERM);
        int dg[2];
        CHECK_ERR(socketpair(AF_UNIX, SOCK_DGRAM, 0, dg), EPERM);
        int sv[2], sv2[2];
        CHECK_OK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
        CHECK_OK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv2));
        struct sockaddr_un a = { .sun_family = AF_UNIX };
        strcpy(a.sun_path, "s.pem");
        CHECK_ERR(bind(sv[0], (struct sockaddr *) &a, sizeof(a)), EACCES);
        strcpy(a.sun_path, "s.sock");
        CHECK_OK(bind(sv[0], (struct sockaddr *) &a, sizeof(a)));
        struct stat st;
        CHECK(lstat("s.sock", &st) == 0 && S_ISSOCK(st.st_mode));
        CHECK_ERR(bind(sv[1], (struct sockaddr *) &a, sizeof(a)), EADDRINUSE);
        /* Abstract names create no file. */
        memset(a.sun_path, 0, sizeof(a.sun_path));
        snprintf(a.sun_path + 1, sizeof(a.sun_path) - 1, "cordon-test-%d", (int) getpid());
        CHECK_OK(bind(sv2[0], (struct sockaddr *) &a,
                      (socklen_t) (offsetof(struct sockaddr_un, sun_path) + 1 + strlen(a.sun_path + 1))));
        CHECK_ERR(bind(99, (struct sockaddr *) &a, sizeof(a)), EBADF);
        int fd = open("notsock", O_CREAT | O_RDWR | O_CLOEXEC, 0644);
        CHECK_ERR(bind(fd, (struct sockaddr *) &a, sizeof(a)), ENOTSOCK);
        close(fd);
        CHECK_ERR(bind(sv2[1], (struct sockaddr *) &a, 200), EINVAL);
        int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        CHECK(s >= 0);
        struct sockaddr_in in = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7f000001) };
        CHECK_OK(bind(s, (struct sockaddr *) &in, sizeof(in)));
        socklen_t l = sizeof(in);
        CHECK(getsockname(s, (struct sockaddr *) &in, &l) == 0 && in.sin_port != 0);
        return 0;
}

static void test_bind(void **state) {
        (void) state;
        sup_check(sc_bind, NULL, 0, NULL, NULL);
}

/* ---- Renames around protected ancestors ----------------------------------------------------------------- */

static int sc_rename_ancestors(sup_env *env, void *arg) {
        (void) env, (void) arg;
        CHECK_OK(mkdir("d", 0755));
        CHECK_OK(mkdir("d/hooks", 0755));
        CHECK_ERR(rename("d", ".git"), EACCES);                /* .git is an ancestor of .git/hooks */
        CHECK_OK(mkdir(".git", 0755));
        CHECK_ERR(rename(".git", "g2"), EACCES);               /* away, to re-create it unguarded */
        CHECK_ERR(rename("d/hooks", ".git/hooks"), EACCES);    /* the protected path itself */
        CHECK_ERR(rename("d", ".git"), EACCES);                /* onto the existing ancestor */
        CHECK_ERR(syscall(SYS_renameat2, AT_FDCWD, "d", AT_FDCWD, ".git", RENAME_EXCHANGE), EACCES);
        CHECK_OK(mkdir(".claude", 0755));
        CHECK_ERR(rename(".claude", "c2"), EACCES);            /* ancestor of settings*.json */
        CHECK_OK(mkdir("e", 0755));
        CHECK_OK(rename("e", "f"));
        CHECK_OK(rename("d", "g"));
        return 0;
}

static void check_rename_ancestors(sup_env *env) {
        assert_int_equal(sup_violations(env, NULL), 6);
        assert_host_exists(env, "g/hooks", S_IFDIR);
        assert_host_exists(env, ".git", S_IFDIR);
        assert_host_exists(env, ".claude", S_IFDIR);
}

static void test_rename_ancestors(void **state) {
        (void) state;
        sup_check(sc_rename_ancestors, NULL, 0, NULL, check_rename_ancestors);
}

/* ---- Second names for protected paths, and access upgrades through magic links ------------------- */

/* A symlink named like an ancestor of a protected path would give that path a second existence
 * (`.git -> fake`, then `fake/config` is `.git/config`). And a file the caller holds read-only
 * (stdin from the host, say) may not be reopened for writing through /proc/self/fd/N with O_CREAT:
 * the supervisor, outside the command's Landlock domain, would otherwise do the write for it. */
static int sc_second_names(sup_env *env, void *arg) {
        (void) env, (void) arg;
        CHECK_OK(mkdir("fake", 0755));
        CHECK_ERR(symlink("fake", ".git"), EACCES);
        CHECK_ERR(symlink("fake", ".claude"), EACCES);
        CHECK_OK(symlink("fake", "ok-link"));
        int fd = open("ro.txt", O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
        CHECK(fd >= 0);
        close(fd);
        fd = open("ro.txt", O_RDONLY | O_CLOEXEC);
        CHECK(fd >= 0);
        char p[64];
        snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
        CHECK_ERR(open(p, O_CREAT | O_WRONLY | O_APPEND | O_CLOEXEC, 0644), EACCES);
        CHECK_ERR(open(p, O_CREAT | O_RDONLY | O_TRUNC | O_CLOEXEC, 0644), EACCES);
        int rd = open(p, O_CREAT | O_RDONLY | O_CLOEXEC, 0644); /* reading stays allowed */
        CHECK(rd >= 0);
        close(rd);
        close(fd);
        fd = open("rw.txt", O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
        CHECK(fd >= 0);
        snprintf(p, sizeof(p), "/dev/fd/%d", fd);
        int w = open(p, O_CREAT | O_WRONLY | O_APPEND | O_CLOEXEC, 0644); /* same access: fine */
        CHECK(w >= 0);
        CHECK(write(w, "x", 1) == 1);
        close(w);
        close(fd);
        CHECK_ERR(open("/proc/self/exe", O_CREAT | O_WRONLY | O_CLOEXEC, 0644), EACCES);
        return 0;
}

static void check_second_names(sup_env *env) {
        assert_int_equal(sup_violations(env, NULL), 5);
        assert_host_exists(env, "ok-link", S_IFLNK);
        assert_host_exists(env, "fake", S_IFDIR);
}

static void test_second_names(void **state) {
        (void) state;
        sup_check(sc_second_names, NULL, 0, NULL, check_second_names);
}

/* ---- Removing protected ancestors ------------------------------------------------------------------ */

static void host_ancestors(sup_env *env) {
        sup_host_dir(env, ".claude");
        sup_host_dir(env, ".git");
}

static int sc_rmdir(sup_env *env, void *arg) {
        (void) env, (void) arg;
        CHECK_ERR(rmdir(".claude"), EACCES);              /* ancestor of .claude/settings*.json */
        CHECK_ERR(unlinkat(AT_FDCWD, ".git", AT_REMOVEDIR), EACCES);
        CHECK_ERR(rmdir(".git/"), EACCES);
        CHECK_OK(mkdir("d", 0755));
        CHECK_OK(rmdir("d"));
        CHECK_OK(mkdir("e", 0755));
        CHECK_OK(mkdir("e/f", 0755));
        CHECK_ERR(rmdir("e"), ENOTEMPTY);
        CHECK_OK(unlinkat(AT_FDCWD, "e/f", AT_REMOVEDIR));
        CHECK_OK(rmdir("e"));
        CHECK_ERR(rmdir("missing"), ENOENT);
        CHECK_CREATE("file");
        CHECK_ERR(rmdir("file"), ENOTDIR);
        CHECK_ERR(unlinkat(AT_FDCWD, "file", AT_REMOVEDIR), ENOTDIR);
        CHECK_ERR(unlinkat(AT_FDCWD, "file", 0x4000), EINVAL);
        CHECK_OK(unlink("file"));
        CHECK_ERR(rmdir("."), EINVAL);
        CHECK_ERR(rmdir("/proc/self/fd"), EPERM);
        return 0;
}

static void check_rmdir(sup_env *env) {
        assert_int_equal(sup_violations(env, NULL), 3);
        assert_host_exists(env, ".claude", S_IFDIR);
        assert_host_exists(env, ".git", S_IFDIR);
}

static void test_rmdir_ancestors(void **state) {
        (void) state;
        sup_check(sc_rmdir, NULL, 0, host_ancestors, check_rmdir);
}

/* ---- Non-ASCII names --------------------------------------------------------------------------------------- */

/* On a filesystem that folds no case beyond ASCII (this test's TMPDIR, checked by the
 * supervisor), a KELVIN SIGN is just a byte sequence; ASCII case still folds. The casefold
 * direction is covered by test-name-rules. */
static int sc_non_ascii(sup_env *env, void *arg) {
        (void) env, (void) arg;
        CHECK_CREATE("\xe6\x97\xa5\xe6\x9c\xac.txt");
        CHECK_ERR(open("\xe6\x97\xa5.PeM", O_CREAT | O_WRONLY, 0644), EACCES);
        return 0;
}

static void test_non_ascii(void **state) {
        (void) state;
        sup_check(sc_non_ascii, NULL, 0, NULL, NULL);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_refusals),
                cmocka_unit_test(test_allowed),
                cmocka_unit_test(test_modes),
                cmocka_unit_test(test_kept_handles),
                cmocka_unit_test(test_fds),
                cmocka_unit_test(test_errors),
                cmocka_unit_test(test_existing_denied),
                cmocka_unit_test(test_self_paths),
                cmocka_unit_test(test_symlinks),
                cmocka_unit_test(test_tmpfile_linkat),
                cmocka_unit_test(test_bind),
                cmocka_unit_test(test_rename_ancestors),
                cmocka_unit_test(test_second_names),
                cmocka_unit_test(test_rmdir_ancestors),
                cmocka_unit_test(test_non_ascii),
        };
        int failed = cmocka_run_group_tests_name("supervisor", tests, NULL, NULL);
        failed += supervisor_attack_tests_run();
        failed += supervisor_denial_tests_run();
        return failed + supervisor_unix_tests_run();
}
