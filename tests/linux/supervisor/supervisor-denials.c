/* SPDX-License-Identifier: Apache-2.0 */
/* Refusals of the seccomp table observed exactly (issue 4): with a supervisor listening, every
 * refused call still fails with the table's errno, and is reported once as a `syscall` violation
 * naming the call; QUIET refusals (clone3, openat2) stay in the kernel unreported; calls of other
 * ABIs are reported by their own names; a refusal storm is reported a bounded number of times
 * plus one aggregate carrying the count, and allowed calls report nothing. */
#include <fcntl.h>
#include <linux/io_uring.h>
#include <linux/openat2.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "supervisor-tests.h"

#define STORM 5000

/* One call of each kind, each refused with the table's errno. */
static int sc_each_once(sup_env *env, void *arg) {
        (void) env, (void) arg;
        CHECK_ERR(syscall(SYS_keyctl, 0, 0, 0, 0, 0), EPERM);
        CHECK_ERR(ptrace(PTRACE_TRACEME, 0, NULL, NULL), EPERM);
        CHECK_ERR(unshare(CLONE_NEWUSER), EPERM);
        CHECK_ERR(syscall(SYS_clone, CLONE_NEWNET | SIGCHLD, 0, 0, 0, 0), EPERM);
        CHECK_ERR(socket(AF_UNIX, SOCK_STREAM, 0), EPERM);
        struct io_uring_params p = { 0 };
        CHECK_ERR(syscall(SYS_io_uring_setup, 4, &p), ENOSYS);
        CHECK_ERR(syscall(SYS_landlock_create_ruleset, NULL, 0, 1U), ENOSYS);
        /* Quiet: the kernel answers, nobody is told (glibc falls back to clone / openat). */
        CHECK_ERR(syscall(SYS_clone3, NULL, 0), ENOSYS);
        struct open_how how = { .flags = O_RDONLY };
        CHECK_ERR(syscall(SYS_openat2, AT_FDCWD, ".", &how, sizeof(how)), ENOSYS);
#if defined(__x86_64__)
        CHECK_ERR(syscall(0x40000000 | SYS_getpid), ENOSYS);
        long ret;
        __asm__ volatile("int $0x80" : "=a"(ret) : "a"(20L /* ia32 getpid */) : "memory");
        CHECK(ret == -ENOSYS);
#endif
        return 0;
}

static void check_each_once(sup_env *env) {
        static const char *const once[] = { "syscall keyctl keyctl keyctl: EPERM",
                                            "syscall ptrace ptrace ", "syscall unshare unshare ",
                                            "syscall clone clone clone: EPERM if (arg0 & 0x40000000)",
                                            "syscall socket socket socket: EPERM if (arg0 & 0xffffffff) == 0x1",
                                            "syscall io_uring_setup io_uring_setup ",
                                            "syscall landlock_create_ruleset " };
        for (size_t i = 0; i < sizeof(once) / sizeof(once[0]); i++)
                if (sup_reports(env, once[i]) != 1)
                        fail_msg("%llu reports for '%s', want exactly 1",
                                 (unsigned long long) sup_reports(env, once[i]), once[i]);
        assert_int_equal(sup_reports(env, "clone3"), 0);
        assert_int_equal(sup_reports(env, "openat2"), 0);
        /* The reason travels with it. */
        assert_int_equal(sup_reports(env, "(kernel keyrings are not namespaced)"), 1);
#if defined(__x86_64__)
        assert_int_equal(sup_reports(env, "syscall x32:getpid x32:getpid another ABI"), 1);
        assert_int_equal(sup_reports(env, "syscall ia32:getpid ia32:getpid another ABI"), 1);
        assert_int_equal(sup_reports(env, NULL), 9);
#else
        assert_int_equal(sup_reports(env, NULL), 7);
#endif
        assert_int_equal(env->violations.n, 0); /* none of them is a file-create-name */
}

static void test_each_refusal_reported_once(void **state) {
        (void) state;
        sup_check(sc_each_once, NULL, 0, NULL, check_each_once);
}

/* Everyday work, a fork and a thread-creating clone included: nothing to report. */
static int sc_allowed(sup_env *env, void *arg) {
        (void) env, (void) arg;
        int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        CHECK(s >= 0);
        close(s);
        int fd = open("/etc/passwd", O_RDONLY | O_CLOEXEC);
        CHECK(fd >= 0);
        close(fd);
        CHECK_CREATE("plain.txt");
        pid_t c = fork();
        CHECK(c >= 0);
        if (c == 0)
                _exit(0);
        CHECK(waitpid(c, NULL, 0) == c);
        return 0;
}

static void check_nothing(sup_env *env) {
        assert_int_equal(sup_reports(env, NULL), 0);
}

static void test_allowed_calls_report_nothing(void **state) {
        (void) state;
        sup_check(sc_allowed, NULL, 0, NULL, check_nothing);
}

/* A storm: every call is refused, the reports stay bounded, and the aggregate says how many. */
static int sc_storm(sup_env *env, void *arg) {
        (void) env, (void) arg;
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        for (int i = 0; i < STORM; i++)
                CHECK_ERR(syscall(SYS_keyctl, 0, 0, 0, 0, 0), EPERM);
        clock_gettime(CLOCK_MONOTONIC, &b);
        double us = ((double) (b.tv_sec - a.tv_sec) * 1e9 + (double) (b.tv_nsec - a.tv_nsec)) / 1e3;
        fprintf(stderr, "refusal storm: %d refused keyctl calls, %.1f us each\n", STORM, us / STORM);
        for (int i = 0; i < 3 * STORM; i++)
                CHECK_ERR(open(i % 2 ? "storm.pem" : ".env", O_CREAT | O_WRONLY, 0644), EACCES);
        return 0;
}

static void check_storm(sup_env *env) {
        /* One by one up to the burst, then one aggregate carrying the rest. */
        assert_int_equal(sup_reports(env, "syscall keyctl keyctl keyctl: EPERM"), STORM);
        size_t individual = 0, aggregates = 0;
        for (size_t i = 0; i < env->reports.n; i++) {
                const char *r = env->reports.v[i];
                if (!strstr(r, "syscall keyctl"))
                        continue;
                if (strstr(r, " x"))
                        aggregates++;
                else
                        individual++;
        }
        assert_int_equal(individual, 8);
        assert_int_equal(aggregates, 1);
        /* Name-rule refusals: the same limit per rule; the aggregate names no single path. */
        assert_int_equal(sup_reports(env, "file-create-name"), 3 * STORM);
        assert_true(env->reports.n <= 3 * 9);
        assert_int_equal(sup_reports(env, "file-create-name openat  *.pem x"), 3 * STORM / 2 - 8);
}

static void test_storm_is_bounded(void **state) {
        (void) state;
        sup_check(sc_storm, NULL, 0, NULL, check_storm);
}

int supervisor_denial_tests_run(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_each_refusal_reported_once),
                cmocka_unit_test(test_allowed_calls_report_nothing),
                cmocka_unit_test(test_storm_is_bounded),
        };
        return cmocka_run_group_tests_name("supervisor-denials", tests, NULL, NULL);
}
