/* SPDX-License-Identifier: Apache-2.0 */
/* Host probing: each fact is established by trying the feature, never inferred from the kernel
 * version (distributions backport and disable features freely). Probes that change process
 * state (unshare, no_new_privs, a seccomp filter) run in a throw-away child that reports back
 * over a close-on-exec pipe; the rest run in the caller and leave nothing behind. */
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/magic.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/statfs.h>
#include <sys/utsname.h>
#include <sys/wait.h>

#include "linux/cgroup.h"
#include "linux/intercept.h"
#include "linux/probe.h"
#include "net/proxy.h"
#include "util/uapi.h"
#include "util/util.h"

/* ---- Syscall wrappers (-errno on failure) -------------------------------------------------- */

static int sys_landlock_abi(void) {
        long r = syscall(__NR_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
        return r < 0 ? -errno : (int) r;
}

static int sys_seccomp(unsigned op, unsigned flags, void *arg) {
        long r = syscall(__NR_seccomp, op, flags, arg);
        return r < 0 ? -errno : (int) r;
}

static int sys_openat2(int dirfd, const char *path, struct open_how *how) {
        long r = syscall(__NR_openat2, dirfd, path, how, sizeof(*how));
        return r < 0 ? -errno : (int) r;
}

/* Async-signal-safe: used in forked children of a possibly multi-threaded parent. */
static int write_string_file(const char *path, const char *s) {
        _cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        ssize_t n = write_all(fd, s, strlen(s));
        return n < 0 ? (int) n : 0;
}

/* A sysctl as a number, or -1 when the file does not exist or does not parse. */
static long read_sysctl(const char *path) {
        _cleanup_free_ char *s = NULL;
        if (read_file_at(AT_FDCWD, path, 64, 0, &s, NULL) < 0)
                return -1;
        char *end;
        errno = 0;
        long v = strtol(s, &end, 10);
        if (errno != 0 || end == s || (*end != '\n' && *end != '\0') || v < 0)
                return -1;
        return v;
}

/* ---- Running a probe in a child ------------------------------------------------------------ */

typedef void (*probe_child_fn)(const void *arg, void *out);

/* Runs fn in a forked child, which fills `out` (size bytes) and sends it back. Returns 1 with
 * `out` filled, 0 when the child died before answering (out stays zeroed: "unusable"), or -errno
 * when the child could not be started. */
static int run_probe_child(probe_child_fn fn, const void *arg, void *out, size_t size) {
        int pipefd[2];
        memset(out, 0, size);
        if (pipe2(pipefd, O_CLOEXEC) < 0)
                return -errno;
        _cleanup_close_ int rfd = pipefd[0];
        _cleanup_close_ int wfd = pipefd[1];

        pid_t pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0) {
                rfd = safe_close(rfd);
                fn(arg, out);
                (void) write_all(wfd, out, size); /* the parent treats a short read as "died" */
                _exit(0);
        }
        wfd = safe_close(wfd);
        ssize_t n = read_full(rfd, out, size);
        int status;
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR) {
                        /* ECHILD: the embedding program ignores SIGCHLD, so the kernel reaped
                         * the child already; its answer (or its absence) is in the pipe. */
                        if (errno == ECHILD)
                                break;
                        return -errno;
                }
        if (n != (ssize_t) size) {
                memset(out, 0, size);
                return 0;
        }
        return 1;
}

/* ---- User namespaces ---------------------------------------------------------------------- */

/* The namespaces the native backend creates (issue 2: user, mount, pid, ipc, uts, net, cgroup). */
#define PROBE_NS_FLAGS                                                                            \
        (CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS |  \
         CLONE_NEWCGROUP)

typedef enum userns_step {
        USERNS_STEP_NONE = 0, /* the child died before answering */
        USERNS_STEP_UNSHARE,
        USERNS_STEP_SETGROUPS,
        USERNS_STEP_UID_MAP,
        USERNS_STEP_GID_MAP,
        USERNS_STEP_MOUNT,
        _USERNS_STEP_MAX,
} userns_step;

static const char *const userns_step_names[_USERNS_STEP_MAX] = {
        [USERNS_STEP_NONE] = "probe child died",
        [USERNS_STEP_UNSHARE] = "unshare",
        [USERNS_STEP_SETGROUPS] = "setgroups",
        [USERNS_STEP_UID_MAP] = "uid_map",
        [USERNS_STEP_GID_MAP] = "gid_map",
        [USERNS_STEP_MOUNT] = "mount",
};

typedef struct userns_arg {
        char uid_map[48];
        char gid_map[48];
} userns_arg;

typedef struct userns_out {
        int ok;
        int step; /* the userns_step that failed */
        int err;
} userns_out;

/* One step, in the child; async-signal-safe. */
static int userns_do_step(userns_step step, const userns_arg *arg) {
        switch (step) {
        case USERNS_STEP_UNSHARE:
                return unshare(PROBE_NS_FLAGS) < 0 ? -errno : 0;
        case USERNS_STEP_SETGROUPS:
                return write_string_file("/proc/self/setgroups", "deny");
        case USERNS_STEP_UID_MAP:
                return write_string_file("/proc/self/uid_map", arg->uid_map);
        case USERNS_STEP_GID_MAP:
                return write_string_file("/proc/self/gid_map", arg->gid_map);
        case USERNS_STEP_MOUNT:
                /* A private remount needs CAP_SYS_ADMIN over the new mount namespace: it fails
                 * where an LSM (e.g. AppArmor's userns restriction) lets unshare succeed but
                 * strips the capabilities. */
                return mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ? -errno : 0;
        case USERNS_STEP_NONE:
        case _USERNS_STEP_MAX:
        default:
                return -EINVAL;
        }
}

static void userns_child(const void *varg, void *vout) {
        userns_out *out = vout;
        for (int step = USERNS_STEP_UNSHARE; step < _USERNS_STEP_MAX; step++) {
                int r = userns_do_step((userns_step) step, varg);
                if (r < 0) {
                        out->step = step;
                        out->err = -r;
                        return;
                }
        }
        out->ok = 1;
}

static int probe_userns(probe_facts *f) {
        userns_arg arg;
        userns_out out;
        /* Formatted before fork: snprintf is not async-signal-safe. */
        (void) snprintf(arg.uid_map, sizeof(arg.uid_map), "%u %u 1\n", (unsigned) geteuid(),
                        (unsigned) geteuid());
        (void) snprintf(arg.gid_map, sizeof(arg.gid_map), "%u %u 1\n", (unsigned) getegid(),
                        (unsigned) getegid());
        int r = run_probe_child(userns_child, &arg, &out, sizeof(out));
        if (r < 0)
                return r;
        f->userns = out.ok;
        if (!out.ok) {
                unsigned step = (unsigned) out.step < _USERNS_STEP_MAX ? (unsigned) out.step : 0;
                f->userns_step = userns_step_names[step];
                f->userns_errno = out.err;
        }
        f->max_user_namespaces = read_sysctl("/proc/sys/user/max_user_namespaces");
        f->unprivileged_userns_clone = read_sysctl("/proc/sys/kernel/unprivileged_userns_clone");
        f->apparmor_restrict_userns =
                read_sysctl("/proc/sys/kernel/apparmor_restrict_unprivileged_userns");
        return 0;
}

/* ---- seccomp ------------------------------------------------------------------------------ */

typedef struct seccomp_out {
        int listener;       /* a NEW_LISTENER filter was installed */
        int listener_errno;
        int wait_killable;
        int addfd_send;
} seccomp_out;

static int install_allow_listener(unsigned flags) {
        struct sock_filter insn[] = { BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW) };
        struct sock_fprog prog = { .len = ELEMENTSOF(insn), .filter = insn };
        return sys_seccomp(SECCOMP_SET_MODE_FILTER, flags, &prog);
}

/* ADDFD on a notification id that cannot exist: the kernel validates the flags before it looks
 * the id up, so ENOENT means the flags were accepted and EINVAL means they were not. */
static int addfd_errno(int listener, unsigned flags) {
        struct seccomp_notif_addfd a = { .id = UINT64_MAX, .flags = flags, .srcfd = (unsigned) listener };
        return ioctl(listener, SECCOMP_IOCTL_NOTIF_ADDFD, &a) < 0 ? errno : 0;
}

static void seccomp_child(const void *arg, void *vout) {
        seccomp_out *out = vout;
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
                out->listener_errno = errno;
                return;
        }
        int fd = install_allow_listener(SECCOMP_FILTER_FLAG_NEW_LISTENER |
                                        SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV);
        if (fd >= 0)
                out->wait_killable = 1;
        else if (fd == -EINVAL)
                fd = install_allow_listener(SECCOMP_FILTER_FLAG_NEW_LISTENER);
        if (fd < 0) {
                out->listener_errno = -fd;
                return;
        }
        out->listener = 1;
        /* Baseline first: without the ADDFD ioctl at all (< 5.9) every flag would look refused,
         * and a kernel that answered something other than ENOENT here would make the SEND test
         * meaningless. */
        if (addfd_errno(fd, 0) == ENOENT)
                out->addfd_send = addfd_errno(fd, SECCOMP_ADDFD_FLAG_SEND) == ENOENT;
}

static bool seccomp_action_available(uint32_t action) {
        return sys_seccomp(SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0;
}

static int probe_seccomp(probe_facts *f) {
        f->seccomp_filter = seccomp_action_available(SECCOMP_RET_ERRNO);
        bool notify = seccomp_action_available(SECCOMP_RET_USER_NOTIF);
        seccomp_out out;
        int r = run_probe_child(seccomp_child, NULL, &out, sizeof(out));
        if (r < 0)
                return r;
        if (r == 0)
                out.listener_errno = ECHILD;
        f->seccomp_user_notif = notify && out.listener;
        f->seccomp_listener_errno = notify ? out.listener_errno : EOPNOTSUPP;
        f->seccomp_wait_killable_recv = f->seccomp_user_notif && out.wait_killable;
        f->seccomp_addfd_send = f->seccomp_user_notif && out.addfd_send;
        return 0;
}

/* ---- The rest: probed in place, nothing changes ------------------------------------------ */

static void probe_landlock(probe_facts *f) {
        int abi = sys_landlock_abi();
        f->landlock_abi = abi > 0 ? abi : 0;
        f->landlock_errno = abi > 0 ? 0 : -abi;
}

static void probe_openat2(probe_facts *f) {
        struct open_how how = {
                .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
                .resolve = RESOLVE_NO_MAGICLINKS,
        };
        int fd = sys_openat2(AT_FDCWD, "/", &how);
        f->openat2 = fd >= 0;
        (void) safe_close(fd);
}

static bool is_cgroup2(const char *path) {
        struct statfs s;
        return statfs(path, &s) == 0 && (unsigned long) s.f_type == CGROUP2_SUPER_MAGIC;
}

static void probe_misc(probe_facts *f) {
        struct utsname u;
        if (uname(&u) == 0)
                (void) snprintf(f->release, sizeof(f->release), "%s", u.release);
        f->root = geteuid() == 0;

        if (is_cgroup2("/sys/fs/cgroup"))
                f->cgroup2 = PROBE_CGROUP_UNIFIED;
        else if (is_cgroup2("/sys/fs/cgroup/unified"))
                f->cgroup2 = PROBE_CGROUP_HYBRID;
        else
                f->cgroup2 = PROBE_CGROUP_NONE;

        probe_vm(f);
}

/* By trying: a cgroup with the memory and pids controllers is created and removed again. */
static void probe_limits_mechanism(probe_facts *f) {
        char detail[sizeof(f->limits_detail)];
        cgroup_kind k = cgroup_probe(detail, sizeof(detail));
        f->limits = k == CGROUP_NONE ? PROBE_LIMITS_RLIMIT : PROBE_LIMITS_CGROUP;
        if (k != CGROUP_NONE)
                (void) snprintf(f->limits_detail, sizeof(f->limits_detail), "%s", detail);
        else
                (void) snprintf(f->limits_detail, sizeof(f->limits_detail),
                                "RLIMIT_AS for memory, RLIMIT_NPROC for pids%s (%.150s)",
                                geteuid() == 0 ? ", which root ignores: limits.pids is refused"
                                               : "",
                                detail);
}

typedef struct nat_out {
        int ok;
        int err;
} nat_out;

/* In the child: a user and network namespace of its own (CAP_NET_ADMIN over it) and the native
 * backend's interception table installed there. The namespace dies with the child. */
static void nat_child(const void *arg, void *vout) {
        (void) arg;
        nat_out *out = vout;
        int r = unshare(CLONE_NEWUSER | CLONE_NEWNET) < 0 ? -errno : 0;
        if (r == 0)
                r = intercept_rules_install(PROXY_TRANSPARENT_PORT, PROXY_DNS_PORT);
        out->ok = r == 0;
        out->err = -r;
}

static int probe_nft_nat(probe_facts *f) {
        nat_out out = { 0 };
        int r = run_probe_child(nat_child, NULL, &out, sizeof(out));
        if (r < 0)
                return r;
        f->nft_nat = out.ok;
        f->nft_nat_errno = out.err;
        return 0;
}

int probe_facts_collect(probe_facts *ret) {
        probe_facts f = { .max_user_namespaces = -1 };
        int r = probe_userns(&f);
        if (r < 0)
                return r;
        r = probe_seccomp(&f);
        if (r < 0)
                return r;
        probe_landlock(&f);
        probe_openat2(&f);
        if ((r = probe_nft_nat(&f)) < 0)
                return r;
        probe_misc(&f);
        probe_limits_mechanism(&f);
        *ret = f;
        return 0;
}

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static probe_facts cache;
static bool cache_valid;

/* A session host is forked from its caller without exec, and a caller may be multi-threaded
 * (cordond, cordon mcp): when another thread held the lock at the fork, the child's copy is held
 * by a thread the child does not have, and its first probe would wait forever. The child starts
 * with the lock free. The lock is held only to read or fill the cache, never while probing:
 * the probe forks, and a fork waits for every thread inside the fork gate, one of which could
 * be waiting for this lock (util/fork-gate.h). */
static void cache_lock_reset_in_child(void) {
        (void) pthread_mutex_init(&cache_lock, NULL);
}

__attribute__((constructor)) static void cache_lock_register(void) {
        (void) pthread_atfork(NULL, NULL, cache_lock_reset_in_child);
}

/* Two threads that find the cache empty both probe; the first to finish fills it. */
int probe_facts_get(const probe_facts **ret) {
        (void) pthread_mutex_lock(&cache_lock); /* cannot fail on a default mutex */
        bool valid = cache_valid;
        (void) pthread_mutex_unlock(&cache_lock);
        if (!valid) {
                probe_facts f;
                int r = probe_facts_collect(&f);
                if (r < 0)
                        return r;
                (void) pthread_mutex_lock(&cache_lock);
                if (!cache_valid) {
                        cache = f;
                        cache_valid = true;
                }
                (void) pthread_mutex_unlock(&cache_lock);
        }
        *ret = &cache;
        return 0;
}
