/* SPDX-License-Identifier: Apache-2.0 */
/* The landlock backend's Landlock rule sets, as data (docs/design/landlock-backend.md).
 *
 * Without namespaces there is no mount plan: Landlock alone decides what the command may read,
 * execute and write. Landlock only grants ("rights beneath this directory"); it cannot take a
 * right back beneath a granted directory. So a path that must stay out of reach (a secret, a
 * protected file inside a writable root) is *carved out*: its ancestors get no such right, and
 * every other child of every ancestor gets it one by one, as found on disk when the plan is made.
 *
 * Two layers, applied in that order (Landlock layers intersect):
 *   monitor  — the monitor (the creation-rule supervisor, which performs creations for the
 *              command) and, inherited, the command: read and execute everywhere except the
 *              secrets; every write right beneath the writable roots and the run's private
 *              TMPDIR; a few /dev nodes; TCP connect to the proxy's ports only and no TCP bind;
 *              abstract Unix socket and signal scoping.
 *   command  — the command only: file writes (WRITE_FILE, TRUNCATE) carved around the protected
 *              paths that exist, so their content is kernel-protected (the supervisor refuses
 *              their removal, renaming and re-creation); and scoping again, which keeps the
 *              command from signalling the monitor (a process outside its own domain).
 *
 * Building reads directories (to enumerate the siblings of carved paths) but changes no kernel
 * state; linux/landlock-layer.c applies a layer. */
#pragma once

#include <stdint.h>

#include "plan/plan.h"

/* The Landlock ABI the backend requires: 6 (Linux 6.12) adds signal scoping, without which the
 * command could signal every process of the user (there is no PID namespace); 3 adds TRUNCATE
 * (an O_TRUNC open is a write), 4 TCP port rules. */
#define LANDLOCK_PLAN_MIN_ABI 6

/* Most rules one layer may hold: a directory holding a secret with more entries than this is
 * refused (POLICY_UNENFORCEABLE) rather than enumerated without end. */
#define LANDLOCK_PLAN_MAX_RULES 20000

typedef struct ll_rule {
        char *path;       /* absolute, symlink-free; a directory (rights beneath) or any file */
        uint64_t access;  /* LANDLOCK_ACCESS_FS_*, already masked to file rights for non-dirs */
} ll_rule;

typedef struct ll_layer {
        const char *name;     /* "monitor", "command" */
        uint64_t handled_fs;
        uint64_t handled_net;
        uint64_t scoped;
        ll_rule *rules;
        size_t n_rules;
        uint16_t connect_ports[2]; /* TCP connect allowed to these ports (0: unused) */
        uint64_t stdio_access;     /* granted on the files open on fds 0-2, per their access mode,
                                    * at apply time (a reopen through /dev/stdout must work) */
} ll_layer;

typedef struct landlock_plan {
        ll_layer monitor;
        ll_layer command;
        /* What the carving cost, for `policy show` and the docs: directories whose entries were
         * granted one by one (new entries in them stay unreadable / unwritable). */
        strv carved_read;
        strv carved_write;
} landlock_plan;

typedef struct landlock_plan_options {
        int abi;                /* the running kernel's Landlock ABI (>= LANDLOCK_PLAN_MIN_ABI) */
        const char *tmpdir;     /* the run's private TMPDIR (absolute, existing), or NULL */
        const char *ca_dir;     /* TLS inspection's bundle directory: read only; or NULL */
        uint16_t proxy_ports[2];/* the egress proxy's HTTP and SOCKS5 ports on 127.0.0.1 (0: none) */
} landlock_plan_options;

/* Fails with CORDON_POLICY_UNENFORCEABLE when a directory that must be enumerated cannot be read
 * or holds too many entries, and CORDON_SANDBOX_UNAVAILABLE when `abi` is too old. */
int landlock_plan_build(const plan *p, const landlock_plan_options *opts, landlock_plan **ret,
                        cordon_error *err);
void landlock_plan_free(landlock_plan *lp);

/* The /dev nodes the command may open (read and write): the rest of the host's /dev, its
 * terminals (/dev/pts: the user's other terminals, whose input could be read) and /dev/shm
 * (shared with the host) are out of reach. NULL-terminated. */
extern const char *const landlock_plan_dev_nodes[];
