/* SPDX-License-Identifier: Apache-2.0 */
/* Settings resolution (cordon_settings_resolve): load the files, apply the administrator's
 * mandate to the project file, stack the layers in precedence order and merge them, pick the
 * effective switches, and collect the excluded commands. One function for the CLI and the
 * daemon, so both resolve the same way (docs/settings.md). */
#include <stdio.h>

#include "settings/settings-resolve.h"

static void settings_file_freep(settings_file **f) {
        settings_file_free(*f);
}

void cordon_settings_free(cordon_settings *s) {
        if (!s)
                return;
        for (size_t i = 0; i < s->n_files; i++)
                settings_file_free(s->files[i]);
        free(s->files);
        for (size_t i = 0; i < s->n_layers; i++)
                cordon_policy_free(s->layers[i].policy);
        free(s->layers);
        cordon_policy_free(s->resolved);
        free(s->mandate_why);
        free(s->untrusted_why);
        free(s->excluded);
        for (size_t i = 0; i < s->n_ignored; i++) {
                free(s->ignored[i].key);
                free(s->ignored[i].value);
                free(s->ignored[i].why);
        }
        free(s->ignored);
        free(s->backend_why);
        free(s->cwd);
        free(s->home);
        free(s);
}

static void settings_freep(cordon_settings **s) {
        cordon_settings_free(*s);
}

static int oom(cordon_error *err) {
        return cordon_set_error(err, CORDON_LAUNCH_FAILED, ENOMEM, "out of memory");
}

const char *settings_layer_origin(const settings_layer *l) {
        switch (l->kind) {
        case SETTINGS_LAYER_DEFAULT:
                return "the deployment default";
        case SETTINGS_LAYER_BUILTIN:
                return "cordon's own rules (settings files stay unwritable)";
        case SETTINGS_LAYER_COMMAND_LINE:
                return "the command line";
        case SETTINGS_LAYER_ESCALATION:
                return "the approved escalation";
        case SETTINGS_LAYER_PROJECT:
        case SETTINGS_LAYER_USER:
        case SETTINGS_LAYER_FILE:
        case SETTINGS_LAYER_MANAGED:
        case _SETTINGS_LAYER_MAX:
        default:
                return l->file ? l->file->origin : "?";
        }
}

/* ---- loading ---------------------------------------------------------------------------------- */

static int keep_file(cordon_settings *s, settings_file *f) {
        settings_file **n = reallocarray(s->files, s->n_files + 1, sizeof(*n));
        if (!n)
                return -ENOMEM;
        s->files = n;
        s->files[s->n_files++] = f;
        return 0;
}

static int load_one(cordon_settings *s, settings_layer_kind kind, const char *path, bool optional,
                    cordon_error *err) {
        _cleanup_(settings_file_freep) settings_file *f = NULL;
        int r = settings_file_load(kind, path, optional, true, s->cwd, s->home, &f, err);
        if (r < 0 || !f)
                return r;
        if (keep_file(s, f) < 0)
                return oom(err);
        f = NULL;
        return 0;
}

static int load_files(cordon_settings *s, const cordon_settings_options *o, cordon_error *err) {
        _cleanup_free_ char *project = NULL;
        _cleanup_free_ char *user = path_join(s->home, SETTINGS_USER_FILE);
        if (!user || settings_find_project(s->cwd, s->home, &project) < 0)
                return oom(err);
        int r = 0;
        if (project && !(o->flags & CORDON_SETTINGS_NO_PROJECT))
                r = load_one(s, SETTINGS_LAYER_PROJECT, project, true, err);
        if (r >= 0 && !(o->flags & CORDON_SETTINGS_NO_USER))
                r = load_one(s, SETTINGS_LAYER_USER, user, true, err);
        for (size_t i = 0; r >= 0 && i < o->n_files; i++) {
                /* Absolute, so that the protection layer can name it. */
                _cleanup_free_ char *abs = !o->files[i]             ? NULL
                                           : path_is_absolute(o->files[i]) ? strdup(o->files[i])
                                                                     : path_join(s->cwd, o->files[i]);
                r = abs ? load_one(s, SETTINGS_LAYER_FILE, abs, false, err)
                    : o->files[i] ? oom(err)
                                  : cordon_set_error(err, CORDON_POLICY_INVALID, EINVAL,
                                                     "settings file %zu is NULL", i);
        }
        if (r >= 0 && o->managed_path && !path_is_absolute(o->managed_path))
                r = cordon_set_error(err, CORDON_POLICY_INVALID, EINVAL,
                                     "the managed settings path '%s' is not absolute",
                                     o->managed_path);
        if (r >= 0 && !(o->flags & CORDON_SETTINGS_NO_MANAGED))
                r = load_one(s, SETTINGS_LAYER_MANAGED,
                             o->managed_path ? o->managed_path : SETTINGS_MANAGED_FILE, true,
                             err);
        return r;
}

/* ---- the administrator's mandate ---------------------------------------------------------------- */

/* Managed settings that forbid unsandboxed commands or lock the domain list mandate the sandbox:
 * then the project file, which arrives with whatever repository is checked out (and which a
 * sandboxed command in another workspace may have written), may not loosen it. */
static int find_mandate(cordon_settings *s) {
        for (size_t i = 0; i < s->n_files; i++) {
                const settings_file *f = s->files[i];
                if (f->kind != SETTINGS_LAYER_MANAGED)
                        continue;
                bool forbid = f->allow_unsandboxed.set && !f->allow_unsandboxed.value;
                bool lock = f->lock_domains.set && f->lock_domains.value;
                if (!forbid && !lock)
                        return 0;
                s->mandate = f;
                if (asprintf(&s->mandate_why, "managed settings (%s) %s%s%s", f->origin,
                             forbid ? "forbid unsandboxed commands" : "",
                             forbid && lock ? " and " : "", lock ? "lock the domain list" : "") < 0) {
                        s->mandate_why = NULL;
                        return -ENOMEM;
                }
        }
        return 0;
}

static int add_ignored(cordon_settings *s, const settings_layer *l, const char *key,
                       const char *value, const char *why, json_pos pos) {
        settings_ignored *n = reallocarray(s->ignored, s->n_ignored + 1, sizeof(*n));
        if (!n)
                return -ENOMEM;
        s->ignored = n;
        settings_ignored it = { .kind = l->kind, .key = strdup(key), .value = value ? strdup(value) : NULL,
                                .why = strdup(why) };
        if (!it.key || !it.why || (value && !it.value)) {
                free(it.key);
                free(it.value);
                free(it.why);
                return -ENOMEM;
        }
        it.pub = (cordon_settings_note){ settings_layer_name(l->kind), settings_layer_origin(l),
                                         it.key, it.value, pos.line, pos.column, it.why };
        s->ignored[s->n_ignored++] = it;
        return 0;
}

typedef struct drop_ctx {
        cordon_settings *s;
        const settings_layer *l;
        const char *because; /* the mandate, or the missing trust */
} drop_ctx;

static int drop_item(void *userdata, settings_field f, const char *item, const char *why) {
        drop_ctx *d = userdata;
        char key[96], text[512];
        json_pos pos = { 0, 0 };
        settings_file_key(d->l->file, (int) f, item, key, sizeof(key));
        (void) settings_file_key_pos(d->l->file, key, &pos);
        (void) snprintf(text, sizeof(text), "%s; ignored because %s", why, d->because);
        bool scalar = f == SF_MODE || f == SF_NETWORK || f == SF_BLOCK_READS;
        return add_ignored(d->s, d->l, key, scalar ? NULL : item, text,
                           pos);
}

/* The project file's loosening switches and excluded commands, reported as ignored. */
static int drop_project_extras(cordon_settings *s, settings_layer *l, const char *because) {
        const settings_file *f = l->file;
        char text[512];
        int r = 0;
        const settings_switch *sw[] = { &f->allow_unsandboxed, &f->fail_if_unavailable };
        bool loosens[] = { f->allow_unsandboxed.value, !f->fail_if_unavailable.value };
        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(sw); i++) {
                if (!sw[i]->set || !loosens[i])
                        continue;
                (void) snprintf(text, sizeof(text), "%s; ignored because %s",
                                i == 0 ? "allows unsandboxed commands"
                                       : "allows running unconfined when no sandbox is available",
                                because);
                r = add_ignored(s, l, sw[i]->key, sw[i]->value ? "true" : "false", text,
                                sw[i]->pos);
        }
        for (size_t i = 0; r >= 0 && i < f->n_excluded; i++) {
                char key[48];
                (void) snprintf(key, sizeof(key), "excludedCommands[%zu]", f->excluded[i].index);
                (void) snprintf(text, sizeof(text), "runs a command outside the sandbox; ignored "
                                "because %s", because);
                r = add_ignored(s, l, key, f->excluded[i].text, text, f->excluded[i].pos);
        }
        l->switches_dropped = true;
        return r;
}

/* ---- the stack ------------------------------------------------------------------------------------ */

static int push_layer(cordon_settings *s, settings_layer_kind kind, const settings_file *f,
                      cordon_policy *policy) {
        if (!policy)
                return -ENOMEM;
        settings_layer *n = reallocarray(s->layers, s->n_layers + 1, sizeof(*n));
        if (!n) {
                cordon_policy_free(policy);
                return -ENOMEM;
        }
        s->layers = n;
        s->layers[s->n_layers++] = (settings_layer){ kind, f, policy, false };
        return 0;
}

/* A copy of a file's layer. The project file's loosening items are left out under a mandate
 * (which wins over trust) and when its exact content is not trusted (settings-project.c): a
 * file a sandboxed command or a cloned repository may have written must not widen the sandbox. */
static int push_file_layer(cordon_settings *s, const settings_file *f) {
        const char *because = s->mandate ? s->mandate_why
                              : s->project_trusted ? NULL
                                                   : s->untrusted_why;
        if (f->kind != SETTINGS_LAYER_PROJECT || !because)
                return push_layer(s, f->kind, f, policy_dup(f->layer));
        int r = push_layer(s, f->kind, f, policy_new());
        if (r < 0)
                return r;
        settings_layer *l = &s->layers[s->n_layers - 1];
        drop_ctx d = { s, l, because };
        cordon_policy *filtered = NULL;
        if ((r = settings_layer_filter(f->layer, drop_item, &d, &filtered)) < 0)
                return r;
        cordon_policy_free(l->policy);
        l->policy = filtered;
        return drop_project_extras(s, l, because);
}

/* Every settings file this run consulted, and the directories where project and user settings
 * live, are protected: a sandboxed command that could write them would choose the next run's
 * sandbox (a configuration-based escape). */
static cordon_policy *protection_layer(const cordon_settings *s) {
        cordon_policy *p = policy_new();
        _cleanup_free_ char *project = path_join(s->cwd, SETTINGS_PROJECT_DIR);
        _cleanup_free_ char *user = path_join(s->home, SETTINGS_USER_DIR);
        int r = p && project && user ? 0 : -ENOMEM;
        if (r >= 0)
                r = cordon_policy_add_protected_path(p, project);
        /* The project root's .cordon, when it lies above the working directory (a document held
         * in memory has no root). */
        bool on_disk = s->project && s->project->have_stat;
        _cleanup_free_ char *root_dir = on_disk ? strdup(s->project->origin) : NULL;
        char *cut = root_dir ? strrchr(root_dir, '/') : NULL;
        if (cut)
                *cut = '\0';
        if (r >= 0 && on_disk && !root_dir)
                r = -ENOMEM;
        if (r >= 0 && cut && strcmp(root_dir, project) != 0)
                r = cordon_policy_add_protected_path(p, root_dir);
        if (r >= 0)
                r = cordon_policy_add_protected_path(p, user);
        /* Each file read, as named and where a symlink leads (a ~/.config/cordon/settings.json
         * linked into a workspace would otherwise stay writable there). A document held in
         * memory has no path to protect. */
        for (size_t i = 0; r >= 0 && i < s->n_files; i++) {
                const settings_file *f = s->files[i];
                if (!f->have_stat)
                        continue;
                _cleanup_free_ char *real = realpath(f->origin, NULL);
                if (f->kind == SETTINGS_LAYER_FILE)
                        r = cordon_policy_add_protected_path(p, f->origin);
                if (r >= 0 && real && strcmp(real, f->origin) != 0)
                        r = cordon_policy_add_protected_path(p, real);
        }
        /* A nested cordon run inside the sandbox reads the administrator's file, not one the
         * command chose (docs/settings.md: CORDON_MANAGED_SETTINGS). */
        if (r >= 0)
                r = cordon_policy_env_scrub(p, "CORDON_MANAGED_SETTINGS");
        if (r < 0) {
                cordon_policy_free(p);
                return NULL;
        }
        return p;
}

static int add_files_of(cordon_settings *s, settings_layer_kind kind) {
        int r = 0;
        for (size_t i = 0; r >= 0 && i < s->n_files; i++)
                if (s->files[i]->kind == kind)
                        r = push_file_layer(s, s->files[i]);
        return r;
}

static int build_stack(cordon_settings *s, const cordon_settings_options *o, cordon_error *err) {
        cordon_policy *def = NULL;
        int r = o->deployment_default ? ((def = policy_dup(o->deployment_default)) ? 0 : -ENOMEM)
                                      : cordon_policy_new_default(s->cwd, s->home, &def, err);
        if (r < 0)
                return r == -ENOMEM ? oom(err) : r;
        if ((r = push_layer(s, SETTINGS_LAYER_DEFAULT, NULL, def)) >= 0)
                r = push_layer(s, SETTINGS_LAYER_BUILTIN, NULL, protection_layer(s));
        if (r >= 0)
                r = add_files_of(s, SETTINGS_LAYER_PROJECT);
        if (r >= 0)
                r = add_files_of(s, SETTINGS_LAYER_USER);
        if (r >= 0)
                r = add_files_of(s, SETTINGS_LAYER_FILE);
        if (r >= 0 && o->command_line)
                r = push_layer(s, SETTINGS_LAYER_COMMAND_LINE, NULL, policy_dup(o->command_line));
        if (r >= 0 && o->approved_escalation)
                r = push_layer(s, SETTINGS_LAYER_ESCALATION, NULL,
                               policy_dup(o->approved_escalation));
        if (r >= 0)
                r = add_files_of(s, SETTINGS_LAYER_MANAGED);
        return r < 0 ? oom(err) : 0;
}

static int merge_stack(cordon_settings *s, cordon_error *err) {
        if (!(s->resolved = policy_new()))
                return oom(err);
        /* Lowest precedence first: each layer overrides the scalars it sets. */
        for (size_t i = 0; i < s->n_layers; i++) {
                int r = policy_merge(s->resolved, s->layers[i].policy);
                if (r == -E2BIG)
                        return cordon_set_error(err, CORDON_POLICY_INVALID, E2BIG,
                                                "resolving the settings: %s makes a list longer "
                                                "than %u entries",
                                                settings_layer_origin(&s->layers[i]),
                                                POLICY_MAX_LIST);
                if (r < 0)
                        return oom(err);
        }
        return 0;
}

/* ---- switches and excluded commands ------------------------------------------------------------- */

static const settings_switch *layer_switch(const settings_layer *l, bool fail_if_unavailable) {
        if (!l->file)
                return NULL;
        const settings_switch *sw = fail_if_unavailable ? &l->file->fail_if_unavailable
                                                        : &l->file->allow_unsandboxed;
        if (!sw->set)
                return NULL;
        /* Under the mandate the project file may only make these stricter. */
        bool loosens = fail_if_unavailable ? !sw->value : sw->value;
        return l->switches_dropped && loosens ? NULL : sw;
}

static settings_effective effective(const cordon_settings *s, bool fail_if_unavailable) {
        for (size_t i = s->n_layers; i-- > 0;) {
                const settings_switch *sw = layer_switch(&s->layers[i], fail_if_unavailable);
                if (sw)
                        return (settings_effective){ sw->value, (int) i, sw };
        }
        /* cordon's defaults: fail closed; an explicit --sandbox off is honoured. */
        return (settings_effective){ true, -1, NULL };
}

static int collect_excluded(cordon_settings *s) {
        for (size_t i = s->n_layers; i-- > 0;) {
                const settings_layer *l = &s->layers[i];
                if (!l->file || l->switches_dropped)
                        continue;
                for (size_t k = 0; k < l->file->n_excluded; k++) {
                        settings_excl *n = reallocarray(s->excluded, s->n_excluded + 1,
                                                        sizeof(*n));
                        if (!n)
                                return -ENOMEM;
                        s->excluded = n;
                        s->excluded[s->n_excluded++] = (settings_excl){ &l->file->excluded[k],
                                                                        (int) i };
                }
        }
        return 0;
}

/* Best-effort srt keys each file left out, reported with the mandate's drops. */
static int collect_notes(cordon_settings *s) {
        int r = 0;
        for (size_t i = 0; r >= 0 && i < s->n_layers; i++) {
                const settings_file *f = s->layers[i].file;
                for (size_t k = 0; r >= 0 && f && k < f->n_notes; k++)
                        r = add_ignored(s, &s->layers[i], f->notes[k].key, f->notes[k].value,
                                        f->notes[k].why, f->notes[k].pos);
        }
        return r;
}

/* Said when a run steps down to no sandbox because failIfUnavailable is false. */
static int backend_reason(cordon_settings *s) {
        char where[1024];
        settings_describe_switch(s, &s->fail_if_unavailable, where, sizeof(where));
        if (asprintf(&s->backend_why, "no sandbox is available on this host and %s", where) < 0) {
                s->backend_why = NULL;
                return -ENOMEM;
        }
        return 0;
}

/* A resolved danger-full-access under settings that forbid unsandboxed commands is refused, not
 * quietly confined: either reading would surprise someone. */
static int check_mode(const cordon_settings *s, cordon_error *err) {
        if (s->allow_unsandboxed.value || !s->resolved->mode_set ||
            s->resolved->mode != CORDON_MODE_DANGER_FULL_ACCESS)
                return 0;
        return cordon_settings_check_unconfined(s, "mode danger-full-access", err);
}

/* Everything after loading: the mandate, the stack, the merge, the switches and lists. */
static int resolve_loaded(cordon_settings *s, const cordon_settings_options *o,
                          cordon_error *err) {
        int r;
        if (find_mandate(s) < 0)
                return oom(err);
        if ((r = settings_decide_trust(s, o, err)) < 0)
                return r;
        if ((r = build_stack(s, o, err)) < 0 || (r = merge_stack(s, err)) < 0)
                return r;
        s->fail_if_unavailable = effective(s, true);
        s->allow_unsandboxed = effective(s, false);
        if (!s->fail_if_unavailable.value && backend_reason(s) < 0)
                return oom(err);
        if (collect_excluded(s) < 0 || collect_notes(s) < 0)
                return oom(err);
        return check_mode(s, err);
}

static int settings_new(const char *cwd, const char *home, cordon_settings **ret,
                        cordon_error *err) {
        if (!cwd || !home || !path_is_absolute(cwd) || !path_is_absolute(home))
                return cordon_set_error(err, CORDON_POLICY_INVALID, EINVAL,
                                        "resolving settings: cwd and home must be absolute "
                                        "paths");
        cordon_settings *s = calloc(1, sizeof(*s));
        if (!s || !(s->cwd = strdup(cwd)) || !(s->home = strdup(home))) {
                cordon_settings_free(s);
                return oom(err);
        }
        *ret = s;
        return 0;
}

int cordon_settings_resolve(const cordon_settings_options *o, cordon_settings **ret,
                            cordon_error *err) {
        _cleanup_(settings_freep) cordon_settings *s = NULL;
        if (ret)
                *ret = NULL;
        if (!o || !ret)
                return cordon_set_error(err, CORDON_POLICY_INVALID, EINVAL,
                                        "cordon_settings_resolve: no options");
        int r = settings_new(o->cwd, o->home, &s, err);
        if (r < 0 || (r = load_files(s, o, err)) < 0 || (r = resolve_loaded(s, o, err)) < 0)
                return r;
        /* The managed file was consulted (read, or found missing): a launch of this policy must
         * not read it again, maybe changed since or at another path than o->managed_path, and
         * stack it a second time (settings-managed.c). Skipped here, they are still to come. */
        s->resolved->managed_applied = !(o->flags & CORDON_SETTINGS_NO_MANAGED);
        *ret = TAKE_PTR(s);
        return 0;
}

int settings_resolve_texts(const settings_text *docs, size_t n, const char *cwd,
                           const char *home, const cordon_policy *command_line,
                           cordon_settings **ret, cordon_error *err) {
        _cleanup_(settings_freep) cordon_settings *s = NULL;
        int r = settings_new(cwd, home, &s, err);
        for (size_t i = 0; r >= 0 && i < n; i++) {
                settings_file *f = NULL;
                r = settings_file_parse(docs[i].kind, docs[i].origin, docs[i].text, docs[i].len,
                                        cwd, home, &f, err);
                if (r >= 0 && keep_file(s, f) < 0) {
                        settings_file_free(f);
                        r = oom(err);
                }
        }
        cordon_settings_options o = { .cwd = cwd, .home = home, .command_line = command_line,
                                      .flags = CORDON_SETTINGS_NO_TRUST };
        if (r < 0 || (r = resolve_loaded(s, &o, err)) < 0)
                return r;
        *ret = TAKE_PTR(s);
        return 0;
}

/* ---- unconfined runs -------------------------------------------------------------------------- */

void settings_switch_where(settings_layer_kind kind, const char *origin,
                           const settings_switch *sw, char *buf, size_t size) {
        if (sw->pos.line)
                (void) snprintf(buf, size, "%s %s:%u:%u (%s: %s)", settings_layer_label(kind),
                                origin, sw->pos.line, sw->pos.column, sw->key,
                                sw->value ? "true" : "false");
        else
                (void) snprintf(buf, size, "%s %s (%s: %s)", settings_layer_label(kind), origin,
                                sw->key, sw->value ? "true" : "false");
}

void settings_describe_switch(const cordon_settings *s, const settings_effective *e, char *buf,
                              size_t size) {
        const settings_layer *l = &s->layers[e->layer];
        settings_switch_where(l->kind, settings_layer_origin(l), e->from, buf, size);
}

int settings_refuse_unconfined(const char *what, const char *where, cordon_error *err) {
        /* The whole point of the switch: no request, however explicit, runs a command outside
         * the sandbox once it is off. */
        return cordon_set_error(err, CORDON_POLICY_INVALID, EPERM,
                                "%s: unsandboxed commands are forbidden by %s; run the command "
                                "sandboxed",
                                what ? what : "an unconfined run", where);
}

int cordon_settings_check_unconfined(const cordon_settings *s, const char *what,
                                     cordon_error *err) {
        if (!s || s->allow_unsandboxed.value)
                return 0;
        char where[1024];
        settings_describe_switch(s, &s->allow_unsandboxed, where, sizeof(where));
        return settings_refuse_unconfined(what, where, err);
}

/* ---- accessors ------------------------------------------------------------------------------------ */

const cordon_policy *cordon_settings_policy(const cordon_settings *s) {
        return s ? s->resolved : NULL;
}

bool cordon_settings_fail_if_unavailable(const cordon_settings *s) {
        return !s || s->fail_if_unavailable.value;
}

bool cordon_settings_allow_unsandboxed(const cordon_settings *s) {
        return !s || s->allow_unsandboxed.value;
}

size_t cordon_settings_n_ignored(const cordon_settings *s) {
        return s ? s->n_ignored : 0;
}

const cordon_settings_note *cordon_settings_ignored(const cordon_settings *s, size_t i) {
        return s && i < s->n_ignored ? &s->ignored[i].pub : NULL;
}
