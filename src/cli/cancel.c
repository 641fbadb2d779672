/* SPDX-License-Identifier: Apache-2.0 */
#include "cli/cancel.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

static const int cancel_signals[3] = { SIGINT, SIGTERM, SIGHUP };

/* Process-wide by nature (a signal handler has no argument): set between begin and end only. */
static int cancel_wfd = -1;
static pid_t cancel_pid;
static volatile sig_atomic_t cancel_sig;

static void on_cancel_signal(int sig) {
        int saved = errno;
        /* The sandbox's processes are forked from this one and inherit the handler until they
         * reset it or exec: there the signal keeps its default action. */
        if (getpid() != cancel_pid) {
                (void) signal(sig, SIG_DFL);
                (void) raise(sig);
                errno = saved;
                return;
        }
        if (!cancel_sig)
                cancel_sig = sig;
        char b = 1;
        ssize_t n = write(cancel_wfd, &b, 1); /* EAGAIN: already readable, which is enough */
        (void) n;
        errno = saved;
}

int cli_cancel_begin(cli_cancel *c) {
        *c = (cli_cancel) { .fds = { -1, -1 } };
        if (pipe2(c->fds, O_CLOEXEC | O_NONBLOCK) < 0)
                return -1;
        cancel_wfd = c->fds[1];
        cancel_pid = getpid();
        cancel_sig = 0;
        struct sigaction sa = { .sa_handler = on_cancel_signal, .sa_flags = SA_RESTART };
        sigemptyset(&sa.sa_mask);
        for (int i = 0; i < 3; i++) {
                if (sigaction(cancel_signals[i], &sa, &c->old[i]) < 0)
                        break;
                c->installed = i + 1;
        }
        return c->fds[0];
}

int cli_cancel_end(cli_cancel *c) {
        for (int i = 0; i < c->installed; i++)
                (void) sigaction(cancel_signals[i], &c->old[i], NULL); /* restores what worked */
        for (int i = 0; i < 2; i++)
                if (c->fds[i] >= 0)
                        (void) close(c->fds[i]);
        cancel_wfd = -1;
        c->fds[0] = c->fds[1] = -1;
        return cancel_sig;
}
