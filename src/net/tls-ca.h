/* SPDX-License-Identifier: Apache-2.0 */
/* The per-session certificate authority of TLS inspection (docs/design/network.md, "TLS
 * inspection"): an EC P-256 key and a self-signed CA certificate made in memory at launch,
 * and the leaf certificates it signs, one per server name, cached. The key is never written
 * anywhere: only the certificate (tls_ca_pem()) is meant for the sandbox's trust bundle.
 *
 * Made by the launcher (src/linux/tls-bundle.h) and used by the terminated path
 * (proxy-tls.c). */
#pragma once

#include <openssl/evp.h>
#include <openssl/x509.h>

typedef struct tls_ca tls_ca;

#define TLS_CA_MAX_LEAVES 4096 /* cached leaf certificates; more names fail (-ENOSPC) */

/* A new CA whose subject names `label` (the session id: printable, at most 64 bytes used).
 * Valid from an hour ago (clocks differ) for 30 days. 0 or -errno (-ENOMEM, -EIO for an OpenSSL
 * failure). */
int tls_ca_new(tls_ca **ret, const char *label);
void tls_ca_free(tls_ca *ca);
/* The CA certificate as PEM, NUL-terminated; caller frees. 0 or -errno. */
int tls_ca_pem(const tls_ca *ca, char **ret);
/* The CA certificate itself (owned by ca). */
X509 *tls_ca_cert(const tls_ca *ca);
/* The leaf certificate for `name` (a canonical host name, or an IPv4/IPv6 literal), signed by
 * the CA, with that one subjectAltName, serverAuth only, not a CA; and the key it certifies (one
 * key for every leaf of the session). Both owned by ca: valid until tls_ca_free(). 0 or -errno
 * (-EINVAL for an empty or over-long name, -ENOSPC past TLS_CA_MAX_LEAVES names). */
int tls_ca_leaf(tls_ca *ca, const char *name, X509 **cert, EVP_PKEY **key);
