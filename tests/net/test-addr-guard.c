/* SPDX-License-Identifier: Apache-2.0 */
/* The resolved-address guard (src/net/addr-guard.c): each class of local address refused,
 * embedded IPv4 forms decoded, public addresses passed; and the policy on top: the localhost and
 * explicit-address exemptions, the "same name, other port" refusal, metadata never exempt. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <sys/un.h>

#include "net/addr-guard.h"

/* An address as a sockaddr (AF_INET for dotted quads, AF_INET6 otherwise). */
static struct sockaddr_storage addr(const char *text) {
        struct sockaddr_storage ss;
        memset(&ss, 0, sizeof(ss));
        struct sockaddr_in *in = (struct sockaddr_in *) &ss;
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *) &ss;
        if (inet_pton(AF_INET, text, &in->sin_addr) == 1) {
                in->sin_family = AF_INET;
                return ss;
        }
        if (inet_pton(AF_INET6, text, &in6->sin6_addr) != 1)
                fail_msg("bad test address %s", text);
        in6->sin6_family = AF_INET6;
        return ss;
}

static void expect_class(const char *text, const net_local_addrs *own, net_addr_class want,
                         const char *reason) {
        struct sockaddr_storage ss = addr(text);
        net_addr_class c = 99;
        const char *why = net_addr_classify((struct sockaddr *) &ss, own, &c);
        if (c != want)
                fail_msg("%s: class %d (%s), want %d", text, c, why ? why : "public", want);
        if (!reason) {
                if (why)
                        fail_msg("%s: refused (%s), want public", text, why);
                return;
        }
        if (!why || !strstr(why, reason))
                fail_msg("%s: reason '%s', want '%s'", text, why ? why : "(none)", reason);
        assert_ptr_equal(net_addr_local_reason((struct sockaddr *) &ss, own), why);
}

static void test_ipv4_classes(void **state) {
        expect_class("127.0.0.1", NULL, NET_ADDR_LOOPBACK, "loopback");
        expect_class("127.255.255.254", NULL, NET_ADDR_LOOPBACK, "loopback");
        expect_class("0.0.0.0", NULL, NET_ADDR_LOCAL, "unspecified");
        expect_class("0.1.2.3", NULL, NET_ADDR_LOCAL, "unspecified");
        expect_class("169.254.1.1", NULL, NET_ADDR_LOCAL, "link-local");
        expect_class("224.0.0.1", NULL, NET_ADDR_LOCAL, "multicast");
        expect_class("239.255.255.250", NULL, NET_ADDR_LOCAL, "multicast");
        expect_class("255.255.255.255", NULL, NET_ADDR_LOCAL, "broadcast");
        expect_class("240.0.0.1", NULL, NET_ADDR_LOCAL, "reserved");
        static const char *const metadata[] = {
                "169.254.169.254", "169.254.170.2",  "169.254.170.23",
                "100.100.100.200", "168.63.129.16",  "192.0.0.192",
        };
        for (size_t i = 0; i < ELEMENTSOF(metadata); i++)
                expect_class(metadata[i], NULL, NET_ADDR_METADATA, "cloud metadata");
        /* Public, and private-use ranges (an internal registry is a legitimate destination
         * once its name is allowed). */
        expect_class("8.8.8.8", NULL, NET_ADDR_PUBLIC, NULL);
        expect_class("10.0.0.1", NULL, NET_ADDR_PUBLIC, NULL);
        expect_class("192.168.1.1", NULL, NET_ADDR_PUBLIC, NULL);
        expect_class("100.100.100.201", NULL, NET_ADDR_PUBLIC, NULL);
        expect_class("223.255.255.255", NULL, NET_ADDR_PUBLIC, NULL);
        expect_class("1.0.0.0", NULL, NET_ADDR_PUBLIC, NULL);
}

static void test_own_addresses(void **state) {
        net_local_addrs own = { 0 };
        struct sockaddr_storage a = addr("192.0.2.10"), b = addr("2001:db8::10");
        struct sockaddr_un un = { .sun_family = AF_UNIX };
        assert_int_equal(net_local_addrs_add(&own, (struct sockaddr *) &a), 0);
        assert_int_equal(net_local_addrs_add(&own, (struct sockaddr *) &b), 0);
        assert_int_equal(net_local_addrs_add(&own, (struct sockaddr *) &un), 0); /* ignored */
        assert_int_equal(net_local_addrs_add(&own, NULL), 0);
        assert_int_equal(own.n_v4, 1);
        assert_int_equal(own.n_v6, 1);
        expect_class("192.0.2.10", &own, NET_ADDR_LOCAL, "this host's own address");
        expect_class("::ffff:192.0.2.10", &own, NET_ADDR_LOCAL, "this host's own address");
        expect_class("2001:db8::10", &own, NET_ADDR_LOCAL, "this host's own address");
        expect_class("192.0.2.11", &own, NET_ADDR_PUBLIC, NULL);
        expect_class("2001:db8::11", &own, NET_ADDR_PUBLIC, NULL);
        expect_class("192.0.2.10", NULL, NET_ADDR_PUBLIC, NULL);
        net_local_addrs_free(&own);
        assert_null(own.v4);
        net_local_addrs_free(NULL);

        /* The real interfaces: loopback is always among them. */
        net_local_addrs real = { 0 };
        assert_int_equal(net_local_addrs_load(&real), 0);
        bool lo = false;
        for (size_t i = 0; i < real.n_v4; i++)
                lo |= ntohl(real.v4[i].s_addr) == INADDR_LOOPBACK;
        assert_true(lo);
        net_local_addrs_free(&real);
}

static void test_ipv6_classes(void **state) {
        expect_class("::1", NULL, NET_ADDR_LOOPBACK, "loopback");
        expect_class("::", NULL, NET_ADDR_LOCAL, "unspecified");
        expect_class("fe80::1", NULL, NET_ADDR_LOCAL, "link-local");
        expect_class("febf::1", NULL, NET_ADDR_LOCAL, "link-local");
        expect_class("ff02::1", NULL, NET_ADDR_LOCAL, "multicast");
        expect_class("fd00:ec2::254", NULL, NET_ADDR_METADATA, "cloud metadata");
        expect_class("fd00:ec2::23", NULL, NET_ADDR_METADATA, "cloud metadata");
        expect_class("fd00:ec2:1::1", NULL, NET_ADDR_METADATA, "cloud metadata");
        /* IPv4-mapped: exactly the IPv4 verdict. */
        expect_class("::ffff:127.0.0.1", NULL, NET_ADDR_LOOPBACK, "loopback");
        expect_class("::ffff:169.254.169.254", NULL, NET_ADDR_METADATA, "cloud metadata");
        expect_class("::ffff:0.0.0.0", NULL, NET_ADDR_LOCAL, "unspecified");
        expect_class("::ffff:8.8.8.8", NULL, NET_ADDR_PUBLIC, NULL);
        /* Translated forms: judged by what they embed. */
        expect_class("64:ff9b::a9fe:a9fe", NULL, NET_ADDR_METADATA, "cloud metadata");
        expect_class("64:ff9b::7f00:1", NULL, NET_ADDR_LOCAL, "embedding a local");
        expect_class("64:ff9b::808:808", NULL, NET_ADDR_PUBLIC, NULL);
        expect_class("64:ff9b:1:7f00:0:100::", NULL, NET_ADDR_LOCAL, "embedding a local");
        expect_class("64:ff9b:1:0:7f:0:100:0", NULL, NET_ADDR_LOCAL, "embedding a local");
        expect_class("64:ff9b:1::808:808", NULL, NET_ADDR_PUBLIC, NULL);
        expect_class("2002:7f00:1::1", NULL, NET_ADDR_LOCAL, "embedding a local");
        expect_class("2002:a9fe:a9fe::1", NULL, NET_ADDR_METADATA, "cloud metadata");
        expect_class("2002:808:808::1", NULL, NET_ADDR_PUBLIC, NULL);
        expect_class("::127.0.0.1", NULL, NET_ADDR_LOCAL, "embedding a local");
        expect_class("::ffff:0:127.0.0.1", NULL, NET_ADDR_LOCAL, "embedding a local");
        expect_class("2001:4860:4860::8888", NULL, NET_ADDR_PUBLIC, NULL);
        expect_class("fd00::1", NULL, NET_ADDR_PUBLIC, NULL); /* ULA: private use, like 10/8 */

        struct sockaddr_un un = { .sun_family = AF_UNIX };
        net_addr_class c;
        assert_string_equal(net_addr_classify((struct sockaddr *) &un, NULL, &c),
                            "not an IP address");
        assert_int_equal(c, NET_ADDR_LOCAL);
        assert_string_equal(net_addr_local_reason(NULL, NULL), "not an IP address");
}

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

/* egress_check_address for host:port resolved to `resolved`; NULL reason = dial. */
static void expect_dial(const egress_rules *r, const char *host, uint16_t port,
                        const char *resolved, const net_local_addrs *own, const char *reason) {
        net_host h;
        assert_int_equal(net_host_canon(host, strlen(host), &h, NULL), 0);
        struct sockaddr_storage ss = addr(resolved);
        const char *why = egress_check_address(r, &h, port, (struct sockaddr *) &ss, own);
        if (!reason && why)
                fail_msg("%s:%u via %s refused (%s), want dialled", host, port, resolved, why);
        if (reason && (!why || !strstr(why, reason)))
                fail_msg("%s:%u via %s: '%s', want refused with '%s'", host, port, resolved,
                         why ? why : "dialled", reason);
}

static void test_policy(void **state) {
        _cleanup_egress_rules_ egress_rules *r = rules(
                true,
                (const char *const[]) { "*.example.com", "localhost:3000", "*.localhost",
                                        "app.test", "127.0.0.1:4000", "[::1]:5000",
                                        "192.0.2.99", "[fd00:ec2::1]", "0.0.0.0:6000", NULL },
                (const char *const[]) { "203.0.113.7", "198.51.100.1:443", NULL });
        net_local_addrs own = { 0 };
        struct sockaddr_storage mine = addr("192.0.2.99"), other = addr("192.0.2.98");
        assert_int_equal(net_local_addrs_add(&own, (struct sockaddr *) &mine), 0);
        assert_int_equal(net_local_addrs_add(&own, (struct sockaddr *) &other), 0);

        /* An allowed wildcard whose DNS points home is refused (rebinding, hostile zone). */
        expect_dial(r, "evil.example.com", 443, "127.0.0.1", &own, "loopback");
        expect_dial(r, "evil.example.com", 443, "::1", &own, "loopback");
        expect_dial(r, "evil.example.com", 443, "::ffff:127.0.0.2", &own, "loopback");
        expect_dial(r, "evil.example.com", 443, "169.254.0.1", &own, "link-local");
        expect_dial(r, "evil.example.com", 443, "0.0.0.0", &own, "unspecified");
        expect_dial(r, "evil.example.com", 443, "192.0.2.98", &own, "own address");
        expect_dial(r, "evil.example.com", 443, "64:ff9b::7f00:1", &own, "embedding");
        expect_dial(r, "www.example.com", 443, "93.184.215.14", &own, NULL);
        expect_dial(r, "www.example.com", 443, "2606:2800:21f:cb07:6820:80da:af6b:8b2c", &own,
                    NULL);

        /* localhost names may resolve to loopback, on the ports the allowlist opened. */
        expect_dial(r, "localhost", 3000, "127.0.0.1", &own, NULL);
        expect_dial(r, "localhost", 3000, "::1", &own, NULL);
        expect_dial(r, "web.localhost", 8080, "127.0.0.1", &own, NULL);
        expect_dial(r, "localhost", 3000, "192.0.2.98", &own, "own address");
        expect_dial(r, "localhost", 3000, "169.254.0.1", &own, "link-local");

        /* An explicit address entry opens that address and port, also through a name mapped
         * to it; the same name on another local port stays refused. */
        expect_dial(r, "app.test", 4000, "127.0.0.1", &own, NULL);
        expect_dial(r, "app.test", 4000, "::ffff:127.0.0.1", &own, NULL);
        expect_dial(r, "app.test", 4001, "127.0.0.1", &own, "loopback");
        expect_dial(r, "app.test", 4000, "127.0.0.2", &own, "loopback");
        expect_dial(r, "app.test", 5000, "::1", &own, NULL);
        expect_dial(r, "app.test", 5001, "::1", &own, "loopback");
        expect_dial(r, "127.0.0.1", 4000, "127.0.0.1", &own, NULL);
        expect_dial(r, "app.test", 6000, "0.0.0.0", &own, NULL);
        expect_dial(r, "app.test", 6001, "0.0.0.0", &own, "unspecified");
        /* An address entry without a port exempts that address on every port. */
        expect_dial(r, "app.test", 22, "192.0.2.99", &own, NULL);
        expect_dial(r, "app.test", 5432, "192.0.2.99", &own, NULL);
        expect_dial(r, "app.test", 22, "192.0.2.98", &own, "own address");

        /* Metadata: never exempt, not even by an address entry that names it. */
        expect_dial(r, "app.test", 80, "fd00:ec2::1", &own, "cloud metadata");
        expect_dial(r, "localhost", 3000, "169.254.169.254", &own, "deny list");
        expect_dial(r, "evil.example.com", 80, "100.100.100.200", &own, "deny list");
        expect_dial(r, "evil.example.com", 80, "64:ff9b::a9fe:a9fe", &own, "deny list");
        expect_dial(r, "evil.example.com", 80, "::ffff:169.254.170.2", &own, "deny list");
        expect_dial(r, "evil.example.com", 80, "169.254.169.253", &own, "link-local");

        /* Deny-list address entries apply to resolved addresses, embedded forms included. */
        expect_dial(r, "www.example.com", 443, "203.0.113.7", &own, "deny list");
        expect_dial(r, "www.example.com", 443, "64:ff9b::cb00:7107", &own, "deny list");
        expect_dial(r, "www.example.com", 443, "2002:cb00:7107::1", &own, "deny list");
        expect_dial(r, "www.example.com", 443, "198.51.100.1", &own, "deny list");
        expect_dial(r, "www.example.com", 80, "198.51.100.1", &own, NULL);

        /* Bad input. */
        net_host h;
        assert_int_equal(net_host_canon("localhost", 9, &h, NULL), 0);
        struct sockaddr_un un = { .sun_family = AF_UNIX };
        struct sockaddr_storage lo = addr("127.0.0.1");
        assert_string_equal(egress_check_address(r, &h, 3000, (struct sockaddr *) &un, &own),
                            "invalid destination");
        assert_string_equal(egress_check_address(r, &h, 0, (struct sockaddr *) &lo, &own),
                            "invalid destination");
        assert_string_equal(egress_check_address(NULL, &h, 3000, (struct sockaddr *) &lo, &own),
                            "invalid destination");
        net_local_addrs_free(&own);
}

static void test_policy_network_disabled(void **state) {
        /* With the network off the allow side is empty: no address entry exempts anything. */
        _cleanup_egress_rules_ egress_rules *r =
                rules(false, (const char *const[]) { "127.0.0.1:4000", NULL }, NULL);
        expect_dial(r, "app.test", 4000, "127.0.0.1", NULL, "loopback");
        expect_dial(r, "www.example.com", 443, "8.8.8.8", NULL, NULL);
        expect_dial(r, "www.example.com", 443, "169.254.169.254", NULL, "deny list");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_ipv4_classes),
                cmocka_unit_test(test_own_addresses),
                cmocka_unit_test(test_ipv6_classes),
                cmocka_unit_test(test_policy),
                cmocka_unit_test(test_policy_network_disabled),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
