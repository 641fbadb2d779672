/* SPDX-License-Identifier: Apache-2.0 */
/* The in-memory cache of secret-cache.h. */
#include "secrets/secret-cache.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "secrets/secret-store.h"
#include "util/fork-gate.h"
#include "util/util.h"

typedef struct entry {
        char *home; /* NULL: the slot is free */
        char name[SECRET_NAME_MAX + 1];
        char *value;
        size_t len;
        uint64_t read_ms;
} entry;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static entry entries[SECRET_CACHE_ENTRIES];
static uint64_t (*clock_fn)(void);
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;


static uint64_t now_ms(void) {
        return clock_fn ? clock_fn() : (uint64_t) monotonic_ms();
}

static void entry_wipe(entry *e) {
        secret_value_free(e->value, e->len);
        free(e->home);
        *e = (entry) { 0 };
}

/* Every use of the cache is inside the fork gate (util/fork-gate.h): a fork waits until no
 * thread is between lock and unlock, so the child finds the mutex free and every entry whole.
 * (Taking the mutex in a pthread_atfork prepare handler instead would deadlock: the gate's own
 * prepare handler waits for the entered threads, one of which may be waiting for the mutex.)
 * The child zeroes every value but frees nothing: a thread of the caller's own, outside the
 * gate, may have been in malloc at the fork, and not every allocator (a sanitizer's) is safe to
 * call then. What stays allocated is reachable from `entries` and goes with the child's exec or
 * exit. */
static void after_fork_child(void) {
        for (size_t i = 0; i < SECRET_CACHE_ENTRIES; i++)
                if (entries[i].value) {
                        explicit_bzero(entries[i].value, entries[i].len);
                        entries[i].len = 0;
                        entries[i].read_ms = 0;
                        entries[i].name[0] = '\0';
                }
}

static void register_atfork(void) {
        (void) pthread_atfork(NULL, NULL, after_fork_child);
}

static void cache_lock(void) {
        fork_gate_enter();
        (void) pthread_mutex_lock(&lock);
}

static void cache_unlock(void) {
        (void) pthread_mutex_unlock(&lock);
        fork_gate_leave();
}

/* Wipes each entry older than SECRET_CACHE_SECONDS (a wiped child's entries too: len 0). With the
 * lock held. */
static void expire(uint64_t now) {
        for (size_t i = 0; i < SECRET_CACHE_ENTRIES; i++)
                if (entries[i].home &&
                    (entries[i].len == 0 || now - entries[i].read_ms >= SECRET_CACHE_SECONDS * 1000))
                        entry_wipe(&entries[i]);
}

static entry *find(const char *home, const char *name) {
        for (size_t i = 0; i < SECRET_CACHE_ENTRIES; i++)
                if (entries[i].home && strcmp(entries[i].home, home) == 0 &&
                    strcmp(entries[i].name, name) == 0)
                        return &entries[i];
        return NULL;
}

int secret_cache_get(const char *home, const char *name, char **value, size_t *len) {
        (void) pthread_once(&atfork_once, register_atfork);
        uint64_t now = now_ms();
        int r = -ENOENT;
        cache_lock();
        expire(now);
        entry *e = find(home, name);
        if (e) {
                char *copy = malloc(e->len + 1);
                if (copy) {
                        memcpy(copy, e->value, e->len + 1);
                        *value = copy;
                        *len = e->len;
                        r = 0;
                } else {
                        r = -ENOMEM;
                }
        }
        cache_unlock();
        return r;
}

/* The free slot, else the oldest entry (wiped). With the lock held. */
static entry *slot_for(const char *home, const char *name) {
        entry *e = find(home, name);
        if (e)
                return e;
        entry *oldest = &entries[0];
        for (size_t i = 0; i < SECRET_CACHE_ENTRIES; i++) {
                if (!entries[i].home)
                        return &entries[i];
                if (entries[i].read_ms < oldest->read_ms)
                        oldest = &entries[i];
        }
        return oldest;
}

void secret_cache_put(const char *home, const char *name, const char *value, size_t len) {
        if (strlen(name) > SECRET_NAME_MAX)
                return;
        (void) pthread_once(&atfork_once, register_atfork);
        fork_gate_enter(); /* the copies' allocation too: a child may free them */
        char *h = strdup(home);
        char *v = malloc(len + 1);
        if (!h || !v) {
                free(h);
                free(v);
                fork_gate_leave();
                return;
        }
        memcpy(v, value, len);
        v[len] = '\0';
        uint64_t now = now_ms();
        cache_lock();
        expire(now);
        entry *e = slot_for(home, name);
        entry_wipe(e);
        *e = (entry) { .home = h, .value = v, .len = len, .read_ms = now };
        memcpy(e->name, name, strlen(name) + 1);
        cache_unlock();
        fork_gate_leave();
}

void secret_cache_forget(const char *home, const char *name) {
        cache_lock();
        for (size_t i = 0; i < SECRET_CACHE_ENTRIES; i++)
                if (entries[i].home && (!home || strcmp(entries[i].home, home) == 0) &&
                    (!name || strcmp(entries[i].name, name) == 0))
                        entry_wipe(&entries[i]);
        cache_unlock();
}

/* The values are wiped when the process exits normally too (a core dump taken later, of a
 * process that has not exited, is not covered: the cache lasts SECRET_CACHE_SECONDS). */
__attribute__((destructor)) static void wipe_at_exit(void) {
        secret_cache_forget(NULL, NULL);
}

void secret_cache_set_clock(uint64_t (*now)(void)) {
        cache_lock();
        clock_fn = now;
        cache_unlock();
}
