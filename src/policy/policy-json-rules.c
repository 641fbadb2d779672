/* SPDX-License-Identifier: Apache-2.0 */
/* The policy's egressRules and tls keys (docs/policy.md, "Request rules"): each rule a host
 * pattern, the methods and path globs it covers, allow or deny, and an optional reason; tls the
 * hosts never terminated and the extra CAs trusted for upstreams. Every error names the file,
 * line and column of the value (json-read.c). */
#include <stdio.h>
#include <string.h>

#include "policy/policy-json-internal.h"

#define RULE_EXAMPLE "{\"host\": \"api.example.com\", \"methods\": [\"GET\", \"HEAD\"], " \
                     "\"paths\": [\"/v1/*\"], \"action\": \"allow\", \"reason\": \"read-only\"}"
#define TLS_EXAMPLE "{\"passthrough\": [\"*.pinned.example\"], \"upstreamCa\": [\"/etc/ca.pem\"]}"

typedef struct rule_parse {
        policy_req_rule r;
        bool action_set;
} rule_parse;

static int parse_rule_host(parse_ctx *c, json_t *v, void *target) {
        rule_parse *p = target;
        const char *s = NULL;
        int r = policy_json_checked(c, v, &s, "\"host\": \"api.example.com\"",
                                    policy_check_host_pattern,
                                    "a host name, \"*.example.com\" or \"host:port\"");
        p->r.host = (char *) s;
        return r;
}

/* A list of checked strings into `out` (duplicates dropped). A rule's methods or paths may not
 * be empty: "[]" could be read as "none" or as "every one"; leaving the key out says "every". */
static int parse_checked_list(parse_ctx *c, json_t *v, strv *out, const char *example,
                              const char *(*check)(const char *), const char *hint,
                              bool may_be_empty) {
        int r = jread_expect(&c->j, v, json_is_array(v), "an array", example);
        if (r < 0)
                return r;
        if (!may_be_empty && json_array_size(v) == 0)
                return jread_fail(&c->j, false, "leave the key out to cover every one",
                                  "is empty, which would match nothing");
        if (json_array_size(v) > 64)
                return jread_fail(&c->j, false, "use fewer, broader entries",
                                  "has %zu entries; at most 64 are allowed", json_array_size(v));
        size_t i;
        json_t *e;
        json_array_foreach(v, i, e) {
                const char *s = NULL;
                jread_push_index(&c->j, i);
                r = policy_json_checked(c, e, &s, example, check, hint);
                jread_pop(&c->j);
                if (r < 0)
                        return r;
                if ((r = strv_push_unique(out, s)) < 0)
                        return policy_json_fail_errno(c, r);
        }
        return 0;
}

static int parse_rule_methods(parse_ctx *c, json_t *v, void *target) {
        rule_parse *p = target;
        int r = parse_checked_list(c, v, &p->r.methods, "\"methods\": [\"GET\", \"HEAD\"]",
                                   policy_check_req_method, "an upper-case method, or \"*\"",
                                   false);
        /* "*" anywhere means every method: the same as leaving the key out. */
        if (r == 0 && strv_contains(&p->r.methods, "*"))
                strv_done(&p->r.methods);
        return r;
}

static int parse_rule_paths(parse_ctx *c, json_t *v, void *target) {
        rule_parse *p = target;
        return parse_checked_list(c, v, &p->r.paths, "\"paths\": [\"/v1/*\"]",
                                  policy_check_req_path,
                                  "a path glob such as \"/v1/*\" ('*' any bytes, '?' one)",
                                  false);
}

static int parse_rule_action(parse_ctx *c, json_t *v, void *target) {
        rule_parse *p = target;
        const char *s = json_is_string(v) ? json_string_value(v) : NULL;
        bool allow = s && strcmp(s, "allow") == 0, deny = s && strcmp(s, "deny") == 0;
        char shown[64];
        int r = s && !allow && !deny
                        ? jread_fail(&c->j, false, "write \"action\": \"allow\" or \"deny\"",
                                     "'%s' is not an action",
                                     jread_shorten(s, shown, sizeof(shown)))
                        : jread_expect(&c->j, v, allow || deny, "\"allow\" or \"deny\"",
                                       "\"action\": \"deny\"");
        p->r.deny = deny;
        p->action_set = true;
        return r;
}

static int parse_rule_reason(parse_ctx *c, json_t *v, void *target) {
        rule_parse *p = target;
        const char *s = NULL;
        int r = policy_json_checked(c, v, &s, "\"reason\": \"read-only access\"",
                                    policy_check_reason,
                                    "one line of printable text, at most 200 bytes");
        p->r.reason = (char *) s;
        return r;
}

static const field rule_fields[] = {
        { "host", parse_rule_host, NULL },
        { "methods", parse_rule_methods, NULL },
        { "paths", parse_rule_paths, NULL },
        { "action", parse_rule_action, NULL },
        { "reason", parse_rule_reason, NULL },
};

static int parse_rule(parse_ctx *c, json_t *e) {
        rule_parse p = { 0 };
        int r = policy_json_fields(c, e, rule_fields, ELEMENTSOF(rule_fields), RULE_EXAMPLE, &p);
        if (r == 0 && !p.r.host)
                r = jread_fail(&c->j, false, "add \"host\": \"api.example.com\"",
                               "a request rule needs 'host'");
        /* No default action: a rule read the wrong way round is a hole or an outage. */
        if (r == 0 && !p.action_set)
                r = jread_fail(&c->j, false, "add \"action\": \"allow\" or \"action\": \"deny\"",
                               "a request rule needs 'action'");
        if (r == 0 && (r = policy_req_add_rule(&c->layer->req, &p.r)) < 0)
                r = policy_json_fail_errno(c, r);
        /* host and reason point into the document; only the lists were copied. */
        strv_done(&p.r.methods);
        strv_done(&p.r.paths);
        return r;
}

int policy_json_egress_rules(parse_ctx *c, json_t *v, void *target) {
        (void) target;
        return policy_json_array(c, v, "[" RULE_EXAMPLE "]", POLICY_MAX_REQ_RULES,
                                 "merge rules with several methods or paths", parse_rule);
}

static int parse_passthrough(parse_ctx *c, json_t *v, void *target) {
        (void) target;
        return parse_checked_list(c, v, &c->layer->req.passthrough,
                                  "\"passthrough\": [\"*.pinned.example\"]",
                                  policy_check_host_pattern,
                                  "a host name, \"*.example.com\" or \"host:port\"", true);
}

static int parse_upstream_ca(parse_ctx *c, json_t *v, void *target) {
        (void) target;
        return parse_checked_list(c, v, &c->layer->req.upstream_ca,
                                  "\"upstreamCa\": [\"/etc/ssl/private-registry.pem\"]",
                                  policy_check_path, "an absolute path of a PEM file", true);
}

static const field tls_fields[] = {
        { "passthrough", parse_passthrough, NULL },
        { "upstreamCa", parse_upstream_ca, NULL },
};

int policy_json_tls(parse_ctx *c, json_t *v, void *target) {
        return policy_json_fields(c, v, tls_fields, ELEMENTSOF(tls_fields), TLS_EXAMPLE, target);
}

/* ---- gitPush (docs/policy.md, "Git push") ------------------------------------------------ */

#define GIT_RULE_EXAMPLE "{\"repo\": \"github.com/org/repo\", \"refs\": [\"refs/heads/agent/*\"]}"
#define GIT_PUSH_EXAMPLE "{\"default\": \"deny\", \"allow\": [" GIT_RULE_EXAMPLE "]}"

static int parse_git_repo(parse_ctx *c, json_t *v, void *target) {
        policy_git_push_rule *p = target;
        const char *s = NULL;
        int r = policy_json_checked(c, v, &s, "\"repo\": \"github.com/org/repo\"",
                                    policy_check_git_repo,
                                    "the HTTPS URL without https://, e.g. github.com/org/repo");
        p->repo = (char *) s;
        return r;
}

static int parse_git_refs(parse_ctx *c, json_t *v, void *target) {
        policy_git_push_rule *p = target;
        return parse_checked_list(c, v, &p->refs, "\"refs\": [\"refs/heads/agent/*\"]",
                                  policy_check_git_ref,
                                  "a full ref glob such as \"refs/heads/agent/*\"", false);
}

static int parse_git_bool(parse_ctx *c, json_t *v, bool *out, const char *example) {
        int r = jread_expect(&c->j, v, json_is_boolean(v), "a boolean", example);
        *out = json_is_true(v);
        return r;
}

static int parse_git_delete(parse_ctx *c, json_t *v, void *target) {
        return parse_git_bool(c, v, &((policy_git_push_rule *) target)->delete_ok,
                              "\"delete\": true");
}

static int parse_git_update(parse_ctx *c, json_t *v, void *target) {
        bool update = true;
        int r = parse_git_bool(c, v, &update, "\"update\": false");
        ((policy_git_push_rule *) target)->create_only = !update;
        return r;
}

/* "force" is refused, not ignored: the gateway sees only the commands, not the ancestry that
 * makes an update a force update, and a key it cannot honour must not read as protection. */
static int parse_git_force(parse_ctx *c, json_t *v, void *target) {
        (void) v;
        (void) target;
        return jread_fail(&c->j, false,
                          "write \"update\": false to allow creating the refs only (no update, "
                          "so no force update)",
                          "cannot be enforced: a push's commands do not say whether an update "
                          "is a force update");
}

static const field git_rule_fields[] = {
        { "repo", parse_git_repo, NULL },     { "refs", parse_git_refs, NULL },
        { "delete", parse_git_delete, NULL }, { "update", parse_git_update, NULL },
        { "force", parse_git_force, NULL },
};

static int parse_git_rule(parse_ctx *c, json_t *e) {
        policy_git_push_rule p = { 0 };
        int r = policy_json_fields(c, e, git_rule_fields, ELEMENTSOF(git_rule_fields),
                                   GIT_RULE_EXAMPLE, &p);
        if (r == 0 && !p.repo)
                r = jread_fail(&c->j, false, "add \"repo\": \"github.com/org/repo\"",
                               "a gitPush.allow entry needs 'repo'");
        if (r == 0 && p.refs.n == 0)
                r = jread_fail(&c->j, false, "add \"refs\": [\"refs/heads/agent/*\"]",
                               "a gitPush.allow entry needs 'refs'");
        if (r == 0 && (r = policy_git_push_add(&c->layer->req.git_push, &p)) < 0)
                r = policy_json_fail_errno(c, r);
        strv_done(&p.refs); /* repo points into the document */
        return r;
}

static int parse_git_default(parse_ctx *c, json_t *v, void *target) {
        (void) target;
        const char *s = json_is_string(v) ? json_string_value(v) : NULL;
        if (s && strcmp(s, "allow") == 0)
                return jread_fail(&c->j, false, "leave gitPush out to let pushes through unjudged",
                                  "'allow' is not a gitPush default: only \"deny\" is");
        return jread_expect(&c->j, v, s && strcmp(s, "deny") == 0, "\"deny\"",
                            "\"default\": \"deny\"");
}

static int parse_git_allow(parse_ctx *c, json_t *v, void *target) {
        (void) target;
        return policy_json_array(c, v, "[" GIT_RULE_EXAMPLE "]", POLICY_MAX_GIT_PUSH_RULES,
                                 "use ref globs to cover several refs", parse_git_rule);
}

static const field git_push_fields[] = {
        { "default", parse_git_default, NULL },
        { "allow", parse_git_allow, NULL },
};

int policy_json_git_push(parse_ctx *c, json_t *v, void *target) {
        int r = policy_json_fields(c, v, git_push_fields, ELEMENTSOF(git_push_fields),
                                   GIT_PUSH_EXAMPLE, target);
        if (r == 0)
                c->layer->req.git_push.on = true;
        return r;
}
