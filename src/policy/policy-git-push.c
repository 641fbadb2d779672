/* SPDX-License-Identifier: Apache-2.0 */
/* gitPush as policy data (docs/policy.md, "Git push"): the allow entries, their validators,
 * copies, merge and printed form. The proxy judges pushes with src/net/git-push.c, built from
 * these. */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "policy/egress-pattern.h"
#include "policy/policy.h"

static bool repo_byte(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '-' || c == '.' || c == '_' || c == '~';
}

/* "host/path": a DNS name, then one or more segments of unreserved characters, none "." or
 * ".." or empty. Only bytes a request path carries as written can match an entry, so an
 * entry never matches a percent-encoded or dot-segment spelling of another repository. */
const char *policy_check_git_repo(const char *s) {
        const char *slash = s ? strchr(s, '/') : NULL;
        if (!slash || slash == s)
                return "must be \"host/owner/repo\" (the HTTPS URL without https://)";
        if (strlen(s) >= 400)
                return "is longer than 400 bytes";
        char host[256];
        size_t hl = (size_t) (slash - s);
        if (hl >= sizeof(host))
                return "has a host name over 255 bytes";
        memcpy(host, s, hl);
        host[hl] = '\0';
        /* A plain name in the egress patterns' grammar (which the proxy canonicalises the same
         * way): no wildcard, port or address brackets. */
        if (strspn(host, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_") != hl ||
            egress_check_pattern(host))
                return "must start with a host name (no wildcard, no port, no scheme)";
        for (const char *p = slash; *p == '/';) {
                const char *e = p + 1;
                while (repo_byte(*e))
                        e++;
                size_t n = (size_t) (e - p - 1);
                if (*e && *e != '/')
                        return "has a path byte other than letters, digits, '-', '.', '_', '~'";
                if (n == 0 && *e)
                        return "has an empty path segment ('//')";
                if ((n == 1 && p[1] == '.') || (n == 2 && p[1] == '.' && p[2] == '.'))
                        return "has a '.' or '..' path segment";
                p = e;
        }
        return NULL;
}

/* A glob ('*' any bytes, '/' included; '?' one byte) over full ref names. */
const char *policy_check_git_ref(const char *s) {
        size_t n = s ? strlen(s) : 0;
        if (n < 6 || strncmp(s, "refs/", 5) != 0)
                return "must be a full ref name or glob starting with refs/ (refs/heads/agent/*)";
        if (n > 255)
                return "is longer than 255 bytes";
        for (size_t i = 0; i < n; i++)
                if ((unsigned char) s[i] <= 0x20 || (unsigned char) s[i] >= 0x7f)
                        return "must be printable ASCII without spaces";
        return NULL;
}

/* The stored form: host lower case, no trailing '/' and no ".git" (git's URLs take both). */
static char *repo_normal(const char *s) {
        char *r = strdup(s);
        size_t n = r ? strlen(r) : 0;
        for (size_t i = 0; r && r[i] && r[i] != '/'; i++)
                if (r[i] >= 'A' && r[i] <= 'Z')
                        r[i] = (char) (r[i] - 'A' + 'a');
        while (n > 0 && r[n - 1] == '/')
                r[--n] = '\0';
        if (n > 4 && strcmp(r + n - 4, ".git") == 0)
                r[n - 4] = '\0';
        return r;
}

static void rule_clear(policy_git_push_rule *r) {
        free(r->repo);
        strv_done(&r->refs);
        memset(r, 0, sizeof(*r));
}

static bool rule_equal(const policy_git_push_rule *a, const policy_git_push_rule *b) {
        if (strcmp(a->repo, b->repo) != 0 || a->delete_ok != b->delete_ok ||
            a->create_only != b->create_only || a->refs.n != b->refs.n)
                return false;
        for (size_t i = 0; i < a->refs.n; i++)
                if (strcmp(a->refs.v[i], b->refs.v[i]) != 0)
                        return false;
        return true;
}

static bool has_rule(const policy_git_push *g, const policy_git_push_rule *r) {
        for (size_t i = 0; i < g->n_allow; i++)
                if (rule_equal(&g->allow[i], r))
                        return true;
        return false;
}

int policy_git_push_add(policy_git_push *g, const policy_git_push_rule *r) {
        if (!r->repo || policy_check_git_repo(r->repo) || r->refs.n == 0)
                return -EINVAL;
        policy_git_push_rule c = { .repo = repo_normal(r->repo), .delete_ok = r->delete_ok,
                                   .create_only = r->create_only };
        int e = !c.repo ? -ENOMEM : strv_copy(&c.refs, &r->refs);
        if (e == 0 && has_rule(g, &c)) {
                rule_clear(&c);
                return 0;
        }
        if (e == 0 && g->n_allow >= POLICY_MAX_GIT_PUSH_RULES)
                e = -E2BIG;
        policy_git_push_rule *v = e == 0 ? realloc(g->allow, (g->n_allow + 1) * sizeof(*v)) : NULL;
        if (!v) {
                rule_clear(&c);
                return e < 0 ? e : -ENOMEM;
        }
        g->allow = v;
        g->allow[g->n_allow++] = c;
        return 0;
}

int policy_git_push_copy(policy_git_push *dst, const policy_git_push *src) {
        dst->on = dst->on || src->on;
        for (size_t i = 0; i < src->n_allow; i++) {
                int r = policy_git_push_add(dst, &src->allow[i]);
                if (r < 0)
                        return r;
        }
        return 0;
}

void policy_git_push_clear(policy_git_push *g) {
        for (size_t i = 0; i < g->n_allow; i++)
                rule_clear(&g->allow[i]);
        free(g->allow);
        memset(g, 0, sizeof(*g));
}

/* An allow entry admits pushes the default refuses; the key alone only refuses. */
bool policy_git_push_widens(const policy_git_push *base, const policy_git_push *over) {
        for (size_t i = 0; i < over->n_allow; i++)
                if (!has_rule(base, &over->allow[i]))
                        return true;
        return false;
}

static json_t *rule_json(const policy_git_push_rule *r) {
        json_t *refs = json_array();
        for (size_t i = 0; refs && i < r->refs.n; i++)
                if (json_array_append_new(refs, json_string(r->refs.v[i])) < 0) {
                        json_decref(refs);
                        return NULL;
                }
        return refs ? json_pack("{s:s, s:o, s:b, s:b}", "repo", r->repo, "refs", refs, "delete",
                                r->delete_ok, "update", !r->create_only)
                    : NULL;
}

void *policy_git_push_json(const policy_git_push *g, bool *failed) {
        if (!g->on)
                return NULL;
        json_t *a = json_array();
        for (size_t i = 0; a && i < g->n_allow; i++)
                if (json_array_append_new(a, rule_json(&g->allow[i])) < 0) {
                        json_decref(a);
                        a = NULL;
                }
        json_t *o = a ? json_pack("{s:s, s:o}", "default", "deny", "allow", a) : NULL;
        if (!o)
                *failed = true;
        return o;
}

bool policy_req_inspects(const policy_req *q) {
        return q->n_rules > 0 || q->git_push.on || q->n_creds > 0;
}
