/* SPDX-License-Identifier: Apache-2.0 */
/*
 * attack: process, namespace and syscall-surface escapes: ptrace and friends on the sandbox's own
 * init and parent, undoing mounts, nested user namespaces, setns, the kernel interfaces a confined
 * build never needs (io_uring, keyrings, bpf, perf, userfaultfd, file handles), TIOCSTI, signals
 * to host processes, inherited descriptors, environment secrets, surviving the run, core dumps.
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/bpf.h>
#include <linux/io_uring.h>
#include <linux/keyctl.h>
#include <linux/fs.h>
#include <linux/mount.h>
#include <linux/perf_event.h>
#include <linux/sched.h>
#include <linux/userfaultfd.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "attack.h"

/* Counts attempts that worked; each prints one line. */
static int report(const char *what, long r) {
        if (r >= 0) {
                fprintf(stderr, "  %s: SUCCEEDED (%ld)\n", what, r);
                return 1;
        }
        fprintf(stderr, "  %s: %s\n", what, strerror(errno));
        return 0;
}

static int verdict_n(int n, const char *what) {
        if (n)
                return escaped("%d of the %s attempts succeeded", n, what);
        return refused("every %s attempt failed", what);
}

/* ---- other processes ----------------------------------------------------------------------- */

/* proc-access PID|init|parent: no debugging access to cordon's own processes. */
static int cmd_proc_access(int argc, char **argv) {
        int pid = parse_pid(argv[0]);
        if (pid < 0)
                return harness("bad pid %s", argv[0]);
        if (pid == 0) /* getppid() is 0 when the parent lives outside our pid namespace */
                return refused("the parent is not visible from this pid namespace");
        int n = 0;
        long r = ptrace(PTRACE_ATTACH, pid, 0, 0);
        if (report("ptrace(ATTACH)", r)) {
                /* ATTACH stops the tracee: wait for the stop, then let it go again. */
                n++;
                (void) waitpid(pid, NULL, __WALL);
                (void) ptrace(PTRACE_DETACH, pid, 0, 0);
        }
        r = ptrace(PTRACE_SEIZE, pid, 0, 0);
        if (report("ptrace(SEIZE)", r)) {
                n++;
                (void) ptrace(PTRACE_DETACH, pid, 0, 0);
        }
        /* EFAULT means the permission check passed and only our bogus address failed. */
        char buf[16];
        struct iovec local = { buf, sizeof buf }, remote = { (void *) 0x1000, sizeof buf };
        r = syscall(__NR_process_vm_readv, pid, &local, 1, &remote, 1, 0);
        if (r < 0 && errno == EFAULT)
                r = 0;
        n += report("process_vm_readv", r);
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/mem", pid);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (report("open /proc/PID/mem", fd))
                n++, close(fd);
        /* The environment (API keys, tokens): where the process is visible at all (the landlock
         * backend has no PID namespace), reading it needs ptrace access. */
        snprintf(path, sizeof path, "/proc/%d/environ", pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (report("open /proc/PID/environ", fd))
                n++, close(fd);
        int pfd = (int) syscall(__NR_pidfd_open, pid, 0);
        if (pfd >= 0) {
                for (int target = 0; target < 64; target++) {
                        int got = (int) syscall(__NR_pidfd_getfd, pfd, target, 0);
                        if (got >= 0) {
                                n += report("pidfd_getfd", got);
                                close(got);
                                break;
                        }
                }
                close(pfd);
        }
        return verdict_n(n, "debugging-access");
}

/* kill PID MARKER: a host process must be neither visible nor signalable. */
static int cmd_kill(int argc, char **argv) {
        int pid = parse_pid(argv[0]);
        if (pid <= 0)
                return harness("bad pid %s", argv[0]);
        char path[64], buf[4096];
        snprintf(path, sizeof path, "/proc/%d/cmdline", pid);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd >= 0) {
                long n = read_some(fd, buf, sizeof buf);
                close(fd);
                for (long i = 0; i < n; i++)
                        buf[i] = buf[i] ? buf[i] : ' ';
                /* The same number can name one of our own processes: only the marker proves it is
                 * the host's. */
                if (n <= 0 || !strstr(buf, argv[1]))
                        return refused("pid %d here is not the host process", pid);
        }
        if (kill(pid, SIGKILL) == 0)
                return escaped("SIGKILL delivered to pid %d", pid);
        return refused("kill %d: %s", pid, strerror(errno));
}

/* proc-scan MARKER: no process outside the sandbox (the driver runs `sleeper MARKER`, whose argv[0]
 * is MARKER) may be listed in its /proc. */
static int cmd_proc_scan(int argc, char **argv) {
        DIR *d = opendir("/proc");
        if (!d)
                return harness("opendir /proc: %s", strerror(errno));
        int seen = 0, found = 0;
        for (struct dirent *e; (e = readdir(d));) {
                if (e->d_name[0] < '1' || e->d_name[0] > '9')
                        continue;
                seen++;
                char path[300], buf[4096];
                snprintf(path, sizeof path, "/proc/%s/cmdline", e->d_name);
                int fd = open(path, O_RDONLY | O_CLOEXEC);
                if (fd < 0)
                        continue;
                long n = read_some(fd, buf, sizeof buf);
                close(fd);
                /* argv[0] only: our own command line carries the marker as an argument. */
                if (n > 0 && strcmp(buf, argv[0]) == 0) {
                        fprintf(stderr, "  pid %s: %s\n", e->d_name, buf);
                        found++;
                }
        }
        closedir(d);
        if (found)
                return escaped("%d host process(es) visible in /proc", found);
        return refused("%d processes visible, none from the host", seen);
}

/* ---- mounts and namespaces ------------------------------------------------------------------ */

/* Raw syscalls: glibc's <sys/mount.h> includes "linux/mount.h" with quotes, which the project's
 * -iquote src/ resolves to cordon's own src/linux/mount.h. */
#ifndef MNT_DETACH
#define MNT_DETACH 2
#endif
static long sys_mount(const char *src, const char *dst, const char *type, unsigned long flags) {
        return syscall(SYS_mount, src, dst, type, flags, NULL);
}
static long sys_umount2(const char *target, int flags) {
        return syscall(SYS_umount2, target, flags);
}

/* mount SECRET_DIR RO_DIR SCRATCH_DIR: nothing may undo a hiding or read-only mount. */
static int cmd_mount(int argc, char **argv) {
        const char *secret = argv[0], *ro = argv[1], *scratch = argv[2];
        int n = 0;
        n += report("umount2(secret, MNT_DETACH)", sys_umount2(secret, MNT_DETACH));
        n += report("umount2(ro)", sys_umount2(ro, 0));
        n += report("remount ro dir rw", sys_mount(NULL, ro, NULL, MS_REMOUNT | MS_BIND));
        n += report("remount / rw", sys_mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND));
        n += report("bind / onto scratch", sys_mount("/", scratch, NULL, MS_BIND | MS_REC));
        n += report("tmpfs over ro dir", sys_mount("tmpfs", ro, "tmpfs", 0));
        struct mount_attr attr = { .attr_clr = MOUNT_ATTR_RDONLY };
        n += report("mount_setattr(clear RDONLY)",
                    syscall(__NR_mount_setattr, AT_FDCWD, ro, 0, &attr, sizeof attr));
        long t = syscall(__NR_open_tree, AT_FDCWD, "/", OPEN_TREE_CLONE | AT_RECURSIVE);
        n += report("open_tree(CLONE)", t);
        if (t >= 0)
                close((int) t);
        long fs = syscall(__NR_fsopen, "tmpfs", 0);
        n += report("fsopen(tmpfs)", fs);
        if (fs >= 0)
                close((int) fs);
        n += report("chroot(scratch)", chroot(scratch));
        return verdict_n(n, "mount");
}

static int child_exit0(void *arg) {
        (void) arg;
        _exit(0);
}

/* userns: no new user namespace (the nested-userns remount trick starts with one). */
static int cmd_userns(int argc, char **argv) {
        int n = 0;
        n += report("unshare(CLONE_NEWUSER)", unshare(CLONE_NEWUSER));
        long pid = syscall(SYS_clone, CLONE_NEWUSER | CLONE_NEWNS | SIGCHLD, 0, 0, 0, 0);
        if (pid == 0)
                _exit(0);
        if (report("clone(CLONE_NEWUSER|CLONE_NEWNS)", pid))
                n++, (void) waitpid((pid_t) pid, NULL, 0);
        struct clone_args ca = { .flags = CLONE_NEWUSER, .exit_signal = SIGCHLD };
        pid = syscall(__NR_clone3, &ca, sizeof ca);
        if (pid == 0)
                _exit(0);
        if (report("clone3(CLONE_NEWUSER)", pid))
                n++, (void) waitpid((pid_t) pid, NULL, 0);
        static char stack[64 * 1024];
        int cpid = clone(child_exit0, stack + sizeof stack, CLONE_NEWUSER | SIGCHLD, NULL);
        if (report("glibc clone(CLONE_NEWUSER)", cpid))
                n++, (void) waitpid(cpid, NULL, 0);
        return verdict_n(n, "user-namespace");
}

/* unshare-ns: other namespaces would desynchronise the supervisor's view of mounts and paths. */
static int cmd_unshare_ns(int argc, char **argv) {
        int n = 0;
        n += report("unshare(CLONE_NEWNS)", unshare(CLONE_NEWNS));
        n += report("unshare(CLONE_NEWNET)", unshare(CLONE_NEWNET));
        n += report("unshare(CLONE_NEWPID)", unshare(CLONE_NEWPID));
        return verdict_n(n, "unshare");
}

/* setns: joining any namespace, even our own, is refused by the filter. */
static int cmd_setns(int argc, char **argv) {
        static const char *const kinds[] = { "mnt", "user", "net", "pid", "uts", "ipc", "cgroup" };
        int n = 0;
        for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
                char path[64], what[96];
                snprintf(path, sizeof path, "/proc/1/ns/%s", kinds[i]);
                int fd = open(path, O_RDONLY | O_CLOEXEC);
                if (fd < 0)
                        snprintf(path, sizeof path, "/proc/self/ns/%s", kinds[i]);
                if (fd < 0 && (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
                        continue;
                snprintf(what, sizeof what, "setns(%s)", path);
                n += report(what, setns(fd, 0));
                close(fd);
        }
        return verdict_n(n, "setns");
}

/* ---- kernel interfaces a confined build never needs ----------------------------------------- */

static long try_io_uring(void) {
        struct io_uring_params p = { 0 };
        long fd = syscall(__NR_io_uring_setup, 8, &p);
        if (fd >= 0)
                close((int) fd);
        return fd;
}

static long try_bpf(void) {
        union bpf_attr a = { .map_type = BPF_MAP_TYPE_ARRAY, .key_size = 4, .value_size = 4,
                             .max_entries = 1 };
        long fd = syscall(__NR_bpf, BPF_MAP_CREATE, &a, sizeof a);
        if (fd >= 0)
                close((int) fd);
        return fd;
}

/* perf_event_paranoid=2 still allows user-space-only counting on oneself: only the filter stops
 * this. */
static long try_perf(void) {
        struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE, .size = sizeof a,
                                     .config = PERF_COUNT_SW_TASK_CLOCK, .exclude_kernel = 1,
                                     .exclude_hv = 1, .disabled = 1 };
        long fd = syscall(__NR_perf_event_open, &a, 0, -1, -1, 0);
        if (fd >= 0)
                close((int) fd);
        return fd;
}

/* UFFD_USER_MODE_ONLY is allowed even with vm.unprivileged_userfaultfd=0. */
static long try_userfaultfd(void) {
        long fd = syscall(__NR_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY);
        if (fd >= 0)
                close((int) fd);
        return fd;
}

static long try_open_by_handle(void) {
        struct {
                struct file_handle fh;
                unsigned char bytes[128];
        } h = { .fh.handle_bytes = 128 };
        int mnt_id = 0;
        if (name_to_handle_at(AT_FDCWD, ".", &h.fh, &mnt_id, 0) < 0) {
                fprintf(stderr, "  name_to_handle_at: %s (forging a handle instead)\n",
                        strerror(errno));
                /* ext4's root directory: FILEID_INO32_GEN {ino 2, generation 0}. */
                h.fh.handle_type = 1;
                h.fh.handle_bytes = 8;
                memset(h.bytes, 0, 8);
                h.bytes[0] = 2;
        }
        int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        long fd = open_by_handle_at(root, &h.fh, O_RDONLY | O_CLOEXEC);
        int e = errno;
        if (fd >= 0)
                close((int) fd);
        if (root >= 0)
                close(root);
        errno = e;
        return fd;
}

/* kernel-surface: each of these must fail. */
static int cmd_kernel_surface(int argc, char **argv) {
        int n = 0;
        n += report("io_uring_setup", try_io_uring());
        n += report("keyctl(JOIN_SESSION_KEYRING)",
                    syscall(__NR_keyctl, KEYCTL_JOIN_SESSION_KEYRING, "cordon-it"));
        n += report("add_key(user)", syscall(__NR_add_key, "user", "cordon-it", "x", 1,
                                             KEY_SPEC_PROCESS_KEYRING));
        n += report("bpf(MAP_CREATE)", try_bpf());
        n += report("perf_event_open(self, user-only)", try_perf());
        n += report("userfaultfd(USER_MODE_ONLY)", try_userfaultfd());
        n += report("open_by_handle_at", try_open_by_handle());
        return verdict_n(n, "kernel-interface");
}

/* One named syscall probe, for tests that want to pin a single interface. */
static int cmd_syscall(int argc, char **argv) {
        static const struct {
                const char *name;
                long (*fn)(void);
        } probes[] = {
                { "io_uring", try_io_uring },     { "bpf", try_bpf },
                { "perf", try_perf },             { "userfaultfd", try_userfaultfd },
                { "open_by_handle_at", try_open_by_handle },
        };
        for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++)
                if (strcmp(probes[i].name, argv[0]) == 0)
                        return verdict_n(report(argv[0], probes[i].fn()), argv[0]);
        return harness("unknown probe %s", argv[0]);
}

/* tiocsti: push a keystroke into fd 0's terminal (CVE-2017-5226). */
static int cmd_tiocsti(int argc, char **argv) {
        if (!isatty(0))
                return harness("fd 0 is not a terminal; run under `attack host-pty`");
        const char *s = "echo CORDON-IT-INJECTED\n";
        int n = 0;
        for (const char *c = s; *c; c++)
                if (ioctl(0, TIOCSTI, c) == 0)
                        n++;
        if (n)
                return escaped("TIOCSTI pushed %d characters into the terminal", n);
        return refused("TIOCSTI: %s", strerror(errno));
}

/* ---- inheritance ---------------------------------------------------------------------------- */

/* fds: only 0, 1 and 2 may be open. */
static int cmd_fds(int argc, char **argv) {
        DIR *d = opendir("/proc/self/fd");
        if (!d)
                return harness("opendir /proc/self/fd: %s", strerror(errno));
        int extra = 0;
        for (struct dirent *e; (e = readdir(d));) {
                int fd = atoi(e->d_name);
                if (e->d_name[0] == '.' || fd <= 2 || fd == dirfd(d))
                        continue;
                char path[64], target[PATH_MAX] = "";
                snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
                ssize_t k = readlink(path, target, sizeof target - 1);
                target[k > 0 ? k : 0] = '\0';
                fprintf(stderr, "  fd %d -> %s\n", fd, target);
                extra++;
        }
        closedir(d);
        if (extra)
                return escaped("%d inherited descriptor(s) beyond 0-2", extra);
        return refused("only 0-2 open");
}

static bool env_file_has(const char *path, const char *name) {
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return false;
        char buf[65536];
        long n = read_some(fd, buf, sizeof buf);
        close(fd);
        size_t len = strlen(name);
        for (long i = 0; i < n; i += (long) strlen(buf + i) + 1)
                if (strncmp(buf + i, name, len) == 0 && buf[i + len] == '=')
                        return true;
        return false;
}

/* env-check -NAME... +NAME=VALUE...: -NAME must be absent (also from every visible process's
 * /proc/PID/environ: cordon's own init must not carry it), +NAME=VALUE present. */
static int cmd_env_check(int argc, char **argv) {
        int leaks = 0, missing = 0;
        for (int i = 0; i < argc; i++) {
                if (argv[i][0] == '-') {
                        const char *name = argv[i] + 1;
                        if (getenv(name))
                                fprintf(stderr, "  %s is set\n", name), leaks++;
                        for (int pid = 1; pid < 64; pid++) {
                                char path[64];
                                snprintf(path, sizeof path, "/proc/%d/environ", pid);
                                if (env_file_has(path, name))
                                        fprintf(stderr, "  %s in %s\n", name, path), leaks++;
                        }
                } else if (argv[i][0] == '+') {
                        char *eq = strchr(argv[i], '=');
                        if (!eq)
                                return harness("bad spec %s", argv[i]);
                        *eq = '\0';
                        const char *v = getenv(argv[i] + 1);
                        if (!v || strcmp(v, eq + 1) != 0)
                                fprintf(stderr, "  %s missing\n", argv[i] + 1), missing++;
                } else
                        return harness("bad spec %s", argv[i]);
        }
        if (leaks)
                return escaped("%d secret variable leak(s)", leaks);
        if (missing)
                return failed("%d ordinary variable(s) not passed", missing);
        return refused("secrets scrubbed, ordinary variables kept");
}

/* daemonize MARKER: a setsid'd, double-forked `sleep` whose argv[0] is MARKER. The driver checks
 * from outside that it is gone once cordon exits. */
static int cmd_daemonize(int argc, char **argv) {
        pid_t pid = fork();
        if (pid < 0)
                return harness("fork: %s", strerror(errno));
        if (pid == 0) {
                (void) setsid();
                if (fork() != 0)
                        _exit(0);
                int null = open("/dev/null", O_RDWR);
                for (int fd = 0; fd < 3 && null >= 0; fd++)
                        (void) dup2(null, fd);
                signal(SIGHUP, SIG_IGN);
                execl("/bin/sleep", argv[0], "1000", (char *) NULL);
                _exit(127);
        }
        (void) waitpid(pid, NULL, 0);
        return worked("daemon %s started", argv[0]);
}

/* coredump NAME: the kernel writes core files itself, past the creation rules; the hard limit
 * must stay 0 so no core (whatever core_pattern names it) can appear. */
static int cmd_coredump(int argc, char **argv) {
        struct rlimit rl;
        (void) prctl(PR_SET_NAME, argv[0], 0, 0, 0);
        if (getrlimit(RLIMIT_CORE, &rl) < 0)
                return harness("getrlimit: %s", strerror(errno));
        fprintf(stderr, "  RLIMIT_CORE soft %llu hard %llu\n", (unsigned long long) rl.rlim_cur,
                (unsigned long long) rl.rlim_max);
        struct rlimit inf = { RLIM_INFINITY, RLIM_INFINITY };
        bool raised = setrlimit(RLIMIT_CORE, &inf) == 0;
        if (!raised) {
                rl.rlim_cur = rl.rlim_max;
                (void) setrlimit(RLIMIT_CORE, &rl);
        }
        pid_t pid = fork();
        if (pid == 0) {
                (void) prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
                abort();
        }
        int st = 0;
        (void) waitpid(pid, &st, 0);
        bool dumped = WIFSIGNALED(st) && WCOREDUMP(st);
        if (raised)
                return escaped("RLIMIT_CORE hard limit raised to unlimited%s",
                               dumped ? ", and a core was dumped" : "");
        if (dumped)
                return escaped("a core was dumped (hard limit %llu)",
                               (unsigned long long) rl.rlim_max);
        if (rl.rlim_max != 0)
                return escaped("RLIMIT_CORE hard limit is %llu, not 0",
                               (unsigned long long) rl.rlim_max);
        return refused("hard limit 0, no core dumped");
}

const attack_cmd attack_sys_cmds[] = {
        { "proc-access", "PID|init|parent", 1, cmd_proc_access },
        { "kill", "PID MARKER", 2, cmd_kill },
        { "proc-scan", "MARKER", 1, cmd_proc_scan },
        { "mount", "SECRET_DIR RO_DIR SCRATCH_DIR", 3, cmd_mount },
        { "userns", "", 0, cmd_userns },
        { "unshare-ns", "", 0, cmd_unshare_ns },
        { "setns", "", 0, cmd_setns },
        { "kernel-surface", "", 0, cmd_kernel_surface },
        { "syscall", "io_uring|bpf|perf|userfaultfd|open_by_handle_at", 1, cmd_syscall },
        { "tiocsti", "", 0, cmd_tiocsti },
        { "fds", "", 0, cmd_fds },
        { "env-check", "-SECRET... +NAME=VALUE...", 1, cmd_env_check },
        { "daemonize", "MARKER", 1, cmd_daemonize },
        { "coredump", "NAME", 1, cmd_coredump },
        { NULL, NULL, 0, NULL },
};
