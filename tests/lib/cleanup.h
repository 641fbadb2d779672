/* SPDX-License-Identifier: Apache-2.0 */
/* Cleanup attributes for the objects the policy and planner tests make:
 *   _cleanup_policy_ cordon_policy *p = ...;   _cleanup_plan_ plan *pl = ...; */
#pragma once

#include "plan/plan.h"
#include "policy/policy.h"

static inline void cleanup_policy_freep(cordon_policy **p) {
        cordon_policy_free(*p);
}
#define _cleanup_policy_ __attribute__((cleanup(cleanup_policy_freep)))
static inline void cleanup_plan_freep(plan **p) {
        plan_free(*p);
}
#define _cleanup_plan_ __attribute__((cleanup(cleanup_plan_freep)))
