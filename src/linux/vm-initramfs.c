/* SPDX-License-Identifier: Apache-2.0 */
/* The microvm guest's initramfs as a newc cpio archive (vm-initramfs.h). */
#include "linux/vm-initramfs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/util.h"

#define MAX_FILE (64u << 20)

const char *const vm_guest_modules[] = {
        "drivers/virtio/virtio_ring", "drivers/virtio/virtio", "drivers/virtio/virtio_mmio",
        "drivers/char/virtio_console", "net/9p/9pnet", "net/9p/9pnet_virtio", "fs/netfs/netfs",
        "fs/fscache/fscache", "fs/9p/9p", "net/core/failover", "drivers/net/net_failover",
        "drivers/net/virtio_net", NULL,
};

void vm_initramfs_init(vm_initramfs *w, int fd) {
        *w = (vm_initramfs) { .fd = fd, .ino = 1 };
}

static int put(vm_initramfs *w, const void *data, size_t size) {
        const char *p = data;
        while (size > 0) {
                ssize_t n = write(w->fd, p, size);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return n < 0 ? -errno : -EIO;
                p += n;
                size -= (size_t) n;
                w->written += (uint64_t) n;
        }
        return 0;
}

static int pad4(vm_initramfs *w) {
        static const char zeros[4];
        size_t pad = (size_t) (-w->written & 3u);
        return pad ? put(w, zeros, pad) : 0;
}

/* The archive's own names only: relative, no empty, "." or ".." components. */
static bool name_ok(const char *name) {
        size_t len = strlen(name);
        if (len == 0 || len > 255 || name[0] == '/' || name[len - 1] == '/')
                return false;
        for (const char *c = name; *c;) {
                size_t n = strcspn(c, "/");
                if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
                        return false;
                c += n + (c[n] == '/');
        }
        return true;
}

static int header(vm_initramfs *w, const char *name, uint32_t mode, size_t size) {
        char h[111];
        size_t nlen = strlen(name) + 1;
        /* magic, ino, mode, uid, gid, nlink, mtime, filesize, devmajor, devminor, rdevmajor,
         * rdevminor, namesize, check: all owned by root, at time 0. */
        (void) snprintf(h, sizeof(h), "070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
                        w->ino++, mode, 0u, 0u, 1u, 0u, (unsigned) size, 0u, 0u, 0u, 0u,
                        (unsigned) nlen, 0u);
        int r = put(w, h, 110);
        if (r >= 0)
                r = put(w, name, nlen);
        return r < 0 ? r : pad4(w);
}

int vm_initramfs_bytes(vm_initramfs *w, const char *name, uint32_t mode, const void *data,
                       size_t size) {
        if (!name_ok(name) || size > MAX_FILE)
                return -EINVAL;
        int r = header(w, name, S_IFREG | (mode & 07777), size);
        if (r >= 0)
                r = put(w, data, size);
        return r < 0 ? r : pad4(w);
}

int vm_initramfs_dir(vm_initramfs *w, const char *name) {
        return name_ok(name) ? header(w, name, S_IFDIR | 0755, 0) : -EINVAL;
}

int vm_initramfs_file(vm_initramfs *w, const char *name, uint32_t mode, int src_fd) {
        struct stat st;
        if (fstat(src_fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -EINVAL;
        if ((uint64_t) st.st_size > MAX_FILE)
                return -EFBIG;
        size_t size = (size_t) st.st_size;
        _cleanup_free_ char *buf = malloc(size ? size : 1);
        if (!buf)
                return -ENOMEM;
        size_t got = 0;
        while (got < size) {
                ssize_t n = pread(src_fd, buf + got, size - got, (off_t) got);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return n < 0 ? -errno : -EIO; /* shrank while read */
                got += (size_t) n;
        }
        return vm_initramfs_bytes(w, name, mode, buf, size);
}

/* Whether `module` ("fs/9p/9p") is built into the kernel: a line "kernel/fs/9p/9p.ko" of the
 * tree's modules.builtin. */
static bool builtin(const char *modules_dir, const char *module) {
        char path[4096], want[512], line[512];
        (void) snprintf(path, sizeof(path), "%s/modules.builtin", modules_dir);
        (void) snprintf(want, sizeof(want), "kernel/%s.ko\n", module);
        FILE *f = fopen(path, "re");
        bool found = false;
        while (f && !found && fgets(line, sizeof(line), f))
                found = strcmp(line, want) == 0;
        if (f)
                (void) fclose(f);
        return found;
}

/* Each module as m/NAME.ko, and m/order: the names the agent loads, one a line, in order. */
int vm_initramfs_modules(vm_initramfs *w, const char *modules_dir, char *missing, size_t size) {
        char order[1024] = "";
        int r = vm_initramfs_dir(w, "m");
        for (size_t i = 0; r >= 0 && vm_guest_modules[i]; i++) {
                const char *m = vm_guest_modules[i];
                char path[4096], name[300];
                (void) snprintf(path, sizeof(path), "%s/kernel/%s.ko", modules_dir, m);
                (void) snprintf(name, sizeof(name), "m/%s.ko", strrchr(m, '/') + 1);
                _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
                if (fd >= 0) {
                        r = vm_initramfs_file(w, name, 0644, fd);
                        size_t used = strlen(order);
                        (void) snprintf(order + used, sizeof(order) - used, "%s\n", name + 2);
                } else if (!builtin(modules_dir, m)) {
                        (void) snprintf(missing, size, "%s", path);
                        r = -ENOENT;
                }
        }
        return r < 0 ? r : vm_initramfs_bytes(w, "m/order", 0644, order, strlen(order));
}

int vm_initramfs_end(vm_initramfs *w) {
        return header(w, "TRAILER!!!", 0, 0);
}
