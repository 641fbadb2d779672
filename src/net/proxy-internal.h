/* SPDX-License-Identifier: Apache-2.0 */
/* The egress proxy's insides, shared by its files (proxy.c: loop, accept, timers; proxy-dial.c:
 * decision, resolution, connect; proxy-upstream.c: through a parent proxy; proxy-tunnel.c:
 * splice relay; proxy-http.c; proxy-socks.c).
 * Nothing outside src/net/proxy*.c includes this. See docs/design/network.md. */
#pragma once

#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "net/addr-guard.h"
#include "net/egress.h"
#include "net/git-push.h"
#include "net/http-body.h"
#include "net/http.h"
#include "net/proxy.h"
#include "net/req-rules.h"
#include "net/socks5.h"
#include "report/report.h"
#include "util/host.h"

/* Time limits, milliseconds. A client gets HANDSHAKE_MS from accept() to a complete request (a
 * slow-loris client holding connections open costs it nothing else); a dial gets DIAL_MS; an idle
 * keep-alive client connection is closed after IDLE_MS. Established tunnels have no limit: a
 * long download or an ssh session is legitimate. */
#define PROXY_HANDSHAKE_MS 10000
#define PROXY_DIAL_MS 15000
#define PROXY_IDLE_MS 60000
/* After a final answer: how long, and how many bytes, the proxy keeps reading what the client
 * still sends before it closes (conn_finish()). */
#define PROXY_LINGER_MS 2000
#define PROXY_LINGER_MAX (1024 * 1024)

#define PROXY_MAX_CONNS 4096      /* per session; more are accepted and closed at once */
#define PROXY_MAX_ADDRS 8         /* resolved addresses tried per destination */
#define PROXY_IO_CHUNK 65536      /* forward-mode read size */
#define PROXY_PIPE_SIZE (256 * 1024)

typedef enum conn_state {
        CS_HTTP_HEAD,      /* reading a request head */
        CS_SOCKS_GREETING, /* SOCKS5 method negotiation */
        CS_SOCKS_AUTH,     /* RFC 1929 username/password */
        CS_SOCKS_REQUEST,  /* the CONNECT request */
        CS_ASKING,         /* held: an unlisted destination asked about (proxy-ask.c) */
        CS_RESOLVING,      /* waiting for the resolver thread */
        CS_CONNECTING,     /* a non-blocking connect() in flight */
        CS_UPSTREAM,       /* connected to the upstream proxy: asking it for the destination
                            * (proxy-upstream.c) */
        CS_INSPECT,        /* a tunnel to a name: its first client bytes before the splice
                            * (their SNI or Host must be that name: proxy-inspect.c) */
        CS_TUNNEL,         /* CONNECT / SOCKS5: bytes both ways, spliced */
        CS_TLS,            /* a tunnel to a ruled host, terminated: requests judged (proxy-tls.c) */
        CS_FWD_REQ_BODY,   /* forward: the request body, client → upstream */
        CS_FWD_RESP_HEAD,  /* forward: reading the upstream's response head */
        CS_FWD_RESP_BODY,  /* forward: the response body, upstream → client */
        CS_CLOSING,        /* flushing a final answer (a refusal), then linger */
        CS_LINGER,         /* answer sent, our side shut down: discarding input until EOF */
} conn_state;

#define DNS_RECENT_MAX 64

typedef struct proxy proxy;
typedef struct conn conn;
typedef struct budget budget;

/* What an epoll event points at: one side of a connection, or a listener. */
typedef enum ep_kind { EP_CLIENT, EP_UPSTREAM, EP_LISTENER, EP_RESOLVER, EP_ASK } ep_kind;
typedef struct endpoint {
        ep_kind kind;
        conn *c;          /* EP_CLIENT, EP_UPSTREAM */
        int fd;
        uint32_t events;  /* registered with epoll (0: not registered) */
        proxy_listener_kind lkind; /* EP_LISTENER */
} endpoint;

/* One direction of a tunnel: src → pipe → dst. */
typedef struct splice_dir {
        int pipe[2];
        size_t in_pipe;   /* bytes in the pipe */
        bool src_eof;     /* src reached EOF: shut dst down once the pipe is empty */
        bool done;        /* dst was shut down for writing */
} splice_dir;

/* A byte queue for small writes (answers, rewritten heads, forwarded body pieces). */
typedef struct outq {
        char *buf;
        size_t len, off, cap;
} outq;

struct conn {
        proxy *px;
        uint64_t id;           /* unique per proxy: resolver answers find their asker by it */
        endpoint cl, up;
        proxy_listener_kind proto;
        conn_state state;
        int64_t deadline;      /* monotonic ms; 0: none. Set with conn_deadline() */
        conn *prev, *next;     /* px->conns */
        conn *tprev, *tnext;   /* px->timed, while `timed` */
        bool timed;
        conn *dnext;           /* px->dead, once dead */
        bool dead;             /* closed; freed at the end of the loop iteration */

        /* Bytes read from the client and not consumed yet (heads, SOCKS messages, pipelined
         * requests). */
        char *in;
        size_t in_len, in_cap;
        outq to_client, to_upstream;

        /* The destination being judged or dialled. */
        net_host host;
        uint16_t port;
        char target[300];      /* "host:port" / "[v6]:port" for reports */
        /* The connection's client address and our port (report_conn_key()): a warm session
         * matches it with the supervisor's record of who connected (docs/design/daemon.md). */
        char client[REPORT_ENDPOINT_MAX];
        struct sockaddr_storage addrs[PROXY_MAX_ADDRS];
        size_t n_addrs, next_addr;
        int dial_error;        /* the last connect() error, for the answer */
        /* Why the dial failed, when the errno alone would not say it (the upstream proxy's
         * answer); empty otherwise. Printable ASCII only. */
        char dial_why[200];
        /* Through the upstream proxy (proxy-upstream.c): addrs are its addresses, and once
         * connected it is asked for host:port; up_out holds what it is sent (credentials
         * included: wiped when the handshake ends). */
        bool via_upstream;
        int up_step;
        outq up_out;
        size_t linger_left;    /* CS_LINGER: bytes still discarded before the close */
        char *reason;          /* the refusing deny entry's reason (a copy), or NULL */
        /* The ask mode: a destination allowed once for this connection ("host:port"), so the
         * further requests of a keep-alive client to it are not asked again; "" when none. */
        char once_target[300];

        /* Tunnels. */
        splice_dir c2u, u2c;
        struct tls_conn *tls;  /* CS_TLS (proxy-tls.c) */

        /* Forward mode. */
        http_req *req;         /* the current request (large: allocated once per conn) */
        char method[HTTP_METHOD_MAX + 1];
        bool client_keep_alive;
        bool upstream_reusable;
        bool resp_interim_seen;
        http_body body;
        char *uin;             /* response head bytes from the upstream */
        size_t uin_len, uin_cap;
        net_host up_host;      /* what `up` is connected to (forward-mode reuse) */
        uint16_t up_port;
        bool up_connected;
};

struct proxy {
        int epfd;
        const proxy_config *cfg;
        endpoint listeners[PROXY_MAX_LISTENERS];
        size_t n_listeners;
        endpoint resolver_ep;   /* eventfd the resolver threads signal */
        conn *conns;
        size_t n_conns;
        /* The loop's per-iteration work sees only these, never every connection: with
         * thousands of tunnels open, three walks of the whole list per wake-up made a new
         * connection through the same proxy eight times slower (BENCHMARKS.md, "Scale").
         * `timed`: the connections that had a deadline set (one whose deadline went back to 0
         * leaves at the next sweep, expire()); `dead`: those closed in this iteration. */
        conn *timed;
        conn *dead;
        int64_t now;
        bool stopping;
        uint64_t next_id;
        struct resolver *resolver;
        /* This host's interface addresses for the guard, reloaded every OWN_RELOAD_MS so an
         * address that appears later (a VPN, a new container bridge) is refused too. */
        net_local_addrs own;
        int64_t own_loaded;
        /* The sandbox's resolver (proxy-dns.c): the synthetic addresses it gave out, and the
         * names it refused (each reported once). */
        struct name_map *names;
        struct name_map *dns_refused;
        /* per_lookup_dns_reports: the (name, client) pairs reported last (a lookup retried
         * or asked for A and AAAA from one socket counts once), and the reports made. */
        uint64_t dns_recent[DNS_RECENT_MAX];
        size_t dns_recent_next;
        size_t dns_lookup_reports;
        budget *budget;         /* proxy-budget.c */
        /* The upstream proxy's own addresses (cfg->upstream), resolved once when the proxy
         * starts (upstream_resolve()); none, and why, when that failed. */
        struct sockaddr_storage up_addrs[PROXY_MAX_ADDRS];
        size_t n_up_addrs;
        const char *up_error;
        /* The ask mode (proxy-ask.c): the answers to report_fd, and the destinations
         * ("host:port") the run allowed for the session or denied: neither is asked again. */
        endpoint ask_ep;
        struct name_map *ask_allowed;
        struct name_map *ask_denied;
        /* A descriptor held in reserve (proxy.c, spare_release()): what the proxy still has when
         * the sandbox's connections have taken every other one. -1 while released. */
        int spare_fd;
};

#define OWN_RELOAD_MS 10000

/* proxy.c */
int conn_watch(conn *c, endpoint *e, uint32_t events);
/* Sets the connection's deadline (monotonic ms; 0: none). */
void conn_deadline(conn *c, int64_t when);
void conn_close(conn *c);
void conn_finish(conn *c);
void conn_report(conn *c, const char *proto, const char *rule);
/* Closes the client connection with a reset (SO_LINGER 0), not a FIN: a client of a tunnel
 * already answered must not take the refusal for the end of the stream. */
void conn_reset(conn *c);
/* How the connection came, for reports: "http", "socks5", "tcp" (redirected). */
const char *conn_proto_name(const conn *c);
int outq_push(outq *q, const void *data, size_t len);
/* Writes what it can; returns 1 when empty, 0 when bytes remain (EAGAIN), -errno on error. */
int outq_flush(outq *q, int fd);
void outq_free(outq *q);
/* Reads more client bytes into c->in (up to cap); returns bytes read, 0 on EOF, -EAGAIN, -errno. */
ssize_t conn_read_client(conn *c, size_t cap);
void conn_consume_in(conn *c, size_t n);
void conn_set_target(conn *c, const net_host *h, uint16_t port);

/* proxy-dial.c: judge c->host:c->port, resolve, connect; calls back into the protocol when the
 * upstream is connected (proto_connected) or has failed (proto_dial_failed). */
void dial_start(conn *c);
void dial_on_writable(conn *c);
/* Connects to c->addrs in order (the destination's, or the upstream proxy's). */
void dial_connect(conn *c);
void dial_on_resolved(conn *c, const struct sockaddr_storage *addrs, size_t n, int gai_error);
int resolver_start(proxy *px);
void resolver_stop(proxy *px);
void resolver_drain(proxy *px);
void proto_connected(conn *c);
void proto_refused(conn *c, const char *rule);
void proto_dial_failed(conn *c, int err, bool resolve_failed);
/* Reports the refusal and answers the client with it. */
void dial_refuse(conn *c, const char *rule);
/* An allowed c->host:c->port (by the rules or by an answer): resolve, guard, connect. */
void dial_allowed(conn *c);
bool dial_sockaddr_from_text(const char *text, struct sockaddr_storage *ss);

/* proxy-ask.c: the egress ask mode. ask_start() holds a connection the rules refused only as
 * unlisted (egress_verdict.unlisted) and asks the launcher about it; its answer (ask_on_readable)
 * or its deadline (ask_expire) lets it go on to dial_allowed() or refuses it. */
int ask_init(proxy *px);
void ask_free(proxy *px);
void ask_start(conn *c);
void ask_on_readable(proxy *px);
void ask_expire(conn *c);

/* proxy-upstream.c: the upstream proxy (cfg->upstream). upstream_resolve() resolves its host
 * once, at start; upstream_dial() connects to it for an allowed c->host:c->port (the guard
 * already passed for an address); upstream_connected() asks it for the destination, and calls
 * proto_connected() once the tunnel through it is open (whatever the destination sent with the
 * answer waits in c->uin) or proto_dial_failed() with c->dial_why. */
void upstream_resolve(proxy *px);
void upstream_dial(conn *c);
void upstream_connected(conn *c);
void upstream_on_event(conn *c, uint32_t events);
void upstream_free(conn *c);

/* proxy-tunnel.c */
int tunnel_start(conn *c);
void tunnel_on_event(conn *c, endpoint *e, uint32_t events);
void tunnel_free(conn *c);

/* proxy-http.c */
void http_on_client(conn *c, uint32_t events);
void http_on_upstream(conn *c, uint32_t events);
void http_connected(conn *c);
void http_refused(conn *c, const char *rule);
void http_dial_failed(conn *c, int err, bool resolve_failed);

/* proxy-request.c: the per-request hook. request_admit(): whether the request rq (parsed from
 * buf) may go on to c->host:c->port; when not, it is reported (a network-request violation)
 * and *v says why, for the caller's 403. request_tunnel_refused(): a tunnel the rules could not
 * see into, refused with the reason in why. */
bool request_admit(conn *c, const char *buf, const http_req *rq, req_verdict *v);
bool request_tunnel_refused(conn *c, char *why, size_t size);
/* After request_admit(): the git push gateway's git_request() on the request's upstream target. */
typedef struct git_hold git_hold;
int request_admit_git(conn *c, const char *buf, const http_req *rq, git_hold **hold,
                      char *rule, size_t size);

/* proxy-git.c: the git push gateway. git_wanted(): a git host whose TLS is terminated so its
 * pushes are seen. git_tunnel_refused(): git over SSH, or a git host without a session CA.
 * git_request(): a request head that passed request_admit(): 0 it goes on, 1 a push whose
 * head and body are held in *out until git_hold_feed() says 1 (send git_hold_bytes(), then
 * stream the rest), -1 (refused and reported; the rest of the body is still to be read and
 * dropped) or -2 (refused, and the body is over or unreadable: answer git_hold_answer() now);
 * 0: more bytes needed. git_request() also: -1 refused now (rule); -2 out of memory. */
bool git_wanted(const conn *c);
bool git_tunnel_refused(conn *c, char *why, size_t size);
int git_request(conn *c, const char *buf, const http_req *rq, const char *target, size_t n,
                git_hold **out, char *rule, size_t size);
int git_hold_raw(git_hold *h, const char *buf, size_t len);
int git_hold_feed(conn *c, git_hold *h, http_body *b, const char *buf, size_t len,
                  size_t *used);
/* A refused push's answer: git's rejection (its bytes, *len) or NULL for a 403 naming *rule. */
const char *git_hold_answer(const git_hold *h, size_t *len, const char **rule);
const char *git_hold_bytes(const git_hold *h, size_t *len);
void git_hold_free(git_hold *h);
/* Credentials (cred-rewrite.h) in the request head head[0..len) about to go to c->host; `tls`:
 * over TLS the proxy terminated. 0: send it as it is; 1: send *out[0..*out_len) (it holds
 * secrets: cred_head_free()); -1: refused and reported, answer 403 with `why`; -2: answer
 * 500 with `why`. */
int request_credentials(conn *c, const char *head, size_t len, const char *method, bool tls,
                        char **out, size_t *out_len, char *why, size_t size);

/* proxy-transparent.c: a connection the sandbox's NAT rule redirected here. */
void transparent_start(conn *c);
void transparent_connected(conn *c);
void transparent_refused(conn *c, const char *rule);
void transparent_dial_failed(conn *c, int err, bool resolve_failed);

/* proxy-inspect.c: every tunnel starts here once its upstream is connected and its answer (if
 * any) queued in to_client. */
void tunnel_or_inspect(conn *c);
void inspect_on_event(conn *c, endpoint *e, uint32_t events);

/* proxy-tls.c: tls_wanted(): whether a tunnel to c->host:c->port is terminated (a ruled host
 * not in tls.passthrough, and a session CA); tls_start() takes over once the client's
 * ClientHello asked for that name (proxy-inspect.c). */
bool tls_wanted(const conn *c);
void tls_start(conn *c);
void tls_on_event(conn *c, endpoint *e, uint32_t events);
void tls_conn_free(conn *c);

/* proxy-budget.c: whether `name`, allowed by the egress entry `rule`, may be resolved under the
 * run's wildcard budget; NULL, or the refusal's rule (written into why). */
int budget_new(budget **ret);
void budget_free(budget *b);
const char *budget_check(proxy *px, const char *rule, const char *name, char *why, size_t size);

/* proxy-dns.c: queries on the resolver's socket. */
void dns_on_readable(proxy *px, endpoint *l);

/* proxy-socks.c */
void socks_on_client(conn *c, uint32_t events);
void socks_connected(conn *c);
void socks_refused(conn *c, const char *rule);
void socks_dial_failed(conn *c, int err, bool resolve_failed);
