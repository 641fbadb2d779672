/* SPDX-License-Identifier: Apache-2.0 */
/* What git adds to the plan (src/plan/plan-git.c): ROOT/.git when it is not a directory, the
 * internals of a git dir, linked worktrees, and the paths the existing configuration names
 * (core.hooksPath, core.fsmonitor, includes). Each case is checked both ways: the entry is in the
 * name rules (and bound read-only when it exists), and what commits write stays creatable. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "plan/name-rules.h"
#include "plan/plan.h"
#include "policy/policy.h"
#include "cleanup.h"
#include "tmptree.h"

static char *T;

#define P(rel) tmptree_at(T, rel)

static int setup_tree(void **state) {
        T = tmptree_new();
        tmptree_mkdir(T, "homereal");
        tmptree_symlink(T, "home", "homereal");
        tmptree_mkdir(T, "ws/src");
        tmptree_symlink(T, "wslink", "ws");
        return 0;
}

static int teardown_tree(void **state) {
        tmptree_remove(T);
        T = NULL;
        return 0;
}

static cordon_policy *policy_for(const char *cwd) {
        cordon_policy *p = NULL;
        cordon_error err = { 0 };
        assert_int_equal(cordon_policy_new_default(cwd, P("home"), &p, &err), 0);
        return p;
}

static plan *build_ok(const cordon_policy *pol, const char *cwd) {
        plan *pl = NULL;
        cordon_error err = { 0 };
        int r = plan_build(pol, P("home"), cwd, NULL, &pl, &err);
        if (r < 0)
                print_message("plan_build: %s: %s\n", cordon_code_name(err.code), err.message);
        assert_int_equal(r, 0);
        return pl;
}

/* The default policy for the workspace `rel`, planned. */
static plan *plan_ws(const char *rel) {
        _cleanup_policy_ cordon_policy *pol = policy_for(P(rel));
        return build_ok(pol, P(rel));
}

static void assert_protected(const plan *pl, const char *path, bool want) {
        if (strv_contains(&pl->names.protected, path) != want)
                print_message("names.protected %s '%s'\n", want ? "lacks" : "has", path);
        assert_int_equal(strv_contains(&pl->names.protected, path), want);
}

/* Through the supervisor's own decision function, on the resolved path it would see. */
static void assert_creatable(const plan *pl, const char *path, bool want) {
        const char *rule = NULL;
        name_verdict v = name_rules_check_create(&pl->names, path, &rule);
        if ((v == NAME_ALLOWED) != want)
                print_message("create '%s': %s (rule %s)\n", path,
                              v == NAME_ALLOWED ? "allowed" : "denied", rule ? rule : "-");
        assert_int_equal(v == NAME_ALLOWED, want);
}

static bool has_mount(const plan *pl, mount_op_kind kind, const char *path) {
        for (size_t i = 0; i < pl->n_mounts; i++)
                if (pl->mounts[i].kind == kind && strcmp(pl->mounts[i].path, path) == 0)
                        return true;
        return false;
}

static bool has_any_mount(const plan *pl, const char *path) {
        for (size_t i = 0; i < pl->n_mounts; i++)
                if (strcmp(pl->mounts[i].path, path) == 0)
                        return true;
        return false;
}

/* A repository as `git init` leaves it, plus a commit's worth of state, with `config`. */
static void make_repo(const char *rel, const char *config) {
        char p[512];
        static const char *const dirs[] = { "objects/ab", "refs/heads", "hooks", "logs", "info" };
        for (size_t i = 0; i < ELEMENTSOF(dirs); i++) {
                snprintf(p, sizeof(p), "%s/.git/%s", rel, dirs[i]);
                tmptree_mkdir(T, p);
        }
        snprintf(p, sizeof(p), "%s/.git/HEAD", rel);
        tmptree_file(T, p, "ref: refs/heads/main\n");
        snprintf(p, sizeof(p), "%s/.git/config", rel);
        tmptree_file(T, p, config);
}

/* ---- ROOT/.git ------------------------------------------------------------------------------ */

static void test_no_repository(void **state) {
        _cleanup_plan_ plan *pl = plan_ws("wslink");
        assert_protected(pl, P("ws/.git"), true);
        assert_protected(pl, P("wslink/.git"), true);
        assert_creatable(pl, P("ws/.git"), false);
        assert_creatable(pl, P("ws/.GIT"), false); /* case-insensitive filesystems */
        /* Only the top: `git init sub` and a submodule checkout's sub/.git keep working. */
        assert_creatable(pl, P("ws/sub/.git"), true);
        assert_creatable(pl, P("ws/src/.git"), true);
        assert_creatable(pl, P("ws/.gitignore"), true);
        assert_creatable(pl, P("ws/git"), true);
        assert_false(has_any_mount(pl, P("ws/.git")));
}

static void test_git_dir_internals(void **state) {
        make_repo("ws", "[core]\n\tbare = false\n");
        tmptree_mkdir(T, "ws/.git/worktrees/wt1/logs");
        tmptree_file(T, "ws/.git/worktrees/wt1/gitdir", "/elsewhere/.git\n");
        tmptree_file(T, "ws/.git/worktrees/wt1/commondir", "../..\n");
        tmptree_file(T, "ws/.git/commondir", "../other\n"); /* planted before this rule */
        _cleanup_plan_ plan *pl = plan_ws("wslink");
        static const char *const denied[] = {
                "ws/.git/commondir", "ws/.git/config.worktree", "ws/.git/modules",
                "ws/.git/worktrees/*/commondir", "ws/.git/worktrees/*/gitdir",
                "ws/.git/worktrees/*/config.worktree", "ws/.git/hooks", "ws/.git/config",
        };
        for (size_t i = 0; i < ELEMENTSOF(denied); i++)
                assert_protected(pl, P(denied[i]), true);
        assert_protected(pl, P("ws/.git"), false); /* a directory: renaming it is refused already */
        assert_creatable(pl, P("ws/.git/modules/x/config"), false);
        assert_creatable(pl, P("ws/.git/modules"), false);
        assert_creatable(pl, P("ws/.git/config.worktree"), false);
        assert_creatable(pl, P("ws/.git/worktrees/new/commondir"), false);
        assert_creatable(pl, P("ws/.git/worktrees/new/gitdir"), false);
        assert_creatable(pl, P("ws/.git/worktrees/wt1/config.worktree"), false);
        /* Existing ones are bound read-only (the glob expanded at plan time). */
        assert_true(has_mount(pl, MOUNT_OP_BIND_RO, P("ws/.git/commondir")));
        assert_true(has_mount(pl, MOUNT_OP_BIND_RO, P("ws/.git/worktrees/wt1/gitdir")));
        assert_true(has_mount(pl, MOUNT_OP_BIND_RO, P("ws/.git/worktrees/wt1/commondir")));
        /* What commits write stays creatable and unmounted. */
        static const char *const writable[] = {
                "ws/.git/objects/ab/cdef", "ws/.git/objects/pack/p.pack", "ws/.git/index.lock",
                "ws/.git/index", "ws/.git/HEAD.lock", "ws/.git/refs/heads/main.lock",
                "ws/.git/logs/HEAD", "ws/.git/packed-refs", "ws/.git/COMMIT_EDITMSG",
                "ws/.git/ORIG_HEAD", "ws/.git/worktrees/wt1/HEAD", "ws/.git/worktrees/wt1/index",
                "ws/.git/worktrees/wt1/logs/HEAD", "ws/.git/info/exclude",
        };
        for (size_t i = 0; i < ELEMENTSOF(writable); i++)
                assert_creatable(pl, P(writable[i]), true);
        assert_false(has_any_mount(pl, P("ws/.git/objects")));
        assert_false(has_any_mount(pl, P("ws/.git/refs")));
        assert_false(has_any_mount(pl, P("ws/.git")));
        assert_protected(pl, P("ws/.git/objects"), false);
        assert_protected(pl, P("ws/.git/HEAD"), false);
        assert_protected(pl, P("ws/.git/index"), false);
}

/* ROOT/.git is a file but not a linked worktree of ours: it may not be rewritten, and the git
 * dir it names (here inside the workspace, --separate-git-dir style) is protected like .git. */
static void test_git_file(void **state) {
        tmptree_mkdir(T, "ws/.realgit/hooks");
        tmptree_file(T, "ws/.realgit/HEAD", "ref: refs/heads/main\n");
        tmptree_file(T, "ws/.realgit/config", "[core]\n\thooksPath = githooks\n");
        tmptree_file(T, "ws/.git", "gitdir: .realgit\n");
        _cleanup_plan_ plan *pl = plan_ws("ws");
        assert_protected(pl, P("ws/.git"), true);
        assert_true(has_mount(pl, MOUNT_OP_BIND_RO, P("ws/.git")));
        assert_true(has_mount(pl, MOUNT_OP_BIND_RO, P("ws/.realgit/config")));
        assert_true(has_mount(pl, MOUNT_OP_BIND_RO, P("ws/.realgit/hooks")));
        assert_protected(pl, P("ws/.realgit/commondir"), true);
        assert_protected(pl, P("ws/githooks"), true); /* relative to the worktree, not the git dir */
        assert_creatable(pl, P("ws/.realgit/objects/ab/cd"), true);
        assert_creatable(pl, P("ws/.realgit/index.lock"), true);
}

/* A symlinked .git: the link may not be replaced, but the repository it points to stays
 * writable where commits write. */
static void test_git_symlink(void **state) {
        make_repo("ws/realrepo", "[core]\n");
        tmptree_symlink(T, "ws/.git", "realrepo/.git");
        _cleanup_plan_ plan *pl = plan_ws("ws");
        assert_protected(pl, P("ws/.git"), true);
        assert_false(has_any_mount(pl, P("ws/realrepo/.git")));
        assert_protected(pl, P("ws/realrepo/.git/modules"), true);
        assert_true(has_mount(pl, MOUNT_OP_BIND_RO, P("ws/realrepo/.git/config")));
        assert_creatable(pl, P("ws/realrepo/.git/objects/ab/x"), true);
        /* Dangling: what it points to may not be created (a "gitdir:" file there would do). */
        assert_int_equal(unlink(P("ws/.git")), 0);
        tmptree_symlink(T, "ws/.git", "gitfile-later");
        _cleanup_plan_ plan *pl2 = plan_ws("ws");
        assert_protected(pl2, P("ws/.git"), true);
        assert_creatable(pl2, P("ws/gitfile-later"), false);
}

/* ---- linked worktrees ----------------------------------------------------------------------- */

static void test_worktree(void **state) {
        make_repo("main", "[core]\n\thooksPath = .husky\n");
        tmptree_mkdir(T, "main/.git/worktrees/wt/logs");
        tmptree_file(T, "main/.git/worktrees/wt/commondir", "../..\n");
        char back[4200], gitfile[4200];
        snprintf(back, sizeof(back), "%s\n", P("wt/.git"));
        tmptree_file(T, "main/.git/worktrees/wt/gitdir", back);
        tmptree_mkdir(T, "wt/.husky");
        snprintf(gitfile, sizeof(gitfile), "gitdir: %s\n", P("main/.git/worktrees/wt"));
        tmptree_file(T, "wt/.git", gitfile);
        _cleanup_plan_ plan *pl = plan_ws("wt");
        assert_true(has_mount(pl, MOUNT_OP_BIND_RW, P("main/.git")));
        assert_true(has_mount(pl, MOUNT_OP_BIND_RO, P("wt/.git")));
        assert_true(has_mount(pl, MOUNT_OP_BIND_RO, P("main/.git/worktrees/wt/commondir")));
        assert_true(has_mount(pl, MOUNT_OP_BIND_RO, P("main/.git/worktrees/wt/gitdir")));
        assert_true(has_mount(pl, MOUNT_OP_BIND_RO, P("main/.git/config")));
        assert_true(has_mount(pl, MOUNT_OP_BIND_RO, P("main/.git/hooks")));
        static const char *const denied[] = {
                "main/.git/commondir", "main/.git/config.worktree", "main/.git/modules/x",
                "main/.git/worktrees/wt/config.worktree", "main/.git/worktrees/other/gitdir",
                "main/.git/hooks/pre-commit", "wt/.git", "wt/.husky/pre-commit",
        };
        for (size_t i = 0; i < ELEMENTSOF(denied); i++)
                assert_creatable(pl, P(denied[i]), false);
        /* The common dir's config is read: hooksPath relative to *this* worktree. */
        assert_true(has_mount(pl, MOUNT_OP_BIND_RO, P("wt/.husky")));
        static const char *const writable[] = {
                "main/.git/objects/ab/cd", "main/.git/refs/heads/x.lock", "main/.git/index.lock",
                "main/.git/worktrees/wt/HEAD.lock", "main/.git/worktrees/wt/index.lock",
                "main/.git/worktrees/wt/logs/HEAD", "main/.git/packed-refs",
        };
        for (size_t i = 0; i < ELEMENTSOF(writable); i++)
                assert_creatable(pl, P(writable[i]), true);
        assert_protected(pl, P("main/.git/objects"), false);
        assert_protected(pl, P("main/.git/HEAD"), false);
}

/* ---- core.hooksPath ------------------------------------------------------------------------- */

static plan *plan_with_config(const char *config) {
        make_repo("ws", config);
        return plan_ws("wslink");
}

static void test_hooks_path_relative(void **state) {
        tmptree_mkdir(T, "ws/.husky");
        _cleanup_plan_ plan *pl = plan_with_config("[core]\n\thooksPath = .husky\n");
        assert_protected(pl, P("ws/.husky"), true);
        assert_protected(pl, P("wslink/.husky"), true);
        assert_true(has_mount(pl, MOUNT_OP_BIND_RO, P("ws/.husky")));
        assert_creatable(pl, P("ws/.husky/pre-commit"), false);
        assert_creatable(pl, P("ws/.huskyx"), true);
        assert_creatable(pl, P("ws/src/pre-commit"), true);
}

static void test_hooks_path_husky9(void **state) {
        _cleanup_plan_ plan *pl = plan_with_config("[core]\n\thooksPath = .husky/_\n");
        assert_protected(pl, P("ws/.husky/_"), true);
        assert_protected(pl, P("ws/.husky"), true); /* its hooks run ../pre-commit */
}

static void test_hooks_path_absolute_and_home(void **state) {
        char cfg[4400];
        snprintf(cfg, sizeof(cfg), "[core]\n\thooksPath = %s\n", P("ws/abs-hooks"));
        _cleanup_plan_ plan *pl = plan_with_config(cfg);
        assert_protected(pl, P("ws/abs-hooks"), true);
        assert_creatable(pl, P("ws/abs-hooks/post-checkout"), false);

        tmptree_file(T, "ws/.git/config", "[core]\n\thooksPath = ~/hooks\n");
        _cleanup_plan_ plan *pl2 = plan_ws("ws");
        assert_protected(pl2, P("home/hooks"), true);
        assert_protected(pl2, P("homereal/hooks"), true);
        assert_protected(pl2, P("ws/~/hooks"), false);

        tmptree_file(T, "ws/.git/config", "[core]\n\thooksPath = ~\n");
        _cleanup_plan_ plan *pl3 = plan_ws("ws");
        assert_protected(pl3, P("homereal"), true);

        /* ~user/ is not expanded (nothing protected, the plan still builds). */
        tmptree_file(T, "ws/.git/config", "[core]\n\thooksPath = ~nobody/h\n");
        _cleanup_plan_ plan *pl4 = plan_ws("ws");
        assert_protected(pl4, P("ws/~nobody/h"), false);
}

/* A hooks directory that holds the workspace (or the git dir) cannot be protected whole without
 * freezing it: the hook names in it are protected instead. */
static void test_hooks_path_covering(void **state) {
        _cleanup_plan_ plan *pl = plan_with_config("[core]\n\thooksPath = .\n");
        assert_protected(pl, P("ws"), false);
        assert_protected(pl, P("ws/."), false);
        assert_creatable(pl, P("ws/pre-commit"), false);
        assert_creatable(pl, P("ws/post-merge"), false);
        assert_creatable(pl, P("ws/src/x.c"), true);
        assert_true(has_mount(pl, MOUNT_OP_BIND_RW, P("ws")));

        tmptree_file(T, "ws/.git/config", "[core]\n\thooksPath = ..\n");
        _cleanup_plan_ plan *pl2 = plan_ws("ws");
        assert_protected(pl2, T, false);
        assert_protected(pl2, P("pre-push"), true);

        tmptree_file(T, "ws/.git/config", "[core]\n\thooksPath = .git\n");
        _cleanup_plan_ plan *pl3 = plan_ws("ws");
        assert_protected(pl3, P("ws/.git"), false);
        assert_creatable(pl3, P("ws/.git/pre-commit"), false);
        assert_creatable(pl3, P("ws/.git/objects/ab/cd"), true);
}

/* A '[' in a path is glob syntax to the supervisor: the rule must still match the real name. */
static void test_hooks_path_brackets(void **state) {
        _cleanup_plan_ plan *pl = plan_with_config("[core]\n\thooksPath = \"hooks [x]\"\n");
        assert_creatable(pl, P("ws/hooks [x]/pre-commit"), false);
        assert_creatable(pl, P("ws/hooks [x]"), false);
        assert_creatable(pl, P("ws/hooks x/pre-commit"), true);
}

/* ---- core.fsmonitor ------------------------------------------------------------------------- */

static void test_fsmonitor(void **state) {
        tmptree_mkdir(T, "ws/tools");
        tmptree_file(T, "ws/tools/fsmon.sh", "#!/bin/sh\n");
        _cleanup_plan_ plan *pl = plan_with_config("[core]\n\tfsmonitor = ./tools/fsmon.sh --v2\n");
        assert_protected(pl, P("ws/tools/fsmon.sh"), true);
        assert_true(has_mount(pl, MOUNT_OP_BIND_RO, P("ws/tools/fsmon.sh")));
        assert_protected(pl, P("ws/tools"), false);

        char cfg[4400];
        snprintf(cfg, sizeof(cfg), "[core]\n\tfsmonitor = \"'%s' arg\"\n", P("ws/a b/m"));
        tmptree_file(T, "ws/.git/config", cfg);
        _cleanup_plan_ plan *pl2 = plan_ws("ws");
        assert_protected(pl2, P("ws/a b/m"), true);
}

static void test_fsmonitor_boolean(void **state) {
        static const char *const values[] = { "true", "false", "YES", "0", "", "touch x" };
        for (size_t i = 0; i < ELEMENTSOF(values); i++) {
                char cfg[256];
                snprintf(cfg, sizeof(cfg), "[core]\n\tfsmonitor = %s\n", values[i]);
                _cleanup_plan_ plan *pl = plan_with_config(cfg);
                size_t n = pl->names.protected.n;
                _cleanup_plan_ plan *bare = plan_with_config("[core]\n");
                /* Nothing beyond what a config without fsmonitor gives. */
                assert_int_equal(n, bare->names.protected.n);
                assert_protected(pl, P("ws/touch"), false);
                assert_protected(pl, P("ws/true"), false);
        }
}

/* ---- what is not [core], and what is not config --------------------------------------------- */

static void test_section_edges(void **state) {
        _cleanup_plan_ plan *pl = plan_with_config("[core \"x\"]\n\thooksPath = .a\n"
                                                   "[core.y]\n\thooksPath = .b\n"
                                                   "[Core]\n\tHooksPath = .c ; comment\n"
                                                   "[remote \"core\"]\n\thooksPath = .d\n");
        assert_protected(pl, P("ws/.a"), false);
        assert_protected(pl, P("ws/.b"), false);
        assert_protected(pl, P("ws/.c"), true);
        assert_protected(pl, P("ws/.d"), false);
}

static void test_bad_configs(void **state) {
        _cleanup_plan_ plan *bare = plan_with_config("[core]\n");
        size_t n = bare->names.protected.n;
        /* Garbage git itself refuses: nothing extra, and the plan still builds. */
        _cleanup_plan_ plan *pl = plan_with_config("[core]\n\thooksPath = .x\n\x01\x02 junk\n");
        assert_protected(pl, P("ws/.x"), false);
        assert_int_equal(pl->names.protected.n, n);
        /* Over the size bound: not read. */
        size_t big = 1024 * 1024 + 64;
        char *cfg = malloc(big + 1);
        assert_non_null(cfg);
        memset(cfg, '#', big);
        static const char head[] = "[core]\n\thooksPath = .y\n";
        memcpy(cfg, head, sizeof(head) - 1);
        cfg[big - 1] = '\n';
        cfg[big] = '\0';
        _cleanup_plan_ plan *pl2 = plan_with_config(cfg);
        free(cfg);
        assert_protected(pl2, P("ws/.y"), false);
        /* A FIFO as config neither hangs nor fails the plan. */
        assert_int_equal(unlink(P("ws/.git/config")), 0);
        assert_int_equal(mkfifo(P("ws/.git/config"), 0600), 0);
        _cleanup_plan_ plan *pl3 = plan_ws("ws");
        assert_protected(pl3, P("ws/.git/config"), true);
}

/* ---- includes and the user's files ---------------------------------------------------------- */

static void test_includes(void **state) {
        make_repo("ws", "[include]\n\tpath = ../shared.inc\n"
                        "[includeIf \"gitdir:/nowhere/\"]\n\tpath = cond.inc\n");
        tmptree_file(T, "ws/shared.inc", "[core]\n\thooksPath = from-include\n"
                                         "[include]\n\tpath = .git/loop.inc\n");
        tmptree_file(T, "ws/.git/loop.inc", "[include]\n\tpath = ../shared.inc\n");
        _cleanup_plan_ plan *pl = plan_ws("wslink");
        /* Included files are configuration: protected, existing or not. */
        assert_protected(pl, P("ws/shared.inc"), true);
        assert_true(has_mount(pl, MOUNT_OP_BIND_RO, P("ws/shared.inc")));
        assert_protected(pl, P("ws/.git/cond.inc"), true);
        assert_protected(pl, P("ws/.git/loop.inc"), true);
        assert_protected(pl, P("ws/from-include"), true);
}

static void test_user_config(void **state) {
        tmptree_file(T, "homereal/.gitconfig", "[include]\n\tpath = ~/.gitconfig.local\n"
                                               "[core]\n\thooksPath = .githooks\n");
        /* $HOME writable (a bind): its includes and a missing ~/.git are protected. */
        _cleanup_policy_ cordon_policy *pol = policy_for(P("ws"));
        assert_int_equal(cordon_policy_add_bind(pol, P("homereal"), false), 0);
        make_repo("ws", "[core]\n");
        _cleanup_plan_ plan *pl = build_ok(pol, P("ws"));
        assert_protected(pl, P("homereal/.gitconfig.local"), true);
        assert_protected(pl, P("homereal/.git"), true);
        assert_protected(pl, P("homereal/.config/git/config"), true);
        /* A relative hooksPath from the user's config applies to each repository. */
        assert_protected(pl, P("ws/.githooks"), true);
        assert_creatable(pl, P("homereal/.gitconfig.local"), false);
}

#define T_(f) cmocka_unit_test_setup_teardown(f, setup_tree, teardown_tree)

int main(void) {
        const struct CMUnitTest tests[] = {
                T_(test_no_repository),        T_(test_git_dir_internals),
                T_(test_git_file),             T_(test_git_symlink),
                T_(test_worktree),             T_(test_hooks_path_relative),
                T_(test_hooks_path_husky9),    T_(test_hooks_path_absolute_and_home),
                T_(test_hooks_path_covering),  T_(test_hooks_path_brackets),
                T_(test_fsmonitor),            T_(test_fsmonitor_boolean),
                T_(test_section_edges),        T_(test_bad_configs),
                T_(test_includes),             T_(test_user_config),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
