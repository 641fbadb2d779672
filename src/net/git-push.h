/* SPDX-License-Identifier: Apache-2.0 */
/* The git push gateway (docs/policy.md, "Git push"; docs/design/network.md, "Git push
 * gateway"): which smart-HTTP pushes the proxy lets through to a git host, once a policy has a
 * gitPush key. Pure: the proxy (src/net/proxy-git.c) hands it each request's canonical host,
 * method and target, and the decoded start of a push's body.
 *
 *   - a git host is one of the built-in git-hosting names (git_push_builtin_hosts) or a host
 *     named in gitPush.allow[].repo; on those hosts the proxy terminates TLS, so the requests
 *     below are seen;
 *   - "GET /REPO/info/refs?service=git-receive-pack" (the push's ref advertisement) and
 *     "POST /REPO/git-receive-pack" (the push) are push requests; everything else, fetch and
 *     clone (git-upload-pack) included, is not judged here;
 *   - an advertisement passes when an allow entry names REPO; a push passes when every command
 *     in its body is allowed by an entry naming REPO: the ref matches one of the entry's globs,
 *     a deletion needs "delete": true, an update of an existing ref needs "update" (default
 *     true). Anything else, and any body this parser cannot read, is refused.
 * A force update cannot be told from a fast-forward by the commands (it needs the objects'
 * ancestry): "update": false (create-only) is what keeps a ref's history from being rewritten. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/policy.h"
#include "util/host.h"

/* The decoded command section a push may have before its flush-pkt: about 600 commands. A
 * mirror push of more is refused (the proxy cannot hold more before its verdict). */
#define GIT_PUSH_SECTION_MAX 65536
#define GIT_PUSH_CMDS_MAX 1024
#define GIT_PUSH_REF_MAX 255
#define GIT_PUSH_REPO_MAX 512

typedef struct git_push git_push;

/* Built from the policy's gitPush (NULL out, 0, when it has none). 0 or -errno. */
int git_push_new(git_push **out, const policy_git_push *g);
void git_push_free(git_push *g);

/* Whether pushes to this canonical host are judged (a git host). */
bool git_push_host(const git_push *g, const net_host *h);
/* Whether a tunnel to h:port is git over SSH, which the proxy cannot read: refused, with a
 * reason naming the HTTPS URL in why. Port 22 of a git host, or an SSH-over-443 name
 * (ssh.github.com, altssh.gitlab.com, altssh.bitbucket.org) on any port. */
bool git_push_ssh_refused(const git_push *g, const net_host *h, uint16_t port, char *why,
                          size_t size);

typedef enum git_push_kind {
        GIT_REQ_OTHER,     /* not a push request: not judged here */
        GIT_REQ_ADVERTISE, /* GET .../info/refs?service=git-receive-pack */
        GIT_REQ_PUSH,      /* POST .../git-receive-pack */
        GIT_REQ_BAD,       /* a push request whose path cannot be read safely: refuse */
} git_push_kind;

/* Classifies a request on a git host. `target` is the origin-form target (target_len bytes).
 * For ADVERTISE and PUSH, repo gets "host/path" (no ".git", no trailing '/'); for BAD, *why. */
git_push_kind git_push_classify(const net_host *h, const char *method, const char *target,
                                size_t target_len, char repo[static GIT_PUSH_REPO_MAX],
                                const char **why);

typedef struct git_push_cmd {
        bool create, del;             /* old id all zeros; new id all zeros */
        char ref[GIT_PUSH_REF_MAX + 1];
} git_push_cmd;

/* Capabilities of a push (the first command's, after its NUL) the answer depends on. */
#define GIT_CAP_REPORT_STATUS 1u /* report-status or report-status-v2 */
#define GIT_CAP_SIDE_BAND 2u     /* side-band-64k or side-band: the report goes on band 1 */

/* Reads the command section at the start of a receive-pack request body (data bytes, transfer
 * framing removed): optional "shallow <id>" pkt-lines, then "old new ref" commands (the first
 * with capabilities after a NUL), then a flush-pkt. Returns 1 when complete (*n commands in
 * cmds), 0 when more bytes are needed (len < GIT_PUSH_SECTION_MAX), -1 when it is not such a
 * section (*why: a signed push, a bad pkt-line, an invalid ref name, too many commands). *caps
 * gets the GIT_CAP_* the first command announces. */
int git_push_parse(const char *data, size_t len, git_push_cmd *cmds, size_t max, size_t *n,
                   unsigned *caps, const char **why);

/* The body of a receive-pack result refusing every command, in the form git reads and shows
 * ("! [remote rejected] REF (MSG)"): "unpack ok", then "ng REF MSG" for each, each a pkt-line,
 * then a flush; inside side-band packets on band 1 when caps has GIT_CAP_SIDE_BAND. `msg` is one
 * printable line, given to the refused command `refused`; the others are told another ref was
 * refused. Its length, or 0 when it does not fit in size. */
size_t git_push_report(const git_push_cmd *cmds, size_t n, size_t refused, unsigned caps,
                       const char *msg, char *out, size_t size);

typedef struct git_push_verdict {
        bool allowed;
        char rule[400]; /* the deciding entry (gitPush.allow[2] ...) or why none allows it */
        char ref[GIT_PUSH_REF_MAX + 1]; /* the refused ref, "" if none */
        int index;      /* the deciding allow entry, -1 if none */
        size_t cmd;     /* the refused command's index */
} git_push_verdict;

void git_push_judge_advertise(const git_push *g, const char *repo, git_push_verdict *v);
void git_push_judge(const git_push *g, const char *repo, const git_push_cmd *cmds, size_t n,
                    git_push_verdict *v);

/* NULL when s is a ref name receive-pack takes as written (git check-ref-format's rules,
 * "refs/" first), else why not. */
const char *git_push_ref_invalid(const char *s, size_t n);
