/* SPDX-License-Identifier: Apache-2.0 */
/* Policy-checked file operations (docs/design/fs-ops.md): the mechanism behind cordon_fs_* and
 * cordon_session_fs_* (include/cordon/cordon.h; fs-api.c), and so behind cordond's fs.* methods.
 *
 * A harness's own file tools run outside any sandbox. These operations give it reads and writes
 * that obey a policy, decided on the very plan the backend applies: the caller builds it with
 * plan_build() from the resolved policy and hands it in, so the two can never disagree about
 * what is writable. From that plan:
 *   - writes go only where the plan's deepest mount over the path is a writable-root bind
 *     (MOUNT_OP_BIND_RW), never onto a protected path (the read-only binds and hides inside the
 *     roots, and the name rules' protected set, which also covers paths that do not exist yet),
 *     never to a name the creation-time rules deny (name_rules_check()), never through a symlink
 *     or into a hard-linked file;
 *   - reads never reach the secret set (the plan's hides and paths.secrets), the sandbox's private
 *     mounts (/tmp, /dev/shm, /dev, /proc) or the calling process's own kernel interfaces.
 * Every check is made on the path the kernel reports for what was actually opened, and writes
 * reach their directory by walking from the writable root with openat2(RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV): a symlink or mount swapped in
 * between the check and the write fails the walk instead of redirecting it. Files are replaced
 * atomically (a temporary file in the same directory, then a rename that never follows a link).
 *
 * Internal functions: >= 0 or -errno, and the context's error says why (code
 * POLICY_UNENFORCEABLE with `refusal` filled when the policy refused; EXEC_FAILED when the
 * operation itself failed; USAGE for a bad argument, such as a path that is not absolute and
 * normalisable). The result types are the public ones (cordon_fs_data, cordon_fs_entry, ...). */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cordon/cordon.h"
#include "plan/plan.h"

_Static_assert(sizeof(((cordon_fs_refusal *) 0)->target) == PATH_MAX,
               "a refusal's target holds any path the kernel names");

typedef struct fs_ctx {
        const plan *plan;            /* borrowed: the plan built for this operation */
        cordon_error err;            /* set on failure */
        cordon_fs_refusal refusal;   /* set when the policy refused (POLICY_UNENFORCEABLE) */
} fs_ctx;

/* cordon_fs_read() on a plan. */
int fs_read(fs_ctx *c, const char *path, uint64_t offset, uint64_t length, cordon_fs_data *ret);

/* cordon_fs_write() on a plan. */
int fs_write(fs_ctx *c, const char *path, const void *data, size_t len, cordon_fs_written *ret);

/* cordon_fs_edit() on a plan. */
int fs_edit(fs_ctx *c, const char *path, const char *old, size_t old_len, const char *new,
            size_t new_len, cordon_fs_written *ret);

/* cordon_fs_stat() on a plan: the entry itself (a final symlink is reported, not followed). */
int fs_stat(fs_ctx *c, const char *path, cordon_fs_entry *ret);

/* cordon_fs_list() on a plan: sorted by name, at most CORDON_FS_LIST_MAX. */
int fs_list(fs_ctx *c, const char *path, cordon_fs_entry **ret, size_t *ret_n,
            bool *ret_truncated);
