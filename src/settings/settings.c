/* SPDX-License-Identifier: Apache-2.0 */
/* The settings document (docs/settings.md): told apart from the srt format by its keys, parsed
 * strictly (unknown keys, wrong types, bad globs, relative paths, domains with schemes or paths
 * are errors with file:line:column and a hint). The "sandbox" member goes through the policy
 * loader itself (policy_parse_json_member), so a settings file and a policy file accept exactly
 * the same policy keys. */
#include "settings/settings.h"

#include <jansson.h>
#include <stdio.h>

#include "policy/json-read.h"
#include "settings/excluded.h"

const char *settings_layer_name(settings_layer_kind kind) {
        static const char *const names[_SETTINGS_LAYER_MAX] = {
                [SETTINGS_LAYER_DEFAULT] = "default",
                [SETTINGS_LAYER_BUILTIN] = "built-in",
                [SETTINGS_LAYER_PROJECT] = "project",
                [SETTINGS_LAYER_USER] = "user",
                [SETTINGS_LAYER_FILE] = "settings",
                [SETTINGS_LAYER_COMMAND_LINE] = "command line",
                [SETTINGS_LAYER_ESCALATION] = "escalation",
                [SETTINGS_LAYER_MANAGED] = "managed",
        };
        return (unsigned) kind < _SETTINGS_LAYER_MAX ? names[kind] : "?";
}

const char *settings_layer_label(settings_layer_kind kind) {
        static const char *const labels[_SETTINGS_LAYER_MAX] = {
                [SETTINGS_LAYER_DEFAULT] = "the deployment default",
                [SETTINGS_LAYER_BUILTIN] = "cordon",
                [SETTINGS_LAYER_PROJECT] = "project settings",
                [SETTINGS_LAYER_USER] = "user settings",
                [SETTINGS_LAYER_FILE] = "--settings file",
                [SETTINGS_LAYER_COMMAND_LINE] = "the command line",
                [SETTINGS_LAYER_ESCALATION] = "the approved escalation",
                [SETTINGS_LAYER_MANAGED] = "managed settings",
        };
        return (unsigned) kind < _SETTINGS_LAYER_MAX ? labels[kind] : "?";
}

/* ---- the file object --------------------------------------------------------------------------- */

void settings_file_free(settings_file *f) {
        if (!f)
                return;
        free(f->origin);
        free(f->text);
        cordon_policy_free(f->layer);
        for (size_t i = 0; i < f->n_excluded; i++) {
                for (char **w = f->excluded[i].words; w && *w; w++)
                        free(*w);
                free(f->excluded[i].words);
                free(f->excluded[i].text);
        }
        free(f->excluded);
        for (size_t i = 0; i < f->n_notes; i++) {
                free(f->notes[i].key);
                free(f->notes[i].value);
                free(f->notes[i].why);
        }
        free(f->notes);
        for (size_t i = 0; i < f->n_origins; i++) {
                free(f->origins[i].item);
                free(f->origins[i].key);
        }
        free(f->origins);
        free(f);
}

static void settings_file_freep(settings_file **f) {
        settings_file_free(*f);
}

int settings_file_note(settings_file *f, const char *key, const char *value, const char *why,
                       json_pos pos) {
        if (f->n_notes >= POLICY_MAX_LIST)
                return -E2BIG;
        settings_note *n = reallocarray(f->notes, f->n_notes + 1, sizeof(*n));
        if (!n)
                return -ENOMEM;
        f->notes = n;
        settings_note note = { strdup(key), value ? strdup(value) : NULL, strdup(why), pos };
        if (!note.key || !note.why || (value && !note.value)) {
                free(note.key);
                free(note.value);
                free(note.why);
                return -ENOMEM;
        }
        f->notes[f->n_notes++] = note;
        return 0;
}

int settings_file_origin(settings_file *f, int field, const char *item, const char *key) {
        /* Bounded like every list: at most this many items per field reach a layer. */
        if (f->n_origins >= (size_t) POLICY_MAX_LIST * _SF_MAX)
                return -E2BIG;
        settings_origin *n = reallocarray(f->origins, f->n_origins + 1, sizeof(*n));
        if (!n)
                return -ENOMEM;
        f->origins = n;
        char *c = item ? strdup(item) : NULL, *k = strdup(key);
        if ((item && !c) || !k) {
                free(c);
                free(k);
                return -ENOMEM;
        }
        f->origins[f->n_origins++] = (settings_origin){ field, c, k };
        return 0;
}

bool settings_file_grants(const settings_file *f, char *what, size_t size) {
        const char *sw = f->n_excluded > 0 ? "excludedCommands"
                         : f->allow_unsandboxed.set && f->allow_unsandboxed.value
                                 ? f->allow_unsandboxed.key
                         : f->fail_if_unavailable.set && !f->fail_if_unavailable.value
                                 ? f->fail_if_unavailable.key
                                 : NULL;
        if (sw) {
                (void) snprintf(what, size, "%s", sw);
                return true;
        }
        for (int fl = 0; fl < _SF_MAX; fl++) {
                char buf[32];
                const char *item;
                for (size_t i = 0;
                     (item = settings_field_item(f->layer, (settings_field) fl, i, buf, sizeof(buf)));
                     i++)
                        if (settings_field_loosens(f->layer, (settings_field) fl, i)) {
                                settings_file_key(f, fl, item, what, size);
                                return true;
                        }
        }
        return false;
}

void settings_file_key(const settings_file *f, int field, const char *item, char *buf,
                       size_t size) {
        if (f->format == SETTINGS_FORMAT_CORDON) {
                (void) snprintf(buf, size, "sandbox.%s", settings_field_key((settings_field) field));
                return;
        }
        const char *key = NULL;
        for (size_t i = 0; i < f->n_origins && !key; i++)
                if (f->origins[i].field == field &&
                    (!item || !f->origins[i].item || strcmp(f->origins[i].item, item) == 0))
                        key = f->origins[i].key;
        (void) snprintf(buf, size, "%s", key ? key : "?");
}

bool settings_file_key_pos(const settings_file *f, const char *key, json_pos *ret) {
        json_pos_step steps[8];
        char copy[128];
        size_t n = 0;
        if (snprintf(copy, sizeof(copy), "%s", key) >= (int) sizeof(copy))
                return false;
        for (char *save = NULL, *t = strtok_r(copy, ".", &save); t && n < ELEMENTSOF(steps);
             t = strtok_r(NULL, ".", &save))
                steps[n++] = (json_pos_step){ t, 0 };
        return n > 0 && json_pos_find(f->text, f->len, steps, n, true, ret) >= 0;
}

/* ---- pre-checks on the sandbox member, with settings-specific hints ----------------------------- */

/* A path in a list whose entries may be globs (docs/policy.md: '*' or '?' make a glob). The plan
 * matches globs with fnmatch(FNM_PATHNAME): '*' stays inside one component. */
static const char *check_deny_glob(const char *s, const char **hint) {
        *hint = "list each directory, or use denyCreateNames for a file name anywhere";
        if (s[0] == '~') {
                *hint = "write the home directory out, e.g. \"/home/me/.secrets\"";
                return "starts with '~': paths in cordon settings are absolute";
        }
        if (!strpbrk(s, "*?"))
                return NULL;
        if (strstr(s, "**"))
                return "uses '**': '*' never matches '/' in cordon's globs, so it would match less "
                       "than it seems to";
        for (const char *b = strchr(s, '['); b; b = strchr(b + 1, '[')) {
                /* "[]x]" is a class holding ']': look for the close from the second byte on. */
                if (!b[1] || !strchr(b + 2, ']')) {
                        *hint = "close the bracket expression, e.g. \"*.[ch]\"";
                        return "has an unclosed '['";
                }
        }
        size_t n = strlen(s);
        if (n && s[n - 1] == '\\') {
                *hint = "remove the trailing backslash";
                return "ends with '\\'";
        }
        return NULL;
}

/* A path every character of which is literal: a glob here is a mistake (srt users expect
 * allowWrite globs; a literal '*' directory would be granted instead). */
static const char *check_literal_path(const char *s, const char **hint) {
        if (s[0] == '~') {
                *hint = "write the home directory out, e.g. \"/home/me/project\"";
                return "starts with '~': paths in cordon settings are absolute";
        }
        *hint = "name the directory itself: globs are not supported here";
        return strpbrk(s, "*?") ? "contains '*' or '?'" : NULL;
}

const char *settings_check_domain(const char *s, const char **hint) {
        *hint = "write the host name only, e.g. \"api.example.com\", \"*.example.com\" or "
                "\"example.com:443\"";
        if (strstr(s, "://"))
                return "has a scheme ('://')";
        if (strchr(s, '/'))
                return "has a path ('/')";
        if (strchr(s, '@'))
                return "has a user part ('@')";
        if (strpbrk(s, " \t"))
                return "contains a space";
        return NULL;
}

typedef const char *(*string_check)(const char *s, const char **hint);

static int check_string(jread *c, const json_t *v, string_check check) {
        const char *hint = NULL, *why;
        char shown[160];
        if (!json_is_string(v) || !(why = check(json_string_value(v), &hint)))
                return 0; /* wrong types are the policy loader's to report */
        return jread_fail(c, false, hint, "'%s' %s",
                          jread_shorten(json_string_value(v), shown, sizeof(shown)), why);
}

static int check_list(jread *c, const json_t *list, string_check check) {
        size_t i;
        json_t *e;
        if (!json_is_array(list))
                return 0;
        json_array_foreach(list, i, e) {
                jread_push_index(c, i);
                int r = check_string(c, e, check);
                jread_pop(c);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int check_binds(jread *c, const json_t *list) {
        static const char *const keys[] = { "hostPath", "guestPath" };
        size_t i;
        json_t *e;
        if (!json_is_array(list))
                return 0;
        json_array_foreach(list, i, e) {
                jread_push_index(c, i);
                int r = 0;
                for (size_t k = 0; r >= 0 && k < ELEMENTSOF(keys); k++) {
                        json_t *v = json_is_object(e) ? json_object_get(e, keys[k]) : NULL;
                        jread_push_key(c, keys[k]);
                        r = v ? check_string(c, v, check_literal_path) : 0;
                        jread_pop(c);
                }
                jread_pop(c);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int precheck_sandbox(jread *c, json_t *sandbox) {
        static const struct {
                const char *key;
                string_check check;
        } lists[] = {
                { "protectedPaths", check_deny_glob },   { "denyRead", check_deny_glob },
                { "denyWrite", check_deny_glob },        { "runnerStateDirs", check_literal_path },
                { "execGrantRoots", check_literal_path }, { "allowUnixSockets", check_literal_path },
                { "egressAllowlist", settings_check_domain },     { "egressDenylist", settings_check_domain },
        };
        int r = 0;
        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(lists); i++) {
                jread_push_key(c, lists[i].key);
                r = check_list(c, json_object_get(sandbox, lists[i].key), lists[i].check);
                jread_pop(c);
        }
        json_t *w = json_object_get(sandbox, "guestWorkdir");
        jread_push_key(c, "guestWorkdir");
        if (r >= 0 && w)
                r = check_string(c, w, check_literal_path);
        jread_pop(c);
        jread_push_key(c, "bindMounts");
        if (r >= 0)
                r = check_binds(c, json_object_get(sandbox, "bindMounts"));
        jread_pop(c);
        return r;
}

/* ---- the members ---------------------------------------------------------------------------------- */

static int parse_sandbox(jread *c, json_t *v, settings_file *f) {
        int r = jread_expect(c, v, json_is_object(v), "an object",
                             "\"sandbox\": {\"denyRead\": [\"/home/me/.secrets\"]}");
        if (r >= 0 && json_is_object(v))
                r = precheck_sandbox(c, v);
        if (r < 0)
                return r;
        static const char *const prefix[] = { "sandbox" };
        return policy_parse_json_member(f->layer, v, c->origin, c->text, c->len, prefix, 1,
                                        c->err);
}

static int parse_switch(jread *c, json_t *v, settings_switch *s, const char *key,
                        const char *example) {
        int r = jread_expect(c, v, json_is_boolean(v), "a boolean", example);
        if (r < 0)
                return r;
        *s = (settings_switch){ .set = true, .value = json_is_true(v), .key = key };
        (void) jread_position(c, true, &s->pos);
        return 0;
}

#define EXCLUDED_HINT                                                                              \
        "an entry is one whole command line compared word for word (\"docker ps\", or "         \
        "[\"git\", \"status\"]); remove shell syntax or give the words as an array"

static int add_entry(settings_file *f, jread *c, char **words, size_t index) {
        settings_entry *n = reallocarray(f->excluded, f->n_excluded + 1, sizeof(*n));
        if (!n)
                return -ENOMEM;
        f->excluded = n;
        size_t len = 0;
        for (char **w = words; *w; w++)
                len += strlen(*w) + 1;
        char *text = malloc(len + 1), *o = text;
        if (!text)
                return -ENOMEM;
        for (char **w = words; *w; w++)
                o += sprintf(o, "%s%s", w == words ? "" : " ", *w);
        *o = '\0';
        settings_entry e = { .words = words, .text = text, .index = index };
        (void) jread_position(c, false, &e.pos);
        f->excluded[f->n_excluded++] = e;
        return 0;
}

/* An entry given as an array of words: the words as they will be compared. */
static int entry_words(jread *c, json_t *v, char ***ret, excluded_refusal *why) {
        size_t n = json_array_size(v), i;
        json_t *e;
        if (n > EXCLUDED_MAX_WORDS) {
                *why = EXCLUDED_TOO_LONG;
                return 0;
        }
        char **words = calloc(n + 1, sizeof(char *));
        if (!words)
                return -ENOMEM;
        json_array_foreach(v, i, e) {
                jread_push_index(c, i);
                int r = jread_expect(c, e, json_is_string(e), "a string",
                                     "[\"git\", \"status\"]");
                jread_pop(c);
                if (r < 0 || !(words[i] = strdup(json_string_value(e)))) {
                        excluded_words_free(words);
                        return r < 0 ? r : -ENOMEM;
                }
        }
        *why = excluded_check_argv(words);
        if (*why != EXCLUDED_OK) {
                excluded_words_free(words);
                return 0;
        }
        *ret = words;
        return 0;
}

static int parse_one_excluded(jread *c, json_t *v, settings_file *f, size_t index) {
        char **words = NULL;
        excluded_refusal why = EXCLUDED_OK;
        int r = jread_expect(c, v, json_is_string(v) || json_is_array(v),
                             "a string or an array of strings", "\"docker ps\"");
        if (r < 0)
                return r;
        r = json_is_string(v) ? excluded_split(json_string_value(v), &words, &why)
                              : entry_words(c, v, &words, &why);
        if (r < 0)
                return r == -ENOMEM ? cordon_set_error(c->err, CORDON_LAUNCH_FAILED, ENOMEM,
                                                       "out of memory")
                                    : r;
        if (why != EXCLUDED_OK)
                return jread_fail(c, false, EXCLUDED_HINT,
                                  "this entry %s, so it could never run unsandboxed safely",
                                  excluded_refusal_to_string(why));
        r = add_entry(f, c, words, index);
        if (r < 0) {
                excluded_words_free(words);
                return cordon_set_error(c->err, CORDON_LAUNCH_FAILED, ENOMEM, "out of memory");
        }
        return 0;
}

static int parse_excluded(jread *c, json_t *v, settings_file *f) {
        int r = jread_expect(c, v, json_is_array(v), "an array",
                             "\"excludedCommands\": [\"docker ps\"]");
        if (r < 0)
                return r;
        if (json_array_size(v) > POLICY_MAX_LIST)
                return jread_fail(c, false, "keep the list short", "has %zu entries; at most %u",
                                  json_array_size(v), POLICY_MAX_LIST);
        size_t i;
        json_t *e;
        json_array_foreach(v, i, e) {
                jread_push_index(c, i);
                r = parse_one_excluded(c, e, f, i);
                jread_pop(c);
                if (r < 0)
                        return r;
        }
        return 0;
}

static const char *const cordon_keys[] = {
        "sandbox", "failIfUnavailable", "allowUnsandboxedCommands", "excludedCommands",
        "lockDomains", "credentialBrokers",
};

static int parse_member(jread *c, const char *key, json_t *v, settings_file *f) {
        if (strcmp(key, "sandbox") == 0)
                return parse_sandbox(c, v, f);
        if (strcmp(key, "failIfUnavailable") == 0)
                return parse_switch(c, v, &f->fail_if_unavailable, "failIfUnavailable",
                                    "\"failIfUnavailable\": true");
        if (strcmp(key, "allowUnsandboxedCommands") == 0)
                return parse_switch(c, v, &f->allow_unsandboxed, "allowUnsandboxedCommands",
                                    "\"allowUnsandboxedCommands\": false");
        if (strcmp(key, "excludedCommands") == 0)
                return parse_excluded(c, v, f);
        if (strcmp(key, "credentialBrokers") == 0)
                return settings_parse_brokers(c, v, f);
        if (strcmp(key, "lockDomains") == 0) {
                /* A lock only an administrator can set: in a file the user (or a repository)
                 * controls it would suggest a protection that is not there. */
                if (f->kind != SETTINGS_LAYER_MANAGED)
                        return jread_fail(c, true, "move it to the managed settings file "
                                          "(" SETTINGS_MANAGED_FILE ")",
                                          "only managed settings can lock the domain list");
                return parse_switch(c, v, &f->lock_domains, "lockDomains", "\"lockDomains\": true");
        }
        return jread_unknown_key(c, cordon_keys, ELEMENTSOF(cordon_keys));
}

static int parse_cordon(jread *c, json_t *root, settings_file *f) {
        const char *key;
        json_t *v;
        json_object_foreach(root, key, v) {
                jread_push_key(c, key);
                int r = parse_member(c, key, v, f);
                jread_pop(c);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* ---- the document -------------------------------------------------------------------------------- */

static bool is_cordon_key(const char *key) {
        for (size_t i = 0; i < ELEMENTSOF(cordon_keys); i++)
                if (strcmp(key, cordon_keys[i]) == 0)
                        return true;
        return false;
}

/* Told apart by the top-level keys: any srt key makes it an srt file. A file with keys of both
 * formats is refused rather than guessed. */
static int detect_format(jread *c, json_t *root, settings_format *ret) {
        const char *key, *srt = NULL, *ours = NULL;
        json_t *v;
        json_object_foreach(root, key, v) {
                if (!srt && settings_srt_key(key))
                        srt = key;
                if (!ours && is_cordon_key(key))
                        ours = key;
        }
        if (srt && ours) {
                jread_push_key(c, srt);
                char hint[256];
                (void) snprintf(hint, sizeof(hint),
                                "'%s' is a cordon settings key: use one format per file (see "
                                "'cordon settings import' to convert an srt file)", ours);
                int r = jread_fail(c, true, hint, "an srt settings key in a cordon settings file");
                jread_pop(c);
                return r;
        }
        *ret = srt ? SETTINGS_FORMAT_SRT : SETTINGS_FORMAT_CORDON;
        return 0;
}

static int file_new(settings_layer_kind kind, const char *origin, const char *text, size_t len,
                    settings_file **ret) {
        settings_file *f = calloc(1, sizeof(*f));
        if (!f)
                return -ENOMEM;
        f->kind = kind;
        f->origin = strdup(origin);
        f->text = malloc(len + 1);
        f->layer = policy_new();
        if (!f->origin || !f->text || !f->layer) {
                settings_file_free(f);
                return -ENOMEM;
        }
        memcpy(f->text, text, len);
        f->text[len] = '\0';
        f->len = len;
        *ret = f;
        return 0;
}

/* Parses c->text: at most POLICY_MAX_FILE bytes, nesting bounded first, a JSON object at the top.
 * Errors are POLICY_INVALID with file:line:col. */
static int load_document(jread *c, json_t **ret) {
        if (c->len > POLICY_MAX_FILE)
                return cordon_set_error(c->err, CORDON_POLICY_INVALID, EFBIG,
                                        "%s: the settings file is %zu bytes; at most %u are "
                                        "allowed", c->origin, c->len, POLICY_MAX_FILE);
        json_t *root = NULL;
        int r = jread_parse(c, "settings need at most 5", &root);
        if (r < 0)
                return r;
        if (!json_is_object(root)) {
                r = jread_fail(c, false, "write the settings as { \"key\": value, ... }",
                               "settings must be a JSON object, not %s", jread_type_name(root));
                json_decref(root);
                return r;
        }
        *ret = root;
        return 0;
}

int settings_file_parse(settings_layer_kind kind, const char *origin, const char *text,
                        size_t len, const char *cwd, const char *home, settings_file **ret,
                        cordon_error *err) {
        if (!origin)
                origin = "<string>";
        if (!text || !cwd || !home || !ret)
                return cordon_set_error(err, CORDON_POLICY_INVALID, EINVAL,
                                        "%s: no settings text to parse", origin);
        _cleanup_(settings_file_freep) settings_file *f = NULL;
        if (file_new(kind, origin, text, len, &f) < 0)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, ENOMEM, "out of memory");
        jread c = { .origin = f->origin, .text = f->text, .len = f->len, .err = err };
        json_t *root = NULL;
        int r = load_document(&c, &root);
        if (r < 0)
                return r;
        r = detect_format(&c, root, &f->format);
        if (r >= 0)
                r = f->format == SETTINGS_FORMAT_SRT ? settings_srt_parse(f, &c, root, cwd, home)
                                                     : parse_cordon(&c, root, f);
        json_decref(root);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(f);
        return 0;
}
