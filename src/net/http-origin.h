/* SPDX-License-Identifier: Apache-2.0 */
/* The request heads of a terminated TLS connection (src/net/proxy-tls.c, docs/design/network.md
 * "TLS inspection"): origin-form ("GET /path HTTP/1.1" with a Host header), as a client sends
 * them to a server. Each is rewritten into absolute form from its Host ("GET http://host/path
 * ...") and parsed by http_req_parse(), so the terminated path gets the same strict framing
 * rules (no smuggling pairs, no obs-fold, no Upgrade) as proxy requests. Pure: no sockets, no
 * allocation (fuzz/fuzz-http-origin.c). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net/http.h"

/* Room for the rewritten head: "http://" and the Host value come in front of the path. */
#define HTTP_ORIGIN_PARSE_MAX (HTTP_HEAD_MAX + HTTP_HOST_MAX + 16)

/* Parses the origin-form head at the start of buf[0..len) into out (its spans point into pbuf,
 * which holds the rewritten head). Returns > 0: the head is complete, that many bytes of buf
 * (through CRLF CRLF) are its original form; 0: more bytes needed (only while len <
 * HTTP_HEAD_MAX); -HTTP_EREFUSED: refuse with out->status and out->why. Any split of the input
 * gives the result of parsing it in one piece. */
int http_origin_parse(const char *buf, size_t len, char pbuf[HTTP_ORIGIN_PARSE_MAX],
                      http_req *out);

/* Whether the parsed request's Host names `host` (canonical) and, when it names a port, `port`:
 * a request on a connection judged for one name must not ask its server for another. */
bool http_origin_host_is(const http_req *rq, const char *pbuf, const char *host, uint16_t port);
