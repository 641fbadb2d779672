/* SPDX-License-Identifier: Apache-2.0 */
#include "linux/process.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <linux/close_range.h>
#include <linux/securebits.h>
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include "util/util.h"

static int write_proc_self(const char *file, const char *text) {
        _cleanup_close_ int fd = open(file, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        ssize_t n = write_all(fd, text, strlen(text));
        return n < 0 ? (int) n : 0;
}

int userns_map_self(uid_t outer_uid, gid_t outer_gid) {
        char map[64];
        int r = write_proc_self("/proc/self/setgroups", "deny");
        if (r < 0 && r != -ENOENT)
                return r;
        (void) snprintf(map, sizeof(map), "%u %u 1\n", (unsigned) outer_uid, (unsigned) outer_uid);
        r = write_proc_self("/proc/self/uid_map", map);
        if (r < 0)
                return r;
        (void) snprintf(map, sizeof(map), "%u %u 1\n", (unsigned) outer_gid, (unsigned) outer_gid);
        return write_proc_self("/proc/self/gid_map", map);
}

static int last_cap(void) {
        /* Probe instead of trusting CAP_LAST_CAP from old headers: PR_CAPBSET_READ fails with
         * EINVAL past the kernel's last capability. */
        int c = CAP_LAST_CAP;
        while (prctl(PR_CAPBSET_READ, (unsigned long) c + 1, 0, 0, 0) >= 0)
                c++;
        return c;
}

int process_drop_capabilities(void) {
        if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
                return -errno;
        for (int c = 0, last = last_cap(); c <= last; c++)
                if (prctl(PR_CAPBSET_DROP, (unsigned long) c, 0, 0, 0) < 0 && errno != EINVAL)
                        return -errno;
        /* Without NOROOT, uid 0 inside (a root launcher maps 0 to 0) would get the full permitted
         * set back at execve from the (now empty) bounding set; with it, exec never grants
         * capabilities, and the lock stops the command from undoing it. */
        unsigned long bits = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
                             SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
                             SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
        if (prctl(PR_SET_SECUREBITS, bits, 0, 0, 0) < 0)
                return -errno;
        struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
        struct __user_cap_data_struct data[2] = { 0 };
        if (syscall(SYS_capset, &hdr, data) < 0)
                return -errno;
        return 0;
}

int process_die_with_parent(pid_t expected_parent) {
        if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
                return -errno;
        /* The parent may have died between fork() and prctl(): then no signal will ever come. */
        if (expected_parent > 0 && getppid() != expected_parent)
                return -ESRCH;
        return 0;
}

int process_close_fds_keep(const int *keep, size_t n) {
        int sorted[PROCESS_KEEP_FDS_MAX];
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
                if (keep[i] < 3)
                        continue;
                /* Refused before anything is closed: dropping an fd from the list would close
                 * the very descriptor the caller means to keep. */
                if (k == ELEMENTSOF(sorted))
                        return -E2BIG;
                sorted[k++] = keep[i];
        }
        for (size_t i = 1; i < k; i++) /* insertion sort: a handful of fds */
                for (size_t j = i; j > 0 && sorted[j - 1] > sorted[j]; j--) {
                        int t = sorted[j];
                        sorted[j] = sorted[j - 1];
                        sorted[j - 1] = t;
                }
        unsigned next = 3;
        for (size_t i = 0; i < k; i++) {
                if ((unsigned) sorted[i] > next &&
                    syscall(SYS_close_range, next, (unsigned) sorted[i] - 1, 0U) < 0)
                        return -errno;
                if ((unsigned) sorted[i] + 1 > next)
                        next = (unsigned) sorted[i] + 1;
        }
        if (syscall(SYS_close_range, next, ~0U, 0U) < 0)
                return -errno;
        return 0;
}

int process_disable_core_dumps(void) {
        struct rlimit rl = { 0, 0 };
        if (setrlimit(RLIMIT_CORE, &rl) < 0)
                return -errno;
        return 0;
}
