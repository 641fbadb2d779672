/* SPDX-License-Identifier: Apache-2.0 */
/* Reading untrusted JSON documents with positioned errors, shared by the policy loader
 * (policy-json.c) and the settings loader (src/settings/): the walk through a parsed jansson tree
 * keeps the key path, and a refusal finds that key or value again in the source text
 * (json-pos.h) to name file:line:column. Every refusal is POLICY_INVALID with a message
 * "origin:line:col: key 'a.b': <what>; <hint>". Raw JSON stays inside the two loaders. */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "cordon/cordon.h"
#include "policy/json-pos.h"
#include "policy/policy.h"

/* The deepest key path a walk keeps: the depth check bounds the nesting to POLICY_MAX_DEPTH. */
#define JREAD_MAX_PATH (POLICY_MAX_DEPTH + 2)

/* One document being read: set origin, text, len and err; path and depth start empty. */
typedef struct jread {
        const char *origin; /* the file name in messages */
        const char *text;   /* the whole document */
        size_t len;
        json_pos_step path[JREAD_MAX_PATH];
        size_t depth;
        cordon_error *err;
} jread;

/* Parses c->text into *ret (any JSON value; the caller checks its type): nesting deeper than
 * POLICY_MAX_DEPTH is refused first, by position, which bounds jansson's recursion and every walk
 * that follows ("nesting deeper than N levels; <depth_hint>"); duplicate keys are refused; a
 * syntax error names jansson's line and column and a hint. Returns 0 or -errno (-E2BIG, -EINVAL)
 * with c->err set. */
int jread_parse(jread *c, const char *depth_hint, json_t **ret);

void jread_push_key(jread *c, const char *key);
void jread_push_index(jread *c, size_t index);
void jread_pop(jread *c);

/* "network.allowedDomains[2]" for the current path. */
void jread_key_path(const jread *c, char *buf, size_t size);
/* The position of the current key (at_key) or value; false when it cannot be found. */
bool jread_position(const jread *c, bool at_key, json_pos *ret);

/* Fails with POLICY_INVALID at the current path, naming the key itself (at_key) or its value:
 * "origin:line:col: key 'a.b': <what>; <hint>" ("origin:line:col: <what>; <hint>" at the top).
 * Returns -EINVAL. */
int jread_fail(jread *c, bool at_key, const char *hint, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
/* Fails unless `ok`: "expected <what>, got <type>; write it like <example>". */
int jread_expect(jread *c, const json_t *v, bool ok, const char *what, const char *example);
/* An unknown key at the current path (its last step): "did you mean" for a near miss, else the
 * allowed keys. Returns -EINVAL. */
int jread_unknown_key(jread *c, const char *const *known, size_t n_known);
/* Fails at the current value unless `value` is one of `known`: "'v' is not <what>", with "did
 * you mean" for near misses. Returns 0 when it is. */
int jread_check_enum(jread *c, const char *value, const char *const *known, size_t n_known,
                     const char *what);

/* "an object", "a string", ... for messages. */
const char *jread_type_name(const json_t *v);
/* A bounded, printable rendering of a user string for messages (keys and values may be huge or
 * contain control characters): at most size - 1 bytes, control characters as '?', "..." when
 * cut. Returns buf. */
const char *jread_shorten(const char *s, char *buf, size_t size);
