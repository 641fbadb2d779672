/* SPDX-License-Identifier: Apache-2.0 */
/* A Java truststore for TLS inspection (docs/design/network.md, "TLS inspection"): Java ignores
 * SSL_CERT_FILE and trusts its own cacerts file, so the sandbox's JVMs get one holding every
 * certificate of the merged PEM bundle (the system's and the session CA). Written in the JKS
 * format, the one Debian's ca-certificates-java writes and every JDK reads (Java 9+ reads it
 * through keystore.type.compat when its default type is PKCS12): trusted-certificate entries
 * only, with the integrity digest over the password "changeit", the JDK's default for cacerts.
 * Pure: memory in, memory out. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#define JKS_MAX_CERTS 4096          /* certificates in one truststore; more is -E2BIG */
#define JKS_PASSWORD "changeit"

/* Every "CERTIFICATE" PEM block of pem[0..len) as a trusted-certificate entry (aliases
 * "cordon-0", "cordon-1", ... in order; other block types are skipped), dated `date_ms`
 * (milliseconds since the epoch). The store in *ret (caller frees), its size in *ret_len. 0, or
 * -errno: -EINVAL when pem holds no certificate, -E2BIG past JKS_MAX_CERTS, -ENOMEM, -EIO (an
 * OpenSSL failure). */
int jks_from_pem(const char *pem, size_t len, int64_t date_ms, uint8_t **ret, size_t *ret_len);
