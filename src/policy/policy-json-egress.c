/* SPDX-License-Identifier: Apache-2.0 */
/* The policy's egressDenylist (docs/policy.md, "Egress"): each entry a host pattern, or an
 * object naming one and the reason it refuses, which the proxy hands on with each refusal. */
#include <inttypes.h>
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

/* ---- egressMode, egressAskTimeout (docs/policy.md, "Ask mode") ------------------------------- */

int policy_json_egress_mode(parse_ctx *c, json_t *v, void *target) {
        int r = jread_expect(&c->j, v, json_is_string(v), "a string", "\"egressMode\": \"ask\"");
        if (r < 0)
                return r;
        cordon_egress_mode m;
        if (policy_egress_mode_from_string(json_string_value(v), &m) < 0) {
                char shown[80];
                return jread_fail(&c->j, false, "use \"allowlist\" or \"ask\"",
                                  "unknown egress mode '%s'",
                                  jread_shorten(json_string_value(v), shown, sizeof(shown)));
        }
        return cordon_policy_set_egress_mode(c->layer, m);
}

int policy_json_egress_ask_timeout(parse_ctx *c, json_t *v, void *target) {
        static const char hint[] = "write milliseconds (30000) or a duration (\"30s\", "
                                   "\"500ms\", \"2m\"), from 100ms to 1h";
        uint64_t ms;
        char shown[80];
        if (json_is_integer(v) && json_integer_value(v) >= 0) {
                ms = (uint64_t) json_integer_value(v);
        } else if (json_is_string(v)) {
                if (parse_duration_ms(json_string_value(v), &ms) < 0)
                        return jread_fail(&c->j, false, hint, "'%s' is not a valid duration",
                                          jread_shorten(json_string_value(v), shown,
                                                        sizeof(shown)));
        } else {
                return jread_fail(&c->j, false, hint, "expected a non-negative integer or a "
                                  "string, got %s", jread_type_name(v));
        }
        if (ms < POLICY_MIN_ASK_TIMEOUT_MS || ms > POLICY_MAX_ASK_TIMEOUT_MS)
                return jread_fail(&c->j, false, hint, "%" PRIu64 " ms is out of range", ms);
        int r = cordon_policy_set_egress_ask_timeout_ms(c->layer, ms);
        return r < 0 ? policy_json_fail_errno(c, r) : 0;
}
