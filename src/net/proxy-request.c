/* SPDX-License-Identifier: Apache-2.0 */
/* The proxy's per-request hook (docs/design/network.md, "Request rules"): every HTTP request
 * the proxy reads in the clear — today the forwarded http:// requests, each one of a keep-alive
 * connection on its own — passes request_admit() before anything of it is sent on; the request
 * rules (req-rules.c) judge it there. This is the one place later per-request work plugs in (a
 * git push gateway, credentials added to a request), so that none of it can be reached past.
 *
 * A tunnel (CONNECT, SOCKS5, a redirected connection) to a host with request rules is
 * terminated when the proxy has a session CA (proxy-tls.c: each request inside is judged here
 * too); without one, or to an address, it is refused
 * (request_tunnel_refused()) unless tls.passthrough names the host, or a client could take the
 * tunnel instead of http:// and reach every path the rules refuse. */
#include "net/proxy-internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "net/cred-rewrite.h"

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

/* The rule text of a refused placeholder: the credential by its variable, never a value. */
static void cred_rule(char *why, size_t size, const cred *off, const char *where) {
        (void) snprintf(why, size,
                        "credentials: the placeholder of %s (%s %s) %s; it goes only to "
                        "the hosts the credential is bound to, over HTTPS",
                        off->name, off->brokered ? "broker" : "secret", off->secret, where);
}

int request_credentials(conn *c, const char *head, size_t len, const char *method, bool tls,
                        char **out, size_t *out_len, char *why, size_t size) {
        const cred_set *cs = c->px->cfg->creds;
        const cred *off = NULL;
        int r = cred_rewrite_head(cs, &c->host, c->port, tls, head, len, out, out_len, &off);
        if (r >= 0)
                return r;
        if (r != -EACCES) {
                (void) snprintf(why, size, "credentials: %s",
                                r == -E2BIG    ? "the request head grew too large"
                                : r == -EINVAL ? "not a whole request head"
                                               : "out of memory");
                return -2;
        }
        cred_rule(why, size, off,
                  tls || !cred_set_binds(cs, &c->host, c->port)
                          ? "was sent to a host it is not bound to"
                          : "was sent over plain http");
        int fd = c->px->cfg->report_fd;
        /* The path only, up to its query: where a placeholder usually sits, and reports need
         * no copy of it. */
        const char *sp = memchr(head, ' ', len);
        size_t pl = 0;
        while (sp && sp + 1 + pl < head + len && !strchr(" ?\r", sp[1 + pl]) && pl < 512)
                pl++;
        char path[520];
        (void) snprintf(path, sizeof(path), "%.*s", (int) pl, sp ? sp + 1 : "");
        if (fd >= 0)
                report_request_violation(fd, tls ? "https" : "http", c->target, why, c->client,
                                         NULL, method, path);
        return -1;
}

bool request_tunnel_refused(conn *c, char *why, size_t size) {
        if (git_tunnel_refused(c, why, size))
                return true;
        const req_rules *rr = c->px->cfg->req_rules;
        const cred_set *cs = c->px->cfg->creds;
        /* A name is not a place for a placeholder either (a DNS name carries it to whoever
         * serves the zone); reported like a request carrying it. */
        const cred *off = cred_find_placeholder(cs, c->host.text, strlen(c->host.text));
        if (off) {
                cred_rule(why, size, off, "is in the name of the destination");
                return true;
        }
        bool forward = c->proto == PROXY_LISTENER_HTTP && c->req && c->req->kind == HTTP_KIND_FORWARD;
        bool judged = req_rules_ruled(rr, &c->host, c->port) || cred_set_binds(cs, &c->host, c->port);
        if (forward || !judged || req_rules_passthrough(rr, &c->host, c->port))
                return false;
        /* Terminated (proxy-tls.c): judged once its ClientHello named the host. */
        if (c->px->cfg->tls && c->host.kind == NET_HOST_NAME)
                return false;
        (void) snprintf(why, size,
                        "request rules: egressRules or credentials name %s, and this proxy "
                        "judges its requests only over http:// or TLS it terminates (for a "
                        "name); tls.passthrough lets its tunnels through unjudged",
                        c->host.text);
        return true;
}
