/* SPDX-License-Identifier: Apache-2.0 */
/* Connections the kernel redirected to the proxy (src/linux/intercept.h): a client that knows
 * nothing of proxies connected to some address, and the sandbox's NAT rule sent it here. The
 * destination it asked for is read back from the connection's NAT record (SO_ORIGINAL_DST), a
 * synthetic address (net/name-map.h) is turned back into the name the sandbox's resolver gave it
 * for, and from there the connection is judged, resolved and dialled exactly as a CONNECT
 * request (proxy-dial.c), then spliced. Nothing is read from the client before the verdict:
 * whatever it sent waits in the socket for the tunnel. A connection made by name is looked at
 * once more, after the dial, as every tunnel to a name is (proxy-inspect.c).
 *
 * A refusal cannot be an answer here (the client speaks no proxy protocol, and the TCP handshake
 * is already done): the connection is reset, which a client reports at once as "connection
 * reset by peer", and the violation event says which rule refused it. */
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net/name-map.h"
#include "net/proxy-internal.h"

/* The getsockopt names of <linux/netfilter_ipv4.h> and <linux/netfilter_ipv6/ip6_tables.h>
 * (ABI: never change), which cannot be included beside <netinet/in.h>. */
#define SO_ORIGINAL_DST 80
#define IP6T_SO_ORIGINAL_DST 80

/* Where the client meant to go. ENOENT: the connection was not redirected (a client inside
 * that connected to the transparent port itself). */
static int original_destination(int fd, struct sockaddr_storage *ss) {
        socklen_t len = sizeof(*ss);
        memset(ss, 0, sizeof(*ss));
        if (getsockopt(fd, SOL_IP, SO_ORIGINAL_DST, ss, &len) == 0)
                return 0;
        len = sizeof(*ss);
        if (getsockopt(fd, SOL_IPV6, IP6T_SO_ORIGINAL_DST, ss, &len) == 0)
                return 0;
        return -errno;
}

/* The host to judge: the name behind a synthetic address, else the address itself. */
static const char *target_host(conn *c, const struct sockaddr_storage *ss, net_host *h) {
        if (ss->ss_family == AF_INET) {
                struct in_addr a = ((const struct sockaddr_in *) ss)->sin_addr;
                if (name_map_is_synthetic(a)) {
                        const char *name = name_map_name(c->px->names, a);
                        if (!name)
                                return "an address the sandbox's resolver never gave out";
                        return net_host_canon(name, strlen(name), h, NULL) < 0
                                       ? "invalid destination" : NULL;
                }
        }
        return net_host_from_sockaddr((const struct sockaddr *) ss, h) < 0 ? "invalid destination"
                                                                           : NULL;
}

void transparent_start(conn *c) {
        struct sockaddr_storage ss;
        if (original_destination(c->cl.fd, &ss) < 0) {
                conn_reset(c);
                return;
        }
        uint16_t port = ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *) &ss)->sin_port
                                                      : ((struct sockaddr_in6 *) &ss)->sin6_port);
        net_host h = { 0 };
        const char *why = target_host(c, &ss, &h);
        if (why) {
                /* The report names the address as the client used it. */
                if (net_host_from_sockaddr((struct sockaddr *) &ss, &h) == 0)
                        conn_set_target(c, &h, port);
                conn_report(c, "tcp", why);
                conn_reset(c);
                return;
        }
        conn_set_target(c, &h, port);
        c->state = CS_CONNECTING;
        conn_deadline(c, c->px->now + PROXY_DIAL_MS);
        (void) conn_watch(c, &c->cl, 0); /* its bytes wait in the socket for the tunnel */
        dial_start(c);
}

void transparent_connected(conn *c) {
        tunnel_or_inspect(c);
}

void transparent_refused(conn *c, const char *rule) {
        (void) rule;
        conn_reset(c);
}

void transparent_dial_failed(conn *c, int err, bool resolve_failed) {
        (void) err;
        (void) resolve_failed;
        conn_reset(c);
}
