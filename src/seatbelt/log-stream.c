/* SPDX-License-Identifier: Apache-2.0 */
/* `log stream` for this run's refusals (log-stream.h). */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>

#include "seatbelt/log-stream.h"
#include "util/util.h"

extern char **environ;


/* The Sandbox sender's messages that carry a cordon tag for `session` (the parser checks both
 * again: the predicate only keeps the stream small). session_ok() in seatbelt.c: no quote and
 * no backslash in a session id, so it cannot end the predicate's string. */
static char *predicate_for(const char *session) {
        char *p = NULL;
        if (asprintf(&p, "sender == \"Sandbox\" AND eventMessage CONTAINS \"%s\" AND "
                         "eventMessage CONTAINS \" %s\"",
                     SEATBELT_TAG_PREFIX, session) < 0)
                return NULL;
        return p;
}

/* The program with its stdout on a pipe, stdin and stderr on /dev/null. */
static int spawn_log(const char *program, const char *predicate, int out_fd, pid_t *ret) {
        posix_spawn_file_actions_t fa;
        int r = posix_spawn_file_actions_init(&fa);
        if (r != 0)
                return -r;
        r = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
        if (r == 0)
                r = posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
        if (r == 0)
                r = posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
        char *argv[] = { (char *) "log",       (char *) "stream",    (char *) "--style",
                         (char *) "ndjson",    (char *) "--predicate", (char *) predicate,
                         NULL };
        if (r == 0)
                r = posix_spawn(ret, program, &fa, NULL, argv, environ);
        (void) posix_spawn_file_actions_destroy(&fa);
        return -r;
}

static void end_program(seatbelt_log_stream *s) {
        if (s->pid > 0) {
                (void) kill(s->pid, SIGTERM);
                while (waitpid(s->pid, NULL, 0) < 0 && errno == EINTR)
                        ;
        }
        s->pid = -1;
        if (s->fd >= 0)
                (void) close(s->fd);
        s->fd = -1;
}

/* Reads once what is there (*newline: it held a line's end); false at the end of the stream
 * or on an error. */
static bool read_some(seatbelt_log_stream *s, bool *newline) {
        char buf[16384];
        ssize_t n = read(s->fd, buf, sizeof(buf));
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
                return true;
        if (n <= 0)
                return false;
        if (newline && memchr(buf, '\n', (size_t) n))
                *newline = true;
        seatbelt_log_feed(s->reader, buf, (size_t) n);
        return true;
}

/* Waits at most `ms` for something to read; false when nothing came. */
static bool wait_readable(int fd, unsigned ms) {
        struct pollfd pfd = { .fd = fd, .events = POLLIN };
        int n;
        while ((n = poll(&pfd, 1, (int) ms)) < 0 && errno == EINTR)
                ;
        return n > 0;
}

/* Until the first line (the header) is in: the stream is then live. */
static int wait_header(seatbelt_log_stream *s, unsigned ready_ms) {
        uint64_t deadline = (uint64_t) monotonic_ms() + ready_ms;
        for (bool newline = false; !newline;) {
                uint64_t now = (uint64_t) monotonic_ms();
                if (now >= deadline || !wait_readable(s->fd, (unsigned) (deadline - now)))
                        return -ETIMEDOUT;
                if (!read_some(s, &newline))
                        return -EPIPE; /* it exited: a bad predicate, no such style */
        }
        return 0;
}

int seatbelt_log_stream_start(seatbelt_log_stream *s, const char *program, const char *session,
                              unsigned ready_ms, seatbelt_violation_fn fn, void *userdata) {
        *s = (seatbelt_log_stream) { .pid = -1, .fd = -1 };
        _cleanup_free_ char *pred = predicate_for(session);
        s->reader = malloc(sizeof(*s->reader));
        if (!pred || !s->reader) {
                free(s->reader);
                s->reader = NULL;
                return -ENOMEM;
        }
        seatbelt_log_reader_init(s->reader, session, fn, userdata);
        int fds[2];
        int r = pipe_cloexec(fds);
        if (r >= 0) {
                r = spawn_log(program, pred, fds[1], &s->pid);
                (void) close(fds[1]);
                s->fd = fds[0];
                if (r < 0)
                        s->pid = -1;
        }
        if (r >= 0)
                r = wait_header(s, ready_ms);
        if (r < 0) {
                end_program(s);
                free(s->reader);
                s->reader = NULL;
        }
        return r;
}

bool seatbelt_log_stream_read(void *stream) {
        seatbelt_log_stream *s = stream;
        return s->fd >= 0 && read_some(s, NULL);
}

unsigned seatbelt_log_stream_stop(seatbelt_log_stream *s, unsigned quiet_ms, unsigned max_ms) {
        if (!s->reader)
                return 0;
        uint64_t deadline = (uint64_t) monotonic_ms() + max_ms;
        for (uint64_t now = (uint64_t) monotonic_ms(); s->fd >= 0 && now < deadline; now = (uint64_t) monotonic_ms()) {
                unsigned left = (unsigned) (deadline - now);
                if (!wait_readable(s->fd, left < quiet_ms ? left : quiet_ms) ||
                    !read_some(s, NULL))
                        break;
        }
        end_program(s);
        unsigned n = s->reader->violations;
        free(s->reader);
        s->reader = NULL;
        return n;
}
