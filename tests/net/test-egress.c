/* SPDX-License-Identifier: Apache-2.0 */
/* The egress matcher (src/net/egress.c): every pattern form allowed and refused, ports, deny
 * beats allow, the network-off rule set, the validator, and every built-in list entry. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>

#include <cmocka.h>

#include "net/egress.h"

/* A rule set from NULL-terminated arrays (either may be NULL); asserts success. */
static egress_rules *rules(bool network, const char *const *allow, const char *const *deny) {
        strv a = { 0 }, d = { 0 };
        for (size_t i = 0; allow && allow[i]; i++)
                assert_int_equal(strv_push(&a, allow[i]), 0);
        for (size_t i = 0; deny && deny[i]; i++)
                assert_int_equal(strv_push(&d, deny[i]), 0);
        egress_rules *r = NULL;
        cordon_error err = { 0 };
        if (egress_rules_new(&r, network, &a, &d, &err) < 0)
                fail_msg("egress_rules_new: %s", err.message);
        strv_done(&a);
        strv_done(&d);
        return r;
}

static egress_verdict decide(const egress_rules *r, const char *host, uint16_t port) {
        net_host h;
        const char *why = NULL;
        egress_verdict v;
        if (net_host_canon(host, strlen(host), &h, &why) < 0)
                fail_msg("'%s' does not canonicalise: %s", host, why);
        egress_decide(r, &h, port, &v);
        return v;
}

/* Asserts the verdict for host:port, and the deciding rule when `rule` is not NULL. */
static void expect(const egress_rules *r, const char *host, uint16_t port, bool allowed,
                   const char *rule) {
        egress_verdict v = decide(r, host, port);
        if (v.allowed != allowed)
                fail_msg("%s:%u %s (rule '%s'), want %s", host, port,
                         v.allowed ? "allowed" : "refused", v.rule,
                         allowed ? "allowed" : "refused");
        if (rule && strcmp(v.rule, rule) != 0)
                fail_msg("%s:%u decided by '%s', want '%s'", host, port, v.rule, rule);
}

/* The resolver's question (egress_decide_name): may the name resolve at all? */
static void expect_name(const egress_rules *r, const char *host, bool allowed, const char *rule) {
        net_host h;
        egress_verdict v;
        assert_int_equal(net_host_canon(host, strlen(host), &h, NULL), 0);
        egress_decide_name(r, &h, &v);
        if (v.allowed != allowed || (rule && strcmp(v.rule, rule) != 0))
                fail_msg("name %s %s by '%s', want %s by '%s'", host,
                         v.allowed ? "allowed" : "refused", v.rule,
                         allowed ? "allowed" : "refused", rule ? rule : "any rule");
}

static void test_names(void **state) {
        (void) state;
        _cleanup_egress_rules_ egress_rules *r = rules(
                true, (const char *const[]) { "api.example.com:8443", "*.example.org", NULL },
                (const char *const[]) { "bad.example.org", "ssh.example.org:22", NULL });
        /* An entry for one port lets the name resolve: the connection is judged with its port. */
        expect_name(r, "api.example.com", true, "api.example.com:8443");
        expect(r, "api.example.com", 443, false, "not in allowlist");
        expect_name(r, "a.example.org", true, "*.example.org");
        expect_name(r, "example.org", false, "not in allowlist");
        /* A deny for every port refuses the name; a deny for one port does not. */
        expect_name(r, "bad.example.org", false, "bad.example.org");
        expect_name(r, "ssh.example.org", true, "*.example.org");
        expect(r, "ssh.example.org", 22, false, "ssh.example.org:22");
        expect_name(r, "unlisted.test", false, "not in allowlist");
        _cleanup_egress_rules_ egress_rules *off = rules(false, NULL, NULL);
        expect_name(off, "api.example.com", false, "network disabled");
        /* Only names: an address is never "resolved". */
        net_host h;
        egress_verdict v;
        assert_int_equal(net_host_canon("1.2.3.4", 7, &h, NULL), 0);
        egress_decide_name(r, &h, &v);
        assert_false(v.allowed);
}

/* A deny entry's reason rides on its verdicts, for names with and without a port; another
 * entry's verdict and an allow carry none. */
static void test_reasons(void **state) {
        (void) state;
        _cleanup_egress_rules_ egress_rules *r = rules(
                true, (const char *const[]) { "*.example.test", NULL },
                (const char *const[]) { "paste.example.test", "*.bad.example.test:22", NULL });
        char p1[] = "paste.example.test", r1[] = "no paste sites";
        char p2[] = "*.bad.example.test:22", r2[] = "no ssh there";
        policy_reason why[] = { { p1, r1 }, { p2, r2 } };
        assert_int_equal(egress_rules_add_reasons(r, why, 2), 0);
        egress_verdict v = decide(r, "paste.example.test", 443);
        assert_false(v.allowed);
        assert_string_equal(v.reason, "no paste sites");
        v = decide(r, "x.bad.example.test", 22);
        assert_string_equal(v.rule, "*.bad.example.test:22");
        assert_string_equal(v.reason, "no ssh there");
        v = decide(r, "x.bad.example.test", 443);
        assert_true(v.allowed);
        assert_string_equal(v.reason, "");
        net_host h;
        assert_int_equal(net_host_canon("paste.example.test", 18, &h, NULL), 0);
        egress_decide_name(r, &h, &v);
        assert_false(v.allowed);
        assert_string_equal(v.reason, "no paste sites");
}

static void test_exact(void **state) {
        _cleanup_egress_rules_ egress_rules *r =
                rules(true, (const char *const[]) { "API.Example.com.", NULL }, NULL);
        expect(r, "api.example.com", 443, true, "API.Example.com.");
        expect(r, "API.EXAMPLE.COM", 80, true, NULL);
        expect(r, "api.example.com.", 1, true, NULL);
        expect(r, "x.api.example.com", 443, false, "not in allowlist");
        expect(r, "example.com", 443, false, NULL);
        expect(r, "api.example.co", 443, false, NULL);
        expect(r, "api.example.com.evil.net", 443, false, NULL);
        expect(r, "apiexample.com", 443, false, NULL);
}

static void test_leading_wildcard(void **state) {
        _cleanup_egress_rules_ egress_rules *r =
                rules(true, (const char *const[]) { "*.example.com", NULL }, NULL);
        expect(r, "a.example.com", 443, true, "*.example.com");
        expect(r, "a.b.example.com", 443, true, "*.example.com");
        expect(r, "x.y.z.EXAMPLE.com.", 8080, true, "*.example.com");
        expect(r, "example.com", 443, false, "not in allowlist"); /* not the apex */
        expect(r, "badexample.com", 443, false, NULL);
        expect(r, "a.example.com.evil.net", 443, false, NULL);
        expect(r, "a.example.co", 443, false, NULL);
        expect(r, "example.com.a", 443, false, NULL);
}

static void test_middle_wildcard(void **state) {
        _cleanup_egress_rules_ egress_rules *r = rules(
                true, (const char *const[]) { "bedrock.*.amazonaws.com", "a.b.*.c.d", NULL },
                NULL);
        expect(r, "bedrock.us-east-1.amazonaws.com", 443, true, "bedrock.*.amazonaws.com");
        expect(r, "BEDROCK.eu-west-3.amazonaws.com.", 443, true, NULL);
        /* Exactly one label: two labels, zero labels, other prefixes, other suffixes refused. */
        expect(r, "bedrock.evil.attacker.amazonaws.com", 443, false, NULL);
        expect(r, "bedrock.amazonaws.com", 443, false, NULL);
        expect(r, "x.bedrock.us-east-1.amazonaws.com", 443, false, NULL);
        expect(r, "bedrockx.us-east-1.amazonaws.com", 443, false, NULL);
        expect(r, "bedrock.us-east-1.amazonaws.com.evil.net", 443, false, NULL);
        expect(r, "bedrock.us-east-1.amazonaws.co", 443, false, NULL);
        expect(r, "a.b.x.c.d", 443, true, "a.b.*.c.d");
        expect(r, "a.b.c.d", 443, false, NULL);
        expect(r, "a.b.x.y.c.d", 443, false, NULL);
        expect(r, "a.x.b.c.d", 443, false, NULL);
}

static void test_ports(void **state) {
        _cleanup_egress_rules_ egress_rules *r = rules(
                true,
                (const char *const[]) { "example.com:443", "*.example.org:8443",
                                        "bedrock.*.aws.test:443", "both.test", "both.test:22",
                                        NULL },
                NULL);
        expect(r, "example.com", 443, true, "example.com:443");
        expect(r, "example.com", 80, false, NULL);
        expect(r, "example.com", 4430, false, NULL);
        expect(r, "a.example.org", 8443, true, NULL);
        expect(r, "a.example.org", 443, false, NULL);
        expect(r, "bedrock.x.aws.test", 443, true, NULL);
        expect(r, "bedrock.x.aws.test", 80, false, NULL);
        expect(r, "both.test", 22, true, "both.test:22");
        expect(r, "both.test", 23, true, "both.test");
        /* exact_port: an exact entry naming this very port. */
        assert_true(decide(r, "example.com", 443).exact_port);
        assert_true(decide(r, "both.test", 22).exact_port);
        assert_false(decide(r, "both.test", 23).exact_port);
        assert_false(decide(r, "a.example.org", 8443).exact_port);
        /* Port 0 is never a destination. */
        expect(r, "both.test", 0, false, "invalid destination");
}

static void test_deny_beats_allow(void **state) {
        _cleanup_egress_rules_ egress_rules *r = rules(
                true,
                (const char *const[]) { "*.example.com", "secret.example.com",
                                        "mail.example.com:25", "127.0.0.1", NULL },
                (const char *const[]) { "secret.example.com", "*.internal.example.com",
                                        "mail.example.com:25", "127.0.0.1:22",
                                        "x.*.example.com", NULL });
        expect(r, "a.example.com", 443, true, NULL);
        expect(r, "secret.example.com", 443, false, "secret.example.com");
        expect(r, "SECRET.example.com.", 80, false, "secret.example.com");
        expect(r, "db.internal.example.com", 5432, false, "*.internal.example.com");
        expect(r, "a.b.internal.example.com", 5432, false, "*.internal.example.com");
        expect(r, "internal.example.com", 443, true, NULL); /* the deny is not for the apex */
        expect(r, "mail.example.com", 25, false, "mail.example.com:25");
        expect(r, "mail.example.com", 587, true, "*.example.com");
        expect(r, "x.y.example.com", 443, false, "x.*.example.com");
        expect(r, "127.1", 22, false, "127.0.0.1:22");
        expect(r, "2130706433", 80, true, "127.0.0.1");
        /* The fixed deny list beats the user's allow entries too. */
        _cleanup_egress_rules_ egress_rules *r2 = rules(
                true,
                (const char *const[]) { "169.254.169.254", "metadata.google.internal",
                                        "*.onion", "*.internal", NULL },
                NULL);
        expect(r2, "169.254.169.254", 80, false, "169.254.169.254");
        expect(r2, "2852039166", 80, false, "169.254.169.254");
        expect(r2, "0xa9fea9fe", 80, false, "169.254.169.254");
        expect(r2, "[::ffff:169.254.169.254]", 80, false, "169.254.169.254");
        expect(r2, "metadata.google.internal", 80, false, "metadata.google.internal");
        expect(r2, "METADATA.google.internal.", 80, false, "metadata.google.internal");
        expect(r2, "other.internal", 80, true, "*.internal");
        expect(r2, "abc.onion", 443, false, "*.onion");
        expect(r2, "[fd00:ec2::254]", 80, false, "fd00:ec2::254");
        expect(r2, "fd00:ec2:0::254", 80, false, "fd00:ec2::254");
        expect(r2, "o1.ingest.sentry.io", 443, false, "*.ingest.sentry.io");
}

static void test_addresses(void **state) {
        _cleanup_egress_rules_ egress_rules *r = rules(
                true,
                (const char *const[]) { "127.0.0.1:3000", "[::1]:8080", "10.0.0.7",
                                        "2001:DB8::0:1", "*.test", NULL },
                NULL);
        expect(r, "127.0.0.1", 3000, true, "127.0.0.1:3000");
        expect(r, "127.1", 3000, true, NULL);
        expect(r, "2130706433", 3000, true, NULL);
        expect(r, "0x7f.1", 3000, true, NULL);
        expect(r, "[::ffff:127.0.0.1]", 3000, true, NULL);
        expect(r, "127.0.0.1", 3001, false, NULL);
        expect(r, "127.0.0.2", 3000, false, NULL);
        expect(r, "::1", 8080, true, "[::1]:8080");
        expect(r, "[0:0::1]", 8080, true, NULL);
        expect(r, "::1", 8081, false, NULL);
        expect(r, "10.0.0.7", 1, true, "10.0.0.7");
        expect(r, "10.7", 65535, true, NULL);
        expect(r, "[2001:db8::1]", 443, true, "2001:DB8::0:1");
        assert_true(decide(r, "127.1", 3000).exact_port);
        assert_false(decide(r, "10.0.0.7", 22).exact_port);
        /* Names never match address entries, addresses never match wildcards. */
        expect(r, "localhost", 3000, false, NULL);
        _cleanup_egress_rules_ egress_rules *w =
                rules(true, (const char *const[]) { "*.com", NULL }, NULL);
        expect(w, "1.2.3.4", 443, false, NULL);
        expect(w, "a.com", 443, true, NULL);
}

static void test_network_disabled(void **state) {
        _cleanup_egress_rules_ egress_rules *r = rules(
                false, (const char *const[]) { "example.com", "127.0.0.1:3000", NULL },
                (const char *const[]) { "evil.test", NULL });
        expect(r, "example.com", 443, false, "network disabled");
        expect(r, "api.anthropic.com", 443, false, "network disabled");
        expect(r, "github.com", 443, false, "network disabled");
        expect(r, "127.0.0.1", 3000, false, "network disabled");
        /* The deny lists still apply and still name their rule. */
        expect(r, "169.254.169.254", 80, false, "169.254.169.254");
        expect(r, "evil.test", 80, false, "evil.test");
        net_host h;
        assert_int_equal(net_host_canon("127.0.0.1", 9, &h, NULL), 0);
        assert_false(egress_addr_listed(r, false, &h, 3000));

        /* A bad allow entry is reported even though no allow entry is used. */
        strv a = { 0 };
        assert_int_equal(strv_push(&a, "a.*"), 0);
        egress_rules *bad = NULL;
        cordon_error err = { 0 };
        assert_int_equal(egress_rules_new(&bad, false, &a, NULL, &err), -EINVAL);
        assert_null(bad);
        assert_int_equal(err.code, CORDON_POLICY_INVALID);
        strv_done(&a);
}

static void test_builtin_lists(void **state) {
        _cleanup_egress_rules_ egress_rules *r = rules(true, NULL, NULL);
        expect(r, "api.anthropic.com", 443, true, "api.anthropic.com");
        expect(r, "api.openai.com", 443, true, NULL);
        expect(r, "bedrock-runtime.us-west-2.amazonaws.com", 443, true,
               "bedrock-runtime.*.amazonaws.com");
        expect(r, "bedrock-runtime.a.b.amazonaws.com", 443, false, NULL);
        expect(r, "registry.npmjs.org", 443, true, NULL);
        expect(r, "files.pythonhosted.org", 443, true, NULL);
        expect(r, "github.com", 22, true, "github.com");
        expect(r, "objects.githubusercontent.com", 443, true, "objects.githubusercontent.com");
        expect(r, "avatars.githubusercontent.com", 443, true, "*.githubusercontent.com");
        expect(r, "githubusercontent.com", 443, false, NULL);
        expect(r, "evil.example", 443, false, "not in allowlist");
        expect(r, "metadata.google.internal", 80, false, "metadata.google.internal");
        expect(r, "duckduckgogg42xjoc72x3sjasowoarfbgcmvfimaftt6twagswzczad.onion", 443, false,
               "*.onion");
        expect(r, "telemetry.nextjs.org", 443, false, "telemetry.nextjs.org");

        /* Every entry of every list is valid, and the lists are what the build embedded. */
        size_t total = 0;
        for (egress_builtin l = 0; l < _EGRESS_LIST_MAX; l++) {
                size_t n;
                const char *file = NULL;
                const egress_list_entry *e = egress_builtin_list(l, &n, &file);
                assert_non_null(e);
                assert_non_null(file);
                assert_true(n > 0);
                for (size_t i = 0; i < n; i++) {
                        const char *why = egress_check_pattern(e[i].pattern);
                        if (why)
                                fail_msg("%s:%u: '%s' %s", file, e[i].line, e[i].pattern, why);
                        assert_true(e[i].line > 0);
                }
                total += n;
        }
        assert_true(total > 40);
        size_t n;
        assert_null(egress_builtin_list(_EGRESS_LIST_MAX, &n, NULL));
        assert_int_equal(n, 0);

        /* No baseline or GitHub entry is also on the deny list (it would be dead weight). */
        for (egress_builtin l = EGRESS_LIST_BASELINE; l <= EGRESS_LIST_GITHUB; l++) {
                const egress_list_entry *e = egress_builtin_list(l, &n, NULL);
                for (size_t i = 0; i < n; i++) {
                        if (strchr(e[i].pattern, '*'))
                                continue;
                        size_t hl;
                        uint16_t port;
                        assert_int_equal(net_hostport_split(e[i].pattern, strlen(e[i].pattern),
                                                            true, &hl, &port, NULL),
                                         0);
                        net_host h;
                        assert_int_equal(net_host_canon(e[i].pattern, hl, &h, NULL), 0);
                        egress_verdict v;
                        egress_decide(r, &h, port ? port : 443, &v);
                        if (!v.allowed)
                                fail_msg("built-in allow '%s' refused by '%s'", e[i].pattern,
                                         v.rule);
                }
        }
}

static void pattern_ok(const char *p) {
        const char *why = egress_check_pattern(p);
        if (why)
                fail_msg("pattern '%s' refused: %s", p, why);
}

static void pattern_bad(const char *p, const char *reason) {
        const char *why = egress_check_pattern(p);
        if (!why)
                fail_msg("pattern '%s' accepted", p ? p : "(null)");
        if (reason && !strstr(why, reason))
                fail_msg("pattern '%s' refused with '%s', want '%s'", p ? p : "(null)", why,
                         reason);
}

static void test_pattern_validator(void **state) {
        static const char *const ok[] = {
                "example.com",     "Example.COM.",     "*.example.com",   "*.example.com.",
                "a.*.example.com", "*.localhost",      "*.onion",         "example.com:443",
                "*.example.com:1", "a.*.b.c:65535",    "127.0.0.1",       "127.1:3000",
                "[::1]",           "[::1]:8080",       "fd00:ec2::254",   "::1",
                "_dmarc.x.test",   "2130706433:80",    "[::ffff:1.2.3.4]:80",
        };
        for (size_t i = 0; i < ELEMENTSOF(ok); i++)
                pattern_ok(ok[i]);
        pattern_bad("", "empty");
        pattern_bad(NULL, "empty");
        pattern_bad("*", "alone");
        pattern_bad("*:443", "alone");
        pattern_bad("*.", NULL);
        pattern_bad("*.*.example.com", "more than one");
        pattern_bad("a.*.*.com", "more than one");
        pattern_bad("*example.com", "whole label");
        pattern_bad("ex*ample.com", "whole label");
        pattern_bad("example*.com", "whole label");
        pattern_bad("example.*", "whole label");
        pattern_bad("example.*.", "whole label");
        pattern_bad("*.1.2.3", "IP address");
        pattern_bad("a.*.1", NULL);
        pattern_bad("[*::1]", "IPv6");
        pattern_bad("example.com:0", "1-65535");
        pattern_bad("example.com:65536", "1-65535");
        pattern_bad("example.com:", "empty port");
        pattern_bad("example.com:http", "decimal");
        pattern_bad("http://example.com", NULL);
        pattern_bad("user@example.com", "cannot contain");
        pattern_bad("example.com/path", "cannot contain");
        pattern_bad("exa mple.com", "space");
        pattern_bad("a\nb", "CR or LF");
        pattern_bad("a..b", "empty label");
        pattern_bad("1.2.3.999", "IPv4");
        pattern_bad("fe80::1%eth0", "zone");
        pattern_bad("::1:80:", NULL);
        pattern_bad("[::1]x", "after ']'");
        char long_name[300];
        memset(long_name, 'a', sizeof(long_name) - 1);
        long_name[sizeof(long_name) - 1] = '\0';
        pattern_bad(long_name, "longer");
}

static void test_error_message(void **state) {
        strv a = { 0 };
        assert_int_equal(strv_push(&a, "ok.example.com"), 0);
        assert_int_equal(strv_push(&a, "bad*.example.com\x01"), 0);
        egress_rules *r = NULL;
        cordon_error err = { 0 };
        assert_int_equal(egress_rules_new(&r, true, &a, NULL, &err), -EINVAL);
        assert_null(r);
        assert_int_equal(err.code, CORDON_POLICY_INVALID);
        /* Names the list, the pattern (control bytes escaped) and the reason. */
        assert_non_null(strstr(err.message, "egressAllowlist entry 'bad*.example.com\\x01'"));
        assert_non_null(strstr(err.message, "whole label"));
        strv_done(&a);

        strv d = { 0 };
        assert_int_equal(strv_push(&d, "*"), 0);
        assert_int_equal(egress_rules_new(&r, true, NULL, &d, &err), -EINVAL);
        assert_non_null(strstr(err.message, "egressDenylist entry '*'"));
        strv_done(&d);
}

/* Thousands of patterns: the sorted tables find every one of them and nothing else. */
static void test_many_patterns(void **state) {
        strv a = { 0 };
        char buf[64];
        for (unsigned i = 0; i < 3000; i++) {
                snprintf(buf, sizeof(buf), "host%u.example.org", i);
                assert_int_equal(strv_push(&a, buf), 0);
                snprintf(buf, sizeof(buf), "*.zone%u.example.net:%u", i, 1000 + i);
                assert_int_equal(strv_push(&a, buf), 0);
                snprintf(buf, sizeof(buf), "svc.*.region%u.example.com", i);
                assert_int_equal(strv_push(&a, buf), 0);
        }
        egress_rules *r = NULL;
        cordon_error err = { 0 };
        assert_int_equal(egress_rules_new(&r, true, &a, NULL, &err), 0);
        strv_done(&a);
        for (unsigned i = 0; i < 3000; i += 7) {
                snprintf(buf, sizeof(buf), "HOST%u.example.org", i);
                expect(r, buf, 443, true, NULL);
                snprintf(buf, sizeof(buf), "host%u.example.org.x", i);
                expect(r, buf, 443, false, NULL);
                snprintf(buf, sizeof(buf), "a.b.zone%u.example.net", i);
                expect(r, buf, (uint16_t) (1000 + i), true, NULL);
                expect(r, buf, (uint16_t) (999 + i), false, NULL);
                snprintf(buf, sizeof(buf), "svc.x.region%u.example.com", i);
                expect(r, buf, 443, true, NULL);
                snprintf(buf, sizeof(buf), "svc.x.y.region%u.example.com", i);
                expect(r, buf, 443, false, NULL);
        }
        expect(r, "host3000.example.org", 443, false, NULL);
        egress_rules_free(r);
        egress_rules_free(NULL);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_exact),
                cmocka_unit_test(test_leading_wildcard),
                cmocka_unit_test(test_middle_wildcard),
                cmocka_unit_test(test_ports),
                cmocka_unit_test(test_deny_beats_allow),
                cmocka_unit_test(test_addresses),
                cmocka_unit_test(test_network_disabled),
                cmocka_unit_test(test_builtin_lists),
                cmocka_unit_test(test_pattern_validator),
                cmocka_unit_test(test_error_message),
                cmocka_unit_test(test_many_patterns),
                cmocka_unit_test(test_names),
                cmocka_unit_test(test_reasons),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
