/* SPDX-License-Identifier: Apache-2.0 */
/* Strict, bounded, pure HTTP/1.x head parsers for the egress proxy: the request head a sandboxed
 * client sends to the proxy, the head rewritten for the upstream, and the response head the
 * upstream sends back. No sockets, no allocation: every function works on the caller's buffer.
 *
 * The client is hostile. A request the proxy and the upstream would frame differently (request
 * smuggling) or a target the proxy reads differently from the upstream (parser differential) is an
 * allowlist bypass, so everything RFC 9112 lets a recipient "handle leniently" is refused here:
 * bare LF or CR, obs-fold, whitespace before ':', Content-Length together with Transfer-Encoding,
 * any transfer coding but a lone "chunked", repeated framing headers, Upgrade.
 *
 * Incremental use: call http_req_parse() (or http_resp_parse()) on the whole buffer received so
 * far, again after each read. Every decision depends only on bytes before the point where it is
 * taken, so any split of the input gives the result of parsing it in one piece: 0 ("need more")
 * until the head is complete or the first fault is seen, then always the same answer. Each call
 * costs O(len), len ≤ the head limit. */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Bounds on everything a client controls (a request head at the limit still parses). */
#define HTTP_HEAD_MAX 16384       /* request head, request line through the final CRLF CRLF */
#define HTTP_RESP_HEAD_MAX 32768  /* response head (upstreams send long Set-Cookie lines) */
#define HTTP_LINE_MAX 8192        /* one request line or header line, CRLF excluded */
#define HTTP_HEADERS_MAX 100      /* header lines per head */
#define HTTP_METHOD_MAX 16        /* method name */
#define HTTP_HOST_MAX 255         /* host as written in the target ("[v6]" brackets included) */
#define HTTP_CRED_MAX 255         /* user name and password in Proxy-Authorization (as SOCKS5) */
/* http_req_rewrite() never needs more than this (checked by fuzz/fuzz-http.c). */
#define HTTP_REWRITE_MAX (HTTP_HEAD_MAX + 1024)

/* Every refusal returns this errno; the status field says what to answer. */
#define HTTP_EREFUSED EBADMSG

typedef enum http_kind {
        HTTP_KIND_CONNECT, /* CONNECT host:port: a tunnel */
        HTTP_KIND_FORWARD, /* METHOD http://host[:port]/path: forwarded in origin-form */
} http_kind;

/* How the end of a message body is found (RFC 9112 §6.3). */
typedef enum http_framing {
        HTTP_FRAMING_NONE,    /* no body */
        HTTP_FRAMING_LENGTH,  /* exactly content_length bytes */
        HTTP_FRAMING_CHUNKED, /* chunked coding, passed through unmodified */
        HTTP_FRAMING_CLOSE,   /* responses only: everything until the upstream closes */
} http_framing;

/* A range of the caller's buffer. Heads are < 64 KiB, so 16 bits each. */
typedef struct http_span {
        uint16_t off, len;
} http_span;

/* One header line: name as written, value with the surrounding whitespace removed. */
typedef struct http_header {
        http_span name, value;
} http_header;

/* A parsed request head. Spans point into the buffer given to http_req_parse(), which must stay
 * unchanged for as long as they are used (http_req_rewrite() takes it again). */
typedef struct http_req {
        /* On refusal: the status to answer (400, 405, 414, 417, 431, 501, 505) and a static,
         * printable phrase. 0 and NULL otherwise. */
        int status;
        const char *why;

        http_kind kind;
        char method[HTTP_METHOD_MAX + 1];
        /* The host exactly as written in the request-target (IPv6 keeps its brackets), NUL-free
         * and limited to letters, digits, '-', '.', '_' (or, bracketed, hex digits, ':', '.').
         * Not canonical: the caller canonicalises it (src/util/host.h) before any decision. */
        char host[HTTP_HOST_MAX + 1];
        uint16_t port;          /* 1..65535; 80 when a FORWARD URL names none */
        http_span authority;    /* "host[:port]" as written in the target */
        /* FORWARD: path and query as written after the authority; may be empty or start with
         * '?', in which case the upstream path is "/" + path (http_req_rewrite() does this). */
        http_span path;
        int version_minor;      /* 0 or 1 (HTTP/1.0, HTTP/1.1) */
        bool keep_alive;        /* 1.1: unless "Connection: close"; 1.0: only with keep-alive */
        bool expect_continue;   /* "Expect: 100-continue" (passed through to the upstream) */

        /* Proxy-Authorization: Basic, decoded. Another scheme leaves has_credentials false;
         * malformed Basic credentials are refused. Compare with http_req_creds_equal(). */
        bool has_credentials;
        char user[HTTP_CRED_MAX + 1];
        char pass[HTTP_CRED_MAX + 1];
        size_t user_len, pass_len;

        http_framing framing;   /* NONE, LENGTH or CHUNKED (never CLOSE for a request) */
        uint64_t content_length;

        size_t n_headers;
        http_header headers[HTTP_HEADERS_MAX];
        size_t head_len;        /* bytes through the final CRLF CRLF (the return value) */
} http_req;

/* Parses the request head at the start of buf[0..len).
 * Returns > 0: the head is complete, that many bytes (through CRLF CRLF) were consumed and *out
 *              is filled; the body (if any) follows in buf;
 *         0:   need more bytes (only while len < HTTP_HEAD_MAX);
 *         -HTTP_EREFUSED: refuse, answering out->status; the connection must then be closed.
 * Never reads buf[len] or beyond; never allocates. */
int http_req_parse(const char *buf, size_t len, http_req *out);

/* Builds the head to send upstream for a FORWARD request r parsed from buf:
 * "METHOD /path HTTP/1.x", the client's headers in order except the hop-by-hop ones (Connection
 * and every name it lists, Keep-Alive, Proxy-Connection, Proxy-Authorization,
 * Proxy-Authenticate, TE, Trailer), with Host set from the URL authority and the framing header
 * written as parsed ("Content-Length: N" / "Transfer-Encoding: chunked"), then "Connection:
 * keep-alive" or "Connection: close" and the final CRLF.
 * Returns the length written to out (not NUL-terminated), -ENOSPC when cap is too small (out may
 * then hold a partial head), -EINVAL for a CONNECT request. */
ssize_t http_req_rewrite(const http_req *r, const char *buf, char *out, size_t cap);

/* True when r carries Basic credentials equal to want_user / want_pass, compared in constant
 * time (socks5_creds_equal(), src/net/socks5.h, the same helper the SOCKS5 side uses). */
bool http_req_creds_equal(const http_req *r, const char *want_user, const char *want_pass);

/* Character classes shared with the body framer (RFC 9110 §5.6.2, §5.5), ASCII only: tchar, and
 * the bytes allowed in a field value (HTAB, SP, VCHAR, obs-text; never NUL, CR, LF, DEL). */
bool http_is_tchar(unsigned char c);
bool http_is_field_char(unsigned char c);

/* A parsed response head (upstream → client). */
typedef struct http_resp {
        /* On refusal: 502 (the status to answer the client) and a static phrase. */
        int status;
        const char *why;

        int code;               /* the upstream's status code, 100..599 */
        int version_minor;      /* 0 or 1 */
        /* 1xx (100 Continue, 102, 103): an interim head; the final head follows it. */
        bool interim;
        http_framing framing;   /* RFC 9112 §6.3 for the request method given */
        uint64_t content_length;
        /* The upstream connection may carry another request after this response: a final
         * response with a known length (not CLOSE), no "Connection: close", and HTTP/1.1 or an
         * HTTP/1.0 "Connection: keep-alive". */
        bool reusable;
        size_t head_len;
} http_resp;

/* Parses the response head at the start of buf[0..len) answering a request with method
 * req_method ("HEAD" responses have no body). Same return convention as http_req_parse(), with
 * HTTP_RESP_HEAD_MAX as the bound. A 101 response (we never forward Upgrade), a 2xx to CONNECT,
 * and a response with Transfer-Encoding other than "chunked" or together with Content-Length are
 * refused. */
int http_resp_parse(const char *buf, size_t len, const char *req_method, http_resp *out);
