/* SPDX-License-Identifier: Apache-2.0 */
/* The deny side of the plan: the secret read-deny set (hidden) and the mandatory and configured
 * write-deny set (read-only binds for what exists, creation-time name rules for everything),
 * docs/policy.md. What git adds to the write-deny set is planned in plan-git.c. */
#include <fnmatch.h>
#include <glob.h>
#include <sys/stat.h>
#include <limits.h>
#include <stdio.h>

#include "plan/plan-internal.h"

/* `path` is `rule` or beneath it; a glob rule matches `path` or one of its leading directories. */
static bool inside(const char *path, const char *rule) {
        if (path_is_glob(rule))
                return fnmatch(rule, path, FNM_PATHNAME | FNM_LEADING_DIR) == 0;
        return path_startswith(path, rule);
}

static const char *first_rule_containing(const strv *rules, const char *path) {
        for (size_t i = 0; i < rules->n; i++)
                if (inside(path, rules->v[i]))
                        return rules->v[i];
        return NULL;
}

/* `name` is one of the fixed lists: it holds no '[' or '\', so every such byte in the result is
 * the base's and is defused, also when a '*' in the name makes the whole a glob. */
static int push_joined_forms(strv *list, const char *base, const char *name) {
        _cleanup_free_ char *p = path_join(base, name);
        strv forms = { 0 };
        int r = p ? path_push_forms(&forms, p) : -ENOMEM;
        for (size_t i = 0; r >= 0 && i < forms.n; i++) {
                path_defuse_glob(forms.v[i]);
                r = strv_push_unique(list, forms.v[i]);
        }
        strv_done(&forms);
        return r;
}

/* ---- secrets -------------------------------------------------------------------------------- */

/* Refuses a bind (writable roots, and read-only binds when `with_ro`) at or beneath a rule. */
static int refuse_binds_inside(plan_builder *b, const strv *rules, const char *what, bool with_ro,
                               bool skip_git_common, const char *hint) {
        const plan_root *lists[] = { b->roots, b->ro_binds };
        size_t counts[] = { b->n_roots, with_ro ? b->n_ro_binds : 0 };
        for (size_t l = 0; l < ELEMENTSOF(lists); l++)
                for (size_t i = 0; i < counts[l]; i++) {
                        const plan_root *root = &lists[l][i];
                        if (root->git_common && skip_git_common)
                                continue; /* the one writable place inside a protected repo */
                        const char *rule = first_rule_containing(rules, root->resolved);
                        if (!rule)
                                rule = first_rule_containing(rules, root->literal);
                        if (rule)
                                return cordon_set_error(b->err, CORDON_POLICY_INVALID, EINVAL,
                                                        "%s '%s' is inside the %s '%s'; %s",
                                                        root->why, root->literal, what, rule,
                                                        hint);
                }
        return 0;
}

/* What the first `n` entries of `rules` name on disk now (globs expanded), appended to `found`;
 * a pattern matching more than POLICY_MAX_LIST paths is refused with its name. */
static int expand_existing(plan_builder *b, const strv *rules, size_t n, strv *found) {
        int r = 0;
        for (size_t i = 0; r >= 0 && i < n; i++) {
                r = path_expand_existing(rules->v[i], found);
                if (r == -E2BIG)
                        r = cordon_set_error(b->err, CORDON_POLICY_INVALID, E2BIG,
                                             "the deny pattern '%s' matches more than %u paths; "
                                             "narrow it",
                                             rules->v[i], POLICY_MAX_LIST);
        }
        return r;
}

/* Finds what each entry of `rules` is on disk now, resolved (a glob's matches, a symlink's
 * target), into `found`, and adds it to `rules` itself. A protected or secret name that is a
 * symlink (.claude/settings.json -> ../cfg/claude.json) would otherwise guard the link only: the
 * creation rules match names, so an O_CREAT open of the link, which follows it, or of the target
 * itself would reach the file under a name no rule lists. Entries added to `rules` are real
 * paths (their '[' is a name: defused); `found` keeps them as they are on disk, for the hard-link
 * search and the mounts, so the set is looked up on disk once (it was three times: about 650 of
 * a default run's 850 lstat() calls). */
static int push_existing_targets(plan_builder *b, strv *rules, strv *found) {
        size_t n = rules->n; /* the entries as listed; what is added is resolved already */
        int r = expand_existing(b, rules, n, found);
        for (size_t i = 0; r >= 0 && i < found->n; i++) {
                _cleanup_free_ char *name = strdup(found->v[i]);
                if (!name)
                        return -ENOMEM;
                path_defuse_glob(name);
                r = strv_push_unique(rules, name);
        }
        return r;
}

static int add_link_mount(plan_builder *b, const char *path) {
        struct stat st;
        if (lstat(path, &st) < 0 || !S_ISLNK(st.st_mode))
                return 0;
        _cleanup_free_ char *dir = strdup(path), *rdir = NULL, *full = NULL;
        if (!dir)
                return -ENOMEM;
        char *slash = strrchr(dir, '/');
        if (!slash || slash == dir || !slash[1])
                return 0;
        *slash = '\0';
        int r = path_resolve_lenient(dir, &rdir);
        if (r == -ENOMEM)
                return r;
        if (r < 0 || !(full = path_join(rdir, slash + 1)))
                return r < 0 ? 0 : -ENOMEM;
        if (!plan_beneath_root(b, full) || lstat(full, &st) < 0 || !S_ISLNK(st.st_mode))
                return 0; /* outside the roots everything is read-only already */
        for (size_t i = 0; i < b->p->n_mounts; i++)
                if (b->p->mounts[i].is_link && strcmp(b->p->mounts[i].path, full) == 0)
                        return 0;
        if ((r = plan_add_mount(b->p, MOUNT_OP_BIND_RO, full, false, plan_why_protected)) < 0)
                return r;
        b->p->mounts[b->p->n_mounts - 1].is_link = true;
        return 0;
}

/* A mount for each path of `found` (push_existing_targets(), plan_hard_links()). */
static int add_existing_mounts(plan_builder *b, const strv *found, mount_op_kind kind,
                               const char *why, bool only_beneath_roots) {
        int r = 0;
        for (size_t i = 0; r >= 0 && i < found->n; i++) {
                bool is_dir = false;
                /* Outside the writable roots everything is read-only already (the root bind):
                 * another read-only mount there would only cost start-up time. */
                if (only_beneath_roots && !plan_beneath_root(b, found->v[i]))
                        continue;
                if (path_exists(found->v[i], &is_dir))
                        r = plan_add_mount(b->p, kind, found->v[i], is_dir, why);
        }
        return r;
}

/* Protected entries inside the writable roots that are themselves symlinks, as listed or as a
 * glob's match (.claude/settings.json -> ../cfg/claude.json): the link gets a read-only bind of
 * itself (mount_op.is_link). Without it the native backend, which does not notify unlink(2),
 * would let the command remove the link (the user's settings gone); the target is bound by
 * add_existing_mounts() like any other protected file. */
static int add_link_mounts(plan_builder *b, const strv *rules) {
        int r = 0;
        for (size_t i = 0; r >= 0 && i < rules->n; i++) {
                glob_t g = { 0 };
                if (glob(rules->v[i], GLOB_NOSORT | GLOB_NOCHECK, NULL, &g) == GLOB_NOSPACE) {
                        globfree(&g);
                        return -ENOMEM;
                }
                for (size_t k = 0; r >= 0 && k < g.gl_pathc && k < POLICY_MAX_LIST; k++)
                        r = add_link_mount(b, g.gl_pathv[k]);
                globfree(&g);
        }
        return r;
}

int plan_secrets(plan_builder *b) {
        int r = 0;
        for (size_t i = 0; r >= 0 && plan_secret_home_paths[i]; i++)
                r = push_joined_forms(&b->secrets, b->home, plan_secret_home_paths[i]);
        for (size_t i = 0; r >= 0 && i < b->policy->deny_read.n; i++)
                r = path_push_forms(&b->secrets, b->policy->deny_read.v[i]);
        if (r < 0)
                return r;
        /* A bind inside a secret would re-expose what the hide covers. */
        if ((r = refuse_binds_inside(b, &b->secrets, "secret", true, false,
                                       "a secret stays unreadable whatever is bound: bind a "
                                       "directory outside it")) < 0)
                return r;
        strv found = { 0 };
        if ((r = push_existing_targets(b, &b->secrets, &found)) >= 0 &&
            (r = plan_hard_links(b, &b->secrets, &found, "secret")) >= 0)
                r = add_existing_mounts(b, &found, MOUNT_OP_HIDE, plan_why_secret, false);
        strv_done(&found);
        return r;
}

/* ---- the write-deny set --------------------------------------------------------------------- */

/* Top-level HEAD, objects and refs turn a directory into a bare repository git picks up. */
static bool is_bare_repo_name(const char *name) {
        return strcmp(name, "HEAD") == 0 || strcmp(name, "objects") == 0 ||
               strcmp(name, "refs") == 0;
}

static int push_mandatory(plan_builder *b, const char *base, bool bare_repo_names) {
        int r = 0;
        for (size_t i = 0; r >= 0 && plan_mandatory_protected_names[i]; i++)
                if (bare_repo_names || !is_bare_repo_name(plan_mandatory_protected_names[i]))
                        r = push_joined_forms(&b->protect, base,
                                              plan_mandatory_protected_names[i]);
        return r;
}

/* $HOME/HEAD, objects and refs only matter when the command can create them, i.e. when $HOME
 * itself is writable; elsewhere they would only refuse a project kept in ~/objects or ~/refs. */
int plan_home_is_writable(const plan_builder *b, bool *ret) {
        _cleanup_free_ char *resolved = NULL;
        int r = path_resolve_lenient(b->home, &resolved);
        if (r == -ENOMEM)
                return r;
        *ret = plan_beneath_root(b, b->home) || (r >= 0 && plan_beneath_root(b, resolved));
        return 0;
}

int plan_protected(plan_builder *b) {
        bool home_writable = false;
        int r = plan_home_is_writable(b, &home_writable);
        if (r >= 0)
                r = push_mandatory(b, b->home, home_writable);
        for (size_t i = 0; r >= 0 && i < b->n_roots; i++) {
                /* The shared .git of a worktree must keep HEAD, objects and refs writable. */
                if (b->roots[i].git_common || !b->roots[i].is_dir)
                        continue;
                if ((r = push_mandatory(b, b->roots[i].literal, true)) >= 0)
                        r = push_mandatory(b, b->roots[i].resolved, true);
        }
        const strv *lists[] = { &b->policy->protected_paths, &b->policy->deny_write };
        for (size_t l = 0; r >= 0 && l < ELEMENTSOF(lists); l++)
                for (size_t i = 0; r >= 0 && i < lists[l]->n; i++)
                        r = path_push_forms(&b->protect, lists[l]->v[i]);
        if (r < 0)
                return r;
        /* A writable root inside a protected path would make the protected path writable. */
        if ((r = refuse_binds_inside(b, &b->protect, "protected path", false, true,
                                       "a protected path stays read-only in every mode: make "
                                       "another directory writable")) < 0)
                return r;
        strv found = { 0 };
        if ((r = push_existing_targets(b, &b->protect, &found)) >= 0 &&
            (r = plan_hard_links(b, &b->protect, &found, "protected file")) >= 0 &&
            (r = add_link_mounts(b, &b->protect)) >= 0)
                r = add_existing_mounts(b, &found, MOUNT_OP_BIND_RO, plan_why_protected, true);
        strv_done(&found);
        return r;
}

/* ---- name rules ----------------------------------------------------------------------------- */

/* A literal protected path above a worktree's shared .git (e.g. protectedPaths holds the
 * original checkout) would forbid every commit. It is left out of the name rules: its existing
 * tree is read-only by mount (and a mountpoint cannot be renamed), which is what protects it. */
static bool above_git_common(const plan_builder *b, const char *rule) {
        if (path_is_glob(rule))
                return false;
        for (size_t i = 0; i < b->n_roots; i++)
                if (b->roots[i].git_common && path_startswith(b->roots[i].resolved, rule) &&
                    strcmp(b->roots[i].resolved, rule) != 0)
                        return true;
        return false;
}

int plan_name_rules(plan_builder *b) {
        const strv *lists[] = { &b->protect, &b->protect_names, &b->secrets };
        int r = 0;
        for (size_t l = 0; r >= 0 && l < ELEMENTSOF(lists); l++)
                for (size_t i = 0; r >= 0 && i < lists[l]->n; i++)
                        if (!above_git_common(b, lists[l]->v[i]))
                                r = strv_push_unique(&b->p->names.protected, lists[l]->v[i]);
        for (size_t i = 0; r >= 0 && i < b->policy->deny_create_names.n; i++)
                r = strv_push_unique(&b->p->names.deny_names, b->policy->deny_create_names.v[i]);
        if (r >= 0)
                r = plan_name_exemptions(b);
        return r;
}

/* What the deny names leave alone: the template names, the policy's allow entries, and every
 * place outside the persistent writable roots. */
int plan_name_exemptions(plan_builder *b) {
        name_rules *n = &b->p->names;
        int r = 0;
        n->scoped = true;
        for (size_t i = 0; r >= 0 && plan_default_allow_create_names[i]; i++)
                r = strv_push_unique(&n->allow_names, plan_default_allow_create_names[i]);
        for (size_t i = 0; r >= 0 && i < b->policy->allow_create_names.n; i++)
                r = strv_push_unique(&n->allow_names, b->policy->allow_create_names.v[i]);
        for (size_t i = 0; r >= 0 && i < b->policy->allow_create_paths.n; i++)
                r = path_push_forms(&n->allow_paths, b->policy->allow_create_paths.v[i]);
        for (size_t i = 0; r >= 0 && i < b->n_roots; i++) {
                if ((r = strv_push_unique(&n->persistent, b->roots[i].literal)) >= 0)
                        r = strv_push_unique(&n->persistent, b->roots[i].resolved);
                /* The tool caches hold unpacked packages, not the user's files (plan.h). */
                if (r >= 0 && b->roots[i].why == plan_why_tool_cache &&
                    (r = strv_push_unique(&n->names_exempt, b->roots[i].literal)) >= 0)
                        r = strv_push_unique(&n->names_exempt, b->roots[i].resolved);
        }
        return r;
}
