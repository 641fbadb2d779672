/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target for the git config reader (src/plan/gitconfig.c), which reads files a sandboxed
 * command may have written in an earlier run. Promises checked: on success every value is a
 * NUL-free string within the bounds; on failure `values` is untouched (all-or-nothing), so a
 * half-parsed file never protects half of what it names. Built two ways, like fuzz-policy: with
 * libFuzzer (-DCORDON_LIBFUZZER), and as a plain program replaying the seed corpus in the unit
 * suite ("valid-*" seeds must parse, "invalid-*" seeds must be refused). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/gitconfig.h"

#include "replay.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

__attribute__((noreturn)) static void broken(const char *what) {
        fprintf(stderr, "fuzz-gitconfig: broken promise: %s\n", what);
        abort();
}

static size_t total(const gitconfig_values *v) {
        return v->hooks_path.n + v->fsmonitor.n + v->include.n;
}

static int parse_checked(const uint8_t *data, size_t size) {
        gitconfig_values v = { 0 };
        /* A sentinel shows whether a failed parse left earlier content alone. */
        if (strv_push(&v.include, "sentinel") < 0)
                broken("out of memory");
        int r = gitconfig_parse((const char *) data, size, &v);
        if (r < 0 && total(&v) != 1)
                broken("a refused config changed the output");
        if (r == 0 && total(&v) > GITCONFIG_MAX_VALUES + 1)
                broken("more values than the bound");
        const strv *lists[] = { &v.hooks_path, &v.fsmonitor, &v.include };
        for (size_t l = 0; l < 3; l++)
                for (size_t i = 0; i < lists[l]->n; i++)
                        if (strlen(lists[l]->v[i]) > size + 8)
                                broken("a value longer than its input");
        gitconfig_values_done(&v);
        return r;
}

/* The vetting reader parses exactly what the collecting one does: a file one of them reads is
 * never one the other refuses; a hook path or a command-like fsmonitor is always found. */
static void vet_checked(const uint8_t *data, size_t size, int parsed) {
        gitconfig_values v = { 0 };
        (void) gitconfig_parse((const char *) data, size, &v);
        bool has_cmd = v.hooks_path.n > 0 || v.include.n > 0;
        for (size_t i = 0; i < v.fsmonitor.n; i++)
                has_cmd = has_cmd || !gitconfig_is_bool(v.fsmonitor.v[i]);
        gitconfig_values_done(&v);
        const char *key = NULL;
        int r = gitconfig_vet((const char *) data, size, "/ws/.git", NULL, &key);
        if ((r < 0) != (parsed < 0) && parsed != -E2BIG)
                broken("the vetting reader and the collecting one disagree about the syntax");
        if (parsed == 0 && has_cmd && r != 1)
                broken("a hook path, include or fsmonitor command passed the vetting");
        if (r == 1 && !key)
                broken("a refusal without a key");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        int r = parse_checked(data, size);
        vet_checked(data, size, r);
        return 0;
}

#ifndef CORDON_LIBFUZZER
bool fuzz_replay_seed(const char *name, const uint8_t *data, size_t size) {
        return fuzz_named_verdict(name, parse_checked(data, size), NULL);
}
#endif
