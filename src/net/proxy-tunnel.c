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
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util/util.h"

static int pipe_new(splice_dir *d) {
        if (pipe2(d->pipe, O_NONBLOCK | O_CLOEXEC) < 0)
                return -errno;
        /* Larger pipes mean fewer wake-ups per megabyte; the default (64 KiB) is kept when the
         * per-user pipe budget is spent, which only costs speed. */
        (void) fcntl(d->pipe[1], F_SETPIPE_SZ, PROXY_PIPE_SIZE);
        return 0;
}

void tunnel_free(conn *c) {
        splice_dir *dirs[] = { &c->c2u, &c->u2c };
        for (size_t i = 0; i < ELEMENTSOF(dirs); i++)
                for (int k = 0; k < 2; k++)
                        if (dirs[i]->pipe[k] >= 0) {
                                (void) close(dirs[i]->pipe[k]);
                                dirs[i]->pipe[k] = -1;
                        }
}

typedef enum pump_wait {
        PUMP_WAIT_SRC,  /* needs the source readable */
        PUMP_WAIT_DST,  /* needs the destination writable */
        PUMP_DONE,      /* EOF forwarded */
        PUMP_ERROR,
} pump_wait;

/* Moves as much as possible in one direction; says what it waits for next. */
static pump_wait pump(splice_dir *d, int src, int dst, outq *pre) {
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
                ssize_t n = splice(src, NULL, d->pipe[1], NULL, PROXY_PIPE_SIZE,
                                   SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return errno == EAGAIN ? PUMP_WAIT_SRC : PUMP_ERROR;
                if (n == 0)
                        d->src_eof = true;
                d->in_pipe += (size_t) n;
        }
        /* A busy direction yields to the other connections; level-triggered epoll brings it
         * back at once. */
        return d->in_pipe > 0 ? PUMP_WAIT_DST : PUMP_WAIT_SRC;
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
        int r = pipe_new(&c->c2u);
        if (r >= 0)
                r = pipe_new(&c->u2c);
        if (r < 0)
                return r;
        c->state = CS_TUNNEL;
        c->deadline = 0;
        /* Bytes the client sent after its request head belong to the tunnel. */
        if (c->in_len > 0) {
                r = outq_push(&c->to_upstream, c->in, c->in_len);
                if (r < 0)
                        return r;
                c->in_len = 0;
        }
        tunnel_pump(c);
        return 0;
}

void tunnel_on_event(conn *c, endpoint *e, uint32_t events) {
        (void) e;
        (void) events;
        tunnel_pump(c);
}
