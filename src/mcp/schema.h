/* SPDX-License-Identifier: Apache-2.0 */
/* The tools' input schemas are JSON Schema documents (tools.c) that tools/list hands to the
 * client as they are and that this validator applies to every tools/call, so what a model is told
 * and what the server accepts cannot drift apart. It knows the subset the schemas use: "type"
 * (object, string, integer, boolean, array), "properties", "required", "additionalProperties"
 * (false, or a schema every other member must meet), "items", "minLength", "maxLength",
 * "minimum", "maximum", "maxItems", "minItems", "enum" (of strings). Pure. */
#pragma once

#include <stddef.h>

#include <jansson.h>

/* 0 when `value` meets `schema`; else -EINVAL with one line in `why` naming the member by its
 * path ("arguments.timeoutMs: expected an integer from 1 to 86400000"), with a "did you mean"
 * for an unknown member close to a known one. */
int mcp_schema_check(const json_t *schema, const json_t *value, const char *path, char *why,
                     size_t why_size);
