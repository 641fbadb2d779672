/* SPDX-License-Identifier: Apache-2.0 */
/* Shared by the files of the policy JSON reader (policy-json.c: the document and most keys;
 * policy-json-limits.c: "limits"; policy-json-egress.c: the egress lists): the parse context
 * and the helpers that report every error with its file, line, column and a hint. */
#pragma once

#include <jansson.h>

#include "policy/json-read.h"
#include "policy/policy.h"

typedef struct parse_ctx {
        jread j; /* the document, the key path and the error (json-read.h) */
        cordon_policy *layer;
} parse_ctx;

/* `target`: what the member is parsed into (NULL for top-level fields, which go to c->layer). */
typedef int (*field_fn)(parse_ctx *c, json_t *v, void *target);

typedef struct field {
        const char *key;
        field_fn parse;
        const char *example; /* used in hints: how a correct value looks */
} field;

typedef int (*string_adder)(cordon_policy *p, const char *s);

/* An allocation or list-size failure as an error of the key being read. */
int policy_json_fail_errno(parse_ctx *c, int r);
/* Parses an object whose members are described by `fields`. */
int policy_json_fields(parse_ctx *c, json_t *obj, const field *fields, size_t n,
                       const char *example, void *target);
/* A string value, checked by `check`, into *slot (pointing into the document). */
int policy_json_checked(parse_ctx *c, json_t *v, const char **slot, const char *example,
                        const char *(*check)(const char *), const char *hint);
/* An array of at most `max` entries (`fix` says what to do about more), each handed to `entry`
 * with its index on the error path: the shape of every list of objects in a policy file. */
int policy_json_array(parse_ctx *c, json_t *v, const char *example, size_t max, const char *fix,
                      int (*entry)(parse_ctx *c, json_t *e));
/* A string value, checked by `check`, then handed to `add`. */
int policy_json_string(parse_ctx *c, json_t *v, const char *example,
                       const char *(*check)(const char *), string_adder add, const char *hint);

/* policy-json-limits.c */
int policy_json_limits(parse_ctx *c, json_t *v, void *target);
/* policy-json-egress.c */
int policy_json_egress_deny(parse_ctx *c, json_t *v, void *target);
/* policy-json-rules.c */
int policy_json_egress_rules(parse_ctx *c, json_t *v, void *target);
int policy_json_tls(parse_ctx *c, json_t *v, void *target);
int policy_json_git_push(parse_ctx *c, json_t *v, void *target);
/* policy-json-creds.c */
int policy_json_credentials(parse_ctx *c, json_t *v, void *target);
/* command-policy.c */
int policy_json_command_policy(parse_ctx *c, json_t *v, void *target);
int policy_json_egress_mode(parse_ctx *c, json_t *v, void *target);
int policy_json_egress_ask_timeout(parse_ctx *c, json_t *v, void *target);
