/* SPDX-License-Identifier: Apache-2.0 */
/* Creation-time name rules: pure string decisions on a path the supervisor resolved itself.
 *
 * Matching is done here rather than with fnmatch(3) because fnmatch follows the process locale
 * (a host program calling setlocale() would turn byte matching into multibyte matching, and
 * invalid UTF-8 in an attacker's file name into a different code path). The glob syntax is read
 * by util/globtok.h, the parser the Seatbelt translator uses too, so a rule means the same on
 * Linux and macOS: fnmatch's with FNM_CASEFOLD (ASCII only) and without FNM_PERIOD, so "*.pem"
 * matches ".id.pem". Protected entries use FNM_PATHNAME semantics, compared component by
 * component; case folding beyond ASCII (Unicode casefold directories) is handled by treating
 * non-ASCII runs as unknown (could_match). */
#include "plan/name-rules.h"

#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "util/globtok.h"

/* ---- Glob tokens (the one parser of the syntax: util/globtok.h) ------------------------------ */

typedef struct gtok {
        bool star;
        globtok_set set; /* when !star: the bytes this token matches, already case-folded */
        size_t len;      /* pattern bytes consumed */
} gtok;

static void glob_token(const char *p, size_t plen, gtok *t) {
        globtok g;
        globtok_next(p, plen, &g);
        *t = (gtok) { .star = g.kind == GLOBTOK_STAR, .set = g.set, .len = g.len };
}

/* ---- Matching one component (or a whole string without FNM_PATHNAME) ----------------------- */

static bool match_component_general(const char *p, size_t plen, const char *s, size_t slen);

/* No byte of p[0..n) starts anything but a one-byte literal token (util/globtok.h): such a
 * text matches exactly the strings equal to it up to ASCII case. */
static bool plain_text(const char *p, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (p[i] == '*' || p[i] == '?' || p[i] == '[' || p[i] == '\\')
                        return false;
        return true;
}

static unsigned char ascii_lower(unsigned char c) {
        return c >= 'A' && c <= 'Z' ? (unsigned char) (c - 'A' + 'a') : c;
}

/* ASCII case-insensitive equality, independent of the locale (strncasecmp is not). */
static bool equal_folded(const char *a, const char *b, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (ascii_lower((unsigned char) a[i]) != ascii_lower((unsigned char) b[i]))
                        return false;
        return true;
}

/* The shapes nearly every rule component has — a literal name ("HEAD", ".bashrc", each
 * directory of a protected path), "*" + literal ("*.pem") and literal + "*" (".env.*") —
 * answered by one comparison instead of a token walk: on every notification each protected
 * entry is compared with the path component by component, which made matching about a sixth
 * of the supervisor's time (docs/design/creation-rules.md, "Where the time goes"). The answers
 * are exactly those of the general matcher below (tests/plan/test-name-rules.c compares the
 * two on generated globs). Returns -1 for any other shape. */
static int match_simple(const char *p, size_t plen, const char *s, size_t slen) {
        if (plain_text(p, plen))
                return plen == slen && equal_folded(p, s, slen);
        if (plen == 0)
                return -1;
        size_t lit = plen - 1;
        if (p[0] == '*' && plain_text(p + 1, lit))
                return slen >= lit && equal_folded(p + 1, s + (slen - lit), lit);
        if (p[plen - 1] == '*' && plain_text(p, lit))
                return slen >= lit && equal_folded(p, s, lit);
        return -1;
}

/* Classic wildcard matching with backtracking to the last '*': O(len(p) * len(s)). */
static bool match_component(const char *p, size_t plen, const char *s, size_t slen) {
        int simple = match_simple(p, plen, s, slen);
        if (simple >= 0)
                return simple;
        return match_component_general(p, plen, s, slen);
}

bool name_glob_match_general(const char *pattern, const char *str) {
        return match_component_general(pattern, strlen(pattern), str, strlen(str));
}

static bool match_component_general(const char *p, size_t plen, const char *s, size_t slen) {
        size_t pi = 0, si = 0, star_p = SIZE_MAX, star_s = 0;
        gtok t;
        while (si < slen) {
                if (pi < plen) {
                        glob_token(p + pi, plen - pi, &t);
                        if (t.star) {
                                star_p = pi + t.len;
                                star_s = si;
                                pi += t.len;
                                continue;
                        }
                        if (globtok_set_has(&t.set, (unsigned char) s[si])) {
                                pi += t.len;
                                si++;
                                continue;
                        }
                }
                if (star_p == SIZE_MAX)
                        return false;
                pi = star_p;
                si = ++star_s;
        }
        while (pi < plen) {
                glob_token(p + pi, plen - pi, &t);
                if (!t.star)
                        return false;
                pi += t.len;
        }
        return true;
}

/* Could some string that `name` may stand for on a case-folding filesystem match `p`? Each run
 * of non-ASCII bytes in `name` may fold to any string (U+212A KELVIN SIGN folds to "k", U+FB06
 * to "st", and a folding table may change with the kernel), so it becomes a '*' and the question
 * is whether two patterns share a string: a reachability search over position pairs. */
static bool could_match(const char *p, size_t plen, const char *name, size_t nlen) {
        size_t np = 0;
        _cleanup_free_ gtok *pt = calloc(plen + 1, sizeof(gtok));
        _cleanup_free_ gtok *nt = calloc(nlen + 1, sizeof(gtok));
        if (!pt || !nt)
                return true; /* fail closed: out of memory counts as a match */
        for (size_t i = 0; i < plen; i += pt[np++].len)
                glob_token(p + i, plen - i, &pt[np]);
        size_t nn = 0;
        for (size_t i = 0; i < nlen;) {
                nt[nn] = (gtok) { .len = 1 };
                if ((unsigned char) name[i] >= 0x80) {
                        nt[nn].star = true;
                        while (i < nlen && (unsigned char) name[i] >= 0x80)
                                i++;
                } else
                        globtok_set_add_folded(&nt[nn].set, (unsigned char) name[i++]);
                nn++;
        }
        size_t w = np + 1, states = (nn + 1) * w;
        _cleanup_free_ bool *seen = calloc(states, sizeof(bool));
        _cleanup_free_ size_t *stack = calloc(states, sizeof(size_t));
        if (!seen || !stack)
                return true;
        size_t top = 0;
        seen[0] = true;
        stack[top++] = 0;
        globtok_set all;
        globtok_set_any(&all);
        while (top > 0) {
                size_t st = stack[--top], i = st / w, j = st % w;
                if (i == nn && j == np)
                        return true;
                size_t next[3];
                size_t n_next = 0;
                if (i < nn && nt[i].star)
                        next[n_next++] = (i + 1) * w + j;
                if (j < np && pt[j].star)
                        next[n_next++] = i * w + j + 1;
                if (i < nn && j < np && !(nt[i].star && pt[j].star)) {
                        const globtok_set *a = nt[i].star ? &all : &nt[i].set;
                        const globtok_set *b = pt[j].star ? &all : &pt[j].set;
                        if (globtok_set_intersects(a, b))
                                next[n_next++] = (nt[i].star ? i : i + 1) * w +
                                                 (pt[j].star ? j : j + 1);
                }
                for (size_t k = 0; k < n_next; k++)
                        if (!seen[next[k]]) {
                                seen[next[k]] = true;
                                stack[top++] = next[k];
                        }
        }
        return false;
}

/* ---- Paths ------------------------------------------------------------------------------------ */

typedef struct comp {
        const char *s;
        size_t n;
} comp;

static comp next_comp(const char **cursor) {
        const char *c = *cursor;
        while (*c == '/')
                c++;
        const char *e = c;
        while (*e && *e != '/')
                e++;
        *cursor = e;
        return (comp) { c, (size_t) (e - c) };
}

static bool has_non_ascii(const char *s, size_t n) {
        for (size_t i = 0; i < n; i++)
                if ((unsigned char) s[i] >= 0x80)
                        return true;
        return false;
}

typedef enum relation {
        REL_NONE,
        REL_SELF_OR_BENEATH, /* the path is the protected entry or lies beneath it */
        REL_ANCESTOR,        /* the path is a proper ancestor of (something the entry matches) */
} relation;

/* Walks pattern and path component by component (FNM_PATHNAME: a wildcard never spans '/').
 * `fold_last` applies the non-ASCII widening to the path's final component only: its ancestors
 * exist already and are what they are. */
/* On REL_NONE, *ret_miss is the length of the pattern up to the end of the component that did
 * not match: any pattern with the same bytes up to there, followed by a '/' or its end, fails on
 * the same path at the same component, because every comparison up to it is the same. */
static relation relate(const char *pattern, const char *path, bool fold_last, size_t *ret_miss) {
        const char *q = pattern, *p = path;
        for (;;) {
                comp qc = next_comp(&q), pc = next_comp(&p);
                if (qc.n == 0)
                        return REL_SELF_OR_BENEATH;
                if (pc.n == 0)
                        return REL_ANCESTOR;
                const char *rest = p;
                bool last = next_comp(&rest).n == 0;
                bool ok = last && fold_last ? could_match(qc.s, qc.n, pc.s, pc.n)
                                            : match_component(qc.s, qc.n, pc.s, pc.n);
                if (!ok) {
                        *ret_miss = (size_t) (q - pattern);
                        return REL_NONE;
                }
        }
}

/* `pattern` shares the first `miss` bytes of `failed`, which ended a component there: relate()
 * would fail on the same component. Protected sets come in runs with a common directory
 * (/root/.cache/cordon/tools/..., each writable root's entries), so most entries are skipped
 * after one comparison of their shared prefix. */
static bool fails_like(const char *pattern, const char *failed, size_t miss) {
        return failed && strncmp(pattern, failed, miss) == 0 &&
               (pattern[miss] == '/' || pattern[miss] == '\0');
}

static const char *last_component(const char *path, size_t *ret_len) {
        const char *cursor = path, *last = path;
        size_t n = 0;
        for (;;) {
                comp c = next_comp(&cursor);
                if (c.n == 0)
                        break;
                last = c.s;
                n = c.n;
        }
        *ret_len = n;
        return last;
}

/* The settings directory cordon reads as project settings (<project>/.cordon/settings.json):
 * a command that could create one below the workspace would configure the next run started
 * there (issue 11). Fixed, any case, not liftable by any allow entry. */
static const char cordon_dir_name[] = ".cordon";

bool name_rules_persistent(const name_rules *r, const char *path) {
        if (!r->scoped)
                return true; /* no root known: the rules hold everywhere (fail closed) */
        for (size_t i = 0; i < r->persistent.n; i++)
                if (path_startswith(path, r->persistent.v[i]))
                        return true;
        return false;
}

/* Some component of `path` is ".cordon" in any ASCII case; the final one also under the
 * non-ASCII widening (a casefold directory may fold a crafted name to it). */
static bool names_cordon_dir(const char *path, bool fold) {
        const char *cursor = path;
        for (;;) {
                comp c = next_comp(&cursor);
                if (c.n == 0)
                        return false;
                const char *rest = cursor;
                bool last = next_comp(&rest).n == 0;
                if (last && fold ? could_match(cordon_dir_name, sizeof(cordon_dir_name) - 1, c.s, c.n)
                                 : match_component(cordon_dir_name, sizeof(cordon_dir_name) - 1,
                                                   c.s, c.n))
                        return true;
        }
}

/* An allow entry lifts a match of a deny glob with wildcards (".env.*" for ".env.example"); a
 * literal deny name (".env") names exactly one file and stays refused whatever is allowed. The
 * allowed name is compared byte for byte: the widening for folding filesystems would let an
 * allow glob cover names it does not spell. */
static bool allowed_name(const name_rules *r, const char *deny, const char *path, const char *name,
                         size_t nlen, bool fold) {
        if (!globtok_has_wildcard(deny, strlen(deny)) || fold)
                return false;
        for (size_t i = 0; i < r->allow_names.n; i++)
                if (match_component(r->allow_names.v[i], strlen(r->allow_names.v[i]), name, nlen))
                        return true;
        for (size_t i = 0; i < r->allow_paths.n; i++)
                if (name_glob_match(r->allow_paths.v[i], path, true))
                        return true;
        return false;
}

static name_verdict check_deny_names(const name_rules *r, const char *path, const char *name,
                                     size_t nlen, bool fold, const char **ret_rule) {
        for (size_t i = 0; i < r->deny_names.n; i++) {
                const char *g = r->deny_names.v[i];
                bool hit = fold ? could_match(g, strlen(g), name, nlen)
                                : match_component(g, strlen(g), name, nlen);
                if (hit && !allowed_name(r, g, path, name, nlen, fold)) {
                        *ret_rule = g;
                        return NAME_DENIED_NAME;
                }
        }
        return NAME_ALLOWED;
}

name_verdict name_rules_check(const name_rules *r, name_check_kind kind, const char *path,
                              unsigned flags, const char **ret_rule) {
        const char *rule = NULL;
        name_verdict v = NAME_ALLOWED;
        size_t nlen;
        const char *name = last_component(path ? path : "", &nlen);
        bool fold = !(flags & NAME_CHECK_EXACT_BYTES) && has_non_ascii(name, nlen);

        if (!path || path[0] != '/') {
                /* The supervisor only ever asks about absolute paths; anything else is a bug and
                 * must not turn into "allowed". */
                v = NAME_DENIED_PROTECTED;
                rule = "(path not absolute)";
                goto done;
        }
        const char *failed = NULL;
        size_t miss = 0;
        for (size_t i = 0; i < r->protected.n; i++) {
                const char *entry = r->protected.v[i];
                if (fails_like(entry, failed, miss))
                        continue;
                relation rel = relate(entry, path, fold, &miss);
                if (rel == REL_NONE)
                        failed = entry;
                /* Renaming into place a directory that is an ancestor of a protected path (or
                 * renaming such an ancestor away and back) would bring the protected path into
                 * existence without a create ever naming it. */
                if (rel == REL_SELF_OR_BENEATH || (rel == REL_ANCESTOR && kind != NAME_CHECK_CREATE)) {
                        v = NAME_DENIED_PROTECTED;
                        rule = r->protected.v[i];
                        goto done;
                }
        }
        if (kind == NAME_CHECK_RENAME_SOURCE || nlen == 0 || !name_rules_persistent(r, path))
                goto done;
        if (names_cordon_dir(path, fold)) {
                v = NAME_DENIED_PROTECTED;
                rule = cordon_dir_name;
                goto done;
        }
        for (size_t i = 0; i < r->names_exempt.n; i++)
                if (path_startswith(path, r->names_exempt.v[i]))
                        goto done;
        v = check_deny_names(r, path, name, nlen, fold, &rule);
done:
        if (ret_rule)
                *ret_rule = rule;
        return v;
}

name_verdict name_rules_check_create(const name_rules *r, const char *path, const char **ret_rule) {
        return name_rules_check(r, NAME_CHECK_CREATE, path, 0, ret_rule);
}

name_verdict name_rules_check_rename_target(const name_rules *r, const char *path,
                                            const char **ret_rule) {
        return name_rules_check(r, NAME_CHECK_RENAME_TARGET, path, 0, ret_rule);
}

name_verdict name_rules_check_rename_source(const name_rules *r, const char *path,
                                            const char **ret_rule) {
        return name_rules_check(r, NAME_CHECK_RENAME_SOURCE, path, 0, ret_rule);
}

bool name_glob_match(const char *pattern, const char *str, bool pathname) {
        if (!pathname)
                return match_component(pattern, strlen(pattern), str, strlen(str));
        /* FNM_PATHNAME: slashes must line up exactly, so compare segment by segment. */
        const char *p = pattern, *s = str;
        for (;;) {
                const char *pe = strchrnul(p, '/'), *se = strchrnul(s, '/');
                if (!match_component(p, (size_t) (pe - p), s, (size_t) (se - s)))
                        return false;
                if (!*pe || !*se)
                        return !*pe && !*se;
                p = pe + 1;
                s = se + 1;
        }
}

bool name_could_be(const char *literal, const char *name, unsigned flags) {
        size_t ll = strlen(literal), nl = strlen(name);
        if ((flags & NAME_CHECK_EXACT_BYTES) || !has_non_ascii(name, nl))
                return match_component(literal, ll, name, nl);
        return could_match(literal, ll, name, nl);
}
