/* SPDX-License-Identifier: Apache-2.0 */
/* Credential brokers (docs/settings.md, "credentialBrokers"; docs/design/network.md,
 * "Credentials"): the administrator's commands that issue a credential for a run and revoke it
 * afterwards. Each runs outside the sandbox with the caller's rights, an environment of PATH and
 * CORDON_RUN_ID only, stdin and stderr /dev/null (revoke: the credential on stdin), the run's id
 * as its last argument, and is killed (with its process group) at the broker's timeout.
 *
 * The revoke runs in a reaper: a process forked when the credential is issued, in a session of
 * its own (a terminal's ^C does not reach it) and without a parent-death signal, that waits for
 * the launcher's end of a pipe to close — at the run's cleanup, or when the kernel closes it
 * because cordon died, SIGKILL included — then revokes and exits. So a credential is revoked
 * however the run ends. */
#pragma once

#include <stddef.h>
#include <sys/types.h>

#include "cordon/cordon.h"
#include "policy/policy.h"

typedef struct creds_reaper {
        pid_t pid; /* -1: none */
        int fd;    /* the launcher's end: closing it starts the revoke */
} creds_reaper;

/* Runs b's issue command; *value (malloc'ed, the caller wipes it) is its stdout without one
 * trailing newline. A failure, a non-zero exit, a timeout or an empty credential refuses the
 * run (CORDON_LAUNCH_FAILED). 0 or -errno with err set. */
int broker_issue(const policy_broker *b, const char *id, char **value, size_t *len,
                 cordon_error *err);
/* Forks the reaper that revokes value (len bytes) with b's revoke command once r->fd closes. */
int broker_reaper_start(const policy_broker *b, const char *id, const char *value, size_t len,
                        creds_reaper *r, cordon_error *err);
/* Closes the launcher's end and waits for the revoke to finish (bounded by the timeout). */
void broker_reaper_finish(creds_reaper *r);
