/* SPDX-License-Identifier: Apache-2.0 */
/* egressMode and egressAskTimeout (docs/policy.md, "Ask mode"): whether the proxy refuses a
 * destination no egress entry names, or holds it and asks (docs/design/network.md, "Ask mode"). */
#include <errno.h>
#include <string.h>

#include "policy/policy.h"

int cordon_policy_set_egress_mode(cordon_policy *p, cordon_egress_mode mode) {
        if (!p || (mode != CORDON_EGRESS_ALLOWLIST && mode != CORDON_EGRESS_ASK))
                return policy_refuse(p, -EINVAL, NULL,
                                     "is not an egress mode (\"allowlist\" or \"ask\")");
        p->egress_mode = mode;
        p->egress_mode_set = true;
        return 0;
}

/* Bounded below so a question can be answered at all, and above so a held connection (and the
 * command waiting on it) cannot be parked for a day. */
int cordon_policy_set_egress_ask_timeout_ms(cordon_policy *p, uint64_t ms) {
        if (!p || ms < POLICY_MIN_ASK_TIMEOUT_MS || ms > POLICY_MAX_ASK_TIMEOUT_MS)
                return policy_refuse(p, -ERANGE, NULL,
                                     "is out of range for egressAskTimeout (100ms to 1h)");
        p->egress_ask_timeout_ms = ms;
        return 0;
}

const char *policy_egress_mode_name(cordon_egress_mode mode) {
        return mode == CORDON_EGRESS_ASK ? "ask" : "allowlist";
}

int policy_egress_mode_from_string(const char *s, cordon_egress_mode *ret) {
        if (s && strcmp(s, "ask") == 0)
                *ret = CORDON_EGRESS_ASK;
        else if (s && strcmp(s, "allowlist") == 0)
                *ret = CORDON_EGRESS_ALLOWLIST;
        else
                return -EINVAL;
        return 0;
}
