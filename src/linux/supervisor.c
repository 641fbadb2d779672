/* SPDX-License-Identifier: Apache-2.0 */
/* The creation-rule supervisor: a pool of worker threads serving seccomp user notifications.
 *
 * Workers take turns as the receiver (leader/followers): the one holding recv_lock polls the
 * listener and a stop eventfd, receives one notification, releases the lock and serves it. RECV
 * is only called after poll() reported a pending notification, so no worker ever sleeps inside
 * the ioctl where supervisor_stop() could not wake it. Each worker unshares CLONE_FS so it can
 * take the caller's umask (and, for bind, cwd) privately, and adjusts its own capabilities per
 * request (credentials are per thread). */
#include "linux/supervisor-internal.h"
#include "report/report.h"

#include <fcntl.h>
#include <linux/audit.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/eventfd.h>
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
        struct seccomp_notif *notif;
        request *req;
};

/* A request answered by a thread of its own because it may wait as long as its peer likes: the
 * open of a FIFO, or a blocking connect(). */
struct blocked_open {
        supervisor *s;
        pthread_t thread;
        uint64_t id;
        int pin;   /* O_PATH fd of the FIFO, or of a socket to keep; closed only once unlisted */
        int flags;
        bool cloexec;
        /* connect(): the caller's socket (duplicate), the address, and whether the address is a
         * path relative to our procfs. */
        bool connect;
        bool via_proc;
        uint16_t record_port; /* ... and told to on_connection, with `sid`, once connected */
        pid_t sid;
        int sock;
        socklen_t addr_len;
        struct sockaddr_storage addr;
        blocked_open *next;
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
static void send_fd(const supervisor *s, uint64_t id, int fd, bool cloexec) {
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
                send_fd(s, r->n->id, result, r->cloexec);
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

/* ---- Opens that may block --------------------------------------------------------------------- */

static void reap_finished_locked(supervisor *s) {
        while (s->finished) {
                blocked_open *b = s->finished;
                s->finished = b->next;
                (void) pthread_join(b->thread, NULL);
                free(b);
        }
}

static int errno_or_zero(int r) {
        return r < 0 ? -errno : 0;
}

/* Through our procfs ("self/fd/N" names a pinned socket): this thread needs a cwd of its own. */
static int do_connect(const supervisor *s, int sock, const struct sockaddr *addr, socklen_t len,
                      bool via_proc, bool own_fs) {
        if (via_proc && ((!own_fs && unshare(CLONE_FS) < 0) || fchdir(s->proc_fd) < 0))
                return -errno;
        return errno_or_zero(connect(sock, addr, len));
}

static void *blocked_main(void *arg) {
        blocked_open *b = arg;
        supervisor *s = b->s;
        if (b->connect) {
                int e = do_connect(s, b->sock, (const struct sockaddr *) &b->addr, b->addr_len,
                                   b->via_proc, false);
                if (e == 0 && b->record_port) /* before the answer */
                        supervisor_record_connection(s, b->sock, b->record_port, b->sid);
                send_resp(s, b->id, 0, e);
        } else {
                int fd = supervisor_reopen(s, b->pin, b->flags); /* may wait for the FIFO's peer */
                if (fd < 0)
                        send_resp(s, b->id, 0, fd);
                else {
                        send_fd(s, b->id, fd, b->cloexec);
                        (void) close(fd);
                }
        }
        pthread_mutex_lock(&s->blocked_lock);
        for (blocked_open **p = &s->blocked; *p; p = &(*p)->next)
                if (*p == b) {
                        *p = b->next;
                        break;
                }
        b->pin = safe_close(b->pin);
        b->sock = safe_close(b->sock);
        b->next = s->finished;
        s->finished = b;
        s->n_blocked--;
        pthread_mutex_unlock(&s->blocked_lock);
        return NULL;
}

static int spawn_thread(pthread_t *t, void *(*fn)(void *), void *arg) {
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

/* Lists `b` and starts its thread; frees it (closing its fds) on failure. */
static int hand_off(request *r, blocked_open *b) {
        supervisor *s = r->s;
        pthread_mutex_lock(&s->blocked_lock);
        reap_finished_locked(s);
        /* A bound on threads: a caller opening FIFOs nobody writes to hurts only itself. */
        int e = s->n_blocked >= SUPERVISOR_MAX_BLOCKED || atomic_load(&s->stopping)
                        ? -EAGAIN
                        : spawn_thread(&b->thread, blocked_main, b);
        if (e == 0) {
                b->next = s->blocked;
                s->blocked = b;
                s->n_blocked++;
                r->handed_off = true;
        }
        pthread_mutex_unlock(&s->blocked_lock);
        if (e < 0) {
                safe_close(b->pin);
                safe_close(b->sock);
                free(b);
        }
        return e;
}

int supervisor_hand_off_open(request *r, int pin, int flags) {
        blocked_open *b = calloc(1, sizeof(*b));
        if (!b) {
                (void) close(pin);
                return -ENOMEM;
        }
        *b = (blocked_open) { .s = r->s, .id = r->n->id, .pin = pin, .flags = flags,
                              .cloexec = r->cloexec, .sock = -1 };
        return hand_off(r, b);
}

int supervisor_connect(request *r, const struct sockaddr *addr, socklen_t len, bool via_proc,
                       int own_pin) {
        int fl = fcntl(r->sock_fd, F_GETFL);
        if (fl < 0 || (fl & O_NONBLOCK) || len > sizeof(struct sockaddr_storage)) {
                /* Returns at once (EINPROGRESS for a TCP socket), as for the caller. */
                int e = fl < 0 ? -errno : do_connect(r->s, r->sock_fd, addr, len, via_proc, true);
                if (r->record_port && (e == 0 || e == -EINPROGRESS))
                        supervisor_record_connection(r->s, r->sock_fd, r->record_port,
                                                     request_sid(r));
                safe_close(own_pin);
                return e;
        }
        blocked_open *b = calloc(1, sizeof(*b));
        if (!b) {
                safe_close(own_pin);
                return -ENOMEM;
        }
        *b = (blocked_open) { .s = r->s, .id = r->n->id, .pin = own_pin, .connect = true,
                              .via_proc = via_proc, .record_port = r->record_port,
                              .sid = r->record_port ? request_sid(r) : 0,
                              .sock = TAKE_FD(r->sock_fd), .addr_len = len };
        memcpy(&b->addr, addr, len);
        return hand_off(r, b);
}

void supervisor_record_connection(const supervisor *s, int sock, uint16_t port, pid_t sid) {
        struct sockaddr_storage local;
        socklen_t len = sizeof(local);
        char client[REPORT_ENDPOINT_MAX] = "";
        /* No address (getsockname failed): nothing is recorded, and the proxy's refusals on this
         * connection reach every running exec, as unattributable ones do. */
        if (getsockname(sock, (struct sockaddr *) &local, &len) == 0)
                report_conn_key((const struct sockaddr *) &local, len, port, client);
        if (client[0] && s->on_connection)
                s->on_connection(s->userdata, sid, client);
}

/* A thread blocked in open() of a FIFO whose caller died would wait forever. Opening the other
 * end ourselves (non-blocking) releases it. Repeated, since a thread may not have reached open()
 * yet when we try. */
static void stop_blocked(supervisor *s) {
        for (;;) {
                pthread_mutex_lock(&s->blocked_lock);
                reap_finished_locked(s);
                bool done = !s->blocked;
                for (blocked_open *b = s->blocked; b; b = b->next) {
                        if (b->connect) {
                                /* EINTR out of connect(): the handler does nothing, no restart. */
                                (void) pthread_kill(b->thread, SIGUSR2);
                                continue;
                        }
                        int peer = (b->flags & O_ACCMODE) == O_WRONLY ? O_RDONLY : O_WRONLY;
                        int fd = supervisor_reopen(s, b->pin, peer | O_NONBLOCK | O_CLOEXEC);
                        if (fd >= 0)
                                (void) close(fd);
                }
                pthread_mutex_unlock(&s->blocked_lock);
                if (done)
                        return;
                (void) nanosleep(&(struct timespec) { .tv_nsec = 5 * 1000 * 1000 }, NULL);
        }
}

/* ---- Serving one notification ------------------------------------------------------------------ */

static void handle(worker *w) {
        supervisor *s = w->s;
        request *r = w->req;
        /* The argument buffers are not cleared: every op writes before it reads. */
        r->s = s;
        r->creds = &w->creds;
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

/* Returns 1 with a notification in w->notif, 0 to retry, -1 to stop. */
static int receive(worker *w) {
        supervisor *s = w->s;
        struct pollfd p[2] = { { .fd = s->listener, .events = POLLIN },
                               { .fd = s->stop_fd, .events = POLLIN } };
        if (atomic_load(&s->stopping) || atomic_load(&s->targets_gone))
                return -1;
        if (poll(p, 2, -1) < 0)
                return errno == EINTR ? 0 : -1;
        if (p[1].revents)
                return -1;
        if (!(p[0].revents & POLLIN)) {
                if (p[0].revents & (POLLHUP | POLLERR | POLLNVAL)) {
                        atomic_store(&s->targets_gone, true); /* no task uses the filter any more */
                        return -1;
                }
                return 0;
        }
        memset(w->notif, 0, s->notif_size); /* the kernel insists on a zeroed buffer */
        if (ioctl(s->listener, SECCOMP_IOCTL_NOTIF_RECV, w->notif) < 0)
                return 0; /* ENOENT: the caller was killed after poll; EINTR */
        return 1;
}

static void serve(worker *w) {
        for (;;) {
                pthread_mutex_lock(&w->s->recv_lock);
                int got = receive(w);
                pthread_mutex_unlock(&w->s->recv_lock);
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
        /* A private fs_struct: umask() and fchdir() affect this worker only. */
        int e = unshare(CLONE_FS) < 0 ? -errno : 0;
        if (e == 0)
                e = worker_creds_init(&w->creds, w->s->proc_fd);
        report_started(w->s, e);
        if (e == 0)
                serve(w);
        worker_creds_done(&w->creds);
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
                e = spawn_thread(&ws[started].thread, worker_main, &ws[started]);
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

static void join_workers(supervisor *s, worker *ws, unsigned n) {
        atomic_store(&s->stopping, true);
        uint64_t one = 1;
        /* Wakes the polling leader. An eventfd write of 1 fails only on counter overflow, which
         * cannot happen with one write per stop; the flag above is checked anyway. */
        ssize_t w = write(s->stop_fd, &one, sizeof(one));
        (void) w;
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
        *s = (supervisor) { .listener = cfg->listener_fd, .proc_fd = cfg->proc_fd, .stop_fd = -1,
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
        pthread_mutex_init(&s->recv_lock, NULL);
        pthread_mutex_init(&s->git_lock, NULL);
        pthread_mutex_init(&s->start_lock, NULL);
        pthread_cond_init(&s->start_cond, NULL);
        pthread_mutex_init(&s->blocked_lock, NULL);
        return s;
}

static void supervisor_free(supervisor *s) {
        git_report_repositories(s);
        report_limit_flush_free(s);
        safe_close(s->listener);
        safe_close(s->stop_fd);
        pthread_mutex_destroy(&s->recv_lock);
        pthread_mutex_destroy(&s->git_lock);
        pthread_mutex_destroy(&s->start_lock);
        pthread_cond_destroy(&s->start_cond);
        pthread_mutex_destroy(&s->blocked_lock);
        free(s);
}

static void interrupt_only(int sig) {
        (void) sig;
}

int supervisor_start(const supervisor_config *cfg, supervisor **ret) {
        int e = check_config(cfg);
        if (e == 0 && cfg->unix_allow) {
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
        if (e == 0)
                s->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (e == 0 && s->stop_fd < 0)
                e = -errno;
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
        stop_blocked(s);
        free_workers(s, s->workers);
        supervisor_free(s);
}
