/* SPDX-License-Identifier: Apache-2.0 */
/* The session CA of TLS inspection as the native backend hands it out (docs/design/network.md,
 * "TLS inspection"): made by the launcher before the sandbox's fork when some host has request
 * rules; its key goes to the proxy process only (by the proxy's fork), and is freed — OpenSSL
 * wipes a private key it frees — in the monitor at once and in the launcher once the proxy is
 * forked. The sandbox gets the certificate alone, in a merged bundle (the system's and the
 * session CA) mounted read-only over the system bundle's path in its own mount namespace: no
 * file is written on the host, so nothing is left behind and no command can replace the bundle
 * for a later run. */
#pragma once

#include "cordon/cordon.h"
#include "plan/plan.h"

struct tls_ca;

/* When p has request rules: a new CA in *ret and the merged bundle in p->net.ca_bundle; else
 * *ret = NULL. 0, or -errno with err set. */
int tls_bundle_prepare(plan *p, struct tls_ca **ret, cordon_error *err);
/* Frees the CA (its key wiped) and sets *ca to NULL. */
void tls_bundle_drop(struct tls_ca **ca);
/* In the sandbox's mount namespace, after the root is built: the merged bundle over the system
 * bundle's path (nothing when p has none). 0 or -errno. */
int tls_bundle_mount(const plan *p);
