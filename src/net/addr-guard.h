/* SPDX-License-Identifier: Apache-2.0 */
/* The resolved-address guard (docs/design/network.md, docs/design/network.md): an allowed *name* is
 * resolved once by the proxy, and each address is judged here before it is dialled. Without it, any
 * allowed wildcard whose DNS an attacker controls (or a hosts entry, or DNS rebinding) would reach
 * the host's loopback services, the cloud metadata endpoint or the machine's own interfaces. The
 * proxy dials the very address it checked: no second lookup.
 *
 * Pure except net_local_addrs_load(), which reads the host's interface addresses once. */
#pragma once

#include <netinet/in.h>
#include <stdint.h>
#include <sys/socket.h>

#include "net/egress.h"
#include "util/host.h"

/* The host's own interface addresses (the proxy's network namespace, i.e. the real host). */
typedef struct net_local_addrs {
        struct in_addr *v4;
        size_t n_v4;
        struct in6_addr *v6;
        size_t n_v6;
} net_local_addrs;

/* Adds the address of `sa` (AF_INET or AF_INET6; other families are ignored, returning 0).
 * Returns 0 or -ENOMEM. */
int net_local_addrs_add(net_local_addrs *a, const struct sockaddr *sa);
/* Fills *a (which must be zeroed) from getifaddrs(3). Interface addresses change (DHCP, VPNs):
 * a long-lived proxy reloads them. Returns 0 or -errno; on failure *a is left empty. */
int net_local_addrs_load(net_local_addrs *a);
/* Frees the arrays and zeroes *a. NULL-safe. */
void net_local_addrs_free(net_local_addrs *a);

typedef enum net_addr_class {
        NET_ADDR_PUBLIC = 0, /* may be dialled */
        NET_ADDR_LOOPBACK,   /* 127.0.0.0/8, ::1 (and their IPv4-mapped forms) */
        NET_ADDR_LOCAL,      /* link-local, unspecified, multicast, broadcast, reserved, own */
        NET_ADDR_METADATA,   /* a cloud metadata or credential endpoint: never dialled */
} net_addr_class;

/* Classifies an AF_INET/AF_INET6 address (sa must point to a whole sockaddr_in or sockaddr_in6;
 * other families are NET_ADDR_LOCAL, "not an IP address"). IPv4-mapped addresses are judged as
 * their IPv4 address; IPv4-compatible, NAT64 (64:ff9b::/96, 64:ff9b:1::/48) and 6to4 (2002::/16)
 * addresses by the IPv4 address they embed. Returns NULL for NET_ADDR_PUBLIC, else a static
 * reason ("loopback", "link-local", "unspecified", "multicast", "broadcast", "cloud metadata",
 * "this host's own address", ...). `own` may be NULL. `ret_class` may be NULL. */
const char *net_addr_classify(const struct sockaddr *sa, const net_local_addrs *own,
                              net_addr_class *ret_class);

/* net_addr_classify() without the class: NULL when the address may be dialled. */
const char *net_addr_local_reason(const struct sockaddr *sa, const net_local_addrs *own);

/* The policy on top of the guard, for a destination `h` (as the client named it, canonical),
 * `port`, and one address it resolved to. NULL = dial it; else a static reason. In order:
 *  - an address named by a deny-list address entry (also through an embedding IPv6 form) is
 *    refused;
 *  - a cloud metadata address is refused, whatever the allowlist says;
 *  - a loopback address is allowed when h is "localhost" or a name under ".localhost";
 *  - any other local address is allowed only when an address entry of the allowlist names it
 *    with this port, or without a port ("127.0.0.1:3000", "[::1]"), also when h is a name mapped
 *    to it: the same name on another local port stays refused;
 *  - everything else local is refused with the guard's reason. */
const char *egress_check_address(const egress_rules *r, const net_host *h, uint16_t port,
                                 const struct sockaddr *resolved, const net_local_addrs *own);
