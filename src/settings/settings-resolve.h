/* SPDX-License-Identifier: Apache-2.0 */
/* The resolved settings object behind cordon_settings (settings-resolve.c), shared with the
 * output code (settings-explain.c). Internal to src/settings/. */
#pragma once

#include "settings/settings.h"

/* One layer of the stack, as applied (after the mandate filter). */
typedef struct settings_layer {
        settings_layer_kind kind;
        const settings_file *file; /* NULL for the built-in layers, command line, escalation */
        cordon_policy *policy;     /* owned */
        bool switches_dropped;     /* its loosening switches were ignored (mandate) */
} settings_layer;

/* An effective switch and the layer that set it (-1: the default). */
typedef struct settings_effective {
        bool value;
        int layer;
        const settings_switch *from;
} settings_effective;

typedef struct settings_excl {
        const settings_entry *entry;
        int layer;
} settings_excl;

typedef struct settings_ignored {
        cordon_settings_note pub; /* strings point at the owned copies below, or at files */
        settings_layer_kind kind;
        char *key, *value, *why;
} settings_ignored;

struct cordon_settings {
        char *cwd, *home;
        settings_file **files; /* owned */
        size_t n_files;
        settings_layer *layers; /* lowest precedence first */
        size_t n_layers;
        cordon_policy *resolved;
        settings_effective fail_if_unavailable, allow_unsandboxed;
        const settings_file *mandate;  /* the managed file that mandates the sandbox, or NULL */
        char *mandate_why;             /* "forbid unsandboxed commands", ... */
        const settings_file *project;  /* the project file read, or NULL (settings-project.c) */
        bool project_trusted;          /* its exact content is in the trust store */
        char *untrusted_why;           /* why its loosening items are ignored, when it has some */
        settings_excl *excluded;       /* highest precedence first */
        size_t n_excluded;
        settings_ignored *ignored;
        size_t n_ignored;
        char *backend_why;             /* why cordon_settings_backend steps down, when it may */
};

/* "user settings /home/me/.config/cordon/settings.json" or "the built-in default". */
const char *settings_layer_origin(const settings_layer *l);

/* "managed settings /etc/cordon/managed-settings.json:3:5 (allowUnsandboxedCommands: false)":
 * where an effective switch (e->layer >= 0) was set. */
void settings_describe_switch(const cordon_settings *s, const settings_effective *e, char *buf,
                              size_t size);

/* The project settings file for `cwd` (settings-project.c): the nearest of cwd and its ancestors
 * holding .cordon/settings.json, stopping at $HOME, before `/` and before a directory everyone can
 * write or another user owns. *ret (caller frees) is NULL when there is none. Returns 0 or -ENOMEM. */
int settings_find_project(const char *cwd, const char *home, char **ret);
/* Sets s->project, and s->project_trusted and s->untrusted_why when the project file loosens and
 * no mandate applies: trusted only when the trust store (o->trust_path, else
 * ~/.config/cordon/trusted-projects.json; never with CORDON_SETTINGS_NO_TRUST or o NULL) records
 * its path with the SHA-256 of the bytes parsed. Returns 0 or -errno with err set. */
int settings_decide_trust(cordon_settings *s, const cordon_settings_options *o,
                          cordon_error *err);

/* One document for settings_resolve_texts. */
typedef struct settings_text {
        settings_layer_kind kind; /* PROJECT, USER, FILE or MANAGED */
        const char *origin;
        const char *text;
        size_t len;
} settings_text;

/* cordon_settings_resolve over documents held in memory, in the order given (the fuzzer's entry
 * point, fuzz/fuzz-settings.c): no file is read, so no ownership check, and a project document
 * is never trusted. */
int settings_resolve_texts(const settings_text *docs, size_t n, const char *cwd,
                           const char *home, const cordon_policy *command_line,
                           cordon_settings **ret, cordon_error *err);
