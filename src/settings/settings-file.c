/* SPDX-License-Identifier: Apache-2.0 */
/* Reading a settings file from disk, and the ownership check (like doas.conf's): settings that
 * grant authority (a writable path, a domain, an excluded command, ...) are only as trustworthy
 * as whoever can edit the file. A file (or the directory holding it) that other users can modify
 * lets them widen this user's sandbox, so such a file is refused when it grants anything; a
 * managed file, always. */
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>

#include "settings/settings.h"

/* O_NONBLOCK: a FIFO planted at the path must not hang us; it is refused below. */
static int open_settings(const char *path, bool optional, int *ret, cordon_error *err) {
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0 && optional && (errno == ENOENT || errno == ENOTDIR)) {
                *ret = -1;
                return 0;
        }
        if (fd < 0)
                return cordon_set_error(err, CORDON_POLICY_INVALID, errno,
                                        "%s: cannot open the settings file: %s; check the path",
                                        path, strerror(errno));
        *ret = fd;
        return 0;
}

static int read_settings(int fd, const char *path, struct stat *st, char **ret, size_t *ret_len,
                         cordon_error *err) {
        if (fstat(fd, st) < 0)
                return cordon_set_error(err, CORDON_POLICY_INVALID, errno, "%s: fstat: %s", path,
                                        strerror(errno));
        if (!S_ISREG(st->st_mode))
                return cordon_set_error(err, CORDON_POLICY_INVALID, EINVAL,
                                        "%s: not a regular file; settings must be a JSON file",
                                        path);
        if (st->st_size > (off_t) POLICY_MAX_FILE)
                return cordon_set_error(err, CORDON_POLICY_INVALID, EFBIG,
                                        "%s: the settings file is %lld bytes; at most %u are "
                                        "allowed", path, (long long) st->st_size,
                                        POLICY_MAX_FILE);
        int r = read_fd_bounded(fd, POLICY_MAX_FILE, ret, ret_len);
        if (r == -EFBIG) /* it grew after the fstat() */
                return cordon_set_error(err, CORDON_POLICY_INVALID, EFBIG,
                                        "%s: the settings file is larger than %u bytes", path,
                                        POLICY_MAX_FILE);
        if (r < 0)
                return cordon_set_error(err, r == -ENOMEM ? CORDON_LAUNCH_FAILED
                                                          : CORDON_POLICY_INVALID,
                                        r, "%s: cannot read the settings file: %s", path,
                                        strerror(-r));
        return 0;
}

/* The directory that holds the file once symlinks are resolved: whoever can write there can
 * replace the file. */
static int stat_parent(const char *path, struct stat *ret, cordon_error *err) {
        char real[PATH_MAX];
        if (!realpath(path, real))
                return cordon_set_error(err, CORDON_POLICY_INVALID, errno,
                                        "%s: cannot resolve the settings file's directory: %s",
                                        path, strerror(errno));
        if (stat(dirname(real), ret) < 0)
                return cordon_set_error(err, CORDON_POLICY_INVALID, errno,
                                        "%s: cannot stat the settings file's directory: %s",
                                        path, strerror(errno));
        return 0;
}

/* Refuses a file that grants authority when someone else could have written it, and a managed
 * file whenever someone else could have: the administrator's mandate binds every run of every
 * user (docs/settings.md, "Ownership"), and whoever else can edit it could drop its deny rules
 * as easily as add a grant, so even a file that only restricts is not the administrator's then. */
static int refuse_foreign(const settings_file *f, cordon_error *err) {
        char grant[96], what[160], owner_hint[PATH_MAX + 64];
        bool managed = f->kind == SETTINGS_LAYER_MANAGED;
        bool grants = settings_file_grants(f, grant, sizeof(grant));
        if (!f->have_stat || (!grants && !managed))
                return 0;
        if (grants)
                (void) snprintf(what, sizeof(what), "the settings grant authority (%s)", grant);
        else
                (void) snprintf(what, sizeof(what), "managed settings bind every run");
        if (managed)
                (void) snprintf(owner_hint, sizeof(owner_hint), "make root its owner: chown root %s",
                                f->origin);
        else
                (void) snprintf(owner_hint, sizeof(owner_hint), "copy it to a file you own");
        uid_t me = geteuid();
        const struct stat *st = &f->st, *dir = &f->dir_st;
        if (st->st_uid != me && st->st_uid != 0)
                return cordon_set_error(err, CORDON_POLICY_INVALID, EPERM,
                                        "%s: %s but the file belongs to uid %u, who could change "
                                        "them; %s",
                                        f->origin, what, (unsigned) st->st_uid, owner_hint);
        if (st->st_mode & (S_IWGRP | S_IWOTH))
                return cordon_set_error(err, CORDON_POLICY_INVALID, EPERM,
                                        "%s: %s but the file is writable by other users (mode "
                                        "%04o); run chmod go-w %s",
                                        f->origin, what, (unsigned) (st->st_mode & 07777),
                                        f->origin);
        /* A sticky directory (/tmp, /var/tmp) lets nobody else rename or delete our file. */
        if (dir->st_uid != me && dir->st_uid != 0 && !(dir->st_mode & S_ISVTX))
                return cordon_set_error(err, CORDON_POLICY_INVALID, EPERM,
                                        "%s: %s but the file's directory belongs to uid %u, who "
                                        "could replace it; move the file to a directory you own",
                                        f->origin, what, (unsigned) dir->st_uid);
        if ((dir->st_mode & (S_IWGRP | S_IWOTH)) && !(dir->st_mode & S_ISVTX))
                return cordon_set_error(err, CORDON_POLICY_INVALID, EPERM,
                                        "%s: %s but the file's directory is writable by other "
                                        "users (mode %04o), who could replace it; run chmod go-w "
                                        "on the directory",
                                        f->origin, what, (unsigned) (dir->st_mode & 07777));
        return 0;
}

int settings_file_load(settings_layer_kind kind, const char *path, bool optional,
                       bool check_owner, const char *cwd, const char *home, settings_file **ret,
                       cordon_error *err) {
        _cleanup_close_ int fd = -1;
        *ret = NULL;
        int r = open_settings(path, optional, &fd, err);
        if (r < 0 || fd < 0)
                return r;
        struct stat st, dir_st;
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        if ((r = read_settings(fd, path, &st, &text, &len, err)) < 0 ||
            (r = stat_parent(path, &dir_st, err)) < 0)
                return r;
        settings_file *f = NULL;
        r = settings_file_parse(kind, path, text, len, cwd, home, &f, err);
        if (r < 0)
                return r;
        f->have_stat = true;
        f->st = st;
        f->dir_st = dir_st;
        if (check_owner && (r = refuse_foreign(f, err)) < 0) {
                settings_file_free(f);
                return r;
        }
        *ret = f;
        return 0;
}
