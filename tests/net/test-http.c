/* SPDX-License-Identifier: Apache-2.0 */
/* The proxy's HTTP parsers (src/net/http.c, src/net/http-body.c): each refusal with its status,
 * the smuggling vectors, the exact upstream rewrite, response framing, and the chunked framer.
 * Every input is also parsed one byte at a time (each prefix copied into a buffer of exactly
 * that size, so ASan sees any read past len) and must give the one-piece result. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "net/http-body.h"
#include "net/http.h"
#include "util/util.h"

/* A string literal with its length (NUL bytes inside count). */
#define S(lit) lit, sizeof(lit) - 1

static char *dup_exact(const char *s, size_t n) {
        char *p = malloc(n ? n : 1);
        assert_non_null(p);
        memcpy(p, s, n);
        return p;
}

static void assert_spans_equal(http_span a, http_span b) {
        assert_int_equal(a.off, b.off);
        assert_int_equal(a.len, b.len);
}

static void assert_req_same(const http_req *a, const http_req *b) {
        assert_int_equal(a->status, b->status);
        assert_ptr_equal(a->why, b->why);
        assert_int_equal(a->kind, b->kind);
        assert_string_equal(a->method, b->method);
        assert_string_equal(a->host, b->host);
        assert_int_equal(a->port, b->port);
        assert_spans_equal(a->authority, b->authority);
        assert_spans_equal(a->path, b->path);
        assert_int_equal(a->version_minor, b->version_minor);
        assert_int_equal(a->keep_alive, b->keep_alive);
        assert_int_equal(a->expect_continue, b->expect_continue);
        assert_int_equal(a->has_credentials, b->has_credentials);
        assert_string_equal(a->user, b->user);
        assert_string_equal(a->pass, b->pass);
        assert_int_equal(a->framing, b->framing);
        assert_int_equal(a->content_length, b->content_length);
        assert_int_equal(a->n_headers, b->n_headers);
        for (size_t i = 0; i < a->n_headers; i++) {
                assert_spans_equal(a->headers[i].name, b->headers[i].name);
                assert_spans_equal(a->headers[i].value, b->headers[i].value);
        }
        assert_int_equal(a->head_len, b->head_len);
}

/* Parses s[0..n) whole, then every prefix (every step-th one, and the last 3): each prefix
 * gives 0 until some point and the whole-input result from there on. */
static int req_parse_checked(const char *s, size_t n, size_t step, http_req *out) {
        char *whole = dup_exact(s, n);
        int want = http_req_parse(whole, n, out);
        bool final = false;
        http_req *r = malloc(sizeof(*r));
        assert_non_null(r);
        for (size_t p = 0; p <= n; p++) {
                if (p % step != 0 && p + 3 < n)
                        continue;
                char *b = dup_exact(s, p);
                int got = http_req_parse(b, p, r);
                if (got == 0) {
                        if (final)
                                print_message("prefix %zu: 0 after a verdict\n", p);
                        assert_false(final);
                } else {
                        if (got != want)
                                print_message("prefix %zu/%zu: %d (%s), whole: %d (%s)\n", p, n,
                                              got, r->why, want, out->why);
                        assert_int_equal(got, want);
                        /* Spans refer to offsets, equal in both buffers. */
                        assert_req_same(r, out);
                        final = true;
                }
                free(b);
        }
        free(r);
        free(whole);
        assert_true(want != 0 || !final);
        return want;
}

static void expect_refused_n(const char *s, size_t n, int status, const char *why_part) {
        http_req r;
        int got = req_parse_checked(s, n, 1, &r);
        if (got != -HTTP_EREFUSED || r.status != status)
                print_message("got %d status %d (%s), want status %d, for:\n%.*s\n", got,
                              r.status, r.why ? r.why : "", status, (int) n, s);
        assert_int_equal(got, -HTTP_EREFUSED);
        assert_int_equal(r.status, status);
        assert_non_null(r.why);
        if (why_part && !strstr(r.why, why_part))
                print_message("why '%s' lacks '%s'\n", r.why, why_part);
        assert_true(!why_part || strstr(r.why, why_part));
}

static void expect_refused(const char *s, int status, const char *why_part) {
        expect_refused_n(s, strlen(s), status, why_part);
}

static void expect_ok_n(const char *s, size_t n, http_req *r) {
        int got = req_parse_checked(s, n, 1, r);
        if (got <= 0)
                print_message("got %d (%s) for:\n%.*s\n", got, r->why ? r->why : "", (int) n, s);
        assert_true(got > 0);
        assert_int_equal(r->status, 0);
        assert_null(r->why);
}

static void expect_ok(const char *s, http_req *r) {
        expect_ok_n(s, strlen(s), r);
        assert_int_equal(r->head_len, strlen(s));
}

static const char *span_str(const char *buf, http_span sp) {
        static char out[HTTP_HEAD_MAX];
        memcpy(out, buf + sp.off, sp.len);
        out[sp.len] = '\0';
        return out;
}

/* ---- Requests accepted --------------------------------------------------------------------- */

static void test_forward(void **state) {
        http_req r;
        const char *s = "GET http://Example.com/a/b?c=d&e=%2F HTTP/1.1\r\n"
                        "Host: example.COM\r\nUser-Agent:  curl/8 \t\r\nX-Empty:\r\n\r\n";
        expect_ok(s, &r);
        assert_int_equal(r.kind, HTTP_KIND_FORWARD);
        assert_string_equal(r.method, "GET");
        assert_string_equal(r.host, "Example.com");
        assert_int_equal(r.port, 80);
        assert_string_equal(span_str(s, r.authority), "Example.com");
        assert_string_equal(span_str(s, r.path), "/a/b?c=d&e=%2F");
        assert_int_equal(r.version_minor, 1);
        assert_true(r.keep_alive);
        assert_false(r.has_credentials);
        assert_int_equal(r.framing, HTTP_FRAMING_NONE);
        assert_int_equal(r.n_headers, 3);
        assert_string_equal(span_str(s, r.headers[1].name), "User-Agent");
        assert_string_equal(span_str(s, r.headers[1].value), "curl/8");
        assert_string_equal(span_str(s, r.headers[2].value), "");

        /* The body is not part of the head. */
        const char *post = "POST http://h:8080 HTTP/1.1\r\nHost: h:8080\r\nContent-Length: 3\r\n\r\nabc";
        assert_int_equal(http_req_parse(post, strlen(post), &r), (int) strlen(post) - 3);
        assert_int_equal(r.port, 8080);
        assert_int_equal(r.path.len, 0);
        assert_int_equal(r.framing, HTTP_FRAMING_LENGTH);
        assert_int_equal(r.content_length, 3);

        expect_ok("GET HTTP://[::1]:8080?q HTTP/1.1\r\nHost: [::1]:8080\r\n\r\n", &r);
        assert_string_equal(r.host, "[::1]");
        assert_int_equal(r.port, 8080);
        expect_ok("GET http://h/ HTTP/1.1\r\nHost: h:80\r\n\r\n", &r);
        expect_ok("GET http://h:80/ HTTP/1.1\r\nHost: H\r\n\r\n", &r);
        /* HTTP/1.0 needs no Host. */
        expect_ok("GET http://h/ HTTP/1.0\r\n\r\n", &r);
        assert_int_equal(r.version_minor, 0);
        /* Any token is a method; 16 characters is the bound. */
        expect_ok("PROPFIND0123456x http://h/ HTTP/1.1\r\nHost: h\r\n\r\n", &r);
        assert_string_equal(r.method, "PROPFIND0123456x");
        expect_ok("POST http://h/ HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: Chunked\r\n"
                  "Expect: 100-continue\r\n\r\n", &r);
        assert_int_equal(r.framing, HTTP_FRAMING_CHUNKED);
        assert_true(r.expect_continue);
        expect_ok("GET http://h/ HTTP/1.1\r\nHost: h\r\nContent-Length: 9223372036854775807\r\n\r\n",
                  &r);
        assert_int_equal(r.content_length, INT64_MAX);
}

static void test_connect(void **state) {
        http_req r;
        const char *s = "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n\x16\x03";
        expect_ok_n(s, strlen(s), &r);
        assert_int_equal(r.head_len, strlen(s) - 2);
        assert_int_equal(r.kind, HTTP_KIND_CONNECT);
        assert_string_equal(r.host, "example.com");
        assert_int_equal(r.port, 443);
        assert_int_equal(r.framing, HTTP_FRAMING_NONE);
        expect_ok("CONNECT [2001:db8::1]:22 HTTP/1.0\r\n\r\n", &r);
        assert_string_equal(r.host, "[2001:db8::1]");
        assert_int_equal(r.port, 22);
        expect_ok("CONNECT 127.0.0.1:65535 HTTP/1.1\r\nContent-Length: 0\r\n\r\n", &r);
        assert_int_equal(r.port, 65535);
        /* The tunnel goes to the target; Host is neither used nor forwarded. */
        expect_ok("CONNECT a.com:443 HTTP/1.1\r\nHost: b.com\r\n\r\n", &r);
        assert_string_equal(r.host, "a.com");
        /* A name the canonicaliser will have to refuse is still exposed raw, not guessed at. */
        expect_ok("CONNECT 2130706433:80 HTTP/1.1\r\n\r\n", &r);
        assert_string_equal(r.host, "2130706433");
}

static void test_keep_alive(void **state) {
        static const struct {
                const char *req;
                bool keep_alive;
        } cases[] = {
                { "GET http://h/ HTTP/1.1\r\nHost: h\r\n\r\n", true },
                { "GET http://h/ HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n", false },
                { "GET http://h/ HTTP/1.1\r\nHost: h\r\nConnection: keep-alive, CLOSE\r\n\r\n", false },
                { "GET http://h/ HTTP/1.1\r\nHost: h\r\nConnection: ,, x-a ,\r\n\r\n", true },
                { "GET http://h/ HTTP/1.0\r\n\r\n", false },
                { "GET http://h/ HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", true },
                { "GET http://h/ HTTP/1.0\r\nProxy-Connection: keep-alive\r\n\r\n", false },
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                http_req r;
                expect_ok(cases[i].req, &r);
                assert_int_equal(r.keep_alive, cases[i].keep_alive);
        }
}

static void test_credentials(void **state) {
        http_req r;
        /* "user:pa:ss" */
        expect_ok("GET http://h/ HTTP/1.1\r\nHost: h\r\nProxy-Authorization: basic dXNlcjpwYTpzcw==\r\n\r\n",
                  &r);
        assert_true(r.has_credentials);
        assert_string_equal(r.user, "user");
        assert_string_equal(r.pass, "pa:ss");
        assert_true(http_req_creds_equal(&r, "user", "pa:ss"));
        assert_false(http_req_creds_equal(&r, "user", "pa:sS"));
        assert_false(http_req_creds_equal(&r, "use", "pa:ss"));
        assert_false(http_req_creds_equal(&r, "user", "pa:ss "));
        assert_false(http_req_creds_equal(&r, NULL, "pa:ss"));
        /* ":" → empty user and password: parsed, matches nothing real. */
        expect_ok("CONNECT h:1 HTTP/1.1\r\nProxy-Authorization: Basic Og==\r\n\r\n", &r);
        assert_true(r.has_credentials);
        assert_int_equal(r.user_len + r.pass_len, 0);
        assert_false(http_req_creds_equal(&r, "u", "p"));
        /* Another scheme: no credentials (the proxy answers 407). */
        expect_ok("CONNECT h:1 HTTP/1.1\r\nProxy-Authorization: Bearer abc\r\n\r\n", &r);
        assert_false(r.has_credentials);
        assert_false(http_req_creds_equal(&r, "", ""));

        static const char *const bad[] = {
                "Basic",              /* no credentials */
                "Basic ",             /* empty */
                "Basic  dXNlcjpw",    /* two spaces */
                "Basic dXNlcjpw YQ==",/* trailing junk */
                "Basic dXNlcjp",      /* length not a multiple of 4 */
                "Basic dXNlcjp*",     /* not base64 */
                "Basic dXNl=jpw",     /* padding inside */
                "Basic dXNlcg==",     /* "user": no ':' */
                "Basic dXNlcjpwYR==", /* non-canonical: unused bits set */
                "Basic dXNlcjpwYXN=", /* idem, one '=' */
                "Basic dQA6cA==",     /* "u\0:p": NUL */
                "Basic dQo6cA==",     /* "u\n:p": control character */
        };
        char req[512];
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                snprintf(req, sizeof(req), "CONNECT h:1 HTTP/1.1\r\nProxy-Authorization: %s\r\n\r\n",
                         bad[i]);
                expect_refused(req, 400, "Basic");
        }
        expect_refused("CONNECT h:1 HTTP/1.1\r\nProxy-Authorization: Basic Og==\r\n"
                       "Proxy-Authorization: Basic Og==\r\n\r\n", 400, "repeated");
        /* 256-byte user name: over the bound shared with SOCKS5. */
        char user[300], enc[512];
        memset(user, 'u', 256);
        strcpy(user + 256, ":p");
        /* base64 of 258 bytes: 'u'*256 + ":p" → 86 groups of 3 */
        static const char tbl[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        size_t n = strlen(user), o = 0;
        for (size_t i = 0; i < n; i += 3) {
                uint32_t v = (uint32_t) (uint8_t) user[i] << 16 |
                             (uint32_t) (uint8_t) user[i + 1] << 8 | (uint8_t) user[i + 2];
                for (int j = 3; j >= 0; j--)
                        enc[o++] = tbl[(v >> (6 * j)) & 63];
        }
        enc[o] = '\0';
        char big[1024];
        snprintf(big, sizeof(big), "CONNECT h:1 HTTP/1.1\r\nProxy-Authorization: Basic %s\r\n\r\n",
                 enc);
        expect_refused(big, 400, "too long");
}

/* ---- Requests refused: smuggling vectors and malformed heads --------------------------- */

static void test_smuggling(void **state) {
        static const char *const cl_te[] = {
                "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n",
                "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n",
                "Transfer-Encoding: chunked\r\nContent-Length: 0\r\n",
        };
        char req[512];
        for (size_t i = 0; i < ELEMENTSOF(cl_te); i++) {
                snprintf(req, sizeof(req), "POST http://h/ HTTP/1.1\r\nHost: h\r\n%s\r\n", cl_te[i]);
                expect_refused(req, 400, "both Content-Length and Transfer-Encoding");
        }
        static const struct {
                const char *hdr;
                int status;
        } cases[] = {
                { "Transfer-Encoding: chunked, identity\r\n", 501 },
                { "Transfer-Encoding: identity\r\n", 501 },
                { "Transfer-Encoding: gzip, chunked\r\n", 501 },
                { "Transfer-Encoding: xchunked\r\n", 501 },
                { "Transfer-Encoding: chunked;q=1\r\n", 501 },
                { "Transfer-Encoding: \"chunked\"\r\n", 501 },
                { "Transfer-Encoding:\r\n", 501 },
                { "Transfer-Encoding:\r\n chunked\r\n", 501 },        /* empty, then a fold */
                { "Transfer-Encoding: chunked\r\n ,identity\r\n", 400 }, /* obs-fold */
                { "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n", 400 },
                { "Transfer-Encoding : chunked\r\n", 400 },
                { "Transfer-Encoding\t: chunked\r\n", 400 },
                { " Transfer-Encoding: chunked\r\n", 400 },
                { "Transfer-Encoding: \x0b" "chunked\r\n", 400 },
                { "Transfer-Encoding: chunked\x0c\r\n", 400 },
                { "Transfer_Encoding: chunked\r\n", 400 },
                { "Content_Length: 5\r\n", 400 },
                { "Content-Length: 5\r\nContent-Length: 5\r\n", 400 },
                { "Content-Length: 5\r\nContent-Length: 6\r\n", 400 },
                { "Content-Length: 5, 5\r\n", 400 },
                { "Content-Length: +5\r\n", 400 },
                { "Content-Length: -1\r\n", 400 },
                { "Content-Length: 0x5\r\n", 400 },
                { "Content-Length: 5 5\r\n", 400 },
                { "Content-Length:\r\n", 400 },
                { "Content-Length: 9223372036854775808\r\n", 400 },
                { "Content-Length: 99999999999999999999\r\n", 400 },
                { "Connection: content-length\r\nContent-Length: 3\r\n", 400 },
                { "Connection: close, Transfer-Encoding\r\n", 400 },
                { "Connection: Host\r\n", 400 },
                { "Connection: a b\r\n", 400 },
                { "Connection: a;b\r\n", 400 },
                { "Upgrade: websocket\r\nConnection: Upgrade\r\n", 501 },
                { "Upgrade: h2c\r\n", 501 },
                { "Connection: upgrade\r\n", 501 },
                { "Host: h\r\n", 400 },                                /* a second Host */
                { "Host-: x\r\nHost: h\r\n", 400 },
                { "Expect: 100-continue-please\r\n", 417 },
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                snprintf(req, sizeof(req), "POST http://h/ HTTP/1.1\r\nHost: h\r\n%s\r\n",
                         cases[i].hdr);
                expect_refused(req, cases[i].status, NULL);
        }
        /* chunked is HTTP/1.1 only: a 1.0 reader takes the chunks for the next request. */
        expect_refused("POST http://h/ HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 400, "1.0");
        expect_refused("CONNECT h:443 HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello", 400, "body");
        expect_refused("CONNECT h:443 HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", 400, "body");
}

static void test_line_endings(void **state) {
        expect_refused("GET http://h/ HTTP/1.1\nHost: h\r\n\r\n", 400, "bare LF");
        expect_refused("GET http://h/ HTTP/1.1\r\nHost: h\n\r\n", 400, "bare LF");
        expect_refused("GET http://h/ HTTP/1.1\r\nHost: h\r\n\n", 400, "bare LF");
        expect_refused("GET http://h/ HTTP/1.1\n\n", 400, "bare LF");
        expect_refused("GET http://h/ HTTP/1.1\rHost: h\r\n\r\n", 400, "bare CR");
        expect_refused("GET http://h/ HTTP/1.1\r\nX: a\rb\r\nHost: h\r\n\r\n", 400, "bare CR");
        expect_refused("GET http://h/ HTTP/1.1\r\nHost: h\r\n\r\r", 400, "bare CR");
        expect_refused("\r\nGET http://h/ HTTP/1.1\r\nHost: h\r\n\r\n", 400, "request line");
        expect_refused("GET http://h/ HTTP/1.1\r\nHost: h\r\nX: a\r\n folded\r\n\r\n", 400,
                       "obs-fold");
        expect_refused("GET http://h/ HTTP/1.1\r\nHost: h\r\n\tX: a\r\n\r\n", 400, "obs-fold");
        expect_refused_n(S("GET http://h/ HTTP/1.1\r\nHost: h\r\nX: a\0b\r\n\r\n"), 400, "control");
        expect_refused_n(S("GET http://h/ HTTP/1.1\r\nHost: h\r\nX\0: a\r\n\r\n"), 400, "name");
        expect_refused_n(S("GET http://h/\0 HTTP/1.1\r\nHost: h\r\n\r\n"), 400, "request-target");
        expect_refused_n(S("GET\0 http://h/ HTTP/1.1\r\nHost: h\r\n\r\n"), 400, "method");
        expect_refused("GET http://h/ HTTP/1.1\r\nHost: h\r\nX: a\x7f\r\n\r\n", 400, "control");
        expect_refused("GET http://h/ HTTP/1.1\r\nHost: h\r\nX(y): a\r\n\r\n", 400, "name");
        expect_refused("GET http://h/ HTTP/1.1\r\nHost: h\r\n: a\r\n\r\n", 400, "empty");
        expect_refused("GET http://h/ HTTP/1.1\r\nHost: h\r\nNoColon\r\n\r\n", 400, "':'");
        /* CRLF injected in the target ends the request line early. */
        expect_refused("GET http://h/x\r\nX-Injected: 1 HTTP/1.1\r\nHost: h\r\n\r\n", 400,
                       "request line");
}

static void test_request_line(void **state) {
        static const struct {
                const char *line;
                int status;
                const char *why;
        } cases[] = {
                { "GET /path HTTP/1.1", 400, "origin-form" },
                { "GET https://h/ HTTP/1.1", 400, "use CONNECT" },
                { "GET HTTPS://h/ HTTP/1.1", 400, "use CONNECT" },
                { "GET ftp://h/ HTTP/1.1", 400, "absolute http" },
                { "GET * HTTP/1.1", 400, "absolute http" },
                { "GET http:/h/ HTTP/1.1", 400, "absolute http" },
                { "GET http://user@h/ HTTP/1.1", 400, "userinfo" },
                { "GET http://user:pw@h/ HTTP/1.1", 400, "userinfo" },
                { "GET http://h@evil/ HTTP/1.1", 400, "userinfo" },
                { "GET http://h\\@evil/ HTTP/1.1", 400, "userinfo" },
                { "GET http://h\\evil/ HTTP/1.1", 400, "invalid character" },
                { "GET http:///x HTTP/1.1", 400, "empty host" },
                { "GET http://h:/ HTTP/1.1", 400, "port" },
                { "GET http://h:0/ HTTP/1.1", 400, "port" },
                { "GET http://h:080/ HTTP/1.1", 400, "port" },
                { "GET http://h:65536/ HTTP/1.1", 400, "port" },
                { "GET http://h:+80/ HTTP/1.1", 400, "port" },
                { "GET http://h:80:80/ HTTP/1.1", 400, "port" },
                { "GET http://ho%73t/ HTTP/1.1", 400, "invalid character" },
                { "GET http://h%00.evil/ HTTP/1.1", 400, "invalid character" },
                { "GET http://[::1/ HTTP/1.1", 400, "IPv6" },
                { "GET http://[]/ HTTP/1.1", 400, "IPv6" },
                { "GET http://[fe80::1%25eth0]/ HTTP/1.1", 400, "IPv6" },
                { "GET http://[::1]x/ HTTP/1.1", 400, "invalid character" },
                { "GET http://h/a#frag HTTP/1.1", 400, "fragment" },
                { "GET http://h/a%zz HTTP/1.1", 400, "percent" },
                { "GET http://h/a% HTTP/1.1", 400, "percent" },
                { "GET http://h/a|b HTTP/1.1", 400, "invalid character" },
                { "GET http://h/a\"b HTTP/1.1", 400, "invalid character" },
                { "GET http://h/\xc3\xa9 HTTP/1.1", 400, "invalid character" },
                { "GET http://h/a\tb HTTP/1.1", 400, "invalid character" },
                { "GET http://h/a b HTTP/1.1", 400, "version" },
                { "GET  http://h/ HTTP/1.1", 400, "request line" },
                { "GET http://h/  HTTP/1.1", 400, "version" },
                { " GET http://h/ HTTP/1.1", 400, "request line" },
                { "GET http://h/", 400, "request line" },
                { "GET http://h/ ", 400, "version" },
                { "GET http://h/ HTTP/1.1 ", 400, "version" },
                { "GET http://h/ http/1.1", 400, "version" },
                { "GET http://h/ HTTP/11", 400, "version" },
                { "GET http://h/ HTTP/1.x", 400, "version" },
                { "GET http://h/ HTTP/1.2", 505, "not supported" },
                { "GET http://h/ HTTP/2.0", 505, "not supported" },
                { "GET http://h/ HTTP/0.9", 505, "not supported" },
                { "G@T http://h/ HTTP/1.1", 400, "method" },
                { "PROPFIND0123456xy http://h/ HTTP/1.1", 501, "method" },
                { "TRACE http://h/ HTTP/1.1", 405, "TRACE" },
                { "CONNECT h HTTP/1.1", 400, "host:port" },
                { "CONNECT h: HTTP/1.1", 400, "port" },
                { "CONNECT h:443/x HTTP/1.1", 400, "port" },
                { "CONNECT http://h:443 HTTP/1.1", 400, NULL },
                { "CONNECT user@h:443 HTTP/1.1", 400, "userinfo" },
                { "CONNECT :443 HTTP/1.1", 400, "empty host" },
                { "CONNECT [::1]443 HTTP/1.1", 400, "invalid character" },
                { "CONNECT h%0a:443 HTTP/1.1", 400, "invalid character" },
        };
        char req[512];
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                snprintf(req, sizeof(req), "%s\r\nHost: h\r\n\r\n", cases[i].line);
                expect_refused(req, cases[i].status, cases[i].why);
        }
        /* Percent-encoded CR LF stays encoded: harmless in a path. */
        http_req r;
        expect_ok("GET http://h/a%0D%0Ab HTTP/1.1\r\nHost: h\r\n\r\n", &r);
}

static void test_host_header(void **state) {
        expect_refused("GET http://h/ HTTP/1.1\r\n\r\n", 400, "missing Host");
        expect_refused("GET http://a.com/ HTTP/1.1\r\nHost: b.com\r\n\r\n", 400, "disagrees");
        expect_refused("GET http://a.com/ HTTP/1.1\r\nHost: a.com:8080\r\n\r\n", 400, "disagrees");
        expect_refused("GET http://a.com:81/ HTTP/1.1\r\nHost: a.com\r\n\r\n", 400, "disagrees");
        expect_refused("GET http://a.com/ HTTP/1.1\r\nHost: x@a.com\r\n\r\n", 400, "disagrees");
        expect_refused("GET http://a.com/ HTTP/1.1\r\nHost: a.com.\r\n\r\n", 400, "disagrees");
        expect_refused("GET http://a.com/ HTTP/1.1\r\nHost:\r\n\r\n", 400, "disagrees");
        expect_refused("GET http://a.com/ HTTP/1.0\r\nHost: b.com\r\n\r\n", 400, "disagrees");
        expect_refused("GET http://a.com/ HTTP/1.1\r\nHost: a.com\r\nHost: a.com\r\n\r\n", 400,
                       "repeated Host");
}

/* A valid request head of exactly `total` bytes (lines of at most 4000 bytes). */
static int make_head(char *s, size_t cap, size_t total) {
        int n = snprintf(s, cap, "GET http://h/ HTTP/1.1\r\nHost: h\r\n");
        size_t left = total - (size_t) n - 2;
        while (left > 0) {
                size_t line = left > 8000 ? 4000 : left; /* "X: " value CRLF */
                n += snprintf(s + n, cap - (size_t) n, "X: %0*d\r\n", (int) (line - 5), 0);
                left -= line;
        }
        n += snprintf(s + n, cap - (size_t) n, "\r\n");
        assert_int_equal(n, total);
        return n;
}

static void test_limits(void **state) {
        http_req r;
        size_t cap = 3 * HTTP_HEAD_MAX;
        char *s = malloc(cap);
        assert_non_null(s);
        /* Request line of exactly HTTP_LINE_MAX bytes, then one more. */
        for (size_t extra = 0; extra < 2; extra++) {
                size_t fixed = strlen("GET http://h/ HTTP/1.1");
                int n = snprintf(s, cap, "GET http://h/%0*d HTTP/1.1\r\nHost: h\r\n\r\n",
                                 (int) (HTTP_LINE_MAX - fixed + extra), 0);
                int got = req_parse_checked(s, (size_t) n, 509, &r);
                assert_int_equal(got, extra ? -HTTP_EREFUSED : n);
                assert_int_equal(r.status, extra ? 414 : 0);
        }
        /* Header line of exactly HTTP_LINE_MAX bytes, then one more. */
        for (size_t extra = 0; extra < 2; extra++) {
                int n = snprintf(s, cap, "GET http://h/ HTTP/1.1\r\nHost: h\r\nX: %0*d\r\n\r\n",
                                 (int) (HTTP_LINE_MAX - 3 + extra), 0);
                int got = req_parse_checked(s, (size_t) n, 509, &r);
                assert_int_equal(got, extra ? -HTTP_EREFUSED : n);
                assert_int_equal(r.status, extra ? 431 : 0);
        }
        /* HTTP_HEADERS_MAX header lines, then one more. */
        for (size_t extra = 0; extra < 2; extra++) {
                int n = snprintf(s, cap, "GET http://h/ HTTP/1.1\r\nHost: h\r\n");
                for (size_t i = 1; i < HTTP_HEADERS_MAX + extra; i++)
                        n += snprintf(s + n, cap - (size_t) n, "X-%zu: v\r\n", i);
                n += snprintf(s + n, cap - (size_t) n, "\r\n");
                int got = req_parse_checked(s, (size_t) n, 7, &r);
                assert_int_equal(got, extra ? -HTTP_EREFUSED : n);
                assert_int_equal(r.status, extra ? 431 : 0);
        }
        /* A head of exactly HTTP_HEAD_MAX bytes, then one more. */
        for (size_t extra = 0; extra < 2; extra++) {
                int n = make_head(s, cap, HTTP_HEAD_MAX + extra);
                int got = req_parse_checked(s, (size_t) n, 1021, &r);
                assert_int_equal(got, extra ? -HTTP_EREFUSED : n);
                assert_int_equal(r.status, extra ? 431 : 0);
        }
        /* Host of HTTP_HOST_MAX bytes, then one more; a port of six digits. */
        for (size_t extra = 0; extra < 2; extra++) {
                char host[HTTP_HOST_MAX + 2];
                memset(host, 'a', sizeof(host));
                host[HTTP_HOST_MAX + extra] = '\0';
                int k = snprintf(s, cap, "CONNECT %s:443 HTTP/1.1\r\n\r\n", host);
                int got = req_parse_checked(s, (size_t) k, 1, &r);
                assert_int_equal(got, extra ? -HTTP_EREFUSED : k);
                if (extra)
                        assert_string_equal(r.why, "host too long");
                else
                        assert_int_equal(strlen(r.host), HTTP_HOST_MAX);
        }
        expect_refused("CONNECT h:123456 HTTP/1.1\r\n\r\n", 400, "port");
        expect_refused("GET http://h:000080/ HTTP/1.1\r\nHost: h\r\n\r\n", 400, "port");
        /* An unfinished head: "need more" up to the bound, refused at it. */
        int n = make_head(s, cap, HTTP_HEAD_MAX);
        memcpy(s + n - 2, "ab", 2);
        assert_int_equal(http_req_parse(s, HTTP_HEAD_MAX - 1, &r), 0);
        assert_int_equal(http_req_parse(s, HTTP_HEAD_MAX, &r), -HTTP_EREFUSED);
        assert_int_equal(r.status, 431);
        assert_string_equal(r.why, "head too large");
        free(s);
}

/* ---- Rewrite ----------------------------------------------------------------------------- */

static void expect_rewrite(const char *req, const char *want) {
        http_req r;
        expect_ok_n(req, strlen(req), &r);
        char out[HTTP_REWRITE_MAX];
        ssize_t n = http_req_rewrite(&r, req, out, sizeof(out));
        assert_true(n > 0);
        if ((size_t) n != strlen(want) || memcmp(out, want, (size_t) n) != 0)
                print_message("got:\n%.*s\nwant:\n%s\n", (int) n, out, want);
        assert_int_equal(n, strlen(want));
        assert_memory_equal(out, want, (size_t) n);
        /* Every smaller buffer: -ENOSPC, no write past it (exact-size heap buffers). */
        for (size_t cap = 0; cap < (size_t) n; cap++) {
                char *small = malloc(cap ? cap : 1);
                assert_int_equal(http_req_rewrite(&r, req, small, cap), -ENOSPC);
                free(small);
        }
        char *exact = malloc((size_t) n);
        assert_int_equal(http_req_rewrite(&r, req, exact, (size_t) n), n);
        free(exact);
}

static void test_rewrite(void **state) {
        expect_rewrite("POST http://Example.com:8080/up?x=1 HTTP/1.1\r\n"
                       "User-Agent: t\r\n"
                       "host:   example.com:8080  \r\n"
                       "Proxy-Authorization: Basic dTpw\r\n"
                       "Proxy-Connection: keep-alive\r\n"
                       "Connection: keep-alive, X-Hop\r\n"
                       "Keep-Alive: timeout=5\r\n"
                       "X-Hop: secret\r\n"
                       "TE: trailers\r\n"
                       "Trailer: X-T\r\n"
                       "Proxy-Authenticate: x\r\n"
                       "content-length:007\r\n"
                       "Accept:*/*\r\n"
                       "X-Empty:\r\n"
                       "\r\n",
                       "POST /up?x=1 HTTP/1.1\r\n"
                       "User-Agent: t\r\n"
                       "Host: Example.com:8080\r\n"
                       "Content-Length: 7\r\n"
                       "Accept: */*\r\n"
                       "X-Empty: \r\n"
                       "Connection: keep-alive\r\n"
                       "\r\n");
        expect_rewrite("GET http://h?q HTTP/1.0\r\nAccept: x\r\n\r\n",
                       "GET /?q HTTP/1.0\r\nHost: h\r\nAccept: x\r\nConnection: close\r\n\r\n");
        expect_rewrite("GET http://h HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n",
                       "GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n");
        expect_rewrite("PUT http://[::1]:81/a HTTP/1.1\r\nTransfer-Encoding: CHUNKED\r\n"
                       "Host: [::1]:81\r\nExpect: 100-continue\r\n\r\n",
                       "PUT /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\nHost: [::1]:81\r\n"
                       "Expect: 100-continue\r\nConnection: keep-alive\r\n\r\n");
        expect_rewrite("GET http://h/ HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
                       "GET / HTTP/1.0\r\nHost: h\r\nConnection: keep-alive\r\n\r\n");
        http_req r;
        const char *c = "CONNECT h:443 HTTP/1.1\r\n\r\n";
        assert_true(http_req_parse(c, strlen(c), &r) > 0);
        char out[64];
        assert_int_equal(http_req_rewrite(&r, c, out, sizeof(out)), -EINVAL);
}

/* ---- Responses --------------------------------------------------------------------------- */

static int resp_parse_checked(const char *s, size_t n, const char *method, http_resp *out) {
        char *whole = dup_exact(s, n);
        int want = http_resp_parse(whole, n, method, out);
        bool final = false;
        for (size_t p = 0; p <= n; p++) {
                char *b = dup_exact(s, p);
                http_resp r;
                int got = http_resp_parse(b, p, method, &r);
                free(b);
                if (got == 0) {
                        assert_false(final);
                        continue;
                }
                final = true;
                assert_int_equal(got, want);
                assert_int_equal(r.status, out->status);
                assert_ptr_equal(r.why, out->why);
                assert_int_equal(r.code, out->code);
                assert_int_equal(r.framing, out->framing);
                assert_int_equal(r.content_length, out->content_length);
                assert_int_equal(r.reusable, out->reusable);
                assert_int_equal(r.interim, out->interim);
        }
        free(whole);
        return want;
}

static void expect_resp(const char *s, const char *method, int code, http_framing framing,
                        uint64_t cl, bool reusable) {
        http_resp r;
        int got = resp_parse_checked(s, strlen(s), method, &r);
        if (got <= 0)
                print_message("got %d (%s) for:\n%s\n", got, r.why ? r.why : "", s);
        assert_int_equal(got, strlen(s));
        assert_int_equal(r.code, code);
        assert_int_equal(r.framing, framing);
        assert_int_equal(r.content_length, cl);
        assert_int_equal(r.reusable, reusable);
        assert_int_equal(r.interim, code < 200);
}

static void expect_resp_refused(const char *s, const char *method, const char *why_part) {
        http_resp r;
        int got = resp_parse_checked(s, strlen(s), method, &r);
        if (got != -HTTP_EREFUSED)
                print_message("got %d for:\n%s\n", got, s);
        assert_int_equal(got, -HTTP_EREFUSED);
        assert_int_equal(r.status, 502);
        assert_true(!why_part || strstr(r.why, why_part));
}

static void test_response(void **state) {
        expect_resp("HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n", "GET", 200,
                    HTTP_FRAMING_LENGTH, 12, true);
        expect_resp("HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n", "GET", 200, HTTP_FRAMING_LENGTH,
                    0, true);
        expect_resp("HTTP/1.1 200 \r\nTransfer-Encoding: chunked\r\n\r\n", "POST", 200,
                    HTTP_FRAMING_CHUNKED, 0, true);
        expect_resp("HTTP/1.1 200 OK\r\n\r\n", "GET", 200, HTTP_FRAMING_CLOSE, 0, false);
        expect_resp("HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n", "HEAD", 200,
                    HTTP_FRAMING_NONE, 0, true);
        expect_resp("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", "HEAD", 200,
                    HTTP_FRAMING_NONE, 0, true);
        expect_resp("HTTP/1.1 204 No Content\r\n\r\n", "DELETE", 204, HTTP_FRAMING_NONE, 0, true);
        expect_resp("HTTP/1.1 304 Not Modified\r\nContent-Length: 99\r\n\r\n", "GET", 304,
                    HTTP_FRAMING_NONE, 0, true);
        expect_resp("HTTP/1.1 404 Not Found\r\nContent-Length: 3\r\nConnection: close\r\n\r\n",
                    "GET", 404, HTTP_FRAMING_LENGTH, 3, false);
        expect_resp("HTTP/1.0 200 OK\r\nContent-Length: 3\r\n\r\n", "GET", 200,
                    HTTP_FRAMING_LENGTH, 3, false);
        expect_resp("HTTP/1.0 200 OK\r\nContent-Length: 3\r\nConnection: keep-alive\r\n\r\n",
                    "GET", 200, HTTP_FRAMING_LENGTH, 3, true);
        expect_resp("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\n\r\n", "GET", 200,
                    HTTP_FRAMING_CLOSE, 0, false);
        expect_resp("HTTP/1.1 599 x \xff\tz\r\nContent-Length: 1\r\n\r\n", "GET", 599,
                    HTTP_FRAMING_LENGTH, 1, true);
        expect_resp("HTTP/1.1 103 Early Hints\r\nLink: </s.css>\r\n\r\n", "GET", 103,
                    HTTP_FRAMING_NONE, 0, false);

        /* 100 Continue: an interim head, then the final one right after it. */
        const char *two = "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok";
        http_resp r;
        int n = http_resp_parse(two, strlen(two), "PUT", &r);
        assert_int_equal(n, 25);
        assert_true(r.interim);
        assert_int_equal(r.framing, HTTP_FRAMING_NONE);
        int m = http_resp_parse(two + n, strlen(two) - (size_t) n, "PUT", &r);
        assert_int_equal(m, strlen(two) - (size_t) n - 2);
        assert_false(r.interim);
        assert_int_equal(r.code, 201);
        assert_int_equal(r.content_length, 2);
}

static void test_response_refused(void **state) {
        static const struct {
                const char *head;
                const char *why;
        } cases[] = {
                { "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n", "101" },
                { "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n", "both" },
                { "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", "chunked" },
                { "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", "repeated" },
                { "HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", "1.0" },
                { "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n", "repeated" },
                { "HTTP/1.1 200 OK\r\nContent-Length: 1x\r\n\r\n", "Content-Length" },
                { "HTTP/1.1 204 OK\r\nContent-Length: 0\r\n\r\n", "without a body" },
                { "HTTP/1.1 100 Continue\r\nTransfer-Encoding: chunked\r\n\r\n", "without a body" },
                { "HTTP/1.1 200 OK\r\nConnection: a b\r\n\r\n", "Connection" },
                { "HTTP/1.1 200 OK\nContent-Length: 1\r\n\r\n", "bare LF" },
                { "HTTP/1.1 200 OK\r\nX: a\r\n b\r\n\r\n", "obs-fold" },
                { "HTTP/1.1 200 OK\r\nX : a\r\n\r\n", "whitespace" },
                { "HTTP/1.1 200 O\x01K\r\n\r\n", "reason" },
                { "HTTP/1.1 099 x\r\n\r\n", "range" },
                { "HTTP/1.1 600 x\r\n\r\n", "range" },
                { "HTTP/1.1 2x0 x\r\n\r\n", "status code" },
                { "HTTP/1.1 200x\r\n\r\n", "status line" },
                { "HTTP/1.1  200 OK\r\n\r\n", "status" },
                { "HTTP/2 200 OK\r\n\r\n", "status" },
                { "HTTP/2.0 200 OK\r\n\r\n", "version" },
                { "HTTP/1.1 20\r\n\r\n", "status line" },
                { "ICY 200 OK\r\n\r\n", "status line" },
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                expect_resp_refused(cases[i].head, "GET", cases[i].why);
        expect_resp_refused("HTTP/1.1 200 Connection established\r\n\r\n", "CONNECT", "CONNECT");
        /* Over the response bounds. */
        size_t cap = HTTP_RESP_HEAD_MAX + 64;
        char *s = malloc(cap);
        assert_non_null(s);
        int n = snprintf(s, cap, "HTTP/1.1 200 OK\r\n");
        for (size_t i = 0; i <= HTTP_HEADERS_MAX; i++)
                n += snprintf(s + n, cap - (size_t) n, "X: %zu\r\n", i);
        snprintf(s + n, cap - (size_t) n, "\r\n");
        expect_resp_refused(s, "GET", "too many");
        memset(s, 'a', HTTP_RESP_HEAD_MAX);
        memcpy(s, "HTTP/1.1 200 OK\r\n", 17);
        for (size_t i = 17; i + 8000 < HTTP_RESP_HEAD_MAX; i += 8000)
                memcpy(s + i, "X: ", 3), memcpy(s + i + 7990, "\r\n", 2);
        http_resp r;
        assert_int_equal(http_resp_parse(s, HTTP_RESP_HEAD_MAX - 1, "GET", &r), 0);
        assert_int_equal(http_resp_parse(s, HTTP_RESP_HEAD_MAX, "GET", &r), -HTTP_EREFUSED);
        assert_string_equal(r.why, "head too large");
        free(s);
}

/* ---- Body framing ------------------------------------------------------------------------ */

typedef struct body_result {
        ssize_t consumed; /* total bytes taken, or the error */
        bool done;
        const char *why;
} body_result;

/* Feeds s[0..n) in pieces of `piece` bytes (0: all at once). */
static body_result feed_pieces(http_framing f, uint64_t cl, const char *s, size_t n, size_t piece) {
        http_body b;
        http_body_init(&b, f, cl);
        body_result res = { 0 };
        for (size_t off = 0; off < n;) {
                size_t k = piece && piece < n - off ? piece : n - off;
                char *chunk = dup_exact(s + off, k);
                ssize_t r = http_body_feed(&b, chunk, k);
                free(chunk);
                if (r < 0) {
                        res.consumed = r;
                        res.why = b.why;
                        assert_int_equal(http_body_feed(&b, "x", 1), r); /* sticky */
                        return res;
                }
                assert_true((size_t) r <= k);
                res.consumed += r;
                if (b.done) {
                        assert_int_equal(http_body_feed(&b, "x", 1), 0);
                        break;
                }
                assert_int_equal(r, k); /* fewer bytes only at the end */
                off += k;
        }
        res.done = b.done;
        return res;
}

/* One piece, byte by byte, and every two-piece split agree. */
static body_result body_checked(http_framing f, uint64_t cl, const char *s, size_t n) {
        body_result whole = feed_pieces(f, cl, s, n, 0);
        for (size_t piece = 1; piece <= 3; piece++) {
                body_result r = feed_pieces(f, cl, s, n, piece);
                assert_int_equal(r.consumed, whole.consumed);
                assert_int_equal(r.done, whole.done);
                assert_ptr_equal(r.why, whole.why);
        }
        for (size_t cut = 1; cut < n; cut++) {
                http_body b;
                http_body_init(&b, f, cl);
                ssize_t a = http_body_feed(&b, s, cut);
                ssize_t total = a;
                if (a >= 0 && !b.done) {
                        ssize_t c = http_body_feed(&b, s + cut, n - cut);
                        total = c < 0 ? c : a + c;
                }
                assert_int_equal(total, whole.consumed);
        }
        return whole;
}

static void expect_chunked_n(const char *s, size_t n, ssize_t consumed) {
        body_result r = body_checked(HTTP_FRAMING_CHUNKED, 0, s, n);
        if (r.consumed != consumed)
                print_message("consumed %zd (%s), want %zd, for:\n%.*s\n", r.consumed,
                              r.why ? r.why : "", consumed, (int) n, s);
        assert_int_equal(r.consumed, consumed);
        assert_true(r.done);
}

static void expect_chunked(const char *s, size_t n) {
        expect_chunked_n(s, n, (ssize_t) n);
}

static void expect_chunked_bad(const char *s, size_t n, const char *why_part) {
        body_result r = body_checked(HTTP_FRAMING_CHUNKED, 0, s, n);
        if (r.consumed != -EBADMSG || !strstr(r.why, why_part))
                print_message("got %zd (%s) for:\n%.*s\n", r.consumed, r.why ? r.why : "",
                              (int) n, s);
        assert_int_equal(r.consumed, -EBADMSG);
        assert_non_null(strstr(r.why, why_part));
}

static void test_body_length(void **state) {
        body_result r = body_checked(HTTP_FRAMING_LENGTH, 5, S("helloGET next"));
        assert_int_equal(r.consumed, 5);
        assert_true(r.done);
        r = body_checked(HTTP_FRAMING_LENGTH, 5, S("hel"));
        assert_int_equal(r.consumed, 3);
        assert_false(r.done);
        r = body_checked(HTTP_FRAMING_LENGTH, 0, S("next"));
        assert_int_equal(r.consumed, 0);
        assert_true(r.done);
        r = body_checked(HTTP_FRAMING_NONE, 0, S("next"));
        assert_int_equal(r.consumed, 0);
        assert_true(r.done);
        r = body_checked(HTTP_FRAMING_CLOSE, 0, S("everything\r\n0\r\n\r\n"));
        assert_int_equal(r.consumed, 17);
        assert_false(r.done);
        http_body b;
        http_body_init(&b, HTTP_FRAMING_LENGTH, UINT64_MAX);
        assert_int_equal(http_body_feed(&b, "abc", 3), 3);
        assert_int_equal(b.remaining, UINT64_MAX - 3);
}

static void test_body_chunked(void **state) {
        expect_chunked_n(S("5\r\nhello\r\n0\r\n\r\nGET next"), 15);
        expect_chunked(S("0\r\n\r\n"));
        expect_chunked(S("A\r\n0123456789\r\n1\r\n\r\r\n0\r\n\r\n"));
        expect_chunked(S("a\r\n\0\r\n\n\r\x01\x02\x03\x04\x05\r\n0\r\n\r\n"));
        expect_chunked(S("0005\r\nhello\r\n000\r\n\r\n"));
        expect_chunked(S("5;name=value;x=\"q s\"\r\nhello\r\n0;last\r\n\r\n"));
        expect_chunked(S("2\r\nok\r\n0\r\nX-Trailer: a\r\nY:\r\n\r\n"));
        expect_chunked(S("0\r\nX: \xc3\xa9\t\r\n\r\n"));

        expect_chunked_bad(S("g\r\n"), "not hex");
        expect_chunked_bad(S("\r\n"), "not hex");
        expect_chunked_bad(S(";x\r\n"), "not hex");
        expect_chunked_bad(S(" 5\r\n"), "not hex");
        expect_chunked_bad(S("-5\r\n"), "not hex");
        expect_chunked_bad(S("0x5\r\n"), "invalid character");
        expect_chunked_bad(S("5 \r\nhello\r\n0\r\n\r\n"), "whitespace");
        expect_chunked_bad(S("5\t;x\r\nhello\r\n0\r\n\r\n"), "whitespace");
        expect_chunked_bad(S("5\nhello\r\n0\r\n\r\n"), "bare LF");
        expect_chunked_bad(S("5;x\nhello\r\n0\r\n\r\n"), "bare LF");
        expect_chunked_bad(S("5\rhello\r\n0\r\n\r\n"), "bare CR");
        expect_chunked_bad(S("5;a\x01\r\nhello\r\n0\r\n\r\n"), "control");
        expect_chunked_bad(S("5;a\0\r\nhello\r\n0\r\n\r\n"), "control");
        expect_chunked_bad(S("5\r\nhelloX\r\n0\r\n\r\n"), "missing CRLF");
        expect_chunked_bad(S("5\r\nhello\n0\r\n\r\n"), "missing CRLF");
        expect_chunked_bad(S("5\r\nhello\rX0\r\n\r\n"), "missing CRLF");
        expect_chunked_bad(S("5\r\nhell\r\n0\r\n\r\n"), "missing CRLF");
        expect_chunked_bad(S("00000000000000005\r\n"), "too large");
        expect_chunked_bad(S("8000000000000000\r\n"), "too large");
        expect_chunked_bad(S("ffffffffffffffff\r\n"), "too large");
        expect_chunked_bad(S("10000000000000000\r\n"), "too large");
        expect_chunked_bad(S("0\r\n X: a\r\n\r\n"), "obs-fold");
        expect_chunked_bad(S("0\r\nX\r\n\r\n"), "trailer field name");
        expect_chunked_bad(S("0\r\nX : a\r\n\r\n"), "trailer field name");
        expect_chunked_bad(S("0\r\n:a\r\n\r\n"), "trailer field line");
        expect_chunked_bad(S("0\r\nX: a\nY: b\r\n\r\n"), "control");
        expect_chunked_bad(S("0\r\nX: a\rY\r\n\r\n"), "bare CR");
        expect_chunked_bad(S("0\r\nX: a\0\r\n\r\n"), "control");
        expect_chunked_bad(S("0\r\n\n"), "trailer field line");
        expect_chunked_bad(S("0\r\n\r\r"), "bare CR");

        /* A size just within the bounds parses; its data is simply awaited. */
        body_result r = body_checked(HTTP_FRAMING_CHUNKED, 0, S("7fffffffffffffff\r\nabc"));
        assert_int_equal(r.consumed, 21);
        assert_false(r.done);

        /* Chunk-size line bound: extensions up to HTTP_CHUNK_LINE_MAX in all, then refused. */
        char *s = malloc(2 * HTTP_TRAILER_MAX);
        assert_non_null(s);
        for (size_t extra = 0; extra < 2; extra++) {
                memset(s, 'e', HTTP_CHUNK_LINE_MAX + extra);
                memcpy(s, "1;", 2);
                memcpy(s + HTTP_CHUNK_LINE_MAX + extra, "\r\nx\r\n0\r\n\r\n", 10);
                size_t n = HTTP_CHUNK_LINE_MAX + extra + 10;
                if (extra)
                        expect_chunked_bad(s, n, "line too long");
                else
                        expect_chunked(s, n);
        }
        /* Trailer section bound (the final CRLF included). */
        for (size_t extra = 0; extra < 2; extra++) {
                size_t t = HTTP_TRAILER_MAX + extra; /* trailer bytes */
                memcpy(s, "0\r\nX: ", 6);
                memset(s + 6, 'v', t - 4 - 3);
                memcpy(s + 3 + t - 4, "\r\n\r\n", 4);
                size_t n = 3 + t;
                if (extra)
                        expect_chunked_bad(s, n, "trailer section too large");
                else
                        expect_chunked(s, n);
        }
        free(s);
}

/* http_body_feed_data(): the data bytes of a body, framing removed, the same in one piece and
 * byte by byte (the git push gateway reads a push's commands through it). */
static void collect(void *ctx, const char *d, size_t n) {
        char *out = ctx;
        strncat(out, d, n);
}

static void test_body_data(void **state) {
        (void) state;
        static const char chunked[] = "5\r\nhello\r\n1;x=y\r\n \r\n5\r\nworld\r\n0\r\nT: v\r\n\r\nNEXT";
        for (int split = 0; split < 2; split++) {
                char out[64] = "";
                http_body b;
                http_body_init(&b, HTTP_FRAMING_CHUNKED, 0);
                size_t used = 0, n = sizeof(chunked) - 1;
                if (split)
                        for (size_t i = 0; i < n && !b.done; i++)
                                used += (size_t) http_body_feed_data(&b, chunked + i, 1, collect, out);
                else
                        used = (size_t) http_body_feed_data(&b, chunked, n, collect, out);
                assert_true(b.done);
                assert_int_equal(used, n - 4);
                assert_string_equal(out, "hello world");
        }
        char out[64] = "";
        http_body b;
        http_body_init(&b, HTTP_FRAMING_LENGTH, 5);
        assert_int_equal(http_body_feed_data(&b, "abcdefg", 7, collect, out), 5);
        assert_string_equal(out, "abcde");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_body_data),
                cmocka_unit_test(test_forward),       cmocka_unit_test(test_connect),
                cmocka_unit_test(test_keep_alive),    cmocka_unit_test(test_credentials),
                cmocka_unit_test(test_smuggling),     cmocka_unit_test(test_line_endings),
                cmocka_unit_test(test_request_line),  cmocka_unit_test(test_host_header),
                cmocka_unit_test(test_limits),        cmocka_unit_test(test_rewrite),
                cmocka_unit_test(test_response),      cmocka_unit_test(test_response_refused),
                cmocka_unit_test(test_body_length),   cmocka_unit_test(test_body_chunked),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
