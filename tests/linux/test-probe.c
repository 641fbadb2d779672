/* SPDX-License-Identifier: Apache-2.0 */
/* The probe (src/linux/probe*.c): each fact it reports is compared with what this test finds out
 * by other means (util-linux unshare, libseccomp, a real ADDFD round trip, /proc/self/mountinfo);
 * the verdicts are tested on made-up hosts; forced unavailability (a seccomp filter that makes the
 * features fail as a restricted host would) must be reported as such; the JSON has its shape. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <linux/filter.h>
#include <seccomp.h>
#include <setjmp.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "linux/probe.h"
#include "util/uapi.h"

extern char **environ;

static probe_facts host;

static int setup(void **state) {
        return probe_facts_collect(&host) == 0 ? 0 : -1;
}

/* ---- Independent evidence ------------------------------------------------------------------ */

/* util-linux unshare(1) with the same namespaces; -1 when the tool is missing. */
static int unshare_tool_works(void) {
        static const char *const paths[] = { "/usr/bin/unshare", "/bin/unshare" };
        for (size_t i = 0; i < 2; i++) {
                if (access(paths[i], X_OK) != 0)
                        continue;
                char *argv[] = { (char *) paths[i], (char *) "--user", (char *) "--map-current-user",
                                 (char *) "--mount", (char *) "--pid", (char *) "--net",
                                 (char *) "--ipc", (char *) "--uts", (char *) "--cgroup",
                                 (char *) "--propagation=private", (char *) "true", NULL };
                pid_t pid;
                posix_spawn_file_actions_t fa;
                posix_spawn_file_actions_init(&fa);
                posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
                int r = posix_spawn(&pid, paths[i], &fa, NULL, argv, environ);
                posix_spawn_file_actions_destroy(&fa);
                if (r != 0)
                        return -1;
                int status;
                assert_int_equal(waitpid(pid, &status, 0), pid);
                return WIFEXITED(status) && WEXITSTATUS(status) == 0;
        }
        return -1;
}

/* libseccomp builds and loads a notifying filter in a child: user notification works. */
static bool libseccomp_notify_works(void) {
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
                if (!ctx || seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(getppid), 0) < 0 ||
                    seccomp_load(ctx) < 0 || seccomp_notify_fd(ctx) < 0)
                        _exit(1);
                _exit(0);
        }
        int status;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* A real SECCOMP_ADDFD_FLAG_SEND round trip: a grandchild's getppid() is answered with an fd
 * installed by the supervisor (its parent) in one step. Exit 0 = it worked. */
static void addfd_send_supervisor(int listener, pid_t target) {
        struct seccomp_notif req;
        memset(&req, 0, sizeof(req));
        if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0)
                _exit(2);
        struct seccomp_notif_addfd a = { .id = req.id, .flags = SECCOMP_ADDFD_FLAG_SEND,
                                         .srcfd = (unsigned) listener };
        int sent = ioctl(listener, SECCOMP_IOCTL_NOTIF_ADDFD, &a);
        if (sent < 0) {
                (void) kill(target, SIGKILL);
                _exit(3);
        }
        int status;
        if (waitpid(target, &status, 0) != target)
                _exit(4);
        _exit(WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 5);
}

static bool addfd_send_works(void) {
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                struct sock_filter insn[] = {
                        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
                        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
                        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
                        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
                };
                struct sock_fprog prog = { .len = 4, .filter = insn };
                if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                        _exit(1);
                int listener = (int) syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
                                             SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
                if (listener < 0)
                        _exit(1);
                pid_t target = fork();
                if (target == 0) {
                        long fd = syscall(SYS_getppid); /* answered with an installed fd */
                        _exit(fd >= 0 && fcntl((int) fd, F_GETFD) >= 0 ? 0 : 1);
                }
                addfd_send_supervisor(listener, target);
        }
        int status;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* What /proc/self/mountinfo says about cgroup2 under /sys/fs/cgroup. */
static probe_cgroup cgroup_from_mountinfo(void) {
        FILE *f = fopen("/proc/self/mountinfo", "re");
        assert_non_null(f);
        char line[4096];
        probe_cgroup c = PROBE_CGROUP_NONE;
        while (fgets(line, sizeof(line), f)) {
                char mnt[1024];
                const char *sep = strstr(line, " - ");
                if (!sep || sscanf(line, "%*s %*s %*s %*s %1023s", mnt) != 1)
                        continue;
                if (strncmp(sep, " - cgroup2 ", 11) != 0)
                        continue;
                if (strcmp(mnt, "/sys/fs/cgroup") == 0)
                        c = PROBE_CGROUP_UNIFIED;
                else if (strcmp(mnt, "/sys/fs/cgroup/unified") == 0 && c == PROBE_CGROUP_NONE)
                        c = PROBE_CGROUP_HYBRID;
        }
        fclose(f);
        return c;
}

static void test_facts_match_independent_evidence(void **state) {
        struct utsname u;
        assert_int_equal(uname(&u), 0);
        assert_string_equal(host.release, u.release);
        assert_int_equal(host.root, geteuid() == 0);

        long abi = syscall(__NR_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
        assert_int_equal(host.landlock_abi, abi > 0 ? abi : 0);

        int kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
        assert_int_equal(host.kvm, kvm >= 0);
        if (kvm >= 0)
                close(kvm);
        /* The microvm facts: a guest that ran names its KVM; the VMM and kernel are files. */
        assert_true(host.kvm || !host.kvm_guest_ran);
        assert_int_equal(host.kvm_kind == PROBE_KVM_NONE, !host.kvm_guest_ran);
        if (host.kvm_kind == PROBE_KVM_PVM)
                assert_int_equal(access("/sys/module/kvm_pvm", F_OK), 0);
        assert_true(host.vmm[0] == '\0' || access(host.vmm, X_OK) == 0);
        assert_true(host.kernel[0] == '\0' || access(host.kernel, R_OK) == 0);
        assert_int_equal(host.kernel[0] == '\0', host.kernel_modules[0] == '\0');

        struct open_how how = { .flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC };
        long fd = syscall(__NR_openat2, AT_FDCWD, "/proc", &how, sizeof(how));
        assert_int_equal(host.openat2, fd >= 0);
        if (fd >= 0)
                close((int) fd);

        assert_string_equal(probe_cgroup_to_string(host.cgroup2),
                            probe_cgroup_to_string(cgroup_from_mountinfo()));

        int tool = unshare_tool_works();
        if (tool >= 0)
                assert_int_equal(host.userns, tool);
        assert_int_equal(host.seccomp_user_notif, libseccomp_notify_works());
        assert_int_equal(host.seccomp_addfd_send, addfd_send_works());
        print_message("host: userns=%d (unshare(1): %d) landlock=%d notify=%d waitkill=%d "
                      "addfd_send=%d openat2=%d cgroup2=%s kvm=%d root=%d\n",
                      host.userns, tool, host.landlock_abi, host.seccomp_user_notif,
                      host.seccomp_wait_killable_recv, host.seccomp_addfd_send, host.openat2,
                      probe_cgroup_to_string(host.cgroup2), host.kvm, host.root);
}

/* The cache hands out the same facts as a fresh probe. */
static void test_cache(void **state) {
        const probe_facts *a, *b;
        assert_int_equal(probe_facts_get(&a), 0);
        assert_int_equal(probe_facts_get(&b), 0);
        assert_ptr_equal(a, b);
        assert_int_equal(a->userns, host.userns);
        assert_int_equal(a->landlock_abi, host.landlock_abi);
        assert_int_equal(a->seccomp_wait_killable_recv, host.seccomp_wait_killable_recv);
}

/* ---- Forced unavailability ---------------------------------------------------------------- */

typedef enum restriction {
        RESTRICT_FEATURES,       /* unshare EPERM, Landlock ENOSYS, WAIT_KILLABLE_RECV EINVAL */
        RESTRICT_NESTED_LISTENER /* a listener exists already: a new one gets EBUSY */
} restriction;

static int restrict_features(void) {
        scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
        if (!ctx)
                return -1;
        int r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(unshare), 0);
        if (r == 0)
                r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), __NR_landlock_create_ruleset, 0);
        /* A pre-5.19 kernel: the flag is unknown, so seccomp() says EINVAL. */
        if (r == 0)
                r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EINVAL), SCMP_SYS(seccomp), 1,
                                     SCMP_A1(SCMP_CMP_MASKED_EQ,
                                             SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV,
                                             SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV));
        if (r == 0)
                r = seccomp_load(ctx);
        seccomp_release(ctx);
        return r;
}

static int restrict_nested_listener(void) {
        struct sock_filter insn[] = { BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW) };
        struct sock_fprog prog = { .len = 1, .filter = insn };
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                return -1;
        return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER,
                       &prog) < 0 ? -1 : 0;
}

/* Probes in a child under `how` and returns the facts it saw. */
static probe_facts probe_restricted(restriction how) {
        int p[2];
        assert_int_equal(pipe2(p, O_CLOEXEC), 0);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                probe_facts f;
                int r = how == RESTRICT_FEATURES ? restrict_features() : restrict_nested_listener();
                if (r < 0 || probe_facts_collect(&f) < 0)
                        _exit(1);
                _exit(write(p[1], &f, sizeof(f)) == (ssize_t) sizeof(f) ? 0 : 1);
        }
        close(p[1]);
        probe_facts f;
        assert_int_equal(read(p[0], &f, sizeof(f)), sizeof(f));
        close(p[0]);
        int status;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        return f;
}

static void test_forced_unavailability(void **state) {
        if (!host.userns || !host.seccomp_user_notif)
                skip(); /* nothing to take away on this host */
        probe_facts f = probe_restricted(RESTRICT_FEATURES);
        assert_false(f.userns);
        assert_string_equal(f.userns_step, "unshare");
        assert_int_equal(f.userns_errno, EPERM);
        assert_int_equal(f.landlock_abi, 0);
        assert_int_equal(f.landlock_errno, ENOSYS);
        assert_true(f.seccomp_user_notif); /* the fallback without the flag still listens */
        assert_false(f.seccomp_wait_killable_recv);

        probe_backend b[PROBE_N_BACKENDS];
        probe_evaluate(&f, b);
        assert_int_equal(b[0].status, PROBE_UNUSABLE);
        assert_non_null(strstr(b[0].hint, "user namespaces are not usable (unshare: "));
        assert_int_equal(probe_default_backend(b), -1);

        f = probe_restricted(RESTRICT_NESTED_LISTENER);
        assert_true(f.userns);
        assert_false(f.seccomp_user_notif);
        assert_int_equal(f.seccomp_listener_errno, EBUSY);
        assert_false(f.seccomp_wait_killable_recv || f.seccomp_addfd_send);
        probe_evaluate(&f, b);
        assert_int_equal(b[0].status, PROBE_UNUSABLE);
        assert_non_null(strstr(b[0].hint, "a seccomp listener already exists"));
}

/* ---- Verdicts on made-up hosts ------------------------------------------------------------ */

static probe_facts good_host(void) {
        return (probe_facts) {
                .release = "6.18.0", .userns = true, .max_user_namespaces = 1000,
                .unprivileged_userns_clone = -1, .apparmor_restrict_userns = -1,
                .landlock_abi = 7, .seccomp_filter = true, .seccomp_user_notif = true,
                .seccomp_wait_killable_recv = true, .seccomp_addfd_send = true, .openat2 = true,
                .nft_nat = true, .cgroup2 = PROBE_CGROUP_UNIFIED, .kvm = false, .kvm_errno = ENOENT,
        };
}

static void assert_enforces(const probe_backend *b, bool fs, bool names, bool net, bool pid,
                            bool sys) {
        assert_int_equal(b->enforces.fs, fs);
        assert_int_equal(b->enforces.name_rules, names);
        assert_int_equal(b->enforces.network, net);
        assert_int_equal(b->enforces.pid, pid);
        assert_int_equal(b->enforces.syscalls, sys);
}

static void test_verdict_full_host(void **state) {
        probe_facts f = good_host();
        probe_backend b[PROBE_N_BACKENDS];
        probe_evaluate(&f, b);
        assert_int_equal(b[0].backend, CORDON_BACKEND_NATIVE);
        assert_int_equal(b[0].status, PROBE_FULL);
        assert_enforces(&b[0], true, true, true, true, true);
        assert_string_equal(b[0].hint, "");
        assert_false(b[0].requires_install);
        assert_int_equal(b[1].backend, CORDON_BACKEND_LANDLOCK);
        assert_int_equal(b[1].status, PROBE_PARTIAL); /* never more: no PID namespace */
        assert_non_null(strstr(b[1].hint, "no PID namespace"));
        assert_enforces(&b[1], true, true, true, false, true);
        assert_int_equal(b[2].backend, CORDON_BACKEND_MICROVM);
        assert_int_equal(b[2].status, PROBE_UNUSABLE);
        assert_true(b[2].requires_install);
        assert_non_null(strstr(b[2].hint, "KVM is not usable (/dev/kvm: "));
        assert_int_equal(b[3].backend, CORDON_BACKEND_NONE);
        assert_int_equal(b[3].status, PROBE_FULL);
        assert_enforces(&b[3], false, false, false, false, false);
        assert_int_equal(probe_default_backend(b), CORDON_BACKEND_NATIVE);

}

/* docs/design/microvm.md "Probe": each missing prerequisite is named, with an install hint
 * where a package supplies it; PVM is told apart from hardware KVM; without the VMM or a kernel
 * it is unusable, with them it is partial (software emulation, opt-in) unless hardware KVM
 * makes it full; never the unspecified default. */
static void test_verdict_microvm(void **state) {
        probe_facts f = good_host();
        probe_backend b[PROBE_N_BACKENDS];
        probe_evaluate(&f, b);
        assert_int_equal(b[2].status, PROBE_UNUSABLE);
        assert_non_null(strstr(b[2].hint, "no VMM: install Debian's qemu-system-x86"));
        assert_non_null(strstr(b[2].hint, "no guest kernel: neither /boot/vmlinuz-6.18.0 "));

        f.kvm = true;
        f.kvm_errno = 0;
        probe_evaluate(&f, b);
        assert_non_null(strstr(b[2].hint, "/dev/kvm opens but does not run a guest"));

        f.kvm_guest_ran = true;
        f.kvm_kind = PROBE_KVM_PVM;
        strcpy(f.vmm, "/usr/bin/qemu-system-x86_64");
        strcpy(f.kernel, "/k/vmlinuz");
        strcpy(f.kernel_modules, "/k/modules");
        probe_evaluate(&f, b);
        assert_false(b[2].requires_install); /* software emulation needs nothing installed */
        assert_non_null(strstr(b[2].hint, "KVM here is PVM (kvm_pvm)"));
        assert_null(strstr(b[2].hint, "no VMM"));
        assert_null(strstr(b[2].hint, "no guest kernel"));
        assert_int_equal(b[2].status, PROBE_PARTIAL);
        assert_non_null(strstr(b[2].hint, "software emulation: only with --microvm-accel tcg"));
        assert_int_equal(probe_default_backend(b), CORDON_BACKEND_NATIVE);

        f.kvm_kind = PROBE_KVM_HW;
        probe_evaluate(&f, b);
        assert_int_equal(b[2].status, PROBE_FULL);
        assert_non_null(strstr(b[2].hint, "explicit --backend microvm only (hardware KVM, "
                                          "/usr/bin/qemu-system-x86_64, kernel /k/vmlinuz)"));
        assert_int_equal(probe_default_backend(b), CORDON_BACKEND_NATIVE);
}

static void test_verdict_partial(void **state) {
        probe_backend b[PROBE_N_BACKENDS];
        for (int abi = 0; abi <= 7; abi++) {
                probe_facts f = good_host();
                f.landlock_abi = abi;
                f.landlock_errno = abi ? 0 : EOPNOTSUPP;
                probe_evaluate(&f, b);
                assert_int_equal(b[0].status, abi >= 6 ? PROBE_FULL : PROBE_PARTIAL);
                assert_enforces(&b[0], true, true, true, true, true);
                if (abi == 0)
                        assert_non_null(strstr(b[0].hint, "no Landlock ("));
                else if (abi < 6)
                        assert_non_null(strstr(b[0].hint, "< 6: no abstract Unix socket"));
                assert_int_equal(probe_default_backend(b), CORDON_BACKEND_NATIVE);
        }
        probe_facts f = good_host();
        f.seccomp_wait_killable_recv = false;
        probe_evaluate(&f, b);
        assert_int_equal(b[0].status, PROBE_PARTIAL);
        assert_enforces(&b[0], true, false, true, true, true);
        assert_non_null(strstr(b[0].hint, "no SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV"));
        f = good_host();
        f.seccomp_addfd_send = false;
        probe_evaluate(&f, b);
        assert_int_equal(b[0].status, PROBE_PARTIAL);
        assert_enforces(&b[0], true, false, true, true, true);
        assert_non_null(strstr(b[0].hint, "no SECCOMP_ADDFD_FLAG_SEND"));
        /* Without nf_tables NAT only proxy-aware clients connect: still confining, partial. */
        f = good_host();
        f.nft_nat = false;
        f.nft_nat_errno = EOPNOTSUPP;
        probe_evaluate(&f, b);
        assert_int_equal(b[0].status, PROBE_PARTIAL);
        assert_enforces(&b[0], true, true, true, true, true);
        assert_non_null(strstr(b[0].hint, "no nf_tables NAT in a network namespace"));
        assert_int_equal(probe_default_backend(b), CORDON_BACKEND_NATIVE);
}

/* limits.memory/limits.pids: a cgroup, or rlimits, which cannot hold root's processes (RLIMIT_NPROC
 * exempts uid 0): only that combination makes native partial. */
static void test_verdict_limits(void **state) {
        probe_backend b[PROBE_N_BACKENDS];
        probe_facts f = good_host();
        f.limits = PROBE_LIMITS_RLIMIT;
        probe_evaluate(&f, b);
        assert_int_equal(b[0].status, PROBE_FULL);
        f.root = true;
        probe_evaluate(&f, b);
        assert_int_equal(b[0].status, PROBE_PARTIAL);
        assert_non_null(strstr(b[0].hint, "policies with limits.pids are refused, and the "
                                          "default process ceiling is not enforced"));
        f.limits = PROBE_LIMITS_CGROUP;
        probe_evaluate(&f, b);
        assert_int_equal(b[0].status, PROBE_FULL);
        assert_string_equal(probe_limits_to_string(f.limits), "cgroup");
        assert_string_equal(probe_limits_to_string(PROBE_LIMITS_RLIMIT), "rlimit");
}

/* The landlock backend: only with signal scoping (ABI 6) and the creation supervisor's seccomp
 * features; "partial" at best, the exact list in its hint. */
static void test_verdict_landlock(void **state) {
        probe_backend b[PROBE_N_BACKENDS];
        for (int abi = 0; abi <= 7; abi++) {
                probe_facts f = good_host();
                f.userns = false;
                f.userns_step = "unshare";
                f.userns_errno = EPERM;
                f.landlock_abi = abi;
                probe_evaluate(&f, b);
                if (abi < 6) {
                        assert_int_equal(b[1].status, PROBE_UNUSABLE);
                        assert_enforces(&b[1], false, false, false, false, false);
                        assert_non_null(strstr(b[1].hint, "needs Landlock ABI 6"));
                        assert_int_equal(probe_default_backend(b), -1);
                } else {
                        assert_int_equal(b[1].status, PROBE_PARTIAL);
                        assert_enforces(&b[1], true, true, true, false, true);
                        assert_int_equal(probe_default_backend(b), CORDON_BACKEND_LANDLOCK);
                }
        }
        probe_facts f = good_host();
        f.seccomp_addfd_send = false;
        probe_evaluate(&f, b);
        assert_int_equal(b[1].status, PROBE_UNUSABLE);
        assert_non_null(strstr(b[1].hint, "ADDFD_FLAG_SEND"));
        f = good_host();
        f.limits = PROBE_LIMITS_RLIMIT;
        probe_evaluate(&f, b);
        assert_int_equal(b[1].status, PROBE_PARTIAL);
        assert_non_null(strstr(b[1].hint, "policies with limits.pids are refused, and the "
                                          "default process ceiling is not enforced"));
}

static void test_verdict_unusable(void **state) {
        probe_backend b[PROBE_N_BACKENDS];
        probe_facts f = good_host();
        f.userns = false;
        f.userns_step = "uid_map";
        f.userns_errno = EPERM;
        f.unprivileged_userns_clone = 0;
        probe_evaluate(&f, b);
        assert_int_equal(b[0].status, PROBE_UNUSABLE);
        assert_enforces(&b[0], false, true, false, false, true);
        assert_non_null(strstr(b[0].hint, "(uid_map: Operation not permitted)"));
        assert_non_null(strstr(b[0].hint, "sysctl -w kernel.unprivileged_userns_clone=1"));
        /* The ladder steps down to the landlock backend (docs/design/backends.md), never to none.
         * */
        assert_int_equal(probe_default_backend(b), CORDON_BACKEND_LANDLOCK);

        f.unprivileged_userns_clone = -1;
        f.apparmor_restrict_userns = 1;
        probe_evaluate(&f, b);
        assert_non_null(strstr(b[0].hint, "AppArmor restricts unprivileged user namespaces"));

        f = good_host();
        f.seccomp_user_notif = false;
        f.seccomp_wait_killable_recv = false;
        f.seccomp_addfd_send = false;
        f.seccomp_listener_errno = EOPNOTSUPP;
        probe_evaluate(&f, b);
        assert_int_equal(b[0].status, PROBE_UNUSABLE);
        assert_non_null(strstr(b[0].hint, "seccomp user notification is not usable"));
        assert_int_equal(probe_default_backend(b), -1);
        assert_int_equal(b[3].status, PROBE_FULL); /* "none" stays possible, never default */
}

/* ---- Public API and output shape ---------------------------------------------------------- */

static void assert_keys(json_t *o, const char *const *keys, size_t n) {
        assert_true(json_is_object(o));
        assert_int_equal(json_object_size(o), n);
        for (size_t i = 0; i < n; i++)
                if (!json_object_get(o, keys[i]))
                        fail_msg("missing key %s", keys[i]);
}

static void check_backend_json(json_t *b, const char *name) {
        static const char *const keys[] = { "name", "status", "enforces", "requiresInstall",
                                            "hint", "description" };
        static const char *const enf[] = { "fs", "nameRules", "network", "pid", "syscalls" };
        assert_keys(b, keys, 6);
        assert_string_equal(json_string_value(json_object_get(b, "name")), name);
        const char *status = json_string_value(json_object_get(b, "status"));
        assert_non_null(status);
        assert_true(strcmp(status, "full") == 0 || strcmp(status, "partial") == 0 ||
                    strcmp(status, "unusable") == 0);
        json_t *e = json_object_get(b, "enforces");
        assert_keys(e, enf, 5);
        for (size_t i = 0; i < 5; i++)
                assert_true(json_is_boolean(json_object_get(e, enf[i])));
        assert_true(json_is_boolean(json_object_get(b, "requiresInstall")));
        assert_true(json_is_string(json_object_get(b, "hint")));
        assert_true(json_is_string(json_object_get(b, "description")));
}

static void check_kernel_json(json_t *k) {
        static const char *const keys[] = {
                "release", "root", "userNamespaces", "userNamespacesError", "maxUserNamespaces",
                "unprivilegedUsernsClone", "apparmorRestrictUnprivilegedUserns", "landlockAbi",
                "seccompFilter", "seccompUserNotif", "seccompWaitKillableRecv", "seccompAddfdSend",
                "openat2", "nftablesNat", "cgroup2", "limits", "limitsDetail", "kvm",
                "kvmGuestRuns", "kvmKind", "vmm", "guestKernel", "guestModules",
        };
        assert_keys(k, keys, sizeof(keys) / sizeof(keys[0]));
        assert_int_equal(json_integer_value(json_object_get(k, "landlockAbi")), host.landlock_abi);
        assert_int_equal(json_is_true(json_object_get(k, "userNamespaces")), host.userns);
        assert_int_equal(json_is_true(json_object_get(k, "kvm")), host.kvm);
        assert_int_equal(json_is_true(json_object_get(k, "kvmGuestRuns")), host.kvm_guest_ran);
        assert_string_equal(json_string_value(json_object_get(k, "kvmKind")),
                            probe_kvm_kind_to_string(host.kvm_kind));
        json_t *vmm = json_object_get(k, "vmm");
        assert_true(host.vmm[0] ? json_is_string(vmm) : json_is_null(vmm));
        assert_int_equal(json_is_true(json_object_get(k, "seccompUserNotif")),
                         host.seccomp_user_notif);
        assert_int_equal(json_is_true(json_object_get(k, "seccompWaitKillableRecv")),
                         host.seccomp_wait_killable_recv);
        assert_int_equal(json_is_true(json_object_get(k, "openat2")), host.openat2);
        assert_int_equal(json_is_true(json_object_get(k, "nftablesNat")), host.nft_nat);
        assert_string_equal(json_string_value(json_object_get(k, "cgroup2")),
                            probe_cgroup_to_string(host.cgroup2));
        assert_true(host.userns ? json_is_null(json_object_get(k, "userNamespacesError"))
                                : json_is_string(json_object_get(k, "userNamespacesError")));
}

static void test_public_json(void **state) {
        cordon_probe *p = NULL;
        cordon_error err = { 0 };
        assert_int_equal(cordon_probe_run(&p, &err), 0);
        char *s = NULL;
        assert_int_equal(cordon_probe_to_json(p, &s, &err), 0);
        assert_non_null(s);
        json_error_t jerr;
        json_t *root = json_loads(s, JSON_REJECT_DUPLICATES, &jerr);
        if (!root)
                fail_msg("probe JSON does not parse: %s\n%s", jerr.text, s);
        static const char *const keys[] = { "backends", "kernel", "defaultBackend", "secrets" };
        assert_keys(root, keys, 4);
        static const char *const secret_keys[] = { "store", "usable", "requiresInstall", "detail",
                                                   "hint" };
        json_t *sec = json_object_get(root, "secrets");
        assert_keys(sec, secret_keys, 5);
        assert_true(json_is_boolean(json_object_get(sec, "usable")));
        assert_true(json_is_string(json_object_get(sec, "detail")));
        json_t *backends = json_object_get(root, "backends");
        assert_int_equal(json_array_size(backends), 4);
        static const char *const names[] = { "native", "landlock", "microvm", "none" };
        for (size_t i = 0; i < 4; i++)
                check_backend_json(json_array_get(backends, i), names[i]);
        check_kernel_json(json_object_get(root, "kernel"));
        const probe_backend *native = probe_get_backend(p, CORDON_BACKEND_NATIVE);
        json_t *def = json_object_get(root, "defaultBackend");
        if (native->status == PROBE_UNUSABLE)
                assert_true(json_is_null(def));
        else
                assert_string_equal(json_string_value(def), "native");
        assert_null(probe_get_backend(p, CORDON_BACKEND_AUTO));
        json_decref(root);
        free(s);
        cordon_probe_free(p);
}

static void test_public_text(void **state) {
        cordon_probe *p = NULL;
        assert_int_equal(cordon_probe_run(&p, NULL), 0);
        char *s = NULL;
        assert_int_equal(cordon_probe_to_text(p, &s, NULL), 0);
        assert_non_null(s);
        static const char *const names[] = { "native", "landlock", "microvm", "none" };
        const char *line = strchr(s, '\n') + 1; /* after the header */
        for (size_t i = 0; i < 4; i++) {
                const probe_backend *b = probe_get_backend(p, (cordon_backend) (i + 1));
                char want[64];
                snprintf(want, sizeof(want), "%-9s %-9s ", names[i],
                         probe_status_to_string(b->status));
                assert_memory_equal(line, want, strlen(want));
                line = strchr(line, '\n') + 1;
        }
        char want[64];
        snprintf(want, sizeof(want), "  %-28s %d\n", "landlock ABI", host.landlock_abi);
        assert_non_null(strstr(s, want));
        free(s);
        /* The serializers' failure shape: -EINVAL (USAGE) with *ret NULL. */
        cordon_error err = { 0 };
        assert_int_equal(cordon_probe_to_text(p, NULL, &err), -EINVAL);
        assert_int_equal(err.code, CORDON_USAGE);
        s = want;
        assert_int_equal(cordon_probe_to_json(NULL, &s, NULL), -EINVAL);
        assert_null(s);
        cordon_probe_free(p);
        /* ... and a constructor's. */
        assert_int_equal(cordon_probe_run(NULL, &err), -EINVAL);
}

/* The secret store's line: which store and why, and the install hint only where a package
 * would help (a bus with no keyring, no libsystemd). */
static void test_secrets_report(void **state) {
        (void) state;
        probe_secrets p;
        probe_secrets_evaluate(0, false, false, "no session bus: DBUS_SESSION_BUS_ADDRESS is not set",
                               &p);
        assert_true(p.usable);
        assert_false(p.service);
        assert_false(p.requires_install);
        assert_string_equal(p.detail, "file store ~/.config/cordon/secrets/store (no session bus: "
                                      "DBUS_SESSION_BUS_ADDRESS is not set)");
        assert_string_equal(p.hint, "");
        probe_secrets_evaluate(0, false, true, "no Secret Service on the session bus", &p);
        assert_true(p.usable);
        assert_true(p.requires_install);
        assert_string_equal(p.detail, "file store ~/.config/cordon/secrets/store (no Secret "
                                      "Service on the session bus)");
        assert_non_null(strstr(p.hint, "gnome-keyring"));
        probe_secrets_evaluate(0, true, true, "org.freedesktop.secrets is on the session bus", &p);
        assert_true(p.service);
        assert_false(p.requires_install);
        assert_string_equal(p.detail, "Secret Service (org.freedesktop.secrets is on the session "
                                      "bus)");
        probe_secrets_evaluate(-ENOSYS, false, true, "cannot load libsystemd.so.0 (x); install "
                               "libsystemd0", &p);
        assert_false(p.usable);
        assert_true(p.requires_install);
        assert_non_null(strstr(p.detail, "none usable"));
        probe_secrets_evaluate(-ECONNREFUSED, false, true, "cannot ask the session bus", &p);
        assert_false(p.usable);
        assert_false(p.requires_install);
        assert_non_null(strstr(p.hint, "unset DBUS_SESSION_BUS_ADDRESS"));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_secrets_report),
                cmocka_unit_test(test_facts_match_independent_evidence),
                cmocka_unit_test(test_cache),
                cmocka_unit_test(test_forced_unavailability),
                cmocka_unit_test(test_verdict_full_host),
                cmocka_unit_test(test_verdict_microvm),
                cmocka_unit_test(test_verdict_partial),
                cmocka_unit_test(test_verdict_landlock),
                cmocka_unit_test(test_verdict_unusable),
                cmocka_unit_test(test_verdict_limits),
                cmocka_unit_test(test_public_json),
                cmocka_unit_test(test_public_text),
        };
        return cmocka_run_group_tests(tests, setup, NULL);
}
