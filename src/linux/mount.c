/* SPDX-License-Identifier: Apache-2.0 */
#include "linux/mount.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "util/uapi.h"

/* Host device nodes bound into the minimal /dev. Nothing else of the host's /dev is visible. */
static const char *const dev_nodes[] = { "null", "zero", "full", "random", "urandom", "tty" };
static const struct { const char *name, *target; } dev_links[] = {
        { "fd", "/proc/self/fd" },        { "stdin", "/proc/self/fd/0" },
        { "stdout", "/proc/self/fd/1" },  { "stderr", "/proc/self/fd/2" },
        { "ptmx", "pts/ptmx" },
};

/* openat2 with RESOLVE_NO_SYMLINKS: a path from the plan is already resolved, so any symlink met
 * now was swapped in after planning and must not redirect a mount. */
static int open_nofollow(int dirfd, const char *path, int flags, uint64_t extra_resolve) {
        struct open_how how = {
                .flags = (uint64_t) (flags | O_CLOEXEC),
                .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | extra_resolve,
        };
        int fd = (int) syscall(__NR_openat2, dirfd, path, &how, sizeof(how));
        return fd < 0 ? -errno : fd;
}

static const char *rel(const char *abs_path) {
        while (*abs_path == '/')
                abs_path++;
        return *abs_path ? abs_path : ".";
}

/* `link`: the final component is a symlink to bind onto itself (mount_op.is_link): opened with
 * O_NOFOLLOW, so the link, not what it names, is cloned. */
static int clone_tree(int dirfd, const char *path, bool recursive, bool link) {
        _cleanup_close_ int fd = open_nofollow(dirfd, path, O_PATH | (link ? O_NOFOLLOW : 0), 0);
        if (fd < 0)
                return fd;
        int tree = open_tree(fd, "", AT_EMPTY_PATH | OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC |
                                             (recursive ? AT_RECURSIVE : 0));
        return tree < 0 ? -errno : tree;
}

static int set_attr(int treefd, uint64_t set, uint64_t clr, bool recursive) {
        struct mount_attr attr = { .attr_set = set, .attr_clr = clr };
        if (mount_setattr(treefd, "", AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0), &attr,
                          sizeof(attr)) < 0)
                return -errno;
        return 0;
}

/* Creates the mount point when it is missing: only possible inside a tmpfs the sandbox made
 * (e.g. a writable root under the private /tmp); the read-only host tree refuses. */
static int ensure_mountpoint(int rootfd, const char *path, bool is_dir) {
        int fd = open_nofollow(rootfd, rel(path), O_PATH, RESOLVE_BENEATH);
        if (fd != -ENOENT)
                return fd;
        _cleanup_free_ char *copy = strdup(rel(path));
        if (!copy)
                return -ENOMEM;
        for (char *s = strchr(copy, '/'); s; s = strchr(s + 1, '/')) {
                *s = '\0';
                if (mkdirat(rootfd, copy, 0755) < 0 && errno != EEXIST)
                        return -errno;
                *s = '/';
        }
        if (is_dir) {
                if (mkdirat(rootfd, copy, 0755) < 0 && errno != EEXIST)
                        return -errno;
        } else {
                int f = openat(rootfd, copy, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOFOLLOW,
                               0644);
                if (f < 0)
                        return -errno;
                (void) close(f);
        }
        return open_nofollow(rootfd, copy, O_PATH, RESOLVE_BENEATH);
}

static int attach(int treefd, int rootfd, const char *path, bool is_dir, bool link) {
        /* A link is bound onto itself: it exists in the new root (the host's tree), and is
         * opened without being followed (move_mount without MOVE_MOUNT_T_SYMLINKS). */
        _cleanup_close_ int target = link ? open_nofollow(rootfd, rel(path), O_PATH | O_NOFOLLOW,
                                                          RESOLVE_BENEATH)
                                          : ensure_mountpoint(rootfd, path, is_dir);
        if (target < 0)
                return target;
        if (move_mount(treefd, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) <
            0)
                return -errno;
        return 0;
}

/* A new, detached filesystem instance (tmpfs, devpts) with options, as a mount fd. */
static int new_fs(const char *type, const char *const *opts, uint64_t attrs) {
        _cleanup_close_ int fs = fsopen(type, FSOPEN_CLOEXEC);
        if (fs < 0)
                return -errno;
        for (size_t i = 0; opts && opts[i]; i += 2)
                if (fsconfig(fs, FSCONFIG_SET_STRING, opts[i], opts[i + 1], 0) < 0)
                        return -errno;
        if (fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
                return -errno;
        int m = fsmount(fs, FSMOUNT_CLOEXEC, (unsigned) attrs);
        return m < 0 ? -errno : m;
}

typedef struct mount_ctx {
        const plan *p;
        int *trees;  /* source trees cloned before anything changed, indexed like p->mounts */
        int rootfd;  /* the new root, attached and open */
        int emptyfd; /* a detached tmpfs holding "empty", the source for hiding files */
} mount_ctx;

/* Clones every bind source while the namespace still shows the host's tree unchanged: attaching
 * the new root (over /tmp) would otherwise hide host paths under /tmp from later lookups. */
static int preclone_sources(mount_ctx *c, cordon_error *err) {
        for (size_t i = 0; i < c->p->n_mounts; i++) {
                const mount_op *op = &c->p->mounts[i];
                if (op->kind != MOUNT_OP_BIND_RW && op->kind != MOUNT_OP_BIND_RO)
                        continue;
                int t = clone_tree(AT_FDCWD, op->path, true, op->is_link);
                if (t == -ENOENT && op->kind == MOUNT_OP_BIND_RO)
                        continue; /* vanished since planning: the creation rules still cover it */
                if (t < 0)
                        return cordon_set_error(err, CORDON_LAUNCH_FAILED, t,
                                                "cannot bind %s (%s) %s: %s", op->why,
                                                mount_op_kind_to_string(op->kind), op->path,
                                                strerror(-t));
                c->trees[i] = t;
                uint64_t set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
                if (op->kind == MOUNT_OP_BIND_RO)
                        set |= MOUNT_ATTR_RDONLY;
                int r = set_attr(t, set, 0, true);
                if (r < 0)
                        return cordon_set_error(err, CORDON_LAUNCH_FAILED, r,
                                                "cannot restrict the bind of %s: %s", op->path,
                                                strerror(-r));
        }
        return 0;
}

/* The host's whole tree, recursively read-only, nosuid and nodev, attached over /tmp of this
 * (private) namespace so it can become the new root. */
static int attach_root(mount_ctx *c, cordon_error *err) {
        _cleanup_close_ int tree = clone_tree(AT_FDCWD, "/", true, false);
        if (tree < 0)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, tree,
                                        "cannot clone the root mount tree: %s", strerror(-tree));
        int r = set_attr(tree, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, 0, true);
        if (r < 0)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, r,
                                        "cannot make the root read-only: %s", strerror(-r));
        if (move_mount(tree, "", AT_FDCWD, "/tmp", MOVE_MOUNT_F_EMPTY_PATH) < 0)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, errno,
                                        "cannot attach the new root: %s", strerror(errno));
        c->rootfd = open_nofollow(AT_FDCWD, "/tmp", O_PATH | O_DIRECTORY, 0);
        if (c->rootfd < 0)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, c->rootfd,
                                        "cannot open the new root: %s", strerror(-c->rootfd));
        return 0;
}

static int make_empty_source(mount_ctx *c) {
        static const char *const opts[] = { "mode", "0755", NULL };
        c->emptyfd = new_fs("tmpfs", opts, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
        if (c->emptyfd < 0)
                return c->emptyfd;
        int f = openat(c->emptyfd, "empty", O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0);
        if (f < 0)
                return -errno;
        (void) close(f);
        return 0;
}

static int populate_dev(int devfd) {
        for (size_t i = 0; i < ELEMENTSOF(dev_nodes); i++) {
                char host[64];
                (void) snprintf(host, sizeof(host), "/dev/%s", dev_nodes[i]);
                _cleanup_close_ int tree = clone_tree(AT_FDCWD, host, false, false);
                if (tree == -ENOENT)
                        continue; /* not on this host (some containers): the command lacks it too */
                if (tree < 0)
                        return tree;
                int f = openat(devfd, dev_nodes[i], O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0666);
                if (f < 0)
                        return -errno;
                (void) close(f);
                if (move_mount(tree, "", devfd, dev_nodes[i], MOVE_MOUNT_F_EMPTY_PATH) < 0)
                        return -errno;
        }
        for (size_t i = 0; i < ELEMENTSOF(dev_links); i++)
                if (symlinkat(dev_links[i].target, devfd, dev_links[i].name) < 0)
                        return -errno;
        if (mkdirat(devfd, "pts", 0755) < 0 || mkdirat(devfd, "shm", 01777) < 0)
                return -errno;
        return 0;
}

/* A minimal /dev: a private tmpfs with the harmless host nodes bound in, and a private devpts
 * instance so the command's pseudo-terminals are not the host's. */
static int mount_dev(mount_ctx *c, const char *path) {
        static const char *const tmpfs_opts[] = { "mode", "0755", NULL };
        static const char *const pts_opts[] = { "ptmxmode", "0666", "mode", "0620", NULL };
        _cleanup_close_ int m = new_fs("tmpfs", tmpfs_opts, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC);
        if (m < 0)
                return m;
        int r = attach(m, c->rootfd, path, true, false);
        if (r < 0)
                return r;
        _cleanup_close_ int devfd = open_nofollow(c->rootfd, rel(path), O_PATH | O_DIRECTORY,
                                                  RESOLVE_BENEATH);
        if (devfd < 0)
                return devfd;
        r = populate_dev(devfd);
        if (r < 0)
                return r;
        _cleanup_close_ int pts = new_fs("devpts", pts_opts, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC);
        if (pts < 0)
                return pts;
        if (move_mount(pts, "", devfd, "pts", MOVE_MOUNT_F_EMPTY_PATH) < 0)
                return -errno;
        return 0;
}

/* Covers a secret with an empty, read-only, mode-000 directory or file. The plan only names
 * resolved paths, so a symlink met here (ELOOP) was swapped in after planning: fail closed. */
/* A detached, read-only, noexec mount of the file `name` of the tmpfs `fs`, to move over a file:
 * the source of a hidden file and of mount_file_over(). A tree fd, or -errno. */
static int readonly_file_tree(int fs, const char *name) {
        int tree = open_tree(fs, name, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
        if (tree < 0)
                return -errno;
        int r = set_attr(tree, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
                                       MOUNT_ATTR_NOEXEC, 0, false);
        if (r < 0) {
                (void) close(tree);
                return r;
        }
        return tree;
}

/* The ops after m[i] whose mountpoint lies in the cover of m[i] (nothing between them): a read
 * narrowing cover (plan/plan-reads.c) keeps the roots beneath it. */
static bool mounted_in(const plan *p, size_t i, size_t j) {
        const char *top = p->mounts[i].path, *sub = p->mounts[j].path;
        if (!path_startswith(sub, top) || strcmp(sub, top) == 0)
                return false;
        for (size_t k = i + 1; k < j; k++)
                if (path_startswith(sub, p->mounts[k].path) &&
                    path_startswith(p->mounts[k].path, top))
                        return false;
        return true;
}

/* Creates, in the detached tmpfs `fs` that will cover p->mounts[i], the mountpoint of each later
 * op that lands in it: the directories along the way mode 0711 (traversable, not listable: the
 * names of the other entries stay unknown), the last one a directory or an empty file. */
static bool has_mountpoints(const plan *p, size_t i) {
        for (size_t j = i + 1; j < p->n_mounts; j++)
                if (mounted_in(p, i, j))
                        return true;
        return false;
}

static int make_mountpoints(const plan *p, size_t i, int fs) {
        size_t skip = strlen(p->mounts[i].path);
        for (size_t j = i + 1; j < p->n_mounts; j++) {
                if (!mounted_in(p, i, j))
                        continue;
                _cleanup_free_ char *copy = strdup(p->mounts[j].path + skip + 1);
                if (!copy)
                        return -ENOMEM;
                for (char *s = strchr(copy, '/'); s; s = strchr(s + 1, '/')) {
                        *s = '\0';
                        if (mkdirat(fs, copy, 0711) < 0 && errno != EEXIST)
                                return -errno;
                        *s = '/';
                }
                if (p->mounts[j].is_dir) {
                        if (mkdirat(fs, copy, 0711) < 0 && errno != EEXIST)
                                return -errno;
                        continue;
                }
                int f = openat(fs, copy, O_CREAT | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0444);
                if (f < 0)
                        return -errno;
                (void) close(f);
        }
        return 0;
}

/* A directory's cover: an empty tmpfs, mode 000, or mode 0711 with the mountpoints of the
 * mounts made beneath it (a read narrowing cover); read-only once they exist. */
static int hide_dir_tree(mount_ctx *c, size_t i) {
        bool keep = has_mountpoints(c->p, i);
        const char *const opts[] = { "mode", keep ? "0711" : "000", NULL };
        int tree = new_fs("tmpfs", opts, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
        if (tree < 0)
                return tree;
        int r = keep ? make_mountpoints(c->p, i, tree) : 0;
        if (r >= 0)
                r = set_attr(tree, MOUNT_ATTR_RDONLY, 0, false);
        if (r < 0) {
                (void) close(tree);
                return r;
        }
        return tree;
}

static int hide(mount_ctx *c, const mount_op *op) {
        _cleanup_close_ int target = open_nofollow(c->rootfd, rel(op->path), O_PATH,
                                                   RESOLVE_BENEATH);
        if (target == -ENOENT)
                return 0; /* gone since planning: nothing to read; creation rules keep it gone */
        if (target < 0)
                return target;
        _cleanup_close_ int tree = -1;
        if (op->is_dir)
                tree = hide_dir_tree(c, (size_t) (op - c->p->mounts));
        else {
                if (c->emptyfd < 0) {
                        int r = make_empty_source(c); /* on first use: most runs hide no file */
                        if (r < 0)
                                return r;
                }
                tree = readonly_file_tree(c->emptyfd, "empty");
        }
        if (tree < 0)
                return tree;
        if (move_mount(tree, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
                return -errno;
        return 0;
}

/* A private /tmp or /dev/shm, bounded: tmpfs's own default (half of RAM, as many inodes as half
 * of RAM's pages) would let one command pin the host's memory (plan-limits.c). */
static int new_private_tmpfs(const mount_op *op) {
        char size[32], inodes[32];
        (void) snprintf(size, sizeof(size), "%llu", (unsigned long long) op->tmpfs_bytes);
        (void) snprintf(inodes, sizeof(inodes), "%llu",
                        (unsigned long long) plan_tmpfs_inodes(op->tmpfs_bytes));
        const char *const opts[] = { "mode", "1777", "size", size, "nr_inodes", inodes, NULL };
        if (op->tmpfs_bytes == 0)
                return -EINVAL; /* never unbounded */
        return new_fs("tmpfs", opts, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
}

static int apply_op(mount_ctx *c, size_t i) {
        const mount_op *op = &c->p->mounts[i];
        switch (op->kind) {
        case MOUNT_OP_ROOT_RO:
        case MOUNT_OP_PROC: /* the PID namespace's init mounts it: mount_proc() */
                return 0;
        case MOUNT_OP_DEV:
                return mount_dev(c, op->path);
        case MOUNT_OP_TMPFS: {
                _cleanup_close_ int m = new_private_tmpfs(op);
                return m < 0 ? m : attach(m, c->rootfd, op->path, true, false);
        }
        case MOUNT_OP_BIND_RW:
        case MOUNT_OP_BIND_RO:
                return c->trees[i] < 0 ? 0
                                       : attach(c->trees[i], c->rootfd, op->path, op->is_dir,
                                                op->is_link);
        case MOUNT_OP_HIDE:
                return hide(c, op);
        case _MOUNT_OP_MAX:
        default:
                return -EINVAL;
        }
}

static int pivot_into(int rootfd) {
        if (fchdir(rootfd) < 0)
                return -errno;
        /* pivot_root(".", "."): the old root ends up stacked on the new one and is detached at
         * once, so no path inside can reach the host's tree again. */
        if (syscall(SYS_pivot_root, ".", ".") < 0)
                return -errno;
        if (umount2(".", MNT_DETACH) < 0)
                return -errno;
        if (chdir("/") < 0)
                return -errno;
        return 0;
}

static void mount_ctx_done(mount_ctx *c) {
        for (size_t i = 0; c->trees && i < c->p->n_mounts; i++)
                safe_close(c->trees[i]);
        free(c->trees);
        safe_close(c->rootfd);
        safe_close(c->emptyfd);
}

int mount_build_root(const plan *p, cordon_error *err) {
        _cleanup_(mount_ctx_done) mount_ctx c = { .p = p, .rootfd = -1, .emptyfd = -1 };
        c.trees = malloc((p->n_mounts + 1) * sizeof(int));
        if (!c.trees)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, ENOMEM, "out of memory");
        for (size_t i = 0; i < p->n_mounts; i++)
                c.trees[i] = -1;
        /* Stop propagation both ways: nothing done here reaches the host, and host mount events
         * cannot add paths inside the sandbox. */
        if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, errno,
                                        "cannot make mounts private: %s", strerror(errno));
        int r = preclone_sources(&c, err);
        if (r < 0)
                return r;
        r = attach_root(&c, err);
        if (r < 0)
                return r;
        for (size_t i = 0; i < p->n_mounts; i++) {
                r = apply_op(&c, i);
                if (r < 0)
                        return cordon_set_error(err, CORDON_LAUNCH_FAILED, r,
                                                "cannot mount %s at %s (%s): %s",
                                                mount_op_kind_to_string(p->mounts[i].kind),
                                                p->mounts[i].path,
                                                p->mounts[i].why ? p->mounts[i].why : "-",
                                                strerror(-r));
        }
        r = pivot_into(c.rootfd);
        if (r < 0)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, r,
                                        "cannot switch to the new root: %s", strerror(-r));
        return 0;
}

int mount_proc(cordon_error *err) {
        _cleanup_close_ int m = new_fs("proc", NULL,
                                       MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
        if (m < 0)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, m,
                                        "cannot create a procfs for the sandbox: %s",
                                        strerror(-m));
        _cleanup_close_ int target = open_nofollow(AT_FDCWD, "/proc", O_PATH | O_DIRECTORY, 0);
        if (target < 0 ||
            move_mount(m, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, target < 0 ? -target : errno,
                                        "cannot mount /proc: %s",
                                        strerror(target < 0 ? -target : errno));
        return 0;
}

int mount_file_over(const char *path, const char *content) {
        return mount_bytes_over(path, content, strlen(content));
}

int mount_bytes_over(const char *path, const void *content, size_t len) {
        /* Symlinks are followed, as a reader of the path would (resolv.conf is often a link into
         * /run), but only inside the sandbox's root: after the pivot "/" is that root, and
         * RESOLVE_IN_ROOT keeps an absolute link from leaving it. */
        struct open_how how = { .flags = O_PATH | O_CLOEXEC,
                                .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };
        _cleanup_close_ int target = (int) syscall(__NR_openat2, AT_FDCWD, path, &how, sizeof(how));
        if (target < 0)
                return -errno;
        struct stat st;
        if (fstat(target, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -ENOENT; /* not a file there: nothing a reader would take it for */
        /* Room for the content (a trust bundle is some 200 KiB), never less than 64 KiB. */
        char size[32];
        (void) snprintf(size, sizeof(size), "%zu", len < 61440 ? (size_t) 65536 : len + 4096);
        const char *const opts[] = { "mode", "0755", "size", size, NULL };
        _cleanup_close_ int fs = new_fs("tmpfs", opts, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
                                                               MOUNT_ATTR_NOEXEC);
        if (fs < 0)
                return fs;
        _cleanup_close_ int f = openat(fs, "file", O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
        if (f < 0 || write(f, content, len) != (ssize_t) len)
                return f < 0 ? -errno : -EIO;
        _cleanup_close_ int tree = readonly_file_tree(fs, "file");
        if (tree < 0)
                return tree;
        if (move_mount(tree, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
                return -errno;
        return 0;
}
