/* SPDX-License-Identifier: Apache-2.0 */
/* Internal helpers shared by every module: cleanup attributes, ownership transfer, small checked
 * wrappers. Conventions (docs/design/errors.md): internal functions return >= 0 or -errno. */
#pragma once

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cordon/cordon.h"

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _unused_ __attribute__((unused))
#define _noreturn_ __attribute__((noreturn))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define _warn_unused_ __attribute__((warn_unused_result))

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))

static inline void freep(void *p) {
        free(*(void **) p);
}
#define _cleanup_free_ _cleanup_(freep)

static inline void closep(int *fd) {
        if (*fd >= 0) {
                int saved = errno;
                (void) close(*fd); /* close(2) errors on a read-only/path fd carry no information */
                errno = saved;
        }
}
#define _cleanup_close_ _cleanup_(closep)

/* Hand ownership out of a _cleanup_ variable. */
#define TAKE_PTR(p)                                                                               \
        ({                                                                                        \
                __typeof__(p) _tp = (p);                                                          \
                (p) = NULL;                                                                       \
                _tp;                                                                              \
        })
#define TAKE_FD(fd)                                                                               \
        ({                                                                                        \
                int _tf = (fd);                                                                   \
                (fd) = -1;                                                                        \
                _tf;                                                                              \
        })

/* Milliseconds of CLOCK_MONOTONIC: deadlines and timeouts, which a change of the wall clock must
 * not move. */
int64_t monotonic_ms(void);

/* Closes fd if >= 0 and returns -1, for "fd = safe_close(fd);". */
int safe_close(int fd);
/* A pipe with FD_CLOEXEC on both ends (pipe2 where there is one: no window in which a fork of
 * another thread inherits them); 0 or -errno. */
int pipe_cloexec(int fds[2]);

/* Retries on EINTR; returns bytes or -errno. Loops until all is written. */
ssize_t write_all(int fd, const void *buf, size_t len);
/* Reads until len bytes or EOF; returns bytes read or -errno. */
ssize_t read_full(int fd, void *buf, size_t len);

/* ---- Whole small files, with a size cap: the one bounded reader. ---------------------------- */
/* Reads `fd` to its end, at most `max` bytes (max < SIZE_MAX), into a malloc'ed buffer with a NUL
 * after the content (*ret_len, if non-NULL, gets the length; the bytes may hold NULs). The buffer
 * grows as the data comes, so a large cap costs nothing for a small file; one byte past the cap
 * is read to tell "exactly max" from "more" (a file that grew after an fstat() size check is
 * still caught). Returns 0, -EFBIG when there is more than `max`, or -errno. */
int read_fd_bounded(int fd, size_t max, char **ret, size_t *ret_len);

/* Flags of read_file_at(). */
#define READ_FILE_NOFOLLOW (1U << 0) /* a symlink as the final component is refused (-ELOOP) */
/* Only a regular file (else -EINVAL), opened O_NONBLOCK: a FIFO planted at the path must not
 * hang the reader. */
#define READ_FILE_REGULAR (1U << 1)
#define READ_FILE_TEXT (1U << 2) /* a NUL byte in the content is refused (-EINVAL) */

/* Opens `path` (relative to dirfd) read-only and reads it with read_fd_bounded(). */
int read_file_at(int dirfd, const char *path, size_t max, unsigned flags, char **ret,
                 size_t *ret_len);

/* Copies a public options struct that carries its own size in its first member (`size_t size`,
 * set by its _init()) into `out` (out_size bytes, already initialised to the defaults): a smaller
 * one (an older caller) leaves the rest at the defaults; a larger one (a newer caller) may only
 * carry zeros beyond out_size: a field this library cannot honour is refused (CORDON_USAGE),
 * never ignored. out's size member ends up out_size. `name` names the struct in errors. */
int options_read_sized(void *out, size_t out_size, const void *in, const char *name,
                       cordon_error *err);

/* Error reporting into a public cordon_error (NULL-safe). Returns -abs(sys_errno) or -EINVAL so
 * callers can `return cordon_set_error(...)`. */
int cordon_set_error(cordon_error *err, cordon_code code, int sys_errno, const char *fmt, ...)
        _printf_(4, 5);
/* Prefixes context to an already-set message: "context: previous message". */
void cordon_error_prefix(cordon_error *err, const char *fmt, ...) _printf_(2, 3);

/* ---- A growable vector of owned strings, NULL-terminated. ------------------------------------ */
typedef struct strv {
        char **v;  /* v[n] == NULL when v != NULL */
        size_t n;
} strv;

int strv_push(strv *s, const char *str);         /* copies */
int strv_push_take(strv *s, char *str);          /* takes ownership (also on failure) */
int strv_push_unique(strv *s, const char *str);  /* copies unless already present */
bool strv_contains(const strv *s, const char *str);
int strv_extend(strv *dst, const strv *src);     /* copies each */
int strv_copy(strv *dst, const strv *src);       /* dst must be empty */
void strv_done(strv *s);                         /* frees content, leaves {NULL,0} */

/* ---- "NAME=value" entries of an environment (envp, or a strv's v). ------------------------- */
/* Index of the first entry of the NULL-terminated `env` (NULL: empty) that is "NAME=...", or -1.
 * The first, as getenv() reads it. `name` holds no '='. */
ssize_t env_find(char *const *env, const char *name);
/* The value of that entry (after the '='), or NULL. */
const char *env_get(char *const *env, const char *name);
/* NAME=value (copied) in place of the first NAME entry of `env`, else appended. */
int strv_env_set(strv *env, const char *name, const char *value);
/* Removes every NAME entry of `env`; returns how many there were. */
size_t strv_env_unset(strv *env, const char *name);

/* Path helpers (pure string operations, no filesystem access). */
bool path_is_absolute(const char *p);
/* Lexical normalisation: collapses "//", "/./", trailing "/"; refuses ".." (returns -EINVAL). */
int path_normalize(const char *in, char **ret);
/* True when `path` is `prefix` or beneath it (component-wise). */
bool path_startswith(const char *path, const char *prefix);
/* "a" + "/" + "b" with exactly one slash. */
char *path_join(const char *a, const char *b);
/* The user's home: HOME from `env` (NULL: the process's environment; its first HOME entry, the
 * one the command's getenv() would see) when absolute, else the password database's entry. Caller frees; NULL when neither is usable. */
char *home_dir_of(char *const *env);

/* Checked decimal/size parsing: "512", "64M", "1G" (binary units). -EINVAL / -ERANGE. */
/* Edit distance, ASCII case-insensitive, for short words only (bounded work: SIZE_MAX for
 * words longer than 64 bytes). The "did you mean" of policy keys and of the CLI. */
size_t text_edit_distance(const char *a, const char *b);
/* The entry of `known` nearest to `word` within distance 2 (the bound policy files use; the
 * first of equals), NULL when none is that near. An identical entry is no suggestion ("Exec" suggests "exec"). */
const char *text_nearest(const char *word, const char *const *known, size_t n_known);

int parse_u64(const char *s, uint64_t *ret);
int parse_size(const char *s, uint64_t *ret);
/* "30", "30s", "500ms", "2m" → milliseconds. */
int parse_duration_ms(const char *s, uint64_t *ret);
