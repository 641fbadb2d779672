/* SPDX-License-Identifier: Apache-2.0 */
/* Request rules (docs/policy.md, "Request rules"; docs/design/network.md, "Request rules"):
 * which HTTP requests the proxy lets through to a host that egressRules name. Pure: the proxy
 * (src/net/proxy-request.c) hands it each request's canonical host, port, method and target.
 *
 * Semantics, order-independent so that settings layers can only append:
 *   - a host is ruled when any rule's host pattern matches it (and its port);
 *   - on a ruled host a matching deny rule refuses (deny wins over allow, wherever it is);
 *   - else a matching allow rule lets the request through;
 *   - else it is refused: a ruled host fails closed.
 * A rule matches when its host pattern, one of its methods (none listed: any) and one of its
 * path globs (none listed: any) match. Globs match the path only (the target up to '?'):
 * '*' any run of bytes ('/' included), '?' one byte. Allow rules match exactly (case-
 * sensitive); deny rules ignore ASCII case in the path and the method, so a server that treats
 * /Admin as /admin cannot be reached past a deny of "/admin/" + '*'. A path a server could read as
 * another one (dot or empty segments, a backslash, percent-encoded '/', '\', NUL or unreserved
 * bytes) is refused on a ruled host before any rule is consulted. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/egress-pattern.h"
#include "policy/policy.h"
#include "util/host.h"

/* Immutable once built: shared by every connection (and thread) of the proxy. */
typedef struct req_rules req_rules;

/* Builds the table from the policy's rules (q may have none: then *out is NULL and nothing is
 * ruled). Every pattern was validated where it entered the policy; one that no longer parses is
 * -EINVAL. 0 or -errno. */
int req_rules_new(req_rules **out, const policy_req *q);
void req_rules_free(req_rules *r);

/* Whether any rule names this canonical host on this port. */
bool req_rules_ruled(const req_rules *r, const net_host *h, uint16_t port);
/* Whether tls.passthrough names it: its TLS is never terminated. */
bool req_rules_passthrough(const req_rules *r, const net_host *h, uint16_t port);

typedef struct req_verdict {
        bool allowed;
        /* The deciding rule (egressRules[2], its action, methods, host and globs), or why no
         * rule decided. Printable ASCII. */
        char rule[400];
        const char *reason; /* the deciding rule's reason, or NULL (points into the table) */
        int index;          /* the deciding rule's index in egressRules, -1 if none */
} req_verdict;

/* Judges one request on a ruled host. `target` is the request-target in origin-form
 * ("/path?query", or "*" for OPTIONS), target_len bytes, not NUL-terminated. */
void req_rules_judge(const req_rules *r, const net_host *h, uint16_t port, const char *method,
                     const char *target, size_t target_len, req_verdict *v);

/* NULL when `path` (path_len bytes, no query) means one thing to every server, else why not. */
const char *req_path_ambiguous(const char *path, size_t path_len);
/* Whether a parsed host pattern matches a canonical host on a port (the matching every table
 * here uses; src/net/cred-rewrite.c too). */
bool req_host_matches(const egress_pattern *p, const net_host *h, uint16_t port);
/* Glob match: '*' any run of bytes, '?' one byte; fold: ASCII case ignored. */
bool req_glob_match(const char *glob, const char *s, size_t len, bool fold);
