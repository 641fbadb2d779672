/* SPDX-License-Identifier: Apache-2.0 */
/* The `cordon` commands. Only this layer prints; it prints the fatal line (docs/design/errors.md).
 * */
#pragma once

#include <sys/types.h>

#include "cordon/cordon.h"

/* Runs the command line and returns the process exit status: the command's for `run` (128+N for
 * signal N), 0 for the informational commands, 125 after printing exactly one
 * "cordon: fatal: CODE: message" line on any failure of cordon itself. */
int cli_main(int argc, char *argv[]);

/* For the other command files (cmd-explain.c): the one fatal line, "cordon: fatal: CODE: message"
 * (returns 125), and write(2) with SIGPIPE blocked (a closed reader fails the write with EPIPE
 * instead of killing cordon and changing its exit status). */
int cli_fatal(const cordon_error *err);
ssize_t cli_write_nosigpipe(int fd, const void *buf, size_t len);
