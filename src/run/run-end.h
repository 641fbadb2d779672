/* SPDX-License-Identifier: Apache-2.0 */
/* How a run's end is told, the same on every platform (docs/design/library.md, "The run core"):
 * the exit code cordon reports for a wait status, and the errors of a run that did not end by
 * itself. Every launcher ends a run through these, so `cordon run` exits with the same status and
 * the same message on Linux and macOS. */
#pragma once

#include <stdint.h>

#include "cordon/cordon.h"

/* The status cordon exits with for the command's wait(2) status: its exit status, 128 + the
 * signal that killed it (as a shell reports it), else 125 (cordon's own failure). */
int run_exit_code(int wait_status);

/* limits.timeout passed and the command was killed with `what` ("everything it started": a
 * sandbox of its own; "its process group": a session's exec, a macOS run). CORDON_TIMEOUT. */
int run_timeout_error(cordon_error *err, uint64_t timeout_ms, const char *what);
