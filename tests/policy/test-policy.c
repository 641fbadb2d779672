/* SPDX-License-Identifier: Apache-2.0 */
/* The policy model: validating setters (each accepted and refused), modes, merging and per-call
 * resolution (docs/policy.md, "Layers and resolution"). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>

#include <cmocka.h>

#include "plan/plan.h"
#include "policy/policy.h"
#include "cleanup.h"
#include "tmptree.h"


static void test_modes(void **state) {
        static const struct {
                const char *name;
                cordon_mode mode;
        } ok[] = {
                { "chat", CORDON_MODE_WORKSPACE_WRITE },
                { "workspace-write", CORDON_MODE_WORKSPACE_WRITE },
                { "review", CORDON_MODE_READ_ONLY },
                { "plan", CORDON_MODE_READ_ONLY },
                { "orchestrate", CORDON_MODE_READ_ONLY },
                { "read-only", CORDON_MODE_READ_ONLY },
                { "danger-full-access", CORDON_MODE_DANGER_FULL_ACCESS },
        };
        for (size_t i = 0; i < ELEMENTSOF(ok); i++) {
                cordon_mode m = 99;
                assert_int_equal(cordon_mode_from_string(ok[i].name, &m), 0);
                assert_int_equal(m, ok[i].mode);
        }
        cordon_mode m;
        static const char *const bad[] = { "", "Chat", "readonly", "danger", "full", " chat" };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                assert_int_equal(cordon_mode_from_string(bad[i], &m), -EINVAL);
        assert_int_equal(cordon_mode_from_string(NULL, &m), -EINVAL);
        assert_string_equal(cordon_mode_to_string(CORDON_MODE_WORKSPACE_WRITE), "workspace-write");
        assert_string_equal(cordon_mode_to_string(CORDON_MODE_READ_ONLY), "read-only");
        assert_string_equal(cordon_mode_to_string(CORDON_MODE_DANGER_FULL_ACCESS),
                            "danger-full-access");
        assert_string_equal(cordon_mode_to_string((cordon_mode) 42), "unknown");
        _cleanup_policy_ cordon_policy *p = test_policy_new();
        assert_int_equal(cordon_policy_set_mode(p, (cordon_mode) 3), -EINVAL);
        assert_false(p->mode_set);
        assert_int_equal(cordon_policy_set_mode(p, CORDON_MODE_READ_ONLY), 0);
        assert_true(p->mode_set);
}

typedef int (*path_setter)(cordon_policy *, const char *);

static void check_path_setter(path_setter set, const strv *(*list)(const cordon_policy *)) {
        _cleanup_policy_ cordon_policy *p = test_policy_new();
        static const char *const bad[] = {
                "",           "relative/x", "./x",          "/a/../b",          "/a/..",
                "/a\nb",      "/a\tb",      "/a\x7f",       "~/x",
        };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                assert_int_equal(set(p, bad[i]), -EINVAL);
        assert_int_equal(set(p, NULL), -EINVAL);
        assert_int_equal(set(NULL, "/x"), -EINVAL);
        assert_int_equal(list(p)->n, 0);
        /* Normalised, deduplicated. */
        assert_int_equal(set(p, "//a/./b//"), 0);
        assert_int_equal(set(p, "/a/b"), 0);
        assert_int_equal(list(p)->n, 1);
        assert_string_equal(list(p)->v[0], "/a/b");
        /* Too long. */
        char longp[POLICY_MAX_STRING + 2];
        memset(longp, 'a', sizeof(longp) - 1);
        longp[0] = '/';
        longp[sizeof(longp) - 1] = '\0';
        assert_int_equal(set(p, longp), -EINVAL);
}

static const strv *protected_of(const cordon_policy *p) {
        return &p->protected_paths;
}
static const strv *runner_of(const cordon_policy *p) {
        return &p->runner_state_dirs;
}
static const strv *deny_read_of(const cordon_policy *p) {
        return &p->deny_read;
}
static const strv *deny_write_of(const cordon_policy *p) {
        return &p->deny_write;
}

static void test_path_setters(void **state) {
        check_path_setter(cordon_policy_add_protected_path, protected_of);
        check_path_setter(cordon_policy_add_runner_state_dir, runner_of);
        check_path_setter(cordon_policy_add_deny_read, deny_read_of);
        check_path_setter(cordon_policy_add_deny_write, deny_write_of);
        /* Deny lists take globs (docs/policy.md). */
        _cleanup_policy_ cordon_policy *p = test_policy_new();
        assert_int_equal(cordon_policy_add_deny_read(p, "/home/*/secret?.txt"), 0);
        assert_string_equal(p->deny_read.v[0], "/home/*/secret?.txt");
}

static void test_list_limit(void **state) {
        _cleanup_policy_ cordon_policy *p = test_policy_new();
        char buf[64];
        for (unsigned i = 0; i < POLICY_MAX_LIST; i++) {
                snprintf(buf, sizeof(buf), "/d/%u", i);
                assert_int_equal(cordon_policy_add_deny_write(p, buf), 0);
        }
        assert_int_equal(cordon_policy_add_deny_write(p, "/d/one-more"), -E2BIG);
        assert_string_equal(cordon_policy_last_error(p)->message,
                            "'/d/one-more' cannot be added: the list is full (at most 1024 "
                            "entries)");
        assert_int_equal(cordon_policy_add_deny_write(p, "/d/7"), 0); /* present: no growth */
        assert_int_equal(p->deny_write.n, POLICY_MAX_LIST);
}

/* A refusing setter says why (cordon_policy_last_error): the value, quoted and cleaned, and the
 * validator's reason; never an environment variable's value. */
static void test_setter_reasons(void **state) {
        _cleanup_policy_ cordon_policy *p = test_policy_new();
        assert_null(cordon_policy_last_error(p));
        assert_int_equal(cordon_policy_add_bind(p, "relative/dir", false), -EINVAL);
        const cordon_error *e = cordon_policy_last_error(p);
        assert_non_null(e);
        assert_int_equal(e->code, CORDON_POLICY_INVALID);
        assert_string_equal(e->message, "'relative/dir' must be an absolute path");
        assert_int_equal(cordon_policy_add_deny_read(p, "/a\nforged"), -EINVAL);
        assert_string_equal(cordon_policy_last_error(p)->message,
                            "'/a?forged' must not contain control characters");
        assert_int_equal(cordon_policy_env_set(p, "OK", NULL), -EINVAL);
        assert_string_equal(cordon_policy_last_error(p)->message, "the value must be a string");
        assert_int_equal(cordon_policy_env_set(p, "9X", "hunter2"), -EINVAL);
        assert_null(strstr(cordon_policy_last_error(p)->message, "hunter2"));
        assert_int_equal(cordon_policy_set_pids(p, 0), -EINVAL);
        assert_memory_equal(cordon_policy_last_error(p)->message, "'0' ", 4);
        assert_int_equal(cordon_policy_add_egress_allow(p, "a b"), -EINVAL);
        assert_memory_equal(cordon_policy_last_error(p)->message, "'a b' may contain only", 22);
        /* A later success keeps the last refusal's reason (valid until the next refusal). */
        assert_int_equal(cordon_policy_add_deny_read(p, "/ok"), 0);
        assert_non_null(cordon_policy_last_error(p));
        assert_null(cordon_policy_last_error(NULL));
}

static void test_binds(void **state) {
        _cleanup_policy_ cordon_policy *p = test_policy_new();
        assert_int_equal(cordon_policy_add_bind(p, "rel", false), -EINVAL);
        assert_int_equal(cordon_policy_add_bind(p, "/a/../b", false), -EINVAL);
        assert_int_equal(cordon_policy_add_bind(p, "/w//x/", false), 0);
        assert_int_equal(p->n_binds, 1);
        assert_string_equal(p->binds[0].host_path, "/w/x");
        assert_string_equal(p->binds[0].guest_path, "/w/x");
        assert_false(p->binds[0].read_only);
        /* Same host path: the flag is updated, no second entry. */
        assert_int_equal(cordon_policy_add_bind(p, "/w/x", true), 0);
        assert_int_equal(p->n_binds, 1);
        assert_true(p->binds[0].read_only);
}

static void test_ids_and_workdir(void **state) {
        _cleanup_policy_ cordon_policy *p = test_policy_new();
        static const char *const bad[] = { "", "a b", "a/b", "a\\b", "a\nb", "\xc3\xa9" };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                assert_int_equal(cordon_policy_set_session_id(p, bad[i]), -EINVAL);
        char longid[POLICY_MAX_ID + 2];
        memset(longid, 'x', sizeof(longid) - 1);
        longid[sizeof(longid) - 1] = '\0';
        assert_int_equal(cordon_policy_set_session_id(p, longid), -EINVAL);
        assert_null(p->session_id);
        assert_int_equal(cordon_policy_set_session_id(p, "ses_01J:abc-1.2@x"), 0);
        assert_string_equal(p->session_id, "ses_01J:abc-1.2@x");
        assert_int_equal(policy_set_workspace_id(p, "w 1"), -EINVAL);
        assert_int_equal(policy_set_agent_id(p, "agent-7"), 0);
        assert_int_equal(cordon_policy_set_workdir(p, "src"), -EINVAL);
        assert_null(p->workdir);
        assert_int_equal(cordon_policy_set_workdir(p, "/w/src/"), 0);
        assert_string_equal(p->workdir, "/w/src");
}

/* An override widens the base when it adds allow-type entries, turns things on, raises limits
 * or moves the mode towards danger-full-access; deny-type entries never widen. */
static void test_widening_fields(void **state) {
        _cleanup_policy_ cordon_policy *base = test_policy_new();
        _cleanup_policy_ cordon_policy *narrow = test_policy_new();
        _cleanup_policy_ cordon_policy *wide = test_policy_new();
        assert_int_equal(cordon_policy_set_mode(base, CORDON_MODE_READ_ONLY), 0);
        assert_int_equal(cordon_policy_add_bind(base, "/w", true), 0);
        assert_int_equal(cordon_policy_set_timeout_ms(base, 1000), 0);
        assert_int_equal(cordon_policy_add_egress_allow(base, "a.example"), 0);
        /* Narrowing only. */
        assert_int_equal(cordon_policy_add_deny_read(narrow, "/w/secret"), 0);
        assert_int_equal(cordon_policy_add_egress_deny(narrow, "b.example"), 0);
        assert_int_equal(cordon_policy_set_timeout_ms(narrow, 500), 0);
        assert_int_equal(cordon_policy_add_egress_allow(narrow, "a.example"), 0); /* known */
        strv f = { 0 };
        assert_int_equal(policy_widening_fields(base, narrow, &f), 0);
        /* Widening: each kind once. */
        assert_int_equal(cordon_policy_set_mode(wide, CORDON_MODE_WORKSPACE_WRITE), 0);
        assert_int_equal(cordon_policy_add_bind(wide, "/w", false), 0); /* ro -> rw */
        assert_int_equal(cordon_policy_set_timeout_ms(wide, 5000), 0);
        assert_int_equal(cordon_policy_add_egress_allow(wide, "c.example"), 0);
        assert_int_equal(cordon_policy_set_host(wide, "dev.test", "127.0.0.1"), 0);
        assert_int_equal(cordon_policy_env_pass(wide, "GITHUB_TOKEN"), 0);
        assert_int_equal(policy_widening_fields(base, wide, &f), 6);
        const char *want[] = { "mode", "bindMounts", "egressAllowlist", "hosts", "env.pass",
                               "limits.timeout" };
        for (size_t i = 0; i < 6; i++)
                assert_true(strv_contains(&f, want[i]));
        strv_done(&f);
}

static void test_names_and_env(void **state) {
        _cleanup_policy_ cordon_policy *p = test_policy_new();
        static const char *const bad_globs[] = { "", "a/b", "/x", ".", "..", "a\nb",
                                                 /* what the glob parser flags */
                                                 "a[bc", "[z-a]", "[[:nope:]]", "[[=a=]]",
                                                 "x\\" };
        for (size_t i = 0; i < ELEMENTSOF(bad_globs); i++)
                assert_int_equal(cordon_policy_add_deny_create_name(p, bad_globs[i]), -EINVAL);
        assert_int_equal(cordon_policy_add_deny_create_name(p, "*.pem"), 0);
        assert_int_equal(cordon_policy_add_deny_create_name(p, ".env.*"), 0);
        assert_int_equal(cordon_policy_add_deny_create_name(p, "[]!a-c[:digit:]\\[]x"), 0);
        assert_int_equal(p->deny_create_names.n, 3);

        static const char *const bad_names[] = { "", "1X", "A-B", "A=B", "A B", "Ä" };
        for (size_t i = 0; i < ELEMENTSOF(bad_names); i++) {
                assert_int_equal(cordon_policy_env_pass(p, bad_names[i]), -EINVAL);
                assert_int_equal(cordon_policy_env_set(p, bad_names[i], "v"), -EINVAL);
        }
        assert_int_equal(cordon_policy_env_pass(p, "_X1"), 0);
        assert_int_equal(cordon_policy_env_set(p, "LANG", "C"), 0);
        assert_int_equal(cordon_policy_env_set(p, "LANG", "C.UTF-8"), 0); /* replaces */
        assert_int_equal(p->n_env_set, 1);
        assert_string_equal(p->env_set[0].value, "C.UTF-8");
        assert_int_equal(cordon_policy_env_set(p, "X", NULL), -EINVAL);
        assert_int_equal(cordon_policy_env_scrub(p, "*_COOKIE"), 0);
        assert_int_equal(cordon_policy_env_scrub(p, "A=B*"), -EINVAL);
        assert_int_equal(cordon_policy_env_scrub(p, "*/x"), -EINVAL);
        assert_int_equal(cordon_policy_add_egress_allow(p, "*.example.com:443"), 0);
        assert_int_equal(cordon_policy_add_egress_allow(p, "a b"), -EINVAL);
        assert_int_equal(cordon_policy_add_egress_allow(p, "user@host"), -EINVAL);
        assert_int_equal(cordon_policy_add_egress_allow(p, "http://x"), -EINVAL);
        assert_int_equal(cordon_policy_add_egress_deny(p, "tracker.example.com"), 0);
        assert_int_equal(cordon_policy_add_egress_deny(p, "a\nb"), -EINVAL);
        assert_int_equal(cordon_policy_set_host(p, "Dev.Test", "127.0.0.1"), 0);
        assert_int_equal(cordon_policy_set_host(p, "dev.test", "::1"), 0); /* replaces */
        assert_int_equal(p->n_hosts, 1);
        assert_string_equal(p->hosts[0].name, "dev.test");
        assert_string_equal(p->hosts[0].address, "::1");
        assert_int_equal(cordon_policy_set_host(p, "dev.test", "localhost"), -EINVAL);
        assert_int_equal(cordon_policy_set_host(p, "dev.test", "[::1]"), -EINVAL);
        assert_int_equal(cordon_policy_set_host(p, "a..b", "127.0.0.1"), -EINVAL);
        assert_int_equal(cordon_policy_set_host(p, "a b", "127.0.0.1"), -EINVAL);
        assert_int_equal(cordon_policy_set_host(p, "*.x", "127.0.0.1"), -EINVAL);
}

static void test_limits(void **state) {
        _cleanup_policy_ cordon_policy *p = test_policy_new();
        assert_int_equal(cordon_policy_set_timeout_ms(p, 0), -EINVAL);
        assert_int_equal(cordon_policy_set_timeout_ms(p, POLICY_TIMEOUT_MAX_MS + 1), -EINVAL);
        assert_int_equal(cordon_policy_set_timeout_ms(p, 1500), 0);
        assert_int_equal(cordon_policy_set_memory_bytes(p, POLICY_MEMORY_MIN - 1), -EINVAL);
        assert_int_equal(cordon_policy_set_memory_bytes(p, UINT64_MAX), -EINVAL);
        assert_int_equal(cordon_policy_set_memory_bytes(p, 512ULL << 20), 0);
        assert_int_equal(cordon_policy_set_pids(p, 0), -EINVAL);
        assert_int_equal(cordon_policy_set_pids(p, POLICY_PIDS_MAX + 1), -EINVAL);
        assert_int_equal(cordon_policy_set_pids(p, 64), 0);
        assert_int_equal(cordon_policy_set_cpu_seconds(p, 0), -EINVAL);
        assert_int_equal(cordon_policy_set_cpu_seconds(p, 60), 0);
        assert_int_equal(p->timeout_ms, 1500);
        assert_int_equal(p->memory_bytes, 512ULL << 20);
        assert_int_equal(p->pids, 64);
        assert_int_equal(p->cpu_seconds, 60);
}

/* The constructors' one shape (include/cordon/cordon.h): 0 and a new object, or -errno with
 * `err` set and *ret NULL, whatever *ret held before. */
static void test_constructors(void **state) {
        cordon_error err = { 0 };
        assert_int_equal(cordon_policy_new(NULL, &err), -EINVAL);
        assert_int_equal(err.code, CORDON_USAGE);
        assert_non_null(strstr(err.message, "cordon_policy_new"));
        _cleanup_policy_ cordon_policy *p = NULL;
        assert_int_equal(cordon_policy_new(&p, NULL), 0);
        assert_non_null(p);
        assert_false(p->mode_set);
        assert_int_equal(p->n_binds, 0);
        cordon_policy *stale = p, *q = stale;
        assert_int_equal(cordon_policy_new_default("rel", "/home/u", &q, NULL), -EINVAL);
        assert_null(q);
        q = stale;
        assert_int_equal(cordon_policy_resolve(NULL, p, NULL, &q, &err), -EINVAL);
        assert_int_equal(err.code, CORDON_POLICY_INVALID);
        assert_null(q);
}

static void test_default(void **state) {
        cordon_policy *p = NULL;
        cordon_error err = { 0 };
        assert_int_equal(cordon_policy_new_default("rel", "/home/u", &p, &err), -EINVAL);
        assert_int_equal(err.code, CORDON_POLICY_INVALID);
        assert_null(p);
        assert_int_equal(cordon_policy_new_default("/w", NULL, &p, &err), -EINVAL);
        assert_non_null(strstr(err.message, "set HOME"));
        assert_int_equal(cordon_policy_new_default("/w/p/", "/home/u", &p, &err), 0);
        assert_true(p->mode_set);
        assert_int_equal(p->mode, CORDON_MODE_WORKSPACE_WRITE);
        assert_int_equal(p->n_binds, 1);
        assert_string_equal(p->binds[0].host_path, "/w/p");
        assert_false(p->binds[0].read_only);
        assert_true(p->network_set);
        assert_true(p->network_enabled);
        size_t n = 0;
        while (policy_default_deny_create_names[n])
                n++;
        assert_int_equal(p->deny_create_names.n, n);
        assert_true(strv_contains(&p->deny_create_names, ".env"));
        assert_true(strv_contains(&p->deny_create_names, "*.pem"));
        cordon_policy_free(p);
}

/* Each pair of layers: the higher one wins every scalar it sets; unset scalars fall through. */
static void test_resolve_precedence(void **state) {
        _cleanup_policy_ cordon_policy *def = NULL, *ses = test_policy_new(),
                                       *esc = test_policy_new(), *res = NULL;
        cordon_error err = { 0 };
        assert_int_equal(cordon_policy_new_default("/w", "/home/u", &def, &err), 0);
        assert_int_equal(cordon_policy_set_timeout_ms(def, 1000), 0);
        assert_int_equal(cordon_policy_set_pids(def, 10), 0);

        /* default alone */
        assert_int_equal(cordon_policy_resolve(def, NULL, NULL, &res, &err), 0);
        assert_int_equal(res->mode, CORDON_MODE_WORKSPACE_WRITE);
        assert_int_equal(res->timeout_ms, 1000);
        cordon_policy_free(TAKE_PTR(res));

        /* session > default */
        assert_int_equal(cordon_policy_set_mode(ses, CORDON_MODE_READ_ONLY), 0);
        assert_int_equal(cordon_policy_set_timeout_ms(ses, 2000), 0);
        assert_int_equal(cordon_policy_set_session_id(ses, "s1"), 0);
        assert_int_equal(cordon_policy_resolve(def, ses, NULL, &res, &err), 0);
        assert_int_equal(res->mode, CORDON_MODE_READ_ONLY);
        assert_int_equal(res->timeout_ms, 2000);
        assert_int_equal(res->pids, 10); /* unset in the session: the default's */
        assert_string_equal(res->session_id, "s1");
        cordon_policy_free(TAKE_PTR(res));

        /* escalation > session > default: an approved escalation widens the mode */
        assert_int_equal(cordon_policy_set_mode(esc, CORDON_MODE_WORKSPACE_WRITE), 0);
        assert_int_equal(cordon_policy_set_network_enabled(esc, true), 0);
        assert_int_equal(cordon_policy_resolve(def, ses, esc, &res, &err), 0);
        assert_int_equal(res->mode, CORDON_MODE_WORKSPACE_WRITE);
        assert_true(res->network_enabled);
        assert_int_equal(res->timeout_ms, 2000);
        assert_string_equal(res->session_id, "s1");
        cordon_policy_free(TAKE_PTR(res));

        /* escalation > default, without a session */
        assert_int_equal(cordon_policy_set_mode(esc, CORDON_MODE_DANGER_FULL_ACCESS), 0);
        assert_int_equal(cordon_policy_resolve(def, NULL, esc, &res, &err), 0);
        assert_int_equal(res->mode, CORDON_MODE_DANGER_FULL_ACCESS);
        assert_int_equal(res->timeout_ms, 1000);
        cordon_policy_free(TAKE_PTR(res));

        /* the result shares nothing with its inputs */
        assert_int_equal(cordon_policy_resolve(def, ses, esc, &res, &err), 0);
        cordon_policy_free(TAKE_PTR(ses));
        cordon_policy_free(TAKE_PTR(esc));
        cordon_policy_free(TAKE_PTR(def));
        assert_string_equal(res->session_id, "s1");
        assert_string_equal(res->binds[0].host_path, "/w");
        cordon_policy_free(TAKE_PTR(res));

        assert_int_equal(cordon_policy_resolve(NULL, NULL, NULL, &res, &err), -EINVAL);
        assert_int_equal(err.code, CORDON_POLICY_INVALID);
}

/* Lists are unions: a session cannot remove the default's deny rules. */
static void test_resolve_lists_union(void **state) {
        _cleanup_policy_ cordon_policy *def = NULL, *ses = test_policy_new(), *res = NULL;
        cordon_error err = { 0 };
        assert_int_equal(cordon_policy_new_default("/w", "/home/u", &def, &err), 0);
        assert_int_equal(cordon_policy_add_deny_write(def, "/w/ci.yml"), 0);
        assert_int_equal(cordon_policy_env_set(def, "A", "1"), 0);
        assert_int_equal(cordon_policy_add_deny_write(ses, "/w/Makefile"), 0);
        assert_int_equal(cordon_policy_add_deny_write(ses, "/w/ci.yml"), 0);
        assert_int_equal(cordon_policy_add_deny_create_name(ses, "*.p12"), 0);
        assert_int_equal(cordon_policy_env_set(ses, "A", "2"), 0);
        assert_int_equal(cordon_policy_add_bind(ses, "/w", true), 0);
        assert_int_equal(cordon_policy_add_bind(ses, "/data", false), 0);
        assert_int_equal(cordon_policy_resolve(def, ses, NULL, &res, &err), 0);
        assert_int_equal(res->deny_write.n, 2);
        assert_string_equal(res->deny_write.v[0], "/w/ci.yml");
        assert_string_equal(res->deny_write.v[1], "/w/Makefile");
        assert_true(strv_contains(&res->deny_create_names, ".env"));
        assert_true(strv_contains(&res->deny_create_names, "*.p12"));
        assert_int_equal(res->n_env_set, 1);
        assert_string_equal(res->env_set[0].value, "2");
        /* A bind with the same host path takes the higher layer's flag. */
        assert_int_equal(res->n_binds, 2);
        assert_string_equal(res->binds[0].host_path, "/w");
        assert_true(res->binds[0].read_only);
        assert_string_equal(res->binds[1].host_path, "/data");
}

static void test_dup_and_swap(void **state) {
        _cleanup_policy_ cordon_policy *a = NULL, *b = NULL;
        cordon_error err = { 0 };
        assert_int_equal(cordon_policy_new_default("/w", "/home/u", &a, &err), 0);
        assert_int_equal(cordon_policy_env_set(a, "X", "y"), 0);
        b = policy_dup(a);
        assert_non_null(b);
        assert_string_equal(b->binds[0].host_path, "/w");
        assert_ptr_not_equal(b->binds[0].host_path, a->binds[0].host_path);
        assert_string_equal(b->env_set[0].value, "y");
        _cleanup_policy_ cordon_policy *empty = test_policy_new();
        policy_swap(a, empty);
        assert_int_equal(a->n_binds, 0);
        assert_int_equal(empty->n_binds, 1);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_modes),
                cmocka_unit_test(test_path_setters),
                cmocka_unit_test(test_setter_reasons),
                cmocka_unit_test(test_list_limit),
                cmocka_unit_test(test_binds),
                cmocka_unit_test(test_ids_and_workdir),
                cmocka_unit_test(test_names_and_env),
                cmocka_unit_test(test_widening_fields),
                cmocka_unit_test(test_limits),
                cmocka_unit_test(test_constructors),
                cmocka_unit_test(test_default),
                cmocka_unit_test(test_resolve_precedence),
                cmocka_unit_test(test_resolve_lists_union),
                cmocka_unit_test(test_dup_and_swap),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
