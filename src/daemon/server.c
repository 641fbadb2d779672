/* SPDX-License-Identifier: Apache-2.0 */
/* cordond's server: the socket in a private runtime directory, the peer-credential check, the
 * clients and their bounded queues, request dispatch, and the signal-driven shutdown. */
#include "daemon/daemon.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "daemon/server.h"
#include "util/fork-gate.h"
#include "util/util.h"

void daemon_log(const char *fmt, ...) {
        char buf[1024];
        va_list ap;
        va_start(ap, fmt);
        (void) vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);
        /* One line per message, control characters defused: a hostile session id or path in a
         * message must not forge log lines. */
        for (char *p = buf; *p; p++)
                if ((unsigned char) *p < 0x20 || *p == 0x7f)
                        *p = '?';
        fprintf(stderr, "cordond: %s\n", buf);
}

/* ---- the socket ----------------------------------------------------------------------------- */

/* The runtime directory must be ours and private: otherwise another user could replace the
 * socket and receive the requests (and the policies) of our clients. */
static int check_private_dir(const char *dir) {
        struct stat st;
        if (lstat(dir, &st) < 0)
                return -errno;
        if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077))
                return -EPERM;
        return 0;
}

int server_open_socket(const char *path) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        if (strlen(path) >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        _cleanup_free_ char *dir = strdup(path);
        if (!dir)
                return -ENOMEM;
        char *slash = strrchr(dir, '/');
        if (!slash || slash == dir)
                return -EINVAL;
        *slash = '\0';
        if (mkdir(dir, 0700) < 0 && errno != EEXIST)
                return -errno;
        int r = check_private_dir(dir);
        if (r < 0)
                return r;
        /* A stale socket from an earlier daemon; anything else at the path is left alone. */
        struct stat st;
        if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode))
                (void) unlink(path);
        memcpy(sa.sun_path, path, strlen(path) + 1);
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return -errno;
        mode_t old = umask(077);
        r = bind(fd, (struct sockaddr *) &sa, sizeof(sa));
        umask(old);
        if (r < 0 || listen(fd, 64) < 0) {
                r = -errno;
                (void) close(fd);
                return r;
        }
        return fd;
}

/* ---- clients -------------------------------------------------------------------------------- */

size_t client_queued(const client *c) {
        return c->out_len - c->out_off;
}

static void client_update(daemon_t *d, client *c) {
        uint32_t want = c->dead ? 0 : (c->closing ? 0 : EPOLLIN) | (client_queued(c) ? EPOLLOUT : 0);
        if (want == c->events || c->dead)
                return;
        struct epoll_event ev = { .events = want, .data.ptr = c };
        if (epoll_ctl(d->epfd, c->events ? (want ? EPOLL_CTL_MOD : EPOLL_CTL_DEL) : EPOLL_CTL_ADD,
                      c->fd, &ev) == 0)
                c->events = want;
}

static daemon_t *the_daemon;

static void client_close(daemon_t *d, client *c) {
        if (c->dead)
                return;
        c->dead = true;
        (void) epoll_ctl(d->epfd, EPOLL_CTL_DEL, c->fd, NULL);
        (void) close(c->fd);
        c->fd = -1;
        /* Its execs lose their reader: they are killed, not left running unobserved. */
        exec_client_gone(d, c);
}

int client_send(client *c, char *line) {
        if (!line)
                return -ENOMEM;
        if (c->dead) {
                free(line);
                return -EPIPE;
        }
        size_t n = strlen(line);
        if (c->out_off == c->out_len)
                c->out_off = c->out_len = 0;
        /* A reader that keeps up only partly never empties the queue: move what is left to the
         * front rather than append forever (the buffer stays within twice the bound). */
        if (c->out_off > 0 && c->out_len + n > c->out_cap) {
                memmove(c->out, c->out + c->out_off, c->out_len - c->out_off);
                c->out_len -= c->out_off;
                c->out_off = 0;
        }
        if (c->out_len + n > c->out_cap) {
                size_t cap = c->out_cap ? c->out_cap : 4096;
                while (cap < c->out_len + n)
                        cap *= 2;
                char *nb = realloc(c->out, cap);
                if (!nb) {
                        free(line);
                        return -ENOMEM;
                }
                c->out = nb;
                c->out_cap = cap;
        }
        memcpy(c->out + c->out_len, line, n);
        c->out_len += n;
        free(line);
        client_update(the_daemon, c);
        return 0;
}

static void dispatch(daemon_t *d, client *c, const char *line, size_t len) {
        proto_request rq;
        uint64_t id = 0;
        cordon_error err = { 0 };
        if (proto_parse_request(line, len, &rq, &id, &err) < 0) {
                (void) client_send(c, proto_error_line(id, err.code, err.message));
                return;
        }
        switch (rq.method) {
        case PROTO_PROBE:
                server_probe(d, c, &rq);
                break;
        case PROTO_SESSION_LAUNCH:
                session_launch(d, c, &rq);
                break;
        case PROTO_SESSION_EXEC:
                session_exec(d, c, &rq);
                break;
        case PROTO_SESSION_LIST:
                session_list(d, c, &rq);
                break;
        case PROTO_SESSION_DESTROY:
                session_destroy(d, c, &rq);
                break;
        case PROTO_SESSION_SUSPEND:
        case PROTO_SESSION_RESUME:
                session_suspend(d, c, &rq, rq.method == PROTO_SESSION_SUSPEND);
                break;
        case PROTO_SESSION_EGRESS_ANSWER:
                session_egress_answer(d, c, &rq);
                break;
        case PROTO_FS_READ:
        case PROTO_FS_WRITE:
        case PROTO_FS_EDIT:
        case PROTO_FS_LIST:
        case PROTO_FS_STAT:
                fs_request(d, c, &rq);
                break;
        case PROTO_SESSION_TERMINAL:
                session_terminal(d, c, &rq);
                break;
        case PROTO_TERMINAL_INPUT:
        case PROTO_TERMINAL_RESIZE:
        case PROTO_TERMINAL_CLOSE:
                terminal_control(d, c, &rq);
                break;
        case _PROTO_METHOD_MAX:
        default:
                break;
        }
        proto_request_done(&rq);
}

/* Splits what arrived into lines; an oversize line gets one error and the client is closed
 * (its stream can no longer be resynchronised). */
static void client_lines(daemon_t *d, client *c) {
        size_t start = 0;
        for (size_t i = 0; i < c->in_len && !c->dead; i++) {
                if (c->in[i] != '\n')
                        continue;
                size_t len = i - start;
                if (len > 0 && c->in[start + len - 1] == '\r')
                        len--;
                if (len > 0)
                        dispatch(d, c, c->in + start, len);
                start = i + 1;
        }
        if (start > 0 && !c->dead) {
                memmove(c->in, c->in + start, c->in_len - start);
                c->in_len -= start;
                /* A long request (an fs.write) grew the buffer: give it back once it is done, so
                 * an idle client holds 64 KiB, not PROTO_LINE_MAX. */
                if (c->in_cap > 1024 * 1024 && c->in_len < 65536) {
                        char *nb = realloc(c->in, 65536);
                        if (nb) {
                                c->in = nb;
                                c->in_cap = 65536;
                        }
                }
        }
        if (!c->dead && c->in_len > PROTO_LINE_MAX) {
                (void) client_send(c, proto_error_line(0, CORDON_USAGE,
                                                       "request line longer than 12 MiB"));
                c->closing = true;
                c->in_len = 0;
                client_update(d, c);
        }
}

static void client_readable(daemon_t *d, client *c) {
        if (c->in_cap - c->in_len < 65536) {
                size_t cap = c->in_cap ? c->in_cap * 2 : 65536;
                if (cap > PROTO_LINE_MAX + 131072)
                        cap = PROTO_LINE_MAX + 131072;
                char *nb = cap > c->in_cap ? realloc(c->in, cap) : c->in;
                if (!nb) {
                        client_close(d, c);
                        return;
                }
                c->in = nb;
                c->in_cap = cap;
        }
        ssize_t n = recv(c->fd, c->in + c->in_len, c->in_cap - c->in_len, 0);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
                return;
        if (n <= 0) {
                client_close(d, c);
                return;
        }
        c->in_len += (size_t) n;
        client_lines(d, c);
}

static void client_writable(daemon_t *d, client *c) {
        while (client_queued(c) > 0) {
                ssize_t n = send(c->fd, c->out + c->out_off, client_queued(c), MSG_NOSIGNAL);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 && errno == EAGAIN)
                        break;
                if (n < 0) {
                        client_close(d, c);
                        return;
                }
                c->out_off += (size_t) n;
        }
        if (client_queued(c) == 0 && c->closing) {
                client_close(d, c);
                return;
        }
        if (client_queued(c) < DAEMON_OUT_MAX / 2)
                exec_resume_paused(d, c);
        client_update(d, c);
}

/* Only the daemon's own user may connect: a session runs commands with that user's authority
 * over its files, so a client of another uid would be a privilege escalation. */
static void on_accept(daemon_t *d) {
        for (;;) {
                int fd = accept4(d->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
                if (fd < 0)
                        return;
                struct ucred cred;
                socklen_t len = sizeof(cred);
                if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 ||
                    cred.uid != d->uid) {
                        daemon_log("refused a connection from uid %d (pid %d): only uid %d may "
                                   "connect", len ? (int) cred.uid : -1, (int) cred.pid,
                                   (int) d->uid);
                        (void) close(fd);
                        continue;
                }
                client *c = calloc(1, sizeof(*c));
                if (!c || d->n_clients >= DAEMON_MAX_CLIENTS) {
                        free(c);
                        (void) close(fd);
                        continue;
                }
                *c = (client){ .kind = WATCH_CLIENT, .fd = fd, .pid = cred.pid,
                               .next = d->clients };
                d->clients = c;
                d->n_clients++;
                client_update(d, c);
        }
}

static void reap_clients(daemon_t *d) {
        client **pp = &d->clients;
        while (*pp) {
                client *c = *pp;
                if (c->dead) {
                        *pp = c->next;
                        d->n_clients--;
                        free(c->in);
                        free(c->out);
                        free(c);
                } else {
                        pp = &c->next;
                }
        }
}

static void on_signal(daemon_t *d) {
        struct signalfd_siginfo si;
        while (read(d->signal_fd, &si, sizeof(si)) == sizeof(si)) {
                if (si.ssi_signo == SIGCHLD)
                        exec_reap(d);
                else
                        d->stopping = true;
        }
}

int server_setup_signals(daemon_t *d) {
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGTERM);
        sigaddset(&set, SIGINT);
        sigaddset(&set, SIGHUP);
        sigaddset(&set, SIGCHLD);
        if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
                return -errno;
        (void) signal(SIGPIPE, SIG_IGN);
        d->signal_fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
        return d->signal_fd < 0 ? -errno : 0;
}

int server_run(daemon_t *d) {
        the_daemon = d;
        static const watch_kind listener = WATCH_LISTENER, sig = WATCH_SIGNAL;
        struct epoll_event ev = { .events = EPOLLIN, .data.ptr = (void *) &listener };
        if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, d->listen_fd, &ev) < 0)
                return -errno;
        ev.data.ptr = (void *) &sig;
        if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, d->signal_fd, &ev) < 0)
                return -errno;
        /* Inside the fork gate but while it waits: the runs' threads of cordon_spawn() fork
         * while this loop works (docs/design/library.md, "Forked without exec"). */
        fork_gate_enter();
        int r = 0;
        while (!d->stopping) {
                struct epoll_event evs[64];
                int n;
                FORK_GATE_PAUSED(n = epoll_wait(d->epfd, evs, 64, -1));
                if (n < 0 && errno != EINTR) {
                        r = -errno;
                        break;
                }
                for (int i = 0; i < n; i++) {
                        watch_kind k = *(watch_kind *) evs[i].data.ptr;
                        if (k == WATCH_LISTENER)
                                on_accept(d);
                        else if (k == WATCH_SIGNAL)
                                on_signal(d);
                        else if (k == WATCH_EXEC)
                                exec_on_readable(d, evs[i].data.ptr);
                        else if (k == WATCH_HOST)
                                host_on_readable(d, evs[i].data.ptr);
                        else if (k == WATCH_PTY)
                                terminal_on_pty(d, evs[i].data.ptr, evs[i].events);
                        else if (k == WATCH_DONE)
                                terminal_on_done(d, evs[i].data.ptr);
                        else {
                                client *c = evs[i].data.ptr;
                                if (!c->dead && (evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
                                        client_readable(d, c);
                                if (!c->dead && (evs[i].events & EPOLLOUT))
                                        client_writable(d, c);
                        }
                }
                reap_clients(d);
                exec_collect(d);
        }
        if (r < 0) {
                fork_gate_leave();
                return r;
        }
        /* SIGTERM: everything inside every session dies, nothing is left running. */
        sessions_destroy_all(d);
        for (client *c = d->clients; c; c = c->next)
                client_close(d, c);
        reap_clients(d);
        fork_gate_leave();
        return 0;
}

void server_probe(daemon_t *d, client *c, const proto_request *rq) {
        (void) d;
        cordon_probe *p = NULL;
        cordon_error err = { 0 };
        if (cordon_probe_run(&p, &err) < 0) {
                (void) client_send(c, proto_error_line(rq->id, err.code, err.message));
                return;
        }
        char *txt = NULL;
        int r = cordon_probe_to_json(p, &txt, &err);
        cordon_probe_free(p);
        if (r < 0) {
                (void) client_send(c, proto_error_line(rq->id, err.code, err.message));
                return;
        }
        /* The probe's JSON may end in a newline; a result is one line. */
        for (char *q = txt; *q; q++)
                if (*q == '\n')
                        *q = ' ';
        (void) client_send(c, proto_result_line(rq->id, txt));
        free(txt);
}
