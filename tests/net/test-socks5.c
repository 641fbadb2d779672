/* SPDX-License-Identifier: Apache-2.0 */
/* The SOCKS5 server-side parser (src/net/socks5.c): every message accepted and refused with the
 * reply it calls for, every truncation answered with "need more" (each prefix is copied into a
 * buffer of exactly its size, so ASan sees any read past len), the NUL-in-domain bypass kept
 * visible to the caller, the constant-time credential check, and the reply builders. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/un.h>

#include <cmocka.h>

#include "net/socks5.h"
#include "util/util.h"

#define B(...) (const uint8_t[]){ __VA_ARGS__ }, sizeof((const uint8_t[]){ __VA_ARGS__ })

static void assert_bytes(const uint8_t *got, const uint8_t *want, size_t n) {
        assert_memory_equal(got, want, n);
}

typedef enum kind { GREETING_AUTH, GREETING_NOAUTH, AUTH, REQUEST } kind;

typedef struct outcome {
        int r;
        uint8_t method, reply;
        const char *why;
        socks5_auth auth;
        socks5_request req;
} outcome;

static outcome parse(kind k, const uint8_t *buf, size_t len) {
        outcome o = { 0 };
        socks5_greeting g;
        switch (k) {
        case GREETING_AUTH:
        case GREETING_NOAUTH:
                o.r = socks5_greeting_parse(buf, len, k == GREETING_AUTH, &g);
                o.method = g.method;
                o.why = g.why;
                break;
        case AUTH:
                o.r = socks5_auth_parse(buf, len, &o.auth);
                o.why = o.auth.why;
                break;
        case REQUEST:
                o.r = socks5_request_parse(buf, len, &o.req);
                o.reply = o.req.reply;
                o.why = o.req.why;
                break;
        default:
                fail();
        }
        return o;
}

/* Parses the whole message and every prefix: 0 for each prefix before the verdict, then the
 * same verdict. Pointers into the buffer are compared as offsets. */
static outcome parse_checked(kind k, const uint8_t *s, size_t n) {
        uint8_t *whole = malloc(n ? n : 1);
        assert_non_null(whole);
        memcpy(whole, s, n);
        outcome want = parse(k, whole, n);
        bool final = false;
        for (size_t p = 0; p <= n; p++) {
                uint8_t *b = malloc(p ? p : 1);
                assert_non_null(b);
                memcpy(b, s, p);
                outcome got = parse(k, b, p);
                if (got.r == 0) {
                        assert_false(final);
                } else {
                        final = true;
                        assert_int_equal(got.r, want.r);
                        assert_int_equal(got.method, want.method);
                        assert_int_equal(got.reply, want.reply);
                        assert_ptr_equal(got.why, want.why);
                        assert_int_equal(got.req.port, want.req.port);
                        assert_int_equal(got.req.domain_len, want.req.domain_len);
                        if (got.req.domain)
                                assert_int_equal(got.req.domain - b, want.req.domain - whole);
                        if (got.auth.user)
                                assert_int_equal(got.auth.pass - b, want.auth.pass - whole);
                }
                free(b);
        }
        /* Re-point into the caller's bytes (whole is freed). */
        if (want.req.domain)
                want.req.domain = s + (want.req.domain - whole);
        if (want.auth.user) {
                want.auth.user = s + (want.auth.user - whole);
                want.auth.pass = s + (want.auth.pass - whole);
        }
        free(whole);
        return want;
}

static void test_greeting(void **state) {
        outcome o = parse_checked(GREETING_AUTH, B(5, 1, 2));
        assert_int_equal(o.r, 3);
        assert_int_equal(o.method, SOCKS5_METHOD_USERPASS);
        o = parse_checked(GREETING_AUTH, B(5, 3, 0, 1, 2, /* next message */ 1, 1));
        assert_int_equal(o.r, 5);
        assert_int_equal(o.method, SOCKS5_METHOD_USERPASS);
        /* No fallback to "no authentication" when credentials are required. */
        o = parse_checked(GREETING_AUTH, B(5, 1, 0));
        assert_int_equal(o.r, -EACCES);
        assert_int_equal(o.method, SOCKS5_METHOD_NONE_ACCEPTABLE);
        o = parse_checked(GREETING_AUTH, B(5, 2, 0, 1));
        assert_int_equal(o.r, -EACCES);
        o = parse_checked(GREETING_NOAUTH, B(5, 2, 2, 0));
        assert_int_equal(o.r, 4);
        assert_int_equal(o.method, SOCKS5_METHOD_NO_AUTH);
        o = parse_checked(GREETING_NOAUTH, B(5, 1, 2));
        assert_int_equal(o.r, -EACCES);
        assert_int_equal(o.method, SOCKS5_METHOD_NONE_ACCEPTABLE);
        /* Wrong versions (SOCKS4 has no authentication at all), no methods. */
        o = parse_checked(GREETING_AUTH, B(4, 1, 0, 80, 127, 0, 0, 1, 0));
        assert_int_equal(o.r, -EPROTO);
        assert_int_equal(o.method, SOCKS5_METHOD_NONE_ACCEPTABLE);
        o = parse_checked(GREETING_AUTH, B(0x16, 3, 1));
        assert_int_equal(o.r, -EPROTO);
        o = parse_checked(GREETING_AUTH, B(5, 0, 2));
        assert_int_equal(o.r, -EPROTO);
        assert_non_null(o.why);
        /* All 255 methods offered. */
        uint8_t all[257] = { 5, 255 };
        for (int i = 0; i < 255; i++)
                all[2 + i] = (uint8_t) (254 - i);
        o = parse_checked(GREETING_AUTH, all, sizeof(all));
        assert_int_equal(o.r, 257);
        assert_int_equal(o.method, SOCKS5_METHOD_USERPASS);
        /* NMETHODS promises more than was sent: need more, never a read past the end. */
        o = parse_checked(GREETING_AUTH, all, 100);
        assert_int_equal(o.r, 0);

        uint8_t reply[2];
        assert_int_equal(socks5_method_reply(reply, SOCKS5_METHOD_USERPASS), 2);
        assert_bytes(reply, B(5, 2));
        assert_int_equal(socks5_method_reply(reply, SOCKS5_METHOD_NONE_ACCEPTABLE), 2);
        assert_bytes(reply, B(5, 0xff));
}

static void test_auth(void **state) {
        outcome o = parse_checked(AUTH, B(1, 4, 'u', 's', 'e', 'r', 3, 'p', 'w', 'd', /* next */ 5));
        assert_int_equal(o.r, 10);
        assert_int_equal(o.auth.user_len, 4);
        assert_memory_equal(o.auth.user, "user", 4);
        assert_int_equal(o.auth.pass_len, 3);
        assert_memory_equal(o.auth.pass, "pwd", 3);
        assert_true(socks5_creds_equal(o.auth.user, o.auth.user_len, o.auth.pass,
                                       o.auth.pass_len, "user", "pwd"));
        assert_false(socks5_creds_equal(o.auth.user, o.auth.user_len, o.auth.pass,
                                        o.auth.pass_len, "user", "pwD"));

        o = parse_checked(AUTH, B(5, 4, 'u', 's', 'e', 'r', 3, 'p', 'w', 'd'));
        assert_int_equal(o.r, -EPROTO);
        assert_null(o.auth.user);
        o = parse_checked(AUTH, B(1, 0, 3, 'p', 'w', 'd'));
        assert_int_equal(o.r, -EPROTO);
        o = parse_checked(AUTH, B(1, 1, 'u', 0));
        assert_int_equal(o.r, -EPROTO);
        /* ULEN and PLEN at their bound. */
        uint8_t big[2 + 255 + 1 + 255];
        big[0] = 1;
        big[1] = 255;
        memset(big + 2, 'u', 255);
        big[257] = 255;
        memset(big + 258, 'p', 255);
        o = parse_checked(AUTH, big, sizeof(big));
        assert_int_equal(o.r, sizeof(big));
        assert_int_equal(o.auth.user_len, 255);
        assert_int_equal(o.auth.pass_len, 255);
        o = parse_checked(AUTH, big, sizeof(big) - 1);
        assert_int_equal(o.r, 0);

        uint8_t reply[2];
        assert_int_equal(socks5_auth_reply(reply, true), 2);
        assert_bytes(reply, B(1, 0));
        socks5_auth_reply(reply, false);
        assert_bytes(reply, B(1, 1));
}

static void test_creds_equal(void **state) {
        assert_true(socks5_creds_equal("u", 1, "p", 1, "u", "p"));
        assert_false(socks5_creds_equal("u", 1, "p", 1, "u", "q"));
        assert_false(socks5_creds_equal("u", 1, "p", 1, "v", "p"));
        assert_false(socks5_creds_equal("u", 1, "p", 1, "uu", "p"));   /* longer wanted */
        assert_false(socks5_creds_equal("uu", 2, "p", 1, "u", "p"));   /* longer given */
        assert_false(socks5_creds_equal("up", 2, "", 0, "u", "p"));    /* no moving bytes over */
        assert_false(socks5_creds_equal("u\0x", 3, "p", 1, "u", "p")); /* NUL does not cut */
        assert_true(socks5_creds_equal("", 0, "", 0, "", ""));
        assert_false(socks5_creds_equal("u", 1, "p", 1, NULL, "p"));
        assert_false(socks5_creds_equal("u", 1, "p", 1, "u", NULL));
        assert_false(socks5_creds_equal(NULL, 1, "p", 1, "u", "p"));
        char lng[300];
        memset(lng, 'a', sizeof(lng) - 1);
        lng[299] = '\0';
        assert_false(socks5_creds_equal(lng, 299, "p", 1, lng, "p")); /* over the bound */
        lng[255] = '\0';
        assert_true(socks5_creds_equal(lng, 255, "p", 1, lng, "p"));
        assert_false(socks5_creds_equal(lng, 254, "p", 1, lng, "p"));
}

static void test_request(void **state) {
        outcome o = parse_checked(REQUEST, B(5, 1, 0, 1, 93, 184, 216, 34, 0x01, 0xbb, /* data */ 0x16));
        assert_int_equal(o.r, 10);
        assert_int_equal(o.req.atyp, SOCKS5_ATYP_IPV4);
        assert_bytes(o.req.addr, B(93, 184, 216, 34));
        assert_int_equal(o.req.port, 443);
        assert_null(o.req.domain);

        o = parse_checked(REQUEST, B(5, 1, 0, 4, 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                     0, 0, 1, 0, 22));
        assert_int_equal(o.r, 22);
        assert_int_equal(o.req.atyp, SOCKS5_ATYP_IPV6);
        struct in6_addr a6;
        assert_int_equal(inet_pton(AF_INET6, "2001:db8::1", &a6), 1);
        assert_memory_equal(o.req.addr, &a6, 16);
        assert_int_equal(o.req.port, 22);

        o = parse_checked(REQUEST, B(5, 1, 0, 3, 11, 'e', 'x', 'a', 'm', 'p', 'l', 'e', '.', 'c',
                                     'o', 'm', 0, 80));
        assert_int_equal(o.r, 18);
        assert_int_equal(o.req.atyp, SOCKS5_ATYP_DOMAIN);
        assert_int_equal(o.req.domain_len, 11);
        assert_memory_equal(o.req.domain, "example.com", 11);
        assert_int_equal(o.req.port, 80);

        /* A NUL inside the name is passed through with the full length: the canonicaliser must
         * see "allowed.com\0.evil.com", never a C string cut at the NUL. */
        o = parse_checked(REQUEST, B(5, 1, 0, 3, 8, 'o', 'k', '.', 'c', 'o', 'm', 0, 'x', 1, 0));
        assert_int_equal(o.r, 15);
        assert_int_equal(o.req.domain_len, 8);
        assert_memory_equal(o.req.domain, "ok.com\0x", 8);
        assert_int_equal(o.req.port, 256);

        /* Domain at its bound: 255 bytes of anything. */
        uint8_t big[5 + 255 + 2] = { 5, 1, 0, 3, 255 };
        for (int i = 0; i < 255; i++)
                big[5 + i] = (uint8_t) i;
        big[260] = 0xff;
        big[261] = 0xff;
        o = parse_checked(REQUEST, big, sizeof(big));
        assert_int_equal(o.r, sizeof(big));
        assert_int_equal(o.req.domain_len, 255);
        assert_memory_equal(o.req.domain, big + 5, 255);
        assert_int_equal(o.req.port, 65535);
        o = parse_checked(REQUEST, big, sizeof(big) - 1);
        assert_int_equal(o.r, 0);
}

static void expect_request_refused(const uint8_t *s, size_t n, int r, uint8_t reply) {
        outcome o = parse_checked(REQUEST, s, n);
        if (o.r != r)
                print_message("got %d (%s), want %d\n", o.r, o.why ? o.why : "", r);
        assert_int_equal(o.r, r);
        assert_int_equal(o.reply, reply);
        assert_non_null(o.why);
        assert_null(o.req.domain);
}

static void test_request_refused(void **state) {
        expect_request_refused(B(4, 1, 0, 1, 127, 0, 0, 1, 0, 80), -EPROTO,
                               SOCKS5_REP_GENERAL_FAILURE);
        expect_request_refused(B(5, 2, 0, 1, 127, 0, 0, 1, 0, 80), -ENOTSUP,
                               SOCKS5_REP_COMMAND_NOT_SUPPORTED); /* BIND */
        expect_request_refused(B(5, 3, 0, 1, 0, 0, 0, 0, 0, 0), -ENOTSUP,
                               SOCKS5_REP_COMMAND_NOT_SUPPORTED); /* UDP ASSOCIATE */
        expect_request_refused(B(5, 0, 0, 1, 127, 0, 0, 1, 0, 80), -ENOTSUP,
                               SOCKS5_REP_COMMAND_NOT_SUPPORTED);
        expect_request_refused(B(5, 9, 0, 1, 127, 0, 0, 1, 0, 80), -ENOTSUP,
                               SOCKS5_REP_COMMAND_NOT_SUPPORTED);
        expect_request_refused(B(5, 1, 1, 1, 127, 0, 0, 1, 0, 80), -EPROTO,
                               SOCKS5_REP_GENERAL_FAILURE); /* RSV */
        expect_request_refused(B(5, 1, 0, 2, 127, 0, 0, 1, 0, 80), -EAFNOSUPPORT,
                               SOCKS5_REP_ADDRESS_NOT_SUPPORTED);
        expect_request_refused(B(5, 1, 0, 0), -EAFNOSUPPORT, SOCKS5_REP_ADDRESS_NOT_SUPPORTED);
        expect_request_refused(B(5, 1, 0, 3, 0, 0, 80), -EPROTO, SOCKS5_REP_GENERAL_FAILURE);
        expect_request_refused(B(5, 1, 0, 1, 127, 0, 0, 1, 0, 0), -EINVAL,
                               SOCKS5_REP_NOT_ALLOWED);
        expect_request_refused(B(5, 1, 0, 3, 1, 'h', 0, 0), -EINVAL, SOCKS5_REP_NOT_ALLOWED);
        /* The verdict comes at the first faulty byte: a BIND is refused before its address. */
        outcome o = parse_checked(REQUEST, B(5, 2));
        assert_int_equal(o.r, -ENOTSUP);
}

static void test_request_reply(void **state) {
        uint8_t out[SOCKS5_REPLY_MAX];
        assert_int_equal(socks5_request_reply(out, SOCKS5_REP_NOT_ALLOWED, NULL), 10);
        assert_bytes(out, B(5, 2, 0, 1, 0, 0, 0, 0, 0, 0));
        struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(1080) };
        sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        assert_int_equal(socks5_request_reply(out, SOCKS5_REP_SUCCEEDED, (struct sockaddr *) &sin),
                         10);
        assert_bytes(out, B(5, 0, 0, 1, 127, 0, 0, 1, 0x04, 0x38));
        struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6, .sin6_port = htons(443) };
        sin6.sin6_addr = in6addr_loopback;
        assert_int_equal(socks5_request_reply(out, SOCKS5_REP_SUCCEEDED, (struct sockaddr *) &sin6),
                         22);
        assert_bytes(out, B(5, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0xbb));
        struct sockaddr_un sun = { .sun_family = AF_UNIX };
        assert_int_equal(socks5_request_reply(out, 0, (struct sockaddr *) &sun), -EAFNOSUPPORT);
}

/* A whole client conversation in one segment (optimistic clients send it so). */
static void test_pipelined(void **state) {
        static const uint8_t conv[] = { 5, 1, 2,                         /* greeting */
                                        1, 1, 'u', 1, 'p',               /* auth */
                                        5, 1, 0, 3, 1, 'h', 0, 80,       /* request */
                                        'G', 'E', 'T' };                 /* tunnel data */
        socks5_greeting g;
        socks5_auth a;
        socks5_request r;
        size_t off = 0;
        int n = socks5_greeting_parse(conv, sizeof(conv), true, &g);
        assert_int_equal(n, 3);
        off += (size_t) n;
        n = socks5_auth_parse(conv + off, sizeof(conv) - off, &a);
        assert_int_equal(n, 5);
        assert_true(socks5_creds_equal(a.user, a.user_len, a.pass, a.pass_len, "u", "p"));
        off += (size_t) n;
        n = socks5_request_parse(conv + off, sizeof(conv) - off, &r);
        assert_int_equal(n, 8);
        off += (size_t) n;
        assert_int_equal(sizeof(conv) - off, 3);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_greeting),        cmocka_unit_test(test_auth),
                cmocka_unit_test(test_creds_equal),     cmocka_unit_test(test_request),
                cmocka_unit_test(test_request_refused), cmocka_unit_test(test_request_reply),
                cmocka_unit_test(test_pipelined),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
