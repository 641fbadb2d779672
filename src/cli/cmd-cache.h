/* SPDX-License-Identifier: Apache-2.0 */
/* `cordon cache list|clear [TOOL]` (docs/design/tool-caches.md). */
#pragma once

#include "cli/args.h"

/* 0, or a negative errno with `err` set (the caller prints the fatal line). */
int cli_cmd_cache(const cli_args *a, cordon_error *err);
