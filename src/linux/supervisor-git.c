/* SPDX-License-Identifier: Apache-2.0 */
/* Repositories created inside the sandbox (docs/design/git-repos.md). A directory is
 * "git-shaped" once it holds HEAD, objects, refs or commondir: git may take it for a git dir or a
 * common dir, and the user's next host `git` there reads its config and runs its hooks. The
 * invariant kept for every git-shaped directory beneath a persistent root:
 *
 *   - its config and config.worktree hold no key that runs a program or names a file
 *     (gitconfig_vet), and only the supervisor ever wrote the inode they name;
 *   - its hooks/ directory holds no file with the name of a hook git runs.
 *
 * Kept at each moment it could break, under one lock (s->git_lock): a marker name coming into
 * existence (the directory becomes git-shaped: its configs are vetted and rewritten into fresh
 * inodes, so an fd the command kept on the old one writes nowhere git reads; its hooks/ is
 * scanned), a config name renamed into a git-shaped directory (vetted and copied the same way:
 * git writes config.lock and renames it), and any other way of making a config or hook name
 * there (refused: git never does it). In-place writes of such a config are refused where the
 * supervisor sees the open (supervisor-ops.c). */
#include "linux/supervisor-internal.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plan/gitconfig.h"
#include "plan/name-rules.h"

static const char *const marker_names[] = { "HEAD", "objects", "refs", "commondir" };
static const char *const config_names[] = { "config", "config.worktree" };
/* githooks(5): every name git (and its bundled commands) runs from a hooks directory. */
static const char *const hook_names[] = {
        "applypatch-msg", "pre-applypatch", "post-applypatch", "pre-commit", "pre-merge-commit",
        "prepare-commit-msg", "commit-msg", "post-commit", "pre-rebase", "post-checkout",
        "post-merge", "pre-push", "pre-receive", "update", "proc-receive", "post-receive",
        "post-update", "reference-transaction", "push-to-checkout", "pre-auto-gc", "post-rewrite",
        "sendemail-validate", "fsmonitor-watchman", "p4-changelist", "p4-prepare-changelist",
        "p4-post-changelist", "p4-pre-submit", "post-index-change",
};
/* The supervisor's own temporary name for a vetted copy: no other route may create, replace
 * or link it. */
#define VETTED_TAG ".cordon-vetted-"

static const char rule_in_place[] =
        "git: a repository's config made or written other than by rename (git never does)";
static const char rule_hook[] = "git: a hook in a repository's hooks directory";
static const char rule_hooks_dir[] = "git: a hooks directory moved or linked into a repository";
static const char rule_unreadable[] =
        "git: a repository config cordon cannot read as git does (refused: fail closed)";
static const char rule_not_regular[] = "git: a repository config that is not a regular file";
static const char rule_hooks_big[] = "git: a hooks directory too large to check";
static const char rule_tmp[] = "git: cordon's vetting file";
static const char rule_writer[] = "git: a repository config still open for writing";

#define MAX_HOOK_ENTRIES 4096

static bool any_of(const char *const *list, size_t n, const char *name, unsigned flags) {
        for (size_t i = 0; i < n; i++)
                if (name_could_be(list[i], name, flags))
                        return true;
        return false;
}

/* The parent directory's own name (the path's second-to-last component) could be "hooks". It
 * exists already, but may sit in a directory that folds case: matched widely. */
static bool parent_is_hooks(const resolved *res) {
        const char *end = strrchr(res->path, '/');
        if (!end || end == res->path)
                return false;
        const char *start = end;
        while (start > res->path && start[-1] != '/')
                start--;
        char name[NAME_MAX + 1];
        size_t n = (size_t) (end - start);
        if (n == 0 || n > NAME_MAX)
                return false;
        memcpy(name, start, n);
        name[n] = '\0';
        return name_could_be("hooks", name, 0);
}

unsigned git_classify(const resolved *res) {
        unsigned f = resolved_check_flags(res), k = 0;
        if (any_of(marker_names, ELEMENTSOF(marker_names), res->name, f))
                k |= GIT_NAME_MARKER;
        if (any_of(config_names, ELEMENTSOF(config_names), res->name, f))
                k |= GIT_NAME_CONFIG;
        if (name_could_be("hooks", res->name, f))
                k |= GIT_NAME_HOOKS_DIR;
        if (any_of(hook_names, ELEMENTSOF(hook_names), res->name, f) && parent_is_hooks(res))
                k |= GIT_NAME_HOOK;
        if (strstr(res->name, VETTED_TAG))
                k |= GIT_NAME_TMP;
        return k;
}

/* A lookup of each marker as git does it (on a casefold directory the filesystem folds it). */
static bool git_shaped(int dirfd) {
        struct stat st;
        for (size_t i = 0; i < ELEMENTSOF(marker_names); i++)
                if (fstatat(dirfd, marker_names[i], &st, AT_SYMLINK_NOFOLLOW) == 0)
                        return true;
        return false;
}

/* The directory that holds the hooks directory `res` creates into. */
static bool hooks_parent_git_shaped(const resolved *res) {
        _cleanup_close_ int up = openat(res->dir_fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
        return up < 0 || git_shaped(up); /* unknown: treated as a repository (fail closed) */
}

static bool applies(request *r, const resolved *res) {
        return name_rules_persistent(r->s->rules, res->path);
}

/* The host's own repository files (the workspace's .git/config, hooks, modules, worktrees) are
 * protected paths: read-only mounts or refused writes already, and the user's to configure. */
static bool is_protected(request *r, const char *path) {
        return name_rules_check(r->s->rules, NAME_CHECK_RENAME_SOURCE, path, 0, NULL) ==
               NAME_DENIED_PROTECTED;
}

void git_guard_release(git_guard *g) {
        if (g->s)
                pthread_mutex_unlock(&g->s->git_lock);
        g->s = NULL;
}

static void guard_take(request *r, git_guard *g) {
        if (!g->s) {
                pthread_mutex_lock(&r->s->git_lock);
                g->s = r->s;
        }
}

/* Reads a pinned regular file whole (at most GITCONFIG_MAX_SIZE + 1 bytes). */
static int read_pinned(request *r, int pin, char **ret, size_t *ret_len) {
        _cleanup_close_ int fd = supervisor_reopen(r->s, pin, O_RDONLY | O_NOCTTY | O_CLOEXEC);
        if (fd < 0)
                return fd;
        size_t cap = GITCONFIG_MAX_SIZE + 1, n = 0;
        _cleanup_free_ char *buf = malloc(cap);
        if (!buf)
                return -ENOMEM;
        while (n < cap) {
                ssize_t k = read(fd, buf + n, cap - n);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return -errno;
                if (k == 0)
                        break;
                n += (size_t) k;
        }
        *ret = TAKE_PTR(buf);
        *ret_len = n;
        return 0;
}

/* Writes `buf` into a new inode only this thread has opened, named `tmp` in `dirfd`; returns a
 * read-only fd on it (for the checks after the rename). */
static int write_vetted(request *r, int dirfd, const char *tmp, const char *buf, size_t len,
                        mode_t mode) {
        _cleanup_close_ int fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
                                                            O_NOCTTY | O_CLOEXEC, 0600);
        if (fd < 0)
                return -errno;
        for (size_t off = 0; off < len;) {
                ssize_t k = write(fd, buf + off, len - off);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0) {
                        int e = k < 0 ? -errno : -EIO;
                        (void) unlinkat(dirfd, tmp, 0);
                        return e;
                }
                off += (size_t) k;
        }
        int ro = supervisor_reopen(r->s, fd, O_RDONLY | O_CLOEXEC);
        if (ro < 0 || fchmod(fd, mode & 07777) < 0) {
                int e = ro < 0 ? ro : -errno;
                safe_close(ro);
                (void) unlinkat(dirfd, tmp, 0);
                return e;
        }
        return ro;
}

/* After the rename: `name` must be our inode, with no second name and nobody holding it open for
 * writing (a read lease is granted only then). Otherwise it is removed again and refused. */
static int check_sealed(request *r, int dirfd, const char *name, int ro, const char *path) {
        struct stat ours, there;
        bool ok = fstat(ro, &ours) == 0 && fstatat(dirfd, name, &there, AT_SYMLINK_NOFOLLOW) == 0 &&
                  ours.st_dev == there.st_dev && ours.st_ino == there.st_ino && ours.st_nlink == 1 &&
                  fcntl(ro, F_SETLEASE, F_RDLCK) == 0;
        if (ok) {
                (void) fcntl(ro, F_SETLEASE, F_UNLCK);
                return 0;
        }
        if (fstatat(dirfd, name, &there, AT_SYMLINK_NOFOLLOW) == 0 && ours.st_ino == there.st_ino)
                (void) unlinkat(dirfd, name, 0);
        return request_refuse(r, path, rule_writer);
}

/* Puts a vetted copy of `buf` at `name` in `dirfd` (replacing what is there). */
static int install_vetted(request *r, int dirfd, const char *name, const char *buf, size_t len,
                          mode_t mode, const char *path) {
        char tmp[NAME_MAX + 1];
        for (unsigned attempt = 0; attempt < 8; attempt++) {
                uint32_t rnd = 0;
                if (getrandom(&rnd, sizeof(rnd), 0) != sizeof(rnd))
                        return -EIO;
                if (snprintf(tmp, sizeof(tmp), "%s" VETTED_TAG "%08x", name, rnd) >= (int) sizeof(tmp))
                        return -ENAMETOOLONG;
                int ro = write_vetted(r, dirfd, tmp, buf, len, mode);
                if (ro == -EEXIST)
                        continue;
                if (ro < 0)
                        return ro;
                int e = renameat(dirfd, tmp, dirfd, name) < 0 ? -errno : 0;
                if (e < 0)
                        (void) unlinkat(dirfd, tmp, 0);
                else
                        e = check_sealed(r, dirfd, name, ro, path);
                (void) close(ro);
                return e;
        }
        return -EEXIST;
}

/* The config `name` in `dirfd` that a rename would replace, if it is a regular file: its
 * dangerous entries were vetted already (or are the user's), so the new one may keep them. */
static int read_replaced(request *r, int dirfd, const char *name, char **ret, size_t *ret_len) {
        _cleanup_close_ int pin = openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        struct stat st;
        if (pin < 0 || fstat(pin, &st) < 0 || !S_ISREG(st.st_mode))
                return 0;
        return read_pinned(r, pin, ret, ret_len);
}

/* Vets the config `pin` (a pinned regular file) for the git dir `dir` and installs the copy at
 * `name` in `dirfd`; `replacing`: it takes the place of the config there (a rename). */
static int vet_and_install(request *r, int pin, const char *dir, int dirfd, const char *name,
                           const char *path, bool replacing) {
        struct stat st;
        if (fstat(pin, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return request_refuse(r, path, rule_not_regular);
        _cleanup_free_ char *buf = NULL, *old = NULL;
        size_t len = 0, old_len = 0;
        int e = read_pinned(r, pin, &buf, &len);
        if (e == 0 && replacing)
                e = read_replaced(r, dirfd, name, &old, &old_len);
        if (e < 0)
                return e;
        const char *key = NULL;
        e = gitconfig_vet_replacing(buf, len, old, old_len, dir, &r->s->rules->persistent, &key);
        if (e == -ENOMEM)
                return e;
        if (e < 0)
                return request_refuse(r, path, rule_unreadable);
        if (e > 0)
                return request_refuse(r, path, key);
        return install_vetted(r, dirfd, name, buf, len, st.st_mode, path);
}

/* A directory is about to become (or stay) git-shaped: each config it holds is vetted and
 * re-installed into a fresh inode; its hooks/ may hold no hook. */
static int vet_dir(request *r, const resolved *res) {
        size_t dl = (size_t) (strrchr(res->path, '/') - res->path);
        char dir[PATH_MAX], path[PATH_MAX];
        memcpy(dir, res->path, dl);
        dir[dl ? dl : 1] = '\0';
        if (!dl)
                dir[0] = '/';
        for (size_t i = 0; i < ELEMENTSOF(config_names); i++) {
                if (snprintf(path, sizeof(path), "%s/%s", dir, config_names[i]) >= (int) sizeof(path))
                        return -ENAMETOOLONG;
                if (is_protected(r, path))
                        continue;
                _cleanup_close_ int pin = openat(res->dir_fd, config_names[i],
                                                 O_PATH | O_NOFOLLOW | O_CLOEXEC);
                if (pin < 0 && errno == ENOENT)
                        continue;
                if (pin < 0)
                        return -errno;
                int e = vet_and_install(r, pin, dir, res->dir_fd, config_names[i], path, false);
                if (e < 0)
                        return e;
        }
        if (snprintf(path, sizeof(path), "%s/hooks", dir) >= (int) sizeof(path))
                return -ENAMETOOLONG;
        if (is_protected(r, path))
                return 0;
        struct stat st;
        if (fstatat(res->dir_fd, "hooks", &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : -errno;
        if (!S_ISDIR(st.st_mode))
                return request_refuse(r, path, rule_hooks_dir); /* a symlink to hooks elsewhere */
        int fd = openat(res->dir_fd, "hooks", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        DIR *d = fd < 0 ? NULL : fdopendir(fd);
        if (!d) {
                safe_close(fd);
                return -errno;
        }
        int e = 0;
        unsigned n = 0;
        for (struct dirent *de; e == 0 && (de = readdir(d));)
                if (++n > MAX_HOOK_ENTRIES)
                        e = request_refuse(r, path, rule_hooks_big);
                else if (any_of(hook_names, ELEMENTSOF(hook_names), de->d_name, 0))
                        e = request_refuse(r, path, rule_hook);
        (void) closedir(d);
        return e;
}

/* The directory of `res` may become a repository (git_lock held). */
static void remember_repo(supervisor *s, const resolved *res) {
        size_t dl = (size_t) (strrchr(res->path, '/') - res->path);
        _cleanup_free_ char *dir = strndup(res->path, dl ? dl : 1);
        if (!dir || strv_contains(&s->repos, dir))
                return;
        if (s->repos.n >= SUPERVISOR_MAX_REPOS || strv_push(&s->repos, dir) < 0)
                s->repos_dropped++;
}

void git_report_repositories(supervisor *s) {
        for (size_t i = 0; i < s->repos.n; i++) {
                _cleanup_close_ int fd = open(s->repos.v[i], O_PATH | O_DIRECTORY | O_CLOEXEC);
                if (fd < 0 || !git_shaped(fd) || !s->on_report)
                        continue; /* the creation failed, or it was removed again */
                s->on_report(s->userdata, &(supervisor_report) { .action = "repository",
                                                                  .syscall = "",
                                                                  .target = s->repos.v[i],
                                                                  .rule = "" });
        }
        if (s->repos_dropped && s->on_report)
                s->on_report(s->userdata, &(supervisor_report) { .action = "repository",
                                                                  .syscall = "", .target = "",
                                                                  .rule = "",
                                                                  .repeats = s->repos_dropped });
        strv_done(&s->repos);
}

int git_check_create(request *r, resolved *res, bool is_mkdir, git_guard *g) {
        unsigned k = git_classify(res);
        if (!k || !applies(r, res))
                return 0;
        if (k & GIT_NAME_TMP)
                return request_refuse(r, res->path, rule_tmp);
        guard_take(r, g);
        bool shaped = git_shaped(res->dir_fd);
        if ((k & GIT_NAME_CONFIG) && shaped)
                return request_refuse(r, res->path, rule_in_place);
        if ((k & GIT_NAME_HOOKS_DIR) && shaped && !is_mkdir)
                return request_refuse(r, res->path, rule_hooks_dir); /* a symlink or hard link */
        if ((k & GIT_NAME_HOOK) && hooks_parent_git_shaped(res))
                return request_refuse(r, res->path, rule_hook);
        if (!(k & GIT_NAME_MARKER) || shaped)
                return 0; /* vetted when it became git-shaped, or the user's from before */
        remember_repo(r->s, res);
        return vet_dir(r, res);
}

int git_check_write(request *r, resolved *res) {
        unsigned k = git_classify(res);
        if (!k || !applies(r, res) || is_protected(r, res->path))
                return 0; /* protected: a read-only mount, or refused by the landlock checks */
        if (k & GIT_NAME_TMP)
                return request_refuse(r, res->path, rule_tmp);
        if ((k & GIT_NAME_CONFIG) && git_shaped(res->dir_fd))
                return request_refuse(r, res->path, rule_in_place);
        if ((k & GIT_NAME_HOOK) && hooks_parent_git_shaped(res))
                return request_refuse(r, res->path, rule_hook);
        return 0;
}

int git_check_link_source(request *r, resolved *src) {
        unsigned k = git_classify(src);
        if (!k || !applies(r, src))
                return 0;
        if (k & GIT_NAME_TMP)
                return request_refuse(r, src->path, rule_tmp);
        if ((k & GIT_NAME_CONFIG) && git_shaped(src->dir_fd) && !is_protected(r, src->path))
                return request_refuse(r, src->path, rule_in_place); /* a second, writable name */
        return 0;
}

/* rename(from, to): a config renamed into a git-shaped directory is vetted and copied (*ret_done:
 * the rename is performed here); the other git names as for a creation. */
int git_check_rename(request *r, resolved *from, resolved *to, unsigned flags, git_guard *g,
                     bool *ret_done) {
        *ret_done = false;
        if ((git_classify(from) & GIT_NAME_TMP) && applies(r, from))
                return request_refuse(r, from->path, rule_tmp);
        if (flags & RENAME_EXCHANGE) { /* each side gets a new name: checked as a direct route */
                int e = git_check_create(r, from, false, g);
                return e < 0 ? e : git_check_create(r, to, false, g);
        }
        unsigned kt = git_classify(to);
        if (!(kt & GIT_NAME_CONFIG) || (kt & GIT_NAME_TMP) || !applies(r, to))
                return git_check_create(r, to, false, g);
        guard_take(r, g);
        if (!git_shaped(to->dir_fd))
                return git_check_create(r, to, false, g); /* vetted when it becomes one */
        if (flags & RENAME_NOREPLACE) {
                struct stat st;
                if (fstatat(to->dir_fd, to->name, &st, AT_SYMLINK_NOFOLLOW) == 0)
                        return -EEXIST;
        }
        _cleanup_close_ int pin = openat(from->dir_fd, from->name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (pin < 0)
                return -errno;
        size_t dl = (size_t) (strrchr(to->path, '/') - to->path);
        char dir[PATH_MAX];
        memcpy(dir, to->path, dl);
        dir[dl] = '\0';
        int e = vet_and_install(r, pin, dl ? dir : "/", to->dir_fd, to->name, to->path, true);
        if (e < 0)
                return e;
        *ret_done = true;
        /* The source name goes, as the rename would take it; a failure leaves a harmless copy. */
        return unlinkat(from->dir_fd, from->name, 0) < 0 ? -errno : 0;
}
