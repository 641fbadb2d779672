/* SPDX-License-Identifier: Apache-2.0 */
/* TLS termination for hosts with request rules (docs/design/network.md, "TLS inspection"): the
 * proxy's two TLS contexts, made once before the proxy drops its privileges (the trust store and
 * tls.upstreamCa files are read then). The server side presents leaves of the session CA
 * (tls-ca.h); the client side verifies the real server against the system bundle plus the
 * policy's upstream CAs, never less. */
#pragma once

#include "net/tls-ca.h"
#include "util/util.h"

typedef struct proxy_tls proxy_tls;

/* The system trust store every upstream is verified against (Debian's ca-certificates). */
#define PROXY_TLS_SYSTEM_BUNDLE "/etc/ssl/certs/ca-certificates.crt"

/* Takes ownership of ca. upstream_ca: PEM files trusted for upstreams in addition to the system
 * bundle. 0, -ENOENT (a file cannot be read: *bad names it), -EIO (OpenSSL failed), -ENOMEM. */
int proxy_tls_new(proxy_tls **ret, tls_ca *ca, const strv *upstream_ca, const char **bad);
void proxy_tls_free(proxy_tls *t);
