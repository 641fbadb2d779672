/* SPDX-License-Identifier: Apache-2.0 */
/* The glob syntax of cordon's rules (globtok.h). */
#include "util/globtok.h"

#include <string.h>

#include "util/util.h"

/* ---- byte sets ------------------------------------------------------------------------------ */

bool globtok_set_has(const globtok_set *s, unsigned char c) {
        return s->w[c >> 6] & (UINT64_C(1) << (c & 63));
}

static void set_add(globtok_set *s, unsigned char c) {
        s->w[c >> 6] |= UINT64_C(1) << (c & 63);
}

bool globtok_set_intersects(const globtok_set *a, const globtok_set *b) {
        for (size_t i = 0; i < ELEMENTSOF(a->w); i++)
                if (a->w[i] & b->w[i])
                        return true;
        return false;
}

void globtok_set_any(globtok_set *ret) {
        *ret = (globtok_set) { { ~UINT64_C(0), ~UINT64_C(0), ~UINT64_C(0), ~UINT64_C(0) } };
        ret->w[0] &= ~UINT64_C(1);                         /* NUL */
        ret->w['/' >> 6] &= ~(UINT64_C(1) << ('/' & 63)); /* '/' */
}

/* ASCII only: the result never depends on setlocale(), and a byte of a UTF-8 sequence is never
 * taken for a letter. */
static unsigned char other_case(unsigned char c) {
        if (c >= 'a' && c <= 'z')
                return (unsigned char) (c - 'a' + 'A');
        if (c >= 'A' && c <= 'Z')
                return (unsigned char) (c - 'A' + 'a');
        return c;
}

void globtok_set_add_folded(globtok_set *s, unsigned char c) {
        set_add(s, c);
        set_add(s, other_case(c));
}

static void add_range(globtok_set *s, unsigned char lo, unsigned char hi) {
        for (unsigned c = lo; c <= hi; c++)
                globtok_set_add_folded(s, (unsigned char) c);
}

/* ---- bracket expressions -------------------------------------------------------------------- */

/* A bracket expression being read: p[0] == '[', p[i] the next byte. */
typedef struct bracket {
        const char *p;
        size_t len, i;
        globtok_set set;
        bool negate, widen;
        const char *issue;
} bracket;

/* POSIX classes, ASCII only (the C locale). Each is a list of inclusive ranges, as byte pairs. */
static bool class_add(globtok_set *s, const char *name, size_t n) {
        static const struct {
                const char *name, *ranges;
        } classes[] = {
                { "alpha", "azAZ" },   { "digit", "09" },     { "alnum", "azAZ09" },
                { "upper", "AZ" },     { "lower", "az" },     { "xdigit", "09afAF" },
                { "space", "\t\r  " }, { "blank", "\t\t  " }, { "punct", "!/:@[`{~" },
                { "print", " ~" },     { "graph", "!~" },     { "cntrl", "\x01\x1f\x7f\x7f" },
        };
        for (size_t i = 0; i < ELEMENTSOF(classes); i++) {
                if (strlen(classes[i].name) != n || memcmp(classes[i].name, name, n) != 0)
                        continue;
                for (const char *r = classes[i].ranges; r[0] && r[1]; r += 2)
                        add_range(s, (unsigned char) r[0], (unsigned char) r[1]);
                return true;
        }
        return false;
}

/* "[:name:]", "[=x=]" or "[.x.]" at b->p[b->i]. False when it is not closed (before a '/'):
 * then neither is the bracket expression. */
static bool read_inner(bracket *b) {
        char kind = b->p[b->i + 1];
        for (size_t k = b->i + 2; k + 1 < b->len && b->p[k] != '/'; k++) {
                if (b->p[k] != kind || b->p[k + 1] != ']')
                        continue;
                const char *name = b->p + b->i + 2;
                if (kind != ':') {
                        b->widen = true;
                        b->issue = "[=x=] and [.x.] are not supported (the set matches any byte)";
                } else if (!class_add(&b->set, name, k - (b->i + 2))) {
                        b->widen = true;
                        b->issue = "names an unknown character class (the set matches any byte)";
                }
                b->i = k + 2;
                return true;
        }
        return false;
}

/* One member byte at b->p[b->i]: itself, or the byte after a '\' ('/' excepted: it ends the
 * bracket, quoted or not). */
static unsigned char read_member(bracket *b) {
        unsigned char c = (unsigned char) b->p[b->i];
        if (c == '\\' && b->i + 1 < b->len && b->p[b->i + 1] != '/')
                c = (unsigned char) b->p[++b->i];
        b->i++;
        return c;
}

/* The bracket expression at p[0] == '['. Returns the bytes it takes, or 0 when it is not closed
 * before a '/' or the end (then '[' is an ordinary byte, as in fnmatch). */
static size_t read_bracket(const char *p, size_t len, globtok *ret) {
        bracket b = { .p = p, .len = len, .i = 1 };
        if (b.i < len && (p[b.i] == '!' || p[b.i] == '^')) {
                b.negate = true;
                b.i++;
        }
        for (bool first = true; b.i < len && p[b.i] != '/'; first = false) {
                if (p[b.i] == ']' && !first) {
                        globtok_set any;
                        globtok_set_any(&any);
                        *ret = (globtok) { .kind = GLOBTOK_CLASS, .len = b.i + 1, .issue = b.issue };
                        for (size_t k = 0; k < ELEMENTSOF(any.w); k++)
                                ret->set.w[k] = any.w[k] & (b.widen    ? ~UINT64_C(0)
                                                            : b.negate ? ~b.set.w[k]
                                                                       : b.set.w[k]);
                        return ret->len;
                }
                if (p[b.i] == '[' && b.i + 1 < len && memchr(":=.", p[b.i + 1], 3)) {
                        if (!read_inner(&b))
                                return 0;
                        continue;
                }
                unsigned char lo = read_member(&b), hi = lo;
                if (b.i + 1 < len && p[b.i] == '-' && p[b.i + 1] != ']') {
                        if (p[++b.i] == '/')
                                return 0;
                        hi = read_member(&b);
                        if (hi < lo)
                                b.issue = "has a range whose ends are reversed (it matches no byte)";
                }
                add_range(&b.set, lo, hi);
        }
        return 0;
}

/* ---- tokens --------------------------------------------------------------------------------- */

void globtok_next(const char *p, size_t len, globtok *ret) {
        unsigned char c = (unsigned char) p[0];
        *ret = (globtok) { .kind = GLOBTOK_LITERAL, .len = 1, .byte = c };
        switch (c) {
        case '*':
                ret->kind = GLOBTOK_STAR;
                return;
        case '?':
                ret->kind = GLOBTOK_ANY;
                globtok_set_any(&ret->set);
                return;
        case '[': {
                globtok t;
                if (read_bracket(p, len, &t) > 0) {
                        *ret = t;
                        return;
                }
                ret->issue = "has a '[' without a ']' before the next '/' or the end (it stands "
                             "for itself; write \\[ for the byte)";
                break;
        }
        case '\\':
                if (len > 1 && p[1] != '/') {
                        ret->byte = (unsigned char) p[1];
                        ret->len = 2;
                } else
                        ret->issue = len > 1 ? "has a '\\' before '/' (it stands for itself)"
                                             : "ends with a '\\' (it stands for itself; write "
                                               "\\\\ for the byte)";
                break;
        default:
                break;
        }
        globtok_set_add_folded(&ret->set, ret->byte);
}

const char *globtok_check(const char *p, size_t len) {
        globtok t;
        for (size_t i = 0; i < len; i += t.len) {
                globtok_next(p + i, len - i, &t);
                if (t.issue)
                        return t.issue;
        }
        return NULL;
}

bool globtok_has_wildcard(const char *p, size_t len) {
        globtok t;
        for (size_t i = 0; i < len; i += t.len) {
                globtok_next(p + i, len - i, &t);
                if (t.kind != GLOBTOK_LITERAL)
                        return true;
        }
        return false;
}
