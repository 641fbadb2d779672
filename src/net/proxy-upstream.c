/* SPDX-License-Identifier: Apache-2.0 */
/* Through an upstream proxy (egressUpstream; docs/design/network.md, "Upstream proxies"). Where
 * the machine reaches the internet only through a parent proxy, every destination the rules
 * allowed (proxy-dial.c: deny list, allowlist, wildcard budget; the guard for an address) is
 * asked of that proxy instead of dialled: the connection goes to the upstream's address, the
 * upstream is sent "CONNECT host:port" or a SOCKS5 CONNECT for the name (upstream.c builds and
 * parses the messages), and once it answers that the tunnel is open the connection goes on
 * exactly as after a direct connect (proto_connected(): the CONNECT's 200 or the SOCKS5 reply
 * to the client, the fronting check, the splice; or the forwarded request). Nothing is ever
 * resolved or dialled directly while an upstream is set: the HTTP proxy's CONNECT and http://
 * requests, SOCKS5 and redirected connections all come through dial_start().
 *
 * The upstream resolves the names, so the resolved-address guard cannot see where they lead: it
 * still applies to a destination that is an address (proxy-dial.c judges it before this), and
 * what internal addresses the upstream reaches is the upstream's policy.
 *
 * An upstream that cannot be reached, refuses, rejects the credentials or answers nonsense is a
 * failed dial (502 / SOCKS5 reply 5 / a reset, with the reason in c->dial_why), never a
 * violation: the rules allowed the destination. The handshake has the dial's time limit. */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "net/proxy-internal.h"
#include "net/upstream.h"

typedef enum upstream_step {
        UP_HTTP_ANSWER,   /* the CONNECT was sent; its answer head */
        UP_SOCKS_METHOD,  /* the greeting was sent; the method selection */
        UP_SOCKS_AUTH,    /* the RFC 1929 request was sent; its status */
        UP_SOCKS_REPLY,   /* the CONNECT request was sent; its reply */
} upstream_step;

/* The upstream's host is resolved here, once, when the proxy starts, and never again: it is the
 * operator's, named in the policy (a widening to set or change, never from an untrusted
 * project file), and it is neither chosen by the command nor judged by the rules. Nor does the
 * guard apply to its addresses: a parent proxy is usually exactly what the guard refuses, on
 * loopback (a local cntlm or px) or on the internal network, and the command can never reach it
 * itself, only through the requests the rules allowed. Resolving once also means a command
 * cannot make the proxy look the name up again (a DNS channel), and that every connection goes
 * to the addresses the run started with. A failure is kept and answered per connection: nothing
 * then leaves, and the client is told why. */
void upstream_resolve(proxy *px) {
        const policy_upstream *u = px->cfg->upstream;
        px->n_up_addrs = 0;
        px->up_error = NULL;
        if (!u)
                return;
        unsigned char any[sizeof(struct in6_addr)];
        bool literal = u->host_ipv6 || inet_pton(AF_INET, u->host, any) == 1;
        struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                                  .ai_flags = AI_NUMERICSERV |
                                              (literal ? AI_NUMERICHOST : AI_ADDRCONFIG) };
        char port[8];
        (void) snprintf(port, sizeof(port), "%u", (unsigned) u->port);
        struct addrinfo *res = NULL;
        int r = getaddrinfo(u->host, port, &hints, &res);
        for (struct addrinfo *a = res; r == 0 && a && px->n_up_addrs < PROXY_MAX_ADDRS;
             a = a->ai_next)
                if ((a->ai_family == AF_INET || a->ai_family == AF_INET6) &&
                    a->ai_addrlen <= sizeof(px->up_addrs[0]))
                        memcpy(&px->up_addrs[px->n_up_addrs++], a->ai_addr, a->ai_addrlen);
        if (res)
                freeaddrinfo(res);
        if (px->n_up_addrs == 0)
                px->up_error = r ? gai_strerror(r) : "it has no IPv4 or IPv6 address";
}

/* Fails the dial with `err` (ECONNREFUSED: 502 / SOCKS5 reply 5 / a reset; ETIMEDOUT: 504 ...)
 * and the reason in c->dial_why. */
__attribute__((format(printf, 3, 4))) static void fail(conn *c, int err, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        (void) vsnprintf(c->dial_why, sizeof(c->dial_why), fmt, ap);
        va_end(ap);
        upstream_free(c);
        proto_dial_failed(c, err, false);
}

void upstream_dial(conn *c) {
        proxy *px = c->px;
        c->via_upstream = true;
        if (px->n_up_addrs == 0) {
                fail(c, EHOSTUNREACH, "cannot resolve the upstream proxy: %s", px->up_error);
                return;
        }
        memcpy(c->addrs, px->up_addrs, px->n_up_addrs * sizeof(px->up_addrs[0]));
        c->n_addrs = px->n_up_addrs;
        c->next_addr = 0;
        dial_connect(c);
}

void upstream_free(conn *c) {
        if (c->up_out.buf)
                explicit_bzero(c->up_out.buf, c->up_out.cap);
        outq_free(&c->up_out);
}

static void watch(conn *c) {
        uint32_t ev = EPOLLIN | EPOLLRDHUP;
        if (c->up_out.len > c->up_out.off)
                ev |= EPOLLOUT;
        if (conn_watch(c, &c->up, ev) < 0)
                conn_close(c);
}

/* Queues the next request (built into a stack buffer, which is wiped) and its step. */
static int send_request(conn *c, upstream_step next) {
        const policy_upstream *u = c->px->cfg->upstream;
        uint8_t buf[UPSTREAM_REQUEST_MAX];
        ssize_t n;
        switch (next) {
        case UP_HTTP_ANSWER:
                n = upstream_http_request(u, &c->host, c->port, (char *) buf, sizeof(buf));
                break;
        case UP_SOCKS_METHOD:
                n = (ssize_t) upstream_socks5_greeting(u, buf);
                break;
        case UP_SOCKS_AUTH:
                n = upstream_socks5_auth_request(u, buf, sizeof(buf));
                break;
        case UP_SOCKS_REPLY:
        default:
                n = upstream_socks5_request(&c->host, c->port, buf, sizeof(buf));
                break;
        }
        int r = n < 0 ? (int) n : outq_push(&c->up_out, buf, (size_t) n);
        explicit_bzero(buf, sizeof(buf));
        c->up_step = next;
        return r;
}

void upstream_connected(conn *c) {
        c->state = CS_UPSTREAM;
        conn_deadline(c, c->px->now + PROXY_DIAL_MS);
        c->uin_len = 0;
        /* Nothing is read from the client meanwhile: what it sends early waits in its socket
         * (or in c->in) for the tunnel, as during a direct dial. */
        (void) conn_watch(c, &c->cl, 0);
        bool http = c->px->cfg->upstream->kind == POLICY_UPSTREAM_HTTP;
        if (send_request(c, http ? UP_HTTP_ANSWER : UP_SOCKS_METHOD) < 0) {
                fail(c, ENOMEM, "out of memory");
                return;
        }
        watch(c);
}

/* The tunnel through the upstream is open: what follows the answer in c->uin is the
 * destination's (tunnel_or_inspect() sends it on first). */
static void opened(conn *c) {
        upstream_free(c);
        conn_deadline(c, 0);
        if (conn_watch(c, &c->up, 0) < 0) {
                conn_close(c);
                return;
        }
        proto_connected(c);
}

/* The upstream's status or code goes into the answer: the client (and whoever reads its error)
 * learns whether the upstream wants credentials (407), refuses the host (403, REP 2), or could
 * not reach it (502, REP 4). */
static void refused(conn *c, upstream_step step, int r, const upstream_answer *a) {
        if (r == -EPROTO)
                fail(c, ECONNREFUSED, "bad answer from the upstream proxy: %s", a->why);
        else if (step == UP_HTTP_ANSWER)
                fail(c, ECONNREFUSED, "%s: it answered %d", a->why, a->code);
        else if (step == UP_SOCKS_REPLY)
                fail(c, ECONNREFUSED, "the upstream proxy's SOCKS5 reply is %d: %s", a->code,
                     a->why);
        else
                fail(c, ECONNREFUSED, "%s (SOCKS5 code %d)", a->why, a->code);
}

static int parse(conn *c, upstream_answer *a) {
        const policy_upstream *u = c->px->cfg->upstream;
        switch ((upstream_step) c->up_step) {
        case UP_HTTP_ANSWER:
                return upstream_http_answer(c->uin, c->uin_len, a);
        case UP_SOCKS_METHOD:
                return upstream_socks5_method(c->uin, c->uin_len, u, a);
        case UP_SOCKS_AUTH:
                return upstream_socks5_auth_answer(c->uin, c->uin_len, a);
        case UP_SOCKS_REPLY:
        default:
                return upstream_socks5_reply(c->uin, c->uin_len, a);
        }
}

/* Moves through the answers received so far. */
static void advance(conn *c) {
        upstream_answer a;
        int r = parse(c, &a);
        if (r == 0)
                return;
        if (r < 0) {
                refused(c, (upstream_step) c->up_step, r, &a);
                return;
        }
        memmove(c->uin, c->uin + r, c->uin_len - (size_t) r);
        c->uin_len -= (size_t) r;
        if (c->up_step == UP_HTTP_ANSWER || c->up_step == UP_SOCKS_REPLY) {
                opened(c);
                return;
        }
        /* Between two steps the upstream has nothing more to say: bytes here would be taken
         * for the next answer. */
        if (c->uin_len > 0) {
                a.why = "it sent more than its answer";
                refused(c, UP_SOCKS_METHOD, -EPROTO, &a);
                return;
        }
        bool auth = c->up_step == UP_SOCKS_METHOD && a.code == SOCKS5_METHOD_USERPASS;
        if (send_request(c, auth ? UP_SOCKS_AUTH : UP_SOCKS_REPLY) < 0) {
                fail(c, ENOMEM, "out of memory");
                return;
        }
        watch(c);
}

/* Reads what the upstream sent into c->uin, at most UPSTREAM_ANSWER_MAX bytes in all. */
static ssize_t read_answer(conn *c) {
        if (c->uin_cap < UPSTREAM_ANSWER_MAX) {
                char *nb = realloc(c->uin, UPSTREAM_ANSWER_MAX);
                if (!nb)
                        return -ENOMEM;
                c->uin = nb;
                c->uin_cap = UPSTREAM_ANSWER_MAX;
        }
        if (c->uin_len >= UPSTREAM_ANSWER_MAX)
                return -ENOBUFS; /* the parsers decide before: not reached */
        ssize_t n;
        do
                n = recv(c->up.fd, c->uin + c->uin_len, UPSTREAM_ANSWER_MAX - c->uin_len, 0);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return -errno;
        c->uin_len += (size_t) n;
        return n;
}

void upstream_on_event(conn *c, uint32_t events) {
        if (events & EPOLLOUT) {
                int r = outq_flush(&c->up_out, c->up.fd);
                if (r < 0) {
                        fail(c, -r, "cannot send to the upstream proxy: %s", strerror(-r));
                        return;
                }
        }
        if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) {
                ssize_t n = read_answer(c);
                if (n == 0) {
                        fail(c, ECONNREFUSED, "the upstream proxy closed the connection");
                        return;
                }
                if (n < 0 && n != -EAGAIN) {
                        fail(c, (int) -n, "the upstream proxy: %s", strerror((int) -n));
                        return;
                }
                if (n > 0) {
                        advance(c);
                        if (c->dead || c->state != CS_UPSTREAM)
                                return;
                }
        }
        watch(c);
}
