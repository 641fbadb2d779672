/* SPDX-License-Identifier: Apache-2.0 */
/* allowUnixSockets against a real filtered child (issue 6): the supervisor performs every
 * connect(); only the listed sockets (pinned when the run starts) are reached, whatever the child
 * does to the path or the address during the call; other families still connect; a connect
 * blocked on a full backlog does not keep the supervisor from stopping. Host listeners run as
 * threads of the test process: `ok` greets, `bad` counts whoever reached it (must stay 0). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "supervisor-tests.h"

typedef struct server {
        int fd;
        const char *greeting;
        atomic_ulong accepted;
        atomic_bool stop;
        pthread_t thread;
} server;

static server ok_srv = { .greeting = "ok" }, bad_srv = { .greeting = "bad" };

static void *serve(void *arg) {
        server *s = arg;
        while (!atomic_load(&s->stop)) {
                struct pollfd p = { .fd = s->fd, .events = POLLIN };
                if (poll(&p, 1, 20) <= 0)
                        continue;
                int c = accept4(s->fd, NULL, NULL, SOCK_CLOEXEC);
                if (c < 0)
                        continue;
                atomic_fetch_add(&s->accepted, 1);
                ssize_t w = write(c, s->greeting, strlen(s->greeting));
                (void) w;
                close(c);
        }
        return NULL;
}

/* The test directory's paths fit (TMPDIR is short); a longer one is cut, and fails the test. */
static socklen_t sun_of(struct sockaddr_un *a, const char *path) {
        *a = (struct sockaddr_un) { .sun_family = AF_UNIX };
        size_t n = strnlen(path, sizeof(a->sun_path) - 1);
        memcpy(a->sun_path, path, n);
        return (socklen_t) (offsetof(struct sockaddr_un, sun_path) + n + 1);
}

static void server_start(server *s, sup_env *env, const char *name, int backlog) {
        char p[PATH_MAX + 32];
        snprintf(p, sizeof(p), "%s/%s", env->root, name);
        struct sockaddr_un a;
        socklen_t len = sun_of(&a, p);
        s->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        assert_true(s->fd >= 0);
        assert_int_equal(bind(s->fd, (struct sockaddr *) &a, len), 0);
        assert_int_equal(listen(s->fd, backlog), 0);
        atomic_store(&s->accepted, 0);
        atomic_store(&s->stop, false);
        if (backlog > 0)
                assert_int_equal(pthread_create(&s->thread, NULL, serve, s), 0);
}

static void server_stop(server *s, int backlog) {
        atomic_store(&s->stop, true);
        if (backlog > 0)
                pthread_join(s->thread, NULL);
        close(s->fd);
}

/* The allowlist: root/ok.sock, root/planted.sock (a symlink to bad.sock when pinned),
 * root/later.sock (missing when pinned). `ok_backlog` 0: ok.sock never accepts. */
static void unix_setup(sup_env *env, int ok_backlog) {
        server_start(&ok_srv, env, "ok.sock", ok_backlog);
        server_start(&bad_srv, env, "bad.sock", 64);
        char p[PATH_MAX + 32], q[PATH_MAX + 32];
        snprintf(p, sizeof(p), "%s/bad.sock", env->root);
        snprintf(q, sizeof(q), "%s/planted.sock", env->root);
        assert_int_equal(symlink(p, q), 0);
        sup_host_file(env, "plain.txt", "not a socket\n");
        strv allow = { 0 };
        static const char *const names[] = { "ok.sock", "planted.sock", "later.sock" };
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
                snprintf(p, sizeof(p), "%s/%s", env->root, names[i]);
                assert_int_equal(strv_push(&allow, p), 0);
        }
        supervisor_unix_allow *a = NULL;
        assert_int_equal(supervisor_unix_allow_new(&allow, &a), 0);
        assert_int_equal(supervisor_unix_allow_pinned(a), 1);
        env->unix_allow = a;
        strv_done(&allow);
}

static void unix_teardown(sup_env *env, int ok_backlog) {
        server_stop(&ok_srv, ok_backlog);
        server_stop(&bad_srv, 64);
        supervisor_unix_allow_free((supervisor_unix_allow *) env->unix_allow);
        env->unix_allow = NULL;
}

/* Connects to `path` and reads the greeting into buf; returns 0 or -errno. */
static int greet(const char *path, char *buf, size_t size) {
        int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (s < 0)
                return -errno;
        struct sockaddr_un a;
        socklen_t len = sun_of(&a, path);
        if (connect(s, (struct sockaddr *) &a, len) < 0) {
                int e = -errno;
                close(s);
                return e;
        }
        ssize_t n = read(s, buf, size - 1);
        buf[n > 0 ? n : 0] = '\0';
        close(s);
        return 0;
}

#define CHECK_GREET(path, want)                                                                   \
        do {                                                                                      \
                char _b[16];                                                                      \
                int _r = greet(path, _b, sizeof(_b));                                             \
                if (_r != 0 || strcmp(_b, want) != 0) {                                           \
                        fprintf(stderr, "%s:%d: %s: %s, greeting '%s' (want '%s')\n", __FILE__,   \
                                __LINE__, path, _r ? strerror(-_r) : "connected",                 \
                                _r ? "" : _b, want);                                              \
                        return 1;                                                                 \
                }                                                                                 \
        } while (0)

#define CHECK_REFUSED(path, err)                                                                  \
        do {                                                                                      \
                char _b[16];                                                                      \
                int _r = greet(path, _b, sizeof(_b));                                             \
                if (_r != -(err)) {                                                               \
                        fprintf(stderr, "%s:%d: %s: %s (want %s)\n", __FILE__, __LINE__, path,    \
                                _r ? strerror(-_r) : "connected", strerror(err));                 \
                        return 1;                                                                 \
                }                                                                                 \
        } while (0)

static int sc_paths(sup_env *env, void *arg) {
        (void) arg;
        char p[PATH_MAX + 64];
        snprintf(p, sizeof(p), "%s/ok.sock", env->root);
        CHECK_GREET(p, "ok");
        snprintf(p, sizeof(p), "%s//./ok.sock", env->root);
        CHECK_GREET(p, "ok");
        CHECK_GREET("ok.sock", "ok");               /* relative to the caller's cwd */
        CHECK_GREET("/proc/self/cwd/ok.sock", "ok"); /* the caller's own /proc alias */
        CHECK_OK(symlink("ok.sock", "to-ok"));
        CHECK_GREET("to-ok", "ok");                 /* another name, the same inode */
        CHECK_REFUSED("bad.sock", EACCES);
        snprintf(p, sizeof(p), "%s/bad.sock", env->root);
        CHECK_REFUSED(p, EACCES);
        CHECK_OK(symlink("bad.sock", "to-bad"));
        CHECK_REFUSED("to-bad", EACCES);
        snprintf(p, sizeof(p), "%s/planted.sock", env->root);
        CHECK_REFUSED(p, EACCES);                   /* a symlink when the run started */
        snprintf(p, sizeof(p), "%s/later.sock", env->root);
        CHECK_REFUSED(p, ENOENT);                   /* missing when the run started */
        CHECK_REFUSED("plain.txt", ECONNREFUSED);
        CHECK_REFUSED("nothing-here.sock", ENOENT);
        CHECK_REFUSED("ok.sock/", ENOTDIR);
        /* Abstract addresses, datagram sockets: refused; stream socketpairs: unchanged. */
        int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        CHECK(s >= 0);
        struct sockaddr_un a = { .sun_family = AF_UNIX, .sun_path = "\0cordon-test" };
        CHECK_ERR(connect(s, (struct sockaddr *) &a, offsetof(struct sockaddr_un, sun_path) + 12),
                  EPERM);
        close(s);
        CHECK_ERR(socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0), EPERM);
        int sp[2];
        CHECK_OK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp));
        close(sp[0]);
        close(sp[1]);
        int f = open("plain.txt", O_RDONLY | O_CLOEXEC);
        CHECK(f >= 0);
        CHECK_ERR(connect(f, (struct sockaddr *) &a, sizeof(a)), ENOTSOCK);
        close(f);
        return 0;
}

static void check_paths(sup_env *env) {
        assert_int_equal(atomic_load(&bad_srv.accepted), 0);
        assert_int_equal(atomic_load(&ok_srv.accepted), 5);
        /* Each refusal reported once, with the path the supervisor resolved. */
        char want[PATH_MAX + 64];
        snprintf(want, sizeof(want), "network-outbound connect %s/bad.sock not in allowUnixSockets",
                 env->root);
        assert_int_equal(sup_reports(env, want), 3);
        assert_int_equal(sup_reports(env, "planted.sock the allowUnixSockets path was not a socket"),
                         1);
        assert_int_equal(sup_reports(env, "@cordon-test abstract"), 1);
        assert_int_equal(sup_reports(env, "syscall socket socket"), 1);
        assert_int_equal(sup_reports(env, "network-outbound"), 5);
}

/* TCP still works (the connect is performed on the duplicate, blocking or not). */
static int sc_tcp(sup_env *env, void *arg) {
        (void) env, (void) arg;
        int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t al = sizeof(a);
        CHECK(l >= 0);
        CHECK_OK(bind(l, (struct sockaddr *) &a, sizeof(a)));
        CHECK_OK(listen(l, 4));
        CHECK_OK(getsockname(l, (struct sockaddr *) &a, &al));
        int c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        CHECK_OK(connect(c, (struct sockaddr *) &a, sizeof(a)));
        close(c);
        c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        int r = connect(c, (struct sockaddr *) &a, sizeof(a));
        CHECK(r == 0 || errno == EINPROGRESS);
        close(c);
        c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        a.sin_port = htons(1); /* nobody listens there */
        CHECK_ERR(connect(c, (struct sockaddr *) &a, sizeof(a)), ECONNREFUSED);
        close(c);
        close(l);
        return 0;
}

static void check_no_reports(sup_env *env) {
        assert_int_equal(sup_reports(env, NULL), 0);
        assert_int_equal(atomic_load(&bad_srv.accepted), 0);
}

/* The races: a symlink renamed over the listed path during connects, and the address buffer
 * flipped between the two paths during connects. Nothing may reach bad.sock. */
typedef struct flip {
        struct sockaddr_un a;
        atomic_bool stop;
        const char *root;
} flip;

static void *flipper(void *arg) {
        flip *f = arg;
        char ok[PATH_MAX + 16], bad[PATH_MAX + 16];
        snprintf(ok, sizeof(ok), "%s/ok.sock", f->root);
        snprintf(bad, sizeof(bad), "%s/bad.sock", f->root);
        while (!atomic_load(&f->stop)) {
                memcpy(f->a.sun_path, bad, strlen(bad) + 1);
                memcpy(f->a.sun_path, ok, strlen(ok) + 1);
        }
        return NULL;
}

static void *swapper(void *arg) {
        flip *f = arg;
        while (!atomic_load(&f->stop)) {
                (void) unlink("evil");
                (void) unlink("good");
                if (symlink("bad.sock", "evil") == 0)
                        (void) rename("evil", "ok.sock");
                if (link("keep.sock", "good") == 0)
                        (void) rename("good", "ok.sock");
        }
        return NULL;
}

static int race(flip *f, void *(*fn)(void *), bool use_buffer) {
        pthread_t t;
        CHECK(pthread_create(&t, NULL, fn, f) == 0);
        unsigned ok = 0;
        char path[PATH_MAX + 16];
        snprintf(path, sizeof(path), "%s/ok.sock", f->root);
        for (int i = 0; i < 1500; i++) {
                int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
                struct sockaddr_un a;
                socklen_t len = sun_of(&a, path);
                int r = use_buffer ? connect(s, (struct sockaddr *) &f->a, sizeof(f->a))
                                   : connect(s, (struct sockaddr *) &a, len);
                char b[8] = "";
                if (r == 0 && read(s, b, sizeof(b) - 1) > 0 && strcmp(b, "ok") == 0)
                        ok++;
                close(s);
        }
        atomic_store(&f->stop, true);
        pthread_join(t, NULL);
        fprintf(stderr, "unix %s race: %u of 1500 connects greeted by the listed socket\n",
                use_buffer ? "address" : "rename", ok);
        CHECK(ok > 0);
        return 0;
}

static int sc_races(sup_env *env, void *arg) {
        (void) arg;
        flip f = { .root = env->root };
        char p[PATH_MAX + 16];
        snprintf(p, sizeof(p), "%s/ok.sock", env->root);
        (void) sun_of(&f.a, p);
        if (race(&f, flipper, true) != 0)
                return 1;
        CHECK_OK(link("ok.sock", "keep.sock")); /* keeps the socket's inode reachable */
        atomic_store(&f.stop, false);
        return race(&f, swapper, false);
}

static void check_races(sup_env *env) {
        assert_int_equal(atomic_load(&bad_srv.accepted), 0);
        assert_true(atomic_load(&ok_srv.accepted) > 0);
        (void) env;
}

/* A connect that waits for a full backlog runs on a thread of its own; stopping the supervisor
 * (the child killed meanwhile) interrupts it instead of waiting for the peer. */
static int sc_blocked(sup_env *env, void *arg) {
        (void) env, (void) arg;
        for (int i = 0; i < 4; i++) { /* the 2nd waits: backlog 0, never accepted */
                int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
                struct sockaddr_un a;
                socklen_t len = sun_of(&a, "ok.sock");
                CHECK(s >= 0);
                (void) connect(s, (struct sockaddr *) &a, len);
        }
        return 0;
}

/* Runs `fn` confined with the listeners and the allowlist in place; `kill_ms` > 0: kill the
 * child then (it is expected to block) and return how long supervising took. */
static double run_unix(scenario_fn fn, void (*check)(sup_env *), int ok_backlog,
                       unsigned kill_ms) {
        sup_env *env = NULL;
        assert_int_equal(sup_env_new(&env), 0);
        unix_setup(env, ok_backlog);
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        int st = kill_ms ? sup_run_killed(env, fn, NULL, kill_ms) : sup_run(env, fn, NULL);
        clock_gettime(CLOCK_MONOTONIC, &b);
        if (!kill_ms && (!WIFEXITED(st) || WEXITSTATUS(st) != 0))
                fail_msg("scenario failed: wait status %#x (see stderr above)", st);
        if (check)
                check(env);
        unix_teardown(env, ok_backlog);
        sup_env_free(env);
        return (double) (b.tv_sec - a.tv_sec) + (double) (b.tv_nsec - a.tv_nsec) / 1e9;
}

static void test_unix_paths(void **state) {
        (void) state;
        run_unix(sc_paths, check_paths, 64, 0);
}

static void test_unix_other_families(void **state) {
        (void) state;
        run_unix(sc_tcp, check_no_reports, 64, 0);
}

static void test_unix_races(void **state) {
        (void) state;
        run_unix(sc_races, check_races, 64, 0);
}

static void test_unix_stop_interrupts_blocked_connect(void **state) {
        (void) state;
        double s = run_unix(sc_blocked, NULL, 0, 300);
        fprintf(stderr, "supervising a connect blocked on a full backlog ended after %.2f s\n", s);
        assert_true(s < 5.0);
}

int supervisor_unix_tests_run(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_unix_paths),
                cmocka_unit_test(test_unix_other_families),
                cmocka_unit_test(test_unix_races),
                cmocka_unit_test(test_unix_stop_interrupts_blocked_connect),
        };
        return cmocka_run_group_tests_name("supervisor-unix", tests, NULL, NULL);
}
