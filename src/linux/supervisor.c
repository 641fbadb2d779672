/* SPDX-License-Identifier: Apache-2.0 */
/* The creation-rule supervisor: a pool of worker threads serving seccomp user notifications.
 *
 * Every worker sleeps in SECCOMP_IOCTL_NOTIF_RECV itself, serves what it received and goes back
 * into the ioctl: no poll() before it and no lock handed from worker to worker, so a creation
 * costs one wake-up of the supervisor, which SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP lets the kernel
 * switch to on the caller's CPU. supervisor_stop() wakes a worker out of the ioctl with SIGUSR2
 * (a handler that does nothing, installed without SA_RESTART: the ioctl fails with EINTR), and
 * a RECV that finds no task using the filter any more fails with ENOENT, when the listener
 * reports POLLHUP. Each worker unshares CLONE_FS so it can take the caller's umask (and, for
 * bind, cwd) privately, and adjusts its own capabilities per request (credentials are per
 * thread). */
#include "linux/supervisor-internal.h"

#include <fcntl.h>
#include <linux/audit.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <time.h>

#if !defined(__x86_64__) && !defined(__aarch64__)
#error "the supervisor knows the syscall ABI of x86_64 and aarch64 only"
#endif

#define DEFAULT_WORKERS 2
#define MAX_WORKERS 64
#define THREAD_STACK (512 * 1024)
#define RESP_MAX 256

struct worker {
        supervisor *s;
        pthread_t thread;
        worker_creds creds;
        caller_handles handles;
        struct seccomp_notif *notif;
        request *req;
        bool exited; /* under s->start_lock */
};

/* ---- Answering ------------------------------------------------------------------------------- */

int supervisor_send_resp(const supervisor *s, uint64_t id, int64_t val, int error) {
        /* Sized by SECCOMP_GET_NOTIF_SIZES: a newer kernel may read a longer struct. */
        union {
                struct seccomp_notif_resp resp;
                unsigned char raw[RESP_MAX];
        } u = { 0 };
        u.resp = (struct seccomp_notif_resp) { .id = id, .val = val, .error = error, .flags = 0 };
        /* ENOENT: the caller died or was interrupted by a fatal signal; nothing to answer. */
        return ioctl(s->listener, SECCOMP_IOCTL_NOTIF_SEND, &u) < 0 ? -errno : 0;
}

static void send_resp(const supervisor *s, uint64_t id, int64_t val, int error) {
        (void) supervisor_send_resp(s, id, val, error); /* a vanished caller needs no answer */
}

/* Installs `fd` in the caller and completes its syscall atomically (ADDFD_FLAG_SEND): the kernel
 * picks the lowest free number and enforces the caller's RLIMIT_NOFILE. */
void supervisor_send_fd(const supervisor *s, uint64_t id, int fd, bool cloexec) {
        struct seccomp_notif_addfd a = { .id = id,
                                         .flags = SECCOMP_ADDFD_FLAG_SEND,
                                         .srcfd = (uint32_t) fd,
                                         .newfd = 0,
                                         .newfd_flags = cloexec ? O_CLOEXEC : 0 };
        if (ioctl(s->listener, SECCOMP_IOCTL_NOTIF_ADDFD, &a) < 0 && errno != ENOENT)
                send_resp(s, id, 0, -errno); /* e.g. EMFILE */
}

static void answer(const supervisor *s, const request *r, int result) {
        if (result < 0)
                send_resp(s, r->n->id, 0, result);
        else if (r->returns_fd) {
                supervisor_send_fd(s, r->n->id, result, r->cloexec);
                (void) close(result);
        } else
                send_resp(s, r->n->id, result, 0);
}

int supervisor_reopen(const supervisor *s, int pin, int flags) {
        char path[32];
        (void) snprintf(path, sizeof(path), "self/fd/%d", pin);
        /* Our own /proc/self/fd/N magic link: the pinned inode, reopened with real access. */
        int fd = openat(s->proc_fd, path, flags & ~O_NOFOLLOW);
        return fd < 0 ? -errno : fd;
}

int supervisor_spawn_thread(pthread_t *t, void *(*fn)(void *), void *arg) {
        pthread_attr_t attr;
        int e = pthread_attr_init(&attr);
        if (e != 0)
                return -e;
        e = pthread_attr_setstacksize(&attr, THREAD_STACK);
        if (e == 0)
                e = pthread_create(t, &attr, fn, arg);
        (void) pthread_attr_destroy(&attr);
        return -e;
}

/* ---- Serving one notification ------------------------------------------------------------------ */

static void handle(worker *w) {
        supervisor *s = w->s;
        request *r = w->req;
        /* The argument buffers are not cleared: every op writes before it reads. */
        r->s = s;
        r->creds = &w->creds;
        r->handles = &w->handles;
        r->n = w->notif;
        r->syscall_name = "?";
        r->tid_fd = r->sock_fd = -1;
        r->sid = 0;
        r->validated = r->returns_fd = r->cloexec = r->handed_off = false;
        r->record_port = 0;
        r->refusal = NULL;

        supervisor_op_fn fn = NULL;
        if (!seccomp_is_foreign(&r->n->data))
                fn = supervisor_op_lookup(r->n->data.nr, &r->syscall_name);
        /* Not emulated: a refusal of the table or of another ABI, answered without looking at
         * the caller at all (no /proc, no memory), so a refusal storm costs one round trip. */
        if (!fn && supervisor_answer_refusal(s, r->n))
                return;
        int result = fn ? target_open(r) : -ENOSYS;
        if (result == 0)
                result = fn(r);
        if (result == -EPERM && r->refusal)
                /* Fail closed, but say why: the events show it rather than a bare EPERM. */
                supervisor_report_refusal(s, &(supervisor_report) { .action = "file-create-name",
                                                                    .syscall = r->syscall_name,
                                                                    .target = "",
                                                                    .rule = r->refusal,
                                                                    .sid = request_sid(r) },
                                          r->syscall_name, r->refusal);
        /* ESRCH: the caller vanished (the answer is then dropped by the kernel) or could not be
         * seen from our procfs: never leave it waiting, fail closed. */
        if (result == -ESRCH)
                result = -EPERM;
        if (!r->handed_off)
                answer(s, r, result);
        target_close(r);
}

/* No task uses the filter any more (all of them exited): the listener reports POLLHUP. */
static bool targets_gone(const supervisor *s) {
        struct pollfd p = { .fd = s->listener, .events = POLLIN };
        return poll(&p, 1, 0) > 0 && !(p.revents & POLLIN) &&
               (p.revents & (POLLHUP | POLLERR | POLLNVAL));
}

/* Returns 1 with a notification in w->notif, 0 to retry, -1 to stop. */
static int receive(worker *w) {
        supervisor *s = w->s;
        if (atomic_load(&s->stopping) || atomic_load(&s->targets_gone))
                return -1;
        memset(w->notif, 0, s->notif_size); /* the kernel insists on a zeroed buffer */
        if (ioctl(s->listener, SECCOMP_IOCTL_NOTIF_RECV, w->notif) == 0)
                return 1;
        if (errno == EINTR)
                return 0; /* supervisor_stop()'s SIGUSR2 (the flag is checked above) */
        if (errno != ENOENT)
                return -1;
        /* ENOENT: another worker took the notification, its caller was killed meanwhile, or no
         * task uses the filter any more (then RECV would fail at once forever). */
        if (targets_gone(s)) {
                atomic_store(&s->targets_gone, true);
                return -1;
        }
        return 0;
}

static void serve(worker *w) {
        for (;;) {
                int got = receive(w);
                if (got < 0)
                        return;
                if (got > 0)
                        handle(w);
        }
}

static void report_started(supervisor *s, int error) {
        pthread_mutex_lock(&s->start_lock);
        s->n_started++;
        if (error < 0 && s->start_error == 0)
                s->start_error = error;
        pthread_cond_broadcast(&s->start_cond);
        pthread_mutex_unlock(&s->start_lock);
}

static void *worker_main(void *arg) {
        worker *w = arg;
        sigset_t usr2;
        sigemptyset(&usr2);
        sigaddset(&usr2, SIGUSR2);
        /* A private fs_struct: umask() and fchdir() affect this worker only. SIGUSR2 must reach
         * it, or supervisor_stop() could not end its RECV. */
        caller_handles_init(&w->handles);
        int e = unshare(CLONE_FS) < 0 ? -errno : -pthread_sigmask(SIG_UNBLOCK, &usr2, NULL);
        if (e == 0)
                e = worker_creds_init(&w->creds, w->s->proc_fd);
        report_started(w->s, e);
        if (e == 0)
                serve(w);
        worker_creds_done(&w->creds);
        caller_handles_done(&w->handles);
        pthread_mutex_lock(&w->s->start_lock);
        w->exited = true;
        pthread_cond_broadcast(&w->s->start_cond);
        pthread_mutex_unlock(&w->s->start_lock);
        return NULL;
}

/* ---- Lifecycle ------------------------------------------------------------------------------------ */

static int notif_sizes(supervisor *s) {
        struct seccomp_notif_sizes sz = { 0 };
        if (syscall(__NR_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sz) < 0)
                return -errno;
        s->notif_size = sz.seccomp_notif > sizeof(struct seccomp_notif) ? sz.seccomp_notif
                                                                          : sizeof(struct seccomp_notif);
        if (sz.seccomp_notif_resp > RESP_MAX)
                return -EOVERFLOW;
        return 0;
}

static void free_workers(supervisor *s, worker *ws) {
        for (unsigned i = 0; ws && i < s->n_workers; i++) {
                free(ws[i].notif);
                free(ws[i].req);
        }
        free(ws);
}

static int start_workers(supervisor *s, worker *ws, unsigned *ret_started) {
        unsigned started = 0;
        int e = 0;
        for (; started < s->n_workers; started++) {
                ws[started] = (worker) { .s = s };
                ws[started].notif = calloc(1, s->notif_size);
                ws[started].req = calloc(1, sizeof(request));
                if (!ws[started].notif || !ws[started].req) {
                        e = -ENOMEM;
                        break;
                }
                e = supervisor_spawn_thread(&ws[started].thread, worker_main, &ws[started]);
                if (e < 0)
                        break;
        }
        *ret_started = started;
        pthread_mutex_lock(&s->start_lock);
        while (s->n_started < started)
                pthread_cond_wait(&s->start_cond, &s->start_lock);
        if (e == 0)
                e = s->start_error;
        pthread_mutex_unlock(&s->start_lock);
        return e;
}

/* Every worker sleeps in RECV: each is interrupted with SIGUSR2 until it has seen `stopping`.
 * Repeated, because a signal that arrives after a worker checked the flag but before it entered
 * the ioctl is taken by the handler and interrupts nothing; the next one does. */
static void join_workers(supervisor *s, worker *ws, unsigned n) {
        atomic_store(&s->stopping, true);
        pthread_mutex_lock(&s->start_lock);
        for (;;) {
                bool running = false;
                for (unsigned i = 0; i < n; i++)
                        if (!ws[i].exited) {
                                running = true;
                                (void) pthread_kill(ws[i].thread, SIGUSR2);
                        }
                if (!running)
                        break;
                struct timespec t;
                (void) clock_gettime(CLOCK_REALTIME, &t); /* the condition's clock */
                t.tv_nsec += 1000 * 1000;
                if (t.tv_nsec >= 1000 * 1000 * 1000) {
                        t.tv_sec++;
                        t.tv_nsec -= 1000 * 1000 * 1000;
                }
                (void) pthread_cond_timedwait(&s->start_cond, &s->start_lock, &t);
        }
        pthread_mutex_unlock(&s->start_lock);
        for (unsigned i = 0; i < n; i++)
                (void) pthread_join(ws[i].thread, NULL);
}

static int check_config(const supervisor_config *cfg) {
        struct statfs sf;
        if (cfg->listener_fd < 0 || cfg->proc_fd < 0 || !cfg->rules)
                return -EINVAL;
        /* proc_fd is trusted to be a procfs: /proc/<tid> and self/fd reopening go through it. */
        if (fstatfs(cfg->proc_fd, &sf) < 0)
                return -errno;
        return sf.f_type == PROC_SUPER_MAGIC ? 0 : -EINVAL;
}

static supervisor *supervisor_new(const supervisor_config *cfg) {
        supervisor *s = calloc(1, sizeof(*s));
        if (!s)
                return NULL;
        *s = (supervisor) { .listener = cfg->listener_fd, .proc_fd = cfg->proc_fd,
                            .rules = cfg->rules, .on_violation = cfg->on_violation,
                            .on_report = cfg->on_report, .userdata = cfg->userdata,
                            .filter = { .notify_creates = true,
                                        .unix_connect = cfg->unix_allow != NULL,
                                        .landlock_backend = cfg->landlock != NULL },
                            .unix_allow = cfg->unix_allow, .landlock = cfg->landlock,
                            .attribute = cfg->attribute,
                            .record_ports = { cfg->record_ports[0], cfg->record_ports[1] },
                            .record_redirect_port = cfg->record_redirect_port,
                            .record_dns_port = cfg->record_dns_port,
                            .on_connection = cfg->attribute ? cfg->on_connection : NULL };
        s->n_workers = cfg->workers == 0 ? DEFAULT_WORKERS
                       : cfg->workers > MAX_WORKERS ? MAX_WORKERS : cfg->workers;
        pthread_mutex_init(&s->git_lock, NULL);
        pthread_mutex_init(&s->start_lock, NULL);
        pthread_cond_init(&s->start_cond, NULL);
        pthread_mutex_init(&s->blocked_lock, NULL);
        pthread_cond_init(&s->blocked_cond, NULL);
        return s;
}

static void supervisor_free(supervisor *s) {
        git_report_repositories(s);
        report_limit_flush_free(s);
        safe_close(s->listener);
        pthread_mutex_destroy(&s->git_lock);
        pthread_mutex_destroy(&s->start_lock);
        pthread_cond_destroy(&s->start_cond);
        pthread_mutex_destroy(&s->blocked_lock);
        pthread_cond_destroy(&s->blocked_cond);
        free(s);
}

static void interrupt_only(int sig) {
        (void) sig;
}

int supervisor_start(const supervisor_config *cfg, supervisor **ret) {
        int e = check_config(cfg);
        if (e == 0) {
                /* No SA_RESTART: supervisor_stop() ends a worker's RECV and a pool thread's
                 * connect with it (EINTR). */
                struct sigaction sa = { .sa_handler = interrupt_only, .sa_flags = 0 };
                sigemptyset(&sa.sa_mask);
                if (sigaction(SIGUSR2, &sa, NULL) < 0)
                        e = -errno;
        }
        if (e < 0) {
                safe_close(cfg->listener_fd); /* taken, even on failure */
                return e;
        }
        supervisor *s = supervisor_new(cfg);
        if (!s) {
                safe_close(cfg->listener_fd);
                return -ENOMEM;
        }
        worker *ws = calloc(s->n_workers, sizeof(worker));
        e = ws ? report_limit_new(&s->limit) : -ENOMEM;
        if (e == 0)
                e = notif_sizes(s);
        if (e == 0 && s->attribute)
                e = supervisor_sid_index(s->proc_fd, &s->sid_index);
        /* Optional (6.6): wake the supervisor on the caller's CPU. Older kernels: EINVAL. */
        if (e == 0)
                (void) ioctl(s->listener, SECCOMP_IOCTL_NOTIF_SET_FLAGS,
                             SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP);
        unsigned started = 0;
        if (e == 0)
                e = start_workers(s, ws, &started);
        if (e < 0) {
                join_workers(s, ws, started);
                free_workers(s, ws);
                supervisor_free(s);
                return e;
        }
        s->workers = ws;
        *ret = s;
        return 0;
}

void supervisor_stop(supervisor *s) {
        if (!s)
                return;
        join_workers(s, s->workers, s->n_workers);
        supervisor_stop_blocked(s);
        free_workers(s, s->workers);
        supervisor_free(s);
}
