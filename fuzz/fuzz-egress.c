/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target for the egress matcher (src/net/egress.c): patterns and hosts against each other.
 * Input: byte 0 holds flags (bit 0: network enabled); then lines, "+PATTERN" (allow),
 * "-PATTERN" (deny), "?HOST[:PORT]" (a query, port 443 when absent). Promises checked:
 *  - egress_rules_new() accepts exactly the rule sets whose every pattern egress_check_pattern()
 *    accepts, and refuses the others with CORDON_POLICY_INVALID;
 *  - a verdict agrees with a naive reference matcher (a linear scan over every pattern with
 *    plain string comparisons: deny beats allow, '*.' = a proper suffix, 'a.*.b' = one label);
 *  - a host that does not canonicalise is never allowed; with the network off nothing is;
 *  - exact_port only for an allowed verdict decided by a wildcard-free entry with a port;
 *  - a host refused by a deny entry stays refused when allow entries naming it exactly are
 *    added; a host refused as "not in allowlist" stays refused when allow patterns that do not
 *    match it are added;
 *  - upper-casing a name changes no verdict.
 * Built two ways, like fuzz-policy: with libFuzzer (-DCORDON_LIBFUZZER), and as a plain program
 * replaying the seed corpus in the unit suite. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/egress.h"

#include "replay.h"

#define MAX_PATTERNS 64
#define MAX_QUERIES 16

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

__attribute__((noreturn)) static void broken(const char *what, const char *host, uint16_t port) {
        fprintf(stderr, "fuzz-egress: broken promise: %s (%s:%u)\n", what, host ? host : "",
                port);
        abort();
}

typedef struct input {
        bool network;
        strv allow, deny;             /* as given, valid or not */
        strv allow_valid, deny_valid; /* the valid ones */
        struct {
                const char *s; /* into the input: may hold NUL bytes */
                size_t len;
        } queries[MAX_QUERIES];
        size_t n_queries;
} input;

static void input_done(input *in) {
        strv_done(&in->allow);
        strv_done(&in->deny);
        strv_done(&in->allow_valid);
        strv_done(&in->deny_valid);
}

static void push(strv *s, const char *v) {
        if (strv_push(s, v) < 0)
                broken("out of memory", v, 0);
}

static void parse_input(const uint8_t *data, size_t size, input *in) {
        memset(in, 0, sizeof(*in));
        if (size == 0)
                return;
        in->network = data[0] & 1;
        const char *p = (const char *) data + 1, *end = (const char *) data + size;
        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t) (end - p));
                size_t len = (size_t) ((nl ? nl : end) - p);
                /* Patterns are C strings: a line with a NUL cannot be one (queries may). */
                bool has_nul = memchr(p, '\0', len) != NULL;
                if (len > 0 && p[0] == '?' && in->n_queries < MAX_QUERIES) {
                        in->queries[in->n_queries].s = p + 1;
                        in->queries[in->n_queries++].len = len - 1;
                } else if (len > 0 && !has_nul && (p[0] == '+' || p[0] == '-')) {
                        /* Not strndup: the input has no terminating NUL to stop at. */
                        char *line = malloc(len);
                        bool allow = p[0] == '+';
                        strv *all = allow ? &in->allow : &in->deny;
                        if (!line)
                                broken("out of memory", NULL, 0);
                        memcpy(line, p + 1, len - 1);
                        line[len - 1] = '\0';
                        if (all->n < MAX_PATTERNS) {
                                push(all, line);
                                if (!egress_check_pattern(line))
                                        push(allow ? &in->allow_valid : &in->deny_valid, line);
                        }
                        free(line);
                }
                p += len + 1;
        }
}

/* ---- the reference matcher ------------------------------------------------------------------ */

static bool ends_with(const char *s, const char *suffix) {
        size_t a = strlen(s), b = strlen(suffix);
        return a >= b && strcmp(s + a - b, suffix) == 0;
}

static bool naive_match(const char *pattern, const net_host *h, uint16_t port) {
        size_t host_len;
        uint16_t pport;
        char host[EGRESS_PATTERN_MAX + 1];
        if (net_hostport_split(pattern, strlen(pattern), true, &host_len, &pport, NULL) < 0)
                broken("a valid pattern does not split", pattern, port);
        if (pport != 0 && pport != port)
                return false;
        memcpy(host, pattern, host_len);
        host[host_len] = '\0';
        char *star = strchr(host, '*');
        if (!star) {
                net_host ph;
                if (net_host_canon(host, host_len, &ph, NULL) < 0)
                        broken("a valid pattern does not canonicalise", pattern, port);
                return ph.kind == h->kind && strcmp(ph.text, h->text) == 0;
        }
        if (h->kind != NET_HOST_NAME)
                return false;
        for (char *c = host; *c; c++)
                if (*c >= 'A' && *c <= 'Z')
                        *c = (char) (*c - 'A' + 'a');
        if (host_len > 0 && host[host_len - 1] == '.')
                host[host_len - 1] = '\0';
        const char *suffix = star + 1; /* ".example.com" */
        size_t pre = (size_t) (star - host), n = strlen(h->text), sl = strlen(suffix);
        if (pre == 0)
                return n > sl && ends_with(h->text, suffix);
        if (n <= pre + sl || strncmp(h->text, host, pre) != 0 || !ends_with(h->text, suffix))
                return false;
        const char *mid = h->text + pre;
        return memchr(mid, '.', n - pre - sl) == NULL; /* exactly one label */
}

static bool naive_any(const strv *user, egress_builtin list, bool use_list, const net_host *h,
                      uint16_t port) {
        for (size_t i = 0; i < user->n; i++)
                if (naive_match(user->v[i], h, port))
                        return true;
        if (!use_list)
                return false;
        size_t n;
        const egress_list_entry *e = egress_builtin_list(list, &n, NULL);
        for (size_t i = 0; i < n; i++)
                if (naive_match(e[i].pattern, h, port))
                        return true;
        return false;
}

static bool naive_allowed(const input *in, const strv *allow, const net_host *h, uint16_t port) {
        if (naive_any(&in->deny_valid, EGRESS_LIST_DENY, true, h, port))
                return false;
        if (!in->network)
                return false;
        return naive_any(allow, EGRESS_LIST_BASELINE, true, h, port) ||
               naive_any(&(strv) { 0 }, EGRESS_LIST_GITHUB, true, h, port);
}

/* ---- checks --------------------------------------------------------------------------------- */

static egress_rules *build(const input *in, const strv *allow, const strv *deny, bool want_ok) {
        egress_rules *r = NULL;
        cordon_error err = { 0 };
        int ret = egress_rules_new(&r, in->network, allow, deny, &err);
        if (want_ok && ret < 0)
                broken(err.message, NULL, 0);
        if (!want_ok && (ret != -EINVAL || r || err.code != CORDON_POLICY_INVALID))
                broken("an invalid pattern accepted", NULL, 0);
        return r;
}

static void check_monotone(const input *in, const net_host *h, uint16_t port,
                           const egress_verdict *v) {
        strv more = { 0 };
        bool by_deny = strcmp(v->rule, "not in allowlist") != 0 &&
                       strcmp(v->rule, "network disabled") != 0;
        if (strv_copy(&more, &in->allow_valid) < 0)
                broken("out of memory", NULL, 0);
        if (by_deny) {
                /* Deny beats allow: naming the host exactly, with and without port, changes
                 * nothing. */
                char buf[300];
                push(&more, h->text);
                snprintf(buf, sizeof(buf), h->kind == NET_HOST_IPV6 ? "[%s]:%u" : "%s:%u",
                         h->text, port);
                push(&more, buf);
        } else
                /* Patterns that do not match the host cannot allow it. */
                for (size_t i = 0; i < in->deny_valid.n; i++)
                        if (!naive_match(in->deny_valid.v[i], h, port))
                                push(&more, in->deny_valid.v[i]);
        egress_rules *r2 = build(in, &more, &in->deny_valid, true);
        egress_verdict v2;
        egress_decide(r2, h, port, &v2);
        if (v2.allowed)
                broken(by_deny ? "an allow entry beat a deny entry"
                               : "a non-matching allow entry allowed a host",
                       h->text, port);
        egress_rules_free(r2);
        strv_done(&more);
}

static void check_query(const input *in, const egress_rules *r, const char *q, size_t len) {
        net_host h;
        uint16_t port;
        egress_verdict v;
        if (net_host_parse_hostport(q, len, 443, &h, &port, NULL) < 0) {
                egress_decide(r, &h, 443, &v); /* the zeroed output of a refusal */
                if (v.allowed)
                        broken("a host that did not canonicalise was allowed", NULL, 0);
                return;
        }
        egress_decide(r, &h, port, &v);
        if (v.allowed != naive_allowed(in, &in->allow_valid, &h, port))
                broken(v.allowed ? "allowed, the reference refuses"
                                 : "refused, the reference allows",
                       h.text, port);
        if (v.allowed && !in->network)
                broken("allowed with the network off", h.text, port);
        if (v.exact_port && (!v.allowed || strchr(v.rule, '*') || !strchr(v.rule, ':')))
                broken("exact_port on a verdict it does not describe", h.text, port);
        if (!v.allowed)
                check_monotone(in, &h, port, &v);
        if (h.kind == NET_HOST_NAME) {
                net_host upper = h;
                egress_verdict vu;
                for (char *c = upper.text; *c; c++)
                        if (*c >= 'a' && *c <= 'z')
                                *c = (char) (*c - 'a' + 'A');
                net_host canon;
                if (net_host_canon(upper.text, strlen(upper.text), &canon, NULL) < 0)
                        broken("upper case does not canonicalise", h.text, port);
                egress_decide(r, &canon, port, &vu);
                if (vu.allowed != v.allowed || strcmp(vu.rule, v.rule) != 0)
                        broken("case changed a verdict", h.text, port);
        }
}

static void run_one(const uint8_t *data, size_t size) {
        input in;
        parse_input(data, size, &in);
        bool all_valid = in.allow.n == in.allow_valid.n && in.deny.n == in.deny_valid.n;
        egress_rules *r = build(&in, &in.allow, &in.deny, all_valid);
        if (!r)
                r = build(&in, &in.allow_valid, &in.deny_valid, true);
        for (size_t i = 0; i < in.n_queries; i++)
                check_query(&in, r, in.queries[i].s, in.queries[i].len);
        egress_rules_free(r);
        input_done(&in);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        run_one(data, size);
        return 0;
}

#ifndef CORDON_LIBFUZZER
/* Egress seeds state no verdict in their names: a broken promise aborts. */
bool fuzz_replay_seed(const char *name, const uint8_t *data, size_t size) {
        run_one(data, size);
        return true;
}
#endif
