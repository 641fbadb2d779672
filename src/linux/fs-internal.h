/* SPDX-License-Identifier: Apache-2.0 */
/* Shared by the files of the policy-checked file operations: fs-check.c (what the plan allows
 * for a path, the syscall wrappers) and fs-ops.c (the operations). */
#pragma once

#include <sys/stat.h>

#include "linux/fs-ops.h"
#include "util/util.h"

/* Errors into c->err; each returns a negative errno for `return fs_fail(...)`. */
int fs_fail(fs_ctx *c, int errnum, const char *fmt, ...) _printf_(3, 4);     /* EXEC_FAILED */
int fs_usage(fs_ctx *c, const char *fmt, ...) _printf_(2, 3);                /* USAGE */
/* A policy refusal: POLICY_UNENFORCEABLE, c->refusal filled, -EACCES. */
int fs_refuse(fs_ctx *c, const char *action, const char *target, const char *rule,
              const char *fmt, ...) _printf_(5, 6);

/* The request's path, absolute and lexically normalised (no "..", no "//"). */
int fs_normalize(fs_ctx *c, const char *path, char **ret);
/* Splits a normalised path into its directory and final component; "/" has no final component
 * (-EISDIR). */
int fs_split(fs_ctx *c, const char *path, char dir[static PATH_MAX], char name[static NAME_MAX + 1]);

/* May `path` be read (listed, stat'ed)? Called on the path as requested and again on the path
 * the kernel reports for what was opened. */
int fs_check_read(fs_ctx *c, const char *path);
/* May a file at `path` be written (created, replaced)? `resolved`: the path is the kernel's name
 * for it (symlink-free), so the plan's mounts apply to it; otherwise only the name rules do
 * (they hold literal forms too). On success *ret_root is the writable root beneath which it lies
 * ("/" in mode danger-full-access), pointing into the plan. */
int fs_check_write(fs_ctx *c, const char *path, bool resolved, const char **ret_root);
/* Whether `path` is (beneath) a secret of the plan: its hides and paths.secrets. */
bool fs_is_secret(const plan *p, const char *path);
/* A file with more than one link may be a hard link to a secret made elsewhere: refuses it when
 * its inode is one of the secret set's files (followed into secret directories, bounded). */
int fs_check_secret_inode(fs_ctx *c, const struct stat *st, const char *path);

/* Syscall wrappers: >= 0 or -errno, O_CLOEXEC always. */
int fs_openat2(int dirfd, const char *path, int flags, uint64_t resolve);
/* The kernel's name for what `fd` refers to (d_path), absolute; -ENOENT when it was deleted. */
int fs_fd_path(int fd, char buf[static PATH_MAX]);
/* Opens, with `flags`, the inode an O_PATH descriptor refers to (through /proc/self/fd), so a
 * file is only opened for reading once its type has been checked: opening a device or FIFO
 * could block or have effects of its own. */
int fs_reopen(int pathfd, int flags);
/* The id of the mount `fd` is on (statx STATX_MNT_ID). */
int fs_mount_id(int fd, uint64_t *ret);
