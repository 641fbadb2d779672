/* SPDX-License-Identifier: Apache-2.0 */
/* Sandbox-owned tool caches: where the cache root lives, and the one safe way to open or create
 * it (docs/design/tool-caches.md). The built-in table is the policy's: tool-cache-table.h. */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>

#include "plan/tool-caches.h"

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
