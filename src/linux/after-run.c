/* SPDX-License-Identifier: Apache-2.0 */
/* The after-run process (after-run.h). */
#include "linux/after-run.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "linux/process.h"
#include "util/fork-gate.h"
#include "util/util.h"

static _noreturn_ void after_run_main(const char *name, after_run_action action, void *arg,
                                      int fd) {
        (void) setsid();
        (void) prctl(PR_SET_NAME, name, 0, 0, 0);
        (void) prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
        (void) process_disable_core_dumps();
        int null = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0 ||
            process_close_fds_keep(&fd, 1) < 0 || chdir("/") < 0)
                _exit(1);
        for (;;) {
                char c;
                ssize_t k = read(fd, &c, 1);
                if (k >= 0 || errno != EINTR)
                        break; /* the launcher's byte, or end of file: the run is over */
        }
        (void) close(fd);
        _exit(action(arg));
}

int after_run_start(const char *name, after_run_action action, void *arg, after_run *out) {
        *out = (after_run) AFTER_RUN_INIT;
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0)
                return -errno;
        pid_t pid = fork();
        if (pid == 0) {
                (void) close(p[1]);
                after_run_main(name, action, arg, p[0]);
        }
        int e = errno;
        (void) close(p[0]);
        if (pid < 0) {
                (void) close(p[1]);
                return -e;
        }
        *out = (after_run) { .pid = pid, .fd = p[1] };
        return 0;
}

void after_run_release(after_run *r) {
        if (r->fd < 0)
                return;
        /* If the byte cannot be written (it always can: the pipe is empty), the close still ends
         * the wait once every copy of this end is gone. */
        while (write(r->fd, "x", 1) < 0 && errno == EINTR)
                ;
        r->fd = safe_close(r->fd);
}

void after_run_finish(after_run *r) {
        after_run_release(r);
        if (r->pid > 0)
                FORK_GATE_PAUSED(while (waitpid(r->pid, NULL, 0) < 0 && errno == EINTR));
        *r = (after_run) AFTER_RUN_INIT;
}
