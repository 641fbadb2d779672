/* SPDX-License-Identifier: Apache-2.0 */
/* The proxy's per-request hook (docs/design/network.md, "Request rules"): every HTTP request
 * the proxy reads in the clear — today the forwarded http:// requests, each one of a keep-alive
 * connection on its own — passes request_admit() before anything of it is sent on; the request
 * rules (req-rules.c) judge it there. This is the one place later per-request work plugs in (a
 * git push gateway, credentials added to a request), so that none of it can be reached past.
 *
 * A tunnel (CONNECT, SOCKS5, a redirected connection) to a host with request rules is
 * terminated when the proxy has a session CA (proxy-tls.c: each request inside is judged here
 * too); without one (the landlock backend), or to an address, it is refused
 * (request_tunnel_refused()) unless tls.passthrough names the host, or a client could take the
 * tunnel instead of http:// and reach every path the rules refuse. */
#include "net/proxy-internal.h"

#include <stdio.h>
#include <string.h>

/* The path as the upstream will get it: http_req_rewrite() sends "/" before an empty path or a
 * bare query. Its length; target[n] is not set. */
static size_t upstream_target(const char *buf, const http_req *rq, char target[HTTP_LINE_MAX + 2]) {
        size_t n = rq->path.len;
        size_t pre = n == 0 || buf[rq->path.off] == '?' ? 1 : 0;
        target[0] = '/';
        memcpy(target + pre, buf + rq->path.off, n);
        return n + pre;
}

int request_admit_git(conn *c, const char *buf, const http_req *rq, git_hold **hold,
                      char *rule, size_t size) {
        char target[HTTP_LINE_MAX + 2];
        size_t n = upstream_target(buf, rq, target);
        return git_request(c, buf, rq, target, n, hold, rule, size);
}

bool request_admit(conn *c, const char *buf, const http_req *rq, req_verdict *v) {
        const req_rules *rr = c->px->cfg->req_rules;
        *v = (req_verdict){ .allowed = true, .index = -1 };
        if (!rr || !req_rules_ruled(rr, &c->host, c->port))
                return true;
        char target[HTTP_LINE_MAX + 2];
        size_t n = upstream_target(buf, rq, target);
        req_rules_judge(rr, &c->host, c->port, rq->method, target, n, v);
        if (v->allowed)
                return true;
        target[n] = '\0';
        int fd = c->px->cfg->report_fd;
        if (fd >= 0)
                report_request_violation(fd, c->tls ? "https" : "http", c->target, v->rule, c->client, v->reason,
                                         rq->method, target);
        return false;
}

bool request_tunnel_refused(conn *c, char *why, size_t size) {
        if (git_tunnel_refused(c, why, size))
                return true;
        const req_rules *rr = c->px->cfg->req_rules;
        bool forward = c->proto == PROXY_LISTENER_HTTP && c->req && c->req->kind == HTTP_KIND_FORWARD;
        if (!rr || forward || !req_rules_ruled(rr, &c->host, c->port) ||
            req_rules_passthrough(rr, &c->host, c->port))
                return false;
        /* Terminated (proxy-tls.c): judged once its ClientHello named the host. */
        if (c->px->cfg->tls && c->host.kind == NET_HOST_NAME)
                return false;
        (void) snprintf(why, size,
                        "request rules: egressRules name %s, and this proxy judges its requests "
                        "only over http:// or TLS it terminates (for a name); tls.passthrough "
                        "lets its tunnels through unjudged",
                        c->host.text);
        return true;
}
