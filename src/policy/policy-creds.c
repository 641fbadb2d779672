/* SPDX-License-Identifier: Apache-2.0 */
/* credentials as policy data (docs/policy.md, "Credentials"): which secret of cordon's store is
 * bound to which hosts, the variable that holds its placeholder in the sandbox, and the header
 * the proxy sets. Copies, merge, the widening test and the printed form (the validators are the
 * JSON reader's, policy-json-creds.c); never a secret's value (the launcher reads it:
 * src/linux/creds.c). */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"

static bool str_eq(const char *a, const char *b) {
        return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static bool strv_eq(const strv *a, const strv *b) {
        if (a->n != b->n)
                return false;
        for (size_t i = 0; i < a->n; i++)
                if (strcmp(a->v[i], b->v[i]) != 0)
                        return false;
        return true;
}

static bool cred_equal(const policy_cred *a, const policy_cred *b) {
        return str_eq(a->secret, b->secret) && str_eq(a->broker, b->broker) &&
               str_eq(a->env, b->env) &&
               strv_eq(&a->hosts, &b->hosts) && str_eq(a->header, b->header) &&
               str_eq(a->format, b->format) && str_eq(a->basic, b->basic);
}

static const policy_cred *find_env(const policy_req *q, const char *env) {
        for (size_t i = 0; i < q->n_creds; i++)
                if (strcmp(q->creds[i].env, env) == 0)
                        return &q->creds[i];
        return NULL;
}

static void cred_clear(policy_cred *c) {
        free(c->secret);
        free(c->broker);
        free(c->env);
        free(c->header);
        free(c->format);
        free(c->basic);
        strv_done(&c->hosts);
        memset(c, 0, sizeof(*c));
}

static int dup_opt(char **dst, const char *src) {
        *dst = src ? strdup(src) : NULL;
        return src && !*dst ? -ENOMEM : 0;
}

int policy_req_add_cred(policy_req *q, const policy_cred *cred) {
        if (!cred->secret == !cred->broker || !cred->env || cred->hosts.n == 0)
                return -EINVAL;
        const policy_cred *have = find_env(q, cred->env);
        /* Two layers binding one variable differently: neither binding can be the one meant. */
        if (have)
                return cred_equal(have, cred) ? 0 : -EEXIST;
        if (q->n_creds >= POLICY_MAX_CREDS)
                return -E2BIG;
        policy_cred *v = realloc(q->creds, (q->n_creds + 1) * sizeof(*v));
        if (!v)
                return -ENOMEM;
        q->creds = v;
        policy_cred c = { 0 };
        if (dup_opt(&c.secret, cred->secret) < 0 || dup_opt(&c.broker, cred->broker) < 0 ||
            dup_opt(&c.env, cred->env) < 0 ||
            dup_opt(&c.header, cred->header) < 0 || dup_opt(&c.format, cred->format) < 0 ||
            dup_opt(&c.basic, cred->basic) < 0 || strv_copy(&c.hosts, &cred->hosts) < 0) {
                cred_clear(&c);
                return -ENOMEM;
        }
        q->creds[q->n_creds++] = c;
        return 0;
}

static void broker_clear(policy_broker *b) {
        free(b->name);
        strv_done(&b->issue);
        strv_done(&b->revoke);
        memset(b, 0, sizeof(*b));
}

void policy_req_creds_clear(policy_req *q) {
        for (size_t i = 0; i < q->n_creds; i++)
                cred_clear(&q->creds[i]);
        free(q->creds);
        q->creds = NULL;
        q->n_creds = 0;
        for (size_t i = 0; i < q->n_brokers; i++)
                broker_clear(&q->brokers[i]);
        free(q->brokers);
        q->brokers = NULL;
        q->n_brokers = 0;
}

const policy_broker *policy_req_broker(const policy_req *q, const char *name) {
        for (size_t i = 0; name && i < q->n_brokers; i++)
                if (strcmp(q->brokers[i].name, name) == 0)
                        return &q->brokers[i];
        return NULL;
}

int policy_req_add_broker(policy_req *q, const policy_broker *b) {
        if (!b->name || b->issue.n == 0 || b->revoke.n == 0)
                return -EINVAL;
        policy_broker c = { .timeout_ms = b->timeout_ms };
        if (!(c.name = strdup(b->name)) || strv_copy(&c.issue, &b->issue) < 0 ||
            strv_copy(&c.revoke, &b->revoke) < 0) {
                broker_clear(&c);
                return -ENOMEM;
        }
        policy_broker *have = (policy_broker *) policy_req_broker(q, b->name);
        if (have) {
                broker_clear(have);
                *have = c;
                return 0;
        }
        policy_broker *v = q->n_brokers < POLICY_MAX_BROKERS
                                   ? realloc(q->brokers, (q->n_brokers + 1) * sizeof(*v))
                                   : NULL;
        if (!v) {
                broker_clear(&c);
                return q->n_brokers < POLICY_MAX_BROKERS ? -ENOMEM : -E2BIG;
        }
        q->brokers = v;
        q->brokers[q->n_brokers++] = c;
        return 0;
}

bool policy_creds_widen(const policy_req *base, const policy_req *over) {
        for (size_t i = 0; i < over->n_creds; i++) {
                const policy_cred *have = find_env(base, over->creds[i].env);
                if (!have || !cred_equal(have, &over->creds[i]))
                        return true;
        }
        return false;
}

static json_t *cred_json(const policy_cred *c) {
        json_t *hosts = json_array();
        for (size_t i = 0; hosts && i < c->hosts.n; i++)
                if (json_array_append_new(hosts, json_string(c->hosts.v[i])) < 0) {
                        json_decref(hosts);
                        hosts = NULL;
                }
        json_t *o = hosts ? json_pack("{s:s, s:s, s:o}", c->secret ? "secret" : "broker",
                                      c->secret ? c->secret : c->broker, "env", c->env, "hosts",
                                      hosts)
                          : NULL;
        if (o && c->header && json_object_set_new(o, "header", json_string(c->header)) < 0)
                goto fail;
        if (o && c->format && json_object_set_new(o, "format", json_string(c->format)) < 0)
                goto fail;
        if (o && c->basic && json_object_set_new(o, "basic", json_string(c->basic)) < 0)
                goto fail;
        return o;
fail:
        json_decref(o);
        return NULL;
}

void *policy_req_creds_json(const policy_req *q, bool *failed) {
        if (q->n_creds == 0)
                return NULL;
        json_t *a = json_array();
        for (size_t i = 0; a && i < q->n_creds; i++)
                if (json_array_append_new(a, cred_json(&q->creds[i])) < 0) {
                        json_decref(a);
                        a = NULL;
                }
        if (!a)
                *failed = true;
        return a;
}
