/* SPDX-License-Identifier: Apache-2.0 */
/* The run's synthetic addresses (docs/design/network.md, "Names without a leak"): the sandbox's
 * DNS responder answers an allowed name with an address of its own from 198.18.0.0/15 (reserved
 * for benchmarking, RFC 2544: never a real destination), one per name for the whole run, and the
 * proxy maps a connection to that address back to the name, so `ssh github.com` is judged as
 * github.com:22 with the rules for names, and dialled by resolving the name outside. A client
 * never learns a real address, so nothing it resolved can be rebound under it. Pure. */
#pragma once

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>

#define NAME_MAP_NET 0xc6120000u   /* 198.18.0.0 */
#define NAME_MAP_BITS 15           /* /15: 131,072 addresses */
#define NAME_MAP_MAX 65536         /* names per run; one more is refused (ENOSPC) */

typedef struct name_map name_map;

int name_map_new(name_map **ret);
void name_map_free(name_map *m);

/* The address of `name` (canonical: net_host_canon()), assigned on first use. Returns 0, -ENOSPC
 * when the run has NAME_MAP_MAX names already, or -ENOMEM. */
int name_map_address(name_map *m, const char *name, struct in_addr *ret);

/* Whether `name` has an address already (nothing is assigned). */
bool name_map_has(const name_map *m, const char *name);

/* Whether `a` is in the synthetic range at all (an address there that maps to no name is a
 * connection nothing resolved: refused, never dialled). */
bool name_map_is_synthetic(struct in_addr a);

/* The name `a` was given to, or NULL. */
const char *name_map_name(const name_map *m, struct in_addr a);

/* How many names the map holds. */
size_t name_map_count(const name_map *m);
