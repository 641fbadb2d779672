/* SPDX-License-Identifier: Apache-2.0 */
/* `cordon cache list` and `cordon cache clear [TOOL]`: the sandbox-owned tool caches
 * (docs/design/tool-caches.md). Everything below the cache root was written by sandboxed
 * commands, so this code treats it as hostile: it walks with openat(O_NOFOLLOW) from the root it
 * opened the checked way, never follows a symlink (a link to ~/src must lose the link, not ~/src),
 * never crosses into another filesystem (a mountpoint is left alone), and stops at a depth
 * bound instead of running out of descriptors. */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>

#include "cli/cli-policy.h"
#include "cli/cmd-cache.h"
#include "plan/tool-caches.h"
#include "policy/tool-cache-table.h"

#define CACHE_MAX_DEPTH 256

typedef struct walk {
        dev_t dev;        /* the root's filesystem */
        uint64_t bytes;   /* list: blocks in use */
        int err;          /* the first error, -errno */
        const char *what; /* its path below the root, for the message */
} walk;

static void walk_fail(walk *w, int r, const char *name) {
        if (w->err == 0) {
                w->err = r;
                w->what = name;
        }
}

/* Opens the directory `name` below dirfd, never through a symlink. For removal, a directory the
 * command made unreadable (chmod 000) is made 0700 first, through an O_PATH descriptor of that
 * very directory: chmod by name could be raced into a symlink and change a file outside. */
static int open_subdir(int dirfd, const char *name, bool remove) {
        int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd >= 0 || errno != EACCES || !remove)
                return fd < 0 ? -errno : fd;
        _cleanup_close_ int path = openat(dirfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        char self[64];
        (void) snprintf(self, sizeof(self), "/proc/self/fd/%d", path);
        if (path < 0 || chmod(self, 0700) < 0)
                return -EACCES;
        fd = openat(path, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        return fd < 0 ? -errno : fd;
}

/* Visits every entry below dirfd (which it closes); with `remove`, unlinks it too. */
static void walk_dir(int dirfd, bool remove, unsigned depth, walk *w) {
        DIR *d = fdopendir(dirfd);
        if (!d) {
                walk_fail(w, -errno, "?");
                (void) close(dirfd);
                return;
        }
        /* Go makes its module cache read-only; the owner may always make it writable again. */
        if (remove)
                (void) fchmod(dirfd, 0700);
        struct dirent *e;
        while ((e = readdir(d))) {
                if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                        continue;
                struct stat st;
                if (fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                        walk_fail(w, -errno, e->d_name);
                        continue;
                }
                w->bytes += (uint64_t) st.st_blocks * 512;
                if (S_ISDIR(st.st_mode)) {
                        if (st.st_dev != w->dev) {
                                walk_fail(w, -EXDEV, e->d_name);
                                continue;
                        }
                        if (depth >= CACHE_MAX_DEPTH) {
                                walk_fail(w, -ELOOP, e->d_name);
                                continue;
                        }
                        int fd = open_subdir(dirfd, e->d_name, remove);
                        if (fd < 0) {
                                walk_fail(w, fd, e->d_name);
                                continue;
                        }
                        walk_dir(fd, remove, depth + 1, w);
                }
                if (remove && unlinkat(dirfd, e->d_name, S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0) < 0)
                        walk_fail(w, -errno, e->d_name);
        }
        (void) closedir(d);
}

/* The root, opened the checked way; 0 with *ret_fd -1 when it does not exist yet. */
static int open_root(tool_cache_root *root, int *ret_fd, cordon_error *err) {
        extern char **environ;
        _cleanup_free_ char *home = cli_home_dir();
        int r = tool_cache_root_find(environ, home, root);
        if (r < 0)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, -r, "out of memory");
        return tool_cache_root_open(root, false, ret_fd, err);
}

static const char *tool_label(const char *name) {
        for (const tool_cache_builtin *t = policy_builtin_tool_caches; t->tool; t++) {
                size_t n = strcspn(t->subdir, "/");
                if (strlen(name) == n && strncmp(t->subdir, name, n) == 0)
                        return t->tool;
        }
        return "(policy toolCaches.extra, or left over)";
}

static void print_size(uint64_t bytes, char *buf, size_t size) {
        static const char units[] = "KMGT";
        double v = (double) bytes / 1024;
        size_t u = 0;
        while (v >= 1024 && u + 1 < sizeof(units) - 1) {
                v /= 1024;
                u++;
        }
        (void) snprintf(buf, size, "%.1f%c", v, units[u]);
}

/* A name from the cache as printable ASCII: the tree is the sandbox's, and a name with escape
 * sequences must not drive the user's terminal. */
static const char *printable(const char *name, char *buf, size_t size) {
        size_t i = 0;
        for (; name[i] && i + 1 < size; i++)
                buf[i] = name[i] > 0x20 && name[i] < 0x7f ? name[i] : '?';
        buf[i] = '\0';
        return buf;
}

/* One line per directory of the root: NAME SIZE TOOL. */
static int list_root(int rootfd, const char *path, cordon_error *err) {
        _cleanup_close_ int scan = fcntl(rootfd, F_DUPFD_CLOEXEC, 3);
        DIR *d = scan >= 0 ? fdopendir(scan) : NULL;
        if (!d)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, errno, "%s: %s", path,
                                        strerror(errno));
        scan = -1; /* owned by d */
        struct stat rst;
        (void) fstat(rootfd, &rst);
        printf("%s\n", path);
        struct dirent *e;
        while ((e = readdir(d))) {
                if (e->d_name[0] == '.' && (!e->d_name[1] || strcmp(e->d_name, "..") == 0))
                        continue;
                int fd = open_subdir(rootfd, e->d_name, false);
                walk w = { .dev = rst.st_dev };
                if (fd >= 0)
                        walk_dir(fd, false, 1, &w);
                char size[32], shown[NAME_MAX + 1];
                print_size(w.bytes, size, sizeof(size));
                printf("  %-12s %8s  %s%s\n", printable(e->d_name, shown, sizeof(shown)),
                       fd < 0 ? "-" : size, tool_label(e->d_name),
                       fd < 0 ? " (not a directory)" : "");
        }
        (void) closedir(d);
        return fflush(stdout) == 0 ? 0 : cordon_set_error(err, CORDON_LAUNCH_FAILED, EIO,
                                                          "cannot write to standard output");
}

/* Removes the entry `name` of the root, whatever it is; 0 when it was not there. */
static int clear_entry(int rootfd, const char *name, const char *root, cordon_error *err) {
        struct stat st, rst;
        if (fstatat(rootfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0
                                       : cordon_set_error(err, CORDON_LAUNCH_FAILED, errno,
                                                          "%s/%s: %s", root, name, strerror(errno));
        walk w = { 0 };
        if (S_ISDIR(st.st_mode) && fstat(rootfd, &rst) == 0) {
                w.dev = rst.st_dev;
                int fd = open_subdir(rootfd, name, true);
                if (fd < 0)
                        walk_fail(&w, fd, name);
                else
                        walk_dir(fd, true, 1, &w);
        }
        if (w.err == 0 &&
            unlinkat(rootfd, name, S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0) < 0)
                walk_fail(&w, -errno, name);
        if (w.err < 0)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, w.err,
                                        "clearing %s/%s: %s (at '%s'); nothing outside the cache "
                                        "was touched",
                                        root, name, strerror(-w.err), w.what);
        return 1;
}

/* The directories of the root that belong to `tool`: its built-in subdirectories' first parts,
 * else (toolCaches.extra) the name itself. */
static int clear_tool(int rootfd, const char *tool, const char *root, cordon_error *err) {
        bool builtin = tool_cache_is_builtin_tool(tool);
        if (!builtin && policy_check_tool_cache_name(tool))
                return cordon_set_error(err, CORDON_USAGE, EINVAL,
                                        "no tool cache '%s'; 'cordon cache list' shows them",
                                        tool);
        int found = 0;
        for (const tool_cache_builtin *t = policy_builtin_tool_caches; builtin && t->tool; t++) {
                if (strcmp(t->tool, tool) != 0)
                        continue;
                char first[64];
                (void) snprintf(first, sizeof(first), "%.*s", (int) strcspn(t->subdir, "/"),
                                t->subdir);
                int r = clear_entry(rootfd, first, root, err);
                if (r < 0)
                        return r;
                found |= r;
        }
        if (!builtin) {
                int r = clear_entry(rootfd, tool, root, err);
                if (r <= 0)
                        return r < 0 ? r
                                     : cordon_set_error(err, CORDON_USAGE, ENOENT,
                                                        "no tool cache '%s' in %s; 'cordon cache "
                                                        "list' shows them",
                                                        tool, root);
                found = 1;
        }
        printf("%s: %s\n", tool, found ? "cleared" : "nothing cached");
        return 0;
}

static int clear_all(int rootfd, const char *root, cordon_error *err) {
        struct stat rst;
        int fd = fcntl(rootfd, F_DUPFD_CLOEXEC, 3);
        if (fd < 0 || fstat(rootfd, &rst) < 0) {
                int e = errno;
                (void) safe_close(fd);
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, e, "%s: %s", root, strerror(e));
        }
        walk w = { .dev = rst.st_dev };
        walk_dir(fd, true, 1, &w);
        /* fchmod() in walk_dir() made the root 0700 again, which it was created as. */
        if (w.err < 0)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, w.err,
                                        "clearing %s: %s (at '%s'); nothing outside the cache "
                                        "was touched",
                                        root, strerror(-w.err), w.what);
        printf("cleared %s\n", root);
        return 0;
}

int cli_cmd_cache(const cli_args *a, cordon_error *err) {
        tool_cache_root root = { 0 };
        int fd = -1;
        int r = open_root(&root, &fd, err);
        if (r == 0) {
                printf("no tool caches yet (%s does not exist)\n", root.path);
        } else if (r > 0) {
                if (a->cache_clear && a->cache_tool)
                        r = clear_tool(fd, a->cache_tool, root.path, err);
                else if (a->cache_clear)
                        r = clear_all(fd, root.path, err);
                else
                        r = list_root(fd, root.path, err);
        }
        (void) safe_close(fd);
        tool_cache_root_done(&root);
        if (r >= 0 && fflush(stdout) != 0)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, EIO,
                                        "cannot write to standard output");
        return r < 0 ? r : 0;
}
