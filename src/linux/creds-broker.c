/* SPDX-License-Identifier: Apache-2.0 */
/* Credential brokers: issue at launch, revoke after the run (creds-broker.h). */
#include "linux/creds-broker.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "linux/process.h"
#include "net/cred-rewrite.h"
#include "util/fork-gate.h"
#include "util/util.h"

#define BROKER_OUT_MAX CRED_VALUE_MAX


/* In the forked child: stdin from in_fd (or /dev/null), stdout to out_fd (or /dev/null),
 * stderr /dev/null (a broker's diagnostics may quote the credential), nothing else open. */
static _noreturn_ void exec_broker(const strv *cmd, const char *id, int in_fd, int out_fd) {
        int null = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (null < 0 || dup2(in_fd >= 0 ? in_fd : null, 0) < 0 ||
            dup2(out_fd >= 0 ? out_fd : null, 1) < 0 || dup2(null, 2) < 0 ||
            process_close_fds_keep(NULL, 0) < 0)
                _exit(127);
        (void) setpgid(0, 0); /* killed as a group at the timeout */
        char run_id[300];
        (void) snprintf(run_id, sizeof(run_id), "CORDON_RUN_ID=%s", id);
        char *envp[] = { (char *) "PATH=/usr/sbin:/usr/bin:/sbin:/bin", run_id, NULL };
        char *argv[34];
        size_t n = 0;
        for (; n < cmd->n && n < 32; n++)
                argv[n] = cmd->v[n];
        argv[n++] = (char *) id;
        argv[n] = NULL;
        sigset_t none;
        (void) sigemptyset(&none);
        (void) sigprocmask(SIG_SETMASK, &none, NULL);
        execve(argv[0], argv, envp);
        _exit(127);
}

/* Waits for pid until deadline, then kills its group; the exit status, or -ETIMEDOUT. */
static int reap(pid_t pid, int64_t deadline) {
        int pfd = (int) syscall(SYS_pidfd_open, pid, 0);
        int st = 0;
        for (;;) {
                pid_t w = waitpid(pid, &st, WNOHANG);
                if (w == pid)
                        break;
                int64_t left = deadline - monotonic_ms();
                if (left <= 0 || (w < 0 && errno != EINTR)) {
                        (void) kill(-pid, SIGKILL);
                        (void) kill(pid, SIGKILL);
                        FORK_GATE_PAUSED(while (waitpid(pid, &st, 0) < 0 && errno == EINTR));
                        if (pfd >= 0)
                                (void) close(pfd);
                        return -ETIMEDOUT;
                }
                struct pollfd p = { .fd = pfd, .events = POLLIN };
                if (pfd >= 0)
                        FORK_GATE_PAUSED((void) poll(&p, 1, (int) (left < 100 ? left : 100)));
                else
                        FORK_GATE_PAUSED((void) usleep(10000));
        }
        if (pfd >= 0)
                (void) close(pfd);
        return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

/* Reads the child's stdout until EOF, the limit or the deadline. */
static int read_out(int fd, char *buf, size_t cap, size_t *len, int64_t deadline) {
        *len = 0;
        for (;;) {
                int64_t left = deadline - monotonic_ms();
                if (left <= 0)
                        return -ETIMEDOUT;
                struct pollfd p = { .fd = fd, .events = POLLIN };
                int pr;
                FORK_GATE_PAUSED(pr = poll(&p, 1, (int) left));
                if (pr < 0 && errno == EINTR)
                        continue;
                if (pr <= 0)
                        return pr < 0 ? -errno : -ETIMEDOUT;
                ssize_t k = read(fd, buf + *len, cap - *len);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return -errno;
                if (k == 0)
                        return 0;
                *len += (size_t) k;
                if (*len == cap)
                        return -EFBIG;
        }
}

int broker_issue(const policy_broker *b, const char *id, char **value, size_t *len,
                 cordon_error *err) {
        *value = NULL;
        *len = 0;
        int out[2];
        if (pipe2(out, O_CLOEXEC) < 0)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, errno, "credential broker "
                                        "'%s': pipe: %s", b->name, strerror(errno));
        int64_t deadline = monotonic_ms() + (int64_t) b->timeout_ms;
        pid_t pid = fork();
        if (pid == 0)
                exec_broker(&b->issue, id, -1, out[1]);
        int e = errno;
        (void) close(out[1]);
        if (pid < 0) {
                (void) close(out[0]);
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, e, "credential broker '%s': "
                                        "fork: %s", b->name, strerror(e));
        }
        char *buf = malloc(BROKER_OUT_MAX + 1);
        size_t n = 0;
        int r = buf ? read_out(out[0], buf, BROKER_OUT_MAX + 1, &n, deadline) : -ENOMEM;
        (void) close(out[0]);
        int st = reap(pid, r == -ETIMEDOUT ? 0 : deadline);
        if (r == 0 && st != 0)
                r = st == -ETIMEDOUT ? -ETIMEDOUT : -EPROTO;
        if (r == 0 && n > 0 && buf[n - 1] == '\n')
                n--;
        if (r == 0 && n > 0 && buf[n - 1] == '\r')
                n--;
        if (r == 0 && n == 0)
                r = -ENODATA;
        if (r < 0) {
                if (buf) {
                        explicit_bzero(buf, BROKER_OUT_MAX + 1);
                        free(buf);
                }
                return cordon_set_error(
                        err, CORDON_LAUNCH_FAILED, -r,
                        "credential broker '%s': the issue command %s failed: %s", b->name,
                        b->issue.v[0],
                        r == -EPROTO      ? "it exited non-zero"
                        : r == -ETIMEDOUT ? "it did not finish within the broker's timeout"
                        : r == -ENODATA   ? "it printed no credential"
                        : r == -EFBIG     ? "its credential is longer than 16 KiB"
                                          : strerror(-r));
        }
        buf[n] = '\0';
        *value = buf;
        *len = n;
        return 0;
}

/* What the revoke needs, in the after-run process's copy of the launcher's memory. */
typedef struct revoke_job {
        const policy_broker *b;
        const char *id;
        const char *value;
        size_t len;
} revoke_job;

/* In the after-run process, once the run is over: the broker's revoke command with the
 * credential on its stdin. */
static int run_revoke(void *arg) {
        const revoke_job *job = arg;
        int in[2];
        if (pipe2(in, O_CLOEXEC) < 0)
                return 1;
        int64_t deadline = monotonic_ms() + (int64_t) job->b->timeout_ms;
        pid_t pid = fork();
        if (pid == 0)
                exec_broker(&job->b->revoke, job->id, in[0], -1);
        (void) close(in[0]);
        /* A credential is at most 16 KiB: the pipe holds it whole (64 KiB), no reader needed. */
        (void) signal(SIGPIPE, SIG_IGN);
        if (pid > 0 && write(in[1], job->value, job->len) < 0)
                (void) 0;
        (void) close(in[1]);
        return pid > 0 && reap(pid, deadline) == 0 ? 0 : 1;
}

int broker_reaper_start(const policy_broker *b, const char *id, const char *value, size_t len,
                        after_run *r, cordon_error *err) {
        revoke_job job = { .b = b, .id = id, .value = value, .len = len };
        int e = after_run_start("cordon-revoke", run_revoke, &job, r);
        if (e < 0)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, -e, "credential broker '%s': "
                                        "cannot start its revoke: %s", b->name, strerror(-e));
        return 0;
}
