/* SPDX-License-Identifier: Apache-2.0 */
/* `cordon explain`, and what `cordon run` reports about a run when asked: the `--json` summary
 * and, on a terminal, one line per refusal. Both come from the library's denial decoder
 * (cordon_explanation_*) fed with the run's own events, so a summary, a terminal line and a
 * later `cordon explain` of the same events always agree. */
#pragma once

#include "cli/args.h"
#include "cordon/cordon.h"

/* cordon explain [--events FILE|fd:N] [--status N] [--stderr FILE] [--json]: prints the verdict
 * on stdout; returns 0, or 125 after the fatal line when the inputs cannot be read or decoded. */
int cli_cmd_explain(const cli_args *a);

typedef struct cli_run_report cli_run_report;

/* What `cordon run` reports at the end: the summary to --json=FILE|fd:N (FILE created 0600 and
 * truncated; fd N made close-on-exec so the command cannot forge a summary) and, unless --quiet,
 * the refusal lines when stderr is a terminal. Every event still reaches `inner` (the --events
 * writer; may be NULL). Returns NULL with *status 0 when nothing is wanted, NULL with *status 125
 * after the fatal line when the --json destination cannot be opened. */
cli_run_report *cli_run_report_new(const cli_args *a, cordon_event_fn inner, void *inner_userdata,
                                   int *status);

/* A cordon_event_fn (userdata: the report). */
void cli_run_report_event(void *userdata, const char *line, size_t len);

/* The run is over and cordon will exit with `exit_status`: prints the refusal lines (before any
 * fatal line the caller prints next), writes the summary, frees the report. NULL-safe. */
void cli_run_report_end(cli_run_report *r, int exit_status);
