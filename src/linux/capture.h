/* SPDX-License-Identifier: Apache-2.0 */
/* Capture of the command's stdout and stderr (cordon_run_options.capture): the command writes
 * into pipes the launcher reads; every chunk goes on, unchanged, to the launcher's fd 1 or 2 or
 * the descriptors cordon_spawn_options names (where the command would have written) and becomes
 * a "stdout" or "stderr" event.
 *
 * Bounded: one CAPTURE_CHUNK buffer per stream, nothing queued. When the reader of fd 1 or 2 is
 * slow the launcher waits for it, the pipe fills and the command blocks in write(2), exactly as
 * without capture: a flood of output neither deadlocks nor grows memory. When that reader is gone
 * (EPIPE) the stream's pipe is closed, so the command's next write fails as it would have.
 *
 * The pipes are created close-on-exec above fd 2 and reach only the sandbox's first process
 * (which puts them on the command's fds 1 and 2); the launcher keeps the read ends. */
#pragma once

#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "run/events.h"

#define CAPTURE_CHUNK 16384 /* bytes per read, and so at most per event */

typedef struct capture_stream {
        int read_fd;   /* the launcher's end; -1 when not captured or closed */
        int write_fd;  /* the command's end, until capture_parent() */
        int dest_fd;   /* the command's: 1 or 2 */
        int forward_fd; /* the caller's, where each chunk goes on; -1: nowhere (/dev/null) */
        bool is_stderr;
        size_t held;   /* bytes of an unfinished UTF-8 character kept for the next event */
        char *buf;     /* CAPTURE_CHUNK bytes */
} capture_stream;

typedef struct capture {
        capture_stream s[2]; /* stdout, stderr */
        const events *ev;
        /* Called after each read, before its bytes become events (may be NULL): the launcher
         * delivers the refusals queued by then first, so a refusal precedes the output the
         * command wrote after it (docs/protocol.md, "Order of events"). */
        void (*before_output)(void *userdata);
        void *before_output_userdata;
} capture;

/* Creates the pipes for the streams in `what` (CORDON_CAPTURE_* bits; 0: nothing, every other
 * call is then a no-op). `forward_fd`: the caller's descriptors for the command's stdout and
 * stderr, where the chunks go on (-1: nowhere). A stream whose descriptor is not open in the
 * caller is not captured: the command inherits the closed fd as it would have. Returns 0 or
 * -errno. */
int capture_open(capture *c, unsigned what, const events *ev, const int forward_fd[2]);

/* In the forked child, first thing: the pipes become fds 1 and 2. On failure the child reports
 * LAUNCH_FAILED on `report_fd` and exits 125: nothing runs with the wrong stdout. */
void capture_child(capture *c, int report_fd);

/* In the launcher after the fork: closes the command's ends. */
void capture_parent(capture *c);

/* The read ends to poll (fd -1 when absent); pfd[0] stdout, pfd[1] stderr. */
void capture_pollfds(const capture *c, struct pollfd pfd[2]);

/* Handles what poll() reported for them: reads, forwards, emits. Waiting for fd 1 or 2 to
 * accept the bytes ends at `until_ms` (CLOCK_MONOTONIC milliseconds, -1: no end); then the
 * stream is closed, so a timeout is enforced even against a stalled reader. */
void capture_pump(capture *c, const struct pollfd pfd[2], int64_t until_ms);

/* The run is over: keeps pumping until `child` has exited (pid -1: not at all), then takes what
 * is still buffered in the pipes without waiting for writers left outside a sandbox (an
 * unconfined run's background jobs), emits a held partial character, and closes everything. */
void capture_end(capture *c, pid_t child, int64_t until_ms);

