/* SPDX-License-Identifier: Apache-2.0 */
/* limits.memory and limits.pids with cgroups (issue 4): a cgroup of its own for each run, the
 * command's whole tree moved into it before it runs, OOM kills observed, the cgroup removed when
 * the run ends. docs/design/architecture.md ("Limits") says which hierarchy is used when.
 *
 *   launcher:  cgroup_create() before the fork, cgroup_oom_fd()/cgroup_oom_kills() while the
 *              run lasts, cgroup_kill() to end it, cgroup_destroy() after it.
 *   monitor:   cgroup_procs_open_self() while still in the host's namespaces and credentials
 *              (the kernel checks a cgroup.procs write against the opener's credentials and
 *              cgroup namespace); init, its child, cgroup_procs_enter_self() before it starts
 *              anything else. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cordon/cordon.h"

typedef enum cgroup_kind {
        CGROUP_NONE = 0,
        CGROUP_V2,  /* one directory in the unified hierarchy */
        CGROUP_V1,  /* one directory per controller (memory, pids) in the legacy hierarchies */
} cgroup_kind;

typedef struct cgroup_limits {
        uint64_t memory_bytes; /* 0: none */
        uint64_t pids;         /* 0: none */
} cgroup_limits;

/* Where the module looks: the text of /proc/self/mountinfo and /proc/self/cgroup. Production
 * reads the real files (NULL); tests pass a made-up host whose mount points are plain
 * directories. */
typedef struct cgroup_host {
        const char *mountinfo;
        const char *self_cgroup;
} cgroup_host;

typedef struct run_cgroup run_cgroup;

/* Creates a cgroup enforcing `lim` below the first cgroup, from this process's own upwards, in
 * which this process may create one with the needed controllers enabled: cordon's own delegated
 * subtree, or (as root) any. v2: memory.max, memory.swap.max 0, memory.oom.group 1, pids.max.
 * v1: memory.limit_in_bytes and memory.memsw.limit_in_bytes, pids.max. Returns 0, -ENOTSUP when
 * no hierarchy can take the limits here (the caller falls back to rlimits), or another -errno
 * when creating or configuring failed (then nothing is left behind). `host` may be NULL. */
int cgroup_create(const cgroup_host *host, const cgroup_limits *lim, run_cgroup **ret);

cgroup_kind cgroup_get_kind(const run_cgroup *cg);
/* The directory of the first hierarchy used (for messages and tests). */
const char *cgroup_get_path(const run_cgroup *cg);

/* A descriptor to poll while the run lasts: POLLPRI (v2, memory.events) or POLLIN (v1, an
 * eventfd registered for OOM notifications) when memory events happen; -1 without a memory
 * limit. Owned by the cgroup. */
int cgroup_oom_fd(const run_cgroup *cg, short *ret_events);
/* Drains the descriptor's readiness (v1's eventfd counter). */
void cgroup_oom_ack(const run_cgroup *cg);
/* How many processes the OOM killer killed in the cgroup so far (memory.events oom_kill, v1
 * memory.oom_control oom_kill). 0 without a memory limit. */
uint64_t cgroup_oom_kills(const run_cgroup *cg);

/* How many times a fork or clone failed because the cgroup was at pids.max (pids.events "max",
 * v2 and v1). 0 without a pids limit or when it cannot be read. */
uint64_t cgroup_pids_hits(const run_cgroup *cg);

/* Kills every process in the cgroup (cgroup.kill on v2, else SIGKILL to each listed pid). */
void cgroup_kill(const run_cgroup *cg);

/* Waits (bounded) until the cgroup is empty, killing stragglers, removes it and frees. A cgroup
 * that stays busy is left behind, empty or not: never an error for the run. NULL ok. */
void cgroup_destroy(run_cgroup *cg);

/* The cgroup.procs files of the run's cgroup, opened for writing. */
typedef struct cgroup_procs {
        int fd[2];
} cgroup_procs;

#define CGROUP_PROCS_INIT { { -1, -1 } }

/* In the monitor, before it leaves the host's namespaces. `cg` NULL: nothing to open. */
int cgroup_procs_open(const run_cgroup *cg, cgroup_procs *ret);
/* Moves `pid` (as this process's PID namespace names it) into the run's cgroup. */
int cgroup_procs_attach(const cgroup_procs *procs, pid_t pid);
/* The files through which a process moves itself (v1: `tasks`; v2: `cgroup.procs`), opened the
 * same way: in the host's namespaces and credentials, which the kernel checks at the write. */
int cgroup_procs_open_self(const run_cgroup *cg, cgroup_procs *ret);
/* Moves the calling process into the run's cgroup. It must be single-threaded (v1 moves only
 * the calling thread). Far cheaper than cgroup_procs_attach() on v1: no RCU grace period. */
int cgroup_procs_enter_self(const cgroup_procs *procs);
void cgroup_procs_close(cgroup_procs *procs);

/* What cgroup_create() would use for both a memory and a pids limit, found by creating and
 * removing a cgroup now. `detail` gets a short description ("v1 memory+pids below
 * /sys/fs/cgroup/memory/..."), or why none. */
cgroup_kind cgroup_probe(char *detail, size_t size);

/* For a run: the cgroup enforcing limits.memory and limits.pids (*ret), or NULL when there is
 * nothing to enforce or rlimits stand in for them (no usable cgroup: RLIMIT_AS, RLIMIT_NPROC).
 * Fails with CORDON_POLICY_UNENFORCEABLE when neither can enforce a limit asked for (limits.pids
 * as root without a cgroup), CORDON_LAUNCH_FAILED when creating the cgroup failed.
 * `pids_default`: *pids is the built-in ceiling, not asked for: where no cgroup can be made as
 * root (RLIMIT_NPROC does not bind root) *pids becomes 0 instead of a refusal, and a failure to
 * create the cgroup falls back like an absent hierarchy. */
int cgroup_for_limits(uint64_t memory_bytes, uint64_t *pids, bool pids_default, run_cgroup **ret,
                      cordon_error *err);

/* Writes `lim` into an existing cgroup directory: v2 all of it, v1 the part of `controller`
 * ("memory" or "pids"). Exposed for tests; cgroup_create() uses it. */
int cgroup_write_limits(cgroup_kind kind, const char *dir, const char *controller,
                        const cgroup_limits *lim);

/* Parsers, exposed for tests. Each returns 0 or -errno (-ENOENT: not there). */
/* The path of this process's cgroup in the hierarchy of `controller` (NULL: the unified one,
 * "0::/path") from /proc/self/cgroup text. Caller frees. */
int cgroup_parse_self(const char *text, const char *controller, char **ret);
/* The mount point of the hierarchy of `controller` (NULL: cgroup2) from mountinfo text; only
 * mounts of the whole hierarchy (root "/") count. Caller frees. */
int cgroup_parse_mount(const char *text, const char *controller, char **ret);
/* "key N" lines (memory.events, memory.oom_control): the value of `key`. */
int cgroup_parse_key(const char *text, const char *key, uint64_t *ret);
