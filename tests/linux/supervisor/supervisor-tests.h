/* SPDX-License-Identifier: Apache-2.0 */
/* Shared by the two halves of the supervisor test executable. */
#pragma once

#include "harness.h"

/* Runs `fn` confined (sup_run) with cmocka assertions: the child exits 0 and leaves no denied name
 * on the host; `host_setup` runs before, `host_check` after (both may be NULL). */
void sup_check(scenario_fn fn, void *arg, unsigned workers, void (*host_setup)(sup_env *),
               void (*host_check)(sup_env *));

/* supervisor-attacks.c: runs its cmocka group, returns the number of failures. */
int supervisor_attack_tests_run(void);
/* supervisor-denials.c: the same for refusals of the seccomp table and their reports. */
int supervisor_denial_tests_run(void);
/* supervisor-unix.c: allowUnixSockets (connect performed by the supervisor). */
int supervisor_unix_tests_run(void);
