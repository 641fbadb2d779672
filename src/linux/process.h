/* SPDX-License-Identifier: Apache-2.0 */
/* Credentials and process attributes of the sandbox's setup processes. Each returns 0 or -errno. */
#pragma once

#include <stddef.h>
#include <sys/types.h>

#include "cordon/cordon.h"

/* Maps exactly one uid and gid (the caller's own) into the user namespace the caller just
 * unshared: the command keeps its identity, and no other id exists inside, so set*id() can change
 * nothing. Writes "deny" to setgroups first (required to write gid_map unprivileged). */
int userns_map_self(uid_t outer_uid, gid_t outer_gid);

/* Drops every capability for good: ambient and inheritable cleared, bounding set emptied,
 * securebits NOROOT/NO_SETUID_FIXUP/KEEP_CAPS/NO_CAP_AMBIENT_RAISE set and locked (so uid 0 inside
 * does not regain capabilities at execve), then effective/permitted emptied. */
int process_drop_capabilities(void);

/* Dies with SIGKILL when the parent thread dies; fails with -ESRCH if the parent is already gone
 * (then the caller must exit: nothing may outlive the launcher). `expected_parent` <= 0 skips the
 * check (PID namespace init, whose parent is outside and reads as 0). */
int process_die_with_parent(pid_t expected_parent);

/* Closes every fd >= 3 except `keep` (may be -1). */
int process_close_fds_except(int keep);
/* The same, keeping two fds (either may be -1). */
int process_close_fds_except2(int keep1, int keep2);
/* The same, keeping the n fds of keep[] (entries < 3 are ignored); -E2BIG for more than
 * PROCESS_KEEP_FDS_MAX: the sandbox's own channels and the caller's cordon_spawn_options.fds. */
#define PROCESS_KEEP_FDS_MAX (CORDON_SPAWN_FDS_MAX + 8)
int process_close_fds_keep(const int *keep, size_t n);

/* Hard RLIMIT_CORE 0: with a core_pattern such as "core.%e" and a comm set by PR_SET_NAME to
 * "x.pem", the kernel itself would create a denied name that no syscall filter sees. */
int process_disable_core_dumps(void);
