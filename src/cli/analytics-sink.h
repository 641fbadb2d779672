/* SPDX-License-Identifier: Apache-2.0 */
/* `cordon run --analytics FILE` (docs/cli.md): the run's violations as analytics-safe records
 * (run/analytics.h) in FILE, created 0600, and a summary when the run ends. */
#pragma once

#include "cordon/cordon.h"

typedef struct cli_analytics cli_analytics;

/* Opens FILE and loads (or makes) the key. NULL when `path` is NULL; on failure NULL with *status
 * set after printing the fatal line. */
cli_analytics *cli_analytics_open(const char *path, int *status);
/* A cordon_violation_fn. */
void cli_analytics_violation(void *userdata, const cordon_violation *v);
/* Writes the summary (`err` non-NULL: the run failed with it; else `exit_code`), closes FILE and
 * frees; a write error is a warning on stderr (the run's own status stands). NULL: nothing. */
void cli_analytics_end(cli_analytics *a, const cordon_error *err, int exit_code);
