/* SPDX-License-Identifier: Apache-2.0 */
/* The launcher's side of credentials (docs/policy.md, "Credentials"; docs/design/network.md,
 * "Credentials"): each bound secret read from cordon's store (secret_store_get), a random
 * placeholder made for it and put in the sandbox's environment. The set goes to the proxy
 * process alone, by its fork (proxy_start()): never through argv, a file or a descriptor. The
 * launcher and the sandbox's first process wipe their copies of it right after their forks
 * (creds_drop()). */
#pragma once

#include "cordon/cordon.h"
#include "linux/creds-broker.h"
#include "net/cred-rewrite.h"
#include "plan/plan.h"

/* A run's brokered credentials: the id the brokers get, and one reaper per issued credential
 * (creds-broker.h), finished at the launch's end. */
typedef struct creds_run {
        char id[260]; /* the events' sessionId, or 32 random hex digits */
        after_run reapers[POLICY_MAX_CREDS];
        size_t n;
} creds_run;

/* *ret NULL when the plan binds no credential. `home`: the caller's home (the file store's
 * place). A secret that is not stored fails the run (CORDON_USAGE, naming `cordon secret set
 * NAME`), as does one that cannot go into a header; a broker credential is issued with run->id
 * (a broker the managed settings do not configure, or one that fails, refuses the run) and its
 * reaper added to `run`. 0 or -errno with err set. */
int creds_prepare(plan *p, const char *home, creds_run *run, cred_set **ret, cordon_error *err);
/* Revokes every brokered credential of the run (waits for the reapers). */
void creds_run_finish(creds_run *run);
/* Starts the revokes without waiting (a session host reaps its children itself). */
void creds_run_release(creds_run *run);
/* Wipes the secrets and frees the set; *s becomes NULL. */
void creds_drop(cred_set **s);
