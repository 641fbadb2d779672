/* SPDX-License-Identifier: Apache-2.0 */
/* Applies one layer of the landlock backend's plan (src/plan/landlock-plan.h) to the calling
 * thread, which must have no_new_privs and no other threads yet (a Landlock domain is per
 * thread until it is inherited by fork). */
#pragma once

#include "plan/landlock-plan.h"

/* Creates the ruleset, adds every rule (each path opened with openat2(RESOLVE_NO_SYMLINKS): a
 * path from the plan is symlink-free, so a symlink met now was swapped in since and gets no
 * rule), the TCP connect ports, the rules for the files on fds 0-2, and restricts. A path that
 * vanished since planning gets no rule (fails closed). Returns 0 or -errno with `err` set. */
int landlock_layer_apply(const ll_layer *l, int abi, cordon_error *err);

/* The handled access masks of `l` that `abi` supports (tests, `policy show`). */
uint64_t landlock_layer_handled_fs(const ll_layer *l, int abi);
