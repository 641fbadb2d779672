/* SPDX-License-Identifier: Apache-2.0 */
/* Credential brokers: issue at launch, revoke from a reaper (creds-broker.h). */
#include "linux/creds-broker.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
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

/* The reaper: waits for the launcher's end to close, then revokes. */
static _noreturn_ void reaper_main(const policy_broker *b, const char *id, const char *value,
                                   size_t len, int wait_fd) {
        (void) setsid();
        (void) prctl(PR_SET_NAME, "cordon-revoke", 0, 0, 0);
        (void) prctl(PR_SET_DUMPABLE, 0, 0, 0, 0); /* it holds the credential */
        (void) process_disable_core_dumps();
        char c;
        while (read(wait_fd, &c, 1) < 0 && errno == EINTR)
                ;
        (void) close(wait_fd);
        int in[2];
        if (pipe2(in, O_CLOEXEC) < 0)
                _exit(1);
        int64_t deadline = monotonic_ms() + (int64_t) b->timeout_ms;
        pid_t pid = fork();
        if (pid == 0)
                exec_broker(&b->revoke, id, in[0], -1);
        (void) close(in[0]);
        /* A credential is at most 16 KiB: the pipe holds it whole (64 KiB), no reader needed. */
        (void) signal(SIGPIPE, SIG_IGN);
        if (pid > 0 && write(in[1], value, len) < 0)
                (void) 0;
        (void) close(in[1]);
        _exit(pid > 0 && reap(pid, deadline) == 0 ? 0 : 1);
}

int broker_reaper_start(const policy_broker *b, const char *id, const char *value, size_t len,
                        creds_reaper *r, cordon_error *err) {
        *r = (creds_reaper){ .pid = -1, .fd = -1 };
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, errno, "credential broker "
                                        "'%s': pipe: %s", b->name, strerror(errno));
        pid_t pid = fork();
        if (pid == 0) {
                /* Nothing of the launcher's but the pipe: the caller's descriptors (its
                 * terminal's pipes) must not be held open by a process that outlives it. */
                int null = open("/dev/null", O_RDWR | O_CLOEXEC);
                if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0 ||
                    process_close_fds_keep((int[]){ p[0] }, 1) < 0)
                        _exit(1);
                reaper_main(b, id, value, len, p[0]);
        }
        int e = errno;
        (void) close(p[0]);
        if (pid < 0) {
                (void) close(p[1]);
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, e, "credential broker '%s': "
                                        "fork: %s", b->name, strerror(e));
        }
        *r = (creds_reaper){ .pid = pid, .fd = p[1] };
        return 0;
}

void broker_reaper_finish(creds_reaper *r) {
        if (r->fd >= 0)
                (void) close(r->fd);
        if (r->pid > 0)
                FORK_GATE_PAUSED(while (waitpid(r->pid, NULL, 0) < 0 && errno == EINTR));
        *r = (creds_reaper){ .pid = -1, .fd = -1 };
}
