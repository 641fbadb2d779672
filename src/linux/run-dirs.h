/* SPDX-License-Identifier: Apache-2.0 */
/* The landlock backend's per-run directories on the host (its private TMPDIR, TLS inspection's
 * bundle directory: docs/design/landlock-backend.md) and the process that removes them. The
 * native backend writes nothing on the host; this backend must, and "nothing survives the run"
 * has to hold when the launcher cannot clean up: `kill -9` of cordon, or of the daemon.
 *
 * So the removal is not the launcher's: right after the directories are made it forks a
 * reaper, in a session of its own (no terminal's or process group's signal reaches it), which
 * holds nothing but the read end of a pipe. The write end is the launcher's, and the guard's
 * and the monitor's (backend-landlock-proc.c keeps it open there; close-on-exec, so no command
 * inherits it). When the launcher ends the run it writes a byte (run_dirs_reaper_stop()); when
 * it dies the pipe reads end of file once the monitor, which outlives it to kill the command's
 * tree, has exited too — so the directories are not removed under a command still writing in
 * them. Either way the reaper removes them, never following a symlink, and exits. The launcher
 * waits for it in the first case; in the second init (or the nearest subreaper) reaps it. */
#pragma once

#include <sys/types.h>

#define RUN_DIRS_MAX 2

typedef struct run_dirs_reaper {
        pid_t pid; /* -1: none */
        int fd;    /* the write end; -1: none */
} run_dirs_reaper;

#define RUN_DIRS_REAPER_INIT { .pid = -1, .fd = -1 }

/* rm -rf of `path` that never follows a symlink (every step relative to a directory fd opened
 * with O_NOFOLLOW), so a link the command planted cannot point the removal elsewhere. What lies
 * deeper than 256 levels is left behind rather than recursed into without bound. */
void run_dir_remove(const char *path);

/* Forks the reaper of the n (at most RUN_DIRS_MAX) absolute paths; NULL entries are skipped.
 * 0 or -errno (then nothing was forked and *out is RUN_DIRS_REAPER_INIT). */
int run_dirs_reaper_start(const char *const *paths, size_t n, run_dirs_reaper *out);

/* Tells the reaper the run is over, closes the write end and waits for the reaper, which
 * removes the directories first. */
void run_dirs_reaper_stop(run_dirs_reaper *r);
