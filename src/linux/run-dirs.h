/* SPDX-License-Identifier: Apache-2.0 */
/* The landlock backend's per-run directories on the host (its private TMPDIR, TLS inspection's
 * bundle directory: docs/design/landlock-backend.md) and the process that removes them. The
 * native backend writes nothing on the host; this backend must, and "nothing survives the run"
 * has to hold when the launcher cannot clean up: `kill -9` of cordon, or of the daemon.
 *
 * So the removal is not the launcher's: right after the directories are made it starts an
 * after-run process (after-run.h) that removes them, never following a symlink. The launcher,
 * the guard and the monitor hold its pipe's write end (backend-landlock-proc.c keeps it open
 * there; close-on-exec, so no command inherits it): when the launcher dies, the pipe reads end
 * of file only once the monitor, which outlives it to kill the command's tree, has exited too —
 * so the directories are not removed under a command still writing in them. */
#pragma once

#include <stddef.h>

#include "linux/after-run.h"

#define RUN_DIRS_MAX 2

/* rm -rf of `path` that never follows a symlink (every step relative to a directory fd opened
 * with O_NOFOLLOW), so a link the command planted cannot point the removal elsewhere. What lies
 * deeper than 256 levels is left behind rather than recursed into without bound. */
void run_dir_remove(const char *path);

/* Starts the after-run process ("cordon-reaper") that removes the n (at most RUN_DIRS_MAX)
 * absolute paths; NULL entries are skipped. after_run_finish() ends the run and waits for the
 * removal. 0 or -errno (then nothing was forked and *out is AFTER_RUN_INIT). */
int run_dirs_reaper_start(const char *const *paths, size_t n, after_run *out);
