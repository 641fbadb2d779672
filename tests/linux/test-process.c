/* SPDX-License-Identifier: Apache-2.0 */
/* The close-all-fds of cordon's setup processes (process_close_fds_keep, src/linux/process.h):
 * in a forked child, exactly the listed descriptors survive, and a list too long to honour
 * closes nothing. */
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "linux/process.h"
#include "util/util.h"

#define N_FDS (PROCESS_KEEP_FDS_MAX + 4) /* more than can be kept */

static bool is_open(int fd) {
        return fcntl(fd, F_GETFD) >= 0;
}

/* Opens N_FDS descriptors, keeps keep[0..n) with process_close_fds_keep() in a child and
 * returns the child's verdict: 0 when the call returned `want` and the open set is as expected
 * (with want < 0: every fd still open). */
static int run_child(const int *keep_idx, size_t n, int want) {
        int fds[N_FDS];
        for (size_t i = 0; i < N_FDS; i++)
                assert_true((fds[i] = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 3);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                int keep[PROCESS_KEEP_FDS_MAX + 2];
                for (size_t i = 0; i < n; i++)
                        keep[i] = keep_idx[i] < 0 ? keep_idx[i] : fds[keep_idx[i]];
                if (process_close_fds_keep(keep, n) != want)
                        _exit(2);
                for (size_t i = 0; i < N_FDS; i++) {
                        bool kept = want < 0;
                        for (size_t k = 0; k < n; k++)
                                kept = kept || keep_idx[k] == (int) i;
                        if (is_open(fds[i]) != kept)
                                _exit(3);
                }
                _exit(is_open(0) && is_open(1) && is_open(2) ? 0 : 4);
        }
        int status = 0;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        for (size_t i = 0; i < N_FDS; i++)
                (void) close(fds[i]); /* the test's own descriptors, opened above */
        return WIFEXITED(status) ? WEXITSTATUS(status) : 100;
}

static void test_keep(void **state) {
        assert_int_equal(run_child(NULL, 0, 0), 0);
        assert_int_equal(run_child((const int[]){ 0 }, 1, 0), 0);
        assert_int_equal(run_child((const int[]){ N_FDS - 1 }, 1, 0), 0);
        /* Unsorted, adjacent, duplicated, with -1 and 0-2 entries ignored. */
        assert_int_equal(run_child((const int[]){ 7, 3, 4, 7, -1 }, 5, 0), 0);
        assert_int_equal(run_child((const int[]){ 5, 0, N_FDS - 1 }, 3, 0), 0);
}

static void test_too_many(void **state) {
        int idx[PROCESS_KEEP_FDS_MAX + 1];
        for (size_t i = 0; i < ELEMENTSOF(idx); i++)
                idx[i] = (int) i;
        assert_int_equal(run_child(idx, ELEMENTSOF(idx), -E2BIG), 0);
        assert_int_equal(run_child(idx, PROCESS_KEEP_FDS_MAX, 0), 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_keep),
                cmocka_unit_test(test_too_many),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
