/* SPDX-License-Identifier: Apache-2.0 */
/* microvm.accel (docs/policy.md): the accelerator the microvm backend boots its guest with. */
#include <errno.h>
#include <string.h>

#include "policy/policy.h"

int cordon_policy_set_microvm_accel(cordon_policy *p, const char *accel) {
        if (!p || !accel)
                return -EINVAL;
        if (strcmp(accel, "kvm") != 0 && strcmp(accel, "tcg") != 0)
                return policy_refuse(p, -EINVAL, accel, "is not an accelerator (kvm, tcg)");
        p->microvm_tcg = strcmp(accel, "tcg") == 0;
        p->microvm_accel_set = true;
        return 0;
}
