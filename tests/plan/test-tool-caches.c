/* SPDX-License-Identifier: Apache-2.0 */
/* The sandbox-owned tool caches (docs/design/tool-caches.md): where the root is, how it is
 * created and checked (never through a symlink, never another user's or a group-writable
 * directory), the variables the plan sets, and when the root becomes a writable root. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <sys/stat.h>

#include <cmocka.h>
#include <jansson.h>

#include "plan/plan.h"
#include "plan/tool-caches.h"
#include "policy/policy.h"
#include "cleanup.h"
#include "tmptree.h"

static char *T;

#define P(rel) tmptree_at(T, rel)

static int setup_tree(void **state) {
        T = tmptree_new();
        tmptree_mkdir(T, "home");
        tmptree_mkdir(T, "ws");
        return 0;
}

static int teardown_tree(void **state) {
        tmptree_remove(T);
        T = NULL;
        return 0;
}

static cordon_policy *default_policy(void) {
        cordon_policy *p = NULL;
        cordon_error err = { 0 };
        assert_int_equal(cordon_policy_new_default(P("ws"), P("home"), &p, &err), 0);
        return p;
}

/* The plan with XDG_CACHE_HOME=$T/xdg and `extra` (one "NAME=value", or NULL) inherited. */
static int build(const cordon_policy *pol, const char *extra, plan **ret, cordon_error *err) {
        char xdg[4200];
        (void) snprintf(xdg, sizeof(xdg), "XDG_CACHE_HOME=%s", P("xdg"));
        char e0[] = "PATH=/usr/bin";
        char *env[] = { e0, xdg, (char *) extra, NULL };
        return plan_build(pol, P("home"), P("ws"), env, ret, err);
}

static const char *env_of(const plan *pl, const char *name) {
        size_t n = strlen(name);
        for (size_t i = 0; i < pl->env.n; i++)
                if (strncmp(pl->env.v[i], name, n) == 0 && pl->env.v[i][n] == '=')
                        return pl->env.v[i] + n + 1;
        return NULL;
}

static bool has_rw_bind(const plan *pl, const char *path) {
        for (size_t i = 0; i < pl->n_mounts; i++)
                if (pl->mounts[i].kind == MOUNT_OP_BIND_RW && strcmp(pl->mounts[i].path, path) == 0)
                        return true;
        return false;
}

static int prepare(const cordon_policy *pol, cordon_error *err) {
        char xdg[4200];
        (void) snprintf(xdg, sizeof(xdg), "XDG_CACHE_HOME=%s", P("xdg"));
        char *env[] = { xdg, NULL };
        return tool_caches_prepare(pol, env, P("home"), err);
}

static void test_root_location(void **state) {
        tool_cache_root r;
        char xdg[4200];
        (void) snprintf(xdg, sizeof(xdg), "XDG_CACHE_HOME=%s/", P("x/y"));
        char *env[] = { xdg, NULL };
        assert_int_equal(tool_cache_root_find(env, P("home"), &r), 0);
        assert_string_equal(r.anchor, P("x"));
        assert_string_equal(r.rel, "y/cordon/tools");
        assert_string_equal(r.path, P("x/y/cordon/tools"));
        tool_cache_root_done(&r);
        /* A relative XDG_CACHE_HOME is ignored (the base directory spec); then the home. */
        char rel[] = "XDG_CACHE_HOME=rel/cache";
        char *env2[] = { rel, NULL };
        assert_int_equal(tool_cache_root_find(env2, P("home"), &r), 0);
        assert_string_equal(r.path, P("home/.cache/cordon/tools"));
        tool_cache_root_done(&r);
        /* No home directory (cordon-test has none): a directory of the user's own in /var/tmp. */
        char want[64];
        (void) snprintf(want, sizeof(want), "/var/tmp/cordon-%u/cordon/tools", (unsigned) geteuid());
        assert_int_equal(tool_cache_root_find(NULL, P("no-such-home"), &r), 0);
        assert_string_equal(r.anchor, "/var/tmp");
        assert_string_equal(r.path, want);
        tool_cache_root_done(&r);
}

/* Before a launcher created the root: the variables are set, nothing becomes writable. */
static void test_plan_before_prepare(void **state) {
        _cleanup_policy_ cordon_policy *pol = default_policy();
        _cleanup_plan_ plan *pl = NULL;
        cordon_error err = { 0 };
        assert_int_equal(build(pol, "PIP_CACHE_DIR=/home/u/.cache/pip", &pl, &err), 0);
        assert_string_equal(pl->tool_cache_root, P("xdg/cordon/tools"));
        assert_false(pl->tool_cache_mounted);
        assert_false(has_rw_bind(pl, P("xdg/cordon/tools")));
        assert_string_equal(env_of(pl, "npm_config_cache"), P("xdg/cordon/tools/npm"));
        /* An inherited value names a host cache the sandbox cannot write: replaced. */
        assert_string_equal(env_of(pl, "PIP_CACHE_DIR"), P("xdg/cordon/tools/pip"));
        assert_string_equal(env_of(pl, "GOMODCACHE"), P("xdg/cordon/tools/go/mod"));
        assert_string_equal(env_of(pl, "CARGO_HOME"), P("xdg/cordon/tools/cargo"));
        /* clang's and swiftc's module cache (macOS: the per-user cache dir, not writable). */
        assert_string_equal(env_of(pl, "CLANG_MODULE_CACHE_PATH"),
                            P("xdg/cordon/tools/clang/ModuleCache"));
        struct stat st;
        assert_true(lstat(P("xdg"), &st) < 0); /* the planner created nothing */
}

static void test_prepare_and_mount(void **state) {
        _cleanup_policy_ cordon_policy *pol = default_policy();
        cordon_error err = { 0 };
        assert_int_equal(prepare(pol, &err), 0);
        struct stat st;
        assert_int_equal(lstat(P("xdg/cordon/tools"), &st), 0);
        assert_true(S_ISDIR(st.st_mode));
        assert_int_equal(st.st_mode & 0777, 0700);
        assert_int_equal(lstat(P("xdg/cordon"), &st), 0);
        assert_int_equal(st.st_mode & 0777, 0700);
        assert_int_equal(prepare(pol, &err), 0); /* again: nothing to do */
        _cleanup_plan_ plan *pl = NULL;
        assert_int_equal(build(pol, "MAVEN_OPTS=-Xmx1g", &pl, &err), 0);
        assert_true(pl->tool_cache_mounted);
        assert_true(has_rw_bind(pl, P("xdg/cordon/tools")));
        assert_true(strv_contains(&pl->writable_roots, P("xdg/cordon/tools")));
        /* The mandatory write-deny set holds in it as in every writable root. */
        char rc[4200];
        (void) snprintf(rc, sizeof(rc), "%s/.bashrc", P("xdg/cordon/tools"));
        assert_true(strv_contains(&pl->names.protected, rc));
        /* Files a tool obeys rather than caches are protected (cargo's config, gradle's init
         * scripts): a hostile run cannot plant code for the next build in another project. */
        (void) snprintf(rc, sizeof(rc), "%s/cargo/config.toml", P("xdg/cordon/tools"));
        assert_true(strv_contains(&pl->names.protected, rc));
        (void) snprintf(rc, sizeof(rc), "%s/gradle/init.d", P("xdg/cordon/tools"));
        assert_true(strv_contains(&pl->names.protected, rc));
        /* MAVEN_OPTS keeps the caller's options; the display shows cordon's part only. */
        char want[4300];
        (void) snprintf(want, sizeof(want), "-Xmx1g -Dmaven.repo.local=%s",
                        P("xdg/cordon/tools/maven/repository"));
        assert_string_equal(env_of(pl, "MAVEN_OPTS"), want);
        json_t *j = plan_to_json(pl);
        json_t *tc = json_object_get(j, "toolCaches");
        assert_true(json_is_true(json_object_get(tc, "mounted")));
        json_t *caches = json_object_get(tc, "caches");
        bool saw_maven = false;
        size_t i;
        json_t *c;
        json_array_foreach(caches, i, c) {
                if (strcmp(json_string_value(json_object_get(c, "env")), "MAVEN_OPTS") == 0) {
                        saw_maven = true;
                        assert_null(strstr(json_string_value(json_object_get(c, "value")), "Xmx"));
                }
        }
        assert_true(saw_maven);
        json_decref(j);
}

/* A component replaced by a symlink, or writable by others, is never used. */
static void test_refused_roots(void **state) {
        _cleanup_policy_ cordon_policy *pol = default_policy();
        cordon_error err = { 0 };
        tmptree_mkdir(T, "outside");
        tmptree_mkdir(T, "xdg");
        tmptree_symlink(T, "xdg/cordon", "../outside");
        assert_true(prepare(pol, &err) < 0);
        assert_int_equal(err.code, CORDON_LAUNCH_FAILED);
        assert_non_null(strstr(err.message, "a symlink is never followed"));
        struct stat st;
        assert_true(lstat(P("outside/tools"), &st) < 0); /* nothing created through it */
        _cleanup_plan_ plan *pl = NULL;
        assert_true(build(pol, NULL, &pl, &err) < 0); /* the plan refuses it as well */
        assert_null(pl);
        assert_int_equal(unlink(P("xdg/cordon")), 0);
        tmptree_mkdir(T, "xdg/cordon");
        assert_int_equal(chmod(P("xdg/cordon"), 0777), 0);
        assert_true(prepare(pol, &err) < 0);
        assert_non_null(strstr(err.message, "is writable by group or others"));
        assert_true(lstat(P("xdg/cordon/tools"), &st) < 0);
}

/* env.set wins; "toolCaches": false and the read-only modes set nothing. */
static void test_opt_outs(void **state) {
        _cleanup_policy_ cordon_policy *pol = default_policy();
        cordon_error err = { 0 };
        assert_int_equal(cordon_policy_env_set(pol, "GOCACHE", "/var/empty"), 0);
        _cleanup_plan_ plan *pl = NULL;
        assert_int_equal(build(pol, NULL, &pl, &err), 0);
        assert_string_equal(env_of(pl, "GOCACHE"), "/var/empty");
        assert_non_null(env_of(pl, "GOMODCACHE"));
        plan_free(TAKE_PTR(pl));
        assert_int_equal(policy_set_tool_caches(pol, false), 0);
        assert_int_equal(build(pol, NULL, &pl, &err), 0);
        assert_null(pl->tool_cache_root);
        assert_null(env_of(pl, "npm_config_cache"));
        plan_free(TAKE_PTR(pl));
        assert_int_equal(policy_set_tool_caches(pol, true), 0);
        assert_int_equal(cordon_policy_set_mode(pol, CORDON_MODE_READ_ONLY), 0);
        assert_int_equal(build(pol, NULL, &pl, &err), 0);
        assert_null(env_of(pl, "npm_config_cache"));
        assert_int_equal(prepare(pol, &err), 0);
        struct stat st;
        assert_true(lstat(P("xdg"), &st) < 0); /* and nothing is created */
}

static void test_extra(void **state) {
        _cleanup_policy_ cordon_policy *pol = default_policy();
        cordon_error err = { 0 };
        assert_int_equal(policy_add_tool_cache(pol, "sbt", "COURSIER_CACHE"), 0);
        assert_int_equal(policy_add_tool_cache(pol, "npm", "X"), -EINVAL);
        assert_int_equal(policy_add_tool_cache(pol, "x", "npm_config_cache"), -EINVAL);
        _cleanup_plan_ plan *pl = NULL;
        assert_int_equal(build(pol, NULL, &pl, &err), 0);
        assert_string_equal(env_of(pl, "COURSIER_CACHE"), P("xdg/cordon/tools/sbt"));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_root_location, setup_tree, teardown_tree),
                cmocka_unit_test_setup_teardown(test_plan_before_prepare, setup_tree,
                                                teardown_tree),
                cmocka_unit_test_setup_teardown(test_prepare_and_mount, setup_tree, teardown_tree),
                cmocka_unit_test_setup_teardown(test_refused_roots, setup_tree, teardown_tree),
                cmocka_unit_test_setup_teardown(test_opt_outs, setup_tree, teardown_tree),
                cmocka_unit_test_setup_teardown(test_extra, setup_tree, teardown_tree),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
