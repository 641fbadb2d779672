/* SPDX-License-Identifier: Apache-2.0 */
/* The microvm backend's prerequisites (docs/design/microvm.md "Probe"): a KVM that boots a stock
 * kernel, the VMM, a guest kernel with its modules. Like every probe, found by trying: /dev/kvm
 * runs a tiny real-mode guest to its HLT through the KVM API. That alone does not tell PVM (the
 * pagetable-based KVM of nested cloud VMs, module kvm_pvm) from hardware virtualization — PVM
 * runs that guest too, but boots only kernels built as PVM guests, so a stock kernel never
 * starts — so the vendor module the kernel registered says which KVM it is. */
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "linux/probe.h"
#include "microvm-config.h"
#include "util/util.h"

#define GUEST_BASE 0x1000u
#define GUEST_PORT 0x10u
#define GUEST_BYTE 0x42u

const char *probe_kvm_kind_to_string(probe_kvm_kind k) {
        switch (k) {
        case PROBE_KVM_HW:
                return "hardware";
        case PROBE_KVM_PVM:
                return "pvm";
        case PROBE_KVM_UNKNOWN:
                return "unknown";
        case PROBE_KVM_NONE:
        default:
                return "none";
        }
}

/* Runs the vCPU until it halts: one port write of GUEST_BYTE to GUEST_PORT on the way. */
static bool vcpu_runs(int kvm, int vcpu) {
        int size = ioctl(kvm, KVM_GET_VCPU_MMAP_SIZE, 0);
        if (size <= 0)
                return false;
        struct kvm_run *run = mmap(NULL, (size_t) size, PROT_READ | PROT_WRITE, MAP_SHARED, vcpu,
                                   0);
        if (run == MAP_FAILED)
                return false;
        bool wrote = false, halted = false;
        for (int i = 0; i < 4 && !halted; i++) {
                if (ioctl(vcpu, KVM_RUN, 0) < 0)
                        break;
                if (run->exit_reason == KVM_EXIT_IO && run->io.port == GUEST_PORT)
                        wrote = ((const unsigned char *) run)[run->io.data_offset] == GUEST_BYTE;
                else if (run->exit_reason == KVM_EXIT_HLT)
                        halted = true;
                else
                        break; /* FAIL_ENTRY, INTERNAL_ERROR, SHUTDOWN: it does not run guests */
        }
        (void) munmap(run, (size_t) size);
        return wrote && halted;
}

/* The guest: `mov al, 0x42; out 0x10, al; hlt` at GUEST_BASE, in real mode with CS at 0. */
static bool vm_runs(int kvm, int vm, void *mem) {
        static const unsigned char code[] = { 0xb0, GUEST_BYTE, 0xe6, GUEST_PORT, 0xf4 };
        memcpy(mem, code, sizeof(code));
        struct kvm_userspace_memory_region region = {
                .guest_phys_addr = GUEST_BASE, .memory_size = 0x1000,
                .userspace_addr = (uintptr_t) mem,
        };
        if (ioctl(vm, KVM_SET_USER_MEMORY_REGION, &region) < 0)
                return false;
        _cleanup_close_ int vcpu = ioctl(vm, KVM_CREATE_VCPU, 0);
        struct kvm_sregs sregs;
        if (vcpu < 0 || ioctl(vcpu, KVM_GET_SREGS, &sregs) < 0)
                return false;
        sregs.cs.base = 0;
        sregs.cs.selector = 0;
        struct kvm_regs regs = { .rip = GUEST_BASE, .rflags = 2 };
        if (ioctl(vcpu, KVM_SET_SREGS, &sregs) < 0 || ioctl(vcpu, KVM_SET_REGS, &regs) < 0)
                return false;
        return vcpu_runs(kvm, vcpu);
}

static bool kvm_guest_runs(int kvm) {
        if (ioctl(kvm, KVM_GET_API_VERSION, 0) != KVM_API_VERSION)
                return false;
        _cleanup_close_ int vm = ioctl(kvm, KVM_CREATE_VM, 0);
        if (vm < 0)
                return false;
        void *mem = mmap(NULL, 0x1000, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (mem == MAP_FAILED)
                return false;
        bool ok = vm_runs(kvm, vm, mem);
        (void) munmap(mem, 0x1000);
        return ok;
}

static bool is_dir(const char *path) {
        struct stat st;
        return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool is_readable_file(const char *path) {
        struct stat st;
        return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, R_OK) == 0;
}

/* Which vendor module registered with KVM (each has a directory in /sys/module, built in or
 * not, because each has parameters). */
static probe_kvm_kind kvm_kind(void) {
        if (is_dir("/sys/module/kvm_pvm"))
                return PROBE_KVM_PVM;
        if (is_dir("/sys/module/kvm_intel") || is_dir("/sys/module/kvm_amd"))
                return PROBE_KVM_HW;
        return PROBE_KVM_UNKNOWN;
}

static void probe_kvm(probe_facts *f) {
        _cleanup_close_ int fd = open("/dev/kvm", O_RDWR | O_CLOEXEC | O_NOCTTY);
        f->kvm = fd >= 0;
        f->kvm_errno = fd >= 0 ? 0 : errno;
        f->kvm_guest_ran = fd >= 0 && kvm_guest_runs(fd);
        f->kvm_kind = f->kvm_guest_ran ? kvm_kind() : PROBE_KVM_NONE;
}

/* Debian's qemu-system-x86 package installs it in /usr/bin; a local build in /usr/local/bin. The
 * PATH is not searched: which VMM confines the command is not the environment's to choose. */
static void probe_vmm(probe_facts *f) {
        static const char *const where[] = {
                "/usr/bin/qemu-system-x86_64", "/usr/local/bin/qemu-system-x86_64",
        };
        for (size_t i = 0; i < ELEMENTSOF(where); i++)
                if (access(where[i], X_OK) == 0) {
                        (void) snprintf(f->vmm, sizeof(f->vmm), "%s", where[i]);
                        return;
                }
}

/* The host's own kernel when it is in /boot with its modules, else the configured directory. */
static void probe_kernel(probe_facts *f) {
        char image[sizeof(f->kernel)], modules[sizeof(f->kernel_modules)], tree[300];
        (void) snprintf(image, sizeof(image), "/boot/vmlinuz-%s", f->release);
        (void) snprintf(modules, sizeof(modules), "/lib/modules/%s", f->release);
        (void) snprintf(tree, sizeof(tree), "%s/kernel", modules);
        if (!is_readable_file(image) || !is_dir(tree)) {
                (void) snprintf(image, sizeof(image), "%s/vmlinuz", CORDON_MICROVM_KERNEL_DIR);
                (void) snprintf(modules, sizeof(modules), "%s/modules", CORDON_MICROVM_KERNEL_DIR);
                (void) snprintf(tree, sizeof(tree), "%s/kernel", modules);
                if (!is_readable_file(image) || !is_dir(tree))
                        return;
        }
        (void) snprintf(f->kernel, sizeof(f->kernel), "%s", image);
        (void) snprintf(f->kernel_modules, sizeof(f->kernel_modules), "%s", modules);
}

void probe_vm(probe_facts *f) {
        probe_kvm(f);
        probe_vmm(f);
        probe_kernel(f);
}

static void missing_kvm(const probe_facts *f, char *hint, size_t size) {
        if (!f->kvm)
                probe_hint_add(hint, size, "KVM is not usable (/dev/kvm: %s)",
                               strerror(f->kvm_errno));
        else if (!f->kvm_guest_ran)
                probe_hint_add(hint, size, "/dev/kvm opens but does not run a guest (KVM_RUN of "
                               "a real-mode test guest failed)");
        else if (f->kvm_kind == PROBE_KVM_PVM)
                probe_hint_add(hint, size, "KVM here is PVM (kvm_pvm), which boots only kernels "
                               "built as PVM guests, not a stock kernel: only software "
                               "emulation (qemu TCG) could run the VM");
}

bool probe_vm_missing(const probe_facts *f, char *hint, size_t size, bool *install) {
        size_t before = strlen(hint);
        missing_kvm(f, hint, size);
        if (f->vmm[0] == '\0') {
                probe_hint_add(hint, size, "no VMM: install Debian's qemu-system-x86 "
                               "(apt-get install --no-install-recommends qemu-system-x86)");
                *install = true;
        }
        if (f->kernel[0] == '\0') {
                probe_hint_add(hint, size, "no guest kernel: neither /boot/vmlinuz-%s with "
                               "/lib/modules/%s nor %s/vmlinuz with its modules/ tree; unpack "
                               "Debian's linux-image-amd64 there (apt-get download, dpkg-deb "
                               "-x; see docs/design/microvm.md)",
                               f->release, f->release, CORDON_MICROVM_KERNEL_DIR);
                *install = true;
        }
        return strlen(hint) > before;
}
