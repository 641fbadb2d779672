/* SPDX-License-Identifier: Apache-2.0 */
/* The landlock backend's network rule in the supervisor (see supervisor.h: supervisor_landlock).
 *
 * There is no network namespace: Landlock's LANDLOCK_ACCESS_NET_CONNECT_TCP rule lets the
 * command connect to the proxy's two ports, but on any address, and a server the command's
 * author controls can listen on those port numbers too. So connect() is notified (the address
 * lives in memory), copied once by op_connect (supervisor-unix.c), checked here, and performed by
 * the supervisor on its duplicate of the caller's socket, to the address that was checked. The
 * supervisor runs under the monitor's Landlock layer, whose TCP rule is the same: this check
 * narrows it to 127.0.0.1, it can never widen it. */
#include "linux/supervisor-internal.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>

static const char rule_proxy_only[] =
        "the landlock backend connects only to the run's egress proxy on 127.0.0.1 (there is no "
        "network namespace: clients must use HTTP_PROXY/ALL_PROXY)";

static bool proxy_port(const supervisor_landlock *l, uint16_t port) {
        for (size_t i = 0; i < ELEMENTSOF(l->proxy_ports); i++)
                if (l->proxy_ports[i] != 0 && l->proxy_ports[i] == port)
                        return true;
        return false;
}

/* 127.0.0.1:port, or ::ffff:127.0.0.1:port (a dual-stack socket reaches the same listener). The
 * proxy listens on 127.0.0.1 only; ::1 is another address, where something else may listen. */
static bool is_proxy(const supervisor_landlock *l, const struct sockaddr *sa, socklen_t len,
                     char *target, size_t size) {
        char ip[INET6_ADDRSTRLEN] = "?";
        uint16_t port = 0;
        bool loop = false;
        if (sa->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
                const struct sockaddr_in *s4 = (const struct sockaddr_in *) sa;
                port = ntohs(s4->sin_port);
                loop = s4->sin_addr.s_addr == htonl(INADDR_LOOPBACK);
                (void) inet_ntop(AF_INET, &s4->sin_addr, ip, sizeof(ip));
        } else if (sa->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
                const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *) sa;
                static const unsigned char mapped[16] = { [10] = 0xff, [11] = 0xff, 127, 0, 0, 1 };
                port = ntohs(s6->sin6_port);
                loop = memcmp(&s6->sin6_addr, mapped, sizeof(mapped)) == 0;
                (void) inet_ntop(AF_INET6, &s6->sin6_addr, ip, sizeof(ip));
        }
        (void) snprintf(target, size, sa->sa_family == AF_INET6 ? "[%s]:%u" : "%s:%u", ip, port);
        return loop && proxy_port(l, port);
}

int supervisor_landlock_check_connect(request *r, const struct sockaddr *addr, socklen_t len) {
        const supervisor_landlock *l = r->s->landlock;
        if (!l)
                return 0;
        if ((size_t) len < sizeof(addr->sa_family))
                return 0; /* the kernel answers EINVAL: nothing is reached */
        /* AF_UNSPEC dissolves an association; the stacked socket filter leaves no other family
         * that could leave the host (netlink is routing only, and a connect there names a
         * kernel or process port id, never a host). */
        if (addr->sa_family != AF_INET && addr->sa_family != AF_INET6)
                return 0;
        char target[INET6_ADDRSTRLEN + 16];
        if (is_proxy(l, addr, len, target, sizeof(target)))
                return 0;
        supervisor_report_refusal(r->s, &(supervisor_report) { .action = "network-outbound",
                                                              .syscall = "connect",
                                                              .target = target,
                                                              .rule = rule_proxy_only,
                                                              .sid = request_sid(r) },
                                  "connect", rule_proxy_only);
        return -EACCES;
}
