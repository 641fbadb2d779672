/* SPDX-License-Identifier: Apache-2.0 */
/* The egress rule set and the per-connection decision (egress.h).
 *
 * Patterns are parsed once, at load time, into canonical keys in four sorted tables per side
 * (allow, deny): exact names, "*.suffix" suffixes, "a.*.b" middle patterns (the key keeps the
 * '*'), and addresses. A decision is then a handful of binary searches: the name itself, each of
 * its proper suffixes, and the name with each inner label replaced by '*' — O(labels × log n)
 * string compares, however many patterns there are. */
#include "net/egress.h"

#include <stdio.h>

/* Generated into the build tree: egress_list_<name>[] from data/egress/<name>.list. */
#include "egress-lists.h"

typedef struct entry {
        char *key;
        uint16_t port; /* 0 = every port */
        char *rule;    /* the pattern as written, reported in verdicts */
        char *reason;  /* deny entries: why, when the policy says (egress_rules_add_reasons) */
} entry;

typedef struct table {
        entry *v; /* sorted by (key, port) once loading is done */
        size_t n, cap;
} table;

typedef struct side {
        table t[_EGRESS_PATTERN_KIND_MAX];
        uint64_t middle_labels[2]; /* bit n: some middle pattern has n labels (n < 128) */
} side;

struct egress_rules {
        bool network_enabled;
        side allow;
        side deny;
};

static const struct {
        const egress_list_entry *v;
        size_t n;
        const char *file;
} builtin[_EGRESS_LIST_MAX] = {
        [EGRESS_LIST_BASELINE] = { egress_list_baseline, ELEMENTSOF(egress_list_baseline),
                                   "baseline.list" },
        [EGRESS_LIST_GITHUB] = { egress_list_github, ELEMENTSOF(egress_list_github),
                                 "github.list" },
        [EGRESS_LIST_DENY] = { egress_list_deny, ELEMENTSOF(egress_list_deny), "deny.list" },
};

static size_t count_labels(const char *name) {
        size_t n = 1;
        for (; *name; name++)
                n += *name == '.';
        return n;
}

/* ---- tables --------------------------------------------------------------------------------- */

static int table_add(table *t, const char *key, uint16_t port, const char *rule) {
        if (t->n == t->cap) {
                size_t cap = t->cap ? t->cap * 2 : 16;
                if (cap > SIZE_MAX / sizeof(entry))
                        return -ENOMEM;
                entry *v = realloc(t->v, cap * sizeof(entry));
                if (!v)
                        return -ENOMEM;
                t->v = v;
                t->cap = cap;
        }
        entry e = { .key = strdup(key), .port = port, .rule = strdup(rule) };
        if (!e.key || !e.rule) {
                free(e.key);
                free(e.rule);
                return -ENOMEM;
        }
        t->v[t->n++] = e;
        return 0;
}

static int entry_cmp(const void *a, const void *b) {
        const entry *x = a, *y = b;
        int c = strcmp(x->key, y->key);
        return c ? c : (int) x->port - (int) y->port;
}

/* A query port that matches an entry whatever port it names (egress_decide_name()). */
#define ANY_PORT UINT32_MAX

/* The entry for (key, port): one naming this port, else one for every port, else NULL; with
 * ANY_PORT, the first entry for key. */
static const entry *table_find(const table *t, const char *key, uint32_t port) {
        size_t lo = 0, hi = t->n;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (strcmp(t->v[mid].key, key) < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        const entry *any = NULL;
        for (size_t i = lo; i < t->n && strcmp(t->v[i].key, key) == 0; i++) {
                if (t->v[i].port == port || port == ANY_PORT)
                        return &t->v[i];
                if (t->v[i].port == 0 && !any)
                        any = &t->v[i];
        }
        return any;
}

static void side_done(side *s) {
        for (size_t k = 0; k < _EGRESS_PATTERN_KIND_MAX; k++) {
                for (size_t i = 0; i < s->t[k].n; i++) {
                        free(s->t[k].v[i].key);
                        free(s->t[k].v[i].rule);
                        free(s->t[k].v[i].reason);
                }
                free(s->t[k].v);
        }
        memset(s, 0, sizeof(*s));
}

static int side_add(side *s, const egress_pattern *p, const char *rule) {
        if (p->kind == EGRESS_PATTERN_MIDDLE) {
                size_t n = count_labels(p->key); /* < 128: the key is at most 253 bytes */
                s->middle_labels[n / 64] |= UINT64_C(1) << (n % 64);
        }
        return table_add(&s->t[p->kind], p->key, p->port, rule);
}

static void side_sort(side *s) {
        for (size_t k = 0; k < _EGRESS_PATTERN_KIND_MAX; k++)
                if (s->t[k].n > 1)
                        qsort(s->t[k].v, s->t[k].n, sizeof(entry), entry_cmp);
}

/* "a.b.c.d" against middle patterns: the name with each inner label replaced by '*'. */
static const entry *middle_match(const side *s, const char *name, uint32_t port) {
        char key[NET_HOST_NAME_MAX + 1];
        size_t labels = count_labels(name);
        if (labels >= 128 || !(s->middle_labels[labels / 64] & (UINT64_C(1) << (labels % 64))))
                return NULL;
        for (const char *dot = strchr(name, '.'); dot;) {
                const char *end = strchr(dot + 1, '.');
                if (!end) /* the last label is never the wildcard */
                        break;
                size_t pre = (size_t) (dot - name) + 1;
                memcpy(key, name, pre);
                key[pre] = '*';
                memcpy(key + pre + 1, end, strlen(end) + 1);
                const entry *e = table_find(&s->t[EGRESS_PATTERN_MIDDLE], key, port);
                if (e)
                        return e;
                dot = end;
        }
        return NULL;
}

/* The most specific entry of a side matching (h, port); *exact says it is an exact name or
 * address entry naming this port. */
static const entry *side_match(const side *s, const net_host *h, uint32_t port, bool *exact) {
        const entry *e;
        *exact = false;
        if (h->kind != NET_HOST_NAME) {
                /* Addresses match address entries only: "*.1.2.3" or a name never covers one. */
                e = table_find(&s->t[EGRESS_PATTERN_ADDR], h->text, port);
                *exact = e && e->port != 0;
                return e;
        }
        e = table_find(&s->t[EGRESS_PATTERN_NAME], h->text, port);
        if (e) {
                *exact = e->port != 0;
                return e;
        }
        /* Proper suffixes only, longest first: "*.example.com" never matches example.com. */
        for (const char *dot = strchr(h->text, '.'); dot; dot = strchr(dot + 1, '.')) {
                e = table_find(&s->t[EGRESS_PATTERN_SUFFIX], dot + 1, port);
                if (e)
                        return e;
        }
        return middle_match(s, h->text, port);
}

/* ---- building ------------------------------------------------------------------------------- */

/* The pattern as it may appear in an error message: printable ASCII, the rest as \xNN, at most
 * about 110 bytes of it. */
static void describe(const char *p, char out[static 128]) {
        size_t n = 0;
        const unsigned char *c = (const unsigned char *) p;
        for (; *c && n < 110; c++) {
                if (*c >= 0x20 && *c < 0x7f && *c != '\\')
                        out[n++] = (char) *c;
                else
                        n += (size_t) snprintf(out + n, 5, "\\x%02x", *c);
        }
        if (*c)
                memcpy(out + n, "...", 4);
        else
                out[n] = '\0';
}

/* Validates one pattern and, when s is not NULL, adds it. */
static int add_pattern(side *s, const char *pattern, const char *origin, unsigned line,
                       cordon_error *err) {
        egress_pattern p;
        const char *why = egress_pattern_parse(pattern, &p);
        if (why) {
                char shown[128];
                describe(pattern ? pattern : "", shown);
                if (line > 0)
                        return cordon_set_error(err, CORDON_POLICY_INVALID, 0,
                                                "built-in list %s:%u: '%s' %s", origin, line,
                                                shown, why);
                return cordon_set_error(err, CORDON_POLICY_INVALID, 0, "%s entry '%s' %s",
                                        origin, shown, why);
        }
        if (!s)
                return 0;
        int r = side_add(s, &p, pattern);
        if (r < 0)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, r, "egress rules: %s",
                                        strerror(-r));
        return 0;
}

static int add_builtin(side *s, egress_builtin which, cordon_error *err) {
        for (size_t i = 0; i < builtin[which].n; i++) {
                const egress_list_entry *e = &builtin[which].v[i];
                int r = add_pattern(s, e->pattern, builtin[which].file, e->line, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int add_strv(side *s, const strv *list, const char *origin, cordon_error *err) {
        for (size_t i = 0; list && i < list->n; i++) {
                int r = add_pattern(s, list->v[i], origin, 0, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

void egress_rules_free(egress_rules *r) {
        if (!r)
                return;
        side_done(&r->allow);
        side_done(&r->deny);
        free(r);
}

int egress_rules_new(egress_rules **out, bool network_enabled, const strv *allow,
                     const strv *deny, cordon_error *err) {
        _cleanup_egress_rules_ egress_rules *r = calloc(1, sizeof(*r));
        int ret;
        *out = NULL;
        if (!r)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, ENOMEM, "egress rules: %s",
                                        strerror(ENOMEM));
        r->network_enabled = network_enabled;
        /* networkEnabled false: no allow entry at all, not even the baseline (docs/policy.md); the
         * user's entries are still validated so a bad one is reported either way. */
        side *allow_side = network_enabled ? &r->allow : NULL;
        if ((ret = add_builtin(allow_side, EGRESS_LIST_BASELINE, err)) < 0 ||
            (ret = add_builtin(allow_side, EGRESS_LIST_GITHUB, err)) < 0 ||
            (ret = add_strv(allow_side, allow, "egressAllowlist", err)) < 0 ||
            (ret = add_builtin(&r->deny, EGRESS_LIST_DENY, err)) < 0 ||
            (ret = add_strv(&r->deny, deny, "egressDenylist", err)) < 0)
                return ret;
        side_sort(&r->allow);
        side_sort(&r->deny);
        *out = TAKE_PTR(r);
        return 0;
}

/* ---- deciding ------------------------------------------------------------------------------- */

static void set_rule(egress_verdict *v, const char *rule) {
        size_t n = strnlen(rule, sizeof(v->rule) - 1);
        memcpy(v->rule, rule, n);
        v->rule[n] = '\0';
}

static void set_denied(egress_verdict *v, const entry *e) {
        set_rule(v, e->rule);
        if (e->reason)
                (void) snprintf(v->reason, sizeof(v->reason), "%s", e->reason);
}

int egress_rules_add_reasons(egress_rules *r, const policy_reason *reasons, size_t n) {
        for (size_t k = 0; k < _EGRESS_PATTERN_KIND_MAX; k++)
                for (size_t i = 0; i < r->deny.t[k].n; i++) {
                        entry *e = &r->deny.t[k].v[i];
                        for (size_t j = 0; j < n && !e->reason; j++)
                                if (strcmp(e->rule, reasons[j].pattern) == 0 &&
                                    !(e->reason = strdup(reasons[j].reason)))
                                        return -ENOMEM;
                }
        return 0;
}

static bool host_is_canonical_shape(const net_host *h) {
        return h && memchr(h->text, '\0', sizeof(h->text)) && h->text[0] &&
               (h->kind == NET_HOST_NAME || h->kind == NET_HOST_IPV4 ||
                h->kind == NET_HOST_IPV6);
}

void egress_decide(const egress_rules *r, const net_host *h, uint16_t port, egress_verdict *v) {
        bool exact;
        memset(v, 0, sizeof(*v));
        if (!r || !host_is_canonical_shape(h) || port == 0) {
                set_rule(v, "invalid destination");
                return;
        }
        /* Deny first: a deny entry beats every allow entry, however specific. */
        const entry *e = side_match(&r->deny, h, port, &exact);
        if (e) {
                set_denied(v, e);
                return;
        }
        e = side_match(&r->allow, h, port, &exact);
        if (e) {
                v->allowed = true;
                v->exact_port = exact;
                set_rule(v, e->rule);
                return;
        }
        set_rule(v, r->network_enabled ? "not in allowlist" : "network disabled");
        v->unlisted = r->network_enabled;
}

void egress_decide_name(const egress_rules *r, const net_host *h, egress_verdict *v) {
        bool exact;
        memset(v, 0, sizeof(*v));
        if (!r || !host_is_canonical_shape(h) || h->kind != NET_HOST_NAME) {
                set_rule(v, "invalid destination");
                return;
        }
        /* Port 0 finds the deny entries for every port only: "github.com:22" denied leaves the
         * name resolvable (its 443 may be allowed); the connection is judged with its port. */
        const entry *e = side_match(&r->deny, h, 0, &exact);
        if (e) {
                set_denied(v, e);
                return;
        }
        e = side_match(&r->allow, h, ANY_PORT, &exact);
        if (e) {
                v->allowed = true;
                set_rule(v, e->rule);
                return;
        }
        set_rule(v, r->network_enabled ? "not in allowlist" : "network disabled");
        v->unlisted = r->network_enabled;
}

bool egress_addr_listed(const egress_rules *r, bool deny, const net_host *addr, uint16_t port) {
        if (!r || !host_is_canonical_shape(addr) || addr->kind == NET_HOST_NAME)
                return false;
        const side *s = deny ? &r->deny : &r->allow;
        return table_find(&s->t[EGRESS_PATTERN_ADDR], addr->text, port) != NULL;
}

const egress_list_entry *egress_builtin_list(egress_builtin which, size_t *ret_n,
                                             const char **ret_file) {
        if ((unsigned) which >= _EGRESS_LIST_MAX) {
                *ret_n = 0;
                if (ret_file)
                        *ret_file = NULL;
                return NULL;
        }
        *ret_n = builtin[which].n;
        if (ret_file)
                *ret_file = builtin[which].file;
        return builtin[which].v;
}
