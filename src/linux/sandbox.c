/* SPDX-License-Identifier: Apache-2.0 */
#include "linux/sandbox.h"

#include <fcntl.h>
#include <linux/close_range.h>
#include <linux/magic.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "linux/cgroup.h"
#include "linux/fdpass.h"
#include "linux/intercept.h"
#include "linux/landlock.h"
#include "linux/mount.h"
#include "linux/process.h"
#include "linux/proxy-proc.h"
#include "linux/seccomp.h"
#include "linux/session-init.h"
#include "linux/supervisor.h"
#include "linux/tls-bundle.h"
#include "linux/vm-host.h"
#include "report/report.h"

extern char **environ;

#define SANDBOX_NAMESPACES                                                                        \
        (CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP)

static _noreturn_ void fail(int report_fd, cordon_code code, int e, const char *what) {
        report_fatal(report_fd, code, e, "%s: %s", what, strerror(e < 0 ? -e : e));
        _exit(125);
}

static _noreturn_ void fail_error(int report_fd, const cordon_error *err) {
        report_error(report_fd, err);
        _exit(125);
}

/* ---- command -------------------------------------------------------------------------------- */

static void apply_rlimits(const plan *p, int report_fd) {
        /* The run's cgroup, when there is one, enforces both memory and pids: RLIMIT_AS on top
         * would make allocations fail before the cgroup's OOM killer ever saw them. */
        bool cg = p->cgroup != NULL;
        struct { int res; uint64_t v; const char *name; } lim[] = {
                { RLIMIT_CPU, p->cpu_seconds, "limits.cpu" },
                { RLIMIT_AS, cg ? 0 : p->memory_bytes, "limits.memory" },
                /* Counted per user namespace (Linux 5.14+), so only the sandbox's processes count.
                 * Ignored for uid 0: launch refuses limits.pids as root without a cgroup. */
                { RLIMIT_NPROC, cg ? 0 : p->pids, "limits.pids" },
        };
        for (size_t i = 0; i < ELEMENTSOF(lim); i++) {
                if (lim[i].v == 0)
                        continue;
                struct rlimit rl = { .rlim_cur = lim[i].v, .rlim_max = lim[i].v };
                if (setrlimit(lim[i].res, &rl) < 0)
                        fail(report_fd, CORDON_LAUNCH_FAILED, errno, lim[i].name);
        }
}

static void reset_signals(void) {
        sigset_t all;
        sigemptyset(&all);
        (void) sigprocmask(SIG_SETMASK, &all, NULL); /* cannot fail with a valid set */
        for (int s = 1; s < _NSIG; s++)
                (void) signal(s, SIG_DFL); /* EINVAL for SIGKILL/SIGSTOP and RT internals: fine */
}

static _noreturn_ void command_main(const plan *p, char *const argv[], int report_fd) {
        /* A new session: no controlling terminal, so TIOCSTI/TIOCLINUX into the caller's
         * terminal are impossible even if the seccomp filter were bypassed. */
        if (setsid() < 0)
                fail(report_fd, CORDON_LAUNCH_FAILED, errno, "setsid");
        /* A session.terminal: the PTY on fd 0 becomes the controlling terminal of this new
         * session (job control, ^C). It is the session's own PTY, never the caller's. */
        if (p->tty && ioctl(0, TIOCSCTTY, 0) < 0)
                fail(report_fd, CORDON_LAUNCH_FAILED, errno, "TIOCSCTTY");
        /* A microvm session's exec: before reset_signals(), which would unblock the kill signal
         * init keeps blocked for it (session-init.c); it executes nothing, so the rest of what
         * a command gets here (rlimits, the directory, closing descriptors) is the guest's. */
        if (p->vm && p->session_ctl >= 0) {
                report_command_started(report_fd);
                vm_host_session_exec(p, argv, report_fd);
        }
        reset_signals();
        apply_rlimits(p, report_fd);
        if (chdir(p->workdir) < 0)
                report_fatal(report_fd, CORDON_LAUNCH_FAILED, errno,
                             "cannot enter the working directory %s: %s", p->workdir,
                             strerror(errno)), _exit(125);
        /* Only 0-2 and the descriptors the caller handed over survive the exec; the report
         * channel closes on success. */
        if (syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) < 0)
                fail(report_fd, CORDON_LAUNCH_FAILED, errno, "close_range");
        for (size_t i = 0; i < p->n_keep_fds; i++)
                if (fcntl(p->keep_fds[i], F_SETFD, 0) < 0)
                        fail(report_fd, CORDON_LAUNCH_FAILED, errno, "handed-over descriptor");
        environ = p->env.v ? p->env.v : (char *[]) { NULL };
        /* The launcher learns this process from the message itself (report_read_sender()): the
         * pidfd cordon_process_signal() uses. */
        report_command_started(report_fd);
        if (p->vm)
                vm_host_main(p, p->vm, argv, report_fd); /* the microvm backend: the VMM */
        execvp(argv[0], argv);
        report_fatal(report_fd, CORDON_EXEC_FAILED, errno, "cannot execute '%s': %s", argv[0],
                     strerror(errno));
        _exit(127);
}

int sandbox_close_fds(const plan *p, const int *own, size_t n_own) {
        int keep[PROCESS_KEEP_FDS_MAX];
        if (n_own + p->n_keep_fds > ELEMENTSOF(keep))
                return -E2BIG;
        memcpy(keep, own, n_own * sizeof(int));
        memcpy(keep + n_own, p->keep_fds, p->n_keep_fds * sizeof(int));
        return process_close_fds_keep(keep, n_own + p->n_keep_fds);
}

_noreturn_ void sandbox_unconfined_main(const plan *p, char *const argv[], int report_fd) {
        command_main(p, argv, report_fd);
}

/* ---- init (PID 1) ----------------------------------------------------------------------------- */

static _noreturn_ void reap_until(pid_t command, int report_fd) {
        for (;;) {
                int st;
                pid_t w = waitpid(-1, &st, 0);
                if (w < 0 && errno == EINTR)
                        continue;
                if (w < 0)
                        fail(report_fd, CORDON_LAUNCH_FAILED, errno, "init: waitpid");
                if (w == command) {
                        /* Exiting ends the PID namespace: the kernel kills every process left in
                         * it, daemons included. */
                        report_child_status(report_fd, st);
                        _exit(0);
                }
        }
}

static void confine_self(const plan *p, int report_fd, int sock) {
        cordon_error e = { 0 };
        if (mount_proc(&e) < 0)
                fail_error(report_fd, &e);
        int r = process_drop_capabilities();
        if (r < 0)
                fail(report_fd, CORDON_LAUNCH_FAILED, r, "cannot drop capabilities");
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                fail(report_fd, CORDON_LAUNCH_FAILED, errno, "no_new_privs");
        /* Non-dumpable: the command cannot open the fds under /proc/1/fd to reach the report channel. */
        if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
                fail(report_fd, CORDON_LAUNCH_FAILED, errno, "PR_SET_DUMPABLE");
        r = process_disable_core_dumps();
        if (r < 0)
                fail(report_fd, CORDON_LAUNCH_FAILED, r, "cannot disable core dumps");
        if (landlock_apply(p, &e) < 0)
                fail_error(report_fd, &e);
        int listener = -1;
        /* Always the unix variant: socket(AF_UNIX) succeeds and every connect() is judged by the
         * supervisor on its path, so the NSS lookups glibc makes for `ls -l` or `id` (nscd,
         * systemd-userdb) are recognised and refused quietly, while a connect to any other host
         * socket is refused and reported with its path (supervisor-unix.c). */
        seccomp_options so = { .notify_creates = true, .unix_connect = true };
        r = seccomp_install_sandbox_filter(&so, &listener);
        if (r < 0)
                report_fatal(report_fd, CORDON_POLICY_UNENFORCEABLE, r,
                             "cannot install the seccomp filter that enforces creation-time name "
                             "rules (%s); hint: needs seccomp user notification with "
                             "WAIT_KILLABLE_RECV (Linux 5.19+)", strerror(-r)), _exit(125);
        r = fd_send(sock, listener);
        if (r < 0)
                fail(report_fd, CORDON_LAUNCH_FAILED, r, "cannot hand the listener to the monitor");
        (void) close(listener); /* a listener kept here could answer CONTINUE to itself */
}

/* Init moves itself into the run's cgroup, first: everything it forks is then born inside, the
 * command included, so no process of the sandbox ever runs outside its limits. Moving itself
 * (rather than being moved by the monitor) is what spares the start an RCU grace period on
 * cgroup v1 (cgroup_procs_enter_self()). Init is single-threaded, and the files were opened by
 * the monitor in the host's namespaces. They are closed at once, so the command's tree never
 * holds them: a writer names tasks in its own PID namespace, so even a leaked one could move only
 * sandbox processes, but nothing of the host's stays within the command's reach. Fail closed: no
 * run without its limits. */
static void enter_run_cgroup(cgroup_procs *procs, int report_fd) {
        int r = cgroup_procs_enter_self(procs);
        cgroup_procs_close(procs);
        if (r < 0)
                fail(report_fd, CORDON_LAUNCH_FAILED, r, "init: cannot enter the run's cgroup");
}

static _noreturn_ void init_main(const plan *p, char *const argv[], int report_fd, int sock,
                                 cgroup_procs *procs) {
        /* The parent is outside this PID namespace (getppid() reads 0), so liveness is checked by
         * the handshake below instead. */
        if (process_die_with_parent(0) < 0)
                _exit(125);
        enter_run_cgroup(procs, report_fd);
        (void) prctl(PR_SET_NAME, "cordon-init", 0, 0, 0); /* cosmetic: names it in ps */
        confine_self(p, report_fd, sock);
        char ack;
        if (read(sock, &ack, 1) != 1)
                _exit(125); /* the monitor died: there is no supervisor, run nothing */
        (void) close(sock);
        /* A microvm session boots its VM before it is ready: a session that cannot boot fails
         * its launch, and every exec finds the guest waiting. */
        pid_t vmm = p->session_ctl >= 0 && p->vm ? vm_host_session_boot(p, p->vm, report_fd) : -1;
        report_ready(report_fd);
        if (p->session_ctl >= 0)
                session_init_loop(p, p->session_ctl, vmm); /* a warm session: execs on request */
        pid_t c = fork();
        if (c < 0)
                fail(report_fd, CORDON_LAUNCH_FAILED, errno, "init: fork");
        if (c == 0)
                command_main(p, argv, report_fd);
        reap_until(c, report_fd);
}

/* ---- monitor ---------------------------------------------------------------------------------- */

static int loopback_up(void) {
        _cleanup_close_ int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (s < 0)
                return -errno;
        struct ifreq ifr = { 0 };
        memcpy(ifr.ifr_name, "lo", 3);
        if (ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
                return -errno;
        ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
        if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
                return -errno;
        return 0;
}

/* What the command's resolver reads: the proxy's resolver on the namespace's loopback
 * (src/net/proxy-dns.c), nothing else. */
#define SANDBOX_RESOLV_CONF "# cordon: the sandbox's resolver answers only names its egress rules allow\n" \
                            "nameserver 127.0.0.1\n"

static void enter_namespaces(const plan *p, int report_fd) {
        uid_t uid = getuid();
        gid_t gid = getgid();
        if (unshare(SANDBOX_NAMESPACES) < 0)
                report_fatal(report_fd, CORDON_SANDBOX_UNAVAILABLE, errno,
                             "refusing to run the command unconfined: cannot create user "
                             "namespaces (unshare: %s); hint: enable unprivileged user namespaces "
                             "(sysctl user.max_user_namespaces, kernel.unprivileged_userns_clone, "
                             "or an AppArmor profile allowing userns for cordon)",
                             strerror(errno)), _exit(125);
        int r = userns_map_self(uid, gid);
        if (r < 0)
                fail(report_fd, CORDON_SANDBOX_UNAVAILABLE, r,
                     "refusing to run the command unconfined: cannot map ids in the user namespace");
        cordon_error e = { 0 };
        if (mount_build_root(p, &e) < 0)
                fail_error(report_fd, &e);
        /* The network namespace has only loopback, down; bring it up so local servers the command
         * starts for itself work. Nothing outside is reachable from here. */
        r = loopback_up();
        if (r < 0)
                fail(report_fd, CORDON_LAUNCH_FAILED, r, "cannot bring up loopback");
        /* Every other TCP connection and every DNS query to the egress proxy
         * (linux/intercept.h), so clients that ignore proxy variables meet the same rules. A
         * kernel without nf_tables NAT runs without it: proxy-aware clients still reach what the
         * rules allow, and nothing else leaves either way (the namespace has loopback only), so
         * that is less reach, never more (docs/design/network.md). */
        r = intercept_install(PROXY_TRANSPARENT_PORT, PROXY_DNS_PORT);
        if (r < 0 && r != -EPROTONOSUPPORT && r != -EOPNOTSUPP && r != -ENOENT &&
            r != -EAFNOSUPPORT)
                fail(report_fd, CORDON_LAUNCH_FAILED, r,
                     "cannot install the egress interception rules in the sandbox's network "
                     "namespace");
        /* The sandbox's own resolver, and no search domains: the host's would make every
         * lookup of a name not allowed ask for NAME.SEARCH too (each refused, each reported), and
         * name internal domains the sandbox cannot reach anyway. Queries to any other server are
         * redirected all the same (intercept.h); this only spares them. */
        if (r >= 0) {
                r = mount_file_over("/etc/resolv.conf", SANDBOX_RESOLV_CONF);
                if (r < 0 && r != -ENOENT)
                        fail(report_fd, CORDON_LAUNCH_FAILED, r,
                             "cannot mount the sandbox's /etc/resolv.conf");
        }
        /* TLS inspection: the session CA trusted inside (tls-bundle.h). Without it every
         * terminated host would fail its clients' verification: fail now, saying why. */
        r = tls_bundle_mount(p);
        if (r < 0)
                fail(report_fd, CORDON_LAUNCH_FAILED, r,
                     "TLS inspection: cannot mount the trust bundle with the session CA over "
                     "/etc/ssl/certs/ca-certificates.crt");
        /* Java ignores SSL_CERT_FILE: its truststore with the session CA, for the same reason. */
        r = tls_bundle_mount_java(p);
        if (r < 0)
                fail(report_fd, CORDON_LAUNCH_FAILED, r,
                     "TLS inspection: cannot mount the Java truststore with the session CA over "
                     TLS_BUNDLE_JAVA_CACERTS);
}

typedef struct monitor_ctx {
        int report_fd;
} monitor_ctx;

static void on_report(void *userdata, const supervisor_report *rep) {
        const monitor_ctx *m = userdata;
        report_violation_action(m->report_fd, rep->action, rep->syscall, rep->target, rep->rule,
                                rep->repeats, rep->sid);
}

/* A warm session's supervisor: who connected from where to the proxy (REPORT_CONNECTION). */
static void on_connection(void *userdata, pid_t sid, const char *client) {
        const monitor_ctx *m = userdata;
        report_connection(m->report_fd, sid, client);
}

static void wait_for(pid_t pid) {
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
                ;
}

/* Whether `st` describes the private tmpfs `op` made: a writable root bound at the same path
 * (the workspace being /tmp) is another filesystem, whose fullness is not this limit's. */
static bool is_private_tmpfs(const mount_op *op, const struct statfs *st) {
        uint64_t bs = st->f_bsize > 0 ? (uint64_t) st->f_bsize : 1;
        return st->f_type == TMPFS_MAGIC && (uint64_t) st->f_blocks == (op->tmpfs_bytes + bs - 1) / bs;
}

/* After the command: a private /tmp or /dev/shm that is full (no block or no inode left) is
 * reported as a resource-limit violation; the command itself saw ENOSPC. Checked once, at the
 * end (cheap): a tmpfs filled and emptied again during the run is not reported. */
static void report_full_tmpfs(const plan *p, int report_fd) {
        for (size_t i = 0; i < p->n_mounts; i++) {
                const mount_op *op = &p->mounts[i];
                struct statfs st;
                char rule[128];
                if (op->kind != MOUNT_OP_TMPFS || statfs(op->path, &st) < 0 ||
                    !is_private_tmpfs(op, &st) || (st.f_bavail > 0 && st.f_ffree > 0))
                        continue;
                bool shm = strcmp(op->path, "/dev/shm") == 0;
                (void) snprintf(rule, sizeof(rule), "%s (%llu bytes%s): the tmpfs was full",
                                shm ? "limits.shmSize" : "limits.tmpSize",
                                (unsigned long long) op->tmpfs_bytes,
                                st.f_ffree == 0 ? ", every inode used" : "");
                report_violation_action(report_fd, "resource-limit", "write", op->path, rule, 0, 0);
        }
}

/* A warm session attributes the proxy's refusals by the connect() the supervisor performed
 * (docs/design/daemon.md). TCP Fast Open (sendto/sendmsg with MSG_FASTOPEN) connects without
 * connect(): from a source port an earlier, recorded connection of another exec used, it would
 * have its refusals attributed to that exec. The sandbox's network namespace turns the client
 * side off (per namespace; its owner, the monitor, may write it), so every connection to the
 * proxy is a connect() the supervisor sees. False when it cannot: then nothing is recorded and
 * the proxy's refusals reach every running exec (never hidden). `proc_fd`: /proc/sys/net shows
 * the opener's network namespace, whichever procfs it is. */
static bool fastopen_off(int proc_fd) {
        _cleanup_close_ int fd = openat(proc_fd, "sys/net/ipv4/tcp_fastopen", O_WRONLY | O_CLOEXEC);
        return fd >= 0 && write(fd, "0\n", 2) == 2;
}

static _noreturn_ void supervise(const plan *p, int report_fd, int proc_fd, int sock, pid_t init,
                                 const supervisor_unix_allow *unix_allow, bool record) {
        /* The supervisor performs creations for the command: it keeps no capability the command
         * does not have, and nothing may attach to it. */
        if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0 || process_drop_capabilities() < 0 ||
            prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
                kill(init, SIGKILL);
                fail(report_fd, CORDON_LAUNCH_FAILED, errno, "monitor: cannot drop privileges");
        }
        int listener = fd_recv(sock);
        if (listener < 0) {
                wait_for(init); /* init failed first and reported why */
                _exit(0);
        }
        /* Acknowledge first, start the workers second: init only needs to know this process
         * holds the listener (if it dies now, the listener closes and init dies with it), and
         * notifications wait in the kernel until a worker takes them. Thread start-up thus runs
         * in parallel with the command's fork and exec instead of before them. */
        if (write(sock, "A", 1) != 1) {
                kill(init, SIGKILL);
                fail(report_fd, CORDON_LAUNCH_FAILED, errno, "monitor: handshake");
        }
        monitor_ctx m = { .report_fd = report_fd };
        supervisor_config cfg = { .listener_fd = listener, .proc_fd = proc_fd,
                                  .rules = &p->names, .on_report = on_report,
                                  .userdata = &m, .unix_allow = unix_allow,
                                  /* a warm session tells its execs' refusals apart */
                                  .attribute = p->session_ctl >= 0,
                                  .record_ports = { PROXY_HTTP_PORT, PROXY_SOCKS_PORT },
                                  .record_redirect_port = PROXY_TRANSPARENT_PORT,
                                  .record_dns_port = PROXY_DNS_PORT,
                                  .on_connection = record ? on_connection : NULL };
        supervisor *s = NULL;
        int r = supervisor_start(&cfg, &s);
        if (r < 0) {
                kill(init, SIGKILL); /* fail closed: the command must not run unsupervised */
                fail(report_fd, CORDON_LAUNCH_FAILED, r, "cannot start the creation supervisor");
        }
        wait_for(init);
        supervisor_stop(s);
        report_full_tmpfs(p, report_fd);
        _exit(0);
}

/* Inside the new network namespace: the egress proxy's listeners, handed to the proxy process
 * (src/linux/proxy-proc.c). They exist before the command does, so its first connection queues
 * in the backlog instead of failing: no readiness polling. */
static void send_proxy_listeners(int report_fd, int proxy_ch) {
        int r = proxy_listeners_send(proxy_ch);
        if (r < 0)
                fail(report_fd, CORDON_LAUNCH_FAILED, r, "cannot create the proxy listeners");
        (void) close(proxy_ch);
}

/* What the monitor takes from the host before it leaves the host's namespaces: the files through
 * which init enters the run's cgroup (the kernel checks a migration against the opener's
 * credentials and cgroup namespace, and the sandbox's cgroup namespace will not contain the run's
 * cgroup), and the allowUnixSockets sockets, pinned while the host's file system is in view (the
 * sandbox's /tmp is private: an ssh-agent socket there would be out of reach afterwards). */
typedef struct host_grip {
        cgroup_procs procs;
        supervisor_unix_allow *unix_allow;
} host_grip;

static void grip_host(const plan *p, int report_fd, host_grip *g) {
        *g = (host_grip) { .procs = CGROUP_PROCS_INIT };
        int r = cgroup_procs_open_self(p->cgroup, &g->procs);
        if (r < 0)
                fail(report_fd, CORDON_LAUNCH_FAILED, r, "monitor: cannot open the run's cgroup");
        if ((r = supervisor_unix_allow_new(&p->unix_sockets, &g->unix_allow)) < 0)
                fail(report_fd, CORDON_LAUNCH_FAILED, r,
                     "monitor: cannot pin the allowUnixSockets sockets");
}

/* After the root is built: sockets on the sandbox's private tmpfs mounts were bound inside it. */
static void grip_private_mounts(const plan *p, int report_fd, host_grip *g) {
        for (size_t i = 0; g->unix_allow && i < p->n_mounts; i++) {
                if (p->mounts[i].kind != MOUNT_OP_TMPFS)
                        continue;
                int r = supervisor_unix_allow_add_private(g->unix_allow, p->mounts[i].path);
                if (r < 0)
                        fail(report_fd, CORDON_LAUNCH_FAILED, r, "monitor: private tmpfs");
        }
}

/* Init takes nothing of it along but the cgroup's files, which it uses and closes before it
 * starts anything (enter_run_cgroup()); the monitor closes its own copies once init exists. */
static void release_grip(host_grip *g) {
        supervisor_unix_allow_free(TAKE_PTR(g->unix_allow));
}

_noreturn_ void sandbox_monitor_main(const plan *p, char *const argv[], int report_fd,
                                     pid_t launcher, int proxy_ch) {
        if (process_die_with_parent(launcher) < 0)
                _exit(125);
        (void) prctl(PR_SET_NAME, "cordon-monitor", 0, 0, 0); /* cosmetic: names it in ps */
        /* No controlling terminal: an O_CREAT open of /dev/tty performed by the supervisor must
         * not reach the user's terminal. */
        if (setsid() < 0)
                fail(report_fd, CORDON_LAUNCH_FAILED, errno, "monitor: setsid");
        int r = sandbox_close_fds(p, (int[]){ report_fd, proxy_ch, p->session_ctl }, 3);
        if (r < 0)
                fail(report_fd, CORDON_LAUNCH_FAILED, r, "monitor: close_range");
        /* The host's procfs, where notification pids (from this PID namespace) are valid. */
        int proc_fd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (proc_fd < 0)
                fail(report_fd, CORDON_LAUNCH_FAILED, errno, "monitor: open /proc");
        host_grip grip;
        grip_host(p, report_fd, &grip);
        enter_namespaces(p, report_fd);
        bool record = p->session_ctl >= 0 && fastopen_off(proc_fd);
        grip_private_mounts(p, report_fd, &grip);
        send_proxy_listeners(report_fd, proxy_ch);
        int sp[2];
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
                fail(report_fd, CORDON_LAUNCH_FAILED, errno, "monitor: socketpair");
        /* clone(CLONE_NEWPID) rather than unshare(CLONE_NEWPID) + fork(): after the unshare the
         * kernel refuses clone(CLONE_THREAD) in this process, and the supervisor needs threads.
         * No CLONE_VM and a NULL stack: fork semantics (glibc's fork() would be the same call). */
        pid_t init = (pid_t) syscall(SYS_clone, CLONE_NEWPID | SIGCHLD, NULL, NULL, NULL, NULL);
        if (init < 0)
                fail(report_fd, CORDON_SANDBOX_UNAVAILABLE, errno,
                     "refusing to run the command unconfined: cannot create a PID namespace");
        if (init == 0) {
                (void) close(sp[0]);
                (void) close(proc_fd); /* the command's tree must never hold the host's /proc */
                release_grip(&grip);
                init_main(p, argv, report_fd, sp[1], &grip.procs);
        }
        (void) close(sp[1]);
        cgroup_procs_close(&grip.procs);
        supervise(p, report_fd, proc_fd, sp[0], init, grip.unix_allow, record);
}
