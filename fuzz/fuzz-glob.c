/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target for the glob grammar (src/util/globtok.c) and the matcher built on it
 * (name_glob_match, src/plan/name-rules.c): every deny-name and protected-path glob of a policy
 * or a project's settings goes through them, on Linux and into the macOS profile alike. Input:
 * a pattern, optionally a NUL and a name to match it against (else the pattern itself). Promises
 * checked:
 *  - the tokens cover the pattern exactly, each at least one byte;
 *  - no wildcard's set holds '/' or NUL (a wildcard never crosses a path component), and a
 *    literal's set is its byte in either ASCII case;
 *  - globtok_check() reports exactly the first issue a token carries, and nothing otherwise;
 *  - globtok_has_wildcard() is true exactly when a token is not a literal;
 *  - a pattern without wildcards matches its own literal bytes and only names equal to them up
 *    to ASCII case; "*" matches every name without '/'.
 * Built two ways, like the other targets: with libFuzzer (-DCORDON_LIBFUZZER), and as a plain
 * program replaying fuzz/corpus/glob in the unit suite ("valid-*" seeds have no issue,
 * "invalid-*" seeds have one). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "plan/name-rules.h"
#include "util/globtok.h"

#include "replay.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

__attribute__((noreturn)) static void broken(const char *what) {
        fprintf(stderr, "fuzz-glob: broken promise: %s\n", what);
        abort();
}

/* The tokens' promises; the literal bytes into lit (when every token is a literal). Returns
 * the first issue. */
static const char *check_tokens(const char *p, size_t len, char *lit, bool *ret_wild) {
        const char *first = NULL;
        bool wild = false;
        size_t n = 0;
        for (size_t off = 0; off < len;) {
                globtok t;
                globtok_next(p + off, len - off, &t);
                if (t.len < 1 || t.len > len - off)
                        broken("a token's length");
                if ((t.kind == GLOBTOK_ANY || t.kind == GLOBTOK_CLASS) &&
                    (globtok_set_has(&t.set, '/') || globtok_set_has(&t.set, '\0')))
                        broken("a wildcard's set holds '/' or NUL");
                if (t.kind == GLOBTOK_LITERAL) {
                        globtok_set want = { { 0 } };
                        globtok_set_add_folded(&want, t.byte);
                        if (memcmp(&want, &t.set, sizeof(want)) != 0)
                                broken("a literal's set is not its byte (either case)");
                }
                if (t.kind != GLOBTOK_LITERAL)
                        wild = true;
                else
                        lit[n++] = (char) t.byte;
                if (t.issue && !first)
                        first = t.issue;
                off += t.len;
        }
        lit[n] = '\0';
        *ret_wild = wild;
        return first;
}

static char *copy_bytes(const uint8_t *p, size_t n) {
        char *c = malloc(n + 1);
        if (c) {
                memcpy(c, p, n);
                c[n] = '\0';
        }
        return c;
}

static const char *run(const uint8_t *data, size_t size) {
        const uint8_t *nul = memchr(data, '\0', size);
        size_t plen = nul ? (size_t) (nul - data) : size;
        /* Copies, NUL-terminated (the input has no terminator of its own). */
        char *pat = copy_bytes(data, plen);
        char *name = nul ? copy_bytes(nul + 1, size - plen - 1) : copy_bytes(data, plen);
        char *lit = malloc(plen + 1);
        if (!pat || !name || !lit)
                abort();
        bool wild = false;
        const char *issue = check_tokens(pat, plen, lit, &wild);
        const char *checked = globtok_check(pat, plen);
        if ((issue == NULL) != (checked == NULL) || (issue && strcmp(issue, checked) != 0))
                broken("globtok_check() disagrees with the tokens");
        if (globtok_has_wildcard(pat, plen) != wild)
                broken("globtok_has_wildcard() disagrees with the tokens");
        bool matched = name_glob_match(pat, name, true);
        if (!wild && strchr(lit, '/') == NULL) {
                if (!name_glob_match(pat, lit, true))
                        broken("a literal does not match its own bytes");
                if (matched && strcasecmp(name, lit) != 0)
                        broken("a literal matched a different name");
        }
        if (name_glob_match("*", name, true) != (strchr(name, '/') == NULL))
                broken("'*' and a name");
        free(pat);
        free(name);
        free(lit);
        return issue;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        (void) run(data, size);
        return 0;
}

#ifndef CORDON_LIBFUZZER
bool fuzz_replay_seed(const char *name, const uint8_t *data, size_t size) {
        const char *issue = run(data, size);
        return fuzz_named_verdict(name, issue ? -1 : 0, issue);
}
#endif
