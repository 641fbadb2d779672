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

/* ---- Refinement (additive): one entry point with the check kind and flags. -------------------- */
typedef enum name_check_kind {
        NAME_CHECK_CREATE,
        NAME_CHECK_RENAME_TARGET,
        NAME_CHECK_RENAME_SOURCE,
} name_check_kind;

/* By default a final component holding non-ASCII bytes is treated as possibly case-folded by the
 * filesystem (ext4/f2fs/tmpfs casefold fold e.g. U+212A KELVIN SIGN to 'k', "ﬆ" to "st"): every run
 * of non-ASCII bytes may stand for any string, and the name is refused when some such string could
 * match a rule. NAME_CHECK_EXACT_BYTES says the directory is known not to fold names, so bytes
 * match only themselves (ASCII letters still match case-insensitively). */
#define NAME_CHECK_EXACT_BYTES (1U << 0)

name_verdict name_rules_check(const name_rules *r, name_check_kind kind, const char *path,
                              unsigned flags, const char **ret_rule);

/* Glob matching as the rules use it, exposed for tests: `pattern` against `str` (bytes, ASCII
 * case-insensitive; '*' '?' '[...]' '\\'; no FNM_PERIOD). With `pathname`, wildcards never match
 * '/' (FNM_PATHNAME). Independent of the process locale. */
bool name_glob_match(const char *pattern, const char *str, bool pathname);
/* The same without FNM_PATHNAME through the general token matcher only, never the shortcut for
 * literal, "*literal" and "literal*" patterns: for the test that the two agree. */
bool name_glob_match_general(const char *pattern, const char *str);

/* `path` lies beneath one of the persistent writable roots (always true for a rule set that is
 * not scoped): where deny names, .cordon and the git rules hold. */
bool name_rules_persistent(const name_rules *r, const char *path);
/* The final component `name`, as created in a directory that may fold case (unless flags has
 * NAME_CHECK_EXACT_BYTES), could be `literal` (a name without wildcards) to a lookup there. */
bool name_could_be(const char *literal, const char *name, unsigned flags);
