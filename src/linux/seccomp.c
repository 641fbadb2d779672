/* SPDX-License-Identifier: Apache-2.0 */
/* Loads the sandbox's seccomp filter with seccomp(2) directly: libseccomp 2.5.4 (Debian 12) cannot
 * ask for SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (pitfall 14 of the creation-rules notes).
 *
 * The program itself is built from the rule table by libseccomp at *build* time (seccomp-gen,
 * seccomp-build.c) and embedded: building it costs about 0.25 ms, a twentieth of a sandbox's
 * start-up, and it depends on nothing but the table and the architecture. The unit tests check
 * that the embedded program equals a freshly built one, so the two cannot drift apart. */
#include "linux/seccomp.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/syscall.h>

#include "linux/seccomp-bpf.h" /* generated: cordon_seccomp_bpf_notify[], _plain[] */
#include "linux/uapi.h"
#include "util/util.h"

int seccomp_embedded_sandbox_filter(const seccomp_options *opt, const void **ret, size_t *ret_len) {
        if (opt->notify_creates) {
                *ret = cordon_seccomp_bpf_notify;
                *ret_len = sizeof(cordon_seccomp_bpf_notify);
        } else {
                *ret = cordon_seccomp_bpf_plain;
                *ret_len = sizeof(cordon_seccomp_bpf_plain);
        }
        return 0;
}

int seccomp_install_sandbox_filter(const seccomp_options *opt, int *ret_listener) {
        const void *prog = NULL;
        size_t len = 0;
        int r = seccomp_embedded_sandbox_filter(opt, &prog, &len);
        if (r < 0)
                return r;
        struct sock_fprog fprog = { .len = (unsigned short) (len / sizeof(struct sock_filter)),
                                    .filter = (struct sock_filter *) prog };
        /* WAIT_KILLABLE_RECV: once the supervisor has received a request, only fatal signals
         * interrupt the caller. Otherwise a signal arriving while the supervisor creates the file
         * restarts the syscall, which then fails with a spurious EEXIST (pitfall 4). */
        unsigned long flags = opt->notify_creates ? SECCOMP_FILTER_FLAG_NEW_LISTENER |
                                                            SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
                                                  : 0;
        long fd = syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, flags, &fprog);
        if (fd < 0)
                return -errno;
        if (opt->notify_creates) {
                /* The kernel creates the listener O_CLOEXEC; make sure, since an inherited
                 * listener would let the command answer its own notifications. */
                if (fcntl((int) fd, F_SETFD, FD_CLOEXEC) < 0) {
                        int e = -errno;
                        (void) close((int) fd);
                        return e;
                }
                *ret_listener = (int) fd;
        } else if (ret_listener)
                *ret_listener = -1;
        return 0;
}
