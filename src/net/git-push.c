/* SPDX-License-Identifier: Apache-2.0 */
/* The git push gateway's pure half (git-push.h says the semantics): which requests are pushes,
 * the receive-pack command section, and the verdict against gitPush.allow. */
#include "net/git-push.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/req-rules.h"

struct git_push {
        const policy_git_push *src;
};

/* The git-hosting names of the built-in allowlists (data/egress/github.list and baseline.list,
 * "Git hosting"): a push to them is judged even when no allow entry names them, so the default
 * deny covers the hosts an agent is most likely to push to. */
static const char *const builtin_hosts[] = {
        "github.com", "gitlab.com", "bitbucket.org", "codeberg.org", "git.sr.ht",
};
/* GitHub's, GitLab's and Bitbucket's SSH on port 443 (git over SSH under another port), and
 * the host their HTTPS URLs name. */
static const char *const ssh_hosts[][2] = {
        { "ssh.github.com", "github.com" },
        { "altssh.gitlab.com", "gitlab.com" },
        { "altssh.bitbucket.org", "bitbucket.org" },
};

int git_push_new(git_push **out, const policy_git_push *g) {
        *out = NULL;
        if (!g->on)
                return 0;
        git_push *p = calloc(1, sizeof(*p));
        if (!p)
                return -ENOMEM;
        p->src = g;
        *out = p;
        return 0;
}

void git_push_free(git_push *g) {
        free(g);
}

/* The host part of an entry's repo ("host/path"). */
static bool repo_host_is(const char *repo, const char *host) {
        size_t n = strlen(host);
        return strncmp(repo, host, n) == 0 && repo[n] == '/';
}

bool git_push_host(const git_push *g, const net_host *h) {
        if (!g || h->kind != NET_HOST_NAME)
                return false;
        for (size_t i = 0; i < sizeof(builtin_hosts) / sizeof(builtin_hosts[0]); i++)
                if (strcmp(builtin_hosts[i], h->text) == 0)
                        return true;
        for (size_t i = 0; i < g->src->n_allow; i++)
                if (repo_host_is(g->src->allow[i].repo, h->text))
                        return true;
        return false;
}

bool git_push_ssh_refused(const git_push *g, const net_host *h, uint16_t port, char *why,
                          size_t size) {
        if (!g || h->kind != NET_HOST_NAME)
                return false;
        const char *https = NULL;
        for (size_t i = 0; i < sizeof(ssh_hosts) / sizeof(ssh_hosts[0]); i++)
                if (strcmp(ssh_hosts[i][0], h->text) == 0)
                        https = ssh_hosts[i][1];
        if (!https && port == 22 && git_push_host(g, h))
                https = h->text;
        if (!https)
                return false;
        (void) snprintf(why, size,
                        "gitPush: pushes over SSH cannot be inspected; use "
                        "https://%s/OWNER/REPO.git (git remote set-url)",
                        https);
        return true;
}

/* The repository path: what precedes `suffix` in the path, without a trailing ".git". */
static bool repo_of(const net_host *h, const char *path, size_t n, const char *suffix,
                    char repo[static GIT_PUSH_REPO_MAX]) {
        size_t sl = strlen(suffix);
        if (n <= sl + 1 || memcmp(path + n - sl, suffix, sl) != 0 || path[n - sl - 1] != '/')
                return false;
        size_t rl = n - sl - 1; /* "/org/repo(.git)" */
        if (rl > 4 && memcmp(path + rl - 4, ".git", 4) == 0)
                rl -= 4;
        int w = snprintf(repo, GIT_PUSH_REPO_MAX, "%s%.*s", h->text, (int) rl, path);
        return rl > 1 && w > 0 && w < GIT_PUSH_REPO_MAX;
}

static int hexval(char c);

static char lower(char c) {
        return c >= 'A' && c <= 'Z' ? (char) (c - 'A' + 'a') : c;
}

/* Percent-decodes s[0..n) in place (one round); the new length. */
static size_t decode_once(char *s, size_t n) {
        size_t o = 0;
        for (size_t i = 0; i < n; i++) {
                int hi = s[i] == '%' && i + 2 < n ? hexval(lower(s[i + 1])) : -1;
                int lo = hi >= 0 ? hexval(lower(s[i + 2])) : -1;
                if (lo >= 0) {
                        s[o++] = (char) (hi * 16 + lo);
                        i += 2;
                } else {
                        s[o++] = s[i];
                }
        }
        return o;
}

/* Whether the target names receive-pack, in any case, as written or once decoded (up to three
 * rounds: a server, or a proxy before it, may decode more than once). A server decodes the
 * path before it picks the service: "git-receive%2Dpack" is a push to it. */
static bool mentions_receive_pack(const char *t, size_t len) {
        static const char rp[] = "receive-pack";
        char buf[8192];
        if (len > sizeof(buf))
                return true; /* too long to look at: judged as a push, so refused */
        memcpy(buf, t, len);
        for (int round = 0; round < 4; round++) {
                for (size_t i = 0; i + sizeof(rp) - 1 <= len; i++)
                        if (strncasecmp(buf + i, rp, sizeof(rp) - 1) == 0)
                                return true;
                size_t m = decode_once(buf, len);
                if (m == len)
                        return false;
                len = m;
        }
        return true;
}

static bool query_is(const char *q, size_t n, const char *want) {
        /* git sends exactly "service=git-receive-pack"; any other spelling is read as a push
         * too (below), so a server that finds the service among other parameters is covered. */
        return n == strlen(want) && memcmp(q, want, n) == 0;
}

git_push_kind git_push_classify(const net_host *h, const char *method, const char *target,
                                size_t len, char repo[static GIT_PUSH_REPO_MAX],
                                const char **why) {
        size_t n = 0;
        while (n < len && target[n] != '?')
                n++;
        const char *q = n < len ? target + n + 1 : "";
        size_t ql = n < len ? len - n - 1 : 0;
        /* Any mention of receive-pack makes the request a push request, so that a target
         * spelled differently from git's (a second query parameter, a case variant a
         * case-insensitive server accepts, a percent-encoding) is judged, or refused, rather
         * than passed. */
        if (!mentions_receive_pack(target, len))
                return GIT_REQ_OTHER;
        *why = req_path_ambiguous(target, n);
        if (*why)
                return GIT_REQ_BAD;
        if (strcmp(method, "POST") == 0 && ql == 0 &&
            repo_of(h, target, n, "git-receive-pack", repo))
                return GIT_REQ_PUSH;
        if ((strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0) &&
            query_is(q, ql, "service=git-receive-pack") &&
            repo_of(h, target, n, "info/refs", repo))
                return GIT_REQ_ADVERTISE;
        *why = "a receive-pack (push) request git does not send";
        return GIT_REQ_BAD;
}

/* ---- the command section ---------------------------------------------------------------- */

static int hexval(char c) {
        return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

const char *git_push_ref_invalid(const char *s, size_t n) {
        if (n < 6 || n > GIT_PUSH_REF_MAX || memcmp(s, "refs/", 5) != 0)
                return "a ref name that does not start with refs/ (or is too long)";
        if (s[n - 1] == '/' || s[n - 1] == '.' ||
            (n >= 5 && memcmp(s + n - 5, ".lock", 5) == 0))
                return "a ref name ending in '/', '.' or \".lock\"";
        for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char) s[i];
                if (c <= 0x20 || c == 0x7f || strchr("~^:?*[\\", c))
                        return "a ref name with a control character, space or one of ~^:?*[\\";
                if (i + 1 < n && ((c == '.' && s[i + 1] == '.') || (c == '@' && s[i + 1] == '{') ||
                                  (c == '/' && (s[i + 1] == '/' || s[i + 1] == '.'))))
                        return "a ref name with \"..\", \"@{\", \"//\" or a component starting "
                               "with '.'";
        }
        return NULL;
}

/* An object id: 40 (SHA-1) or 64 (SHA-256) lower-case hex digits. *zero: all zeros. */
static size_t object_id(const char *s, size_t n, bool *zero) {
        size_t k = 0;
        *zero = true;
        while (k < n && hexval(s[k]) >= 0) {
                *zero = *zero && s[k] == '0';
                k++;
        }
        return k == 40 || k == 64 ? k : 0;
}

/* One "old new ref" line (its pkt-line payload, the capabilities and final LF cut off). */
static int parse_command(const char *s, size_t n, git_push_cmd *c, const char **why) {
        bool old_zero, new_zero;
        size_t a = object_id(s, n, &old_zero);
        size_t b = a && a < n && s[a] == ' ' ? object_id(s + a + 1, n - a - 1, &new_zero) : 0;
        if (!a || b != a || a + 1 + b >= n || s[a + 1 + b] != ' ') {
                *why = "a receive-pack command that is not \"old-id new-id ref\"";
                return -1;
        }
        const char *ref = s + 2 * a + 2;
        size_t rl = n - 2 * a - 2;
        if ((*why = git_push_ref_invalid(ref, rl)))
                return -1;
        if (old_zero && new_zero) {
                *why = "a receive-pack command with two zero ids";
                return -1;
        }
        *c = (git_push_cmd){ .create = old_zero, .del = new_zero };
        memcpy(c->ref, ref, rl);
        c->ref[rl] = '\0';
        return 0;
}

/* The pkt-line length at data[0..4): 0 flush, 1 delim, 2 response-end, 4.. a line; -1 bad. */
static int pkt_len(const char *d) {
        int v = 0;
        for (int i = 0; i < 4; i++) {
                int x = hexval(d[i]);
                if (x < 0)
                        return -1;
                v = v * 16 + x;
        }
        return v == 3 ? -1 : v;
}

/* The capability words after the first command's NUL (p[0..n)). */
static unsigned caps_of(const char *p, size_t n) {
        unsigned caps = 0;
        for (size_t i = 0; i < n;) {
                size_t e = i;
                while (e < n && p[e] != ' ')
                        e++;
                size_t w = e - i;
                if ((w == 13 && memcmp(p + i, "report-status", 13) == 0) ||
                    (w == 16 && memcmp(p + i, "report-status-v2", 16) == 0))
                        caps |= GIT_CAP_REPORT_STATUS;
                if ((w == 13 && memcmp(p + i, "side-band-64k", 13) == 0) ||
                    (w == 9 && memcmp(p + i, "side-band", 9) == 0))
                        caps |= GIT_CAP_SIDE_BAND;
                i = e + 1;
        }
        return caps;
}

int git_push_parse(const char *d, size_t len, git_push_cmd *cmds, size_t max, size_t *n,
                   unsigned *caps, const char **why) {
        *n = 0;
        *caps = 0;
        *why = NULL;
        size_t o = 0;
        bool shallow_ok = true;
        for (;;) {
                if (len - o < 4)
                        return len < GIT_PUSH_SECTION_MAX ? 0 : -1;
                int pl = pkt_len(d + o);
                if (pl == 0) {
                        if (*n == 0 && !shallow_ok)
                                *why = "a receive-pack request with shallow lines and no "
                                       "command";
                        return *why ? -1 : 1;
                }
                if (pl < 5) {
                        *why = "a malformed pkt-line in the receive-pack commands";
                        return -1;
                }
                if ((size_t) pl > len - o) {
                        if (len < GIT_PUSH_SECTION_MAX)
                                return 0;
                        *why = "a receive-pack command section over 64 KiB";
                        return -1;
                }
                const char *p = d + o + 4;
                size_t pn = (size_t) pl - 4;
                if (p[pn - 1] == '\n')
                        pn--;
                o += (size_t) pl;
                /* Shallow lines come first and change no ref. */
                if (shallow_ok && pn > 8 && memcmp(p, "shallow ", 8) == 0) {
                        bool z;
                        if (object_id(p + 8, pn - 8, &z) != pn - 8) {
                                *why = "a malformed shallow line";
                                return -1;
                        }
                        continue;
                }
                shallow_ok = false;
                /* The capabilities ride after a NUL on the first command. A signed push
                 * ("push-cert") carries its commands inside the certificate: refused, not
                 * parsed, rather than judged on a second reading of the same bytes. */
                const char *nul = *n == 0 ? memchr(p, '\0', pn) : NULL;
                if (nul) {
                        *caps = caps_of(nul + 1, pn - (size_t) (nul - p) - 1);
                        pn = (size_t) (nul - p);
                }
                if (memchr(p, '\0', pn)) {
                        *why = "a NUL inside a receive-pack command";
                        return -1;
                }
                if (pn >= 9 && memcmp(p, "push-cert", 9) == 0) {
                        *why = "a signed push (push certificate), which the gateway does not read";
                        return -1;
                }
                if (*n >= max) {
                        *why = "more receive-pack commands than the gateway reads (1024)";
                        return -1;
                }
                if (parse_command(p, pn, &cmds[*n], why) < 0)
                        return -1;
                (*n)++;
        }
}

/* ---- the verdict ------------------------------------------------------------------------- */

static bool refs_match(const policy_git_push_rule *r, const char *ref) {
        for (size_t i = 0; i < r->refs.n; i++)
                if (req_glob_match(r->refs.v[i], ref, strlen(ref), false))
                        return true;
        return false;
}

void git_push_judge_advertise(const git_push *g, const char *repo, git_push_verdict *v) {
        *v = (git_push_verdict){ .index = -1 };
        for (size_t i = 0; g && i < g->src->n_allow; i++)
                if (strcmp(g->src->allow[i].repo, repo) == 0) {
                        v->allowed = true;
                        v->index = (int) i;
                        (void) snprintf(v->rule, sizeof(v->rule), "gitPush.allow[%zu]: %s", i,
                                        repo);
                        return;
                }
        (void) snprintf(v->rule, sizeof(v->rule),
                        "gitPush: no gitPush.allow entry names %.300s (pushes denied by default)",
                        repo);
}

/* One command: the first entry of this repo that allows it, or the refusal's wording. */
static bool judge_one(const policy_git_push *g, const char *repo, const git_push_cmd *c,
                      git_push_verdict *v) {
        const char *missing = NULL;
        int near = -1;
        for (size_t i = 0; i < g->n_allow; i++) {
                const policy_git_push_rule *r = &g->allow[i];
                if (strcmp(r->repo, repo) != 0 || !refs_match(r, c->ref))
                        continue;
                if (c->del && !r->delete_ok) {
                        missing = "deleting it needs \"delete\": true";
                } else if (!c->create && !c->del && r->create_only) {
                        missing = "it exists, and the entry has \"update\": false (create only)";
                } else {
                        v->index = (int) i;
                        return true;
                }
                near = (int) i;
        }
        if (near >= 0)
                (void) snprintf(v->rule, sizeof(v->rule), "gitPush.allow[%d]: %.200s: %s", near,
                                c->ref, missing);
        else
                (void) snprintf(v->rule, sizeof(v->rule),
                                "gitPush: no gitPush.allow entry allows %s %.200s of %.100s",
                                c->del ? "deleting" : c->create ? "creating" : "updating", c->ref,
                                repo);
        (void) snprintf(v->ref, sizeof(v->ref), "%s", c->ref);
        v->index = near;
        return false;
}

void git_push_judge(const git_push *g, const char *repo, const git_push_cmd *cmds, size_t n,
                    git_push_verdict *v) {
        *v = (git_push_verdict){ .index = -1 };
        if (!g) {
                v->allowed = true;
                return;
        }
        /* Every command must pass: receive-pack applies the others even when one fails
         * (unless the push is atomic), so one refused ref refuses the whole request. */
        int first = -1;
        for (size_t i = 0; i < n; i++) {
                if (!judge_one(g->src, repo, &cmds[i], v)) {
                        v->cmd = i;
                        return;
                }
                if (first < 0)
                        first = v->index;
        }
        v->allowed = true;
        v->index = first;
        if (n == 0) /* git's probe before a large push: "0000", no ref changes */
                (void) snprintf(v->rule, sizeof(v->rule), "gitPush: a push with no commands");
        else
                (void) snprintf(v->rule, sizeof(v->rule), "gitPush.allow[%d]: %s", first, repo);
}

/* ---- the refusal git shows ---------------------------------------------------------------- */

static bool put_pkt(char *out, size_t size, size_t *o, const char *s, size_t n) {
        static const char hex[] = "0123456789abcdef";
        if (n + 4 > 65520 || *o + n + 4 > size)
                return false;
        for (int i = 0; i < 4; i++)
                out[*o + (size_t) i] = hex[((n + 4) >> (12 - 4 * i)) & 15];
        memcpy(out + *o + 4, s, n);
        *o += n + 4;
        return true;
}

size_t git_push_report(const git_push_cmd *cmds, size_t n, size_t refused, unsigned caps,
                       const char *msg, char *out, size_t size) {
        /* The report itself, then (side-band) the same bytes cut into band-1 packets. */
        char rep[8192];
        size_t o = 0;
        bool ok = put_pkt(rep, sizeof(rep), &o, "unpack ok\n", 10);
        for (size_t i = 0; ok && i < n; i++) {
                char line[600];
                int l = snprintf(line, sizeof(line), "ng %s %s\n", cmds[i].ref,
                                 i == refused ? msg : "cordon: another ref of this push was refused");
                ok = l > 0 && (size_t) l < sizeof(line) && put_pkt(rep, sizeof(rep), &o, line, (size_t) l);
        }
        ok = ok && o + 4 <= sizeof(rep);
        if (!ok)
                return 0;
        memcpy(rep + o, "0000", 4);
        o += 4;
        if (!(caps & GIT_CAP_SIDE_BAND)) {
                if (o > size)
                        return 0;
                memcpy(out, rep, o);
                return o;
        }
        size_t w = 0;
        for (size_t i = 0; i < o; i += 995) { /* side-band's (not -64k's) 1000-byte packets */
                char band[996];
                size_t k = o - i < 995 ? o - i : 995;
                band[0] = 1;
                memcpy(band + 1, rep + i, k);
                if (!put_pkt(out, size, &w, band, k + 1))
                        return 0;
        }
        if (w + 4 > size)
                return 0;
        memcpy(out + w, "0000", 4);
        return w + 4;
}
