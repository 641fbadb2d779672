/* SPDX-License-Identifier: Apache-2.0 */
/* The project settings file: where it is found (the project root), whether its exact content is
 * trusted to loosen the sandbox, and the explicit trust step (docs/settings.md, "Project
 * settings: the project root and trust").
 *
 * The attack this stops: a sandboxed command writes .cordon/settings.json somewhere it can write
 * (or a repository arrives with one), and the next `cordon run` there obeys it and turns the
 * sandbox off or widens it. A project file may therefore always tighten, but its loosening items
 * apply only when the user recorded the file's SHA-256 in the trust store, which lives where no
 * sandboxed command can write (~/.config/cordon is in every plan's mandatory write-deny set). */
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>

#include "settings/settings-resolve.h"
#include "settings/settings-trust.h"

/* ---- the project root ----------------------------------------------------------------------- */

/* A directory everyone may write (sticky or not), or that belongs to another user, could hold a
 * .cordon they planted: /tmp is the example. The search stops before such a directory. A
 * group-writable one is searched: with per-user groups (umask 002) every project directory is
 * one, and what a group member could plant there can only tighten (it is not trusted, and a
 * file of theirs that asks to loosen is refused outright, settings-file.c). */
static bool dir_is_ours(const char *dir) {
        struct stat st;
        if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
                return false;
        uid_t me = geteuid();
        return (st.st_uid == me || st.st_uid == 0) && !(st.st_mode & S_IWOTH);
}

static bool is_home(const char *dir, const char *home, const char *home_real) {
        return strcmp(dir, home) == 0 || (home_real && strcmp(dir, home_real) == 0);
}

/* The nearest of `cwd` and its ancestors holding .cordon/settings.json (anything at that name: a
 * non-regular file is refused when it is read), never `/`, not above $HOME, and not in or above
 * a directory everyone can write or another user owns. *ret is NULL when there is none. */
int settings_find_project(const char *cwd, const char *home, char **ret) {
        /* Resolved: the trust store is keyed by the path, and `cordon settings trust`, a run
         * and a cordond session given a workdir through a symlink must name the same file. */
        _cleanup_free_ char *dir = realpath(cwd, NULL), *home_real = realpath(home, NULL);
        *ret = NULL;
        if (!dir && errno != ENOMEM)
                dir = strdup(cwd);
        if (!dir)
                return -ENOMEM;
        while (strcmp(dir, "/") != 0 && dir_is_ours(dir)) {
                _cleanup_free_ char *file = path_join(dir, SETTINGS_PROJECT_FILE);
                struct stat st;
                if (!file)
                        return -ENOMEM;
                if (lstat(file, &st) == 0) {
                        *ret = TAKE_PTR(file);
                        return 0;
                }
                if (is_home(dir, home, home_real))
                        break;
                char *slash = strrchr(dir, '/');
                if (slash == dir)
                        slash[1] = '\0';
                else
                        *slash = '\0';
        }
        return 0;
}

/* ---- the trust decision --------------------------------------------------------------------- */

/* The path for a shell command line: as it is when it needs no quoting, else in single quotes. */
static void shell_word(const char *s, char *buf, size_t size) {
        if (strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/._-+,:@") ==
            strlen(s)) {
                (void) snprintf(buf, size, "%s", s);
                return;
        }
        size_t n = 0;
        if (n + 1 < size)
                buf[n++] = '\'';
        for (const char *p = s; *p && n + 5 < size; p++) {
                if (*p == '\'') {
                        memcpy(buf + n, "'\\''", 4);
                        n += 4;
                } else
                        buf[n++] = *p;
        }
        if (n + 1 < size)
                buf[n++] = '\'';
        buf[n < size ? n : size - 1] = '\0';
}

static char *default_store(const char *home) {
        return path_join(home, TRUST_STORE_FILE);
}

static int untrusted_reason(cordon_settings *s) {
        char word[PATH_MAX + 64];
        shell_word(s->project->origin, word, sizeof(word));
        if (asprintf(&s->untrusted_why,
                     "the project settings are not trusted; to trust this exact content, run "
                     "outside the sandbox: cordon settings trust %s", word) < 0) {
                s->untrusted_why = NULL;
                return -ENOMEM;
        }
        return 0;
}

/* Whether the project file's loosening items apply: only when it has some, no mandate forbids
 * them (the mandate wins over trust), and the store records this path with the SHA-256 of the
 * very bytes that were parsed (no second read, so nothing can change in between). The store is
 * read only then: a broken store does not stop runs that need no trust. */
int settings_decide_trust(cordon_settings *s, const cordon_settings_options *o,
                          cordon_error *err) {
        char grant[96];
        for (size_t i = 0; i < s->n_files && !s->project; i++)
                if (s->files[i]->kind == SETTINGS_LAYER_PROJECT)
                        s->project = s->files[i];
        if (!s->project || s->mandate)
                return 0;
        /* Untrusted until shown otherwise: the layer is filtered even when nothing in it seems
         * to loosen (the filter then drops nothing). */
        if (untrusted_reason(s) < 0)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, ENOMEM, "out of memory");
        if (!o || (o->flags & CORDON_SETTINGS_NO_TRUST) || !s->project->have_stat ||
            !settings_file_grants(s->project, grant, sizeof(grant)))
                return 0;
        _cleanup_free_ char *store_path = o->trust_path ? strdup(o->trust_path)
                                                        : default_store(s->home);
        if (!store_path)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, ENOMEM, "out of memory");
        if (!path_is_absolute(store_path))
                return cordon_set_error(err, CORDON_POLICY_INVALID, EINVAL,
                                        "the trust store path '%s' is not absolute", store_path);
        trust_store *t = NULL;
        char sha[TRUST_SHA256_HEX];
        int r = trust_store_load(store_path, &t, err);
        if (r < 0)
                return r;
        if (trust_sha256_hex(s->project->text, s->project->len, sha) < 0)
                r = cordon_set_error(err, CORDON_LAUNCH_FAILED, EIO, "SHA-256 failed");
        else
                s->project_trusted = trust_store_has(t, s->project->origin, sha);
        trust_store_free(t);
        return r;
}

/* ---- the trust step (cordon settings trust / untrust / trusted) ------------------------------- */

const char *cordon_settings_project_file(const cordon_settings *s) {
        return s && s->project ? s->project->origin : NULL;
}

bool cordon_settings_project_trusted(const cordon_settings *s) {
        return s && s->project_trusted;
}

static int store_at(const char *home, const char *trust_path, char **ret, cordon_error *err) {
        if (!trust_path && (!home || !path_is_absolute(home)))
                return cordon_set_error(err, CORDON_POLICY_INVALID, EINVAL,
                                        "the trust store: no absolute home directory");
        *ret = trust_path ? strdup(trust_path) : default_store(home);
        if (!*ret)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, ENOMEM, "out of memory");
        if (!path_is_absolute(*ret))
                return cordon_set_error(err, CORDON_POLICY_INVALID, EINVAL,
                                        "the trust store path '%s' is not absolute", *ret);
        return 0;
}

int cordon_settings_trust_project(const cordon_settings *s, const char *trust_path,
                                  cordon_error *err) {
        if (!s || !s->project || !s->project->have_stat)
                return cordon_set_error(err, CORDON_POLICY_INVALID, ENOENT,
                                        "no project settings file was read: nothing to trust");
        _cleanup_free_ char *path = NULL;
        char sha[TRUST_SHA256_HEX];
        trust_store *t = NULL;
        int r = store_at(s->home, trust_path, &path, err);
        if (r >= 0)
                r = trust_store_load(path, &t, err);
        if (r >= 0 && trust_sha256_hex(s->project->text, s->project->len, sha) < 0)
                r = cordon_set_error(err, CORDON_LAUNCH_FAILED, EIO, "SHA-256 failed");
        if (r >= 0 && (r = trust_store_set(t, s->project->origin, sha)) < 0)
                r = cordon_set_error(err, CORDON_POLICY_INVALID, -r,
                                     "%s: cannot add an entry: %s", path, strerror(-r));
        if (r >= 0)
                r = trust_store_save(t, path, err);
        trust_store_free(t);
        return r;
}

int cordon_settings_untrust_project(const char *home, const char *trust_path,
                                    const char *project_file, cordon_error *err) {
        _cleanup_free_ char *path = NULL;
        trust_store *t = NULL;
        int r = store_at(home, trust_path, &path, err);
        if (r >= 0)
                r = trust_store_load(path, &t, err);
        int removed = r >= 0 ? trust_store_remove(t, project_file) : 0;
        if (r >= 0 && removed)
                r = trust_store_save(t, path, err);
        trust_store_free(t);
        return r < 0 ? r : removed;
}

/* The SHA-256 of the regular file at `path` (O_NONBLOCK: a FIFO planted there must not hang the
 * listing; it is no regular file). */
static int hash_file(const char *path, char sha[TRUST_SHA256_HEX]) {
        _cleanup_free_ char *text = NULL;
        size_t n = 0;
        int r = read_file_at(AT_FDCWD, path, POLICY_MAX_FILE, READ_FILE_REGULAR, &text, &n);
        return r < 0 ? r : trust_sha256_hex(text, n, sha);
}

/* "trusted" when the file still has the recorded content, "changed" (its loosening items are
 * ignored again), or "missing" (or unreadable). */
static const char *entry_state(const trust_entry *e) {
        char sha[TRUST_SHA256_HEX];
        if (hash_file(e->path, sha) < 0)
                return "missing";
        return strcmp(sha, e->sha256) == 0 ? "trusted" : "changed";
}

static char *list_json(const trust_store *t) {
        json_t *list = json_array();
        bool ok = list != NULL;
        for (size_t i = 0; ok && i < t->n; i++)
                ok = json_array_append_new(list, json_pack("{s:s, s:s, s:s}", "path",
                                                           t->v[i].path, "sha256",
                                                           t->v[i].sha256, "state",
                                                           entry_state(&t->v[i]))) == 0;
        char *text = ok ? json_dumps(list, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
        json_decref(list);
        return text;
}

static char *list_text(const trust_store *t) {
        char *text = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&text, &size);
        if (!f)
                return NULL;
        if (t->n == 0)
                fputs("No project settings file is trusted.\n", f);
        for (size_t i = 0; i < t->n; i++)
                fprintf(f, "%-8s %s  %s\n", entry_state(&t->v[i]), t->v[i].sha256, t->v[i].path);
        if (fclose(f) != 0) {
                free(text);
                return NULL;
        }
        return text;
}

int cordon_settings_trusted_list(const char *home, const char *trust_path, bool json,
                                 char **ret, cordon_error *err) {
        _cleanup_free_ char *path = NULL;
        trust_store *t = NULL;
        int r = store_at(home, trust_path, &path, err);
        if (r >= 0)
                r = trust_store_load(path, &t, err);
        if (r < 0)
                return r;
        *ret = json ? list_json(t) : list_text(t);
        trust_store_free(t);
        return *ret ? 0 : cordon_set_error(err, CORDON_LAUNCH_FAILED, ENOMEM, "out of memory");
}
