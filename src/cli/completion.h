/* SPDX-License-Identifier: Apache-2.0 */
/* `cordon completion bash|zsh|fish` (src/cli/completion.c). */
#pragma once

/* argv is cordon's own: argv[1] is "completion". Prints the script and returns 0, or prints the
 * fatal line and returns 125. */
int cli_cmd_completion(int argc, char *argv[]);

/* The values completed for --mode, --backend and --sandbox (space-separated), for the tests. */
extern const char cli_completion_modes[];
extern const char cli_completion_backends[];
extern const char cli_completion_on_off[];
