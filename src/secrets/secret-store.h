/* SPDX-License-Identifier: Apache-2.0 */
/* cordon's secret store (docs/design/secrets.md): named secrets the user sets with
 * `cordon secret set NAME`, which a policy's `credentials` bind to hosts. The sandbox never
 * reads the store: the launcher reads a bound secret and gives it to the egress proxy alone,
 * and the store's directory is in the secret read-deny set (src/plan/plan.c).
 *
 * Where a secret lives: the Secret Service when the session bus has one (secret-service.c),
 * else one file per secret in $HOME/.config/cordon/secrets/store/ (secret-file.c: the
 * directory 0700, each file 0600, owned by the caller; $XDG_CONFIG_HOME is not consulted, so
 * the read-deny set always covers the store). Values are bytes (at most SECRET_VALUE_MAX, no
 * NUL); a value handed out is the caller's to wipe and free (secret_value_free). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "cordon/cordon.h"
#include "util/util.h"

#define SECRET_NAME_MAX 64
#define SECRET_VALUE_MAX 16384
/* Relative to $HOME: the file store's directory (inside the read-deny set's
 * .config/cordon/secrets). */
#define SECRET_FILE_DIR ".config/cordon/secrets/store"

typedef enum secret_backend {
        SECRET_BACKEND_FILE,    /* the 0600 files */
        SECRET_BACKEND_SERVICE, /* the Secret Service on the session bus */
} secret_backend;

/* A name is 1..SECRET_NAME_MAX of [A-Za-z0-9._-], not starting with '.' or '-': it is a file
 * name in the file store and a shell-safe word in messages. */
bool secret_name_valid(const char *name);

/* The file store (secret-file.c), beneath `home` (absolute). Each returns 0 or -errno with err
 * set; -ENOENT (CORDON_USAGE) from get and remove when the name is not stored. */
int secret_file_get(const char *home, const char *name, char **value, size_t *len,
                    cordon_error *err);
int secret_file_set(const char *home, const char *name, const char *value, size_t len,
                    cordon_error *err);
int secret_file_remove(const char *home, const char *name, cordon_error *err);
/* The stored names, sorted. */
int secret_file_list(const char *home, strv *names, cordon_error *err);

/* Wipes and frees a value from a get. */
void secret_value_free(char *value, size_t len);

/* The Secret Service (secret-service.c): a connection to the session bus. open returns 1 with
 * *ret set when org.freedesktop.secrets is on the bus (owned, or activatable); 0 when there is no
 * session bus (DBUS_SESSION_BUS_ADDRESS unset) or no service on it; -errno when the bus cannot be
 * asked (libsystemd.so.0 missing, the bus not answering). `why` (of `size`) says which, in words.
 * The other calls are the file store's, on an open connection; they do not check name or value
 * (secret_store_* do). -EACCES (CORDON_LAUNCH_FAILED) when the collection is locked. */
typedef struct secret_service secret_service;
int secret_service_open(secret_service **ret, char *why, size_t size);
void secret_service_close(secret_service *s);
int secret_service_get(secret_service *s, const char *name, char **value, size_t *len,
                       cordon_error *err);
int secret_service_set(secret_service *s, const char *name, const char *value, size_t len,
                       cordon_error *err);
int secret_service_remove(secret_service *s, const char *name, cordon_error *err);
int secret_service_list(secret_service *s, strv *names, cordon_error *err);

/* The store in use, for `cordon secret` and `cordon probe` (secret-store.c): fills `backend` and
 * `why` ("no Secret Service on the session bus", ...). Returns 0, or -errno when the session
 * bus has, or may have, a Secret Service that cannot be used: then no store is used (the user's
 * secrets may be in the service; the file store would quietly be a different set). */
int secret_store_which(secret_backend *backend, char *why, size_t size);
/* "file" or "secret-service". */
const char *secret_backend_to_string(secret_backend b);

/* The store in use (the Secret Service when the session bus has one, else the files), for the
 * launcher: the value of `name`, 0 or -errno with err set (-ENOENT, CORDON_USAGE, when it is
 * not stored). `home` is the caller's $HOME (the file store's place). Read through a cache in
 * this process's memory (secret-cache.c): the store is asked at most once every
 * SECRET_CACHE_SECONDS per name. */
int secret_store_get(const char *home, const char *name, char **value, size_t *len,
                     cordon_error *err);
/* `cordon secret set|rm|list`: the store in use, name and value checked; set and remove drop the
 * name from this process's cache. list's `backend` (may be NULL) says which store answered. */
int secret_store_set(const char *home, const char *name, const char *value, size_t len,
                     cordon_error *err);
int secret_store_remove(const char *home, const char *name, cordon_error *err);
int secret_store_list(const char *home, strv *names, secret_backend *backend, cordon_error *err);
