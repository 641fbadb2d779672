/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target for the upstream proxy client (src/net/upstream.c): the parsers of what an upstream
 * proxy answers, and the requests sent to it. The first byte picks the answer ('h' the CONNECT
 * answer head, 'm' / 'n' the SOCKS5 method selection with / without credentials, 'a' the RFC 1929
 * status, 'r' the SOCKS5 reply; any other byte: all of them), the rest is the answer. Oracles
 * beyond "no crash, no sanitizer report":
 *   - consumed <= len; -ECONNREFUSED or -EPROTO only, each with a reason, success without one;
 *     success within the protocol's bounds (a 2xx, a method offered, a reply's exact length);
 *   - incremental == one-shot: every prefix, in a buffer of exactly its size, gives 0 before the
 *     verdict and the same verdict (code and reason) from it on;
 *   - the requests built for a host and credentials taken from the input are read back by the
 *     proxy's own strict server-side parsers (src/net/http.c, socks5.c) as exactly that host,
 *     port and credentials: what the upstream is asked for is what the rules allowed.
 * Built like fuzz-socks5: with libFuzzer (-DCORDON_LIBFUZZER), and as a plain program replaying
 * the seed corpus in the unit suite: "ok-*" seeds open the tunnel (or pass the step), "bad-*"
 * seeds are refused, "short-*" seeds end before any verdict. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/http.h"
#include "net/socks5.h"
#include "net/upstream.h"

#include "replay.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

__attribute__((noreturn)) static void broken(const char *what) {
        fprintf(stderr, "fuzz-upstream: broken promise: %s\n", what);
        abort();
}

#define CHECK(cond)                                                                               \
        do {                                                                                      \
                if (!(cond))                                                                      \
                        broken(#cond);                                                            \
        } while (0)

typedef enum step { HTTP_ANSWER, METHOD_CREDS, METHOD_NONE, AUTH_ANSWER, REPLY, _STEP_MAX } step;

static policy_upstream with_creds = { .kind = POLICY_UPSTREAM_SOCKS5, .has_creds = true };
static policy_upstream no_creds = { .kind = POLICY_UPSTREAM_SOCKS5 };

static int parse(step s, const uint8_t *buf, size_t len, upstream_answer *a) {
        switch (s) {
        case HTTP_ANSWER:
                return upstream_http_answer((const char *) buf, len, a);
        case METHOD_CREDS:
                return upstream_socks5_method(buf, len, &with_creds, a);
        case METHOD_NONE:
                return upstream_socks5_method(buf, len, &no_creds, a);
        case AUTH_ANSWER:
                return upstream_socks5_auth_answer(buf, len, a);
        case REPLY:
        case _STEP_MAX:
        default:
                return upstream_socks5_reply(buf, len, a);
        }
}

static void check_result(step s, const uint8_t *buf, size_t len, int r, const upstream_answer *a) {
        CHECK(r <= (int) len);
        CHECK(r == 0 || r > 0 || r == -ECONNREFUSED || r == -EPROTO);
        CHECK((r < 0) == (a->why != NULL));
        if (r <= 0)
                return;
        switch (s) {
        case HTTP_ANSWER:
                CHECK(a->code >= 200 && a->code <= 299 && r >= 16);
                CHECK(buf[r - 1] == '\n' && buf[r - 2] == '\r');
                break;
        case METHOD_CREDS:
                CHECK(r == 2 && (a->code == 0 || a->code == 2));
                break;
        case METHOD_NONE:
                CHECK(r == 2 && a->code == 0);
                break;
        case AUTH_ANSWER:
                CHECK(r == 2 && buf[1] == 0);
                break;
        case REPLY:
        case _STEP_MAX:
        default:
                CHECK(buf[1] == 0 && (r == 10 || r == 22 || (buf[3] == 3 && r == 7 + buf[4])));
                break;
        }
}

/* Parses the whole input and every prefix, each from a buffer of exactly its size. */
static int parse_checked(step s, const uint8_t *data, size_t len) {
        uint8_t *whole = malloc(len ? len : 1);
        if (!whole)
                broken("out of memory");
        memcpy(whole, data, len);
        upstream_answer want;
        int r = parse(s, whole, len, &want);
        check_result(s, whole, len, r, &want);
        free(whole);
        /* Answers past a few hundred bytes are HTTP heads: their prefixes are sampled. */
        size_t step_by = len > 1024 ? len / 512 : 1;
        bool decided = false;
        for (size_t p = 0;; p = p + step_by > len ? len : p + step_by) {
                uint8_t *b = malloc(p ? p : 1);
                if (!b)
                        broken("out of memory");
                memcpy(b, data, p);
                upstream_answer got;
                int g = parse(s, b, p, &got);
                free(b);
                if (g == 0)
                        CHECK(!decided);
                else if (g != r || got.code != want.code || got.why != want.why)
                        broken("a prefix reached another verdict than the whole input");
                decided |= g != 0;
                if (p == len)
                        break;
        }
        return r;
}

/* ---- the requests ------------------------------------------------------------------------- */

/* Credentials as the URL parser leaves them: 1..255 bytes, no control byte, no ':' in the user. */
static void creds_from(const uint8_t *d, size_t n, policy_upstream *u) {
        size_t ulen = n > 0 ? 1 + d[0] % 40 : 1, plen = n > 1 ? 1 + d[1] % 40 : 1;
        for (size_t i = 0; i < ulen; i++) {
                uint8_t c = 2 + i < n ? d[2 + i] : 'u';
                u->user[i] = (char) (c < 0x20 || c == 0x7f || c == ':' ? 'u' : c);
        }
        for (size_t i = 0; i < plen; i++) {
                uint8_t c = 2 + ulen + i < n ? d[2 + ulen + i] : 'p';
                u->pass[i] = (char) (c < 0x20 || c == 0x7f ? 'p' : c);
        }
        u->user[ulen] = u->pass[plen] = '\0';
        u->user_len = ulen;
        u->pass_len = plen;
        u->has_creds = true;
}

static void check_requests(const uint8_t *data, size_t len) {
        size_t hl = 0;
        while (hl < len && hl < 64 && data[hl] != '\n')
                hl++;
        net_host h;
        if (net_host_canon((const char *) data, hl, &h, NULL) < 0)
                return;
        uint16_t port = len > hl + 2 ? (uint16_t) (data[hl + 1] << 8 | data[hl + 2]) : 443;
        if (port == 0)
                port = 1;
        policy_upstream u = { .kind = POLICY_UPSTREAM_HTTP };
        creds_from(data + hl, len - hl, &u);

        char out[UPSTREAM_REQUEST_MAX];
        ssize_t n = upstream_http_request(&u, &h, port, out, sizeof(out));
        CHECK(n > 0);
        static http_req rq;
        CHECK(http_req_parse(out, (size_t) n, &rq) == n && rq.kind == HTTP_KIND_CONNECT);
        net_host back;
        CHECK(net_host_canon(rq.host, strlen(rq.host), &back, NULL) == 0);
        CHECK(back.kind == h.kind && strcmp(back.text, h.text) == 0 && rq.port == port);
        CHECK(rq.has_credentials && http_req_creds_equal(&rq, u.user, u.pass));

        uint8_t b[UPSTREAM_REQUEST_MAX];
        n = upstream_socks5_request(&h, port, b, sizeof(b));
        socks5_request sq;
        CHECK(n > 0 && socks5_request_parse(b, (size_t) n, &sq) == n && sq.port == port);
        if (h.kind == NET_HOST_NAME)
                CHECK(sq.atyp == SOCKS5_ATYP_DOMAIN && sq.domain_len == strlen(h.text) &&
                      memcmp(sq.domain, h.text, sq.domain_len) == 0);
        else
                CHECK(sq.atyp == (h.kind == NET_HOST_IPV4 ? SOCKS5_ATYP_IPV4 : SOCKS5_ATYP_IPV6) &&
                      memcmp(sq.addr, h.kind == NET_HOST_IPV4 ? (const void *) &h.v4
                                                               : (const void *) &h.v6,
                             h.kind == NET_HOST_IPV4 ? 4 : 16) == 0);
        n = upstream_socks5_auth_request(&u, b, sizeof(b));
        socks5_auth sa;
        CHECK(n > 0 && socks5_auth_parse(b, (size_t) n, &sa) == n &&
              socks5_creds_equal(sa.user, sa.user_len, sa.pass, sa.pass_len, u.user, u.pass));
        socks5_greeting g;
        CHECK(socks5_greeting_parse(b, upstream_socks5_greeting(&u, b), true, &g) == 4);
}

static int run(const uint8_t *data, size_t size) {
        if (size == 0)
                return 0;
        static const char picks[_STEP_MAX] = { 'h', 'm', 'n', 'a', 'r' };
        int verdict = 0;
        bool picked = false;
        for (int s = 0; s < _STEP_MAX; s++)
                if (data[0] == picks[s]) {
                        verdict = parse_checked((step) s, data + 1, size - 1);
                        picked = true;
                }
        for (int s = 0; !picked && s < _STEP_MAX; s++)
                (void) parse_checked((step) s, data + 1, size - 1);
        check_requests(data + 1, size - 1);
        return verdict;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        /* Past the answer bound nothing changes; keep the prefix checks affordable. */
        if (size > UPSTREAM_ANSWER_MAX + 64)
                size = UPSTREAM_ANSWER_MAX + 64;
        (void) run(data, size);
        return 0;
}

#ifndef CORDON_LIBFUZZER
/* The seed's name states the verdict of its answer. */
bool fuzz_replay_seed(const char *name, const uint8_t *buf, size_t len) {
        int r = run(buf, len);
        if (strncmp(name, "ok-", 3) == 0)
                return r > 0;
        if (strncmp(name, "bad-", 4) == 0)
                return r < 0;
        if (strncmp(name, "short-", 6) == 0)
                return r == 0;
        return true;
}
#endif
