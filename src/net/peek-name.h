/* SPDX-License-Identifier: Apache-2.0 */
/* The host a redirected connection's first bytes ask for (docs/design/network.md, "Every TCP
 * client"): the server name of a TLS ClientHello (SNI, RFC 6066 §3) or the Host header of an
 * HTTP/1 request. The proxy compares it with the name the connection's synthetic address maps
 * to, so a client cannot connect to an allowed name's address and then ask that server (a CDN
 * fronting many names) for another ("domain fronting"). Pure: no sockets; fuzz/fuzz-peek-name.c
 * runs it on every input shape. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "util/host.h"

#define PEEK_MAX 16384 /* bytes read before a verdict: a ClientHello or a request head fits */

typedef enum peek_result {
        PEEK_MORE,     /* a ClientHello or a request head has begun: read on (at most PEEK_MAX) */
        PEEK_NONE,     /* not TLS, not HTTP, or either without a name: nothing to compare */
        PEEK_NAME,     /* *ret holds the name asked for (canonical, net_host_canon()) */
        PEEK_INVALID,  /* a ClientHello or request head that no server would read the same way
                        * (a name that does not canonicalise, two names, a record that lies
                        * about its length): refused, since what the server sees is unknown */
} peek_result;

/* Judges buf[0..len), all the client has sent so far. A TLS ClientHello may span several
 * handshake records; they are joined. */
peek_result peek_name(const uint8_t *buf, size_t len, net_host *ret);
