/* SPDX-License-Identifier: Apache-2.0 */
/* Builds the policy a `cordon run` / `cordon policy show` uses, through the public API only:
 * deployment default = cordon_policy_new_default(cwd, home); session layer = the --policy files
 * and flags, applied in command-line order; resolved with no escalation layer. */
#pragma once

#include <stdio.h>

#include "cli/args.h"

/* Applies args->settings to `session` in order. Returns 0 or -errno with `err` set
 * (POLICY_INVALID naming the flag, or the loader's "file:line:col: ..." error). */
int cli_policy_apply(cordon_policy *session, const cli_args *args, cordon_error *err);

/* The resolved policy for `args`. `cwd` and `home` absolute. Caller frees *ret. */
int cli_policy_build(const cli_args *args, const char *cwd, const char *home,
                     cordon_policy **ret, cordon_error *err);

/* ---- Settings files (docs/settings.md) ------------------------------------------------------ */

/* The settings for `args`: managed settings ($CORDON_MANAGED_SETTINGS, else
 * /etc/cordon/managed-settings.json) > the flags (one layer, applied in command-line order) >
 * each --settings FILE > ~/.config/cordon/settings.json > the project settings > the built-in
 * default for `cwd` and `home`. Caller frees *ret. */
int cli_settings_build(const cli_args *args, const char *cwd, const char *home,
                       cordon_settings **ret, cordon_error *err);

/* One "cordon: warning: ..." line per setting that was read but not applied. */
void cli_settings_warn(const cordon_settings *s, FILE *out);

/* What the settings decide for `cordon run`. `unprotected` is why the arguments already make the
 * run unconfined (--sandbox off, ...) or NULL. Fails (POLICY_INVALID) when the settings forbid
 * that. Otherwise an excludedCommands entry that matches the whole command line, or
 * failIfUnavailable false on a host without a sandbox, sets *backend to none. `why` gets the
 * reason the run is unprotected, or "" when it is confined. */
int cli_settings_decide(const cli_args *a, const cordon_settings *s, const char *unprotected,
                        cordon_backend *backend, char *why, size_t why_size, cordon_error *err);

/* policy show --explain: prints the explanation (text, or JSON with --json). Returns the exit
 * status (0, or 125 after the fatal line). */
int cli_settings_show(const cli_args *a, const cordon_settings *s);

/* cordon settings import FILE: the equivalent cordon settings file on stdout, notes on stderr.
 * Returns the exit status. */
int cli_cmd_settings_import(const cli_args *a, const char *cwd);

/* $HOME when it is absolute, else the password database. Caller frees. */
char *cli_home_dir(void);
