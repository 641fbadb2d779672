/* SPDX-License-Identifier: Apache-2.0 */
/* `cordon mcp`: a Model Context Protocol server over stdio (docs/mcp.md). It runs every command
 * and file operation through libcordon's public API (cordon_spawn, cordon_session_*,
 * cordon_fs_*) under one policy its caller resolved, exactly as `cordon run` resolves its own. */
#pragma once

#include "cordon/cordon.h"

typedef struct mcp_config {
        const cordon_policy *policy; /* resolved; every call runs under it */
        cordon_backend backend;      /* for cold execs (shell) */
        const char *cwd;             /* absolute: relative paths and cwd arguments resolve here */
        int in_fd, out_fd;           /* the protocol's stream */
        const char *unprotected;     /* why the runs are unconfined, or NULL: told in the
                                      * initialize result's instructions */
} mcp_config;

/* Serves until `in_fd` ends (or `out_fd` can no longer be written): then every call still
 * running is killed, every session destroyed, and 0 returned. A negative errno with `err` set
 * when the server cannot start (out of memory, threads). */
int mcp_serve(const mcp_config *cfg, cordon_error *err);
