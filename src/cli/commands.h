/* SPDX-License-Identifier: Apache-2.0 */
/* The `cordon` commands. Only this layer prints; it prints the fatal line (SPEC.md §8). */
#pragma once

/* Runs the command line and returns the process exit status: the command's for `run` (128+N for
 * signal N), 0 for the informational commands, 125 after printing exactly one
 * "cordon: fatal: CODE: message" line on any failure of cordon itself. */
int cli_main(int argc, char *argv[]);
