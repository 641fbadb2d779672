/* SPDX-License-Identifier: Apache-2.0 */
/* Which store a secret is read from and written to (secret-store.h, docs/design/secrets.md
 * "Which store"): the Secret Service when the session bus has one, the files only when it has
 * none. A name is looked up in the one store in use, never in both: with a service on the bus a
 * file left in the store is not read (listing says so), so what a credential sends is what the
 * user's keyring holds, and a sandboxed command that could once write the file store (it cannot:
 * it is read- and write-denied) would not shadow it. */
#include "secrets/secret-store.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "secrets/secret-cache.h"
#include "util/fork-gate.h"

const char *secret_backend_to_string(secret_backend b) {
        return b == SECRET_BACKEND_SERVICE ? "secret-service" : "file";
}

/* Opens the store in use: *svc set for the Secret Service, NULL for the files. A bus that has,
 * or may have, a service that cannot be asked is an error, never a quiet switch to the files:
 * the secrets the user keeps in their keyring would be replaced by a set they never chose. */
static int store_open(secret_service **svc, cordon_error *err) {
        char why[256];
        int r = secret_service_open(svc, why, sizeof(why));
        if (r < 0)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, -r,
                                        "secrets: %s; cordon uses no secret store until it can "
                                        "(unset DBUS_SESSION_BUS_ADDRESS to use the file store "
                                        "instead)",
                                        why);
        return 0;
}

int secret_store_which(secret_backend *backend, char *why, size_t size) {
        secret_service *svc = NULL;
        fork_gate_enter(); /* as the entries below: libsystemd and the loader */
        int r = secret_service_open(&svc, why, size);
        *backend = r > 0 ? SECRET_BACKEND_SERVICE : SECRET_BACKEND_FILE;
        secret_service_close(svc);
        fork_gate_leave();
        return r < 0 ? r : 0;
}

static int bad_value(cordon_error *err) {
        return cordon_set_error(err, CORDON_USAGE, EINVAL,
                                "secrets: a value is 1-%d bytes with no NUL byte",
                                SECRET_VALUE_MAX);
}

static int bad_name(const char *name, cordon_error *err) {
        return cordon_set_error(err, CORDON_USAGE, EINVAL,
                                "secrets: '%s' is not a secret name (1-%d of A-Z a-z 0-9 . _ -, "
                                "not starting with '.' or '-')",
                                name ? name : "", SECRET_NAME_MAX);
}

static int read_store(const char *home, const char *name, char **value, size_t *len,
                      cordon_error *err) {
        secret_service *svc = NULL;
        int r = store_open(&svc, err);
        if (r < 0)
                return r;
        r = svc ? secret_service_get(svc, name, value, len, err)
                : secret_file_get(home, name, value, len, err);
        secret_service_close(svc);
        return r;
}

static int store_get(const char *home, const char *name, char **value, size_t *len,
                     cordon_error *err) {
        if (!secret_name_valid(name))
                return bad_name(name, err);
        if (!home || home[0] != '/')
                return secret_file_get(home, name, value, len, err); /* its "set HOME" error */
        int r = secret_cache_get(home, name, value, len);
        if (r != -ENOENT)
                return r < 0 ? cordon_set_error(err, CORDON_LAUNCH_FAILED, -r,
                                                "secrets: out of memory")
                             : 0;
        r = read_store(home, name, value, len, err);
        if (r >= 0)
                secret_cache_put(home, name, *value, *len);
        return r;
}

static int store_set(const char *home, const char *name, const char *value, size_t len,
                     cordon_error *err) {
        if (!secret_name_valid(name))
                return bad_name(name, err);
        if (len == 0 || len > SECRET_VALUE_MAX || memchr(value, '\0', len))
                return bad_value(err);
        secret_service *svc = NULL;
        int r = store_open(&svc, err);
        if (r < 0)
                return r;
        r = svc ? secret_service_set(svc, name, value, len, err)
                : secret_file_set(home, name, value, len, err);
        secret_service_close(svc);
        if (home)
                secret_cache_forget(home, name);
        return r;
}

static int store_remove(const char *home, const char *name, cordon_error *err) {
        if (!secret_name_valid(name))
                return bad_name(name, err);
        secret_service *svc = NULL;
        int r = store_open(&svc, err);
        if (r < 0)
                return r;
        r = svc ? secret_service_remove(svc, name, err) : secret_file_remove(home, name, err);
        secret_service_close(svc);
        if (home)
                secret_cache_forget(home, name);
        return r;
}

static int compare_names(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

static int store_list(const char *home, strv *names, secret_backend *backend, cordon_error *err) {
        secret_service *svc = NULL;
        int r = store_open(&svc, err);
        if (r < 0)
                return r;
        if (backend)
                *backend = svc ? SECRET_BACKEND_SERVICE : SECRET_BACKEND_FILE;
        r = svc ? secret_service_list(svc, names, err) : secret_file_list(home, names, err);
        secret_service_close(svc);
        if (r >= 0 && names->n > 1) /* the service answers in no particular order */
                qsort(names->v, names->n, sizeof(char *), compare_names);
        return r;
}

/* The public entries run inside the fork gate (util/fork-gate.h), as the library's NSS calls do:
 * a fork waits for a store's read or write to end (at most the bus's call timeout), so no child
 * starts with a lock of libsystemd's, the loader's or the cache's held by a thread it does not
 * have. */
int secret_store_get(const char *home, const char *name, char **value, size_t *len,
                     cordon_error *err) {
        fork_gate_enter();
        int r = store_get(home, name, value, len, err);
        fork_gate_leave();
        return r;
}

int secret_store_set(const char *home, const char *name, const char *value, size_t len,
                     cordon_error *err) {
        fork_gate_enter();
        int r = store_set(home, name, value, len, err);
        fork_gate_leave();
        return r;
}

int secret_store_remove(const char *home, const char *name, cordon_error *err) {
        fork_gate_enter();
        int r = store_remove(home, name, err);
        fork_gate_leave();
        return r;
}

int secret_store_list(const char *home, strv *names, secret_backend *backend, cordon_error *err) {
        fork_gate_enter();
        int r = store_list(home, names, backend, err);
        fork_gate_leave();
        return r;
}
