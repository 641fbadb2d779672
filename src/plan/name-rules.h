/* SPDX-License-Identifier: Apache-2.0 */
/* Pure decisions for creation-time rules: may this absolute path come into existence? Used by the
 * seccomp supervisor (src/linux/supervisor.c) on the path it resolved itself. */
#pragma once

#include "plan/plan.h"

typedef enum name_verdict {
        NAME_ALLOWED = 0,
        NAME_DENIED_PROTECTED, /* the path is, is beneath, or (renames) is an ancestor of a protected path */
        NAME_DENIED_NAME,      /* the final component matches a denyCreateNames glob */
} name_verdict;

/* `path`: absolute, its directory part symlink-free, its final component as it will be created.
 * On a denial *ret_rule (if non-NULL) points at the rule string inside `r`. */
name_verdict name_rules_check_create(const name_rules *r, const char *path, const char **ret_rule);
/* A rename/link target: create rules, plus "not an ancestor of a protected path" (renaming a
 * prepared directory into place would bring a protected path into existence). */
name_verdict name_rules_check_rename_target(const name_rules *r, const char *path,
                                            const char **ret_rule);
/* A rename source: may not be a protected path, beneath one, or an ancestor of one. */
name_verdict name_rules_check_rename_source(const name_rules *r, const char *path,
                                            const char **ret_rule);
