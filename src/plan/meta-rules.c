/* SPDX-License-Identifier: Apache-2.0 */
/* meta_rules_check() (see meta-rules.h). */
#include "plan/meta-rules.h"

const char meta_rule_outside[] =
        "metadata (mode, owner, times, extended attributes) changes only beneath the writable "
        "roots: the landlock backend has no read-only mount, and Landlock no right for metadata";

meta_verdict meta_rules_check(const name_rules *r, const strv *roots, const char *path,
                              const char **ret_rule) {
        bool inside = false;
        if (path[0] == '/' && !strstr(path, "/../") && !strstr(path, "/./"))
                for (size_t i = 0; !inside && i < roots->n; i++)
                        inside = path_startswith(path, roots->v[i]);
        if (!inside) {
                if (ret_rule)
                        *ret_rule = meta_rule_outside;
                return META_DENIED_OUTSIDE;
        }
        /* The creation rules' own matcher: a protected path, beneath one, or a glob's match.
         * Without NAME_CHECK_EXACT_BYTES a non-ASCII name that a case-folding directory could
         * equate with a protected one is refused too. */
        const char *rule = NULL;
        name_verdict v = name_rules_check(r, NAME_CHECK_CREATE, path, 0, &rule);
        if (v != NAME_DENIED_PROTECTED)
                return META_ALLOWED;
        if (ret_rule)
                *ret_rule = rule;
        return META_DENIED_PROTECTED;
}
