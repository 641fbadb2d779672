/* SPDX-License-Identifier: Apache-2.0 */
/* Read narrowing (docs/policy.md, "Read narrowing"): blockReadsOutsideWorkdirs and its
 * exceptions, allowRead. The plan turns them into hidden home directories with the roots
 * re-bound (native) or into carved Landlock read rules (landlock): src/plan/plan-reads.c. */
#include "policy/policy.h"

int policy_set_block_reads(cordon_policy *p, bool block) {
        if (!p)
                return -EINVAL;
        p->block_reads = block;
        p->block_reads_set = true;
        return 0;
}

int policy_add_allow_read(cordon_policy *p, const char *path) {
        return policy_push_path(p, p ? &p->allow_read : NULL, path);
}

/* The switch is a scalar (the highest layer that sets it wins); the exceptions are a union, as
 * every list: a layer that turns the narrowing on keeps what lower layers excepted. */
int policy_reads_merge(cordon_policy *dst, const cordon_policy *src) {
        if (src->block_reads_set) {
                dst->block_reads = src->block_reads;
                dst->block_reads_set = true;
        }
        int r = strv_extend(&dst->allow_read, &src->allow_read);
        return r < 0 ? r : policy_command_rules_merge(dst, src);
}

void policy_reads_clear(cordon_policy *p) {
        strv_done(&p->allow_read);
        policy_command_rules_clear(p);
        p->block_reads = p->block_reads_set = false;
}

bool policy_reads_blocked(const cordon_policy *p) {
        return p->block_reads_set && p->block_reads;
}
