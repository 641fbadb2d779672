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

/* Closes every fd >= 3 but the n fds of keep[] (entries < 3, -1 for none, are ignored;
 * duplicates are fine), with close_range(2): the one close-all-fds of cordon's processes, for a
 * child that must not hold its parent's descriptors. No allocation: safe after fork(). -E2BIG,
 * with nothing closed, for more than PROCESS_KEEP_FDS_MAX fds to keep; else 0 or -errno. */
#define PROCESS_KEEP_FDS_MAX (CORDON_SPAWN_FDS_MAX + 8) /* the sandbox's own, the caller's */
int process_close_fds_keep(const int *keep, size_t n);

/* Hard RLIMIT_CORE 0: with a core_pattern such as "core.%e" and a comm set by PR_SET_NAME to
 * "x.pem", the kernel itself would create a denied name that no syscall filter sees. */
int process_disable_core_dumps(void);
