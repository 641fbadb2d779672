/* SPDX-License-Identifier: Apache-2.0 */
/* The planner's part of the tool caches (docs/design/tool-caches.md): the variables that point
 * each tool into the cache root, and the root as a writable root. Creates nothing: launchers
 * call tool_caches_prepare() before plan_build(). */
#include <limits.h>
#include <stdio.h>

#include "plan/plan-internal.h"
#include "plan/tool-caches.h"

/* Records "NAME=value" under `tool` for display: cordon's own part only, never an inherited
 * MAVEN_OPTS it was appended to (that may carry a proxy password). */
static int record(plan *p, const char *tool, const char *name, const char *value) {
        _cleanup_free_ char *shown = NULL;
        if (asprintf(&shown, "%s=%s", name, value) < 0)
                return -ENOMEM;
        int r = strv_push(&p->tool_cache_tools, tool);
        return r < 0 ? r : strv_push_take(&p->tool_cache_env, TAKE_PTR(shown));
}

static bool policy_sets(const cordon_policy *pol, const char *name) {
        for (size_t i = 0; i < pol->n_env_set; i++)
                if (strcmp(pol->env_set[i].name, name) == 0)
                        return true;
        return false;
}

/* Sets NAME to value in p->env (appended to an inherited value with `append`). env.set is the
 * policy's explicit choice and wins. */
static int set_var(plan *p, const cordon_policy *pol, const char *tool, const char *name,
                   const char *value, bool append) {
        if (policy_sets(pol, name))
                return 0;
        int r = record(p, tool, name, value);
        if (r < 0)
                return r;
        const char *old = env_get(p->env.v, name);
        if (!append || !old || !*old)
                return strv_env_set(&p->env, name, value);
        _cleanup_free_ char *joined = NULL;
        if (asprintf(&joined, "%s %s", old, value) < 0)
                return -ENOMEM;
        return strv_env_set(&p->env, name, joined);
}

/* MAVEN_OPTS is split at blanks by the mvn script: a root with one would become two words. */
static bool splits(const char *path) {
        return strpbrk(path, " \t\n'\"\\") != NULL;
}

static int set_builtin(plan *p, const cordon_policy *pol, const tool_cache_builtin *t) {
        char value[PATH_MAX + 64];
        if (t->append && splits(p->tool_cache_root))
                return 0;
        int n = snprintf(value, sizeof(value), "%s%s/%s", t->prefix ? t->prefix : "",
                         p->tool_cache_root, t->subdir);
        if (n < 0 || (size_t) n >= sizeof(value))
                return -ENAMETOOLONG;
        return set_var(p, pol, t->tool, t->env, value, t->append);
}

int plan_tool_caches_env(const cordon_policy *pol, char *const *envp, const char *home,
                         plan *p) {
        if (!policy_tool_caches_on(pol))
                return 0;
        tool_cache_root root;
        int r = tool_cache_root_find(envp, home, &root);
        if (r < 0)
                return r;
        p->tool_cache_root = TAKE_PTR(root.path);
        p->tool_cache_anchor = TAKE_PTR(root.anchor);
        p->tool_cache_rel = TAKE_PTR(root.rel);
        for (const tool_cache_builtin *t = policy_builtin_tool_caches; r >= 0 && t->tool; t++)
                r = set_builtin(p, pol, t);
        for (size_t i = 0; r >= 0 && i < pol->n_tool_caches; i++) {
                _cleanup_free_ char *dir = path_join(p->tool_cache_root, pol->tool_caches[i].name);
                r = dir ? set_var(p, pol, pol->tool_caches[i].name, pol->tool_caches[i].env, dir,
                                  false)
                        : -ENOMEM;
        }
        return r;
}

/* Files in the caches that a tool *executes or obeys* rather than caches: cargo's config (a
 * build.rustc-wrapper runs on every later build) and credentials, gradle's init scripts and
 * properties. Written by no tool during normal use, so they are protected like a workspace's
 * .git/hooks: a hostile run cannot make the next sandboxed build in another project run its code
 * through them. (Cached artefacts themselves can still be poisoned for later sandboxed runs:
 * docs/design/tool-caches.md.) */
static const char *const protected_in_root[] = {
        "cargo/config", "cargo/config.toml", "cargo/credentials", "cargo/credentials.toml",
        "gradle/init.d", "gradle/init.gradle", "gradle/init.gradle.kts",
        "gradle/gradle.properties", NULL,
};

/* Literal and resolved forms, as plan-deny.c pushes its fixed lists. */
static int protect_in(plan_builder *b, const char *root, const char *rel) {
        _cleanup_free_ char *p = path_join(root, rel);
        strv forms = { 0 };
        int r = p ? path_push_forms(&forms, p) : -ENOMEM;
        for (size_t i = 0; r >= 0 && i < forms.n; i++) {
                path_defuse_glob(forms.v[i]);
                r = strv_push_unique(&b->protect, forms.v[i]);
        }
        strv_done(&forms);
        return r;
}

/* The root as it exists now, checked the way tool_caches_prepare() created it: a root that a
 * symlink redirects or another user owns fails the plan instead of becoming writable. A root that
 * does not exist yet (`cordon policy show` before the first run) is listed but not mounted. */
int plan_tool_caches_root(plan_builder *b) {
        plan *p = b->p;
        if (!p->tool_cache_root)
                return 0;
        tool_cache_root root = { p->tool_cache_anchor, p->tool_cache_rel, p->tool_cache_root };
        int fd = -1;
        int r = tool_cache_root_open(&root, false, &fd, b->err);
        (void) safe_close(fd);
        if (r <= 0)
                return r;
        /* Every component below the anchor was just opened O_NOFOLLOW: only the anchor (the
         * caller's own home or XDG_CACHE_HOME's parent) may hold symlinks. */
        char anchor[PATH_MAX];
        if (!realpath(p->tool_cache_anchor, anchor))
                return cordon_set_error(b->err, CORDON_LAUNCH_FAILED, errno,
                                        "tool caches: cannot resolve %s: %s",
                                        p->tool_cache_anchor, strerror(errno));
        _cleanup_free_ char *resolved = path_join(anchor, p->tool_cache_rel);
        if (!resolved)
                return -ENOMEM;
        if ((r = plan_add_root(b, p->tool_cache_root, resolved, false, plan_why_tool_cache)) < 0)
                return r;
        for (size_t i = 0; r >= 0 && protected_in_root[i]; i++)
                r = protect_in(b, p->tool_cache_root, protected_in_root[i]);
        p->tool_cache_mounted = r >= 0;
        return r;
}
