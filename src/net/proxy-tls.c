/* SPDX-License-Identifier: Apache-2.0 */
/* The terminated path (docs/design/network.md, "TLS inspection"): a tunnel to a host with request
 * rules, not in tls.passthrough, whose client sent a TLS ClientHello for the tunnel's own name
 * (proxy-inspect.c checked it). The proxy is the TLS server to the client, with a leaf of the
 * session CA for that name, and a TLS client to the real server, verified against the system
 * store and tls.upstreamCa; between the two it reads every HTTP/1.1 request the client sends and
 * passes each through request_admit() before any byte of it goes on. Responses are relayed as
 * they come: the rules judge requests only.
 *
 * Both TLS sessions run on memory BIOs: the loop reads and writes the sockets (conn->to_client,
 * conn->to_upstream), so this is the same non-blocking, level-triggered state machine as the
 * others, and every buffer is bounded (TLS_SIDE_MAX before a socket stops being read). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <netinet/tcp.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "net/cred-rewrite.h"
#include "net/http-origin.h"
#include "net/proxy-internal.h"
#include "net/proxy-tls.h"

#define TLS_SIDE_MAX (256 * 1024) /* bytes queued towards one side before the other is not read */
#define TLS_READ_CHUNK 16384

struct proxy_tls {
        tls_ca *ca;
        SSL_CTX *srv, *cli;
};

typedef struct tls_side {
        SSL *ssl;
        BIO *in, *out; /* owned by ssl */
        bool hs_done, sock_eof, tls_eof, shut;
} tls_side;

struct tls_conn {
        tls_side s, u;        /* s: we are the server (to the client); u: to the upstream */
        bool u_failed;        /* the upstream's handshake failed: why says why */
        char why[256];
        /* Client → upstream: decrypted bytes not forwarded yet, and where they are. */
        char req[HTTP_HEAD_MAX];
        size_t req_len;
        bool in_body;
        http_body body;
        unsigned forwarded;   /* requests sent on */
        /* A refusal waiting for the upstream to finish what was asked before it. */
        bool refusing;
        int status;
        char answer[8192]; /* git's rejection of a push's commands fits (proxy-git.c) */
        size_t answer_len;
        http_req rq;
        char pbuf[HTTP_ORIGIN_PARSE_MAX]; /* the head in absolute form (http-origin.h) */
        git_hold *git; /* a push held until its commands are judged (proxy-git.c) */
        /* A host credentials are bound to: responses are scrubbed of the secrets (a server
         * that echoes the request would hand them into the sandbox). */
        const cred_set *creds; /* NULL: not such a host, nothing scrubbed */
        cred_scrub scrub;
};

static const unsigned char alpn_h1[] = "\x08http/1.1";

/* Only HTTP/1.1 is read: a client offering h2 alone is refused in the handshake rather than
 * given a protocol whose requests this path cannot judge. */
static int alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                       const unsigned char *in, unsigned inlen, void *arg) {
        (void) ssl;
        (void) arg;
        unsigned char *o = NULL;
        if (SSL_select_next_proto(&o, outlen, alpn_h1, sizeof(alpn_h1) - 1, in, inlen) !=
            OPENSSL_NPN_NEGOTIATED)
                return SSL_TLSEXT_ERR_ALERT_FATAL;
        *out = o;
        return SSL_TLSEXT_ERR_OK;
}

static int load_trust(SSL_CTX *cli, const strv *upstream_ca, const char **bad) {
        /* Loaded now, as a file: a hashed directory would be read lazily, after the proxy lost
         * the right to read it (proxy_drop_privileges()). */
        if (SSL_CTX_load_verify_locations(cli, PROXY_TLS_SYSTEM_BUNDLE, NULL) != 1) {
                *bad = PROXY_TLS_SYSTEM_BUNDLE;
                return -ENOENT;
        }
        for (size_t i = 0; upstream_ca && i < upstream_ca->n; i++)
                if (SSL_CTX_load_verify_locations(cli, upstream_ca->v[i], NULL) != 1) {
                        *bad = upstream_ca->v[i];
                        return -ENOENT;
                }
        return 0;
}

int proxy_tls_new(proxy_tls **ret, tls_ca *ca, const strv *upstream_ca, const char **bad) {
        *bad = NULL;
        proxy_tls *t = calloc(1, sizeof(*t));
        if (!t) {
                tls_ca_free(ca);
                return -ENOMEM;
        }
        t->ca = ca;
        t->srv = SSL_CTX_new(TLS_server_method());
        t->cli = SSL_CTX_new(TLS_client_method());
        int r = -EIO;
        if (!t->srv || !t->cli || SSL_CTX_set_min_proto_version(t->srv, TLS1_2_VERSION) != 1 ||
            SSL_CTX_set_min_proto_version(t->cli, TLS1_2_VERSION) != 1 ||
            SSL_CTX_set_alpn_protos(t->cli, alpn_h1, sizeof(alpn_h1) - 1) != 0)
                goto fail;
        SSL_CTX_set_alpn_select_cb(t->srv, alpn_select, NULL);
        /* No session tickets or resumption: each connection gets a full handshake with its
         * leaf, and no ticket key outlives a connection's need. */
        SSL_CTX_set_options(t->srv, SSL_OP_NO_TICKET);
        SSL_CTX_set_session_cache_mode(t->srv, SSL_SESS_CACHE_OFF);
        SSL_CTX_set_verify(t->cli, SSL_VERIFY_PEER, NULL);
        if ((r = load_trust(t->cli, upstream_ca, bad)) < 0)
                goto fail;
        *ret = t;
        return 0;
fail:
        proxy_tls_free(t);
        return r;
}

void proxy_tls_free(proxy_tls *t) {
        if (!t)
                return;
        SSL_CTX_free(t->srv);
        SSL_CTX_free(t->cli);
        tls_ca_free(t->ca);
        free(t);
}

static int side_init(tls_side *sd, SSL_CTX *ctx) {
        sd->ssl = SSL_new(ctx);
        sd->in = BIO_new(BIO_s_mem());
        sd->out = BIO_new(BIO_s_mem());
        if (!sd->ssl || !sd->in || !sd->out) {
                BIO_free(sd->in);
                BIO_free(sd->out);
                sd->in = sd->out = NULL;
                return -ENOMEM;
        }
        BIO_set_mem_eof_return(sd->in, -1); /* empty: "try again", never EOF */
        SSL_set_bio(sd->ssl, sd->in, sd->out);
        return 0;
}

/* The upstream side: SNI and hostname verification for the tunnel's name. Subject CNs are never
 * taken for a name (X509_CHECK_FLAG_NEVER_CHECK_SUBJECT), nor partial wildcards: a certificate
 * passes only as a browser would pass it. */
static int upstream_init(conn *c, tls_side *u) {
        if (side_init(u, c->px->cfg->tls->cli) < 0)
                return -ENOMEM;
        SSL_set_hostflags(u->ssl, X509_CHECK_FLAG_NEVER_CHECK_SUBJECT |
                                          X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
        if (SSL_set_tlsext_host_name(u->ssl, c->host.text) != 1 ||
            SSL_set1_host(u->ssl, c->host.text) != 1)
                return -EIO;
        SSL_set_connect_state(u->ssl);
        return 0;
}

static int server_init(conn *c, tls_side *s) {
        X509 *leaf;
        EVP_PKEY *key;
        int r = tls_ca_leaf(c->px->cfg->tls->ca, c->host.text, &leaf, &key);
        if (r < 0)
                return r;
        if (side_init(s, c->px->cfg->tls->srv) < 0)
                return -ENOMEM;
        if (SSL_use_certificate(s->ssl, leaf) != 1 || SSL_use_PrivateKey(s->ssl, key) != 1 ||
            SSL_add1_chain_cert(s->ssl, tls_ca_cert(c->px->cfg->tls->ca)) != 1)
                return -EIO;
        SSL_set_accept_state(s->ssl);
        return 0;
}

void tls_conn_free(conn *c) {
        if (!c->tls)
                return;
        SSL_free(c->tls->s.ssl);
        SSL_free(c->tls->u.ssl);
        git_hold_free(c->tls->git);
        cred_scrub_done(&c->tls->scrub);
        free(c->tls);
        c->tls = NULL;
}

/* ---- Socket I/O ------------------------------------------------------------------------ */

static size_t queued(const outq *q) {
        return q->len - q->off;
}

/* What SSL wrote towards a side, onto its socket queue. */
static int drain_out(tls_side *sd, outq *q) {
        char buf[TLS_READ_CHUNK];
        int n;
        while ((n = BIO_read(sd->out, buf, sizeof(buf))) > 0)
                if (outq_push(q, buf, (size_t) n) < 0)
                        return -ENOMEM;
        return 0;
}

/* Socket bytes into a side's input BIO, while it holds less than TLS_SIDE_MAX. */
static int fill_in(tls_side *sd, int fd) {
        char buf[TLS_READ_CHUNK];
        while (!sd->sock_eof && BIO_ctrl_pending(sd->in) < TLS_SIDE_MAX) {
                ssize_t n = recv(fd, buf, sizeof(buf), 0);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 && errno == EAGAIN)
                        return 0;
                if (n < 0)
                        return -errno;
                if (n == 0) {
                        sd->sock_eof = true;
                        return 0;
                }
                if (BIO_write(sd->in, buf, (int) n) != (int) n)
                        return -ENOMEM;
        }
        return 0;
}

/* SSL_read's outcome: > 0 bytes, 0 nothing now, -1 the peer ended the stream, -2 a TLS error. */
static int side_read(tls_side *sd, char *buf, size_t cap) {
        if (sd->tls_eof)
                return -1;
        int n = SSL_read(sd->ssl, buf, (int) cap);
        if (n > 0)
                return n;
        int e = SSL_get_error(sd->ssl, n);
        if (e == SSL_ERROR_WANT_READ) {
                if (sd->sock_eof && BIO_ctrl_pending(sd->in) == 0) {
                        sd->tls_eof = true; /* EOF without close_notify: the end all the same */
                        return -1;
                }
                return 0;
        }
        if (e == SSL_ERROR_ZERO_RETURN) {
                sd->tls_eof = true;
                return -1;
        }
        return -2;
}

static int side_write(tls_side *sd, const char *buf, size_t len) {
        /* Memory BIOs take everything: SSL_write completes or fails. */
        if (len == 0)
                return 0;
        return SSL_write(sd->ssl, buf, (int) len) == (int) len ? 0 : -EIO;
}

/* ---- Answers of our own ---------------------------------------------------------------- */

static const char *phrase(int status) {
        switch (status) {
        case 400: return "Bad Request";
        case 403: return "Forbidden";
        case 431: return "Request Header Fields Too Large";
        case 502: return "Bad Gateway";
        default: return "Error";
        }
}

static void printable(char *dst, size_t size, const char *src) {
        size_t n = 0;
        for (; src && src[n] && n + 1 < size; n++)
                dst[n] = (src[n] >= 0x20 && src[n] < 0x7f) ? src[n] : '?';
        dst[n] = '\0';
}

/* The answer as plain http:// gets it (proxy-http.c): the status, X-Cordon-Error naming the
 * rule, X-Cordon-Reason when the rule gives one, a one-line body, and the end of the
 * connection. */
static void make_answer(struct tls_conn *t, int status, const char *error, const char *reason) {
        char err[320], why[POLICY_REASON_MAX + 1] = "", why_head[POLICY_REASON_MAX + 32] = "";
        char body[800];
        printable(err, sizeof(err), error);
        if (reason) {
                printable(why, sizeof(why), reason);
                (void) snprintf(why_head, sizeof(why_head), "X-Cordon-Reason: %s\r\n", why);
        }
        int bl = snprintf(body, sizeof(body), "cordon: request refused: %s%s%s%s\n", err,
                          why[0] ? " (" : "", why, why[0] ? ")" : "");
        if (bl < 0 || (size_t) bl >= sizeof(body))
                bl = (int) strlen(body);
        int n = snprintf(t->answer, sizeof(t->answer),
                         "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\n"
                         "X-Cordon-Error: %s\r\n%sContent-Length: %d\r\nConnection: close\r\n\r\n%s",
                         status, phrase(status), err, why_head, bl, body);
        t->answer_len = n < 0 ? 0 : (size_t) n >= sizeof(t->answer) ? sizeof(t->answer) - 1
                                                                    : (size_t) n;
        t->status = status;
}

static void send_answer(conn *c) {
        struct tls_conn *t = c->tls;
        if (side_write(&t->s, t->answer, t->answer_len) < 0) {
                conn_close(c);
                return;
        }
        (void) SSL_shutdown(t->s.ssl);
        if (drain_out(&t->s, &c->to_client) < 0) {
                conn_close(c);
                return;
        }
        conn_finish(c);
}

/* A refused request: answered at once when nothing went on before it; otherwise only once the
 * upstream has finished the responses to the earlier requests of the connection (it is told
 * the client sends no more), so the answer is the response to this request, not to one before
 * it. */
static void refuse_start(conn *c) {
        struct tls_conn *t = c->tls;
        t->refusing = true;
        if (t->forwarded == 0 || t->u.tls_eof || t->u_failed) {
                send_answer(c);
                return;
        }
        conn_deadline(c, c->px->now + PROXY_HANDSHAKE_MS);
        if (!t->u.shut) {
                t->u.shut = true;
                (void) SSL_shutdown(t->u.ssl);
        }
}

/* A refusal whose answer is made elsewhere (proxy-git.c: git's own rejection of a push). */
static void refuse_with(conn *c, const char *answer, size_t len) {
        struct tls_conn *t = c->tls;
        t->answer_len = len <= sizeof(t->answer) ? len : 0;
        memcpy(t->answer, answer, t->answer_len);
        refuse_start(c);
}

static void refuse(conn *c, int status, const char *error, const char *reason) {
        make_answer(c->tls, status, error, reason);
        refuse_start(c);
}

/* ---- Requests, client → upstream -------------------------------------------------------- */

/* > 0: the original head's length; 0: more bytes needed; -1: answered. */
static int parse_head(conn *c) {
        struct tls_conn *t = c->tls;
        int r = http_origin_parse(t->req, t->req_len, t->pbuf, &t->rq);
        if (r >= 0)
                return r;
        refuse(c, t->rq.status ? t->rq.status : 400,
               t->rq.why ? t->rq.why : "malformed request head", NULL);
        return -1;
}

static int take_held_body(conn *c);

/* A complete head in t->req: judged, then sent on (or refused). 1 go on, 2 more bytes needed,
 * 0 stop (refused), -1 error. */
static int take_head(conn *c) {
        struct tls_conn *t = c->tls;
        int head = parse_head(c);
        if (head <= 0)
                return head == 0 ? 2 : 0;
        if (!http_origin_host_is(&t->rq, t->pbuf, c->host.text, c->port)) {
                /* Reported: a command asking one name's server for another is fronting. */
                static const char why[] = "the Host header names another host than the TLS "
                                          "server name";
                conn_report(c, "https", why);
                refuse(c, 403, why, NULL);
                return 0;
        }
        if (t->u_failed) {
                refuse(c, 502, t->why, NULL);
                return 0;
        }
        req_verdict v;
        if (!request_admit(c, t->pbuf, &t->rq, &v)) {
                refuse(c, 403, v.rule, v.reason);
                return 0;
        }
        char rule[400];
        int g = request_admit_git(c, t->pbuf, &t->rq, &t->git, rule, sizeof(rule));
        if (g == -2)
                return -1;
        if (g == -1) {
                refuse(c, 403, rule, NULL);
                return 0;
        }
        char *creds = NULL;
        size_t creds_len = 0;
        int cr = request_credentials(c, t->req, (size_t) head, t->rq.method, true, &creds,
                                     &creds_len, rule, sizeof(rule));
        if (cr < 0) {
                refuse(c, cr == -1 ? 403 : 500, rule, NULL);
                return 0;
        }
        const char *out = cr == 1 ? creds : t->req;
        size_t out_len = cr == 1 ? creds_len : (size_t) head;
        int w = g == 1 ? git_hold_raw(t->git, out, out_len) : side_write(&t->u, out, out_len);
        cred_head_free(creds, creds_len);
        if (w < 0)
                return -1;
        if (g != 1) /* a held push counts once it goes on (take_held_body()) */
                t->forwarded++;
        memmove(t->req, t->req + head, t->req_len - (size_t) head);
        t->req_len -= (size_t) head;
        http_body_init(&t->body, t->rq.framing, t->rq.content_length);
        t->in_body = t->rq.framing != HTTP_FRAMING_NONE;
        if (t->git && t->body.done) /* no body: nothing to judge, nothing git sends */
                return take_held_body(c);
        return 1;
}

/* A held push's body bytes: kept until the verdict, then the held request goes on. 1 go on,
 * 0 stop (refused), -1 error. */
static int take_held_body(conn *c) {
        struct tls_conn *t = c->tls;
        size_t used = 0;
        int g = git_hold_feed(c, t->git, &t->body, t->req, t->req_len, &used);
        memmove(t->req, t->req + used, t->req_len - used);
        t->req_len -= used;
        if (g == -2) {
                size_t len;
                const char *rule;
                const char *answer = git_hold_answer(t->git, &len, &rule);
                if (answer)
                        refuse_with(c, answer, len);
                else
                        refuse(c, 403, rule, NULL);
                return 0;
        }
        if (g == 1) {
                size_t len;
                const char *held = git_hold_bytes(t->git, &len);
                if (side_write(&t->u, held, len) < 0)
                        return -1;
                t->forwarded++;
                git_hold_free(t->git);
                t->git = NULL;
        }
        if (t->body.done)
                t->in_body = false;
        return 1;
}

/* Body bytes at the start of t->req go on as the framing says. 1 go on, -1 error. */
static int take_body(conn *c) {
        struct tls_conn *t = c->tls;
        if (t->git)
                return take_held_body(c);
        ssize_t n = http_body_feed(&t->body, t->req, t->req_len);
        if (n < 0) {
                refuse(c, 400, t->body.why ? t->body.why : "malformed request body", NULL);
                return 0;
        }
        if (side_write(&t->u, t->req, (size_t) n) < 0)
                return -1;
        memmove(t->req, t->req + n, t->req_len - (size_t) n);
        t->req_len -= (size_t) n;
        if (t->body.done)
                t->in_body = false;
        return 1;
}

/* 0 when nothing more can be done now, -1 to close. */
static int client_to_upstream(conn *c) {
        struct tls_conn *t = c->tls;
        for (;;) {
                if (t->refusing || queued(&c->to_upstream) >= TLS_SIDE_MAX)
                        return 0;
                if (t->req_len > 0 && (t->u.hs_done || t->u_failed)) {
                        int r = t->in_body ? take_body(c) : take_head(c);
                        if (r <= 0)
                                return r;
                        if (r == 1 && t->req_len > 0)
                                continue;
                } else if (t->req_len > 0) {
                        return 0; /* the upstream's handshake first */
                }
                if (t->req_len == sizeof(t->req))
                        return 0;
                int n = side_read(&t->s, t->req + t->req_len, sizeof(t->req) - t->req_len);
                if (n == 0)
                        return 0;
                if (n == -2)
                        return -1;
                if (n == -1) { /* the client is done: so is the upstream, once told */
                        if (!t->u.shut && t->u.hs_done) {
                                t->u.shut = true;
                                (void) SSL_shutdown(t->u.ssl);
                        }
                        return t->u.hs_done ? 0 : -1;
                }
                t->req_len += (size_t) n;
        }
}

/* ---- Responses, upstream → client ------------------------------------------------------- */

/* Response bytes towards the client: scrubbed on a host with credentials (cred-rewrite.h); at
 * the upstream's end the held tail goes too (it is no whole secret). */
static int to_client(struct tls_conn *t, const char *buf, size_t n, bool end) {
        if (!t->creds)
                return n ? side_write(&t->s, buf, n) : 0;
        char *out = NULL;
        size_t out_len = 0;
        int r = cred_scrub_feed(t->creds, &t->scrub, buf, n, &out, &out_len);
        if (r == 0 && out_len)
                r = side_write(&t->s, out, out_len);
        free(out);
        if (r == 0 && end) {
                const char *tail = NULL;
                size_t tl = cred_scrub_flush(&t->scrub, &tail);
                r = tl ? side_write(&t->s, tail, tl) : 0;
                cred_scrub_done(&t->scrub);
        }
        return r < 0 ? -1 : 0;
}

static int upstream_to_client(conn *c) {
        struct tls_conn *t = c->tls;
        char buf[TLS_READ_CHUNK];
        while (queued(&c->to_client) < TLS_SIDE_MAX) {
                int n = side_read(&t->u, buf, sizeof(buf));
                if (n == 0)
                        return 0;
                bool relayed = !(t->refusing && t->forwarded == 0);
                if (n == -1) /* the upstream ended: the held tail goes too */
                        return relayed && to_client(t, NULL, 0, true) < 0 ? -1 : 1;
                if (n < 0)
                        return -1;
                if (!relayed)
                        continue;
                if (to_client(t, buf, (size_t) n, false) < 0)
                        return -1;
        }
        return 0;
}

/* ---- The loop --------------------------------------------------------------------------- */

/* Why the upstream's handshake failed, for the 502 and the report: the verification result
 * when there is one (an untrusted issuer, a name mismatch, an expired certificate). */
static void upstream_failed(conn *c) {
        struct tls_conn *t = c->tls;
        long v = SSL_get_verify_result(t->u.ssl);
        unsigned long e = ERR_peek_last_error();
        if (v != X509_V_OK)
                (void) snprintf(t->why, sizeof(t->why),
                                "the server's TLS certificate for %.100s is not trusted: %.100s",
                                c->host.text, X509_verify_cert_error_string(v));
        else
                (void) snprintf(t->why, sizeof(t->why), "TLS handshake with %.100s failed: %.100s",
                                c->host.text, e ? ERR_reason_error_string(e) : "connection closed");
        ERR_clear_error();
        t->u_failed = true;
        /* Reported as a refusal of the connection: the command asked for a server cordon would
         * not trust, and it learns why in the 502 (docs/design/network.md, "TLS inspection"). */
        conn_report(c, "https", t->why);
}

static int handshakes(conn *c) {
        struct tls_conn *t = c->tls;
        if (!t->s.hs_done) {
                int r = SSL_do_handshake(t->s.ssl);
                if (r == 1)
                        t->s.hs_done = true;
                else if (SSL_get_error(t->s.ssl, r) != SSL_ERROR_WANT_READ ||
                         (t->s.sock_eof && BIO_ctrl_pending(t->s.in) == 0))
                        return -1; /* the client refused our leaf or spoke no TLS */
        }
        if (!t->u.hs_done && !t->u_failed) {
                int r = SSL_do_handshake(t->u.ssl);
                if (r == 1)
                        t->u.hs_done = true;
                else if (SSL_get_error(t->u.ssl, r) != SSL_ERROR_WANT_READ ||
                         (t->u.sock_eof && BIO_ctrl_pending(t->u.in) == 0))
                        upstream_failed(c);
        }
        return 0;
}

static void watch(conn *c) {
        struct tls_conn *t = c->tls;
        uint32_t cl = 0, up = 0;
        if (!t->s.sock_eof && !t->refusing && BIO_ctrl_pending(t->s.in) < TLS_SIDE_MAX)
                cl |= EPOLLIN | EPOLLRDHUP;
        if (queued(&c->to_client))
                cl |= EPOLLOUT;
        if (c->up.fd >= 0) {
                if (!t->u.sock_eof && BIO_ctrl_pending(t->u.in) < TLS_SIDE_MAX)
                        up |= EPOLLIN | EPOLLRDHUP;
                if (queued(&c->to_upstream))
                        up |= EPOLLOUT;
        }
        if (conn_watch(c, &c->cl, cl) < 0 || (c->up.fd >= 0 && conn_watch(c, &c->up, up) < 0))
                conn_close(c);
}

/* Everything that can move, moves; then the sockets are written and watched. */
static void pump(conn *c) {
        struct tls_conn *t = c->tls;
        int up_done = 0;
        if (handshakes(c) < 0 || (t->s.hs_done && client_to_upstream(c) < 0) ||
            (!c->dead && !t->refusing && c->state == CS_TLS && t->u.hs_done &&
             (up_done = upstream_to_client(c)) < 0)) {
                conn_close(c);
                return;
        }
        if (c->dead || c->state != CS_TLS)
                return; /* answered: conn_finish() took over */
        if (t->refusing && (up_done == 1 || t->u.tls_eof ||
                            (t->u.hs_done && upstream_to_client(c) == 1))) {
                send_answer(c);
                return;
        }
        if (drain_out(&t->s, &c->to_client) < 0 || drain_out(&t->u, &c->to_upstream) < 0 ||
            outq_flush(&c->to_client, c->cl.fd) < 0 ||
            (c->up.fd >= 0 && outq_flush(&c->to_upstream, c->up.fd) < 0)) {
                conn_close(c);
                return;
        }
        if (t->u.shut && !queued(&c->to_upstream) && c->up.fd >= 0)
                (void) shutdown(c->up.fd, SHUT_WR);
        if (up_done == 1) { /* the server ended the stream: so do we */
                (void) SSL_shutdown(t->s.ssl);
                if (drain_out(&t->s, &c->to_client) < 0)
                        conn_close(c);
                else
                        conn_finish(c);
                return;
        }
        watch(c);
}

void tls_on_event(conn *c, endpoint *e, uint32_t events) {
        struct tls_conn *t = c->tls;
        if ((events & EPOLLOUT) &&
            outq_flush(e->kind == EP_CLIENT ? &c->to_client : &c->to_upstream, e->fd) < 0) {
                conn_close(c);
                return;
        }
        if ((events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) &&
            fill_in(e->kind == EP_CLIENT ? &t->s : &t->u, e->fd) < 0) {
                conn_close(c);
                return;
        }
        pump(c);
}

bool tls_wanted(const conn *c) {
        const req_rules *rr = c->px->cfg->req_rules;
        /* A git host's pushes are judged (proxy-git.c): tls.passthrough does not take it out,
         * or one setting would let every push through unjudged. */
        return (c->px->cfg->tls &&
                ((rr && req_rules_ruled(rr, &c->host, c->port)) ||
                 cred_set_binds(c->px->cfg->creds, &c->host, c->port)) &&
                !(rr && req_rules_passthrough(rr, &c->host, c->port))) ||
               git_wanted(c);
}

void tls_start(conn *c) {
        c->tls = calloc(1, sizeof(*c->tls));
        if (!c->tls || server_init(c, &c->tls->s) < 0 || upstream_init(c, &c->tls->u) < 0) {
                ERR_clear_error();
                conn_close(c);
                return;
        }
        /* Each side gets whole TLS records as they are made: a small record held back by Nagle
         * for the peer's delayed ACK would add 40 ms to a request. */
        static const int one = 1;
        (void) setsockopt(c->cl.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        (void) setsockopt(c->up.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        c->state = CS_TLS;
        conn_deadline(c, 0); /* a terminated connection lives as long as a tunnel would */
        if (cred_set_binds(c->px->cfg->creds, &c->host, c->port))
                c->tls->creds = c->px->cfg->creds;
        /* The ClientHello proxy-inspect.c read is the server side's first input. */
        if (c->in_len > 0 && BIO_write(c->tls->s.in, c->in, (int) c->in_len) != (int) c->in_len) {
                conn_close(c);
                return;
        }
        conn_consume_in(c, c->in_len);
        pump(c);
}
