/* SPDX-License-Identifier: Apache-2.0 */
/* The native rules inside the microvm guest (docs/design/microvm.md "The guest's rules"), in the
 * guest agent: the native sandbox's syscall filter on every guest command, which the host builds
 * (seccomp.h: vm_guest) and carries in the initramfs as /cordon.bpf, so the static agent needs no
 * libseccomp; no capability and no_new_privs for the command, whatever its uid; and the guest's
 * own file systems the command could reach read-only (its /dev, /proc/sys, /proc/sysrq-trigger).
 * Every writable place left is a 9p export the VMM serves inside the native sandbox. */
#pragma once

#include <stddef.h>

/* Reads the filter from `path`: a whole number of BPF instructions, 1 to BPF_MAXINSNS, read
 * to its end (-EINVAL for another size, -errno from open/read). Kept for guest_rules_enter(). */
int guest_rules_load(const char *path);

/* Installs the filter in a throwaway child and waits for it: 0, or -errno when the guest kernel
 * refuses it, so that a filter the guest cannot load fails the boot, not each exec. */
int guest_rules_check(void);

/* In a command's child, still root: empties the capability bounding set and the ambient set, so
 * that no exec can give the command a capability back. 0 or -errno. */
int guest_rules_drop_bounding(void);

/* In a command's child after it took the caller's ids, right before execve: no capability left
 * (uid 0 keeps its sets across setuid(0)), no_new_privs (setuid and file-capability binaries of
 * the 9p root raise nothing), then the filter. 0 or -errno; the caller must not exec on an error. */
int guest_rules_enter(void);

/* Beneath `root` (the command's root), after its /dev and /proc are mounted: /dev read-only
 * (its device nodes still open for writing: a read-only mount refuses only new names and
 * writes to files), /proc/sys and /proc/sysrq-trigger read-only. 0 or -errno; *ret_what names
 * the step that failed. */
int guest_rules_lock(const char *root, const char **ret_what);
