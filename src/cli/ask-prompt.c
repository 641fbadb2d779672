/* SPDX-License-Identifier: Apache-2.0 */
/* `cordon run`'s answerers for the egress ask mode (docs/cli.md, "Ask mode") and for the command
 * policy's "ask" rules (cli_ask_command: before the command starts, so nothing of it runs
 * while the question is open; docs/policy.md, "Command policy"): a question on the
 * controlling terminal, /dev/tty, never the command's stdin or stdout (they may be a pipe, a
 * file, the command's own data). Without a terminal there is nobody to ask: the run is given no
 * answerer and every question is refused at once, recorded as "unanswered" — ask mode never
 * hangs a run in CI.
 *
 * What the command can do to the prompt (SECURITY.md, "Ask mode"): it shares the terminal, but
 * it cannot type into it (it runs in a session of its own, without a controlling terminal, and
 * the seccomp filter refuses TIOCSTI), and while the question is open the library freezes it
 * when the run has a cgroup (run-ask.c), so it cannot draw over the prompt either. Input typed
 * before the question is discarded (tcflush), so keys meant for the command do not answer it.
 * The only answer that allows is a typed 'o' or 's' and Enter; anything else, EOF and the
 * deadline deny. */
#include "cli/ask-prompt.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "util/util.h"

int cli_ask_open(cli_ask *a) {
        a->tty = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
        return a->tty >= 0 ? 0 : -errno;
}

void cli_ask_close(cli_ask *a) {
        if (a->tty >= 0)
                (void) close(a->tty);
        a->tty = -1;
}


/* Printable ASCII only: a destination is a canonical host already, but nothing reaches the
 * terminal that could be an escape sequence. */
static void shown(const char *s, char *buf, size_t size) {
        size_t n = 0;
        for (; s && *s && n + 1 < size; s++)
                buf[n++] = (*s >= 0x20 && *s < 0x7f) ? *s : '?';
        buf[n] = '\0';
}

static _printf_(2, 3) void say(int fd, const char *fmt, ...) {
        char line[1024];
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(line, sizeof(line), fmt, ap);
        va_end(ap);
        if (n > 0)
                (void) !write(fd, line, (size_t) n < sizeof(line) ? (size_t) n : sizeof(line) - 1);
}

/* One line from the terminal within the deadline: >0 its length, 0 EOF, -ETIMEDOUT. */
static ssize_t read_answer(int fd, char *buf, size_t size, int64_t deadline) {
        size_t n = 0;
        while (n + 1 < size) {
                int64_t left = deadline - monotonic_ms();
                if (left <= 0)
                        return -ETIMEDOUT;
                struct pollfd p = { .fd = fd, .events = POLLIN };
                int k = poll(&p, 1, left > 60000 ? 60000 : (int) left);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        continue;
                ssize_t r = read(fd, buf + n, 1);
                if (r < 0 && (errno == EINTR || errno == EAGAIN))
                        continue;
                if (r <= 0)
                        return 0;
                if (buf[n] == '\n' || buf[n] == '\r')
                        break;
                n++;
        }
        buf[n] = '\0';
        return (ssize_t) n + 1;
}

/* What every question does to the terminal first: the command may have left it raw (an
 * editor), so the answer is read as a line, with echo, and the command's settings are put back
 * by question_end(); type-ahead is discarded, so keys meant for the command never answer. */
typedef struct question {
        struct termios saved;
        bool have_termios;
} question;

static void question_begin(int tty, question *q) {
        q->have_termios = tcgetattr(tty, &q->saved) == 0;
        if (q->have_termios) {
                struct termios line = q->saved;
                line.c_lflag |= ICANON | ECHO;
                (void) tcsetattr(tty, TCSANOW, &line);
        }
        (void) tcflush(tty, TCIFLUSH);
}

static void question_end(int tty, const question *q) {
        if (q->have_termios)
                (void) tcsetattr(tty, TCSANOW, &q->saved);
}

static cordon_egress_answer parse_answer(const char *line) {
        while (*line == ' ' || *line == '\t')
                line++;
        return *line == 'o' || *line == 'O'   ? CORDON_EGRESS_ALLOW_ONCE
               : *line == 's' || *line == 'S' ? CORDON_EGRESS_ALLOW_SESSION
                                              : CORDON_EGRESS_DENY;
}

cordon_egress_answer cli_ask_prompt(void *userdata, const cordon_egress_question *q) {
        cli_ask *a = userdata;
        int64_t deadline = monotonic_ms() + (int64_t) q->timeout_ms;
        char target[300], proto[16], secs[32];
        shown(q->target, target, sizeof(target));
        shown(q->protocol, proto, sizeof(proto));
        (void) snprintf(secs, sizeof(secs), "%llu", (unsigned long long) (q->timeout_ms / 1000));
        question tq;
        question_begin(a->tty, &tq);
        say(a->tty, "\r\n\033[0mcordon: the command wants to connect to %s (%s), which no "
                    "egress rule allows.\r\n", target, proto);
        say(a->tty, "cordon: allow it? [o]nce, for this [s]ession, anything else denies "
                    "(%s s): ", secs);
        char buf[64];
        ssize_t r = read_answer(a->tty, buf, sizeof(buf), deadline);
        cordon_egress_answer ans = r > 0 ? parse_answer(buf) : CORDON_EGRESS_DENY;
        say(a->tty, "%s%s\r\n", r == -ETIMEDOUT ? "\r\ncordon: no answer in time: refused "
                                : ans == CORDON_EGRESS_ALLOW_ONCE    ? "cordon: allowed once: "
                                : ans == CORDON_EGRESS_ALLOW_SESSION ? "cordon: allowed for this "
                                                                       "session: "
                                                                     : "cordon: refused: ",
            target);
        question_end(a->tty, &tq);
        return ans;
}

#define COMMAND_ASK_MS (5 * 60 * 1000) /* nobody there for 5 minutes: refused, never hung */

/* The command line as one line of printable ASCII, cut at the buffer's end ("..."). */
static void shown_argv(char *const *argv, char *buf, size_t size) {
        size_t n = 0;
        for (size_t i = 0; argv[i] && n + 4 < size; i++) {
                char word[256];
                shown(argv[i], word, sizeof(word));
                n += (size_t) snprintf(buf + n, size - n, "%s%s", i ? " " : "", word);
        }
        if (n >= size - 1 && size > 4)
                memcpy(buf + size - 4, "...", 4);
}

cordon_command_answer cli_ask_command(void *userdata, const cordon_command_question *q) {
        cli_ask *a = userdata;
        char pattern[256], line[512], mode[32];
        shown(q->pattern, pattern, sizeof(pattern));
        shown(q->mode, mode, sizeof(mode));
        shown_argv(q->argv, line, sizeof(line));
        question tq;
        question_begin(a->tty, &tq);
        say(a->tty, "\r\n\033[0mcordon: the command policy asks before '%s' runs (mode %s, "
                    "commandPolicy[%zu]):\r\n  %s\r\n", pattern, mode, q->rule, line);
        say(a->tty, "cordon: run it? [y]es, anything else refuses: ");
        char buf[64];
        ssize_t r = read_answer(a->tty, buf, sizeof(buf), monotonic_ms() + COMMAND_ASK_MS);
        const char *t = buf;
        while (r > 0 && (*t == ' ' || *t == '\t'))
                t++;
        bool yes = r > 0 && (*t == 'y' || *t == 'Y');
        say(a->tty, "%s\r\n", r == -ETIMEDOUT ? "\r\ncordon: no answer in time: refused"
                              : yes         ? "cordon: approved"
                                            : "cordon: refused");
        question_end(a->tty, &tq);
        return yes ? CORDON_COMMAND_APPROVE : CORDON_COMMAND_DENY;
}
