/* SPDX-License-Identifier: Apache-2.0 */
/* Capture of the command's stdout and stderr (see capture.h). */
#include "linux/capture.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>

#include "report/report.h"
#include "util/utf8.h"
#include "util/util.h"


/* Milliseconds left until `until_ms` for poll(): -1 forever, 0 when passed. */
static int left_ms(int64_t until_ms) {
        if (until_ms < 0)
                return -1;
        int64_t left = until_ms - monotonic_ms();
        return left < 0 ? 0 : left > INT32_MAX ? INT32_MAX : (int) left;
}

/* A pipe end that landed on fd 0-2 (the caller had closed it) would be mistaken for the stdio
 * the command inherits: moved above 2. */
static int above_stdio(int fd) {
        if (fd > 2)
                return fd;
        int moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        int e = errno;
        (void) close(fd); /* a fresh pipe end: nothing to flush */
        errno = e;
        return moved;
}

static void stream_close(capture_stream *s) {
        s->read_fd = safe_close(s->read_fd);
        s->write_fd = safe_close(s->write_fd);
}

static int stream_open(capture_stream *s) {
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0)
                return -errno;
        s->read_fd = above_stdio(p[0]);
        s->write_fd = above_stdio(p[1]);
        s->buf = malloc(CAPTURE_CHUNK);
        if (s->read_fd < 0 || s->write_fd < 0 || !s->buf) {
                int e = s->buf ? errno : ENOMEM;
                stream_close(s);
                return -e;
        }
        return 0;
}

int capture_open(capture *c, unsigned what, const events *ev, const int forward_fd[2]) {
        *c = (capture) { .ev = ev };
        for (int i = 0; i < 2; i++)
                c->s[i] = (capture_stream) { .read_fd = -1, .write_fd = -1, .dest_fd = i + 1,
                                             .forward_fd = forward_fd[i], .is_stderr = i == 1 };
        for (int i = 0; i < 2; i++) {
                unsigned bit = i == 0 ? CORDON_CAPTURE_STDOUT : CORDON_CAPTURE_STDERR;
                if (!(what & bit) || (forward_fd[i] >= 0 && fcntl(forward_fd[i], F_GETFD) < 0))
                        continue;
                int r = stream_open(&c->s[i]);
                if (r < 0) {
                        capture_end(c, -1, -1);
                        return r;
                }
        }
        return 0;
}

void capture_child(capture *c, int report_fd) {
        for (int i = 0; i < 2; i++) {
                capture_stream *s = &c->s[i];
                if (s->write_fd < 0)
                        continue;
                /* dup2 clears close-on-exec on the copy: the command inherits it as fd 1/2. */
                if (dup2(s->write_fd, s->dest_fd) < 0)
                        report_fatal(report_fd, CORDON_LAUNCH_FAILED, errno,
                                     "cannot put the capture pipe on fd %d: %s", s->dest_fd,
                                     strerror(errno)), _exit(125);
                /* The read end goes too: a reader left in the sandbox would keep the pipe open
                 * after the launcher closed its end, and the command would never see EPIPE. */
                (void) close(s->write_fd);
                (void) close(s->read_fd);
        }
}

void capture_parent(capture *c) {
        for (int i = 0; i < 2; i++)
                c->s[i].write_fd = safe_close(c->s[i].write_fd);
}

void capture_pollfds(const capture *c, struct pollfd pfd[2]) {
        for (int i = 0; i < 2; i++)
                pfd[i] = (struct pollfd) { .fd = c->s[i].read_fd, .events = POLLIN };
}

/* write(2) with SIGPIPE blocked in this thread: a caller whose fd 1 reader went away must get
 * EPIPE here, not die of the signal (the library never kills its caller). A SIGPIPE this write
 * raised is consumed before the old mask returns; one that was pending before stays pending. */
static ssize_t write_nosigpipe(int fd, const void *buf, size_t len) {
        sigset_t pipe_set, old, pending;
        sigemptyset(&pipe_set);
        sigaddset(&pipe_set, SIGPIPE);
        if (pthread_sigmask(SIG_BLOCK, &pipe_set, &old) != 0)
                return -EINVAL;
        bool was_pending = sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1;
        ssize_t n = write(fd, buf, len);
        int e = errno;
        if (n < 0 && e == EPIPE && !was_pending)
                (void) sigtimedwait(&pipe_set, NULL, &(struct timespec) { 0, 0 });
        (void) pthread_sigmask(SIG_SETMASK, &old, NULL);
        return n < 0 ? -e : n;
}

/* Passes bytes on to fd 1 or 2 unchanged. With an end time, each write waits for POLLOUT first
 * and writes at most PIPE_BUF, which a pipe then takes without blocking; without one, plain
 * blocking writes. Returns 0, -ETIME when `until_ms` passed, or the write's -errno. */
static int forward(int fd, const char *p, size_t n, int64_t until_ms) {
        while (fd >= 0 && n > 0) {
                if (until_ms >= 0) {
                        struct pollfd pfd = { .fd = fd, .events = POLLOUT };
                        int r = poll(&pfd, 1, left_ms(until_ms));
                        if (r < 0 && errno == EINTR)
                                continue;
                        if (r == 0)
                                return -ETIME;
                        if (r < 0)
                                return -errno;
                }
                size_t want = until_ms >= 0 && n > PIPE_BUF ? PIPE_BUF : n;
                ssize_t w = write_nosigpipe(fd, p, want);
                if (w == -EINTR || w == -EAGAIN)
                        continue;
                if (w < 0)
                        return (int) w;
                p += w;
                n -= (size_t) w;
        }
        return 0;
}

/* Emits buf[0..len) as events, keeping a trailing unfinished UTF-8 character (at most 3 bytes)
 * for the next read, so that text split across reads stays text. `final`: nothing more will
 * come, emit everything. */
static void emit(capture *c, capture_stream *s, size_t len, bool final) {
        size_t cut = final ? len : len - utf8_incomplete_tail(s->buf, len);
        if (cut > 0)
                events_output(c->ev, s->is_stderr, s->buf, cut);
        memmove(s->buf, s->buf + cut, len - cut);
        s->held = len - cut;
}

/* One read: forward, emit. At EOF, on a read error, or when the bytes cannot be forwarded, the
 * stream closes (the command's next write then fails: EPIPE, as if it wrote to the gone reader
 * itself). Returns the bytes read (0 when closed). */
static size_t pump_one(capture *c, capture_stream *s, int64_t until_ms) {
        ssize_t n = read(s->read_fd, s->buf + s->held, CAPTURE_CHUNK - s->held);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
                return 1; /* nothing lost; poll again */
        if (n <= 0) {
                emit(c, s, s->held, true);
                stream_close(s);
                return 0;
        }
        if (c->before_output)
                c->before_output(c->before_output_userdata);
        int r = forward(s->forward_fd, s->buf + s->held, (size_t) n, until_ms);
        /* The command wrote these bytes whether or not they could be passed on. */
        emit(c, s, s->held + (size_t) n, r < 0);
        if (r < 0) {
                stream_close(s);
                return 0;
        }
        return (size_t) n;
}

void capture_pump(capture *c, const struct pollfd pfd[2], int64_t until_ms) {
        for (int i = 0; i < 2; i++)
                if (c->s[i].read_fd >= 0 && pfd[i].fd == c->s[i].read_fd &&
                    (pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
                        (void) pump_one(c, &c->s[i], until_ms);
}

/* Pumps until `pidfd` is readable, i.e. the process has exited, or both streams ended. With
 * pidfd -1: only what is buffered now, at most a few pipefuls (a writer left running outside a
 * sandbox must not keep the launcher here). */
static void pump_until_exit(capture *c, int pidfd, int64_t until_ms) {
        for (int rounds = 0; c->s[0].read_fd >= 0 || c->s[1].read_fd >= 0; rounds++) {
                if (pidfd < 0 && rounds >= 32)
                        return;
                struct pollfd pfd[3];
                capture_pollfds(c, pfd);
                pfd[2] = (struct pollfd) { .fd = pidfd, .events = POLLIN };
                int n = poll(pfd, 3, pidfd >= 0 ? -1 : 0);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0 || (pfd[2].revents & POLLIN))
                        return;
                capture_pump(c, pfd, until_ms);
        }
}

void capture_end(capture *c, pid_t child, int64_t until_ms) {
        if (child > 0) {
                /* Unconfined runs report no end (their report channel closes at exec): the
                 * child's exit is the end. A pidfd makes it pollable next to the pipes. */
                int pidfd = (int) syscall(SYS_pidfd_open, child, 0);
                if (pidfd >= 0) {
                        pump_until_exit(c, pidfd, until_ms);
                        (void) close(pidfd);
                }
                /* What the exited processes wrote is in the pipes: take it without waiting. */
                pump_until_exit(c, -1, until_ms);
        }
        for (int i = 0; i < 2; i++) {
                capture_stream *s = &c->s[i];
                if (s->read_fd >= 0)
                        emit(c, s, s->held, true);
                stream_close(s);
                free(s->buf);
                s->buf = NULL;
        }
}
