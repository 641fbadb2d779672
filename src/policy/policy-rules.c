/* SPDX-License-Identifier: Apache-2.0 */
/* Request rules and the TLS inspection settings as policy data (docs/policy.md, "Request
 * rules"): egressRules entries and the tls object, their validators, copies, merge and printed
 * form. The proxy judges requests with src/net/req-rules.c, built from these. */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"

/* RFC 9110 tokens, upper case only: methods are case-sensitive, and every registered one is
 * upper case, so a rule written "get" would silently match nothing. */
const char *policy_check_req_method(const char *s) {
        size_t n = s ? strlen(s) : 0;
        if (n == 1 && s[0] == '*')
                return NULL;
        if (n == 0 || n > 16)
                return "must be 1 to 16 characters";
        for (size_t i = 0; i < n; i++)
                if (!((s[i] >= 'A' && s[i] <= 'Z') || s[i] == '-' || s[i] == '_'))
                        return "must be an upper-case method name (GET, POST, ...) or \"*\"";
        return NULL;
}

/* A path glob is matched against a request's path, which never has a query or fragment part
 * (docs/policy.md): a '?' in a glob is the one-byte wildcard, and '#' can never match. */
const char *policy_check_req_path(const char *s) {
        size_t n = s ? strlen(s) : 0;
        if (n == 0 || s[0] != '/')
                return "must start with '/'";
        if (n > POLICY_REQ_PATH_MAX)
                return "is longer than 1024 bytes";
        for (size_t i = 0; i < n; i++) {
                unsigned char ch = (unsigned char) s[i];
                if (ch <= 0x20 || ch >= 0x7f)
                        return "must be printable ASCII without spaces";
                if (ch == '#')
                        return "must not contain '#' (a request path has no fragment)";
        }
        return NULL;
}

static void rule_clear(policy_req_rule *r) {
        free(r->host);
        free(r->reason);
        strv_done(&r->methods);
        strv_done(&r->paths);
        memset(r, 0, sizeof(*r));
}

static bool strv_equal(const strv *a, const strv *b) {
        if (a->n != b->n)
                return false;
        for (size_t i = 0; i < a->n; i++)
                if (strcmp(a->v[i], b->v[i]) != 0)
                        return false;
        return true;
}

static bool rule_equal(const policy_req_rule *a, const policy_req_rule *b) {
        return a->deny == b->deny && strcmp(a->host, b->host) == 0 &&
               strv_equal(&a->methods, &b->methods) && strv_equal(&a->paths, &b->paths) &&
               ((!a->reason && !b->reason) ||
                (a->reason && b->reason && strcmp(a->reason, b->reason) == 0));
}

static bool has_rule(const policy_req *q, const policy_req_rule *r) {
        for (size_t i = 0; i < q->n_rules; i++)
                if (rule_equal(&q->rules[i], r))
                        return true;
        return false;
}

int policy_req_add_rule(policy_req *q, const policy_req_rule *rule) {
        if (!rule->host)
                return -EINVAL;
        if (has_rule(q, rule))
                return 0;
        if (q->n_rules >= POLICY_MAX_REQ_RULES)
                return -E2BIG;
        policy_req_rule *v = realloc(q->rules, (q->n_rules + 1) * sizeof(*v));
        if (!v)
                return -ENOMEM;
        q->rules = v;
        policy_req_rule c = { .deny = rule->deny, .host = strdup(rule->host),
                              .reason = rule->reason ? strdup(rule->reason) : NULL };
        if (!c.host || (rule->reason && !c.reason) || strv_copy(&c.methods, &rule->methods) < 0 ||
            strv_copy(&c.paths, &rule->paths) < 0) {
                rule_clear(&c);
                return -ENOMEM;
        }
        q->rules[q->n_rules++] = c;
        return 0;
}

int policy_req_copy(policy_req *dst, const policy_req *src) {
        for (size_t i = 0; i < src->n_rules; i++) {
                int r = policy_req_add_rule(dst, &src->rules[i]);
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; i < src->n_creds; i++) {
                int r = policy_req_add_cred(dst, &src->creds[i]);
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; i < src->n_brokers; i++) {
                int r = policy_req_add_broker(dst, &src->brokers[i]);
                if (r < 0)
                        return r;
        }
        int r = strv_extend(&dst->passthrough, &src->passthrough);
        if (r >= 0)
                r = strv_extend(&dst->upstream_ca, &src->upstream_ca);
        return r < 0 ? r : policy_git_push_copy(&dst->git_push, &src->git_push);
}

void policy_req_clear(policy_req *q) {
        for (size_t i = 0; i < q->n_rules; i++)
                rule_clear(&q->rules[i]);
        free(q->rules);
        strv_done(&q->passthrough);
        strv_done(&q->upstream_ca);
        policy_git_push_clear(&q->git_push);
        policy_req_creds_clear(q);
        memset(q, 0, sizeof(*q));
}

/* An allow rule can widen: on a host that has rules already it admits requests they refused.
 * (On a host without rules it narrows, but telling the two apart needs the merged host
 * patterns' overlap; counting every new allow rule as widening errs on the safe side.) A deny
 * rule only ever narrows. A passthrough pattern takes a host's HTTPS out of the rules; an
 * upstream CA makes the proxy trust servers the system store does not. */
bool policy_req_widens(const policy_req *base, const policy_req *over) {
        for (size_t i = 0; i < over->n_rules; i++)
                if (!over->rules[i].deny && !has_rule(base, &over->rules[i]))
                        return true;
        for (size_t i = 0; i < over->passthrough.n; i++)
                if (!strv_contains(&base->passthrough, over->passthrough.v[i]))
                        return true;
        for (size_t i = 0; i < over->upstream_ca.n; i++)
                if (!strv_contains(&base->upstream_ca, over->upstream_ca.v[i]))
                        return true;
        return false;
}

static json_t *strv_json(const strv *s) {
        json_t *a = json_array();
        for (size_t i = 0; a && i < s->n; i++)
                if (json_array_append_new(a, json_string(s->v[i])) < 0) {
                        json_decref(a);
                        return NULL;
                }
        return a;
}

static json_t *rule_json(const policy_req_rule *r) {
        json_t *o = json_pack("{s:s, s:s}", "host", r->host, "action", r->deny ? "deny" : "allow");
        if (o && r->methods.n && json_object_set_new(o, "methods", strv_json(&r->methods)) < 0)
                goto fail;
        if (o && r->paths.n && json_object_set_new(o, "paths", strv_json(&r->paths)) < 0)
                goto fail;
        if (o && r->reason && json_object_set_new(o, "reason", json_string(r->reason)) < 0)
                goto fail;
        return o;
fail:
        json_decref(o);
        return NULL;
}

void *policy_req_rules_json(const policy_req *q, bool *failed) {
        if (q->n_rules == 0)
                return NULL;
        json_t *a = json_array();
        for (size_t i = 0; a && i < q->n_rules; i++)
                if (json_array_append_new(a, rule_json(&q->rules[i])) < 0) {
                        json_decref(a);
                        a = NULL;
                }
        if (!a)
                *failed = true;
        return a;
}

void *policy_req_tls_json(const policy_req *q, bool *failed) {
        if (q->passthrough.n == 0 && q->upstream_ca.n == 0)
                return NULL;
        json_t *o = json_object();
        if (o && q->passthrough.n &&
            json_object_set_new(o, "passthrough", strv_json(&q->passthrough)) < 0)
                goto fail;
        if (o && q->upstream_ca.n &&
            json_object_set_new(o, "upstreamCa", strv_json(&q->upstream_ca)) < 0)
                goto fail;
        if (!o)
                *failed = true;
        return o;
fail:
        json_decref(o);
        *failed = true;
        return NULL;
}
