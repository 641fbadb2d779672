/* SPDX-License-Identifier: Apache-2.0 */
/* Running a binary from a test and capturing its output (see run-binary.h). */
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "run-binary.h"

/* Reads both pipes until both are closed: reading one only could block the child on the other. */
static void drain(int fds[2], run_result *res) {
        size_t lens[2] = { 0, 0 };
        char *bufs[2] = { res->out, res->err };
        int open_fds = 2;
        while (open_fds > 0) {
                struct pollfd p[2] = { { fds[0], POLLIN, 0 }, { fds[1], POLLIN, 0 } };
                assert_true(poll(p, 2, 30000) > 0);
                for (int i = 0; i < 2; i++) {
                        if (fds[i] < 0 || !(p[i].revents & (POLLIN | POLLHUP)))
                                continue;
                        ssize_t n = read(fds[i], bufs[i] + lens[i],
                                         RUN_OUTPUT_MAX - 1 - lens[i]);
                        assert_true(n >= 0);
                        if (n == 0) {
                                close(fds[i]);
                                fds[i] = -1;
                                open_fds--;
                        }
                        lens[i] += (size_t) n;
                }
        }
        res->out[lens[0]] = '\0';
        res->err[lens[1]] = '\0';
}

void run_binary(run_result *res, const char *path, const char *const *args, run_setup_fn setup,
                void *data) {
        char *argv[64] = { (char *) path };
        int n = 1;
        for (; args[n - 1]; n++)
                argv[n] = (char *) args[n - 1];
        argv[n] = NULL;
        int out[2], err[2];
        assert_int_equal(pipe2(out, O_CLOEXEC), 0);
        assert_int_equal(pipe2(err, O_CLOEXEC), 0);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                int devnull = open("/dev/null", O_RDONLY);
                if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(out[1], 1) < 0 ||
                    dup2(err[1], 2) < 0 || (setup && setup(data) != 0))
                        _exit(99);
                execv(path, argv);
                _exit(98);
        }
        close(out[1]);
        close(err[1]);
        drain((int[2]) { out[0], err[0] }, res);
        int status;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        res->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

void assert_fatal(const run_result *res, const char *line) {
        assert_int_equal(res->status, 125);
        assert_string_equal(res->out, "");
        assert_string_equal(res->err, line);
}
