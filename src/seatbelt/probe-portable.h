/* SPDX-License-Identifier: Apache-2.0 */
/* `cordon probe` on hosts that are not Linux (docs/design/backends.md): macOS has Seatbelt (native,
 * partial: no PID isolation, no syscall filter), every other platform has no native sandbox, and
 * the probe says so instead of pretending. The verdicts and their rendering are pure and
 * unit-tested on Linux; probe-host.c (built on those hosts only) gathers the two facts and
 * implements the public cordon_probe_* calls with them. */
#pragma once

#include "util/util.h"

typedef struct portable_facts {
        char system[64];          /* uname -s: "Darwin", "FreeBSD", ... */
        char release[64];         /* uname -r */
        bool darwin;
        bool sandbox_exec;        /* /usr/bin/sandbox-exec is an executable file */
} portable_facts;

typedef struct portable_backend {
        cordon_backend backend;
        const char *status;       /* "full", "partial" or "unusable" (static) */
        bool fs, name_rules, network, pid, syscalls;
        bool requires_install;
        char description[160];
        char hint[512];
} portable_backend;

#define PORTABLE_N_BACKENDS 4 /* native, landlock, microvm, none: the order they are reported in */

/* Pure: each backend's verdict on a host with these facts. */
void portable_probe_evaluate(const portable_facts *f, portable_backend ret[PORTABLE_N_BACKENDS]);
/* The backend "auto" resolves to (a cordon_backend), or -1: it never steps down to none. */
int portable_default_backend(const portable_backend b[PORTABLE_N_BACKENDS]);
/* Rendered like the Linux probe's output (caller frees; NULL on allocation failure). */
char *portable_probe_text(const portable_facts *f, const portable_backend b[PORTABLE_N_BACKENDS]);
char *portable_probe_json(const portable_facts *f, const portable_backend b[PORTABLE_N_BACKENDS]);
