/* SPDX-License-Identifier: Apache-2.0 */
/* The pure creation-rule decisions: glob semantics, protected paths and their ancestors, and the
 * non-ASCII case-folding guard. No kernel involved. */
#include <locale.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "plan/meta-rules.h"
#include "plan/name-rules.h"

static void test_glob(void **state) {
        (void) state;
        static const struct {
                const char *pattern, *str;
                bool pathname, match;
        } cases[] = {
                { "*.pem", "a.pem", false, true },
                { "*.pem", ".id.pem", false, true }, /* no FNM_PERIOD */
                { "*.pem", "A.PEM", false, true },   /* FNM_CASEFOLD */
                { "*.pem", "a.pem.txt", false, false },
                { "*.pem", "pem", false, false },
                { ".env", ".ENV", false, true },
                { ".env", ".envrc", false, false },
                { ".env.*", ".env", false, false },
                { ".env.*", ".env.local", false, true },
                { ".env.*", ".env.", false, true },
                { "*.key", "a.key.bak", false, false },
                { "a*b*c", "aXbYbZc", false, true },
                { "a*b*c", "aXbYbZ", false, false },
                { "*", "", false, true },
                { "?", "", false, false },
                { "[abc]x", "bx", false, true },
                { "[abc]x", "Bx", false, true },
                { "[!a]b", "ab", false, false },
                { "[!a]b", "Ab", false, false },
                { "[!a]b", "cb", false, true },
                { "[a-c]", "B", false, true },
                { "[a-c]", "d", false, false },
                { "[]]", "]", false, true },
                { "[[:digit:]]x", "7x", false, true },
                { "[[:digit:]]x", "ax", false, false },
                { "\\*", "*", false, true },
                { "\\*", "a", false, false },
                { "[ab", "[ab", false, true }, /* unclosed: literal '[' */
                { "/ws/*/x", "/ws/a/x", true, true },
                { "/ws/*/x", "/ws/a/b/x", true, false },
                { "/ws/?", "/ws//", true, false },
                { "/ws/*", "/ws/a/b", false, true }, /* without FNM_PATHNAME '*' spans '/' */
                { "/ws/.claude/settings*.json", "/ws/.claude/settings.local.json", true, true },
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
                if (name_glob_match(cases[i].pattern, cases[i].str, cases[i].pathname) != cases[i].match)
                        fail_msg("%s vs %s (pathname %d): want %d", cases[i].pattern, cases[i].str,
                                 cases[i].pathname, cases[i].match);
}

/* Byte matching must not change with the process locale (fnmatch(3) would). */
static void test_glob_locale_independent(void **state) {
        (void) state;
        if (!setlocale(LC_ALL, "C.UTF-8"))
                skip();
        assert_true(name_glob_match("*.pem", "\xff\xfe.pem", false));
        assert_true(name_glob_match("?.pem", "\xff.pem", false));
        assert_false(name_glob_match("?.pem", "\xc3\xa9.pem", false)); /* two bytes, one '?' */
        setlocale(LC_ALL, "C");
}

typedef struct fixture {
        name_rules r;
} fixture;

static int setup(void **state) {
        fixture *f = calloc(1, sizeof(*f));
        static const char *const prot[] = { "/ws/.git/hooks", "/ws/.git/config", "/ws/HEAD",
                                            "/ws/.claude/settings*.json", "/home/u/.bashrc" };
        static const char *const names[] = { ".env", ".env.*", "*.pem", "*.key" };
        for (size_t i = 0; i < sizeof(prot) / sizeof(prot[0]); i++)
                assert_int_equal(strv_push(&f->r.protected, prot[i]), 0);
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
                assert_int_equal(strv_push(&f->r.deny_names, names[i]), 0);
        *state = f;
        return 0;
}

static int teardown(void **state) {
        fixture *f = *state;
        strv_done(&f->r.protected);
        strv_done(&f->r.deny_names);
        strv_done(&f->r.allow_names);
        strv_done(&f->r.allow_paths);
        strv_done(&f->r.persistent);
        strv_done(&f->r.names_exempt);
        free(f);
        return 0;
}

static void test_names(void **state) {
        fixture *f = *state;
        const char *rule = NULL;
        assert_int_equal(name_rules_check_create(&f->r, "/ws/x/.env", &rule), NAME_DENIED_NAME);
        assert_ptr_equal(rule, f->r.deny_names.v[0]);
        assert_int_equal(name_rules_check_create(&f->r, "/ws/A.PEM", &rule), NAME_DENIED_NAME);
        assert_string_equal(rule, "*.pem");
        assert_int_equal(name_rules_check_create(&f->r, "/ws/.env.production", NULL), NAME_DENIED_NAME);
        assert_int_equal(name_rules_check_create(&f->r, "/ws/.hidden.key", NULL), NAME_DENIED_NAME);
        assert_int_equal(name_rules_check_create(&f->r, "/ws/.envrc", &rule), NAME_ALLOWED);
        assert_null(rule);
        assert_int_equal(name_rules_check_create(&f->r, "/ws/env", NULL), NAME_ALLOWED);
        assert_int_equal(name_rules_check_create(&f->r, "/ws/a.pem/inside", NULL), NAME_ALLOWED);
        /* A rename target is a new name too; a rename source is not. */
        assert_int_equal(name_rules_check_rename_target(&f->r, "/ws/y.pem", NULL), NAME_DENIED_NAME);
        assert_int_equal(name_rules_check_rename_source(&f->r, "/ws/y.pem", NULL), NAME_ALLOWED);
}

static void test_protected(void **state) {
        fixture *f = *state;
        const char *rule = NULL;
        assert_int_equal(name_rules_check_create(&f->r, "/ws/.git/hooks", &rule), NAME_DENIED_PROTECTED);
        assert_string_equal(rule, "/ws/.git/hooks");
        assert_int_equal(name_rules_check_create(&f->r, "/ws/.git/hooks/pre-commit", NULL),
                         NAME_DENIED_PROTECTED);
        assert_int_equal(name_rules_check_create(&f->r, "/ws/.git/hooks/a/b/c", NULL),
                         NAME_DENIED_PROTECTED);
        assert_int_equal(name_rules_check_create(&f->r, "/ws/.git", NULL), NAME_ALLOWED);
        assert_int_equal(name_rules_check_create(&f->r, "/ws/.git/objects", NULL), NAME_ALLOWED);
        assert_int_equal(name_rules_check_create(&f->r, "/ws/.git/hooksx", NULL), NAME_ALLOWED);
        assert_int_equal(name_rules_check_create(&f->r, "/ws/sub/HEAD", NULL), NAME_ALLOWED);
        assert_int_equal(name_rules_check_create(&f->r, "/ws/head", NULL), NAME_DENIED_PROTECTED);
        assert_int_equal(name_rules_check_create(&f->r, "/ws/.claude/settings.local.json", &rule),
                         NAME_DENIED_PROTECTED);
        assert_string_equal(rule, "/ws/.claude/settings*.json");
        assert_int_equal(name_rules_check_create(&f->r, "/ws/.claude/other.json", NULL), NAME_ALLOWED);
        assert_int_equal(name_rules_check_create(&f->r, "//ws//.git//hooks", NULL), NAME_DENIED_PROTECTED);
        assert_int_equal(name_rules_check_create(&f->r, "ws/.git/hooks", NULL), NAME_DENIED_PROTECTED);
        assert_int_equal(name_rules_check_create(&f->r, NULL, NULL), NAME_DENIED_PROTECTED);
}

static void test_ancestors(void **state) {
        fixture *f = *state;
        /* Creating an ancestor is how git init works; renaming one into place or away is not. */
        assert_int_equal(name_rules_check_create(&f->r, "/ws/.claude", NULL), NAME_ALLOWED);
        assert_int_equal(name_rules_check_rename_target(&f->r, "/ws/.git", NULL), NAME_DENIED_PROTECTED);
        assert_int_equal(name_rules_check_rename_source(&f->r, "/ws/.git", NULL), NAME_DENIED_PROTECTED);
        assert_int_equal(name_rules_check_rename_target(&f->r, "/ws/.claude", NULL), NAME_DENIED_PROTECTED);
        assert_int_equal(name_rules_check_rename_source(&f->r, "/ws", NULL), NAME_DENIED_PROTECTED);
        assert_int_equal(name_rules_check_rename_source(&f->r, "/", NULL), NAME_DENIED_PROTECTED);
        assert_int_equal(name_rules_check_rename_source(&f->r, "/ws/src", NULL), NAME_ALLOWED);
        assert_int_equal(name_rules_check_rename_target(&f->r, "/ws/.gitx", NULL), NAME_ALLOWED);
        assert_int_equal(name_rules_check_rename_source(&f->r, "/home", NULL), NAME_DENIED_PROTECTED);
        assert_int_equal(name_rules_check_rename_source(&f->r, "/home/v", NULL), NAME_ALLOWED);
}

/* A casefolding filesystem folds U+212A KELVIN SIGN to 'k' and U+FB06 (st ligature) to "st": the
 * default check refuses any non-ASCII name some folding could turn into a denied one. */
static void test_non_ascii(void **state) {
        fixture *f = *state;
        const char *kelvin_key = "/ws/x.\xe2\x84\xaa" "ey";
        assert_int_equal(name_rules_check_create(&f->r, kelvin_key, NULL), NAME_DENIED_NAME);
        assert_int_equal(name_rules_check(&f->r, NAME_CHECK_CREATE, kelvin_key, NAME_CHECK_EXACT_BYTES,
                                          NULL),
                         NAME_ALLOWED);
        assert_int_equal(name_rules_check_create(&f->r, "/ws/\xef\xac\x86" "uff.pem", NULL), NAME_DENIED_NAME);
        assert_int_equal(name_rules_check_create(&f->r, "/ws/caf\xc3\xa9.txt", NULL), NAME_ALLOWED);
        assert_int_equal(name_rules_check_create(&f->r, "/ws/r\xc3\xa9sum\xc3\xa9.pdf", NULL), NAME_ALLOWED);
        /* ".e" + run + "v": the run may fold to "n". */
        assert_int_equal(name_rules_check_create(&f->r, "/ws/.e\xe2\x93\x9dv", NULL), NAME_DENIED_NAME);
        /* A leading run may stand for ".env." (conservative, documented). */
        assert_int_equal(name_rules_check_create(&f->r, "/ws/\xe6\x97\xa5.txt", NULL), NAME_DENIED_NAME);
        assert_int_equal(name_rules_check(&f->r, NAME_CHECK_CREATE, "/ws/\xe6\x97\xa5.txt",
                                          NAME_CHECK_EXACT_BYTES, NULL),
                         NAME_ALLOWED);
        /* Protected paths: the final component is widened the same way. */
        assert_int_equal(name_rules_check_create(&f->r, "/ws/.git/hoo\xe2\x84\xaas", NULL),
                         NAME_DENIED_PROTECTED);
        assert_int_equal(name_rules_check_create(&f->r, "/ws/.claude/\xc5\xbf" "ettings.json", NULL),
                         NAME_DENIED_PROTECTED);
        assert_int_equal(name_rules_check_rename_target(&f->r, "/ws/.gi\xe2\x84\xaa", NULL),
                         NAME_DENIED_PROTECTED);
        assert_int_equal(name_rules_check_create(&f->r, "/ws/.git/r\xc3\xa9sum\xc3\xa9.pdf", NULL),
                         NAME_ALLOWED);
        /* A trailing run may stand for ".key": refused unless the directory is known not to fold. */
        assert_int_equal(name_rules_check_create(&f->r, "/ws/caf\xc3\xa9", NULL), NAME_DENIED_NAME);
        assert_int_equal(name_rules_check(&f->r, NAME_CHECK_CREATE, "/ws/caf\xc3\xa9",
                                          NAME_CHECK_EXACT_BYTES, NULL),
                         NAME_ALLOWED);
}

/* The landlock backend's metadata rule: beneath a writable root, never a protected path or
 * beneath one; an ancestor of one and a denied *name* (an existing .env) may change. */
static void test_metadata(void **state) {
        fixture *f = *state;
        strv roots = { 0 };
        assert_int_equal(strv_push(&roots, "/ws"), 0);
        assert_int_equal(strv_push(&roots, "/tmp/cordon-run-x"), 0);
        const char *rule = NULL;
        static const char *const allowed[] = { "/ws", "/ws/a.sh", "/ws/.git", "/ws/.git/objects/x",
                                               "/ws/.env", "/ws/.claude", "/ws/.claude/x.json",
                                               "/tmp/cordon-run-x/f" };
        for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++) {
                rule = NULL;
                assert_int_equal(meta_rules_check(&f->r, &roots, allowed[i], &rule), META_ALLOWED);
                assert_null(rule);
        }
        static const char *const outside[] = { "/home/u/.ssh/id_rsa", "/etc/passwd", "/", "/wsx",
                                               "/tmp/cordon-run-xy", "/tmp/x", "ws/a",
                                               "/ws/../etc/passwd", "/ws/./a" };
        for (size_t i = 0; i < sizeof(outside) / sizeof(outside[0]); i++) {
                assert_int_equal(meta_rules_check(&f->r, &roots, outside[i], &rule),
                                 META_DENIED_OUTSIDE);
                assert_ptr_equal(rule, meta_rule_outside);
        }
        assert_int_equal(meta_rules_check(&f->r, &roots, "/ws/.git/hooks/pre-commit", &rule),
                         META_DENIED_PROTECTED);
        assert_string_equal(rule, "/ws/.git/hooks");
        assert_int_equal(meta_rules_check(&f->r, &roots, "/ws/.git/config", NULL),
                         META_DENIED_PROTECTED);
        assert_int_equal(meta_rules_check(&f->r, &roots, "/ws/.claude/settings.local.json", &rule),
                         META_DENIED_PROTECTED);
        assert_string_equal(rule, "/ws/.claude/settings*.json");
        /* A name a case-folding directory could equate with a protected one. */
        assert_int_equal(meta_rules_check(&f->r, &roots, "/ws/HEA\xe1\xb8\x8a", NULL),
                         META_DENIED_PROTECTED);
        /* No root: nothing may change. */
        strv none = { 0 };
        assert_int_equal(meta_rules_check(&f->r, &none, "/ws/a.sh", NULL), META_DENIED_OUTSIDE);
        strv_done(&roots);
}

/* The rules as plan_build() sets them up: scoped to the persistent roots, templates and the
 * policy's allow entries exempt from the wildcard deny globs. */
static void scope_and_allow(fixture *f) {
        static const char *const allow_names[] = { ".env.example", ".env.sample", ".env.template",
                                                    ".env.dist", "*.test.key" };
        for (size_t i = 0; i < sizeof(allow_names) / sizeof(allow_names[0]); i++)
                assert_int_equal(strv_push(&f->r.allow_names, allow_names[i]), 0);
        assert_int_equal(strv_push(&f->r.allow_paths, "/ws/tests/data/*.pem"), 0);
        assert_int_equal(strv_push(&f->r.persistent, "/ws"), 0);
        assert_int_equal(strv_push(&f->r.persistent, "/home/u/.runner"), 0);
        f->r.scoped = true;
}

/* The tool-cache root: deny names lifted (unpacked packages), protected paths and .cordon not. */
static void test_names_exempt(void **state) {
        fixture *f = *state;
        scope_and_allow(f);
        assert_int_equal(strv_push(&f->r.persistent, "/home/u/.cache/cordon/tools"), 0);
        assert_int_equal(strv_push(&f->r.names_exempt, "/home/u/.cache/cordon/tools"), 0);
        const char *c = "/home/u/.cache/cordon/tools/uv/archive-v0/x/certifi/cacert.pem";
        assert_int_equal(name_rules_check_create(&f->r, c, NULL), NAME_ALLOWED);
        assert_int_equal(name_rules_check_create(&f->r, "/home/u/.cache/cordon/tools/npm/.env",
                                                 NULL), NAME_ALLOWED);
        assert_int_equal(name_rules_check_create(&f->r, "/home/u/.cache/cordon/tools/a/.cordon",
                                                 NULL), NAME_DENIED_PROTECTED);
        /* A sibling sharing the prefix, and the workspace, keep the deny names. */
        assert_int_equal(name_rules_check_create(&f->r, "/home/u/.cache/cordon/toolsx/a.pem", NULL),
                         NAME_ALLOWED); /* not persistent at all: no rule */
        assert_int_equal(name_rules_check_create(&f->r, "/ws/cacert.pem", NULL), NAME_DENIED_NAME);
}

static void test_persistent_roots(void **state) {
        fixture *f = *state;
        /* Unscoped (a rule set built by hand): everywhere. */
        assert_int_equal(name_rules_check_create(&f->r, "/tmp/tmpab12cacert.pem", NULL),
                         NAME_DENIED_NAME);
        assert_int_equal(name_rules_check_create(&f->r, "/tmp/.cordon", NULL), NAME_DENIED_PROTECTED);
        scope_and_allow(f);
        /* The private /tmp and /dev/shm are discarded at exit: no name rules there. */
        assert_int_equal(name_rules_check_create(&f->r, "/tmp/tmpab12cacert.pem", NULL), NAME_ALLOWED);
        assert_int_equal(name_rules_check_create(&f->r, "/dev/shm/.env", NULL), NAME_ALLOWED);
        assert_int_equal(name_rules_check_create(&f->r, "/tmp/x/.cordon", NULL), NAME_ALLOWED);
        /* Every persistent root keeps them; a sibling sharing a prefix is not beneath one. */
        assert_int_equal(name_rules_check_create(&f->r, "/ws/cacert.pem", NULL), NAME_DENIED_NAME);
        assert_int_equal(name_rules_check_create(&f->r, "/home/u/.runner/a/.env", NULL),
                         NAME_DENIED_NAME);
        assert_int_equal(name_rules_check_create(&f->r, "/wsx/.env", NULL), NAME_ALLOWED);
        assert_int_equal(name_rules_check_create(&f->r, "/ws", NULL), NAME_ALLOWED);
        /* Protected paths hold wherever they are. */
        assert_int_equal(name_rules_check_create(&f->r, "/home/u/.bashrc", NULL),
                         NAME_DENIED_PROTECTED);
}

static void test_allow(void **state) {
        fixture *f = *state;
        scope_and_allow(f);
        const char *rule = NULL;
        static const char *const allowed[] = { "/ws/.env.example", "/ws/a/.ENV.Sample",
                                               "/ws/.env.template", "/ws/.env.dist",
                                               "/ws/tests/data/server.pem", "/ws/tests/data/CA.PEM",
                                               "/ws/x/a.test.key" };
        for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++) {
                assert_int_equal(name_rules_check_create(&f->r, allowed[i], &rule), NAME_ALLOWED);
                assert_int_equal(name_rules_check_rename_target(&f->r, allowed[i], NULL),
                                 NAME_ALLOWED);
        }
        /* Real secrets stay refused: the literal .env (no allow lifts a literal deny name),
         * other .env.* names, a .pem outside the allowed directory or below it. */
        static const char *const denied[] = { "/ws/.env", "/ws/tests/data/.env", "/ws/.env.local",
                                              "/ws/.env.example.bak", "/ws/server.pem",
                                              "/ws/tests/data/sub/server.pem",
                                              "/ws/tests/server.pem", "/ws/a.key" };
        for (size_t i = 0; i < sizeof(denied) / sizeof(denied[0]); i++)
                assert_int_equal(name_rules_check_create(&f->r, denied[i], &rule), NAME_DENIED_NAME);
        /* An allow entry never reaches a protected path. */
        assert_int_equal(strv_push(&f->r.allow_paths, "/ws/.git/*"), 0);
        assert_int_equal(strv_push(&f->r.allow_names, "config"), 0);
        assert_int_equal(name_rules_check_create(&f->r, "/ws/.git/config", NULL),
                         NAME_DENIED_PROTECTED);
        /* Under the non-ASCII widening an allow glob does not apply: it would cover names it
         * does not spell. */
        assert_int_equal(name_rules_check_create(&f->r, "/ws/.env.exampl\xc3\xa9", NULL),
                         NAME_DENIED_NAME);
}

/* .cordon, any case, anywhere beneath a persistent root, by every kind of new name; and nothing
 * beneath an existing one. No allow entry lifts it. */
static void test_cordon_dir(void **state) {
        fixture *f = *state;
        scope_and_allow(f);
        assert_int_equal(strv_push(&f->r.allow_names, ".cordon"), 0);
        assert_int_equal(strv_push(&f->r.allow_paths, "/ws/*"), 0);
        const char *rule = NULL;
        static const char *const denied[] = { "/ws/.cordon", "/ws/sub/.cordon", "/ws/a/b/.CORDON",
                                              "/ws/sub/.Cordon", "/ws/.cordon/settings.json",
                                              "/ws/sub/.cordon/x/y", "/home/u/.runner/.cordon" };
        for (size_t i = 0; i < sizeof(denied) / sizeof(denied[0]); i++) {
                assert_int_equal(name_rules_check_create(&f->r, denied[i], &rule),
                                 NAME_DENIED_PROTECTED);
                assert_string_equal(rule, ".cordon");
                assert_int_equal(name_rules_check_rename_target(&f->r, denied[i], NULL),
                                 NAME_DENIED_PROTECTED);
        }
        /* A casefold directory may fold a crafted non-ASCII name to it (U+212A KELVIN SIGN is
         * not in ".cordon", but any non-ASCII run may stand for any string). */
        assert_int_equal(name_rules_check_create(&f->r, "/ws/.c\xc3\xb6rdon", NULL),
                         NAME_DENIED_PROTECTED);
        assert_int_equal(name_rules_check(&f->r, NAME_CHECK_CREATE, "/ws/.c\xc3\xb6rdon",
                                          NAME_CHECK_EXACT_BYTES, NULL),
                         NAME_ALLOWED);
        static const char *const allowed[] = { "/ws/.cordonx", "/ws/cordon", "/ws/x.cordon",
                                               "/ws/.cordon.json" };
        for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++)
                assert_int_equal(name_rules_check_create(&f->r, allowed[i], NULL), NAME_ALLOWED);
        /* Moving an existing .cordon away is not a new .cordon. */
        assert_int_equal(name_rules_check_rename_source(&f->r, "/ws/sub/.cordon", NULL),
                         NAME_ALLOWED);
}

/* The shortcut for literal, "*literal" and "literal*" components answers as the general
 * matcher does: every glob of up to 4 tokens over an alphabet with both cases, a '.', each
 * wildcard and an escape, against every string of up to 3 bytes over a similar alphabet. */
static void test_glob_shortcut_agrees(void **state) {
        (void) state;
        static const char *const ptok[] = { "a", "A", ".", "b", "*", "?", "[ab]", "\\*", "[" };
        static const char sbyte[] = { 'a', 'A', 'b', 'B', '.', '*', '[', 'x' };
        const size_t np = sizeof(ptok) / sizeof(ptok[0]), ns = sizeof(sbyte);
        unsigned long compared = 0, matched = 0;
        for (size_t plen = 0; plen <= 4; plen++) {
                size_t pcount = 1;
                for (size_t i = 0; i < plen; i++)
                        pcount *= np;
                for (size_t pi = 0; pi < pcount; pi++) {
                        char pat[32] = "";
                        for (size_t i = 0, x = pi; i < plen; i++, x /= np)
                                strcat(pat, ptok[x % np]);
                        for (size_t slen = 0; slen <= 3; slen++) {
                                size_t scount = 1;
                                for (size_t i = 0; i < slen; i++)
                                        scount *= ns;
                                for (size_t si = 0; si < scount; si++) {
                                        char str[8] = "";
                                        for (size_t i = 0, x = si; i < slen; i++, x /= ns)
                                                str[i] = sbyte[x % ns];
                                        bool fast = name_glob_match(pat, str, false);
                                        if (fast != name_glob_match_general(pat, str))
                                                fail_msg("'%s' against '%s': %d", pat, str, fast);
                                        compared++;
                                        matched += fast;
                                }
                        }
                }
        }
        /* The grid holds both answers in number, so neither side can be constant. */
        assert_true(matched > 1000 && compared - matched > 1000);
}

/* Skipping the entries that share a failed entry's leading components gives what checking every
 * entry gives: the verdict, the rule (the first denying entry) and each kind, against entries
 * with shared, near-shared ("/a/bc" after "/a/b"), doubled-slash and wildcard prefixes. */
static void test_protected_skip_exact(void **state) {
        (void) state;
        static const char *const prot[] = {
                "/a/b/c", "/a/b/d", "/a/bc/x", "/a/b", "/a//b/e", "/a/*/f", "/a/b/c/g",
                "/x/y", "/x/y*/z", "/a/B/h", "/a", "/q/\\*/r", "/a/b/c",
        };
        static const char *const paths[] = {
                "/a", "/a/b", "/a/b/c", "/a/b/d", "/a/bc", "/a/bc/x", "/a/bc/y", "/a/B/h", "/a/z/f",
                "/a/z/g", "/x", "/x/y", "/x/yy/z", "/x/yy", "/q/*/r", "/q/a/r", "/b", "/a/b/c/g/h",
                "/a/b\xc3\xa9", "/a/bc\xe2\x84\xaa", "/x/y\xc3\xa9/z",
        };
        const size_t np = sizeof(prot) / sizeof(prot[0]);
        name_rules all = { 0 };
        for (size_t i = 0; i < np; i++)
                assert_int_equal(strv_push(&all.protected, prot[i]), 0);
        for (size_t k = 0; k <= NAME_CHECK_RENAME_SOURCE; k++)
                for (size_t p = 0; p < sizeof(paths) / sizeof(paths[0]); p++)
                        for (unsigned fl = 0; fl <= NAME_CHECK_EXACT_BYTES; fl++) {
                                name_verdict want = NAME_ALLOWED;
                                const char *want_rule = NULL;
                                for (size_t i = 0; i < np && want == NAME_ALLOWED; i++) {
                                        name_rules one = { 0 };
                                        assert_int_equal(strv_push(&one.protected, prot[i]), 0);
                                        want = name_rules_check(&one, k, paths[p], fl, NULL);
                                        if (want != NAME_ALLOWED)
                                                want_rule = prot[i];
                                        strv_done(&one.protected);
                                }
                                const char *rule = NULL;
                                assert_int_equal(name_rules_check(&all, k, paths[p], fl, &rule),
                                                 want);
                                if (want_rule)
                                        assert_string_equal(rule, want_rule);
                        }
        strv_done(&all.protected);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_glob),
                cmocka_unit_test(test_glob_shortcut_agrees),
                cmocka_unit_test(test_protected_skip_exact),
                cmocka_unit_test(test_glob_locale_independent),
                cmocka_unit_test_setup_teardown(test_names, setup, teardown),
                cmocka_unit_test_setup_teardown(test_protected, setup, teardown),
                cmocka_unit_test_setup_teardown(test_ancestors, setup, teardown),
                cmocka_unit_test_setup_teardown(test_non_ascii, setup, teardown),
                cmocka_unit_test_setup_teardown(test_metadata, setup, teardown),
                cmocka_unit_test_setup_teardown(test_persistent_roots, setup, teardown),
                cmocka_unit_test_setup_teardown(test_names_exempt, setup, teardown),
                cmocka_unit_test_setup_teardown(test_allow, setup, teardown),
                cmocka_unit_test_setup_teardown(test_cordon_dir, setup, teardown),
        };
        return cmocka_run_group_tests_name("name-rules", tests, NULL, NULL);
}
