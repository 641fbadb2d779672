/* SPDX-License-Identifier: Apache-2.0 */
/* Analytics-safe violation records (analytics.h). */
#include "run/analytics.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "run/events.h"
#include "secrets/secret-dir.h"
#include "util/util.h"

/* ---- the key -------------------------------------------------------------------------------- */

/* .config/cordon/secrets beneath `home`, created 0700 and walked without following a link
 * (secret_dir_open): a link planted at .config/cordon would otherwise send the key elsewhere. */
static int open_key_dir(const char *home, int *ret) {
        static const char *const parts[] = { ".config", "cordon", "secrets" };
        return secret_dir_open(home, parts, ELEMENTSOF(parts), true, ret);
}

/* Writes a fresh key to a temporary name and links it into place: two first runs at once end up
 * with one key (the loser of link() reads the winner's), and a reader never sees half a key. */
static int create_key(int dfd) {
        unsigned char k[ANALYTICS_KEY_BYTES];
        if (getrandom(k, sizeof(k), 0) != (ssize_t) sizeof(k))
                return -EIO;
        int fd = openat(dfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
        if (fd < 0)
                return -errno;
        char proc[64];
        (void) snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
        int r = write(fd, k, sizeof(k)) == (ssize_t) sizeof(k) && fsync(fd) == 0 ? 0 : -EIO;
        if (r == 0 && linkat(AT_FDCWD, proc, dfd, "analytics.key", AT_SYMLINK_FOLLOW) < 0 &&
            errno != EEXIST)
                r = -errno;
        explicit_bzero(k, sizeof(k));
        (void) close(fd);
        return r;
}

static int read_key(int dfd, unsigned char key[ANALYTICS_KEY_BYTES], const char **why) {
        int fd = openat(dfd, "analytics.key", O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        struct stat st;
        int r = fstat(fd, &st) < 0 ? -errno : 0;
        if (r == 0 && (!S_ISREG(st.st_mode) || st.st_uid != geteuid()))
                *why = "not a regular file of yours", r = -EPERM;
        else if (r == 0 && (st.st_mode & 077))
                *why = "readable or writable by others", r = -EPERM;
        else if (r == 0 && (st.st_size != ANALYTICS_KEY_BYTES ||
                            read(fd, key, ANALYTICS_KEY_BYTES) != ANALYTICS_KEY_BYTES))
                *why = "not 32 bytes long", r = -EINVAL;
        (void) close(fd);
        return r;
}

int analytics_key_load(const char *home, unsigned char key[ANALYTICS_KEY_BYTES],
                       cordon_error *err) {
        if (!home || home[0] != '/')
                return cordon_set_error(err, CORDON_POLICY_INVALID, EINVAL,
                                        "analytics: the home directory is not an absolute path; "
                                        "set HOME");
        int dfd = -1;
        int r = open_key_dir(home, &dfd);
        const char *why = NULL;
        if (r >= 0) {
                r = read_key(dfd, key, &why);
                if (r == -ENOENT && (r = create_key(dfd)) >= 0)
                        r = read_key(dfd, key, &why);
                (void) close(dfd);
        }
        if (r >= 0)
                return 0;
        if (why)
                return cordon_set_error(err, CORDON_POLICY_INVALID, -r,
                                        "analytics: the key %s/%s is %s; remove it (a new one "
                                        "is made on the next run)",
                                        home, ANALYTICS_KEY_PATH, why);
        return cordon_set_error(err, CORDON_LAUNCH_FAILED, -r,
                                "analytics: cannot read or create the key %s/%s: %s", home,
                                ANALYTICS_KEY_PATH, strerror(-r));
}

/* ---- records -------------------------------------------------------------------------------- */

int analytics_hash_hex(const unsigned char key[ANALYTICS_KEY_BYTES], const char *text,
                       char out[ANALYTICS_HASH_HEX]) {
        unsigned char md[EVP_MAX_MD_SIZE];
        unsigned int n = 0;
        if (!HMAC(EVP_sha256(), key, ANALYTICS_KEY_BYTES, (const unsigned char *) text,
                  strlen(text), md, &n) || n != 32)
                return -EIO;
        for (unsigned i = 0; i < n; i++)
                (void) snprintf(out + 2 * i, 3, "%02x", md[i]);
        return 0;
}

/* cordon's own vocabulary only: actions and syscall names are lower-case words ("openat",
 * "file-create-name", "file-read*"; the daemon's "fs.write"), error codes upper-case ones. Anything
 * else is "other", so no field can carry a path (no '/') or a host (no '.') into a record. */
static const char *word_or_other(const char *s, bool upper) {
        if (!s || !s[0] || strlen(s) > 31)
                return "other";
        const char *c = strncmp(s, "fs.", 3) == 0 && !upper ? s + 3 : s;
        for (; *c; c++)
                if (!(upper ? (*c >= 'A' && *c <= 'Z') || *c == '_'
                            : (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '-' ||
                                      *c == '_' || *c == '*' || *c == ':'))
                        return "other";
        return s;
}

/* Per action; past ANALYTICS_MAX_ACTIONS - 1 distinct ones the last slot counts the rest as
 * "other" (cordon has fewer actions than that). */
static void count(analytics *a, const char *action, uint64_t n) {
        a->violations += n;
        for (size_t i = 0; i < a->n_actions; i++)
                if (strcmp(a->by_action[i].action, action) == 0) {
                        a->by_action[i].n += n;
                        return;
                }
        size_t i = a->n_actions;
        if (i == ANALYTICS_MAX_ACTIONS - 1)
                action = "other";
        else if (i == ANALYTICS_MAX_ACTIONS) {
                a->by_action[i - 1].n += n;
                return;
        }
        (void) snprintf(a->by_action[i].action, sizeof(a->by_action[i].action), "%s", action);
        a->by_action[i].n = n;
        a->n_actions++;
}

static int dump_line(json_t *o, char *buf, size_t size) {
        char *s = o ? json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
        json_decref(o);
        if (!s)
                return -ENOMEM;
        int n = snprintf(buf, size, "%s\n", s);
        free(s);
        return n < 0 || (size_t) n >= size ? -E2BIG : n;
}

static json_t *record(const char *type) {
        struct timespec ts;
        char when[32];
        (void) clock_gettime(CLOCK_REALTIME, &ts);
        events_format_time(when, sizeof(when), (int64_t) ts.tv_sec, ts.tv_nsec);
        return json_pack("{s:s, s:s}", "type", type, "time", when);
}

int analytics_violation_line(analytics *a, const cordon_violation *v, char *buf, size_t size) {
        char hash[ANALYTICS_HASH_HEX];
        int r = analytics_hash_hex(a->key, v->target ? v->target : "", hash);
        if (r < 0)
                return r;
        const char *action = word_or_other(v->action, false);
        uint64_t n = v->count ? v->count : 1;
        count(a, action, n);
        json_t *o = record("violation");
        if (o && (json_object_set_new(o, "action", json_string(action)) < 0 ||
                  json_object_set_new(o, "syscall", json_string(word_or_other(v->syscall, false))) < 0 ||
                  json_object_set_new(o, "targetHash", json_string(hash)) < 0 ||
                  json_object_set_new(o, "count", json_integer((json_int_t) n)) < 0)) {
                json_decref(o);
                o = NULL;
        }
        return dump_line(o, buf, size);
}

int analytics_summary_line(const analytics *a, const char *end, int exit_code,
                           const char *error_code, char *buf, size_t size) {
        json_t *o = record("summary"), *by = json_object();
        bool ok = o && by;
        for (size_t i = 0; ok && i < a->n_actions; i++)
                ok = json_object_set_new(by, a->by_action[i].action,
                                         json_integer((json_int_t) a->by_action[i].n)) == 0;
        ok = ok &&
             json_object_set_new(o, "violations", json_integer((json_int_t) a->violations)) == 0;
        if (ok)
                ok = json_object_set_new(o, "byAction", by) == 0; /* takes `by` either way */
        else
                json_decref(by);
        by = NULL;
        ok = ok && json_object_set_new(o, "end", json_string(word_or_other(end, false))) == 0;
        if (ok && strcmp(end, "exit") == 0)
                ok = json_object_set_new(o, "exitCode", json_integer(exit_code)) == 0;
        if (ok && error_code)
                ok = json_object_set_new(o, "code", json_string(word_or_other(error_code, true))) == 0;
        json_decref(by);
        if (!ok) {
                json_decref(o);
                o = NULL;
        }
        return dump_line(o, buf, size);
}
