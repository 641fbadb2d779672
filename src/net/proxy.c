/* SPDX-License-Identifier: Apache-2.0 */
/* The egress proxy's event loop: one thread, level-triggered epoll, every socket non-blocking.
 * Accepts on the listeners, hands each connection to its protocol (proxy-http.c,
 * proxy-socks.c), enforces the time limits, and frees closed connections at the end of each
 * iteration (so no handler ever touches a freed connection). Why epoll and splice(2) rather
 * than an event library: docs/design/network.md. */
#include "net/name-map.h"
#include "net/proxy-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "report/report.h"
#include "util/util.h"


/* ---- byte queues ---------------------------------------------------------------------------- */

int outq_push(outq *q, const void *data, size_t len) {
        if (q->off == q->len)
                q->off = q->len = 0;
        if (q->len + len > q->cap) {
                size_t cap = q->cap ? q->cap : 4096;
                while (cap < q->len + len)
                        cap *= 2;
                char *nb = realloc(q->buf, cap);
                if (!nb)
                        return -ENOMEM;
                q->buf = nb;
                q->cap = cap;
        }
        memcpy(q->buf + q->len, data, len);
        q->len += len;
        return 0;
}

int outq_flush(outq *q, int fd) {
        while (q->off < q->len) {
                ssize_t n = send(fd, q->buf + q->off, q->len - q->off, MSG_NOSIGNAL);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return errno == EAGAIN ? 0 : -errno;
                q->off += (size_t) n;
        }
        q->off = q->len = 0;
        return 1;
}

void outq_free(outq *q) {
        free(q->buf);
        *q = (outq){ 0 };
}

/* ---- connections ---------------------------------------------------------------------------- */

int conn_watch(conn *c, endpoint *e, uint32_t events) {
        if (e->fd < 0 || e->events == events)
                return 0;
        struct epoll_event ev = { .events = events, .data.ptr = e };
        int op = e->events == 0 ? EPOLL_CTL_ADD : events == 0 ? EPOLL_CTL_DEL : EPOLL_CTL_MOD;
        if (epoll_ctl(c->px->epfd, op, e->fd, &ev) < 0)
                return -errno;
        e->events = events;
        return 0;
}

static void endpoint_close(proxy *px, endpoint *e) {
        if (e->fd < 0)
                return;
        if (e->events)
                (void) epoll_ctl(px->epfd, EPOLL_CTL_DEL, e->fd, NULL);
        (void) close(e->fd);
        e->fd = -1;
        e->events = 0;
}

void conn_deadline(conn *c, int64_t when) {
        proxy *px = c->px;
        c->deadline = when;
        /* Only expire() takes a connection off the list: a deadline cleared while it walks the
         * list (decide() clears those of every connection asking for the same destination)
         * never unlinks the node it is about to visit. */
        if (!when || c->timed)
                return;
        c->tprev = NULL;
        c->tnext = px->timed;
        if (px->timed)
                px->timed->tprev = c;
        px->timed = c;
        c->timed = true;
}

static void timed_unlink(conn *c) {
        if (!c->timed)
                return;
        if (c->tprev)
                c->tprev->tnext = c->tnext;
        else
                c->px->timed = c->tnext;
        if (c->tnext)
                c->tnext->tprev = c->tprev;
        c->tprev = c->tnext = NULL;
        c->timed = false;
}

void conn_close(conn *c) {
        if (c->dead)
                return;
        c->dead = true;
        c->dnext = c->px->dead;
        c->px->dead = c;
        endpoint_close(c->px, &c->cl);
        endpoint_close(c->px, &c->up);
        tunnel_free(c);
}

/* A final answer (a refusal, the last response of a connection the client asked to close) is
 * flushed, then the connection lingers instead of closing at once. A client still sending (the
 * body of a chunked upload to a refused port) has unread bytes in our receive queue, and closing
 * a socket with unread input sends a reset that can overtake the answer: the client would see
 * "connection reset" instead of the 403 whose X-Cordon-Error names the rule that refused it. So
 * the proxy shuts its side down for writing and reads and discards what still arrives, closing at
 * the client's EOF, after PROXY_LINGER_MS, or after PROXY_LINGER_MAX bytes — a client cannot hold
 * the connection open by sending forever. */
static void conn_linger(conn *c) {
        c->state = CS_LINGER;
        conn_deadline(c, c->px->now + PROXY_LINGER_MS);
        c->linger_left = PROXY_LINGER_MAX;
        endpoint_close(c->px, &c->up); /* nothing more goes to or comes from the upstream */
        if (shutdown(c->cl.fd, SHUT_WR) < 0 || conn_watch(c, &c->cl, EPOLLIN | EPOLLRDHUP) < 0)
                conn_close(c);
}

void conn_finish(conn *c) {
        c->state = CS_CLOSING;
        int r = outq_flush(&c->to_client, c->cl.fd);
        if (r < 0)
                conn_close(c);
        else if (r == 1)
                conn_linger(c);
        else if (conn_watch(c, &c->cl, EPOLLOUT) < 0)
                conn_close(c);
}

static void linger_on_client(conn *c) {
        char sink[16384];
        for (;;) {
                ssize_t n = recv(c->cl.fd, sink, sizeof(sink), 0);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 && errno == EAGAIN)
                        return;
                if (n <= 0 || (size_t) n >= c->linger_left) {
                        conn_close(c);
                        return;
                }
                c->linger_left -= (size_t) n;
        }
}

static void conn_free(conn *c) {
        free(c->reason);
        tls_conn_free(c);
        upstream_free(c);
        outq_free(&c->to_client);
        outq_free(&c->to_upstream);
        free(c->in);
        free(c->uin);
        free(c->req);
        free(c);
}

void conn_set_target(conn *c, const net_host *h, uint16_t port) {
        c->host = *h;
        c->port = port;
        (void) snprintf(c->target, sizeof(c->target),
                        h->kind == NET_HOST_IPV6 ? "[%s]:%u" : "%s:%u", h->text, (unsigned) port);
}

/* Every refusal is reported before the client learns of it, so a command that exits as soon as
 * it sees the 403 cannot end the run before the launcher has the violation. */
void conn_report(conn *c, const char *proto, const char *rule) {
        int fd = c->px->cfg->report_fd;
        if (fd >= 0)
                report_net_violation(fd, proto, c->target, rule, c->client, c->reason);
}

void conn_reset(conn *c) {
        struct linger l = { .l_onoff = 1, .l_linger = 0 };
        if (c->cl.fd >= 0)
                (void) setsockopt(c->cl.fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
        conn_close(c);
}

const char *conn_proto_name(const conn *c) {
        switch (c->proto) {
        case PROXY_LISTENER_HTTP:
                return "http";
        case PROXY_LISTENER_TRANSPARENT:
                return "tcp";
        case PROXY_LISTENER_SOCKS5:
        case PROXY_LISTENER_DNS:
        default:
                return "socks5";
        }
}

ssize_t conn_read_client(conn *c, size_t cap) {
        if (c->in_cap < cap) {
                char *nb = realloc(c->in, cap);
                if (!nb)
                        return -ENOMEM;
                c->in = nb;
                c->in_cap = cap;
        }
        if (c->in_len >= cap)
                return -ENOBUFS;
        for (;;) {
                ssize_t n = recv(c->cl.fd, c->in + c->in_len, cap - c->in_len, 0);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                c->in_len += (size_t) n;
                return n;
        }
}

void conn_consume_in(conn *c, size_t n) {
        if (n >= c->in_len) {
                c->in_len = 0;
                return;
        }
        memmove(c->in, c->in + n, c->in_len - n);
        c->in_len -= n;
}

/* ---- dispatch ------------------------------------------------------------------------------- */

void proto_connected(conn *c) {
        switch (c->proto) {
        case PROXY_LISTENER_HTTP:
                http_connected(c);
                return;
        case PROXY_LISTENER_TRANSPARENT:
                transparent_connected(c);
                return;
        case PROXY_LISTENER_SOCKS5:
        case PROXY_LISTENER_DNS:
        default:
                socks_connected(c);
                return;
        }
}

void proto_refused(conn *c, const char *rule) {
        switch (c->proto) {
        case PROXY_LISTENER_HTTP:
                http_refused(c, rule);
                return;
        case PROXY_LISTENER_TRANSPARENT:
                transparent_refused(c, rule);
                return;
        case PROXY_LISTENER_SOCKS5:
        case PROXY_LISTENER_DNS:
        default:
                socks_refused(c, rule);
                return;
        }
}

void proto_dial_failed(conn *c, int err, bool resolve_failed) {
        switch (c->proto) {
        case PROXY_LISTENER_HTTP:
                http_dial_failed(c, err, resolve_failed);
                return;
        case PROXY_LISTENER_TRANSPARENT:
                transparent_dial_failed(c, err, resolve_failed);
                return;
        case PROXY_LISTENER_SOCKS5:
        case PROXY_LISTENER_DNS:
        default:
                socks_dial_failed(c, err, resolve_failed);
                return;
        }
}

static void on_conn_event(conn *c, endpoint *e, uint32_t events) {
        if (c->dead)
                return;
        if (c->state == CS_TUNNEL) {
                tunnel_on_event(c, e, events);
                return;
        }
        if (c->state == CS_INSPECT) {
                inspect_on_event(c, e, events);
                return;
        }
        if (c->state == CS_TLS) {
                tls_on_event(c, e, events);
                return;
        }
        if (c->state == CS_CLOSING && e->kind == EP_CLIENT) {
                if (events & EPOLLOUT)
                        conn_finish(c);
                return;
        }
        if (c->state == CS_LINGER) {
                if (e->kind == EP_CLIENT)
                        linger_on_client(c);
                return;
        }
        if (e->kind == EP_UPSTREAM && c->state == CS_CONNECTING) {
                dial_on_writable(c);
                return;
        }
        if (c->state == CS_UPSTREAM) {
                if (e->kind == EP_UPSTREAM)
                        upstream_on_event(c, events);
                return;
        }
        if (c->state == CS_ASKING)
                return; /* nothing is watched while held (proxy-ask.c) */
        if (c->proto == PROXY_LISTENER_TRANSPARENT)
                return; /* nothing is read before the tunnel (proxy-transparent.c) */
        if (c->proto == PROXY_LISTENER_SOCKS5)
                socks_on_client(c, events);
        else if (e->kind == EP_CLIENT)
                http_on_client(c, events);
        else
                http_on_upstream(c, events);
}

static conn *conn_new(proxy *px, int fd, proxy_listener_kind kind) {
        conn *c = calloc(1, sizeof(*c));
        if (!c)
                return NULL;
        c->px = px;
        c->id = ++px->next_id;
        c->proto = kind;
        c->cl = (endpoint){ .kind = EP_CLIENT, .c = c, .fd = fd };
        c->up = (endpoint){ .kind = EP_UPSTREAM, .c = c, .fd = -1 };
        c->c2u.pipe[0] = c->c2u.pipe[1] = c->u2c.pipe[0] = c->u2c.pipe[1] = -1;
        c->state = kind == PROXY_LISTENER_HTTP ? CS_HTTP_HEAD : CS_SOCKS_GREETING;
        conn_deadline(c, px->now + PROXY_HANDSHAKE_MS);
        c->next = px->conns;
        if (px->conns)
                px->conns->prev = c;
        px->conns = c;
        px->n_conns++;
        return c;
}

/* The connection as the supervisor recorded it (report_conn_key()): the peer and the port it
 * reached here. Nothing when either is unknown (the refusal then reaches every running exec). */
static void conn_name_client(conn *c, const struct sockaddr *peer, socklen_t len) {
        struct sockaddr_storage here;
        socklen_t hl = sizeof(here);
        if (getsockname(c->cl.fd, (struct sockaddr *) &here, &hl) < 0)
                return;
        uint16_t port = here.ss_family == AF_INET    ? ntohs(((struct sockaddr_in *) &here)->sin_port)
                        : here.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *) &here)->sin6_port)
                                                     : 0;
        if (port)
                report_conn_key(peer, len, port, c->client);
}

/* The descriptor limit. Every connection the sandbox holds costs the proxy descriptors (two
 * sockets, and a tunnel two pipes while it moves bytes), so a command that holds enough
 * connections takes every descriptor the proxy's RLIMIT_NOFILE allows. Two things then broke:
 * the proxy's own reload of the host's addresses (a netlink socket, every OWN_RELOAD_MS) failed,
 * and the proxy stopped — the session's whole network, for every exec, gone; and accept() failed
 * with EMFILE, leaving the connection queued and the listener readable, so the level-triggered
 * loop spun at full CPU until some connection closed. One descriptor is held in reserve for both: released for the
 * reload and taken back after it, and released to accept a connection the proxy has no room for
 * and close it at once (as one past PROXY_MAX_CONNS is), which empties the queue. */
static void spare_take(proxy *px) {
        if (px->spare_fd < 0)
                px->spare_fd = fcntl(px->epfd, F_DUPFD_CLOEXEC, 0);
}

static void spare_release(proxy *px) {
        px->spare_fd = safe_close(px->spare_fd);
}

/* accept() failed for want of a descriptor: the connection is taken with the spare and closed. */
static bool refuse_without_fd(proxy *px, endpoint *l) {
        if (px->spare_fd < 0)
                return false;
        spare_release(px);
        int fd = accept4(l->fd, NULL, NULL, SOCK_CLOEXEC);
        if (fd >= 0)
                (void) close(fd);
        spare_take(px);
        return fd >= 0;
}

static void on_accept(proxy *px, endpoint *l) {
        for (int i = 0; i < 64; i++) {
                struct sockaddr_storage peer;
                socklen_t pl = sizeof(peer);
                int fd = accept4(l->fd, (struct sockaddr *) &peer, &pl, SOCK_NONBLOCK | SOCK_CLOEXEC);
                if (fd < 0 && (errno == EMFILE || errno == ENFILE) && refuse_without_fd(px, l))
                        continue;
                if (fd < 0)
                        return; /* EAGAIN, or a transient error: try again later */
                /* A flood of connections from the sandbox must not exhaust the proxy. */
                if (px->n_conns >= PROXY_MAX_CONNS) {
                        (void) close(fd);
                        continue;
                }
                conn *c = conn_new(px, fd, l->lkind);
                if (!c) {
                        (void) close(fd);
                        continue;
                }
                conn_name_client(c, (const struct sockaddr *) &peer, pl);
                if (l->lkind == PROXY_LISTENER_TRANSPARENT)
                        transparent_start(c);
                else if (conn_watch(c, &c->cl, EPOLLIN | EPOLLRDHUP) < 0)
                        conn_close(c);
        }
}

/* Closes connections past their deadline (handshake, dial, keep-alive idle). */
static void expire(proxy *px) {
        conn *next;
        for (conn *c = px->timed; c; c = next) {
                next = c->tnext;
                if (c->dead || !c->deadline) {
                        timed_unlink(c); /* reap() frees the dead */
                        continue;
                }
                if (c->deadline <= px->now && c->state == CS_ASKING)
                        ask_expire(c);
                else if (!c->dead && c->deadline && c->deadline <= px->now) {
                        bool dialling = c->state == CS_CONNECTING || c->state == CS_RESOLVING ||
                                        c->state == CS_UPSTREAM;
                        if (dialling && c->via_upstream)
                                (void) snprintf(c->dial_why, sizeof(c->dial_why), "%s",
                                                c->state == CS_UPSTREAM
                                                        ? "the upstream proxy did not answer in "
                                                          "time"
                                                        : "cannot connect to the upstream proxy: "
                                                          "timed out");
                        if (dialling)
                                proto_dial_failed(c, ETIMEDOUT, c->state == CS_RESOLVING);
                        else
                                conn_close(c);
                }
        }
}

static void reap(proxy *px) {
        while (px->dead) {
                conn *c = px->dead;
                px->dead = c->dnext;
                if (c->prev)
                        c->prev->next = c->next;
                else
                        px->conns = c->next;
                if (c->next)
                        c->next->prev = c->prev;
                timed_unlink(c);
                px->n_conns--;
                conn_free(c);
        }
}

static int next_timeout(const proxy *px) {
        int64_t first = 0;
        for (const conn *c = px->timed; c; c = c->tnext)
                if (!c->dead && c->deadline && (!first || c->deadline < first))
                        first = c->deadline;
        if (!first)
                return -1;
        int64_t left = first - px->now;
        return left < 0 ? 0 : left > 60000 ? 60000 : (int) left;
}

static int add_listeners(proxy *px, const int *fds, const proxy_listener_kind *kinds, size_t n) {
        if (n > PROXY_MAX_LISTENERS)
                return -E2BIG;
        for (size_t i = 0; i < n; i++) {
                endpoint *e = &px->listeners[px->n_listeners++];
                *e = (endpoint){ .kind = EP_LISTENER, .fd = fds[i], .lkind = kinds[i] };
                int fl = fcntl(fds[i], F_GETFL);
                if (fl < 0 || fcntl(fds[i], F_SETFL, fl | O_NONBLOCK) < 0)
                        return -errno;
                struct epoll_event ev = { .events = EPOLLIN, .data.ptr = e };
                if (epoll_ctl(px->epfd, EPOLL_CTL_ADD, fds[i], &ev) < 0)
                        return -errno;
        }
        return 0;
}

/* Fails closed: when the addresses cannot be read, the proxy stops (the command then reaches
 * nothing) rather than judge without them. */
static int reload_own(proxy *px) {
        if (px->own_loaded && px->now - px->own_loaded < OWN_RELOAD_MS)
                return 0;
        net_local_addrs fresh = { 0 };
        spare_release(px); /* the netlink socket may need it (spare_take()) */
        int r = net_local_addrs_load(&fresh);
        spare_take(px);
        if (r < 0)
                return r;
        net_local_addrs_free(&px->own);
        px->own = fresh;
        px->own_loaded = px->now;
        return 0;
}

static void shutdown_all(proxy *px) {
        net_local_addrs_free(&px->own);
        name_map_free(px->names);
        name_map_free(px->dns_refused);
        budget_free(px->budget);
        ask_free(px);
        for (conn *c = px->conns; c; c = c->next)
                conn_close(c);
        reap(px);
        resolver_stop(px);
        spare_release(px);
        safe_close(px->epfd);
}

int proxy_serve(const proxy_config *cfg, const int *listen_fds, const proxy_listener_kind *kinds,
                size_t n, int stop_fd) {
        proxy px = { .cfg = cfg, .now = monotonic_ms(), .spare_fd = -1 };
        px.epfd = epoll_create1(EPOLL_CLOEXEC);
        if (px.epfd < 0)
                return -errno;
        spare_take(&px);
        endpoint stop_ep = { .kind = EP_LISTENER, .fd = stop_fd, .lkind = (proxy_listener_kind) -1 };
        int r = name_map_new(&px.names);
        if (r >= 0)
                r = name_map_new(&px.dns_refused);
        if (r >= 0)
                r = budget_new(&px.budget);
        if (r >= 0)
                r = add_listeners(&px, listen_fds, kinds, n);
        if (r >= 0)
                r = resolver_start(&px);
        if (r >= 0)
                r = reload_own(&px);
        if (r >= 0)
                r = ask_init(&px);
        if (r >= 0)
                upstream_resolve(&px);
        if (r >= 0 && stop_fd >= 0) {
                struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &stop_ep };
                r = epoll_ctl(px.epfd, EPOLL_CTL_ADD, stop_fd, &ev) < 0 ? -errno : 0;
        }
        while (r >= 0 && !px.stopping) {
                struct epoll_event evs[128];
                int k = epoll_wait(px.epfd, evs, (int) ELEMENTSOF(evs), next_timeout(&px));
                if (k < 0 && errno != EINTR)
                        r = -errno;
                px.now = monotonic_ms();
                if ((r = reload_own(&px)) < 0)
                        break;
                for (int i = 0; i < k; i++) {
                        endpoint *e = evs[i].data.ptr;
                        if (e == &stop_ep)
                                px.stopping = true;
                        else if (e->kind == EP_LISTENER && e->lkind == PROXY_LISTENER_DNS)
                                dns_on_readable(&px, e);
                        else if (e->kind == EP_LISTENER)
                                on_accept(&px, e);
                        else if (e->kind == EP_RESOLVER)
                                resolver_drain(&px);
                        else if (e->kind == EP_ASK)
                                ask_on_readable(&px);
                        else
                                on_conn_event(e->c, e, evs[i].events);
                }
                expire(&px);
                reap(&px);
        }
        shutdown_all(&px);
        return r < 0 ? r : 0;
}
