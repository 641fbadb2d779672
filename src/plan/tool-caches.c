/* SPDX-License-Identifier: Apache-2.0 */
/* Sandbox-owned tool caches: the built-in table, where the cache root lives, and the one safe way
 * to open or create it (docs/design/tool-caches.md). */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>

#include "plan/tool-caches.h"

/* Each variable is documented by its tool as the location of its download cache or store. Not
 * XDG_CACHE_HOME: every XDG program would move its cache, not only the tools listed here.
 * cargo: CARGO_HOME moves registry/ and git/ (the downloads) but also config.toml and bin/; the
 * host's ~/.cargo/bin (programs the user runs) stays read-only where it is and on PATH.
 * pnpm: PNPM_HOME (its store is $PNPM_HOME/store): pnpm 9 and 10 ignore pnpm_config_store_dir,
 * and npm_config_store_dir makes every npm command warn about an unknown setting. */
const tool_cache_builtin plan_builtin_tool_caches[] = {
        { "npm", "npm_config_cache", "npm", NULL, false }, /* npx: <cache>/_npx */
        { "pnpm", "PNPM_HOME", "pnpm", NULL, false },
        { "yarn", "YARN_CACHE_FOLDER", "yarn/cache", NULL, false },
        { "yarn", "YARN_GLOBAL_FOLDER", "yarn/global", NULL, false }, /* yarn 2+ global cache */
        { "bun", "BUN_INSTALL_CACHE_DIR", "bun", NULL, false },
        { "pip", "PIP_CACHE_DIR", "pip", NULL, false },
        { "uv", "UV_CACHE_DIR", "uv", NULL, false },
        { "cargo", "CARGO_HOME", "cargo", NULL, false },
        { "go", "GOMODCACHE", "go/mod", NULL, false },
        { "go", "GOCACHE", "go/build", NULL, false },
        { "gradle", "GRADLE_USER_HOME", "gradle", NULL, false },
        { "maven", "MAVEN_OPTS", "maven/repository", "-Dmaven.repo.local=", true },
        { NULL, NULL, NULL, NULL, false },
};

bool tool_cache_is_builtin_tool(const char *name) {
        for (const tool_cache_builtin *t = plan_builtin_tool_caches; t->tool; t++)
                if (strcmp(t->tool, name) == 0)
                        return true;
        return false;
}

bool tool_cache_is_builtin_env(const char *env) {
        for (const tool_cache_builtin *t = plan_builtin_tool_caches; t->tool; t++)
                if (strcmp(t->env, env) == 0)
                        return true;
        return false;
}

static int root_set(tool_cache_root *r, const char *anchor, const char *first) {
        char rel[NAME_MAX + 32];
        (void) snprintf(rel, sizeof(rel), "%s/cordon/tools", first);
        r->anchor = strdup(anchor);
        r->rel = strdup(rel);
        r->path = r->anchor ? path_join(r->anchor, rel) : NULL;
        if (!r->anchor || !r->rel || !r->path) {
                tool_cache_root_done(r);
                return -ENOMEM;
        }
        return 0;
}

/* XDG_CACHE_HOME as the base directory spec says: absolute, else ignored. */
static int root_from_xdg(const char *xdg, tool_cache_root *ret) {
        _cleanup_free_ char *norm = NULL;
        if (!xdg || policy_check_path(xdg) || path_normalize(xdg, &norm) < 0)
                return 0;
        char *slash = strrchr(norm, '/');
        if (!slash || !slash[1] || strlen(slash + 1) > NAME_MAX)
                return 0; /* "/" itself: no directory of its own to create */
        *slash = '\0';
        int r = root_set(ret, norm[0] ? norm : "/", slash + 1);
        return r < 0 ? r : 1;
}

int tool_cache_root_find(char *const *envp, const char *home, tool_cache_root *ret) {
        *ret = (tool_cache_root) { 0 };
        int r = root_from_xdg(env_get(envp, "XDG_CACHE_HOME"), ret);
        if (r != 0)
                return r < 0 ? r : 0;
        struct stat st;
        /* A home directory that does not exist, or is not the caller's (HOME=/ for a system
         * user), cannot hold the caller's cache: fall back to a directory of its own. */
        if (home && home[0] == '/' && stat(home, &st) == 0 && S_ISDIR(st.st_mode) &&
            st.st_uid == geteuid())
                return root_set(ret, home, ".cache");
        char first[32];
        (void) snprintf(first, sizeof(first), "cordon-%u", (unsigned) geteuid());
        return root_set(ret, "/var/tmp", first);
}

void tool_cache_root_done(tool_cache_root *r) {
        free(r->anchor);
        free(r->rel);
        free(r->path);
        *r = (tool_cache_root) { 0 };
}

/* One component below `dirfd`: never a symlink, the caller's own, writable by nobody else. The
 * last two stop another user from handing us a directory they can still write into (in /var/tmp
 * anyone may create cordon-UID first). */
static int open_component(int dirfd, const char *name, bool create, const char *shown,
                          int *ret_fd, cordon_error *err) {
        *ret_fd = -1;
        if (create && mkdirat(dirfd, name, 0700) < 0 && errno != EEXIST)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, errno,
                                        "tool caches: cannot create %s: %s", shown,
                                        strerror(errno));
        int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 && errno == ENOENT && !create)
                return 0; /* not created yet */
        if (fd < 0)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, errno,
                                        "tool caches: cannot open %s: %s%s", shown,
                                        strerror(errno),
                                        errno == ELOOP || errno == ENOTDIR
                                                ? " (not a directory: a symlink is never followed)"
                                                : "");
        struct stat st;
        if (fstat(fd, &st) < 0) {
                int e = errno;
                (void) close(fd);
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, e,
                                        "tool caches: cannot stat %s: %s", shown, strerror(e));
        }
        if (st.st_uid != geteuid() || (st.st_mode & 022)) {
                (void) close(fd);
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, EPERM,
                                        "tool caches: %s %s; remove it, set XDG_CACHE_HOME to a "
                                        "directory of yours, or turn tool caches off "
                                        "(\"toolCaches\": false)",
                                        shown,
                                        st.st_uid != geteuid() ? "belongs to another user"
                                                               : "is writable by group or others");
        }
        *ret_fd = fd;
        return 1;
}

int tool_cache_root_open(const tool_cache_root *r, bool create, int *ret_fd, cordon_error *err) {
        *ret_fd = -1;
        _cleanup_close_ int fd = open(r->anchor, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, errno,
                                        "tool caches: cannot open %s: %s; set XDG_CACHE_HOME to "
                                        "a directory of yours",
                                        r->anchor, strerror(errno));
        char shown[PATH_MAX];
        size_t at = (size_t) snprintf(shown, sizeof(shown), "%s", r->anchor);
        _cleanup_free_ char *rel = strdup(r->rel);
        if (!rel)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, ENOMEM, "out of memory");
        char *save = NULL;
        for (char *c = strtok_r(rel, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
                if (at < sizeof(shown))
                        at += (size_t) snprintf(shown + at, sizeof(shown) - at, "%s%s",
                                                strcmp(shown, "/") == 0 ? "" : "/", c);
                int next = -1;
                int found = open_component(fd, c, create, shown, &next, err);
                if (found <= 0)
                        return found;
                (void) close(fd);
                fd = next;
        }
        *ret_fd = TAKE_FD(fd);
        return 1;
}

int tool_caches_prepare(const cordon_policy *pol, char *const *envp, const char *home,
                        cordon_error *err) {
        if (!policy_tool_caches_on(pol))
                return 0;
        tool_cache_root root;
        int r = tool_cache_root_find(envp, home, &root);
        if (r < 0)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, -r, "out of memory");
        int fd = -1;
        r = tool_cache_root_open(&root, true, &fd, err);
        tool_cache_root_done(&root);
        (void) safe_close(fd);
        return r < 0 ? r : 0;
}
