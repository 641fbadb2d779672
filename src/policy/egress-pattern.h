/* SPDX-License-Identifier: Apache-2.0 */
/* The egress pattern language of egressAllowlist and egressDenylist (docs/policy.md,
 * docs/design/network.md). Pure. Policy validates every pattern with it where it is written
 * (policy_check_host_pattern()), and the proxy's rule set is built from the same parse
 * (src/net/egress.c), so a pattern means one thing to both.
 *
 * Patterns (allow and deny alike), case-insensitive, one trailing dot ignored:
 *   example.com            exactly that name, every port
 *   *.example.com          every name below example.com at any depth, not example.com itself
 *   bedrock.*.amazonaws.com exactly one label in place of the '*'
 *   example.com:443        that name on port 443 only (any form above may carry a port)
 *   127.0.0.1, 127.1:3000, [::1]:8080, fd00:ec2::254
 *                          an address (canonicalised like a client's host; wildcards never match
 *                          addresses, names never match address entries)
 * At most one '*', and it must be a whole label that is not the last one. */
#pragma once

#include <stdint.h>

#include "util/host.h"

#define EGRESS_PATTERN_MAX 261 /* a 253-byte name, its trailing dot, ":65535" */

typedef enum egress_pattern_kind {
        EGRESS_PATTERN_NAME,   /* key: the canonical name */
        EGRESS_PATTERN_SUFFIX, /* "*.example.com" → key "example.com" */
        EGRESS_PATTERN_MIDDLE, /* "bedrock.*.amazonaws.com" → the canonical name, '*' kept */
        EGRESS_PATTERN_ADDR,   /* key: the canonical address text */
        _EGRESS_PATTERN_KIND_MAX,
} egress_pattern_kind;

typedef struct egress_pattern {
        egress_pattern_kind kind;
        uint16_t port; /* 0 = every port */
        char key[NET_HOST_INPUT_MAX + 1];
} egress_pattern;

/* Parses `pattern` into *out (zeroed first). NULL when it is a valid allow/deny pattern, else a
 * static phrase saying why not. */
const char *egress_pattern_parse(const char *pattern, egress_pattern *out);

/* NULL when `pattern` is a valid allow/deny pattern, else a static phrase saying why not. */
const char *egress_check_pattern(const char *pattern);
