/* SPDX-License-Identifier: Apache-2.0 */
/* The setters of the tls key's lists (docs/policy.md, "Request rules"): tls.passthrough host
 * patterns and tls.upstreamCa paths, checked as the JSON loader checks them. Apart from
 * policy-rules.c so that the request-rule matcher's tests and fuzz target need no setter. */
#include <errno.h>

#include "policy/policy.h"

static int add_checked(cordon_policy *p, strv *list, const char *s,
                       const char *(*check)(const char *)) {
        const char *why = check(s);
        if (why)
                return policy_refuse(p, -EINVAL, s, why);
        if (list->n >= 64 && !strv_contains(list, s))
                return policy_refuse(p, -E2BIG, s, "the list is full");
        int r = strv_push_unique(list, s);
        return r < 0 ? policy_refuse(p, r, s, NULL) : 0;
}

int policy_add_tls_passthrough(cordon_policy *p, const char *pattern) {
        return add_checked(p, &p->req.passthrough, pattern, policy_check_host_pattern);
}

int policy_add_tls_upstream_ca(cordon_policy *p, const char *path) {
        return add_checked(p, &p->req.upstream_ca, path, policy_check_path);
}
