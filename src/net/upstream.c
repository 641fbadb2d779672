/* SPDX-License-Identifier: Apache-2.0 */
/* Requests to, and answers from, an upstream proxy (see upstream.h). The answers are checked in
 * byte order, every length against what is in the buffer before it is used. */
#include "net/upstream.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "net/http.h"
#include "net/socks5.h"
#include "util/base64.h"

static int fail(upstream_answer *out, int r, int code, const char *why) {
        out->code = code;
        out->why = why;
        return r;
}

/* ---- HTTP CONNECT ----------------------------------------------------------------------- */

/* Basic credentials: base64("user:password") (RFC 7617 §2). The decoded user name has no ':'
 * (upstream-url.c refuses one), so the upstream splits the pair where we joined it. */
static ssize_t basic_field(const policy_upstream *u, char *out, size_t cap) {
        char pair[2 * POLICY_UPSTREAM_CRED_MAX + 2];
        char b64[((sizeof(pair) + 2) / 3) * 4 + 1];
        memcpy(pair, u->user, u->user_len);
        pair[u->user_len] = ':';
        memcpy(pair + u->user_len + 1, u->pass, u->pass_len);
        size_t n = u->user_len + 1 + u->pass_len;
        base64_encode_into(pair, n, b64);
        int w = snprintf(out, cap, "Proxy-Authorization: Basic %s\r\n", b64);
        explicit_bzero(pair, sizeof(pair));
        explicit_bzero(b64, sizeof(b64));
        return w < 0 || (size_t) w >= cap ? -ENOSPC : w;
}

ssize_t upstream_http_request(const policy_upstream *u, const net_host *h, uint16_t port,
                              char *out, size_t cap) {
        char authority[NET_HOST_INPUT_MAX + 16];
        (void) snprintf(authority, sizeof(authority),
                        h->kind == NET_HOST_IPV6 ? "[%s]:%u" : "%s:%u", h->text, (unsigned) port);
        int n = snprintf(out, cap, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n", authority, authority);
        size_t len = n < 0 ? cap : (size_t) n;
        if (len < cap && u->has_creds) {
                ssize_t k = basic_field(u, out + len, cap - len);
                len = k < 0 ? cap : len + (size_t) k;
        }
        /* A request that does not fit is not sent, and leaves nothing of the credentials. */
        if (len + 2 > cap) {
                if (cap > 0)
                        explicit_bzero(out, cap);
                return -ENOSPC;
        }
        memcpy(out + len, "\r\n", 2);
        return (ssize_t) (len + 2);
}

/* The head is read with the response parser the forward path uses, without a request method
 * (src/net/http-response.c): no 2xx is special there, framing is checked as for any response. A
 * 2xx to CONNECT has no body (RFC 9110 §9.3.6), so the tunnel starts right after the head. */
int upstream_http_answer(const char *buf, size_t len, upstream_answer *out) {
        *out = (upstream_answer){ 0 };
        /* Nothing past the bound is looked at, so a longer input decides as its prefix does. */
        if (len > UPSTREAM_ANSWER_MAX)
                len = UPSTREAM_ANSWER_MAX;
        size_t off = 0;
        for (;;) {
                http_resp r;
                int n = http_resp_parse(buf + off, len - off, NULL, &r);
                if (n == 0 && len == UPSTREAM_ANSWER_MAX)
                        return fail(out, -EPROTO, 0, "the upstream proxy's answer is too long");
                if (n == 0)
                        return 0;
                if (n < 0)
                        return fail(out, -EPROTO, 0,
                                    r.why ? r.why : "malformed answer from the upstream proxy");
                off += (size_t) n;
                if (r.interim) /* 100 Continue, 103 Early Hints: the final head follows */
                        continue;
                if (r.code / 100 != 2)
                        return fail(out, -ECONNREFUSED, r.code,
                                    "the upstream proxy refused the CONNECT");
                out->code = r.code;
                return (int) off;
        }
}

/* ---- SOCKS5 ----------------------------------------------------------------------------- */

size_t upstream_socks5_greeting(const policy_upstream *u, uint8_t out[4]) {
        out[0] = SOCKS5_VERSION;
        out[1] = u->has_creds ? 2 : 1;
        out[2] = SOCKS5_METHOD_NO_AUTH;
        out[3] = SOCKS5_METHOD_USERPASS;
        return u->has_creds ? 4 : 3;
}

int upstream_socks5_method(const void *buf, size_t len, const policy_upstream *u,
                           upstream_answer *out) {
        const uint8_t *p = buf;
        *out = (upstream_answer){ 0 };
        if (len < 1)
                return 0;
        if (p[0] != SOCKS5_VERSION)
                return fail(out, -EPROTO, p[0], "the upstream proxy does not speak SOCKS5");
        if (len < 2)
                return 0;
        if (p[1] == SOCKS5_METHOD_NONE_ACCEPTABLE)
                return fail(out, -ECONNREFUSED, p[1],
                            "the upstream proxy accepts none of the authentication methods "
                            "offered");
        /* A method we did not offer would be a conversation we cannot hold (GSSAPI), or skip
         * the credentials the operator configured. */
        if (p[1] != SOCKS5_METHOD_NO_AUTH && !(u->has_creds && p[1] == SOCKS5_METHOD_USERPASS))
                return fail(out, -EPROTO, p[1],
                            "the upstream proxy chose an authentication method not offered");
        out->code = p[1];
        return 2;
}

ssize_t upstream_socks5_auth_request(const policy_upstream *u, uint8_t *out, size_t cap) {
        if (!u->has_creds || u->user_len == 0 || u->pass_len == 0 ||
            u->user_len > SOCKS5_CRED_MAX || u->pass_len > SOCKS5_CRED_MAX)
                return -EINVAL;
        size_t n = 3 + u->user_len + u->pass_len;
        if (n > cap)
                return -ENOSPC;
        out[0] = SOCKS5_AUTH_VERSION;
        out[1] = (uint8_t) u->user_len;
        memcpy(out + 2, u->user, u->user_len);
        out[2 + u->user_len] = (uint8_t) u->pass_len;
        memcpy(out + 3 + u->user_len, u->pass, u->pass_len);
        return (ssize_t) n;
}

int upstream_socks5_auth_answer(const void *buf, size_t len, upstream_answer *out) {
        const uint8_t *p = buf;
        *out = (upstream_answer){ 0 };
        if (len < 1)
                return 0;
        if (p[0] != SOCKS5_AUTH_VERSION)
                return fail(out, -EPROTO, p[0],
                            "the upstream proxy does not answer username/password version 1");
        if (len < 2)
                return 0;
        if (p[1] != 0)
                return fail(out, -ECONNREFUSED, p[1],
                            "the upstream proxy rejected the credentials");
        return 2;
}

ssize_t upstream_socks5_request(const net_host *h, uint16_t port, uint8_t *out, size_t cap) {
        size_t n = 0, addr_len;
        uint8_t atyp;
        const void *addr;
        if (h->kind == NET_HOST_IPV4) {
                atyp = SOCKS5_ATYP_IPV4, addr = &h->v4, addr_len = 4;
        } else if (h->kind == NET_HOST_IPV6) {
                atyp = SOCKS5_ATYP_IPV6, addr = &h->v6, addr_len = 16;
        } else {
                atyp = SOCKS5_ATYP_DOMAIN, addr = h->text, addr_len = strlen(h->text);
                if (addr_len == 0 || addr_len > 255)
                        return -EINVAL;
        }
        if (6 + (atyp == SOCKS5_ATYP_DOMAIN) + addr_len > cap)
                return -ENOSPC;
        out[n++] = SOCKS5_VERSION;
        out[n++] = SOCKS5_CMD_CONNECT;
        out[n++] = 0;
        out[n++] = atyp;
        if (atyp == SOCKS5_ATYP_DOMAIN)
                out[n++] = (uint8_t) addr_len;
        memcpy(out + n, addr, addr_len);
        n += addr_len;
        out[n++] = (uint8_t) (port >> 8);
        out[n++] = (uint8_t) (port & 0xff);
        return (ssize_t) n;
}

static const char *reply_meaning(uint8_t rep) {
        static const char *const meaning[] = {
                [SOCKS5_REP_GENERAL_FAILURE] = "general SOCKS server failure",
                [SOCKS5_REP_NOT_ALLOWED] = "connection not allowed by its ruleset",
                [SOCKS5_REP_NETWORK_UNREACHABLE] = "network unreachable",
                [SOCKS5_REP_HOST_UNREACHABLE] = "host unreachable",
                [SOCKS5_REP_CONNECTION_REFUSED] = "connection refused",
                [SOCKS5_REP_TTL_EXPIRED] = "TTL expired",
                [SOCKS5_REP_COMMAND_NOT_SUPPORTED] = "command not supported",
                [SOCKS5_REP_ADDRESS_NOT_SUPPORTED] = "address type not supported",
        };
        return rep < sizeof(meaning) / sizeof(meaning[0]) && meaning[rep] ? meaning[rep]
                                                                          : "an unassigned reply";
}

int upstream_socks5_reply(const void *buf, size_t len, upstream_answer *out) {
        const uint8_t *p = buf;
        *out = (upstream_answer){ 0 };
        if (len < 1)
                return 0;
        if (p[0] != SOCKS5_VERSION)
                return fail(out, -EPROTO, p[0], "the upstream proxy does not speak SOCKS5");
        if (len < 2)
                return 0;
        if (p[1] != SOCKS5_REP_SUCCEEDED)
                return fail(out, -ECONNREFUSED, p[1], reply_meaning(p[1]));
        if (len < 3)
                return 0;
        if (p[2] != 0)
                return fail(out, -EPROTO, p[2],
                            "the upstream proxy's reply has a reserved byte set");
        if (len < 4)
                return 0;
        size_t addr_len;
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
                if (p[4] == 0)
                        return fail(out, -EPROTO, p[3],
                                    "the upstream proxy's reply has an empty bound address");
                addr_len = 1 + (size_t) p[4];
                break;
        default:
                return fail(out, -EPROTO, p[3],
                            "the upstream proxy's reply has an unknown address type");
        }
        size_t total = 4 + addr_len + 2;
        if (len < total)
                return 0;
        return (int) total;
}
