/* SPDX-License-Identifier: Apache-2.0 */
/* `cordon settings import FILE` (cordon_settings_import): a settings file of either format
 * printed as the equivalent cordon settings document, holding only what the file sets. */
#include <jansson.h>
#include <stdio.h>

#include "settings/excluded.h"
#include "settings/settings.h"

static bool put(json_t *obj, const char *key, json_t *value) {
        return value && json_object_set_new(obj, key, value) == 0;
}

static bool is_empty(const json_t *v) {
        return json_is_null(v) || (json_is_array(v) && json_array_size(v) == 0) ||
               (json_is_object(v) && json_object_size(v) == 0);
}

/* Drops unset members: nulls, empty lists and objects (recursively one level, for env and
 * limits). */
static void prune(json_t *obj) {
        const char *key;
        json_t *v;
        void *tmp;
        json_object_foreach_safe(obj, tmp, key, v) {
                if (json_is_object(v))
                        prune(v);
                if (is_empty(v))
                        (void) json_object_del(obj, key);
        }
}

/* The layer in the policy schema, holding only what it sets. Unlike `policy show`, env.set keeps
 * its values and egressUpstream its password: this is a conversion the user asked for, written
 * where they asked, and a "****" written back would load as that password. */
static json_t *sandbox_json(const cordon_policy *p) {
        json_t *o = policy_to_json(p);
        if (!o)
                return NULL;
        if (!p->mode_set)
                (void) json_object_del(o, "mode");
        if (!p->network_set)
                (void) json_object_del(o, "networkEnabled");
        if (!p->block_reads_set)
                (void) json_object_del(o, "blockReadsOutsideWorkdirs");
        if (!p->egress_mode_set)
                (void) json_object_del(o, "egressMode");
        if (!p->egress_ask_timeout_ms)
                (void) json_object_del(o, "egressAskTimeout");
        if (!p->microvm_accel_set)
                (void) json_object_del(o, "microvm");
        if (!p->tool_caches_set)
                (void) json_object_del(json_object_get(o, "toolCaches"), "enabled");
        size_t i;
        json_t *b;
        json_array_foreach(json_object_get(o, "bindMounts"), i, b)
                (void) json_object_del(b, "guestPath"); /* equal to hostPath on native */
        json_t *set = json_object_get(json_object_get(o, "env"), "set");
        for (i = 0; set && i < p->n_env_set; i++)
                if (json_object_set_new(set, p->env_set[i].name,
                                        json_string(p->env_set[i].value)) < 0) {
                        json_decref(o);
                        return NULL;
                }
        if (p->egress_upstream &&
            json_object_set_new(o, "egressUpstream", json_string(p->egress_upstream)) < 0) {
                json_decref(o);
                return NULL;
        }
        prune(o);
        return o;
}

/* An entry as a string when splitting that string gives back the same words, else as an array
 * of words. */
static json_t *entry_json(const settings_entry *e) {
        char **words = NULL;
        excluded_refusal why = EXCLUDED_OK;
        if (excluded_split(e->text, &words, &why) < 0)
                return NULL;
        bool same = words && excluded_equal(words, e->words);
        excluded_words_free(words);
        if (same)
                return json_string(e->text);
        json_t *a = json_array();
        for (char **w = e->words; a && *w; w++)
                if (json_array_append_new(a, json_string(*w)) < 0) {
                        json_decref(a);
                        return NULL;
                }
        return a;
}

static bool put_switch(json_t *root, const settings_switch *sw) {
        return !sw->set || put(root, sw->key, json_boolean(sw->value));
}

int settings_file_to_cordon_json(const settings_file *f, char **ret) {
        json_t *root = json_object(), *sandbox = sandbox_json(f->layer), *excluded = json_array();
        bool ok = root && sandbox && excluded;
        if (ok && json_object_size(sandbox) > 0) {
                ok = put(root, "sandbox", sandbox);
                sandbox = NULL;
        }
        ok = ok && put_switch(root, &f->fail_if_unavailable) &&
             put_switch(root, &f->allow_unsandboxed) && put_switch(root, &f->lock_domains);
        for (size_t i = 0; ok && i < f->n_excluded; i++)
                ok = json_array_append_new(excluded, entry_json(&f->excluded[i])) == 0;
        if (ok && f->n_excluded > 0) {
                ok = put(root, "excludedCommands", excluded);
                excluded = NULL;
        }
        char *text = ok ? json_dumps(root, JSON_INDENT(2)) : NULL;
        json_decref(root);
        json_decref(sandbox);
        json_decref(excluded);
        if (!text)
                return -ENOMEM;
        *ret = text;
        return 0;
}

/* One line per thing the output does not say by itself. */
static int import_notes(const settings_file *f, const char *cwd, char **ret) {
        char *text = NULL;
        size_t len = 0;
        FILE *out = open_memstream(&text, &len);
        if (!out)
                return -ENOMEM;
        for (size_t i = 0; i < f->n_notes; i++)
                fprintf(out, "%s:%u:%u: %s%s%s%s: left out: %s\n", f->origin, f->notes[i].pos.line,
                        f->notes[i].pos.column, f->notes[i].key, f->notes[i].value ? " '" : "",
                        f->notes[i].value ? f->notes[i].value : "",
                        f->notes[i].value ? "'" : "", f->notes[i].why);
        if (f->used_cwd)
                fprintf(out, "%s: relative paths and the workspace were resolved against %s: the "
                             "output is for that directory\n", f->origin, cwd);
        if (fclose(out) != 0) {
                free(text);
                return -ENOMEM;
        }
        if (len == 0) {
                free(text);
                text = NULL;
        }
        *ret = text;
        return 0;
}

int cordon_settings_import(const char *path, const char *cwd, const char *home, char **ret,
                           char **ret_notes, cordon_error *err) {
        if (ret_notes)
                *ret_notes = NULL;
        if (ret)
                *ret = NULL;
        if (!path || !cwd || !home || !ret || !path_is_absolute(cwd) || !path_is_absolute(home))
                return cordon_set_error(err, CORDON_USAGE, EINVAL,
                                        "cordon_settings_import: a path, an absolute cwd and home "
                                        "are required");
        settings_file *f = NULL;
        /* Parsed as managed settings so that every key of the format is accepted; nothing is
         * applied, so whose file it is does not matter (no ownership check). */
        int r = settings_file_load(SETTINGS_LAYER_MANAGED, path, false, false, cwd, home, &f, err);
        if (r < 0)
                return r;
        r = settings_file_to_cordon_json(f, ret);
        if (r >= 0 && ret_notes)
                r = import_notes(f, cwd, ret_notes);
        settings_file_free(f);
        if (r < 0) {
                free(*ret);
                *ret = NULL;
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, r, "out of memory");
        }
        return 0;
}
