/* SPDX-License-Identifier: Apache-2.0 */
/* The cache of secret_store_get (docs/design/secrets.md "The cache"): each value read is kept in
 * this process's memory for SECRET_CACHE_SECONDS, so a long-lived process (cordond) asks the
 * store at most that often per name. Safe with threads (one mutex, held only around memory
 * copies, never around a store's I/O) and with fork (every use is inside the fork gate, so no
 * fork finds the mutex held; a pthread_atfork child handler zeroes the child's copy of every
 * value: a sandbox's first process, a fork of its launcher, carries no secret into the command
 * it execs). */
#pragma once

#include <stddef.h>
#include <stdint.h>

#define SECRET_CACHE_SECONDS 30
#define SECRET_CACHE_ENTRIES 64 /* past this many names the oldest is dropped */

/* 0 with a fresh copy of the value (the caller wipes and frees it: secret_value_free) when
 * (home, name) was read less than SECRET_CACHE_SECONDS ago; -ENOENT when not; -ENOMEM. */
int secret_cache_get(const char *home, const char *name, char **value, size_t *len);
/* Keeps a copy of the value, read now. Best effort: a full or failed allocation keeps nothing. */
void secret_cache_put(const char *home, const char *name, const char *value, size_t len);
/* Wipes (home, name)'s entry; name NULL: every entry of home; home NULL: every entry. */
void secret_cache_forget(const char *home, const char *name);

/* For tests: the clock the cache reads (milliseconds, monotonic); NULL restores CLOCK_MONOTONIC. */
void secret_cache_set_clock(uint64_t (*now_ms)(void));
