/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nosandbox: runs a command on a host that "has no sandbox". It installs a seccomp filter that
 * makes the kernel features cordon's backends need fail the way a restricted host fails them, then
 * execs its arguments. In the spirit of crun's tests/no_openat2.c: the whole fail-closed path is
 * tested on a machine that does have the features.
 *
 *   nosandbox [--only-userns | --only-landlock | --apparmor-userns] CMD [ARGS...]
 *
 * default: both of the below
 * --only-userns:   unshare(CLONE_NEWUSER) and clone(CLONE_NEWUSER) -> EPERM, clone3() -> ENOSYS
 *                  (its flags live in memory, so a filter cannot look at them; glibc then falls
 *                  back to clone), as a host with unprivileged user namespaces disabled answers
 *                  (sysctl user.max_user_namespaces=0, kernel.unprivileged_userns_clone=0, or a
 *                  container's seccomp profile); unshare() of anything else still works
 * --only-landlock: landlock_create_ruleset/add_rule/restrict_self -> ENOSYS, as a kernel built
 *                  without Landlock answers
 * --apparmor-userns: the user namespace is created, but nothing in it may mount (mount(2) and
 *                  the new mount API -> EACCES), as Ubuntu 24.04's AppArmor restriction leaves an
 *                  unconfined program: the native backend fails after unshare()
 */
#include <errno.h>
#include <linux/sched.h>
#include <seccomp.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#define __NR_landlock_add_rule 445
#define __NR_landlock_restrict_self 446
#endif

static int deny_userns(scmp_filter_ctx ctx) {
        int r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(unshare), 1,
                                 SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER));
        if (r == 0)
                r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
                                     SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER));
        if (r == 0)
                r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
        return r;
}

/* What an AppArmor-restricted program meets inside its new user namespace: no mount. */
static int deny_mounts(scmp_filter_ctx ctx) {
        static const char *const names[] = { "mount", "fsopen", "fsmount", "open_tree",
                                             "move_mount", "mount_setattr" };
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
                int nr = seccomp_syscall_resolve_name(names[i]);
                if (nr == __NR_SCMP_ERROR)
                        continue; /* unknown to this libseccomp: the kernel has it, tests see it */
                int r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EACCES), nr, 0);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int deny_landlock(scmp_filter_ctx ctx) {
        static const int nrs[] = { __NR_landlock_create_ruleset, __NR_landlock_add_rule,
                                   __NR_landlock_restrict_self };
        for (size_t i = 0; i < sizeof nrs / sizeof nrs[0]; i++) {
                int r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), nrs[i], 0);
                if (r < 0)
                        return r;
        }
        return 0;
}

int main(int argc, char **argv) {
        bool userns = true, landlock = true, mounts = false;
        int i = 1;
        if (i < argc && strcmp(argv[i], "--only-userns") == 0)
                landlock = false, i++;
        else if (i < argc && strcmp(argv[i], "--only-landlock") == 0)
                userns = false, i++;
        else if (i < argc && strcmp(argv[i], "--apparmor-userns") == 0)
                userns = landlock = false, mounts = true, i++;
        if (i < argc && strcmp(argv[i], "--") == 0)
                i++;
        if (i >= argc) {
                fprintf(stderr, "usage: nosandbox [--only-userns|--only-landlock|--apparmor-userns] "
                                "CMD [ARGS...]\n");
                return 2;
        }
        scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
        if (!ctx) {
                fprintf(stderr, "nosandbox: seccomp_init failed\n");
                return 2;
        }
        /* Calls of other ABIs (x32, ia32) pass here: the host being emulated lacks user
         * namespaces, not those; cordon's own filter refuses them (libseccomp's default would kill
         * the caller, which is not what such a host does). */
        int r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ALLOW);
        if (r == 0 && userns)
                r = deny_userns(ctx);
        if (r == 0 && landlock)
                r = deny_landlock(ctx);
        if (r == 0 && mounts)
                r = deny_mounts(ctx);
        /* no_new_privs lets an unprivileged user load the filter; cordon sets it anyway. */
        if (r == 0 && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                r = -errno;
        if (r == 0)
                r = seccomp_load(ctx);
        seccomp_release(ctx);
        if (r < 0) {
                fprintf(stderr, "nosandbox: installing the filter: %s\n", strerror(-r));
                return 2;
        }
        execvp(argv[i], argv + i);
        fprintf(stderr, "nosandbox: exec %s: %s\n", argv[i], strerror(errno));
        return 127;
}
