/* SPDX-License-Identifier: Apache-2.0 */
/* The help texts of `cordon` (docs/cli.md is the long form). */
#pragma once

#include "cli/args.h"

/* The help for `topic` (CLI_COMMAND_HELP = the overview). Static storage. */
const char *cli_help_text(cli_command topic);
