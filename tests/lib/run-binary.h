/* SPDX-License-Identifier: Apache-2.0 */
/* Runs a binary (the cordon CLI) from a cmocka test and captures what it prints, for the tests of
 * the binary's contract: its exit status and the exact bytes on stdout and stderr
 * (tests/cli/test-cli-exec.c, tests/settings/test-settings-cli.c). Include after <cmocka.h>. */
#pragma once

#define RUN_OUTPUT_MAX 65536

typedef struct run_result {
        int status;               /* exit status, or 128+N for signal N */
        char out[RUN_OUTPUT_MAX]; /* stdout, NUL-terminated (at most RUN_OUTPUT_MAX - 1 bytes) */
        char err[RUN_OUTPUT_MAX]; /* stderr, likewise */
} run_result;

/* Runs in the child before exec: 0 to go on; anything else exits the child with status 99. */
typedef int (*run_setup_fn)(void *data);

/* Runs `path` with the NULL-terminated arguments `args` (argv[0] is `path`; at most 62 of them),
 * stdin from /dev/null, stdout and stderr read whole into res. `setup` (may be NULL) runs in the
 * child first. A failing pipe, fork, poll (30 s without output) or wait fails the test. */
void run_binary(run_result *res, const char *path, const char *const *args, run_setup_fn setup,
                void *data);

/* Exit 125, nothing on stdout, and stderr exactly the one fatal line (docs/design/errors.md). */
void assert_fatal(const run_result *res, const char *line);
