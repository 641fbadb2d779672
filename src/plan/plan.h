/* SPDX-License-Identifier: Apache-2.0 */
/* The plan: a resolved policy turned into plain data that the Linux backend applies verbatim.
 * Building a plan reads the filesystem (to resolve symlinks and see what exists) but changes no
 * kernel state, so every part of it is unit-tested without namespaces, and `cordon policy show
 * --json` prints it. Only src/linux/ applies a plan. */
#pragma once

#include "policy/policy.h"

/* One step of building the sandbox's root. Applied in array order; the plan orders them so that a
 * path's parents are mounted before it (depth first, then kind). */
typedef enum mount_op_kind {
        MOUNT_OP_ROOT_RO,   /* the host's root, recursively, read-only, nosuid: `path` is "/" */
        MOUNT_OP_DEV,       /* a minimal /dev: null zero full random urandom tty, pts, shm, fd links */
        MOUNT_OP_PROC,      /* a fresh procfs for the sandbox's PID namespace at /proc */
        MOUNT_OP_TMPFS,     /* an empty private tmpfs (e.g. /tmp), writable */
        MOUNT_OP_BIND_RW,   /* the host tree at `path`, at the same path, writable, nosuid, nodev */
        MOUNT_OP_BIND_RO,   /* the host tree at `path`, at the same path, read-only */
        MOUNT_OP_HIDE,      /* cover `path`: an empty read-only dir (is_dir) or empty file */
        _MOUNT_OP_MAX,
} mount_op_kind;

typedef struct mount_op {
        mount_op_kind kind;
        char *path;   /* absolute, symlink-free (resolved) */
        bool is_dir;  /* what exists at `path` on the host (BIND_*, HIDE) */
        const char *why; /* static text: "writable root", "protected path", "secret", ... */
        uint64_t tmpfs_bytes; /* TMPFS: its size (limits.tmpSize, limits.shmSize) */
        /* BIND_RO only: `path` is a protected entry that is itself a symlink (its parent is
         * resolved, its final component the link): the link is bound read-only onto itself, so
         * it cannot be unlinked, replaced or renamed (a mountpoint); its target has a bind of
         * its own. */
        bool is_link;
} mount_op;

/* Landlock, as data. The backend handles only write-type access (reads are governed by the mount
 * plan, which can hide a secret inside a readable tree; Landlock cannot). */
typedef struct landlock_rule {
        char *path;      /* absolute, resolved; opened O_PATH at apply time */
        bool write;      /* true: every write right beneath `path`; false: nothing (placeholder) */
} landlock_rule;

/* The creation-time name rules the seccomp supervisor enforces (src/plan/name-rules.c). */
typedef struct name_rules {
        /* Absolute paths or path globs (fnmatch FNM_PATHNAME) that must not come into existence,
         * be renamed, or have anything created beneath them; their ancestors may not be renamed
         * away nor renamed into place. Each listed literal and symlink-resolved. */
        strv protected;
        /* File-name globs (denyCreateNames): FNM_CASEFOLD, no FNM_PERIOD (so "*.pem" catches
         * ".id.pem"). */
        strv deny_names;
        /* Name globs and absolute path globs (FNM_PATHNAME) exempt from deny_names: the template
         * names (plan_default_allow_create_names) and the policy's allowCreateNames and
         * allowCreatePaths. They never lift a protected path nor the fixed .cordon rule. */
        strv allow_names;
        strv allow_paths;
        /* The persistent writable roots (literal and resolved forms). deny_names and the .cordon
         * rule hold beneath these only: the private /tmp and /dev/shm (native) and the private
         * TMPDIR (landlock) are discarded at exit, so a name there outlives nothing (python's
         * ensurepip writes /tmp/tmpXXXXcacert.pem). Only with `scoped` (plan_build sets it);
         * without it the rules hold everywhere (a rule set built by hand knows no roots). */
        strv persistent;
        /* Roots beneath which deny_names do not hold (literal and resolved): the sandbox-owned
         * tool caches (docs/design/tool-caches.md). Package archives unpack test fixtures and CA
         * bundles there (`testdata/x.pem` files, certifi's `cacert.pem`), and nothing outside a sandbox
         * reads them; the protected paths and the .cordon rule still hold there. */
        strv names_exempt;
        bool scoped;
} name_rules;

/* A bind as the policy named it and as it resolved. The mount plan keeps only the resolved form;
 * backends that match path strings instead of mounting (macOS Seatbelt, src/seatbelt/) need
 * both: the kernel there matches resolved paths, the user reads literal ones. */
typedef struct plan_bind {
        char *literal;    /* as the policy wrote it (normalised) */
        char *resolved;   /* realpath() */
        bool writable;    /* a writable root (rw bind in workspace-write, runnerStateDirs, a linked
                           * worktree's shared .git); false: a read-only bind */
        bool git_common;  /* the shared .git of a linked worktree (docs/policy.md) */
} plan_bind;

/* The path sets behind the mounts and name rules, kept for string-matching backends. Filled by
 * plan_build() (empty in danger-full-access). Each set holds literal and symlink-resolved forms;
 * entries with '*' or '?' are globs (a '[' or '\' of a real name is defused to '?'). */
typedef struct plan_paths {
        plan_bind *binds;  /* writable roots and read-only binds, in the order they were planned */
        size_t n_binds;
        strv secrets;      /* the read-deny set: secret home paths + denyRead */
        strv protect;      /* the write-deny set: mandatory names, protectedPaths, denyWrite and
                            * git's paths, including name-rule-only ones (a symlinked ROOT/.git) */
        /* blockReadsOutsideWorkdirs (plan-reads.c): the directories made unreadable, and the
         * allowRead entries inside them readable again (resolved). Empty when off. */
        strv narrowed;
        strv read_exceptions;
} plan_paths;

/* Egress (docs/design/network.md): what the proxy enforces. Copies of the policy's fields; the
 * proxy adds the built-in lists (src/net/egress.c). */
typedef struct plan_net {
        bool enabled;          /* networkEnabled (false: the allowlist is empty) */
        strv allow;            /* egressAllowlist */
        strv deny;             /* egressDenylist */
        policy_reason *deny_reasons; /* the reasons some of them carry */
        size_t n_deny_reasons;
        policy_host *hosts;    /* the hosts map */
        size_t n_hosts;
        uint64_t wildcard_names; /* limits.wildcardNames, the default applied */
        /* egressUpstream: the canonical URL, credentials included (policy/upstream-url.h; the
         * proxy process parses it again); NULL: the proxy dials what it allows. Never printed. */
        char *upstream;
        policy_req req;        /* egressRules and tls (policy-rules.c) */
        /* egressMode "ask" and egressAskTimeout, the default applied (docs/design/network.md,
         * "Ask mode"). Only with the network enabled: with it off nothing is asked. */
        bool ask;
        uint32_t ask_timeout_ms;
        /* TLS inspection (src/linux/tls-bundle.h): the system trust bundle with the session CA
         * after it, made by the launcher when some host has request rules; NULL otherwise. And
         * the same certificates as a Java truststore (src/net/jks.h), made only when the host
         * has a JDK's cacerts (TLS_BUNDLE_JAVA_CACERTS); NULL otherwise. */
        char *ca_bundle;
        uint8_t *java_truststore;
        size_t java_truststore_len;
} plan_net;

/* Where the command finds the proxies: loopback of its own network namespace. */
#define PLAN_PROXY_HTTP_URL "http://127.0.0.1:3128"
#define PLAN_PROXY_SOCKS_URL "socks5h://127.0.0.1:1080"

typedef struct plan {
        cordon_mode mode;
        char *workdir;         /* absolute; where the command starts */
        strv writable_roots;   /* resolved absolute paths, in mount order */

        mount_op *mounts;
        size_t n_mounts;

        landlock_rule *landlock;
        size_t n_landlock;

        name_rules names;

        plan_net net;
        /* Set per command, never by plan_build(): fd 0 is a terminal the command takes as its
         * controlling terminal (CORDON_SPAWN_TTY: set by a warm session's init for an exec, by
         * the launch for cordon_spawn()). */
        bool tty;

        strv env;              /* "NAME=value" entries, the command's whole environment */
        strv env_scrubbed;     /* names removed (for display only; never values) */

        uint64_t timeout_ms, memory_bytes, pids, cpu_seconds;
        uint64_t cpus;         /* limits.cpus: the microvm backend's vCPUs, 0: one */
        /* pids is POLICY_DEFAULT_PIDS because the policy set none: enforced where a cgroup can be
         * made, or by RLIMIT_NPROC counted in the sandbox's own user namespace; dropped where
         * neither holds (root without a cgroup, the landlock backend without one), where a
         * limits.pids the policy sets is refused instead (docs/design/architecture.md). */
        bool pids_default;
        bool microvm_tcg;      /* microvm.accel "tcg": the microvm backend may use TCG */
        uint64_t tmp_bytes, shm_bytes; /* sizes of the private /tmp and /dev/shm */

        strv unix_sockets;     /* allowUnixSockets: absolute paths as the policy lists them */
        /* Set by the launcher, never by plan_build(): the run's cgroup (linux/cgroup.h) when one
         * enforces limits.memory and limits.pids; the command then gets no rlimit for them. */
        struct run_cgroup *cgroup;
        /* Set by the launcher, never by plan_build(): the numbers of the descriptors the caller
         * hands to the command above stdio (cordon_spawn_options.fds). Every stage of the
         * sandbox keeps them open and the command inherits them; every other descriptor is
         * closed on the way. */
        int keep_fds[CORDON_SPAWN_FDS_MAX];
        size_t n_keep_fds;
        /* Set by a warm session's host, never by plan_build(): init serves exec requests on this
         * socket (linux/session-init.h) instead of running one command. -1 for a run. */
        int session_ctl;
        /* Set by the launcher for the microvm backend, never by plan_build(): the command
         * process runs the VMM host (linux/vm-host.h) with it instead of executing the
         * command. NULL for every other backend. */
        const struct vm_host *vm;

        plan_paths paths;      /* addition for string-matching backends (issue 7) */

        /* Sandbox-owned tool caches (docs/design/tool-caches.md): the root, NULL when they are
         * off; whether it is a writable root of this plan (false until a launcher created it);
         * the "NAME=value" entries set for them in `env`. */
        char *tool_cache_root;
        char *tool_cache_anchor, *tool_cache_rel; /* tool-caches.h: tool_cache_root */
        bool tool_cache_mounted;
        strv tool_cache_env;
        strv tool_cache_tools; /* the tool of each tool_cache_env entry */
} plan;

/* Builds the plan for a resolved policy. `home` is the invoking user's home (absolute), `cwd` the
 * current directory, `environ` the environment to filter (may be NULL). Fails with
 * CORDON_POLICY_INVALID for contradictions (e.g. a writable root inside a secret directory) and
 * CORDON_POLICY_UNENFORCEABLE for fields the native backend cannot honour yet. */
int plan_build(const cordon_policy *policy, const char *home, const char *cwd,
               char *const *environ, plan **ret, cordon_error *err);
void plan_free(plan *p);
/* Points the TLS clients' trust variables (SSL_CERT_FILE, REQUESTS_CA_BUNDLE,
 * NODE_EXTRA_CA_CERTS, GIT_SSL_CAINFO, CURL_CA_BUNDLE, PIP_CERT, CARGO_HTTP_CAINFO) at `path`,
 * over any value already there (docs/design/network.md, "TLS inspection"). 0 or -ENOMEM. */
int plan_ca_bundle_env(plan *p, const char *path);

const char *mount_op_kind_to_string(mount_op_kind kind);

/* Returns a jansson json_t * (as void * so this header needs no jansson include); caller
 * json_decref()s. */
void *plan_to_json(const plan *p);

/* The secret read-deny set (docs/policy.md) relative to $HOME, and the mandatory write-deny names
 * relative to each writable root and $HOME. NULL-terminated static arrays. */
extern const char *const plan_secret_home_paths[];
extern const char *const plan_mandatory_protected_names[];
/* Names the default lets through although a default deny glob matches: committed templates. */
extern const char *const plan_default_allow_create_names[];
extern const char *const plan_default_env_scrub[];
/* githooks(5): the names git runs from a hooks directory (NULL-terminated). */
extern const char *const plan_git_hook_names[];

/* The nr_inodes of a private tmpfs of `bytes`. */
uint64_t plan_tmpfs_inodes(uint64_t bytes);
