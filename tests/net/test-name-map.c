/* SPDX-License-Identifier: Apache-2.0 */
/* The run's synthetic addresses (src/net/name-map.c): one stable address per name, in
 * 198.18.0.0/15 only, mapped back exactly; an address nothing was given is no name; the cap. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "net/name-map.h"

static struct in_addr a4(const char *text) {
        struct in_addr a;
        assert_int_equal(inet_pton(AF_INET, text, &a), 1);
        return a;
}

static void test_both_ways(void **state) {
        (void) state;
        name_map *m = NULL;
        assert_int_equal(name_map_new(&m), 0);
        struct in_addr x, y, again;
        assert_int_equal(name_map_address(m, "github.com", &x), 0);
        assert_int_equal(name_map_address(m, "api.github.com", &y), 0);
        assert_int_equal(name_map_address(m, "github.com", &again), 0);
        assert_int_equal(x.s_addr, again.s_addr);           /* stable for the run */
        assert_int_not_equal(x.s_addr, y.s_addr);
        assert_int_equal(x.s_addr, a4("198.18.0.1").s_addr);
        assert_string_equal(name_map_name(m, x), "github.com");
        assert_string_equal(name_map_name(m, y), "api.github.com");
        assert_int_equal(name_map_count(m), 2);
        /* Inside the range but given to nothing; outside the range. */
        assert_true(name_map_is_synthetic(a4("198.19.255.255")));
        assert_null(name_map_name(m, a4("198.19.255.255")));
        assert_null(name_map_name(m, a4("198.18.0.0")));
        assert_false(name_map_is_synthetic(a4("198.20.0.1")));
        assert_false(name_map_is_synthetic(a4("198.17.255.255")));
        assert_null(name_map_name(m, a4("10.0.0.1")));
        name_map_free(m);
}

static void test_cap(void **state) {
        (void) state;
        name_map *m = NULL;
        assert_int_equal(name_map_new(&m), 0);
        char name[32];
        struct in_addr a, last = { 0 };
        for (unsigned i = 0; i < NAME_MAP_MAX; i++) {
                (void) snprintf(name, sizeof(name), "n%u.test", i);
                assert_int_equal(name_map_address(m, name, &a), 0);
                last = a;
        }
        assert_true(name_map_is_synthetic(last));
        assert_string_equal(name_map_name(m, last), name);
        /* One more is refused; a known one is still answered. */
        assert_int_equal(name_map_address(m, "one-too-many.test", &a), -ENOSPC);
        assert_int_equal(name_map_address(m, "n7.test", &a), 0);
        assert_string_equal(name_map_name(m, a), "n7.test");
        name_map_free(m);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_both_ways),
                cmocka_unit_test(test_cap),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
