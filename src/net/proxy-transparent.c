/* SPDX-License-Identifier: Apache-2.0 */
/* Connections the kernel redirected to the proxy (src/linux/intercept.h): a client that knows
 * nothing of proxies connected to some address, and the sandbox's NAT rule sent it here. The
 * destination it asked for is read back from the connection's NAT record (SO_ORIGINAL_DST), a
 * synthetic address (net/name-map.h) is turned back into the name the sandbox's resolver gave it
 * for, and from there the connection is judged, resolved and dialled exactly as a CONNECT
 * request (proxy-dial.c), then spliced. Nothing is read from the client before the verdict:
 * whatever it sent waits in the socket for the tunnel. A connection made by name is looked at
 * once more, after the dial: its first bytes, when they are a TLS ClientHello or an HTTP
 * request, must ask for that same name (net/peek-name.h), or a client could reach an allowed
 * name's server (a CDN) and ask it for another.
 *
 * A refusal cannot be an answer here (the client speaks no proxy protocol, and the TCP handshake
 * is already done): the connection is reset, which a client reports at once as "connection
 * reset by peer", and the violation event says which rule refused it. */
#include <errno.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net/name-map.h"
#include "net/peek-name.h"
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

/* An RST, not a FIN: the client must not take the refusal for an empty answer. */
static void reset(conn *c) {
        struct linger l = { .l_onoff = 1, .l_linger = 0 };
        (void) setsockopt(c->cl.fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
        conn_close(c);
}

/* The host to judge: the name behind a synthetic address, else the address itself. */
static const char *target_host(conn *c, const struct sockaddr_storage *ss, net_host *h) {
        if (ss->ss_family == AF_INET) {
                struct in_addr a = ((const struct sockaddr_in *) ss)->sin_addr;
                if (name_map_is_synthetic(a)) {
                        const char *name = name_map_name(c->px->names, a);
                        if (!name)
                                return "an address the sandbox's resolver never gave out";
                        c->by_name = true;
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
                reset(c);
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
                reset(c);
                return;
        }
        conn_set_target(c, &h, port);
        c->state = CS_CONNECTING;
        c->deadline = c->px->now + PROXY_DIAL_MS;
        (void) conn_watch(c, &c->cl, 0); /* its bytes wait in the socket for the tunnel */
        dial_start(c);
}

static void start_tunnel(conn *c) {
        if (tunnel_start(c) < 0)
                conn_close(c);
}

void transparent_connected(conn *c) {
        if (!c->by_name) {
                start_tunnel(c);
                return;
        }
        /* Client-first protocols (TLS, HTTP) say what they want in their first bytes; a server
         * that speaks first (SSH's banner, SMTP, MySQL) means neither, and the tunnel starts. */
        c->state = CS_INSPECT;
        c->deadline = c->px->now + PROXY_HANDSHAKE_MS;
        if (conn_watch(c, &c->cl, EPOLLIN | EPOLLRDHUP) < 0 ||
            conn_watch(c, &c->up, EPOLLIN | EPOLLRDHUP) < 0)
                conn_close(c);
}

static void refuse_fronting(conn *c, const char *rule) {
        conn_report(c, "tcp", rule);
        reset(c);
}

void transparent_on_inspect(conn *c, endpoint *e) {
        if (e->kind == EP_UPSTREAM) {
                start_tunnel(c); /* what the client sent so far goes first (tunnel_start) */
                return;
        }
        ssize_t n = conn_read_client(c, PEEK_MAX);
        if (n == -EAGAIN)
                return;
        if (n == -ENOBUFS) { /* full, and still no verdict (peek_name stops at PEEK_MAX) */
                refuse_fronting(c, "a TLS ClientHello or HTTP request head too large to read");
                return;
        }
        if (n <= 0) {
                conn_close(c);
                return;
        }
        net_host asked;
        switch (peek_name((const uint8_t *) c->in, c->in_len, &asked)) {
        case PEEK_MORE:
                if (c->in_len >= PEEK_MAX)
                        refuse_fronting(c, "a TLS ClientHello or HTTP request head too large to "
                                           "read");
                return;
        case PEEK_NONE:
                start_tunnel(c);
                return;
        case PEEK_NAME:
                if (strcmp(asked.text, c->host.text) == 0) {
                        start_tunnel(c);
                        return;
                }
                char rule[340];
                (void) snprintf(rule, sizeof(rule),
                                "asks for %s (TLS server name or HTTP Host), not the name it "
                                "resolved",
                                asked.text);
                refuse_fronting(c, rule);
                return;
        case PEEK_INVALID:
        default:
                refuse_fronting(c, "a TLS ClientHello or HTTP request head that names no single "
                                   "valid host");
                return;
        }
}

void transparent_refused(conn *c, const char *rule) {
        (void) rule;
        reset(c);
}

void transparent_dial_failed(conn *c, int err, bool resolve_failed) {
        (void) err;
        (void) resolve_failed;
        reset(c);
}
