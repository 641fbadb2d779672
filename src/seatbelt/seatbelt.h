/* SPDX-License-Identifier: Apache-2.0 */
/* The macOS Seatbelt profile generator (docs/design/seatbelt.md, docs/design/seatbelt.md): the same
 * plan the Linux backend applies, written as an SBPL profile for `sandbox-exec -p`. Pure code: it
 * reads the plan and, through the resolver, the filesystem's symlinks, and is built and
 * golden-tested on every platform; only src/seatbelt/launch-macos.c runs it. */
#pragma once

#include "plan/plan.h"

/* Gives the symlink-resolved spelling of an absolute path (*ret, malloc'ed), or -errno when
 * there is none (the path is then used as written only). The default, path_resolve_lenient(),
 * resolves this host's symlinks; tests pass one that also knows macOS's (/tmp is /private/tmp,
 * /var is /private/var, /etc is /private/etc). */
typedef int (*seatbelt_resolve_fn)(void *userdata, const char *path, char **ret);

typedef struct seatbelt_params {
        /* The session's egress proxy, on localhost: the only TCP destination. 0: none (every
         * connection is refused). */
        uint16_t proxy_port;
        /* The run's private temporary directory (TMPDIR): writable, nothing executable there.
         * NULL: none. */
        const char *tmpdir;
        /* What every deny's message ends with, to find this run's refusals in the system log
         * (sandbox-log.h): the run's session id. NULL: the policy's session id, else "-". */
        const char *session;
        seatbelt_resolve_fn resolve; /* NULL: path_resolve_lenient() */
        void *userdata;
} seatbelt_params;

/* The profile for `plan` (built from `policy` by plan_build()). `policy` supplies what the plan
 * does not carry: execGrantRoots and allowUnixSockets. Deterministic: the same inputs give the same
 * bytes. Returns 0 and a malloc'ed profile, or -errno with `err` set: CORDON_POLICY_INVALID for
 * danger-full-access (it has no sandbox, hence no profile), CORDON_POLICY_UNENFORCEABLE for a
 * path a profile cannot hold (a control character, invalid UTF-8), CORDON_LAUNCH_FAILED for
 * memory. */
int seatbelt_profile(const plan *p, const cordon_policy *policy, const seatbelt_params *params,
                     char **ret, cordon_error *err);

/* Programs whose purpose is to act outside the sandbox; their execution is denied everywhere
 * (NULL-terminated). */
extern const char *const seatbelt_denied_programs[];
