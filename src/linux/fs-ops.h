/* SPDX-License-Identifier: Apache-2.0 */
/* Policy-checked file operations (docs/design/fs-ops.md; the fs.* methods of docs/protocol.md).
 *
 * A harness's own file tools run outside any sandbox. These operations give it reads and writes
 * that obey the session's policy, decided on the very plan the backend applies: the caller builds
 * it with plan_build() from the session's resolved policy and hands it in, so the two can never
 * disagree about what is writable. From that plan:
 *   - writes go only where the plan's deepest mount over the path is a writable-root bind
 *     (MOUNT_OP_BIND_RW), never onto a protected path (the read-only binds and hides inside the
 *     roots, and the name rules' protected set, which also covers paths that do not exist yet),
 *     never to a name the creation-time rules deny (name_rules_check()), never through a symlink
 *     or into a hard-linked file;
 *   - reads never reach the secret set (the plan's hides and paths.secrets), the sandbox's private
 *     mounts (/tmp, /dev/shm, /dev, /proc) or the daemon's own kernel interfaces.
 * Every check is made on the path the kernel reports for what was actually opened, and writes
 * reach their directory by walking from the writable root with openat2(RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV): a symlink or mount swapped in
 * between the check and the write fails the walk instead of redirecting it. Files are replaced
 * atomically (a temporary file in the same directory, then a rename that never follows a link).
 *
 * Internal functions: >= 0 or -errno, and the context's error says why (code
 * POLICY_UNENFORCEABLE with `refusal` filled when the policy refused; EXEC_FAILED when the
 * operation itself failed; USAGE for a path that is not absolute and normalisable). */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "plan/plan.h"

#define FS_CONTENT_MAX (8u * 1024 * 1024) /* bytes read, written or edited in one call */
#define FS_LIST_MAX 10000                  /* entries of one fs.list */

/* What refused an operation: the `violation` event a client gets (docs/events.schema.json). */
typedef struct fs_refusal {
        const char *action;     /* "file-read*", "file-write*", "file-create-name"; NULL: none */
        char target[PATH_MAX];  /* the path the rule met (resolved) */
        char rule[PATH_MAX];    /* the rule: a secret or protected path, a name glob, a reason */
} fs_refusal;

typedef struct fs_ctx {
        const plan *plan;       /* borrowed: the session's plan, built for this operation */
        cordon_error err;       /* set on failure */
        fs_refusal refusal;     /* set when the policy refused (err.code POLICY_UNENFORCEABLE) */
} fs_ctx;

typedef enum fs_type {
        FS_TYPE_FILE,
        FS_TYPE_DIR,
        FS_TYPE_SYMLINK,
        FS_TYPE_FIFO,
        FS_TYPE_SOCKET,
        FS_TYPE_CHAR,
        FS_TYPE_BLOCK,
        FS_TYPE_OTHER,
} fs_type;

const char *fs_type_name(fs_type t);

typedef struct fs_entry {
        char *name;             /* fs.list: the entry's name (bytes as on disk); fs.stat: NULL */
        fs_type type;           /* of the entry itself: a symlink is not followed */
        uint64_t size;          /* 0 for a secret */
        mode_t mode;            /* permission bits (07777) */
        struct timespec mtime;
        bool secret;            /* fs.list: the sandbox shows it empty; its size is not reported */
} fs_entry;

typedef struct fs_data {
        char *data;             /* malloc'ed, NUL-terminated after len */
        size_t len;
        uint64_t size;          /* the file's size */
        uint64_t offset;        /* where data starts */
        bool eof;               /* data reaches the end of the file */
} fs_data;

typedef struct fs_written {
        bool created;           /* the file did not exist */
        uint64_t size;          /* bytes now in the file */
} fs_written;

/* fs.read: `length` bytes (0: the rest of the file, which must then be <= FS_CONTENT_MAX) from
 * `offset`. Symlinks are followed (the sandbox follows them too); what is opened is checked. */
int fs_read(fs_ctx *c, const char *path, uint64_t offset, uint64_t length, fs_data *ret);
void fs_data_done(fs_data *d);

/* fs.write: replaces (or creates) the regular file at `path` with `len` bytes. The directory must
 * exist; a new file gets mode 0644 (less the umask), a replaced one keeps its permission bits. */
int fs_write(fs_ctx *c, const char *path, const void *data, size_t len, fs_written *ret);

/* fs.edit: replaces the one occurrence of `old` (non-empty) in the file with `new`, atomically;
 * no occurrence, or more than one (overlapping ones count), is an error saying which. */
int fs_edit(fs_ctx *c, const char *path, const char *old, size_t old_len, const char *new,
            size_t new_len, fs_written *ret);

/* fs.stat: the entry itself (a final symlink is reported, not followed). */
int fs_stat(fs_ctx *c, const char *path, fs_entry *ret);

/* fs.list: the directory's entries sorted by name, at most FS_LIST_MAX (*ret_truncated says
 * there were more). Free with fs_entries_free(). */
int fs_list(fs_ctx *c, const char *path, fs_entry **ret, size_t *ret_n, bool *ret_truncated);
void fs_entries_free(fs_entry *e, size_t n);
