/* SPDX-License-Identifier: Apache-2.0 */
/* The bounded reader (read_fd_bounded, read_file_at in src/util/util.h) that policy, settings,
 * trust store, git config and procfs reads share: the cap at and around its boundary (also
 * below the first buffer's size), and the flags that refuse FIFOs, symlinks and NUL bytes. */
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "tmptree.h"
#include "util/util.h"

static void write_bytes(const char *path, char c, size_t n) {
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        for (size_t i = 0; i < n; i++)
                assert_int_equal(fputc(c, f), c);
        assert_int_equal(fclose(f), 0);
}

static int read_n(const char *path, size_t max, unsigned flags, size_t *ret_len) {
        char *s = NULL;
        int r = read_file_at(AT_FDCWD, path, max, flags, &s, ret_len);
        if (r == 0) {
                assert_int_equal(s[*ret_len], '\0');
                free(s);
        } else
                assert_null(s);
        return r;
}

static void test_cap(void **state) {
        char *t = tmptree_new();
        const char *f = tmptree_at(t, "f");
        static const size_t caps[] = { 0, 1, 64, 4095, 4096, 4097, 10000 };
        for (size_t i = 0; i < ELEMENTSOF(caps); i++) {
                size_t len = 99;
                write_bytes(f, 'x', caps[i]);
                assert_int_equal(read_n(f, caps[i], 0, &len), 0); /* exactly the cap */
                assert_int_equal(len, caps[i]);
                write_bytes(f, 'x', caps[i] + 1);
                assert_int_equal(read_n(f, caps[i], 0, &len), -EFBIG);
                assert_int_equal(read_n(f, caps[i] + 1, 0, &len), 0);
                assert_int_equal(len, caps[i] + 1);
        }
        assert_int_equal(read_n(tmptree_at(t, "missing"), 10, 0, &(size_t) { 0 }), -ENOENT);
        tmptree_remove(t);
}

static void test_flags(void **state) {
        char *t = tmptree_new();
        tmptree_file(t, "text", "a\nb\n");
        tmptree_symlink(t, "link", "text");
        const char *fifo = tmptree_at(t, "fifo");
        assert_int_equal(mkfifo(fifo, 0600), 0);
        size_t len = 0;
        assert_int_equal(read_n(tmptree_at(t, "link"), 64, READ_FILE_REGULAR, &len), 0);
        assert_int_equal(len, 4);
        assert_int_equal(read_n(tmptree_at(t, "link"), 64, READ_FILE_NOFOLLOW, &len), -ELOOP);
        /* No writer: without READ_FILE_REGULAR's O_NONBLOCK this would hang. */
        assert_int_equal(read_n(fifo, 64, READ_FILE_REGULAR, &len), -EINVAL);
        assert_int_equal(read_n(t, 64, READ_FILE_REGULAR, &len), -EINVAL);
        FILE *f = fopen(tmptree_at(t, "nul"), "w");
        assert_non_null(f);
        assert_int_equal(fwrite("a\0b", 1, 3, f), 3);
        assert_int_equal(fclose(f), 0);
        assert_int_equal(read_n(tmptree_at(t, "nul"), 64, 0, &len), 0);
        assert_int_equal(len, 3);
        assert_int_equal(read_n(tmptree_at(t, "nul"), 64, READ_FILE_TEXT, &len), -EINVAL);
        tmptree_remove(t);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_cap),
                cmocka_unit_test(test_flags),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
