/* SPDX-License-Identifier: Apache-2.0 */
/* Read narrowing in the plan (src/plan/plan-reads.c): which directories are covered, which
 * exceptions are re-bound on top, the mount order the backend needs (cover, then the roots), the
 * refusal of an allowRead inside a secret, and the landlock backend's read rules. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <linux/landlock.h>
#include <string.h>

#include <cmocka.h>

#include "plan/landlock-plan.h"
#include "plan/plan.h"
#include "policy/policy.h"
#include "cleanup.h"
#include "tmptree.h"

static char *T;
#define P(rel) tmptree_at(T, rel)

static int setup_tree(void **state) {
        T = tmptree_new();
        tmptree_mkdir(T, "home/.ssh");
        tmptree_mkdir(T, "home/docs");
        tmptree_mkdir(T, "home/ref");
        tmptree_file(T, "home/.ssh/id_rsa", "KEY");
        tmptree_file(T, "home/docs/notes.txt", "private");
        tmptree_file(T, "home/ref/readme", "ref");
        tmptree_mkdir(T, "home/proj");
        tmptree_mkdir(T, "ws");
        return 0;
}

static int teardown_tree(void **state) {
        tmptree_remove(T);
        T = NULL;
        return 0;
}

static cordon_policy *policy_for(const char *cwd, bool block) {
        cordon_policy *p = NULL;
        cordon_error err = { 0 };
        assert_int_equal(cordon_policy_new_default(cwd, P("home"), &p, &err), 0);
        assert_int_equal(policy_set_tool_caches(p, false), 0);
        if (block)
                assert_int_equal(policy_set_block_reads(p, true), 0);
        return p;
}

static int build(const cordon_policy *pol, const char *cwd, plan **pl, cordon_error *err) {
        char e0[] = "PATH=/usr/bin";
        char *env[] = { e0, NULL };
        *pl = NULL;
        return plan_build(pol, P("home"), cwd, env, pl, err);
}

static const mount_op *find_mount(const plan *p, const char *path, size_t *index) {
        for (size_t i = 0; i < p->n_mounts; i++)
                if (strcmp(p->mounts[i].path, path) == 0) {
                        if (index)
                                *index = i;
                        return &p->mounts[i];
                }
        return NULL;
}

/* The kind of the op at `path`, or -1. */
static int kind_at(const plan *p, const char *path) {
        const mount_op *m = find_mount(p, path, NULL);
        return m ? (int) m->kind : -1;
}

static void off_by_default(void **state) {
        _cleanup_policy_ cordon_policy *pol = policy_for(P("ws"), false);
        plan *pl = NULL;
        cordon_error err = { 0 };
        assert_int_equal(build(pol, P("ws"), &pl, &err), 0);
        assert_int_equal(pl->paths.narrowed.n, 0);
        assert_null(find_mount(pl, P("home"), NULL));
        plan_free(pl);
}

/* The home is covered, the workspace outside it untouched, and a secret inside the cover needs
 * no mount of its own. */
static void home_covered(void **state) {
        _cleanup_policy_ cordon_policy *pol = policy_for(P("ws"), true);
        plan *pl = NULL;
        cordon_error err = { 0 };
        assert_int_equal(build(pol, P("ws"), &pl, &err), 0);
        assert_true(strv_contains(&pl->paths.narrowed, P("home")));
        assert_int_equal(kind_at(pl, P("home")), MOUNT_OP_HIDE);
        assert_null(find_mount(pl, P("home/.ssh"), NULL));
        assert_int_equal(kind_at(pl, P("ws")), MOUNT_OP_BIND_RW);
        plan_free(pl);
}

/* A workspace inside the home: the cover first, the workspace mounted on it, the secret's cover
 * inside the workspace's... none here, but the home's own secrets need none. */
static void workspace_inside_home(void **state) {
        _cleanup_policy_ cordon_policy *pol = policy_for(P("home/proj"), true);
        plan *pl = NULL;
        cordon_error err = { 0 };
        assert_int_equal(build(pol, P("home/proj"), &pl, &err), 0);
        size_t cover = 0, root = 0;
        assert_non_null(find_mount(pl, P("home"), &cover));
        assert_non_null(find_mount(pl, P("home/proj"), &root));
        assert_int_equal(kind_at(pl, P("home/proj")), MOUNT_OP_BIND_RW);
        assert_true(cover < root);
        plan_free(pl);
}

/* The home itself as the workspace is not narrowed (it is a writable root). */
static void home_as_workspace(void **state) {
        _cleanup_policy_ cordon_policy *pol = policy_for(P("home"), true);
        plan *pl = NULL;
        cordon_error err = { 0 };
        assert_int_equal(build(pol, P("home"), &pl, &err), 0);
        assert_false(strv_contains(&pl->paths.narrowed, P("home")));
        assert_int_equal(kind_at(pl, P("home/.ssh")), MOUNT_OP_HIDE);
        plan_free(pl);
}

static void allow_read_rebound(void **state) {
        _cleanup_policy_ cordon_policy *pol = policy_for(P("ws"), true);
        assert_int_equal(policy_add_allow_read(pol, P("home/ref")), 0);
        assert_int_equal(policy_add_allow_read(pol, P("ws/sub")), 0); /* beneath a root: nothing */
        plan *pl = NULL;
        cordon_error err = { 0 };
        assert_int_equal(build(pol, P("ws"), &pl, &err), 0);
        assert_int_equal(kind_at(pl, P("home/ref")), MOUNT_OP_BIND_RO);
        assert_true(strv_contains(&pl->paths.read_exceptions, P("home/ref")));
        assert_int_equal(pl->paths.read_exceptions.n, 1);
        plan_free(pl);
}

/* An allowRead of the whole home keeps the secret's cover on top of it. */
static void allow_read_keeps_secrets(void **state) {
        _cleanup_policy_ cordon_policy *pol = policy_for(P("ws"), true);
        assert_int_equal(policy_add_allow_read(pol, P("home")), 0);
        plan *pl = NULL;
        cordon_error err = { 0 };
        assert_int_equal(build(pol, P("ws"), &pl, &err), 0);
        /* The home is then an exception of its own cover: it is not narrowed at all, and its
         * secrets are hidden as always. */
        assert_int_equal(kind_at(pl, P("home/.ssh")), MOUNT_OP_HIDE);
        plan_free(pl);
}

static void allow_read_inside_secret_refused(void **state) {
        _cleanup_policy_ cordon_policy *pol = policy_for(P("ws"), true);
        assert_int_equal(policy_add_allow_read(pol, P("home/.ssh/id_rsa")), 0);
        plan *pl = NULL;
        cordon_error err = { 0 };
        assert_true(build(pol, P("ws"), &pl, &err) < 0);
        assert_null(pl);
        assert_int_equal(err.code, CORDON_POLICY_INVALID);
        assert_non_null(strstr(err.message, "is inside the secret"));
}

/* Landlock: no read rule at or above the home's files, one on the exception. */
static void landlock_rules(void **state) {
        _cleanup_policy_ cordon_policy *pol = policy_for(P("ws"), true);
        assert_int_equal(policy_add_allow_read(pol, P("home/ref")), 0);
        plan *pl = NULL;
        cordon_error err = { 0 };
        assert_int_equal(build(pol, P("ws"), &pl, &err), 0);
        landlock_plan_options o = { .abi = LANDLOCK_PLAN_MIN_ABI };
        landlock_plan *lp = NULL;
        assert_int_equal(landlock_plan_build(pl, &o, &lp, &err), 0);
        bool ref = false;
        for (size_t i = 0; i < lp->monitor.n_rules; i++) {
                const ll_rule *r = &lp->monitor.rules[i];
                if (!(r->access & LANDLOCK_ACCESS_FS_READ_FILE))
                        continue;
                /* No read grant on the home, its docs, or any ancestor of them (other than "/"
                 * for READ_DIR, which carries no READ_FILE). */
                assert_false(path_startswith(P("home/docs/notes.txt"), r->path));
                ref = ref || strcmp(r->path, P("home/ref")) == 0;
        }
        assert_true(ref);
        landlock_plan_free(lp);
        plan_free(pl);
}

static int load(cordon_policy *p, const char *text, cordon_error *err) {
        return cordon_policy_load_string(p, text, strlen(text), "t", err);
}

static void policy_keys(void **state) {
        _cleanup_policy_ cordon_policy *p = policy_new();
        cordon_error err = { 0 };
        assert_int_equal(load(p, "{\"blockReadsOutsideWorkdirs\": true, \"allowRead\": [\"/a//b/\"]}",
                              &err), 0);
        assert_true(policy_reads_blocked(p));
        assert_string_equal(p->allow_read.v[0], "/a/b");
        _cleanup_policy_ cordon_policy *q = policy_new();
        assert_true(load(q, "{\"blockReadsOutsideWorkdirs\": 1}", &err) < 0);
        assert_non_null(strstr(err.message, "a boolean"));
        assert_true(load(q, "{\"allowRead\": [\"rel\"]}", &err) < 0);
        /* Turning it off over a base that has it on, or adding an exception, widens. */
        _cleanup_policy_ cordon_policy *off = policy_new();
        assert_int_equal(policy_set_block_reads(off, false), 0);
        assert_int_equal(policy_add_allow_read(off, "/x"), 0);
        strv w = { 0 };
        assert_int_equal(policy_widening_fields(p, off, &w), 2);
        assert_true(strv_contains(&w, "blockReadsOutsideWorkdirs"));
        assert_true(strv_contains(&w, "allowRead"));
        strv_done(&w);
        /* Merged: the highest layer's switch, the union of the exceptions. */
        assert_int_equal(policy_merge(p, off), 0);
        assert_false(policy_reads_blocked(p));
        assert_int_equal(p->allow_read.n, 2);
}

#define T_(f) cmocka_unit_test_setup_teardown(f, setup_tree, teardown_tree)

int main(void) {
        const struct CMUnitTest tests[] = {
                T_(off_by_default),         T_(home_covered),
                T_(workspace_inside_home),  T_(home_as_workspace),
                T_(allow_read_rebound),     T_(allow_read_keeps_secrets),
                T_(allow_read_inside_secret_refused), T_(landlock_rules),
                cmocka_unit_test(policy_keys),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
