/* SPDX-License-Identifier: Apache-2.0 */
/* The planner on real directory trees with symlinks: literal + resolved deny paths, mount order,
 * secrets hidden, the mandatory write-deny set, linked git worktrees, modes, refusals and the
 * fields this backend cannot enforce yet. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "plan/name-rules.h"
#include "plan/plan.h"
#include "policy/policy.h"
#include "cleanup.h"
#include "tmptree.h"

static char *T; /* the tree of the running test */

#define P(rel) tmptree_at(T, rel)

static int setup_tree(void **state) {
        T = tmptree_new();
        tmptree_mkdir(T, "homereal/.ssh");
        tmptree_file(T, "homereal/.ssh/id_rsa", "KEY");
        tmptree_file(T, "homereal/.netrc", "machine x");
        tmptree_file(T, "homereal/.bashrc", "# rc");
        tmptree_mkdir(T, "homereal/.config/gh");
        tmptree_symlink(T, "home", "homereal");
        tmptree_mkdir(T, "ws/.git/hooks");
        tmptree_file(T, "ws/.git/config", "[core]");
        tmptree_mkdir(T, "ws/.vscode");
        tmptree_mkdir(T, "ws/src");
        tmptree_mkdir(T, "ws/claude-real");
        tmptree_file(T, "ws/claude-real/settings.json", "{}");
        tmptree_file(T, "ws/claude-real/settings.local.json", "{}");
        tmptree_symlink(T, "ws/.claude", "claude-real");
        tmptree_symlink(T, "ws/.mcp.json", "../outside/mcp.json"); /* dangling */
        tmptree_file(T, "ws/ci.yml", "x");
        tmptree_symlink(T, "wslink", "ws");
        tmptree_mkdir(T, "state");
        return 0;
}

static int teardown_tree(void **state) {
        tmptree_remove(T);
        T = NULL;
        return 0;
}

/* The default policy for cwd (network on, through the proxy), plus whatever the test adds. */
static cordon_policy *default_policy(const char *cwd) {
        cordon_policy *p = NULL;
        cordon_error err = { 0 };
        assert_int_equal(cordon_policy_new_default(cwd, P("home"), &p, &err), 0);
        return p;
}

static plan *build_ok(const cordon_policy *pol, const char *cwd) {
        plan *pl = NULL;
        cordon_error err = { 0 };
        char e0[] = "PATH=/usr/bin";
        char *env[] = { e0, NULL };
        int r = plan_build(pol, P("home"), cwd, env, &pl, &err);
        if (r < 0)
                print_message("plan_build: %s: %s\n", cordon_code_name(err.code), err.message);
        assert_int_equal(r, 0);
        return pl;
}

static void build_fails(const cordon_policy *pol, const char *cwd, cordon_code code,
                        const char *needle) {
        plan *pl = NULL;
        cordon_error err = { 0 };
        assert_true(plan_build(pol, P("home"), cwd, NULL, &pl, &err) < 0);
        assert_null(pl);
        if (err.code != code || !strstr(err.message, needle))
                print_message("got %s: %s\n", cordon_code_name(err.code), err.message);
        assert_int_equal(err.code, code);
        assert_non_null(strstr(err.message, needle));
}

static ssize_t find_mount(const plan *pl, mount_op_kind kind, const char *path) {
        for (size_t i = 0; i < pl->n_mounts; i++)
                if (pl->mounts[i].kind == kind && strcmp(pl->mounts[i].path, path) == 0)
                        return (ssize_t) i;
        return -1;
}

static ssize_t find_path(const plan *pl, const char *path) {
        for (size_t i = 0; i < pl->n_mounts; i++)
                if (strcmp(pl->mounts[i].path, path) == 0)
                        return (ssize_t) i;
        return -1;
}

static void assert_protected(const plan *pl, const char *path, bool want) {
        if (strv_contains(&pl->names.protected, path) != want)
                print_message("names.protected %s '%s'\n", want ? "lacks" : "has", path);
        assert_int_equal(strv_contains(&pl->names.protected, path), want);
}

static bool has_landlock(const plan *pl, const char *path) {
        for (size_t i = 0; i < pl->n_landlock; i++)
                if (strcmp(pl->landlock[i].path, path) == 0 && pl->landlock[i].write)
                        return true;
        return false;
}

static size_t depth(const char *p) {
        size_t d = 0;
        for (; *p; p++)
                if (*p == '/' && p[1])
                        d++;
        return d;
}

static void test_default_plan(void **state) {
        _cleanup_policy_ cordon_policy *pol = default_policy(P("wslink"));
        _cleanup_plan_ plan *pl = build_ok(pol, P("wslink"));

        /* Fixed ops first, in this order. */
        static const struct {
                mount_op_kind kind;
                const char *path;
        } fixed[] = { { MOUNT_OP_ROOT_RO, "/" },
                      { MOUNT_OP_DEV, "/dev" },
                      { MOUNT_OP_PROC, "/proc" },
                      { MOUNT_OP_TMPFS, "/tmp" },
                      { MOUNT_OP_TMPFS, "/dev/shm" } };
        assert_true(pl->n_mounts > ELEMENTSOF(fixed));
        /* Unset limits: the built-in ceiling and bounded tmpfs (never tmpfs's half of RAM). */
        assert_int_equal(pl->pids, POLICY_DEFAULT_PIDS);
        assert_true(pl->pids_default);
        assert_int_equal(pl->mounts[3].tmpfs_bytes, policy_default_tmp_bytes());
        assert_int_equal(pl->mounts[4].tmpfs_bytes, policy_default_shm_bytes());
        assert_true(policy_default_tmp_bytes() > 0 && policy_default_tmp_bytes() <= (2ULL << 30));
        assert_true(policy_default_shm_bytes() > 0 && policy_default_shm_bytes() <= (256ULL << 20));
        for (size_t i = 0; i < ELEMENTSOF(fixed); i++) {
                assert_int_equal(pl->mounts[i].kind, fixed[i].kind);
                assert_string_equal(pl->mounts[i].path, fixed[i].path);
        }
        /* Then parents before children. */
        for (size_t i = ELEMENTSOF(fixed) + 1; i < pl->n_mounts; i++)
                assert_true(depth(pl->mounts[i - 1].path) <= depth(pl->mounts[i].path));

        /* The workspace, by its resolved path. */
        ssize_t rw = find_mount(pl, MOUNT_OP_BIND_RW, P("ws"));
        assert_true(rw >= 0);
        assert_int_equal(find_path(pl, P("wslink")), -1); /* never a symlink as mountpoint */
        assert_int_equal(pl->writable_roots.n, 1);
        assert_string_equal(pl->writable_roots.v[0], P("ws"));

        /* Existing mandatory paths inside it: read-only, after the writable bind. */
        ssize_t hooks = find_mount(pl, MOUNT_OP_BIND_RO, P("ws/.git/hooks"));
        assert_true(hooks > rw);
        assert_true(pl->mounts[hooks].is_dir);
        ssize_t cfg = find_mount(pl, MOUNT_OP_BIND_RO, P("ws/.git/config"));
        assert_true(cfg > rw);
        assert_false(pl->mounts[cfg].is_dir);
        assert_true(find_mount(pl, MOUNT_OP_BIND_RO, P("ws/.vscode")) > rw);
        /* .claude is a symlink: the settings files are protected where they really are. */
        assert_true(find_mount(pl, MOUNT_OP_BIND_RO, P("ws/claude-real/settings.json")) > rw);
        assert_true(find_mount(pl, MOUNT_OP_BIND_RO, P("ws/claude-real/settings.local.json")) >
                    rw);
        assert_int_equal(find_path(pl, P("ws/src")), -1);

        /* Secrets that exist are hidden at their resolved paths; missing ones are not mounted. */
        ssize_t ssh = find_mount(pl, MOUNT_OP_HIDE, P("homereal/.ssh"));
        assert_true(ssh >= 0);
        assert_true(pl->mounts[ssh].is_dir);
        ssize_t netrc = find_mount(pl, MOUNT_OP_HIDE, P("homereal/.netrc"));
        assert_true(netrc >= 0);
        assert_false(pl->mounts[netrc].is_dir);
        assert_true(find_mount(pl, MOUNT_OP_HIDE, P("homereal/.config/gh")) >= 0);
        assert_int_equal(find_path(pl, P("homereal/.aws")), -1);
        assert_int_equal(find_path(pl, P("home/.ssh")), -1);
        /* $HOME is not writable here: its .bashrc is read-only through the root already. */
        assert_int_equal(find_path(pl, P("homereal/.bashrc")), -1);

        /* Name rules: literal and resolved, existing or not. */
        assert_protected(pl, P("home/.bashrc"), true);
        assert_protected(pl, P("homereal/.bashrc"), true);
        assert_protected(pl, P("home/.zshenv"), true);
        assert_protected(pl, P("homereal/.zshenv"), true);
        assert_protected(pl, P("wslink/.bashrc"), true);
        assert_protected(pl, P("ws/.bashrc"), true);
        assert_protected(pl, P("ws/.git/hooks"), true);
        assert_protected(pl, P("ws/.idea"), true);
        assert_protected(pl, P("ws/HEAD"), true);
        assert_protected(pl, P("ws/objects"), true);
        assert_protected(pl, P("ws/refs"), true);
        assert_protected(pl, P("ws/.gemini"), true);
        /* Every entry of data/protected/names.list, at the root (bare-repo names included). */
        for (size_t i = 0; plan_mandatory_protected_names[i]; i++) {
                char rel[PATH_MAX];
                (void) snprintf(rel, sizeof(rel), "ws/%s", plan_mandatory_protected_names[i]);
                assert_protected(pl, P(rel), true);
        }
        /* cordon's own settings directories, for direct library callers too (no settings
         * resolution adds them here). */
        assert_protected(pl, P("ws/.cordon"), true);
        assert_protected(pl, P("home/.config/cordon"), true);
        assert_protected(pl, P("homereal/.config/cordon"), true);
        assert_protected(pl, P("ws/.aider*"), true);
        assert_protected(pl, P("ws/.github/copilot-*"), true);
        assert_protected(pl, P("ws/.claude/settings*.json"), true);
        assert_protected(pl, P("ws/claude-real/settings*.json"), true);
        assert_protected(pl, P("ws/claude-real/skills"), true);
        assert_protected(pl, P("ws/.mcp.json"), true);
        assert_protected(pl, P("outside/mcp.json"), true); /* the dangling link's target */
        assert_protected(pl, P("home/.ssh"), true);
        assert_protected(pl, P("homereal/.ssh"), true);
        assert_protected(pl, P("home/.aws"), true);
        assert_protected(pl, P("homereal/.aws"), true);
        assert_protected(pl, P("homereal/.config/cordon/secrets"), true);
        assert_protected(pl, P("ws/src"), false);
        /* $HOME is not writable: no bare-repo names there (they would only refuse ~/refs/x). */
        assert_protected(pl, P("home/HEAD"), false);
        assert_protected(pl, P("homereal/refs"), false);

        assert_int_equal(pl->names.deny_names.n, 4);
        assert_true(strv_contains(&pl->names.deny_names, ".env.*"));
        assert_true(strv_contains(&pl->names.deny_names, "*.key"));

        assert_true(has_landlock(pl, P("ws")));
        assert_true(has_landlock(pl, "/tmp"));
        assert_true(has_landlock(pl, "/dev"));
        assert_true(has_landlock(pl, "/dev/shm"));
        assert_false(has_landlock(pl, P("homereal")));

        assert_string_equal(pl->workdir, P("wslink"));
        assert_int_equal(pl->mode, CORDON_MODE_WORKSPACE_WRITE);
}

static void test_deny_lists(void **state) {
        _cleanup_policy_ cordon_policy *pol = default_policy(P("ws"));
        tmptree_file(T, "ws/a.secret", "1");
        tmptree_file(T, "ws/b.secret", "2");
        assert_int_equal(cordon_policy_add_deny_read(pol, P("wslink/*.secret")), 0);
        assert_int_equal(cordon_policy_add_deny_write(pol, P("ws/ci.yml")), 0);
        assert_int_equal(cordon_policy_add_deny_write(pol, P("ws/not-yet.yml")), 0);
        assert_int_equal(cordon_policy_add_protected_path(pol, P("wslink/src")), 0);
        _cleanup_plan_ plan *pl = build_ok(pol, P("ws"));
        assert_true(find_mount(pl, MOUNT_OP_HIDE, P("ws/a.secret")) >= 0);
        assert_true(find_mount(pl, MOUNT_OP_HIDE, P("ws/b.secret")) >= 0);
        assert_protected(pl, P("wslink/*.secret"), true);
        assert_protected(pl, P("ws/*.secret"), true);
        assert_true(find_mount(pl, MOUNT_OP_BIND_RO, P("ws/ci.yml")) >= 0);
        assert_int_equal(find_path(pl, P("ws/not-yet.yml")), -1);
        assert_protected(pl, P("ws/not-yet.yml"), true);
        assert_true(find_mount(pl, MOUNT_OP_BIND_RO, P("ws/src")) >= 0);
        assert_protected(pl, P("wslink/src"), true);
        assert_protected(pl, P("ws/src"), true);
}

/* Entries that are symlinks, in every form (mandatory glob, protectedPaths and denyWrite
 * literals, a denyWrite glob, a denyRead glob): the file each leads to is protected by name too,
 * so an O_CREAT open that follows the link, or names the target, meets a rule (issue 11). */
static void test_symlinked_entries(void **state) {
        tmptree_mkdir(T, "ws/cfg");
        tmptree_mkdir(T, "ws/tools");
        tmptree_file(T, "ws/cfg/claude.json", "{}");
        tmptree_file(T, "ws/cfg/pp.json", "{}");
        tmptree_file(T, "ws/cfg/dw.json", "{}");
        tmptree_file(T, "ws/cfg/g.json", "{}");
        tmptree_file(T, "ws/cfg/s.txt", "KEY");
        assert_int_equal(unlink(P("ws/.claude")), 0); /* a real .claude, not the fixture's link */
        tmptree_mkdir(T, "ws/.claude");
        tmptree_symlink(T, "ws/.claude/settings.json", "../cfg/claude.json");
        tmptree_symlink(T, "ws/pp-link", "cfg/pp.json");
        tmptree_symlink(T, "ws/dw-link", "cfg/dw.json");
        tmptree_symlink(T, "ws/tools/g.lock", "../cfg/g.json");
        tmptree_symlink(T, "ws/tools/s.secret", "../cfg/s.txt");
        _cleanup_policy_ cordon_policy *pol = default_policy(P("ws"));
        assert_int_equal(cordon_policy_add_protected_path(pol, P("ws/pp-link")), 0);
        assert_int_equal(cordon_policy_add_deny_write(pol, P("ws/dw-link")), 0);
        assert_int_equal(cordon_policy_add_deny_write(pol, P("ws/tools/*.lock")), 0);
        assert_int_equal(cordon_policy_add_deny_read(pol, P("ws/tools/*.secret")), 0);
        _cleanup_plan_ plan *pl = build_ok(pol, P("ws"));
        static const char *const targets[] = { "ws/cfg/claude.json", "ws/cfg/pp.json",
                                               "ws/cfg/dw.json", "ws/cfg/g.json" };
        for (size_t i = 0; i < ELEMENTSOF(targets); i++) {
                assert_protected(pl, P(targets[i]), true);
                assert_true(strv_contains(&pl->paths.protect, P(targets[i])));
                assert_true(find_mount(pl, MOUNT_OP_BIND_RO, P(targets[i])) >= 0);
        }
        assert_protected(pl, P("ws/cfg/s.txt"), true);
        assert_true(strv_contains(&pl->paths.secrets, P("ws/cfg/s.txt")));
        assert_true(find_mount(pl, MOUNT_OP_HIDE, P("ws/cfg/s.txt")) >= 0);
        /* The links inside the root are bound read-only onto themselves (native: unlink EBUSY). */
        static const char *const links[] = { "ws/.claude/settings.json", "ws/pp-link",
                                             "ws/dw-link", "ws/tools/g.lock" };
        for (size_t i = 0; i < ELEMENTSOF(links); i++) {
                ssize_t m = find_mount(pl, MOUNT_OP_BIND_RO, P(links[i]));
                assert_true(m >= 0);
                assert_true(pl->mounts[m].is_link);
                assert_false(pl->mounts[m].is_dir);
        }
        assert_false(pl->mounts[find_mount(pl, MOUNT_OP_BIND_RO, P("ws/cfg/pp.json"))].is_link);
        /* The links themselves keep their rules; their directory does not become protected. */
        assert_protected(pl, P("ws/.claude/settings*.json"), true);
        assert_protected(pl, P("ws/pp-link"), true);
        assert_protected(pl, P("ws/cfg"), false);
        assert_protected(pl, P("ws/tools"), false);
}

/* Hard links made before the run: the other names inside the writable root join the sets, for
 * a protected file, a file beneath a protected directory and a secret outside the root. */
static void test_hard_links(void **state) {
        tmptree_file(T, "ws/.git/hooks/pre-commit", "#!/bin/sh");
        assert_int_equal(link(P("ws/.git/config"), P("ws/hl-config")), 0);
        assert_int_equal(link(P("ws/.git/hooks/pre-commit"), P("ws/src/hook.sh")), 0);
        assert_int_equal(link(P("homereal/.netrc"), P("ws/src/netrc.txt")), 0);
        assert_int_equal(link(P("homereal/.ssh/id_rsa"), P("ws/key.txt")), 0);
        tmptree_file(T, "ws/plain.txt", "x");
        assert_int_equal(link(P("ws/plain.txt"), P("ws/plain2.txt")), 0); /* not protected */
        _cleanup_policy_ cordon_policy *pol = default_policy(P("ws"));
        _cleanup_plan_ plan *pl = build_ok(pol, P("ws"));
        assert_protected(pl, P("ws/hl-config"), true);
        assert_true(find_mount(pl, MOUNT_OP_BIND_RO, P("ws/hl-config")) >= 0);
        assert_protected(pl, P("ws/src/hook.sh"), true);
        assert_true(find_mount(pl, MOUNT_OP_BIND_RO, P("ws/src/hook.sh")) >= 0);
        assert_true(strv_contains(&pl->paths.secrets, P("ws/src/netrc.txt")));
        assert_true(find_mount(pl, MOUNT_OP_HIDE, P("ws/src/netrc.txt")) >= 0);
        assert_true(find_mount(pl, MOUNT_OP_HIDE, P("ws/key.txt")) >= 0);
        assert_protected(pl, P("ws/plain.txt"), false);
        assert_protected(pl, P("ws/plain2.txt"), false);
        assert_int_equal(find_path(pl, P("ws/plain2.txt")), -1);
}

/* A search that cannot finish (here: deeper than it walks) refuses the run, never leaves another
 * name unprotected; without a file with other names nothing is walked at all. */
static void test_hard_links_bound(void **state) {
        char rel[1024] = "ws/deep";
        for (int i = 0; i < 70; i++)
                strcat(rel, "/d");
        tmptree_mkdir(T, rel);
        _cleanup_policy_ cordon_policy *pol = default_policy(P("ws"));
        { _cleanup_plan_ plan *pl = build_ok(pol, P("ws")); (void) pl; } /* .git/config has one link */
        assert_int_equal(link(P("ws/.git/config"), P("ws/hl-config")), 0);
        build_fails(pol, P("ws"), CORDON_POLICY_UNENFORCEABLE, "other hard links");
}

/* Read-only inside read-only adds nothing; a hide under the fresh /proc still matters. */
static void test_redundant_and_proc(void **state) {
        _cleanup_policy_ cordon_policy *pol = default_policy(P("ws"));
        tmptree_file(T, "ws/src/main.c", "int main;");
        assert_int_equal(cordon_policy_add_protected_path(pol, P("ws/src")), 0);
        assert_int_equal(cordon_policy_add_deny_write(pol, P("ws/src/main.c")), 0);
        assert_int_equal(cordon_policy_add_deny_read(pol, "/proc/cmdline"), 0);
        assert_int_equal(cordon_policy_add_deny_read(pol, "/dev/zero"), 0);
        _cleanup_plan_ plan *pl = build_ok(pol, P("ws"));
        assert_true(find_mount(pl, MOUNT_OP_BIND_RO, P("ws/src")) >= 0);
        assert_int_equal(find_path(pl, P("ws/src/main.c")), -1);
        assert_protected(pl, P("ws/src/main.c"), true);
        assert_true(find_mount(pl, MOUNT_OP_HIDE, "/proc/cmdline") >= 0);
        assert_int_equal(find_path(pl, "/dev/zero"), -1); /* not in our minimal /dev */
}

/* At one path only the strongest op stays; protective ops under a hidden path are dropped. */
static void test_dedupe_and_cover(void **state) {
        _cleanup_policy_ cordon_policy *pol = default_policy(P("ws"));
        assert_int_equal(cordon_policy_add_bind(pol, P("homereal"), false), 0);
        assert_int_equal(cordon_policy_add_deny_write(pol, P("homereal/.ssh")), 0);
        assert_int_equal(cordon_policy_add_deny_write(pol, P("homereal/.ssh/id_rsa")), 0);
        _cleanup_plan_ plan *pl = build_ok(pol, P("ws"));
        ssize_t hide = find_path(pl, P("homereal/.ssh"));
        assert_true(hide >= 0);
        assert_int_equal(pl->mounts[hide].kind, MOUNT_OP_HIDE);
        size_t at_ssh = 0;
        for (size_t i = 0; i < pl->n_mounts; i++)
                at_ssh += strcmp(pl->mounts[i].path, P("homereal/.ssh")) == 0;
        assert_int_equal(at_ssh, 1);
        assert_int_equal(find_path(pl, P("homereal/.ssh/id_rsa")), -1);
        assert_protected(pl, P("homereal/HEAD"), true);
        assert_protected(pl, P("homereal/objects"), true);
        /* $HOME is writable now: its existing start-up file is bound read-only. */
        assert_true(find_mount(pl, MOUNT_OP_BIND_RO, P("homereal/.bashrc")) >
                    find_mount(pl, MOUNT_OP_BIND_RW, P("homereal")));
        /* No duplicate path anywhere. */
        for (size_t i = 0; i < pl->n_mounts; i++)
                for (size_t j = i + 1; j < pl->n_mounts; j++)
                        if (i >= 5)
                                assert_string_not_equal(pl->mounts[i].path, pl->mounts[j].path);
}

/* The private /tmp hides the host's: a secret there needs no mount, a workspace there does. */
static void test_under_tmp(void **state) {
        char tmpl[] = "/tmp/cordon-plan-XXXXXX";
        char *t = mkdtemp(tmpl);
        assert_non_null(t);
        char ws[256], secret[256], rc[256];
        snprintf(ws, sizeof(ws), "%s/ws", t);
        snprintf(secret, sizeof(secret), "%s/secret", t);
        snprintf(rc, sizeof(rc), "%s/ws/.bashrc", t);
        assert_int_equal(mkdir(ws, 0755), 0);
        assert_int_equal(mkdir(secret, 0755), 0);
        FILE *f = fopen(rc, "w");
        assert_non_null(f);
        fclose(f);
        _cleanup_policy_ cordon_policy *pol = default_policy(ws);
        assert_int_equal(cordon_policy_add_deny_read(pol, secret), 0);
        _cleanup_plan_ plan *pl = build_ok(pol, ws);
        assert_true(find_mount(pl, MOUNT_OP_BIND_RW, ws) >= 0);
        assert_true(find_mount(pl, MOUNT_OP_BIND_RO, rc) > find_mount(pl, MOUNT_OP_BIND_RW, ws));
        assert_int_equal(find_path(pl, secret), -1);
        assert_protected(pl, secret, true);
        assert_int_equal(unlink(rc), 0);
        assert_int_equal(rmdir(ws), 0);
        assert_int_equal(rmdir(secret), 0);
        assert_int_equal(rmdir(t), 0);
}

static void make_worktree(const char *gitfile, const char *backpointer) {
        tmptree_mkdir(T, "main/.git/objects");
        tmptree_mkdir(T, "main/.git/refs");
        tmptree_mkdir(T, "main/.git/hooks");
        tmptree_file(T, "main/.git/HEAD", "ref: refs/heads/main\n");
        tmptree_file(T, "main/.git/config", "[core]\n");
        tmptree_mkdir(T, "main/.git/worktrees/wt");
        tmptree_file(T, "main/.git/worktrees/wt/commondir", "../..\n");
        tmptree_file(T, "main/.git/worktrees/wt/gitdir", backpointer);
        tmptree_mkdir(T, "wt");
        tmptree_file(T, "wt/.git", gitfile);
}

static void test_worktree(void **state) {
        char gitfile[4200], back[4200];
        snprintf(gitfile, sizeof(gitfile), "gitdir: %s\n", P("main/.git/worktrees/wt"));
        snprintf(back, sizeof(back), "%s\n", P("wt/.git"));
        make_worktree(gitfile, back);
        _cleanup_policy_ cordon_policy *pol = default_policy(P("wt"));
        _cleanup_plan_ plan *pl = build_ok(pol, P("wt"));
        ssize_t common = find_mount(pl, MOUNT_OP_BIND_RW, P("main/.git"));
        assert_true(common >= 0);
        assert_string_equal(pl->mounts[common].why, "git worktree common dir");
        assert_true(strv_contains(&pl->writable_roots, P("main/.git")));
        assert_true(has_landlock(pl, P("main/.git")));
        assert_true(find_mount(pl, MOUNT_OP_BIND_RO, P("main/.git/hooks")) > common);
        assert_true(find_mount(pl, MOUNT_OP_BIND_RO, P("main/.git/config")) > common);
        assert_true(find_mount(pl, MOUNT_OP_BIND_RO, P("wt/.git")) >= 0);
        assert_protected(pl, P("main/.git/hooks"), true);
        assert_protected(pl, P("main/.git/config"), true);
        assert_protected(pl, P("main/.git/worktrees/wt/config.worktree"), true);
        assert_protected(pl, P("wt/.git"), true);
        /* Commits write these: no mandatory set for the shared .git. */
        assert_protected(pl, P("main/.git/HEAD"), false);
        assert_protected(pl, P("main/.git/objects"), false);
        assert_protected(pl, P("main/.git/refs"), false);
        assert_int_equal(find_path(pl, P("main/.git/objects")), -1);
        assert_protected(pl, P("wt/HEAD"), true);

        /* The original checkout protected (the usual agent setup): still commits. */
        assert_int_equal(cordon_policy_add_protected_path(pol, P("main")), 0);
        _cleanup_plan_ plan *pl2 = build_ok(pol, P("wt"));
        assert_true(find_mount(pl2, MOUNT_OP_BIND_RW, P("main/.git")) >= 0);
        assert_protected(pl2, P("main"), false); /* would forbid every commit; mounts hold it */
        assert_protected(pl2, P("main/.git/hooks"), true);

        /* A relative gitdir works too. */
        tmptree_file(T, "wt/.git", "gitdir: ../main/.git/worktrees/wt\n");
        _cleanup_plan_ plan *pl3 = build_ok(pol, P("wt"));
        assert_true(find_mount(pl3, MOUNT_OP_BIND_RW, P("main/.git")) >= 0);
}

/* ROOT/.git is writable by earlier commands: without the back-pointer it grants nothing. */
static void test_worktree_forged(void **state) {
        char gitfile[4200], back[4200];
        snprintf(gitfile, sizeof(gitfile), "gitdir: %s\n", P("main/.git/worktrees/wt"));
        /* The back-pointer names a real .git file, just not this worktree's. */
        tmptree_mkdir(T, "elsewhere");
        tmptree_file(T, "elsewhere/.git", "gitdir: /nowhere\n");
        snprintf(back, sizeof(back), "%s\n", P("elsewhere/.git"));
        make_worktree(gitfile, back);
        _cleanup_policy_ cordon_policy *pol = default_policy(P("wt"));
        _cleanup_plan_ plan *pl = build_ok(pol, P("wt"));
        assert_int_equal(find_path(pl, P("main/.git")), -1);
        assert_int_equal(pl->writable_roots.n, 1);
        /* Not a worktrees/N layout at all. */
        tmptree_mkdir(T, "evil/x");
        tmptree_file(T, "evil/x/gitdir", P("wt/.git"));
        char g2[4200];
        snprintf(g2, sizeof(g2), "gitdir: %s\n", P("evil/x"));
        tmptree_file(T, "wt/.git", g2);
        _cleanup_plan_ plan *pl2 = build_ok(pol, P("wt"));
        assert_int_equal(pl2->writable_roots.n, 1);
        assert_int_equal(find_path(pl2, P("evil")), -1);
}

static void test_project_under_home_refs(void **state) {
        tmptree_mkdir(T, "homereal/refs/proj");
        _cleanup_policy_ cordon_policy *pol = default_policy(P("home/refs/proj"));
        _cleanup_plan_ plan *pl = build_ok(pol, P("home/refs/proj"));
        assert_true(find_mount(pl, MOUNT_OP_BIND_RW, P("homereal/refs/proj")) >= 0);
        assert_protected(pl, P("homereal/refs/proj/HEAD"), true);
}

static void test_refusals(void **state) {
        _cleanup_policy_ cordon_policy *pol = default_policy(P("ws"));
        tmptree_mkdir(T, "homereal/.ssh/sub");
        /* A writable root inside a secret, by resolved or literal path. */
        _cleanup_policy_ cordon_policy *a = policy_dup(pol);
        assert_int_equal(cordon_policy_add_bind(a, P("homereal/.ssh/sub"), false), 0);
        build_fails(a, P("ws"), CORDON_POLICY_INVALID, "is inside the secret");
        _cleanup_policy_ cordon_policy *a2 = policy_dup(pol);
        assert_int_equal(cordon_policy_add_bind(a2, P("home/.ssh/sub"), true), 0);
        build_fails(a2, P("ws"), CORDON_POLICY_INVALID, "is inside the secret");
        /* A writable root inside a protected path. */
        _cleanup_policy_ cordon_policy *b = policy_dup(pol);
        assert_int_equal(cordon_policy_add_bind(b, P("ws/.vscode"), false), 0);
        build_fails(b, P("ws"), CORDON_POLICY_INVALID, "is inside the protected path");
        _cleanup_policy_ cordon_policy *b2 = policy_dup(pol);
        assert_int_equal(cordon_policy_add_protected_path(b2, P("wslink")), 0);
        build_fails(b2, P("ws"), CORDON_POLICY_INVALID, "is inside the protected path");
        /* ...but read-only there is fine. */
        _cleanup_policy_ cordon_policy *b3 = policy_dup(pol);
        assert_int_equal(cordon_policy_add_bind(b3, P("ws/.vscode"), true), 0);
        plan_free(build_ok(b3, P("ws")));
        /* "/", kernel interfaces, missing paths. */
        _cleanup_policy_ cordon_policy *c = policy_dup(pol);
        assert_int_equal(cordon_policy_add_runner_state_dir(c, "/"), 0);
        build_fails(c, P("ws"), CORDON_POLICY_INVALID, "is the root directory");
        _cleanup_policy_ cordon_policy *d = policy_dup(pol);
        assert_int_equal(cordon_policy_add_bind(d, "/proc/self", false), 0);
        build_fails(d, P("ws"), CORDON_POLICY_INVALID, "host kernel interface");
        _cleanup_policy_ cordon_policy *e = policy_dup(pol);
        assert_int_equal(cordon_policy_add_bind(e, P("missing"), false), 0);
        build_fails(e, P("ws"), CORDON_POLICY_INVALID, "missing' cannot be resolved");
        /* Bad home or cwd. */
        plan *pl = NULL;
        cordon_error err = { 0 };
        assert_true(plan_build(pol, "home", P("ws"), NULL, &pl, &err) < 0);
        assert_int_equal(err.code, CORDON_POLICY_INVALID);
        assert_true(plan_build(pol, P("home"), "ws", NULL, &pl, &err) < 0);
        assert_int_equal(err.code, CORDON_POLICY_INVALID);
}

static void test_unenforceable(void **state) {
        cordon_error err = { 0 };
        plan *pl = NULL;
        /* networkEnabled unset means true (docs/policy.md): the proxy enforces it. */
        _cleanup_policy_ cordon_policy *a = test_policy_new();
        assert_int_equal(cordon_policy_add_bind(a, P("ws"), false), 0);
        plan *pa = build_ok(a, P("ws"));
        assert_true(pa->net.enabled);
        /* Every client is pointed at the proxies; NO_PROXY is empty so allowed local servers
         * are reached through the proxy rather than the sandbox's empty loopback. */
        assert_true(strv_contains(&pa->env, "HTTPS_PROXY=http://127.0.0.1:3128"));
        assert_true(strv_contains(&pa->env, "http_proxy=http://127.0.0.1:3128"));
        assert_true(strv_contains(&pa->env, "ALL_PROXY=socks5h://127.0.0.1:1080"));
        assert_true(strv_contains(&pa->env, "NO_PROXY="));
        plan_free(pa);
        _cleanup_policy_ cordon_policy *b = default_policy(P("ws"));
        assert_int_equal(cordon_policy_add_egress_allow(b, "*.example.com"), 0);
        assert_int_equal(cordon_policy_add_egress_deny(b, "x.example.com"), 0);
        assert_int_equal(cordon_policy_set_host(b, "dev.test", "127.0.0.1"), 0);
        plan *pb = build_ok(b, P("ws"));
        assert_int_equal(pb->net.allow.n, 1);
        assert_string_equal(pb->net.allow.v[0], "*.example.com");
        assert_string_equal(pb->net.deny.v[0], "x.example.com");
        assert_int_equal(pb->net.n_hosts, 1);
        assert_string_equal(pb->net.hosts[0].address, "127.0.0.1");
        plan_free(pb);
        _cleanup_policy_ cordon_policy *c = default_policy(P("ws"));
        assert_int_equal(policy_add_unix_socket(c, "/run/x.sock"), 0);
        plan *pc = build_ok(c, P("ws")); /* enforced by the supervisor (allowUnixSockets) */
        assert_int_equal(pc->unix_sockets.n, 1);
        assert_string_equal(pc->unix_sockets.v[0], "/run/x.sock");
        plan_free(pc);
        /* Linux ignores execGrantRoots (macOS only). */
        _cleanup_policy_ cordon_policy *d = default_policy(P("ws"));
        assert_int_equal(policy_add_exec_grant_root(d, P("state")), 0);
        plan_free(build_ok(d, P("ws")));
        /* danger-full-access confines nothing, so nothing is unenforced; env still filtered. */
        assert_int_equal(cordon_policy_set_mode(b, CORDON_MODE_DANGER_FULL_ACCESS), 0);
        char e0[] = "GITHUB_TOKEN=t", e1[] = "PATH=/bin";
        char *env[] = { e0, e1, NULL };
        assert_int_equal(plan_build(b, P("home"), P("ws"), env, &pl, &err), 0);
        assert_int_equal(pl->n_mounts, 0);
        assert_int_equal(pl->n_landlock, 0);
        assert_int_equal(pl->names.protected.n, 0);
        assert_int_equal(pl->env.n, 1);
        assert_string_equal(pl->env.v[0], "PATH=/bin");
        assert_true(strv_contains(&pl->env_scrubbed, "GITHUB_TOKEN"));
        plan_free(pl);
}

static void test_read_only_mode(void **state) {
        _cleanup_policy_ cordon_policy *pol = default_policy(P("ws"));
        assert_int_equal(cordon_policy_set_mode(pol, CORDON_MODE_READ_ONLY), 0);
        assert_int_equal(cordon_policy_add_runner_state_dir(pol, P("state")), 0);
        assert_int_equal(cordon_policy_set_workdir(pol, P("ws/src")), 0);
        assert_int_equal(cordon_policy_set_timeout_ms(pol, 5000), 0);
        assert_int_equal(cordon_policy_set_pids(pol, 32), 0);
        _cleanup_plan_ plan *pl = build_ok(pol, P("ws"));
        ssize_t ro = find_mount(pl, MOUNT_OP_BIND_RO, P("ws"));
        assert_true(ro >= 0);
        assert_string_equal(pl->mounts[ro].why, "read-only bind");
        assert_int_equal(find_mount(pl, MOUNT_OP_BIND_RW, P("ws")), -1);
        assert_true(find_mount(pl, MOUNT_OP_BIND_RW, P("state")) >= 0);
        assert_int_equal(pl->writable_roots.n, 1);
        assert_string_equal(pl->writable_roots.v[0], P("state"));
        assert_true(has_landlock(pl, P("state")));
        assert_false(has_landlock(pl, P("ws")));
        assert_protected(pl, P("state/.bashrc"), true);
        /* The workspace is not writable, so no protective mounts inside it. */
        assert_int_equal(find_path(pl, P("ws/.git/hooks")), -1);
        assert_string_equal(pl->workdir, P("ws/src"));
        assert_int_equal(pl->timeout_ms, 5000);
        assert_int_equal(pl->pids, 32);
        assert_false(pl->pids_default); /* asked for: refused where it cannot be enforced */
        assert_int_equal(pl->memory_bytes, 0);
}

static void test_json_output(void **state) {
        _cleanup_policy_ cordon_policy *pol = default_policy(P("ws"));
        assert_int_equal(cordon_policy_env_set(pol, "INJECTED", "s3cr3t-policy-value"), 0);
        /* HOME comes from the environment given, not from the process's. */
        char e0[] = "PATH=/usr/bin", e1[] = "API_TOKEN=s3cr3t-env-token",
             e2[] = "FOO=visible-value", e3[4200];
        snprintf(e3, sizeof(e3), "HOME=%s", P("home"));
        char *env2[] = { e0, e1, e2, e3, NULL };
        char cwd[4096];
        assert_non_null(getcwd(cwd, sizeof(cwd)));
        assert_int_equal(chdir(P("ws")), 0);
        char *out = NULL;
        cordon_error err = { 0 };
        int r = cordon_policy_to_json(pol, CORDON_JSON_WITH_PLAN, env2, &out, &err);
        if (r < 0)
                print_message("%s\n", err.message);
        assert_int_equal(r, 0);
        assert_int_equal(chdir(cwd), 0);
        assert_non_null(strstr(out, "\"policy\""));
        assert_non_null(strstr(out, "\"plan\""));
        assert_non_null(strstr(out, "\"bind-rw\""));
        assert_non_null(strstr(out, "\"hide\""));
        assert_non_null(strstr(out, "\"FOO\""));
        assert_non_null(strstr(out, "\"API_TOKEN\"")); /* in envScrubbed */
        assert_non_null(strstr(out, "\"INJECTED\""));
        /* Never a value. */
        assert_null(strstr(out, "s3cr3t"));
        assert_null(strstr(out, "visible-value"));
        free(out);
        /* Without the plan: the policy only. */
        assert_int_equal(cordon_policy_to_json(pol, 0, NULL, &out, &err), 0);
        assert_null(strstr(out, "\"plan\""));
        assert_non_null(strstr(out, "\"networkEnabled\": true"));
        free(out);
        /* A plan that cannot be built makes the call fail with the plan's error. */
        assert_int_equal(cordon_policy_add_bind(pol, "/", false), 0);
        assert_true(cordon_policy_to_json(pol, CORDON_JSON_WITH_PLAN, env2, &out, &err) < 0);
        assert_int_equal(err.code, CORDON_POLICY_INVALID);
        assert_null(out); /* not the freed text of the call before */
}

/* A '[' or '\\' in a workspace path is part of a name, not glob syntax: every rule must still
 * match (before, "/src/app[1]/.bashrc" never matched "/src/app[1]/.bashrc" as a pattern). */
static void test_glob_bytes_in_paths(void **state) {
        tmptree_mkdir(T, "br[1]\\x/.vscode");
        tmptree_symlink(T, "brlink[2]", "br[1]\\x");
        _cleanup_policy_ cordon_policy *pol = default_policy(P("brlink[2]"));
        _cleanup_plan_ plan *pl = build_ok(pol, P("brlink[2]"));
        static const char *const denied[] = { ".bashrc", ".vscode/tasks.json", ".idea",
                                              ".claude/settings.local.json", ".git/hooks/x",
                                              "HEAD" };
        for (size_t i = 0; i < ELEMENTSOF(denied); i++) {
                char rel[256];
                snprintf(rel, sizeof(rel), "br[1]\\x/%s", denied[i]);
                if (name_rules_check_create(&pl->names, P(rel), NULL) == NAME_ALLOWED)
                        print_message("'%s' may be created\n", rel);
                assert_int_not_equal(name_rules_check_create(&pl->names, P(rel), NULL),
                                     NAME_ALLOWED);
        }
        assert_int_equal(name_rules_check_create(&pl->names, P("br[1]\\x/src.c"), NULL),
                         NAME_ALLOWED);
        assert_int_equal(name_rules_check_create(&pl->names, P("br1x/.bashrc"), NULL),
                         NAME_ALLOWED);
        /* Mounts still find the existing protected directory. */
        assert_true(find_mount(pl, MOUNT_OP_BIND_RO, P("br[1]\\x/.vscode")) >= 0);
        /* A user's literal protectedPaths entry with brackets, and a glob whose directory
         * resolves to one: matched as names. */
        tmptree_file(T, "br[1]\\x/a[b].txt", "x");
        assert_int_equal(cordon_policy_add_protected_path(pol, P("brlink[2]/a[b].txt")), 0);
        assert_int_equal(cordon_policy_add_deny_write(pol, P("brlink[2]/*.lock")), 0);
        _cleanup_plan_ plan *pl2 = build_ok(pol, P("brlink[2]"));
        assert_int_not_equal(name_rules_check_create(&pl2->names, P("br[1]\\x/a[b].txt"), NULL),
                             NAME_ALLOWED);
        assert_true(find_mount(pl2, MOUNT_OP_BIND_RO, P("br[1]\\x/a[b].txt")) >= 0);
        assert_int_not_equal(name_rules_check_create(&pl2->names, P("br[1]\\x/y.lock"), NULL),
                             NAME_ALLOWED);
}

static void test_mount_kind_names(void **state) {
        assert_string_equal(mount_op_kind_to_string(MOUNT_OP_ROOT_RO), "root-ro");
        assert_string_equal(mount_op_kind_to_string(MOUNT_OP_HIDE), "hide");
        assert_string_equal(mount_op_kind_to_string(_MOUNT_OP_MAX), "unknown");
}

#define T_(f) cmocka_unit_test_setup_teardown(f, setup_tree, teardown_tree)

int main(void) {
        const struct CMUnitTest tests[] = {
                T_(test_default_plan),   T_(test_deny_lists),        T_(test_redundant_and_proc),        T_(test_dedupe_and_cover),
                T_(test_under_tmp),      T_(test_worktree),          T_(test_worktree_forged),
                T_(test_project_under_home_refs), T_(test_refusals),       T_(test_unenforceable),     T_(test_read_only_mode),
                T_(test_json_output),    T_(test_mount_kind_names),  T_(test_glob_bytes_in_paths),
                T_(test_symlinked_entries), T_(test_hard_links), T_(test_hard_links_bound),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
