/* SPDX-License-Identifier: Apache-2.0 */
/* The session CA of TLS inspection as the Linux backends hand it out (docs/design/network.md,
 * "TLS inspection"): made by the launcher before the sandbox's fork when some host has request
 * rules; its key goes to the proxy process only (by the proxy's fork), and is freed — OpenSSL
 * wipes a private key it frees — in the monitor at once and in the launcher once the proxy is
 * forked. The sandbox gets the certificate alone: in a merged bundle (the system's and the
 * session CA) and, when the host has a JDK, in a Java truststore of the same certificates.
 * Natively both are mounted read-only over the system's paths in the sandbox's own mount
 * namespace: no file is written on the host, so nothing is left behind and no command can
 * replace them for a later run. The landlock backend (no mount namespace) writes the bundle
 * into a per-run directory outside every writable root (backend-landlock.c), and makes no
 * truststore: no JVM there could reach a host (it reads no proxy variable). */
#pragma once

#include <stdbool.h>

#include "cordon/cordon.h"
#include "plan/plan.h"

struct tls_ca;

/* Where Debian's JDKs (and most distributions') find their truststore: $JAVA_HOME/lib/security/
 * cacerts links here. */
#define TLS_BUNDLE_JAVA_CACERTS "/etc/ssl/certs/java/cacerts"
/* The bundle's name in the landlock backend's directory (tls_bundle_write()). */
#define TLS_BUNDLE_FILE "ca-certificates.crt"

/* When p has request rules: a new CA in *ret, the merged bundle in p->net.ca_bundle and, with
 * `java` and when this host has TLS_BUNDLE_JAVA_CACERTS, the Java truststore in
 * p->net.java_truststore; else *ret = NULL and neither. 0, or -errno with err set. */
int tls_bundle_prepare(plan *p, bool java, struct tls_ca **ret, cordon_error *err);
/* Frees the CA (its key wiped) and sets *ca to NULL. */
void tls_bundle_drop(struct tls_ca **ca);
/* In the sandbox's mount namespace, after the root is built: the merged bundle over the system
 * bundle's path (nothing when p has none). 0 or -errno. */
int tls_bundle_mount(const plan *p);
/* Likewise the Java truststore over TLS_BUNDLE_JAVA_CACERTS (nothing when p has none or the
 * sandbox's root has no such file). 0 or -errno. */
int tls_bundle_mount_java(const plan *p);
/* The landlock backend's copy: TLS_BUNDLE_FILE, mode 0444, created in the existing directory
 * `dir` (nothing when p has no bundle). 0, or -errno with err set. */
int tls_bundle_write(const plan *p, const char *dir, cordon_error *err);
