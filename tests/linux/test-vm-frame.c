/* SPDX-License-Identifier: Apache-2.0 */
/* The microvm channel's frames (src/linux/vm-frame.c, docs/design/microvm.md "Channels"): the
 * guest's frames read back in order and across any split, every violation refused for good, and
 * the EXEC payload's layout. fuzz/fuzz-vm-frame.c drives the reader with arbitrary input. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "linux/vm-frame.h"

/* A frame of exec `id`. */
static size_t frame_of(uint8_t *out, vm_frame_type type, uint32_t id, const void *payload,
                       size_t size) {
        vm_frame_header(out, type, id, size);
        memcpy(out + VM_FRAME_HEADER, payload, size);
        return VM_FRAME_HEADER + size;
}

/* A frame of exec 1, or the agent's own (READY, ERROR). */
static size_t frame(uint8_t *out, vm_frame_type type, const void *payload, size_t size) {
        bool agent = type == VM_FRAME_READY || type == VM_FRAME_ERROR;
        return frame_of(out, type, agent ? VM_FRAME_AGENT : 1, payload, size);
}

static size_t exit_of(uint8_t *out, uint32_t id, uint32_t kind, uint32_t value) {
        uint8_t p[8] = { (uint8_t) kind, 0, 0, 0, (uint8_t) value, (uint8_t) (value >> 8), 0, 0 };
        return frame_of(out, VM_FRAME_EXIT, id, p, sizeof(p));
}

static size_t exit_frame(uint8_t *out, uint32_t kind, uint32_t value) {
        return exit_of(out, 1, kind, value);
}

static vm_frame_reader reader;

/* A reader on which the host opened exec 1. */
static void reader_init(void) {
        vm_frame_reader_init(&reader);
        assert_int_equal(vm_frame_reader_open(&reader, 1), 0);
}

static void test_frames_in_order_across_splits(void **state) {
        (void) state;
        uint8_t in[128];
        size_t n = frame(in, VM_FRAME_STDOUT, "out\n", 4);
        n += frame(in + n, VM_FRAME_STDERR, "err", 3);
        n += exit_frame(in + n, 1, 15);
        for (size_t split = 0; split <= n; split++) {
                reader_init();
                vm_frame f;
                assert_int_equal(vm_frame_feed(&reader, in, split), (long) split);
                int got = 0, k;
                while ((k = vm_frame_next(&reader, &f)) == 1)
                        got++;
                assert_int_equal(k, 0);
                assert_int_equal(vm_frame_feed(&reader, in + split, n - split), (long) (n - split));
                while ((k = vm_frame_next(&reader, &f)) == 1) {
                        got++;
                        if (got == 1)
                                assert_memory_equal(f.data, "out\n", 4);
                        if (got == 3) {
                                assert_int_equal(f.type, VM_FRAME_EXIT);
                                assert_true(f.signaled);
                                assert_int_equal(f.value, 15);
                        }
                }
                assert_int_equal(k, 0);
                assert_int_equal(got, 3);
        }
}

/* READY first and empty; END is the host's; vm_frame_pending() sees bytes beyond the exit. */
static void test_ready_end_pending(void **state) {
        (void) state;
        uint8_t in[128];
        size_t n = frame(in, VM_FRAME_READY, "", 0);
        n += frame(in + n, VM_FRAME_STDOUT, "x", 1);
        n += exit_frame(in + n, 0, 3);
        size_t whole = n;
        n += frame(in + n, VM_FRAME_STDOUT, "y", 1);
        reader_init();
        vm_frame f;
        assert_int_equal(vm_frame_feed(&reader, in, n), (long) n);
        assert_int_equal(vm_frame_next(&reader, &f), 1);
        assert_int_equal(f.type, VM_FRAME_READY);
        assert_int_equal(vm_frame_next(&reader, &f), 1);
        assert_int_equal(vm_frame_next(&reader, &f), 1);
        assert_int_equal(f.type, VM_FRAME_EXIT);
        assert_int_equal(vm_frame_pending(&reader), n - whole);
        reader_init();
        assert_int_equal(vm_frame_feed(&reader, in, whole), (long) whole);
        for (int i = 0; i < 3; i++)
                assert_int_equal(vm_frame_next(&reader, &f), 1);
        assert_int_equal(vm_frame_pending(&reader), 0);
}

static void expect_refused(const uint8_t *in, size_t n, const char *why) {
        reader_init();
        vm_frame f;
        assert_int_equal(vm_frame_feed(&reader, in, n), (long) n);
        int k;
        while ((k = vm_frame_next(&reader, &f)) == 1)
                ;
        assert_int_equal(k, -EPROTO);
        assert_non_null(strstr(reader.why, why));
        assert_int_equal(vm_frame_next(&reader, &f), -EPROTO); /* for good */
        assert_int_equal(vm_frame_feed(&reader, in, 1), -EPROTO);
}

static void test_violations(void **state) {
        (void) state;
        uint8_t in[128];
        size_t n;
        expect_refused((const uint8_t *) "\0\0\0\0\x10\x01\0\0\0", 9, "frame length of 0");
        n = frame(in, VM_FRAME_STDOUT, "x", 1);
        n += frame(in + n, VM_FRAME_READY, "", 0);
        expect_refused(in, n, "a ready frame that is not the first");
        n = frame(in, VM_FRAME_READY, "x", 1);
        expect_refused(in, n, "a ready frame that is not the first or not empty");
        n = frame(in, VM_FRAME_END, "", 0);
        expect_refused(in, n, "type 6, which a guest does not send");
        expect_refused((const uint8_t *) "\x06\0\x01\0\x10\x01\0\0\0", 9,
                       "frame length of 65542");
        n = frame(in, VM_FRAME_EXEC, "ls", 2);
        expect_refused(in, n, "type 1, which a guest does not send");
        n = frame(in, VM_FRAME_RESIZE, "\x18\0\x50\0", 4); /* the host's, never the guest's */
        expect_refused(in, n, "type 5, which a guest does not send");
        n = frame(in, VM_FRAME_STDOUT, "", 0);
        expect_refused(in, n, "empty output frame");
        n = exit_frame(in, 0, 256);
        expect_refused(in, n, "code 256 out of range");
        n = exit_frame(in, 1, 65);
        expect_refused(in, n, "signal 65 out of range");
        n = exit_frame(in, 0, 0);
        n += frame(in + n, VM_FRAME_STDOUT, "late", 4);
        expect_refused(in, n, "exec 1 after its exit frame");
        n = frame_of(in, VM_FRAME_STDOUT, 2, "x", 1);
        expect_refused(in, n, "exec 2, which is unknown");
        n = frame_of(in, VM_FRAME_STDOUT, VM_FRAME_AGENT, "x", 1);
        expect_refused(in, n, "for exec 0");
        n = frame_of(in, VM_FRAME_READY, 1, "", 0);
        expect_refused(in, n, "an agent's frame of type 20 naming exec 1");
        n = frame(in, VM_FRAME_ERROR, "a\nb", 3);
        expect_refused(in, n, "non-printable");
}

/* Several execs at once: each one's frames by its id, interleaved; one's exit does not end the
 * others; a closed exec's id and one never opened are refused; ids only grow. */
static void test_execs_by_id(void **state) {
        (void) state;
        vm_frame_reader_init(&reader);
        assert_int_equal(vm_frame_reader_open(&reader, 0), -EINVAL);
        assert_int_equal(vm_frame_reader_open(&reader, 3), 0);
        assert_int_equal(vm_frame_reader_open(&reader, 3), -EINVAL);
        assert_int_equal(vm_frame_reader_open(&reader, 2), -EINVAL);
        assert_int_equal(vm_frame_reader_open(&reader, 5), 0);
        uint8_t in[256];
        size_t n = frame_of(in, VM_FRAME_STDOUT, 3, "a", 1);
        n += frame_of(in + n, VM_FRAME_STDOUT, 5, "b", 1);
        n += exit_of(in + n, 3, 0, 7);
        n += frame_of(in + n, VM_FRAME_STDERR, 5, "c", 1);
        n += exit_of(in + n, 5, 0, 9);
        assert_int_equal(vm_frame_feed(&reader, in, n), (long) n);
        static const struct { uint32_t exec; vm_frame_type type; } want[] = {
                { 3, VM_FRAME_STDOUT }, { 5, VM_FRAME_STDOUT }, { 3, VM_FRAME_EXIT },
                { 5, VM_FRAME_STDERR }, { 5, VM_FRAME_EXIT } };
        vm_frame f;
        for (size_t i = 0; i < 5; i++) {
                assert_int_equal(vm_frame_next(&reader, &f), 1);
                assert_int_equal(f.exec, want[i].exec);
                assert_int_equal(f.type, want[i].type);
        }
        assert_int_equal(f.value, 9);
        vm_frame_reader_close(&reader, 3);
        n = frame_of(in, VM_FRAME_STDOUT, 3, "late", 4);
        assert_int_equal(vm_frame_feed(&reader, in, n), (long) n);
        assert_int_equal(vm_frame_next(&reader, &f), -EPROTO);
        assert_non_null(strstr(reader.why, "exec 3, which is finished"));
        /* At most VM_FRAME_EXECS_MAX open. */
        vm_frame_reader_init(&reader);
        for (uint32_t id = 1; id <= VM_FRAME_EXECS_MAX; id++)
                assert_int_equal(vm_frame_reader_open(&reader, id), 0);
        assert_int_equal(vm_frame_reader_open(&reader, 100), -EMFILE);
        vm_frame_reader_close(&reader, 1);
        assert_int_equal(vm_frame_reader_open(&reader, 100), 0);
}

/* The largest frame fills the buffer exactly and is read whole. */
static void test_largest_frame(void **state) {
        (void) state;
        static uint8_t in[VM_FRAME_HEADER + VM_FRAME_MAX_PAYLOAD + 1];
        memset(in, 'a', sizeof(in));
        vm_frame_header(in, VM_FRAME_STDOUT, 1, VM_FRAME_MAX_PAYLOAD);
        reader_init();
        assert_int_equal(vm_frame_feed(&reader, in, sizeof(in)), (long) sizeof(in) - 1);
        vm_frame f;
        assert_int_equal(vm_frame_next(&reader, &f), 1);
        assert_int_equal(f.size, VM_FRAME_MAX_PAYLOAD);
        assert_int_equal(vm_frame_feed(&reader, in, 1), 1); /* room again */
}

static void test_exec_encode(void **state) {
        (void) state;
        char sh[] = "sh", c[] = "-c", tru[] = "true", a1[] = "A=1";
        char *argv[] = { sh, c, tru, NULL }, *envp[] = { a1, NULL }, *none[] = { NULL };
        uint8_t *p = NULL;
        size_t size = 0;
        assert_int_equal(vm_exec_encode("/w", argv, envp, NULL, &p, &size), 0);
        static const uint8_t want[] = "\x03\0\0\0\x01\0\0\0\0\0\0\0\0\0\0\0/w\0sh\0-c\0true\0A=1";
        assert_int_equal(size, sizeof(want));
        assert_memory_equal(p, want, sizeof(want));
        free(p);
        /* A terminal: the flag and the size (rows 24 = 0x18, columns 300 = 0x12c). */
        const vm_exec_tty tty = { .rows = 24, .cols = 300 };
        assert_int_equal(vm_exec_encode("/w", argv, envp, &tty, &p, &size), 0);
        static const uint8_t want_tty[] =
                "\x03\0\0\0\x01\0\0\0\x01\0\0\0\x18\0\x2c\x01/w\0sh\0-c\0true\0A=1";
        assert_int_equal(size, sizeof(want_tty));
        assert_memory_equal(p, want_tty, sizeof(want_tty));
        free(p);
        uint8_t rs[4];
        vm_resize_encode(rs, 50, 0x1234);
        assert_memory_equal(rs, "\x32\0\x34\x12", 4);
        assert_int_equal(vm_exec_encode("/", none, envp, NULL, &p, &size), -EINVAL);
        char *big = malloc(VM_FRAME_MAX_PAYLOAD + 1);
        memset(big, 'x', VM_FRAME_MAX_PAYLOAD);
        big[VM_FRAME_MAX_PAYLOAD] = '\0';
        char *bigv[] = { big, NULL };
        assert_int_equal(vm_exec_encode("/", bigv, none, NULL, &p, &size), -E2BIG);
        free(big);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_frames_in_order_across_splits),
                cmocka_unit_test(test_violations),
                cmocka_unit_test(test_ready_end_pending),
                cmocka_unit_test(test_execs_by_id),
                cmocka_unit_test(test_largest_frame),
                cmocka_unit_test(test_exec_encode),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
