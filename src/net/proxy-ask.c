/* SPDX-License-Identifier: Apache-2.0 */
/* The egress ask mode (egressMode "ask"; docs/design/network.md, "Ask mode"). A connection the
 * rules refuse only because nothing lists its destination (egress_verdict.unlisted) is held
 * instead of refused: the proxy sends the launcher one question (REPORT_EGRESS_ASK) and waits,
 * reading nothing from the client, for its answer (REPORT_EGRESS_ANSWER) or the deadline. Every
 * question ends in exactly one REPORT_EGRESS_DECIDED, which is what the run's events record:
 * the proxy is the one that enforces the outcome, so the record is its.
 *
 * What is never asked about: a deny entry's refusal (the built-in deny list, egressDenylist),
 * "network disabled", an address the guard refuses (loopback, metadata, this host's own), a
 * destination denied earlier in this run. So a question can only widen what the rules left
 * unsaid, never undo what they say. An answer allows exactly host:port, once (this client
 * connection) or for the rest of the run (the proxy's lifetime: a warm session's); after it the
 * connection goes on as any allowed one: resolved outside, the guard judging every address,
 * dialled, the fronting check. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "net/name-map.h"
#include "net/proxy-internal.h"

/* Held connections at one time; more are refused at once. A command opening connections to
 * random names must not queue an unbounded stack of questions for a person to wade through. */
#define ASK_PENDING_MAX 16

int ask_init(proxy *px) {
        const proxy_config *cfg = px->cfg;
        px->ask_ep = (endpoint){ .kind = EP_ASK, .fd = -1 };
        if (!cfg->ask)
                return 0;
        if (cfg->report_fd < 0)
                return -EINVAL; /* nobody to ask: the caller must not configure this */
        int r = name_map_new(&px->ask_allowed);
        if (r >= 0)
                r = name_map_new(&px->ask_denied);
        if (r < 0)
                return r;
        px->ask_ep.fd = cfg->report_fd;
        struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &px->ask_ep };
        return epoll_ctl(px->epfd, EPOLL_CTL_ADD, cfg->report_fd, &ev) < 0 ? -errno : 0;
}

void ask_free(proxy *px) {
        name_map_free(px->ask_allowed);
        name_map_free(px->ask_denied);
        px->ask_allowed = px->ask_denied = NULL;
}

static uint32_t ask_id(const conn *c) {
        return (uint32_t) (c->id & 0x7fffffff);
}

static size_t pending(const proxy *px) {
        size_t n = 0;
        for (const conn *c = px->conns; c; c = c->next)
                n += !c->dead && c->state == CS_ASKING;
        return n;
}

/* An address is judged by the guard before anyone is asked: a person must never be offered
 * "allow 169.254.169.254:80?" (the cloud metadata service) or this host's loopback, which no
 * answer could allow anyway. A name cannot be judged before it is resolved, and it is resolved
 * only after the answer (resolving it first would send the unlisted name to a DNS server
 * outside: a channel out with no one asked); the guard judges its addresses then. */
static const char *guard_refusal(conn *c) {
        struct sockaddr_storage ss;
        if (c->host.kind == NET_HOST_NAME || !dial_sockaddr_from_text(c->host.text, &ss))
                return NULL;
        if (ss.ss_family == AF_INET)
                ((struct sockaddr_in *) &ss)->sin_port = htons(c->port);
        else
                ((struct sockaddr_in6 *) &ss)->sin6_port = htons(c->port);
        return egress_check_address(c->px->cfg->rules, &c->host, c->port,
                                    (const struct sockaddr *) &ss, &c->px->own);
}

/* What was remembered: 1 allowed (for the session, or once on this connection), -1 denied,
 * 0 ask. */
static int remembered(const conn *c) {
        if (c->once_target[0] && strcmp(c->once_target, c->target) == 0)
                return 1;
        if (name_map_has(c->px->ask_allowed, c->target))
                return 1;
        return name_map_has(c->px->ask_denied, c->target) ? -1 : 0;
}

void ask_start(conn *c) {
        proxy *px = c->px;
        int known = remembered(c);
        if (known > 0) {
                dial_allowed(c);
                return;
        }
        /* A denied destination is not asked about again: a command retrying must not wear a
         * person down into a yes by asking the same thing over and over. */
        if (known < 0) {
                dial_refuse(c, "ask: denied earlier in this run");
                return;
        }
        const char *why = guard_refusal(c);
        if (why) {
                dial_refuse(c, why);
                return;
        }
        if (pending(px) >= ASK_PENDING_MAX) {
                dial_refuse(c, "ask: too many questions pending");
                return;
        }
        c->state = CS_ASKING;
        conn_deadline(c, px->now + px->cfg->ask_timeout_ms);
        (void) conn_watch(c, &c->cl, 0); /* nothing is read from the client meanwhile */
        report_egress_ask(px->cfg->report_fd, ask_id(c), px->cfg->ask_timeout_ms,
                          conn_proto_name(c), c->target, c->client);
}

static void decide(conn *c, report_ask_answer outcome);

/* One answer for every held connection to the same destination: an allow for the session
 * holds for them as for any later one. */
static void allow_session(conn *c) {
        struct in_addr ignored;
        if (name_map_address(c->px->ask_allowed, c->target, &ignored) < 0) {
                /* The set is full (65,536 destinations): this connection is still allowed, as
                 * answered; later ones are asked again, which fails safe. */
        }
        for (conn *o = c->px->conns; o; o = o->next)
                if (o != c && !o->dead && o->state == CS_ASKING &&
                    strcmp(o->target, c->target) == 0)
                        decide(o, REPORT_ASK_ALLOW_SESSION);
}

static void decide(conn *c, report_ask_answer outcome) {
        const proxy_config *cfg = c->px->cfg;
        struct in_addr ignored;
        char rule[96];
        conn_deadline(c, 0);
        report_egress_decided(cfg->report_fd, ask_id(c), outcome, conn_proto_name(c), c->target,
                              c->client);
        switch (outcome) {
        case REPORT_ASK_ALLOW_SESSION:
                allow_session(c);
                dial_allowed(c);
                return;
        case REPORT_ASK_ALLOW_ONCE:
                (void) snprintf(c->once_target, sizeof(c->once_target), "%s", c->target);
                dial_allowed(c);
                return;
        case REPORT_ASK_TIMEOUT:
                (void) snprintf(rule, sizeof(rule), "ask: no answer within %u ms",
                                (unsigned) cfg->ask_timeout_ms);
                dial_refuse(c, rule);
                return;
        case REPORT_ASK_UNANSWERED:
                dial_refuse(c, "ask: nobody to answer");
                return;
        case REPORT_ASK_DENY:
        default:
                (void) name_map_address(c->px->ask_denied, c->target, &ignored);
                dial_refuse(c, "ask: denied");
                return;
        }
}

void ask_expire(conn *c) {
        decide(c, REPORT_ASK_TIMEOUT);
}

static void on_answer(proxy *px, const report_msg *m) {
        if (m->type != REPORT_EGRESS_ANSWER)
                return;
        report_ask_answer a = (report_ask_answer) m->code;
        if (a != REPORT_ASK_DENY && a != REPORT_ASK_ALLOW_ONCE && a != REPORT_ASK_ALLOW_SESSION &&
            a != REPORT_ASK_UNANSWERED)
                a = REPORT_ASK_DENY; /* not an answer the launcher sends: fail closed */
        /* An answer read after the deadline is late, even when the timer has not been looked
         * at yet in this round of the loop: the clock is read now, after the answer, so the
         * outcome never depends on how promptly this process was scheduled. A late answer for
         * a connection already decided (or gone) finds nobody: dropped. */
        int64_t now = monotonic_ms();
        for (conn *c = px->conns; c; c = c->next)
                if (!c->dead && c->state == CS_ASKING && ask_id(c) == (uint32_t) m->status) {
                        decide(c, c->deadline && c->deadline <= now ? REPORT_ASK_TIMEOUT : a);
                        return;
                }
}

void ask_on_readable(proxy *px) {
        for (int i = 0; i < 64; i++) {
                report_msg m;
                memset(&m, 0, sizeof(m));
                ssize_t n = recv(px->ask_ep.fd, &m, sizeof(m), MSG_DONTWAIT);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n == 0) {
                        /* The launcher is gone: nobody answers any more. The proxy dies with
                         * it (PR_SET_PDEATHSIG); until then every question fails closed. */
                        (void) epoll_ctl(px->epfd, EPOLL_CTL_DEL, px->ask_ep.fd, NULL);
                        for (conn *c = px->conns; c; c = c->next)
                                if (!c->dead && c->state == CS_ASKING)
                                        decide(c, REPORT_ASK_UNANSWERED);
                        return;
                }
                if (n < 0)
                        return;
                if ((size_t) n >= offsetof(report_msg, text))
                        on_answer(px, &m);
        }
}
