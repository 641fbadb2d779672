/* SPDX-License-Identifier: Apache-2.0 */
#include "cli/render.h"

#include <errno.h>
#include <jansson.h>
#include <stdbool.h>

#define RENDER_MAX_DEPTH 32 /* the library's policy JSON nests about 5 deep */

static void render_value(const json_t *v, int indent, int depth, bool inline_first, FILE *out);

static bool is_scalar(const json_t *v) {
        return !json_is_object(v) && !json_is_array(v);
}

static bool is_empty(const json_t *v) {
        return json_is_object(v) ? json_object_size(v) == 0 : json_array_size(v) == 0;
}

static void render_scalar(const json_t *v, FILE *out) {
        if (json_is_string(v))
                fputs(json_string_value(v), out);
        else if (json_is_integer(v))
                fprintf(out, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        else if (json_is_real(v))
                fprintf(out, "%g", json_real_value(v));
        else if (json_is_true(v))
                fputs("true", out);
        else if (json_is_false(v))
                fputs("false", out);
        else
                fputs("null", out);
}

/* After "key:" or "-": a scalar or an empty container stays on the line, anything else nests;
 * an object in a list starts on the "-" line, as in YAML. */
static void render_child(const json_t *v, int indent, int depth, bool in_list, FILE *out) {
        if (is_scalar(v)) {
                fputc(' ', out);
                render_scalar(v, out);
                fputc('\n', out);
        } else if (is_empty(v))
                fputs(json_is_object(v) ? " {}\n" : " []\n", out);
        else if (in_list && json_is_object(v)) {
                fputc(' ', out);
                render_value(v, indent + 2, depth + 1, true, out);
        } else {
                fputc('\n', out);
                render_value(v, indent + 2, depth + 1, false, out);
        }
}

static void render_value(const json_t *v, int indent, int depth, bool inline_first, FILE *out) {
        if (depth > RENDER_MAX_DEPTH) {
                fprintf(out, "%*s...\n", indent, "");
                return;
        }
        if (json_is_object(v)) {
                const char *key;
                const json_t *child;
                json_object_foreach((json_t *) v, key, child) {
                        fprintf(out, "%*s%s:", inline_first ? 0 : indent, "", key);
                        inline_first = false;
                        render_child(child, indent, depth, false, out);
                }
        } else if (json_is_array(v)) {
                size_t i;
                const json_t *child;
                json_array_foreach(v, i, child) {
                        fprintf(out, "%*s-", indent, "");
                        render_child(child, indent, depth, true, out);
                }
        } else {
                fprintf(out, "%*s", indent, "");
                render_scalar(v, out);
                fputc('\n', out);
        }
}

int cli_render_json_text(const char *json, FILE *out) {
        json_t *root = json_loads(json, JSON_REJECT_DUPLICATES, NULL);
        if (!root)
                return -EINVAL;
        render_value(root, 0, 0, false, out);
        json_decref(root);
        return ferror(out) ? -EIO : 0;
}
