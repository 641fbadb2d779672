/* SPDX-License-Identifier: Apache-2.0 */
/* Cleanup attributes for the objects the policy and planner tests make:
 *   _cleanup_policy_ cordon_policy *p = ...;   _cleanup_plan_ plan *pl = ...; */
#pragma once

#include <stdio.h>
#include <stdlib.h>

#include "plan/plan.h"
#include "policy/policy.h"

/* An empty policy layer from the public constructor. A test cannot go on without one, so a
 * failure (out of memory) ends it here rather than as a NULL dereference further on. */
static inline cordon_policy *test_policy_new(void) {
        cordon_policy *p = NULL;
        cordon_error err = { 0 };
        if (cordon_policy_new(&p, &err) < 0) {
                fprintf(stderr, "cordon_policy_new: %s\n", err.message);
                abort();
        }
        return p;
}

static inline void cleanup_policy_freep(cordon_policy **p) {
        cordon_policy_free(*p);
}
#define _cleanup_policy_ __attribute__((cleanup(cleanup_policy_freep)))
static inline void cleanup_plan_freep(plan **p) {
        plan_free(*p);
}
#define _cleanup_plan_ __attribute__((cleanup(cleanup_plan_freep)))
