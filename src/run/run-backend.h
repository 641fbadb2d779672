/* SPDX-License-Identifier: Apache-2.0 */
/* The backends a platform's launcher drives, and the one rule for choosing among them
 * (docs/design/backends.md). Each platform has one table of run_backend entries — Linux's
 * native, landlock, none and microvm (src/linux/launch-backends.c, where each entry carries the
 * launch sequence's hooks), macOS's Seatbelt native and none (src/seatbelt/launch-macos.c) — so a
 * backend plugs in once, as an entry, and every launcher picks it the same way. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "cordon/cordon.h"

typedef struct run_backend {
        cordon_backend id;
        bool confined;        /* false: the none backend (nothing confines the command) */
        /* Whether this host can run it now: 0, or -errno with SANDBOX_UNAVAILABLE saying why
         * and what to do. NULL: always. */
        int (*available)(cordon_error *err);
} run_backend;

/* The entry that runs `requested`: AUTO is the table's first entry (the platform's best), any
 * other backend its own entry, and a backend the platform's table does not have is refused
 * (SANDBOX_UNAVAILABLE, naming `platform`) — never replaced by another: an explicitly requested
 * backend never steps down, and nothing runs unconfined unless that was asked for. (The one step
 * an unspecified backend may take, native → landlock on Linux when native cannot start, is its
 * launcher's: it needs the probe.) Whether the host can run the entry is its available(). */
int run_backend_pick(const run_backend *const *table, size_t n, cordon_backend requested,
                     const char *platform, const run_backend **ret, cordon_error *err);
