/* SPDX-License-Identifier: Apache-2.0 */
/* The policy's egressDenylist (docs/policy.md, "Egress"): each entry a host pattern, or an
 * object naming one and the reason it refuses, which the proxy hands on with each refusal. */
#include <stdio.h>

#include "policy/policy-json-internal.h"

#define DENY_EXAMPLE "[\"tracker.example.com\", {\"host\": \"pastebin.com\", \"reason\": \"no " \
                     "paste sites\"}]"
#define DENY_HINT "a host name, \"*.example.com\" or \"host:port\""

typedef struct deny_parse {
        const char *host, *reason;
} deny_parse;

static int parse_deny_host(parse_ctx *c, json_t *v, void *target) {
        deny_parse *d = target;
        return policy_json_checked(c, v, &d->host, "\"host\": \"pastebin.com\"",
                                   policy_check_host_pattern, DENY_HINT);
}

static int parse_deny_reason(parse_ctx *c, json_t *v, void *target) {
        deny_parse *d = target;
        return policy_json_checked(c, v, &d->reason, "\"reason\": \"no paste sites\"",
                                   policy_check_reason,
                                   "one line of printable text, at most 200 bytes");
}

static const field deny_fields[] = {
        { "host", parse_deny_host, NULL },
        { "reason", parse_deny_reason, NULL },
};

static int parse_deny_entry(parse_ctx *c, json_t *e) {
        if (json_is_string(e))
                return policy_json_string(c, e, DENY_EXAMPLE, policy_check_host_pattern,
                                          cordon_policy_add_egress_deny, DENY_HINT);
        if (!json_is_object(e))
                return jread_expect(&c->j, e, false, "a string or an object", DENY_EXAMPLE);
        deny_parse d = { 0 };
        int r = policy_json_fields(c, e, deny_fields, ELEMENTSOF(deny_fields),
                                   "{\"host\": \"pastebin.com\", \"reason\": \"no paste sites\"}",
                                   &d);
        if (r < 0)
                return r;
        if (!d.host)
                return jread_fail(&c->j, false, "add \"host\": \"pastebin.com\"",
                                  "a deny entry needs 'host'");
        r = d.reason ? cordon_policy_add_egress_deny_reason(c->layer, d.host, d.reason)
                     : cordon_policy_add_egress_deny(c->layer, d.host);
        return r < 0 ? policy_json_fail_errno(c, r) : 0;
}

int policy_json_egress_deny(parse_ctx *c, json_t *v, void *target) {
        int r = jread_expect(&c->j, v, json_is_array(v), "an array", DENY_EXAMPLE);
        if (r < 0)
                return r;
        if (json_array_size(v) > POLICY_MAX_LIST)
                return jread_fail(&c->j, false, "split the list or use globs",
                                  "has %zu entries; at most %u are allowed", json_array_size(v),
                                  POLICY_MAX_LIST);
        size_t i;
        json_t *e;
        json_array_foreach(v, i, e) {
                jread_push_index(&c->j, i);
                r = parse_deny_entry(c, e);
                jread_pop(&c->j);
                if (r < 0)
                        return r;
        }
        return 0;
}
