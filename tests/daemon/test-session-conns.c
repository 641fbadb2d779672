/* SPDX-License-Identifier: Apache-2.0 */
/* The join behind the attribution of the proxy's refusals (src/linux/session-host-conns.c,
 * docs/design/daemon.md "Warm sessions"): the endpoint spelling both ends use, the report
 * messages that carry it through a real report channel, and the session host's bounded ring —
 * a newer record for a reused address shadows the old one, an overflow forgets the oldest
 * (which then reaches every exec: unknown), never a wrong exec. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "linux/session-host-internal.h"
#include "report/report.h"

static host H;

static void test_endpoint_spelling(void **state) {
        (void) state;
        char buf[REPORT_ENDPOINT_MAX];
        struct sockaddr_in in = { .sin_family = AF_INET, .sin_port = htons(41234),
                                  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        report_endpoint((struct sockaddr *) &in, sizeof(in), buf);
        assert_string_equal(buf, "127.0.0.1:41234");
        struct sockaddr_in6 in6 = { .sin6_family = AF_INET6, .sin6_port = htons(5),
                                    .sin6_addr = IN6ADDR_LOOPBACK_INIT };
        report_endpoint((struct sockaddr *) &in6, sizeof(in6), buf);
        assert_string_equal(buf, "[::1]:5");
        /* An AF_INET6 client of an IPv4 listener: the proxy sees an IPv4 peer. */
        assert_int_equal(inet_pton(AF_INET6, "::ffff:127.0.0.1", &in6.sin6_addr), 1);
        in6.sin6_port = htons(41234);
        report_endpoint((struct sockaddr *) &in6, sizeof(in6), buf);
        assert_string_equal(buf, "127.0.0.1:41234");
        /* Short or foreign addresses spell nothing (nothing is recorded). */
        report_endpoint((struct sockaddr *) &in, sizeof(in) - 1, buf);
        assert_string_equal(buf, "");
        struct sockaddr sa = { .sa_family = AF_UNIX };
        report_endpoint(&sa, sizeof(sa), buf);
        assert_string_equal(buf, "");
        /* The key: the client and the proxy port, so one client address bound with SO_REUSEADDR
         * to both proxy ports names two connections, not one. */
        report_conn_key((struct sockaddr *) &in, sizeof(in), 3128, buf);
        assert_string_equal(buf, "127.0.0.1:41234>3128");
        report_conn_key((struct sockaddr *) &in, sizeof(in), 1080, buf);
        assert_string_equal(buf, "127.0.0.1:41234>1080");
        report_conn_key(&sa, sizeof(sa), 1080, buf);
        assert_string_equal(buf, "");
}

static void test_messages_carry_the_client(void **state) {
        (void) state;
        int fds[2];
        assert_int_equal(report_channel(fds), 0);
        report_connection(fds[1], 42, "127.0.0.1:41234>3128");
        report_net_violation(fds[1], "http", "a.example:80", "not allowed", "127.0.0.1:41234>3128",
                             NULL);
        report_net_violation(fds[1], "socks5", "b.example:80", "not allowed", NULL, NULL);
        report_net_violation(fds[1], "dns", "c.example", "c.example", NULL, "no paste sites");
        report_violation_action(fds[1], "network-outbound", "connect", "/x", "r", 0, 7);
        report_msg m;
        cordon_violation v;
        assert_int_equal(report_read(fds[0], &m), 1);
        assert_int_equal(m.type, REPORT_CONNECTION);
        assert_int_equal(m.sid, 42);
        assert_false(report_msg_violation(&m, &v)); /* never counted as a refusal */
        assert_string_equal(report_msg_client(&m), "127.0.0.1:41234>3128");
        assert_int_equal(report_read(fds[0], &m), 1);
        assert_true(report_msg_violation(&m, &v));
        assert_string_equal(v.action, "network-outbound");
        assert_string_equal(v.target, "a.example:80");
        assert_string_equal(v.rule, "not allowed");
        assert_string_equal(report_msg_client(&m), "127.0.0.1:41234>3128");
        assert_int_equal(report_read(fds[0], &m), 1);
        assert_true(report_msg_violation(&m, &v));
        assert_string_equal(report_msg_client(&m), "");
        assert_null(v.reason);
        /* A deny entry's reason, after an empty client. */
        assert_int_equal(report_read(fds[0], &m), 1);
        assert_true(report_msg_violation(&m, &v));
        assert_string_equal(report_msg_client(&m), "");
        assert_string_equal(v.reason, "no paste sites");
        /* A supervisor refusal's fourth string is its action, not a client. */
        assert_int_equal(report_read(fds[0], &m), 1);
        assert_string_equal(report_msg_client(&m), "");
        (void) close(fds[0]);
        (void) close(fds[1]);
}

static void test_newest_record_wins(void **state) {
        (void) state;
        memset(&H, 0, sizeof(H));
        pid_t sid = -1;
        assert_false(host_conn_sid(&H, "127.0.0.1:1000", &sid));
        host_conn_record(&H, 10, "127.0.0.1:1000>3128");
        host_conn_record(&H, 20, "127.0.0.1:2000>3128");
        host_conn_record(&H, 30, "[::1]:1000>3128");
        host_conn_record(&H, 35, "127.0.0.1:1000>1080");
        assert_true(host_conn_sid(&H, "127.0.0.1:1000>3128", &sid));
        assert_int_equal(sid, 10);
        assert_true(host_conn_sid(&H, "[::1]:1000>3128", &sid));
        assert_int_equal(sid, 30);
        assert_true(host_conn_sid(&H, "127.0.0.1:1000>1080", &sid));
        assert_int_equal(sid, 35);
        /* The kernel reused the port for another exec's connection: that one counts now. */
        host_conn_record(&H, 40, "127.0.0.1:1000>3128");
        assert_true(host_conn_sid(&H, "127.0.0.1:1000>3128", &sid));
        assert_int_equal(sid, 40);
        assert_true(host_conn_sid(&H, "127.0.0.1:1000>1080", &sid));
        assert_int_equal(sid, 35);
        /* A prefix is not a match; an empty client is never recorded nor found. */
        assert_false(host_conn_sid(&H, "127.0.0.1:1000", &sid));
        host_conn_record(&H, 50, "");
        assert_false(host_conn_sid(&H, "", &sid));
}

static void test_overflow_forgets_the_oldest(void **state) {
        (void) state;
        memset(&H, 0, sizeof(H));
        char c[REPORT_ENDPOINT_MAX];
        pid_t sid = -1;
        host_conn_record(&H, 7, "127.0.0.1:1");
        for (unsigned i = 0; i < HOST_CONNS_MAX - 1; i++) {
                (void) snprintf(c, sizeof(c), "127.0.0.1:%u", 10000 + i);
                host_conn_record(&H, 8, c);
        }
        assert_int_equal(H.n_conns, HOST_CONNS_MAX);
        assert_true(host_conn_sid(&H, "127.0.0.1:1", &sid)); /* still held: exactly full */
        assert_int_equal(sid, 7);
        host_conn_record(&H, 9, "127.0.0.1:2");
        assert_int_equal(H.n_conns, HOST_CONNS_MAX); /* bounded */
        assert_false(host_conn_sid(&H, "127.0.0.1:1", &sid)); /* forgotten: unknown */
        assert_true(host_conn_sid(&H, "127.0.0.1:10000", &sid));
        assert_int_equal(sid, 8);
        assert_true(host_conn_sid(&H, "127.0.0.1:2", &sid));
        assert_int_equal(sid, 9);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_endpoint_spelling),
                cmocka_unit_test(test_messages_carry_the_client),
                cmocka_unit_test(test_newest_record_wins),
                cmocka_unit_test(test_overflow_forgets_the_oldest),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
