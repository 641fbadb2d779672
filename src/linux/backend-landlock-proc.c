/* SPDX-License-Identifier: Apache-2.0 */
/* The landlock backend's processes: guard, monitor (subreaper + supervisor), command. The layout
 * and why each stage exists: backend-landlock.h. */
#include "linux/backend-landlock.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include "linux/cgroup.h"
#include "linux/fdpass.h"
#include "linux/landlock-layer.h"
#include "linux/process.h"
#include "linux/sandbox.h"
#include "linux/seccomp-net.h"
#include "linux/seccomp.h"
#include "linux/supervisor.h"
#include "report/report.h"

/* Rounds of "kill what is left, reap it" before the monitor gives up on a tree that keeps
 * growing (each round kills every process then under it; a killed process forks no more). */
#define KILL_ROUNDS 10000

static _noreturn_ void fail(int report_fd, cordon_code code, int e, const char *what) {
        report_fatal(report_fd, code, e, "%s: %s", what, strerror(e < 0 ? -e : e));
        _exit(125);
}

static _noreturn_ void fail_error(int report_fd, const cordon_error *err) {
        report_error(report_fd, err);
        _exit(125);
}

/* PR_SET_PDEATHSIG with `sig`, then the check that the parent did not die before it. */
static int die_with(pid_t parent, int sig) {
        if (prctl(PR_SET_PDEATHSIG, sig, 0, 0, 0) < 0)
                return -errno;
        return getppid() == parent ? 0 : -ESRCH;
}

/* Root (a container's, typically) keeps no capability: with none, uid 0 is an ordinary owner of
 * root's files, and Landlock decides the rest. An unprivileged caller has none to drop (and
 * could not empty the bounding set); no_new_privs keeps file capabilities from being gained. */
static int drop_capabilities(void) {
        struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
        struct __user_cap_data_struct d[2] = { 0 };
        if (syscall(SYS_capget, &hdr, d) < 0)
                return -errno;
        bool any = geteuid() == 0; /* root regains a full set at execve without securebits */
        for (int i = 0; i < 2; i++) /* the ambient set is a subset of the permitted one */
                any |= d[i].effective || d[i].permitted || d[i].inheritable;
        return any ? process_drop_capabilities() : 0;
}

/* ---- the command ---------------------------------------------------------------------------- */

typedef struct grip {
        int proc_fd;             /* the host's /proc, for the supervisor */
        cgroup_procs procs;      /* the way into the run's cgroup, opened before Landlock */
        supervisor_unix_allow *unix_allow;
} grip;

static _noreturn_ void command_main(const plan *p, const landlock_run *lr, char *const argv[],
                                    int report_fd, int sock, pid_t monitor) {
        if (die_with(monitor, SIGKILL) < 0)
                _exit(125);
        cordon_error e = { 0 };
        if (landlock_layer_apply(&lr->lp->command, lr->abi, &e) < 0)
                fail_error(report_fd, &e);
        int r = seccomp_install_net_filter();
        if (r < 0)
                fail(report_fd, CORDON_POLICY_UNENFORCEABLE, r, "cannot install the socket filter");
        int listener = -1;
        /* The unix variant always, as on native (sandbox.c): connects judged by path. */
        seccomp_options so = { .notify_creates = true, .landlock_backend = true,
                               .unix_connect = true };
        r = seccomp_install_sandbox_filter(&so, &listener);
        if (r < 0)
                report_fatal(report_fd, CORDON_POLICY_UNENFORCEABLE, r,
                             "cannot install the seccomp filter that enforces creation-time name "
                             "rules and the proxy-only network (%s); hint: needs seccomp user "
                             "notification with WAIT_KILLABLE_RECV (Linux 5.19+)",
                             strerror(-r)), _exit(125);
        r = fd_send(sock, listener);
        if (r < 0)
                fail(report_fd, CORDON_LAUNCH_FAILED, r, "cannot hand the listener to the monitor");
        (void) close(listener); /* a listener kept here could answer CONTINUE to itself */
        char ack;
        if (read(sock, &ack, 1) != 1)
                _exit(125); /* the monitor died: there is no supervisor, run nothing */
        (void) close(sock);
        report_ready(report_fd);
        sandbox_unconfined_main(p, argv, report_fd); /* setsid, rlimits, workdir, fds, env, exec */
}

/* ---- the monitor ---------------------------------------------------------------------------- */

typedef struct monitor_ctx {
        int report_fd;
} monitor_ctx;

static void on_report(void *userdata, const supervisor_report *rep) {
        const monitor_ctx *m = userdata;
        report_violation_action(m->report_fd, rep->action, rep->syscall, rep->target, rep->rule,
                                rep->repeats, rep->sid);
}

/* The signals the monitor waits for, blocked in every thread (the supervisor's workers are
 * started after this) and read from a signalfd: the command or an orphan ended (SIGCHLD), the
 * guard died (SIGTERM: PR_SET_PDEATHSIG), or someone asks to stop. */
static int signals_fd(void) {
        static const int sigs[] = { SIGCHLD, SIGTERM, SIGINT, SIGHUP, SIGQUIT };
        sigset_t set;
        sigemptyset(&set);
        for (size_t i = 0; i < ELEMENTSOF(sigs); i++)
                sigaddset(&set, sigs[i]);
        if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
                return -errno;
        int fd = signalfd(-1, &set, SFD_CLOEXEC);
        return fd < 0 ? -errno : fd;
}

/* The parent pid of `pid` from /proc/<pid>/stat (after the command name, which may hold ')'). */
static pid_t parent_of(int procfd, const char *pid) {
        char path[64], buf[512];
        (void) snprintf(path, sizeof(path), "%s/stat", pid);
        _cleanup_close_ int fd = openat(procfd, path, O_RDONLY | O_CLOEXEC);
        ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
        if (n <= 0)
                return -1;
        buf[n] = '\0';
        const char *rp = strrchr(buf, ')');
        int ppid = -1;
        return rp && sscanf(rp + 1, " %*c %d", &ppid) == 1 ? (pid_t) ppid : -1;
}

/* SIGKILLs every child of this process; returns how many. */
static unsigned kill_children(int procfd) {
        int dfd = openat(procfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *d = dfd < 0 ? NULL : fdopendir(dfd);
        if (!d) {
                safe_close(dfd);
                return 0;
        }
        unsigned n = 0;
        pid_t me = getpid();
        for (struct dirent *de; (de = readdir(d));)
                if (de->d_name[0] >= '1' && de->d_name[0] <= '9' &&
                    parent_of(dfd, de->d_name) == me)
                        n += kill((pid_t) strtol(de->d_name, NULL, 10), SIGKILL) == 0;
        (void) closedir(d);
        return n;
}

/* No PID namespace dies with the command here: every process it left behind was reparented to
 * this subreaper (double forks, setsid daemons included) and is killed, round after round, until
 * none is left. */
static void kill_tree(int procfd) {
        for (unsigned round = 0; round < KILL_ROUNDS; round++) {
                while (waitpid(-1, NULL, WNOHANG) > 0)
                        ;
                if (waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD)
                        return;
                if (kill_children(procfd) > 0)
                        (void) waitpid(-1, NULL, 0); /* one of them, at least, is dying */
                else /* a child being reparented right now */
                        (void) nanosleep(&(struct timespec) { .tv_nsec = 1000 * 1000 }, NULL);
        }
}

/* Waits for the command, reaping orphans meanwhile. Returns 0 when it ended (its status is
 * reported), -1 when the run must be torn down first (the guard died). */
static int wait_command(int sfd, pid_t command, int report_fd) {
        for (;;) {
                struct signalfd_siginfo si;
                ssize_t n = read(sfd, &si, sizeof(si));
                if (n < 0 && errno == EINTR)
                        continue;
                if (n != (ssize_t) sizeof(si) || si.ssi_signo != SIGCHLD)
                        return -1;
                for (;;) {
                        int st;
                        pid_t w = waitpid(-1, &st, WNOHANG);
                        if (w <= 0)
                                break;
                        if (w == command) {
                                report_child_status(report_fd, st);
                                return 0;
                        }
                }
        }
}

static supervisor *start_supervisor(const plan *p, const landlock_run *lr, const grip *g,
                                    int report_fd, int sock, pid_t command, monitor_ctx *m,
                                    supervisor_landlock *sl) {
        int listener = fd_recv(sock);
        if (listener < 0) {
                (void) waitpid(command, NULL, 0); /* it failed first and reported why */
                _exit(0);
        }
        if (write(sock, "A", 1) != 1) {
                (void) kill(command, SIGKILL);
                fail(report_fd, CORDON_LAUNCH_FAILED, errno, "monitor: handshake");
        }
        *sl = (supervisor_landlock) { .proxy_ports = { lr->lp->monitor.connect_ports[0],
                                                       lr->lp->monitor.connect_ports[1] },
                                      .writable = &lr->writable };
        supervisor_config cfg = { .listener_fd = listener, .proc_fd = g->proc_fd,
                                  .rules = &p->names, .on_report = on_report, .userdata = m,
                                  .unix_allow = g->unix_allow, .landlock = sl };
        supervisor *s = NULL;
        int r = supervisor_start(&cfg, &s);
        if (r < 0) {
                (void) kill(command, SIGKILL); /* fail closed: never unsupervised */
                fail(report_fd, CORDON_LAUNCH_FAILED, r, "cannot start the creation supervisor");
        }
        return s;
}

/* Everything the monitor takes from the host before Landlock narrows it. */
static void take_grip(const plan *p, int report_fd, grip *g) {
        *g = (grip) { .procs = CGROUP_PROCS_INIT };
        g->proc_fd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (g->proc_fd < 0)
                fail(report_fd, CORDON_LAUNCH_FAILED, errno, "monitor: open /proc");
        int r = cgroup_procs_open_self(p->cgroup, &g->procs);
        if (r < 0)
                fail(report_fd, CORDON_LAUNCH_FAILED, r, "monitor: cannot open the run's cgroup");
        if ((r = supervisor_unix_allow_new(&p->unix_sockets, &g->unix_allow)) < 0)
                fail(report_fd, CORDON_LAUNCH_FAILED, r,
                     "monitor: cannot pin the allowUnixSockets sockets");
}

/* The monitor's own confinement, in this order: no capabilities, no_new_privs, not dumpable (the
 * command cannot read its memory or fds through /proc), no core dumps, Landlock. */
static void confine_monitor(const landlock_run *lr, int report_fd) {
        int r = drop_capabilities();
        if (r < 0)
                fail(report_fd, CORDON_LAUNCH_FAILED, r, "monitor: cannot drop capabilities");
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
                fail(report_fd, CORDON_LAUNCH_FAILED, errno, "monitor: no_new_privs");
        if ((r = process_disable_core_dumps()) < 0)
                fail(report_fd, CORDON_LAUNCH_FAILED, r, "monitor: core dumps");
        cordon_error e = { 0 };
        if (landlock_layer_apply(&lr->lp->monitor, lr->abi, &e) < 0)
                fail_error(report_fd, &e);
}

static _noreturn_ void monitor_main(const plan *p, const landlock_run *lr, char *const argv[],
                                    int report_fd, pid_t guard) {
        if (die_with(guard, SIGTERM) < 0)
                _exit(125);
        (void) prctl(PR_SET_NAME, "cordon-monitor", 0, 0, 0); /* cosmetic: names it in ps */
        int sfd = signals_fd();
        if (sfd < 0)
                fail(report_fd, CORDON_LAUNCH_FAILED, sfd, "monitor: signalfd");
        grip g;
        take_grip(p, report_fd, &g);
        /* Orphans of the command's tree come here, so they can be killed when it ends. */
        if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0)
                fail(report_fd, CORDON_LAUNCH_FAILED, errno, "monitor: child subreaper");
        confine_monitor(lr, report_fd);
        int sp[2];
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
                fail(report_fd, CORDON_LAUNCH_FAILED, errno, "monitor: socketpair");
        pid_t me = getpid();
        pid_t command = fork();
        if (command < 0)
                fail(report_fd, CORDON_LAUNCH_FAILED, errno, "monitor: fork");
        if (command == 0) {
                /* First, still single-threaded cordon code: the command moves itself into its
                 * cgroup (no RCU grace period on v1, cgroup_procs_enter_self()), so all it forks
                 * is born inside. Without a PID namespace these files could move any of the
                 * user's processes: they are closed before anything else runs. Fail closed: no
                 * run without its limits. */
                int r = cgroup_procs_enter_self(&g.procs);
                cgroup_procs_close(&g.procs);
                if (r < 0)
                        fail(report_fd, CORDON_LAUNCH_FAILED, r,
                             "cannot move the command into its cgroup");
                (void) close(sp[0]);
                (void) close(sfd);
                (void) close(g.proc_fd); /* the command's tree must never hold these */
                supervisor_unix_allow_free(TAKE_PTR(g.unix_allow));
                command_main(p, lr, argv, report_fd, sp[1], me);
        }
        (void) close(sp[1]);
        cgroup_procs_close(&g.procs);
        monitor_ctx m = { .report_fd = report_fd };
        supervisor_landlock sl;
        supervisor *s = start_supervisor(p, lr, &g, report_fd, sp[0], command, &m, &sl);
        if (wait_command(sfd, command, report_fd) < 0)
                (void) kill(command, SIGKILL);
        kill_tree(g.proc_fd);
        supervisor_stop(s);
        _exit(0);
}

/* ---- the guard ------------------------------------------------------------------------------ */

_noreturn_ void landlock_sandbox_main(const plan *p, const landlock_run *lr, char *const argv[],
                                      int report_fd, pid_t launcher) {
        if (die_with(launcher, SIGKILL) < 0)
                _exit(125);
        (void) prctl(PR_SET_NAME, "cordon-guard", 0, 0, 0); /* cosmetic: names it in ps */
        /* No controlling terminal for the monitor and the supervisor: an O_CREAT open of
         * /dev/tty it performs must not reach the user's terminal. */
        if (setsid() < 0)
                fail(report_fd, CORDON_LAUNCH_FAILED, errno, "guard: setsid");
        /* The reaper's pipe stays open here and in the monitor: after kill -9 of the launcher
         * the run's directories are removed once the monitor has ended the command's tree
         * (run-dirs.h), not while it may still write in them. */
        int r = sandbox_close_fds(p, (const int[]){ report_fd, lr->reaper.fd }, 2);
        if (r < 0)
                fail(report_fd, CORDON_LAUNCH_FAILED, r, "guard: close_range");
        pid_t me = getpid();
        pid_t monitor = fork();
        if (monitor < 0)
                fail(report_fd, CORDON_LAUNCH_FAILED, errno, "guard: fork");
        if (monitor == 0)
                monitor_main(p, lr, argv, report_fd, me);
        (void) close(report_fd); /* the launcher reads until the monitor and command close theirs */
        while (waitpid(monitor, NULL, 0) < 0 && errno == EINTR)
                ;
        _exit(0);
}
