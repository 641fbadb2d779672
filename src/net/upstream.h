/* SPDX-License-Identifier: Apache-2.0 */
/* The client side of the two protocols the egress proxy speaks to an upstream proxy
 * (egressUpstream; docs/design/network.md, "Upstream proxies"): HTTP CONNECT (RFC 9110 §9.3.6)
 * with Basic credentials (RFC 7617), and SOCKS5 CONNECT (RFC 1928) with username/password
 * (RFC 1929). Pure: the builders write requests into the caller's buffer, the parsers read the
 * upstream's answers from the bytes received so far; no sockets, no allocation. The proxy's state
 * machine around them is src/net/proxy-upstream.c.
 *
 * The upstream is the operator's, but its answers are parsed as strictly as a client's requests:
 * a confused or hostile upstream (or whatever answers at its address) must not make the proxy
 * read past its buffer, take a refusal for an open tunnel, or take the destination's first bytes
 * for part of the answer.
 *
 * Each parser takes the whole buffer received so far for one answer and returns
 *   > 0  complete, and the step succeeded; that many bytes were consumed. After the final answer
 *        (the CONNECT's head, the SOCKS5 request's reply) the rest belongs to the destination (a
 *        server that speaks first);
 *   0    need more bytes;
 *   < 0  the tunnel will not open: -ECONNREFUSED when the upstream said no (out->code holds its
 *        HTTP status or SOCKS5 code), -EPROTO when the bytes are not an answer of the protocol.
 *        out->why is a static phrase either way.
 * Every decision depends only on the bytes before the point where it is taken, so any split of
 * the input gives the result of parsing it in one piece (checked by fuzz/fuzz-upstream.c). */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "policy/upstream-url.h"
#include "util/host.h"

/* Bytes any request here can take: CONNECT with a 253-byte name twice and 255-byte credentials
 * in Basic is under 1 KiB; SOCKS5's longest message is 513 bytes. */
#define UPSTREAM_REQUEST_MAX 1536
/* The longest answer read: an HTTP answer head (with its interim heads) as long as a response
 * head may be; SOCKS5 answers are at most 262 bytes. */
#define UPSTREAM_ANSWER_MAX 32768

typedef struct upstream_answer {
        int code;        /* HTTP: the final status; SOCKS5: the method, status or REP byte */
        const char *why; /* on failure; NULL otherwise */
} upstream_answer;

/* ---- HTTP CONNECT ----------------------------------------------------------------------- */

/* "CONNECT host:port HTTP/1.1", a Host field naming the same authority, and, when the upstream
 * has credentials, "Proxy-Authorization: Basic base64(user:password)". `h` is canonical
 * (util/host.h): an IPv6 address is written in brackets. Returns the length (no NUL), or
 * -ENOSPC when it does not fit in `cap` (UPSTREAM_REQUEST_MAX always does). */
ssize_t upstream_http_request(const policy_upstream *u, const net_host *h, uint16_t port,
                              char *out, size_t cap);

/* The answer head (after any 1xx interim heads): a 2xx opens the tunnel; any other final status
 * is -ECONNREFUSED with the status in out->code; a head that is not a valid HTTP/1.x response
 * (src/net/http-response.c's parser, with its bounds) or is longer than UPSTREAM_ANSWER_MAX is
 * -EPROTO. */
int upstream_http_answer(const char *buf, size_t len, upstream_answer *out);

/* ---- SOCKS5 ----------------------------------------------------------------------------- */

/* The greeting: "no authentication", and username/password too when the upstream has
 * credentials. Returns its length (3 or 4). */
size_t upstream_socks5_greeting(const policy_upstream *u, uint8_t out[4]);

/* The method selection {5, METHOD}: a method the greeting offered (out->code). 0xFF is
 * -ECONNREFUSED (none acceptable); a method not offered, or another version, -EPROTO. */
int upstream_socks5_method(const void *buf, size_t len, const policy_upstream *u,
                           upstream_answer *out);

/* The RFC 1929 request {1, ULEN, UNAME, PLEN, PASSWD}. Returns its length, or -EINVAL when the
 * upstream has no credentials, -ENOSPC when it does not fit. */
ssize_t upstream_socks5_auth_request(const policy_upstream *u, uint8_t *out, size_t cap);

/* The RFC 1929 answer {1, STATUS}: STATUS 0 succeeds; any other is -ECONNREFUSED (the
 * credentials were rejected), another version -EPROTO. */
int upstream_socks5_auth_answer(const void *buf, size_t len, upstream_answer *out);

/* The CONNECT request for `h`:`port`: a name as ATYP 3 (the upstream resolves it), an IPv4
 * address as ATYP 1, an IPv6 address as ATYP 4. Returns its length, or -ENOSPC. */
ssize_t upstream_socks5_request(const net_host *h, uint16_t port, uint8_t *out, size_t cap);

/* The reply {5, REP, 0, ATYP, BND.ADDR, BND.PORT}: REP 0 succeeds and consumes the whole reply;
 * any other REP is -ECONNREFUSED at once (out->code = REP, out->why its RFC 1928 meaning); another
 * version, a non-zero reserved byte or an unknown or empty address -EPROTO. */
int upstream_socks5_reply(const void *buf, size_t len, upstream_answer *out);
