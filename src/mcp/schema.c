/* SPDX-License-Identifier: Apache-2.0 */
/* The JSON Schema subset validator of the tools' arguments (schema.h). */
#include "mcp/schema.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/utf8.h"
#include "util/util.h" /* text_nearest */

#define KEYS_NEAR_MAX 32

__attribute__((format(printf, 3, 4)))
static int why_set(char *why, size_t size, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        (void) vsnprintf(why, size, fmt, ap);
        va_end(ap);
        return -EINVAL;
}

/* A member's name for a message: whole characters only (a cut never splits one), control
 * characters and broken UTF-8 as '?', at most size - 1 bytes: the name is the client's. */
static const char *name_shown(const char *name, char *buf, size_t size) {
        size_t n = strlen(name), o = 0;
        for (size_t i = 0; i < n;) {
                size_t k = utf8_char_len(name + i, n - i);
                bool bad = k == 0 || (k == 1 && ((unsigned char) name[i] < 0x20 || name[i] == 0x7f));
                size_t w = bad ? 1 : k;
                if (o + w >= size)
                        break;
                if (bad)
                        buf[o] = '?';
                else
                        memcpy(buf + o, name + i, k);
                o += w;
                i += bad ? 1 : k;
        }
        buf[o] = '\0';
        return buf;
}

static const char *schema_type(const json_t *schema) {
        const char *t = json_string_value(json_object_get(schema, "type"));
        return t ? t : "any";
}

static int check_string(const json_t *schema, const json_t *v, const char *path, char *why,
                        size_t size) {
        size_t n = json_string_length(v);
        json_t *min = json_object_get(schema, "minLength"), *max = json_object_get(schema, "maxLength");
        if (min && n < (size_t) json_integer_value(min))
                return why_set(why, size, "%s: must not be shorter than %lld bytes", path,
                               (long long) json_integer_value(min));
        if (max && n > (size_t) json_integer_value(max))
                return why_set(why, size, "%s: must not be longer than %lld bytes", path,
                               (long long) json_integer_value(max));
        json_t *choices = json_object_get(schema, "enum");
        if (!choices)
                return 0;
        size_t i;
        json_t *c;
        json_array_foreach(choices, i, c) {
                if (json_equal(c, v))
                        return 0;
        }
        char *list = json_dumps(choices, JSON_COMPACT);
        int r = why_set(why, size, "%s: must be one of %s", path, list ? list : "the listed values");
        free(list);
        return r;
}

static int check_integer(const json_t *schema, const json_t *v, const char *path, char *why,
                         size_t size) {
        json_int_t n = json_integer_value(v);
        json_t *min = json_object_get(schema, "minimum"), *max = json_object_get(schema, "maximum");
        if ((min && n < json_integer_value(min)) || (max && n > json_integer_value(max)))
                return why_set(why, size, "%s: expected an integer from %lld to %lld", path,
                               (long long) (min ? json_integer_value(min) : INT64_MIN),
                               (long long) (max ? json_integer_value(max) : INT64_MAX));
        return 0;
}

static int check_array(const json_t *schema, const json_t *v, const char *path, char *why,
                       size_t size) {
        size_t n = json_array_size(v);
        json_t *min = json_object_get(schema, "minItems"), *max = json_object_get(schema, "maxItems");
        if (min && n < (size_t) json_integer_value(min))
                return why_set(why, size, "%s: needs at least %lld items", path,
                               (long long) json_integer_value(min));
        if (max && n > (size_t) json_integer_value(max))
                return why_set(why, size, "%s: takes at most %lld items", path,
                               (long long) json_integer_value(max));
        const json_t *items = json_object_get(schema, "items");
        size_t i;
        json_t *item;
        json_array_foreach(v, i, item) {
                char sub[256];
                (void) snprintf(sub, sizeof(sub), "%s[%zu]", path, i);
                int r = items ? mcp_schema_check(items, item, sub, why, size) : 0;
                if (r < 0)
                        return r;
        }
        return 0;
}

static int unknown_member(const json_t *props, const char *key, const char *path, char *why,
                          size_t size) {
        const char *names[KEYS_NEAR_MAX];
        size_t n = 0;
        const char *k;
        json_t *unused;
        json_object_foreach((json_t *) props, k, unused) {
                if (n < KEYS_NEAR_MAX)
                        names[n++] = k;
        }
        const char *near = n ? text_nearest(key, names, n) : NULL;
        char shown[80];
        (void) name_shown(key, shown, sizeof(shown));
        if (near)
                return why_set(why, size, "%s: unknown member '%s'; did you mean '%s'?", path,
                               shown, near);
        return why_set(why, size, "%s: unknown member '%s'", path, shown);
}

static int check_object(const json_t *schema, const json_t *v, const char *path, char *why,
                        size_t size) {
        const json_t *props = json_object_get(schema, "properties");
        const json_t *extra = json_object_get(schema, "additionalProperties");
        size_t i;
        json_t *req;
        json_array_foreach(json_object_get(schema, "required"), i, req) {
                if (!json_object_get(v, json_string_value(req)))
                        return why_set(why, size, "%s: missing required member '%s'", path,
                                       json_string_value(req));
        }
        const char *key;
        json_t *member;
        json_object_foreach((json_t *) v, key, member) {
                char sub[256];
                char shown[80];
                (void) snprintf(sub, sizeof(sub), "%s.%s", path, name_shown(key, shown, sizeof(shown)));
                const json_t *s = props ? json_object_get(props, key) : NULL;
                if (!s && json_is_false(extra))
                        return unknown_member(props, key, path, why, size);
                if (!s)
                        s = json_is_object(extra) ? extra : NULL;
                int r = s ? mcp_schema_check(s, member, sub, why, size) : 0;
                if (r < 0)
                        return r;
        }
        return 0;
}

int mcp_schema_check(const json_t *schema, const json_t *value, const char *path, char *why,
                     size_t why_size) {
        const char *t = schema_type(schema);
        if (strcmp(t, "object") == 0)
                return json_is_object(value) ? check_object(schema, value, path, why, why_size)
                                             : why_set(why, why_size, "%s: expected an object", path);
        if (strcmp(t, "string") == 0)
                return json_is_string(value) ? check_string(schema, value, path, why, why_size)
                                             : why_set(why, why_size, "%s: expected a string", path);
        if (strcmp(t, "integer") == 0)
                return json_is_integer(value)
                               ? check_integer(schema, value, path, why, why_size)
                               : why_set(why, why_size, "%s: expected an integer", path);
        if (strcmp(t, "boolean") == 0)
                return json_is_boolean(value) ? 0
                                              : why_set(why, why_size, "%s: expected true or false",
                                                        path);
        if (strcmp(t, "array") == 0)
                return json_is_array(value) ? check_array(schema, value, path, why, why_size)
                                            : why_set(why, why_size, "%s: expected an array", path);
        return 0;
}
