/* SPDX-License-Identifier: Apache-2.0 */
/* Request rules: the table and the judgement (req-rules.h says the semantics). A few hundred
 * rules at most, each checked in turn: a request costs microseconds next to its round trip. */
#include "net/req-rules.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/egress-pattern.h"

typedef struct rule {
        egress_pattern host;
        const policy_req_rule *src; /* the plan's rule: methods, paths, reason */
} rule;

struct req_rules {
        rule *v;
        size_t n;
        egress_pattern *pass;
        size_t n_pass;
};

int req_rules_new(req_rules **out, const policy_req *q) {
        *out = NULL;
        if (q->n_rules == 0)
                return 0;
        req_rules *r = calloc(1, sizeof(*r));
        if (!r || !(r->v = calloc(q->n_rules, sizeof(*r->v))) ||
            (q->passthrough.n && !(r->pass = calloc(q->passthrough.n, sizeof(*r->pass))))) {
                req_rules_free(r);
                return -ENOMEM;
        }
        for (; r->n < q->n_rules; r->n++) {
                r->v[r->n].src = &q->rules[r->n];
                if (egress_pattern_parse(q->rules[r->n].host, &r->v[r->n].host)) {
                        req_rules_free(r);
                        return -EINVAL;
                }
        }
        for (; r->n_pass < q->passthrough.n; r->n_pass++)
                if (egress_pattern_parse(q->passthrough.v[r->n_pass], &r->pass[r->n_pass])) {
                        req_rules_free(r);
                        return -EINVAL;
                }
        *out = r;
        return 0;
}

void req_rules_free(req_rules *r) {
        if (!r)
                return;
        free(r->v);
        free(r->pass);
        free(r);
}

/* "a.*.c" against a name: the same number of labels, each equal but the wildcard's. */
static bool middle_match(const char *pat, const char *name) {
        while (*pat && *name) {
                const char *pe = strchr(pat, '.'), *ne = strchr(name, '.');
                size_t pl = pe ? (size_t) (pe - pat) : strlen(pat);
                size_t nl = ne ? (size_t) (ne - name) : strlen(name);
                if (!(pl == 1 && pat[0] == '*') && (pl != nl || memcmp(pat, name, pl) != 0))
                        return false;
                if (!pe || !ne)
                        return !pe && !ne;
                pat = pe + 1;
                name = ne + 1;
        }
        return false;
}

bool req_host_matches(const egress_pattern *p, const net_host *h, uint16_t port) {
        if (p->port != 0 && p->port != port)
                return false;
        bool name = h->kind == NET_HOST_NAME;
        size_t hl = strlen(h->text), kl = strlen(p->key);
        switch (p->kind) {
        case EGRESS_PATTERN_ADDR:
                return !name && strcmp(p->key, h->text) == 0;
        case EGRESS_PATTERN_NAME:
                return name && strcmp(p->key, h->text) == 0;
        case EGRESS_PATTERN_SUFFIX: /* a proper suffix: "*.x" never matches x itself */
                return name && hl > kl + 1 && h->text[hl - kl - 1] == '.' &&
                       strcmp(h->text + hl - kl, p->key) == 0;
        case EGRESS_PATTERN_MIDDLE:
                return name && middle_match(p->key, h->text);
        case _EGRESS_PATTERN_KIND_MAX:
        default:
                return false;
        }
}

bool req_rules_ruled(const req_rules *r, const net_host *h, uint16_t port) {
        for (size_t i = 0; r && i < r->n; i++)
                if (req_host_matches(&r->v[i].host, h, port))
                        return true;
        return false;
}

bool req_rules_passthrough(const req_rules *r, const net_host *h, uint16_t port) {
        for (size_t i = 0; r && i < r->n_pass; i++)
                if (req_host_matches(&r->pass[i], h, port))
                        return true;
        return false;
}

static char fold_byte(char c, bool fold) {
        return fold && c >= 'A' && c <= 'Z' ? (char) (c - 'A' + 'a') : c;
}

/* Iterative with one backtrack point (the last '*'): linear-times-pattern, never exponential,
 * whatever a hostile path or policy holds. */
bool req_glob_match(const char *glob, const char *s, size_t len, bool fold) {
        size_t gi = 0, si = 0, star = SIZE_MAX, mark = 0;
        while (si < len) {
                if (glob[gi] == '*') {
                        star = gi++;
                        mark = si;
                } else if (glob[gi] && (glob[gi] == '?' ||
                                        fold_byte(glob[gi], fold) == fold_byte(s[si], fold))) {
                        gi++;
                        si++;
                } else if (star != SIZE_MAX) {
                        gi = star + 1;
                        si = ++mark;
                } else {
                        return false;
                }
        }
        while (glob[gi] == '*')
                gi++;
        return glob[gi] == '\0';
}

static int hexval(char c) {
        if (c >= '0' && c <= '9')
                return c - '0';
        c = fold_byte(c, true);
        return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static bool unreserved(unsigned char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '-' || c == '.' || c == '_' || c == '~';
}

/* A segment a server may resolve away: ".", "..", and the ".;x" / "..;x" forms some servers
 * (Tomcat, Spring) strip path parameters from before resolving. */
static bool dot_segment(const char *seg, size_t n) {
        size_t k = 0;
        while (k < n && k < 2 && seg[k] == '.')
                k++;
        return k > 0 && (k == n || seg[k] == ';');
}

/* The ways a server could read a path as another one: each a way past a deny glob (or into an
 * allow glob's neighbour) that matching the bytes as written would miss. */
const char *req_path_ambiguous(const char *path, size_t n) {
        if (n == 1 && path[0] == '*')
                return NULL; /* OPTIONS * */
        if (n == 0 || path[0] != '/')
                return "the path does not start with '/'";
        for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char) path[i];
                if (c == '\\')
                        return "the path contains a backslash";
                if (c == '%') {
                        int hi = i + 2 < n ? hexval(path[i + 1]) : -1;
                        int lo = i + 2 < n ? hexval(path[i + 2]) : -1;
                        if (hi < 0 || lo < 0)
                                return "the path has a malformed percent-encoding";
                        unsigned char d = (unsigned char) (hi * 16 + lo);
                        if (d == '/' || d == '\\' || d == 0 || unreserved(d))
                                return "the path percent-encodes '/', '\\', NUL or an unreserved "
                                       "character";
                }
                if (c == '/') {
                        size_t e = i + 1;
                        while (e < n && path[e] != '/')
                                e++;
                        if (e == i + 1 && e < n)
                                return "the path has an empty segment ('//')";
                        if (dot_segment(path + i + 1, e - i - 1))
                                return "the path has a '.' or '..' segment";
                }
        }
        return NULL;
}

static bool method_match(const policy_req_rule *r, const char *method) {
        if (r->methods.n == 0)
                return true;
        for (size_t i = 0; i < r->methods.n; i++)
                if (r->deny ? strcasecmp(r->methods.v[i], method) == 0
                            : strcmp(r->methods.v[i], method) == 0)
                        return true;
        return false;
}

static bool path_match(const policy_req_rule *r, const char *path, size_t n) {
        if (r->paths.n == 0)
                return true;
        for (size_t i = 0; i < r->paths.n; i++)
                if (req_glob_match(r->paths.v[i], path, n, r->deny))
                        return true;
        return false;
}

static void describe(const rule *x, int index, char *out, size_t size) {
        const policy_req_rule *r = x->src;
        char methods[160] = "", paths[200] = "";
        size_t o = 0;
        for (size_t i = 0; i < r->methods.n && o + 1 < sizeof(methods); i++)
                o += (size_t) snprintf(methods + o, sizeof(methods) - o, "%s%s", i ? "," : "",
                                       r->methods.v[i]);
        o = 0;
        for (size_t i = 0; i < r->paths.n && o + 1 < sizeof(paths); i++)
                o += (size_t) snprintf(paths + o, sizeof(paths) - o, "%s%s", i ? "," : "",
                                       r->paths.v[i]);
        (void) snprintf(out, size, "egressRules[%d]: %s %s %s %s", index,
                        r->deny ? "deny" : "allow", r->methods.n ? methods : "*", r->host,
                        r->paths.n ? paths : "*");
}

void req_rules_judge(const req_rules *r, const net_host *h, uint16_t port, const char *method,
                     const char *target, size_t target_len, req_verdict *v) {
        *v = (req_verdict){ .index = -1 };
        size_t n = 0;
        while (n < target_len && target[n] != '?')
                n++;
        const char *why = req_path_ambiguous(target, n);
        if (why) {
                (void) snprintf(v->rule, sizeof(v->rule), "request rules: %s", why);
                return;
        }
        int allow = -1;
        for (size_t i = 0; r && i < r->n; i++) {
                const rule *x = &r->v[i];
                if (!req_host_matches(&x->host, h, port) || !method_match(x->src, method) ||
                    !path_match(x->src, target, n))
                        continue;
                if (x->src->deny) { /* deny wins, wherever it stands */
                        v->index = (int) i;
                        v->reason = x->src->reason;
                        describe(x, (int) i, v->rule, sizeof(v->rule));
                        return;
                }
                if (allow < 0)
                        allow = (int) i;
        }
        if (allow < 0) {
                (void) snprintf(v->rule, sizeof(v->rule),
                                "request rules: no egressRules entry allows %s on %s", method,
                                h->text);
                return;
        }
        v->allowed = true;
        v->index = allow;
        v->reason = r->v[allow].src->reason;
        describe(&r->v[allow], allow, v->rule, sizeof(v->rule));
}
