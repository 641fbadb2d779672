/* SPDX-License-Identifier: Apache-2.0 */
/* The glob syntax of cordon's rules, parsed in one place. The Linux creation-time name rules
 * (src/plan/name-rules.c) match with these tokens and the Seatbelt regex translator
 * (src/seatbelt/sbpl-escape.c) emits regexes from them: a deny glob has to mean the same on both
 * platforms, and two parsers of the bracket grammar would drift apart (tests/seatbelt/
 * test-glob-agree.c runs one table of globs and names through both).
 *
 * The dialect is fnmatch(3)'s, fixed rather than locale-dependent:
 *   - `*` any run of bytes, `?` one byte; neither matches '/' (nor NUL).
 *   - `\x` the byte x. A '\' at the end, or before '/', stands for itself.
 *   - `[...]` one byte of a set: members, ranges `a-z`, ASCII classes `[:alpha:]` ...; `!` or `^`
 *     first negates; a ']' first is a member (`[]a]`); `\` quotes a member. A bracket never
 *     spans '/': without a ']' before the next '/' or the end, the '[' is an ordinary byte, as
 *     in fnmatch. (Path globs are matched component by component, and a class reaching into the
 *     next component would be read one way there and another by a whole-path reader.) A set
 *     never holds '/' or NUL, negated or not.
 *   - `[=x=]`, `[.x.]` and unknown classes make the whole set "any byte" (for the deny rules
 *     these globs write, matching more is the safe direction).
 *   - ASCII letters match either case, in literals and in sets; other bytes match themselves.
 *     No special leading '.' (FNM_PERIOD is off: `*.pem` matches `.id.pem`).
 * Pure code: no allocation, no locale, no I/O. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A set of bytes, one bit each. */
typedef struct globtok_set {
        uint64_t w[4];
} globtok_set;

bool globtok_set_has(const globtok_set *s, unsigned char c);
bool globtok_set_intersects(const globtok_set *a, const globtok_set *b);
/* Every byte a wildcard stands for: all but NUL and '/'. */
void globtok_set_any(globtok_set *ret);
/* Adds c and, for an ASCII letter, its other case. */
void globtok_set_add_folded(globtok_set *s, unsigned char c);

typedef enum globtok_kind {
        GLOBTOK_LITERAL, /* one byte: a plain byte, "\x", an unclosed '[' */
        GLOBTOK_ANY,     /* '?' */
        GLOBTOK_STAR,    /* '*' */
        GLOBTOK_CLASS,   /* "[...]" */
} globtok_kind;

typedef struct globtok {
        globtok_kind kind;
        size_t len;         /* pattern bytes the token takes, >= 1 */
        unsigned char byte; /* LITERAL: the byte as written */
        globtok_set set;    /* all but STAR: the bytes the token matches, case folded */
        /* NULL, or why the text is probably not what its author meant (an unclosed '[', an
         * empty range...). The token is what the grammar above reads either way;
         * globtok_check() reports the first such issue of a glob (the policy refuses
         * file-name globs that have one). */
        const char *issue;
} globtok;

/* The token at p[0], p[0..len) being the rest of the pattern (len >= 1; NUL bytes inside are
 * ordinary bytes, the pattern ends at len). */
void globtok_next(const char *p, size_t len, globtok *ret);

/* The first issue of the tokens of p[0..len), or NULL when there is none. */
const char *globtok_check(const char *p, size_t len);

/* Whether p[0..len) has a token other than a literal, i.e. may match more than one string (up
 * to ASCII case). "a\*" is a literal: it matches "a*" only. */
bool globtok_has_wildcard(const char *p, size_t len);
