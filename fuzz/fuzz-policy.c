/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target for the policy parser: cordon_policy_load_string() on arbitrary bytes, then the
 * plan-free cordon_policy_to_json(). Oracle beyond "no crash, no sanitizer report": whatever
 * loads must print, and what prints must load back and print identically (the printed form is a
 * policy file; a difference means the loader and the printer disagree about a field).
 *
 * Built two ways (fuzz/meson.build):
 *   - with libFuzzer (-DCORDON_LIBFUZZER, clang -fsanitize=fuzzer,address,undefined);
 *   - as a plain program that runs the files or directories named on its command line, so the
 *     unit suite replays the seed corpus. There, files named "valid-*" must load and files named
 *     "invalid-*" must be refused with POLICY_INVALID. */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cordon/cordon.h"

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
        cordon_policy *p = cordon_policy_new();
        if (!p)
                return -ENOMEM;
        int r = cordon_policy_load_string(p, (const char *) data, size, "fuzz", err);
        if (r == 0) {
                char *first = dump(p), *text = inner_policy(first);
                cordon_policy *q = cordon_policy_new();
                cordon_error err2;
                if (!q || cordon_policy_load_string(q, text, strlen(text), "dump", &err2) < 0) {
                        fprintf(stderr, "printed policy does not load: %s\n%s\n",
                                q ? err2.message : "ENOMEM", text);
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

static int read_whole(const char *path, uint8_t **ret, size_t *ret_len) {
        FILE *f = fopen(path, "rbe");
        if (!f)
                return -1;
        size_t cap = 1u << 21, len;
        uint8_t *buf = malloc(cap);
        if (!buf) {
                fclose(f);
                return -1;
        }
        len = fread(buf, 1, cap, f);
        fclose(f);
        *ret = buf;
        *ret_len = len;
        return 0;
}

static int run_file(const char *path, const char *name) {
        uint8_t *data;
        size_t len;
        if (read_whole(path, &data, &len) < 0) {
                fprintf(stderr, "%s: cannot read\n", path);
                return 1;
        }
        cordon_error err = { 0 };
        int r = run_one(data, len, &err);
        free(data);
        if (strncmp(name, "valid-", 6) == 0 && r < 0) {
                fprintf(stderr, "%s: expected to load, got: %s\n", path, err.message);
                return 1;
        }
        if (strncmp(name, "invalid-", 8) == 0 && r == 0) {
                fprintf(stderr, "%s: expected to be refused, but it loaded\n", path);
                return 1;
        }
        return 0;
}

static int run_dir(const char *dir, unsigned *count) {
        struct dirent **list;
        int n = scandir(dir, &list, NULL, alphasort), failed = 0;
        if (n < 0)
                return run_file(dir, strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir);
        for (int i = 0; i < n; i++) {
                if (list[i]->d_name[0] != '.') {
                        char path[4096];
                        snprintf(path, sizeof(path), "%s/%s", dir, list[i]->d_name);
                        failed |= run_file(path, list[i]->d_name);
                        (*count)++;
                }
                free(list[i]);
        }
        free(list);
        return failed;
}

int main(int argc, char **argv) {
        unsigned count = 0;
        int failed = 0;
        for (int i = 1; i < argc; i++)
                failed |= run_dir(argv[i], &count);
        printf("%u inputs, %s\n", count, failed ? "FAILED" : "ok");
        return failed || count == 0;
}

#endif
