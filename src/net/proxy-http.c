/* SPDX-License-Identifier: Apache-2.0 */
/* The HTTP side of the proxy. A client connection carries a sequence of requests:
 *   CONNECT host:port      → judged, dialled, "200 Connection established", then a tunnel;
 *   METHOD http://host/... → judged, dialled (or the previous upstream reused when it is the same
 *                            host and port and reusable), the head rewritten to origin-form, the
 *                            body relayed as framed, the response head parsed for its framing and
 *                            passed through, the body relayed, and the connection is ready for the
 *                            next request (keep-alive).
 * Every request is judged on its own: a keep-alive connection cannot carry a request for a
 * second host on the first host's verdict. Bodies are never re-encoded (chunked passes through);
 * src/net/http-body.c only says where each message ends, so a request smuggled inside a body is
 * never parsed as a request of ours. Refusals answer 403 with an X-Cordon-Error header naming the
 * rule, and close. */
#include "net/cred-rewrite.h"
#include "net/proxy-internal.h"

#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define FWD_QUEUE_MAX (1024 * 1024) /* pending bytes before the producing side is paused */

static const char *reason_phrase(int status) {
        switch (status) {
        case 400: return "Bad Request";
        case 403: return "Forbidden";
        case 405: return "Method Not Allowed";
        case 407: return "Proxy Authentication Required";
        case 414: return "URI Too Long";
        case 417: return "Expectation Failed";
        case 431: return "Request Header Fields Too Large";
        case 501: return "Not Implemented";
        case 502: return "Bad Gateway";
        case 504: return "Gateway Timeout";
        case 505: return "HTTP Version Not Supported";
        default: return "Error";
        }
}

/* Header values carry only printable ASCII: a rule or reason can never split the answer. */
static void header_safe(char *dst, size_t size, const char *src) {
        size_t n = 0;
        for (; src && src[n] && n + 1 < size; n++)
                dst[n] = (src[n] >= 0x20 && src[n] < 0x7f) ? src[n] : '?';
        dst[n] = '\0';
}

/* Answers with `status`, an X-Cordon-Error header (and X-Cordon-Reason when the refusing deny
 * entry gives one) and a one-line body, then closes (conn_finish()). */
static void answer_error_why(conn *c, int status, const char *error, const char *body_fmt_target,
                             const char *reason) {
        char err[320], why[POLICY_REASON_MAX + 1] = "", why_head[POLICY_REASON_MAX + 32] = "";
        char body[1024], head[1280];
        header_safe(err, sizeof(err), error);
        if (reason) {
                header_safe(why, sizeof(why), reason);
                (void) snprintf(why_head, sizeof(why_head), "X-Cordon-Reason: %s\r\n", why);
        }
        int bl = snprintf(body, sizeof(body), "cordon: %s%s%s%s%s%s\n", body_fmt_target,
                          body_fmt_target[0] ? ": " : "", err, why[0] ? " (" : "", why,
                          why[0] ? ")" : "");
        if (bl < 0 || (size_t) bl >= sizeof(body))
                bl = (int) strlen(body);
        int hl = snprintf(head, sizeof(head),
                          "HTTP/1.1 %d %s\r\n"
                          "Content-Type: text/plain; charset=utf-8\r\n"
                          "X-Cordon-Error: %s\r\n"
                          "%s%s"
                          "Content-Length: %d\r\n"
                          "Connection: close\r\n\r\n",
                          status, reason_phrase(status), err, why_head,
                          status == 407 ? "Proxy-Authenticate: Basic realm=\"cordon\"\r\n" : "",
                          bl);
        if (hl < 0 || (size_t) hl >= sizeof(head) ||
            outq_push(&c->to_client, head, (size_t) hl) < 0 ||
            outq_push(&c->to_client, body, (size_t) bl) < 0) {
                conn_close(c);
                return;
        }
        if (c->up.fd >= 0) {
                (void) conn_watch(c, &c->up, 0);
                (void) close(c->up.fd);
                c->up.fd = -1;
                c->up_connected = false;
        }
        conn_finish(c);
}

static void answer_error(conn *c, int status, const char *error, const char *body_fmt_target) {
        answer_error_why(c, status, error, body_fmt_target, NULL);
}

static void close_upstream(conn *c) {
        if (c->up.fd >= 0) {
                (void) conn_watch(c, &c->up, 0);
                (void) close(c->up.fd);
                c->up.fd = -1;
        }
        c->up_connected = false;
        outq_free(&c->to_upstream);
        c->uin_len = 0;
}

/* ---- the request head ----------------------------------------------------------------------- */

/* An idle pooled upstream is reusable only while it is open and quiet. An origin that closed it
 * meanwhile (a keep-alive timeout: 5 s in Node's http server) would turn a good request into a
 * 502; bytes it sent unasked would be read as the answer to the next request. A close racing
 * this check is still possible, as with every HTTP client's own pool. */
static bool upstream_idle_ok(const conn *c) {
        char b;
        ssize_t n = recv(c->up.fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
        return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

static bool same_upstream(const conn *c) {
        return c->up_connected && c->upstream_reusable && c->up_port == c->port &&
               strcmp(c->up_host.text, c->host.text) == 0 && upstream_idle_ok(c);
}

static void start_forward_body(conn *c);
static void update_interest(conn *c);

/* The git push gateway on http:// (proxy-git.c): the ref advertisement is judged as over
 * TLS; a push itself is refused there (git_request() holds bodies only on the terminated
 * path). */
static bool git_forward_admit(conn *c, http_req *rq) {
        char rule[400];
        git_hold *hold = NULL;
        int g = request_admit_git(c, c->in, rq, &hold, rule, sizeof(rule));
        git_hold_free(hold); /* never 1 here: a push over http:// is refused */
        if (g == -2 || g == 1)
                conn_close(c);
        else if (g != 0)
                answer_error(c, 403, rule, "request refused");
        return g == 0;
}

/* Judges and starts one parsed request; its head is c->in[0..head_len). */
static void on_request(conn *c, http_req *rq) {
        const proxy_config *cfg = c->px->cfg;
        if (cfg->require_auth && !http_req_creds_equal(rq, cfg->user, cfg->pass)) {
                answer_error(c, 407, "proxy credentials required", "");
                return;
        }
        net_host h;
        const char *why = NULL;
        if (net_host_canon(rq->host, strlen(rq->host), &h, &why) < 0) {
                net_host shown = { .kind = NET_HOST_NAME };
                (void) snprintf(shown.text, sizeof(shown.text), "(invalid host name)");
                conn_set_target(c, &shown, rq->port);
                char rule[160];
                (void) snprintf(rule, sizeof(rule), "invalid host name: %s", why ? why : "?");
                conn_report(c, "http", rule);
                answer_error(c, 400, rule, "");
                return;
        }
        conn_set_target(c, &h, rq->port);
        (void) snprintf(c->method, sizeof(c->method), "%s", rq->method);
        c->client_keep_alive = rq->keep_alive;
        req_verdict rv;
        if (rq->kind == HTTP_KIND_FORWARD && !request_admit(c, c->in, rq, &rv)) {
                answer_error_why(c, 403, rv.rule, "request refused", rv.reason);
                return;
        }
        if (rq->kind == HTTP_KIND_FORWARD && !git_forward_admit(c, rq))
                return;
        if (rq->kind == HTTP_KIND_FORWARD) {
                char out[HTTP_REWRITE_MAX];
                ssize_t n = http_req_rewrite(rq, c->in, out, sizeof(out));
                if (n < 0) {
                        answer_error(c, 431, "request head too large to forward", "");
                        return;
                }
                /* Plain http: a placeholder is refused here, never replaced (cred-rewrite.h). */
                char *unused = NULL, cwhy[400];
                size_t unused_len = 0;
                int cr = request_credentials(c, out, (size_t) n, rq->method, false, &unused,
                                             &unused_len, cwhy, sizeof(cwhy));
                cred_head_free(unused, unused_len);
                if (cr < 0) {
                        answer_error(c, cr == -1 ? 403 : 500, cwhy, "");
                        return;
                }
                outq_free(&c->to_upstream);
                if (outq_push(&c->to_upstream, out, (size_t) n) < 0) {
                        conn_close(c);
                        return;
                }
                http_body_init(&c->body, rq->framing, rq->content_length);
        }
        conn_consume_in(c, rq->head_len);
        if (rq->kind == HTTP_KIND_FORWARD && same_upstream(c)) {
                /* Still judged above: only the TCP connection is reused, never a verdict. */
                start_forward_body(c);
                return;
        }
        /* A pooled upstream is not where this request goes: close it before dialling, for a
         * CONNECT too (the dial would overwrite its descriptor: a socket and the origin's
         * connection leaked per request, until the proxy ran out of descriptors). */
        outq saved = c->to_upstream;
        c->to_upstream = (outq){ 0 };
        close_upstream(c);
        c->to_upstream = saved;
        c->state = rq->kind == HTTP_KIND_CONNECT ? CS_HTTP_HEAD : CS_FWD_REQ_BODY;
        c->resp_interim_seen = false;
        dial_start(c);
}

static void on_head_bytes(conn *c) {
        if (!c->req) {
                c->req = calloc(1, sizeof(*c->req));
                if (!c->req) {
                        conn_close(c);
                        return;
                }
        }
        int n = http_req_parse(c->in, c->in_len, c->req);
        if (n == 0 && c->in_len >= HTTP_HEAD_MAX) {
                answer_error(c, 431, "request head larger than 16 KiB", "");
                return;
        }
        if (n == 0)
                return;
        if (n < 0) {
                answer_error(c, c->req->status ? c->req->status : 400,
                             c->req->why ? c->req->why : "malformed request", "");
                return;
        }
        on_request(c, c->req);
}

/* ---- forwarding ----------------------------------------------------------------------------- */

/* Request body: client bytes up to the end of the body go upstream; what follows stays in c->in
 * (a pipelined next request, handled after this response). */
static int feed_request_body(conn *c) {
        if (c->body.done || c->in_len == 0)
                return 0;
        ssize_t k = http_body_feed(&c->body, c->in, c->in_len);
        if (k < 0)
                return -EBADMSG;
        if (outq_push(&c->to_upstream, c->in, (size_t) k) < 0)
                return -ENOMEM;
        conn_consume_in(c, (size_t) k);
        return 0;
}

static void start_forward_body(conn *c) {
        c->state = CS_FWD_REQ_BODY;
        conn_deadline(c, 0);
        c->uin_len = 0;
        c->resp_interim_seen = false;
        if (feed_request_body(c) < 0) {
                answer_error(c, 400, "malformed chunked request body", "");
                return;
        }
        update_interest(c);
}

/* What each side must be watched for, from the state and the queues. */
static void update_interest(conn *c) {
        /* Dialling and tunnels manage their own interest (proxy-dial.c, proxy-tunnel.c). */
        if (c->dead || (c->state != CS_HTTP_HEAD && c->state != CS_FWD_REQ_BODY &&
                        c->state != CS_FWD_RESP_HEAD && c->state != CS_FWD_RESP_BODY))
                return;
        uint32_t cl = 0, up = 0;
        bool req_open = c->state == CS_FWD_REQ_BODY && !c->body.done;
        if (c->to_client.len > c->to_client.off)
                cl |= EPOLLOUT;
        if (c->to_upstream.len > c->to_upstream.off)
                up |= EPOLLOUT;
        if (c->state == CS_HTTP_HEAD || (req_open && c->to_upstream.len < FWD_QUEUE_MAX))
                cl |= EPOLLIN | EPOLLRDHUP;
        if ((c->state == CS_FWD_REQ_BODY || c->state == CS_FWD_RESP_HEAD ||
             c->state == CS_FWD_RESP_BODY) && c->to_client.len - c->to_client.off < FWD_QUEUE_MAX)
                up |= EPOLLIN | EPOLLRDHUP;
        if (conn_watch(c, &c->cl, cl) < 0 || conn_watch(c, &c->up, c->up.fd >= 0 ? up : 0) < 0)
                conn_close(c);
}

/* The response is complete: next request, or close. */
static void response_done(conn *c, bool upstream_reusable) {
        c->upstream_reusable = upstream_reusable;
        if (!upstream_reusable)
                close_upstream(c);
        if (!c->client_keep_alive) {
                conn_finish(c);
                return;
        }
        c->state = CS_HTTP_HEAD;
        conn_deadline(c, c->px->now + PROXY_IDLE_MS);
        if (c->in_len > 0)
                on_head_bytes(c); /* a pipelined request */
        update_interest(c);
}

/* Bytes of the response body in c->uin[0..uin_len). */
static void feed_response_body(conn *c, bool *finished) {
        *finished = false;
        if (c->uin_len == 0)
                return;
        ssize_t k = http_body_feed(&c->body, c->uin, c->uin_len);
        if (k < 0) {
                /* The client already has the head: all we can do is cut the connection. */
                conn_close(c);
                return;
        }
        if (outq_push(&c->to_client, c->uin, (size_t) k) < 0) {
                conn_close(c);
                return;
        }
        /* Bytes past the end of a framed response: the upstream is confused; drop it. */
        bool extra = (size_t) k < c->uin_len;
        c->uin_len = 0;
        if (c->body.done) {
                *finished = true;
                if (extra)
                        c->upstream_reusable = false;
        }
}

static void on_response_head(conn *c) {
        http_resp resp;
        for (;;) {
                int n = http_resp_parse(c->uin, c->uin_len, c->method, &resp);
                if (n == 0 && c->uin_len >= HTTP_RESP_HEAD_MAX)
                        n = -HTTP_EREFUSED, resp.why = "response head too large";
                if (n == 0)
                        return;
                if (n < 0) {
                        if (c->to_client.len > c->to_client.off)
                                conn_close(c); /* part of an answer went out already */
                        else
                                answer_error(c, 502, resp.why ? resp.why : "bad upstream response",
                                             c->target);
                        return;
                }
                if (outq_push(&c->to_client, c->uin, (size_t) n) < 0) {
                        conn_close(c);
                        return;
                }
                memmove(c->uin, c->uin + n, c->uin_len - (size_t) n);
                c->uin_len -= (size_t) n;
                if (!resp.interim)
                        break;
                c->resp_interim_seen = true;
        }
        /* A final answer before the request body ended (e.g. 413): relay it, then close. */
        if (c->state == CS_FWD_REQ_BODY && !c->body.done)
                c->client_keep_alive = false;
        c->upstream_reusable = resp.reusable && c->client_keep_alive;
        http_body_init(&c->body, resp.framing, resp.content_length);
        c->state = CS_FWD_RESP_BODY;
        /* No body, or "Content-Length: 0": the response is complete with its head. Waiting
         * for body bytes that never come left it to the upstream's close, which discarded the
         * head still queued for the client when the close was read first (an empty reply). */
        bool finished = c->body.done;
        if (!finished)
                feed_response_body(c, &finished);
        if (finished && !c->dead)
                response_done(c, c->upstream_reusable);
}

static ssize_t read_upstream(conn *c, size_t cap) {
        if (c->uin_cap < cap) {
                char *nb = realloc(c->uin, cap);
                if (!nb)
                        return -ENOMEM;
                c->uin = nb;
                c->uin_cap = cap;
        }
        if (c->uin_len >= cap)
                return -ENOBUFS;
        ssize_t n;
        do
                n = recv(c->up.fd, c->uin + c->uin_len, cap - c->uin_len, 0);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return -errno;
        c->uin_len += (size_t) n;
        return n;
}

void http_on_upstream(conn *c, uint32_t events) {
        if ((events & EPOLLOUT) && outq_flush(&c->to_upstream, c->up.fd) < 0) {
                conn_close(c);
                return;
        }
        if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) {
                bool head = c->state != CS_FWD_RESP_BODY;
                ssize_t n = read_upstream(c, head ? HTTP_RESP_HEAD_MAX : PROXY_IO_CHUNK);
                if (n == 0 && c->state == CS_FWD_RESP_BODY &&
                    c->body.framing == HTTP_FRAMING_CLOSE) {
                        /* Read-until-close: the upstream's EOF ends the body and the client
                         * connection (the client frames this response by our close). */
                        c->client_keep_alive = false;
                        response_done(c, false);
                        return;
                }
                if (n == 0 || (n < 0 && n != -EAGAIN)) {
                        if (c->to_client.len == c->to_client.off && head &&
                            !c->resp_interim_seen)
                                answer_error(c, 502, "the upstream closed the connection",
                                             c->target);
                        else
                                conn_close(c);
                        return;
                }
                if (n > 0 && head)
                        on_response_head(c);
                else if (n > 0) {
                        bool finished;
                        feed_response_body(c, &finished);
                        if (finished && !c->dead) {
                                response_done(c, c->upstream_reusable);
                                return;
                        }
                }
        }
        update_interest(c);
}

void http_on_client(conn *c, uint32_t events) {
        if ((events & EPOLLOUT) && outq_flush(&c->to_client, c->cl.fd) < 0) {
                conn_close(c);
                return;
        }
        if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) {
                bool head = c->state == CS_HTTP_HEAD;
                bool first_bytes = head && c->in_len == 0;
                ssize_t n = conn_read_client(c, head ? HTTP_HEAD_MAX : PROXY_IO_CHUNK);
                /* The first byte of a kept-alive connection's next request starts the same
                 * handshake deadline a new connection has: a slow-loris client gains nothing
                 * by sending one quick request first. */
                if (first_bytes && n > 0 && c->deadline > c->px->now + PROXY_HANDSHAKE_MS)
                        conn_deadline(c, c->px->now + PROXY_HANDSHAKE_MS);
                if (n == 0 || (n < 0 && n != -EAGAIN && n != -ENOBUFS)) {
                        conn_close(c);
                        return;
                }
                if (head)
                        on_head_bytes(c);
                else if (c->state == CS_FWD_REQ_BODY && feed_request_body(c) < 0) {
                        answer_error(c, 400, "malformed chunked request body", "");
                        return;
                }
        }
        if (!c->dead && c->state == CS_FWD_REQ_BODY && c->body.done &&
            c->to_upstream.len == c->to_upstream.off)
                c->state = CS_FWD_RESP_HEAD;
        update_interest(c);
}

/* ---- dial outcomes ------------------------------------------------------------------------- */

void http_connected(conn *c) {
        if (c->req->kind == HTTP_KIND_FORWARD) {
                /* Bytes that came with an upstream proxy's answer, before any request: a server
                 * that speaks first is no HTTP server, and they would be read as the response. */
                if (c->uin_len > 0) {
                        answer_error(c, 502, "the server spoke before the request", c->target);
                        return;
                }
                c->up_connected = true;
                c->up_host = c->host;
                c->up_port = c->port;
                c->upstream_reusable = true;
                start_forward_body(c);
                return;
        }
        static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
        if (outq_push(&c->to_client, ok, sizeof(ok) - 1) < 0)
                conn_close(c);
        else
                tunnel_or_inspect(c);
}

void http_refused(conn *c, const char *rule) {
        char what[340];
        (void) snprintf(what, sizeof(what), "egress to %s refused", c->target);
        answer_error_why(c, 403, rule, what, c->reason);
}

void http_dial_failed(conn *c, int err, bool resolve_failed) {
        char why[200];
        if (c->dial_why[0])
                (void) snprintf(why, sizeof(why), "%s", c->dial_why);
        else
                (void) snprintf(why, sizeof(why), "%s: %s",
                                resolve_failed ? "cannot resolve the host" : "cannot connect",
                                strerror(err));
        answer_error(c, err == ETIMEDOUT ? 504 : 502, why, c->target);
}
