/* SPDX-License-Identifier: Apache-2.0 */
/* `cordon policy show --explain` (cordon_settings_to_json, cordon_settings_to_text): every value of the resolved policy
 * with the layer, file, key and position it came from; the switches; the excluded commands; and
 * every setting read but not applied, with the reason. A reviewer reads this to answer "why may
 * this command write there?" without replaying the merge by hand. */
#include <jansson.h>
#include <stdio.h>

#include "settings/settings-resolve.h"

/* json_object_set_new() and json_array_append_new() steal the value even on failure. */
static bool put(json_t *obj, const char *key, json_t *value) {
        return value && json_object_set_new(obj, key, value) == 0;
}

static bool append(json_t *arr, json_t *value) {
        return value && json_array_append_new(arr, value) == 0;
}

/* ---- which layer holds an item ---------------------------------------------------------------- */

typedef struct item_index {
        const char **v;
        size_t n;
        bool built;
} item_index;

static int cmp_str(const void *a, const void *b) {
        return strcmp(*(const char *const *) a, *(const char *const *) b);
}

/* Sorted items of one field of one layer, so a lookup costs log n (lists hold up to 4096). */
static int build_index(const cordon_policy *p, settings_field f, item_index *ix) {
        char buf[32];
        size_t n = 0;
        while (settings_field_item(p, f, n, buf, sizeof(buf)))
                n++;
        ix->v = calloc(n ? n : 1, sizeof(char *));
        if (!ix->v)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                ix->v[i] = settings_field_item(p, f, i, buf, sizeof(buf));
        qsort(ix->v, n, sizeof(char *), cmp_str);
        ix->n = n;
        ix->built = true;
        return 0;
}

typedef struct explain_ctx {
        const cordon_settings *s;
        item_index *index; /* n_layers * _SF_MAX */
} explain_ctx;

/* The highest layer that sets a scalar or holds a list item, or -1. */
static int source_layer(explain_ctx *x, settings_field f, const char *item) {
        for (size_t i = x->s->n_layers; i-- > 0;) {
                const cordon_policy *p = x->s->layers[i].policy;
                if (!item) {
                        if (settings_field_is_set(p, f))
                                return (int) i;
                        continue;
                }
                item_index *ix = &x->index[i * _SF_MAX + (size_t) f];
                if (!ix->built && build_index(p, f, ix) < 0)
                        return -ENOMEM;
                if (ix->n && bsearch(&item, ix->v, ix->n, sizeof(char *), cmp_str))
                        return (int) i;
        }
        return -1;
}

/* Where an item came from, as text and as JSON members of `obj`. */
static void describe(const cordon_settings *s, int li, settings_field f, const char *item,
                     char *buf, size_t size, json_t *obj) {
        if (li < 0) {
                (void) snprintf(buf, size, "?");
                return;
        }
        const settings_layer *l = &s->layers[li];
        bool ok = put(obj, "layer", json_string(settings_layer_name(l->kind)));
        if (!l->file) {
                (void) snprintf(buf, size, "%s", settings_layer_origin(l));
                ok = ok && put(obj, "source", json_string(settings_layer_origin(l)));
                return;
        }
        char key[96];
        json_pos pos = { 0, 0 };
        settings_file_key(l->file, (int) f, item, key, sizeof(key));
        (void) settings_file_key_pos(l->file, key, &pos);
        (void) snprintf(buf, size, "%s %s:%u:%u (%s)", settings_layer_label(l->kind),
                        l->file->origin, pos.line, pos.column, key);
        ok = ok && put(obj, "file", json_string(l->file->origin)) &&
             put(obj, "sourceKey", json_string(key)) &&
             put(obj, "line", json_integer(pos.line)) &&
             put(obj, "column", json_integer(pos.column));
        (void) ok; /* a member missing for lack of memory is caught by the final dump */
}

/* ---- the sections ----------------------------------------------------------------------------- */

/* The order the policy schema prints fields in. */
static const settings_field field_order[] = {
        SF_MODE,        SF_SESSION_ID, SF_WORKSPACE_ID, SF_AGENT_ID,    SF_BINDS,
        SF_PROTECTED,   SF_RUNNER_STATE, SF_DENY_READ,  SF_DENY_WRITE,  SF_DENY_CREATE,
        SF_EXEC_GRANT,  SF_BLOCK_READS, SF_ALLOW_READ, SF_NETWORK,  SF_EGRESS_ALLOW,
        SF_EGRESS_DENY, SF_EGRESS_UPSTREAM, SF_EGRESS_MODE, SF_EGRESS_ASK_TIMEOUT,
        SF_HOSTS,       SF_UNIX_SOCKETS, SF_WORKDIR,    SF_ENV_PASS,    SF_ENV_SET,
        SF_ENV_SCRUB,   SF_TIMEOUT,    SF_MEMORY,       SF_PIDS,        SF_CPU,
        SF_TMP_SIZE,    SF_SHM_SIZE,   SF_WILDCARD_NAMES, SF_EGRESS_RULES, SF_TLS_PASSTHROUGH,
        SF_TLS_UPSTREAM_CA, SF_GIT_PUSH, SF_CREDENTIALS,
};

static bool is_scalar(settings_field f) {
        return f == SF_MODE || f == SF_NETWORK || f == SF_BLOCK_READS || f == SF_SESSION_ID ||
               f == SF_WORKSPACE_ID ||
               f == SF_AGENT_ID || f == SF_WORKDIR || f == SF_TIMEOUT || f == SF_MEMORY ||
               f == SF_PIDS || f == SF_CPU || f == SF_TMP_SIZE || f == SF_SHM_SIZE ||
               f == SF_WILDCARD_NAMES || f == SF_EGRESS_UPSTREAM || f == SF_EGRESS_MODE ||
               f == SF_EGRESS_ASK_TIMEOUT;
}

/* The value as shown: binds say whether they are writable; env.set never shows its value, nor
 * egressUpstream its password (its item is the redacted URL, settings_field_item()). */
static void show_value(const cordon_policy *p, settings_field f, size_t i, const char *item,
                       char *buf, size_t size) {
        if (f == SF_BINDS)
                (void) snprintf(buf, size, "%s (%s)", item,
                                p->binds[i].read_only ? "read-only" : "writable");
        else if (f == SF_HOSTS)
                (void) snprintf(buf, size, "%s = %s", item, p->hosts[i].address);
        else if (f == SF_ENV_SET)
                (void) snprintf(buf, size, "%s = <redacted>", item);
        else
                (void) snprintf(buf, size, "%s", item);
}

static int line(FILE *out, const char *key, const char *value, const char *source) {
        size_t kl = strlen(key), vl = strlen(value);
        return fprintf(out, "  %s%*s %s%*s  %s\n", key, kl < 24 ? (int) (24 - kl) : 0, "", value,
                       vl < 36 ? (int) (36 - vl) : 0, "", source) < 0
                       ? -EIO
                       : 0;
}

static int explain_fields(explain_ctx *x, FILE *out, json_t *sources) {
        const cordon_policy *p = x->s->resolved;
        char src[1200], val[1200], buf[32];
        for (size_t k = 0; k < ELEMENTSOF(field_order); k++) {
                settings_field f = field_order[k];
                const char *item;
                for (size_t i = 0; (item = settings_field_item(p, f, i, buf, sizeof(buf))); i++) {
                        int li = source_layer(x, f, is_scalar(f) ? NULL : item);
                        json_t *o = json_object();
                        if (li == -ENOMEM || !o ||
                            !put(o, "key", json_string(settings_field_key(f))) ||
                            !put(o, "value", json_string(item)) || !append(sources, o))
                                return -ENOMEM;
                        if (f == SF_BINDS && !put(o, "readOnly", json_boolean(p->binds[i].read_only)))
                                return -ENOMEM;
                        describe(x->s, li, f, is_scalar(f) ? NULL : item, src, sizeof(src), o);
                        show_value(p, f, i, item, val, sizeof(val));
                        if (out && line(out, settings_field_key(f), val, src) < 0)
                                return -EIO;
                }
        }
        return 0;
}

static json_t *switch_json(const cordon_settings *s, const settings_effective *e, char *src,
                           size_t size) {
        json_t *o = json_object();
        bool ok = o && put(o, "value", json_boolean(e->value));
        if (ok && e->layer < 0) {
                (void) snprintf(src, size, "cordon's default");
                ok = put(o, "source", json_string(src));
        } else if (ok) {
                const settings_layer *l = &s->layers[e->layer];
                settings_describe_switch(s, e, src, size);
                ok = put(o, "layer", json_string(settings_layer_name(l->kind))) &&
                     put(o, "file", json_string(settings_layer_origin(l))) &&
                     put(o, "line", json_integer(e->from->pos.line)) &&
                     put(o, "column", json_integer(e->from->pos.column));
        }
        if (!ok) {
                json_decref(o);
                return NULL;
        }
        return o;
}

static int explain_switches(const cordon_settings *s, FILE *out, json_t *root) {
        const struct {
                const char *key;
                const settings_effective *e;
        } sw[] = { { "failIfUnavailable", &s->fail_if_unavailable },
                   { "allowUnsandboxedCommands", &s->allow_unsandboxed } };
        char src[1100];
        for (size_t i = 0; i < ELEMENTSOF(sw); i++) {
                if (!put(root, sw[i].key, switch_json(s, sw[i].e, src, sizeof(src))))
                        return -ENOMEM;
                if (out && line(out, sw[i].key, sw[i].e->value ? "true" : "false", src) < 0)
                        return -EIO;
        }
        return 0;
}

static int explain_excluded(const cordon_settings *s, FILE *out, json_t *arr) {
        char src[1200];
        for (size_t i = 0; i < s->n_excluded; i++) {
                const settings_excl *e = &s->excluded[i];
                const settings_layer *l = &s->layers[e->layer];
                json_t *o = json_object();
                if (!o || !append(arr, o) || !put(o, "entry", json_string(e->entry->text)) ||
                    !put(o, "layer", json_string(settings_layer_name(l->kind))) ||
                    !put(o, "file", json_string(settings_layer_origin(l))) ||
                    !put(o, "line", json_integer(e->entry->pos.line)) ||
                    !put(o, "column", json_integer(e->entry->pos.column)))
                        return -ENOMEM;
                (void) snprintf(src, sizeof(src), "%s %s:%u:%u (excludedCommands[%zu])",
                                settings_layer_label(l->kind), settings_layer_origin(l),
                                e->entry->pos.line, e->entry->pos.column, e->entry->index);
                if (out && line(out, "excludedCommands", e->entry->text, src) < 0)
                        return -EIO;
        }
        return 0;
}

static int explain_ignored(const cordon_settings *s, FILE *out, json_t *arr) {
        for (size_t i = 0; i < s->n_ignored; i++) {
                const cordon_settings_note *n = &s->ignored[i].pub;
                json_t *o = json_object();
                if (!o || !append(arr, o) || !put(o, "layer", json_string(n->layer)) ||
                    !put(o, "file", json_string(n->file)) || !put(o, "key", json_string(n->key)) ||
                    !put(o, "value", n->value ? json_string(n->value) : json_null()) ||
                    !put(o, "line", json_integer(n->line)) ||
                    !put(o, "column", json_integer(n->column)) ||
                    !put(o, "reason", json_string(n->why)))
                        return -ENOMEM;
                if (out && fprintf(out, "  %s %s:%u:%u %s%s%s%s: %s\n",
                                   settings_layer_label(s->ignored[i].kind),
                                   n->file, n->line, n->column, n->key, n->value ? " '" : "",
                                   n->value ? n->value : "", n->value ? "'" : "", n->why) < 0)
                        return -EIO;
        }
        return 0;
}

static int explain_text_sections(explain_ctx *x, FILE *out, json_t *root, json_t *sources,
                                 json_t *excluded, json_t *ignored) {
        const cordon_settings *s = x->s;
        int r;
        if (out && fputs("Resolved policy (key, value, where it came from):\n", out) < 0)
                return -EIO;
        if ((r = explain_fields(x, out, sources)) < 0)
                return r;
        if (out && fputs("\nSwitches:\n", out) < 0)
                return -EIO;
        if ((r = explain_switches(s, out, root)) < 0)
                return r;
        if (out && fputs("\nExcluded commands (run outside the sandbox when the whole command "
                         "line matches):\n", out) < 0)
                return -EIO;
        if (out && s->n_excluded == 0 && fputs("  (none)\n", out) < 0)
                return -EIO;
        if ((r = explain_excluded(s, out, excluded)) < 0)
                return r;
        if (out && fputs("\nIgnored settings:\n", out) < 0)
                return -EIO;
        if (out && s->n_ignored == 0 && fputs("  (none)\n", out) < 0)
                return -EIO;
        return explain_ignored(s, out, ignored);
}

static int explain(const cordon_settings *s, FILE *out, json_t *root) {
        json_t *sources = json_array(), *excluded = json_array(), *ignored = json_array();
        /* Owned by root from here on (put() steals its value even when it fails). */
        if (!put(root, "sources", sources) || !put(root, "excludedCommands", excluded) ||
            !put(root, "ignored", ignored) ||
            !put(root, "mandate", s->mandate_why ? json_string(s->mandate_why) : json_null()) ||
            !put(root, "project", !s->project ? json_null()
                                              : json_pack("{s:s, s:b}", "file", s->project->origin,
                                                          "trusted", s->project_trusted)) ||
            !put(root, "policy", policy_to_json(s->resolved)))
                return -ENOMEM;
        explain_ctx x = { s, calloc(s->n_layers * _SF_MAX + 1, sizeof(item_index)) };
        int r = x.index ? explain_text_sections(&x, out, root, sources, excluded, ignored)
                        : -ENOMEM;
        for (size_t i = 0; x.index && i < s->n_layers * _SF_MAX; i++)
                free(x.index[i].v);
        free(x.index);
        return r;
}

/* Both formats from one walk over the layers (include/cordon/cordon.h: *ret NULL on failure);
 * `fn` names the call in the message. */
static int render(const cordon_settings *s, bool as_json, const char *fn, char **ret,
                  cordon_error *err) {
        if (ret)
                *ret = NULL;
        if (!s || !ret)
                return cordon_set_error(err, CORDON_USAGE, EINVAL, "%s: no settings or no ret",
                                        fn);
        char *text = NULL;
        size_t len = 0;
        FILE *out = as_json ? NULL : open_memstream(&text, &len);
        json_t *root = json_object();
        int r = root && (as_json || out) ? explain(s, out, root) : -ENOMEM;
        if (out && fclose(out) != 0 && r >= 0)
                r = -EIO;
        if (r >= 0 && as_json && !(text = json_dumps(root, JSON_INDENT(2))))
                r = -ENOMEM;
        json_decref(root);
        if (r < 0) {
                free(text);
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, r,
                                        "explaining the settings: %s", strerror(-r));
        }
        *ret = text;
        return 0;
}

int cordon_settings_to_json(const cordon_settings *s, char **ret, cordon_error *err) {
        return render(s, true, "cordon_settings_to_json", ret, err);
}

int cordon_settings_to_text(const cordon_settings *s, char **ret, cordon_error *err) {
        return render(s, false, "cordon_settings_to_text", ret, err);
}
