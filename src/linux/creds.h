/* SPDX-License-Identifier: Apache-2.0 */
/* The launcher's side of credentials (docs/policy.md, "Credentials"; docs/design/network.md,
 * "Credentials"): each bound secret read from cordon's store (secret_store_get), a random
 * placeholder made for it and put in the sandbox's environment. The set goes to the proxy
 * process alone, by its fork (proxy_start()): never through argv, a file or a descriptor. The
 * launcher and the sandbox's first process wipe their copies of it right after their forks
 * (creds_drop()). */
#pragma once

#include "cordon/cordon.h"
#include "net/cred-rewrite.h"
#include "plan/plan.h"

/* *ret NULL when the plan binds no credential. `home`: the caller's home (the file store's
 * place). A secret that is not stored fails the run (CORDON_USAGE, naming `cordon secret set
 * NAME`), as does one that cannot go into a header. 0 or -errno with err set. */
int creds_prepare(plan *p, const char *home, cred_set **ret, cordon_error *err);
/* Wipes the secrets and frees the set; *s becomes NULL. */
void creds_drop(cred_set **s);
