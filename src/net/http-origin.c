/* SPDX-License-Identifier: Apache-2.0 */
#include "net/http-origin.h"

#include <string.h>
#include <strings.h>

#include "util/host.h"

static int refuse(http_req *out, int status, const char *why) {
        out->status = status;
        out->why = why;
        return -HTTP_EREFUSED;
}

/* The first Host field's value, whitespace trimmed; NULL when there is none. Only lines of the
 * head are looked at; a repeated Host is refused by http_req_parse() afterwards. */
static const char *find_host(const char *h, size_t len, size_t *vlen) {
        const char *p = memchr(h, '\n', len);
        while (p && (size_t) (p + 1 - h) < len) {
                const char *line = p + 1;
                size_t left = len - (size_t) (line - h);
                const char *eol = memchr(line, '\r', left);
                if (!eol || eol == line)
                        return NULL;
                if (eol - line > 5 && strncasecmp(line, "host:", 5) == 0) {
                        const char *v = line + 5;
                        while (v < eol && (*v == ' ' || *v == '\t'))
                                v++;
                        const char *e = eol;
                        while (e > v && (e[-1] == ' ' || e[-1] == '\t'))
                                e--;
                        *vlen = (size_t) (e - v);
                        return v;
                }
                p = memchr(line, '\n', left);
        }
        return NULL;
}

int http_origin_parse(const char *buf, size_t len, char pbuf[HTTP_ORIGIN_PARSE_MAX],
                      http_req *out) {
        memset(out, 0, sizeof(*out));
        size_t scan = len < HTTP_HEAD_MAX ? len : HTTP_HEAD_MAX;
        const char *end = memmem(buf, scan, "\r\n\r\n", 4);
        if (!end)
                return len < HTTP_HEAD_MAX ? 0 : refuse(out, 431, "request head too large");
        size_t head = (size_t) (end - buf) + 4;
        const char *sp = memchr(buf, ' ', head);
        size_t hl = 0;
        const char *host = find_host(buf, head, &hl);
        if (!sp || sp[1] != '/' || !host || hl == 0 || hl > HTTP_HOST_MAX)
                return refuse(out, 400, "an HTTP/1.1 request in origin form with a Host header "
                                        "is expected on a terminated connection");
        size_t pre = (size_t) (sp + 1 - buf), n;
        memcpy(pbuf, buf, pre);
        memcpy(pbuf + pre, "http://", 7);
        memcpy(pbuf + pre + 7, host, hl);
        n = pre + 7 + hl;
        memcpy(pbuf + n, buf + pre, head - pre);
        n += head - pre;
        int r = http_req_parse(pbuf, n, out);
        if (r < 0)
                return r;
        if (r == 0 || (size_t) r != n) /* the whole head is there: anything else is a fault */
                return refuse(out, 400, "malformed request head");
        return (int) head;
}

bool http_origin_host_is(const http_req *rq, const char *pbuf, const char *host, uint16_t port) {
        net_host h;
        const char *why;
        if (net_host_canon(rq->host, strlen(rq->host), &h, &why) < 0 || strcmp(h.text, host) != 0)
                return false;
        const char *a = pbuf + rq->authority.off;
        size_t n = rq->authority.len;
        /* A port after the host ("name:443", "[v6]:443"): it must be the connection's. Without
         * one the request means the connection's own port. */
        bool explicit_port = n > 0 && a[0] == '[' ? a[n - 1] != ']' : memchr(a, ':', n) != NULL;
        return !explicit_port || rq->port == port;
}
