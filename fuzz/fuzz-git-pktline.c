/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target for the git push gateway's receive-pack reader (src/net/git-push.c): the start of
 * every push body a sandboxed git sends to a git host reaches it before any byte goes on.
 * Input: the body's data bytes. Promises checked:
 *  - a verdict stops at the section's end: any prefix of the input reads as "more" or as the
 *    whole input's verdict, with the same commands; so bytes split over reads never change it;
 *  - every accepted command has a ref git_push_ref_invalid() accepts, under refs/, and is not
 *    both a creation and a deletion;
 *  - the rejection built for the accepted commands (git_push_report, with and without side-band)
 *    reads back as pkt-lines: "unpack ok", one "ng REF MSG" per command in order, a flush;
 *  - the input read as a request-target: a push request (PUSH, ADVERTISE) has a path
 *    req_path_ambiguous() accepts and a repository under the host; a target classified as no
 *    push request never names receive-pack, in any case;
 *  - against one allow entry ("refs/heads/agent/" + "*", no delete) the verdict is allowed exactly
 *    when every command's ref matches and none deletes, and the refused ref is the first that
 *    does not pass.
 * Built with libFuzzer (-DCORDON_LIBFUZZER) and as a plain program replaying
 * fuzz/corpus/git-pktline in the unit suite ("valid-*" seeds must read as a complete section,
 * "invalid-*" seeds be refused, "more-*" seeds ask for more). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "net/git-push.h"
#include "net/req-rules.h"

#include "replay.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define T "fuzz-git-pktline"
#define MAXC 64

static git_push_cmd cmds[MAXC], again[MAXC];

static int parse(const char *d, size_t n, git_push_cmd *c, size_t *k) {
        unsigned caps;
        const char *why;
        int r = git_push_parse(d, n, c, MAXC, k, &caps, &why);
        FUZZ_CHECK(T, r >= -1 && r <= 1);
        FUZZ_CHECK(T, (r == -1) == (why != NULL));
        return r;
}

static size_t pkt_at(const char *p, size_t n, size_t o, const char **line) {
        FUZZ_CHECK(T, o + 4 <= n);
        unsigned v = 0;
        for (int i = 0; i < 4; i++) {
                char c = p[o + (size_t) i];
                FUZZ_CHECK(T, (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'));
                v = v * 16 + (unsigned) (c <= '9' ? c - '0' : c - 'a' + 10);
        }
        FUZZ_CHECK(T, v == 0 || (v >= 4 && o + v <= n));
        *line = p + o + 4;
        return v;
}

static void check_report(size_t k, unsigned caps) {
        static char out[200000], plain[200000];
        size_t n = git_push_report(cmds, k, 0, caps, "cordon: refused", out, sizeof(out));
        if (n == 0)
                return; /* too many to list: the caller answers 403 */
        size_t pn = n;
        const char *p = out;
        if (caps & GIT_CAP_SIDE_BAND) { /* band 1 packets, then a flush */
                pn = 0;
                size_t o = 0;
                const char *line;
                size_t v;
                while ((v = pkt_at(out, n, o, &line)) != 0) {
                        FUZZ_CHECK(T, v > 5 && line[0] == 1);
                        memcpy(plain + pn, line + 1, v - 5);
                        pn += v - 5;
                        o += v;
                }
                FUZZ_CHECK(T, o + 4 == n);
                p = plain;
        }
        size_t o = 0;
        const char *line;
        size_t v = pkt_at(p, pn, o, &line);
        FUZZ_CHECK(T, v == 14 && memcmp(line, "unpack ok\n", 10) == 0);
        o += v;
        for (size_t i = 0; i < k; i++) {
                v = pkt_at(p, pn, o, &line);
                size_t rl = strlen(cmds[i].ref);
                FUZZ_CHECK(T, v > 4 + 3 + rl && memcmp(line, "ng ", 3) == 0 &&
                                      memcmp(line + 3, cmds[i].ref, rl) == 0 && line[3 + rl] == ' ');
                o += v;
        }
        FUZZ_CHECK(T, pkt_at(p, pn, o, &line) == 0 && o + 4 == pn);
}

static void check_verdict(size_t k) {
        policy_git_push g = { .on = true };
        policy_git_push_rule r = { .repo = (char *) "github.com/o/r" };
        FUZZ_CHECK(T, strv_push(&r.refs, "refs/heads/agent/*") == 0);
        FUZZ_CHECK(T, policy_git_push_add(&g, &r) == 0);
        strv_done(&r.refs);
        git_push *p = NULL;
        FUZZ_CHECK(T, git_push_new(&p, &g) == 0 && p);
        git_push_verdict v;
        git_push_judge(p, "github.com/o/r", cmds, k, &v);
        size_t first = k;
        for (size_t i = 0; i < k && first == k; i++)
                if (cmds[i].del || !req_glob_match("refs/heads/agent/*", cmds[i].ref,
                                                   strlen(cmds[i].ref), false))
                        first = i;
        FUZZ_CHECK(T, v.allowed == (first == k));
        FUZZ_CHECK(T, v.allowed || (v.cmd == first && strcmp(v.ref, cmds[first].ref) == 0));
        git_push_free(p);
        policy_git_push_clear(&g);
}

static void check_classify(const char *d, size_t n) {
        net_host h = { .kind = NET_HOST_NAME };
        strcpy(h.text, "github.com");
        char repo[GIT_PUSH_REPO_MAX];
        const char *why = NULL;
        static const char *const methods[] = { "POST", "GET" };
        size_t pn = 0;
        while (pn < n && d[pn] != '?')
                pn++;
        for (size_t m = 0; m < 2; m++) {
                git_push_kind k = git_push_classify(&h, methods[m], d, n, repo, &why);
                if (k == GIT_REQ_PUSH || k == GIT_REQ_ADVERTISE) {
                        FUZZ_CHECK(T, req_path_ambiguous(d, pn) == NULL);
                        FUZZ_CHECK(T, strncmp(repo, "github.com/", 11) == 0);
                }
                FUZZ_CHECK(T, k != GIT_REQ_BAD || why != NULL);
                for (size_t i = 0; k == GIT_REQ_OTHER && i + 12 <= n; i++)
                        FUZZ_CHECK(T, strncasecmp(d + i, "receive-pack", 12) != 0);
        }
}

static int run(const char *d, size_t n) {
        check_classify(d, n);
        size_t k = 0;
        int r = parse(d, n, cmds, &k);
        for (size_t i = 0; r == 1 && i < k; i++) {
                const char *ref = cmds[i].ref;
                FUZZ_CHECK(T, git_push_ref_invalid(ref, strlen(ref)) == NULL);
                FUZZ_CHECK(T, strncmp(ref, "refs/", 5) == 0 && !(cmds[i].create && cmds[i].del));
        }
        /* Prefixes: "more", or this verdict with these commands. */
        size_t cuts[] = { n / 3, n / 2, n > 0 ? n - 1 : 0 };
        for (size_t c = 0; c < 3; c++) {
                size_t k2 = 0;
                int r2 = parse(d, cuts[c], again, &k2);
                FUZZ_CHECK(T, r2 == 0 || r2 == r);
                FUZZ_CHECK(T, r2 != 1 || k2 == k);
                for (size_t i = 0; r2 == 1 && i < k; i++)
                        FUZZ_CHECK(T, strcmp(again[i].ref, cmds[i].ref) == 0 &&
                                              again[i].del == cmds[i].del &&
                                              again[i].create == cmds[i].create);
        }
        if (r == 1) {
                check_report(k, GIT_CAP_REPORT_STATUS);
                check_report(k, GIT_CAP_REPORT_STATUS | GIT_CAP_SIDE_BAND);
                check_verdict(k);
        }
        return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (size > GIT_PUSH_SECTION_MAX + 64)
                size = GIT_PUSH_SECTION_MAX + 64;
        (void) run((const char *) data, size);
        return 0;
}

#ifndef CORDON_LIBFUZZER
bool fuzz_replay_seed(const char *name, const uint8_t *data, size_t size) {
        int r = run((const char *) data, size);
        if (strncmp(name, "valid-", 6) == 0)
                return r == 1;
        if (strncmp(name, "invalid-", 8) == 0)
                return r == -1;
        if (strncmp(name, "more-", 5) == 0)
                return r == 0;
        return true;
}
#endif
