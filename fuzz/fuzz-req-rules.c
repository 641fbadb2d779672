/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target for the request-rule matcher (src/net/req-rules.c): the method and target of
 * every request a sandboxed client sends to a ruled host reach it. Input: a path glob, NUL, a
 * method, NUL, a request-target (missing parts are empty). Promises checked:
 *  - a glob without '*' or '?' matches exactly the bytes equal to it (ASCII case ignored when
 *    folding); "*" matches everything; whatever matches exactly also matches folded;
 *  - a path req_path_ambiguous() accepts has, once fully percent-decoded, no '.' or '..'
 *    segment, no empty segment, no backslash and no NUL, and decodes no unreserved byte or '/'
 *    (so every server reads the segments the matcher saw);
 *  - an allow rule (the glob, the method) alone admits exactly the unambiguous requests of
 *    that method whose path (the target up to '?') the glob matches, and nothing else (the
 *    host fails closed);
 *  - adding a deny rule (the same glob, every method) to a rule allowing everything refuses
 *    exactly the unambiguous requests the glob matches with case folded, wherever the deny
 *    stands in the list;
 *  - judging is a pure function (the same verdict twice).
 * Built with libFuzzer (-DCORDON_LIBFUZZER) and as a plain program replaying
 * fuzz/corpus/req-rules in the unit suite ("ok-*" seeds must be admitted by the allow rule,
 * "refused-*" seeds refused). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "net/req-rules.h"

#include "replay.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define T "fuzz-req-rules"

static bool has_wild(const char *g) {
        return strchr(g, '*') || strchr(g, '?');
}

static void check_glob(const char *g, const char *s, size_t n) {
        bool exact = req_glob_match(g, s, n, false), folded = req_glob_match(g, s, n, true);
        FUZZ_CHECK(T, !exact || folded);
        if (!has_wild(g)) {
                FUZZ_CHECK(T, exact == (strlen(g) == n && memcmp(g, s, n) == 0));
                FUZZ_CHECK(T, folded == (strlen(g) == n && strncasecmp(g, s, n) == 0));
        }
        FUZZ_CHECK(T, req_glob_match("*", s, n, false));
}

static int hex(char c) {
        if (c >= '0' && c <= '9')
                return c - '0';
        if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
                return (c | 0x20) - 'a' + 10;
        return -1;
}

/* An independent reading of an accepted path: decoded, split at '/', each segment looked at. */
static void check_accepted_path(const char *p, size_t n) {
        if (n == 1 && p[0] == '*')
                return;
        FUZZ_CHECK(T, n > 0 && p[0] == '/');
        char *d = malloc(n + 1);
        FUZZ_CHECK(T, d != NULL);
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
                if (p[i] == '%') {
                        FUZZ_CHECK(T, i + 2 < n && hex(p[i + 1]) >= 0 && hex(p[i + 2]) >= 0);
                        char c = (char) (hex(p[i + 1]) * 16 + hex(p[i + 2]));
                        FUZZ_CHECK(T, c != '/' && c != '\\' && c != '\0' && c != '.' &&
                                              c != '-' && c != '_' && c != '~' &&
                                              !((c | 0x20) >= 'a' && (c | 0x20) <= 'z') &&
                                              !(c >= '0' && c <= '9'));
                        d[k++] = c;
                        i += 2;
                } else {
                        FUZZ_CHECK(T, p[i] != '\\');
                        d[k++] = p[i];
                }
        }
        d[k] = '\0';
        for (size_t i = 0; i < k; i++) {
                if (d[i] != '/')
                        continue;
                size_t e = i + 1;
                while (e < k && d[e] != '/')
                        e++;
                size_t len = e - i - 1;
                FUZZ_CHECK(T, len > 0 || e == k);
                bool dots = len >= 1 && d[i + 1] == '.' &&
                            (len == 1 || d[i + 2] == ';' ||
                             (d[i + 2] == '.' && (len == 2 || d[i + 3] == ';')));
                FUZZ_CHECK(T, !dots);
        }
        free(d);
}

static req_verdict judge(const policy_req *q, const char *method, const char *target,
                         size_t tn) {
        req_rules *r = NULL;
        FUZZ_CHECK(T, req_rules_new(&r, q) == 0 && r != NULL);
        net_host h = { .kind = NET_HOST_NAME };
        strcpy(h.text, "api.example.com");
        req_verdict v, again;
        req_rules_judge(r, &h, 443, method, target, tn, &v);
        req_rules_judge(r, &h, 443, method, target, tn, &again);
        FUZZ_CHECK(T, v.allowed == again.allowed && v.index == again.index &&
                              strcmp(v.rule, again.rule) == 0);
        req_rules_free(r);
        return v;
}

static bool add(policy_req *q, const char *glob, const char *method, bool deny) {
        policy_req_rule rule = { .host = (char *) "api.example.com", .deny = deny };
        bool ok = (!glob || strv_push(&rule.paths, glob) == 0) &&
                  (!method || strv_push(&rule.methods, method) == 0) &&
                  policy_req_add_rule(q, &rule) == 0;
        strv_done(&rule.paths);
        strv_done(&rule.methods);
        return ok;
}

/* Returns whether the allow rule alone admitted the request. */
static int run(const char *glob, const char *method, const char *target, size_t tn) {
        size_t pn = 0;
        while (pn < tn && target[pn] != '?')
                pn++;
        check_glob(glob, target, pn);
        bool clear = req_path_ambiguous(target, pn) == NULL;
        if (clear)
                check_accepted_path(target, pn);
        if (policy_check_req_path(glob) || policy_check_req_method(method) ||
            strcmp(method, "*") == 0)
                return -1;
        policy_req q = { 0 };
        FUZZ_CHECK(T, add(&q, glob, method, false));
        req_verdict v = judge(&q, method, target, tn);
        bool want = clear && req_glob_match(glob, target, pn, false);
        FUZZ_CHECK(T, v.allowed == want);
        policy_req_clear(&q);
        bool denied = clear && req_glob_match(glob, target, pn, true);
        for (int order = 0; order < 2; order++) {
                policy_req d = { 0 };
                FUZZ_CHECK(T, add(&d, order ? NULL : glob, NULL, order == 0));
                FUZZ_CHECK(T, add(&d, order ? glob : NULL, NULL, order == 0 ? false : true));
                req_verdict dv = judge(&d, method, target, tn);
                FUZZ_CHECK(T, dv.allowed == (clear && !denied));
                policy_req_clear(&d);
        }
        return want ? 1 : 0;
}

static int run_input(const uint8_t *data, size_t size) {
        char *buf = malloc(size + 3);
        FUZZ_CHECK(T, buf != NULL);
        memcpy(buf, data, size);
        buf[size] = buf[size + 1] = buf[size + 2] = '\0';
        const char *glob = buf, *method = glob + strlen(glob) + 1;
        if ((size_t) (method - buf) > size)
                method = buf + size + 1;
        const char *target = method + strlen(method) + 1;
        size_t tn = (size_t) (target - buf) <= size ? size - (size_t) (target - buf) : 0;
        if (tn == 0)
                target = "";
        int r = run(glob, method, target, tn);
        free(buf);
        return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (size > 8192)
                size = 8192;
        (void) run_input(data, size);
        return 0;
}

#ifndef CORDON_LIBFUZZER
bool fuzz_replay_seed(const char *name, const uint8_t *data, size_t size) {
        int r = run_input(data, size);
        if (strncmp(name, "ok-", 3) == 0)
                return r == 1;
        if (strncmp(name, "refused-", 8) == 0)
                return r == 0;
        return true;
}
#endif
