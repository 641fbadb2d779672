/* SPDX-License-Identifier: Apache-2.0 */
#include "util/util.h"

#include <pwd.h>

#include <ctype.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>

#include "util/fork-gate.h"

int64_t monotonic_ms(void) {
        struct timespec ts;
        (void) clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int safe_close(int fd) {
        if (fd >= 0)
                (void) close(fd); /* nothing useful to do with a close error on our own fd */
        return -1;
}

int pipe_cloexec(int fds[2]) {
#ifdef __linux__
        return pipe2(fds, O_CLOEXEC) < 0 ? -errno : 0;
#else
        if (pipe(fds) < 0)
                return -errno;
        for (int i = 0; i < 2; i++)
                if (fcntl(fds[i], F_SETFD, FD_CLOEXEC) < 0) {
                        int e = errno;
                        (void) close(fds[0]);
                        (void) close(fds[1]);
                        return -e;
                }
        return 0;
#endif
}

ssize_t write_all(int fd, const void *buf, size_t len) {
        const char *p = buf;
        size_t done = 0;
        while (done < len) {
                ssize_t n = write(fd, p + done, len - done);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                done += (size_t) n;
        }
        return (ssize_t) done;
}

ssize_t read_full(int fd, void *buf, size_t len) {
        char *p = buf;
        size_t done = 0;
        while (done < len) {
                ssize_t n = read(fd, p + done, len - done);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (n == 0)
                        break;
                done += (size_t) n;
        }
        return (ssize_t) done;
}

int read_fd_bounded(int fd, size_t max, char **ret, size_t *ret_len) {
        if (max >= SIZE_MAX - 1)
                return -EINVAL;
        /* Room for max + 1 bytes at most, and a NUL. */
        size_t cap = max < 4096 ? max + 1 : 4096, len = 0;
        _cleanup_free_ char *buf = malloc(cap + 1);
        if (!buf)
                return -ENOMEM;
        for (;;) {
                if (len == cap) {
                        if (cap > max)
                                return -EFBIG;
                        size_t ncap = cap > max / 2 ? max + 1 : cap * 2;
                        char *nb = realloc(buf, ncap + 1);
                        if (!nb)
                                return -ENOMEM;
                        buf = nb;
                        cap = ncap;
                }
                ssize_t n = read(fd, buf + len, cap - len);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (n == 0)
                        break;
                len += (size_t) n;
        }
        buf[len] = '\0';
        if (ret_len)
                *ret_len = len;
        *ret = TAKE_PTR(buf);
        return 0;
}

int read_file_at(int dirfd, const char *path, size_t max, unsigned flags, char **ret,
                 size_t *ret_len) {
        _cleanup_close_ int fd = openat(dirfd, path,
                                        O_RDONLY | O_CLOEXEC | O_NOCTTY |
                                                (flags & READ_FILE_NOFOLLOW ? O_NOFOLLOW : 0) |
                                                (flags & READ_FILE_REGULAR ? O_NONBLOCK : 0));
        if (fd < 0)
                return -errno;
        struct stat st;
        if (flags & READ_FILE_REGULAR) {
                if (fstat(fd, &st) < 0)
                        return -errno;
                if (!S_ISREG(st.st_mode))
                        return -EINVAL;
        }
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;
        int r = read_fd_bounded(fd, max, &buf, &len);
        if (r < 0)
                return r;
        if ((flags & READ_FILE_TEXT) && memchr(buf, '\0', len))
                return -EINVAL;
        if (ret_len)
                *ret_len = len;
        *ret = TAKE_PTR(buf);
        return 0;
}

int options_read_sized(void *out, size_t out_size, const void *in, const char *name,
                       cordon_error *err) {
        if (!in)
                return 0;
        size_t in_size;
        memcpy(&in_size, in, sizeof(in_size));
        if (in_size < sizeof(size_t))
                return cordon_set_error(err, CORDON_USAGE, EINVAL,
                                        "%s.size is not set; hint: call %s_init() first", name,
                                        name);
        memcpy(out, in, in_size < out_size ? in_size : out_size);
        memcpy(out, &out_size, sizeof(out_size));
        for (size_t i = out_size; i < in_size; i++)
                if (((const unsigned char *) in)[i] != 0)
                        return cordon_set_error(err, CORDON_USAGE, ENOTSUP,
                                                "%s has fields this libcordon does not know "
                                                "(it is older than the header the program was "
                                                "built with: cordon_version()); hint: link the "
                                                "libcordon the program was built against", name);
        return 0;
}

int cordon_set_error(cordon_error *err, cordon_code code, int sys_errno, const char *fmt, ...) {
        if (sys_errno < 0)
                sys_errno = -sys_errno;
        if (err) {
                va_list ap;
                err->code = code;
                err->sys_errno = sys_errno;
                va_start(ap, fmt);
                (void) vsnprintf(err->message, sizeof(err->message), fmt, ap);
                va_end(ap);
                /* One line by contract: fold any newline a path or value smuggled in. */
                for (char *c = err->message; *c; c++)
                        if (*c == '\n' || *c == '\r')
                                *c = ' ';
        }
        return sys_errno > 0 ? -sys_errno : -EINVAL;
}

void cordon_error_prefix(cordon_error *err, const char *fmt, ...) {
        if (!err)
                return;
        char prefix[512], old[sizeof(err->message)];
        va_list ap;
        va_start(ap, fmt);
        (void) vsnprintf(prefix, sizeof(prefix), fmt, ap);
        va_end(ap);
        memcpy(old, err->message, sizeof(old));
        /* Truncation is intended: the message is one bounded line. */
        size_t pl = strnlen(prefix, sizeof(prefix)), cap = sizeof(err->message) - 1, o = 0;
        const char *parts[] = { prefix, ": ", old };
        size_t lens[] = { pl, 2, strnlen(old, sizeof(old)) };
        for (size_t i = 0; i < ELEMENTSOF(parts) && o < cap; i++) {
                size_t n = lens[i] < cap - o ? lens[i] : cap - o;
                memcpy(err->message + o, parts[i], n);
                o += n;
        }
        err->message[o] = '\0';
}

const char *cordon_code_name(cordon_code code) {
        static const char *const names[_CORDON_CODE_MAX] = {
                [CORDON_OK] = "OK",
                [CORDON_SANDBOX_UNAVAILABLE] = "SANDBOX_UNAVAILABLE",
                [CORDON_POLICY_INVALID] = "POLICY_INVALID",
                [CORDON_POLICY_UNENFORCEABLE] = "POLICY_UNENFORCEABLE",
                [CORDON_LAUNCH_FAILED] = "LAUNCH_FAILED",
                [CORDON_EXEC_FAILED] = "EXEC_FAILED",
                [CORDON_TIMEOUT] = "TIMEOUT",
                [CORDON_KILLED] = "KILLED",
                [CORDON_USAGE] = "USAGE",
        };
        if ((unsigned) code >= _CORDON_CODE_MAX || !names[code])
                return "UNKNOWN";
        return names[code];
}

/* ---- strv --------------------------------------------------------------------------------- */

int strv_push_take(strv *s, char *str) {
        if (!str)
                return -ENOMEM;
        char **nv = realloc(s->v, (s->n + 2) * sizeof(char *));
        if (!nv) {
                free(str);
                return -ENOMEM;
        }
        s->v = nv;
        s->v[s->n++] = str;
        s->v[s->n] = NULL;
        return 0;
}

int strv_push(strv *s, const char *str) {
        return strv_push_take(s, strdup(str));
}

bool strv_contains(const strv *s, const char *str) {
        for (size_t i = 0; i < s->n; i++)
                if (strcmp(s->v[i], str) == 0)
                        return true;
        return false;
}

int strv_push_unique(strv *s, const char *str) {
        if (strv_contains(s, str))
                return 0;
        return strv_push(s, str);
}

int strv_extend(strv *dst, const strv *src) {
        for (size_t i = 0; i < src->n; i++) {
                int r = strv_push_unique(dst, src->v[i]);
                if (r < 0)
                        return r;
        }
        return 0;
}

int strv_copy(strv *dst, const strv *src) {
        for (size_t i = 0; i < src->n; i++) {
                int r = strv_push(dst, src->v[i]);
                if (r < 0)
                        return r;
        }
        return 0;
}

ssize_t env_find(char *const *env, const char *name) {
        size_t nl = strlen(name);
        for (size_t i = 0; env && env[i]; i++)
                if (strncmp(env[i], name, nl) == 0 && env[i][nl] == '=')
                        return (ssize_t) i;
        return -1;
}

const char *env_get(char *const *env, const char *name) {
        ssize_t at = env_find(env, name);
        return at >= 0 ? env[at] + strlen(name) + 1 : NULL;
}

int strv_env_set(strv *env, const char *name, const char *value) {
        char *entry = NULL;
        if (asprintf(&entry, "%s=%s", name, value) < 0)
                return -ENOMEM;
        ssize_t at = env_find(env->v, name);
        if (at < 0)
                return strv_push_take(env, entry);
        free(env->v[at]);
        env->v[at] = entry;
        return 0;
}

size_t strv_env_unset(strv *env, const char *name) {
        size_t removed = 0;
        for (ssize_t at; (at = env_find(env->v, name)) >= 0; removed++) {
                free(env->v[at]);
                /* The NULL at v[n] moves down with the rest. */
                memmove(&env->v[at], &env->v[at + 1], (env->n - (size_t) at) * sizeof(char *));
                env->n--;
        }
        return removed;
}

void strv_done(strv *s) {
        for (size_t i = 0; i < s->n; i++)
                free(s->v[i]);
        free(s->v);
        s->v = NULL;
        s->n = 0;
}

/* ---- paths -------------------------------------------------------------------------------- */

bool path_is_absolute(const char *p) {
        return p && p[0] == '/';
}

int path_normalize(const char *in, char **ret) {
        if (!path_is_absolute(in))
                return -EINVAL;
        size_t len = strlen(in);
        if (len >= PATH_MAX)
                return -ENAMETOOLONG;
        char *out = malloc(len + 2);
        if (!out)
                return -ENOMEM;
        size_t o = 0;
        const char *p = in;
        while (*p) {
                while (*p == '/')
                        p++;
                if (!*p)
                        break;
                const char *e = strchrnul(p, '/');
                size_t cl = (size_t) (e - p);
                if (cl == 1 && p[0] == '.') {
                        p = e;
                        continue;
                }
                if (cl == 2 && p[0] == '.' && p[1] == '.') {
                        free(out); /* ".." would need the filesystem to resolve honestly */
                        return -EINVAL;
                }
                out[o++] = '/';
                memcpy(out + o, p, cl);
                o += cl;
                p = e;
        }
        if (o == 0)
                out[o++] = '/';
        out[o] = '\0';
        *ret = out;
        return 0;
}

bool path_startswith(const char *path, const char *prefix) {
        size_t pl = strlen(prefix);
        while (pl > 1 && prefix[pl - 1] == '/')
                pl--;
        if (pl == 1 && prefix[0] == '/')
                return path[0] == '/';
        if (strncmp(path, prefix, pl) != 0)
                return false;
        return path[pl] == '\0' || path[pl] == '/';
}

char *path_join(const char *a, const char *b) {
        size_t al = strlen(a);
        while (al > 0 && a[al - 1] == '/')
                al--;
        while (*b == '/')
                b++;
        size_t bl = strlen(b);
        char *r = malloc(al + 1 + bl + 1);
        if (!r)
                return NULL;
        memcpy(r, a, al);
        r[al] = '/';
        memcpy(r + al + 1, b, bl + 1);
        return r;
}

/* ---- numbers ------------------------------------------------------------------------------ */

int parse_u64(const char *s, uint64_t *ret) {
        if (!s || !isdigit((unsigned char) s[0]))
                return -EINVAL;
        uint64_t v = 0;
        for (const char *c = s; *c; c++) {
                if (!isdigit((unsigned char) *c))
                        return -EINVAL;
                unsigned d = (unsigned) (*c - '0');
                if (v > (UINT64_MAX - d) / 10)
                        return -ERANGE;
                v = v * 10 + d;
        }
        *ret = v;
        return 0;
}

struct unit {
        const char *sfx;
        uint64_t mul;
};

static int parse_with_suffix(const char *s, const struct unit *units, size_t n_units,
                             uint64_t *ret) {
        if (!s || !isdigit((unsigned char) s[0]))
                return -EINVAL;
        size_t digits = strspn(s, "0123456789");
        if (digits > 20)
                return -ERANGE;
        char num[21];
        memcpy(num, s, digits);
        num[digits] = '\0';
        uint64_t v;
        int r = parse_u64(num, &v);
        if (r < 0)
                return r;
        const char *sfx = s + digits;
        for (size_t i = 0; i < n_units; i++) {
                if (strcmp(sfx, units[i].sfx) != 0)
                        continue;
                if (units[i].mul != 0 && v > UINT64_MAX / units[i].mul)
                        return -ERANGE;
                *ret = v * units[i].mul;
                return 0;
        }
        return -EINVAL;
}

int parse_size(const char *s, uint64_t *ret) {
        static const struct unit units[] = {
                { "", 1 }, { "K", 1ULL << 10 }, { "M", 1ULL << 20 }, { "G", 1ULL << 30 },
                { "KiB", 1ULL << 10 }, { "MiB", 1ULL << 20 }, { "GiB", 1ULL << 30 },
        };
        return parse_with_suffix(s, units, ELEMENTSOF(units), ret);
}

int parse_duration_ms(const char *s, uint64_t *ret) {
        static const struct unit units[] = {
                { "", 1000 }, { "s", 1000 }, { "ms", 1 }, { "m", 60000 }, { "h", 3600000 },
        };
        return parse_with_suffix(s, units, ELEMENTSOF(units), ret);
}

char *home_dir_of(char *const *env) {
        extern char **environ;
        const char *home = env_get(env ? env : environ, "HOME");
        if (home && home[0] == '/')
                return strdup(home);
        struct passwd pw, *res = NULL;
        char buf[4096];
        fork_gate_enter(); /* NSS's locks: not reset in a child forked meanwhile */
        int e = getpwuid_r(getuid(), &pw, buf, sizeof(buf), &res);
        fork_gate_leave();
        if (e == 0 && res && res->pw_dir && res->pw_dir[0] == '/')
                return strdup(res->pw_dir);
        return NULL;
}

size_t text_edit_distance(const char *a, const char *b) {
        size_t la = strlen(a), lb = strlen(b), row[65];
        if (la > 64 || lb > 64)
                return SIZE_MAX;
        for (size_t j = 0; j <= lb; j++)
                row[j] = j;
        for (size_t i = 1; i <= la; i++) {
                size_t diag = row[0];
                row[0] = i;
                for (size_t j = 1; j <= lb; j++) {
                        size_t up = row[j];
                        size_t best = diag + ((a[i - 1] | 0x20) == (b[j - 1] | 0x20) ? 0 : 1);
                        if (up + 1 < best)
                                best = up + 1;
                        if (row[j - 1] + 1 < best)
                                best = row[j - 1] + 1;
                        row[j] = best;
                        diag = up;
                }
        }
        return row[lb];
}

const char *text_nearest(const char *word, const char *const *known, size_t n_known) {
        const char *best = NULL;
        size_t best_d = 3;
        for (size_t i = 0; word && i < n_known; i++) {
                size_t d = text_edit_distance(word, known[i]);
                if (d < best_d && strcmp(word, known[i]) != 0) {
                        best = known[i];
                        best_d = d;
                }
        }
        return best;
}
