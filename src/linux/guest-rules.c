/* SPDX-License-Identifier: Apache-2.0 */
/* The native rules inside the microvm guest (guest-rules.h). */
#include "linux/guest-rules.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* BPF_MAXINSNS instructions: the most the kernel loads in one program. */
static struct sock_filter filter[BPF_MAXINSNS];
static unsigned short filter_len;

int guest_rules_load(const char *path) {
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        size_t got = 0;
        for (;;) {
                /* One byte more than the largest program: a longer file is refused, not cut. */
                char *at = (char *) filter + got;
                size_t room = sizeof(filter) - got;
                ssize_t n = room ? read(fd, at, room) : read(fd, (char[1]) { 0 }, 1);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0) {
                        int e = -errno;
                        (void) close(fd);
                        return e;
                }
                if (n == 0)
                        break;
                if (room == 0) {
                        (void) close(fd);
                        return -EINVAL;
                }
                got += (size_t) n;
        }
        (void) close(fd);
        /* The host is trusted (the VMM is the host's), but a truncated or padded program is
         * refused here rather than loaded as something else. */
        if (got == 0 || got % sizeof(struct sock_filter) != 0)
                return -EINVAL;
        filter_len = (unsigned short) (got / sizeof(struct sock_filter));
        return 0;
}

static int install(void) {
        if (filter_len == 0)
                return -ENOENT; /* never loaded: never run a command unfiltered */
        struct sock_fprog prog = { .len = filter_len, .filter = filter };
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
            syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
                return -errno;
        return 0;
}

int guest_rules_check(void) {
        pid_t pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0) {
                int r = install();
                _exit(r < 0 ? -r : 0);
        }
        int status = 0;
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return -errno;
        if (!WIFEXITED(status))
                return -ECHILD;
        return -WEXITSTATUS(status);
}

int guest_rules_drop_bounding(void) {
        /* Every capability the kernel knows: PR_CAPBSET_DROP says EINVAL past the last one. */
        for (unsigned long cap = 0;; cap++)
                if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0) {
                        if (errno == EINVAL && cap > 0)
                                break;
                        return -errno;
                }
        if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
                return -errno;
        return 0;
}

int guest_rules_enter(void) {
        /* Root (the caller's uid 0) keeps its capabilities across setuid(0): a guest root with
         * CAP_SYS_ADMIN or CAP_SYS_PTRACE could remount the 9p exports, load modules through a
         * helper the filter does not see, or write the agent's memory (/proc/1/mem) and run
         * unfiltered. The native sandbox's command has none either. */
        struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
        struct __user_cap_data_struct d[2] = { { 0 } };
        if (syscall(SYS_capset, &h, d) < 0)
                return -errno;
        return install();
}

static int bind_read_only(const char *path) {
        if (mount(path, path, NULL, MS_BIND, NULL) < 0 ||
            mount(NULL, path, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) < 0)
                return -errno;
        return 0;
}

int guest_rules_lock(const char *root, const char **ret_what) {
        char path[256];
        /* /dev: the command's tmpfs with the nodes the agent made; read-only, so no name can be
         * created there (names in guest-local file systems would escape the host's name rules). */
        *ret_what = "/dev";
        (void) snprintf(path, sizeof(path), "%s/dev", root);
        if (mount(NULL, path, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NOEXEC,
                  NULL) < 0)
                return -errno;
        /* /proc/sys: a uid 0 command passes the owner check of every sysctl file without any
         * capability, and kernel.core_pattern or kernel.modprobe would make the guest kernel run
         * a program of its choosing as full root, outside the filter. */
        *ret_what = "/proc/sys";
        (void) snprintf(path, sizeof(path), "%s/proc/sys", root);
        int r = bind_read_only(path);
        if (r < 0)
                return r;
        /* sysrq: crash or power off the guest, kill every process (the agent's pumps). */
        *ret_what = "/proc/sysrq-trigger";
        (void) snprintf(path, sizeof(path), "%s/proc/sysrq-trigger", root);
        return bind_read_only(path);
}
