/* SPDX-License-Identifier: Apache-2.0 */
/* The Landlock layer: defence in depth under the mount plan. It handles only write-type rights
 * (reads are the mount plan's job: Landlock cannot hide a secret inside a readable tree) and, from
 * ABI 6, scopes abstract Unix sockets and signals to the sandbox. */
#pragma once

#include "plan/plan.h"

/* The running kernel's Landlock ABI version, probed once; 0 when Landlock is unavailable. */
int landlock_abi(void);

/* The write rights handled for a given ABI. */
uint64_t landlock_write_access(int abi);

/* Restricts the calling process (which must have no_new_privs): writes allowed only beneath the
 * plan's landlock rules and, per access mode, to the files open on fds 0-2. */
int landlock_apply(const plan *p, cordon_error *err);

/* For cordon's own helper processes that parse hostile input (the egress proxy): no file may be
 * written and nothing executed, anywhere; signals and abstract sockets scoped (ABI 6). Reads stay
 * open (the resolver reads /etc/hosts, /etc/resolv.conf, NSS modules). Needs no_new_privs.
 * Returns 0 (also when the kernel has no Landlock) or -errno. */
int landlock_confine_helper(void);
