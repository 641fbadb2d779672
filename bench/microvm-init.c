/* SPDX-License-Identifier: Apache-2.0 */
/* bench/microvm-boot.py's guest init (not cordon's guest agent, docs/design/microvm.md): as PID 1
 * of a hand-built initramfs it loads the 9p modules, mounts the host's root read-only over 9p,
 * runs /bin/true from it twice, and prints a line per phase on the serial console ("T phase"),
 * which the host stamps with its own clock. It ends the VM through isa-debug-exit (port 0xf4). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/io.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *const modules[] = {
        "virtio_ring", "virtio", "virtio_mmio", "virtio_console", "9pnet", "9pnet_virtio",
        "netfs", "fscache", "9p",
};

static int run_true(void) {
        pid_t pid = fork();
        if (pid == 0) {
                if (chroot("/host") == 0 && chdir("/") == 0)
                        execl("/bin/true", "true", (char *) NULL);
                _exit(127);
        }
        int status = -1;
        (void) waitpid(pid, &status, 0);
        return status;
}

int main(void) {
        (void) mount("proc", "/proc", "proc", 0, NULL);
        (void) mount("devtmpfs", "/dev", "devtmpfs", 0, NULL);
        int con = open("/dev/ttyS0", O_WRONLY);
        dprintf(con, "T init\n");
        for (size_t i = 0; i < sizeof(modules) / sizeof(modules[0]); i++) {
                char path[64];
                (void) snprintf(path, sizeof(path), "/m/%s.ko", modules[i]);
                int fd = open(path, O_RDONLY | O_CLOEXEC);
                if (syscall(SYS_finit_module, fd, "", 0) < 0)
                        dprintf(con, "E module %s\n", modules[i]);
                (void) close(fd);
        }
        (void) mkdir("/host", 0755);
        if (mount("host", "/host", "9p", MS_RDONLY, "trans=virtio,version=9p2000.L,cache=none") < 0)
                dprintf(con, "E 9p\n");
        dprintf(con, "T mounted\n");
        dprintf(con, "T exec1 %d\n", run_true());
        dprintf(con, "T exec2 %d\n", run_true());
        if (ioperm(0xf4, 1, 1) == 0)
                outb(0, 0xf4);
        (void) reboot(RB_POWER_OFF);
        return 0;
}
