/* SPDX-License-Identifier: Apache-2.0 */
/* The policy model (SPEC.md §5) as plain data. Only src/policy/ builds or parses it; everything
 * else reads it. Raw JSON never leaves src/policy/policy-json.c. */
#pragma once

#include "util/util.h"

/* Limits on every user-controlled count, so a hostile policy file cannot exhaust memory. */
#define POLICY_MAX_LIST 4096        /* entries in any one list */
#define POLICY_MAX_STRING 4096      /* bytes in any one string (PATH_MAX) */
#define POLICY_MAX_FILE (1u << 20)  /* bytes in a policy file */

typedef struct policy_bind {
        char *host_path;  /* absolute, lexically normalised */
        char *guest_path; /* native backends: equal to host_path */
        bool read_only;
} policy_bind;

typedef struct policy_env_var {
        char *name;
        char *value;
} policy_env_var;

/* A layer: every scalar has a "set" flag so layers can be merged (cordon_policy_resolve). */
struct cordon_policy {
        bool mode_set;
        cordon_mode mode;

        char *session_id;   /* NULL = unset */
        char *workspace_id;
        char *agent_id;
        char *workdir;      /* guestWorkdir */

        bool network_set;
        bool network_enabled;

        policy_bind *binds;
        size_t n_binds;

        strv protected_paths;
        strv runner_state_dirs;
        strv deny_read;
        strv deny_write;
        strv deny_create_names;
        strv exec_grant_roots;  /* macOS only; ignored on Linux */
        strv egress_allowlist;  /* needs the egress proxy (not built yet): non-empty → unenforceable */
        strv allow_unix_sockets;/* path-selective AF_UNIX (not built yet): non-empty → unenforceable */

        strv env_pass;          /* names passed even if they look secret */
        strv env_scrub;         /* extra name globs to drop */
        policy_env_var *env_set;
        size_t n_env_set;

        /* 0 = unset/unlimited */
        uint64_t timeout_ms;
        uint64_t memory_bytes;
        uint64_t pids;
        uint64_t cpu_seconds;
};

/* Deep copy of src merged over dst (src wins scalars it sets; lists union). */
int policy_merge(cordon_policy *dst, const cordon_policy *src);
