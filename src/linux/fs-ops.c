/* SPDX-License-Identifier: Apache-2.0 */
/* The policy-checked file operations on a plan (fs-ops.h). Reads open by the path as given
 * (symlinks followed, as inside the sandbox) and check the kernel's name for what was opened.
 * Writes never trust a name twice:
 *
 *   1. the directory is resolved, and the file's resolved path checked against the plan
 *      (writable root, protected paths, name rules);
 *   2. the writable root is opened with RESOLVE_NO_SYMLINKS (the plan resolved it, so any symlink
 *      in it now was swapped in), and the directory walked from there with RESOLVE_BENEATH |
 *      RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV: a symlinked parent swapped
 *      in after step 1 fails the walk (ELOOP) instead of leading out of the root;
 *   3. the directory's kernel name must still be the one checked;
 *   4. the content goes into a new temporary file in that directory (O_CREAT | O_EXCL |
 *      O_NOFOLLOW), which then takes the name with renameat2(): RENAME_NOREPLACE for a new file,
 *      RENAME_EXCHANGE for an existing one, after which the file swapped out must be the one
 *      checked (else it is swapped back). No write ever goes through a symlink or into a file
 *      with other names: a rename replaces the name, never what it pointed to. */
#include "linux/fs-internal.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <sys/random.h>

#define RESOLVE_WALK (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)

const char *cordon_fs_type_to_string(cordon_fs_type t) {
        static const char *const names[] = {
                [CORDON_FS_FILE] = "file",       [CORDON_FS_DIRECTORY] = "directory",
                [CORDON_FS_SYMLINK] = "symlink", [CORDON_FS_FIFO] = "fifo",
                [CORDON_FS_SOCKET] = "socket",   [CORDON_FS_CHAR_DEVICE] = "char-device",
                [CORDON_FS_BLOCK_DEVICE] = "block-device", [CORDON_FS_OTHER] = "other",
        };
        return (unsigned) t < ELEMENTSOF(names) ? names[t] : "unknown";
}

static cordon_fs_type type_of(mode_t m) {
        return S_ISREG(m) ? CORDON_FS_FILE : S_ISDIR(m) ? CORDON_FS_DIRECTORY
             : S_ISLNK(m) ? CORDON_FS_SYMLINK : S_ISFIFO(m) ? CORDON_FS_FIFO
             : S_ISSOCK(m) ? CORDON_FS_SOCKET : S_ISCHR(m) ? CORDON_FS_CHAR_DEVICE
             : S_ISBLK(m) ? CORDON_FS_BLOCK_DEVICE : CORDON_FS_OTHER;
}

static void fill_entry(cordon_fs_entry *e, const struct stat *st, bool secret) {
        e->type = type_of(st->st_mode);
        e->size = secret ? 0 : (uint64_t) st->st_size;
        e->mode = (uint32_t) (st->st_mode & 07777);
        e->mtime_sec = (int64_t) st->st_mtim.tv_sec;
        e->mtime_nsec = (uint32_t) st->st_mtim.tv_nsec;
        e->secret = secret;
}

static bool is_confined(const fs_ctx *c) {
        return c->plan->n_mounts > 0; /* danger-full-access plans no confinement at all */
}

/* ---- the directory a write goes to ---------------------------------------------------------- */

typedef struct wparent {
        int root_fd;               /* the writable root, O_PATH */
        int dir_fd;                /* the file's directory, O_PATH, reached beneath root_fd */
        uint64_t mnt_id;           /* the root's mount (confined sessions) */
        char dir[PATH_MAX];        /* the kernel's name of the directory: checked */
        char name[NAME_MAX + 1];   /* the final component */
        char path[PATH_MAX];       /* the kernel's name of the directory + "/" + name: checked */
} wparent;

static void wparent_done(wparent *w) {
        w->root_fd = safe_close(w->root_fd);
        w->dir_fd = safe_close(w->dir_fd);
}

static int join(fs_ctx *c, const char *dir, const char *name, char out[static PATH_MAX]) {
        int n = snprintf(out, PATH_MAX, "%s%s%s", dir, strcmp(dir, "/") == 0 ? "" : "/", name);
        return n < 0 || n >= PATH_MAX ? fs_fail(c, ENAMETOOLONG, "'%.200s/%s': path too long",
                                                dir, name)
                                      : 0;
}

/* Step 1: the resolved path of the file to write, checked (literal and resolved forms). */
static int resolve_target(fs_ctx *c, const char *norm, wparent *w, const char **ret_root) {
        char ldir[PATH_MAX];
        int r = fs_split(c, norm, ldir, w->name);
        if (r < 0)
                return r;
        if (!realpath(ldir, w->dir)) {
                int e = errno;
                if (e == ENOENT)
                        return fs_fail(c, e, "the directory '%s' does not exist (file "
                                             "operations create no directories)", ldir);
                return fs_fail(c, e, "the directory '%s': %s", ldir, strerror(e));
        }
        if ((r = join(c, w->dir, w->name, w->path)) < 0)
                return r;
        /* The literal form meets only the name rules: its directory may be a symlink into a
         * root, which the sandbox would follow too. */
        if ((r = fs_check_write(c, norm, false, NULL)) < 0)
                return r;
        return fs_check_write(c, w->path, true, ret_root);
}

/* Steps 2 and 3: the directory opened beneath its writable root, still under the checked name. */
static int open_parent(fs_ctx *c, const char *root, wparent *w) {
        bool confined = is_confined(c);
        if (!path_startswith(w->dir, root))
                /* The root is this very file (a bound file): a rename cannot replace it (the
                 * sandbox's bind would keep showing the old inode). */
                return fs_fail(c, EBUSY, "'%s' is a writable root of its own (a bound file); "
                                         "file operations replace files by renaming and cannot "
                                         "write it", w->path);
        w->root_fd = fs_openat2(AT_FDCWD, root, O_PATH | O_DIRECTORY,
                                RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
        if (w->root_fd == -ELOOP)
                return fs_refuse(c, "file-write*", w->path, "symlink",
                                 "a symlink replaced part of the writable root '%s': not followed",
                                 root);
        if (w->root_fd < 0)
                return fs_fail(c, -w->root_fd, "the writable root '%s': %s", root,
                               strerror(-w->root_fd));
        const char *rel = w->dir + strlen(root);
        while (*rel == '/')
                rel++;
        /* A mount inside the root (made on the host after the plan) is not the root's tree:
         * RESOLVE_NO_XDEV keeps the walk on the root's own mount. */
        w->dir_fd = fs_openat2(w->root_fd, *rel ? rel : ".", O_PATH | O_DIRECTORY,
                               RESOLVE_WALK | (confined ? RESOLVE_NO_XDEV : 0));
        if (w->dir_fd == -ELOOP || w->dir_fd == -EXDEV)
                return fs_refuse(c, "file-write*", w->path,
                                 w->dir_fd == -ELOOP ? "symlink" : "mount point",
                                 "'%s' is reached through a %s beneath the writable root '%s' "
                                 "(appeared after the path was resolved): not followed", w->path,
                                 w->dir_fd == -ELOOP ? "symlink" : "mount point", root);
        if (w->dir_fd < 0)
                return fs_fail(c, -w->dir_fd, "the directory '%s': %s", w->dir,
                               strerror(-w->dir_fd));
        char now[PATH_MAX];
        int r = fs_fd_path(w->dir_fd, now);
        if (r < 0 || strcmp(now, w->dir) != 0)
                return fs_fail(c, EAGAIN, "the directory '%s' was moved while being written to; "
                                          "nothing was written", w->dir);
        if (confined && (r = fs_mount_id(w->root_fd, &w->mnt_id)) < 0)
                return fs_fail(c, -r, "the mount of '%s': %s", root, strerror(-r));
        return 0;
}

static int open_write_parent(fs_ctx *c, const char *norm, wparent *w) {
        const char *root = NULL;
        int r = resolve_target(c, norm, w, &root);
        return r < 0 ? r : open_parent(c, root, w);
}

/* What the name holds now: nothing, or a regular file with no other links. */
static int lstat_target(fs_ctx *c, const wparent *w, struct stat *st, bool *exists) {
        *exists = false;
        if (fstatat(w->dir_fd, w->name, st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : fs_fail(c, errno, "'%s': %s", w->path,
                                                     strerror(errno));
        *exists = true;
        if (S_ISLNK(st->st_mode))
                return fs_refuse(c, "file-write*", w->path, "symlink",
                                 "'%s' is a symlink: file operations do not write through one "
                                 "(use the path it points to)", w->path);
        if (S_ISDIR(st->st_mode))
                return fs_fail(c, EISDIR, "'%s' is a directory", w->path);
        if (!S_ISREG(st->st_mode))
                return fs_fail(c, EINVAL, "'%s' is not a regular file (%s)", w->path,
                               cordon_fs_type_to_string(type_of(st->st_mode)));
        /* A hard link to a protected file made elsewhere would be changed through this name. */
        if (st->st_nlink > 1)
                return fs_refuse(c, "file-write*", w->path, "hard link",
                                 "'%s' has %ju hard links: writing it would change the other "
                                 "names too, and one may be protected", w->path,
                                 (uintmax_t) st->st_nlink);
        return 0;
}

/* ---- writing: a temporary file, then a rename ----------------------------------------------- */

/* The temporary file: ".cordon-" and 16 random hex digits, in the file's directory. Its name is
 * checked like any other (a denyCreateNames glob such as ".cordon-*" refuses every write). */
static int make_temp(fs_ctx *c, const wparent *w, const struct stat *old, char tmp[static 64],
                     int *ret_fd) {
        for (int tries = 0; tries < 8; tries++) {
                uint64_t rnd;
                if (getrandom(&rnd, sizeof(rnd), 0) != (ssize_t) sizeof(rnd))
                        return fs_fail(c, EIO, "getrandom failed");
                (void) snprintf(tmp, 64, ".cordon-%016llx", (unsigned long long) rnd);
                char tpath[PATH_MAX];
                int r = join(c, w->dir, tmp, tpath);
                if (r >= 0)
                        r = fs_check_write(c, tpath, true, NULL);
                if (r < 0)
                        return r;
                int fd = openat(w->dir_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
                                                        O_NOCTTY | O_CLOEXEC, 0644);
                if (fd < 0 && errno == EEXIST)
                        continue;
                if (fd < 0)
                        return fs_fail(c, errno, "creating a file in '%s': %s", w->dir,
                                       strerror(errno));
                /* A replaced file keeps its permission bits (not set-id ones). */
                if (old && fchmod(fd, old->st_mode & 0777) < 0) {
                        r = fs_fail(c, errno, "'%s': chmod: %s", w->path, strerror(errno));
                        (void) close(fd);
                        (void) unlinkat(w->dir_fd, tmp, 0);
                        return r;
                }
                *ret_fd = fd;
                return 0;
        }
        return fs_fail(c, EEXIST, "no free temporary name in the directory of '%s'", w->path);
}

static int fill_temp(fs_ctx *c, const wparent *w, int fd, const void *data, size_t len) {
        ssize_t n = write_all(fd, data, len);
        if (n < 0)
                return fs_fail(c, (int) -n, "writing '%s': %s", w->path, strerror((int) -n));
        if (fsync(fd) < 0)
                return fs_fail(c, errno, "writing '%s': %s", w->path, strerror(errno));
        uint64_t mnt;
        if (w->mnt_id != 0 && (fs_mount_id(fd, &mnt) < 0 || mnt != w->mnt_id))
                return fs_fail(c, EXDEV, "'%s': the file landed on another mount", w->path);
        return 0;
}

/* The same inode; with `unchanged` also the same size and mtime (not ctime: the exchange itself
 * changes the swapped-out file's ctime). */
static bool same_file(const struct stat *a, const struct stat *b, bool unchanged) {
        if (a->st_dev != b->st_dev || a->st_ino != b->st_ino)
                return false;
        return !unchanged || (a->st_size == b->st_size &&
                              a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
                              a->st_mtim.tv_nsec == b->st_mtim.tv_nsec);
}

/* Gives the temporary file the name. For an existing file the swap is an exchange, so what was
 * replaced can be checked afterwards and put back if it is not what was checked (or, with
 * `unchanged`, if it was modified since it was read: an edit must not lose a concurrent write). */
static int commit(fs_ctx *c, const wparent *w, const char *tmp, const struct stat *old,
                  bool unchanged) {
        if (!old) {
                if (renameat2(w->dir_fd, tmp, w->dir_fd, w->name, RENAME_NOREPLACE) == 0)
                        return 0;
                if (errno == EEXIST)
                        return fs_fail(c, EEXIST, "'%s' was created by someone else meanwhile; "
                                                  "nothing was written", w->path);
                return fs_fail(c, errno, "'%s': rename: %s", w->path, strerror(errno));
        }
        if (renameat2(w->dir_fd, tmp, w->dir_fd, w->name, RENAME_EXCHANGE) < 0)
                return fs_fail(c, errno, "'%s': rename: %s", w->path, strerror(errno));
        struct stat was;
        if (fstatat(w->dir_fd, tmp, &was, AT_SYMLINK_NOFOLLOW) < 0 ||
            !same_file(&was, old, unchanged)) {
                (void) renameat2(w->dir_fd, tmp, w->dir_fd, w->name, RENAME_EXCHANGE);
                return fs_fail(c, EAGAIN, "'%s' changed while being written; nothing was "
                                          "written", w->path);
        }
        return 0;
}

/* `old`: what the name holds now (lstat_target), NULL for a new file. */
static int replace_file(fs_ctx *c, const wparent *w, const void *data, size_t len,
                        const struct stat *old, bool unchanged) {
        char tmp[64];
        int fd = -1;
        int r = make_temp(c, w, old, tmp, &fd);
        if (r < 0)
                return r;
        r = fill_temp(c, w, fd, data, len);
        (void) close(fd);
        if (r >= 0)
                r = commit(c, w, tmp, old, unchanged);
        /* After a commit of an existing file the old one carries the temporary name. */
        if (r < 0 || old)
                (void) unlinkat(w->dir_fd, tmp, 0);
        return r;
}

int fs_write(fs_ctx *c, const char *path, const void *data, size_t len, cordon_fs_written *ret) {
        *ret = (cordon_fs_written) { 0 };
        if (!data && len > 0)
                return fs_usage(c, "no content given for %zu bytes", len);
        if (len > CORDON_FS_CONTENT_MAX)
                return fs_usage(c, "the content is longer than %u bytes", CORDON_FS_CONTENT_MAX);
        _cleanup_free_ char *norm = NULL;
        _cleanup_(wparent_done) wparent w = { .root_fd = -1, .dir_fd = -1 };
        struct stat old;
        bool exists = false;
        int r = fs_normalize(c, path, &norm);
        if (r >= 0)
                r = open_write_parent(c, norm, &w);
        if (r >= 0)
                r = lstat_target(c, &w, &old, &exists);
        if (r >= 0)
                r = replace_file(c, &w, data, len, exists ? &old : NULL, false);
        if (r < 0)
                return r;
        *ret = (cordon_fs_written) { .created = !exists, .size = len };
        return 0;
}

/* ---- edit ----------------------------------------------------------------------------------- */

/* The whole file at the checked name, which must still be the inode `st` describes. */
static int read_existing(fs_ctx *c, const wparent *w, const struct stat *st, char **ret,
                         size_t *ret_len) {
        if ((uint64_t) st->st_size > CORDON_FS_CONTENT_MAX)
                return fs_fail(c, EFBIG, "'%s' is %jd bytes, more than an edit handles (%u)",
                               w->path, (intmax_t) st->st_size, CORDON_FS_CONTENT_MAX);
        _cleanup_close_ int pfd = openat(w->dir_fd, w->name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        struct stat now;
        if (pfd < 0 || fstat(pfd, &now) < 0 || !same_file(&now, st, true))
                return fs_fail(c, EAGAIN, "'%s' changed while being edited", w->path);
        _cleanup_close_ int fd = fs_reopen(pfd, O_RDONLY);
        if (fd < 0)
                return fs_fail(c, -fd, "'%s': %s", w->path, strerror(-fd));
        _cleanup_free_ char *buf = malloc((size_t) st->st_size + 1);
        if (!buf)
                return fs_fail(c, ENOMEM, "out of memory");
        ssize_t n = read_full(fd, buf, (size_t) st->st_size + 1);
        if (n < 0)
                return fs_fail(c, (int) -n, "reading '%s': %s", w->path, strerror((int) -n));
        if (n != st->st_size)
                return fs_fail(c, EAGAIN, "'%s' changed while being edited", w->path);
        buf[n] = '\0';
        *ret = TAKE_PTR(buf);
        *ret_len = (size_t) n;
        return 0;
}

/* Occurrences of `needle` in `hay`, overlapping ones included ("aa" is twice in "aaa": which one
 * to replace would be a guess). *ret_first: the first. */
static size_t count_occurrences(const char *hay, size_t n, const char *needle, size_t k,
                                size_t *ret_first) {
        size_t count = 0;
        for (const char *p = hay; (p = memmem(p, n - (size_t) (p - hay), needle, k)); p++)
                if (count++ == 0)
                        *ret_first = (size_t) (p - hay);
        return count;
}

static int splice_edit(fs_ctx *c, const wparent *w, const char *text, size_t n, const char *old,
                       size_t old_len, const char *new, size_t new_len, char **ret,
                       size_t *ret_len) {
        size_t at = 0;
        size_t count = count_occurrences(text, n, old, old_len, &at);
        if (count == 0)
                return fs_fail(c, ENOENT, "oldString does not occur in '%s'", w->path);
        if (count > 1)
                return fs_fail(c, EEXIST, "oldString occurs %zu times in '%s'; give more "
                                          "context so that it occurs exactly once", count,
                               w->path);
        size_t len = n - old_len + new_len;
        if (len > CORDON_FS_CONTENT_MAX)
                return fs_fail(c, EFBIG, "'%s' would be %zu bytes, more than %u", w->path, len,
                               CORDON_FS_CONTENT_MAX);
        char *out = malloc(len + 1);
        if (!out)
                return fs_fail(c, ENOMEM, "out of memory");
        memcpy(out, text, at);
        memcpy(out + at, new, new_len);
        memcpy(out + at + new_len, text + at + old_len, n - at - old_len);
        out[len] = '\0';
        *ret = out;
        *ret_len = len;
        return 0;
}

int fs_edit(fs_ctx *c, const char *path, const char *old, size_t old_len, const char *new,
            size_t new_len, cordon_fs_written *ret) {
        *ret = (cordon_fs_written) { 0 };
        if (old_len == 0 || !old)
                return fs_usage(c, "oldString must not be empty");
        if (!new && new_len > 0)
                return fs_usage(c, "no newString given for %zu bytes", new_len);
        /* Bounded before splice_edit() adds them up: the file's size less old_len plus new_len
         * must not wrap around (a library caller's lengths are not the protocol's). */
        if (old_len > CORDON_FS_CONTENT_MAX || new_len > CORDON_FS_CONTENT_MAX)
                return fs_usage(c, "oldString or newString is longer than %u bytes",
                                CORDON_FS_CONTENT_MAX);
        _cleanup_free_ char *norm = NULL, *text = NULL, *out = NULL;
        _cleanup_(wparent_done) wparent w = { .root_fd = -1, .dir_fd = -1 };
        struct stat st;
        bool exists = false;
        size_t n = 0, len = 0;
        int r = fs_normalize(c, path, &norm);
        if (r >= 0)
                r = open_write_parent(c, norm, &w);
        if (r >= 0)
                r = lstat_target(c, &w, &st, &exists);
        if (r >= 0 && !exists)
                r = fs_fail(c, ENOENT, "'%s' does not exist", w.path);
        if (r >= 0)
                r = read_existing(c, &w, &st, &text, &n);
        if (r >= 0)
                r = splice_edit(c, &w, text, n, old, old_len, new, new_len, &out, &len);
        if (r >= 0)
                r = replace_file(c, &w, out, len, &st, true);
        if (r < 0)
                return r;
        *ret = (cordon_fs_written) { .size = len };
        return 0;
}

/* ---- read ----------------------------------------------------------------------------------- */

/* Opens `norm` for looking (O_PATH, symlinks followed as the sandbox would, never a magic link)
 * and checks the requested and the opened path. */
static int open_checked(fs_ctx *c, const char *norm, int flags, char real[static PATH_MAX]) {
        int r = fs_check_read(c, norm);
        if (r < 0)
                return r;
        int fd = fs_openat2(AT_FDCWD, norm, O_PATH | flags, RESOLVE_NO_MAGICLINKS);
        if (fd < 0)
                return fs_fail(c, -fd, "'%s': %s", norm, strerror(-fd));
        r = fs_fd_path(fd, real);
        if (r < 0)
                r = fs_fail(c, -r, "'%s': cannot name what was opened: %s", norm, strerror(-r));
        if (r >= 0)
                r = fs_check_read(c, real);
        if (r < 0) {
                (void) close(fd);
                return r;
        }
        return fd;
}

static int read_range(fs_ctx *c, int fd, const char *norm, cordon_fs_data *d, uint64_t want) {
        d->data = malloc((size_t) want + 1);
        if (!d->data)
                return fs_fail(c, ENOMEM, "out of memory");
        while (d->len < want) {
                ssize_t n = pread(fd, d->data + d->len, (size_t) want - d->len,
                                  (off_t) (d->offset + d->len));
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return fs_fail(c, errno, "reading '%s': %s", norm, strerror(errno));
                if (n == 0)
                        break;
                d->len += (size_t) n;
        }
        d->data[d->len] = '\0';
        d->eof = d->offset + d->len >= d->size;
        return 0;
}

int fs_read(fs_ctx *c, const char *path, uint64_t offset, uint64_t length, cordon_fs_data *ret) {
        *ret = (cordon_fs_data) { .offset = offset };
        /* The buffer is allocated for the whole range at once: a caller's length never sizes it
         * beyond the limit. */
        if (length > CORDON_FS_CONTENT_MAX)
                return fs_usage(c, "length %ju is more than %u bytes: read in parts",
                                (uintmax_t) length, CORDON_FS_CONTENT_MAX);
        _cleanup_free_ char *norm = NULL;
        char real[PATH_MAX];
        struct stat st;
        int r = fs_normalize(c, path, &norm);
        if (r < 0)
                return r;
        _cleanup_close_ int pfd = open_checked(c, norm, 0, real);
        if (pfd < 0)
                return pfd;
        if (fstat(pfd, &st) < 0)
                return fs_fail(c, errno, "'%s': %s", norm, strerror(errno));
        if (S_ISDIR(st.st_mode))
                return fs_fail(c, EISDIR, "'%s' is a directory (list it instead)", norm);
        if (!S_ISREG(st.st_mode))
                return fs_fail(c, EINVAL, "'%s' is not a regular file (%s)", norm,
                               cordon_fs_type_to_string(type_of(st.st_mode)));
        if ((r = fs_check_secret_inode(c, &st, real)) < 0)
                return r;
        ret->size = (uint64_t) st.st_size;
        uint64_t rest = offset < ret->size ? ret->size - offset : 0;
        if (length == 0 && rest > CORDON_FS_CONTENT_MAX)
                return fs_fail(c, EFBIG, "'%s' has %ju bytes from offset %ju, more than %u: "
                                         "read it in parts (offset, length)", norm,
                               (uintmax_t) rest, (uintmax_t) offset, CORDON_FS_CONTENT_MAX);
        uint64_t want = length == 0 || length > rest ? rest : length;
        _cleanup_close_ int fd = fs_reopen(pfd, O_RDONLY);
        if (fd < 0)
                return fs_fail(c, -fd, "'%s': %s", norm, strerror(-fd));
        r = read_range(c, fd, norm, ret, want);
        if (r < 0)
                cordon_fs_data_free(ret);
        return r;
}

void cordon_fs_data_free(cordon_fs_data *d) {
        if (!d)
                return;
        free(d->data);
        d->data = NULL;
        d->len = 0;
}

/* ---- stat and list -------------------------------------------------------------------------- */

int fs_stat(fs_ctx *c, const char *path, cordon_fs_entry *ret) {
        *ret = (cordon_fs_entry) { 0 };
        _cleanup_free_ char *norm = NULL;
        char dir[PATH_MAX], name[NAME_MAX + 1], real[PATH_MAX], full[PATH_MAX];
        int r = fs_normalize(c, path, &norm);
        if (r < 0)
                return r;
        bool root = strcmp(norm, "/") == 0;
        if (root) {
                strcpy(dir, "/");
                strcpy(name, ".");
        } else if ((r = fs_split(c, norm, dir, name)) < 0) {
                return r;
        }
        if ((r = fs_check_read(c, norm)) < 0)
                return r;
        /* The final component is not followed: the entry itself is reported. */
        _cleanup_close_ int dfd = open_checked(c, dir, O_DIRECTORY, real);
        if (dfd < 0)
                return dfd;
        if (!root && ((r = join(c, real, name, full)) < 0 || (r = fs_check_read(c, full)) < 0))
                return r;
        struct stat st;
        if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return fs_fail(c, errno, "'%s': %s", norm, strerror(errno));
        if ((r = fs_check_secret_inode(c, &st, root ? real : full)) < 0)
                return r;
        fill_entry(ret, &st, false);
        return 0;
}

static int compare_entries(const void *a, const void *b) {
        return strcmp(((const cordon_fs_entry *) a)->name, ((const cordon_fs_entry *) b)->name);
}

/* One entry of the listed directory `real` appended to *e (*n of them, room for *cap). */
static int list_one(fs_ctx *c, DIR *d, const char *real, const char *name, cordon_fs_entry **e,
                    size_t *n, size_t *cap) {
        struct stat st;
        char full[PATH_MAX];
        if (fstatat(dirfd(d), name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return 0; /* removed since readdir(): not an entry any more */
        int r = join(c, real, name, full);
        if (r < 0)
                return r;
        if (*n == *cap) {
                size_t ncap = *cap ? *cap * 2 : 64;
                cordon_fs_entry *ne = realloc(*e, ncap * sizeof(*ne));
                if (!ne)
                        return fs_fail(c, ENOMEM, "out of memory");
                *e = ne;
                *cap = ncap;
        }
        cordon_fs_entry *x = &(*e)[*n];
        *x = (cordon_fs_entry) { .name = strdup(name) };
        if (!x->name)
                return fs_fail(c, ENOMEM, "out of memory");
        /* The sandbox shows a secret as an empty file or directory: so does the listing. */
        fill_entry(x, &st, fs_is_secret(c->plan, full));
        (*n)++;
        return 0;
}

static int list_dir(fs_ctx *c, int pfd, const char *real, cordon_fs_entry **ret, size_t *ret_n,
                    bool *ret_truncated) {
        int fd = fs_reopen(pfd, O_RDONLY | O_DIRECTORY);
        DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
        if (!d) {
                int e = fd < 0 ? -fd : errno;
                (void) safe_close(fd);
                return fs_fail(c, e, "'%s': %s", real, strerror(e));
        }
        cordon_fs_entry *e = NULL;
        size_t n = 0, cap = 0;
        int r = 0;
        struct dirent *de;
        while (r >= 0 && (de = readdir(d))) {
                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                if (n == CORDON_FS_LIST_MAX) {
                        *ret_truncated = true;
                        break;
                }
                r = list_one(c, d, real, de->d_name, &e, &n, &cap);
        }
        (void) closedir(d);
        if (r < 0) {
                cordon_fs_entries_free(e, n);
                return r;
        }
        if (n > 0)
                qsort(e, n, sizeof(*e), compare_entries);
        *ret = e;
        *ret_n = n;
        return 0;
}

int fs_list(fs_ctx *c, const char *path, cordon_fs_entry **ret, size_t *ret_n,
            bool *ret_truncated) {
        *ret = NULL;
        *ret_n = 0;
        *ret_truncated = false;
        _cleanup_free_ char *norm = NULL;
        char real[PATH_MAX];
        int r = fs_normalize(c, path, &norm);
        if (r < 0)
                return r;
        _cleanup_close_ int pfd = open_checked(c, norm, O_DIRECTORY, real);
        if (pfd < 0)
                return pfd;
        return list_dir(c, pfd, real, ret, ret_n, ret_truncated);
}

void cordon_fs_entries_free(cordon_fs_entry *e, size_t n) {
        for (size_t i = 0; e && i < n; i++)
                free(e[i].name);
        free(e);
}
