/* SPDX-License-Identifier: Apache-2.0 */
/* The upstream's response head, for the egress proxy's plain-HTTP forwarding (RFC 9110, RFC 9112):
 * parsed as strictly as the request head (http.c), because a response the proxy frames
 * differently from the client lets the upstream inject a second response into the client's
 * connection. */
#include "net/http-internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

typedef struct resp_state {
        bool seen_cl, seen_te;
        conn_tokens conn;
} resp_state;

/* HTTP-version SP 3DIGIT [SP reason-phrase]. */
static int parse_status_line(const char *buf, http_span line, http_resp *out, verdict *v) {
        const char *p = http_span_ptr(buf, line);
        size_t n = line.len;
        if (n < 12 || p[8] != ' ')
                return http_refuse(v, 502, "malformed status line");
        int r = http_parse_version(p, 8, 502, 502, v);
        if (r < 0)
                return r;
        out->version_minor = r;
        if (!http_is_digit((unsigned char) p[9]) || !http_is_digit((unsigned char) p[10]) ||
            !http_is_digit((unsigned char) p[11]))
                return http_refuse(v, 502, "malformed status code");
        out->code = (p[9] - '0') * 100 + (p[10] - '0') * 10 + (p[11] - '0');
        if (out->code < 100 || out->code > 599)
                return http_refuse(v, 502, "status code out of range");
        if (n > 12 && p[12] != ' ')
                return http_refuse(v, 502, "malformed status line");
        for (size_t i = 13; i < n; i++)
                if (!http_is_field_char((unsigned char) p[i]))
                        return http_refuse(v, 502, "control character in reason phrase");
        return 0;
}

static int resp_header(const char *buf, const http_header *h, http_resp *out, resp_state *st,
                       verdict *v) {
        const char *val = http_span_ptr(buf, h->value);
        size_t vn = h->value.len;
        if (http_span_ieq(buf, h->name, "content-length")) {
                if (st->seen_cl)
                        return http_refuse(v, 502, "repeated Content-Length from upstream");
                st->seen_cl = true;
                if (http_parse_content_length(val, vn, &out->content_length) < 0)
                        return http_refuse(v, 502, "invalid Content-Length from upstream");
        } else if (http_span_ieq(buf, h->name, "transfer-encoding")) {
                if (st->seen_te)
                        return http_refuse(v, 502, "repeated Transfer-Encoding from upstream");
                st->seen_te = true;
                if (!http_mem_ieq(val, vn, "chunked"))
                        return http_refuse(v, 502,
                                           "transfer coding other than chunked from upstream");
        } else if (http_span_ieq(buf, h->name, "connection")) {
                if (http_parse_connection(val, vn, &st->conn) < 0)
                        return http_refuse(v, 502, "invalid Connection header from upstream");
        }
        return 0;
}

/* RFC 9112 §6.3, in its order. A response we would frame differently from the client would let
 * an upstream desynchronise a reused connection: ambiguous framing is refused. */
static int resp_finish(const char *req_method, http_resp *out, const resp_state *st,
                       verdict *v) {
        bool head = req_method && strcmp(req_method, "HEAD") == 0;
        bool connect = req_method && strcmp(req_method, "CONNECT") == 0;
        int c = out->code;
        if (c == 101)
                return http_refuse(v, 502, "101 Switching Protocols (upgrades are not forwarded)");
        if (connect && c / 100 == 2)
                return http_refuse(v, 502, "2xx response to a forwarded CONNECT");
        if (st->seen_te && out->version_minor == 0)
                return http_refuse(v, 502, "Transfer-Encoding in an HTTP/1.0 response");
        if (st->seen_te && st->seen_cl)
                return http_refuse(v, 502,
                                   "both Content-Length and Transfer-Encoding from upstream");
        /* RFC 9110 §8.6, RFC 9112 §6.1: never on 1xx or 204; a client would read a body here. */
        if ((c < 200 || c == 204) && (st->seen_te || st->seen_cl))
                return http_refuse(v, 502, "framing header on a response without a body");
        out->interim = c < 200;
        if (head || out->interim || c == 204 || c == 304)
                out->framing = HTTP_FRAMING_NONE;
        else if (st->seen_te)
                out->framing = HTTP_FRAMING_CHUNKED;
        else if (st->seen_cl)
                out->framing = HTTP_FRAMING_LENGTH;
        else
                out->framing = HTTP_FRAMING_CLOSE;
        if (out->framing != HTTP_FRAMING_LENGTH)
                out->content_length = 0;
        out->reusable = !out->interim && out->framing != HTTP_FRAMING_CLOSE && !st->conn.close &&
                        (out->version_minor == 1 || st->conn.keep_alive);
        return 0;
}

static int resp_head(head_scan *s, const char *req_method, http_resp *out, verdict *v) {
        resp_state st = { 0 };
        http_span line;
        size_t n_headers = 0;
        int r = http_scan_line(s, 502, &line, v);
        if (r <= 0)
                return r;
        r = parse_status_line(s->buf, line, out, v);
        if (r < 0)
                return r;
        for (;;) {
                r = http_scan_line(s, 502, &line, v);
                if (r <= 0)
                        return r;
                if (line.len == 0)
                        break;
                if (n_headers++ == HTTP_HEADERS_MAX)
                        return http_refuse(v, 502, "too many header fields from upstream");
                http_header h;
                r = http_parse_field(s->buf, line, 502, &h, v);
                if (r < 0)
                        return r;
                r = resp_header(s->buf, &h, out, &st, v);
                if (r < 0)
                        return r;
        }
        r = resp_finish(req_method, out, &st, v);
        if (r < 0)
                return r;
        out->head_len = s->pos;
        return (int) s->pos;
}

int http_resp_parse(const char *buf, size_t len, const char *req_method, http_resp *out) {
        *out = (http_resp){ 0 };
        head_scan s = { .buf = buf, .len = len, .head_max = HTTP_RESP_HEAD_MAX, .bad_status = 502,
                        .big_status = 502 };
        verdict v = { 0 };
        int r = resp_head(&s, req_method, out, &v);
        if (r <= 0) {
                *out = (http_resp){ .status = v.status, .why = v.why };
        }
        return r;
}
