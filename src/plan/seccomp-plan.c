/* SPDX-License-Identifier: Apache-2.0 */
/* The seccomp rule table (data) and a classic-BPF interpreter for testing exported programs.
 * Everything not listed is allowed: the filter is a deny list on top of namespaces, Landlock and
 * dropped capabilities, not the only wall. Rationale per entry: docs/design/seccomp.md. */
#include "plan/seccomp-plan.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <sys/socket.h>

#include "util/util.h"

#define M32 UINT64_C(0xffffffff)

#define DENY(name, e, why) { name, 0, SECCOMP_PLAN_ERRNO, e, 0, 0, { { 0 } }, why }
#define DENY_QUIET(name, nr, e, why) { name, nr, SECCOMP_PLAN_ERRNO, e, SECCOMP_PLAN_QUIET, 0, { { 0 } }, why }
#define DENY_NR(name, nr, e, why) { name, nr, SECCOMP_PLAN_ERRNO, e, 0, 0, { { 0 } }, why }
#define DENY_IF(name, e, a, mask, val, why)                                                       \
        { name, 0, SECCOMP_PLAN_ERRNO, e, 0, 1, { { a, mask, val } }, why }
#define O_WRITE_OPEN_MASK (O_ACCMODE | O_CREAT | O_PATH | O_DIRECTORY)
#define NOTIFY(name, why) { name, 0, SECCOMP_PLAN_NOTIFY, 0, 0, 0, { { 0 } }, why }
#define NOTIFY_IF(name, a, mask, val, why)                                                        \
        { name, 0, SECCOMP_PLAN_NOTIFY, 0, 0, 1, { { a, mask, val } }, why }
#define DENY_CLONE(flag) DENY_IF("clone", EPERM, 0, flag, flag, "clone with " #flag ": no new namespaces")

/* Namespace flags of clone(2) (values from linux/sched.h, spelled out so this file needs no
 * kernel header beyond the seccomp ABI). */
#define CLONE_NEWNS_ 0x00020000ULL
#define CLONE_NEWCGROUP_ 0x02000000ULL
#define CLONE_NEWUTS_ 0x04000000ULL
#define CLONE_NEWIPC_ 0x08000000ULL
#define CLONE_NEWUSER_ 0x10000000ULL
#define CLONE_NEWPID_ 0x20000000ULL
#define CLONE_NEWNET_ 0x40000000ULL
#define TIOCSTI_ 0x5412ULL
#define TIOCLINUX_ 0x541CULL
#define FS_IOC_SETFLAGS_ 0x40086602ULL   /* _IOW('f', 2, long) */
#define FS_IOC32_SETFLAGS_ 0x40046602ULL /* _IOW('f', 2, int) */
#define FS_IOC_FSSETXATTR_ 0x401c5820ULL /* _IOW('X', 32, struct fsxattr) */
#define AF_VSOCK_ 40ULL
#define SOCK_TYPE_MASK_ 0xfULL
#define SOCK_SEQPACKET_ 5ULL
#define SOCK_DCCP_ 6ULL
#define SOCK_PACKET_ 10ULL
#define IPPROTO_SCTP_ 132ULL
#define IPPROTO_MPTCP_ 262ULL
#define MSG_FASTOPEN_ 0x20000000ULL

/* The landlock backend's network rules (SECCOMP_PLAN_LANDLOCK_ON). */
#define LL_SOCKET(fam, type, why)                                                                 \
        { "socket", 0, SECCOMP_PLAN_ERRNO, EPERM, SECCOMP_PLAN_LANDLOCK_ON, 2,                    \
          { { 0, M32, fam }, { 1, SOCK_TYPE_MASK_, type } }, why }
#define LL_STREAM(fam, proto, why)                                                                \
        { "socket", 0, SECCOMP_PLAN_ERRNO, EPERM, SECCOMP_PLAN_LANDLOCK_ON, 2,                    \
          { { 0, M32, fam }, { 2, M32, proto } }, why }
#define LL_FASTOPEN(name, arg)                                                                    \
        { name, 0, SECCOMP_PLAN_ERRNO, EPERM, SECCOMP_PLAN_LANDLOCK_ON, 1,                        \
          { { arg, MSG_FASTOPEN_, MSG_FASTOPEN_ } },                                              \
          "MSG_FASTOPEN connects past connect(): Landlock and the supervisor never see it" }

#define LL_META(name, nr)                                                                         \
        { name, nr, SECCOMP_PLAN_NOTIFY, 0, SECCOMP_PLAN_LANDLOCK_ON, 0, { { 0 } },               \
          "changes metadata: Landlock has no right for it, the supervisor performs it on the "    \
          "checked inode" }

static const seccomp_plan_rule rules[] = {
        /* Reaching other processes. */
        DENY("ptrace", EPERM, "inspect or patch other processes (the supervisor, the agent)"),
        DENY("process_vm_readv", EPERM, "read another process's memory"),
        DENY("process_vm_writev", EPERM, "write another process's memory"),
        DENY("pidfd_getfd", EPERM, "steal descriptors from another process"),
        /* Changing the filesystem view: would desynchronise the supervisor's path resolution and
         * undo read-only binds. */
        DENY("mount", EPERM, "mount over or remount protected paths"),
        DENY("umount2", EPERM, "unmount the binds that hide secrets / protect paths"),
        DENY("pivot_root", EPERM, "change the root the supervisor resolves against"),
        DENY("chroot", EPERM, "change the root the supervisor resolves against"),
        DENY("move_mount", EPERM, "new mount API: move mounts"),
        DENY("open_tree", EPERM, "new mount API: clone mount trees"),
        DENY_NR("open_tree_attr", 467, EPERM, "new mount API (6.15): clone and reconfigure"),
        DENY("fsopen", EPERM, "new mount API: create filesystems"),
        DENY("fsconfig", EPERM, "new mount API: configure filesystems"),
        DENY("fsmount", EPERM, "new mount API: create mounts"),
        DENY("fspick", EPERM, "new mount API: reconfigure mounts"),
        DENY_NR("mount_setattr", 442, EPERM, "new mount API: make read-only binds writable"),
        DENY("unshare", EPERM, "new namespaces (user namespaces: mount tricks, kernel attack surface)"),
        DENY("setns", EPERM, "enter other namespaces"),
        DENY_CLONE(CLONE_NEWNS_),
        DENY_CLONE(CLONE_NEWCGROUP_),
        DENY_CLONE(CLONE_NEWUTS_),
        DENY_CLONE(CLONE_NEWIPC_),
        DENY_CLONE(CLONE_NEWUSER_),
        DENY_CLONE(CLONE_NEWPID_),
        DENY_CLONE(CLONE_NEWNET_),
        /* Quiet: glibc tries clone3 for every thread and posix_spawn and falls back to clone,
         * which the rules above check (and report). Reporting it would make each thread a
         * "violation", and notifying it would add a round trip to each. */
        DENY_QUIET("clone3", 0, ENOSYS, "flags live in memory, cannot be checked; glibc falls back to clone"),
        /* Kernel attack surface a build never needs. */
        DENY("keyctl", EPERM, "kernel keyrings are not namespaced"),
        DENY("add_key", EPERM, "kernel keyrings are not namespaced"),
        DENY("request_key", EPERM, "kernel keyrings are not namespaced"),
        DENY("bpf", EPERM, "verifier/JIT attack surface; bpffs pins create names"),
        DENY("io_uring_setup", ENOSYS, "io_uring performs opens/renames/links invisible to seccomp"),
        DENY("io_uring_enter", ENOSYS, "io_uring performs opens/renames/links invisible to seccomp"),
        DENY("io_uring_register", ENOSYS, "io_uring performs opens/renames/links invisible to seccomp"),
        DENY("perf_event_open", EPERM, "side channels, kernel attack surface"),
        DENY("userfaultfd", EPERM, "stalls the supervisor's memory reads; widens kernel races"),
        DENY("kexec_load", EPERM, "replace the kernel"),
        DENY("kexec_file_load", EPERM, "replace the kernel"),
        DENY("init_module", EPERM, "load kernel code"),
        DENY("finit_module", EPERM, "load kernel code"),
        DENY("delete_module", EPERM, "unload kernel code"),
        DENY("open_by_handle_at", ENOSYS, "opens by inode handle, bypassing path checks"),
        DENY("name_to_handle_at", ENOSYS, "companion of open_by_handle_at"),
        DENY("lookup_dcookie", EPERM, "kernel-internal path lookup"),
        DENY("quotactl", EPERM, "host quota administration"),
        DENY_NR("quotactl_fd", 443, EPERM, "host quota administration"),
        DENY("swapon", EPERM, "swap files: host administration"),
        DENY("swapoff", EPERM, "swap files: host administration"),
        DENY("reboot", EPERM, "host administration"),
        DENY("acct", EPERM, "process accounting writes a file the kernel names"),
        DENY("syslog", EPERM, "kernel log: addresses and host information"),
        DENY("iopl", EPERM, "raw I/O port access"),
        DENY("ioperm", EPERM, "raw I/O port access"),
        DENY("vhangup", EPERM, "hang up the terminal"),
        /* Landlock does not handle TRUNCATE (handling it makes every read-only open walk the
         * path: 1.4x on opens); path-based truncate(2) through /proc/self/fd/N could then cut an
         * inherited host file the command holds read-only. ftruncate(2) and O_TRUNC need a
         * writable fd, which Landlock's WRITE_FILE already governs. */
        DENY("truncate", EPERM, "path truncation that bypasses read-only fds (see landlock.c)"),
        DENY("settimeofday", EPERM, "host clock"),
        DENY("clock_settime", EPERM, "host clock"),
        DENY("clock_adjtime", EPERM, "host clock (modes live in memory: denied whole)"),
        DENY("adjtimex", EPERM, "host clock (modes live in memory: denied whole)"),
        /* Terminal injection (CVE-2017-5226, CVE-2023-28100). ioctl's cmd is an unsigned int. */
        DENY_IF("ioctl", EPERM, 1, M32, TIOCSTI_, "TIOCSTI: type into the caller's terminal"),
        DENY_IF("ioctl", EPERM, 1, M32, TIOCLINUX_, "TIOCLINUX: VT paste injection"),
        /* Sockets that reach outside the sandbox's network namespace. */
        { "socket", 0, SECCOMP_PLAN_ERRNO, EPERM, SECCOMP_PLAN_UNIX_OFF, 1, { { 0, M32, AF_UNIX } },
          "AF_UNIX: docker.sock, D-Bus, agents (allowUnixSockets is empty)" },
        /* allowUnixSockets: stream and seqpacket sockets, whose connect() the supervisor performs
         * (see connect below); a datagram socket could sendto() any pathname socket. */
        { "socket", 0, SECCOMP_PLAN_ERRNO, EPERM, SECCOMP_PLAN_UNIX_ON, 2,
          { { 0, M32, AF_UNIX }, { 1, SOCK_TYPE_MASK_, SOCK_DGRAM } },
          "AF_UNIX datagram: sendto() any pathname socket (journald, ...)" },
        DENY_IF("socket", EPERM, 0, M32, AF_VSOCK_, "AF_VSOCK: host services (WSL interop, VMs)"),
        { "socketpair", 0, SECCOMP_PLAN_ERRNO, EPERM, 0, 2,
          { { 0, M32, AF_UNIX }, { 1, SOCK_TYPE_MASK_, SOCK_DGRAM } },
          "AF_UNIX datagram pair: sendto() any pathname socket (journald, ...)" },
        /* The supervisor cannot see a Landlock domain the command adds to itself: creations it
         * performs would ignore it (pitfall 11), so the command learns Landlock is unavailable. */
        DENY_NR("landlock_create_ruleset", 444, ENOSYS, "self-imposed Landlock would be bypassed"),
        DENY_NR("landlock_restrict_self", 446, ENOSYS, "self-imposed Landlock would be bypassed"),
        /* Quiet, like clone3: the fallback (openat) is what the table checks. */
        DENY_QUIET("openat2", 437, ENOSYS, "flags live in memory; callers fall back to openat"),

        /* Creation-time name rules: the supervisor performs these calls itself. open/openat only
         * with O_CREAT, so plain opens of existing files never pay for it; not with O_PATH, which
         * makes the kernel ignore O_CREAT (and an O_PATH fd cannot be handed back by ADDFD). The
         * flags are a register: the decision cannot be raced. */
        NOTIFY_IF("open", 1, O_CREAT | O_PATH, O_CREAT, "may create a name"),
        NOTIFY_IF("openat", 2, O_CREAT | O_PATH, O_CREAT, "may create a name"),
        /* Existing files opened for writing without O_CREAT: the supervisor refuses a git
         * repository's config written in place (docs/design/git-repos.md) and performs the
         * rest. O_DIRECTORY (part of O_TMPFILE too) stays with the kernel: it never opens a
         * file for writing. Read-only opens never pay. */
        NOTIFY_IF("open", 1, O_WRITE_OPEN_MASK, O_WRONLY, "may write a repository's config"),
        NOTIFY_IF("open", 1, O_WRITE_OPEN_MASK, O_RDWR, "may write a repository's config"),
        NOTIFY_IF("openat", 2, O_WRITE_OPEN_MASK, O_WRONLY, "may write a repository's config"),
        NOTIFY_IF("openat", 2, O_WRITE_OPEN_MASK, O_RDWR, "may write a repository's config"),
        NOTIFY("creat", "creates a name"),
        NOTIFY("mkdir", "creates a name"),
        NOTIFY("mkdirat", "creates a name"),
        NOTIFY("mknod", "creates a name"),
        NOTIFY("mknodat", "creates a name"),
        NOTIFY("rename", "moves a name into place"),
        NOTIFY("renameat", "moves a name into place"),
        NOTIFY("renameat2", "moves a name into place"),
        NOTIFY("link", "creates a name"),
        NOTIFY("linkat", "creates a name (also links O_TMPFILE files into view)"),
        NOTIFY("symlink", "creates a name"),
        NOTIFY("symlinkat", "creates a name"),
        NOTIFY("bind", "AF_UNIX bind creates a name; the address lives in memory"),
        /* Removing an (empty) ancestor of a protected path, such as .claude, is refused too
         * (docs/policy.md); existing protected files are read-only mounts already. Directories
         * only, so the frequent unlink() of files never pays. */
        NOTIFY("rmdir", "removes an ancestor of a protected path"),
        { "unlinkat", 0, SECCOMP_PLAN_NOTIFY, 0, SECCOMP_PLAN_LANDLOCK_OFF, 1,
          { { 2, AT_REMOVEDIR, AT_REMOVEDIR } }, "removes an ancestor of a protected path" },
        /* allowUnixSockets: the destination lives in memory and the fd can be swapped by another
         * thread, so the supervisor connects the caller's socket itself, to the inode it checked
         * (src/linux/supervisor-unix.c). Every family: the socket's family is not in a register. */
        { "connect", 0, SECCOMP_PLAN_NOTIFY, 0, SECCOMP_PLAN_UNIX_ON, 0, { { 0 } },
          "connect to an allowUnixSockets socket only; the address lives in memory" },

        /* The landlock backend: no network namespace, so every socket that could leave the host
         * other than by TCP (which Landlock limits to the proxy's ports and the supervisor to the
         * proxy's address) is refused here and reported. A stacked filter (linux/seccomp-net.c)
         * refuses the rest by ranges: other families, other AF_INET types, future protocols. */
        LL_SOCKET(AF_INET, SOCK_DGRAM, "UDP: DNS, QUIC and any datagram leave with no proxy to judge them"),
        LL_SOCKET(AF_INET6, SOCK_DGRAM, "UDP: DNS, QUIC and any datagram leave with no proxy to judge them"),
        LL_SOCKET(AF_INET, SOCK_RAW, "raw IP and ICMP leave the host; Landlock sees TCP only"),
        LL_SOCKET(AF_INET6, SOCK_RAW, "raw IP and ICMPv6 leave the host; Landlock sees TCP only"),
        LL_SOCKET(AF_INET, SOCK_SEQPACKET_, "SCTP leaves the host; Landlock sees TCP only"),
        LL_SOCKET(AF_INET6, SOCK_SEQPACKET_, "SCTP leaves the host; Landlock sees TCP only"),
        LL_SOCKET(AF_INET, SOCK_DCCP_, "DCCP leaves the host; Landlock sees TCP only"),
        LL_SOCKET(AF_INET6, SOCK_DCCP_, "DCCP leaves the host; Landlock sees TCP only"),
        LL_SOCKET(AF_INET, SOCK_PACKET_, "link-layer packets leave the host"),
        LL_SOCKET(AF_INET6, SOCK_PACKET_, "link-layer packets leave the host"),
        LL_STREAM(AF_INET, IPPROTO_SCTP_, "SCTP streams: not TCP, Landlock's port rules miss them"),
        LL_STREAM(AF_INET6, IPPROTO_SCTP_, "SCTP streams: not TCP, Landlock's port rules miss them"),
        LL_STREAM(AF_INET, IPPROTO_MPTCP_, "MPTCP: subflows Landlock's TCP port rules may miss"),
        LL_STREAM(AF_INET6, IPPROTO_MPTCP_, "MPTCP: subflows Landlock's TCP port rules may miss"),
        /* listen() on an unbound TCP socket binds a port on every interface without bind(), which
         * is the only call Landlock checks: a server reachable from the network. */
        { "listen", 0, SECCOMP_PLAN_ERRNO, EPERM, SECCOMP_PLAN_LANDLOCK_ON, 0, { { 0 } },
          "autobinds a port on every interface past Landlock's bind rule: a server for the network" },
        /* TCP Fast Open connects from sendmsg() without the connect hook Landlock and the
         * supervisor rely on (landlock-lsm/linux#41). The flags are a register. */
        LL_FASTOPEN("sendto", 3),
        LL_FASTOPEN("sendmsg", 2),
        LL_FASTOPEN("sendmmsg", 3),
        /* The destination lives in memory: the supervisor connects the caller's socket itself, to
         * the address it checked (the run's proxy only). With allowUnixSockets the rule above
         * notifies connect() already. */
        { "connect", 0, SECCOMP_PLAN_NOTIFY, 0, SECCOMP_PLAN_LANDLOCK_ON | SECCOMP_PLAN_UNIX_OFF, 0,
          { { 0 } }, "connect only to the run's proxy; the address lives in memory" },
        /* Landlock has no right for metadata and no read-only mount stands behind it here: every
         * chmod, chown, utimes and xattr change is performed by the supervisor on the inode it
         * checked, beneath the writable roots only and never on a protected file or secret
         * (src/linux/supervisor-meta.c): `chmod 0644 ~/.ssh/id_rsa` would hand the key to every
         * local user, `chmod +x .git/hooks/pre-commit` arm a hook. */
        LL_META("chmod", 0), LL_META("fchmod", 0), LL_META("fchmodat", 0),
        LL_META("fchmodat2", 452), LL_META("chown", 0), LL_META("fchown", 0),
        LL_META("lchown", 0), LL_META("fchownat", 0), LL_META("utime", 0), LL_META("utimes", 0),
        LL_META("futimesat", 0), LL_META("utimensat", 0), LL_META("setxattr", 0),
        LL_META("lsetxattr", 0), LL_META("fsetxattr", 0), LL_META("removexattr", 0),
        LL_META("lremovexattr", 0), LL_META("fremovexattr", 0), LL_META("setxattrat", 463),
        LL_META("removexattrat", 466),
        /* File attribute flags (chattr: nodump, noatime, compression, ...) are metadata too, set
         * on a read-only fd by the owner; the supervisor does not serve ioctl, so they are refused
         * in this backend, inside the workspace as well. The cmd is an unsigned int. */
        { "ioctl", 0, SECCOMP_PLAN_ERRNO, EPERM, SECCOMP_PLAN_LANDLOCK_ON, 1, { { 1, M32, FS_IOC_SETFLAGS_ } },
          "FS_IOC_SETFLAGS: file attribute flags, metadata Landlock does not govern" },
        { "ioctl", 0, SECCOMP_PLAN_ERRNO, EPERM, SECCOMP_PLAN_LANDLOCK_ON, 1, { { 1, M32, FS_IOC32_SETFLAGS_ } },
          "FS_IOC32_SETFLAGS: file attribute flags, metadata Landlock does not govern" },
        { "ioctl", 0, SECCOMP_PLAN_ERRNO, EPERM, SECCOMP_PLAN_LANDLOCK_ON, 1, { { 1, M32, FS_IOC_FSSETXATTR_ } },
          "FS_IOC_FSSETXATTR: file attribute flags and project ids, metadata Landlock does not govern" },
        /* No read-only mounts here: the supervisor refuses removing a protected file. */
        { "unlink", 0, SECCOMP_PLAN_NOTIFY, 0, SECCOMP_PLAN_LANDLOCK_ON, 0, { { 0 } },
          "removes a name: a protected file is no read-only mount in this backend" },
        { "unlinkat", 0, SECCOMP_PLAN_NOTIFY, 0, SECCOMP_PLAN_LANDLOCK_ON, 0, { { 0 } },
          "removes a name: a protected file is no read-only mount in this backend" },
};

const seccomp_plan_rule *seccomp_plan_rules(size_t *ret_n) {
        *ret_n = ELEMENTSOF(rules);
        return rules;
}

bool seccomp_plan_rule_wanted(const seccomp_plan_rule *rule, const seccomp_options *opt) {
        /* The guest's program keeps the unix variant's refusals (vm_guest above). */
        bool unix_on = opt->unix_connect || opt->vm_guest;
        if (rule->action == SECCOMP_PLAN_NOTIFY && !opt->notify_creates)
                return false;
        if ((rule->flags & SECCOMP_PLAN_UNIX_ON) && !unix_on)
                return false;
        if ((rule->flags & SECCOMP_PLAN_LANDLOCK_ON) && !opt->landlock_backend)
                return false;
        if ((rule->flags & SECCOMP_PLAN_LANDLOCK_OFF) && opt->landlock_backend)
                return false;
        return !(rule->flags & SECCOMP_PLAN_UNIX_OFF) || !unix_on;
}

/* A refusal goes to the supervisor, which answers with the same errno and reports it, only when
 * one listens: then the kernel's answer and the supervisor's are indistinguishable to the caller,
 * and an allowed call takes exactly the path it took before (only the return value of the
 * matched leaf differs). */
uint32_t seccomp_plan_rule_ret(const seccomp_plan_rule *rule, const seccomp_options *opt) {
        if (rule->action == SECCOMP_PLAN_NOTIFY)
                return SECCOMP_RET_USER_NOTIF;
        if (opt->notify_creates && !opt->kernel_denials && !(rule->flags & SECCOMP_PLAN_QUIET))
                return SECCOMP_RET_USER_NOTIF;
        return SECCOMP_RET_ERRNO | ((uint32_t) rule->err & SECCOMP_RET_DATA);
}

uint32_t seccomp_plan_badarch_ret(const seccomp_options *opt) {
        return opt->notify_creates && !opt->kernel_denials ? SECCOMP_RET_USER_NOTIF
                                                           : SECCOMP_RET_ERRNO | ENOSYS;
}

bool seccomp_plan_rule_matches(const seccomp_plan_rule *rule, int nr, const struct seccomp_data *d) {
        if (d->nr != nr)
                return false;
        for (uint8_t i = 0; i < rule->n_conds; i++) {
                const seccomp_plan_cond *c = &rule->conds[i];
                if (c->arg >= 6 || (d->args[c->arg] & c->mask) != c->value)
                        return false;
        }
        return true;
}

static const char *action_name(const seccomp_plan_rule *r) {
        if (r->action == SECCOMP_PLAN_NOTIFY)
                return "NOTIFY";
        switch (r->err) {
        case EPERM:
                return "EPERM";
        case ENOSYS:
                return "ENOSYS";
        case EACCES:
                return "EACCES";
        default:
                return "ERRNO";
        }
}

int seccomp_plan_rule_format(const seccomp_plan_rule *r, char *buf, size_t size) {
        int n = snprintf(buf, size, "%s: %s", r->syscall, action_name(r));
        for (uint8_t i = 0; i < r->n_conds && n >= 0 && (size_t) n < size; i++) {
                const seccomp_plan_cond *c = &r->conds[i];
                n += snprintf(buf + n, size - (size_t) n, "%s(arg%u & %#llx) == %#llx",
                              i == 0 ? " if " : " && ", c->arg, (unsigned long long) c->mask,
                              (unsigned long long) c->value);
        }
        return n;
}

static json_t *rule_to_json(const seccomp_plan_rule *r, const seccomp_options *opt) {
        json_t *conds = json_array();
        for (uint8_t i = 0; conds && i < r->n_conds; i++)
                if (json_array_append_new(conds, json_pack("{s:i,s:I,s:I}", "arg", r->conds[i].arg,
                                                           "mask", (json_int_t) r->conds[i].mask,
                                                           "value", (json_int_t) r->conds[i].value)) < 0) {
                        json_decref(conds);
                        return NULL;
                }
        if (!conds)
                return NULL;
        bool reported = r->action == SECCOMP_PLAN_ERRNO &&
                        seccomp_plan_rule_ret(r, opt) == SECCOMP_RET_USER_NOTIF;
        return json_pack("{s:s,s:s,s:o,s:b,s:s}", "syscall", r->syscall, "action", action_name(r),
                         "conditions", conds, "reported", reported, "why", r->why);
}

void *seccomp_plan_to_json(const seccomp_options *opt) {
        json_t *a = json_array();
        for (size_t i = 0; a && i < ELEMENTSOF(rules); i++) {
                if (!seccomp_plan_rule_wanted(&rules[i], opt))
                        continue;
                if (json_array_append_new(a, rule_to_json(&rules[i], opt)) < 0) {
                        json_decref(a);
                        return NULL;
                }
        }
        return a;
}

/* ---- A classic-BPF interpreter with the kernel's seccomp semantics ----------------------------- */

static bool alu(uint16_t op, uint32_t *a, uint32_t src) {
        switch (op) {
        case BPF_ADD:
                *a += src;
                break;
        case BPF_SUB:
                *a -= src;
                break;
        case BPF_MUL:
                *a *= src;
                break;
        case BPF_DIV:
        case BPF_MOD:
                if (src == 0)
                        return false; /* the kernel's verifier rejects a constant 0 */
                *a = op == BPF_DIV ? *a / src : *a % src;
                break;
        case BPF_OR:
                *a |= src;
                break;
        case BPF_AND:
                *a &= src;
                break;
        case BPF_XOR:
                *a ^= src;
                break;
        case BPF_LSH:
                *a = src < 32 ? *a << src : 0;
                break;
        case BPF_RSH:
                *a = src < 32 ? *a >> src : 0;
                break;
        case BPF_NEG:
                *a = (uint32_t) -*a;
                break;
        default:
                return false;
        }
        return true;
}

static bool jump_taken(uint16_t op, uint32_t a, uint32_t src, bool *ret_ok) {
        *ret_ok = true;
        switch (op) {
        case BPF_JEQ:
                return a == src;
        case BPF_JGT:
                return a > src;
        case BPF_JGE:
                return a >= src;
        case BPF_JSET:
                return (a & src) != 0;
        default:
                *ret_ok = false;
                return false;
        }
}

uint32_t seccomp_bpf_run(const struct sock_filter *prog, size_t n, const struct seccomp_data *d) {
        unsigned steps;
        return seccomp_bpf_run_counted(prog, n, d, &steps);
}

uint32_t seccomp_bpf_run_counted(const struct sock_filter *prog, size_t n,
                                 const struct seccomp_data *d, unsigned *ret_steps) {
        uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = { 0 };
        const unsigned char *data = (const unsigned char *) d;
        *ret_steps = 0;
        for (size_t pc = 0; pc < n; pc++) {
                const struct sock_filter *f = &prog[pc];
                ++*ret_steps;
                uint32_t src = BPF_SRC(f->code) == BPF_X ? x : f->k;
                bool ok = true;
                switch (BPF_CLASS(f->code)) {
                case BPF_LD:
                case BPF_LDX: {
                        uint32_t v;
                        if (BPF_MODE(f->code) == BPF_ABS && BPF_SIZE(f->code) == BPF_W &&
                            f->k % 4 == 0 && f->k + 4 <= sizeof(*d))
                                memcpy(&v, data + f->k, 4); /* seccomp_data is host-endian */
                        else if (BPF_MODE(f->code) == BPF_IMM)
                                v = f->k;
                        else if (BPF_MODE(f->code) == BPF_MEM && f->k < BPF_MEMWORDS)
                                v = mem[f->k];
                        else if (BPF_MODE(f->code) == BPF_LEN)
                                v = sizeof(*d);
                        else
                                return SECCOMP_RET_KILL_PROCESS;
                        *(BPF_CLASS(f->code) == BPF_LD ? &a : &x) = v;
                        break;
                }
                case BPF_ST:
                case BPF_STX:
                        if (f->k >= BPF_MEMWORDS)
                                return SECCOMP_RET_KILL_PROCESS;
                        mem[f->k] = BPF_CLASS(f->code) == BPF_ST ? a : x;
                        break;
                case BPF_ALU:
                        ok = alu(BPF_OP(f->code), &a, src);
                        break;
                case BPF_JMP:
                        if (BPF_OP(f->code) == BPF_JA)
                                pc += f->k;
                        else
                                pc += jump_taken(BPF_OP(f->code), a, src, &ok) ? f->jt : f->jf;
                        break;
                case BPF_RET:
                        return BPF_RVAL(f->code) == BPF_A ? a : f->k;
                case BPF_MISC:
                        if (BPF_MISCOP(f->code) == BPF_TAX)
                                x = a;
                        else
                                a = x;
                        break;
                default:
                        ok = false;
                }
                if (!ok)
                        return SECCOMP_RET_KILL_PROCESS;
        }
        return SECCOMP_RET_KILL_PROCESS; /* fell off the end: the kernel rejects such programs */
}
