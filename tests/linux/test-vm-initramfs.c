/* SPDX-License-Identifier: Apache-2.0 */
/* The microvm guest's initramfs writer (src/linux/vm-initramfs.c): the archive read back by an
 * independent newc reader (every header field, 4-byte alignment, contents, the trailer), names
 * that could climb out of the archive refused, and the guest's modules taken from a module tree
 * (a file, or listed in modules.builtin; neither is an error naming the path) — on a made-up
 * tree, and on the probe's guest kernel when this host has one. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "linux/vm-initramfs.h"
#include "microvm-config.h"

typedef struct entry {
        char name[300];
        unsigned mode, size;
        const uint8_t *data;
} entry;

static uint8_t image[1 << 22];
static size_t image_size;

static unsigned hex8(const uint8_t *p) {
        char b[9];
        memcpy(b, p, 8);
        b[8] = '\0';
        return (unsigned) strtoul(b, NULL, 16);
}

/* Reads the whole archive into `out` (at most `max`); returns the entries before the trailer. */
static size_t read_back(int fd, entry *out, size_t max) {
        image_size = (size_t) pread(fd, image, sizeof(image), 0);
        size_t at = 0, n = 0;
        for (;;) {
                assert_true(at + 110 <= image_size);
                assert_memory_equal(image + at, "070701", 6);
                unsigned mode = hex8(image + at + 14), size = hex8(image + at + 54);
                unsigned nlen = hex8(image + at + 94);
                assert_int_equal(hex8(image + at + 22), 0); /* uid */
                assert_int_equal(hex8(image + at + 30), 0); /* gid */
                const char *name = (const char *) image + at + 110;
                assert_int_equal(name[nlen - 1], '\0');
                at = (at + 110 + nlen + 3) & ~(size_t) 3;
                if (strcmp(name, "TRAILER!!!") == 0)
                        break;
                assert_true(n < max);
                (void) snprintf(out[n].name, sizeof(out[n].name), "%s", name);
                out[n].mode = mode;
                out[n].size = size;
                out[n].data = image + at;
                at = (at + size + 3) & ~(size_t) 3;
                n++;
        }
        assert_int_equal(at, image_size); /* nothing after the trailer, and it is aligned */
        return n;
}

static int memfd(void) {
        int fd = memfd_create("initramfs", MFD_CLOEXEC);
        assert_true(fd >= 0);
        return fd;
}

static void test_round_trip(void **state) {
        (void) state;
        int fd = memfd();
        vm_initramfs w;
        vm_initramfs_init(&w, fd);
        assert_int_equal(vm_initramfs_dir(&w, "m"), 0);
        assert_int_equal(vm_initramfs_bytes(&w, "init", 0755, "\x7f" "ELF", 4), 0);
        assert_int_equal(vm_initramfs_bytes(&w, "m/a.ko", 0644, "abcde", 5), 0);
        assert_int_equal(vm_initramfs_bytes(&w, "empty", 0600, "", 0), 0);
        assert_int_equal(vm_initramfs_end(&w), 0);
        entry e[8];
        assert_int_equal(read_back(fd, e, 8), 4);
        assert_string_equal(e[0].name, "m");
        assert_int_equal(e[0].mode, S_IFDIR | 0755);
        assert_string_equal(e[1].name, "init");
        assert_int_equal(e[1].mode, S_IFREG | 0755);
        assert_memory_equal(e[1].data, "\x7f" "ELF", 4);
        assert_int_equal(e[2].size, 5);
        assert_memory_equal(e[2].data, "abcde", 5);
        assert_int_equal(e[3].size, 0);
        close(fd);
}

static void test_names_refused(void **state) {
        (void) state;
        static const char *const bad[] = { "", "/init", "../x", "m/../../x", "a//b", "./a",
                                           "a/", "a/.", "a/.." };
        int fd = memfd();
        vm_initramfs w;
        vm_initramfs_init(&w, fd);
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                assert_int_equal(vm_initramfs_bytes(&w, bad[i], 0644, "x", 1), -EINVAL);
                assert_int_equal(vm_initramfs_dir(&w, bad[i]), -EINVAL);
        }
        char longname[300];
        memset(longname, 'a', 256);
        longname[256] = '\0';
        assert_int_equal(vm_initramfs_bytes(&w, longname, 0644, "x", 1), -EINVAL);
        assert_int_equal(w.written, 0); /* nothing half-written */
        close(fd);
}

static void put_file(const char *path, const char *text) {
        char dir[4096];
        (void) snprintf(dir, sizeof(dir), "%s", path);
        for (char *s = strchr(dir + 1, '/'); s; s = strchr(s + 1, '/')) {
                *s = '\0';
                (void) mkdir(dir, 0755);
                *s = '/';
        }
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs(text, f);
        fclose(f);
}

static void test_modules_from_a_tree(void **state) {
        (void) state;
        char tree[] = "/tmp/cordon-vm-modules-XXXXXX", path[4096];
        assert_non_null(mkdtemp(tree));
        size_t n = 0;
        for (; vm_guest_modules[n]; n++)
                if (n > 0) { /* the first is built in */
                        (void) snprintf(path, sizeof(path), "%s/kernel/%s.ko", tree,
                                        vm_guest_modules[n]);
                        put_file(path, vm_guest_modules[n]);
                }
        (void) snprintf(path, sizeof(path), "%s/modules.builtin", tree);
        char line[300];
        (void) snprintf(line, sizeof(line), "kernel/other.ko\nkernel/%s.ko\n", vm_guest_modules[0]);
        put_file(path, line);

        int fd = memfd();
        vm_initramfs w;
        vm_initramfs_init(&w, fd);
        char missing[4096] = "";
        assert_int_equal(vm_initramfs_modules(&w, tree, missing, sizeof(missing)), 0);
        assert_int_equal(vm_initramfs_end(&w), 0);
        entry e[32];
        /* "m", every module but the built-in, and the order */
        assert_int_equal(read_back(fd, e, 32), n + 1);
        assert_string_equal(e[1].name, "m/virtio.ko");
        assert_memory_equal(e[1].data, "drivers/virtio/virtio", e[1].size);
        assert_string_equal(e[n].name, "m/order");
        assert_true(e[n].size > 20);
        assert_memory_equal(e[n].data, "virtio.ko\nvirtio_mmio.ko\n", 24);
        close(fd);

        put_file(path, "kernel/other.ko\n"); /* now the first is neither a file nor built in */
        fd = memfd();
        vm_initramfs_init(&w, fd);
        assert_int_equal(vm_initramfs_modules(&w, tree, missing, sizeof(missing)), -ENOENT);
        assert_non_null(strstr(missing, "/kernel/drivers/virtio/virtio_ring.ko"));
        close(fd);
        char cmd[4200];
        (void) snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tree);
        assert_int_equal(system(cmd), 0);
}

/* Debian's kernel as install-deps.sh unpacks it: every guest module is there. */
static void test_modules_of_the_guest_kernel(void **state) {
        (void) state;
        const char *dir = CORDON_MICROVM_KERNEL_DIR "/modules";
        struct stat st;
        if (stat(dir, &st) < 0) {
                const char *must = getenv("CORDON_TEST_MUST_WORK");
                if (must && strcmp(must, "1") == 0)
                        fail_msg("CORDON_TEST_MUST_WORK=1: no guest kernel in %s", dir);
                skip();
        }
        int fd = memfd();
        vm_initramfs w;
        vm_initramfs_init(&w, fd);
        char missing[4096] = "";
        int r = vm_initramfs_modules(&w, dir, missing, sizeof(missing));
        if (r < 0)
                fail_msg("%s: %s", missing, strerror(-r));
        assert_int_equal(vm_initramfs_end(&w), 0);
        entry e[32];
        size_t n = read_back(fd, e, 32);
        assert_true(n >= 2);
        for (size_t i = 1; i + 1 < n; i++)
                assert_memory_equal(e[i].data, "\x7f" "ELF", 4);
        assert_string_equal(e[n - 1].name, "m/order");
        close(fd);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_round_trip),
                cmocka_unit_test(test_names_refused),
                cmocka_unit_test(test_modules_from_a_tree),
                cmocka_unit_test(test_modules_of_the_guest_kernel),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
