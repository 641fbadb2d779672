/* SPDX-License-Identifier: Apache-2.0 */
/* cordon settings trust|untrust [PATH] and cordon settings trusted [--json] (cmd-trust.c). Each
 * returns the exit status: 0, or 125 after one fatal line. */
#pragma once

#include "cli/args.h"

int cli_cmd_settings_trust(const cli_args *a, const char *cwd);
int cli_cmd_settings_untrust(const cli_args *a, const char *cwd);
int cli_cmd_settings_trusted(const cli_args *a);
