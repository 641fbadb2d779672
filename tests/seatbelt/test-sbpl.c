/* SPDX-License-Identifier: Apache-2.0 */
/* The escaping function and the glob → regex translator (src/seatbelt/sbpl-escape.h): exact
 * outputs, hostile strings read back by a TinyScheme-style reader, and the translated regexes
 * run through glibc's ERE engine against the name rules' own matcher: every name a deny glob
 * matches on Linux must match its regex (a deny rule may say more, never less). */
#include <regex.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>

#include <cmocka.h>

#include "plan/name-rules.h"
#include "sbpl-eval.h"
#include "seatbelt/sbpl-escape.h"

/* ---- quoting -------------------------------------------------------------------------------- */

static char *quoted(const char *s, int *ret_err) {
        sbuf b = { 0 };
        sbpl_quote(&b, s);
        return sbuf_take(&b, ret_err);
}

static void assert_quotes_to(const char *in, const char *want) {
        int e = 0;
        char *q = quoted(in, &e);
        assert_int_equal(e, 0);
        assert_string_equal(q, want);
        free(q);
}

static void test_quote_exact(void **state) {
        assert_quotes_to("/a/b", "\"/a/b\"");
        assert_quotes_to("we\"ird", "\"we\\\"ird\"");
        assert_quotes_to("back\\slash", "\"back\\\\slash\"");
        assert_quotes_to("\\\"", "\"\\\\\\\"\"");
        /* Nothing else is special inside a string. */
        assert_quotes_to("p)(allow default)(; #| x", "\"p)(allow default)(; #| x\"");
        assert_quotes_to("uni-ü-名-😀", "\"uni-ü-名-😀\"");
        assert_quotes_to("", "\"\"");
}

static void assert_quote_refused(const char *in, int want) {
        int e = 0;
        char *q = quoted(in, &e);
        assert_null(q);
        assert_int_equal(e, want);
        assert_int_equal(sbpl_check_string(in), want);
}

static void test_quote_refused(void **state) {
        assert_quote_refused("a\nb", -EINVAL);
        assert_quote_refused("a\rb", -EINVAL);
        assert_quote_refused("tab\there", -EINVAL);
        assert_quote_refused("del\x7f", -EINVAL);
        assert_quote_refused("esc\x1b[31m", -EINVAL);
        assert_quote_refused("\x80", -EILSEQ);            /* a lone continuation byte */
        assert_quote_refused("\xc0\xaf", -EILSEQ);        /* overlong '/' */
        assert_quote_refused("\xe0\x80\xaf", -EILSEQ);    /* overlong '/' */
        assert_quote_refused("\xed\xa0\x80", -EILSEQ);    /* a UTF-16 surrogate */
        assert_quote_refused("\xf4\x90\x80\x80", -EILSEQ);/* above U+10FFFF */
        assert_quote_refused("\xc3", -EILSEQ);            /* truncated */
        assert_quote_refused("ok\xff", -EILSEQ);
}

/* A failure is sticky: nothing after it is appended, and the text is not handed out. */
static void test_quote_sticky(void **state) {
        sbuf b = { 0 };
        sbuf_add(&b, "(allow file-write* (subpath ");
        sbpl_quote(&b, "/x\n(allow default)");
        sbuf_add(&b, "))");
        int e = 0;
        assert_null(sbuf_take(&b, &e));
        assert_int_equal(e, -EINVAL);
}

/* Reads `(f "<quoted>")` back: one form, one string, equal to the input. */
static void assert_reads_back(const char *s) {
        int e = 0;
        char *q = quoted(s, &e);
        assert_int_equal(e, 0);
        size_t n = strlen(q) + 8;
        char *text = malloc(n);
        snprintf(text, n, "(f %s)", q);
        char err[256];
        sx *top = sbpl_parse(text, err, sizeof(err));
        if (!top)
                print_message("%s: %s\n", text, err);
        assert_non_null(top);
        assert_int_equal(top->n, 1);
        assert_int_equal(top->items[0]->n, 2);
        assert_int_equal(top->items[0]->items[1]->kind, SX_STRING);
        assert_string_equal(top->items[0]->items[1]->text, s);
        sbpl_free(top);
        free(text);
        free(q);
}

static void test_quote_reads_back(void **state) {
        static const char *const hostile[] = {
                "/x\")(allow file-write* (subpath \"/\"))(\"",
                "/x\\", "/x\\\\\"", "/x\\n", "/x\\x41;", "/x;(deny default)", "/x#|",
                "/paren)(", "/sp ace", "/ü/名",
        };
        for (size_t i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++)
                assert_reads_back(hostile[i]);
        /* Random strings over the bytes that matter to the reader (fixed seed). */
        static const char alphabet[] = "\"\\()#;|/ anx";
        srand(7);
        for (int i = 0; i < 20000; i++) {
                char s[24];
                size_t len = (size_t) (rand() % 23);
                for (size_t k = 0; k < len; k++)
                        s[k] = alphabet[rand() % (sizeof(alphabet) - 1)];
                s[len] = '\0';
                assert_reads_back(s);
        }
}

/* ---- glob → regex --------------------------------------------------------------------------- */

static void assert_regex(const char *glob, sbpl_glob_kind kind, const char *want) {
        char *re = NULL;
        int r = sbpl_glob_regex(glob, kind, &re);
        if (r < 0)
                print_message("%s: %s\n", glob, strerror(-r));
        assert_int_equal(r, 0);
        assert_string_equal(re, want);
        free(re);
}

static void test_regex_exact(void **state) {
        assert_regex(".env", SBPL_GLOB_NAME, "^.*/\\.[eE][nN][vV]$");
        assert_regex(".env.*", SBPL_GLOB_NAME, "^.*/\\.[eE][nN][vV]\\.[^/]*$");
        assert_regex("*.pem", SBPL_GLOB_NAME, "^.*/[^/]*\\.[pP][eE][mM]$");
        assert_regex("secret?.txt", SBPL_GLOB_NAME,
                     "^.*/[sS][eE][cC][rR][eE][tT][^/]\\.[tT][xX][tT]$");
        assert_regex("id_[rd]sa*", SBPL_GLOB_NAME, "^.*/[iI][dD]_[dDrR][sS][aA][^/]*$");
        assert_regex("[!a]x", SBPL_GLOB_NAME, "^.*/[^/][xX]$");      /* widened */
        assert_regex("[[:digit:]]", SBPL_GLOB_NAME, "^.*/[0123456789]$"); /* the set, exact */
        assert_regex("[a-]", SBPL_GLOB_NAME, "^.*/[^/]$");           /* '-' member: widened */
        assert_regex("a[bc", SBPL_GLOB_NAME, "^.*/[aA]\\[[bB][cC]$"); /* unclosed: literal */
        assert_regex("\\*x\\", SBPL_GLOB_NAME, "^.*/\\*[xX]\\\\$");   /* escapes; trailing '\' */
        assert_regex("/a/b", SBPL_GLOB_SUBPATH, "^/[aA]/[bB](/.*)?$");
        assert_regex("/a/b", SBPL_GLOB_EXACT, "^/[aA]/[bB]$");
        assert_regex("/", SBPL_GLOB_SUBPATH, "^(/.*)?$");
        assert_regex("/", SBPL_GLOB_EXACT, "^/$");
        assert_regex("/q/a.b+c(d)|g^h$i{j}", SBPL_GLOB_EXACT,
                     "^/[qQ]/[aA]\\.[bB]\\+[cC]\\([dD]\\)\\|[gG]\\^[hH]\\$[iI]\\{[jJ]\\}$");
        assert_regex("/w/we\"ird (x); y", SBPL_GLOB_EXACT,
                     "^/[wW]/[wW][eE]\"[iI][rR][dD] \\([xX]\\); [yY]$");
        assert_regex("/u/ü-名", SBPL_GLOB_EXACT, "^/[uU]/ü-名$");
        assert_regex("/r/worktrees/*/gitdir", SBPL_GLOB_SUBPATH,
                     "^/[rR]/[wW][oO][rR][kK][tT][rR][eE][eE][sS]/[^/]*/[gG][iI][tT][dD][iI][rR]"
                     "(/.*)?$");
}

static void assert_regex_refused(const char *glob, sbpl_glob_kind kind, int want) {
        char *re = NULL;
        assert_int_equal(sbpl_glob_regex(glob, kind, &re), want);
        assert_null(re);
}

static void test_regex_refused(void **state) {
        assert_regex_refused("/a\nb", SBPL_GLOB_SUBPATH, -EINVAL);
        assert_regex_refused("a\tb", SBPL_GLOB_NAME, -EINVAL);
        assert_regex_refused("/a\xff", SBPL_GLOB_EXACT, -EILSEQ);
        assert_regex_refused("relative/x", SBPL_GLOB_SUBPATH, -EINVAL);
        assert_regex_refused("a/b", SBPL_GLOB_NAME, -EINVAL);
        assert_regex_refused("/abs", SBPL_GLOB_NAME, -EINVAL);
}

static bool ere_match(const char *re, const char *s) {
        regex_t c;
        if (regcomp(&c, re, REG_EXTENDED | REG_NOSUB) != 0)
                fail_msg("regex does not compile: %s", re);
        bool m = regexec(&c, s, 0, NULL, 0) == 0;
        regfree(&c);
        return m;
}

/* What the Linux name rules match, the regex matches too; without widening, nothing more. */
static void check_name(const char *glob, const char *name, bool exact) {
        char *re = NULL;
        assert_int_equal(sbpl_glob_regex(glob, SBPL_GLOB_NAME, &re), 0);
        char path[600];
        snprintf(path, sizeof(path), "/some/dir/%s", name);
        bool linux_m = name_glob_match(glob, name, false), re_m = ere_match(re, path);
        if ((linux_m && !re_m) || (exact && linux_m != re_m))
                fail_msg("glob '%s' name '%s': name rules %d, regex %s %d", glob, name, linux_m,
                         re, re_m);
        free(re);
}

static void test_regex_names_table(void **state) {
        static const struct {
                const char *glob;
                const char *names[8];
        } cases[] = {
                { ".env", { ".env", ".ENV", ".Env", "x.env", ".env.local", "env", ".envrc" } },
                { ".env.*", { ".env.local", ".ENV.PROD", ".env.", ".env", "a.env.b" } },
                { "*.pem", { "a.pem", ".id.pem", "A.PEM", "pem", "a.pem.bak", ".pem" } },
                { "*.key", { "x.key", "x.KEY", "xkey", ".key", "a.b.key" } },
                { "id_[rd]sa*", { "id_rsa", "id_dsa.pub", "ID_RSA", "id_xsa", "id_sa" } },
                { "a?c", { "abc", "aXc", "ac", "abbc" } },
                { "lit.+(x)", { "lit.+(x)", "LIT.+(X)", "litx+(x)", "lit.(x)" } },
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
                for (size_t k = 0; k < 8 && cases[i].names[k]; k++)
                        check_name(cases[i].glob, cases[i].names[k], true);
}

/* Random globs and names over the bytes that are syntax somewhere (fixed seed). */
static void test_regex_names_random(void **state) {
        static const char galpha[] = "aB.*?[]!^-\\(|$é";
        static const char nalpha[] = "aAbB.-[]()\\|$^é";
        srand(11);
        for (int i = 0; i < 20000; i++) {
                char g[12], n[12];
                size_t gl = 1 + (size_t) (rand() % 10), nl = 1 + (size_t) (rand() % 10);
                for (size_t k = 0; k < gl; k++)
                        g[k] = galpha[rand() % (sizeof(galpha) - 1)];
                for (size_t k = 0; k < nl; k++)
                        n[k] = nalpha[rand() % (sizeof(nalpha) - 1)];
                g[gl] = n[nl] = '\0';
                /* 'é' is two bytes; a cut one makes the string invalid UTF-8: refused, fine. */
                if (sbpl_check_string(g) < 0 || sbpl_check_string(n) < 0)
                        continue;
                check_name(g, n, false);
        }
}

/* Subpaths: the path and everything beneath, in any case; never a sibling with a longer name. */
static void test_regex_subpath(void **state) {
        char *re = NULL;
        assert_int_equal(sbpl_glob_regex("/ws/.git/hooks", SBPL_GLOB_SUBPATH, &re), 0);
        assert_true(ere_match(re, "/ws/.git/hooks"));
        assert_true(ere_match(re, "/ws/.git/hooks/pre-commit"));
        assert_true(ere_match(re, "/WS/.GIT/HOOKS/pre-commit"));
        assert_false(ere_match(re, "/ws/.git/hooks2"));
        assert_false(ere_match(re, "/ws/.git/hook"));
        assert_false(ere_match(re, "/ws/.gitXhooks"));
        assert_false(ere_match(re, "/x/ws/.git/hooks"));
        free(re);
        assert_int_equal(sbpl_glob_regex("/ws/.claude/settings*.json", SBPL_GLOB_SUBPATH, &re),
                         0);
        assert_true(ere_match(re, "/ws/.claude/settings.json"));
        assert_true(ere_match(re, "/ws/.claude/settings.local.json"));
        assert_true(ere_match(re, "/ws/.Claude/Settings.JSON"));
        assert_false(ere_match(re, "/ws/.claude/x/settings.json"));
        assert_false(ere_match(re, "/ws/.claude/settings.jsonx"));
        free(re);
        assert_int_equal(sbpl_glob_regex("/", SBPL_GLOB_SUBPATH, &re), 0);
        assert_true(ere_match(re, "/"));
        assert_true(ere_match(re, "/anything/at/all"));
        free(re);
}

/* A path that is a name, not a pattern, matches itself only. */
static void test_glob_quote(void **state) {
        static const char *const paths[] = { "/a/back\\slash", "/a/what?", "/a/x[1]", "/a/*",
                                             "/a/p)(allow default)(" };
        for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
                char *g = sbpl_glob_quote(paths[i]), *re = NULL;
                assert_non_null(g);
                assert_int_equal(sbpl_glob_regex(g, SBPL_GLOB_EXACT, &re), 0);
                assert_true(ere_match(re, paths[i]));
                free(re);
                free(g);
        }
        char *g = sbpl_glob_quote("/a/x[1]"), *re = NULL;
        assert_int_equal(sbpl_glob_regex(g, SBPL_GLOB_EXACT, &re), 0);
        assert_false(ere_match(re, "/a/x1"));
        free(re);
        free(g);
        g = sbpl_glob_quote("/a/what?");
        assert_int_equal(sbpl_glob_regex(g, SBPL_GLOB_EXACT, &re), 0);
        assert_false(ere_match(re, "/a/whatX"));
        free(re);
        free(g);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_quote_exact),
                cmocka_unit_test(test_quote_refused),
                cmocka_unit_test(test_quote_sticky),
                cmocka_unit_test(test_quote_reads_back),
                cmocka_unit_test(test_regex_exact),
                cmocka_unit_test(test_regex_refused),
                cmocka_unit_test(test_regex_names_table),
                cmocka_unit_test(test_regex_names_random),
                cmocka_unit_test(test_regex_subpath),
                cmocka_unit_test(test_glob_quote),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
