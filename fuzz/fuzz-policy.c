/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target for the policy parser: cordon_policy_load_string() on arbitrary bytes, then the
 * plan-free cordon_policy_to_json(). Oracle beyond "no crash, no sanitizer report": whatever
 * loads must print, and what prints must load back and print identically (the printed form is a
 * policy file; a difference means the loader and the printer disagree about a field).
 *
 * Built two ways (fuzz/meson.build):
 *   - with libFuzzer (-DCORDON_LIBFUZZER, clang -fsanitize=fuzzer,address,undefined);
 *   - as a plain program (with fuzz/replay.c) that runs the files or directories named on its
 *     command line, so the unit suite replays the seed corpus. There, files named "valid-*" must load and files named
 *     "invalid-*" must be refused with POLICY_INVALID. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cordon/cordon.h"

#include "replay.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *dump(const cordon_policy *p) {
        char *s = NULL;
        cordon_error err;
        if (cordon_policy_to_json(p, 0, NULL, &s, &err) < 0) {
                fprintf(stderr, "cordon_policy_to_json failed: %s\n", err.message);
                abort();
        }
        return s;
}

/* The "policy" member of cordon_policy_to_json()'s output, as policy-file text. */
static char *inner_policy(const char *out) {
        json_t *root = json_loads(out, 0, NULL);
        json_t *pol = root ? json_object_get(root, "policy") : NULL;
        char *s = pol ? json_dumps(pol, JSON_PRESERVE_ORDER) : NULL;
        json_decref(root);
        if (!s) {
                fprintf(stderr, "printed policy has no \"policy\" object:\n%s\n", out);
                abort();
        }
        return s;
}

/* Returns the load result (0 or -errno) so the corpus runner can check it. */
static int run_one(const uint8_t *data, size_t size, cordon_error *err) {
        cordon_policy *p = NULL;
        int r = cordon_policy_new(&p, err);
        if (r < 0)
                return r;
        r = cordon_policy_load_string(p, (const char *) data, size, "fuzz", err);
        if (r == 0) {
                char *first = dump(p), *text = inner_policy(first);
                cordon_policy *q = NULL;
                cordon_error err2;
                if (cordon_policy_new(&q, &err2) < 0 ||
                    cordon_policy_load_string(q, text, strlen(text), "dump", &err2) < 0) {
                        fprintf(stderr, "printed policy does not load: %s\n%s\n", err2.message,
                                text);
                        abort();
                }
                free(text);
                char *second = dump(q);
                if (strcmp(first, second) != 0) {
                        fprintf(stderr, "round trip differs:\n%s\n---\n%s\n", first, second);
                        abort();
                }
                free(second);
                free(first);
                cordon_policy_free(q);
        } else if (err->code != CORDON_POLICY_INVALID || err->message[0] == '\0') {
                fprintf(stderr, "refused without POLICY_INVALID and a message: %s (%d)\n",
                        err->message, (int) err->code);
                abort();
        }
        cordon_policy_free(p);
        return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        cordon_error err;
        (void) run_one(data, size, &err);
        return 0;
}

#ifndef CORDON_LIBFUZZER
bool fuzz_replay_seed(const char *name, const uint8_t *data, size_t size) {
        cordon_error err = { 0 };
        return fuzz_named_verdict(name, run_one(data, size, &err), err.message);
}
#endif
