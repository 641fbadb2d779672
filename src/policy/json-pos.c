/* SPDX-License-Identifier: Apache-2.0 */
#include "policy/json-pos.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "policy/policy.h"

typedef struct scanner {
        const unsigned char *s;
        size_t len, i;
        unsigned line, column; /* of s[i] */
} scanner;

static bool is_continuation(unsigned char c) {
        return (c & 0xC0) == 0x80;
}

static void scanner_init(scanner *sc, const char *text, size_t len) {
        *sc = (scanner){ (const unsigned char *) text, len, 0, 1, 1 };
        if (len > 0 && is_continuation(sc->s[0]))
                sc->column = 0;
}

static bool at_end(const scanner *sc) {
        return sc->i >= sc->len;
}

static unsigned char peek(const scanner *sc) {
        return at_end(sc) ? 0 : sc->s[sc->i];
}

/* Moves past s[i]; the column counts characters, not UTF-8 bytes, like jansson's. */
static void advance(scanner *sc) {
        if (at_end(sc))
                return;
        unsigned char c = sc->s[sc->i++];
        if (c == '\n') {
                sc->line++;
                sc->column = 0;
        }
        if (!at_end(sc) && !is_continuation(sc->s[sc->i]))
                sc->column++;
}

static bool is_ws(unsigned char c) {
        return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static void skip_ws(scanner *sc) {
        while (!at_end(sc) && is_ws(peek(sc)))
                advance(sc);
}

static int hex4(scanner *sc, uint32_t *ret) {
        uint32_t v = 0;
        for (int k = 0; k < 4; k++) {
                unsigned char c = peek(sc);
                int d = c >= '0' && c <= '9'   ? c - '0'
                        : c >= 'a' && c <= 'f' ? c - 'a' + 10
                        : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                               : -1;
                if (d < 0)
                        return -ENOENT;
                v = v * 16 + (uint32_t) d;
                advance(sc);
        }
        *ret = v;
        return 0;
}

static size_t utf8_encode(uint32_t cp, unsigned char out[4]) {
        if (cp < 0x80) {
                out[0] = (unsigned char) cp;
                return 1;
        }
        if (cp < 0x800) {
                out[0] = (unsigned char) (0xC0 | (cp >> 6));
                out[1] = (unsigned char) (0x80 | (cp & 0x3F));
                return 2;
        }
        if (cp < 0x10000) {
                out[0] = (unsigned char) (0xE0 | (cp >> 12));
                out[1] = (unsigned char) (0x80 | ((cp >> 6) & 0x3F));
                out[2] = (unsigned char) (0x80 | (cp & 0x3F));
                return 3;
        }
        out[0] = (unsigned char) (0xF0 | (cp >> 18));
        out[1] = (unsigned char) (0x80 | ((cp >> 12) & 0x3F));
        out[2] = (unsigned char) (0x80 | ((cp >> 6) & 0x3F));
        out[3] = (unsigned char) (0x80 | (cp & 0x3F));
        return 4;
}

/* Decodes one escape after the backslash into out[]; returns its byte count or -ENOENT. */
static int decode_escape(scanner *sc, unsigned char out[4]) {
        static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
        unsigned char c = peek(sc);
        const char *e = c ? strchr(from, c) : NULL;
        advance(sc);
        if (e) {
                out[0] = (unsigned char) to[e - from];
                return 1;
        }
        uint32_t cp, lo;
        if (c != 'u' || hex4(sc, &cp) < 0)
                return -ENOENT;
        if (cp >= 0xD800 && cp <= 0xDBFF) { /* a surrogate pair: "\uD83D\uDE00" */
                if (peek(sc) != '\\')
                        return -ENOENT;
                advance(sc);
                if (peek(sc) != 'u')
                        return -ENOENT;
                advance(sc);
                if (hex4(sc, &lo) < 0 || lo < 0xDC00 || lo > 0xDFFF)
                        return -ENOENT;
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        }
        return (int) utf8_encode(cp, out);
}

/* Scans a string starting at its opening quote. When `want` is given, *ret_equal says whether the
 * decoded string equals it byte for byte. */
static int scan_string(scanner *sc, const char *want, bool *ret_equal) {
        size_t wl = want ? strlen(want) : 0, o = 0;
        bool equal = true;
        if (peek(sc) != '"')
                return -ENOENT;
        advance(sc);
        for (;;) {
                if (at_end(sc))
                        return -ENOENT;
                unsigned char buf[4];
                size_t n = 1;
                unsigned char c = peek(sc);
                if (c == '"') {
                        advance(sc);
                        break;
                }
                if (c == '\\') {
                        advance(sc);
                        int r = decode_escape(sc, buf);
                        if (r < 0)
                                return r;
                        n = (size_t) r;
                } else {
                        buf[0] = c;
                        advance(sc);
                }
                if (want && equal) {
                        equal = o + n <= wl && memcmp(want + o, buf, n) == 0;
                        o += n;
                }
        }
        if (ret_equal)
                *ret_equal = want && equal && o == wl;
        return 0;
}

static int skip_value(scanner *sc, unsigned depth);

/* Skips an object or array body; `close` is '}' or ']'. */
static int skip_container(scanner *sc, unsigned depth, unsigned char close) {
        advance(sc);
        skip_ws(sc);
        if (peek(sc) == close) {
                advance(sc);
                return 0;
        }
        for (;;) {
                int r;
                skip_ws(sc);
                if (close == '}') {
                        if ((r = scan_string(sc, NULL, NULL)) < 0)
                                return r;
                        skip_ws(sc);
                        if (peek(sc) != ':')
                                return -ENOENT;
                        advance(sc);
                }
                if ((r = skip_value(sc, depth + 1)) < 0)
                        return r;
                skip_ws(sc);
                unsigned char c = peek(sc);
                advance(sc);
                if (c == close)
                        return 0;
                if (c != ',')
                        return -ENOENT;
        }
}

static int skip_value(scanner *sc, unsigned depth) {
        /* The depth check before parsing bounds this recursion; this guard keeps the scanner
         * bounded even if it is ever called on unchecked text. */
        if (depth > POLICY_MAX_DEPTH)
                return -ENOENT;
        skip_ws(sc);
        unsigned char c = peek(sc);
        if (c == '"')
                return scan_string(sc, NULL, NULL);
        if (c == '{' || c == '[')
                return skip_container(sc, depth, c == '{' ? '}' : ']');
        /* number, true, false, null */
        size_t start = sc->i;
        while (!at_end(sc) && !is_ws(peek(sc)) && peek(sc) != ',' && peek(sc) != ']' &&
               peek(sc) != '}')
                advance(sc);
        return sc->i > start ? 0 : -ENOENT;
}

static json_pos here(const scanner *sc) {
        return (json_pos){ sc->line, sc->column };
}

static int find_value(scanner *sc, const json_pos_step *path, size_t n, bool at_key,
                      unsigned depth, json_pos *ret);

/* In an object at '{': finds member path->key and continues with the rest of the path. */
static int find_member(scanner *sc, const json_pos_step *path, size_t n, bool at_key,
                       unsigned depth, json_pos *ret) {
        advance(sc);
        for (;;) {
                skip_ws(sc);
                json_pos key_pos = here(sc);
                bool equal = false;
                int r = scan_string(sc, path->key, &equal);
                if (r < 0)
                        return r;
                skip_ws(sc);
                if (peek(sc) != ':')
                        return -ENOENT;
                advance(sc);
                if (equal && n == 1 && at_key) {
                        *ret = key_pos;
                        return 0;
                }
                if (equal)
                        return find_value(sc, path + 1, n - 1, at_key, depth + 1, ret);
                if ((r = skip_value(sc, depth + 1)) < 0)
                        return r;
                skip_ws(sc);
                if (peek(sc) != ',')
                        return -ENOENT;
                advance(sc);
        }
}

/* In an array at '[': finds element path->index and continues with the rest of the path. */
static int find_element(scanner *sc, const json_pos_step *path, size_t n, bool at_key,
                        unsigned depth, json_pos *ret) {
        advance(sc);
        for (size_t idx = 0;; idx++) {
                skip_ws(sc);
                if (peek(sc) == ']')
                        return -ENOENT;
                if (idx == path->index)
                        return find_value(sc, path + 1, n - 1, at_key, depth + 1, ret);
                int r = skip_value(sc, depth + 1);
                if (r < 0)
                        return r;
                skip_ws(sc);
                if (peek(sc) != ',')
                        return -ENOENT;
                advance(sc);
        }
}

static int find_value(scanner *sc, const json_pos_step *path, size_t n, bool at_key,
                      unsigned depth, json_pos *ret) {
        if (depth > POLICY_MAX_DEPTH)
                return -ENOENT;
        skip_ws(sc);
        if (n == 0) {
                if (at_end(sc))
                        return -ENOENT;
                *ret = here(sc);
                return 0;
        }
        if (path->key && peek(sc) == '{')
                return find_member(sc, path, n, at_key, depth, ret);
        if (!path->key && peek(sc) == '[')
                return find_element(sc, path, n, at_key, depth, ret);
        return -ENOENT;
}

int json_pos_find(const char *text, size_t len, const json_pos_step *path, size_t n_path,
                  bool at_key, json_pos *ret) {
        if (!text || !ret || (at_key && (n_path == 0 || !path[n_path - 1].key)))
                return -EINVAL;
        scanner sc;
        scanner_init(&sc, text, len);
        /* jansson rejects a byte-order mark, so there is none to skip. */
        return find_value(&sc, path, n_path, at_key, 0, ret);
}

int json_pos_check_depth(const char *text, size_t len, unsigned max_depth, json_pos *ret) {
        scanner sc;
        scanner_init(&sc, text, len);
        unsigned depth = 0;
        bool in_string = false;
        while (!at_end(&sc)) {
                unsigned char c = peek(&sc);
                if (in_string) {
                        if (c == '\\')
                                advance(&sc); /* skip the escaped byte: \" does not end it */
                        else if (c == '"')
                                in_string = false;
                } else if (c == '"') {
                        in_string = true;
                } else if (c == '{' || c == '[') {
                        if (++depth > max_depth) {
                                if (ret)
                                        *ret = here(&sc);
                                return -E2BIG;
                        }
                } else if ((c == '}' || c == ']') && depth > 0) {
                        depth--;
                }
                advance(&sc);
        }
        return 0;
}
