/* SPDX-License-Identifier: Apache-2.0 */
/* The client side of an upstream proxy's protocols (src/net/upstream.c): the requests as bytes,
 * read back by the proxy's own strict server-side parsers (src/net/http.c, socks5.c), and every
 * kind of answer: open, refused, malformed, cut short. */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "net/http.h"
#include "net/socks5.h"
#include "net/upstream.h"

static policy_upstream creds(const char *user, const char *pass) {
        policy_upstream u = { .kind = POLICY_UPSTREAM_HTTP, .port = 3128, .has_creds = !!user };
        strcpy(u.host, "proxy.example");
        if (user) {
                u.user_len = strlen(user);
                memcpy(u.user, user, u.user_len + 1);
                u.pass_len = strlen(pass);
                memcpy(u.pass, pass, u.pass_len + 1);
        }
        return u;
}

static net_host host(net_host_kind kind, const char *text) {
        net_host h = { .kind = kind };
        strcpy(h.text, text);
        if (kind == NET_HOST_IPV4)
                assert_int_equal(inet_pton(AF_INET, text, &h.v4), 1);
        if (kind == NET_HOST_IPV6)
                assert_int_equal(inet_pton(AF_INET6, text, &h.v6), 1);
        return h;
}

static void test_http_request(void **state) {
        (void) state;
        char out[UPSTREAM_REQUEST_MAX];
        policy_upstream none = creds(NULL, NULL);
        net_host name = host(NET_HOST_NAME, "a.example.test");
        ssize_t n = upstream_http_request(&none, &name, 443, out, sizeof(out));
        static const char want[] = "CONNECT a.example.test:443 HTTP/1.1\r\n"
                                   "Host: a.example.test:443\r\n\r\n";
        assert_int_equal(n, sizeof(want) - 1);
        assert_memory_equal(out, want, sizeof(want) - 1);
        /* With credentials, read back by the proxy's own request parser. */
        policy_upstream u = creds("alice", "p:ss w\xc3\xa9rd");
        net_host v6 = host(NET_HOST_IPV6, "2001:db8::1");
        n = upstream_http_request(&u, &v6, 8443, out, sizeof(out));
        assert_true(n > 0);
        static http_req rq;
        assert_int_equal(http_req_parse(out, (size_t) n, &rq), n);
        assert_int_equal(rq.kind, HTTP_KIND_CONNECT);
        assert_string_equal(rq.host, "[2001:db8::1]");
        assert_int_equal(rq.port, 8443);
        assert_true(rq.has_credentials);
        assert_true(http_req_creds_equal(&rq, "alice", "p:ss w\xc3\xa9rd"));
        /* Too small a buffer: nothing usable, and nothing of the credentials left in it. */
        char small[60];
        assert_int_equal(upstream_http_request(&u, &v6, 8443, small, sizeof(small)), -ENOSPC);
        for (size_t i = 0; i < sizeof(small); i++)
                assert_int_equal(small[i], 0);
        assert_int_equal(upstream_http_request(&none, &name, 443, out, 10), -ENOSPC);
}

static int http_answer(const char *text, upstream_answer *a) {
        return upstream_http_answer(text, strlen(text), a);
}

static void test_http_answer(void **state) {
        (void) state;
        upstream_answer a;
        static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\nSSH-2.0-x\r\n";
        assert_int_equal(http_answer(ok, &a), strlen("HTTP/1.1 200 Connection established\r\n\r\n"));
        assert_int_equal(a.code, 200);
        assert_null(a.why);
        /* Interim heads first; an HTTP/1.0 answer; fields are fine. */
        assert_int_equal(http_answer("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.0 200 OK\r\n"
                                     "Proxy-Agent: x\r\n\r\n", &a),
                         strlen("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.0 200 OK\r\n"
                                "Proxy-Agent: x\r\n\r\n"));
        /* Any final status but 2xx is a refusal, with the upstream's status. */
        assert_int_equal(http_answer("HTTP/1.1 407 Proxy Authentication Required\r\n"
                                     "Proxy-Authenticate: Basic realm=\"x\"\r\n"
                                     "Content-Length: 5\r\n\r\nnope!", &a),
                         -ECONNREFUSED);
        assert_int_equal(a.code, 407);
        assert_non_null(a.why);
        assert_int_equal(http_answer("HTTP/1.1 403 Forbidden\r\n\r\n", &a), -ECONNREFUSED);
        assert_int_equal(a.code, 403);
        assert_int_equal(http_answer("HTTP/1.1 502 Bad Gateway\r\n\r\n", &a), -ECONNREFUSED);
        /* Cut short. */
        assert_int_equal(http_answer("", &a), 0);
        assert_int_equal(http_answer("HTTP/1.1 200 Connection established\r\n", &a), 0);
        assert_int_equal(http_answer("HTTP/1.1 100 Continue\r\n\r\n", &a), 0);
        /* Not an HTTP answer. */
        assert_int_equal(http_answer("SSH-2.0-OpenSSH\r\n\r\n", &a), -EPROTO);
        assert_non_null(a.why);
        assert_int_equal(http_answer("HTTP/1.1 200 OK\n\n", &a), -EPROTO);
        assert_int_equal(http_answer("HTTP/1.1 101 Switching Protocols\r\n\r\n", &a), -EPROTO);
        assert_int_equal(http_answer("HTTP/2 200\r\n\r\n", &a), -EPROTO);
        /* Bounded: an answer that never ends its head. */
        static char big[UPSTREAM_ANSWER_MAX + 100];
        memset(big, 'a', sizeof(big));
        memcpy(big, "HTTP/1.1 200 OK\r\nX: ", 21);
        assert_true(upstream_http_answer(big, sizeof(big), &a) < 0);
        assert_int_equal(upstream_http_answer(big, 100, &a), 0);
}

static void test_socks5_greeting_and_auth(void **state) {
        (void) state;
        uint8_t g[4];
        policy_upstream none = creds(NULL, NULL), u = creds("alice", "s3cr3t");
        socks5_greeting sg;
        /* What the proxy's own server side makes of each greeting. */
        assert_int_equal(upstream_socks5_greeting(&none, g), 3);
        assert_int_equal(socks5_greeting_parse(g, 3, false, &sg), 3);
        assert_int_equal(upstream_socks5_greeting(&u, g), 4);
        assert_int_equal(socks5_greeting_parse(g, 4, true, &sg), 4);
        assert_int_equal(socks5_greeting_parse(g, 4, false, &sg), 4);

        upstream_answer a;
        assert_int_equal(upstream_socks5_method("\x05\x00", 2, &none, &a), 2);
        assert_int_equal(a.code, 0);
        assert_int_equal(upstream_socks5_method("\x05\x02", 2, &u, &a), 2);
        assert_int_equal(a.code, 2);
        assert_int_equal(upstream_socks5_method("\x05\x00", 2, &u, &a), 2);
        /* Username/password was not offered without credentials; GSSAPI never is. */
        assert_int_equal(upstream_socks5_method("\x05\x02", 2, &none, &a), -EPROTO);
        assert_int_equal(upstream_socks5_method("\x05\x01", 2, &u, &a), -EPROTO);
        assert_int_equal(upstream_socks5_method("\x05\xff", 2, &u, &a), -ECONNREFUSED);
        assert_int_equal(upstream_socks5_method("\x04\x00", 2, &u, &a), -EPROTO);
        assert_int_equal(upstream_socks5_method("\x05", 1, &u, &a), 0);

        uint8_t out[UPSTREAM_REQUEST_MAX];
        assert_int_equal(upstream_socks5_auth_request(&none, out, sizeof(out)), -EINVAL);
        ssize_t n = upstream_socks5_auth_request(&u, out, sizeof(out));
        assert_int_equal(n, 3 + 5 + 6);
        socks5_auth sa;
        assert_int_equal(socks5_auth_parse(out, (size_t) n, &sa), n);
        assert_true(socks5_creds_equal(sa.user, sa.user_len, sa.pass, sa.pass_len, "alice",
                                       "s3cr3t"));
        assert_int_equal(upstream_socks5_auth_request(&u, out, 10), -ENOSPC);

        assert_int_equal(upstream_socks5_auth_answer("\x01\x00", 2, &a), 2);
        assert_int_equal(upstream_socks5_auth_answer("\x01\x01", 2, &a), -ECONNREFUSED);
        assert_int_equal(a.code, 1);
        assert_int_equal(upstream_socks5_auth_answer("\x05\x00", 2, &a), -EPROTO);
        assert_int_equal(upstream_socks5_auth_answer("\x01", 1, &a), 0);
}

static void test_socks5_request(void **state) {
        (void) state;
        uint8_t out[UPSTREAM_REQUEST_MAX];
        socks5_request rq;
        /* A name stays a name: the upstream resolves it. */
        net_host name = host(NET_HOST_NAME, "a.example.test");
        ssize_t n = upstream_socks5_request(&name, 8080, out, sizeof(out));
        assert_int_equal(socks5_request_parse(out, (size_t) n, &rq), n);
        assert_int_equal(rq.atyp, SOCKS5_ATYP_DOMAIN);
        assert_int_equal(rq.domain_len, strlen("a.example.test"));
        assert_memory_equal(rq.domain, "a.example.test", rq.domain_len);
        assert_int_equal(rq.port, 8080);
        net_host v4 = host(NET_HOST_IPV4, "192.0.2.7");
        n = upstream_socks5_request(&v4, 1, out, sizeof(out));
        assert_int_equal(n, 10);
        assert_int_equal(socks5_request_parse(out, (size_t) n, &rq), n);
        assert_int_equal(rq.atyp, SOCKS5_ATYP_IPV4);
        assert_memory_equal(rq.addr, "\xc0\x00\x02\x07", 4);
        net_host v6 = host(NET_HOST_IPV6, "2001:db8::1");
        n = upstream_socks5_request(&v6, 65535, out, sizeof(out));
        assert_int_equal(n, 22);
        assert_int_equal(socks5_request_parse(out, (size_t) n, &rq), n);
        assert_int_equal(rq.atyp, SOCKS5_ATYP_IPV6);
        assert_int_equal(rq.port, 65535);
        assert_int_equal(upstream_socks5_request(&v6, 1, out, 21), -ENOSPC);
}

static void test_socks5_reply(void **state) {
        (void) state;
        upstream_answer a;
        static const uint8_t v4[] = { 5, 0, 0, 1, 10, 0, 0, 1, 0x1f, 0x90, 'S', 'S', 'H' };
        assert_int_equal(upstream_socks5_reply(v4, sizeof(v4), &a), 10);
        static const uint8_t v6[22] = { 5, 0, 0, 4 };
        assert_int_equal(upstream_socks5_reply(v6, sizeof(v6), &a), 22);
        assert_int_equal(upstream_socks5_reply(v6, 21, &a), 0);
        static const uint8_t dom[] = { 5, 0, 0, 3, 2, 'g', 'w', 0, 80 };
        assert_int_equal(upstream_socks5_reply(dom, sizeof(dom), &a), 9);
        /* A refusal is known at its second byte, with its RFC 1928 meaning. */
        assert_int_equal(upstream_socks5_reply("\x05\x05", 2, &a), -ECONNREFUSED);
        assert_int_equal(a.code, 5);
        assert_string_equal(a.why, "connection refused");
        assert_int_equal(upstream_socks5_reply("\x05\x02\x00\x01", 4, &a), -ECONNREFUSED);
        assert_int_equal(a.code, 2);
        assert_int_equal(upstream_socks5_reply("\x05\x42", 2, &a), -ECONNREFUSED);
        assert_string_equal(a.why, "an unassigned reply");
        /* Not a reply. */
        assert_int_equal(upstream_socks5_reply("\x04\x5a", 2, &a), -EPROTO);
        assert_int_equal(upstream_socks5_reply("\x05\x00\x01", 3, &a), -EPROTO);
        assert_int_equal(upstream_socks5_reply("\x05\x00\x00\x02", 4, &a), -EPROTO);
        assert_int_equal(upstream_socks5_reply("\x05\x00\x00\x03\x00", 5, &a), -EPROTO);
        assert_int_equal(upstream_socks5_reply("", 0, &a), 0);
        assert_int_equal(upstream_socks5_reply("\x05\x00\x00\x03", 4, &a), 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_http_request),
                cmocka_unit_test(test_http_answer),
                cmocka_unit_test(test_socks5_greeting_and_auth),
                cmocka_unit_test(test_socks5_request),
                cmocka_unit_test(test_socks5_reply),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
