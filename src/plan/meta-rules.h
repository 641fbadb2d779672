/* SPDX-License-Identifier: Apache-2.0 */
/* Pure decision for metadata changes (chmod, chown, utimes, xattrs) in the landlock backend:
 * may the file at this path have its metadata changed? Used by the supervisor
 * (src/linux/supervisor-meta.c) on the path of the inode it pinned. */
#pragma once

#include "plan/name-rules.h"

typedef enum meta_verdict {
        META_ALLOWED = 0,
        META_DENIED_OUTSIDE,   /* not beneath a writable root (or a path that cannot be vetted) */
        META_DENIED_PROTECTED, /* a protected path or secret, or beneath one */
} meta_verdict;

/* The rule text of META_DENIED_OUTSIDE. */
extern const char meta_rule_outside[];

/* `path`: the kernel's name of the inode (d_path: absolute, symlink-free), `roots`: the writable
 * roots (resolved). Allowed only beneath a root and neither at nor beneath a name rule's
 * protected path (denyCreateNames globs do not count: an existing .env is the user's to chmod).
 * An ancestor of a protected path may change (chmod of the workspace itself, `tar x` of "./"):
 * its mode cannot hand a protected file to anyone, the file keeps its own. On a denial
 * *ret_rule points at meta_rule_outside or at the rule string inside `r`. */
meta_verdict meta_rules_check(const name_rules *r, const strv *roots, const char *path,
                              const char **ret_rule);
