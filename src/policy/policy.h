/* SPDX-License-Identifier: Apache-2.0 */
/* The policy model (docs/policy.md) as plain data. Only src/policy/ builds or parses it; everything
 * else reads it. Raw JSON never leaves src/policy/policy-json.c. */
#pragma once

#include "util/util.h"

/* Limits on every user-controlled count, so a hostile policy file cannot exhaust memory. */
#define POLICY_MAX_LIST 4096        /* entries in any one list */
#define POLICY_MAX_STRING 4096      /* bytes in any one string (PATH_MAX) */
#define POLICY_MAX_FILE (1u << 20)  /* bytes in a policy file */
#define POLICY_MAX_DEPTH 16         /* nesting of JSON arrays/objects in a policy file */
#define POLICY_MAX_ID 256           /* bytes in sessionId/workspaceId/agentId */
#define POLICY_MAX_NAME 255         /* bytes in a file-name glob, env name or env glob (NAME_MAX) */
#define POLICY_MAX_ENV_VALUE (1u << 16) /* bytes in one env.set value */

/* Sane ranges for limits (0 means "unset" in the struct, so a setter refuses 0). */
#define POLICY_TIMEOUT_MAX_MS (30ULL * 24 * 3600 * 1000) /* 30 days */
#define POLICY_MEMORY_MIN (1ULL << 20)                    /* 1 MiB: less cannot exec a shell */
#define POLICY_MEMORY_MAX (1ULL << 50)                    /* 1 PiB */
#define POLICY_PIDS_MAX 4194304ULL                        /* PID_MAX_LIMIT on 64-bit */
#define POLICY_TMPFS_MIN (1ULL << 20)                     /* 1 MiB */
#define POLICY_TMPFS_MAX (1ULL << 40)                     /* 1 TiB */
#define POLICY_CPU_MAX_S (30ULL * 24 * 3600)               /* 30 days of CPU time */
#define POLICY_CPUS_MAX 255ULL                            /* limits.cpus: qemu -smp */

typedef struct policy_bind {
        char *host_path;  /* absolute, lexically normalised */
        char *guest_path; /* native backends: equal to host_path */
        bool read_only;
} policy_bind;

typedef struct policy_env_var {
        char *name;
        char *value;
} policy_env_var;

/* One entry of the `hosts` map: the egress proxy resolves `name` to `address` (like curl's
 * --resolve) instead of asking DNS. */
/* A tool cache the policy adds (toolCaches.extra): `env` is set to the sandbox-owned directory
 * <cache root>/<name> (docs/design/tool-caches.md). */
typedef struct policy_tool_cache {
        char *name;     /* [a-z0-9][a-z0-9._-]*, not a built-in tool */
        char *env;      /* a variable name cordon does not set itself */
} policy_tool_cache;

/* Why an egressDenylist entry refuses (docs/policy.md): shown with every refusal it makes, in
 * the 403's body and the violation event, for a harness to show the model. */
typedef struct policy_reason {
        char *pattern;  /* the deny entry, as written */
        char *reason;   /* 1..POLICY_REASON_MAX bytes, no control characters */
} policy_reason;
#define POLICY_REASON_MAX 200

/* One commandPolicy rule (command-policy.c): the run is refused when one of its commands begins
 * with `words` in one of `modes` (bits 1 << cordon_mode). */
typedef struct policy_command_rule {
        strv words;
        bool ask;       /* "ask": runs only when the launch's approver approves */
        unsigned modes;
} policy_command_rule;
#define POLICY_ALL_MODES 7u

typedef struct policy_host {
        char *name;     /* lower-case host name */
        char *address;  /* an IPv4 or IPv6 literal */
} policy_host;

/* Request rules and TLS inspection (docs/policy.md, "Request rules"; policy-rules.c). An
 * egressRules entry: a host pattern (egressAllowlist's grammar), the methods and path globs it
 * covers (empty: every one), allow or deny, and why. */
typedef struct policy_req_rule {
        char *host;
        strv methods;   /* upper-case method tokens */
        strv paths;     /* "/..." globs: '*' any run of bytes, '?' one byte */
        bool deny;
        char *reason;   /* NULL, or printable text (policy_check_reason()) */
} policy_req_rule;
#define POLICY_MAX_REQ_RULES 1024
#define POLICY_REQ_PATH_MAX 1024

/* gitPush (docs/policy.md, "Git push"; policy-git-push.c): the smart-HTTP pushes allowed to git
 * hosts; every other push is refused once the key is present. An entry: a repository
 * ("host/path", host lower case, no ".git" or trailing '/'), the ref globs it may push, whether
 * it may delete them and whether it may update an existing one (false: create only). */
typedef struct policy_git_push_rule {
        char *repo;
        strv refs;
        bool delete_ok;
        bool create_only;
} policy_git_push_rule;
#define POLICY_MAX_GIT_PUSH_RULES 256

typedef struct policy_git_push {
        bool on; /* a gitPush key in some layer: pushes to git hosts are judged */
        policy_git_push_rule *allow;
        size_t n_allow;
} policy_git_push;
/* A credentials entry (docs/policy.md, "Credentials"; policy-creds.c): a secret of cordon's
 * store bound to host patterns. The sandbox sees a placeholder in `env`; the proxy puts the
 * secret in its place in requests to the hosts only, and with `header` (or `basic`) sets that
 * header itself. The value is never policy data: the launcher reads it (src/linux/creds.c). */
typedef struct policy_cred {
        char *secret;   /* a secret store name (secret_name_valid()'s grammar); or NULL and: */
        char *broker;   /* a credentialBrokers name of the managed settings (per-run credential) */
        char *env;      /* the variable that holds the placeholder in the sandbox */
        strv hosts;     /* host patterns (egressAllowlist's grammar), at least one */
        char *header;   /* NULL, or a header the proxy sets: name */
        char *format;   /* with header: its value, "{}" the secret (exactly once) */
        char *basic;    /* NULL, or the user of "Authorization: Basic user:secret" */
} policy_cred;
#define POLICY_MAX_CREDS 32

/* A credential broker (docs/settings.md, "credentialBrokers"): the administrator's commands
 * that issue a credential for a run (its stdout) and revoke it afterwards (the credential on
 * stdin); the run's id is their last argument. Only the managed settings set one. */
typedef struct policy_broker {
        char *name;
        strv issue, revoke; /* argv: an absolute path, then arguments */
        uint64_t timeout_ms;
} policy_broker;
#define POLICY_MAX_BROKERS 16
#define POLICY_BROKER_DEFAULT_TIMEOUT_MS 10000
#define POLICY_CRED_FORMAT_MAX 256

typedef struct policy_req {
        policy_req_rule *rules;
        size_t n_rules;
        strv passthrough;  /* tls.passthrough: host patterns never terminated */
        strv upstream_ca;  /* tls.upstreamCa: absolute paths of PEM files trusted for upstreams */
        policy_git_push git_push;
        policy_cred *creds; /* credentials: a union over the layers, one per env name */
        size_t n_creds;
        policy_broker *brokers; /* credentialBrokers (managed settings only), one per name */
        size_t n_brokers;
} policy_req;

/* A layer: every scalar has a "set" flag so layers can be merged (cordon_policy_resolve). */
#define POLICY_DEFAULT_ASK_TIMEOUT_MS 30000
#define POLICY_MIN_ASK_TIMEOUT_MS 100
#define POLICY_MAX_ASK_TIMEOUT_MS 3600000

struct cordon_policy {
        /* Why the most recent refused setter call refused (cordon_policy_last_error): not part
         * of the policy, never merged, copied or printed. */
        cordon_error last_error;
        /* The administrator's managed settings are in this policy already: cordon_settings_resolve
         * consulted them (read the managed file, or found none), so a launch does not apply them
         * a second time (src/settings/settings-managed.c). Where the policy came from, not what
         * it says: never read from JSON or printed, not merged (policy_merge); kept by a copy
         * (policy_dup, policy_swap) and by the setters, and by cordon_policy_resolve only when
         * its highest layer has it, since a layer over it may override what the managed
         * settings set (docs/settings.md, "Library callers"). */
        bool managed_applied;
        bool mode_set;
        cordon_mode mode;

        char *session_id;   /* NULL = unset */
        char *workspace_id;
        char *agent_id;
        char *workdir;      /* guestWorkdir */

        bool network_set;
        bool network_enabled;

        /* microvm.accel (docs/policy.md): "tcg" opts the microvm backend into software
         * emulation; unset or "kvm": hardware KVM only. */
        bool microvm_accel_set;
        bool microvm_tcg;

        policy_bind *binds;
        size_t n_binds;

        strv protected_paths;
        strv runner_state_dirs;
        strv deny_read;
        strv deny_write;
        strv deny_create_names;
        strv allow_create_names; /* file-name globs exempt from denyCreateNames' wildcard globs */
        strv allow_create_paths; /* paths or path globs exempt from them */
        strv exec_grant_roots;  /* macOS only; ignored on Linux */
        /* blockReadsOutsideWorkdirs (policy-reads.c, docs/policy.md "Read narrowing"): the users'
         * home directories are unreadable but for the binds, runnerStateDirs, the tool caches
         * and allow_read. Unset = off. */
        bool block_reads_set;
        bool block_reads;
        strv allow_read;        /* allowRead: readable under the narrowing (never a secret) */
        policy_command_rule *command_rules; /* commandPolicy: a union over the layers */
        size_t n_command_rules;
        strv egress_allowlist;  /* host patterns the egress proxy lets through (docs/design/network.md) */
        strv egress_denylist;   /* host patterns refused even when allowed (deny beats allow) */
        policy_reason *deny_reasons; /* for some of egress_denylist's entries (policy-reasons.c) */
        size_t n_deny_reasons;
        /* egressUpstream (upstream-url.h): the parent proxy every allowed connection goes
         * through. `egress_upstream` is the canonical URL with its credentials, for the plan and
         * for a layer handed to cordond, never printed; `egress_upstream_shown` the same with the
         * password as "****", the only form any output shows. Both NULL, or both set (only
         * cordon_policy_set_egress_upstream() sets them). */
        char *egress_upstream;
        char *egress_upstream_shown;
        /* egressMode and egressAskTimeout (docs/policy.md, "Ask mode"); 0: unset (the default
         * 30 s, POLICY_DEFAULT_ASK_TIMEOUT_MS). */
        bool egress_mode_set;
        cordon_egress_mode egress_mode;
        uint64_t egress_ask_timeout_ms;
        policy_host *hosts;     /* name → address for the proxy (tests, local dev servers) */
        size_t n_hosts;
        policy_req req;         /* egressRules and tls (policy-rules.c) */
        strv allow_unix_sockets;/* path-selective AF_UNIX (not built yet): non-empty → unenforceable */

        strv env_pass;          /* names passed even if they look secret */
        strv env_scrub;         /* extra name globs to drop */
        policy_env_var *env_set;
        size_t n_env_set;

        bool tool_caches_set;   /* toolCaches.enabled; unset = on */
        bool tool_caches_enabled;
        policy_tool_cache *tool_caches; /* toolCaches.extra */
        size_t n_tool_caches;

        /* 0 = unset/unlimited */
        uint64_t timeout_ms;
        uint64_t memory_bytes;
        uint64_t pids;
        uint64_t cpu_seconds;
        uint64_t cpus;          /* limits.cpus: the microvm backend's vCPUs (0: one) */
        /* The sizes of the private /tmp and /dev/shm tmpfs (0: the built-in defaults,
         * policy_default_tmp_bytes()/policy_default_shm_bytes()). */
        uint64_t tmp_bytes;
        uint64_t shm_bytes;
        /* Distinct names one wildcard egress entry may let a run resolve (0: the default,
         * POLICY_DEFAULT_WILDCARD_NAMES; docs/design/network.md, "Wildcard budget"). */
        uint64_t wildcard_names;
};

/* "allowlist" / "ask", and back (-EINVAL for anything else): policy files, flags, dumps. */
const char *policy_egress_mode_name(cordon_egress_mode mode);
int policy_egress_mode_from_string(const char *s, cordon_egress_mode *ret);

/* Deep copy of src merged over dst (src wins scalars it sets; lists union; a bind or env.set entry
 * with the same host path / name takes src's flag / value). On failure (-ENOMEM) dst may hold part
 * of src: merge into a scratch copy when atomicity matters (policy_dup). */
int policy_merge(cordon_policy *dst, const cordon_policy *src);
/* The names of the fields of `over` that would widen `base` when merged over it ("mode",
 * "bindMounts", "egressAllowlist", "limits.timeout", ...), appended to *out. Returns how many, or
 * -ENOMEM. A per-call override with any is an escalation (docs/policy.md, "Layers and resolution").
 * */
int policy_widening_fields(const cordon_policy *base, const cordon_policy *over, strv *out);
/* An empty layer, NULL on allocation failure: cordon_policy_new() without its cordon_error, for
 * the library's own scratch policies, whose callers report the failure in their own terms. */
cordon_policy *policy_new(void);
/* A deep copy, managed_applied included; NULL on allocation failure. */
cordon_policy *policy_dup(const cordon_policy *p);
/* Swaps the contents of two policies (for "parse into a scratch copy, then commit"). */
void policy_swap(cordon_policy *a, cordon_policy *b);

/* Validators shared by the setters and the JSON loader: NULL when `s` is acceptable, else a static
 * phrase saying what is wrong ("must be an absolute path"), used in error messages. */
/* An absolute path, normalisable (no ".."), no control characters. In deny lists an entry with '*'
 * or '?' is a glob (docs/policy.md); elsewhere every character is literal. */
const char *policy_check_path(const char *s);
const char *policy_check_id(const char *s);
const char *policy_check_name_glob(const char *s);
const char *policy_check_env_name(const char *s);
const char *policy_check_env_glob(const char *s);
const char *policy_check_env_value(const char *s);
const char *policy_check_host_pattern(const char *s);
const char *policy_check_host_name(const char *s);   /* a DNS name, no wildcard, no port */
const char *policy_check_ip_address(const char *s);  /* an IPv4 or IPv6 literal, no brackets */
const char *policy_check_reason(const char *s);      /* printable text, 1..POLICY_REASON_MAX */
/* A setter's refusal: records why in p->last_error (cordon_policy_last_error) and returns r. */
int policy_refuse(cordon_policy *p, int r, const char *value, const char *why);

typedef enum policy_limit {
        POLICY_LIMIT_TIMEOUT_MS,
        POLICY_LIMIT_MEMORY_BYTES,
        POLICY_LIMIT_PIDS,
        POLICY_LIMIT_CPU_SECONDS,
        POLICY_LIMIT_TMP_BYTES,
        POLICY_LIMIT_SHM_BYTES,
        POLICY_LIMIT_WILDCARD_NAMES,
        POLICY_LIMIT_CPUS,
        _POLICY_LIMIT_MAX,
} policy_limit;
const char *policy_check_limit(policy_limit which, uint64_t v);

/* Tool caches (src/policy/policy-caches.c). A name: [a-z0-9][a-z0-9._-]{0,31}, not "."/"..", not
 * a built-in tool; an env name: a variable name that is neither a built-in cache's nor one cordon
 * sets for the proxies. */
const char *policy_check_tool_cache_name(const char *s);
const char *policy_check_tool_cache_env(const char *s);
int policy_set_tool_caches(cordon_policy *p, bool enabled);
/* Adds or (same name) replaces an extra tool cache. -EINVAL, -E2BIG as the other setters. */
int policy_add_tool_cache(cordon_policy *p, const char *name, const char *env);
int policy_caches_merge(cordon_policy *dst, const cordon_policy *src);
void policy_caches_clear(cordon_policy *p);
/* The deny entries' reasons (policy-reasons.c): merged as the list is (src wins for an entry
 * both give a reason), and the reason of one entry, or NULL. */
int policy_reasons_merge(cordon_policy *dst, const cordon_policy *src);
void policy_reasons_clear(cordon_policy *p);
const char *policy_deny_reason(const cordon_policy *p, const char *pattern);
/* egressRules and tls (policy-rules.c). Adding copies every string; a rule equal to one the
 * list has already is not added twice. Merging appends src's rules after dst's and unions the
 * tls lists: rules only ever add (docs/policy.md, "Request rules", says why order never
 * matters). */
const char *policy_check_req_method(const char *s); /* an upper-case HTTP token, or "*" */
const char *policy_check_req_path(const char *s);   /* "/..." glob, printable, no '#' */
int policy_req_add_rule(policy_req *q, const policy_req_rule *rule);
/* tls.passthrough and tls.upstreamCa entries, checked like the JSON loader checks them (the
 * settings' layer copy adds them through these). */
int policy_add_tls_passthrough(cordon_policy *p, const char *pattern);
int policy_add_tls_upstream_ca(cordon_policy *p, const char *path);
int policy_req_copy(policy_req *dst, const policy_req *src);
/* gitPush (policy-git-push.c): an allow entry, checked like the JSON loader checks it (repo
 * normalised: host lower case, ".git" and a trailing '/' cut); its reason for refusal, or NULL. */
const char *policy_check_git_repo(const char *s);
const char *policy_check_git_ref(const char *s);
int policy_git_push_add(policy_git_push *g, const policy_git_push_rule *r);
int policy_git_push_copy(policy_git_push *dst, const policy_git_push *src);
void policy_git_push_clear(policy_git_push *g);
bool policy_git_push_widens(const policy_git_push *base, const policy_git_push *over);
void *policy_git_push_json(const policy_git_push *g, bool *failed);
/* Whether the proxy reads requests in the clear (egressRules, gitPush or credentials): a session
 * CA, and TLS terminated for the hosts they name. */
bool policy_req_inspects(const policy_req *q);
void policy_req_clear(policy_req *q);
/* Whether `over` adds an allow rule, a passthrough pattern or an upstream CA `base` lacks
 * (gitPush's allow entries: policy_git_push_widens()). */
bool policy_req_widens(const policy_req *base, const policy_req *over);
/* The egressRules array and the tls object in the policy-file schema (json_t *, or NULL when
 * the policy has none; *failed on allocation failure). */
void *policy_req_rules_json(const policy_req *q, bool *failed);
void *policy_req_tls_json(const policy_req *q, bool *failed);
/* credentials (policy-creds.c). The checks: a secret name, a variable name that cordon does not
 * set itself, a header name (an RFC 9110 token), a format with "{}" exactly once, a basic-auth
 * user. Adding copies every string and refuses an entry whose env another entry holds with a
 * different binding (-EEXIST); an equal entry is not added twice. */
const char *policy_check_secret_name(const char *s);
const char *policy_check_cred_env(const char *s);
const char *policy_check_header_name(const char *s);
const char *policy_check_cred_format(const char *s);
const char *policy_check_basic_user(const char *s);
int policy_req_add_cred(policy_req *q, const policy_cred *cred);
void policy_req_creds_clear(policy_req *q);
/* Adds a copy of a broker; one of the same name is replaced (a higher layer's wins). */
int policy_req_add_broker(policy_req *q, const policy_broker *b);
const policy_broker *policy_req_broker(const policy_req *q, const char *name);
/* Whether `over` binds a credential `base` lacks: every new binding widens (a secret reaches a
 * host through the proxy). */
bool policy_creds_widen(const policy_req *base, const policy_req *over);
/* The credentials array (json_t *, or NULL when none; *failed on allocation failure). */
void *policy_req_creds_json(const policy_req *q, bool *failed);
/* Whether tool caches are on in a resolved policy. */
bool policy_tool_caches_on(const cordon_policy *p);

/* The limits a policy that sets none gets (policy-limits.c says why these). */
#define POLICY_DEFAULT_PIDS 2048ULL
/* Each name resolved under "*.example.com" can carry some 60 bytes to whoever runs that zone's
 * DNS; 64 names is more than a toolchain uses under one wildcard and bounds that channel. */
#define POLICY_DEFAULT_WILDCARD_NAMES 64ULL
#define POLICY_WILDCARD_NAMES_MAX 65536ULL
uint64_t policy_default_tmp_bytes(void); /* private /tmp: 2 GiB, at most a quarter of RAM */
uint64_t policy_default_shm_bytes(void); /* private /dev/shm: 256 MiB, at most a quarter of RAM */
/* The default policy's denyCreateNames (cordon_policy_new_default()). NULL-terminated. */
extern const char *const policy_default_deny_create_names[];

/* Read narrowing (policy-reads.c). allowRead entries are paths (policy_check_path), no globs: a
 * pattern cannot be re-bound or granted whole. */
int policy_set_block_reads(cordon_policy *p, bool block);
int policy_add_allow_read(cordon_policy *p, const char *path);
int policy_reads_merge(cordon_policy *dst, const cordon_policy *src);
void policy_reads_clear(cordon_policy *p);
/* Whether a resolved policy narrows reads. */
bool policy_reads_blocked(const cordon_policy *p);
/* Validates and normalises `path` and appends it to `list` unless present (the list setters'
 * contract: -EINVAL with p->last_error, -E2BIG when full). */
int policy_push_path(cordon_policy *p, strv *list, const char *path);

/* The command policy (command-policy.c). A rule: 1..16 words (policy_check_command_word), modes
 * a bit set of cordon_mode (0: every mode). policy_check_command() refuses argv (EXEC_FAILED,
 * -EPERM, err set) when a command in it matches a "refuse" rule of the policy's mode, or an
 * "ask" rule that `ask` (with `userdata`; may be NULL: nobody to ask) does not approve. */
const char *policy_check_command_word(const char *w);
int policy_add_command_rule(cordon_policy *p, char *const *words, bool ask, unsigned modes);
int policy_command_rules_merge(cordon_policy *dst, const cordon_policy *src);
void policy_command_rules_clear(cordon_policy *p);
int policy_check_command(const cordon_policy *p, char *const argv[], cordon_command_ask_fn ask,
                         void *userdata, cordon_error *err);
void *policy_command_rules_to_json(const cordon_policy *p); /* a json_t * array */

/* Setters for fields without a public one yet (same contract as the public setters: copies,
 * -EINVAL for bad input, -E2BIG when a list is full). */
int policy_set_workspace_id(cordon_policy *p, const char *id);
int policy_set_agent_id(cordon_policy *p, const char *id);
int policy_add_exec_grant_root(cordon_policy *p, const char *path);
int policy_add_unix_socket(cordon_policy *p, const char *path);
/* allowCreateNames / allowCreatePaths (docs/policy.md): they lift a denyCreateNames glob with
 * wildcards for one name or path, never a protected path. */
int policy_add_allow_create_name(cordon_policy *p, const char *glob);
int policy_add_allow_create_path(cordon_policy *p, const char *path);

/* The layer as a jansson json_t * object in the policy-file schema (docs/policy.md), as void * so
 * this header needs no jansson include; caller json_decref()s. env.set values and the
 * egressUpstream password are redacted: a printed policy must never leak a secret someone put
 * there. NULL on allocation failure. */
void *policy_to_json(const cordon_policy *p);
/* The layer as a policy document with only what it sets, env.set values and the egressUpstream
 * URL as they are: loaded as a layer elsewhere (cordond's session layer) it equals this one.
 * Never for display. */
void *policy_layer_to_json(const cordon_policy *p);

/* Parses `value` (a jansson json_t * object, as void *), the member at the keys `prefix` (at most
 * 4) of the JSON document `text`, as policy keys into `layer` (a fresh layer: on error it holds
 * part of the member). Errors as cordon_policy_load_string's, with the full key path
 * ("sandbox.denyRead[0]") and the position in `text`. Used by src/settings/. */
int policy_parse_json_member(cordon_policy *layer, void *value, const char *origin,
                             const char *text, size_t len, const char *const *prefix,
                             size_t n_prefix, cordon_error *err);
