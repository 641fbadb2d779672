/* SPDX-License-Identifier: Apache-2.0 */
/* What the two halves of the HTTP/1.x head parser share: http.c (lines, fields, values, the
 * request head and its rewrite) and http-response.c (the upstream's response head). Not part of
 * the parser's interface (http.h). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net/http.h"

/* Why a head is refused: the status the proxy answers and a static phrase. */
typedef struct verdict {
        int status;
        const char *why;
} verdict;

/* Sets *v and returns -HTTP_EREFUSED. */
int http_refuse(verdict *v, int status, const char *why);

bool http_is_digit(unsigned char c);
/* `n` bytes at `a` equal the literal, ASCII case-insensitively. */
bool http_mem_ieq(const char *a, size_t n, const char *lit);
const char *http_span_ptr(const char *buf, http_span s);
bool http_span_ieq(const char *buf, http_span s, const char *lit);

/* A head being scanned line by line. */
typedef struct head_scan {
        const char *buf;
        size_t len, pos;    /* pos: where the next line starts */
        size_t head_max;
        int bad_status;     /* malformed head: 400 (request) or 502 (response) */
        int big_status;     /* over a bound: 431 (request) or 502 (response) */
} head_scan;

/* The next CRLF-terminated line: 1 (*ret set, CRLF excluded), 0 (need more) or a refusal. */
int http_scan_line(head_scan *s, int too_long_status, http_span *ret, verdict *v);
/* One "name: value" field line; `bad` is the status of a malformed one. */
int http_parse_field(const char *buf, http_span line, int bad, http_header *ret, verdict *v);
/* A Content-Length value: digits only, no overflow. */
int http_parse_content_length(const char *p, size_t n, uint64_t *ret);

/* The tokens of a Connection field that matter to the proxy. */
typedef struct conn_tokens {
        bool close, keep_alive, upgrade, names_framing;
} conn_tokens;
int http_parse_connection(const char *p, size_t n, conn_tokens *c);
/* "HTTP/1.0" or "HTTP/1.1"; another version is `unsupported`, a malformed one `bad`. */
int http_parse_version(const char *p, size_t n, int unsupported, int bad, verdict *v);
