/* SPDX-License-Identifier: Apache-2.0 */
/* Turns the rule table of src/plan/seccomp-plan.c into a BPF program with libseccomp and checks
 * the program as data. Used at build time by seccomp-gen (the program cordon loads is embedded,
 * see seccomp.c) and at run time by tests and `policy show`, which compare the two. */
#include "linux/seccomp.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include "plan/seccomp-plan.h"
#include "util/uapi.h"
#include "util/util.h"

static void ctx_releasep(scmp_filter_ctx *c) {
        if (*c)
                seccomp_release(*c);
}

int seccomp_build_rule_nr(const seccomp_plan_rule *r) {
        int nr = seccomp_syscall_resolve_name(r->syscall);
        if (nr != __NR_SCMP_ERROR)
                return nr;
        /* Newer than libseccomp's table: the asm-generic number is the same on every
         * architecture. A deny rule silently dropped would fail open, so no number at all is an
         * error. */
        return r->generic_nr == 0 ? -ENOSYS : r->generic_nr;
}

static uint32_t scmp_action(uint32_t ret) {
        if (ret == SECCOMP_RET_USER_NOTIF)
                return SCMP_ACT_NOTIFY;
        return SCMP_ACT_ERRNO(ret & SECCOMP_RET_DATA);
}

static int add_rule(scmp_filter_ctx ctx, const seccomp_plan_rule *r, const seccomp_options *opt) {
        int nr = seccomp_build_rule_nr(r);
        if (nr < 0)
                return nr;
        struct scmp_arg_cmp cmp[ELEMENTSOF(r->conds)];
        for (uint8_t i = 0; i < r->n_conds; i++)
                cmp[i] = (struct scmp_arg_cmp) { .arg = r->conds[i].arg,
                                                 .op = SCMP_CMP_MASKED_EQ,
                                                 .datum_a = r->conds[i].mask,
                                                 .datum_b = r->conds[i].value };
        return seccomp_rule_add_exact_array(ctx, scmp_action(seccomp_plan_rule_ret(r, opt)), nr,
                                            r->n_conds, cmp);
}

static int build_ctx(const seccomp_options *opt, scmp_filter_ctx *ret) {
        scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
        if (!ctx)
                return -ENOMEM;
        /* Any other architecture (ia32 via int $0x80 on x86_64) gets ENOSYS: its syscall numbers
         * differ, so none of the rules below would apply to it. libseccomp also sends x32 numbers
         * (nr >= 0x40000000) to this action; check_program() verifies both. With a supervisor
         * the call is notified, answered ENOSYS and reported like any refusal. */
        int r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH,
                                 scmp_action(seccomp_plan_badarch_ret(opt)));
        if (r == 0)
                r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2); /* binary tree */
        size_t n;
        const seccomp_plan_rule *rules = seccomp_plan_rules(&n);
        for (size_t i = 0; r == 0 && i < n; i++)
                if (seccomp_plan_rule_wanted(&rules[i], opt))
                        r = add_rule(ctx, &rules[i], opt);
        if (r < 0) {
                seccomp_release(ctx);
                return r;
        }
        *ret = ctx;
        return 0;
}

static int export_ctx(scmp_filter_ctx ctx, struct sock_filter **ret, size_t *ret_n) {
        _cleanup_close_ int fd = memfd_create("cordon-seccomp", MFD_CLOEXEC);
        if (fd < 0)
                return -errno;
        int r = seccomp_export_bpf(ctx, fd);
        if (r < 0)
                return r;
        off_t len = lseek(fd, 0, SEEK_END);
        if (len < 0)
                return -errno;
        if (len == 0 || len % sizeof(struct sock_filter) != 0 || (size_t) len > BPF_MAXINSNS * sizeof(struct sock_filter))
                return -EBADMSG;
        _cleanup_free_ struct sock_filter *prog = malloc((size_t) len);
        if (!prog)
                return -ENOMEM;
        ssize_t got = pread(fd, prog, (size_t) len, 0);
        if (got < 0)
                return -errno;
        if (got != len)
                return -EIO;
        *ret_n = (size_t) len / sizeof(struct sock_filter);
        *ret = TAKE_PTR(prog);
        return 0;
}

/* The microvm guest's program: no listener exists in the guest, so a notifying leaf anywhere
 * would make its call fail with ENOSYS instead of being judged (a creation rule silently turned
 * into a broken syscall): none may exist. And its unix rules are the native sandbox's. */
static int check_guest_program(const struct sock_filter *prog, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (BPF_CLASS(prog[i].code) == BPF_RET &&
                    (BPF_RVAL(prog[i].code) != BPF_K ||
                     (prog[i].k & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_USER_NOTIF))
                        return -ENOTRECOVERABLE;
#if defined(__x86_64__)
        struct seccomp_data d = { .nr = SYS_socket, .arch = AUDIT_ARCH_X86_64,
                                  .args = { AF_UNIX, SOCK_STREAM } };
        if (seccomp_bpf_run(prog, n, &d) != SECCOMP_RET_ALLOW)
                return -ENOTRECOVERABLE;
        d.args[1] = SOCK_DGRAM;
        if (seccomp_bpf_run(prog, n, &d) != (SECCOMP_RET_ERRNO | EPERM))
                return -ENOTRECOVERABLE;
#endif
        return 0;
}

/* The escape hatches this filter exists to close are checked on the finished program, so a
 * libseccomp that generated something else (no x32 test, another arch action) fails closed here
 * rather than in the field. */
static int check_program(const struct sock_filter *prog, size_t n, const seccomp_options *opt) {
#if defined(__x86_64__)
        const uint32_t enosys = seccomp_plan_badarch_ret(opt);
        struct seccomp_data d = { .nr = SYS_openat, .arch = AUDIT_ARCH_X86_64 };
        d.args[2] = O_CREAT | O_WRONLY;
        uint32_t want = opt->notify_creates ? SECCOMP_RET_USER_NOTIF : SECCOMP_RET_ALLOW;
        if (seccomp_bpf_run(prog, n, &d) != want)
                return -ENOTRECOVERABLE;
        d.args[2] = O_RDONLY;
        if (seccomp_bpf_run(prog, n, &d) != SECCOMP_RET_ALLOW)
                return -ENOTRECOVERABLE;
        d.nr = 0x40000000U | SYS_openat; /* x32 */
        if (seccomp_bpf_run(prog, n, &d) != enosys)
                return -ENOTRECOVERABLE;
        d = (struct seccomp_data) { .nr = 5 /* ia32 open */, .arch = AUDIT_ARCH_I386 };
        if (seccomp_bpf_run(prog, n, &d) != enosys)
                return -ENOTRECOVERABLE;
#else
        (void) prog, (void) n, (void) opt;
#endif
        return opt->vm_guest ? check_guest_program(prog, n) : 0;
}

int seccomp_export_sandbox_filter(const seccomp_options *opt, void **ret, size_t *ret_len) {
        _cleanup_(ctx_releasep) scmp_filter_ctx ctx = NULL;
        if ((opt->unix_connect || opt->landlock_backend) && !opt->notify_creates)
                return -EINVAL; /* nobody would answer connect() */
        if (opt->vm_guest && (opt->notify_creates || opt->landlock_backend || opt->kernel_denials))
                return -EINVAL; /* the guest has no supervisor */
        int r = build_ctx(opt, &ctx);
        if (r < 0)
                return r;
        struct sock_filter *prog = NULL;
        size_t n = 0;
        r = export_ctx(ctx, &prog, &n);
        if (r < 0)
                return r;
        r = check_program(prog, n, opt);
        if (r < 0) {
                free(prog);
                return r;
        }
        *ret = prog;
        *ret_len = n * sizeof(struct sock_filter);
        return 0;
}

