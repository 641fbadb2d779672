/* SPDX-License-Identifier: Apache-2.0 */
/* The trust store: reading it strictly, matching a project file's content against it, writing it
 * atomically (settings-trust.h, docs/settings.md "Trusting a project file"). */
#include <fcntl.h>
#include <jansson.h>
#include <libgen.h>
#include <limits.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <sys/stat.h>

#include "policy/json-read.h"
#include "settings/settings-trust.h"
#include "util/util.h"

int trust_sha256_hex(const void *data, size_t len, char ret[TRUST_SHA256_HEX]) {
        unsigned char md[EVP_MAX_MD_SIZE];
        unsigned int n = 0;
        if (EVP_Digest(data, len, md, &n, EVP_sha256(), NULL) != 1 || n != 32)
                return -EIO;
        for (unsigned i = 0; i < n; i++)
                (void) snprintf(ret + 2 * i, 3, "%02x", md[i]);
        return 0;
}

void trust_store_free(trust_store *t) {
        if (!t)
                return;
        for (size_t i = 0; i < t->n; i++)
                free(t->v[i].path);
        free(t->v);
        free(t);
}

static void trust_store_freep(trust_store **t) {
        trust_store_free(*t);
}

static ssize_t find(const trust_store *t, const char *path) {
        for (size_t i = 0; i < t->n; i++)
                if (strcmp(t->v[i].path, path) == 0)
                        return (ssize_t) i;
        return -1;
}

bool trust_store_has(const trust_store *t, const char *path, const char *sha256) {
        ssize_t i = t && path && sha256 ? find(t, path) : -1;
        return i >= 0 && strcmp(t->v[i].sha256, sha256) == 0;
}

int trust_store_set(trust_store *t, const char *path, const char *sha256) {
        ssize_t i = find(t, path);
        if (i >= 0) {
                (void) snprintf(t->v[i].sha256, TRUST_SHA256_HEX, "%s", sha256);
                return 0;
        }
        if (t->n >= TRUST_MAX_ENTRIES)
                return -E2BIG;
        trust_entry *n = reallocarray(t->v, t->n + 1, sizeof(*n));
        if (!n)
                return -ENOMEM;
        t->v = n;
        if (!(t->v[t->n].path = strdup(path)))
                return -ENOMEM;
        (void) snprintf(t->v[t->n++].sha256, TRUST_SHA256_HEX, "%s", sha256);
        return 0;
}

int trust_store_remove(trust_store *t, const char *path) {
        ssize_t i = find(t, path);
        if (i < 0)
                return 0;
        free(t->v[i].path);
        memmove(&t->v[i], &t->v[i + 1], (t->n - (size_t) i - 1) * sizeof(t->v[0]));
        t->n--;
        return 1;
}

/* ---- parsing ---------------------------------------------------------------------------------- */

static bool is_sha256_hex(const char *s) {
        size_t n = 0;
        for (; s[n]; n++)
                if (!((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f')))
                        return false;
        return n == 64;
}

static int parse_string(jread *c, json_t *o, const char *key, const char **ret) {
        json_t *v = json_object_get(o, key);
        if (!v)
                return jread_fail(c, false, "write each entry as {\"path\": ..., \"sha256\": ...}",
                                  "the entry has no '%s'", key);
        jread_push_key(c, key);
        int r = jread_expect(c, v, json_is_string(v), "a string", "\"...\"");
        jread_pop(c);
        *ret = r < 0 ? NULL : json_string_value(v);
        return r;
}

static int check_keys(jread *c, json_t *o, const char *const *known, size_t n) {
        const char *key;
        json_t *v;
        json_object_foreach(o, key, v) {
                bool ok = false;
                for (size_t i = 0; i < n; i++)
                        ok = ok || strcmp(key, known[i]) == 0;
                if (ok)
                        continue;
                jread_push_key(c, key);
                int r = jread_unknown_key(c, known, n);
                jread_pop(c);
                return r;
        }
        return 0;
}

/* One {"path", "sha256"} at c's current path (trusted[i]). */
static int parse_entry(jread *c, json_t *e, trust_store *t) {
        static const char *const keys[] = { "path", "sha256" };
        const char *path = NULL, *sha = NULL;
        int r = jread_expect(c, e, json_is_object(e), "an object",
                             "{\"path\": \"/home/me/app/.cordon/settings.json\", \"sha256\": ...}");
        if (r >= 0)
                r = check_keys(c, e, keys, ELEMENTSOF(keys));
        if (r >= 0)
                r = parse_string(c, e, "path", &path);
        if (r >= 0)
                r = parse_string(c, e, "sha256", &sha);
        if (r < 0)
                return r;
        const char *why = policy_check_path(path);
        _cleanup_free_ char *norm = NULL;
        jread_push_key(c, why || path_normalize(path, &norm) < 0 || strcmp(norm, path) != 0 ||
                                          find(t, path) >= 0
                                  ? "path"
                                  : "sha256");
        if (why)
                r = jread_fail(c, false, "record trust with 'cordon settings trust'", "%s", why);
        else if (!norm || strcmp(norm, path) != 0)
                r = jread_fail(c, false, "write the path normalised", "'%s' is not normalised",
                               path);
        else if (find(t, path) >= 0)
                r = jread_fail(c, false, "keep one entry per file", "'%s' is listed twice", path);
        else if (!is_sha256_hex(sha))
                r = jread_fail(c, false, "record trust with 'cordon settings trust'",
                               "not a SHA-256 (64 lower-case hex digits)");
        else
                r = trust_store_set(t, path, sha) < 0
                            ? cordon_set_error(c->err, CORDON_LAUNCH_FAILED, ENOMEM,
                                               "out of memory")
                            : 0;
        jread_pop(c);
        return r;
}

static int parse_root(jread *c, json_t *root, trust_store *t) {
        static const char *const keys[] = { "trusted" };
        if (!json_is_object(root))
                return jread_fail(c, false, "write the store as {\"trusted\": [...]}",
                                  "the trust store must be a JSON object, not %s",
                                  jread_type_name(root));
        int r = check_keys(c, root, keys, ELEMENTSOF(keys));
        json_t *list = json_object_get(root, "trusted");
        if (r < 0 || !list)
                return r;
        jread_push_key(c, "trusted");
        r = jread_expect(c, list, json_is_array(list), "an array", "\"trusted\": []");
        if (r >= 0 && json_array_size(list) > TRUST_MAX_ENTRIES)
                r = jread_fail(c, false, "remove entries with 'cordon settings untrust'",
                               "has %zu entries; at most %u", json_array_size(list),
                               TRUST_MAX_ENTRIES);
        for (size_t i = 0; r >= 0 && i < json_array_size(list); i++) {
                jread_push_index(c, i);
                r = parse_entry(c, json_array_get(list, i), t);
                jread_pop(c);
        }
        jread_pop(c);
        return r;
}

int trust_store_parse(const char *origin, const char *text, size_t len, trust_store **ret,
                      cordon_error *err) {
        _cleanup_(trust_store_freep) trust_store *t = calloc(1, sizeof(*t));
        if (!t)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, ENOMEM, "out of memory");
        if (memchr(text, '\0', len))
                return cordon_set_error(err, CORDON_POLICY_INVALID, EINVAL,
                                        "%s: the trust store holds a NUL byte", origin);
        jread c = { .origin = origin, .text = text, .len = len, .err = err };
        json_t *root = NULL;
        int r = jread_parse(&c, "the trust store needs 3", &root);
        if (r < 0)
                return r;
        r = parse_root(&c, root, t);
        json_decref(root);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(t);
        return 0;
}

/* ---- reading ---------------------------------------------------------------------------------- */

/* Whoever can write the store, or replace it, decides which project files may loosen our
 * sandbox: the file must be ours, not writable by others, in a directory only we (or root) can
 * change. */
static int check_owner(const char *path, const struct stat *st, const struct stat *dir,
                       cordon_error *err) {
        uid_t me = geteuid();
        if (st->st_uid != me)
                return cordon_set_error(err, CORDON_POLICY_INVALID, EPERM,
                                        "%s: the trust store belongs to uid %u, who could trust "
                                        "project files for you; remove it and trust again",
                                        path, (unsigned) st->st_uid);
        if (st->st_mode & (S_IWGRP | S_IWOTH))
                return cordon_set_error(err, CORDON_POLICY_INVALID, EPERM,
                                        "%s: the trust store is writable by other users (mode "
                                        "%04o); run chmod 600 %s",
                                        path, (unsigned) (st->st_mode & 07777), path);
        if ((dir->st_uid != me && dir->st_uid != 0) || (dir->st_mode & (S_IWGRP | S_IWOTH)))
                return cordon_set_error(err, CORDON_POLICY_INVALID, EPERM,
                                        "%s: the trust store's directory can be changed by "
                                        "other users (uid %u, mode %04o), who could replace it; "
                                        "run chmod 700 on the directory",
                                        path, (unsigned) dir->st_uid,
                                        (unsigned) (dir->st_mode & 07777));
        return 0;
}

static int stat_dir_of(const char *path, struct stat *ret) {
        _cleanup_free_ char *copy = strdup(path);
        if (!copy)
                return -ENOMEM;
        return stat(dirname(copy), ret) < 0 ? -errno : 0;
}

/* O_NOFOLLOW: the store is cordon's own file; a symlink there was planted, not chosen.
 * O_NONBLOCK: a FIFO must not hang the run; it is refused as not a regular file. */
static int read_store(const char *path, char **ret, size_t *ret_len, cordon_error *err) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK |
                                                    O_NOFOLLOW);
        if (fd < 0 && (errno == ENOENT || errno == ENOTDIR))
                return 0;
        if (fd < 0)
                return cordon_set_error(err, CORDON_POLICY_INVALID, errno,
                                        "%s: cannot open the trust store: %s%s", path,
                                        strerror(errno),
                                        errno == ELOOP ? " (it is a symlink; cordon writes a "
                                                         "regular file there)" : "");
        struct stat st, dir;
        if (fstat(fd, &st) < 0 || stat_dir_of(path, &dir) < 0)
                return cordon_set_error(err, CORDON_POLICY_INVALID, errno, "%s: stat: %s", path,
                                        strerror(errno));
        if (!S_ISREG(st.st_mode))
                return cordon_set_error(err, CORDON_POLICY_INVALID, EINVAL,
                                        "%s: the trust store is not a regular file", path);
        int r = check_owner(path, &st, &dir, err);
        if (r < 0)
                return r;
        r = read_fd_bounded(fd, POLICY_MAX_FILE, ret, ret_len);
        if (r == -EFBIG)
                return cordon_set_error(err, CORDON_POLICY_INVALID, EFBIG,
                                        "%s: the trust store is larger than %u bytes", path,
                                        POLICY_MAX_FILE);
        if (r < 0)
                return cordon_set_error(err, r == -ENOMEM ? CORDON_LAUNCH_FAILED
                                                          : CORDON_POLICY_INVALID,
                                        r, "%s: cannot read the trust store: %s", path,
                                        strerror(-r));
        return 1;
}

int trust_store_load(const char *path, trust_store **ret, cordon_error *err) {
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        int r = read_store(path, &text, &len, err);
        if (r < 0)
                return r;
        if (r == 0) {
                *ret = calloc(1, sizeof(**ret));
                return *ret ? 0 : cordon_set_error(err, CORDON_LAUNCH_FAILED, ENOMEM,
                                                   "out of memory");
        }
        return trust_store_parse(path, text, len, ret, err);
}

/* ---- writing ---------------------------------------------------------------------------------- */

static int cmp_entry(const void *a, const void *b) {
        return strcmp(((const trust_entry *) a)->path, ((const trust_entry *) b)->path);
}

static char *store_to_json(const trust_store *t) {
        trust_entry *sorted = t->n ? calloc(t->n, sizeof(*sorted)) : NULL;
        if (t->n && !sorted)
                return NULL;
        if (t->n) {
                memcpy(sorted, t->v, t->n * sizeof(*sorted));
                qsort(sorted, t->n, sizeof(*sorted), cmp_entry);
        }
        json_t *list = json_array(), *root = json_object();
        bool ok = list && root && json_object_set(root, "trusted", list) == 0;
        for (size_t i = 0; ok && i < t->n; i++)
                ok = json_array_append_new(list, json_pack("{s:s, s:s}", "path", sorted[i].path,
                                                           "sha256", sorted[i].sha256)) == 0;
        char *text = ok ? json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
        json_decref(list);
        json_decref(root);
        free(sorted);
        return text;
}

static int make_dir(const char *dir) {
        return mkdir(dir, 0700) == 0 || errno == EEXIST ? 0 : -errno;
}

/* The store's directory and its parent (~/.config/cordon, ~/.config), 0700 when cordon creates
 * them. */
static int make_parents(const char *path) {
        _cleanup_free_ char *dir = strdup(path);
        if (!dir)
                return -ENOMEM;
        char *slash = strrchr(dir, '/');
        if (!slash || slash == dir)
                return 0;
        *slash = '\0';
        int r = make_dir(dir);
        char *up = strrchr(dir, '/');
        if (r != -ENOENT || !up || up == dir)
                return r;
        *up = '\0';
        r = make_dir(dir);
        *up = '/';
        return r < 0 ? r : make_dir(dir);
}

static int write_tmp(const char *path, const char *text, char **ret_tmp) {
        char *tmp = NULL;
        if (asprintf(&tmp, "%s.XXXXXX", path) < 0)
                return -ENOMEM;
        int fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0) {
                int e = errno;
                free(tmp);
                return -e;
        }
        ssize_t w = fchmod(fd, 0600) < 0 ? -errno : write_all(fd, text, strlen(text));
        if (w >= 0)
                w = write_all(fd, "\n", 1);
        if (w >= 0 && fsync(fd) < 0)
                w = -errno;
        (void) close(fd);
        if (w < 0) {
                (void) unlink(tmp);
                free(tmp);
                return (int) w;
        }
        *ret_tmp = tmp;
        return 0;
}

int trust_store_save(const trust_store *t, const char *path, cordon_error *err) {
        _cleanup_free_ char *text = store_to_json(t), *tmp = NULL;
        if (!text)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, ENOMEM, "out of memory");
        int r = make_parents(path);
        if (r >= 0)
                r = write_tmp(path, text, &tmp);
        if (r >= 0 && rename(tmp, path) < 0) {
                r = -errno;
                (void) unlink(tmp);
        }
        if (r < 0)
                return cordon_set_error(err, CORDON_POLICY_INVALID, -r,
                                        "%s: cannot write the trust store: %s%s", path,
                                        strerror(-r),
                                        r == -EROFS || r == -EACCES || r == -EPERM
                                                ? " (inside a sandbox the trust store is "
                                                  "read-only: trust a project outside it)"
                                                : "");
        return 0;
}
