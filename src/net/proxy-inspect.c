/* SPDX-License-Identifier: Apache-2.0 */
/* The first bytes of every tunnel to a name (docs/design/network.md, "Fronting"): a CONNECT or
 * SOCKS5 request for a name, or a redirected connection whose synthetic address maps to one.
 * The rules judged that name; the bytes the client then sends, when they are a TLS ClientHello
 * or an HTTP/1 request head, must ask the server for that same name (net/peek-name.h), or a
 * client could reach an allowed name's server — a CDN serving thousands of names — and ask it
 * for any other ("domain fronting"). Until a verdict, the client's bytes are read into c->in (at
 * most PEEK_MAX; tunnel_start() sends them on first) and the answer already queued for it (the
 * CONNECT's 200, the SOCKS5 reply) is flushed. A server that speaks first (SSH's banner, SMTP,
 * MySQL) means a protocol that is neither TLS nor HTTP: the tunnel starts at its first byte.
 * A tunnel to an address has no name to compare and starts at once. A refusal resets the
 * connection: its client was already told the tunnel is open. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>

#include "net/peek-name.h"
#include "net/proxy-internal.h"

static void refuse(conn *c, const char *rule);

static void start(conn *c) {
        /* A ruled host's tunnel is judged request by request, which needs its TLS: anything
         * else to it (plain HTTP, another protocol, a server speaking first) would pass
         * unjudged. */
        if (tls_wanted(c)) {
                refuse(c, git_wanted(c) && !req_rules_ruled(c->px->cfg->req_rules, &c->host,
                                                            c->port)
                                  ? "gitPush: a tunnel to a git host must carry TLS (its pushes "
                                    "are judged)"
                                  : "request rules: a tunnel to a host with egressRules must "
                                    "carry TLS (its requests are judged); tls.passthrough lets "
                                    "it through unjudged");
                return;
        }
        if (tunnel_start(c) < 0)
                conn_close(c);
}

static void refuse(conn *c, const char *rule) {
        conn_report(c, conn_proto_name(c), rule);
        conn_reset(c);
}

/* Judges what the client has sent so far; false while there is no verdict. */
static bool judge(conn *c) {
        if (c->in_len == 0)
                return false;
        net_host asked;
        char rule[340];
        switch (peek_name((const uint8_t *) c->in, c->in_len, &asked)) {
        case PEEK_MORE:
                if (c->in_len < PEEK_MAX)
                        return false;
                refuse(c, "a TLS ClientHello or HTTP request head too large to read");
                return true;
        case PEEK_NONE:
                start(c);
                return true;
        case PEEK_NAME:
                if (strcmp(asked.text, c->host.text) == 0) {
                        if (tls_wanted(c) && (uint8_t) c->in[0] == 0x16)
                                tls_start(c);
                        else
                                start(c);
                        return true;
                }
                (void) snprintf(rule, sizeof(rule),
                                "asks for %s (TLS server name or HTTP Host), not the name it "
                                "connected to",
                                asked.text);
                refuse(c, rule);
                return true;
        case PEEK_INVALID:
        default:
                refuse(c, "a TLS ClientHello or HTTP request head that names no single valid "
                          "host");
                return true;
        }
}

static void watch(conn *c) {
        uint32_t cl = EPOLLIN | EPOLLRDHUP;
        if (c->to_client.len > c->to_client.off)
                cl |= EPOLLOUT;
        if (conn_watch(c, &c->cl, cl) < 0 || conn_watch(c, &c->up, EPOLLIN | EPOLLRDHUP) < 0)
                conn_close(c);
}

void tunnel_or_inspect(conn *c) {
        /* The destination spoke first, and its bytes came with the upstream proxy's answer
         * (proxy-upstream.c): they go after the answer, and, as when a server speaks first
         * here, the tunnel starts. */
        if (c->uin_len > 0) {
                if (outq_push(&c->to_client, c->uin, c->uin_len) < 0) {
                        conn_close(c);
                        return;
                }
                c->uin_len = 0;
                start(c);
                return;
        }
        if (c->host.kind != NET_HOST_NAME) {
                start(c);
                return;
        }
        c->state = CS_INSPECT;
        conn_deadline(c, c->px->now + PROXY_HANDSHAKE_MS);
        if (outq_flush(&c->to_client, c->cl.fd) < 0) {
                conn_close(c);
                return;
        }
        if (!judge(c)) /* bytes sent early, right after a CONNECT head, may decide at once */
                watch(c);
}

void inspect_on_event(conn *c, endpoint *e, uint32_t events) {
        if (e->kind == EP_UPSTREAM) {
                start(c); /* the server spoke (or hung up) first */
                return;
        }
        if ((events & EPOLLOUT) && outq_flush(&c->to_client, c->cl.fd) < 0) {
                conn_close(c);
                return;
        }
        if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) {
                ssize_t n = conn_read_client(c, PEEK_MAX);
                if (n == 0 || (n < 0 && n != -EAGAIN && n != -ENOBUFS)) {
                        conn_close(c);
                        return;
                }
                if (judge(c))
                        return;
        }
        watch(c);
}
