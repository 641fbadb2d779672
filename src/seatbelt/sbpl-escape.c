/* SPDX-License-Identifier: Apache-2.0 */
/* The escaping function and the glob → regex translator for Seatbelt profiles (sbpl-escape.h).
 *
 * Two layers of syntax meet in a regex rule: `(regex "^/a/\\.git$")`. The regex text is built
 * first (escaping regex metacharacters with '\'), then quoted as an SBPL string (doubling every
 * '\' and escaping '"'); the Scheme reader undoes the second layer and the regex compiler sees
 * the first. Skipping the second layer would let the reader eat a backslash and turn "\." back
 * into "any byte". */
#include <stdio.h>

#include "seatbelt/sbpl-escape.h"
#include "util/globtok.h"

/* ---- sbuf ----------------------------------------------------------------------------------- */

void sbuf_fail(sbuf *b, int r) {
        if (b->err == 0)
                b->err = r < 0 ? r : -EINVAL;
}

void sbuf_addn(sbuf *b, const char *s, size_t n) {
        if (b->err)
                return;
        if (n >= SIZE_MAX / 2 - b->len) {
                sbuf_fail(b, -ENOMEM);
                return;
        }
        if (b->len + n + 1 > b->cap) {
                size_t cap = b->cap ? b->cap : 256;
                while (cap < b->len + n + 1)
                        cap *= 2;
                char *ns = realloc(b->s, cap);
                if (!ns) {
                        sbuf_fail(b, -ENOMEM);
                        return;
                }
                b->s = ns;
                b->cap = cap;
        }
        memcpy(b->s + b->len, s, n);
        b->len += n;
        b->s[b->len] = '\0';
}

void sbuf_add(sbuf *b, const char *s) {
        sbuf_addn(b, s, strlen(s));
}

void sbuf_addf(sbuf *b, const char *fmt, ...) {
        char small[256];
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(small, sizeof(small), fmt, ap);
        va_end(ap);
        if (n < 0 || (size_t) n >= sizeof(small)) {
                sbuf_fail(b, -EINVAL); /* only short, fixed fragments are formatted */
                return;
        }
        sbuf_addn(b, small, (size_t) n);
}

char *sbuf_take(sbuf *b, int *ret_err) {
        if (!b->err && !b->s)
                sbuf_add(b, "");
        if (b->err) {
                *ret_err = b->err;
                sbuf_done(b);
                return NULL;
        }
        *ret_err = 0;
        char *s = TAKE_PTR(b->s);
        *b = (sbuf) { 0 };
        return s;
}

void sbuf_done(sbuf *b) {
        free(b->s);
        *b = (sbuf) { 0 };
}

/* ---- the escaping function ------------------------------------------------------------------ */

/* Length of the UTF-8 sequence at s (1-4), or 0 when it is not valid UTF-8: overlong forms,
 * surrogates and code points above U+10FFFF are invalid (RFC 3629). */
static size_t utf8_seq(const unsigned char *s) {
        unsigned char c = s[0];
        if (c < 0x80)
                return 1;
        size_t n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0;
        if (n == 0 || c > 0xf4)
                return 0;
        for (size_t i = 1; i < n; i++)
                if ((s[i] & 0xc0) != 0x80)
                        return 0;
        if ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] > 0x9f) ||
            (c == 0xf0 && s[1] < 0x90) || (c == 0xf4 && s[1] > 0x8f))
                return 0;
        return n;
}

static bool is_control(unsigned char c) {
        return c < 0x20 || c == 0x7f;
}

int sbpl_check_string(const char *s) {
        const unsigned char *u = (const unsigned char *) s;
        for (size_t i = 0; u[i];) {
                if (is_control(u[i]))
                        return -EINVAL;
                size_t n = utf8_seq(u + i);
                if (n == 0)
                        return -EILSEQ;
                i += n;
        }
        return 0;
}

void sbpl_quote(sbuf *b, const char *s) {
        int r = sbpl_check_string(s);
        if (r < 0) {
                sbuf_fail(b, r);
                return;
        }
        sbuf_add(b, "\"");
        for (const char *c = s; *c;) {
                size_t n = strcspn(c, "\\\"");
                sbuf_addn(b, c, n);
                c += n;
                if (*c) {
                        /* The only two bytes with a meaning inside an SBPL string. */
                        char esc[2] = { '\\', *c++ };
                        sbuf_addn(b, esc, 2);
                }
        }
        sbuf_add(b, "\"");
}

/* ---- glob → regex --------------------------------------------------------------------------- */

static bool is_alpha(unsigned char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* Bytes that stay plain inside a regex bracket: not ']' '^' '-' '\' '[' (bracket syntax, or an
 * escape in some dialects), not '/', not control characters, not bytes of UTF-8 sequences (a
 * regex engine reading characters would take them as parts of one). */
static bool bracket_plain(unsigned char c) {
        return c > 0x20 && c < 0x7f && !strchr("]^-\\[/", c);
}

/* A bracket expression, from the set of bytes the name rules match for it (util/globtok.h:
 * already case folded and negated, never '/'). Exact when every member is a plain byte. Else,
 * and for an empty set (a reversed range), which a regex bracket cannot spell, "[^/]": it says
 * more than the glob, which is safe for a deny rule. */
static void emit_class(sbuf *b, const globtok_set *s) {
        bool any = false, plain = true;
        for (unsigned c = 1; c < 256 && plain; c++)
                if (globtok_set_has(s, (unsigned char) c)) {
                        any = true;
                        plain = bracket_plain((unsigned char) c);
                }
        if (!plain || !any) {
                sbuf_add(b, "[^/]");
                return;
        }
        sbuf_add(b, "[");
        for (unsigned c = 0; c < 128; c++) {
                unsigned char v = (unsigned char) c;
                /* Each letter once, lower case first: "[dDrR]". */
                if (!globtok_set_has(s, v) ||
                    (v >= 'A' && v <= 'Z' && globtok_set_has(s, (unsigned char) (v | 0x20))))
                        continue;
                sbuf_addn(b, (const char *) &v, 1);
                if (is_alpha(v) && globtok_set_has(s, (unsigned char) (v & ~0x20))) {
                        unsigned char u = (unsigned char) (v & ~0x20);
                        sbuf_addn(b, (const char *) &u, 1);
                }
        }
        sbuf_add(b, "]");
}

/* One literal byte of the glob. */
static void emit_literal(sbuf *b, unsigned char c) {
        if (is_control(c)) {
                sbuf_fail(b, -EINVAL);
                return;
        }
        if (is_alpha(c)) {
                /* APFS and HFS+ are case-insensitive by default: ".GIT/HOOKS" is ".git/hooks". */
                char cls[5] = { '[', (char) (c | 0x20), (char) (c & ~0x20), ']', '\0' };
                sbuf_add(b, cls);
                return;
        }
        if (c < 0x80 && strchr(".[](){}*+?|^$\\", c)) {
                char esc[2] = { '\\', (char) c };
                sbuf_addn(b, esc, 2);
                return;
        }
        /* Other ASCII, and each byte of a (validated) UTF-8 sequence, as itself. */
        sbuf_addn(b, (const char *) &c, 1);
}

/* The glob read by the name rules' own parser (util/globtok.h), token by token. */
static void emit_body(sbuf *b, const char *glob) {
        size_t len = strlen(glob);
        globtok t;
        for (size_t i = 0; i < len && !b->err; i += t.len) {
                globtok_next(glob + i, len - i, &t);
                switch (t.kind) {
                case GLOBTOK_STAR:
                        sbuf_add(b, "[^/]*");
                        break;
                case GLOBTOK_ANY:
                        sbuf_add(b, "[^/]");
                        break;
                case GLOBTOK_CLASS:
                        emit_class(b, &t.set);
                        break;
                case GLOBTOK_LITERAL:
                default:
                        emit_literal(b, t.byte);
                        break;
                }
        }
}

char *sbpl_glob_quote(const char *path) {
        size_t n = strlen(path);
        char *q = malloc(2 * n + 1), *o = q;
        if (!q)
                return NULL;
        for (const char *c = path; *c; c++) {
                if (strchr("*?[\\", *c))
                        *o++ = '\\';
                *o++ = *c;
        }
        *o = '\0';
        return q;
}

int sbpl_glob_regex_body(const char *glob, char **ret) {
        int r = sbpl_check_string(glob);
        if (r < 0)
                return r;
        sbuf b = { 0 };
        emit_body(&b, glob);
        *ret = sbuf_take(&b, &r);
        return r;
}

int sbpl_glob_regex(const char *glob, sbpl_glob_kind kind, char **ret) {
        int r = sbpl_check_string(glob);
        if (r < 0)
                return r;
        bool is_path = kind != SBPL_GLOB_NAME;
        if (is_path != (glob[0] == '/') || (!is_path && strchr(glob, '/')))
                return -EINVAL;
        sbuf b = { 0 };
        sbuf_add(&b, is_path ? "^" : "^.*/");
        /* "/" as a subpath is every path: its body is empty and the suffix does the rest. */
        if (!(kind == SBPL_GLOB_SUBPATH && strcmp(glob, "/") == 0))
                emit_body(&b, glob);
        sbuf_add(&b, kind == SBPL_GLOB_SUBPATH ? "(/.*)?$" : "$");
        *ret = sbuf_take(&b, &r);
        return r;
}
