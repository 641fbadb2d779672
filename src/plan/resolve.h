/* SPDX-License-Identifier: Apache-2.0 */
/* Path resolution that tolerates paths which do not exist (yet), and the small filesystem reads
 * the planner makes (resolve.c). Reads only, no kernel state changed. Used by every planner: the
 * mount and name-rule plan (plan.c, plan-deny.c) and the Seatbelt profile generator
 * (src/seatbelt/seatbelt.c), so both resolve a policy path the same way. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "util/util.h"

bool path_is_glob(const char *path); /* contains '*' or '?' (docs/policy.md) */
/* The name rules (and glob(3) for mounts) read every rule as a glob: a '[' or '\' that is part
 * of a real name would become syntax and the rule would stop matching that very name (a
 * workspace "/src/app[1]" would lose every protected name). Each such byte, and each control
 * character (rules are quoted in messages), becomes '?', which still matches it. In place. */
void path_defuse_glob(char *path);
/* Resolves symlinks like realpath(3), but a missing final part is kept lexically: for
 * "/link/new/x" with /link -> /real it gives "/real/new/x". Dangling symlinks are followed as
 * text, as the kernel would when creating through them. -ELOOP after 40 links. */
int path_resolve_lenient(const char *path, char **ret);
/* Within begin/end, path_resolve_lenient() remembers which prefixes exist and are not symlinks
 * (per thread): plan_build() brackets itself with them. */
void resolve_cache_begin(void);
void resolve_cache_end(void);
/* Appends `path` and its resolved form (a glob: its leading glob-free directory resolved). A
 * path without '*' or '?' is literal: both forms are defused (path_defuse_glob); in a glob only
 * the resolved directory part is, the pattern stays as written. */
int path_push_forms(strv *list, const char *path);
/* The existing, resolved paths a deny entry names now: its own resolution, or every glob match
 * (at most POLICY_MAX_LIST, else -E2BIG). Symlinks that do not resolve are left out. */
int path_expand_existing(const char *path, strv *ret);
/* lstat() of a resolved path: 1 and *is_dir when it exists and is not a symlink, 0 otherwise. */
int path_exists(const char *path, bool *is_dir);
