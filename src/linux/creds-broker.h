/* SPDX-License-Identifier: Apache-2.0 */
/* Credential brokers (docs/settings.md, "credentialBrokers"; docs/design/network.md,
 * "Credentials"): the administrator's commands that issue a credential for a run and revoke it
 * afterwards. Each runs outside the sandbox with the caller's rights, an environment of PATH and
 * CORDON_RUN_ID only, stdin and stderr /dev/null (revoke: the credential on stdin), the run's id
 * as its last argument, and is killed (with its process group) at the broker's timeout.
 *
 * The revoke runs in an after-run process (after-run.h) forked when the credential is issued:
 * it revokes once the launcher says the run is over or dies, SIGKILL included. So a credential
 * is revoked however the run ends. */
#pragma once

#include <stddef.h>
#include <sys/types.h>

#include "cordon/cordon.h"
#include "linux/after-run.h"
#include "policy/policy.h"

/* Runs b's issue command; *value (malloc'ed, the caller wipes it) is its stdout without one
 * trailing newline. A failure, a non-zero exit, a timeout or an empty credential refuses the
 * run (CORDON_LAUNCH_FAILED). 0 or -errno with err set. */
int broker_issue(const policy_broker *b, const char *id, char **value, size_t *len,
                 cordon_error *err);
/* Starts the after-run process ("cordon-revoke") that revokes value (len bytes) with b's revoke
 * command once the run is over: after_run_release() starts the revoke, after_run_finish() also
 * waits for it (bounded by the broker's timeout). 0 or -errno with err set. */
int broker_reaper_start(const policy_broker *b, const char *id, const char *value, size_t len,
                        after_run *r, cordon_error *err);
