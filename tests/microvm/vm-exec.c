/* SPDX-License-Identifier: Apache-2.0 */
/* tests/microvm/vm-exec: the guest half of the microvm backend driven without the launcher
 * (docs/design/microvm.md): boots the probe's VMM and guest kernel with the initramfs cordon
 * writes (src/linux/vm-initramfs.c: the guest agent as /init, the modules), the host's root
 * exported read-only over 9p, one virtio-serial port on a socketpair as the channel; sends the
 * EXEC frame, relays the guest's STDOUT/STDERR frames through the host's reader of untrusted
 * frames (src/linux/vm-frame.c), and exits with the command's status (128+N for a signal), or
 * 125 with one "vm-exec: ..." line when the guest reports an error, breaks the protocol or ends
 * without an exit frame. The VMM is killed and reaped before it returns.
 *     vm-exec AGENT kvm|tcg CMD [ARG...] */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "linux/probe.h"
#include "linux/vm-frame.h"
#include "linux/vm-initramfs.h"

__attribute__((noreturn, format(printf, 1, 2))) static void fail(const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        fputs("vm-exec: ", stderr);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        va_end(ap);
        exit(125);
}

static int initramfs(const char *agent, const char *modules) {
        int fd = memfd_create("cordon-initramfs", 0); /* inherited by the VMM: -initrd reads it */
        int in = open(agent, O_RDONLY | O_CLOEXEC);
        if (fd < 0 || in < 0)
                fail("%s: %s", agent, strerror(errno));
        vm_initramfs w;
        char missing[4096] = "";
        vm_initramfs_init(&w, fd);
        int r = vm_initramfs_dir(&w, "proc");
        if (r >= 0)
                r = vm_initramfs_dir(&w, "dev");
        if (r >= 0)
                r = vm_initramfs_file(&w, "init", 0755, in);
        if (r >= 0)
                r = vm_initramfs_modules(&w, modules, missing, sizeof(missing));
        if (r >= 0)
                r = vm_initramfs_end(&w);
        if (r < 0)
                fail("initramfs: %s %s", strerror(-r), missing);
        close(in);
        return fd;
}

static pid_t start_vmm(const probe_facts *f, const char *accel, int initrd, int chan) {
        char machine[128], initrd_path[64], chardev[64];
        bool tcg = strcmp(accel, "tcg") == 0;
        (void) snprintf(machine, sizeof(machine), "microvm,accel=%s,acpi=on,pit=on,pic=on,rtc=on",
                        accel);
        (void) snprintf(initrd_path, sizeof(initrd_path), "/proc/self/fd/%d", initrd);
        (void) snprintf(chardev, sizeof(chardev), "socket,id=ctl,fd=%d", chan);
        /* Under TCG the guest cannot calibrate its TSC without the hint (docs/design/microvm.md
         * "Booting it"). */
        const char *cmdline = tcg ? "quiet loglevel=0 rdinit=/init panic=-1 tsc_early_khz=2000000"
                                  : "quiet loglevel=0 rdinit=/init panic=-1";
        const char *argv[] = {
                f->vmm, "-M", machine, "-cpu", tcg ? "max" : "host", "-m", "256", "-smp", "1",
                "-nodefaults", "-no-user-config", "-display", "none", "-no-reboot",
                "-kernel", f->kernel, "-initrd", initrd_path, "-append", cmdline,
                "-chardev", chardev, "-device", "virtio-serial-device",
                "-device", "virtserialport,chardev=ctl,name=cordon.ctl,nr=1",
                "-fsdev", "local,id=root,path=/,security_model=none,readonly=on,multidevs=remap",
                "-device", "virtio-9p-device,fsdev=root,mount_tag=root", NULL,
        };
        pid_t pid = fork();
        if (pid == 0) {
                execv(argv[0], (char *const *) argv);
                _exit(127);
        }
        if (pid < 0)
                fail("fork: %s", strerror(errno));
        return pid;
}

static void send_exec(int chan, char *argv[]) {
        char path[] = "PATH=/usr/local/bin:/usr/bin:/bin", *envp[] = { path, NULL };
        uint8_t *payload = NULL, h[VM_FRAME_HEADER];
        size_t size = 0;
        if (vm_exec_encode("/", argv, envp, &payload, &size) < 0)
                fail("the exec request does not fit a frame");
        vm_frame_header(h, VM_FRAME_EXEC, size);
        if (write(chan, h, sizeof(h)) != (ssize_t) sizeof(h) ||
            write(chan, payload, size) != (ssize_t) size)
                fail("sending the exec request: %s", strerror(errno));
        free(payload);
}

static void out(int fd, const vm_frame *f) {
        if (write(fd, f->data, f->size) != (ssize_t) f->size)
                fail("writing the command's output: %s", strerror(errno));
}

/* The frames complete so far: 0 for more, 1 with *status at the exit frame, -1 on a failure. */
static int drain(vm_frame_reader *r, int *status, char *why, size_t size) {
        vm_frame f;
        int k;
        while ((k = vm_frame_next(r, &f)) == 1) {
                if (f.type == VM_FRAME_STDOUT || f.type == VM_FRAME_STDERR) {
                        out(f.type == VM_FRAME_STDOUT ? 1 : 2, &f);
                } else if (f.type == VM_FRAME_ERROR) {
                        (void) snprintf(why, size, "guest: %.*s", (int) f.size, f.data);
                        return -1;
                } else {
                        *status = f.signaled ? 128 + (int) f.value : (int) f.value;
                        return 1;
                }
        }
        if (k < 0)
                (void) snprintf(why, size, "the guest broke the protocol: %s", r->why);
        return k < 0 ? -1 : 0;
}

/* Frames until the exit frame: its status, or -1 with the reason in `why`. */
static int relay(int chan, char *why, size_t size) {
        static vm_frame_reader r;
        static uint8_t buf[65536];
        vm_frame_reader_init(&r);
        for (;;) {
                ssize_t n = read(chan, buf, sizeof(buf));
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0) {
                        (void) snprintf(why, size, "the VM ended without the command's status");
                        return -1;
                }
                for (size_t at = 0; at < (size_t) n;) {
                        long took = vm_frame_feed(&r, buf + at, (size_t) n - at);
                        int status = 0, d = took < 0 ? -1 : drain(&r, &status, why, size);
                        if (d != 0)
                                return d > 0 ? status : -1;
                        at += (size_t) took;
                }
        }
}

/* In an ASan build (LeakSanitizer's hook, whatever ASAN_OPTIONS says): this program runs
 * inside the native sandbox (`cordon run -- vm-exec ...`), whose seccomp filter refuses ptrace,
 * which LeakSanitizer needs to stop the process at exit; its "fatal error" would replace the
 * guest's exit status with 1. Leaks are checked where the sanitizer can work: in every test
 * that runs outside a sandbox. Exported: the runtime finds the hook by its dynamic symbol, and
 * the build hides symbols. */
__attribute__((visibility("default"))) int __lsan_is_turned_off(void);
__attribute__((visibility("default"))) int __lsan_is_turned_off(void) {
        return 1;
}

int main(int argc, char *argv[]) {
        if (argc < 4)
                fail("usage: vm-exec AGENT kvm|tcg CMD [ARG...]");
        probe_facts f = { 0 };
        (void) snprintf(f.release, sizeof(f.release), "none"); /* the configured kernel only */
        probe_vm(&f);
        if (f.vmm[0] == '\0' || f.kernel[0] == '\0')
                fail("no VMM or guest kernel (cordon probe)");
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
                fail("socketpair: %s", strerror(errno));
        (void) fcntl(sv[0], F_SETFD, FD_CLOEXEC);
        int initrd = initramfs(argv[1], f.kernel_modules);
        pid_t vmm = start_vmm(&f, argv[2], initrd, sv[1]);
        close(sv[1]);
        close(initrd);
        send_exec(sv[0], argv + 3);
        char why[256] = "";
        int status = relay(sv[0], why, sizeof(why));
        (void) kill(vmm, SIGKILL);
        (void) waitpid(vmm, NULL, 0);
        if (status < 0)
                fail("%s", why);
        return status;
}
