/* SPDX-License-Identifier: Apache-2.0 */
/* HTTP/1.x head parsing for the egress proxy (RFC 9110, RFC 9112). Strict where the RFCs let a
 * recipient be lenient: every leniency is a place where the proxy and the upstream may frame or
 * route a message differently (request smuggling, allowlist bypass). Character classes are ASCII
 * tables written out here, never the process locale. */
#include "net/http-internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "net/socks5.h"
#include "util/base64.h" /* strict: one spelling per credential */


int http_refuse(verdict *v, int status, const char *why) {
        v->status = status;
        v->why = why;
        return -HTTP_EREFUSED;
}

/* ---- Character classes ------------------------------------------------------------------- */

bool http_is_digit(unsigned char c) {
        return c >= '0' && c <= '9';
}

static bool is_alpha(unsigned char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_hex(unsigned char c) {
        return http_is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* tchar (RFC 9110 §5.6.2). */
bool http_is_tchar(unsigned char c) {
        return is_alpha(c) || http_is_digit(c) || (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* field-vchar, SP and HTAB: no control character (NUL, CR, LF, VT, DEL, ...) in a value. Bytes
 * >= 0x80 (obs-text) pass: they cannot end a line or a field in any parser. */
bool http_is_field_char(unsigned char c) {
        return c == '\t' || (c >= 0x20 && c != 0x7f);
}

/* What RFC 3986 allows in a path and query: unreserved, sub-delims, ':', '@', '/', '?'. '%' is
 * checked separately (it must start a pct-encoded triplet). */
static bool is_path_char(unsigned char c) {
        return is_alpha(c) || http_is_digit(c) || (c && strchr("-._~!$&'()*+,;=:@/?", c));
}

/* Host names as the canonicaliser accepts them; anything else (%, \, @, spaces) is refused
 * here already so no other parser can read the authority differently. */
static bool is_host_char(unsigned char c) {
        return is_alpha(c) || http_is_digit(c) || c == '-' || c == '.' || c == '_';
}

static char lower(char c) {
        return (char) (c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
}

/* ASCII case-insensitive equality of a[0..an) and b[0..bn). */
static bool mem_ieq_n(const char *a, size_t an, const char *b, size_t bn) {
        if (an != bn)
                return false;
        for (size_t i = 0; i < an; i++)
                if (lower(a[i]) != lower(b[i]))
                        return false;
        return true;
}

bool http_mem_ieq(const char *a, size_t n, const char *lit) {
        return mem_ieq_n(a, n, lit, strlen(lit));
}

const char *http_span_ptr(const char *buf, http_span s) {
        return buf + s.off;
}

bool http_span_ieq(const char *buf, http_span s, const char *lit) {
        return http_mem_ieq(http_span_ptr(buf, s), s.len, lit);
}

static http_span span_of(const char *buf, const char *p, size_t n) {
        return (http_span){ .off = (uint16_t) (p - buf), .len = (uint16_t) n };
}

/* ---- Lines ------------------------------------------------------------------------------- */


/* The next CRLF-terminated line. Returns 1 (*ret set, CRLF excluded), 0 (need more) or a
 * refusal. Each check depends only on the byte position q, never on len, except "need more";
 * so a split input reaches the same verdict at the same byte. A lone LF or CR is refused: a
 * server that ends lines at LF would see different headers than we do (smuggling). */
int http_scan_line(head_scan *s, int too_long_status, http_span *ret, verdict *v) {
        size_t start = s->pos;
        for (size_t q = start;; q++) {
                if (q >= s->head_max)
                        return http_refuse(v, s->big_status, "head too large");
                if (q - start > HTTP_LINE_MAX)
                        return http_refuse(v, too_long_status, "line too long");
                if (q >= s->len)
                        return 0;
                char c = s->buf[q];
                if (c == '\n')
                        return http_refuse(v, s->bad_status, "bare LF in head");
                if (c != '\r')
                        continue;
                if (q + 1 >= s->head_max)
                        return http_refuse(v, s->big_status, "head too large");
                if (q + 1 >= s->len)
                        return 0;
                if (s->buf[q + 1] != '\n')
                        return http_refuse(v, s->bad_status, "bare CR in head");
                *ret = span_of(s->buf, s->buf + start, q - start);
                s->pos = q + 2;
                return 1;
        }
}

/* "name: value" → name and value (optional whitespace around the value removed). */
int http_parse_field(const char *buf, http_span line, int bad, http_header *ret, verdict *v) {
        const char *p = http_span_ptr(buf, line), *end = p + line.len, *name = p;
        /* obs-fold: a continuation line some servers join to the previous header. */
        if (*p == ' ' || *p == '\t')
                return http_refuse(v, bad, "obs-fold (header line starts with whitespace)");
        while (p < end && *p != ':') {
                /* "Name :" is read as "Name" by some servers and as another header by others. */
                if (*p == ' ' || *p == '\t')
                        return http_refuse(v, bad, "whitespace before ':' in header");
                if (!http_is_tchar((unsigned char) *p))
                        return http_refuse(v, bad, "invalid character in header name");
                p++;
        }
        if (p == end)
                return http_refuse(v, bad, "header line without ':'");
        if (p == name)
                return http_refuse(v, bad, "empty header name");
        ret->name = span_of(buf, name, (size_t) (p - name));
        for (const char *q = p + 1; q < end; q++)
                if (!http_is_field_char((unsigned char) *q))
                        return http_refuse(v, bad, "control character in header value");
        const char *val = p + 1;
        while (val < end && (*val == ' ' || *val == '\t'))
                val++;
        while (end > val && (end[-1] == ' ' || end[-1] == '\t'))
                end--;
        ret->value = span_of(buf, val, (size_t) (end - val));
        return 0;
}

/* ---- Values ------------------------------------------------------------------------------ */

/* 1*DIGIT, at most INT64_MAX (a value no reader can overflow or read as negative). */
int http_parse_content_length(const char *p, size_t n, uint64_t *ret) {
        if (n == 0 || n > 19)
                return -EINVAL;
        uint64_t x = 0;
        for (size_t i = 0; i < n; i++) {
                if (!http_is_digit((unsigned char) p[i]))
                        return -EINVAL;
                x = x * 10 + (uint64_t) (p[i] - '0');
        }
        if (x > INT64_MAX)
                return -EINVAL;
        *ret = x;
        return 0;
}

/* port = 1..65535, decimal, no sign, no leading zero ("080" is octal to some readers). */
static int parse_port(const char *p, size_t n, uint16_t *ret) {
        if (n == 0 || n > 5 || p[0] == '0')
                return -EINVAL;
        uint32_t x = 0;
        for (size_t i = 0; i < n; i++) {
                if (!http_is_digit((unsigned char) p[i]))
                        return -EINVAL;
                x = x * 10 + (uint32_t) (p[i] - '0');
        }
        if (x > 65535)
                return -EINVAL;
        *ret = (uint16_t) x;
        return 0;
}

/* A comma-separated list of tokens (Connection): yields one token per call (empty elements are
 * skipped, RFC 9110 §5.6.1). Returns 1, 0 at the end, or -EINVAL. */
static int list_next(const char *s, size_t n, size_t *pos, const char **tok, size_t *tok_len) {
        size_t i = *pos;
        while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == ','))
                i++;
        if (i == n) {
                *pos = i;
                return 0;
        }
        size_t start = i;
        while (i < n && http_is_tchar((unsigned char) s[i]))
                i++;
        if (i == start)
                return -EINVAL;
        *tok = s + start;
        *tok_len = i - start;
        while (i < n && (s[i] == ' ' || s[i] == '\t'))
                i++;
        if (i < n && s[i] != ',')
                return -EINVAL;
        *pos = i;
        return 1;
}


int http_parse_connection(const char *p, size_t n, conn_tokens *c) {
        size_t pos = 0, tl;
        const char *t;
        int r;
        while ((r = list_next(p, n, &pos, &t, &tl)) > 0) {
                c->close |= http_mem_ieq(t, tl, "close");
                c->keep_alive |= http_mem_ieq(t, tl, "keep-alive");
                c->upgrade |= http_mem_ieq(t, tl, "upgrade");
                /* "Connection: Content-Length" would make a hop-by-hop stripping proxy drop the
                 * framing header before the upstream sees it. */
                c->names_framing |= http_mem_ieq(t, tl, "content-length") ||
                                    http_mem_ieq(t, tl, "transfer-encoding") ||
                                    http_mem_ieq(t, tl, "host");
        }
        return r;
}

/* ---- Authority and target ---------------------------------------------------------------- */

typedef struct authority {
        char host[HTTP_HOST_MAX + 1];
        uint16_t port;
} authority;

/* host [":" port], host a name or "[v6]". No userinfo, no percent-encoding, no zone id. */
static int parse_authority(const char *s, size_t n, bool port_required, uint16_t default_port,
                           authority *a, verdict *v) {
        /* "http://allowed.com@evil.com/" names evil.com; readers that disagree on '@' connect
         * to the wrong host. No proxy client needs userinfo in a URL. */
        if (memchr(s, '@', n))
                return http_refuse(v, 400, "userinfo in the request-target");
        size_t i = 0;
        if (n > 0 && s[0] == '[') {
                for (i = 1; i < n && (is_hex((unsigned char) s[i]) || s[i] == ':' || s[i] == '.');)
                        i++;
                if (i == 1 || i >= n || s[i] != ']')
                        return http_refuse(v, 400, "invalid IPv6 literal in the request-target");
                i++;
        } else
                while (i < n && is_host_char((unsigned char) s[i]))
                        i++;
        if (i == 0)
                return http_refuse(v, 400, "empty host in the request-target");
        if (i > HTTP_HOST_MAX)
                return http_refuse(v, 400, "host too long");
        if (i == n) {
                if (port_required)
                        return http_refuse(v, 400, "CONNECT target is not host:port");
                a->port = default_port;
        } else if (s[i] != ':')
                return http_refuse(v, 400, "invalid character in the host");
        else if (parse_port(s + i + 1, n - i - 1, &a->port) < 0)
                return http_refuse(v, 400, "invalid port");
        memcpy(a->host, s, i);
        a->host[i] = '\0';
        return 0;
}

static int parse_path(const char *p, size_t n, verdict *v) {
        for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char) p[i];
                if (c == '%') {
                        if (i + 2 >= n || !is_hex((unsigned char) p[i + 1]) ||
                            !is_hex((unsigned char) p[i + 2]))
                                return http_refuse(v, 400, "invalid percent-encoding in the path");
                        i += 2;
                } else if (!is_path_char(c))
                        return http_refuse(v, 400, "invalid character in the request-target");
        }
        return 0;
}

static void take_authority(http_req *out, const authority *a) {
        memcpy(out->host, a->host, sizeof(out->host));
        out->port = a->port;
}

/* absolute-form: "http://" authority [path-abempty] ["?" query]. */
static int parse_absolute(const char *buf, http_span t, http_req *out, verdict *v) {
        const char *p = http_span_ptr(buf, t);
        size_t n = t.len;
        if (n >= 8 && http_mem_ieq(p, 8, "https://"))
                return http_refuse(v, 400, "https:// URL to a proxy: use CONNECT");
        if (n > 0 && p[0] == '/')
                return http_refuse(v, 400, "origin-form request to a proxy: send an absolute URL");
        if (n < 7 || !http_mem_ieq(p, 7, "http://"))
                return http_refuse(v, 400, "request-target is not an absolute http:// URL");
        /* A fragment never belongs in a request; some readers end the URL there. */
        if (memchr(p, '#', n))
                return http_refuse(v, 400, "fragment in the request-target");
        size_t a = 7, e = a;
        while (e < n && p[e] != '/' && p[e] != '?')
                e++;
        authority au;
        int r = parse_authority(p + a, e - a, false, 80, &au, v);
        if (r < 0)
                return r;
        r = parse_path(p + e, n - e, v);
        if (r < 0)
                return r;
        take_authority(out, &au);
        out->authority = span_of(buf, p + a, e - a);
        out->path = span_of(buf, p + e, n - e);
        return 0;
}

static int parse_connect_target(const char *buf, http_span t, http_req *out, verdict *v) {
        authority au;
        int r = parse_authority(http_span_ptr(buf, t), t.len, true, 0, &au, v);
        if (r < 0)
                return r;
        take_authority(out, &au);
        out->authority = t;
        return 0;
}

/* "HTTP/" DIGIT "." DIGIT; only 1.0 and 1.1. Returns the minor version, or a refusal. */
int http_parse_version(const char *p, size_t n, int unsupported, int bad, verdict *v) {
        if (n != 8 || memcmp(p, "HTTP/", 5) != 0 || !http_is_digit((unsigned char) p[5]) ||
            p[6] != '.' || !http_is_digit((unsigned char) p[7]))
                return http_refuse(v, bad, "malformed HTTP version");
        if (p[5] != '1' || (p[7] != '0' && p[7] != '1'))
                return http_refuse(v, unsupported, "HTTP version not supported");
        return p[7] - '0';
}

/* method SP request-target SP HTTP-version, single spaces. */
static int parse_request_line(const char *buf, http_span line, http_req *out, verdict *v) {
        const char *p = http_span_ptr(buf, line), *end = p + line.len, *m = p;
        while (p < end && *p != ' ') {
                if (!http_is_tchar((unsigned char) *p))
                        return http_refuse(v, 400, "invalid method");
                if (p - m >= HTTP_METHOD_MAX)
                        return http_refuse(v, 501, "method not implemented (too long)");
                p++;
        }
        size_t mlen = (size_t) (p - m);
        if (mlen == 0 || p == end)
                return http_refuse(v, 400, "malformed request line");
        memcpy(out->method, m, mlen);
        out->method[mlen] = '\0';
        const char *t = ++p;
        while (p < end && *p != ' ')
                p++;
        if (p == t || p == end)
                return http_refuse(v, 400, "malformed request line");
        http_span target = span_of(buf, t, (size_t) (p - t));
        int r = http_parse_version(p + 1, (size_t) (end - p - 1), 505, 400, v);
        if (r < 0)
                return r;
        out->version_minor = r;
        /* TRACE through a proxy reflects the request (and what upstream adds) back to a page's
         * script; nothing a build needs. */
        if (strcmp(out->method, "TRACE") == 0)
                return http_refuse(v, 405, "TRACE is not allowed");
        if (strcmp(out->method, "CONNECT") == 0) {
                out->kind = HTTP_KIND_CONNECT;
                return parse_connect_target(buf, target, out, v);
        }
        out->kind = HTTP_KIND_FORWARD;
        return parse_absolute(buf, target, out, v);
}

/* ---- Proxy-Authorization: Basic ---------------------------------------------------------- */

static int parse_basic(const char *p, size_t n, http_req *out, verdict *v) {
        size_t sp = 0;
        while (sp < n && p[sp] != ' ')
                sp++;
        /* Another scheme is not ours: no credentials, so the proxy answers 407. */
        if (!http_mem_ieq(p, sp, "basic"))
                return 0;
        uint8_t dec[2 * HTTP_CRED_MAX + 1];
        size_t dn;
        if (sp + 1 >= n ||
            base64_decode_into(p + sp + 1, n - sp - 1, dec, sizeof(dec), &dn) < 0)
                return http_refuse(v, 400, "malformed Basic credentials");
        uint8_t *colon = memchr(dec, ':', dn);
        if (!colon)
                return http_refuse(v, 400, "Basic credentials without ':'");
        size_t ulen = (size_t) (colon - dec), plen = dn - ulen - 1;
        if (ulen > HTTP_CRED_MAX || plen > HTTP_CRED_MAX)
                return http_refuse(v, 400, "Basic credentials too long");
        for (size_t i = 0; i < dn; i++)
                if (dec[i] < 0x20 || dec[i] == 0x7f) /* RFC 7617 §2: no control characters */
                        return http_refuse(v, 400, "control character in Basic credentials");
        memcpy(out->user, dec, ulen);
        out->user[ulen] = '\0';
        memcpy(out->pass, colon + 1, plen);
        out->pass[plen] = '\0';
        out->user_len = ulen;
        out->pass_len = plen;
        out->has_credentials = true;
        return 0;
}

bool http_req_creds_equal(const http_req *r, const char *want_user, const char *want_pass) {
        if (!r->has_credentials)
                return false;
        return socks5_creds_equal(r->user, r->user_len, r->pass, r->pass_len, want_user,
                                  want_pass);
}

/* ---- Request head ------------------------------------------------------------------------ */

typedef struct req_state {
        bool seen_host, seen_cl, seen_te, seen_auth;
        http_span host;
        conn_tokens conn;
} req_state;

/* "Content_Length", "Transfer_Encoding", "Host" with '_' for '-': a server that maps both to one
 * variable (CGI, some frameworks) would frame or route by a header we do not read. */
static bool name_confusable(const char *p, size_t n) {
        if (!memchr(p, '_', n))
                return false;
        static const char *const names[] = { "content-length", "transfer-encoding", "host" };
        for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
                bool eq = strlen(names[k]) == n;
                for (size_t i = 0; eq && i < n; i++)
                        eq = (p[i] == '_' ? '-' : lower(p[i])) == names[k][i];
                if (eq)
                        return true;
        }
        return false;
}

static int req_framing_header(const char *buf, const http_header *h, http_req *out,
                              req_state *st, verdict *v) {
        const char *val = http_span_ptr(buf, h->value);
        if (http_span_ieq(buf, h->name, "content-length")) {
                /* Two lengths, even equal ones: some reader takes the other one. */
                if (st->seen_cl)
                        return http_refuse(v, 400, "repeated Content-Length");
                st->seen_cl = true;
                if (http_parse_content_length(val, h->value.len, &out->content_length) < 0)
                        return http_refuse(v, 400, "invalid Content-Length");
                return 0;
        }
        if (st->seen_te)
                return http_refuse(v, 400, "repeated Transfer-Encoding");
        st->seen_te = true;
        /* "chunked, identity", "gzip, chunked", "xchunked": each reader decides differently
         * which coding ends the body. Only a lone "chunked" has one reading. */
        if (!http_mem_ieq(val, h->value.len, "chunked"))
                return http_refuse(v, 501, "transfer coding other than chunked");
        return 0;
}

static int req_header(const char *buf, const http_header *h, http_req *out, req_state *st,
                      verdict *v) {
        const char *val = http_span_ptr(buf, h->value);
        size_t vn = h->value.len;
        if (http_span_ieq(buf, h->name, "content-length") ||
            http_span_ieq(buf, h->name, "transfer-encoding"))
                return req_framing_header(buf, h, out, st, v);
        if (http_span_ieq(buf, h->name, "host")) {
                if (st->seen_host)
                        return http_refuse(v, 400, "repeated Host");
                st->seen_host = true;
                st->host = h->value;
        } else if (http_span_ieq(buf, h->name, "connection")) {
                if (http_parse_connection(val, vn, &st->conn) < 0)
                        return http_refuse(v, 400, "invalid Connection header");
                if (st->conn.names_framing)
                        return http_refuse(v, 400, "Connection lists a framing header");
                if (st->conn.upgrade)
                        return http_refuse(v, 501, "protocol upgrade not supported");
        } else if (http_span_ieq(buf, h->name, "upgrade")) {
                /* Half-supporting a switch to another protocol would leave us framing bytes we
                 * no longer understand. */
                return http_refuse(v, 501, "protocol upgrade not supported");
        } else if (http_span_ieq(buf, h->name, "proxy-authorization")) {
                if (st->seen_auth)
                        return http_refuse(v, 400, "repeated Proxy-Authorization");
                st->seen_auth = true;
                return parse_basic(val, vn, out, v);
        } else if (http_span_ieq(buf, h->name, "expect")) {
                if (!http_mem_ieq(val, vn, "100-continue"))
                        return http_refuse(v, 417, "unsupported expectation");
                out->expect_continue = true;
        } else if (name_confusable(http_span_ptr(buf, h->name), h->name.len))
                return http_refuse(v, 400, "header name resembles a framing header");
        return 0;
}

/* The Host header must name what the URL names: an upstream that routes by Host would otherwise
 * serve a host the allowlist never saw. */
static bool host_agrees(const char *buf, http_span host, const http_req *r) {
        authority a;
        verdict ignored = { 0 };
        if (parse_authority(http_span_ptr(buf, host), host.len, false, 80, &a, &ignored) < 0)
                return false;
        return http_mem_ieq(a.host, strlen(a.host), r->host) && a.port == r->port;
}

static int req_finish(const char *buf, http_req *out, const req_state *st, verdict *v) {
        /* RFC 9112 §6.1: an HTTP/1.0 reader ignores Transfer-Encoding and takes the chunks for
         * the next request. */
        if (st->seen_te && out->version_minor == 0)
                return http_refuse(v, 400, "Transfer-Encoding in an HTTP/1.0 request");
        /* The classic smuggling pair: one reader frames by length, the other by chunks. */
        if (st->seen_te && st->seen_cl)
                return http_refuse(v, 400, "both Content-Length and Transfer-Encoding");
        if (out->kind == HTTP_KIND_CONNECT) {
                /* Bytes after a CONNECT head are tunnel data; a body would be read as both. */
                if (st->seen_te || out->content_length != 0)
                        return http_refuse(v, 400, "CONNECT request with a body");
        } else {
                if (!st->seen_host && out->version_minor == 1)
                        return http_refuse(v, 400, "missing Host header");
                if (st->seen_host && !host_agrees(buf, st->host, out))
                        return http_refuse(v, 400, "Host header disagrees with the URL");
        }
        out->framing = out->kind == HTTP_KIND_CONNECT ? HTTP_FRAMING_NONE
                       : st->seen_te                  ? HTTP_FRAMING_CHUNKED
                       : st->seen_cl                  ? HTTP_FRAMING_LENGTH
                                                      : HTTP_FRAMING_NONE;
        out->keep_alive = !st->conn.close && (out->version_minor == 1 || st->conn.keep_alive);
        return 0;
}

static int req_head(head_scan *s, http_req *out, verdict *v) {
        req_state st = { 0 };
        http_span line;
        int r = http_scan_line(s, 414, &line, v);
        if (r <= 0)
                return r;
        r = parse_request_line(s->buf, line, out, v);
        if (r < 0)
                return r;
        for (;;) {
                r = http_scan_line(s, 431, &line, v);
                if (r <= 0)
                        return r;
                if (line.len == 0)
                        break;
                if (out->n_headers == HTTP_HEADERS_MAX)
                        return http_refuse(v, 431, "too many header fields");
                http_header *h = &out->headers[out->n_headers++];
                r = http_parse_field(s->buf, line, 400, h, v);
                if (r < 0)
                        return r;
                r = req_header(s->buf, h, out, &st, v);
                if (r < 0)
                        return r;
        }
        r = req_finish(s->buf, out, &st, v);
        if (r < 0)
                return r;
        out->head_len = s->pos;
        return (int) s->pos;
}

int http_req_parse(const char *buf, size_t len, http_req *out) {
        memset(out, 0, sizeof(*out));
        head_scan s = { .buf = buf, .len = len, .head_max = HTTP_HEAD_MAX, .bad_status = 400,
                        .big_status = 431 };
        verdict v = { 0 };
        int r = req_head(&s, out, &v);
        if (r <= 0) {
                /* Nothing half-parsed is left for a careless caller to act on. */
                memset(out, 0, sizeof(*out));
                out->status = v.status;
                out->why = v.why;
        }
        return r;
}

/* ---- Rewrite ----------------------------------------------------------------------------- */

typedef struct out_buf {
        char *p;
        size_t n, cap;
        bool full;
} out_buf;

static void put(out_buf *o, const char *s, size_t n) {
        if (o->full || n > o->cap - o->n) {
                o->full = true;
                return;
        }
        memcpy(o->p + o->n, s, n);
        o->n += n;
}

static void put_str(out_buf *o, const char *s) {
        put(o, s, strlen(s));
}

static void put_span(out_buf *o, const char *buf, http_span s) {
        put(o, http_span_ptr(buf, s), s.len);
}

static bool is_hop_by_hop(const char *buf, http_span name) {
        static const char *const names[] = {
                "connection",          "keep-alive",         "proxy-connection", "proxy-authorization",
                "proxy-authenticate",  "te",                 "trailer",          "upgrade",
        };
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
                if (http_span_ieq(buf, name, names[i]))
                        return true;
        return false;
}

/* True when a Connection header of r lists name (RFC 9110 §7.6.1: those headers are for this
 * hop only). */
static bool connection_lists(const http_req *r, const char *buf, http_span name) {
        for (size_t i = 0; i < r->n_headers; i++) {
                const http_header *h = &r->headers[i];
                if (!http_span_ieq(buf, h->name, "connection"))
                        continue;
                size_t pos = 0, tl;
                const char *t;
                while (list_next(http_span_ptr(buf, h->value), h->value.len, &pos, &t, &tl) > 0)
                        if (mem_ieq_n(t, tl, http_span_ptr(buf, name), name.len))
                                return true;
        }
        return false;
}

static void rewrite_host(out_buf *o, const http_req *r, const char *buf) {
        put_str(o, "Host: ");
        put_span(o, buf, r->authority);
        put_str(o, "\r\n");
}

/* One client header, as the upstream gets it. The framing headers and Host are written from
 * what we parsed, never copied: the upstream frames the body exactly as we do. */
static void rewrite_header(out_buf *o, const http_req *r, const char *buf, const http_header *h) {
        if (http_span_ieq(buf, h->name, "host"))
                rewrite_host(o, r, buf);
        else if (http_span_ieq(buf, h->name, "content-length")) {
                char n[32];
                int k = snprintf(n, sizeof(n), "Content-Length: %" PRIu64 "\r\n",
                                 r->content_length);
                put(o, n, (size_t) k);
        } else if (http_span_ieq(buf, h->name, "transfer-encoding"))
                put_str(o, "Transfer-Encoding: chunked\r\n");
        else if (!is_hop_by_hop(buf, h->name) && !connection_lists(r, buf, h->name)) {
                put_span(o, buf, h->name);
                put_str(o, ": ");
                put_span(o, buf, h->value);
                put_str(o, "\r\n");
        }
}

ssize_t http_req_rewrite(const http_req *r, const char *buf, char *out, size_t cap) {
        if (r->kind != HTTP_KIND_FORWARD || r->head_len == 0)
                return -EINVAL;
        out_buf o = { .p = out, .cap = cap };
        put_str(&o, r->method);
        put_str(&o, " ");
        if (r->path.len == 0 || buf[r->path.off] != '/')
                put_str(&o, "/");
        put_span(&o, buf, r->path);
        put_str(&o, r->version_minor == 1 ? " HTTP/1.1\r\n" : " HTTP/1.0\r\n");
        bool has_host = false;
        for (size_t i = 0; i < r->n_headers; i++)
                has_host |= http_span_ieq(buf, r->headers[i].name, "host");
        if (!has_host)
                rewrite_host(&o, r, buf);
        for (size_t i = 0; i < r->n_headers; i++)
                rewrite_header(&o, r, buf, &r->headers[i]);
        put_str(&o, r->keep_alive ? "Connection: keep-alive\r\n\r\n" : "Connection: close\r\n\r\n");
        if (o.full)
                return -ENOSPC;
        return (ssize_t) o.n;
}
