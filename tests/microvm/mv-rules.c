/* SPDX-License-Identifier: Apache-2.0 */
/* Tries the calls the native sandbox's syscall filter refuses and prints one "NAME=RESULT" line
 * each ("ok" or the errno's name), so test_microvm_rules.py can compare a microvm guest's answers
 * with a native run's and with what the filter says. Run by the tests, in a sandbox. */
#include <errno.h>
#include <linux/io_uring.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

static void show(const char *name, long r) {
        /* strerrorname_np would do, but its names are glibc 2.32+; these are the ones we meet. */
        static const struct {
                int e;
                const char *n;
        } names[] = { { EPERM, "EPERM" }, { ENOSYS, "ENOSYS" }, { EACCES, "EACCES" },
                      { EINVAL, "EINVAL" }, { ENOTTY, "ENOTTY" }, { EFAULT, "EFAULT" },
                      { EBADF, "EBADF" }, { ENOENT, "ENOENT" } };
        if (r >= 0) {
                printf("%s=ok\n", name);
                return;
        }
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
                if (names[i].e == errno) {
                        printf("%s=%s\n", name, names[i].n);
                        return;
                }
        printf("%s=errno%d\n", name, errno);
}

/* getpid through the 32-bit ABI (int $0x80, ia32 number 20): refused whole by the filter. */
static long int80_getpid(void) {
        long r = 20;
        __asm__ volatile("int $0x80" : "+a"(r) : : "memory", "cc");
        if (r < 0 && r > -4096) {
                errno = (int) -r;
                return -1;
        }
        return r;
}

/* PTRACE_ATTACH to a child of ours (which Yama's default scope allows without the filter). */
static long ptrace_child(void) {
        pid_t pid = fork();
        if (pid == 0) {
                pause();
                _exit(0);
        }
        long r = ptrace(PTRACE_ATTACH, pid, NULL, NULL);
        int e = errno;
        (void) kill(pid, SIGKILL);
        (void) waitpid(pid, NULL, 0);
        errno = e;
        return r;
}

int main(void) {
        struct io_uring_params p = { 0 };
        show("io_uring_setup", syscall(SYS_io_uring_setup, 1, &p));
        show("int80", int80_getpid());
        show("ptrace", ptrace_child());
        show("unshare_user", unshare(CLONE_NEWUSER));
        show("bpf", syscall(SYS_bpf, 0, NULL, 0));
        show("perf_event_open", syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0));
        show("userfaultfd", syscall(SYS_userfaultfd, 0));
        show("keyctl", syscall(SYS_keyctl, 0, 0, 0, 0, 0));
        show("mount", mount("none", "/mnt", "tmpfs", 0, NULL));
        show("finit_module", syscall(SYS_finit_module, -1, "", 0));
        show("process_vm_readv", syscall(SYS_process_vm_readv, getppid(), NULL, 0, NULL, 0, 0));
        /* On a pipe TIOCSTI is ENOTTY unfiltered: EPERM says the filter answered. */
        char c = 'x';
        show("tiocsti", ioctl(1, TIOCSTI, &c));
        show("unix_stream", socket(AF_UNIX, SOCK_STREAM, 0));
        show("unix_dgram", socket(AF_UNIX, SOCK_DGRAM, 0));
        fflush(stdout);
        return 0;
}
