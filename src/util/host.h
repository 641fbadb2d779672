/* SPDX-License-Identifier: Apache-2.0 */
/* Host canonicalisation for the egress proxy (docs/design/network.md): turns the host a client sent
 * (HTTP Host/authority, SOCKS5 domain or address) into exactly one canonical form before any rule
 * sees it, so that no two spellings of one destination can be judged differently. Pure: no sockets,
 * no resolver, no allocation. In util, below policy, because egress patterns are canonicalised with
 * it too (src/policy/egress-pattern.c): a pattern and a client's host meet in one spelling. */
#pragma once

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define NET_HOST_NAME_MAX 253   /* bytes in a DNS name without its trailing dot (RFC 1035) */
#define NET_HOST_LABEL_MAX 63   /* bytes in one label */
#define NET_HOST_INPUT_MAX 255  /* longest input considered at all (a name, its dot, brackets) */

typedef enum net_host_kind {
        NET_HOST_NAME,
        NET_HOST_IPV4,
        NET_HOST_IPV6,
} net_host_kind;

typedef struct net_host {
        net_host_kind kind;
        /* Canonical text: a lower-case name without the trailing dot, a dotted quad, or an IPv6
         * address in RFC 5952 form without brackets. Always NUL-terminated. */
        char text[256];
        struct in_addr v4;  /* kind == NET_HOST_IPV4 (network byte order) */
        struct in6_addr v6; /* kind == NET_HOST_IPV6 */
} net_host;

/* Canonicalises s[0..len) (not NUL-terminated; a SOCKS5 domain may contain NUL bytes, which are
 * refused). Accepts a host name (letters, digits, '-', '_', '.'; labels of 1..63 bytes; at most
 * 253 bytes; one trailing dot ignored; upper case folded), an IPv4 address in any inet_aton form
 * ("127.1", "2130706433", "0x7f.1", "017700000001" all become 127.0.0.1), or an IPv6 address with
 * or without brackets (zone ids refused; an IPv4-mapped address ::ffff:a.b.c.d becomes the IPv4
 * address). A name whose last label is numeric ("1.2.3.999", "a.0x10") is an IPv4 attempt: it is
 * refused unless it parses as one, never matched as a name.
 * Returns 0, or -EINVAL with *why set to a static phrase ("contains a NUL byte"). `why` may be
 * NULL. On failure *out is zeroed. */
int net_host_canon(const char *s, size_t len, net_host *out, const char **why);

/* Parses the HTTP authority form "host:port" or "[v6]:port" (RFC 9110 §7.2; no userinfo). An
 * IPv6 address must be bracketed here. Without a ":port" part, *ret_port is default_port, and a
 * default_port of 0 makes the port mandatory (CONNECT). Ports are 1..65535, decimal, at most five
 * digits. Returns 0 or -EINVAL with *why as for net_host_canon(). */
int net_host_parse_hostport(const char *s, size_t len, uint16_t default_port, net_host *out,
                            uint16_t *ret_port, const char **why);

/* Splits "host", "host:port", "[v6]", "[v6]:port" and, when allow_bare_v6, a bare IPv6 address
 * ("fd00:ec2::254": two or more ':' and no brackets mean no port) into the host part (brackets
 * kept) and a port (0 when absent). Does not validate the host part. Returns 0 or -EINVAL. */
int net_hostport_split(const char *s, size_t len, bool allow_bare_v6, size_t *ret_host_len,
                       uint16_t *ret_port, const char **why);

/* The canonical host of a resolved address (AF_INET or AF_INET6; IPv4-mapped becomes IPv4).
 * Returns 0, or -EAFNOSUPPORT for other families. */
int net_host_from_sockaddr(const struct sockaddr *sa, net_host *out);

/* The IPv4 address an IPv6 address embeds, for the forms that reach that IPv4 host or a
 * translator in front of it: IPv4-mapped ::ffff:0:0/96, IPv4-translated ::ffff:0:0:0/96,
 * IPv4-compatible ::/96, NAT64 64:ff9b::/96 and 6to4 2002::/16. For the local-use NAT64 prefix
 * 64:ff9b:1::/48 (RFC 8215) the /96 reading is returned, and also the /64 reading when it is
 * possible (bytes 13-15 zero), n = 2. Returns the number written to ret (0, 1 or 2). */
size_t net_v6_embedded_v4(const struct in6_addr *a, struct in_addr ret[2]);

/* True for the name "localhost" and names under ".localhost" (RFC 6761 §6.3). */
bool net_host_is_localhost(const net_host *h);
