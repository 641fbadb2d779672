/* SPDX-License-Identifier: Apache-2.0 */
/* The git push gateway in the proxy (docs/design/network.md, "Git push gateway"; the verdicts
 * are src/net/git-push.c's). With gitPush in the policy, a git host's TLS is terminated
 * (tls_wanted()), so each request to it passes request_admit() and then git_request(): the
 * ref advertisement of a push is judged by its repository, and a push's request is held —
 * head and body, nothing sent on — until its command section has been read and every command
 * judged. Only then does the held request go on, and the rest of its body (the packfile) is
 * streamed as any body is. A body the gateway cannot read is refused: a push it has not judged
 * never reaches the server. Git over SSH to those hosts cannot be read and is refused. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "net/proxy-internal.h"

/* Framed bytes held before a verdict: the command section (64 KiB) with the worst chunk
 * framing git's curl would use, and the packfile bytes that came in the same reads. */
#define GIT_HOLD_RAW_MAX (4 * 1024 * 1024)

struct git_hold {
        char repo[GIT_PUSH_REPO_MAX];
        char path[HTTP_LINE_MAX + 1]; /* the request's target, for the report */
        char *raw;       /* the head, then the framed body bytes, as received */
        size_t raw_len;
        char data[GIT_PUSH_SECTION_MAX]; /* the body's first data bytes */
        size_t data_len;
        git_push_cmd cmds[GIT_PUSH_CMDS_MAX];
        /* Refused: the rest of the body is read and dropped, then `answer` (git's own
         * rejection, when the push asked for report-status) or a 403 naming `rule` goes out. */
        bool refused;
        char rule[400];
        char answer[8192];
        size_t answer_len;
};

bool git_wanted(const conn *c) {
        return c->px->cfg->tls && git_push_host(c->px->cfg->git_push, &c->host);
}

bool git_tunnel_refused(conn *c, char *why, size_t size) {
        const git_push *g = c->px->cfg->git_push;
        if (git_push_ssh_refused(g, &c->host, c->port, why, size))
                return true;
        bool forward = c->proto == PROXY_LISTENER_HTTP && c->req && c->req->kind == HTTP_KIND_FORWARD;
        if (forward || !git_push_host(g, &c->host) || c->px->cfg->tls)
                return false;
        /* A proxy without the session CA (never given one by a launch that sets gitPush, but
         * the proxy does not rely on that): a tunnel to a git host would carry pushes nobody
         * judged. */
        (void) snprintf(why, size,
                        "gitPush: %s is a git host, and this proxy judges pushes only in TLS it "
                        "terminates, which it has no CA for",
                        c->host.text);
        return true;
}

static void report_git(conn *c, const char *method, const char *target, const char *rule,
                       const char *ref) {
        int fd = c->px->cfg->report_fd;
        if (fd >= 0)
                report_git_violation(fd, c->tls ? "https" : "http", c->target, rule, c->client,
                                     method, target, ref);
}

/* Whether any Content-Encoding field names a coding other than "identity": such a body is not
 * read (git does not compress a receive-pack request). */
static bool body_coded(const char *buf, const http_req *rq) {
        for (size_t i = 0; i < rq->n_headers; i++) {
                const http_header *h = &rq->headers[i];
                if (h->name.len == 16 && strncasecmp(buf + h->name.off, "Content-Encoding", 16) == 0 &&
                    !(h->value.len == 8 && strncasecmp(buf + h->value.off, "identity", 8) == 0))
                        return true;
        }
        return false;
}

int git_request(conn *c, const char *buf, const http_req *rq, const char *target, size_t n,
                git_hold **out, char *rule, size_t size) {
        *out = NULL;
        const git_push *g = c->px->cfg->git_push;
        if (!git_push_host(g, &c->host))
                return 0;
        char repo[GIT_PUSH_REPO_MAX];
        const char *why = NULL;
        git_push_verdict v;
        switch (git_push_classify(&c->host, rq->method, target, n, repo, &why)) {
        case GIT_REQ_OTHER:
                return 0;
        case GIT_REQ_ADVERTISE:
                git_push_judge_advertise(g, repo, &v);
                if (v.allowed)
                        return 0;
                (void) snprintf(rule, size, "%s", v.rule);
                break;
        case GIT_REQ_PUSH: {
                if (!c->tls) {
                        /* The forwarded path does not hold bodies (proxy-http.c); a push in
                         * the clear also shows its credentials to every network between. */
                        (void) snprintf(rule, size,
                                        "gitPush: a push over http:// is not read by the "
                                        "gateway; push over https://%s",
                                        c->host.text);
                        break;
                }
                if (body_coded(buf, rq)) {
                        (void) snprintf(rule, size, "gitPush: a push body with a "
                                                    "Content-Encoding the gateway does not read");
                        break;
                }
                git_hold *h = calloc(1, sizeof(*h));
                if (!h)
                        return -2;
                memcpy(h->repo, repo, sizeof(repo));
                (void) snprintf(h->path, sizeof(h->path), "%.*s", (int) n, target);
                *out = h;
                return 1;
        }
        case GIT_REQ_BAD:
        default:
                (void) snprintf(rule, size, "gitPush: %s", why ? why : "an unreadable push");
                break;
        }
        char shown[HTTP_LINE_MAX + 1];
        (void) snprintf(shown, sizeof(shown), "%.*s", (int) n, target);
        report_git(c, rq->method, shown, rule, "");
        return -1;
}

static void sink(void *ctx, const char *data, size_t len) {
        git_hold *h = ctx;
        size_t room = sizeof(h->data) - h->data_len;
        size_t k = len < room ? len : room;
        memcpy(h->data + h->data_len, data, k);
        h->data_len += k;
}

int git_hold_raw(git_hold *h, const char *buf, size_t len) {
        if (h->raw_len + len > GIT_HOLD_RAW_MAX)
                return -1;
        char *nb = realloc(h->raw, h->raw_len + len + 1);
        if (!nb)
                return -1;
        h->raw = nb;
        memcpy(h->raw + h->raw_len, buf, len);
        h->raw_len += len;
        return 0;
}

/* git's rejection of every command, as a complete HTTP response (git prints "! [remote
 * rejected] REF (cordon: RULE)"; X-Cordon-Error names the rule for any other reader). */
static void make_git_answer(git_hold *h, size_t n, size_t refused, unsigned caps) {
        char msg[420], body[6144], err[400];
        size_t k = 0;
        for (const char *s = h->rule; *s && k + 1 < sizeof(err); s++)
                err[k++] = *s >= 0x20 && *s < 0x7f ? *s : '?';
        err[k] = '\0';
        (void) snprintf(msg, sizeof(msg), "cordon: %s", err);
        size_t bl = git_push_report(h->cmds, n, refused, caps, msg, body, sizeof(body));
        int hl = bl == 0 ? -1
                         : snprintf(h->answer, sizeof(h->answer),
                                    "HTTP/1.1 200 OK\r\n"
                                    "Content-Type: application/x-git-receive-pack-result\r\n"
                                    "Cache-Control: no-cache\r\nX-Cordon-Error: %s\r\n"
                                    "Content-Length: %zu\r\nConnection: close\r\n\r\n",
                                    err, bl);
        if (hl < 0 || (size_t) hl + bl > sizeof(h->answer))
                return; /* too many commands to list: the 403 */
        memcpy(h->answer + hl, body, bl);
        h->answer_len = (size_t) hl + bl;
}

/* Judges the data read so far: 0 more needed, 1 allowed, -1 refused (h->rule, reported). */
static int judge_held(conn *c, git_hold *h, bool body_done) {
        size_t n = 0;
        unsigned caps = 0;
        const char *why = NULL;
        int r = git_push_parse(h->data, h->data_len, h->cmds, GIT_PUSH_CMDS_MAX, &n, &caps, &why);
        if (r == 0 && !body_done)
                return 0;
        git_push_verdict v = { 0 };
        if (r == 1)
                git_push_judge(c->px->cfg->git_push, h->repo, h->cmds, n, &v);
        if (v.allowed)
                return 1;
        if (r == 1)
                (void) snprintf(h->rule, sizeof(h->rule), "%s", v.rule);
        else
                (void) snprintf(h->rule, sizeof(h->rule), "gitPush: %s",
                                why ? why : "a push body that ends before its commands do");
        if (r == 1 && (caps & GIT_CAP_REPORT_STATUS))
                make_git_answer(h, n, v.cmd, caps);
        report_git(c, "POST", h->path, h->rule, v.ref);
        h->refused = true;
        return -1;
}

int git_hold_feed(conn *c, git_hold *h, http_body *b, const char *buf, size_t len,
                  size_t *used) {
        bool was_refused = h->refused;
        ssize_t k = http_body_feed_data(b, buf, len, was_refused ? NULL : sink, h);
        if (k < 0) {
                if (!h->refused)
                        report_git(c, "POST", h->path, "gitPush: a malformed push body", "");
                (void) snprintf(h->rule, sizeof(h->rule), "gitPush: %s",
                                b->why ? b->why : "a malformed push body");
                h->answer_len = 0;
                h->refused = true;
                *used = len;
                return -2;
        }
        *used = (size_t) k;
        if (!was_refused && git_hold_raw(h, buf, (size_t) k) < 0) {
                (void) snprintf(h->rule, sizeof(h->rule),
                                "gitPush: a push body too large to hold before its verdict");
                report_git(c, "POST", h->path, h->rule, "");
                h->refused = true;
                return -2;
        }
        /* A refused push's body is read to its end before the answer, so that the client,
         * still sending, is not cut off (a reset would lose the answer): it reaches nobody. */
        int r = was_refused ? -1 : judge_held(c, h, b->done);
        return r < 0 && b->done ? -2 : r;
}

const char *git_hold_answer(const git_hold *h, size_t *len, const char **rule) {
        *len = h->answer_len;
        *rule = h->rule;
        return h->answer_len ? h->answer : NULL;
}

const char *git_hold_bytes(const git_hold *h, size_t *len) {
        *len = h->raw_len;
        return h->raw;
}

void git_hold_free(git_hold *h) {
        if (!h)
                return;
        free(h->raw);
        free(h);
}
