/* SPDX-License-Identifier: Apache-2.0 */
/* The seccomp filter tested as data: the exported BPF program run through an interpreter for every
 * rule of the table (condition met, condition missed), other ABIs, and syscalls that must pass. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <linux/audit.h>
#include <seccomp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>

#include <cmocka.h>

#include "linux/seccomp.h"
#include "plan/seccomp-plan.h"

typedef struct prog {
        struct sock_filter *insns;
        size_t n;
} prog;

/* The programs the sandbox can load, and the microvm guest's. */
static const seccomp_options variants[] = {
        { .notify_creates = true },
        { .notify_creates = true, .unix_connect = true },
        { 0 },
        { .vm_guest = true },
};

static prog export_opts(seccomp_options o) {
        void *p = NULL;
        size_t len = 0;
        assert_int_equal(seccomp_export_sandbox_filter(&o, &p, &len), 0);
        return (prog) { p, len / sizeof(struct sock_filter) };
}

static prog export(bool notify) {
        return export_opts((seccomp_options) { .notify_creates = notify });
}

static int rule_nr(const seccomp_plan_rule *r) {
        int nr = seccomp_syscall_resolve_name(r->syscall);
        return nr == __NR_SCMP_ERROR ? r->generic_nr : nr;
}

static const char *variant_name(const seccomp_options *o) {
        return o->vm_guest ? "guest" : o->unix_connect ? "notify+unix"
                                    : o->notify_creates ? "notify" : "plain";
}

static uint32_t run(const prog *p, uint32_t arch, int nr, const uint64_t args[6]) {
        struct seccomp_data d = { .nr = nr, .arch = arch };
        if (args)
                memcpy(d.args, args, sizeof(d.args));
        return seccomp_bpf_run(p->insns, p->n, &d);
}

/* What the table says the call yields in that program (QUIET refusals stay in the kernel). */
static uint32_t expected(const seccomp_plan_rule *r, const seccomp_options *o) {
        if (r->action == SECCOMP_PLAN_NOTIFY)
                return SECCOMP_RET_USER_NOTIF;
        if (o->notify_creates && !o->kernel_denials && !(r->flags & SECCOMP_PLAN_QUIET))
                return SECCOMP_RET_USER_NOTIF;
        return SECCOMP_RET_ERRNO | (uint32_t) r->err;
}

/* Every wanted rule does what the table says, only when its conditions hold, and the supervisor's
 * matcher (seccomp_rule_for) finds the same rule the program acted on. */
static void check_table(const seccomp_options *o) {
        prog p = export_opts(*o);
        size_t n;
        const seccomp_plan_rule *rules = seccomp_plan_rules(&n);
        for (size_t i = 0; i < n; i++) {
                const seccomp_plan_rule *r = &rules[i];
                if (!seccomp_plan_rule_wanted(r, o))
                        continue;
                int nr = rule_nr(r);
                if (nr <= 0)
                        fail_msg("%s: no syscall number", r->syscall);
                uint64_t args[6] = { 0 };
                for (uint8_t c = 0; c < r->n_conds; c++)
                        args[r->conds[c].arg] = r->conds[c].value;
                uint32_t got = run(&p, AUDIT_ARCH_X86_64, nr, args);
                char what[256];
                seccomp_plan_rule_format(r, what, sizeof(what));
                if (got != expected(r, o))
                        fail_msg("%s (%s): got %#x want %#x", what, variant_name(o), got,
                                 expected(r, o));
                struct seccomp_data d = { .nr = nr, .arch = AUDIT_ARCH_X86_64 };
                memcpy(d.args, args, sizeof(d.args));
                if (seccomp_rule_for(&d, o) != r)
                        fail_msg("%s (%s): the supervisor's matcher finds another rule", what,
                                 variant_name(o));
                for (uint8_t c = 0; c < r->n_conds; c++) {
                        uint64_t miss[6];
                        memcpy(miss, args, sizeof(miss));
                        uint64_t lowbit = r->conds[c].mask & -r->conds[c].mask;
                        miss[r->conds[c].arg] ^= lowbit;
                        got = run(&p, AUDIT_ARCH_X86_64, nr, miss);
                        if (got != SECCOMP_RET_ALLOW)
                                fail_msg("%s with arg%u ^ %#llx: got %#x want ALLOW", what,
                                         r->conds[c].arg, (unsigned long long) lowbit, got);
                        memcpy(d.args, miss, sizeof(d.args));
                        if (seccomp_rule_for(&d, o) != NULL)
                                fail_msg("%s with arg%u ^ %#llx: the matcher still matches", what,
                                         r->conds[c].arg, (unsigned long long) lowbit);
                }
        }
        free(p.insns);
}

static void test_table(void **state) {
        (void) state;
        for (size_t i = 0; i < sizeof(variants) / sizeof(variants[0]); i++)
                check_table(&variants[i]);
}

/* Reporting refusals must not make an allowed call slower: the program that answers refusals in
 * the kernel and the one that notifies them execute exactly as many instructions for every call
 * they allow (the decisions are the same tree; only the refusing leaves return another value).
 * Checked on every syscall number with zeroed and with typical arguments. */
static void test_reporting_costs_allowed_calls_nothing(void **state) {
        (void) state;
        for (int unix_on = 0; unix_on <= 1; unix_on++) {
                seccomp_options rep = { .notify_creates = true, .unix_connect = unix_on };
                seccomp_options ker = rep;
                ker.kernel_denials = true;
                prog a = export_opts(rep), b = export_opts(ker);
                static const uint64_t argsets[][6] = {
                        { 0 },
                        { 2 /* AF_INET */, 1, 0, 0, 0, 0 },
                        { (uint64_t) AT_FDCWD, 0, O_RDONLY | O_CLOEXEC, 0, 0, 0 },
                        { 0x3d0f00 /* pthread clone flags */, 0, 0, 0, 0, 0 },
                };
                unsigned allowed = 0;
                for (int nr = 0; nr < 470; nr++)
                        for (size_t k = 0; k < sizeof(argsets) / sizeof(argsets[0]); k++) {
                                struct seccomp_data d = { .nr = nr, .arch = AUDIT_ARCH_X86_64 };
                                memcpy(d.args, argsets[k], sizeof(d.args));
                                unsigned sa, sb;
                                uint32_t ra = seccomp_bpf_run_counted(a.insns, a.n, &d, &sa);
                                uint32_t rb = seccomp_bpf_run_counted(b.insns, b.n, &d, &sb);
                                if (rb != SECCOMP_RET_ALLOW) {
                                        /* Refused either way, the same errno to the caller. */
                                        assert_true(ra == rb || ra == SECCOMP_RET_USER_NOTIF);
                                        continue;
                                }
                                allowed++;
                                if (ra != SECCOMP_RET_ALLOW || sa != sb)
                                        fail_msg("nr %d args #%zu: %#x in %u steps with reports, "
                                                 "%#x in %u without", nr, k, ra, sa, rb, sb);
                        }
                assert_true(allowed > 1000);
                free(a.insns);
                free(b.insns);
        }
}

/* cordon loads the program embedded at build time; it must be exactly what the rule table gives
 * now, so the table (and every check above, which runs on a fresh export) governs what is loaded. */
static void check_embedded(seccomp_options opt) {
        void *fresh = NULL;
        const void *embedded = NULL;
        size_t fresh_len = 0, embedded_len = 0;
        assert_int_equal(seccomp_export_sandbox_filter(&opt, &fresh, &fresh_len), 0);
        assert_int_equal(seccomp_embedded_sandbox_filter(&opt, &embedded, &embedded_len), 0);
        assert_int_equal(embedded_len, fresh_len);
        assert_memory_equal(embedded, fresh, fresh_len);
        free(fresh);
}

static void test_embedded_matches_table(void **state) {
        (void) state;
        for (size_t i = 0; i < sizeof(variants) / sizeof(variants[0]); i++)
                check_embedded(variants[i]);
        const void *none = NULL;
        size_t len = 0;
        seccomp_options odd = { .unix_connect = true };
        assert_int_equal(seccomp_embedded_sandbox_filter(&odd, &none, &len), -EINVAL);
        odd = (seccomp_options) { .notify_creates = true, .kernel_denials = true };
        assert_int_equal(seccomp_embedded_sandbox_filter(&odd, &none, &len), -EINVAL);
}

/* The supervisor names what it refuses from numbers generated at build time: they must be the
 * numbers libseccomp resolves now, and the other ABIs' names must be right. */
static void test_names_for_reports(void **state) {
        (void) state;
        size_t n;
        const seccomp_plan_rule *rules = seccomp_plan_rules(&n);
        for (size_t i = 0; i < n; i++)
                assert_int_equal(seccomp_build_rule_nr(&rules[i]), rule_nr(&rules[i]));
        const char *abi = NULL;
        struct seccomp_data d = { .nr = 5, .arch = AUDIT_ARCH_I386 };
        assert_true(seccomp_is_foreign(&d));
        assert_string_equal(seccomp_foreign_syscall_name(&d, &abi), "open");
        assert_string_equal(abi, "ia32");
        d = (struct seccomp_data) { .nr = 0x40000000 | SYS_openat, .arch = AUDIT_ARCH_X86_64 };
        assert_true(seccomp_is_foreign(&d));
        assert_string_equal(seccomp_foreign_syscall_name(&d, &abi), "openat");
        assert_string_equal(abi, "x32");
        d = (struct seccomp_data) { .nr = 0x40000000 | 0x3fff, .arch = AUDIT_ARCH_X86_64 };
        assert_null(seccomp_foreign_syscall_name(&d, &abi));
        assert_string_equal(abi, "x32");
        d = (struct seccomp_data) { .nr = SYS_openat, .arch = AUDIT_ARCH_X86_64 };
        assert_false(seccomp_is_foreign(&d));
        assert_null(seccomp_foreign_syscall_name(&d, &abi));
        assert_null(abi);
        /* Native calls no rule refuses match nothing; foreign ones never match a native rule. */
        d.args[2] = O_RDONLY;
        assert_null(seccomp_rule_for(&d, &variants[0]));
        d = (struct seccomp_data) { .nr = SYS_keyctl, .arch = AUDIT_ARCH_I386 };
        assert_null(seccomp_rule_for(&d, &variants[0]));
        d.arch = AUDIT_ARCH_X86_64;
        const seccomp_plan_rule *k = seccomp_rule_for(&d, &variants[0]);
        assert_non_null(k);
        assert_string_equal(k->syscall, "keyctl");
}

static void check_abis(const seccomp_options *o) {
        prog p = export_opts(*o);
        /* Refused whole: ENOSYS, notified (and reported) when a supervisor listens. */
        const uint32_t enosys = o->notify_creates ? SECCOMP_RET_USER_NOTIF : SECCOMP_RET_ERRNO | ENOSYS;
        uint64_t creat_args[6] = { (uint64_t) AT_FDCWD, 0, O_CREAT | O_WRONLY, 0644 };
        /* x32 numbers on the x86_64 arch, whatever the syscall. */
        assert_int_equal(run(&p, AUDIT_ARCH_X86_64, 0x40000000 | SYS_openat, creat_args), enosys);
        assert_int_equal(run(&p, AUDIT_ARCH_X86_64, 0x40000000 | SYS_read, NULL), enosys);
        assert_int_equal(run(&p, AUDIT_ARCH_X86_64, 0x40000000 | SYS_mkdirat, NULL), enosys);
        /* ia32, and any other architecture. */
        assert_int_equal(run(&p, AUDIT_ARCH_I386, 5, NULL), enosys);
        assert_int_equal(run(&p, AUDIT_ARCH_I386, 0, NULL), enosys);
        assert_int_equal(run(&p, AUDIT_ARCH_AARCH64, 56, NULL), enosys);
        free(p.insns);
}

static void test_abis(void **state) {
        (void) state;
        for (size_t i = 0; i < sizeof(variants) / sizeof(variants[0]); i++)
                check_abis(&variants[i]);
}

/* The microvm guest's program: the native unix variant's refusals, answered by the kernel (no
 * supervisor listens in the guest), and no notifying leaf at all; creations pass to the guest
 * kernel, whose writable file systems are all 9p exports the host's supervisor judges. */
static void test_guest_program(void **state) {
        (void) state;
        prog p = export_opts((seccomp_options) { .vm_guest = true });
        for (size_t i = 0; i < p.n; i++)
                if (BPF_CLASS(p.insns[i].code) == BPF_RET)
                        assert_int_not_equal(p.insns[i].k & SECCOMP_RET_ACTION_FULL,
                                             SECCOMP_RET_USER_NOTIF);
        uint64_t a[6] = { (uint64_t) AT_FDCWD, 0, O_CREAT | O_WRONLY, 0644 };
        assert_int_equal(run(&p, AUDIT_ARCH_X86_64, SYS_openat, a), SECCOMP_RET_ALLOW);
        assert_int_equal(run(&p, AUDIT_ARCH_X86_64, SYS_mkdirat, NULL), SECCOMP_RET_ALLOW);
        assert_int_equal(run(&p, AUDIT_ARCH_X86_64, SYS_renameat2, NULL), SECCOMP_RET_ALLOW);
        uint64_t so[6] = { 1 /* AF_UNIX */, 1 /* SOCK_STREAM */ };
        assert_int_equal(run(&p, AUDIT_ARCH_X86_64, SYS_socket, so), SECCOMP_RET_ALLOW);
        so[1] = 2; /* SOCK_DGRAM */
        assert_int_equal(run(&p, AUDIT_ARCH_X86_64, SYS_socket, so), SECCOMP_RET_ERRNO | EPERM);
        assert_int_equal(run(&p, AUDIT_ARCH_X86_64, SYS_connect, NULL), SECCOMP_RET_ALLOW);
        assert_int_equal(run(&p, AUDIT_ARCH_X86_64, SYS_ptrace, NULL), SECCOMP_RET_ERRNO | EPERM);
        assert_int_equal(run(&p, AUDIT_ARCH_X86_64, SYS_io_uring_setup, NULL),
                         SECCOMP_RET_ERRNO | ENOSYS);
        assert_int_equal(run(&p, AUDIT_ARCH_X86_64, SYS_init_module, NULL),
                         SECCOMP_RET_ERRNO | EPERM);
        assert_int_equal(run(&p, AUDIT_ARCH_I386, 20 /* getpid */, NULL),
                         SECCOMP_RET_ERRNO | ENOSYS);
        free(p.insns);
        /* Never combined with a supervisor's options. */
        void *none = NULL;
        size_t len = 0;
        seccomp_options odd = { .vm_guest = true, .notify_creates = true };
        assert_int_equal(seccomp_export_sandbox_filter(&odd, &none, &len), -EINVAL);
        const void *emb = NULL;
        odd = (seccomp_options) { .vm_guest = true, .unix_connect = true };
        assert_int_equal(seccomp_embedded_sandbox_filter(&odd, &emb, &len), -EINVAL);
}

static void test_details(void **state) {
        (void) state;
        prog p = export(true);
        /* With a supervisor every refusal is notified: it answers EPERM and reports. */
        const uint32_t eperm = SECCOMP_RET_USER_NOTIF;
        uint64_t a[6] = { 0 };
        /* Plain opens pass without a notification; O_PATH makes the kernel ignore O_CREAT. */
        a[2] = O_RDONLY;
        assert_int_equal(run(&p, AUDIT_ARCH_X86_64, SYS_openat, a), SECCOMP_RET_ALLOW);
        a[2] = O_CREAT | O_PATH;
        assert_int_equal(run(&p, AUDIT_ARCH_X86_64, SYS_openat, a), SECCOMP_RET_ALLOW);
        a[2] = O_CREAT | O_RDWR | O_TRUNC | O_CLOEXEC;
        assert_int_equal(run(&p, AUDIT_ARCH_X86_64, SYS_openat, a), SECCOMP_RET_USER_NOTIF);
        a[1] = O_CREAT;
        assert_int_equal(run(&p, AUDIT_ARCH_X86_64, SYS_open, a), SECCOMP_RET_USER_NOTIF);
        /* unlinkat of files is not notified, of directories it is. */
        uint64_t ul[6] = { (uint64_t) AT_FDCWD, 0, 0 };
        assert_int_equal(run(&p, AUDIT_ARCH_X86_64, SYS_unlinkat, ul), SECCOMP_RET_ALLOW);
        ul[2] = AT_REMOVEDIR;
        assert_int_equal(run(&p, AUDIT_ARCH_X86_64, SYS_unlinkat, ul), SECCOMP_RET_USER_NOTIF);
        assert_int_equal(run(&p, AUDIT_ARCH_X86_64, SYS_unlink, NULL), SECCOMP_RET_ALLOW);
        /* Garbage above bit 31 of a 32-bit argument does not hide it. */
        uint64_t io[6] = { 0, 0xdeadbeef00000000ULL | 0x5412 /* TIOCSTI */ };
        assert_int_equal(run(&p, AUDIT_ARCH_X86_64, SYS_ioctl, io), eperm);
        uint64_t so[6] = { 0x100000000ULL | 1 /* AF_UNIX */, 1 };
        assert_int_equal(run(&p, AUDIT_ARCH_X86_64, SYS_socket, so), eperm);
        uint64_t inet[6] = { 2 /* AF_INET */, 1 };
        assert_int_equal(run(&p, AUDIT_ARCH_X86_64, SYS_socket, inet), SECCOMP_RET_ALLOW);
        uint64_t sp[6] = { 1, 1 /* SOCK_STREAM */ };
        assert_int_equal(run(&p, AUDIT_ARCH_X86_64, SYS_socketpair, sp), SECCOMP_RET_ALLOW);
        sp[1] = 2 | 02000000 /* SOCK_DGRAM | SOCK_CLOEXEC */;
        assert_int_equal(run(&p, AUDIT_ARCH_X86_64, SYS_socketpair, sp), eperm);
        /* clone: a thread or a fork passes; any namespace flag among others does not. */
        uint64_t cl[6] = { 0x3d0f00 /* pthread_create's flags */ };
        assert_int_equal(run(&p, AUDIT_ARCH_X86_64, SYS_clone, cl), SECCOMP_RET_ALLOW);
        cl[0] |= 0x40000000; /* CLONE_NEWNET */
        assert_int_equal(run(&p, AUDIT_ARCH_X86_64, SYS_clone, cl), eperm);
        /* Everyday syscalls. */
        static const int everyday[] = { SYS_read, SYS_write, SYS_close, SYS_execve, SYS_getpid,
                                        SYS_unlink, SYS_fstat, SYS_mmap, SYS_wait4, SYS_umask };
        for (size_t i = 0; i < sizeof(everyday) / sizeof(everyday[0]); i++)
                assert_int_equal(run(&p, AUDIT_ARCH_X86_64, everyday[i], NULL), SECCOMP_RET_ALLOW);
        /* Quiet refusals stay in the kernel; connect is not notified without allowUnixSockets. */
        assert_int_equal(run(&p, AUDIT_ARCH_X86_64, SYS_clone3, NULL), SECCOMP_RET_ERRNO | ENOSYS);
        assert_int_equal(run(&p, AUDIT_ARCH_X86_64, 437 /* openat2 */, NULL),
                         SECCOMP_RET_ERRNO | ENOSYS);
        assert_int_equal(run(&p, AUDIT_ARCH_X86_64, SYS_connect, NULL), SECCOMP_RET_ALLOW);
        free(p.insns);
        /* Without a supervisor the kernel answers every refusal itself. */
        p = export(false);
        assert_int_equal(run(&p, AUDIT_ARCH_X86_64, SYS_socket, so), SECCOMP_RET_ERRNO | EPERM);
        assert_int_equal(run(&p, AUDIT_ARCH_X86_64, SYS_keyctl, NULL), SECCOMP_RET_ERRNO | EPERM);
        free(p.insns);
}

/* allowUnixSockets: AF_UNIX stream and seqpacket sockets pass, datagram ones do not (whatever
 * the flags or the upper half), every connect() goes to the supervisor, socketpair is unchanged. */
static void test_unix_variant(void **state) {
        (void) state;
        prog p = export_opts((seccomp_options) { .notify_creates = true, .unix_connect = true });
        uint64_t so[6] = { 1 /* AF_UNIX */, 1 /* SOCK_STREAM */ };
        assert_int_equal(run(&p, AUDIT_ARCH_X86_64, SYS_socket, so), SECCOMP_RET_ALLOW);
        so[1] = 5 | 02000000 | 04000 /* SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK */;
        assert_int_equal(run(&p, AUDIT_ARCH_X86_64, SYS_socket, so), SECCOMP_RET_ALLOW);
        so[1] = 2 /* SOCK_DGRAM */;
        assert_int_equal(run(&p, AUDIT_ARCH_X86_64, SYS_socket, so), SECCOMP_RET_USER_NOTIF);
        so[0] |= 0xabcd00000000ULL;
        so[1] |= 02000000 | 0x7700000000ULL;
        assert_int_equal(run(&p, AUDIT_ARCH_X86_64, SYS_socket, so), SECCOMP_RET_USER_NOTIF);
        uint64_t vs[6] = { 40 /* AF_VSOCK */, 1 };
        assert_int_equal(run(&p, AUDIT_ARCH_X86_64, SYS_socket, vs), SECCOMP_RET_USER_NOTIF);
        assert_int_equal(run(&p, AUDIT_ARCH_X86_64, SYS_connect, NULL), SECCOMP_RET_USER_NOTIF);
        uint64_t sp[6] = { 1, 2 /* SOCK_DGRAM */ };
        assert_int_equal(run(&p, AUDIT_ARCH_X86_64, SYS_socketpair, sp), SECCOMP_RET_USER_NOTIF);
        sp[1] = 1;
        assert_int_equal(run(&p, AUDIT_ARCH_X86_64, SYS_socketpair, sp), SECCOMP_RET_ALLOW);
        static const int sends[] = { SYS_sendto, SYS_sendmsg, SYS_accept4, SYS_listen };
        for (size_t i = 0; i < sizeof(sends) / sizeof(sends[0]); i++)
                assert_int_equal(run(&p, AUDIT_ARCH_X86_64, sends[i], NULL), SECCOMP_RET_ALLOW);
        free(p.insns);
}

static void test_interpreter(void **state) {
        (void) state;
        struct seccomp_data d = { .nr = 7 };
        struct sock_filter ok[] = {
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 7, 0, 1),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 1),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        };
        assert_int_equal(seccomp_bpf_run(ok, 4, &d), SECCOMP_RET_ERRNO | 1);
        d.nr = 8;
        assert_int_equal(seccomp_bpf_run(ok, 4, &d), SECCOMP_RET_ALLOW);
        struct sock_filter bad[] = {
                BPF_JUMP(BPF_JMP | BPF_JA, 5, 0, 0),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        };
        assert_int_equal(seccomp_bpf_run(bad, 2, &d), SECCOMP_RET_KILL_PROCESS);
        struct sock_filter oob[] = {
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 4096),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        };
        assert_int_equal(seccomp_bpf_run(oob, 2, &d), SECCOMP_RET_KILL_PROCESS);
}

static void test_printable(void **state) {
        (void) state;
        size_t n, wanted = 0, landlock_only = 0;
        const seccomp_plan_rule *rules = seccomp_plan_rules(&n);
        char buf[256];
        for (size_t i = 0; i < n; i++) {
                assert_true(rules[i].why && rules[i].why[0]);
                if (rules[i].flags & SECCOMP_PLAN_LANDLOCK_ON)
                        landlock_only++; /* tests/linux/landlock/test-landlock-seccomp.c */
                if (seccomp_plan_rule_wanted(&rules[i], &variants[2]))
                        wanted++;
                if (strcmp(rules[i].syscall, "ioctl") == 0 && rules[i].conds[0].value == 0x5412) {
                        seccomp_plan_rule_format(&rules[i], buf, sizeof(buf));
                        assert_string_equal(buf, "ioctl: EPERM if (arg1 & 0xffffffff) == 0x5412");
                }
        }
        json_t *j = seccomp_plan_to_json(&variants[2]);
        assert_non_null(j);
        assert_int_equal(json_array_size(j), wanted);
        json_decref(j);
        /* Every rule but the landlock backend's is in one of the two notify programs, only the
         * socket rules in one. */
        json_t *a = seccomp_plan_to_json(&variants[0]), *b = seccomp_plan_to_json(&variants[1]);
        assert_int_equal(json_array_size(a) + json_array_size(b), 2 * (n - landlock_only) - 2 - 1);
        json_t *first = json_array_get(a, 0);
        assert_true(json_is_true(json_object_get(first, "reported")));
        json_decref(a);
        json_decref(b);
}

/* Building the filter is on every sandbox start: report its cost (docs/design/seccomp.md). */
static void test_build_cost(void **state) {
        (void) state;
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        prog p = export(true);
        clock_gettime(CLOCK_MONOTONIC, &b);
        double us = (double) (b.tv_sec - a.tv_sec) * 1e6 + (double) (b.tv_nsec - a.tv_nsec) / 1e3;
        fprintf(stderr, "filter build + export + check: %.0f us, %zu instructions\n", us, p.n);
        assert_true(p.n < 512);
        free(p.insns);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_build_cost),
                cmocka_unit_test(test_table),
                cmocka_unit_test(test_reporting_costs_allowed_calls_nothing),
                cmocka_unit_test(test_names_for_reports),
                cmocka_unit_test(test_unix_variant),
                cmocka_unit_test(test_embedded_matches_table),
                cmocka_unit_test(test_guest_program),
                cmocka_unit_test(test_abis),
                cmocka_unit_test(test_details),
                cmocka_unit_test(test_interpreter),
                cmocka_unit_test(test_printable),
        };
        return cmocka_run_group_tests_name("seccomp-filter", tests, NULL, NULL);
}
