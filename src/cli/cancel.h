/* SPDX-License-Identifier: Apache-2.0 */
/* SIGINT, SIGTERM and SIGHUP to `cordon run` stop the run cleanly: the handler writes to a pipe
 * the library watches (cordon_run_options.cancel_fd), the library kills the sandbox with
 * everything in it and ends the events stream with "killed" {"reason": "manual"}. Without this
 * the signal would kill cordon outright: the sandbox still dies (every stage has
 * PR_SET_PDEATHSIG), but silently, with no terminal event. */
#pragma once

#include <signal.h>

typedef struct cli_cancel {
        int fds[2];                 /* the pipe: [0] is the cancel_fd, [1] the handler's end */
        struct sigaction old[3];    /* SIGINT, SIGTERM, SIGHUP as they were */
        int installed;              /* how many of old[] to restore */
} cli_cancel;

/* Creates the pipe and installs the handlers. Returns the descriptor for cancel_fd, or -1 when
 * that failed (then the signals keep their default action: still safe, just not reported). */
int cli_cancel_begin(cli_cancel *c);
/* Restores the handlers, closes the pipe; returns the first signal that arrived, or 0. */
int cli_cancel_end(cli_cancel *c);
