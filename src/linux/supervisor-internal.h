/* SPDX-License-Identifier: Apache-2.0 */
/* Shared between the files of the creation-rule supervisor:
 *   supervisor.c          lifecycle, worker pool, receiving and answering notifications
 *   supervisor-target.c   the calling task: /proc/<tid>, argument copies, identity, ID_VALID
 *   supervisor-resolve.c  path resolution on the caller's behalf (the confused-deputy defences)
 *   supervisor-ops.c      the emulated syscalls
 *   supervisor-deny.c     refusals of the seccomp table and of other ABIs: answered, reported
 *   supervisor-report.c   every report, through a rate limit (a refusal storm stays bounded)
 *   supervisor-unix.c     connect() under allowUnixSockets
 *   supervisor-landlock.c the landlock backend: connect() only to the run's proxy
 * Design and the attack each step stops: docs/design/creation-rules.md. */
#pragma once

#include <limits.h>
#include <linux/capability.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "linux/seccomp.h"
#include "linux/supervisor.h"
#include "util/uapi.h"
#include "util/util.h"

#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64) /* 6.6 */
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif
#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL /* 6.9 */
#endif
#ifndef PROC_SUPER_MAGIC
#define PROC_SUPER_MAGIC 0x9fa0
#endif

static inline bool streq(const char *a, const char *b) {
        return strcmp(a, b) == 0;
}

/* Most emulated opens of FIFOs that may wait for a peer at once; more get EAGAIN. */
#define SUPERVISOR_MAX_BLOCKED 128
/* Symlinks the supervisor expands itself in one request, as the kernel's MAXSYMLINKS. */
#define SUPERVISOR_MAX_LINKS 40

typedef struct blocked_open blocked_open;
typedef struct pool_thread pool_thread;
typedef struct worker worker;

/* The rate limit on reports (supervisor-report.c). A refusal storm (a command calling a refused
 * syscall in a loop) would otherwise flood the report channel and whoever reads the events: each
 * kind of refusal is reported one by one SUPERVISOR_REPORT_BURST times, all kinds together at
 * most SUPERVISOR_REPORT_MAX times; the rest is counted and reported as one aggregate per kind
 * when the supervisor stops. Memory is fixed: SUPERVISOR_REPORT_KINDS slots. */
#define SUPERVISOR_REPORT_BURST 8
#define SUPERVISOR_REPORT_MAX 256
/* An attributing supervisor (a warm session) budgets each session id SUPERVISOR_REPORT_MAX and
 * all of them together this many, for the session's whole life. */
#define SUPERVISOR_REPORT_MAX_SHARED 1024
#define SUPERVISOR_REPORT_KINDS 256

typedef struct report_kind {
        const void *key[3];  /* identity: static or supervisor-lifetime pointers; key[0] NULL = free */
        pid_t sid;           /* ... and the callers' session id: an exec's storm of refusals never
                              * uses up another exec's burst (attributed supervisors) */
        unsigned reported;   /* reported one by one */
        uint64_t suppressed; /* counted only */
        char *action, *syscall, *target, *rule; /* copies for the aggregate (first suppression) */
} report_kind;

typedef struct report_limit {
        pthread_mutex_t lock;
        unsigned reported;           /* one by one, all kinds */
        report_kind kinds[SUPERVISOR_REPORT_KINDS];
        uint64_t overflow[4];        /* no free slot: counted per action */
} report_limit;

struct supervisor {
        int listener;
        int proc_fd;
        const name_rules *rules;
        supervisor_violation_fn on_violation;
        supervisor_report_fn on_report;
        void *userdata;
        seccomp_options filter;    /* the program the caller runs under (which calls are notified) */
        const supervisor_unix_allow *unix_allow;
        const supervisor_landlock *landlock; /* the landlock backend, or NULL */
        bool attribute;            /* reports name the caller's session id (supervisor_config) */
        uint16_t record_ports[2];  /* connects told to on_connection (supervisor_config) */
        uint16_t record_redirect_port; /* ... and redirected ones, with this port */
        uint16_t record_dns_port;  /* ... and UDP ones to port 53, with this port */
        supervisor_connection_fn on_connection;
        unsigned sid_index;        /* ... the NSsid field to read (supervisor_sid_index), 0: none */
        report_limit *limit;
        size_t notif_size, resp_size; /* SECCOMP_GET_NOTIF_SIZES, at least our struct sizes */

        pthread_mutex_t git_lock;  /* orders the git checks with the operations (supervisor-git.c) */
        strv repos;                /* directories that became git-shaped (under git_lock) */
        uint64_t repos_dropped;    /* ... beyond SUPERVISOR_MAX_REPOS */
        atomic_bool stopping;
        atomic_bool targets_gone;  /* RECV found no task using the filter any more (POLLHUP) */

        unsigned n_workers;
        worker *workers;
        pthread_mutex_t start_lock; /* n_started, start_error and each worker's `exited` */
        pthread_cond_t start_cond;  /* a worker started or exited */
        unsigned n_started;
        int start_error;

        /* Requests that may block (FIFO opens, blocking connects) run on a thread of the pool
         * (supervisor-blocked.c) so they cannot stall creations. */
        pthread_mutex_t blocked_lock;
        pthread_cond_t blocked_cond; /* a request queued for an idle thread, or pool_stop */
        blocked_open *blocked;  /* queued or running */
        blocked_open *queue;    /* handed to an idle thread, not yet taken */
        unsigned n_blocked;
        pool_thread *threads;   /* every pool thread not yet joined */
        unsigned n_threads, n_idle;
        bool pool_stop;         /* idle threads end */
};

/* The supervisor's own identity, per worker thread (credentials are per thread in Linux). */
typedef struct worker_creds {
        uid_t fsuid;
        gid_t fsgid;
        gid_t *groups;
        int n_groups;
        struct __user_cap_data_struct caps[2]; /* as started: effective, permitted, inheritable */
        uint64_t eff_now;                      /* the effective set currently in force */
        int umask_now; /* this worker's umask (its fs_struct is its own), -1 until first set */
        dev_t userns_dev;
        ino_t userns_ino;
} worker_creds;

/* The callers' /proc/<tid> and /proc/<tid>/status, kept open per worker across notifications
 * (supervisor-target.c): each pair is bound to one task, and its status is read afresh, through
 * the same fd, at every request. Only the opens are saved, never a value. */
#define CALLER_HANDLES 8
typedef struct caller_handle {
        pid_t tid;     /* 0: free slot */
        int tid_fd;    /* O_PATH|O_DIRECTORY of /proc/<tid> in cfg->proc_fd */
        int status_fd; /* its status, read with pread() from offset 0 */
} caller_handle;

typedef struct caller_handles {
        caller_handle h[CALLER_HANDLES];
        unsigned next; /* the slot reused when all are taken (round robin) */
} caller_handles;

typedef struct request {
        supervisor *s;
        worker_creds *creds;
        caller_handles *handles;
        struct seccomp_notif *n;
        const char *syscall_name;

        /* The caller. Opened before NOTIF_ID_VALID, so ID_VALID proves they name the right task
         * (a pid cannot be reused while its task is blocked in the notified syscall). */
        int tid_fd;     /* O_PATH of /proc/<tid> in cfg->proc_fd: bound to the task (borrowed
                         * from r->handles, not closed with the request) */
        pid_t tgid;
        pid_t sid;      /* its session id in the sandbox's PID namespace (0: unknown) */
        mode_t umask;
        bool validated; /* ID_VALID passed: act only after this */
        const char *refusal; /* why the caller could not be served as itself (reported once) */

        /* Argument copies (process_vm_readv, once). */
        char path[2][PATH_MAX];
        unsigned char addr[sizeof(struct sockaddr_storage)];
        int sock_fd;    /* bind: the caller's socket, via pidfd_getfd before ID_VALID */
        uint16_t record_port; /* connect: the proxy port it goes to, told to on_connection once
                               * connected (supervisor_connection_fn); 0: not recorded */

        /* Outcome. */
        bool returns_fd;    /* the op's result is an fd to install in the caller */
        bool cloexec;       /* ... with O_CLOEXEC */
        bool handed_off;    /* a blocked-open thread answers this request */
} request;

/* ---- supervisor-target.c ---------------------------------------------------------------------- */
int worker_creds_init(worker_creds *c, int proc_fd);
void worker_creds_done(worker_creds *c);
void caller_handles_init(caller_handles *hs);
void caller_handles_done(caller_handles *hs);
/* Opens /proc/<tid>, reads umask, tgid and credentials. Refuses (-EPERM) a caller whose file
 * system identity differs from the supervisor's, and lowers this thread's effective
 * capabilities to what the caller has: the supervisor must never be a stronger opener. */
int target_open(request *r);
/* Copies a NUL-terminated string (at most PATH_MAX bytes with the NUL) from the caller. */
int target_copy_string(request *r, uint64_t addr, char *buf, size_t size);
int target_copy_mem(request *r, uint64_t addr, void *buf, size_t len);
/* Takes a copy of the caller's descriptor `fd` (pidfd_getfd). Call before target_validate(). */
int target_dup_fd(request *r, int fd);
/* NOTIF_ID_VALID, then applies the caller's umask to this worker. */
int target_validate(request *r);
void target_close(request *r);

/* The session id of the caller of `n` in the sandbox's PID namespace, for a report (0 when the
 * supervisor does not attribute, or cannot tell). Read before the notification is answered,
 * then NOTIF_ID_VALID: while it is unanswered the task cannot leave the syscall, so a valid id
 * proves the status read was the caller's and not a later holder of its tid. */
pid_t supervisor_caller_sid(const supervisor *s, const struct seccomp_notif *n);
/* Which field of a task's NSsid line (0-based) is the namespace one level below ours. */
int supervisor_sid_index(int proc_fd, unsigned *ret);
/* The same for a request: what target_open() read through the task's own /proc directory, else
 * a fresh read. */
static inline pid_t request_sid(const request *r) {
        if (!r->s->sid_index)
                return 0;
        return r->sid ? r->sid : supervisor_caller_sid(r->s, r->n);
}

/* Reports a file-create-name refusal to the embedder and returns -EACCES. */
int request_refuse(request *r, const char *path, const char *rule);
/* The same with another action ("file-metadata"). */
int request_refuse_as(request *r, const char *action, const char *path, const char *rule);

/* ---- supervisor-report.c ---------------------------------------------------------------------- */
/* `key` identifies the kind of refusal for the rate limit: three pointers that stay valid for the
 * supervisor's life (static strings, rule strings, table entries). */
int report_limit_new(report_limit **ret);
void supervisor_report_refusal(supervisor *s, const supervisor_report *rep, const void *key1,
                               const void *key2);
/* Sends one aggregate per kind that was counted but not reported; then frees the limit. */
void report_limit_flush_free(supervisor *s);

/* ---- supervisor-deny.c ------------------------------------------------------------------------ */
/* Reports a notified call the seccomp table refuses (or a call of another ABI), then answers it
 * with its errno. Returns false when `n` is no such call. */
bool supervisor_answer_refusal(supervisor *s, const struct seccomp_notif *n);
/* SECCOMP_IOCTL_NOTIF_SEND: 0, or -errno (-ENOENT: the caller is gone, its call never ended). */
int supervisor_send_resp(const supervisor *s, uint64_t id, int64_t val, int error);

/* ---- supervisor-resolve.c --------------------------------------------------------------------- */
typedef struct resolved {
        int dir_fd;             /* O_PATH|O_DIRECTORY of the parent */
        char name[NAME_MAX + 1];
        bool trailing_slash;    /* the path ended in '/' */
        bool in_target_proc;    /* the parent lies in the caller's own /proc/<pid> */
        char path[PATH_MAX];    /* absolute path of dir_fd + "/" + name; set by resolved_path() */
} resolved;

#define RESOLVED_INIT { .dir_fd = -1 }

/* Resolves everything but the final component of `path` (relative to the caller's `dirfd` or
 * cwd) as the caller would. Never follows magic links except those of the caller's own
 * /proc/<pid>, never lands in another procfs directory. */
int resolve_parent(request *r, int dirfd, const char *path, resolved *ret);
/* As above, but starting from an fd the supervisor holds (a previous parent, for a relative
 * symlink text). */
int resolve_parent_at(request *r, int startfd, const char *path, resolved *ret);
void resolved_done(resolved *res);
/* Fills res->path with the absolute path of the parent (d_path) plus the name. */
int resolved_path(request *r, resolved *res);
/* True for "." and "..": no call can create those, the kernel fails every creation on them. */
bool resolved_is_dot(const resolved *res);
/* name plus a trailing '/' when the path had one, for passing to the *at() call. */
const char *resolved_name_arg(const resolved *res, char buf[static NAME_MAX + 2]);
/* NAME_CHECK_EXACT_BYTES when the parent provably does not fold case, else 0. */
unsigned resolved_check_flags(const resolved *res);

/* ---- supervisor-ops.c ------------------------------------------------------------------------- */
typedef int (*supervisor_op_fn)(request *r);
/* The handler for a syscall number, or NULL. */
supervisor_op_fn supervisor_op_lookup(int nr, const char **ret_name);
/* A dispatch table row, and the search both tables (supervisor-ops.c, supervisor-meta.c) use. */
typedef struct supervisor_op_entry {
        long nr;
        const char *name;
        supervisor_op_fn fn;
} supervisor_op_entry;
supervisor_op_fn supervisor_op_find(const supervisor_op_entry *t, size_t n, int nr,
                                    const char **ret_name);

/* ---- supervisor-meta.c -------------------------------------------------------------------------- */
/* The landlock backend's chmod, chown, utimes and xattr calls, or NULL. */
supervisor_op_fn supervisor_meta_op_lookup(int nr, const char **ret_name);
/* ---- supervisor-git.c ------------------------------------------------------------------------- */
/* What a final component may be to git (several at once when the directory may fold case). */
#define GIT_NAME_MARKER    (1U << 0) /* HEAD, objects, refs, commondir: the directory is git-shaped */
#define GIT_NAME_CONFIG    (1U << 1) /* config, config.worktree */
#define GIT_NAME_HOOKS_DIR (1U << 2) /* hooks */
#define GIT_NAME_HOOK      (1U << 3) /* a hook's name, in a directory named hooks */
#define GIT_NAME_TMP       (1U << 4) /* the supervisor's own vetting file */
unsigned git_classify(const resolved *res);

/* Holds s->git_lock from the check to the end of the operation it allows. */
typedef struct git_guard {
        supervisor *s; /* set while the lock is held */
} git_guard;
void git_guard_release(git_guard *g);
/* At most this many repositories are remembered for the end-of-run report. */
#define SUPERVISOR_MAX_REPOS 256
/* Reports (action "repository") every directory that became git-shaped during the run and
 * still is; then forgets them. Called once, when the supervisor stops. */
void git_report_repositories(supervisor *s);

/* A new name by a direct route (open of a new file, mkdir, mknod, symlink, link): 0 to go on
 * (perform the call, then git_guard_release), or -errno after reporting a refusal. A marker name
 * first vets the directory's configs and hooks (docs/design/git-repos.md). res->path is set. */
int git_check_create(request *r, resolved *res, bool is_mkdir, git_guard *g);
/* An existing file opened for writing: refused for a git-shaped directory's config or hook. */
int git_check_write(request *r, resolved *res);
/* The source of link(): a repository config may not get a second name. */
int git_check_link_source(request *r, resolved *src);
/* rename(): a config renamed into a git-shaped directory is vetted and copied into place by this
 * call (*ret_done set); otherwise as git_check_create for the target. */
int git_check_rename(request *r, resolved *from, resolved *to, unsigned flags, git_guard *g,
                     bool *ret_done);

/* ---- supervisor-unix.c -------------------------------------------------------------------------- */
int op_connect(request *r);

/* ---- supervisor.c ------------------------------------------------------------------------------ */
/* A thread with the supervisor's stack size. */
int supervisor_spawn_thread(pthread_t *t, void *(*fn)(void *), void *arg);
/* NOTIF_ADDFD with ADDFD_FLAG_SEND: installs `fd` in the caller and completes its call. */
void supervisor_send_fd(const supervisor *s, uint64_t id, int fd, bool cloexec);
/* Reopens an O_PATH fd with real open flags through /proc/self/fd (our own procfs). */
int supervisor_reopen(const supervisor *s, int pin, int flags);

/* ---- supervisor-blocked.c ---------------------------------------------------------------------- */
/* Runs the open of an existing FIFO (pinned as O_PATH `pin`, taken) on a pool thread, which
 * answers the notification. */
int supervisor_hand_off_open(request *r, int pin, int flags);
/* connect(r->sock_fd, addr) for the caller: here when the socket does not block, else on a pool
 * thread that answers the notification (a connect can wait for a full backlog as long as the
 * peer likes; supervisor_stop() interrupts it with SIGUSR2). `via_proc`: `addr` is a path
 * relative to our procfs ("self/fd/N"). `own_pin` (taken, may be -1) stays open until the
 * connect is done. Returns the result, or 0 with r->handed_off set. */
int supervisor_connect(request *r, const struct sockaddr *addr, socklen_t len, bool via_proc,
                       int own_pin);
/* Tells on_connection that `sock` (connected or in progress, to loopback `port`) belongs to
 * session `sid`. */
void supervisor_record_connection(const supervisor *s, int sock, uint16_t port, pid_t sid);
/* Releases the requests still running on pool threads, then joins every pool thread. After the
 * workers are joined. */
void supervisor_stop_blocked(supervisor *s);

/* ---- supervisor-landlock.c ---------------------------------------------------------------------- */
/* The landlock backend: 0 when `addr` (len bytes, copied from the caller) may be connected to by
 * a socket of another family than AF_UNIX, else -EACCES after reporting a network-outbound
 * refusal. Always 0 without s->landlock. */
int supervisor_landlock_check_connect(request *r, const struct sockaddr *addr, socklen_t len);
