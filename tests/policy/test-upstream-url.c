/* SPDX-License-Identifier: Apache-2.0 */
/* The egressUpstream URL (src/policy/upstream-url.c): what is accepted and in which canonical
 * form, what is refused and why, and that the password never appears in a redacted form or a
 * refusal. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "policy/upstream-url.h"

static void expect_ok(const char *url, const char *canonical, const char *shown) {
        policy_upstream u;
        const char *hint = "unset";
        const char *why = policy_upstream_parse(url, &u, &hint);
        if (why)
                print_message("%s: %s\n", url, why);
        assert_null(why);
        assert_null(hint);
        char buf[POLICY_UPSTREAM_URL_MAX + 1];
        assert_true(policy_upstream_format(&u, false, buf, sizeof(buf)) > 0);
        assert_string_equal(buf, canonical);
        assert_true(policy_upstream_format(&u, true, buf, sizeof(buf)) > 0);
        assert_string_equal(buf, shown);
        /* The canonical form is a fixed point. */
        policy_upstream again;
        assert_null(policy_upstream_parse(canonical, &again, NULL));
        assert_memory_equal(&u, &again, sizeof(u));
}

static void expect_refused(const char *url, const char *why_part) {
        policy_upstream u;
        const char *hint = NULL;
        const char *why = policy_upstream_parse(url, &u, &hint);
        if (!why || !strstr(why, why_part))
                print_message("%s: got '%s', want '%s'\n", url, why ? why : "(accepted)", why_part);
        assert_non_null(why);
        assert_non_null(strstr(why, why_part));
        assert_non_null(hint);
        /* Nothing of a refused URL is kept: the password least of all. */
        static const policy_upstream zero;
        assert_memory_equal(&u, &zero, sizeof(u));
        /* No refusal quotes the URL: "s3cr3t" is the password of every refused URL below that
         * has one. */
        assert_null(strstr(why, "s3cr3t"));
        assert_null(strstr(hint, "s3cr3t"));
}

static void test_accepted(void **state) {
        (void) state;
        expect_ok("http://proxy.example:3128", "http://proxy.example:3128",
                  "http://proxy.example:3128");
        /* Scheme and host are case-insensitive; the canonical form is lower case. */
        expect_ok("HTTP://Proxy.EXAMPLE.:8080", "http://proxy.example:8080",
                  "http://proxy.example:8080");
        expect_ok("socks5://10.0.0.1:1080", "socks5://10.0.0.1:1080", "socks5://10.0.0.1:1080");
        /* socks5h is socks5: names always go to the upstream. */
        expect_ok("socks5h://gw.example:1080", "socks5://gw.example:1080",
                  "socks5://gw.example:1080");
        /* Every inet_aton spelling is the one address (the proxy's canonicaliser). */
        expect_ok("http://0x7f.1:3128", "http://127.0.0.1:3128", "http://127.0.0.1:3128");
        expect_ok("http://[::1]:3128", "http://[::1]:3128", "http://[::1]:3128");
        expect_ok("http://[2001:DB8:0::1]:3128", "http://[2001:db8::1]:3128",
                  "http://[2001:db8::1]:3128");
        expect_ok("http://alice:s3cr3t@proxy.example:3128",
                  "http://alice:s3cr3t@proxy.example:3128", "http://alice:****@proxy.example:3128");
        /* Percent-decoded, then encoded again canonically: every byte but unreserved ones. */
        expect_ok("socks5://a%40corp:p%3Aw:rd!@gw:1080", "socks5://a%40corp:p%3Aw%3Ard%21@gw:1080",
                  "socks5://a%40corp:****@gw:1080");
        expect_ok("http://%61%62c:%7e~@h:1", "http://abc:~~@h:1", "http://abc:****@h:1");
        expect_ok("http://u:%C3%A9@h:65535", "http://u:%C3%A9@h:65535", "http://u:****@h:65535");
}

static void test_refused(void **state) {
        (void) state;
        expect_refused("", "must not be empty");
        expect_refused("proxy.example:3128", "has no scheme");
        expect_refused("ftp://proxy.example:21", "unsupported scheme");
        expect_refused("socks4://proxy.example:1080", "unsupported scheme");
        expect_refused("https://proxy.example:443", "https://");
        expect_refused("http://proxy.example", "has no port");
        expect_refused("http://proxy.example:", "has no valid port");
        expect_refused("http://proxy.example:0", "has no valid port");
        expect_refused("http://proxy.example:65536", "has no valid port");
        expect_refused("http://proxy.example:+80", "has no valid port");
        expect_refused("http://proxy.example:123456", "has no valid port");
        expect_refused("http://proxy.example:3128/", "path, query or fragment");
        expect_refused("http://proxy.example:3128?x=1", "path, query or fragment");
        expect_refused("http://proxy.example:3128#top", "path, query or fragment");
        expect_refused("http://u:s3cr3t/x@proxy.example:3128", "in its credentials");
        /* Two '@': which one ends the credentials differs between URL parsers. */
        expect_refused("http://u:s3cr3t@evil.example@proxy.example:3128", "more than one '@'");
        expect_refused("http://alice@proxy.example:3128", "without a password");
        expect_refused("http://:s3cr3t@proxy.example:3128", "empty user name or password");
        expect_refused("http://alice:@proxy.example:3128", "empty user name or password");
        expect_refused("http://a%3Ab:s3cr3t@proxy.example:3128", "':' in its user name");
        expect_refused("http://alice:s3cr3t%0d%0aX:@proxy.example:3128", "control character");
        expect_refused("http://alice:s3cr3t%00@proxy.example:3128", "control character");
        expect_refused("http://alice:s3cr3t%4@proxy.example:3128", "two hex digits");
        expect_refused("http://alice:s3cr3t%zz@proxy.example:3128", "two hex digits");
        expect_refused("http://alice:s3cr3t[@proxy.example:3128", "percent-encoded");
        expect_refused("http://alice:s3 cr3t@proxy.example:3128", "space");
        expect_refused("http://alice:s3cr3t\xc3\xa9@proxy.example:3128", "non-ASCII");
        expect_refused("http://::1:3128", "without brackets");
        expect_refused("http://[::1:3128", "closing ']'");
        expect_refused("http://[::1]3128", "has no port");
        expect_refused("http://[proxy.example]:3128", "invalid host");
        expect_refused("http://:3128", "invalid host");
        expect_refused("http://pro%78y:3128", "invalid host");
        expect_refused("http://1.2.3.999:3128", "invalid host");
        expect_refused("http://a..b:3128", "invalid host");
        char user[300];
        memset(user, 'u', 256);
        (void) snprintf(user + 256, sizeof(user) - 256, ":s3cr3t@h:1");
        char url[400];
        (void) snprintf(url, sizeof(url), "http://%s", user);
        expect_refused(url, "longer than 255 bytes");
        char big[POLICY_UPSTREAM_URL_MAX + 16];
        memset(big, 'a', sizeof(big) - 1);
        big[sizeof(big) - 1] = '\0';
        memcpy(big, "http://", 7);
        expect_refused(big, "longer than 2048 bytes");
}

/* A buffer too small never holds a partial URL (it could hold part of the password). */
static void test_format_bounds(void **state) {
        (void) state;
        policy_upstream u;
        assert_null(policy_upstream_parse("http://alice:s3cr3t@proxy.example:3128", &u, NULL));
        char buf[30];
        memset(buf, 'x', sizeof(buf));
        assert_int_equal(policy_upstream_format(&u, false, buf, sizeof(buf)), -ENOSPC);
        for (size_t i = 0; i < sizeof(buf); i++)
                assert_int_equal(buf[i], 0);
        assert_int_equal(policy_upstream_format(&u, false, buf, 0), -ENOSPC);
        policy_upstream_wipe(&u);
        static const policy_upstream zero;
        assert_memory_equal(&u, &zero, sizeof(u));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_accepted),
                cmocka_unit_test(test_refused),
                cmocka_unit_test(test_format_bounds),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
