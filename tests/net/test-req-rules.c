/* SPDX-License-Identifier: Apache-2.0 */
/* Request rules (src/net/req-rules.c): which hosts are ruled, deny wins wherever it stands, a
 * ruled host fails closed, globs, the case rules of allow and deny, the paths refused as
 * ambiguous, passthrough. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "net/req-rules.h"

static net_host name(const char *text) {
        net_host h = { .kind = NET_HOST_NAME };
        strcpy(h.text, text);
        return h;
}

static void add(policy_req *q, const char *host, const char *methods, const char *paths,
                bool deny, const char *reason) {
        policy_req_rule r = { .host = (char *) host, .deny = deny, .reason = (char *) reason };
        char buf[256];
        const char *lists[2] = { methods, paths };
        strv *dst[2] = { &r.methods, &r.paths };
        for (int k = 0; k < 2; k++) {
                if (!lists[k])
                        continue;
                strcpy(buf, lists[k]);
                for (char *t = strtok(buf, " "); t; t = strtok(NULL, " "))
                        assert_int_equal(strv_push(dst[k], t), 0);
        }
        assert_int_equal(policy_req_add_rule(q, &r), 0);
        strv_done(&r.methods);
        strv_done(&r.paths);
}

static req_verdict judge(const req_rules *r, const char *host, uint16_t port, const char *method,
                         const char *target) {
        net_host h = name(host);
        req_verdict v;
        req_rules_judge(r, &h, port, method, target, strlen(target), &v);
        return v;
}

static void test_read_only(void **state) {
        (void) state;
        policy_req q = { 0 };
        add(&q, "api.example.com", "GET HEAD OPTIONS", "/v1/*", false, "read-only access");
        req_rules *r = NULL;
        assert_int_equal(req_rules_new(&r, &q), 0);
        net_host h = name("api.example.com"), other = name("example.com");
        assert_true(req_rules_ruled(r, &h, 443));
        assert_false(req_rules_ruled(r, &other, 443));
        req_verdict v = judge(r, "api.example.com", 80, "GET", "/v1/repos/x?page=2");
        assert_true(v.allowed);
        assert_int_equal(v.index, 0);
        assert_string_equal(v.reason, "read-only access");
        assert_non_null(strstr(v.rule, "egressRules[0]: allow GET,HEAD,OPTIONS api.example.com"));
        /* Fail closed: POST matches no rule; neither does a path outside /v1/. */
        v = judge(r, "api.example.com", 80, "POST", "/v1/repos");
        assert_false(v.allowed);
        assert_int_equal(v.index, -1);
        assert_non_null(strstr(v.rule, "no egressRules entry allows POST on api.example.com"));
        assert_false(judge(r, "api.example.com", 80, "GET", "/v2/x").allowed);
        /* The query is not part of the path: "?/v1/" cannot make /admin match. */
        assert_false(judge(r, "api.example.com", 80, "GET", "/admin?/v1/x").allowed);
        /* Allow rules are case-sensitive. */
        assert_false(judge(r, "api.example.com", 80, "get", "/v1/x").allowed);
        assert_false(judge(r, "api.example.com", 80, "GET", "/V1/x").allowed);
        req_rules_free(r);
        policy_req_clear(&q);
}

static void test_deny_wins(void **state) {
        (void) state;
        policy_req q = { 0 };
        add(&q, "*.example.com", NULL, NULL, false, NULL);
        add(&q, "api.example.com", "POST DELETE", "/admin/*", true, "no admin writes");
        req_rules *r = NULL;
        assert_int_equal(req_rules_new(&r, &q), 0);
        assert_true(judge(r, "api.example.com", 443, "POST", "/repos").allowed);
        req_verdict v = judge(r, "api.example.com", 443, "POST", "/admin/users");
        assert_false(v.allowed);
        assert_int_equal(v.index, 1);
        assert_string_equal(v.reason, "no admin writes");
        /* Deny rules ignore case in the method and the path. */
        assert_false(judge(r, "api.example.com", 443, "post", "/ADMIN/users").allowed);
        assert_true(judge(r, "api.example.com", 443, "GET", "/admin/users").allowed);
        /* Ambiguous paths are refused on a ruled host, before any rule. */
        const char *bad[] = { "/x/../admin/users", "/./admin", "//admin/users", "/%61dmin/x",
                              "/admin%2fusers", "/a\\b", "/..;/admin", "/x/%2E%2E/admin",
                              "/%00", "/%zz", "/%4", "relative" };
        for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
                v = judge(r, "api.example.com", 443, "GET", bad[i]);
                assert_false(v.allowed);
                assert_non_null(strstr(v.rule, "request rules: the path"));
        }
        /* Reserved characters stay encoded and are fine; so is OPTIONS *. */
        assert_true(judge(r, "api.example.com", 443, "GET", "/q/a%20b%3F").allowed);
        assert_true(judge(r, "api.example.com", 443, "OPTIONS", "*").allowed);
        assert_true(judge(r, "api.example.com", 443, "GET", "/dir/").allowed);
        /* Order does not matter: the deny first gives the same answers. */
        policy_req q2 = { 0 };
        add(&q2, "api.example.com", "POST DELETE", "/admin/*", true, "no admin writes");
        add(&q2, "*.example.com", NULL, NULL, false, NULL);
        req_rules *r2 = NULL;
        assert_int_equal(req_rules_new(&r2, &q2), 0);
        assert_false(judge(r2, "api.example.com", 443, "POST", "/admin/users").allowed);
        assert_true(judge(r2, "api.example.com", 443, "POST", "/repos").allowed);
        req_rules_free(r);
        req_rules_free(r2);
        policy_req_clear(&q);
        policy_req_clear(&q2);
}

static void test_hosts_and_ports(void **state) {
        (void) state;
        policy_req q = { 0 };
        add(&q, "registry.example:8443", "GET", NULL, false, NULL);
        add(&q, "a.*.example", "GET", NULL, false, NULL);
        assert_int_equal(strv_push(&q.passthrough, "*.pinned.example"), 0);
        req_rules *r = NULL;
        assert_int_equal(req_rules_new(&r, &q), 0);
        net_host reg = name("registry.example"), mid = name("a.b.example"),
                 deep = name("a.b.c.example"), pin = name("x.pinned.example");
        assert_true(req_rules_ruled(r, &reg, 8443));
        assert_false(req_rules_ruled(r, &reg, 443));
        assert_true(req_rules_ruled(r, &mid, 80));
        assert_false(req_rules_ruled(r, &deep, 80));
        assert_true(req_rules_passthrough(r, &pin, 443));
        assert_false(req_rules_passthrough(r, &reg, 8443));
        net_host addr = { .kind = NET_HOST_IPV4 };
        strcpy(addr.text, "10.0.0.1");
        assert_false(req_rules_ruled(r, &addr, 80));
        req_rules_free(r);
        policy_req_clear(&q);
        /* No rules: no table, nothing ruled. */
        policy_req none = { 0 };
        assert_int_equal(req_rules_new(&r, &none), 0);
        assert_null(r);
        assert_false(req_rules_ruled(NULL, &reg, 80));
}

static void test_glob(void **state) {
        (void) state;
        assert_true(req_glob_match("/v1/*", "/v1/a/b", 7, false));
        assert_true(req_glob_match("/v1/*", "/v1/", 4, false));
        assert_false(req_glob_match("/v1/*", "/v1", 3, false));
        assert_true(req_glob_match("/*/info/refs", "/org/repo.git/info/refs", 23, false));
        assert_true(req_glob_match("/a?c", "/abc", 4, false));
        assert_false(req_glob_match("/a?c", "/ac", 3, false));
        assert_true(req_glob_match("*", "", 0, false));
        assert_false(req_glob_match("/A*", "/abc", 4, false));
        assert_true(req_glob_match("/A*", "/abc", 4, true));
        /* Many stars against a long non-match stays fast (one backtrack point). */
        char s[4096];
        memset(s, 'a', sizeof(s));
        assert_false(req_glob_match("*a*a*a*a*a*a*a*a*a*b", s, sizeof(s), false));
}

static void test_policy_checks(void **state) {
        (void) state;
        assert_null(policy_check_req_method("GET"));
        assert_null(policy_check_req_method("*"));
        assert_non_null(policy_check_req_method("get"));
        assert_non_null(policy_check_req_method(""));
        assert_null(policy_check_req_path("/v1/*"));
        assert_non_null(policy_check_req_path("v1/*"));
        assert_non_null(policy_check_req_path("/a b"));
        assert_non_null(policy_check_req_path("/a#b"));
        /* The same rule twice is one rule; merging appends and widening sees new allows. */
        policy_req a = { 0 }, b = { 0 };
        add(&a, "x.example", "GET", NULL, false, NULL);
        add(&a, "x.example", "GET", NULL, false, NULL);
        assert_int_equal(a.n_rules, 1);
        add(&b, "x.example", "POST", NULL, true, NULL);
        assert_false(policy_req_widens(&a, &b));
        add(&b, "x.example", "POST", NULL, false, NULL);
        assert_true(policy_req_widens(&a, &b));
        assert_int_equal(policy_req_copy(&a, &b), 0);
        assert_int_equal(a.n_rules, 3);
        assert_false(policy_req_widens(&a, &b));
        policy_req_clear(&a);
        policy_req_clear(&b);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_read_only),       cmocka_unit_test(test_deny_wins),
                cmocka_unit_test(test_hosts_and_ports), cmocka_unit_test(test_glob),
                cmocka_unit_test(test_policy_checks),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
