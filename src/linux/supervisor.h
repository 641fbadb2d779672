/* SPDX-License-Identifier: Apache-2.0 */
/* The creation-rule supervisor: serves seccomp user notifications for every syscall that can bring
 * a name into existence, performs the call itself on its own copy of the arguments, and hands the
 * result back (see docs/design/creation-rules.md and docs/design/creation-rules-study.md). */
#pragma once

#include "plan/name-rules.h"

typedef struct supervisor supervisor;
typedef struct supervisor_unix_allow supervisor_unix_allow; /* linux/supervisor-unix.c */
typedef struct supervisor_landlock supervisor_landlock;     /* below */

/* Called from a worker thread for each refusal. Must be thread-safe and must not block long. */
typedef void (*supervisor_violation_fn)(void *userdata, const char *syscall, const char *path,
                                        const char *rule);

/* One refusal as the supervisor observed it (valid during the call). */
typedef struct supervisor_report {
        const char *action;  /* "file-create-name", "syscall" (a refusal of the seccomp table or
                              * of another ABI), "network-outbound" (a refused connect()),
                              * "file-metadata" (a refused chmod/chown/utimes/xattr change,
                              * landlock backend) */
        const char *syscall; /* the refused call: "openat", "keyctl", "ia32:open", "connect" */
        const char *target;  /* the resolved path; for "syscall" the call's name */
        const char *rule;    /* what refused it: a name rule, or the table's rule and reason */
        uint64_t repeats;    /* 0: one refusal. N > 0: an aggregate of N further refusals of the
                              * same kind that the rate limit kept from being reported one by
                              * one (sent once, when the supervisor stops) */
        pid_t sid;           /* the caller's session id in the sandbox's PID namespace, when
                              * supervisor_config.attribute (0: unknown, and in aggregates) */
} supervisor_report;

/* Called like supervisor_violation_fn, for every report (rate-limited: supervisor-report.c). */
typedef void (*supervisor_report_fn)(void *userdata, const supervisor_report *report);
/* A connect() to one of supervisor_config.record_ports succeeded (or is in progress): the
 * caller's session id and the connection's key (report_conn_key(): the socket's local address
 * and the port it went to), called before the call returns to the caller, so before it can
 * send a byte on the connection. */
typedef void (*supervisor_connection_fn)(void *userdata, pid_t sid, const char *client);

typedef struct supervisor_config {
        int listener_fd;   /* seccomp listener; taken (closed by supervisor_stop) */
        int proc_fd;       /* O_PATH|O_DIRECTORY fd of a procfs in which notification pids are
                            * valid (the supervisor's own PID namespace); borrowed */
        const name_rules *rules; /* borrowed; must outlive the supervisor */
        supervisor_violation_fn on_violation; /* may be NULL; file-create-name reports only, and only
                                               * when on_report is NULL */
        supervisor_report_fn on_report;       /* may be NULL; every report */
        void *userdata;
        unsigned workers;  /* 0 = default */
        /* allowUnixSockets (NULL: none, and the filter does not notify connect). Borrowed. */
        const supervisor_unix_allow *unix_allow;
        /* The landlock backend (docs/design/landlock-backend.md), NULL for the native one. The
         * command runs the landlock program (seccomp_options.landlock_backend). Borrowed. */
        const supervisor_landlock *landlock;
        /* Reports carry the caller's session id as the PID namespace one level below the
         * supervisor's numbers it (a warm session's: its init starts every exec as a session
         * leader, so the id names the exec; docs/design/daemon.md). Costs one read of
         * /proc/<tid>/status per refusal the seccomp table answers. */
        bool attribute;
        /* With `attribute`: the TCP ports on 127.0.0.1 and ::1 (the sandbox's own loopback: the
         * session's egress proxy) whose connects are told to on_connection, so the proxy's
         * refusals can be attributed too (docs/design/daemon.md). 0: unused. */
        uint16_t record_ports[2];
        /* With `attribute`: the port a TCP connect to any address outside the loopback ends up
         * on (the interception's redirect, linux/intercept.h), recorded the same way: the proxy
         * sees the caller's own endpoint on that port. 0: none. */
        uint16_t record_redirect_port;
        /* With `attribute`: the port every DNS query ends up on (the sandbox's resolver; the
         * interception redirects UDP to port 53 of any address there). A UDP connect() to port
         * 53 is recorded with it, so the resolver's refusals reach the exec that asked. 0: none. */
        uint16_t record_dns_port;
        supervisor_connection_fn on_connection;
} supervisor_config;

/* What the supervisor enforces in the landlock backend, where no namespace and no read-only
 * mount stands behind it (supervisor-landlock.c):
 *   - connect() of a socket of another family than AF_UNIX reaches only 127.0.0.1 (or
 *     ::ffff:127.0.0.1) on `proxy_ports`: Landlock's TCP rule names a port, not an address, and
 *     the same port on a host the command controls would be a way out;
 *   - an existing protected file is never opened for writing or truncated, and is never
 *     unlinked (the supervisor holds every write right beneath the writable roots, since it
 *     creates files there for the command);
 *   - metadata changes happen beneath `writable` only, never on protected paths or secrets. */
struct supervisor_landlock {
        uint16_t proxy_ports[2]; /* 0: unused */
        /* The writable roots and the run's TMPDIR (resolved; borrowed): chmod, chown, utimes and
         * xattr changes are performed beneath them only, and never on a protected path or secret
         * (supervisor-meta.c; Landlock has no right for metadata). */
        const strv *writable;
};

/* allowUnixSockets (supervisor-unix.c). Made by the embedder while it still sees the host's file
 * system, before it builds the sandbox's root: each listed path is pinned then (O_PATH; the final
 * component is not followed and must be a socket, else connects to it are refused). Returns 0 or
 * -errno (-EINVAL: a relative path). */
int supervisor_unix_allow_new(const strv *paths, supervisor_unix_allow **ret);
/* After the root is built: sockets on the file system mounted at `dir` (the sandbox's private
 * tmpfs: /tmp, /dev/shm, where nothing outside can bind) may be connected to as well. */
int supervisor_unix_allow_add_private(supervisor_unix_allow *a, const char *dir);
/* How many listed sockets were pinned (for tests and messages). */
size_t supervisor_unix_allow_pinned(const supervisor_unix_allow *a);
/* Closes the pins and frees. A child that must not hold them (init) calls it too. NULL ok. */
void supervisor_unix_allow_free(supervisor_unix_allow *a);

/* Starts the worker threads and returns; notifications are served until supervisor_stop().
 *
 * What the embedding process (the launcher's monitor) must arrange, since the supervisor performs
 * creations with its own identity:
 *   - the same mount namespace and root as the command (absolute paths and symlinks are resolved
 *     here; the filter denies chroot/pivot_root/mount/setns/unshare so the command cannot move);
 *   - the same fsuid/fsgid/groups (otherwise every creation fails closed with EPERM) and no
 *     capability the command lacks in the same user namespace (each worker lowers its effective
 *     set per request; in another user namespace it drops all);
 *   - PR_SET_DUMPABLE 0 and no controlling terminal (setsid): an O_CREAT open of /dev/tty is
 *     performed here and would reach the supervisor's terminal;
 *   - ideally the command's Landlock domain or an ancestor of it: creations performed here are
 *     otherwise checked only by the mount view and the name rules, not by Landlock;
 *   - the ability to create threads: after unshare(CLONE_NEWPID) the kernel refuses
 *     clone(CLONE_THREAD) with EINVAL, so create the PID namespace with clone(CLONE_NEWPID) for
 *     the child instead.
 * A command that makes itself non-dumpable cannot be read by an unprivileged supervisor: its
 * creations fail closed with EPERM (and are reported).
 *
 * The supervisor installs a no-op SIGUSR2 handler (no SA_RESTART) in the embedding process, with
 * which supervisor_stop() interrupts its workers' SECCOMP_IOCTL_NOTIF_RECV and (with
 * cfg->unix_allow, when the supervisor performs every connect()) a connect still waiting on a
 * pool thread; SIGUSR2 must not be blocked in the thread that calls supervisor_start().
 *
 * Violations are reported as (syscall name, absolute path as resolved here, or "" when the caller
 * could not be inspected, rule): the rule is a string of cfg->rules, or a fixed explanation such
 * as "procfs outside the caller's own /proc/<pid>". Refusals of the seccomp table itself (the
 * filter notifies them when a listener exists, see docs/design/seccomp.md) are answered with the
 * table's errno and reported with action "syscall". The listener is taken, also on failure.
 * Returns 0 or -errno (-EINVAL: bad config, proc_fd not a procfs, or threads impossible). */
int supervisor_start(const supervisor_config *cfg, supervisor **ret);
/* Stops the workers, releases opens still waiting on a FIFO, joins every thread, sends the rate
 * limit's aggregate reports, closes the listener (pending and later notified calls then fail with
 * ENOSYS in the command) and frees. NULL ok. */
void supervisor_stop(supervisor *s);
