/* SPDX-License-Identifier: Apache-2.0 */
/* Positioned errors for settings files (docs/settings.md): the walk through a parsed jansson tree
 * keeps the key path, and a refusal finds that key or value again in the source text
 * (src/policy/json-pos.h) to name file:line:column. Only src/settings/ uses this; raw JSON never
 * leaves src/settings/. */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "cordon/cordon.h"
#include "policy/json-pos.h"
#include "policy/policy.h"

#define SJSON_MAX_PATH (POLICY_MAX_DEPTH + 2)

typedef struct sjson {
        const char *origin;  /* the file name in messages */
        const char *text;    /* the whole document */
        size_t len;
        json_pos_step path[SJSON_MAX_PATH];
        size_t depth;
        cordon_error *err;
} sjson;

/* Parses c->text into *ret: depth check first (bounds every later recursion), duplicate keys
 * refused, a JSON object required at the top. Errors are POLICY_INVALID with file:line:col. */
int sjson_load(sjson *c, json_t **ret);

void sjson_push_key(sjson *c, const char *key);
void sjson_push_index(sjson *c, size_t index);
void sjson_pop(sjson *c);

/* "network.allowedDomains[2]" for the current path. */
void sjson_key_path(const sjson *c, char *buf, size_t size);
/* The position of the current key (at_key) or value; false when it cannot be found. */
bool sjson_position(const sjson *c, bool at_key, json_pos *ret);

/* Fails with POLICY_INVALID: "origin:line:col: key 'a.b': <what>; <hint>". Returns -EINVAL. */
int sjson_fail(sjson *c, bool at_key, const char *hint, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
/* Fails unless `ok`: "expected <what>, got <type>; write it like <example>". */
int sjson_expect(sjson *c, const json_t *v, bool ok, const char *what, const char *example);
/* An unknown key at the current path: "did you mean" for near misses, else the allowed keys. */
int sjson_unknown_key(sjson *c, const char *const *known, size_t n_known);

/* Fails at the current value unless `value` is one of `known`: "'v' is not <what>", with "did
 * you mean" for near misses. Returns 0 when it is. */
int sjson_check_enum(sjson *c, const char *value, const char *const *known, size_t n_known,
                     const char *what);

const char *sjson_type_name(const json_t *v);
/* A bounded, printable rendering of a user string for messages. */
const char *sjson_shorten(const char *s, char *buf, size_t size);
