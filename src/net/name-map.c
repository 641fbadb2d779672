/* SPDX-License-Identifier: Apache-2.0 */
/* Names by index (the address's offset in the range, from 1) and an open-addressing hash of
 * indexes by name, so both directions cost O(1) whatever a command resolves. */
#include "net/name-map.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define SLOTS (2 * NAME_MAP_MAX) /* a power of two, at most half full */

struct name_map {
        char **names;     /* names[i - 1]: the name of index i */
        size_t n;
        uint32_t *slots;  /* index + 0 (empty) */
};

static uint32_t hash(const char *s) {
        uint32_t h = 2166136261u; /* FNV-1a */
        for (; *s; s++)
                h = (h ^ (uint8_t) *s) * 16777619u;
        return h;
}

int name_map_new(name_map **ret) {
        name_map *m = calloc(1, sizeof(*m));
        if (m)
                m->slots = calloc(SLOTS, sizeof(*m->slots));
        if (m && m->slots)
                m->names = calloc(NAME_MAP_MAX, sizeof(*m->names));
        if (!m || !m->slots || !m->names) {
                name_map_free(m);
                return -ENOMEM;
        }
        *ret = m;
        return 0;
}

void name_map_free(name_map *m) {
        if (!m)
                return;
        for (size_t i = 0; m->names && i < m->n; i++)
                free(m->names[i]);
        free(m->names);
        free(m->slots);
        free(m);
}

static struct in_addr address_of(uint32_t index) {
        return (struct in_addr) { htonl(NAME_MAP_NET + index) };
}

/* The slot of `name`, or the empty slot where it would go (*found says which). */
static uint32_t slot_of(const name_map *m, const char *name, bool *found) {
        uint32_t h = hash(name) & (SLOTS - 1);
        for (;; h = (h + 1) & (SLOTS - 1)) {
                uint32_t i = m->slots[h];
                *found = i != 0 && strcmp(m->names[i - 1], name) == 0;
                if (i == 0 || *found)
                        return h;
        }
}

bool name_map_has(const name_map *m, const char *name) {
        bool found;
        (void) slot_of(m, name, &found);
        return found;
}

int name_map_address(name_map *m, const char *name, struct in_addr *ret) {
        bool found;
        uint32_t h = slot_of(m, name, &found);
        if (found) {
                *ret = address_of(m->slots[h]);
                return 0;
        }
        if (m->n >= NAME_MAP_MAX)
                return -ENOSPC;
        char *copy = strdup(name);
        if (!copy)
                return -ENOMEM;
        m->names[m->n++] = copy;
        m->slots[h] = (uint32_t) m->n;
        *ret = address_of((uint32_t) m->n);
        return 0;
}

bool name_map_is_synthetic(struct in_addr a) {
        return (ntohl(a.s_addr) >> (32 - NAME_MAP_BITS)) == (NAME_MAP_NET >> (32 - NAME_MAP_BITS));
}

const char *name_map_name(const name_map *m, struct in_addr a) {
        if (!name_map_is_synthetic(a))
                return NULL;
        uint32_t i = ntohl(a.s_addr) - NAME_MAP_NET;
        return i >= 1 && i <= m->n ? m->names[i - 1] : NULL;
}

size_t name_map_count(const name_map *m) {
        return m->n;
}
