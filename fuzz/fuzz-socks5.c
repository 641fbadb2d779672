/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target for the SOCKS5 server-side parser (src/net/socks5.c). The input is what a client
 * sends on a fresh connection; it is run through the server's conversation twice, once requiring
 * username/password (greeting → auth → request) and once accepting no authentication (greeting →
 * request). Oracles beyond "no crash, no sanitizer report":
 *   - consumed ≤ len; results inside their documented ranges (method, reply code, lengths,
 *     pointers into the buffer, port ≠ 0);
 *   - incremental == one-shot: every prefix, in a buffer of exactly its size, gives 0 before the
 *     verdict and the same verdict from it on;
 *   - socks5_creds_equal() agrees with a plain comparison;
 *   - every reply builder writes what it says.
 * Built like fuzz-policy: with libFuzzer (-DCORDON_LIBFUZZER), and as a plain program replaying
 * the seed corpus in the unit suite: "ok-*" seeds complete a conversation, "bad-*" seeds are
 * refused in both, "short-*" seeds end before any verdict. */
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/socks5.h"
#include "util/util.h"

#include "replay.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

__attribute__((noreturn)) static void broken(const char *what) {
        fprintf(stderr, "fuzz-socks5: broken promise: %s\n", what);
        abort();
}

#define CHECK(cond)                                                                               \
        do {                                                                                      \
                if (!(cond))                                                                      \
                        broken(#cond);                                                            \
        } while (0)

static const char want_user[] = "cordon", want_pass[] = "s3cret";

typedef enum step { GREETING_AUTH, GREETING_NOAUTH, AUTH, REQUEST } step;

/* One parse, reduced to comparable numbers (pointers as offsets from buf). */
typedef struct result {
        int r;
        uint8_t method, reply, atyp;
        const char *why;
        size_t a_off, a_len, b_off, b_len;
        uint16_t port;
} result;

static result parse(step s, const uint8_t *buf, size_t len) {
        result o = { 0 };
        socks5_greeting g;
        socks5_auth a;
        socks5_request q;
        switch (s) {
        case GREETING_AUTH:
        case GREETING_NOAUTH:
                o.r = socks5_greeting_parse(buf, len, s == GREETING_AUTH, &g);
                o.method = g.method;
                o.why = g.why;
                CHECK(o.r <= 0 || g.method == (s == GREETING_AUTH ? 2 : 0));
                CHECK(o.r >= 0 || g.method == SOCKS5_METHOD_NONE_ACCEPTABLE);
                break;
        case AUTH:
                o.r = socks5_auth_parse(buf, len, &a);
                o.why = a.why;
                if (o.r > 0) {
                        CHECK(a.user > buf && a.pass > a.user && a.user_len >= 1 &&
                              a.pass_len >= 1 && (size_t) (a.pass - buf) + a.pass_len == (size_t) o.r);
                        o.a_off = (size_t) (a.user - buf);
                        o.a_len = a.user_len;
                        o.b_off = (size_t) (a.pass - buf);
                        o.b_len = a.pass_len;
                }
                break;
        case REQUEST:
                o.r = socks5_request_parse(buf, len, &q);
                o.why = q.why;
                o.reply = q.reply;
                o.atyp = q.atyp;
                o.port = q.port;
                if (q.domain) {
                        CHECK(o.r > 0 && q.atyp == SOCKS5_ATYP_DOMAIN && q.domain_len >= 1 &&
                              (size_t) (q.domain - buf) + q.domain_len + 2 == (size_t) o.r);
                        o.a_off = (size_t) (q.domain - buf);
                        o.a_len = q.domain_len;
                }
                CHECK(o.r <= 0 || (q.port != 0 && (q.atyp == SOCKS5_ATYP_DOMAIN) == !!q.domain));
                CHECK(o.r >= 0 || (q.reply >= 1 && q.reply <= 8 && !q.domain));
                break;
        default:
                broken("step");
        }
        CHECK(o.r <= (int) len);
        CHECK((o.r < 0) == (o.why != NULL));
        return o;
}

static bool same(result a, result b) {
        return a.r == b.r && a.method == b.method && a.reply == b.reply && a.atyp == b.atyp &&
               a.why == b.why && a.a_off == b.a_off && a.a_len == b.a_len && a.b_off == b.b_off &&
               a.b_len == b.b_len && a.port == b.port;
}

/* Parses buf whole and every prefix (each from a buffer of exactly its size). */
static result parse_checked(step s, const uint8_t *data, size_t len) {
        uint8_t *whole = malloc(len ? len : 1);
        if (!whole)
                broken("out of memory");
        memcpy(whole, data, len);
        result want = parse(s, whole, len);
        free(whole);
        bool decided = false;
        /* No message is longer than 2 + 255 + 1 + 255 bytes: later prefixes change nothing. */
        size_t lim = len < 600 ? len : 600;
        for (size_t p = 0; p <= lim; p++) {
                uint8_t *b = malloc(p ? p : 1);
                if (!b)
                        broken("out of memory");
                memcpy(b, data, p);
                result got = parse(s, b, p);
                free(b);
                if (got.r == 0) {
                        CHECK(!decided);
                        continue;
                }
                decided = true;
                if (!same(got, want))
                        broken("a prefix reached another verdict than the whole input");
        }
        return want;
}

static void check_creds(const uint8_t *u, size_t ul, const uint8_t *p, size_t pl) {
        bool plain = ul == strlen(want_user) && memcmp(u, want_user, ul) == 0 &&
                     pl == strlen(want_pass) && memcmp(p, want_pass, pl) == 0;
        CHECK(socks5_creds_equal(u, ul, p, pl, want_user, want_pass) == plain);
        /* Against itself (as a C string where it has no NUL). */
        char self_u[SOCKS5_CRED_MAX + 1], self_p[SOCKS5_CRED_MAX + 1];
        memcpy(self_u, u, ul);
        self_u[ul] = '\0';
        memcpy(self_p, p, pl);
        self_p[pl] = '\0';
        bool no_nul = strlen(self_u) == ul && strlen(self_p) == pl;
        CHECK(socks5_creds_equal(u, ul, p, pl, self_u, self_p) == no_nul);
}

static void check_replies(uint8_t method, uint8_t rep) {
        uint8_t out[SOCKS5_REPLY_MAX];
        CHECK(socks5_method_reply(out, method) == 2 && out[0] == 5 && out[1] == method);
        CHECK(socks5_auth_reply(out, rep & 1) == 2 && out[0] == 1 && out[1] == !(rep & 1));
        struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6, .sin6_port = htons(rep) };
        CHECK(socks5_request_reply(out, rep, (struct sockaddr *) &sin6) == 22 && out[1] == rep &&
              out[3] == 4 && out[21] == rep);
        CHECK(socks5_request_reply(out, rep, NULL) == 10 && out[3] == 1);
}

/* The whole conversation; returns 1 when it completes, -1 when refused, 0 when cut short. */
static int conversation(const uint8_t *data, size_t len, bool require_auth) {
        size_t off = 0;
        result g = parse_checked(require_auth ? GREETING_AUTH : GREETING_NOAUTH, data, len);
        check_replies(g.method, (uint8_t) g.r);
        if (g.r <= 0)
                return g.r < 0 ? -1 : 0;
        off += (size_t) g.r;
        if (require_auth) {
                result a = parse_checked(AUTH, data + off, len - off);
                if (a.r <= 0)
                        return a.r < 0 ? -1 : 0;
                check_creds(data + off + a.a_off, a.a_len, data + off + a.b_off, a.b_len);
                off += (size_t) a.r;
        }
        result q = parse_checked(REQUEST, data + off, len - off);
        check_replies(q.method, q.reply);
        return q.r > 0 ? 1 : q.r < 0 ? -1 : 0;
}

static int run(const uint8_t *data, size_t size, int *other) {
        int with_auth = conversation(data, size, true);
        *other = conversation(data, size, false);
        /* The request parser alone, on the raw input, too. */
        (void) parse_checked(REQUEST, data, size);
        (void) parse_checked(AUTH, data, size);
        return with_auth;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        int other;
        /* Conversations are short; longer inputs only repeat work. */
        if (size > 4096)
                size = 4096;
        (void) run(data, size, &other);
        return 0;
}

#ifndef CORDON_LIBFUZZER
/* The seed's name states the verdict of the conversation without truncation. */
bool fuzz_replay_seed(const char *name, const uint8_t *buf, size_t len) {
        int no_auth, with_auth = run(buf, len, &no_auth);
        if (strncmp(name, "ok-", 3) == 0)
                return with_auth == 1 || no_auth == 1;
        if (strncmp(name, "bad-", 4) == 0)
                return with_auth == -1 && no_auth == -1;
        if (strncmp(name, "short-", 6) == 0)
                return with_auth == 0 || no_auth == 0;
        return true;
}
#endif
