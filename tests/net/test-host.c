/* SPDX-License-Identifier: Apache-2.0 */
/* The host canonicaliser (src/util/host.c): every spelling of one destination becomes one text,
 * and every byte sequence a later parser could read differently is refused. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>

#include <cmocka.h>

#include <arpa/inet.h>

#include "util/host.h"
#include "util/util.h"

/* Canonicalises a NUL-terminated host; asserts success, kind and text. */
static void canon_ok(const char *in, net_host_kind kind, const char *want) {
        net_host h;
        const char *why = "unset";
        int r = net_host_canon(in, strlen(in), &h, &why);
        if (r < 0)
                fail_msg("'%s' refused: %s", in, why);
        assert_null(why);
        if (h.kind != kind || strcmp(h.text, want) != 0)
                fail_msg("'%s' → kind %d '%s', want kind %d '%s'", in, h.kind, h.text, kind, want);
}

/* Asserts that s[0..len) is refused and the reason contains `reason`. */
static void canon_bad_len(const char *s, size_t len, const char *reason) {
        net_host h;
        const char *why = NULL;
        int r = net_host_canon(s, len, &h, &why);
        if (r != -EINVAL)
                fail_msg("'%.*s' accepted as '%s'", (int) len, s, h.text);
        assert_non_null(why);
        if (reason && !strstr(why, reason))
                fail_msg("'%.*s' refused with '%s', want '%s'", (int) len, s, why, reason);
        assert_string_equal(h.text, ""); /* zeroed on failure */
}

static void canon_bad(const char *s, const char *reason) {
        canon_bad_len(s, strlen(s), reason);
}

static void test_names(void **state) {
        canon_ok("example.com", NET_HOST_NAME, "example.com");
        canon_ok("Example.COM.", NET_HOST_NAME, "example.com");
        canon_ok("API.anthropic.com", NET_HOST_NAME, "api.anthropic.com");
        canon_ok("a_b-c.example", NET_HOST_NAME, "a_b-c.example");
        canon_ok("xn--bcher-kva.example", NET_HOST_NAME, "xn--bcher-kva.example");
        canon_ok("localhost", NET_HOST_NAME, "localhost");
        canon_ok("123.example.com", NET_HOST_NAME, "123.example.com");
        canon_ok("1.2.3.4.example.com", NET_HOST_NAME, "1.2.3.4.example.com");
        canon_ok("example.0x1g", NET_HOST_NAME, "example.0x1g"); /* not a number: a name */

        /* Lengths: 63-byte labels and 253-byte names are the limits. */
        char label[80], name[300];
        memset(label, 'a', 63);
        label[63] = '\0';
        snprintf(name, sizeof(name), "%s.com", label);
        canon_ok(name, NET_HOST_NAME, name);
        memset(label, 'a', 64);
        label[64] = '\0';
        snprintf(name, sizeof(name), "%s.com", label);
        canon_bad(name, "label longer than 63");
        /* 4 × 63 + 3 dots = 255 > 253; 63+63+63+61 + 3 = 253. */
        memset(name, 'b', sizeof(name));
        for (size_t i = 63; i < 253; i += 64)
                name[i] = '.';
        name[253] = '\0';
        canon_ok(name, NET_HOST_NAME, name);
        name[253] = '.';
        name[254] = '\0'; /* 253 bytes and the root dot */
        net_host h;
        assert_int_equal(net_host_canon(name, 254, &h, NULL), 0);
        name[253] = 'b';
        name[254] = '\0';
        canon_bad(name, "longer than 253");
        memset(name, 'c', sizeof(name));
        canon_bad_len(name, 256, "longer than 253");
}

static void test_names_refused(void **state) {
        canon_bad("", "empty");
        canon_bad_len("allowed.com\0.evil.com", 21, "NUL");
        canon_bad_len("\0", 1, "NUL");
        canon_bad("allowed.com\r\nX-Injected: 1", "CR or LF");
        canon_bad("allowed.com\n", "CR or LF");
        canon_bad("a\tb.com", "control");
        canon_bad("a\x7f.com", "control");
        canon_bad("allowed.com evil.com", "space");
        canon_bad(" allowed.com", "space");
        canon_bad("b\xc3\xbc" "cher.example", "non-ASCII");
        canon_bad("user@allowed.com", "cannot contain");
        canon_bad("evil.com@allowed.com", "cannot contain");
        canon_bad("allowed.com/evil", "cannot contain");
        canon_bad("allowed.com\\evil", "cannot contain");
        canon_bad("allowed.com#x", "cannot contain");
        canon_bad("allowed.com?x", "cannot contain");
        canon_bad("allowed%2ecom", "cannot contain");
        canon_bad("*.example.com", "cannot contain");
        canon_bad("a..b", "empty label");
        canon_bad(".a.com", "empty label");
        canon_bad("a.com..", "empty label");
        canon_bad(".", "empty label");
        canon_bad("-oproxycommand.example", "begins with '-'");
        canon_bad("]x", "cannot contain");
        canon_bad("[::1", "closing");
}

static void test_ipv4_forms(void **state) {
        static const char *const loopback[] = {
                "127.0.0.1", "127.1",        "127.0.1",      "2130706433",
                "0x7f.1",    "0x7F.1",       "017700000001", "0x7f000001",
                "0177.0.0.1", "127.0.0.1.",  "0x7f.0.0.0x1", "127.0.0.01",
        };
        for (size_t i = 0; i < ELEMENTSOF(loopback); i++)
                canon_ok(loopback[i], NET_HOST_IPV4, "127.0.0.1");
        canon_ok("1.2.3.4", NET_HOST_IPV4, "1.2.3.4");
        canon_ok("0", NET_HOST_IPV4, "0.0.0.0");
        canon_ok("4294967295", NET_HOST_IPV4, "255.255.255.255");
        canon_ok("2852039166", NET_HOST_IPV4, "169.254.169.254");
        canon_ok("0xa9.0xfe.0xa9.0xfe", NET_HOST_IPV4, "169.254.169.254");
        canon_ok("169.254.43518", NET_HOST_IPV4, "169.254.169.254");

        net_host h;
        assert_int_equal(net_host_canon("10.1.2.3", 8, &h, NULL), 0);
        assert_int_equal(ntohl(h.v4.s_addr), 0x0a010203);

        /* A numeric last label is an address attempt: refused unless it parses. */
        static const char *const bad[] = {
                "1.2.3.4.5", "256.1.1.1", "1.2.3.256", "1.2.65536", "4294967296",
                "08",        "0x",        "1.0x",      "1.2.3.999", "example.123",
                "a.0x10",    "09.1.1.1",  "1..1",      "99999999999999999999",
        };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                canon_bad(bad[i], NULL);
        canon_bad("example.123", "looks like an IPv4 address");
}

static void test_ipv6_forms(void **state) {
        canon_ok("::1", NET_HOST_IPV6, "::1");
        canon_ok("[::1]", NET_HOST_IPV6, "::1");
        canon_ok("[0:0:0:0:0:0:0:1]", NET_HOST_IPV6, "::1");
        canon_ok("::", NET_HOST_IPV6, "::");
        canon_ok("2001:DB8::1", NET_HOST_IPV6, "2001:db8::1");
        canon_ok("2001:0db8:0000:0000:0000:0000:0000:0001", NET_HOST_IPV6, "2001:db8::1");
        /* RFC 5952 §4.2: longest run, first on a tie, never a single zero field. */
        canon_ok("2001:db8:0:0:1:0:0:1", NET_HOST_IPV6, "2001:db8::1:0:0:1");
        canon_ok("2001:0:0:1:0:0:0:1", NET_HOST_IPV6, "2001:0:0:1::1");
        canon_ok("2001:db8:0:1:1:1:1:1", NET_HOST_IPV6, "2001:db8:0:1:1:1:1:1");
        canon_ok("1:0:0:0:0:0:0:0", NET_HOST_IPV6, "1::");
        canon_ok("fd00:ec2::254", NET_HOST_IPV6, "fd00:ec2::254");
        /* IPv4-mapped addresses are the IPv4 address. */
        canon_ok("::ffff:127.0.0.1", NET_HOST_IPV4, "127.0.0.1");
        canon_ok("[::ffff:7f00:1]", NET_HOST_IPV4, "127.0.0.1");
        canon_ok("[::FFFF:169.254.169.254]", NET_HOST_IPV4, "169.254.169.254");
        /* Other embeddings stay IPv6 (the address guard judges what they embed). */
        canon_ok("64:ff9b::a9fe:a9fe", NET_HOST_IPV6, "64:ff9b::a9fe:a9fe");
        canon_ok("::127.0.0.1", NET_HOST_IPV6, "::7f00:1");

        canon_bad("fe80::1%eth0", "zone id");
        canon_bad("[fe80::1%25eth0]", "zone id");
        canon_bad("[1.2.3.4]", "IPv6");
        canon_bad("[example.com]", "IPv6");
        canon_bad("1:2:3:4:5:6:7:8:9", "IPv6");
        canon_bad("::1]", "IPv6");
        canon_bad("[]", "IPv6");
        canon_bad("[::1]:80", NULL); /* a port is not part of a host */
        canon_bad("example.com:443", "IPv6");
        canon_bad("::ffff:1.2.3.04", "IPv6");
}

static void hostport_ok(const char *in, uint16_t def, const char *host, uint16_t port) {
        net_host h;
        uint16_t p = 1;
        const char *why = NULL;
        if (net_host_parse_hostport(in, strlen(in), def, &h, &p, &why) < 0)
                fail_msg("'%s' refused: %s", in, why);
        assert_string_equal(h.text, host);
        assert_int_equal(p, port);
}

static void hostport_bad(const char *in, uint16_t def, const char *reason) {
        net_host h;
        uint16_t p = 1;
        const char *why = NULL;
        if (net_host_parse_hostport(in, strlen(in), def, &h, &p, &why) == 0)
                fail_msg("'%s' accepted as %s port %u", in, h.text, p);
        assert_int_equal(p, 0);
        assert_string_equal(h.text, "");
        if (reason && !strstr(why, reason))
                fail_msg("'%s' refused with '%s', want '%s'", in, why, reason);
}

static void test_hostport(void **state) {
        hostport_ok("example.com:443", 0, "example.com", 443);
        hostport_ok("Example.com.:443", 0, "example.com", 443);
        hostport_ok("example.com", 80, "example.com", 80);
        hostport_ok("example.com:65535", 0, "example.com", 65535);
        hostport_ok("example.com:080", 0, "example.com", 80);
        hostport_ok("[::1]:8080", 0, "::1", 8080);
        hostport_ok("[::1]", 80, "::1", 80);
        hostport_ok("127.1:3000", 0, "127.0.0.1", 3000);
        hostport_ok("[::ffff:127.0.0.1]:3000", 0, "127.0.0.1", 3000);

        hostport_bad("example.com", 0, "needs a port");
        hostport_bad("example.com:", 0, "empty port");
        hostport_bad("example.com:0", 0, "outside 1-65535");
        hostport_bad("example.com:65536", 0, "outside 1-65535");
        hostport_bad("example.com:100000", 0, "above 65535");
        hostport_bad("example.com:+80", 0, "not a decimal");
        hostport_bad("example.com:80 ", 0, "not a decimal");
        hostport_bad("example.com:8a", 0, "not a decimal");
        hostport_bad("::1:80", 0, "without brackets");
        hostport_bad("[::1]x", 80, "after ']'");
        hostport_bad("[::1]:", 0, "empty port");
        hostport_bad("[::1", 80, "closing");
        hostport_bad("user@example.com:80", 0, "cannot contain");
        hostport_bad(":80", 0, "empty");
        hostport_bad("", 80, "empty");

        /* SOCKS5-style length-prefixed input with an embedded NUL. */
        net_host h;
        uint16_t p;
        const char *why;
        assert_int_equal(net_host_parse_hostport("a.com\0:443", 10, 0, &h, &p, &why), -EINVAL);
        assert_non_null(strstr(why, "NUL"));

        /* Bare IPv6 is a pattern-only form of the splitter. */
        size_t host_len;
        assert_int_equal(net_hostport_split("fd00:ec2::254", 13, true, &host_len, &p, &why), 0);
        assert_int_equal(host_len, 13);
        assert_int_equal(p, 0);
        assert_int_equal(net_hostport_split("fd00:ec2::254", 13, false, &host_len, &p, &why),
                         -EINVAL);
}

static void test_sockaddr_and_embedding(void **state) {
        struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6 };
        struct sockaddr_in sin = { .sin_family = AF_INET };
        net_host h;
        assert_int_equal(inet_pton(AF_INET6, "::ffff:10.0.0.1", &sin6.sin6_addr), 1);
        assert_int_equal(net_host_from_sockaddr((struct sockaddr *) &sin6, &h), 0);
        assert_int_equal(h.kind, NET_HOST_IPV4);
        assert_string_equal(h.text, "10.0.0.1");
        assert_int_equal(inet_pton(AF_INET6, "2001:db8::1", &sin6.sin6_addr), 1);
        assert_int_equal(net_host_from_sockaddr((struct sockaddr *) &sin6, &h), 0);
        assert_int_equal(h.kind, NET_HOST_IPV6);
        assert_string_equal(h.text, "2001:db8::1");
        assert_int_equal(inet_pton(AF_INET, "192.0.2.1", &sin.sin_addr), 1);
        assert_int_equal(net_host_from_sockaddr((struct sockaddr *) &sin, &h), 0);
        assert_string_equal(h.text, "192.0.2.1");
        struct sockaddr un = { .sa_family = AF_UNIX };
        assert_int_equal(net_host_from_sockaddr(&un, &h), -EAFNOSUPPORT);

        static const struct {
                const char *v6;
                size_t n;
                const char *v4[2];
        } cases[] = {
                { "::ffff:127.0.0.1", 1, { "127.0.0.1" } },
                { "::ffff:0:127.0.0.1", 1, { "127.0.0.1" } },
                { "::169.254.169.254", 1, { "169.254.169.254" } },
                { "64:ff9b::a9fe:a9fe", 1, { "169.254.169.254" } },
                { "2002:7f00:1::1", 1, { "127.0.0.1" } },
                { "64:ff9b:1:7f00:0:100::", 2, { "0.0.0.0", "0.1.0.0" } },
                { "64:ff9b:1:0:7f:0:100:0", 2, { "1.0.0.0", "127.0.0.1" } },
                { "64:ff9b:1::808:808", 1, { "8.8.8.8" } },
                { "::1", 0, { NULL } },
                { "::", 0, { NULL } },
                { "2001:db8::1", 0, { NULL } },
                { "64:ff9b:2::1", 0, { NULL } },
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct in6_addr a;
                struct in_addr out[2];
                char text[INET_ADDRSTRLEN];
                assert_int_equal(inet_pton(AF_INET6, cases[i].v6, &a), 1);
                size_t n = net_v6_embedded_v4(&a, out);
                if (n != cases[i].n)
                        fail_msg("%s: %zu embedded, want %zu", cases[i].v6, n, cases[i].n);
                for (size_t j = 0; j < n; j++) {
                        assert_non_null(inet_ntop(AF_INET, &out[j], text, sizeof(text)));
                        assert_string_equal(text, cases[i].v4[j]);
                }
        }
}

static void test_localhost(void **state) {
        static const struct {
                const char *host;
                bool want;
        } cases[] = {
                { "localhost", true },     { "LOCALHOST.", true },   { "app.localhost", true },
                { "a.b.localhost", true }, { "xlocalhost", false },  { "localhost.com", false },
                { "127.0.0.1", false },    { "localhost.evil", false },
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                net_host h;
                assert_int_equal(net_host_canon(cases[i].host, strlen(cases[i].host), &h, NULL), 0);
                if (net_host_is_localhost(&h) != cases[i].want)
                        fail_msg("%s: is_localhost %d", cases[i].host, !cases[i].want);
        }
        assert_false(net_host_is_localhost(NULL));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_names),
                cmocka_unit_test(test_names_refused),
                cmocka_unit_test(test_ipv4_forms),
                cmocka_unit_test(test_ipv6_forms),
                cmocka_unit_test(test_hostport),
                cmocka_unit_test(test_sockaddr_and_embedding),
                cmocka_unit_test(test_localhost),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
