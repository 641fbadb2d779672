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

static prog export(bool notify) {
        seccomp_options o = { .notify_creates = notify };
        void *p = NULL;
        size_t len = 0;
        assert_int_equal(seccomp_export_sandbox_filter(&o, &p, &len), 0);
        return (prog) { p, len / sizeof(struct sock_filter) };
}

static int rule_nr(const seccomp_plan_rule *r) {
        int nr = seccomp_syscall_resolve_name(r->syscall);
        return nr == __NR_SCMP_ERROR ? r->generic_nr : nr;
}

static uint32_t run(const prog *p, uint32_t arch, int nr, const uint64_t args[6]) {
        struct seccomp_data d = { .nr = nr, .arch = arch };
        if (args)
                memcpy(d.args, args, sizeof(d.args));
        return seccomp_bpf_run(p->insns, p->n, &d);
}

static uint32_t expected(const seccomp_plan_rule *r, bool notify) {
        if (r->action == SECCOMP_PLAN_NOTIFY)
                return notify ? SECCOMP_RET_USER_NOTIF : SECCOMP_RET_ALLOW;
        return SECCOMP_RET_ERRNO | (uint32_t) r->err;
}

/* Every rule does what the table says, and only when its conditions hold. */
static void check_table(bool notify) {
        prog p = export(notify);
        size_t n;
        const seccomp_plan_rule *rules = seccomp_plan_rules(&n);
        for (size_t i = 0; i < n; i++) {
                const seccomp_plan_rule *r = &rules[i];
                int nr = rule_nr(r);
                if (nr <= 0)
                        fail_msg("%s: no syscall number", r->syscall);
                uint64_t args[6] = { 0 };
                for (uint8_t c = 0; c < r->n_conds; c++)
                        args[r->conds[c].arg] = r->conds[c].value;
                uint32_t got = run(&p, AUDIT_ARCH_X86_64, nr, args);
                char what[256];
                seccomp_plan_rule_format(r, what, sizeof(what));
                if (got != expected(r, notify))
                        fail_msg("%s: got %#x want %#x", what, got, expected(r, notify));
                for (uint8_t c = 0; c < r->n_conds; c++) {
                        uint64_t miss[6];
                        memcpy(miss, args, sizeof(miss));
                        uint64_t lowbit = r->conds[c].mask & -r->conds[c].mask;
                        miss[r->conds[c].arg] ^= lowbit;
                        got = run(&p, AUDIT_ARCH_X86_64, nr, miss);
                        if (got != SECCOMP_RET_ALLOW)
                                fail_msg("%s with arg%u ^ %#llx: got %#x want ALLOW", what,
                                         r->conds[c].arg, (unsigned long long) lowbit, got);
                }
        }
        free(p.insns);
}

static void test_table_notify(void **state) {
        (void) state;
        check_table(true);
}

static void test_table_plain(void **state) {
        (void) state;
        check_table(false);
}

/* cordon loads the program embedded at build time; it must be exactly what the rule table gives
 * now, so the table (and every check above, which runs on a fresh export) governs what is loaded. */
static void check_embedded(bool notify) {
        seccomp_options opt = { .notify_creates = notify };
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
        check_embedded(true);
        check_embedded(false);
}

static void test_abis(void **state) {
        (void) state;
        prog p = export(true);
        const uint32_t enosys = SECCOMP_RET_ERRNO | ENOSYS;
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

static void test_details(void **state) {
        (void) state;
        prog p = export(true);
        const uint32_t eperm = SECCOMP_RET_ERRNO | EPERM;
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
        size_t n, wanted = 0;
        const seccomp_plan_rule *rules = seccomp_plan_rules(&n);
        char buf[256];
        for (size_t i = 0; i < n; i++) {
                assert_true(rules[i].why && rules[i].why[0]);
                if (seccomp_plan_rule_wanted(&rules[i], false))
                        wanted++;
                if (strcmp(rules[i].syscall, "ioctl") == 0 && rules[i].conds[0].value == 0x5412) {
                        seccomp_plan_rule_format(&rules[i], buf, sizeof(buf));
                        assert_string_equal(buf, "ioctl: EPERM if (arg1 & 0xffffffff) == 0x5412");
                }
        }
        json_t *j = seccomp_plan_to_json(false);
        assert_non_null(j);
        assert_int_equal(json_array_size(j), wanted);
        json_decref(j);
        j = seccomp_plan_to_json(true);
        assert_int_equal(json_array_size(j), n);
        json_decref(j);
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
                cmocka_unit_test(test_table_notify),
                cmocka_unit_test(test_table_plain),
                cmocka_unit_test(test_embedded_matches_table),
                cmocka_unit_test(test_abis),
                cmocka_unit_test(test_details),
                cmocka_unit_test(test_interpreter),
                cmocka_unit_test(test_printable),
        };
        return cmocka_run_group_tests_name("seccomp-filter", tests, NULL, NULL);
}
