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
#include <linux/audit.h>
#include <sys/syscall.h>

#include "seccomp-bpf.h" /* generated (build tree): programs, rule numbers, foreign ABI names */
#include "util/uapi.h"
#include "util/util.h"

#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#define X32_BIT 0x40000000U
#elif defined(__aarch64__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#endif

int seccomp_embedded_sandbox_filter(const seccomp_options *opt, const void **ret, size_t *ret_len) {
        if (opt->kernel_denials || ((opt->unix_connect || opt->landlock_backend) &&
                                    !opt->notify_creates))
                return -EINVAL;
        if (opt->vm_guest) {
                if (opt->notify_creates || opt->unix_connect || opt->landlock_backend)
                        return -EINVAL;
                *ret = cordon_seccomp_bpf_guest;
                *ret_len = sizeof(cordon_seccomp_bpf_guest);
        } else if (opt->landlock_backend) {
                *ret = opt->unix_connect ? cordon_seccomp_bpf_landlock_unix : cordon_seccomp_bpf_landlock;
                *ret_len = opt->unix_connect ? sizeof(cordon_seccomp_bpf_landlock_unix)
                                             : sizeof(cordon_seccomp_bpf_landlock);
        } else if (opt->unix_connect) {
                *ret = cordon_seccomp_bpf_notify_unix;
                *ret_len = sizeof(cordon_seccomp_bpf_notify_unix);
        } else if (opt->notify_creates) {
                *ret = cordon_seccomp_bpf_notify;
                *ret_len = sizeof(cordon_seccomp_bpf_notify);
        } else {
                *ret = cordon_seccomp_bpf_plain;
                *ret_len = sizeof(cordon_seccomp_bpf_plain);
        }
        return 0;
}

const seccomp_plan_rule *seccomp_rule_for(const struct seccomp_data *d, const seccomp_options *opt) {
        size_t n;
        const seccomp_plan_rule *rules = seccomp_plan_rules(&n);
        _Static_assert(ELEMENTSOF(cordon_seccomp_rule_nrs) > 0, "rule numbers generated");
        if (n != ELEMENTSOF(cordon_seccomp_rule_nrs) || seccomp_is_foreign(d))
                return NULL;
        for (size_t i = 0; i < n; i++)
                if (seccomp_plan_rule_wanted(&rules[i], opt) &&
                    seccomp_plan_rule_matches(&rules[i], cordon_seccomp_rule_nrs[i], d))
                        return &rules[i];
        return NULL;
}

bool seccomp_is_foreign(const struct seccomp_data *d) {
#ifdef X32_BIT
        if (d->nr & X32_BIT)
                return true;
#endif
        return d->arch != NATIVE_ARCH;
}

const char *seccomp_foreign_syscall_name(const struct seccomp_data *d, const char **ret_abi) {
        *ret_abi = NULL;
        if (!seccomp_is_foreign(d))
                return NULL;
#if defined(__x86_64__)
        if (d->arch == AUDIT_ARCH_I386) {
                *ret_abi = "ia32";
                return d->nr >= 0 && (size_t) d->nr < ELEMENTSOF(cordon_seccomp_ia32_names)
                               ? cordon_seccomp_ia32_names[d->nr]
                               : NULL;
        }
        if (d->arch == AUDIT_ARCH_X86_64) {
                uint32_t nr = (uint32_t) d->nr & ~X32_BIT;
                *ret_abi = "x32";
                return nr < ELEMENTSOF(cordon_seccomp_x32_names) ? cordon_seccomp_x32_names[nr] : NULL;
        }
#endif
        *ret_abi = "foreign";
        return NULL;
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
