/* SPDX-License-Identifier: Apache-2.0 */
/* Established tunnels (HTTP CONNECT, SOCKS5 CONNECT): bytes move socket → pipe → socket with
 * splice(2), so the payload is never copied into the proxy's memory; that is what keeps a
 * download through the proxy close to a direct one (bench/, BENCHMARKS.md).
 *
 * Each direction is a small state machine: read from the source only while its pipe is empty
 * (so EAGAIN from a read means "the socket has nothing", never "the pipe is full"), write the
 * pipe to the destination until it is empty, and after the source's EOF shut the destination
 * down for writing (half-close, which TLS and ssh use). Bytes queued before the tunnel started
 * (the "200 Connection established" answer, a TLS ClientHello the client sent early) go first. */
#include "net/proxy-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util/util.h"

/* Pipes. A direction holds a pipe only while it moves bytes: it makes one when its source has
 * something to read and gives it back once a wake-up left it empty having moved less than
 * PIPE_GROW_AFTER (an idle or interactive tunnel), or once the source's EOF went on. A tunnel
 * waiting for bytes holds its two sockets and nothing else: with 3,330 idle tunnels the proxy's
 * 20,000 descriptors were spent (two sockets and four pipe ends each) and the pipes' capacity
 * was 21,544 pages, past the user's whole budget (below); now an idle tunnel costs two
 * descriptors and no pipe (bench/net.py, BENCHMARKS.md "Scale"). A busy direction keeps its
 * pipe from one wake-up to the next, so a download pays no pipe creation per wake-up.
 *
 * Sizes. A new pipe holds PIPE_SIZE_IDLE (a whole TLS record per splice); a direction that moves
 * at least PIPE_GROW_AFTER in one wake-up (a download, an upload) grows its pipe to
 * PROXY_PIPE_SIZE, for fewer splices and wake-ups per megabyte.
 *
 * Why not PROXY_PIPE_SIZE from the start: the kernel charges pipe capacity to the owning user
 * (fs.pipe-user-pages-soft, 16,384 pages by default), and the proxies of all sessions run as
 * the same user. Once that budget is spent, new pipes get two pages and cannot grow. With
 * 256 KiB pipes it was spent at the 129th tunnel, so a command holding many idle connections
 * halved the download speed of every other session on the machine (bench/net.py,
 * BENCHMARKS.md). With 16 KiB pipes about 2,000 idle tunnels fit in the budget, and only bulk
 * transfers, few at a time, take the large size. */
#define PIPE_SIZE_IDLE (16 * 1024)
#define PIPE_GROW_AFTER (64 * 1024)

static int pipe_new(splice_dir *d) {
        if (d->pipe[0] >= 0)
                return 0;
        if (pipe2(d->pipe, O_NONBLOCK | O_CLOEXEC) < 0)
                return -errno;
        /* Shrinking an empty pipe always succeeds; one created over budget (two pages) cannot
         * grow and keeps its size. */
        (void) fcntl(d->pipe[1], F_SETPIPE_SZ, PIPE_SIZE_IDLE);
        return 0;
}

/* Fails (EPERM) while the per-user budget is spent: the pipe keeps its size, which only costs
 * speed, and the next busy wake-up tries again. For a pipe that already has the size the kernel
 * only rebuilds its slot array: one cheap call per busy wake-up, no state to keep. */
static void pipe_grow(splice_dir *d) {
        (void) fcntl(d->pipe[1], F_SETPIPE_SZ, PROXY_PIPE_SIZE);
}

/* pump() gives back only an empty pipe (what is in one has not reached the destination yet);
 * tunnel_free() any, with the connection. */
static void pipe_release(splice_dir *d) {
        for (int k = 0; k < 2; k++)
                if (d->pipe[k] >= 0) {
                        (void) close(d->pipe[k]);
                        d->pipe[k] = -1;
                }
}

void tunnel_free(conn *c) {
        pipe_release(&c->c2u);
        pipe_release(&c->u2c);
}

typedef enum pump_wait {
        PUMP_WAIT_SRC,  /* needs the source readable */
        PUMP_WAIT_DST,  /* needs the destination writable */
        PUMP_DONE,      /* EOF forwarded */
        PUMP_ERROR,
} pump_wait;

/* Moves as much as possible in one direction, adding the bytes read to *moved; says what it
 * waits for next. */
static pump_wait pump_rounds(splice_dir *d, int src, int dst, outq *pre, size_t *moved) {
        for (int round = 0; round < 16; round++) {
                if (pre->len > pre->off) {
                        int r = outq_flush(pre, dst);
                        if (r < 0)
                                return PUMP_ERROR;
                        if (r == 0)
                                return PUMP_WAIT_DST;
                }
                while (d->in_pipe > 0) {
                        ssize_t n = splice(d->pipe[0], NULL, dst, NULL, d->in_pipe,
                                           SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
                        if (n < 0 && errno == EINTR)
                                continue;
                        if (n < 0)
                                return errno == EAGAIN ? PUMP_WAIT_DST : PUMP_ERROR;
                        d->in_pipe -= (size_t) n;
                }
                if (d->src_eof) {
                        if (!d->done && shutdown(dst, SHUT_WR) < 0 && errno != ENOTCONN)
                                return PUMP_ERROR;
                        d->done = true;
                        return PUMP_DONE;
                }
                if (d->pipe[0] < 0) {
                        /* No pipe: one is made only once the source has bytes (this peek costs
                         * what the splice's EAGAIN did when every tunnel held its pipes). */
                        char b;
                        ssize_t k = recv(src, &b, 1, MSG_PEEK | MSG_DONTWAIT);
                        if (k < 0 && errno == EINTR)
                                continue;
                        if (k < 0)
                                return errno == EAGAIN ? PUMP_WAIT_SRC : PUMP_ERROR;
                        if (k == 0) {
                                d->src_eof = true;
                                continue;
                        }
                        if (pipe_new(d) < 0)
                                return PUMP_ERROR; /* no descriptor for it: the tunnel ends */
                }
                ssize_t n = splice(src, NULL, d->pipe[1], NULL, PROXY_PIPE_SIZE,
                                   SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return errno == EAGAIN ? PUMP_WAIT_SRC : PUMP_ERROR;
                if (n == 0)
                        d->src_eof = true;
                d->in_pipe += (size_t) n;
                *moved += (size_t) n;
        }
        /* A busy direction yields to the other connections; level-triggered epoll brings it
         * back at once. */
        return d->in_pipe > 0 ? PUMP_WAIT_DST : PUMP_WAIT_SRC;
}

static pump_wait pump(splice_dir *d, int src, int dst, outq *pre) {
        size_t moved = 0;
        pump_wait w = pump_rounds(d, src, dst, pre, &moved);
        bool busy = moved >= PIPE_GROW_AFTER;
        if (d->in_pipe == 0 && (w == PUMP_DONE || (w == PUMP_WAIT_SRC && !busy)))
                pipe_release(d);
        else if (busy && (w == PUMP_WAIT_SRC || w == PUMP_WAIT_DST))
                pipe_grow(d);
        return w;
}

static void tunnel_pump(conn *c) {
        pump_wait up = pump(&c->c2u, c->cl.fd, c->up.fd, &c->to_upstream);
        pump_wait down = pump(&c->u2c, c->up.fd, c->cl.fd, &c->to_client);
        if (up == PUMP_ERROR || down == PUMP_ERROR || (up == PUMP_DONE && down == PUMP_DONE)) {
                conn_close(c);
                return;
        }
        uint32_t cl = (up == PUMP_WAIT_SRC ? EPOLLIN : 0) | (down == PUMP_WAIT_DST ? EPOLLOUT : 0);
        uint32_t ue = (down == PUMP_WAIT_SRC ? EPOLLIN : 0) | (up == PUMP_WAIT_DST ? EPOLLOUT : 0);
        if (conn_watch(c, &c->cl, cl) < 0 || conn_watch(c, &c->up, ue) < 0)
                conn_close(c);
}

int tunnel_start(conn *c) {
        int r;
        c->state = CS_TUNNEL;
        conn_deadline(c, 0);
        /* A relay passes each write on as it comes: with Nagle on its sockets, the second
         * small segment of a response (its body after its head) waited for the client's delayed
         * ACK, 40 ms per request on a kept-alive tunnel. The endpoints chose their own
         * coalescing; the relay adds none. */
        static const int one = 1;
        (void) setsockopt(c->cl.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        (void) setsockopt(c->up.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        /* Bytes the client sent after its request head belong to the tunnel. */
        if (c->in_len > 0) {
                r = outq_push(&c->to_upstream, c->in, c->in_len);
                if (r < 0)
                        return r;
                c->in_len = 0;
        }
        /* A tunnel never parses again: its request buffers go now, not when it closes (with
         * 1,000 CONNECT tunnels open they were most of the proxy's memory). */
        free(c->in);
        c->in = NULL;
        c->in_cap = 0;
        free(c->req);
        c->req = NULL;
        free(c->uin);
        c->uin = NULL;
        c->uin_len = c->uin_cap = 0;
        tunnel_pump(c);
        return 0;
}

void tunnel_on_event(conn *c, endpoint *e, uint32_t events) {
        (void) e;
        (void) events;
        tunnel_pump(c);
}
