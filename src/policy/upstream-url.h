/* SPDX-License-Identifier: Apache-2.0 */
/* egressUpstream (docs/policy.md, docs/design/network.md "Upstream proxies"): the parent proxy a
 * run's egress proxy chains every allowed connection through, written as a URL:
 *
 *   http://[USER:PASSWORD@]HOST:PORT      HTTP CONNECT (RFC 9110 §9.3.6)
 *   socks5://[USER:PASSWORD@]HOST:PORT    SOCKS5 CONNECT (RFC 1928, RFC 1929); socks5h:// is the
 *                                         same (names always go to the upstream as names)
 *
 * HOST is a DNS name, an IPv4 address or a bracketed IPv6 address; PORT is required; USER and
 * PASSWORD are both required when either is given, percent-decoded, 1..255 bytes each. Nothing
 * else: no path, query or fragment, no other scheme. Pure: no sockets, no DNS, no allocation.
 *
 * One parser for every way in (the setter, the policy loader, the CLI flag) and for the proxy
 * process, which reads the parts from the plan's copy of the canonical URL
 * (src/linux/proxy-proc.c): what was checked is what is used.
 *
 * The password is a secret an operator put there (a corporate proxy's account): it is printed
 * only as "****" (policy_upstream_format() with redact), and no phrase returned here quotes any
 * part of the URL, so an error message cannot carry it either. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define POLICY_UPSTREAM_URL_MAX 2048  /* bytes as written (percent-encoding triples a credential) */
#define POLICY_UPSTREAM_CRED_MAX 255  /* decoded user name / password: RFC 1929's one-byte lengths */
#define POLICY_UPSTREAM_HOST_MAX 253
#define POLICY_UPSTREAM_REDACTED "****"
#define POLICY_UPSTREAM_HINT                                                                    \
        "write http://[user:password@]host:port or socks5://[user:password@]host:port"

typedef enum policy_upstream_kind {
        POLICY_UPSTREAM_HTTP = 1,
        POLICY_UPSTREAM_SOCKS5,
} policy_upstream_kind;

typedef struct policy_upstream {
        policy_upstream_kind kind;
        /* Canonical (src/util/host.h): a lower-case name, a dotted quad, or an IPv6 address in
         * RFC 5952 form without brackets (host_ipv6). */
        char host[POLICY_UPSTREAM_HOST_MAX + 1];
        bool host_ipv6;
        uint16_t port;                             /* 1..65535 */
        bool has_creds;
        /* Decoded and NUL-terminated; never a NUL, another control byte or (user) a ':' inside. */
        char user[POLICY_UPSTREAM_CRED_MAX + 1];
        char pass[POLICY_UPSTREAM_CRED_MAX + 1];
        size_t user_len, pass_len;
} policy_upstream;

/* Parses `url` into *out (zeroed first; wiped again on failure, so no half-decoded password is
 * left behind). NULL when it is acceptable, else a static phrase that reads after the key's or
 * the flag's name ("has no port"), and *hint (when `hint` is not NULL) a static phrase saying how
 * to write it instead ("write host:PORT, e.g. http://proxy.example:3128"). */
const char *policy_upstream_parse(const char *url, policy_upstream *out, const char **hint);

/* The canonical URL of `u`: scheme "http" or "socks5", the credentials percent-encoded (every
 * byte but A-Z a-z 0-9 - . _ ~), the host canonical (IPv6 in brackets), ":PORT". With `redact`
 * the password is written as "****". Returns the length, or -ENOSPC when `size` is too small
 * (POLICY_UPSTREAM_URL_MAX is always enough). */
int policy_upstream_format(const policy_upstream *u, bool redact, char *buf, size_t size);

/* Wipes *u (the password with it): for copies on the stack once they are no longer needed. */
void policy_upstream_wipe(policy_upstream *u);
