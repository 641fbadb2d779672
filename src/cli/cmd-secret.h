/* SPDX-License-Identifier: Apache-2.0 */
/* cordon secret set NAME | list [--json] | rm NAME (cmd-secret.c, docs/design/secrets.md). Each
 * returns the exit status: 0, or 125 after one fatal line. */
#pragma once

#include "cli/args.h"

int cli_cmd_secret_set(const cli_args *a);
int cli_cmd_secret_list(const cli_args *a);
int cli_cmd_secret_rm(const cli_args *a);
