/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target for the denial decoder (src/explain/), which reads events files, stderr text and
 * statuses that a hostile command influences. Input: a first line with the exit status (decimal,
 * or empty for none), then the events, then 0x1e, then the stderr text.
 *
 * Promises checked: finish() either succeeds or fails with USAGE or LAUNCH_FAILED and a message;
 * on success the JSON parses back with a known status, at most EXPLAIN_VIOLATIONS_MAX entries,
 * and the text has no control character but '\n'; feeding the same bytes one at a time gives the
 * same JSON as one call. Built two ways, like fuzz-gitconfig: with libFuzzer
 * (-DCORDON_LIBFUZZER), and as a plain program replaying the seed corpus in the unit suite
 * ("valid-*" seeds must be explained, "invalid-*" seeds refused). */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cordon/cordon.h"
#include "explain/explain.h"
#include "util/util.h"

#include "replay.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

__attribute__((noreturn)) static void broken(const char *what) {
        fprintf(stderr, "fuzz-explain: broken promise: %s\n", what);
        abort();
}

typedef struct input {
        int status; /* -1: none */
        const char *events, *err_text;
        size_t events_len, err_len;
} input;

static input split(const uint8_t *data, size_t size) {
        input in = { .status = -1 };
        const char *s = (const char *) data, *end = s + size;
        const char *nl = memchr(s, '\n', size);
        if (nl) {
                /* By hand: the input has no NUL, and str* functions read to one. */
                int v = 0;
                bool digits = nl > s && nl - s <= 3;
                for (const char *q = s; digits && q < nl; q++) {
                        digits = *q >= '0' && *q <= '9';
                        v = v * 10 + (*q - '0');
                }
                if (digits)
                        in.status = v <= 255 ? v : -1;
                s = nl + 1;
        }
        const char *rs = memchr(s, 0x1e, (size_t) (end - s));
        in.events = s;
        in.events_len = (size_t) ((rs ? rs : end) - s);
        in.err_text = rs ? rs + 1 : NULL;
        in.err_len = rs ? (size_t) (end - rs - 1) : 0;
        return in;
}

/* The same input fed one byte at a time: NULL when refused. */
static char *bytewise_json(const input *in) {
        cordon_explanation *x = NULL;
        if (cordon_explanation_new(&x, NULL) < 0)
                broken("out of memory");
        int r = 0;
        for (size_t i = 0; r >= 0 && i < in->events_len; i++)
                r = cordon_explanation_add_events(x, in->events + i, 1, NULL);
        for (size_t i = 0; r >= 0 && i < in->err_len; i++)
                r = cordon_explanation_add_stderr(x, in->err_text + i, 1);
        if (r >= 0 && in->status >= 0)
                r = cordon_explanation_set_exit_status(x, in->status);
        if (r >= 0)
                r = cordon_explanation_finish(x, NULL);
        char *json = NULL;
        if (r >= 0 && cordon_explanation_to_json(x, &json, NULL) < 0)
                broken("a finished explanation without its JSON");
        cordon_explanation_free(x);
        return json;
}

static void check_text(const char *text) {
        if (!text)
                broken("no text");
        for (const char *p = text; *p; p++)
                if ((unsigned char) *p < 0x20 && *p != '\n')
                        broken("a control character in the text");
}

static void check_json(const char *s) {
        static const char *const statuses[] = { "ok", "command-failed", "sandbox-denied",
                                                "sandbox-broken" };
        json_t *o = s ? json_loads(s, 0, NULL) : NULL;
        if (!o)
                broken("the JSON does not parse back");
        const char *st = json_string_value(json_object_get(o, "status"));
        bool known = false;
        for (size_t i = 0; st && i < 4; i++)
                known |= strcmp(st, statuses[i]) == 0;
        if (!known)
                broken("an unknown status");
        if (json_array_size(json_object_get(o, "violations")) > EXPLAIN_VIOLATIONS_MAX)
                broken("more violations than the bound");
        json_decref(o);
}

static int explain_checked(const uint8_t *data, size_t size) {
        input in = split(data, size);
        cordon_explanation *x = NULL;
        cordon_error err = { 0 };
        int r = cordon_explain(in.events, in.events_len, in.status, in.err_text, in.err_len, &x,
                               &err);
        if (r < 0) {
                if ((err.code != CORDON_USAGE && err.code != CORDON_LAUNCH_FAILED) ||
                    !err.message[0] || x)
                        broken("a refusal without its code or message");
                return r;
        }
        char *json = NULL, *text = NULL;
        if (cordon_explanation_to_json(x, &json, NULL) < 0 ||
            cordon_explanation_to_text(x, &text, NULL) < 0)
                broken("a finished explanation that cannot be written out");
        check_json(json);
        check_text(text);
        if (size <= 8192) {
                char *again = bytewise_json(&in);
                if (!again || strcmp(again, json) != 0)
                        broken("byte by byte differs from one call");
                free(again);
        }
        free(json);
        free(text);
        cordon_explanation_free(x);
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        (void) explain_checked(data, size);
        return 0;
}

#ifndef CORDON_LIBFUZZER
bool fuzz_replay_seed(const char *name, const uint8_t *data, size_t size) {
        return fuzz_named_verdict(name, explain_checked(data, size), NULL);
}
#endif
