/* SPDX-License-Identifier: Apache-2.0 */
/* The egress proxy's own confinement (proxy_drop_privileges() → landlock_confine_helper()): a
 * process so confined can still read and resolve, but can neither write a file anywhere nor
 * execute anything. Each check runs in a forked child: Landlock cannot be undone. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "linux/landlock.h"

/* In a child: confine, then run `what`; the child's exit status is what it returns. */
static int in_confined_child(int (*what)(void)) {
        pid_t pid = fork();
        if (pid == 0) {
                if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || landlock_confine_helper() < 0)
                        _exit(100);
                _exit(what());
        }
        int st = 0;
        assert_true(waitpid(pid, &st, 0) == pid);
        assert_true(WIFEXITED(st));
        return WEXITSTATUS(st);
}

static int try_write(void) {
        char path[] = "/var/tmp/cordon-confine-XXXXXX";
        int fd = mkstemp(path);
        if (fd >= 0) {
                (void) unlink(path);
                return 1; /* created a file: not confined */
        }
        return errno == EACCES ? 0 : 2;
}

static int try_exec(void) {
        execl("/bin/true", "true", (char *) NULL);
        return errno == EACCES ? 0 : 1;
}

static int try_read(void) {
        int fd = open("/etc/hosts", O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return 1;
        char b[16];
        ssize_t n = read(fd, b, sizeof(b));
        close(fd);
        return n >= 0 ? 0 : 1;
}

static void test_no_write_no_exec_but_reads(void **state) {
        (void) state;
        if (landlock_abi() < 1)
                skip();
        assert_int_equal(in_confined_child(try_write), 0);
        assert_int_equal(in_confined_child(try_exec), 0);
        assert_int_equal(in_confined_child(try_read), 0);
        /* And the checks can fail: unconfined, the same write and exec succeed. */
        assert_int_equal(try_write(), 1);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_no_write_no_exec_but_reads),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
