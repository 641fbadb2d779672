/* SPDX-License-Identifier: Apache-2.0 */
/* netload's loopback server and the reference relay (see netload.h). */
#define _GNU_SOURCE
#include "netload.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <unistd.h>

/* ---- the server ----------------------------------------------------------------------------- */

typedef enum sstate { SV_HEAD, SV_SEND, SV_ECHO } sstate;

typedef struct sconn {
        int fd;
        sstate st;
        uint32_t events;
        char *buf;                /* the request head, then bytes to write (answer head, echo) */
        size_t len, off;
        uint64_t left, pos;       /* SV_SEND: body bytes still to send, bytes sent */
        bool eof;                 /* SV_ECHO: the client has shut its side down */
} sconn;

typedef struct server {
        int ep, lfd, memfd;
} server;

static void sv_watch(server *sv, sconn *c, uint32_t events) {
        if (c->events == events)
                return;
        struct epoll_event ev = { .events = events, .data.ptr = c };
        if (epoll_ctl(sv->ep, c->events ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, c->fd, &ev) < 0)
                die("server: epoll_ctl: %s", strerror(errno));
        c->events = events;
}

static void sv_close(sconn *c) {
        close(c->fd); /* also leaves the epoll set */
        free(c->buf);
        free(c);
}

static size_t sv_head(char *buf, const char *status, unsigned long long n, const char *body) {
        return (size_t) snprintf(buf, ECHO_BUF, "HTTP/1.1 %s\r\nContent-Length: %llu\r\n"
                                 "Content-Type: application/octet-stream\r\n"
                                 "Connection: close\r\n\r\n%s", status, n, body);
}

/* Answer head for `path` into c->buf; sets the body to send. */
static void sv_answer(sconn *c, const char *path) {
        unsigned long long n = 0;
        if (sscanf(path, "/bytes/%llu", &n) == 1) {
                c->len = sv_head(c->buf, "200 OK", n, "");
                c->left = n;
        } else if (strcmp(path, "/tiny") == 0) {
                c->len = sv_head(c->buf, "200 OK", 2, "ok");
        } else {
                c->len = sv_head(c->buf, "404 Not Found", 0, "");
        }
        c->off = 0;
        c->st = SV_SEND;
}

static void sv_on_head(server *sv, sconn *c) {
        ssize_t k = recv(c->fd, c->buf + c->len, HEAD_MAX - c->len, 0);
        if (k < 0 && (errno == EAGAIN || errno == EINTR))
                return;
        if (k <= 0) {
                sv_close(c);
                return;
        }
        c->len += (size_t) k;
        char *end = memmem(c->buf, c->len, "\r\n\r\n", 4);
        if (!end) {
                if (c->len == HEAD_MAX)
                        sv_close(c);
                return;
        }
        size_t hl = (size_t) (end + 4 - c->buf);
        char path[256] = "";
        if (sscanf(c->buf, "GET %255s HTTP/1.", path) != 1) {
                sv_close(c);
                return;
        }
        /* Absolute-form (through the forward proxy): keep the path. */
        const char *p = path;
        if (strncmp(p, "http://", 7) == 0)
                p = strchr(path + 7, '/') ? strchr(path + 7, '/') : "/";
        if (strcmp(p, "/echo") == 0) {
                memmove(c->buf, c->buf + hl, c->len - hl); /* payload sent with the head */
                c->len -= hl;
                c->off = 0;
                c->st = SV_ECHO;
                sv_watch(sv, c, EPOLLOUT);
                return;
        }
        sv_answer(c, p);
        sv_watch(sv, c, EPOLLOUT);
}

/* Writes c->buf[off..len); returns 1 when empty, 0 on EAGAIN, -1 on error. */
static int sv_flush(sconn *c) {
        while (c->off < c->len) {
                ssize_t k = send(c->fd, c->buf + c->off, c->len - c->off, MSG_NOSIGNAL);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return errno == EAGAIN ? 0 : -1;
                c->off += (size_t) k;
        }
        c->off = c->len = 0;
        return 1;
}

static void sv_on_send(server *sv, sconn *c) {
        int r = sv_flush(c);
        while (r == 1 && c->left > 0) {
                off_t o = (off_t) (c->pos % PATTERN_SIZE);
                size_t n = PATTERN_SIZE - (size_t) o;
                if (n > c->left)
                        n = (size_t) c->left;
                ssize_t k = sendfile(c->fd, sv->memfd, &o, n);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        r = errno == EAGAIN ? 0 : -1;
                else if (k == 0)
                        r = -1;
                else
                        c->left -= (uint64_t) k, c->pos += (uint64_t) k;
        }
        if (r != 0)
                sv_close(c); /* done (Connection: close) or failed */
}

static void sv_on_echo(server *sv, sconn *c) {
        for (;;) {
                int r = sv_flush(c);
                if (r < 0) {
                        sv_close(c);
                        return;
                }
                if (r == 0) {
                        sv_watch(sv, c, EPOLLOUT);
                        return;
                }
                if (c->eof) {
                        (void) shutdown(c->fd, SHUT_WR);
                        sv_close(c);
                        return;
                }
                ssize_t k = recv(c->fd, c->buf, ECHO_BUF, 0);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0 && errno == EAGAIN) {
                        sv_watch(sv, c, EPOLLIN);
                        return;
                }
                if (k < 0) {
                        sv_close(c);
                        return;
                }
                if (k == 0)
                        c->eof = true;
                c->len = (size_t) k;
        }
}

static void sv_accept(server *sv) {
        for (;;) {
                int fd = accept4(sv->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
                if (fd < 0)
                        return;
                sconn *c = calloc(1, sizeof(*c));
                char *buf = malloc(ECHO_BUF);
                if (!c || !buf)
                        die("out of memory");
                *c = (sconn){ .fd = fd, .st = SV_HEAD, .buf = buf };
                int one = 1;
                (void) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
                sv_watch(sv, c, EPOLLIN);
        }
}

static void server_init(server *sv) {
        sv->memfd = memfd_create("netload-pattern", MFD_CLOEXEC);
        if (sv->memfd < 0 || ftruncate(sv->memfd, PATTERN_SIZE) < 0)
                die("memfd: %s", strerror(errno));
        uint8_t *m = mmap(NULL, PATTERN_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, sv->memfd, 0);
        if (m == MAP_FAILED)
                die("mmap: %s", strerror(errno));
        pattern_fill(m);
        munmap(m, PATTERN_SIZE);
        /* Loopback only: nothing outside this machine can reach the server. */
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t len = sizeof(a);
        sv->lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (sv->lfd < 0 || bind(sv->lfd, (struct sockaddr *) &a, len) < 0 ||
            listen(sv->lfd, 4096) < 0 || getsockname(sv->lfd, (struct sockaddr *) &a, &len) < 0)
                die("server: listen: %s", strerror(errno));
        sv->ep = epoll_create1(EPOLL_CLOEXEC);
        struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &sv->lfd };
        struct epoll_event in = { .events = EPOLLIN, .data.ptr = &sv->ep };
        if (sv->ep < 0 || epoll_ctl(sv->ep, EPOLL_CTL_ADD, sv->lfd, &ev) < 0 ||
            epoll_ctl(sv->ep, EPOLL_CTL_ADD, 0, &in) < 0)
                die("server: epoll: %s", strerror(errno));
        printf("port %u\n", ntohs(a.sin_port));
        fflush(stdout);
}

int cmd_serve(void) {
        server sv;
        server_init(&sv);
        for (;;) {
                struct epoll_event evs[256];
                int k = epoll_wait(sv.ep, evs, 256, -1);
                if (k < 0 && errno != EINTR)
                        die("server: epoll_wait: %s", strerror(errno));
                for (int i = 0; i < k; i++) {
                        void *p = evs[i].data.ptr;
                        if (p == &sv.ep) {
                                char b[64];
                                if (read(0, b, sizeof(b)) <= 0)
                                        return 0; /* the driver is gone */
                        } else if (p == &sv.lfd) {
                                sv_accept(&sv);
                        } else {
                                sconn *c = p;
                                if (c->st == SV_HEAD)
                                        sv_on_head(&sv, c);
                                else if (c->st == SV_SEND)
                                        sv_on_send(&sv, c);
                                else
                                        sv_on_echo(&sv, c);
                        }
                }
        }
}

/* ---- the reference relay -------------------------------------------------------------------- */

typedef struct relay_pair {
        int a, b;            /* the client, the upstream */
        atomic_int left;     /* directions still running: the last one closes both sockets */
} relay_pair;

typedef struct relay_dir {
        relay_pair *pair;
        int src, dst;
} relay_dir;

static void *relay_thread(void *arg) {
        relay_dir *d = arg;
        int p[2];
        if (pipe2(p, O_CLOEXEC) == 0) {
                (void) fcntl(p[1], F_SETPIPE_SZ, 256 * 1024);
                for (;;) {
                        ssize_t n = splice(d->src, NULL, p[1], NULL, 256 * 1024, SPLICE_F_MOVE);
                        if (n <= 0)
                                break;
                        while (n > 0) {
                                ssize_t k = splice(p[0], NULL, d->dst, NULL, (size_t) n,
                                                   SPLICE_F_MOVE);
                                if (k <= 0)
                                        break;
                                n -= k;
                        }
                        if (n > 0)
                                break;
                }
                close(p[0]);
                close(p[1]);
        }
        (void) shutdown(d->dst, SHUT_WR);
        relay_pair *pair = d->pair;
        free(d);
        if (atomic_fetch_sub(&pair->left, 1) == 1) {
                close(pair->a);
                close(pair->b);
                free(pair);
        }
        return NULL;
}

static void relay_start(relay_pair *pair, int src, int dst) {
        relay_dir *d = malloc(sizeof(*d));
        pthread_t th;
        pthread_attr_t at;
        if (!d)
                die("out of memory");
        *d = (relay_dir){ .pair = pair, .src = src, .dst = dst };
        pthread_attr_init(&at);
        pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
        if (pthread_create(&th, &at, relay_thread, d) != 0)
                die("pthread_create failed");
        pthread_attr_destroy(&at);
}

static void relay_accept(int lfd, const target *t) {
        int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0)
                return;
        int up = dial(t, false);
        if (up < 0) {
                close(fd);
                return;
        }
        relay_pair *pair = calloc(1, sizeof(*pair));
        if (!pair)
                die("out of memory");
        pair->a = fd, pair->b = up;
        atomic_init(&pair->left, 2);
        relay_start(pair, fd, up);
        relay_start(pair, up, fd);
}

int cmd_relay(const target *t) {
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t len = sizeof(a);
        int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (lfd < 0 || bind(lfd, (struct sockaddr *) &a, len) < 0 || listen(lfd, 4096) < 0 ||
            getsockname(lfd, (struct sockaddr *) &a, &len) < 0)
                die("relay: listen: %s", strerror(errno));
        printf("port %u\n", ntohs(a.sin_port));
        fflush(stdout);
        for (;;) {
                struct pollfd pf[2] = { { .fd = lfd, .events = POLLIN }, { .fd = 0, .events = POLLIN } };
                if (poll(pf, 2, -1) < 0 && errno != EINTR)
                        die("relay: poll: %s", strerror(errno));
                if (pf[1].revents) {
                        char b[64];
                        if (read(0, b, sizeof(b)) <= 0)
                                return 0; /* the driver is gone */
                }
                if (pf[0].revents & POLLIN)
                        relay_accept(lfd, t);
        }
}
