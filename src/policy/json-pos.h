/* SPDX-License-Identifier: Apache-2.0 */
/* Source positions for a JSON text that jansson has already parsed. jansson reports line/column
 * only for syntax errors, not per value, so when the policy loader rejects a *value* it asks this
 * module to find that value again in the source. The scan runs only on the error path, keeps no
 * index (memory is O(1)), and its recursion is bounded by a depth check that runs before jansson.
 *
 * Columns count Unicode characters from 1, as jansson's do; lines count from 1. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

typedef struct json_pos {
        unsigned line, column;
} json_pos;

/* One step of a path into the document: an object member (key != NULL) or an array element. */
typedef struct json_pos_step {
        const char *key;
        size_t index;
} json_pos_step;

/* Finds the first '[' or '{' nested deeper than max_depth, ignoring brackets inside strings.
 * Returns 0 when there is none, or -E2BIG with its position in *ret. Works on any bytes. */
int json_pos_check_depth(const char *text, size_t len, unsigned max_depth, json_pos *ret);

/* The position of the value at `path` (n_path == 0: the root value), or, when `at_key`, of the
 * key naming it (the last step must then be a key). Returns 0, or -ENOENT when the path is not in
 * the text (or the text is not the JSON it should be). */
int json_pos_find(const char *text, size_t len, const json_pos_step *path, size_t n_path,
                  bool at_key, json_pos *ret);
