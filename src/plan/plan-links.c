/* SPDX-License-Identifier: Apache-2.0 */
/* Hard links made before the run (plan_hard_links, plan-internal.h).
 *
 * A protected file or secret may have other names: `ln .git/config notes.txt` or
 * `ln ~/.ssh/id_rsa key.txt` made before the run, by the user or by an earlier unconfined
 * program. Both backends protect paths (read-only mounts, hides, Landlock rules and name rules
 * on the path), so the other name inside a writable root would be writable (or readable) under
 * its own name. Link counts say when such names may exist: for every existing entry of the set
 * that is a file with st_nlink > 1, or such a file beneath an entry that is a directory, the
 * writable roots on the same device are searched, and every other name found joins the set as a
 * path of its own. The search is bounded; beyond the bound the run is refused, never left
 * unprotected. Names outside the writable roots are read-only anyway. */
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "plan/plan-internal.h"

/* Entries visited, over every directory walked; deeper than DEPTH_MAX is not walked either. */
#define LINKS_SCAN_MAX 200000
#define LINKS_DEPTH_MAX 64

typedef struct inode_id {
        dev_t dev;
        ino_t ino;
} inode_id;

typedef struct link_scan {
        inode_id *want;    /* files of the set with other names */
        size_t n_want;
        strv *found;       /* NULL while collecting, else the other names */
        size_t budget;
} link_scan;

static bool wanted(const link_scan *s, const struct stat *st) {
        for (size_t i = 0; i < s->n_want; i++)
                if (s->want[i].dev == st->st_dev && s->want[i].ino == st->st_ino)
                        return true;
        return false;
}

static int want_add(link_scan *s, const struct stat *st) {
        if (wanted(s, st))
                return 0;
        inode_id *n = realloc(s->want, (s->n_want + 1) * sizeof(*n));
        if (!n)
                return -ENOMEM;
        s->want = n;
        s->want[s->n_want++] = (inode_id) { st->st_dev, st->st_ino };
        return 0;
}

/* A file with other names: collected (s->found NULL) or, when it is one of the wanted files
 * found under another name, recorded. */
static int visit_file(link_scan *s, const char *path, const struct stat *st) {
        if (!S_ISREG(st->st_mode) || st->st_nlink < 2)
                return 0;
        if (!s->found)
                return want_add(s, st);
        if (!wanted(s, st))
                return 0;
        return strv_push_unique(s->found, path);
}

/* Walks `dfd` (taken) without following a symlink. */
static int walk(link_scan *s, int dfd, const char *path, unsigned depth) {
        DIR *d = fdopendir(dfd);
        if (!d) {
                (void) close(dfd);
                return -errno;
        }
        int r = 0;
        for (struct dirent *de; r >= 0 && (de = readdir(d));) {
                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                if (s->budget == 0 || depth >= LINKS_DEPTH_MAX) {
                        r = -E2BIG;
                        break;
                }
                s->budget--;
                struct stat st;
                if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        continue; /* gone since readdir */
                _cleanup_free_ char *sub = path_join(path, de->d_name);
                if (!sub) {
                        r = -ENOMEM;
                        break;
                }
                if (!S_ISDIR(st.st_mode)) {
                        r = visit_file(s, sub, &st);
                        continue;
                }
                int fd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (fd >= 0)
                        r = walk(s, fd, sub, depth + 1);
        }
        (void) closedir(d);
        return r;
}

static int visit(link_scan *s, const char *path) {
        struct stat st;
        if (lstat(path, &st) < 0)
                return 0;
        if (!S_ISDIR(st.st_mode))
                return visit_file(s, path, &st);
        int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        return fd < 0 ? 0 : walk(s, fd, path, 0);
}

/* A protected or secret directory outside the writable roots (~/.ssh, ~/.vscode) is searched
 * for files with other names up to LINKS_OUTSIDE_MAX entries (each run pays for the walk, about
 * 1 µs an entry): ~/.vscode/extensions alone can
 * hold far more, and refusing every run for it would make the default policy unusable. What
 * lies beyond is not searched (docs/design/landlock-backend.md, SECURITY.md). */
#define LINKS_OUTSIDE_MAX 256

static bool same_device_as_a_root(const plan_builder *b, const char *path) {
        struct stat st, rt;
        if (lstat(path, &st) < 0)
                return false;
        for (size_t i = 0; i < b->n_roots; i++)
                if (stat(b->roots[i].resolved, &rt) == 0 && rt.st_dev == st.st_dev)
                        return true;
        return false;
}

static int collect(plan_builder *b, link_scan *s, const char *path) {
        if (plan_beneath_root(b, path))
                return visit(s, path);
        if (!same_device_as_a_root(b, path))
                return 0; /* a hard link never crosses file systems */
        size_t budget = s->budget;
        s->budget = LINKS_OUTSIDE_MAX;
        int r = visit(s, path);
        s->budget = budget;
        return r == -E2BIG ? 0 : r;
}

static bool device_wanted(const link_scan *s, const char *root) {
        struct stat st;
        if (stat(root, &st) < 0)
                return false;
        for (size_t i = 0; i < s->n_want; i++)
                if (s->want[i].dev == st.st_dev)
                        return true;
        return false;
}

static int too_many(plan_builder *b, const char *what) {
        return cordon_set_error(b->err, CORDON_POLICY_UNENFORCEABLE, E2BIG,
                                "a %s has other hard links, and the writable roots are too large "
                                "(more than %u entries or %u levels) to find them all: another "
                                "name would not be protected; hint: break the link (cp FILE "
                                "FILE.new && mv FILE.new FILE), or narrow the writable roots",
                                what, LINKS_SCAN_MAX, LINKS_DEPTH_MAX);
}

int plan_hard_links(plan_builder *b, strv *set, strv *existing, const char *what) {
        link_scan s = { .budget = LINKS_SCAN_MAX };
        strv found = { 0 };
        int r = 0;
        size_t n = existing->n; /* what is added below was found by this search */
        for (size_t i = 0; r >= 0 && i < n; i++)
                r = collect(b, &s, existing->v[i]);
        s.found = &found;
        for (size_t i = 0; r >= 0 && s.n_want > 0 && i < b->n_roots; i++)
                if (device_wanted(&s, b->roots[i].resolved))
                        r = visit(&s, b->roots[i].resolved);
        /* The set gets the name as a rule (its '[' is a name: defused), `existing` as it is. */
        for (size_t i = 0; r >= 0 && i < found.n; i++) {
                if ((r = strv_push_unique(existing, found.v[i])) < 0)
                        break;
                path_defuse_glob(found.v[i]);
                r = strv_push_unique(set, found.v[i]);
        }
        if (r == -E2BIG)
                r = too_many(b, what);
        strv_done(&found);
        free(s.want);
        return r;
}
