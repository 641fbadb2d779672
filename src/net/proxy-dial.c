/* SPDX-License-Identifier: Apache-2.0 */
/* From a requested destination to a connected upstream socket, in the one order that keeps the
 * allowlist exact (docs/design/network.md):
 *   1. judge the canonical host and port against the rules (deny beats allow);
 *   2. only then resolve it: the hosts map first, else the system resolver on a worker thread
 *      (a refused name is never looked up, so DNS cannot carry data out for a denied name);
 *   3. judge every resolved address (the guard: loopback, link-local, metadata, this host's own
 *      addresses...) and keep the survivors;
 *   4. connect to exactly those addresses — never a second lookup, so a DNS answer that changes
 *      between check and use (rebinding) cannot redirect the connection.
 * With an upstream proxy (egressUpstream) steps 2 to 4 are its: after the judgement (and the
 * guard, for an address) the connection goes to the upstream, which is asked for the name
 * (proxy-upstream.c). */
#include "net/proxy-internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "util/util.h"

#define RESOLVER_THREADS 4

/* ---- the resolver: getaddrinfo() blocks, so it runs on worker threads ---------------------- */

typedef struct resolve_job {
        struct resolve_job *next;
        uint64_t conn_id;        /* conn->id of the asker (which may be gone by the answer) */
        char name[sizeof(((net_host *) 0)->text)];
        struct sockaddr_storage addrs[PROXY_MAX_ADDRS];
        size_t n;
        int gai_error;
} resolve_job;

typedef struct resolver {
        pthread_mutex_t lock;
        pthread_cond_t wake;
        resolve_job *todo, *done;
        bool stop;
        int efd;
        pthread_t threads[RESOLVER_THREADS];
        size_t n_threads;
} resolver;

static void resolve_one(resolve_job *j) {
        struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                                  .ai_flags = AI_ADDRCONFIG };
        struct addrinfo *res = NULL;
        j->gai_error = getaddrinfo(j->name, NULL, &hints, &res);
        for (struct addrinfo *a = res; a && j->n < PROXY_MAX_ADDRS; a = a->ai_next)
                if ((a->ai_family == AF_INET || a->ai_family == AF_INET6) &&
                    a->ai_addrlen <= sizeof(j->addrs[0]))
                        memcpy(&j->addrs[j->n++], a->ai_addr, a->ai_addrlen);
        if (res)
                freeaddrinfo(res);
}

static void *resolver_thread(void *arg) {
        resolver *rs = arg;
        pthread_mutex_lock(&rs->lock);
        for (;;) {
                while (!rs->todo && !rs->stop)
                        pthread_cond_wait(&rs->wake, &rs->lock);
                if (rs->stop)
                        break;
                resolve_job *j = rs->todo;
                rs->todo = j->next;
                pthread_mutex_unlock(&rs->lock);
                resolve_one(j);
                pthread_mutex_lock(&rs->lock);
                j->next = rs->done;
                rs->done = j;
                uint64_t one = 1;
                (void) !write(rs->efd, &one, sizeof(one));
        }
        pthread_mutex_unlock(&rs->lock);
        return NULL;
}

int resolver_start(proxy *px) {
        resolver *rs = calloc(1, sizeof(*rs));
        if (!rs)
                return -ENOMEM;
        pthread_mutex_init(&rs->lock, NULL);
        pthread_cond_init(&rs->wake, NULL);
        rs->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        if (rs->efd < 0) {
                int e = errno;
                free(rs);
                return -e;
        }
        px->resolver = rs;
        px->resolver_ep = (endpoint){ .kind = EP_RESOLVER, .fd = rs->efd };
        struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &px->resolver_ep };
        if (epoll_ctl(px->epfd, EPOLL_CTL_ADD, rs->efd, &ev) < 0)
                return -errno;
        /* Threads are started lazily (resolver_submit): most runs never resolve a name. */
        return 0;
}

static void free_jobs(resolve_job *j) {
        while (j) {
                resolve_job *n = j->next;
                free(j);
                j = n;
        }
}

void resolver_stop(proxy *px) {
        resolver *rs = px->resolver;
        if (!rs)
                return;
        pthread_mutex_lock(&rs->lock);
        rs->stop = true;
        pthread_cond_broadcast(&rs->wake);
        pthread_mutex_unlock(&rs->lock);
        for (size_t i = 0; i < rs->n_threads; i++)
                pthread_join(rs->threads[i], NULL);
        free_jobs(rs->todo);
        free_jobs(rs->done);
        safe_close(rs->efd);
        pthread_mutex_destroy(&rs->lock);
        pthread_cond_destroy(&rs->wake);
        free(rs);
        px->resolver = NULL;
}

static int resolver_submit(proxy *px, conn *c) {
        resolver *rs = px->resolver;
        resolve_job *j = calloc(1, sizeof(*j));
        if (!j)
                return -ENOMEM;
        j->conn_id = c->id;
        (void) snprintf(j->name, sizeof(j->name), "%s", c->host.text);
        pthread_mutex_lock(&rs->lock);
        int r = 0;
        if (rs->n_threads < RESOLVER_THREADS) {
                r = -pthread_create(&rs->threads[rs->n_threads], NULL, resolver_thread, rs);
                if (r == 0)
                        rs->n_threads++;
                else if (rs->n_threads > 0)
                        r = 0; /* the running threads will get to it */
        }
        if (r == 0) {
                j->next = rs->todo;
                rs->todo = j;
                pthread_cond_signal(&rs->wake);
        }
        pthread_mutex_unlock(&rs->lock);
        if (r < 0)
                free(j);
        return r;
}

void resolver_drain(proxy *px) {
        resolver *rs = px->resolver;
        uint64_t v;
        (void) !read(rs->efd, &v, sizeof(v));
        pthread_mutex_lock(&rs->lock);
        resolve_job *done = rs->done;
        rs->done = NULL;
        pthread_mutex_unlock(&rs->lock);
        while (done) {
                resolve_job *j = done;
                done = j->next;
                /* The connection may have been closed (client gone, deadline) and freed
                 * meanwhile, and its memory reused: find it by its unique id. A resolving
                 * connection always has its dial deadline (dial_start()), so it is on the list
                 * of those with one: thousands of open tunnels are not walked per answer. */
                for (conn *c = px->timed; c; c = c->tnext)
                        if (c->id == j->conn_id && !c->dead && c->state == CS_RESOLVING) {
                                dial_on_resolved(c, j->addrs, j->n, j->gai_error);
                                break;
                        }
                free(j);
        }
}

/* ---- judging and connecting ----------------------------------------------------------------- */

void dial_refuse(conn *c, const char *rule) {
        conn_report(c, conn_proto_name(c), rule);
        proto_refused(c, rule);
}

/* A deny entry's refusal carries its reason (policy-reasons.c), for the report and the 403. */
static void refuse_verdict(conn *c, const egress_verdict *v) {
        free(c->reason);
        c->reason = v->reason[0] ? strdup(v->reason) : NULL;
        dial_refuse(c, v->rule);
}

static void set_port(struct sockaddr_storage *ss, uint16_t port) {
        if (ss->ss_family == AF_INET)
                ((struct sockaddr_in *) ss)->sin_port = htons(port);
        else
                ((struct sockaddr_in6 *) ss)->sin6_port = htons(port);
}

bool dial_sockaddr_from_text(const char *text, struct sockaddr_storage *ss) {
        memset(ss, 0, sizeof(*ss));
        struct sockaddr_in *s4 = (struct sockaddr_in *) ss;
        struct sockaddr_in6 *s6 = (struct sockaddr_in6 *) ss;
        if (inet_pton(AF_INET, text, &s4->sin_addr) == 1) {
                s4->sin_family = AF_INET;
                return true;
        }
        if (inet_pton(AF_INET6, text, &s6->sin6_addr) == 1) {
                s6->sin6_family = AF_INET6;
                return true;
        }
        return false;
}

void dial_on_resolved(conn *c, const struct sockaddr_storage *addrs, size_t n, int gai_error) {
        const proxy_config *cfg = c->px->cfg;
        const char *why = NULL;
        c->n_addrs = c->next_addr = 0;
        for (size_t i = 0; i < n; i++) {
                struct sockaddr_storage a = addrs[i];
                set_port(&a, c->port);
                const char *r = egress_check_address(cfg->rules, &c->host, c->port,
                                                     (const struct sockaddr *) &a, &c->px->own);
                if (r) {
                        why = r;
                        continue;
                }
                c->addrs[c->n_addrs++] = a;
        }
        if (c->n_addrs == 0 && why) {
                /* Allowed by name, but every address it has is one the sandbox must not reach
                 * (e.g. a name an attacker points at 127.0.0.1 or 169.254.169.254). */
                char rule[160];
                (void) snprintf(rule, sizeof(rule), "resolves only to refused addresses (%s)", why);
                dial_refuse(c, rule);
                return;
        }
        if (c->n_addrs == 0) {
                proto_dial_failed(c, gai_error == EAI_NONAME ? ENOENT : EHOSTUNREACH, true);
                return;
        }
        /* Only an address gets here with an upstream: it passed the guard, and the upstream is
         * asked for exactly it. */
        if (cfg->upstream)
                upstream_dial(c);
        else
                dial_connect(c);
}

void dial_start(conn *c) {
        const proxy_config *cfg = c->px->cfg;
        c->via_upstream = false;
        c->dial_error = 0;
        c->dial_why[0] = '\0';
        egress_verdict v;
        egress_decide(cfg->rules, &c->host, c->port, &v);
        if (!v.allowed && v.unlisted && cfg->ask) {
                ask_start(c); /* held until answered; a deny entry is never asked about */
                return;
        }
        if (!v.allowed) {
                refuse_verdict(c, &v);
                return;
        }
        char why[400];
        if (c->host.kind == NET_HOST_NAME &&
            budget_check(c->px, v.rule, c->host.text, why, sizeof(why))) {
                dial_refuse(c, why);
                return;
        }
        dial_allowed(c);
}

void dial_allowed(conn *c) {
        const proxy_config *cfg = c->px->cfg;
        /* After an ask mode's allow too: a ruled host's tunnel cannot be judged. */
        char why[400];
        if (request_tunnel_refused(c, why, sizeof(why))) {
                dial_refuse(c, why);
                return;
        }
        /* A name goes to the upstream as it is: neither the hosts map nor DNS here, since the
         * upstream resolves it (docs/design/network.md, "Upstream proxies"). */
        if (cfg->upstream && c->host.kind == NET_HOST_NAME) {
                upstream_dial(c);
                return;
        }
        struct sockaddr_storage one;
        if (c->host.kind != NET_HOST_NAME) {
                (void) dial_sockaddr_from_text(c->host.text, &one);
                dial_on_resolved(c, &one, 1, 0);
                return;
        }
        /* The hosts map (like curl --resolve) answers before DNS. */
        for (size_t i = 0; i < cfg->n_hosts; i++)
                if (strcmp(cfg->hosts[i].name, c->host.text) == 0 &&
                    dial_sockaddr_from_text(cfg->hosts[i].address, &one)) {
                        dial_on_resolved(c, &one, 1, 0);
                        return;
                }
        c->state = CS_RESOLVING;
        conn_deadline(c, c->px->now + PROXY_DIAL_MS);
        (void) conn_watch(c, &c->cl, 0); /* nothing to read from the client meanwhile */
        int r = resolver_submit(c->px, c);
        if (r < 0)
                proto_dial_failed(c, -r, true);
}

static int try_connect(conn *c, const struct sockaddr_storage *a) {
        int fd = socket(a->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        socklen_t len = a->ss_family == AF_INET ? sizeof(struct sockaddr_in)
                                                : sizeof(struct sockaddr_in6);
        int r = connect(fd, (const struct sockaddr *) a, len);
        if (r < 0 && errno != EINPROGRESS) {
                int e = errno;
                (void) close(fd);
                return -e;
        }
        c->up.fd = fd;
        c->up.events = 0;
        return r == 0 ? 1 : 0;
}

static void dial_connected(conn *c) {
        conn_deadline(c, 0);
        if (c->via_upstream)
                upstream_connected(c);
        else
                proto_connected(c);
}

void dial_connect(conn *c) {
        while (c->next_addr < c->n_addrs) {
                int r = try_connect(c, &c->addrs[c->next_addr++]);
                if (r < 0) {
                        c->dial_error = -r;
                        continue;
                }
                if (r == 1) {
                        dial_connected(c);
                        return;
                }
                c->state = CS_CONNECTING;
                conn_deadline(c, c->px->now + PROXY_DIAL_MS);
                (void) conn_watch(c, &c->cl, 0);
                if (conn_watch(c, &c->up, EPOLLOUT) < 0) {
                        conn_close(c);
                        return;
                }
                return;
        }
        int err = c->dial_error ? c->dial_error : ECONNREFUSED;
        if (c->via_upstream)
                (void) snprintf(c->dial_why, sizeof(c->dial_why),
                                "cannot connect to the upstream proxy: %s", strerror(err));
        proto_dial_failed(c, err, false);
}

void dial_on_writable(conn *c) {
        int err = 0;
        socklen_t len = sizeof(err);
        if (getsockopt(c->up.fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
                err = errno;
        if (err == 0) {
                (void) conn_watch(c, &c->up, 0);
                dial_connected(c);
                return;
        }
        c->dial_error = err;
        (void) conn_watch(c, &c->up, 0);
        (void) close(c->up.fd);
        c->up.fd = -1;
        dial_connect(c);
}
