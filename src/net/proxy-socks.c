/* SPDX-License-Identifier: Apache-2.0 */
/* The SOCKS5 side of the proxy: greeting → (username/password) → CONNECT request → the same
 * decision and dial as HTTP (proxy-dial.c) → a tunnel. Parsing is src/net/socks5.c's; this file
 * only moves through the states and answers. A refusal answers REP 0x02 ("connection not allowed
 * by ruleset") and closes. */
#include "net/proxy-internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <unistd.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>

/* Sends a last message and closes once it is written (conn_finish()). */
static void answer_and_close(conn *c, const void *msg, size_t len) {
        if (outq_push(&c->to_client, msg, len) < 0) {
                conn_close(c);
                return;
        }
        conn_finish(c);
}

static void reply_and_close(conn *c, uint8_t rep) {
        uint8_t out[SOCKS5_REPLY_MAX];
        int n = socks5_request_reply(out, rep, NULL);
        if (n < 0) {
                conn_close(c);
                return;
        }
        answer_and_close(c, out, (size_t) n);
}

static int send_now(conn *c, const void *msg, size_t len) {
        int r = outq_push(&c->to_client, msg, len);
        if (r >= 0)
                r = outq_flush(&c->to_client, c->cl.fd);
        /* The first replies are tiny: a socket that cannot take them is a broken client. */
        return r == 1 ? 0 : -EIO;
}

static int on_greeting(conn *c) {
        socks5_greeting g;
        int n = socks5_greeting_parse(c->in, c->in_len, c->px->cfg->require_auth, &g);
        if (n <= 0) {
                if (n < 0) {
                        uint8_t out[2];
                        answer_and_close(c, out,
                                         socks5_method_reply(out, SOCKS5_METHOD_NONE_ACCEPTABLE));
                }
                return n;
        }
        conn_consume_in(c, (size_t) n);
        uint8_t out[2];
        if (send_now(c, out, socks5_method_reply(out, g.method)) < 0)
                return -EIO;
        c->state = g.method == SOCKS5_METHOD_USERPASS ? CS_SOCKS_AUTH : CS_SOCKS_REQUEST;
        return 1;
}

static int on_auth(conn *c) {
        socks5_auth a;
        int n = socks5_auth_parse(c->in, c->in_len, &a);
        if (n == 0)
                return 0;
        uint8_t out[2];
        const proxy_config *cfg = c->px->cfg;
        bool ok = n > 0 && socks5_creds_equal(a.user, a.user_len, a.pass, a.pass_len, cfg->user,
                                              cfg->pass);
        if (!ok) {
                answer_and_close(c, out, socks5_auth_reply(out, false));
                return -EACCES;
        }
        conn_consume_in(c, (size_t) n);
        if (send_now(c, out, socks5_auth_reply(out, true)) < 0)
                return -EIO;
        c->state = CS_SOCKS_REQUEST;
        return 1;
}

static void request_host(const socks5_request *rq, char *buf, size_t *len) {
        const void *src = rq->domain;
        *len = rq->domain_len;
        if (rq->atyp == SOCKS5_ATYP_IPV4 || rq->atyp == SOCKS5_ATYP_IPV6) {
                int fam = rq->atyp == SOCKS5_ATYP_IPV4 ? AF_INET : AF_INET6;
                (void) inet_ntop(fam, rq->addr, buf, INET6_ADDRSTRLEN);
                *len = strlen(buf);
                return;
        }
        memcpy(buf, src, *len);
}

static int on_request(conn *c) {
        socks5_request rq;
        int n = socks5_request_parse(c->in, c->in_len, &rq);
        if (n <= 0) {
                if (n < 0)
                        reply_and_close(c, rq.reply);
                return n;
        }
        char host[256 + INET6_ADDRSTRLEN];
        size_t len;
        request_host(&rq, host, &len);
        net_host h;
        const char *why = NULL;
        /* The name goes to the canonicaliser with its length: a NUL or control byte inside
         * ("allowed.com\0.evil.com") is refused there, never cut short. */
        if (net_host_canon(host, len, &h, &why) < 0) {
                net_host shown = { .kind = NET_HOST_NAME };
                (void) snprintf(shown.text, sizeof(shown.text), "(invalid host name)");
                conn_set_target(c, &shown, rq.port);
                char rule[128];
                (void) snprintf(rule, sizeof(rule), "invalid host name: %s", why ? why : "?");
                conn_report(c, "socks5", rule);
                reply_and_close(c, SOCKS5_REP_NOT_ALLOWED);
                return -EINVAL;
        }
        conn_consume_in(c, (size_t) n);
        conn_set_target(c, &h, rq.port);
        dial_start(c);
        return -EINPROGRESS;
}

void socks_on_client(conn *c, uint32_t events) {
        ssize_t r = conn_read_client(c, 1024);
        if (r == 0 || (r < 0 && r != -EAGAIN)) {
                conn_close(c);
                return;
        }
        int st = 1;
        while (st > 0 && !c->dead) {
                if (c->state == CS_SOCKS_GREETING)
                        st = on_greeting(c);
                else if (c->state == CS_SOCKS_AUTH)
                        st = on_auth(c);
                else if (c->state == CS_SOCKS_REQUEST)
                        st = on_request(c);
                else
                        st = 0;
        }
        if (st == -EIO)
                conn_close(c);
}

void socks_connected(conn *c) {
        struct sockaddr_storage bound;
        socklen_t len = sizeof(bound);
        uint8_t out[SOCKS5_REPLY_MAX];
        int n = getsockname(c->up.fd, (struct sockaddr *) &bound, &len) == 0
                        ? socks5_request_reply(out, SOCKS5_REP_SUCCEEDED,
                                               (struct sockaddr *) &bound)
                        : socks5_request_reply(out, SOCKS5_REP_SUCCEEDED, NULL);
        if (n < 0 || outq_push(&c->to_client, out, (size_t) n) < 0)
                conn_close(c);
        else
                tunnel_or_inspect(c);
}

void socks_refused(conn *c, const char *rule) {
        (void) rule;
        reply_and_close(c, SOCKS5_REP_NOT_ALLOWED);
}

void socks_dial_failed(conn *c, int err, bool resolve_failed) {
        uint8_t rep = resolve_failed          ? SOCKS5_REP_HOST_UNREACHABLE
                      : err == ECONNREFUSED   ? SOCKS5_REP_CONNECTION_REFUSED
                      : err == ENETUNREACH    ? SOCKS5_REP_NETWORK_UNREACHABLE
                      : err == ETIMEDOUT      ? SOCKS5_REP_TTL_EXPIRED
                                              : SOCKS5_REP_HOST_UNREACHABLE;
        if (c->up.fd >= 0) {
                (void) conn_watch(c, &c->up, 0);
                (void) close(c->up.fd);
                c->up.fd = -1;
        }
        reply_and_close(c, rep);
}
