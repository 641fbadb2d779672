/* SPDX-License-Identifier: Apache-2.0 */
/* The file store of secret-store.h: one 0600 file per secret in $HOME/SECRET_FILE_DIR. */
#include "secrets/secret-store.h"

#include "secrets/secret-dir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

bool secret_name_valid(const char *name) {
        size_t n = name ? strlen(name) : 0;
        if (n == 0 || n > SECRET_NAME_MAX || name[0] == '.' || name[0] == '-')
                return false;
        for (size_t i = 0; i < n; i++) {
                char c = name[i];
                bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                          c == '.' || c == '_' || c == '-';
                if (!ok)
                        return false;
        }
        return true;
}

void secret_value_free(char *value, size_t len) {
        if (!value)
                return;
        explicit_bzero(value, len);
        free(value);
}

/* A directory or file of the store must be the caller's and closed to everyone else: a store
 * another user can write could be swapped for one whose values they chose (a credential that
 * sends the agent's requests to their account), and one others can read leaks every value. */
static const char *not_private(int fd, bool dir) {
        struct stat st;
        if (fstat(fd, &st) < 0)
                return "not readable";
        if ((dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode)) || st.st_uid != geteuid())
                return dir ? "not a directory of yours" : "not a regular file of yours";
        if (st.st_mode & 077)
                return "readable or writable by others";
        return NULL;
}

/* Opens $HOME/SECRET_FILE_DIR through secret_dir_open (no symbolic link followed on the way). */
static int open_store(const char *home, bool create, int *ret, cordon_error *err) {
        static const char *const parts[] = { ".config", "cordon", "secrets", "store" };
        if (!home || home[0] != '/')
                return cordon_set_error(err, CORDON_USAGE, EINVAL,
                                        "secrets: the home directory is not an absolute path; "
                                        "set HOME");
        int dfd = -1;
        int r = secret_dir_open(home, parts, ELEMENTSOF(parts), create, &dfd);
        if (r < 0) {
                int e = -r;
                if (e == ENOENT && !create)
                        return -ENOENT;
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, e,
                                        "secrets: cannot open %s/%s: %s%s", home, SECRET_FILE_DIR,
                                        strerror(e),
                                        e == ELOOP || e == ENOTDIR
                                                ? " (a symbolic link or a file is in the way; "
                                                  "remove it)"
                                                : "");
        }
        const char *why = not_private(dfd, true);
        if (why) {
                (void) close(dfd);
                return cordon_set_error(err, CORDON_POLICY_INVALID, EPERM,
                                        "secrets: %s/%s is %s; fix its owner and mode (0700)",
                                        home, SECRET_FILE_DIR, why);
        }
        *ret = dfd;
        return 0;
}

static int no_such_secret(const char *name, cordon_error *err) {
        return cordon_set_error(err, CORDON_USAGE, ENOENT,
                                "secrets: no secret '%s' is stored (cordon secret set %s)", name,
                                name);
}

static int bad_name(const char *name, cordon_error *err) {
        return cordon_set_error(err, CORDON_USAGE, EINVAL,
                                "secrets: '%s' is not a secret name (1-%d of A-Z a-z 0-9 . _ -, "
                                "not starting with '.' or '-')",
                                name ? name : "", SECRET_NAME_MAX);
}

/* Reads an open secret file whole: its size is checked first, so a file grown past the limit
 * is refused rather than cut. */
static int read_value(int fd, char **value, size_t *len) {
        struct stat st;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (st.st_size <= 0 || st.st_size > SECRET_VALUE_MAX)
                return -EFBIG;
        size_t n = (size_t) st.st_size;
        char *buf = malloc(n + 1);
        if (!buf)
                return -ENOMEM;
        ssize_t got = read_full(fd, buf, n);
        if (got != (ssize_t) n || memchr(buf, '\0', n)) {
                secret_value_free(buf, n + 1);
                return got < 0 ? (int) got : -EINVAL;
        }
        buf[n] = '\0';
        *value = buf;
        *len = n;
        return 0;
}

int secret_file_get(const char *home, const char *name, char **value, size_t *len,
                    cordon_error *err) {
        if (!secret_name_valid(name))
                return bad_name(name, err);
        int dfd = -1;
        int r = open_store(home, false, &dfd, err);
        if (r == -ENOENT)
                return no_such_secret(name, err);
        if (r < 0)
                return r;
        int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
        int e = errno;
        (void) close(dfd);
        if (fd < 0)
                return e == ENOENT ? no_such_secret(name, err)
                                   : cordon_set_error(err, CORDON_LAUNCH_FAILED, e,
                                                      "secrets: cannot open '%s': %s", name,
                                                      strerror(e));
        const char *why = not_private(fd, false);
        r = why ? -EPERM : read_value(fd, value, len);
        (void) close(fd);
        if (why)
                return cordon_set_error(err, CORDON_POLICY_INVALID, EPERM,
                                        "secrets: the file of '%s' is %s; set it again "
                                        "(cordon secret set %s)",
                                        name, why, name);
        if (r < 0)
                return cordon_set_error(err, CORDON_POLICY_INVALID, -r,
                                        "secrets: the value of '%s' is empty, has a NUL byte, or "
                                        "is longer than %d bytes; set it again",
                                        name, SECRET_VALUE_MAX);
        return 0;
}

/* A fresh temporary name in the store: it starts with '.', which no secret name does, so a
 * listing never shows it and it never replaces a secret. */
static int temp_name(char out[32]) {
        unsigned char rnd[8];
        if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t) sizeof(rnd))
                return -EIO;
        int w = snprintf(out, 32, ".new-");
        for (size_t i = 0; i < sizeof(rnd); i++)
                w += snprintf(out + w, 32 - (size_t) w, "%02x", rnd[i]);
        return 0;
}

/* Writes the value under a temporary name, then renames it over the secret: a reader sees the
 * old value or the new one, never half of one, and a failed write leaves the old one. */
static int write_value(int dfd, const char *name, const char *value, size_t len) {
        char tmp[32];
        int r = temp_name(tmp);
        if (r < 0)
                return r;
        int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
                return -errno;
        r = write_all(fd, value, len) < 0 || fsync(fd) < 0 ? -EIO : 0;
        if (close(fd) < 0 && r == 0)
                r = -EIO;
        if (r == 0 && renameat(dfd, tmp, dfd, name) < 0)
                r = -errno;
        if (r < 0)
                (void) unlinkat(dfd, tmp, 0);
        return r;
}

int secret_file_set(const char *home, const char *name, const char *value, size_t len,
                    cordon_error *err) {
        if (!secret_name_valid(name))
                return bad_name(name, err);
        if (len == 0 || len > SECRET_VALUE_MAX || memchr(value, '\0', len))
                return cordon_set_error(err, CORDON_USAGE, EINVAL,
                                        "secrets: a value is 1-%d bytes with no NUL byte",
                                        SECRET_VALUE_MAX);
        int dfd = -1;
        int r = open_store(home, true, &dfd, err);
        if (r < 0)
                return r;
        r = write_value(dfd, name, value, len);
        (void) close(dfd);
        if (r < 0)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, -r,
                                        "secrets: cannot store '%s': %s", name, strerror(-r));
        return 0;
}

int secret_file_remove(const char *home, const char *name, cordon_error *err) {
        if (!secret_name_valid(name))
                return bad_name(name, err);
        int dfd = -1;
        int r = open_store(home, false, &dfd, err);
        if (r == -ENOENT)
                return no_such_secret(name, err);
        if (r < 0)
                return r;
        r = unlinkat(dfd, name, 0) < 0 ? -errno : 0;
        (void) close(dfd);
        if (r == -ENOENT)
                return no_such_secret(name, err);
        if (r < 0)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, -r,
                                        "secrets: cannot remove '%s': %s", name, strerror(-r));
        return 0;
}

static int compare_names(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

int secret_file_list(const char *home, strv *names, cordon_error *err) {
        int dfd = -1;
        int r = open_store(home, false, &dfd, err);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        DIR *d = fdopendir(dfd);
        if (!d) {
                (void) close(dfd);
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, errno,
                                        "secrets: cannot list the store");
        }
        struct dirent *e;
        while (r >= 0 && (e = readdir(d)))
                if (e->d_type == DT_REG && secret_name_valid(e->d_name))
                        r = strv_push(names, e->d_name);
        (void) closedir(d);
        if (r < 0)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, -r, "secrets: out of memory");
        if (names->n > 1)
                qsort(names->v, names->n, sizeof(char *), compare_names);
        return 0;
}
