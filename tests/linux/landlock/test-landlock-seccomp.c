/* SPDX-License-Identifier: Apache-2.0 */
/* The landlock backend's seccomp programs as data: the table's landlock rules (reported
 * refusals, notified connect() and unlink()), the stacked socket allowlist
 * (linux/seccomp-net.c), and the two together as the kernel combines them, on a grid of socket
 * arguments. Native programs must not change: none of these rules may appear in them. */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <seccomp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include <cmocka.h>

#include "linux/seccomp-net.h"
#include "linux/seccomp.h"
#include "plan/seccomp-plan.h"

#define ARCH AUDIT_ARCH_X86_64
#define MPTCP 262

typedef struct prog {
        struct sock_filter *insns;
        size_t n;
} prog;

static const seccomp_options ll = { .notify_creates = true, .landlock_backend = true };
static const seccomp_options ll_unix = { .notify_creates = true, .unix_connect = true,
                                         .landlock_backend = true };
static const seccomp_options native = { .notify_creates = true };

static prog export_opts(seccomp_options o) {
        void *p = NULL;
        size_t len = 0;
        assert_int_equal(seccomp_export_sandbox_filter(&o, &p, &len), 0);
        return (prog) { p, len / sizeof(struct sock_filter) };
}

static struct seccomp_data call(int nr, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3) {
        return (struct seccomp_data) { .nr = nr, .arch = ARCH, .args = { a0, a1, a2, a3 } };
}

/* The kernel's precedence among the actions of stacked filters (kernel/seccomp.c): the
 * strongest wins, KILL > TRAP > ERRNO > USER_NOTIF > TRACE > LOG > ALLOW. */
static int rank(uint32_t ret) {
        switch (ret & SECCOMP_RET_ACTION_FULL) {
        case SECCOMP_RET_KILL_PROCESS:
                return 7;
        case SECCOMP_RET_KILL_THREAD:
                return 6;
        case SECCOMP_RET_TRAP:
                return 5;
        case SECCOMP_RET_ERRNO:
                return 4;
        case SECCOMP_RET_USER_NOTIF:
                return 3;
        case SECCOMP_RET_TRACE:
                return 2;
        case SECCOMP_RET_LOG:
                return 1;
        default:
                return 0;
        }
}

static uint32_t combined(const prog *main_prog, const struct seccomp_data *d) {
        size_t n;
        const struct sock_filter *net = seccomp_net_filter(&n);
        uint32_t a = seccomp_bpf_run(main_prog->insns, main_prog->n, d);
        uint32_t b = seccomp_bpf_run(net, n, d);
        return rank(b) > rank(a) ? b : a;
}

/* Every landlock rule is in both landlock programs, in no native one, and acts as the table
 * says; the supervisor's matcher finds it. */
static void test_table_rules(void **state) {
        (void) state;
        const seccomp_options *variants[] = { &ll, &ll_unix };
        size_t n;
        const seccomp_plan_rule *rules = seccomp_plan_rules(&n);
        unsigned seen = 0;
        for (size_t v = 0; v < 2; v++) {
                prog p = export_opts(*variants[v]);
                for (size_t i = 0; i < n; i++) {
                        const seccomp_plan_rule *r = &rules[i];
                        if (!(r->flags & SECCOMP_PLAN_LANDLOCK_ON))
                                continue;
                        assert_false(seccomp_plan_rule_wanted(r, &native));
                        seccomp_options plain_unix = { .notify_creates = true, .unix_connect = true };
                        assert_false(seccomp_plan_rule_wanted(r, &plain_unix));
                        if (!seccomp_plan_rule_wanted(r, variants[v]))
                                continue; /* connect with allowUnixSockets: the unix rule's */
                        seen++;
                        int nr = seccomp_syscall_resolve_name(r->syscall);
                        if (nr == __NR_SCMP_ERROR) /* newer than libseccomp: fchmodat2, ... */
                                nr = r->generic_nr;
                        assert_true(nr > 0);
                        uint64_t args[6] = { 0 };
                        if (strcmp(r->syscall, "socket") == 0)
                                args[1] = SOCK_STREAM; /* the protocol rules name streams */
                        for (uint8_t c = 0; c < r->n_conds; c++)
                                args[r->conds[c].arg] = (args[r->conds[c].arg] & ~r->conds[c].mask) |
                                                        r->conds[c].value;
                        struct seccomp_data d = call(nr, args[0], args[1], args[2], args[3]);
                        char what[256];
                        seccomp_plan_rule_format(r, what, sizeof(what));
                        if (seccomp_bpf_run(p.insns, p.n, &d) != SECCOMP_RET_USER_NOTIF)
                                fail_msg("%s: not notified", what);
                        if (seccomp_rule_for(&d, variants[v]) != r)
                                fail_msg("%s: the supervisor's matcher finds another rule", what);
                        if (combined(&p, &d) != SECCOMP_RET_USER_NOTIF)
                                fail_msg("%s: the stacked filter hides the report", what);
                }
                free(p.insns);
        }
        assert_true(seen > 20);
}

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

static void test_embedded(void **state) {
        (void) state;
        check_embedded(ll);
        check_embedded(ll_unix);
        const void *none = NULL;
        size_t len = 0;
        seccomp_options odd = { .landlock_backend = true };
        assert_int_equal(seccomp_embedded_sandbox_filter(&odd, &none, &len), -EINVAL);
        void *fresh = NULL;
        assert_int_equal(seccomp_export_sandbox_filter(&odd, &fresh, &len), -EINVAL);
}

/* What the landlock program changes for file calls: unlink and unlinkat of files are notified
 * (both ways refused elsewhere in native: read-only mounts), everything else as native. */
static void test_file_calls(void **state) {
        (void) state;
        prog l = export_opts(ll), nat = export_opts(native);
        struct seccomp_data d = call(SYS_unlink, 0, 0, 0, 0);
        assert_int_equal(seccomp_bpf_run(l.insns, l.n, &d), SECCOMP_RET_USER_NOTIF);
        assert_int_equal(seccomp_bpf_run(nat.insns, nat.n, &d), SECCOMP_RET_ALLOW);
        d = call(SYS_unlinkat, AT_FDCWD, 0, 0, 0);
        assert_int_equal(seccomp_bpf_run(l.insns, l.n, &d), SECCOMP_RET_USER_NOTIF);
        assert_int_equal(seccomp_bpf_run(nat.insns, nat.n, &d), SECCOMP_RET_ALLOW);
        d = call(SYS_unlinkat, AT_FDCWD, 0, AT_REMOVEDIR, 0);
        assert_int_equal(seccomp_bpf_run(l.insns, l.n, &d), SECCOMP_RET_USER_NOTIF);
        assert_int_equal(seccomp_bpf_run(nat.insns, nat.n, &d), SECCOMP_RET_USER_NOTIF);
        const seccomp_plan_rule *r = seccomp_rule_for(&d, &ll);
        assert_non_null(r);
        assert_int_equal(r->n_conds, 0); /* the landlock rule, not native's AT_REMOVEDIR one */
        /* Unchanged: plain opens pass, O_CREAT opens are notified, ptrace is refused. */
        d = call(SYS_openat, AT_FDCWD, 0, O_RDONLY, 0);
        assert_int_equal(seccomp_bpf_run(l.insns, l.n, &d), SECCOMP_RET_ALLOW);
        d = call(SYS_openat, AT_FDCWD, 0, O_CREAT | O_WRONLY, 0);
        assert_int_equal(seccomp_bpf_run(l.insns, l.n, &d), SECCOMP_RET_USER_NOTIF);
        d = call(SYS_ptrace, 0, 0, 0, 0);
        assert_int_equal(seccomp_bpf_run(l.insns, l.n, &d), SECCOMP_RET_USER_NOTIF);
        d = call(SYS_connect, 3, 0, 16, 0);
        assert_int_equal(seccomp_bpf_run(l.insns, l.n, &d), SECCOMP_RET_USER_NOTIF);
        assert_int_equal(seccomp_bpf_run(nat.insns, nat.n, &d), SECCOMP_RET_ALLOW);
        free(l.insns);
        free(nat.insns);
}

typedef enum outcome { ALLOWED, REPORTED, KERNEL } outcome;

/* What the two programs together must do with socket(family, type, proto). */
static outcome socket_expected(int family, int type, int proto) {
        int t = type & 0xf;
        switch (family) {
        case AF_UNIX:
        case AF_VSOCK:
                return REPORTED;
        case AF_NETLINK:
                return proto == NETLINK_ROUTE ? ALLOWED : KERNEL;
        case AF_INET:
        case AF_INET6:
                if (t == SOCK_STREAM)
                        return proto == 0 || proto == IPPROTO_TCP ? ALLOWED
                               : proto == IPPROTO_SCTP || proto == MPTCP ? REPORTED
                                                                        : KERNEL;
                return t == SOCK_DGRAM || t == SOCK_RAW || t == SOCK_SEQPACKET || t == 6 ||
                                       t == SOCK_PACKET
                               ? REPORTED
                               : KERNEL;
        default:
                return KERNEL;
        }
}

static outcome classify(uint32_t ret) {
        if (ret == SECCOMP_RET_ALLOW)
                return ALLOWED;
        if (ret == SECCOMP_RET_USER_NOTIF)
                return REPORTED;
        return KERNEL;
}

static const char *outcome_name(outcome o) {
        return o == ALLOWED ? "allowed" : o == REPORTED ? "reported" : "kernel refusal";
}

static void test_socket_grid(void **state) {
        (void) state;
        static const int protos[] = { 0, 1, IPPROTO_TCP, IPPROTO_UDP, 33, 58, IPPROTO_SCTP,
                                      136, 255, 256, MPTCP, 0x7fffffff };
        prog p = export_opts(ll);
        for (int family = 0; family < 64; family++)
                for (int type = 0; type < 16; type++)
                        for (size_t i = 0; i < sizeof(protos) / sizeof(protos[0]); i++)
                                for (int fl = 0; fl < 2; fl++) {
                                        int tf = type | (fl ? SOCK_NONBLOCK | SOCK_CLOEXEC : 0);
                                        /* Garbage in the upper halves changes nothing. */
                                        uint64_t hi = fl ? 0xdead000000000000ULL : 0;
                                        struct seccomp_data d = call(SYS_socket, hi | (unsigned) family,
                                                                     hi | (unsigned) tf,
                                                                     hi | (unsigned) protos[i], 0);
                                        outcome got = classify(combined(&p, &d));
                                        outcome want = socket_expected(family, type, protos[i]);
                                        if (got != want)
                                                fail_msg("socket(%d, %#x, %d): %s, want %s", family,
                                                         tf, protos[i], outcome_name(got),
                                                         outcome_name(want));
                                }
        free(p.insns);
}

static void test_socketpair_and_others(void **state) {
        (void) state;
        prog p = export_opts(ll);
        for (int family = 0; family < 64; family++) {
                struct seccomp_data d = call(SYS_socketpair, (unsigned) family, SOCK_STREAM, 0, 0);
                outcome want = family == AF_UNIX ? ALLOWED : KERNEL;
                assert_int_equal(classify(combined(&p, &d)), want);
        }
        struct seccomp_data d = call(SYS_socketpair, AF_UNIX, SOCK_DGRAM, 0, 0);
        assert_int_equal(classify(combined(&p, &d)), REPORTED);
        d = call(SYS_listen, 3, 128, 0, 0);
        assert_int_equal(classify(combined(&p, &d)), REPORTED);
        d = call(SYS_sendto, 3, 0, 10, MSG_FASTOPEN | MSG_NOSIGNAL);
        assert_int_equal(classify(combined(&p, &d)), REPORTED);
        d = call(SYS_sendto, 3, 0, 10, MSG_NOSIGNAL);
        assert_int_equal(classify(combined(&p, &d)), ALLOWED);
        d = call(SYS_sendmsg, 3, 0, MSG_FASTOPEN, 0);
        assert_int_equal(classify(combined(&p, &d)), REPORTED);
        d = call(SYS_sendmmsg, 3, 0, 1, MSG_FASTOPEN);
        assert_int_equal(classify(combined(&p, &d)), REPORTED);
        d = call(SYS_read, 0, 0, 0, 0);
        assert_int_equal(classify(combined(&p, &d)), ALLOWED);
        /* Another ABI: the stacked filter lets the main one refuse it (reported). */
        d = (struct seccomp_data) { .nr = 359 /* ia32 socket */, .arch = AUDIT_ARCH_I386,
                                    .args = { AF_INET, SOCK_DGRAM } };
        assert_int_equal(classify(combined(&p, &d)), REPORTED);
        d = call(0x40000000 | SYS_socket, AF_INET, SOCK_DGRAM, 0, 0);
        assert_int_equal(classify(combined(&p, &d)), REPORTED);
        free(p.insns);
}

/* Every jump of the hand-written program lands inside it, and it ends in a return. */
static void test_net_program_shape(void **state) {
        (void) state;
        size_t n;
        const struct sock_filter *f = seccomp_net_filter(&n);
        assert_true(n > 10 && n < 64);
        for (size_t i = 0; i < n; i++)
                if (BPF_CLASS(f[i].code) == BPF_JMP) {
                        assert_true(i + 1 + f[i].jt < n);
                        assert_true(i + 1 + f[i].jf < n);
                }
        assert_int_equal(BPF_CLASS(f[n - 1].code), BPF_RET);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_table_rules),
                cmocka_unit_test(test_embedded),
                cmocka_unit_test(test_file_calls),
                cmocka_unit_test(test_socket_grid),
                cmocka_unit_test(test_socketpair_and_others),
                cmocka_unit_test(test_net_program_shape),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
