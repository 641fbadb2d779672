/* SPDX-License-Identifier: Apache-2.0 */
/* Work that must happen after a run however the run ends: removing the landlock backend's
 * per-run directories on the host (run-dirs.h), revoking a broker's per-run credential
 * (creds-broker.h). "However it ends" includes `kill -9` of cordon or of the daemon, when no
 * cleanup code of the launcher runs, so the work cannot be the launcher's.
 *
 * It is an after-run process instead, forked when the thing to undo is made:
 *   - in a session of its own and without a parent-death signal, so a terminal's ^C, a kill of
 *     cordon's process group or cordon's death does not end it before it has done its work;
 *   - holding nothing of the caller's but the read end of a pipe (stdio on /dev/null, every
 *     other descriptor closed): a capture pipe or terminal it kept would keep the caller's
 *     reader waiting after the run;
 *   - non-dumpable, without core dumps: it may hold a credential, and a command running as the
 *     same user must be able neither to read its memory nor to trace it into other work;
 *   - waiting for a byte or end of file on that pipe. The write end is the launcher's (and
 *     whoever else must have ended first: the landlock backend's monitor keeps a copy, so the
 *     directories are not removed under a command still writing in them). The launcher writes a
 *     byte when the run is over — not only closes it: a process that another thread of a library
 *     caller (cordond) forked meanwhile may hold a copy of the end — and the kernel closes it
 *     when the launcher dies. Either way the action runs, then the process exits; the launcher
 *     waits for it in the first case, init (or the nearest subreaper) reaps it in the second. */
#pragma once

#include <sys/types.h>

typedef struct after_run {
        pid_t pid; /* -1: none */
        int fd;    /* the launcher's write end; -1: none */
} after_run;

#define AFTER_RUN_INIT { .pid = -1, .fd = -1 }

/* What the process does once the run is over; its return value is the process's exit status.
 * It runs in the forked copy of the caller's memory, so `arg` may point at the caller's data. */
typedef int (*after_run_action)(void *arg);

/* Forks the after-run process, named `name` (at most 15 bytes: a comm). 0 or -errno (then
 * nothing was forked and *out is AFTER_RUN_INIT). */
int after_run_start(const char *name, after_run_action action, void *arg, after_run *out);

/* Tells the process the run is over and closes the write end, without waiting: several
 * processes then do their work at once. */
void after_run_release(after_run *r);

/* after_run_release(), then waits until the process has done its work and exited. */
void after_run_finish(after_run *r);
