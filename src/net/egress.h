/* SPDX-License-Identifier: Apache-2.0 */
/* The egress rule set and the per-connection decision (docs/design/network.md). Pure: the proxy
 * canonicalises the client's host (util/host.h), asks egress_decide(), resolves an allowed name
 * once, and asks egress_check_address() (net/addr-guard.h) about the very address it is going to
 * dial.
 *
 * Patterns (allow and deny alike): policy/egress-pattern.h. Deny beats allow. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "policy/egress-pattern.h"
#include "policy/policy.h"
#include "util/host.h"
#include "util/util.h"

/* Immutable once built: egress_decide(), egress_addr_listed() and egress_check_address() only
 * read it, so one rule set may serve every proxy thread at once. */
typedef struct egress_rules egress_rules;

/* Builds the rule set. When network_enabled, allow = the built-in baseline and GitHub lists +
 * `allow`; when not, the allowlist is empty (every connection refused) but `allow` is still
 * validated. deny = the fixed built-in deny list + `deny`, always. `allow` and `deny` may be NULL.
 * An invalid pattern fails with CORDON_POLICY_INVALID naming the pattern and why. Returns 0 or
 * -errno; *out is caller-freed with egress_rules_free(). */
int egress_rules_new(egress_rules **out, bool network_enabled, const strv *allow,
                     const strv *deny, cordon_error *err);
void egress_rules_free(egress_rules *r);
/* Gives the deny entries written as one of `reasons`' patterns that reason (policy-reasons.c):
 * a verdict they make then carries it. 0 or -ENOMEM. */
int egress_rules_add_reasons(egress_rules *r, const policy_reason *reasons, size_t n);
static inline void egress_rules_freep(egress_rules **r) {
        egress_rules_free(*r);
}
#define _cleanup_egress_rules_ _cleanup_(egress_rules_freep)

typedef struct egress_verdict {
        bool allowed;
        /* The pattern that decided (as written), or "not in allowlist", "network disabled",
         * "invalid destination". */
        char rule[300];
        /* The deciding allow entry names this exact host (no wildcard) and this port. */
        bool exact_port;
        /* A refusing deny entry's reason (egress_rules_add_reasons), else "". */
        char reason[POLICY_REASON_MAX + 1];
        /* Refused because no entry names it at all ("not in allowlist", the network enabled):
         * the only refusal the ask mode may turn into a question (net/proxy-ask.c). A deny
         * entry's refusal, "network disabled" and "invalid destination" never are. */
        bool unlisted;
} egress_verdict;

/* The decision for a canonical host (net_host_canon()) and port: a deny match refuses, then an
 * allow match allows; the most specific allow entry is reported (exact name or address with the
 * port, then without, then the longest "*.suffix", then a middle wildcard). Port 0 is refused. */
void egress_decide(const egress_rules *r, const net_host *h, uint16_t port, egress_verdict *v);

/* Whether a name may be resolved at all (the sandbox's DNS responder, net/proxy-dns.c): a deny
 * entry for every port refuses, then an allow entry for any port allows. The connection that
 * follows is still judged by egress_decide() with its port. */
void egress_decide_name(const egress_rules *r, const net_host *h, egress_verdict *v);
/* True when an address entry (127.0.0.1, [::1]:3000, ...) of the deny side (deny = true) or the
 * allow side names `addr` (kind IPV4 or IPV6) on `port` or on every port. The allow side is empty
 * when the network is disabled. */
bool egress_addr_listed(const egress_rules *r, bool deny, const net_host *addr, uint16_t port);

/* ---- the built-in lists (data/egress/NAME.list, embedded at build time) ---------------------- */

typedef enum egress_builtin {
        EGRESS_LIST_BASELINE, /* baseline.list: LLM providers, git hosting, package registries */
        EGRESS_LIST_GITHUB,   /* github.list */
        EGRESS_LIST_DENY,     /* deny.list: metadata endpoints, telemetry sinks, *.onion */
        _EGRESS_LIST_MAX,
} egress_builtin;

typedef struct egress_list_entry {
        const char *pattern;
        unsigned line; /* in the list file, for error messages */
} egress_list_entry;

/* The entries of a built-in list and their count; "baseline.list" etc. as *ret_file. */
const egress_list_entry *egress_builtin_list(egress_builtin which, size_t *ret_n,
                                             const char **ret_file);
