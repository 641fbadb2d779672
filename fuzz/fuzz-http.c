/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target for the proxy's HTTP parsers (src/net/http.c, src/net/http-body.c): the request
 * head parser, the upstream rewrite, the response head parser and the body framer, all on the
 * same bytes. Oracles beyond "no crash, no sanitizer report":
 *   - consumed ≤ len, "need more" only below the head bound, a refusal always has its status;
 *   - incremental == one-shot: every prefix (sampled under libFuzzer) parses to "need more" until
 *     the verdict and to the same verdict after it; each prefix lives in a buffer of exactly its
 *     size, so a read past len is an ASan report;
 *   - the rewrite fits in HTTP_REWRITE_MAX, is one head (CRLF only, no NUL, a single CRLF CRLF,
 *     at its end), and, put back into absolute-form, parses to the same target and framing;
 *   - the body framer gives the same counts, end and fault for one piece, single bytes and
 *     random pieces.
 * Built like fuzz-policy: with libFuzzer (-DCORDON_LIBFUZZER), and as a plain program replaying
 * the seed corpus in the unit suite, where the file name states the expectation:
 * "req-ok-*" parses, "req-NNN-*" is refused with status NNN, "resp-ok-*" / "resp-bad-*" (answering
 * GET), "chunked-ok-*" / "chunked-bad-*" (the framer on the whole file). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/http-body.h"
#include "net/http.h"
#include "util/util.h"

#include "replay.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

__attribute__((noreturn)) static void broken(const char *what) {
        fprintf(stderr, "fuzz-http: broken promise: %s\n", what);
        abort();
}

#define CHECK(cond)                                                                               \
        do {                                                                                      \
                if (!(cond))                                                                      \
                        broken(#cond);                                                            \
        } while (0)

static char *copy(const char *s, size_t n) {
        char *p = malloc(n ? n : 1);
        if (!p)
                broken("out of memory");
        memcpy(p, s, n);
        return p;
}

/* A deterministic generator for sampled prefixes and splits. */
static uint64_t rng_next(uint64_t *s) {
        *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
        return *s >> 33;
}

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
        const uint8_t *b = p;
        for (size_t i = 0; i < n; i++)
                h = (h ^ b[i]) * 1099511628211ULL;
        return h;
}

/* What a parse produced, reduced to a comparable value. */
typedef struct sig {
        int r;
        uint64_t h;
} sig;

typedef sig (*sig_fn)(const char *buf, size_t len, const void *arg);

static sig req_sig(const char *buf, size_t len, const void *arg) {
        http_req *q = malloc(sizeof(*q));
        if (!q)
                broken("out of memory");
        sig s = { .r = http_req_parse(buf, len, q), .h = 14695981039346656037ULL };
        s.h = fnv(s.h, &q->status, sizeof(q->status));
        s.h = fnv(s.h, q->why ? q->why : "", q->why ? strlen(q->why) : 0);
        s.h = fnv(s.h, q->host, strlen(q->host));
        s.h = fnv(s.h, q->method, strlen(q->method));
        uint64_t f[] = { q->kind, q->port, q->version_minor, q->keep_alive, q->has_credentials,
                         q->framing, q->content_length, q->n_headers, q->head_len,
                         q->path.off, q->path.len, q->authority.off, q->authority.len };
        s.h = fnv(s.h, f, sizeof(f));
        s.h = fnv(s.h, q->headers, q->n_headers * sizeof(q->headers[0]));
        free(q);
        return s;
}

static sig resp_sig(const char *buf, size_t len, const void *arg) {
        http_resp p;
        sig s = { .r = http_resp_parse(buf, len, arg, &p), .h = 14695981039346656037ULL };
        s.h = fnv(s.h, p.why ? p.why : "", p.why ? strlen(p.why) : 0);
        uint64_t f[] = { p.status, p.code, p.version_minor, p.interim, p.framing,
                         p.content_length, p.reusable, p.head_len };
        s.h = fnv(s.h, f, sizeof(f));
        return s;
}

/* Parses data[0..p) from a buffer of exactly p bytes: true when it reached a verdict, which
 * must then be the whole input's. */
static bool check_prefix(const char *data, size_t p, sig_fn fn, const void *arg, sig whole) {
        char *b = copy(data, p);
        sig s = fn(b, p, arg);
        free(b);
        if (s.r == 0)
                return false;
        if (s.r != whole.r || s.h != whole.h)
                broken("a prefix reached another verdict than the whole input");
        return true;
}

/* Prefixes give 0 before the verdict and the whole-input verdict from it on: every undecided
 * prefix is shorter than every decided one. Under libFuzzer a sample of prefixes is parsed. */
static void check_prefixes(const char *data, size_t len, sig_fn fn, const void *arg, sig whole) {
        size_t longest_open = 0, shortest_decided = SIZE_MAX;
        uint64_t seed = len;
#ifdef CORDON_LIBFUZZER
        size_t n = len <= 64 ? len + 1 : 24;
#else
        size_t n = len + 1;
#endif
        for (size_t i = 0; i < n; i++) {
                size_t p = n == len + 1 ? i : (size_t) (rng_next(&seed) % (len + 1));
                if (check_prefix(data, p, fn, arg, whole)) {
                        if (p < shortest_decided)
                                shortest_decided = p;
                } else if (p > longest_open)
                        longest_open = p;
        }
        if (shortest_decided != SIZE_MAX && longest_open >= shortest_decided)
                broken("need more after a verdict");
        CHECK(whole.r != 0 || shortest_decided == SIZE_MAX);
        /* A head ends exactly at the consumed count, not a byte earlier. */
        if (whole.r > 0)
                CHECK(!check_prefix(data, (size_t) whole.r - 1, fn, arg, whole));
}

/* ---- Body framer ------------------------------------------------------------------------- */

typedef struct body_out {
        ssize_t consumed;
        bool done;
        const char *why;
} body_out;

/* piece 0: one piece; 1: single bytes; otherwise random sizes up to piece. */
static body_out feed(http_framing f, uint64_t cl, const char *buf, size_t len, size_t piece,
                     uint64_t *seed) {
        http_body b;
        http_body_init(&b, f, cl);
        body_out o = { 0 };
        for (size_t off = 0; off < len && !b.done;) {
                size_t k = len - off;
                if (piece == 1)
                        k = 1;
                else if (piece > 1)
                        k = 1 + (size_t) (rng_next(seed) % piece);
                if (k > len - off)
                        k = len - off;
                char *c = copy(buf + off, k);
                ssize_t r = http_body_feed(&b, c, k);
                free(c);
                if (r < 0) {
                        CHECK(r == -EBADMSG && b.why);
                        CHECK(http_body_feed(&b, buf, len) == r);
                        return (body_out){ .consumed = r, .why = b.why };
                }
                CHECK((size_t) r <= k);
                CHECK(b.done || (size_t) r == k);
                o.consumed += r;
                off += k;
        }
        o.done = b.done;
        if (b.done)
                CHECK(http_body_feed(&b, "x", 1) == 0);
        return o;
}

static body_out check_body(http_framing f, uint64_t cl, const char *buf, size_t len) {
        uint64_t seed = len ^ cl;
        body_out one = feed(f, cl, buf, len, 0, &seed);
        CHECK(one.consumed <= (ssize_t) len);
        CHECK(f != HTTP_FRAMING_CLOSE || one.consumed == (ssize_t) len);
        size_t pieces[] = { 1, 7, 300 };
        for (size_t i = 0; i < sizeof(pieces) / sizeof(pieces[0]); i++) {
                body_out o = feed(f, cl, buf, len, pieces[i], &seed);
                if (o.consumed != one.consumed || o.done != one.done || o.why != one.why)
                        broken("the framer depends on how the body was split");
        }
        return one;
}

/* ---- Request, rewrite ---------------------------------------------------------------------- */

/* One head: CRLF line ends only, no NUL, a single empty line, at the end. */
static void check_one_head(const char *h, size_t n) {
        CHECK(n >= 4 && memcmp(h + n - 4, "\r\n\r\n", 4) == 0);
        for (size_t i = 0; i < n; i++) {
                CHECK(h[i] != '\0');
                if (h[i] == '\r')
                        CHECK(i + 1 < n && h[i + 1] == '\n');
                if (h[i] == '\n')
                        CHECK(i > 0 && h[i - 1] == '\r');
                if (i + 4 < n)
                        CHECK(memcmp(h + i, "\r\n\r\n", 4) != 0);
        }
}

/* The rewritten head with its request line put back into absolute-form parses to the same
 * destination and framing (or exceeds a bound only because of the added lines). */
static void check_rewrite_reparses(const http_req *q, const char *buf, const char *rw, size_t n) {
        const char *eol = memchr(rw, '\n', n);
        const char *sp = memchr(rw, ' ', n);
        if (!eol || !sp || sp > eol)
                broken("rewrite request line");
        const char *path = sp + 1;
        const char *vers = memchr(path, ' ', (size_t) (eol - path));
        size_t cap = n + q->authority.len + 16;
        char *again = malloc(cap);
        if (!again || !vers)
                broken("rewrite request line");
        int k = snprintf(again, cap, "%s http://%.*s%.*s", q->method, (int) q->authority.len,
                         buf + q->authority.off, (int) (vers - path), path);
        memcpy(again + k, vers, (size_t) (rw + n - vers));
        size_t len = (size_t) k + (size_t) (rw + n - vers);
        http_req *p = malloc(sizeof(*p));
        if (!p)
                broken("out of memory");
        int r = http_req_parse(again, len, p);
        if (r < 0)
                CHECK(p->status == 431 || p->status == 414);
        else {
                CHECK((size_t) r == len);
                CHECK(strcmp(p->host, q->host) == 0 && p->port == q->port);
                CHECK(p->framing == q->framing && p->content_length == q->content_length);
                CHECK(p->keep_alive == q->keep_alive && !p->has_credentials);
                CHECK(p->expect_continue == q->expect_continue);
        }
        free(p);
        free(again);
}

static void check_rewrite(const http_req *q, const char *buf) {
        char *out = malloc(HTTP_REWRITE_MAX);
        if (!out)
                broken("out of memory");
        ssize_t n = http_req_rewrite(q, buf, out, HTTP_REWRITE_MAX);
        if (n < 0)
                broken("the rewrite does not fit HTTP_REWRITE_MAX");
        check_one_head(out, (size_t) n);
        check_rewrite_reparses(q, buf, out, (size_t) n);
        char *small = malloc((size_t) n);
        if (!small)
                broken("out of memory");
        CHECK(http_req_rewrite(q, buf, small, (size_t) n) == n);
        CHECK(memcmp(small, out, (size_t) n) == 0);
        CHECK(http_req_rewrite(q, buf, small, (size_t) n - 1) == -ENOSPC);
        free(small);
        free(out);
}

static void check_req_fields(const http_req *q, size_t len, int r) {
        CHECK(r == -HTTP_EREFUSED || (r >= 0 && (size_t) r <= len));
        if (r == 0) {
                CHECK(len < HTTP_HEAD_MAX && q->why == NULL);
                return;
        }
        if (r < 0) {
                static const int ok[] = { 400, 405, 414, 417, 431, 501, 505 };
                bool known = false;
                for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
                        known |= q->status == ok[i];
                CHECK(known && q->why != NULL);
                return;
        }
        CHECK(q->status == 0 && !q->why && (size_t) r == q->head_len && r <= HTTP_HEAD_MAX);
        CHECK(q->port != 0 && strlen(q->host) > 0 && strlen(q->host) <= HTTP_HOST_MAX);
        CHECK(q->n_headers <= HTTP_HEADERS_MAX && q->version_minor <= 1);
        CHECK(q->framing != HTTP_FRAMING_CLOSE);
        CHECK(q->path.off + q->path.len <= (size_t) r && q->authority.off + q->authority.len <= (size_t) r);
        CHECK(q->user_len <= HTTP_CRED_MAX && q->pass_len <= HTTP_CRED_MAX);
        for (size_t i = 0; i < q->n_headers; i++)
                CHECK(q->headers[i].value.off + q->headers[i].value.len <= (size_t) r);
}

/* Returns the request parser's verdict. */
static int run_request(const char *data, size_t len) {
        http_req *q = malloc(sizeof(*q));
        if (!q)
                broken("out of memory");
        char *buf = copy(data, len);
        int r = http_req_parse(buf, len, q);
        check_req_fields(q, len, r);
        check_prefixes(data, len, req_sig, NULL, req_sig(buf, len, NULL));
        if (r > 0 && q->kind == HTTP_KIND_FORWARD)
                check_rewrite(q, buf);
        if (r > 0)
                (void) check_body(q->framing, q->content_length, buf + r, len - (size_t) r);
        free(buf);
        free(q);
        return r;
}

/* ---- Response -------------------------------------------------------------------------- */

/* Returns the verdict on the first head. Interim heads are followed by the next one. */
static int run_response(const char *data, size_t len, const char *method) {
        int first = 0;
        size_t off = 0;
        for (int i = 0; i < 4 && off <= len; i++) {
                char *buf = copy(data + off, len - off);
                http_resp p;
                int r = http_resp_parse(buf, len - off, method, &p);
                check_prefixes(data + off, len - off, resp_sig, method,
                               resp_sig(buf, len - off, method));
                free(buf);
                if (i == 0)
                        first = r;
                CHECK(r == -HTTP_EREFUSED || (r >= 0 && (size_t) r <= len - off));
                if (r <= 0) {
                        CHECK(r == 0 ? len - off < HTTP_RESP_HEAD_MAX && !p.why
                                     : p.status == 502 && p.why);
                        break;
                }
                CHECK(p.code >= 100 && p.code <= 599 && p.interim == (p.code < 200));
                CHECK(strcmp(method, "HEAD") != 0 || p.framing == HTTP_FRAMING_NONE);
                CHECK(p.framing != HTTP_FRAMING_CLOSE || !p.reusable);
                off += (size_t) r;
                if (!p.interim) {
                        (void) check_body(p.framing, p.content_length, data + off, len - off);
                        break;
                }
        }
        return first;
}

static body_out run_chunked(const char *data, size_t len) {
        return check_body(HTTP_FRAMING_CHUNKED, 0, data, len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        const char *d = (const char *) data;
        (void) run_request(d, size);
        (void) run_response(d, size, "GET");
        (void) run_response(d, size, "HEAD");
        (void) run_chunked(d, size);
        return 0;
}

#ifndef CORDON_LIBFUZZER
/* Whether the seed is what its name states (1 when it states nothing). */
static int seed_ok(const char *name, const char *buf, size_t len) {
        if (strncmp(name, "req-ok-", 7) == 0)
                return run_request(buf, len) > 0;
        if (strncmp(name, "req-", 4) == 0 && strlen(name) > 8 && name[7] == '-') {
                http_req *q = malloc(sizeof(*q));
                if (!q)
                        broken("out of memory");
                int r = http_req_parse(buf, len, q), status = q->status;
                free(q);
                return r < 0 && status == atoi(name + 4);
        }
        if (strncmp(name, "resp-ok-", 8) == 0)
                return run_response(buf, len, "GET") > 0;
        if (strncmp(name, "resp-bad-", 9) == 0)
                return run_response(buf, len, "GET") < 0;
        if (strncmp(name, "chunked-ok-", 11) == 0)
                return run_chunked(buf, len).done;
        if (strncmp(name, "chunked-bad-", 12) == 0)
                return run_chunked(buf, len).consumed < 0;
        return 1;
}

bool fuzz_replay_seed(const char *name, const uint8_t *data, size_t size) {
        (void) LLVMFuzzerTestOneInput(data, size);
        return seed_ok(name, (const char *) data, size);
}
#endif
