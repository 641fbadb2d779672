/* SPDX-License-Identifier: Apache-2.0 */
/* Builds the sandbox's root from the plan's mount ops, inside a fresh user+mount namespace, and
 * pivots into it. Everything is done through file descriptors (open_tree/move_mount/fsmount and
 * openat2 with RESOLVE_NO_SYMLINKS), never by re-resolving path strings that a concurrently running
 * process could swap a symlink into. */
#pragma once

#include "plan/plan.h"

/* Applies every op except MOUNT_OP_PROC (which only the PID namespace's init can mount: see
 * mount_proc). On return the caller's root and cwd are the new root. */
int mount_build_root(const plan *p, cordon_error *err);

/* Mounts a fresh procfs for the caller's PID namespace at /proc (called by the namespace's init,
 * before it drops its capabilities). */
int mount_proc(cordon_error *err);

/* After the pivot: a read-only file holding `content` over the file `path` names in the new
 * root (its symlinks followed there, never past it). 0, -ENOENT when there is no such file (then
 * nothing is mounted), or -errno. */
int mount_file_over(const char *path, const char *content);
/* The same with `len` bytes of any content (a binary truststore). */
int mount_bytes_over(const char *path, const void *content, size_t len);
