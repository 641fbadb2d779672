/* SPDX-License-Identifier: Apache-2.0 */
/* Symlink resolution for deny rules. The kernel (and the creation-rule supervisor) match resolved
 * paths, so a rule written against a symlinked path would never fire: every deny path is emitted
 * as written and resolved (docs/policy.md). Protected paths often do not exist yet (a future
 * ~/.bashrc), so resolution must not stop at the first missing component the way realpath(3)
 * does. Runs at plan time, in the caller's view of the filesystem; changes nothing. */
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <sys/stat.h>

#include "plan/plan-internal.h"

#define MAX_LINKS 40 /* the kernel's own limit (MAXSYMLINKS) */

bool path_is_glob(const char *path) {
        return strpbrk(path, "*?") != NULL;
}

void path_defuse_glob(char *path) {
        for (char *c = path; *c; c++)
                if (*c == '[' || *c == '\\' || (unsigned char) *c < 0x20 || *c == 0x7f)
                        *c = '?';
}

/* Drops the last component of `cur` ("" is the root). */
static void pop_component(char *cur) {
        char *slash = strrchr(cur, '/');
        if (slash)
                *slash = '\0';
}

/* Replaces *rest with target + "/" + remainder. */
static int splice_link(char **rest, const char *remainder, const char *target) {
        size_t tl = strlen(target), rl = strlen(remainder);
        if (tl + rl + 2 > 2 * PATH_MAX)
                return -ENAMETOOLONG;
        char *n = malloc(tl + rl + 2);
        if (!n)
                return -ENOMEM;
        memcpy(n, target, tl);
        n[tl] = '/';
        memcpy(n + tl + 1, remainder, rl + 1);
        free(*rest);
        *rest = n;
        return 0;
}

/* A plan resolves some 300 paths that share a few prefixes (the workspace, $HOME): within one
 * plan_build(), each existing non-symlink prefix is lstat()ed once. Start-up pays for every
 * syscall here (700 lstat calls were 0.3 ms of a 4 ms start), and a symlink swapped in after
 * planning is caught anyway when the plan is applied (RESOLVE_NO_SYMLINKS). Per thread, so
 * concurrent plans in one process do not share it; empty outside resolve_cache_begin/end. */
#define RESOLVE_CACHE_SLOTS 512
static __thread struct {
        bool on;
        unsigned n;
        char *slot[RESOLVE_CACHE_SLOTS];
} rcache;

static size_t rcache_hash(const char *p) {
        size_t h = 1469598103934665603ULL; /* FNV-1a */
        for (; *p; p++)
                h = (h ^ (unsigned char) *p) * 1099511628211ULL;
        return h % RESOLVE_CACHE_SLOTS;
}

static bool rcache_lookup(const char *p, bool add) {
        if (!rcache.on)
                return false;
        for (size_t i = rcache_hash(p), k = 0; k < RESOLVE_CACHE_SLOTS; k++) {
                char **s = &rcache.slot[(i + k) % RESOLVE_CACHE_SLOTS];
                if (!*s) {
                        /* Keep a quarter free so probes stay short; a full cache only costs
                         * syscalls, never correctness. */
                        if (add && rcache.n < RESOLVE_CACHE_SLOTS * 3 / 4 && (*s = strdup(p)))
                                rcache.n++;
                        return false;
                }
                if (strcmp(*s, p) == 0)
                        return true;
        }
        return false;
}

void resolve_cache_begin(void) {
        resolve_cache_end();
        rcache.on = true;
}

void resolve_cache_end(void) {
        for (size_t i = 0; i < RESOLVE_CACHE_SLOTS; i++) {
                free(rcache.slot[i]);
                rcache.slot[i] = NULL;
        }
        rcache.n = 0;
        rcache.on = false;
}

/* One step: appends component c (len cl) to cur, following it if it is a symlink. Once a
 * component is missing (*missing), nothing below it can exist, so the rest is appended as text
 * without asking the filesystem again. */
static int resolve_step(char *cur, const char *c, size_t cl, char **rest, const char *remainder,
                        unsigned *links, bool *missing) {
        size_t len = strlen(cur);
        if (len + 1 + cl >= PATH_MAX)
                return -ENAMETOOLONG;
        cur[len] = '/';
        memcpy(cur + len + 1, c, cl);
        cur[len + 1 + cl] = '\0';
        if (*missing || rcache_lookup(cur, false))
                return 0;
        char neg[PATH_MAX + 1]; /* the cache key of "known missing": a byte no path starts with */
        neg[0] = '!';
        memcpy(neg + 1, cur, len + 1 + cl + 1);
        if (rcache_lookup(neg, false)) {
                *missing = true;
                return 0;
        }
        struct stat st;
        if (lstat(cur, &st) < 0) {
                /* Missing or not searchable: nothing below can be a symlink we can see, so the
                 * rest is appended as text. */
                *missing = true;
                (void) rcache_lookup(neg, true);
                return 0;
        }
        if (!S_ISLNK(st.st_mode)) {
                (void) rcache_lookup(cur, true);
                return 0;
        }
        if (++*links > MAX_LINKS)
                return -ELOOP;
        char target[PATH_MAX];
        ssize_t n = readlink(cur, target, sizeof(target) - 1);
        if (n <= 0)
                return n < 0 ? -errno : -ENOENT;
        target[n] = '\0';
        cur[len] = '\0'; /* a relative target starts from the link's directory */
        if (target[0] == '/')
                cur[0] = '\0';
        return splice_link(rest, remainder, target);
}

int path_resolve_lenient(const char *path, char **ret) {
        if (!path_is_absolute(path))
                return -EINVAL;
        _cleanup_free_ char *cur = malloc(PATH_MAX), *rest = strdup(path);
        if (!cur || !rest)
                return -ENOMEM;
        cur[0] = '\0'; /* "" is "/" */
        unsigned links = 0;
        size_t pos = 0;
        bool missing = false;
        for (;;) {
                while (rest[pos] == '/')
                        pos++;
                if (!rest[pos])
                        break;
                const char *c = rest + pos;
                size_t cl = strcspn(c, "/");
                pos += cl;
                if (cl == 1 && c[0] == '.')
                        continue;
                if (cl == 2 && c[0] == '.' && c[1] == '.') {
                        pop_component(cur);
                        missing = false; /* back above the missing component: look again */
                        continue;
                }
                _cleanup_free_ char *remainder = strdup(rest + pos);
                if (!remainder)
                        return -ENOMEM;
                char *before = rest;
                int r = resolve_step(cur, c, cl, &rest, remainder, &links, &missing);
                if (r < 0)
                        return r;
                if (rest != before)
                        pos = 0; /* the link's target was spliced in front of the remainder */
        }
        if (!cur[0])
                strcpy(cur, "/");
        *ret = TAKE_PTR(cur);
        return 0;
}

/* For a glob: resolves the directory part before the first wildcard component. */
static int resolve_glob_prefix(const char *glob, char **ret) {
        const char *w = strpbrk(glob, "*?");
        const char *slash = w;
        while (slash > glob && *slash != '/')
                slash--;
        if (slash == glob) /* "/x*": nothing to resolve */
                return -ENOENT;
        _cleanup_free_ char *dir = strndup(glob, (size_t) (slash - glob)), *rdir = NULL;
        if (!dir)
                return -ENOMEM;
        int r = path_resolve_lenient(dir, &rdir);
        if (r < 0)
                return r;
        path_defuse_glob(rdir); /* a real directory: its '[' is a name, not syntax */
        *ret = path_join(rdir, slash + 1);
        return *ret ? 0 : -ENOMEM;
}

int path_push_forms(strv *list, const char *path) {
        bool glob = path_is_glob(path);
        _cleanup_free_ char *literal = strdup(path), *resolved = NULL;
        if (!literal)
                return -ENOMEM;
        if (!glob)
                path_defuse_glob(literal);
        int r = strv_push_unique(list, literal);
        if (r < 0)
                return r;
        r = glob ? resolve_glob_prefix(path, &resolved) : path_resolve_lenient(path, &resolved);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return 0; /* does not resolve (a loop, too long): stays as written */
        if (!glob)
                path_defuse_glob(resolved);
        return strv_push_unique(list, resolved);
}

int path_exists(const char *path, bool *is_dir) {
        struct stat st;
        if (lstat(path, &st) < 0 || S_ISLNK(st.st_mode))
                return 0;
        if (is_dir)
                *is_dir = S_ISDIR(st.st_mode);
        return 1;
}

static int push_existing(strv *ret, const char *path) {
        _cleanup_free_ char *resolved = NULL;
        int r = path_resolve_lenient(path, &resolved);
        if (r == -ENOMEM)
                return r;
        if (r < 0 || !path_exists(resolved, NULL))
                return 0;
        return strv_push_unique(ret, resolved);
}

int path_expand_existing(const char *path, strv *ret) {
        if (!path_is_glob(path))
                return push_existing(ret, path);
        glob_t g = { 0 };
        int gr = glob(path, GLOB_NOSORT, NULL, &g);
        if (gr == GLOB_NOSPACE) {
                globfree(&g);
                return -ENOMEM;
        }
        int r = 0;
        if (gr == 0 && g.gl_pathc > POLICY_MAX_LIST)
                r = -E2BIG;
        for (size_t i = 0; gr == 0 && r >= 0 && i < g.gl_pathc; i++)
                r = push_existing(ret, g.gl_pathv[i]);
        globfree(&g);
        return r;
}
