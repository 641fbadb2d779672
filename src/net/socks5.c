/* SPDX-License-Identifier: Apache-2.0 */
/* SOCKS5 server-side parsing (RFC 1928, RFC 1929). Every length byte is checked against what is
 * in the buffer before anything is read, and every check runs in byte order, so a prefix of a
 * valid message is never refused and a fault is reported at the same byte whatever the split. */
#include "net/socks5.h"

#include <errno.h>
#include <netinet/in.h>
#include <string.h>

static int greeting_refuse(socks5_greeting *out, int r, const char *why) {
        out->method = SOCKS5_METHOD_NONE_ACCEPTABLE;
        out->why = why;
        return r;
}

int socks5_greeting_parse(const void *buf, size_t len, bool require_auth, socks5_greeting *out) {
        const uint8_t *p = buf;
        *out = (socks5_greeting){ .method = SOCKS5_METHOD_NONE_ACCEPTABLE };
        if (len < 1)
                return 0;
        /* SOCKS4 has no authentication at all: a 0x04 first byte must not reach the request
         * parser as if it had passed the method negotiation. */
        if (p[0] != SOCKS5_VERSION)
                return greeting_refuse(out, -EPROTO, "not SOCKS version 5");
        if (len < 2)
                return 0;
        size_t n = p[1];
        if (n == 0)
                return greeting_refuse(out, -EPROTO, "no authentication method offered");
        if (len < 2 + n)
                return 0;
        uint8_t want = require_auth ? SOCKS5_METHOD_USERPASS : SOCKS5_METHOD_NO_AUTH;
        bool offered = false;
        for (size_t i = 0; i < n; i++)
                offered |= p[2 + i] == want;
        /* Never fall back to "no authentication" when credentials are required: the per-session
         * credential is what keeps every other local process off this proxy. */
        if (!offered)
                return greeting_refuse(out, -EACCES, "no acceptable authentication method");
        out->method = want;
        return (int) (2 + n);
}

size_t socks5_method_reply(uint8_t out[2], uint8_t method) {
        out[0] = SOCKS5_VERSION;
        out[1] = method;
        return 2;
}

static int auth_refuse(socks5_auth *out, const char *why) {
        out->user = out->pass = NULL;
        out->user_len = out->pass_len = 0;
        out->why = why;
        return -EPROTO;
}

int socks5_auth_parse(const void *buf, size_t len, socks5_auth *out) {
        const uint8_t *p = buf;
        *out = (socks5_auth){ 0 };
        if (len < 1)
                return 0;
        if (p[0] != SOCKS5_AUTH_VERSION)
                return auth_refuse(out, "not username/password version 1");
        if (len < 2)
                return 0;
        size_t ulen = p[1];
        if (ulen == 0)
                return auth_refuse(out, "empty user name");
        size_t plen_at = 2 + ulen;
        if (len < plen_at + 1)
                return 0;
        size_t plen = p[plen_at];
        if (plen == 0)
                return auth_refuse(out, "empty password");
        if (len < plen_at + 1 + plen)
                return 0;
        out->user = p + 2;
        out->user_len = ulen;
        out->pass = p + plen_at + 1;
        out->pass_len = plen;
        return (int) (plen_at + 1 + plen);
}

size_t socks5_auth_reply(uint8_t out[2], bool ok) {
        out[0] = SOCKS5_AUTH_VERSION;
        out[1] = ok ? 0x00 : 0x01;
        return 2;
}

/* Non-zero when a[0..alen) differs from b[0..blen). The loop always runs SOCKS5_CRED_MAX times
 * and accumulates every difference, so the time does not reveal the first differing byte. */
static unsigned secret_diff(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen) {
        if (alen > SOCKS5_CRED_MAX || blen > SOCKS5_CRED_MAX)
                return 1;
        unsigned d = (unsigned) (alen ^ blen);
        for (size_t i = 0; i < SOCKS5_CRED_MAX; i++) {
                uint8_t x = i < alen ? a[i] : 0;
                uint8_t y = i < blen ? b[i] : 0;
                d |= (unsigned) (x ^ y);
        }
        return d;
}

bool socks5_creds_equal(const void *user, size_t user_len, const void *pass, size_t pass_len,
                        const char *want_user, const char *want_pass) {
        if (!want_user || !want_pass || (!user && user_len) || (!pass && pass_len))
                return false;
        /* Both halves are compared even when the first already differs ('|', not '||'). */
        unsigned d = secret_diff(user, user_len, (const uint8_t *) want_user, strlen(want_user)) |
                     secret_diff(pass, pass_len, (const uint8_t *) want_pass, strlen(want_pass));
        return d == 0;
}

static int request_refuse(socks5_request *out, int r, uint8_t reply, const char *why) {
        out->reply = reply;
        out->why = why;
        out->domain = NULL;
        out->domain_len = 0;
        return r;
}

/* The address part after ATYP (at offset 4). Returns the total message length, 0, or < 0. */
static int request_address(const uint8_t *p, size_t len, socks5_request *out) {
        size_t addr_len, addr_at = 4;
        switch (p[3]) {
        case SOCKS5_ATYP_IPV4:
                addr_len = 4;
                break;
        case SOCKS5_ATYP_IPV6:
                addr_len = 16;
                break;
        case SOCKS5_ATYP_DOMAIN:
                if (len < 5)
                        return 0;
                addr_len = p[4];
                addr_at = 5;
                if (addr_len == 0)
                        return request_refuse(out, -EPROTO, SOCKS5_REP_GENERAL_FAILURE,
                                              "empty domain name");
                break;
        default:
                return request_refuse(out, -EAFNOSUPPORT, SOCKS5_REP_ADDRESS_NOT_SUPPORTED,
                                      "unknown address type");
        }
        size_t total = addr_at + addr_len + 2;
        if (len < total)
                return 0;
        out->atyp = p[3];
        if (out->atyp == SOCKS5_ATYP_DOMAIN) {
                out->domain = p + addr_at;
                out->domain_len = addr_len;
        } else
                memcpy(out->addr, p + addr_at, addr_len);
        out->port = (uint16_t) (p[total - 2] << 8 | p[total - 1]);
        if (out->port == 0)
                return request_refuse(out, -EINVAL, SOCKS5_REP_NOT_ALLOWED, "port 0");
        return (int) total;
}

int socks5_request_parse(const void *buf, size_t len, socks5_request *out) {
        const uint8_t *p = buf;
        *out = (socks5_request){ 0 };
        if (len < 1)
                return 0;
        if (p[0] != SOCKS5_VERSION)
                return request_refuse(out, -EPROTO, SOCKS5_REP_GENERAL_FAILURE,
                                      "not SOCKS version 5");
        if (len < 2)
                return 0;
        /* BIND and UDP ASSOCIATE would open listening sockets or a UDP relay past the proxy's
         * TCP-only allowlist: only CONNECT is served. */
        if (p[1] != SOCKS5_CMD_CONNECT)
                return request_refuse(out, -ENOTSUP, SOCKS5_REP_COMMAND_NOT_SUPPORTED,
                                      p[1] == SOCKS5_CMD_BIND || p[1] == SOCKS5_CMD_UDP_ASSOCIATE
                                              ? "command not supported (CONNECT only)"
                                              : "unknown command");
        if (len < 3)
                return 0;
        if (p[2] != 0)
                return request_refuse(out, -EPROTO, SOCKS5_REP_GENERAL_FAILURE,
                                      "reserved byte is not 0");
        if (len < 4)
                return 0;
        return request_address(p, len, out);
}

int socks5_request_reply(uint8_t out[SOCKS5_REPLY_MAX], uint8_t rep, const struct sockaddr *bound) {
        out[0] = SOCKS5_VERSION;
        out[1] = rep;
        out[2] = 0;
        if (!bound || bound->sa_family == AF_INET) {
                struct sockaddr_in sin = { 0 };
                if (bound)
                        memcpy(&sin, bound, sizeof(sin));
                out[3] = SOCKS5_ATYP_IPV4;
                memcpy(out + 4, &sin.sin_addr, 4);
                memcpy(out + 8, &sin.sin_port, 2); /* both already in network byte order */
                return 10;
        }
        if (bound->sa_family == AF_INET6) {
                struct sockaddr_in6 sin6;
                memcpy(&sin6, bound, sizeof(sin6));
                out[3] = SOCKS5_ATYP_IPV6;
                memcpy(out + 4, &sin6.sin6_addr, 16);
                memcpy(out + 20, &sin6.sin6_port, 2);
                return 22;
        }
        return -EAFNOSUPPORT;
}
