/* SPDX-License-Identifier: Apache-2.0 */
/* Requests that may wait as long as their peer likes — the open of an existing FIFO, a blocking
 * connect() — served by a bounded pool of threads, so they never hold a worker (pitfall 5 of
 * docs/design/creation-rules-study.md).
 *
 * Each such request still gets a thread to itself while it runs: a connect() waiting for a full
 * backlog or a FIFO without a peer cannot delay any other request, and supervisor_stop() can
 * interrupt each one (SIGUSR2 for a connect, the FIFO's other end opened for an open). What the
 * pool saves is creating and joining a thread per request: a thread that finished stays for
 * the next request (at most POOL_IDLE_MAX wait idle), and a request goes to an idle thread when
 * there is one, else to a new thread, never into a queue behind a busy one. Bounded: at most
 * SUPERVISOR_MAX_BLOCKED requests, and threads, at once.
 *
 * A pooled thread has run requests of other callers: before each request it takes the
 * effective capabilities the worker had for this caller (own ∩ caller's), so it is never a
 * stronger opener than the caller (docs/design/creation-rules.md). */
#include "linux/supervisor-internal.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>

#include "report/report.h"

#define POOL_IDLE_MAX 4

struct blocked_open {
        supervisor *s;
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
        struct __user_cap_data_struct caps[2]; /* the worker's, for this caller */
        bool running;     /* taken by `thread` (under blocked_lock) */
        pthread_t thread;
        blocked_open *next;       /* s->blocked: queued or running */
        blocked_open *next_queued; /* s->queue: not yet taken */
};

struct pool_thread {
        supervisor *s;
        pthread_t thread;
        blocked_open *first; /* the request it was started for */
        bool exited;         /* returned from its main, waiting to be joined */
        bool have_caps;
        struct __user_cap_data_struct caps[2]; /* in force on this thread */
        pool_thread *next;
};

static int errno_or_zero(int r) {
        return r < 0 ? -errno : 0;
}

/* Through our procfs ("self/fd/N" names a pinned socket): this thread needs a cwd of its own
 * (unshare(CLONE_FS) of an fs_struct already private is a no-op). */
static int do_connect(const supervisor *s, int sock, const struct sockaddr *addr, socklen_t len,
                      bool via_proc, bool own_fs) {
        if (via_proc && ((!own_fs && unshare(CLONE_FS) < 0) || fchdir(s->proc_fd) < 0))
                return -errno;
        return errno_or_zero(connect(sock, addr, len));
}

static int take_caps(pool_thread *t, const blocked_open *b) {
        if (t->have_caps && memcmp(t->caps, b->caps, sizeof(t->caps)) == 0)
                return 0;
        struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
        struct __user_cap_data_struct d[2] = { b->caps[0], b->caps[1] };
        /* capset with pid 0 changes this thread only. */
        if (syscall(SYS_capset, &h, d) < 0) {
                t->have_caps = false;
                return -errno;
        }
        memcpy(t->caps, b->caps, sizeof(t->caps));
        t->have_caps = true;
        return 0;
}

static void run_connect(const supervisor *s, blocked_open *b) {
        int e = do_connect(s, b->sock, (const struct sockaddr *) &b->addr, b->addr_len,
                           b->via_proc, false);
        if (e == 0 && b->record_port) /* before the answer: warm sessions attribute by it */
                supervisor_record_connection(s, b->sock, b->record_port, b->sid);
        (void) supervisor_send_resp(s, b->id, 0, e);
}

static void run_open(const supervisor *s, blocked_open *b) {
        int fd = supervisor_reopen(s, b->pin, b->flags); /* may wait for the FIFO's peer */
        if (fd < 0) {
                (void) supervisor_send_resp(s, b->id, 0, fd);
                return;
        }
        supervisor_send_fd(s, b->id, fd, b->cloexec);
        (void) close(fd);
}

static void run_request(pool_thread *t, blocked_open *b) {
        supervisor *s = t->s;
        int e = take_caps(t, b);
        if (e < 0)
                (void) supervisor_send_resp(s, b->id, 0, -EPERM); /* cannot act as the caller */
        else if (b->connect)
                run_connect(s, b);
        else
                run_open(s, b);
        pthread_mutex_lock(&s->blocked_lock);
        for (blocked_open **p = &s->blocked; *p; p = &(*p)->next)
                if (*p == b) {
                        *p = b->next;
                        break;
                }
        s->n_blocked--;
        pthread_mutex_unlock(&s->blocked_lock);
        safe_close(b->pin);
        safe_close(b->sock);
        free(b);
}

/* The next request for an idle thread, or NULL when the thread is to end (enough idle threads
 * wait already, or the supervisor stops). */
static blocked_open *next_request(pool_thread *t) {
        supervisor *s = t->s;
        blocked_open *b = NULL;
        pthread_mutex_lock(&s->blocked_lock);
        if (s->n_idle < POOL_IDLE_MAX) {
                s->n_idle++;
                while (!s->queue && !s->pool_stop)
                        pthread_cond_wait(&s->blocked_cond, &s->blocked_lock);
                s->n_idle--;
                b = s->queue;
                if (b) {
                        s->queue = b->next_queued;
                        b->running = true;
                        b->thread = t->thread;
                }
        }
        if (!b)
                t->exited = true;
        pthread_mutex_unlock(&s->blocked_lock);
        return b;
}

static void *pool_main(void *arg) {
        pool_thread *t = arg;
        for (blocked_open *b = t->first; b; b = next_request(t))
                run_request(t, b);
        return NULL;
}

static void reap_exited_locked(supervisor *s) {
        for (pool_thread **p = &s->threads; *p;) {
                pool_thread *t = *p;
                if (!t->exited) {
                        p = &t->next;
                        continue;
                }
                *p = t->next;
                (void) pthread_join(t->thread, NULL); /* it holds no lock any more */
                free(t);
                s->n_threads--;
        }
}

/* Under blocked_lock: a new thread whose first request is `b`. */
static int start_thread_locked(supervisor *s, blocked_open *b) {
        pool_thread *t = calloc(1, sizeof(*t));
        if (!t)
                return -ENOMEM;
        *t = (pool_thread) { .s = s, .first = b };
        b->running = true;
        int e = supervisor_spawn_thread(&t->thread, pool_main, t);
        if (e < 0) {
                free(t);
                return e;
        }
        b->thread = t->thread;
        t->next = s->threads;
        s->threads = t;
        s->n_threads++;
        return 0;
}

/* Lists `b` and gives it to an idle thread or a new one; frees it (closing its fds) on failure. */
static int hand_off(request *r, blocked_open *b) {
        supervisor *s = r->s;
        const worker_creds *c = r->creds;
        memcpy(b->caps, c->caps, sizeof(b->caps));
        b->caps[0].effective = (uint32_t) c->eff_now;
        b->caps[1].effective = (uint32_t) (c->eff_now >> 32);
        pthread_mutex_lock(&s->blocked_lock);
        reap_exited_locked(s);
        unsigned queued = 0;
        for (const blocked_open *q = s->queue; q; q = q->next_queued)
                queued++;
        int e = 0;
        /* A bound on threads: a caller opening FIFOs nobody writes to hurts only itself. */
        if (s->n_blocked >= SUPERVISOR_MAX_BLOCKED || atomic_load(&s->stopping))
                e = -EAGAIN;
        else if (queued < s->n_idle) {
                /* Every idle thread takes one queued request: this one has a thread. */
                b->next_queued = NULL;
                blocked_open **p = &s->queue;
                while (*p)
                        p = &(*p)->next_queued;
                *p = b;
                pthread_cond_broadcast(&s->blocked_cond);
        } else if (s->n_threads >= SUPERVISOR_MAX_BLOCKED)
                e = -EAGAIN;
        else
                e = start_thread_locked(s, b);
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

/* Releases every running request: a thread blocked in open() of a FIFO whose caller died would
 * wait forever, so the other end is opened here (non-blocking); a connect() is interrupted
 * (SIGUSR2: the handler does nothing, no restart). Repeated, since a thread may not have reached
 * its call yet when we try. Then the idle threads are told to end, and every thread is joined.
 * The workers are stopped already: no request is handed off any more. */
void supervisor_stop_blocked(supervisor *s) {
        for (;;) {
                pthread_mutex_lock(&s->blocked_lock);
                bool done = !s->blocked;
                for (blocked_open *b = s->blocked; b; b = b->next) {
                        if (!b->running)
                                continue; /* an idle thread takes it: released next round */
                        if (b->connect) {
                                (void) pthread_kill(b->thread, SIGUSR2);
                                continue;
                        }
                        int peer = (b->flags & O_ACCMODE) == O_WRONLY ? O_RDONLY : O_WRONLY;
                        int fd = supervisor_reopen(s, b->pin, peer | O_NONBLOCK | O_CLOEXEC);
                        if (fd >= 0)
                                (void) close(fd);
                }
                if (done) {
                        s->pool_stop = true;
                        pthread_cond_broadcast(&s->blocked_cond);
                }
                pthread_mutex_unlock(&s->blocked_lock);
                if (done)
                        break;
                (void) nanosleep(&(struct timespec) { .tv_nsec = 5 * 1000 * 1000 }, NULL);
        }
        for (;;) {
                pthread_mutex_lock(&s->blocked_lock);
                pool_thread *t = s->threads;
                if (t)
                        s->threads = t->next;
                pthread_mutex_unlock(&s->blocked_lock);
                if (!t)
                        return;
                (void) pthread_join(t->thread, NULL);
                free(t);
        }
}
