/* SPDX-License-Identifier: Apache-2.0 */
/* netload's client: downloads, per-connection latency, concurrent tunnels (see netload.h). */
#define _GNU_SOURCE
#include "netload.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define RECV_BUF (128u << 10)
#define MAX_TUNNELS 20000

static uint8_t *pattern;

_Noreturn void die(const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        fputs("netload: ", stderr);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        va_end(ap);
        exit(2);
}

static int64_t now_ns(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void pattern_fill(uint8_t *p) {
        uint32_t x = 0x9e3779b9u;
        for (size_t i = 0; i < PATTERN_SIZE; i++) {
                x ^= x << 13, x ^= x >> 17, x ^= x << 5;
                p[i] = (uint8_t) (x >> 24);
        }
}

/* Room for thousands of sockets (the tunnels test holds one per tunnel). */
static void raise_nofile(void) {
        struct rlimit rl;
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
                rl.rlim_cur = rl.rlim_max;
                (void) setrlimit(RLIMIT_NOFILE, &rl);
        }
}

/* ---- addresses ------------------------------------------------------------------------------ */

/* "A.B.C.D:PORT" or "[V6]:PORT" → a socket address. */
static int parse_hostport(const char *s, struct sockaddr_storage *ss, socklen_t *len) {
        char host[64];
        const char *colon = strrchr(s, ':');
        if (!colon || (size_t) (colon - s) >= sizeof(host))
                return -EINVAL;
        memcpy(host, s, (size_t) (colon - s));
        host[colon - s] = 0;
        char *end;
        long port = strtol(colon + 1, &end, 10);
        if (*end != 0 && *end != '/')
                return -EINVAL;
        if (port <= 0 || port > 65535)
                return -EINVAL;
        memset(ss, 0, sizeof(*ss));
        struct sockaddr_in *s4 = (struct sockaddr_in *) ss;
        struct sockaddr_in6 *s6 = (struct sockaddr_in6 *) ss;
        size_t hl = strlen(host);
        if (hl > 2 && host[0] == '[' && host[hl - 1] == ']') {
                host[hl - 1] = 0;
                if (inet_pton(AF_INET6, host + 1, &s6->sin6_addr) != 1)
                        return -EINVAL;
                s6->sin6_family = AF_INET6;
                s6->sin6_port = htons((uint16_t) port);
                *len = sizeof(*s6);
                return 0;
        }
        if (inet_pton(AF_INET, host, &s4->sin_addr) != 1)
                return -EINVAL;
        s4->sin_family = AF_INET;
        s4->sin_port = htons((uint16_t) port);
        *len = sizeof(*s4);
        return 0;
}

static bool is_loopback(const struct sockaddr_storage *ss) {
        if (ss->ss_family == AF_INET)
                return (ntohl(((const struct sockaddr_in *) ss)->sin_addr.s_addr) >> 24) == 127;
        return IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *) ss)->sin6_addr);
}

/* $VAR = "scheme://HOST:PORT[/]" → the proxy's address. */
static void proxy_from_env(const char *var, struct sockaddr_storage *ss, socklen_t *len) {
        const char *v = getenv(var);
        const char *p = v ? strstr(v, "://") : NULL;
        if (!p || parse_hostport(p + 3, ss, len) < 0)
                die("$%s is not scheme://ADDRESS:PORT (run inside `cordon run`)", var);
        if (!is_loopback(ss))
                die("$%s is not a loopback address", var);
}

/* ---- what the client sends and expects ------------------------------------------------------ */

/* NAME:PORT through getaddrinfo (IPv4: the sandbox's resolver gives A records). */
static void resolve_named(target *t, const char *hostport) {
        char host[256];
        const char *colon = strrchr(hostport, ':');
        if (!colon || (size_t) (colon - hostport) >= sizeof(host))
                die("%s: not NAME:PORT", hostport);
        memcpy(host, hostport, (size_t) (colon - hostport));
        host[colon - hostport] = 0;
        struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM }, *res;
        int e = getaddrinfo(host, colon + 1, &hints, &res);
        if (e != 0)
                die("%s: %s", host, gai_strerror(e));
        memcpy(&t->server, res->ai_addr, res->ai_addrlen);
        t->server_len = res->ai_addrlen;
        freeaddrinfo(res);
}

static void target_init(target *t, const char *vianame, const char *hostport) {
        static const char *const names[] = { "direct", "connect", "socks", "forward", "named" };
        size_t i = 0;
        while (i < 5 && strcmp(vianame, names[i]) != 0)
                i++;
        if (i == 5)
                die("VIA must be direct, connect, socks, forward or named");
        *t = (target){ .v = (via) i, .hostport = hostport };
        if (t->v == VIA_NAMED) {
                resolve_named(t, hostport);
                return;
        }
        if (parse_hostport(hostport, &t->server, &t->server_len) < 0 || !is_loopback(&t->server))
                die("%s: not a loopback ADDRESS:PORT", hostport);
        if (t->v == VIA_SOCKS && t->server.ss_family != AF_INET)
                die("socks: the server must be an IPv4 address");
        if (t->v == VIA_CONNECT || t->v == VIA_FORWARD)
                proxy_from_env("HTTP_PROXY", &t->proxy, &t->proxy_len);
        else if (t->v == VIA_SOCKS)
                proxy_from_env("ALL_PROXY", &t->proxy, &t->proxy_len);
}

static int handshake_steps(const target *t) {
        return t->v == VIA_CONNECT ? 1 : t->v == VIA_SOCKS ? 2 : 0;
}

/* The bytes of handshake step `step`. */
static size_t handshake_out(const target *t, int step, char *out, size_t cap) {
        if (t->v == VIA_CONNECT)
                return (size_t) snprintf(out, cap, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n",
                                         t->hostport, t->hostport);
        if (step == 0) {
                memcpy(out, "\x05\x01\x00", 3); /* VER, 1 method: no authentication */
                return 3;
        }
        const struct sockaddr_in *s4 = (const struct sockaddr_in *) &t->server;
        out[0] = 5, out[1] = 1, out[2] = 0, out[3] = 1; /* VER CONNECT RSV IPv4 */
        memcpy(out + 4, &s4->sin_addr, 4);
        memcpy(out + 8, &s4->sin_port, 2);
        return 10;
}

/* Judges the answer to step `step` received so far: > 0 complete and positive (bytes used),
 * 0 incomplete, -1 refused or malformed. */
static int handshake_in(const target *t, int step, const char *buf, size_t len) {
        if (t->v == VIA_CONNECT) {
                const char *end = memmem(buf, len, "\r\n\r\n", 4);
                if (!end)
                        return len >= HEAD_MAX ? -1 : 0;
                bool ok = len >= 12 && (memcmp(buf, "HTTP/1.1 200", 12) == 0 ||
                                        memcmp(buf, "HTTP/1.0 200", 12) == 0);
                return ok ? (int) (end + 4 - buf) : -1;
        }
        const uint8_t *b = (const uint8_t *) buf;
        if (step == 0)
                return len < 2 ? 0 : b[0] == 5 && b[1] == 0 ? 2 : -1;
        if (len < 5)
                return 0;
        if (b[0] != 5 || b[1] != 0)
                return -1;
        size_t need = b[3] == 1 ? 10 : b[3] == 4 ? 22 : b[3] == 3 ? 7u + b[4] : 0;
        if (need == 0)
                return -1;
        return len < need ? 0 : (int) need;
}

/* The HTTP request for `path` (absolute-form for the forward proxy). */
static size_t request_out(const target *t, const char *path, char *out, size_t cap) {
        return (size_t) snprintf(out, cap, "GET %s%s%s HTTP/1.1\r\nHost: %s\r\n"
                                 "Connection: close\r\n\r\n",
                                 t->v == VIA_FORWARD ? "http://" : "",
                                 t->v == VIA_FORWARD ? t->hostport : "", path, t->hostport);
}

/* ---- blocking client ------------------------------------------------------------------------ */

static int send_all(int fd, const char *p, size_t n) {
        while (n > 0) {
                ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return -errno;
                p += k, n -= (size_t) k;
        }
        return 0;
}

int dial(const target *t, bool nonblock) {
        bool to_server = t->v == VIA_DIRECT || t->v == VIA_NAMED;
        const struct sockaddr_storage *a = to_server ? &t->server : &t->proxy;
        socklen_t len = to_server ? t->server_len : t->proxy_len;
        int fd = socket(a->ss_family, SOCK_STREAM | SOCK_CLOEXEC | (nonblock ? SOCK_NONBLOCK : 0),
                        0);
        if (fd < 0)
                return -errno;
        int one = 1; /* like curl: small requests go out at once */
        (void) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        if (connect(fd, (const struct sockaddr *) a, len) < 0 && errno != EINPROGRESS) {
                int e = errno;
                close(fd);
                return -e;
        }
        return fd;
}

/* Connects, runs the proxy handshake and sends the request for `path`: the returned socket
 * carries the server's answer. */
static int open_stream(const target *t, const char *path) {
        char buf[HEAD_MAX];
        int fd = dial(t, false);
        if (fd < 0)
                return fd;
        for (int step = 0; step < handshake_steps(t); step++) {
                size_t n = handshake_out(t, step, buf, sizeof(buf)), got = 0;
                int r = send_all(fd, buf, n);
                while (r == 0) {
                        ssize_t k = recv(fd, buf + got, sizeof(buf) - got, 0);
                        if (k <= 0) {
                                r = k == 0 ? -ECONNRESET : -errno;
                                break;
                        }
                        got += (size_t) k;
                        int h = handshake_in(t, step, buf, got);
                        if (h < 0 || (h > 0 && (size_t) h != got))
                                r = -EPROTO;
                        else if (h > 0)
                                break;
                }
                if (r < 0) {
                        close(fd);
                        return r;
                }
        }
        int r = send_all(fd, buf, request_out(t, path, buf, sizeof(buf)));
        if (r < 0) {
                close(fd);
                return r;
        }
        return fd;
}

/* Reads an answer head (buf already holds `have` bytes of it): checks for 200, returns the
 * Content-Length and leaves the body bytes already read at buf[0..*body). */
static int read_head(int fd, char *buf, size_t cap, size_t have, uint64_t *clen, size_t *body) {
        const char *end;
        while (!(end = memmem(buf, have, "\r\n\r\n", 4))) {
                if (have == cap)
                        return -EPROTO;
                ssize_t k = recv(fd, buf + have, cap - have, 0);
                if (k <= 0)
                        return k == 0 ? -ECONNRESET : -errno;
                have += (size_t) k;
        }
        size_t hl = (size_t) (end + 4 - buf);
        if (hl < 12 || memcmp(buf + 8, " 200", 4) != 0)
                return -EPROTO;
        const char *cl = memmem(buf, hl, "\r\nContent-Length: ", 18);
        if (!cl)
                return -EPROTO;
        *clen = strtoull(cl + 18, NULL, 10);
        memmove(buf, buf + hl, have - hl);
        *body = have - hl;
        return 0;
}

static bool verify(uint64_t pos, const char *p, size_t n) {
        while (n > 0) {
                size_t off = (size_t) (pos % PATTERN_SIZE), k = PATTERN_SIZE - off;
                if (k > n)
                        k = n;
                if (memcmp(p, pattern + off, k) != 0)
                        return false;
                p += k, pos += k, n -= k;
        }
        return true;
}

/* ---- get: one download ---------------------------------------------------------------------- */

static int cmd_get(const target *t, uint64_t bytes, bool check) {
        char path[64];
        snprintf(path, sizeof(path), "/bytes/%llu", (unsigned long long) bytes);
        char *buf = malloc(RECV_BUF);
        if (!buf)
                die("out of memory");
        int64_t t0 = now_ns();
        int fd = open_stream(t, path);
        if (fd < 0)
                die("get: %s", strerror(-fd));
        uint64_t clen = 0, got = 0;
        size_t have = 0;
        int r = read_head(fd, buf, RECV_BUF, 0, &clen, &have);
        if (r < 0 || clen != bytes)
                die("get: bad answer head (%s)", r < 0 ? strerror(-r) : "length");
        int64_t t_head = now_ns();
        bool ok = !check || verify(0, buf, have);
        for (got = have; got < clen;) {
                ssize_t k = recv(fd, buf, RECV_BUF, 0);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        break;
                if (check && ok)
                        ok = verify(got, buf, (size_t) k);
                got += (size_t) k;
        }
        int64_t t1 = now_ns();
        close(fd);
        free(buf);
        printf("{\"bytes\": %llu, \"sec\": %.6f, \"head_ms\": %.3f, \"verified\": %s, "
               "\"ok\": %s}\n", (unsigned long long) got, (double) (t1 - t0) / 1e9,
               (double) (t_head - t0) / 1e6, check ? "true" : "false",
               got == clen && ok ? "true" : "false");
        return got == clen && ok ? 0 : 1;
}

/* ---- latency: fresh connections, each timed to the answer's first byte ---------------------- */

static int one_tiny(const target *t, double *us) {
        char buf[HEAD_MAX];
        int64_t t0 = now_ns();
        int fd = open_stream(t, "/tiny");
        if (fd < 0)
                return fd;
        ssize_t k;
        do
                k = recv(fd, buf, sizeof(buf), 0);
        while (k < 0 && errno == EINTR);
        int64_t t1 = now_ns();
        int r = k < 0 ? -errno : k == 0 ? -ECONNRESET : 0;
        uint64_t clen = 0;
        size_t body = 0;
        if (r == 0)
                r = read_head(fd, buf, sizeof(buf), (size_t) k, &clen, &body);
        while (r == 0 && body < clen && body < sizeof(buf)) {
                k = recv(fd, buf + body, sizeof(buf) - body, 0);
                if (k <= 0)
                        r = -EPROTO;
                else
                        body += (size_t) k;
        }
        if (r == 0 && (clen != 2 || body != 2 || memcmp(buf, "ok", 2) != 0))
                r = -EPROTO;
        close(fd);
        *us = (double) (t1 - t0) / 1e3;
        return r;
}

static int cmd_latency(const target *t, int count, int warmup) {
        double *us = calloc((size_t) count, sizeof(*us));
        if (!us)
                die("out of memory");
        int errors = 0, first_error = 0;
        for (int i = 0; i < warmup + count; i++) {
                double x = 0;
                int r = one_tiny(t, &x);
                if (r < 0 && !first_error)
                        first_error = -r;
                if (i >= warmup) {
                        us[i - warmup] = x;
                        errors += r < 0;
                }
        }
        printf("{\"errors\": %d, \"first_error\": \"%s\", \"us\": [", errors,
               first_error ? strerror(first_error) : "");
        for (int i = 0; i < count; i++)
                printf("%s%.1f", i ? ", " : "", us[i]);
        printf("]}\n");
        free(us);
        return errors ? 1 : 0;
}

/* ---- tunnels: many at once, each echoing a payload that is checked byte for byte ------------- */

typedef enum tstate { T_CONNECTING, T_HANDSHAKE, T_OPEN, T_ECHO, T_DONE, T_FAILED } tstate;

typedef struct tunnel {
        int fd;
        tstate st;
        int step;
        uint32_t events;
        char in[HEAD_MAX];        /* handshake answers */
        size_t in_len;
        char head[128];           /* the echo request */
        size_t head_len, head_off;
        size_t off;               /* this tunnel's payload: pattern[off .. off + payload) */
        size_t sent, recvd;
        const char *err;
} tunnel;

typedef struct tset {
        const target *t;
        tunnel *v;
        size_t n, payload, pending;
        int ep;
        double lat_before, lat_open; /* tun_latency() before the tunnels and with all open */
} tset;

static void tun_watch(tset *s, tunnel *u, uint32_t events) {
        if (u->events == events)
                return;
        struct epoll_event ev = { .events = events, .data.u64 = (uint64_t) (u - s->v) };
        if (epoll_ctl(s->ep, u->events ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, u->fd, &ev) < 0)
                die("epoll_ctl: %s", strerror(errno));
        u->events = events;
}

static void tun_end(tset *s, tunnel *u, tstate st, const char *why) {
        u->st = st;
        u->err = why;
        if (u->fd >= 0)
                close(u->fd);
        u->fd = -1;
        s->pending--;
}

static void tun_send_step(tset *s, tunnel *u) {
        char out[HEAD_MAX];
        size_t n = handshake_out(s->t, u->step, out, sizeof(out));
        /* A few dozen bytes on a fresh socket: a short send would be a bug somewhere. */
        if (send(u->fd, out, n, MSG_NOSIGNAL) != (ssize_t) n) {
                tun_end(s, u, T_FAILED, "handshake send");
                return;
        }
        u->in_len = 0;
        tun_watch(s, u, EPOLLIN);
}

static void tun_opened(tset *s, tunnel *u) {
        u->st = T_OPEN;
        s->pending--;
        tun_watch(s, u, EPOLLIN); /* anything arriving while idle is an error */
}

static void tun_on_connect(tset *s, tunnel *u) {
        int err = 0;
        socklen_t len = sizeof(err);
        if (getsockopt(u->fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0 || err) {
                tun_end(s, u, T_FAILED, "connect");
                return;
        }
        u->st = T_HANDSHAKE;
        if (handshake_steps(s->t) == 0)
                tun_opened(s, u);
        else
                tun_send_step(s, u);
}

static void tun_on_handshake(tset *s, tunnel *u) {
        ssize_t k = recv(u->fd, u->in + u->in_len, sizeof(u->in) - u->in_len, 0);
        if (k < 0 && (errno == EAGAIN || errno == EINTR))
                return;
        if (k <= 0) {
                tun_end(s, u, T_FAILED, "closed during handshake");
                return;
        }
        u->in_len += (size_t) k;
        int h = handshake_in(s->t, u->step, u->in, u->in_len);
        if (h < 0 || (h > 0 && (size_t) h != u->in_len)) {
                tun_end(s, u, T_FAILED, "handshake refused");
                return;
        }
        if (h == 0)
                return;
        if (++u->step < handshake_steps(s->t))
                tun_send_step(s, u);
        else
                tun_opened(s, u);
}

static void tun_on_writable(tset *s, tunnel *u) {
        while (u->head_off < u->head_len || u->sent < s->payload) {
                const char *p = u->head_off < u->head_len ? u->head + u->head_off
                                                          : (const char *) pattern + u->off + u->sent;
                size_t n = u->head_off < u->head_len ? u->head_len - u->head_off
                                                     : s->payload - u->sent;
                ssize_t k = send(u->fd, p, n, MSG_NOSIGNAL);
                if (k < 0 && (errno == EAGAIN || errno == EINTR))
                        return;
                if (k < 0) {
                        tun_end(s, u, T_FAILED, "send");
                        return;
                }
                if (u->head_off < u->head_len)
                        u->head_off += (size_t) k;
                else
                        u->sent += (size_t) k;
        }
        /* All sent: the half-close travels through the tunnel and ends the server's echo. */
        if (shutdown(u->fd, SHUT_WR) < 0) {
                tun_end(s, u, T_FAILED, "shutdown");
                return;
        }
        tun_watch(s, u, EPOLLIN);
}

static void tun_on_readable(tset *s, tunnel *u) {
        char buf[ECHO_BUF];
        ssize_t k = recv(u->fd, buf, sizeof(buf), 0);
        if (k < 0 && (errno == EAGAIN || errno == EINTR))
                return;
        if (k < 0)
                tun_end(s, u, T_FAILED, "reset");
        else if (k == 0)
                tun_end(s, u, u->recvd == s->payload ? T_DONE : T_FAILED,
                        u->recvd == s->payload ? NULL : "short echo");
        else if (u->recvd + (size_t) k > s->payload)
                tun_end(s, u, T_FAILED, "long echo");
        else if (memcmp(buf, pattern + u->off + u->recvd, (size_t) k) != 0)
                tun_end(s, u, T_FAILED, "corrupt echo");
        else
                u->recvd += (size_t) k;
}

static void tun_event(tset *s, tunnel *u, uint32_t events) {
        switch (u->st) {
        case T_CONNECTING:
                tun_on_connect(s, u);
                break;
        case T_HANDSHAKE:
                tun_on_handshake(s, u);
                break;
        case T_OPEN:
                tun_end(s, u, T_FAILED, "closed while idle");
                s->pending++; /* it was not pending: the phase's count stays right */
                break;
        case T_ECHO:
                if ((events & EPOLLOUT) && u->fd >= 0)
                        tun_on_writable(s, u);
                if ((events & (EPOLLIN | EPOLLHUP | EPOLLERR)) && u->fd >= 0 && u->st == T_ECHO)
                        tun_on_readable(s, u);
                break;
        case T_DONE:
        case T_FAILED:
        default:
                break;
        }
}

/* Runs the event loop until every tunnel has left the phase (or timeout_ms passed); the ones
 * still pending then fail with `why`. Returns the phase's duration in ms. */
static double tun_run(tset *s, int timeout_ms, tstate pending_state, const char *why) {
        int64_t t0 = now_ns(), limit = t0 + (int64_t) timeout_ms * 1000000;
        struct epoll_event evs[256];
        while (s->pending > 0 && now_ns() < limit) {
                int k = epoll_wait(s->ep, evs, 256, 100);
                if (k < 0 && errno != EINTR)
                        die("epoll_wait: %s", strerror(errno));
                for (int i = 0; i < k; i++)
                        tun_event(s, &s->v[evs[i].data.u64], evs[i].events);
        }
        double ms = (double) (now_ns() - t0) / 1e6;
        for (size_t i = 0; i < s->n; i++)
                if (s->v[i].st == pending_state ||
                    (pending_state == T_HANDSHAKE && s->v[i].st == T_CONNECTING))
                        tun_end(s, &s->v[i], T_FAILED, why);
        return ms;
}

#define TUN_LATENCY_CONNS 100

/* The median of TUN_LATENCY_CONNS fresh connections' latencies (as `latency` times them) through
 * the same proxy, in µs; -1 when one failed. */
static double tun_latency(const target *t) {
        double us[TUN_LATENCY_CONNS];
        for (int i = 0; i < 10; i++) /* untimed warm-up, as `latency` has */
                if (one_tiny(t, &us[0]) < 0)
                        return -1;
        for (int i = 0; i < TUN_LATENCY_CONNS; i++)
                if (one_tiny(t, &us[i]) < 0)
                        return -1;
        for (int i = 1; i < TUN_LATENCY_CONNS; i++) /* insertion sort: a hundred values */
                for (int j = i; j > 0 && us[j - 1] > us[j]; j--) {
                        double x = us[j];
                        us[j] = us[j - 1];
                        us[j - 1] = x;
                }
        return (us[TUN_LATENCY_CONNS / 2 - 1] + us[TUN_LATENCY_CONNS / 2]) / 2;
}

static void tun_print(const tset *s, const char *phase, tstate good, double ms) {
        size_t ok = 0, failed = 0;
        for (size_t i = 0; i < s->n; i++) {
                ok += s->v[i].st == good;
                failed += s->v[i].st == T_FAILED;
        }
        printf("{\"phase\": \"%s\", \"ok\": %zu, \"failed\": %zu, \"ms\": %.1f, \"errors\": {",
               phase, ok, failed, ms);
        /* One entry per distinct reason (reasons are static strings). */
        bool first = true;
        for (size_t i = 0; i < s->n; i++) {
                const char *e = s->v[i].err;
                bool seen = false;
                for (size_t j = 0; j < i && !seen; j++)
                        seen = s->v[j].err == e;
                if (!e || seen)
                        continue;
                size_t c = 0;
                for (size_t j = i; j < s->n; j++)
                        c += s->v[j].err == e;
                printf("%s\"%s\": %zu", first ? "" : ", ", e, c);
                first = false;
        }
        printf("}, \"latency_us\": {\"before\": %.1f, \"open\": %.1f}}\n", s->lat_before,
               s->lat_open);
        fflush(stdout);
}

/* Waits for a line on stdin: bench/net.py samples the proxy's memory between phases. */
static void wait_go(void) {
        char line[64];
        if (!fgets(line, sizeof(line), stdin))
                clearerr(stdin);
}

static void tun_start_echo(tset *s) {
        s->pending = 0;
        for (size_t i = 0; i < s->n; i++) {
                tunnel *u = &s->v[i];
                if (u->st != T_OPEN)
                        continue;
                u->st = T_ECHO;
                u->head_len = (size_t) snprintf(u->head, sizeof(u->head),
                                                "GET /echo HTTP/1.1\r\nHost: %s\r\n\r\n",
                                                s->t->hostport);
                s->pending++;
                tun_watch(s, u, EPOLLIN | EPOLLOUT);
        }
}

static int cmd_tunnels(const target *t, size_t n, size_t payload) {
        if (t->v == VIA_FORWARD)
                die("tunnels: forward mode has no tunnels (use connect or socks)");
        if (n == 0 || n > MAX_TUNNELS || payload == 0 || payload > PATTERN_SIZE / 2)
                die("tunnels: COUNT 1..%d, PAYLOAD 1..%u", MAX_TUNNELS, PATTERN_SIZE / 2);
        tset s = { .t = t, .n = n, .payload = payload, .pending = n };
        s.v = calloc(n, sizeof(*s.v));
        s.ep = epoll_create1(EPOLL_CLOEXEC);
        if (!s.v || s.ep < 0)
                die("tunnels: %s", strerror(errno));
        printf("{\"phase\": \"start\"}\n");
        fflush(stdout);
        wait_go();
        s.lat_before = tun_latency(t);
        int64_t t0 = now_ns();
        for (size_t i = 0; i < n; i++) {
                tunnel *u = &s.v[i];
                u->off = (i * 7919u * 64u) % (PATTERN_SIZE - payload);
                u->fd = dial(t, true);
                if (u->fd < 0) {
                        u->st = T_FAILED, u->err = "socket/connect", s.pending--;
                        continue;
                }
                tun_watch(&s, u, EPOLLOUT);
        }
        (void) tun_run(&s, 60000, T_HANDSHAKE, "handshake timeout");
        double open_ms = (double) (now_ns() - t0) / 1e6;
        s.lat_open = tun_latency(t); /* a new connection's latency with all of them open */
        tun_print(&s, "open", T_OPEN, open_ms);
        wait_go();
        tun_start_echo(&s);
        double ms = tun_run(&s, 60000, T_ECHO, "echo timeout");
        tun_print(&s, "echo", T_DONE, ms);
        wait_go();
        size_t failed = 0;
        for (size_t i = 0; i < n; i++) {
                failed += s.v[i].st == T_FAILED;
                if (s.v[i].fd >= 0)
                        close(s.v[i].fd);
        }
        close(s.ep);
        free(s.v);
        return failed ? 1 : 0;
}

/* ---- main ----------------------------------------------------------------------------------- */

static uint64_t parse_u64(const char *s) {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(s, &end, 10);
        if (errno || *end || end == s)
                die("%s: not a number", s);
        return v;
}

int main(int argc, char **argv) {
        raise_nofile();
        if (argc == 2 && strcmp(argv[1], "serve") == 0)
                return cmd_serve();
        if (argc == 3 && strcmp(argv[1], "relay") == 0) {
                target t;
                target_init(&t, "direct", argv[2]);
                return cmd_relay(&t);
        }
        if (argc < 5)
                die("usage: netload serve | relay HOST:PORT | get VIA HOST:PORT BYTES [verify] | "
                    "latency VIA HOST:PORT COUNT WARMUP | tunnels VIA HOST:PORT COUNT PAYLOAD");
        pattern = malloc(PATTERN_SIZE);
        if (!pattern)
                die("out of memory");
        pattern_fill(pattern);
        target t;
        target_init(&t, argv[2], argv[3]);
        uint64_t a = parse_u64(argv[4]);
        if (strcmp(argv[1], "get") == 0)
                return cmd_get(&t, a, argc > 5 && strcmp(argv[5], "verify") == 0);
        if (strcmp(argv[1], "latency") == 0 && argc == 6 && a > 0 && a < 1000000)
                return cmd_latency(&t, (int) a, (int) parse_u64(argv[5]) % 100000);
        if (strcmp(argv[1], "tunnels") == 0 && argc == 6)
                return cmd_tunnels(&t, (size_t) a, (size_t) parse_u64(argv[5]));
        die("bad arguments (see the comment at the top of bench/netload.c)");
}
