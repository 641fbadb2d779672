/* SPDX-License-Identifier: Apache-2.0 */
/* The trust store (docs/settings.md, "Trusting a project file"): which project settings files
 * may loosen the sandbox, each keyed by its absolute path and the SHA-256 of its exact content.
 * It lives in ~/.config/cordon/trusted-projects.json, which every plan protects
 * (data/protected/names.list): a sandboxed command can neither write the record nor create it.
 * Internal to src/settings/. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "cordon/cordon.h"
#include "policy/json-pos.h"

#define TRUST_STORE_FILE ".config/cordon/trusted-projects.json"
#define TRUST_SHA256_HEX 65 /* 64 hex digits and the NUL */
#define TRUST_MAX_ENTRIES 4096u

typedef struct trust_entry {
        char *path;                    /* absolute, normalised */
        char sha256[TRUST_SHA256_HEX]; /* lower-case hex */
} trust_entry;

typedef struct trust_store {
        trust_entry *v; /* sorted by path when saved */
        size_t n;
} trust_store;

/* The SHA-256 of `len` bytes as lower-case hex. Returns 0 or -EIO (libcrypto failed). */
int trust_sha256_hex(const void *data, size_t len, char ret[TRUST_SHA256_HEX]);

/* Parses a store document strictly: one object {"trusted": [{"path", "sha256"}, ...]}, no other
 * key, absolute normalised paths, each once, 64 lower-case hex digits. Errors are POLICY_INVALID
 * "origin:line:col: key 'trusted[0].sha256': ...; hint". */
int trust_store_parse(const char *origin, const char *text, size_t len, trust_store **ret,
                      cordon_error *err);
/* Reads the store at `path` (absolute). A missing file (or directory) is an empty store. Refused
 * when it is not a regular file (a symlink included), belongs to someone other than the caller,
 * is writable by others, or sits in a directory others can write: whoever could write it could
 * trust files for us. */
int trust_store_load(const char *path, trust_store **ret, cordon_error *err);
void trust_store_free(trust_store *t);

/* Whether `path` is recorded with exactly this content hash. */
bool trust_store_has(const trust_store *t, const char *path, const char *sha256);
/* Records (or replaces) path's hash; removes path. 0 / 1 = done, 0 = not there (remove), or
 * -ENOMEM / -E2BIG. */
int trust_store_set(trust_store *t, const char *path, const char *sha256);
int trust_store_remove(trust_store *t, const char *path);

/* Writes the store to `path` atomically (a temporary file in the same directory, mode 0600,
 * fsync, rename), creating the directories ~/.config and ~/.config/cordon (0700) when missing. */
int trust_store_save(const trust_store *t, const char *path, cordon_error *err);
