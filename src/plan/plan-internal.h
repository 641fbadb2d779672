/* SPDX-License-Identifier: Apache-2.0 */
/* Shared between the files of the planner (plan.c, plan-deny.c, resolve.c, env.c). */
#pragma once

#include "plan/plan.h"
#include "plan/resolve.h"

/* `why` texts of mount ops. Compared by address: the finishing pass tells the user's own binds
 * from protective ones by them. */
extern const char plan_why_writable_root[];
extern const char plan_why_runner_state[];
extern const char plan_why_git_common[];
extern const char plan_why_ro_bind[];
extern const char plan_why_secret[];
extern const char plan_why_protected[];
extern const char plan_why_tool_cache[];

typedef struct plan_root {
        char *literal;   /* as the policy wrote it (normalised) */
        char *resolved;  /* realpath() */
        bool is_dir;
        bool git_common; /* the shared .git of a linked worktree: writable, no mandatory set */
        const char *why;
} plan_root;

typedef struct plan_builder {
        const cordon_policy *policy;
        const char *home;   /* as given (normalised) */
        plan *p;
        cordon_error *err;

        plan_root *roots;   /* writable roots */
        size_t n_roots;
        plan_root *ro_binds;
        size_t n_ro_binds;

        strv secrets;       /* the read-deny set: literal + resolved forms, globs as written */
        strv protect;       /* the write-deny set: literal + resolved forms, globs as written */
        /* Name rules only, never a read-only bind: a symlinked ROOT/.git may not be replaced,
         * but binding what it points to would freeze the repository (plan-git.c). */
        strv protect_names;
} plan_builder;

/* plan.c */
int plan_add_mount(plan *p, mount_op_kind kind, const char *path, bool is_dir, const char *why);
/* True when `path` is (beneath) one of the writable roots' resolved paths. */
bool plan_beneath_root(const plan_builder *b, const char *path);
int plan_add_root(plan_builder *b, const char *literal, const char *resolved, bool git_common,
                  const char *why);

/* plan-git.c: linked worktrees, the git internals and configured paths git executes or reads. */
int plan_git(plan_builder *b);

/* plan-deny.c */
int plan_secrets(plan_builder *b);
int plan_protected(plan_builder *b);
int plan_name_rules(plan_builder *b);
/* Adds to `set` (the protected or the secret set) and to `existing` (what the set names on disk
 * now, resolved: plan-deny.c) every other name, inside the writable roots, of a file of
 * `existing` that has hard links (plan-links.c). `what` names the set in the error. */
int plan_hard_links(plan_builder *b, strv *set, strv *existing, const char *what);
int plan_name_exemptions(plan_builder *b);
/* Whether $HOME is (beneath) a writable root. */
int plan_home_is_writable(const plan_builder *b, bool *ret);

/* env.c */
int plan_env(const cordon_policy *policy, char *const *envp, plan *p, cordon_error *err);
/* Points every client at the egress proxies (HTTP(S)_PROXY, ALL_PROXY, NO_PROXY, git over ssh). */
int plan_proxy_env(plan *p);

/* tool-caches-plan.c: points the tools' variables into the cache root, over inherited values
 * but never over env.set (after plan_env()); makes an existing root a writable root (after the
 * policy's own roots). */
int plan_tool_caches_env(const cordon_policy *policy, char *const *envp, const char *home,
                         plan *p);
int plan_tool_caches_root(plan_builder *b);
