/* SPDX-License-Identifier: Apache-2.0 */
/* Positioned errors while reading a JSON document (see json-read.h). */
#include "policy/json-read.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "util/util.h"

const char *jread_shorten(const char *s, char *buf, size_t size) {
        size_t o = 0;
        for (const unsigned char *p = (const unsigned char *) s; *p && o + 4 < size; p++)
                buf[o++] = (*p < 0x20 || *p == 0x7f) ? '?' : (char) *p;
        if (s[o] && o + 4 >= size) {
                memcpy(buf + o, "...", 3);
                o += 3;
        }
        buf[o] = '\0';
        return buf;
}

const char *jread_type_name(const json_t *v) {
        switch (json_typeof(v)) {
        case JSON_OBJECT:
                return "an object";
        case JSON_ARRAY:
                return "an array";
        case JSON_STRING:
                return "a string";
        case JSON_INTEGER:
                return "an integer";
        case JSON_REAL:
                return "a real number";
        case JSON_TRUE:
        case JSON_FALSE:
                return "a boolean";
        case JSON_NULL:
                return "null";
        default:
                return "something else";
        }
}

/* The walk never goes deeper than the depth check allowed; the guard keeps a programming error
 * from writing past the array. */
void jread_push_key(jread *c, const char *key) {
        if (c->depth < JREAD_MAX_PATH)
                c->path[c->depth] = (json_pos_step){ key, 0 };
        c->depth++;
}

void jread_push_index(jread *c, size_t index) {
        if (c->depth < JREAD_MAX_PATH)
                c->path[c->depth] = (json_pos_step){ NULL, index };
        c->depth++;
}

void jread_pop(jread *c) {
        if (c->depth > 0)
                c->depth--;
}

void jread_key_path(const jread *c, char *buf, size_t size) {
        size_t o = 0, n = c->depth < JREAD_MAX_PATH ? c->depth : JREAD_MAX_PATH;
        buf[0] = '\0';
        for (size_t i = 0; i < n && o < size; i++) {
                char part[80];
                const json_pos_step *s = &c->path[i];
                int w = s->key ? snprintf(buf + o, size - o, "%s%s", i ? "." : "",
                                          jread_shorten(s->key, part, sizeof(part)))
                               : snprintf(buf + o, size - o, "[%zu]", s->index);
                if (w < 0)
                        break;
                o += (size_t) w;
        }
}

bool jread_position(const jread *c, bool at_key, json_pos *ret) {
        size_t n = c->depth < JREAD_MAX_PATH ? c->depth : JREAD_MAX_PATH;
        at_key = at_key && n > 0 && c->path[n - 1].key;
        return json_pos_find(c->text, c->len, c->path, n, at_key, ret) >= 0;
}

int jread_fail(jread *c, bool at_key, const char *hint, const char *fmt, ...) {
        char what[512], key[256], where[64] = "";
        va_list ap;
        va_start(ap, fmt);
        (void) vsnprintf(what, sizeof(what), fmt, ap);
        va_end(ap);
        jread_key_path(c, key, sizeof(key));
        json_pos pos;
        if (jread_position(c, at_key, &pos))
                (void) snprintf(where, sizeof(where), ":%u:%u", pos.line, pos.column);
        if (c->depth == 0)
                return cordon_set_error(c->err, CORDON_POLICY_INVALID, EINVAL, "%s%s: %s; %s",
                                        c->origin, where, what, hint);
        return cordon_set_error(c->err, CORDON_POLICY_INVALID, EINVAL, "%s%s: key '%s': %s; %s",
                                c->origin, where, key, what, hint);
}

int jread_expect(jread *c, const json_t *v, bool ok, const char *what, const char *example) {
        if (ok)
                return 0;
        char hint[256];
        (void) snprintf(hint, sizeof(hint), "write it like %s", example);
        return jread_fail(c, false, hint, "expected %s, got %s", what, jread_type_name(v));
}

int jread_unknown_key(jread *c, const char *const *known, size_t n_known) {
        const char *key = c->depth > 0 && c->depth <= JREAD_MAX_PATH ? c->path[c->depth - 1].key
                                                                      : NULL;
        char hint[512], list[400] = "";
        size_t o = 0;
        for (size_t i = 0; key && i < n_known; i++)
                if (text_edit_distance(key, known[i]) <= 2) {
                        (void) snprintf(hint, sizeof(hint), "did you mean '%s'?", known[i]);
                        return jread_fail(c, true, hint, "unknown key");
                }
        for (size_t i = 0; i < n_known; i++) {
                int w = snprintf(list + o, sizeof(list) - o, "%s%s", i ? ", " : "", known[i]);
                if (w > 0 && (size_t) w < sizeof(list) - o)
                        o += (size_t) w;
        }
        (void) snprintf(hint, sizeof(hint), "allowed keys here: %s", list);
        return jread_fail(c, true, hint, "unknown key");
}

int jread_check_enum(jread *c, const char *value, const char *const *known, size_t n_known,
                     const char *what) {
        char shown[120], hint[256];
        for (size_t i = 0; i < n_known; i++)
                if (strcmp(value, known[i]) == 0)
                        return 0;
        for (size_t i = 0; i < n_known; i++)
                if (text_edit_distance(value, known[i]) <= 2) {
                        (void) snprintf(hint, sizeof(hint), "did you mean '%s'?", known[i]);
                        return jread_fail(c, false, hint, "'%s' is not %s",
                                          jread_shorten(value, shown, sizeof(shown)), what);
                }
        return jread_fail(c, false, "see docs/settings.md for the list", "'%s' is not %s",
                          jread_shorten(value, shown, sizeof(shown)), what);
}

static const char *json_hint(const json_error_t *e) {
        switch (json_error_code(e)) {
        case json_error_duplicate_key:
                return "each key may appear only once in an object";
        case json_error_null_character:
        case json_error_null_byte_in_key:
                return "strings may not contain NUL (\\u0000)";
        case json_error_end_of_input_expected:
                return "remove what follows the closing '}'";
        case json_error_premature_end_of_input:
                return "the file ends early: close every string, array and object";
        case json_error_invalid_utf8:
                return "save the file as UTF-8";
        case json_error_numeric_overflow:
                return "the number is too large";
        case json_error_unknown:
        case json_error_out_of_memory:
        case json_error_stack_overflow:
        case json_error_cannot_open_file:
        case json_error_invalid_argument:
        case json_error_invalid_syntax:
        case json_error_invalid_format:
        case json_error_wrong_type:
        case json_error_null_value:
        case json_error_item_not_found:
        case json_error_index_out_of_range:
        default:
                return "fix the JSON syntax there";
        }
}

int jread_parse(jread *c, const char *depth_hint, json_t **ret) {
        json_pos deep;
        /* Before jansson: bounds its recursion and every walk of the tree that follows. */
        if (json_pos_check_depth(c->text, c->len, POLICY_MAX_DEPTH, &deep) < 0)
                return cordon_set_error(c->err, CORDON_POLICY_INVALID, E2BIG,
                                        "%s:%u:%u: nesting deeper than %u levels; %s", c->origin,
                                        deep.line, deep.column, POLICY_MAX_DEPTH, depth_hint);
        json_error_t jerr;
        /* Duplicate keys are refused: with "last one wins" a reviewer reading the first
         * occurrence would approve another document than the one applied. */
        json_t *root = json_loadb(c->text, c->len, JSON_REJECT_DUPLICATES, &jerr);
        if (!root)
                return cordon_set_error(c->err, CORDON_POLICY_INVALID, EINVAL,
                                        "%s:%d:%d: invalid JSON: %s; %s", c->origin, jerr.line,
                                        jerr.column, jerr.text, json_hint(&jerr));
        *ret = root;
        return 0;
}
