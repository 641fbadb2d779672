/* SPDX-License-Identifier: Apache-2.0 */
/* Reasons on egressDenylist entries (docs/policy.md, "Egress"): an entry may say why it
 * refuses, and the proxy hands that on with every refusal it makes — in the 403's body, and as
 * the violation event's raw.reason — so a harness can tell the model "pastebin.com: no paste
 * sites in this repository" instead of a bare rule. A reason never changes what is refused. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"
#include "util/utf8.h"

/* A reason is shown to people and models, and travels in an HTTP header and a JSON event:
 * printable text only, so it cannot split a header, forge an event line or move a cursor. */
const char *policy_check_reason(const char *s) {
        size_t n = s ? strlen(s) : 0;
        if (n == 0)
                return "must not be empty";
        if (n > POLICY_REASON_MAX)
                return "is longer than 200 bytes";
        for (size_t i = 0; i < n;) {
                size_t k = utf8_char_len(s + i, n - i);
                if (k == 0)
                        return "is not valid UTF-8";
                if (k == 1 && ((unsigned char) s[i] < 0x20 || s[i] == 0x7f))
                        return "contains a control character";
                i += k;
        }
        return NULL;
}

static policy_reason *find(const cordon_policy *p, const char *pattern) {
        for (size_t i = 0; i < p->n_deny_reasons; i++)
                if (strcmp(p->deny_reasons[i].pattern, pattern) == 0)
                        return &p->deny_reasons[i];
        return NULL;
}

const char *policy_deny_reason(const cordon_policy *p, const char *pattern) {
        const policy_reason *r = find(p, pattern);
        return r ? r->reason : NULL;
}

/* The entry's reason, replaced when it has one (a later layer's wins). */
static int set_reason(cordon_policy *p, const char *pattern, const char *reason) {
        char *copy = strdup(reason);
        if (!copy)
                return -ENOMEM;
        policy_reason *r = find(p, pattern);
        if (r) {
                free(r->reason);
                r->reason = copy;
                return 0;
        }
        policy_reason *v = realloc(p->deny_reasons, (p->n_deny_reasons + 1) * sizeof(*v));
        char *pat = strdup(pattern);
        if (v)
                p->deny_reasons = v;
        if (!v || !pat) {
                free(copy);
                free(pat);
                return -ENOMEM;
        }
        v[p->n_deny_reasons++] = (policy_reason) { pat, copy };
        return 0;
}

int cordon_policy_add_egress_deny_reason(cordon_policy *p, const char *pattern,
                                         const char *reason) {
        int r = cordon_policy_add_egress_deny(p, pattern); /* checks the pattern, records why */
        if (r < 0)
                return r;
        const char *why = policy_check_reason(reason);
        if (why) /* the entry stays: a deny rule is never dropped for a bad reason */
                return policy_refuse(p, -EINVAL, reason, why);
        r = set_reason(p, pattern, reason);
        return r < 0 ? policy_refuse(p, r, pattern, NULL) : 0;
}

int policy_reasons_merge(cordon_policy *dst, const cordon_policy *src) {
        for (size_t i = 0; i < src->n_deny_reasons; i++) {
                int r = set_reason(dst, src->deny_reasons[i].pattern, src->deny_reasons[i].reason);
                if (r < 0)
                        return r;
        }
        return 0;
}

void policy_reasons_clear(cordon_policy *p) {
        for (size_t i = 0; i < p->n_deny_reasons; i++) {
                free(p->deny_reasons[i].pattern);
                free(p->deny_reasons[i].reason);
        }
        free(p->deny_reasons);
        p->deny_reasons = NULL;
        p->n_deny_reasons = 0;
}
