/* SPDX-License-Identifier: Apache-2.0 */
/* One glob, one meaning on Linux and macOS. The creation-time name rules (name_glob_match) and
 * the Seatbelt translator (sbpl_glob_regex) read globs with one parser (src/util/globtok.h); this
 * test feeds the same table of globs and names through both. The regex is not run directly: it
 * goes into a deny rule of a profile, the profile is quoted, read back, validated and evaluated
 * (sbpl-eval.h), as the generated profiles are. For each row the name rules' verdict is pinned,
 * and the profile must deny the same names; where the regex dialect cannot spell the set (a
 * negated bracket, a ']' or '-' member...) it may deny more, never less. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>

#include <cmocka.h>

#include "plan/name-rules.h"
#include "sbpl-eval.h"
#include "seatbelt/sbpl-escape.h"
#include "util/globtok.h"

/* Whether a profile denying `regex` for file-write-create denies it on `path`. */
static bool profile_denies(const char *regex, const char *path) {
        sbuf b = { 0 };
        sbuf_add(&b, "(version 1)\n(allow default)\n(deny file-write-create "
                     "(with message \"cordon-deny create-name -\") (regex ");
        sbpl_quote(&b, regex);
        sbuf_add(&b, "))\n");
        int e = 0;
        char *text = sbuf_take(&b, &e), err[256] = "";
        assert_int_equal(e, 0);
        sx *profile = sbpl_parse(text, err, sizeof(err));
        if (!profile || !sbpl_validate(profile, err, sizeof(err)))
                fail_msg("%s: %s", text, err);
        bool denied = !sbpl_allows(profile, "file-write-create", path);
        sbpl_free(profile);
        free(text);
        return denied;
}

typedef struct row {
        const char *glob, *name;
        bool match; /* the name rules' verdict */
        bool exact; /* the profile must say exactly that (else: at least that) */
        bool issue; /* globtok_check() flags the glob */
} row;

static void check_row(const row *r, sbpl_glob_kind kind) {
        bool is_path = kind != SBPL_GLOB_NAME;
        char *re = NULL, path[512];
        assert_int_equal(sbpl_glob_regex(r->glob, kind, &re), 0);
        (void) snprintf(path, sizeof(path), "%s%s", is_path ? "" : "/some/dir/", r->name);
        bool linux_m = name_glob_match(r->glob, r->name, is_path);
        bool mac_m = profile_denies(re, path);
        bool issue = globtok_check(r->glob, strlen(r->glob)) != NULL;
        if (linux_m != r->match || (r->exact ? mac_m != linux_m : linux_m && !mac_m) ||
            issue != r->issue)
                fail_msg("glob '%s' name '%s': name rules %d (want %d), profile %d (regex %s, "
                         "%s), issue %d (want %d)",
                         r->glob, r->name, linux_m, r->match, mac_m, re,
                         r->exact ? "exact" : "may say more", issue, r->issue);
        free(re);
}

/* File-name globs (denyCreateNames), matched against a final component. */
static void test_names(void **state) {
        static const row rows[] = {
                { ".env", ".ENV", true, true, false },
                { ".env", ".envrc", false, true, false },
                { "*.pem", ".id.pem", true, true, false },
                { "*.pem", "pem", false, true, false },
                { "a?c", "abc", true, true, false },
                { "a?c", "ac", false, true, false },
                /* '?' is one byte: "é" is two. */
                { "a?c", "aéc", false, true, false },
                { "a??c", "aéc", true, true, false },
                /* ']' first is a member. */
                { "[]a]", "]", true, false, false },
                { "[]a]", "A", true, false, false },
                { "[]a]", "b", false, false, false },
                /* Negation, with '!' and '^'; ']' first after it is a member. */
                { "[!]a]x", "bx", true, false, false },
                { "[!]a]x", "]x", false, false, false },
                { "[!]a]x", "Ax", false, false, false },
                { "[^a]x", "bx", true, false, false },
                { "[^a]x", "ax", false, false, false },
                { "[!a]", "é", false, false, false },
                /* Ranges, case folded. */
                { "id_[a-c]sa", "id_bsa", true, true, false },
                { "id_[a-c]sa", "ID_BSA", true, true, false },
                { "id_[a-c]sa", "id_dsa", false, true, false },
                { "id_[a-c]sa", "id_-sa", false, true, false },
                { "[rd]", "D", true, true, false },
                /* '-' last, or quoted, is a member. */
                { "[a-]", "-", true, false, false },
                { "[a-]", "b", false, false, false },
                { "[a\\-z]", "-", true, false, false },
                { "[a\\-z]", "m", false, false, false },
                /* A reversed range holds nothing: flagged, and the profile says more. */
                { "[z-a]", "m", false, false, true },
                { "[z-a]", "a", false, false, true },
                /* Escapes: the next byte, as a literal; a trailing '\' is itself. */
                { "\\*", "*", true, true, false },
                { "\\*", "a", false, true, false },
                { "\\[a]", "[a]", true, true, false },
                { "\\[a]", "a", false, true, false },
                { "[\\]]", "]", true, false, false },
                { "a\\", "a\\", true, true, true },
                { "a\\", "a", false, true, true },
                /* An unterminated '[' is an ordinary byte (flagged). */
                { "a[bc", "a[bc", true, true, true },
                { "a[bc", "ab", false, true, true },
                { "[", "[", true, true, true },
                { "[!", "[!", true, true, true },
                { "[[:alpha:]", "[a", true, true, true },
                /* Classes: ASCII, exact; unknown ones and [=x=] match any byte (flagged). */
                { "[[:digit:]]x", "7x", true, true, false },
                { "[[:digit:]]x", "ax", false, true, false },
                { "[[:upper:]]", "q", true, true, false },
                { "[[:nope:]]", "x", true, true, true },
                { "[[=a=]]", "%", true, true, true },
                /* Regex syntax in a glob is literal. */
                { "lit.+(x)|$^", "LIT.+(X)|$^", true, true, false },
                { "lit.+(x)|$^", "litx+(x)|$^", false, true, false },
                /* Non-ASCII members are bytes: one byte of "é" is not "é". */
                { "[é]", "é", false, false, false },
        };
        for (size_t i = 0; i < ELEMENTSOF(rows); i++)
                check_row(&rows[i], SBPL_GLOB_NAME);
}

/* Path globs (protected paths, deny paths): a wildcard never crosses '/', and neither does a
 * bracket or a backslash. */
static void test_paths(void **state) {
        static const row rows[] = {
                { "/a/*/c", "/a/b/c", true, true, false },
                { "/a/*/c", "/a/b/d/c", false, true, false },
                { "/a/?", "/a/x", true, true, false },
                { "/a/?", "/a/", false, true, false },
                /* '/' inside a class: no class; '[' and ']' are bytes of two components. */
                { "/a/[b/c]", "/a/[b/c]", true, true, true },
                { "/a/[b/c]", "/a/b", false, true, true },
                { "/a/[!/]", "/a/[!/]", true, true, true },
                { "/a/[b-/]", "/a/[b-/]", true, true, true },
                /* A range reaching over '/' never holds it. */
                { "/a/[.-0]", "/a/.", true, true, false },
                { "/a/[.-0]", "/a/0", true, true, false },
                { "/a/[.-0]x", "/a//x", false, true, false },
                /* '\' before '/' quotes nothing: "x\" is a component. */
                { "/a/x\\/y", "/a/x\\/y", true, true, true },
                { "/a/x\\/y", "/a/x/y", false, true, true },
                { "/A/.GIT", "/a/.git", true, true, false },
                { "/a/[!b]", "/a/c", true, false, false },
                { "/a/[!b]", "/a/B", false, false, false },
        };
        for (size_t i = 0; i < ELEMENTSOF(rows); i++)
                check_row(&rows[i], SBPL_GLOB_EXACT);
}

/* Random globs and names over the bytes that are syntax somewhere (fixed seed): the profile
 * denies every name the rules match, and exactly those when the glob has no bracket. */
static void test_random(void **state) {
        static const char galpha[] = "aB/.*?[]!^-\\:";
        static const char nalpha[] = "aAbB/.-[]!\\:";
        srand(13);
        for (int i = 0; i < 5000; i++) {
                char g[12] = "/", n[12] = "/";
                size_t gl = 1 + (size_t) (rand() % 10), nl = 1 + (size_t) (rand() % 10);
                for (size_t k = 1; k < gl; k++)
                        g[k] = galpha[rand() % (sizeof(galpha) - 1)];
                for (size_t k = 1; k < nl; k++)
                        n[k] = nalpha[rand() % (sizeof(nalpha) - 1)];
                g[gl] = n[nl] = '\0';
                bool m = name_glob_match(g, n, true);
                row r = { g, n, m, !strchr(g, '['), globtok_check(g, gl) != NULL };
                check_row(&r, SBPL_GLOB_EXACT);
        }
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_names),
                cmocka_unit_test(test_paths),
                cmocka_unit_test(test_random),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
