/* SPDX-License-Identifier: Apache-2.0 */
/* Credentials in requests and responses (cred-rewrite.h says what and why). */
#include "net/cred-rewrite.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "net/req-rules.h"
#include "util/base64.h"

/* ---- the set ---------------------------------------------------------------------------- */

int cred_set_new(cred_set **out, const policy_req *q) {
        *out = NULL;
        if (q->n_creds == 0)
                return 0;
        cred_set *s = calloc(1, sizeof(*s));
        if (!s || !(s->v = calloc(q->n_creds, sizeof(*s->v)))) {
                free(s);
                return -ENOMEM;
        }
        for (; s->n < q->n_creds; s->n++) {
                const policy_cred *pc = &q->creds[s->n];
                cred *c = &s->v[s->n];
                *c = (cred){ .name = pc->env, .secret = pc->secret ? pc->secret : pc->broker,
                             .brokered = !pc->secret, .header = pc->header,
                             .format = pc->format, .basic = pc->basic };
                if (!(c->hosts = calloc(pc->hosts.n, sizeof(*c->hosts)))) {
                        s->n++;
                        cred_set_free(s);
                        return -ENOMEM;
                }
                for (; c->n_hosts < pc->hosts.n; c->n_hosts++)
                        if (egress_pattern_parse(pc->hosts.v[c->n_hosts], &c->hosts[c->n_hosts])) {
                                s->n++;
                                cred_set_free(s);
                                return -EINVAL;
                        }
        }
        *out = s;
        return 0;
}

void cred_set_free(cred_set *s) {
        if (!s)
                return;
        for (size_t i = 0; i < s->n; i++) {
                if (s->v[i].value) {
                        explicit_bzero(s->v[i].value, s->v[i].value_len);
                        free(s->v[i].value);
                }
                free(s->v[i].hosts);
        }
        explicit_bzero(s->v, s->n * sizeof(*s->v));
        free(s->v);
        free(s);
}

/* Visible ASCII and obs-text only: no space (a request line splits on it), no control byte (a
 * CR or LF would end the header and let the value write headers of its own). */
static bool value_ok(const char *v, size_t len) {
        if (len == 0 || len > CRED_VALUE_MAX)
                return false;
        for (size_t i = 0; i < len; i++) {
                unsigned char ch = (unsigned char) v[i];
                if (ch <= 0x20 || ch == 0x7f)
                        return false;
        }
        return true;
}

int cred_set_value(cred_set *s, size_t i, const uint8_t random[16], const char *value,
                   size_t len) {
        static const char hex[] = "0123456789abcdef";
        if (i >= s->n || !value_ok(value, len))
                return -EINVAL;
        cred *c = &s->v[i];
        char *v = malloc(len + 1);
        if (!v)
                return -ENOMEM;
        memcpy(v, value, len);
        v[len] = '\0';
        c->value = v;
        c->value_len = len;
        memcpy(c->placeholder, CRED_PLACEHOLDER_PREFIX, sizeof(CRED_PLACEHOLDER_PREFIX) - 1);
        char *p = c->placeholder + sizeof(CRED_PLACEHOLDER_PREFIX) - 1;
        for (size_t k = 0; k < 16; k++) {
                *p++ = hex[random[k] >> 4];
                *p++ = hex[random[k] & 15];
        }
        *p = '\0';
        return 0;
}

bool cred_bound(const cred *c, const net_host *h, uint16_t port) {
        for (size_t i = 0; i < c->n_hosts; i++)
                if (req_host_matches(&c->hosts[i], h, port))
                        return true;
        return false;
}

bool cred_set_binds(const cred_set *s, const net_host *h, uint16_t port) {
        for (size_t i = 0; s && i < s->n; i++)
                if (cred_bound(&s->v[i], h, port))
                        return true;
        return false;
}

/* ---- finding placeholders ------------------------------------------------------------------ */

/* The credential whose placeholder starts at buf[at], or NULL. */
static const cred *placeholder_at(const cred_set *s, const char *buf, size_t len, size_t at) {
        if (len - at < CRED_PLACEHOLDER_LEN)
                return NULL;
        for (size_t i = 0; i < s->n; i++)
                if (s->v[i].value &&
                    memcmp(buf + at, s->v[i].placeholder, CRED_PLACEHOLDER_LEN) == 0)
                        return &s->v[i];
        return NULL;
}

static const cred *find_raw(const cred_set *s, const char *buf, size_t len) {
        for (size_t at = 0; s && at + CRED_PLACEHOLDER_LEN <= len; at++) {
                if (buf[at] != 'c')
                        continue;
                const cred *c = placeholder_at(s, buf, len, at);
                if (c)
                        return c;
        }
        return NULL;
}

static bool is_space(char ch) {
        return ch == ' ' || ch == '\t';
}

/* Where a "Basic <base64>" value's base64 starts in v[0..len), or SIZE_MAX. */
static size_t basic_token(const char *v, size_t len, size_t *tok_len) {
        if (len < 7 || strncasecmp(v, "Basic", 5) != 0 || !is_space(v[5]))
                return SIZE_MAX;
        size_t at = 6;
        while (at < len && is_space(v[at]))
                at++;
        size_t end = at;
        while (end < len && (strchr("+/=", v[end]) || (v[end] >= 'A' && v[end] <= 'Z') ||
                             (v[end] >= 'a' && v[end] <= 'z') || (v[end] >= '0' && v[end] <= '9')))
                end++;
        *tok_len = end - at;
        return at;
}

/* The placeholder inside a Basic credential anywhere in buf (each "Basic " word's token is
 * decoded): a client can hide it there as well as in the clear. */
static const cred *find_in_basic(const cred_set *s, const char *buf, size_t len) {
        for (size_t at = 0; at + 6 < len; at++) {
                if (buf[at] != 'B' && buf[at] != 'b')
                        continue;
                size_t tl = 0, tok = basic_token(buf + at, len - at, &tl);
                if (tok == SIZE_MAX || tl == 0 || tl > 4 * 1024)
                        continue;
                char dec[3 * 1024 + 4];
                size_t dl = 0;
                if (base64_decode_into(buf + at + tok, tl, dec, sizeof(dec), &dl) < 0)
                        continue;
                const cred *c = find_raw(s, dec, dl);
                explicit_bzero(dec, sizeof(dec));
                if (c)
                        return c;
        }
        return NULL;
}

const cred *cred_find_placeholder(const cred_set *s, const char *buf, size_t len) {
        if (!s)
                return NULL;
        const cred *c = find_raw(s, buf, len);
        return c ? c : find_in_basic(s, buf, len);
}

/* ---- the request head -------------------------------------------------------------------- */

typedef struct growbuf {
        char *b;
        size_t len, cap;
        bool failed, too_big;
} growbuf;

static void put(growbuf *g, const char *s, size_t n) {
        if (g->failed || n == 0)
                return;
        if (g->len + n > CRED_HEAD_MAX + 2 * CRED_VALUE_MAX) {
                g->failed = g->too_big = true;
                return;
        }
        if (g->len + n > g->cap) {
                size_t cap = (g->len + n) * 2;
                char *nb = malloc(cap);
                if (!nb) {
                        g->failed = true;
                        return;
                }
                if (g->b) {
                        memcpy(nb, g->b, g->len);
                        explicit_bzero(g->b, g->cap);
                        free(g->b);
                }
                g->b = nb;
                g->cap = cap;
        }
        memcpy(g->b + g->len, s, n);
        g->len += n;
}

static void puts_(growbuf *g, const char *s) {
        put(g, s, strlen(s));
}

/* Copies s[0..len) with each placeholder of a credential bound here replaced by its secret.
 * Returns the credential of a placeholder that may not go here, or NULL. */
static const cred *put_replaced(growbuf *g, const cred_set *s, const net_host *h, uint16_t port,
                                const char *src, size_t len) {
        size_t from = 0;
        for (size_t at = 0; at + CRED_PLACEHOLDER_LEN <= len;) {
                const cred *c = src[at] == 'c' ? placeholder_at(s, src, len, at) : NULL;
                if (!c) {
                        at++;
                        continue;
                }
                if (!cred_bound(c, h, port))
                        return c;
                put(g, src + from, at - from);
                put(g, c->value, c->value_len);
                at += CRED_PLACEHOLDER_LEN;
                from = at;
        }
        put(g, src + from, len - from);
        return NULL;
}

/* A "Basic" value whose decoded form holds a placeholder: decoded, replaced, encoded again.
 * Returns 1 when it was written to g, 0 when the value is no such credential, -1 (with
 * *offender) when it holds a placeholder not bound here. */
static int put_basic(growbuf *g, const cred_set *s, const net_host *h, uint16_t port,
                     const char *v, size_t len, const cred **offender) {
        size_t tl = 0, tok = basic_token(v, len, &tl);
        if (tok == SIZE_MAX || tl == 0 || tl > 4 * 1024 || tok + tl != len)
                return 0;
        char dec[3 * 1024 + 4];
        size_t dl = 0;
        if (base64_decode_into(v + tok, tl, dec, sizeof(dec), &dl) < 0 || !find_raw(s, dec, dl))
                return 0;
        growbuf plain = { 0 };
        *offender = put_replaced(&plain, s, h, port, dec, dl);
        explicit_bzero(dec, sizeof(dec));
        int r = *offender ? -1 : 1;
        if (r == 1 && plain.failed)
                g->failed = true;
        if (r == 1 && !plain.failed) {
                char *enc = base64_encode(plain.b, plain.len);
                if (!enc)
                        g->failed = true;
                put(g, v, tok);
                if (enc)
                        puts_(g, enc);
                if (enc) {
                        explicit_bzero(enc, strlen(enc));
                        free(enc);
                }
        }
        if (plain.b) {
                explicit_bzero(plain.b, plain.cap);
                free(plain.b);
        }
        return r;
}

/* Whether the proxy writes header `name` (n bytes) itself on this host: a credential's header,
 * Authorization for a basic credential, Accept-Encoding (identity, for the scrubbing). */
static bool proxy_sets(const cred_set *s, const net_host *h, uint16_t port, const char *name,
                       size_t n) {
        if (n == 15 && strncasecmp(name, "Accept-Encoding", 15) == 0)
                return true;
        for (size_t i = 0; i < s->n; i++) {
                const cred *c = &s->v[i];
                const char *set = c->header ? c->header : c->basic ? "Authorization" : NULL;
                if (set && strlen(set) == n && strncasecmp(set, name, n) == 0 &&
                    cred_bound(c, h, port))
                        return true;
        }
        return false;
}

static void put_cred_headers(growbuf *g, const cred_set *s, const net_host *h, uint16_t port) {
        for (size_t i = 0; i < s->n; i++) {
                const cred *c = &s->v[i];
                if (!c->value || !cred_bound(c, h, port) || (!c->header && !c->basic))
                        continue;
                if (c->basic) {
                        growbuf up = { 0 };
                        puts_(&up, c->basic);
                        put(&up, ":", 1);
                        put(&up, c->value, c->value_len);
                        char *enc = up.failed ? NULL : base64_encode(up.b, up.len);
                        if (up.b) {
                                explicit_bzero(up.b, up.cap);
                                free(up.b);
                        }
                        if (!enc) {
                                g->failed = true;
                                return;
                        }
                        puts_(g, "Authorization: Basic ");
                        puts_(g, enc);
                        explicit_bzero(enc, strlen(enc));
                        free(enc);
                } else {
                        const char *f = c->format ? c->format : "{}", *at = strstr(f, "{}");
                        puts_(g, c->header);
                        put(g, ": ", 2);
                        put(g, f, (size_t) (at - f));
                        put(g, c->value, c->value_len);
                        puts_(g, at + 2);
                }
                put(g, "\r\n", 2);
        }
        puts_(g, "Accept-Encoding: identity\r\n");
}

/* One header line (no CRLF) of a request to a bound host, written with its CRLF unless the
 * proxy sets that header itself (then it is dropped: an empty line left in its place would end
 * the head there, and the upstream would read the rest as a body). */
static const cred *put_header_line(growbuf *g, const cred_set *s, const net_host *h,
                                   uint16_t port, const char *line, size_t n) {
        const char *colon = memchr(line, ':', n);
        if (!colon) {
                const cred *c = put_replaced(g, s, h, port, line, n);
                put(g, "\r\n", 2);
                return c;
        }
        size_t name_len = (size_t) (colon - line);
        if (proxy_sets(s, h, port, line, name_len)) {
                /* Dropped, so it is never sent: a placeholder in it must still be allowed. */
                const cred *c = cred_find_placeholder(s, line, n);
                return c && !cred_bound(c, h, port) ? c : NULL;
        }
        size_t v = name_len + 1;
        while (v < n && is_space(line[v]))
                v++;
        growbuf tmp = { 0 };
        const cred *off = NULL;
        int b = put_basic(&tmp, s, h, port, line + v, n - v, &off);
        /* The name and the space after it are replaced in too: a placeholder may sit in
         * any byte of the head. */
        if (b == 1 && !(off = put_replaced(g, s, h, port, line, v))) {
                put(g, tmp.b, tmp.len);
                put(g, "\r\n", 2);
                if (tmp.failed)
                        g->failed = true;
        }
        if (tmp.b) {
                explicit_bzero(tmp.b, tmp.cap);
                free(tmp.b);
        }
        if (b != 0)
                return off;
        const cred *c = put_replaced(g, s, h, port, line, v);
        if (!c)
                c = put_replaced(g, s, h, port, line + v, n - v);
        put(g, "\r\n", 2);
        return c;
}

static const cred *rewrite_bound(growbuf *g, const cred_set *s, const net_host *h,
                                 uint16_t port, const char *head, size_t len) {
        /* The head ends in CRLF CRLF (the parser's promise): each line ends in CRLF. */
        size_t at = 0;
        bool first = true;
        while (at + 2 <= len) {
                const char *end = memchr(head + at, '\r', len - at);
                size_t n = end ? (size_t) (end - (head + at)) : len - at;
                if (n == 0)
                        break; /* the empty line */
                const cred *off = NULL;
                if (first) {
                        off = put_replaced(g, s, h, port, head + at, n);
                        put(g, "\r\n", 2);
                        put_cred_headers(g, s, h, port);
                } else {
                        off = put_header_line(g, s, h, port, head + at, n);
                }
                if (off)
                        return off;
                first = false;
                at += n + 2;
        }
        put(g, "\r\n", 2);
        return NULL;
}

int cred_rewrite_head(const cred_set *s, const net_host *h, uint16_t port, bool tls,
                      const char *head, size_t len, char **out, size_t *out_len,
                      const cred **offender) {
        *out = NULL;
        *out_len = 0;
        *offender = NULL;
        if (!s)
                return 0;
        /* Plain http: a secret sent there would cross the network in the clear (to anyone on
         * the path), so nothing is injected, and a placeholder is refused like one to a host
         * it is not bound to. Unbound hosts: only the check. */
        if (!tls || !cred_set_binds(s, h, port)) {
                *offender = cred_find_placeholder(s, head, len);
                return *offender ? -EACCES : 0;
        }
        /* Only a whole head is rewritten (the parsers hand over nothing else): the lines are
         * read up to its final empty line. */
        if (len < 4 || head[0] == '\r' || memcmp(head + len - 4, "\r\n\r\n", 4) != 0)
                return -EINVAL;
        growbuf g = { 0 };
        *offender = rewrite_bound(&g, s, h, port, head, len);
        if (*offender || g.failed) {
                cred_head_free(g.b, g.cap);
                return *offender ? -EACCES : g.too_big ? -E2BIG : -ENOMEM;
        }
        *out = g.b;
        *out_len = g.len;
        return 1;
}

void cred_head_free(char *head, size_t len) {
        if (!head)
                return;
        explicit_bzero(head, len);
        free(head);
}

/* ---- responses ----------------------------------------------------------------------------- */

/* What a secret becomes: its placeholder, cut or padded with '*' to the same length. */
static void mask(const cred *c, char *dst) {
        for (size_t i = 0; i < c->value_len; i++)
                dst[i] = i < CRED_PLACEHOLDER_LEN ? c->placeholder[i] : '*';
}

/* At buf[at]: 1 a whole secret (*which), 2 a tail of at least CRED_HOLD_MIN bytes that begins
 * one, 0 neither. */
static int secret_at(const cred_set *s, const char *buf, size_t len, size_t at,
                     const cred **which) {
        int r = 0;
        for (size_t i = 0; i < s->n; i++) {
                const cred *c = &s->v[i];
                if (!c->value || buf[at] != c->value[0])
                        continue;
                size_t left = len - at;
                if (left >= c->value_len && memcmp(buf + at, c->value, c->value_len) == 0) {
                        *which = c;
                        return 1;
                }
                if (left < c->value_len && left >= CRED_HOLD_MIN &&
                    memcmp(buf + at, c->value, left) == 0)
                        r = 2;
        }
        return r;
}

/* The scan of buf[0..n), whose first ctx bytes went to the client already (the context a
 * secret may have begun in): secrets are masked from byte ctx on. Returns where the held tail
 * starts (n: none). */
static size_t scrub_scan(const cred_set *s, char *buf, size_t n, size_t ctx) {
        for (size_t at = 0; s && at < n;) {
                const cred *c = NULL;
                int m = secret_at(s, buf, n, at, &c);
                if (m == 1) {
                        /* Begun in the context: the bytes sent already cannot be recalled
                         * (fewer than CRED_HOLD_MIN); the rest is masked. */
                        char masked[CRED_VALUE_MAX];
                        mask(c, masked);
                        size_t skip = at < ctx ? ctx - at : 0;
                        if (skip < c->value_len)
                                memcpy(buf + at + skip, masked + skip, c->value_len - skip);
                        explicit_bzero(masked, c->value_len);
                        at += c->value_len;
                } else if (m == 2 && at >= ctx) {
                        return at;
                } else {
                        at++;
                }
        }
        return n;
}

int cred_scrub_feed(const cred_set *s, cred_scrub *st, const char *in, size_t len, char **out,
                    size_t *out_len) {
        *out = NULL;
        *out_len = 0;
        size_t ctx = st->ctx_len, n = ctx + st->held + len;
        char *buf = malloc(n ? n : 1);
        if (!buf)
                return -ENOMEM;
        memcpy(buf, st->ctx, ctx);
        if (st->held)
                memcpy(buf + ctx, st->hold, st->held);
        if (len)
                memcpy(buf + ctx + st->held, in, len);
        size_t keep = scrub_scan(s, buf, n, ctx);
        size_t tail = n - keep;
        char *hold = tail ? malloc(tail) : NULL;
        if (tail && !hold) {
                explicit_bzero(buf, n);
                free(buf);
                return -ENOMEM;
        }
        if (tail) {
                memcpy(hold, buf + keep, tail);
                explicit_bzero(buf + keep, tail);
        }
        cred_scrub_done(st);
        st->hold = hold;
        st->held = tail;
        /* The new context: the last bytes that go out now (after the old context). */
        size_t c = keep < CRED_HOLD_MIN - 1 ? keep : CRED_HOLD_MIN - 1;
        memcpy(st->ctx, buf + keep - c, c);
        st->ctx_len = c;
        memmove(buf, buf + ctx, keep - ctx);
        *out = buf;
        *out_len = keep - ctx;
        return 0;
}

size_t cred_scrub_flush(cred_scrub *st, const char **out) {
        *out = st->hold;
        return st->held;
}

void cred_scrub_done(cred_scrub *st) {
        if (st->hold) {
                explicit_bzero(st->hold, st->held);
                free(st->hold);
        }
        st->hold = NULL;
        st->held = 0;
        explicit_bzero(st->ctx, sizeof(st->ctx));
        st->ctx_len = 0;
}
