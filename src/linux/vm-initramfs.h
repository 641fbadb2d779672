/* SPDX-License-Identifier: Apache-2.0 */
/* The microvm guest's initramfs, written by cordon itself (docs/design/microvm.md "The guest"):
 * a newc cpio archive — the guest agent as /init and the kernel modules the guest needs, in the
 * order they load — written to a descriptor (a memfd the VMM reads as /proc/self/fd/N, so no
 * image file exists to leave behind). Not wired into a launch yet. */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* The guest's modules in load order (every module after the ones its .modinfo `depends=` names),
 * as paths beneath a module tree's kernel/ without ".ko": virtio-mmio transport, the console
 * port, 9p over virtio, and virtio-net. NULL-terminated. */
extern const char *const vm_guest_modules[];

typedef struct vm_initramfs {
        int fd;
        uint32_t ino;
        uint64_t written;
} vm_initramfs;

void vm_initramfs_init(vm_initramfs *w, int fd);
/* One entry each; `name` is relative ("init", "m/9p.ko"), without "." or ".." components or
 * empty ones, at most 255 bytes: -EINVAL otherwise. -errno from write(). */
int vm_initramfs_dir(vm_initramfs *w, const char *name);
int vm_initramfs_bytes(vm_initramfs *w, const char *name, uint32_t mode, const void *data,
                       size_t size);
/* A regular file's contents from `src_fd` (read to its end, at most 64 MiB: -EFBIG). */
int vm_initramfs_file(vm_initramfs *w, const char *name, uint32_t mode, int src_fd);
/* Directory "m", each of vm_guest_modules as m/NAME.ko and m/order (their names in load order,
 * one a line, for the guest agent), from `modules_dir` (a
 * /lib/modules/VERSION tree). A module that is neither a file there nor listed in the tree's
 * modules.builtin is -ENOENT, its path in `missing` (of `size` bytes). */
int vm_initramfs_modules(vm_initramfs *w, const char *modules_dir, char *missing, size_t size);
/* The trailer: the archive is complete. */
int vm_initramfs_end(vm_initramfs *w);
