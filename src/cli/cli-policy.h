/* SPDX-License-Identifier: Apache-2.0 */
/* Builds the policy a `cordon run` / `cordon policy show` uses, through the public API only:
 * deployment default = cordon_policy_new_default(cwd, home); session layer = the --policy files
 * and flags, applied in command-line order; resolved with no escalation layer. */
#pragma once

#include "cli/args.h"

/* Applies args->settings to `session` in order. Returns 0 or -errno with `err` set
 * (POLICY_INVALID naming the flag, or the loader's "file:line:col: ..." error). */
int cli_policy_apply(cordon_policy *session, const cli_args *args, cordon_error *err);

/* The resolved policy for `args`. `cwd` and `home` absolute. Caller frees *ret. */
int cli_policy_build(const cli_args *args, const char *cwd, const char *home,
                     cordon_policy **ret, cordon_error *err);
