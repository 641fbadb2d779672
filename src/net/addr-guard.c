/* SPDX-License-Identifier: Apache-2.0 */
/* The resolved-address guard and the address policy on top of it (addr-guard.h). */
#include "net/addr-guard.h"

#include <arpa/inet.h>
#include <ifaddrs.h>

/* ---- the host's own addresses --------------------------------------------------------------- */

int net_local_addrs_add(net_local_addrs *a, const struct sockaddr *sa) {
        if (!sa)
                return 0;
        if (sa->sa_family == AF_INET) {
                struct in_addr *v = reallocarray(a->v4, a->n_v4 + 1, sizeof(*v));
                if (!v)
                        return -ENOMEM;
                a->v4 = v;
                v[a->n_v4++] = ((const struct sockaddr_in *) sa)->sin_addr;
        } else if (sa->sa_family == AF_INET6) {
                struct in6_addr *v = reallocarray(a->v6, a->n_v6 + 1, sizeof(*v));
                if (!v)
                        return -ENOMEM;
                a->v6 = v;
                v[a->n_v6++] = ((const struct sockaddr_in6 *) sa)->sin6_addr;
        }
        return 0;
}

void net_local_addrs_free(net_local_addrs *a) {
        if (!a)
                return;
        free(a->v4);
        free(a->v6);
        memset(a, 0, sizeof(*a));
}

/* getifaddrs(3) as -errno. glibc reads the addresses over a netlink socket it opens with
 * SOCK_CLOEXEC and closes before returning. */
static int getifaddrs_checked(struct ifaddrs **ret) {
        if (getifaddrs(ret) < 0)
                return -errno;
        return 0;
}

static void freeifaddrsp(struct ifaddrs **p) {
        if (*p)
                freeifaddrs(*p);
}

int net_local_addrs_load(net_local_addrs *a) {
        _cleanup_(freeifaddrsp) struct ifaddrs *list = NULL;
        int r = getifaddrs_checked(&list);
        if (r < 0)
                return r;
        for (struct ifaddrs *i = list; i; i = i->ifa_next) {
                r = net_local_addrs_add(a, i->ifa_addr);
                if (r < 0) {
                        net_local_addrs_free(a);
                        return r;
                }
        }
        return 0;
}

/* ---- classification ------------------------------------------------------------------------- */

#define V4(a, b, c, d) ((uint32_t) (a) << 24 | (uint32_t) (b) << 16 | (uint32_t) (c) << 8 | (d))

static bool own_v4(const net_local_addrs *own, uint32_t a) {
        for (size_t i = 0; own && i < own->n_v4; i++)
                if (ntohl(own->v4[i].s_addr) == a)
                        return true;
        return false;
}

static bool own_v6(const net_local_addrs *own, const struct in6_addr *a) {
        for (size_t i = 0; own && i < own->n_v6; i++)
                if (memcmp(&own->v6[i], a, sizeof(*a)) == 0)
                        return true;
        return false;
}

static const char *set_class(net_addr_class *ret, net_addr_class c, const char *why) {
        *ret = c;
        return why;
}

/* `a` in host byte order. */
static const char *judge_v4(uint32_t a, const net_local_addrs *own, net_addr_class *cls) {
        /* Endpoints that hand out instance credentials to whoever asks from the machine: the
         * most valuable target of a confined command (SSRF to IMDS). */
        static const uint32_t metadata[] = {
                V4(169, 254, 169, 254), /* AWS, GCP, Azure, OCI, OpenStack instance metadata */
                V4(169, 254, 170, 2),   /* AWS ECS task metadata and credentials */
                V4(169, 254, 170, 23),  /* AWS EKS Pod Identity agent */
                V4(100, 100, 100, 200), /* Alibaba Cloud ECS metadata */
                V4(168, 63, 129, 16),   /* Azure WireServer */
                V4(192, 0, 0, 192),     /* Oracle Cloud (legacy) metadata */
        };
        for (size_t i = 0; i < ELEMENTSOF(metadata); i++)
                if (a == metadata[i])
                        return set_class(cls, NET_ADDR_METADATA, "cloud metadata");
        /* 0.0.0.0/8: Linux connects 0.0.0.0 to the local host. */
        if (a >> 24 == 0)
                return set_class(cls, NET_ADDR_LOCAL, "unspecified");
        if (a >> 24 == 127)
                return set_class(cls, NET_ADDR_LOOPBACK, "loopback");
        if (a >> 16 == V4(169, 254, 0, 0) >> 16)
                return set_class(cls, NET_ADDR_LOCAL, "link-local");
        if (a >> 28 == 0xe)
                return set_class(cls, NET_ADDR_LOCAL, "multicast");
        if (a == UINT32_MAX)
                return set_class(cls, NET_ADDR_LOCAL, "broadcast");
        if (a >> 28 == 0xf)
                return set_class(cls, NET_ADDR_LOCAL, "reserved (240.0.0.0/4)");
        /* Services bound to 0.0.0.0 on the host answer on every interface address. */
        if (own_v4(own, a))
                return set_class(cls, NET_ADDR_LOCAL, "this host's own address");
        return set_class(cls, NET_ADDR_PUBLIC, NULL);
}

static const char *judge_v6(const struct in6_addr *a, const net_local_addrs *own,
                            net_addr_class *cls) {
        const uint8_t *b = a->s6_addr;
        struct in_addr embedded[2];
        /* fd00:ec2::/32: AWS instance metadata (fd00:ec2::254) and EKS Pod Identity
         * (fd00:ec2::23) over IPv6. */
        if (b[0] == 0xfd && b[1] == 0x00 && b[2] == 0x0e && b[3] == 0xc2)
                return set_class(cls, NET_ADDR_METADATA, "cloud metadata");
        if (IN6_IS_ADDR_UNSPECIFIED(a))
                return set_class(cls, NET_ADDR_LOCAL, "unspecified");
        if (IN6_IS_ADDR_LOOPBACK(a))
                return set_class(cls, NET_ADDR_LOOPBACK, "loopback");
        /* ::ffff:a.b.c.d is a.b.c.d on the wire. */
        if (IN6_IS_ADDR_V4MAPPED(a))
                return judge_v4((uint32_t) b[12] << 24 | (uint32_t) b[13] << 16 |
                                        (uint32_t) b[14] << 8 | b[15],
                                own, cls);
        /* A translator (NAT64, 6to4 relay) forwards these to the IPv4 address inside: judge
         * that address, or 64:ff9b::a9fe:a9fe would reach the metadata endpoint. */
        size_t n = net_v6_embedded_v4(a, embedded);
        for (size_t i = 0; i < n; i++) {
                net_addr_class c;
                if (!judge_v4(ntohl(embedded[i].s_addr), own, &c))
                        continue;
                if (c == NET_ADDR_METADATA)
                        return set_class(cls, NET_ADDR_METADATA, "cloud metadata");
                return set_class(cls, NET_ADDR_LOCAL,
                                 "NAT64, 6to4 or IPv4-compatible address embedding a local "
                                 "IPv4 address");
        }
        if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80)
                return set_class(cls, NET_ADDR_LOCAL, "link-local");
        if (b[0] == 0xff)
                return set_class(cls, NET_ADDR_LOCAL, "multicast");
        if (own_v6(own, a))
                return set_class(cls, NET_ADDR_LOCAL, "this host's own address");
        return set_class(cls, NET_ADDR_PUBLIC, NULL);
}

const char *net_addr_classify(const struct sockaddr *sa, const net_local_addrs *own,
                              net_addr_class *ret_class) {
        net_addr_class scratch;
        net_addr_class *cls = ret_class ? ret_class : &scratch;
        if (sa && sa->sa_family == AF_INET)
                return judge_v4(ntohl(((const struct sockaddr_in *) sa)->sin_addr.s_addr), own,
                                cls);
        if (sa && sa->sa_family == AF_INET6)
                return judge_v6(&((const struct sockaddr_in6 *) sa)->sin6_addr, own, cls);
        return set_class(cls, NET_ADDR_LOCAL, "not an IP address");
}

const char *net_addr_local_reason(const struct sockaddr *sa, const net_local_addrs *own) {
        return net_addr_classify(sa, own, NULL);
}

/* ---- the policy on top ---------------------------------------------------------------------- */

/* A deny-list address entry names `addr`, or the IPv4 address an IPv6 form of it embeds (a deny
 * of 169.254.169.254 also refuses 64:ff9b::a9fe:a9fe). */
static bool deny_listed(const egress_rules *r, const net_host *addr, uint16_t port) {
        struct in_addr embedded[2];
        if (egress_addr_listed(r, true, addr, port))
                return true;
        if (addr->kind != NET_HOST_IPV6)
                return false;
        size_t n = net_v6_embedded_v4(&addr->v6, embedded);
        for (size_t i = 0; i < n; i++) {
                struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr = embedded[i] };
                net_host v4;
                if (net_host_from_sockaddr((const struct sockaddr *) &sin, &v4) == 0 &&
                    egress_addr_listed(r, true, &v4, port))
                        return true;
        }
        return false;
}

const char *egress_check_address(const egress_rules *r, const net_host *h, uint16_t port,
                                 const struct sockaddr *resolved, const net_local_addrs *own) {
        net_host addr;
        net_addr_class cls;
        if (!r || !h || port == 0 || net_host_from_sockaddr(resolved, &addr) < 0)
                return "invalid destination";
        if (deny_listed(r, &addr, port))
                return "address on the deny list";
        const char *why = net_addr_classify(resolved, own, &cls);
        if (!why)
                return NULL;
        /* No allow entry opens the metadata endpoint: it hands out the host's cloud
         * credentials, and a user allowing "169.254.169.254" is far more likely a mistake or an
         * injected policy than a need. */
        if (cls == NET_ADDR_METADATA)
                return why;
        /* localhost names resolve to loopback by definition (RFC 6761 §6.3); the allowlist
         * already decided which ports of them are open. */
        if (cls == NET_ADDR_LOOPBACK && net_host_is_localhost(h))
                return NULL;
        /* An explicit address entry ("127.0.0.1:3000") opens exactly that address and port,
         * whichever allowed name leads there; the same name on another local port does not
         * match it and stays refused. */
        if (egress_addr_listed(r, false, &addr, port))
                return NULL;
        return why;
}
