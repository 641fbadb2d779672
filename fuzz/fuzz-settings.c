/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target for settings files and their merger (src/settings/): the input is up to four
 * documents separated by a 0x1e byte, read as the project, user, --settings and managed layers
 * (either format each), then resolved. Oracles beyond "no crash, no sanitizer report":
 *   - a refusal is POLICY_INVALID with a message;
 *   - every deny rule of every layer is in the resolved policy (lists are unions);
 *   - nothing loosening reaches the resolved policy from the project file alone (a document
 *     held in memory is never trusted; under an admin mandate not even a trusted one would
 *     loosen), and everything ignored is reported;
 *   - the explanation prints (text and JSON), and its "policy" is the resolved policy;
 *   - each document converts to cordon's format (`settings import`), and the conversion parses
 *     back to the same layer.
 *
 * Built two ways (fuzz/meson.build): with libFuzzer (-DCORDON_LIBFUZZER), and as a plain program
 * replaying the seed corpus in the unit suite, where "valid-*" inputs must resolve and
 * "invalid-*" ones must be refused. */
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cordon/cordon.h"
#include "settings/settings-resolve.h"

#include "replay.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CWD "/work/ws"
#define HOME "/home/me"

static const settings_layer_kind kinds[] = { SETTINGS_LAYER_PROJECT, SETTINGS_LAYER_USER,
                                             SETTINGS_LAYER_FILE, SETTINGS_LAYER_MANAGED };
static const char *const origins[] = { "project.json", "user.json", "file.json",
                                       "managed.json" };

__attribute__((noreturn, format(printf, 1, 2))) static void die(const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
        abort();
}

static size_t split(const uint8_t *data, size_t size, settings_text docs[4]) {
        size_t n = 0, start = 0;
        for (size_t i = 0; i <= size && n < 4; i++)
                if (i == size || data[i] == 0x1e) {
                        docs[n] = (settings_text){ kinds[n], origins[n],
                                                   (const char *) data + start, i - start };
                        n++;
                        start = i + 1;
                }
        return n;
}

static const settings_file *file_of(const cordon_settings *s, settings_layer_kind kind) {
        for (size_t i = 0; i < s->n_files; i++)
                if (s->files[i]->kind == kind)
                        return s->files[i];
        return NULL;
}

/* Lists are unions: a deny rule of any layer survives resolution. */
static void check_denies_kept(const cordon_settings *s) {
        static const settings_field denies[] = { SF_PROTECTED, SF_DENY_READ, SF_DENY_WRITE,
                                                 SF_DENY_CREATE, SF_EGRESS_DENY, SF_ENV_SCRUB };
        for (size_t l = 0; l < s->n_layers; l++)
                for (size_t d = 0; d < sizeof(denies) / sizeof(denies[0]); d++) {
                        const strv *from = settings_field_strv(s->layers[l].policy, denies[d]);
                        const strv *to = settings_field_strv(s->resolved, denies[d]);
                        for (size_t i = 0; i < from->n; i++)
                                if (!strv_contains(to, from->v[i]))
                                        die("%s '%s' of layer %zu lost",
                                            settings_field_key(denies[d]), from->v[i], l);
                }
}

/* Does a layer other than the project file's hold item i of field f (as a loosening item)? */
static bool elsewhere(const cordon_settings *s, settings_field f, const char *item) {
        char buf[32];
        for (size_t l = 0; l < s->n_layers; l++) {
                if (s->layers[l].kind == SETTINGS_LAYER_PROJECT)
                        continue;
                const char *it;
                for (size_t i = 0;
                     (it = settings_field_item(s->layers[l].policy, f, i, buf, sizeof(buf))); i++)
                        if (strcmp(it, item) == 0)
                                return true;
        }
        return false;
}

/* An untrusted project file (every one here) or one under a mandate: a loosening item of it is
 * in the resolved policy only when another layer holds it too; and the project layer as applied
 * holds none. */
static void check_mandate(const cordon_settings *s) {
        const settings_file *proj = file_of(s, SETTINGS_LAYER_PROJECT);
        if (!proj)
                return;
        if (s->project_trusted)
                die("a project document held in memory is trusted");
        for (size_t l = 0; l < s->n_layers; l++) {
                const settings_layer *layer = &s->layers[l];
                if (layer->kind != SETTINGS_LAYER_PROJECT)
                        continue;
                for (int f = 0; f < _SF_MAX; f++) {
                        char buf[32];
                        const char *item;
                        for (size_t i = 0; (item = settings_field_item(layer->policy,
                                                                      (settings_field) f, i, buf,
                                                                      sizeof(buf)));
                             i++)
                                if (settings_field_loosens(layer->policy, (settings_field) f, i))
                                        die("mandate: project layer keeps %s '%s'",
                                            settings_field_key((settings_field) f), item);
                }
        }
        for (int f = 0; f < _SF_MAX; f++) {
                char buf[32];
                const char *item;
                for (size_t i = 0; (item = settings_field_item(proj->layer, (settings_field) f, i,
                                                              buf, sizeof(buf)));
                     i++)
                        if (settings_field_loosens(proj->layer, (settings_field) f, i) &&
                            f != SF_MODE && f != SF_NETWORK &&
                            !elsewhere(s, (settings_field) f, item)) {
                                bool reported = false;
                                for (size_t k = 0; k < s->n_ignored && !reported; k++)
                                        reported = s->ignored[k].value &&
                                                   strcmp(s->ignored[k].value, item) == 0;
                                if (!reported)
                                        die("mandate: project %s '%s' dropped silently",
                                            settings_field_key((settings_field) f), item);
                        }
        }
        for (size_t k = 0; k < s->n_excluded; k++)
                if (s->layers[s->excluded[k].layer].kind == SETTINGS_LAYER_PROJECT)
                        die("mandate: a project excludedCommands entry is in effect");
}

static char *policy_text(const cordon_policy *p) {
        json_t *j = policy_to_json(p);
        char *t = j ? json_dumps(j, JSON_COMPACT) : NULL;
        json_decref(j);
        if (!t)
                die("policy_to_json failed");
        return t;
}

static void check_explain(const cordon_settings *s) {
        char *text = NULL, *js = NULL;
        cordon_error err = { 0 };
        if (cordon_settings_to_text(s, &text, &err) < 0 ||
            cordon_settings_to_json(s, &js, &err) < 0)
                die("explain failed: %s", err.message);
        json_t *root = json_loads(js, 0, NULL);
        char *a = root ? json_dumps(json_object_get(root, "policy"), JSON_COMPACT) : NULL;
        char *b = policy_text(s->resolved);
        if (!a || strcmp(a, b) != 0)
                die("explain's policy differs:\n%s\n%s", a ? a : "(none)", b);
        free(a);
        free(b);
        json_decref(root);
        free(text);
        free(js);
}

/* `settings import`: the conversion of a parsed document parses back to the same layer. */
static void check_conversion(const settings_text *doc) {
        settings_file *f = NULL, *g = NULL;
        if (settings_file_parse(SETTINGS_LAYER_MANAGED, doc->origin, doc->text, doc->len, CWD,
                                HOME, &f, NULL) < 0)
                return;
        char *out = NULL;
        cordon_error err = { 0 };
        if (settings_file_to_cordon_json(f, &out) < 0)
                die("conversion failed");
        if (settings_file_parse(SETTINGS_LAYER_MANAGED, "converted", out, strlen(out), CWD, HOME,
                                &g, &err) < 0)
                die("the conversion does not parse: %s\n%s", err.message, out);
        char *a = policy_text(f->layer), *b = policy_text(g->layer);
        if (strcmp(a, b) != 0 || f->n_excluded != g->n_excluded)
                die("the conversion differs:\n%s\n%s", a, b);
        free(a);
        free(b);
        free(out);
        settings_file_free(f);
        settings_file_free(g);
}

static int run_one(const uint8_t *data, size_t size, cordon_error *err) {
        settings_text docs[4];
        size_t n = split(data, size, docs);
        for (size_t i = 0; i < n; i++)
                check_conversion(&docs[i]);
        cordon_settings *s = NULL;
        int r = settings_resolve_texts(docs, n, CWD, HOME, NULL, &s, err);
        if (r < 0) {
                if (err->code != CORDON_POLICY_INVALID || !err->message[0])
                        die("refused without POLICY_INVALID and a message: %s (%d)",
                            err->message, (int) err->code);
                return r;
        }
        check_denies_kept(s);
        check_mandate(s);
        check_explain(s);
        cordon_settings_free(s);
        return 0;
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
