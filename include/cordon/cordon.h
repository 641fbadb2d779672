/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libcordon: an OS-enforced sandbox for the shell commands AI coding agents run.
 *
 * Lifecycle of the main objects:
 *   cordon_policy: cordon_policy_new() or cordon_policy_new_default() → setters / loaders →
 *                  cordon_policy_resolve() → cordon_run() / cordon_spawn() /
 *                  cordon_session_launch() → cordon_policy_free().
 *   cordon_process: cordon_spawn() or cordon_session_exec() → cordon_process_wait() →
 *                  cordon_process_free().
 *   cordon_session: cordon_session_launch() → cordon_session_exec()... → cordon_session_destroy().
 *   cordon_probe:  cordon_probe_run() → cordon_probe_to_json()/..._to_text() → cordon_probe_free().
 *   file operations: cordon_fs_read() / cordon_session_fs_read() → cordon_fs_data_free();
 *                  cordon_fs_list() → cordon_fs_entries_free(); write, edit, stat: nothing to free.
 *
 * Threads (docs/design/library.md): the library keeps no process-wide mutable state but caches
 * of what the kernel supports (behind a lock, or atomic). Any function may be called from any thread. An object may be
 * used by several threads at once only through `const` pointers (a cordon_policy shared by
 * concurrent cordon_spawn() calls, say); functions that take a non-const object (setters,
 * loaders, *_free) need it to themselves. cordon_process and cordon_session are the exceptions:
 * their calls are safe from several threads at once as their sections say. cordon_run() and
 * cordon_spawn() read the process's working directory and `environ` unless given `cwd` and
 * `environ` (cordon_fs_*: `environ`, and the working directory unless given `cwd`); nothing else
 * of the process (no chdir, no signal disposition, no umask) changes.
 *
 * Error convention (docs/design/errors.md): every public function that can fail returns 0 on
 * success or a negative errno, and, when given a non-NULL cordon_error, fills it with a code from
 * the closed set below and a message that says what failed and how to fix it. The library never
 * prints and never exits.
 *
 * Every call that makes an object (cordon_policy_new(), cordon_explanation_new(),
 * cordon_probe_run(), cordon_spawn(), ...) has the shape `int f(..., cordon_X **ret,
 * cordon_error *err)`: 0 with *ret the new object, which the caller frees with its _free() (or
 * _destroy()), or a negative errno with `err` set and *ret NULL. Every call that writes an object
 * out (cordon_policy_to_json(), cordon_probe_to_text(), ...) has the shape `int
 * cordon_X_to_FORMAT(const cordon_X *x, ..., char **ret, cordon_error *err)`: 0 with *ret the text
 * (NUL-terminated; the caller frees it with free()), or a negative errno with `err` set and *ret
 * NULL. tests/build/check-api-shape.py holds every declaration below to both shapes.
 *
 * Strings passed in are copied; strings returned with "caller frees" must be released with free().
 */
#ifndef CORDON_CORDON_H
#define CORDON_CORDON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CORDON_PUBLIC __attribute__((visibility("default")))

/* The version of this header; cordon_version() says the library's. A program that needs a call
 * added later can test CORDON_VERSION_AT_LEAST(0, 2, 0) at build time; the soname and symbol
 * versions (docs/design/abi.md) make an older library fail at load time instead of at the call. */
#define CORDON_VERSION_MAJOR 0
#define CORDON_VERSION_MINOR 1
#define CORDON_VERSION_PATCH 0
#define CORDON_VERSION_AT_LEAST(major, minor, patch)                                        \
        (CORDON_VERSION_MAJOR > (major) ||                                                  \
         (CORDON_VERSION_MAJOR == (major) && (CORDON_VERSION_MINOR > (minor) ||             \
                                              (CORDON_VERSION_MINOR == (minor) &&           \
                                               CORDON_VERSION_PATCH >= (patch)))))

/* The closed, documented set of error codes (docs/design/errors.md). Never renumbered. */
typedef enum cordon_code {
        CORDON_OK = 0,
        CORDON_SANDBOX_UNAVAILABLE = 1, /* no backend can confine on this host */
        CORDON_POLICY_INVALID = 2,      /* the policy (file, flag or call) is malformed */
        CORDON_POLICY_UNENFORCEABLE = 3,/* well-formed, but this backend cannot enforce all of it */
        CORDON_LAUNCH_FAILED = 4,       /* building the sandbox failed */
        CORDON_EXEC_FAILED = 5,         /* the command itself could not be executed */
        CORDON_TIMEOUT = 6,             /* limits.timeout expired */
        CORDON_KILLED = 7,              /* killed by a limit or on request */
        CORDON_USAGE = 8,               /* bad command-line usage */
        _CORDON_CODE_MAX,
} cordon_code;

typedef struct cordon_error {
        cordon_code code;
        int sys_errno;      /* the errno behind the failure, or 0 */
        char message[1024]; /* one line, no trailing newline */
} cordon_error;

/* "SANDBOX_UNAVAILABLE", ...; "UNKNOWN" for values outside the set. Static storage. */
CORDON_PUBLIC const char *cordon_code_name(cordon_code code);

/* ---- Policy ------------------------------------------------------------------------------- */

typedef enum cordon_mode {
        CORDON_MODE_WORKSPACE_WRITE = 0, /* "chat", "workspace-write" */
        CORDON_MODE_READ_ONLY,           /* "review", "plan", "orchestrate", "read-only" */
        CORDON_MODE_DANGER_FULL_ACCESS,  /* "danger-full-access": no sandbox at all */
} cordon_mode;

/* Parses a mode name or alias. Returns 0, or -EINVAL for an unknown name. */
CORDON_PUBLIC int cordon_mode_from_string(const char *name, cordon_mode *ret);
/* Canonical name: "workspace-write", "read-only", "danger-full-access". */
CORDON_PUBLIC const char *cordon_mode_to_string(cordon_mode mode);

typedef struct cordon_policy cordon_policy;

/* An empty policy layer: nothing set. Used for session and escalation layers. Caller frees with
 * cordon_policy_free(). Fails only for a NULL `ret` (-EINVAL, CORDON_USAGE) or out of memory
 * (-ENOMEM, CORDON_LAUNCH_FAILED). */
CORDON_PUBLIC int cordon_policy_new(cordon_policy **ret, cordon_error *err);

/* The built-in deployment default (the "embedded default"): workspace = cwd (writable), the rest of
 * the filesystem readable, the secret set unreadable, the mandatory write-deny set inside every
 * writable root and $HOME, default deny-create names, the network on through the egress proxy
 * with the built-in allowlist (networkEnabled true). `cwd` and `home` must be absolute. */
CORDON_PUBLIC int cordon_policy_new_default(const char *cwd, const char *home,
                                            cordon_policy **ret, cordon_error *err);

CORDON_PUBLIC void cordon_policy_free(cordon_policy *policy);

/* Why the most recent setter call on `p` that refused refused (NULL when none has): the code
 * (POLICY_INVALID, LAUNCH_FAILED for out of memory), the errno, and a message with the value
 * quoted and the reason, e.g. "'/w/../x' must not contain '..' components" (a variable's value is
 * never shown). Owned by `p`; valid until the next refused setter call or cordon_policy_free(). A
 * caller prefixes what it set ("--writable: ..."). */
CORDON_PUBLIC const cordon_error *cordon_policy_last_error(const cordon_policy *p);

/* Merges a JSON policy file into `policy` (lists append, scalars replace). Unknown keys and bad
 * values fail with CORDON_POLICY_INVALID and a "file:line:col: ..." message. On failure `policy` is
 * left unchanged. */
CORDON_PUBLIC int cordon_policy_load_file(cordon_policy *policy, const char *path,
                                          cordon_error *err);
/* Same, from a buffer; `origin` names it in error messages. */
CORDON_PUBLIC int cordon_policy_load_string(cordon_policy *policy, const char *json, size_t len,
                                            const char *origin, cordon_error *err);

/* Setters. Paths must be absolute (-EINVAL otherwise); strings are copied. A setter that refuses
 * returns a negative errno and records why: cordon_policy_last_error(). */
CORDON_PUBLIC int cordon_policy_set_mode(cordon_policy *p, cordon_mode mode);
CORDON_PUBLIC int cordon_policy_set_session_id(cordon_policy *p, const char *id);
CORDON_PUBLIC int cordon_policy_set_workdir(cordon_policy *p, const char *dir);
CORDON_PUBLIC int cordon_policy_set_network_enabled(cordon_policy *p, bool enabled);
/* microvm.accel (docs/policy.md): "kvm" (the default: hardware KVM only) or "tcg" (the microvm
 * backend may use software emulation where KVM cannot boot a stock kernel). -EINVAL otherwise. */
CORDON_PUBLIC int cordon_policy_set_microvm_accel(cordon_policy *p, const char *accel);
CORDON_PUBLIC int cordon_policy_add_bind(cordon_policy *p, const char *host_path, bool read_only);
CORDON_PUBLIC int cordon_policy_add_protected_path(cordon_policy *p, const char *path);
CORDON_PUBLIC int cordon_policy_add_runner_state_dir(cordon_policy *p, const char *path);
CORDON_PUBLIC int cordon_policy_add_deny_read(cordon_policy *p, const char *path);
CORDON_PUBLIC int cordon_policy_add_deny_write(cordon_policy *p, const char *path);
/* A glob over a file name (not a path): '*', '?', '[...]'; matched case-insensitively. */
CORDON_PUBLIC int cordon_policy_add_deny_create_name(cordon_policy *p, const char *glob);
CORDON_PUBLIC int cordon_policy_env_pass(cordon_policy *p, const char *name);
CORDON_PUBLIC int cordon_policy_env_set(cordon_policy *p, const char *name, const char *value);
/* A glob over variable names, e.g. "*_TOKEN". */
CORDON_PUBLIC int cordon_policy_env_scrub(cordon_policy *p, const char *glob);
/* Egress (docs/design/network.md): host patterns ("api.example.com", "*.example.com",
 * "a.*.example.com", optionally ":port") allowed through, or refused even when allowed (deny beats
 * allow). */
CORDON_PUBLIC int cordon_policy_add_egress_allow(cordon_policy *p, const char *pattern);
CORDON_PUBLIC int cordon_policy_add_egress_deny(cordon_policy *p, const char *pattern);
/* egressUpstream: the parent proxy every allowed connection is chained through, after the rules
 * (docs/policy.md): "http://[user:password@]host:port" (HTTP CONNECT) or
 * "socks5://[user:password@]host:port" ("socks5h://" is the same); credentials percent-encoded.
 * The upstream then resolves the names; a later call replaces the URL. The password is never
 * printed (policy dumps show "****"), nor quoted in cordon_policy_last_error(). */
CORDON_PUBLIC int cordon_policy_set_egress_upstream(cordon_policy *p, const char *url);
/* egressMode (docs/policy.md, "Ask mode"): what happens to a connection no egress entry names.
 * ALLOWLIST (the default) refuses it; ASK holds it and asks the launch's answerer
 * (cordon_run_options.on_egress_ask, a cordond client, the `cordon run` prompt), which may allow
 * it once, for the rest of the run or session, or deny it; no answer within the ask timeout, or
 * nobody to ask, refuses it. Deny entries, the built-in deny list and the address guard are
 * never asked about. Setting ASK widens the policy: an untrusted project file cannot. */
typedef enum cordon_egress_mode {
        CORDON_EGRESS_ALLOWLIST = 0,
        CORDON_EGRESS_ASK,
} cordon_egress_mode;
CORDON_PUBLIC int cordon_policy_set_egress_mode(cordon_policy *p, cordon_egress_mode mode);
/* egressAskTimeout: how long a held connection waits for its answer, 100 ms to 1 h (default
 * 30 s); then it is refused (fail closed) and the timeout is recorded. */
CORDON_PUBLIC int cordon_policy_set_egress_ask_timeout_ms(cordon_policy *p, uint64_t ms);
/* The proxy resolves `name` to `address` (an IPv4/IPv6 literal) instead of asking DNS, like
 * curl's --resolve; a later call for the same name replaces the address. */
CORDON_PUBLIC int cordon_policy_set_host(cordon_policy *p, const char *name, const char *address);
CORDON_PUBLIC int cordon_policy_set_timeout_ms(cordon_policy *p, uint64_t ms);
CORDON_PUBLIC int cordon_policy_set_memory_bytes(cordon_policy *p, uint64_t bytes);
CORDON_PUBLIC int cordon_policy_set_pids(cordon_policy *p, uint64_t pids);
/* An egressDenylist entry with the reason it refuses (printable text, at most 200 bytes), which
 * travels with every refusal it makes: the 403's body and X-Cordon-Reason header, and the
 * violation's "reason". A bad reason fails the call and still adds the entry. */
CORDON_PUBLIC int cordon_policy_add_egress_deny_reason(cordon_policy *p, const char *pattern,
                                                       const char *reason);
/* limits.wildcardNames: how many distinct names one wildcard egress entry ("*.example.com") lets
 * a run resolve, 1..65536 (default 64): each name can carry data to whoever runs the zone's DNS. */
CORDON_PUBLIC int cordon_policy_set_wildcard_names(cordon_policy *p, uint64_t names);
CORDON_PUBLIC int cordon_policy_set_cpu_seconds(cordon_policy *p, uint64_t seconds);
/* limits.cpus, 1..255: the microvm backend's vCPUs (qemu -smp; default one). The other backends
 * refuse a run that sets it (docs/policy.md, "limits"). Added in 0.2. */
CORDON_PUBLIC int cordon_policy_set_cpus(cordon_policy *p, uint64_t cpus);
/* The sizes of the sandbox's private /tmp and /dev/shm (tmpfs, 1 MiB to 1 TiB); unset: the
 * built-in defaults (docs/policy.md, "limits"). A full one answers ENOSPC and is reported. */
CORDON_PUBLIC int cordon_policy_set_tmp_size(cordon_policy *p, uint64_t bytes);
CORDON_PUBLIC int cordon_policy_set_shm_size(cordon_policy *p, uint64_t bytes);

/* The mode this layer sets, or CORDON_MODE_WORKSPACE_WRITE when it sets none (the default). On a
 * resolved policy this is the mode a run uses: consumers read it to warn before an unconfined
 * (danger-full-access) run. */
CORDON_PUBLIC cordon_mode cordon_policy_get_mode(const cordon_policy *p);

/* The size and duration grammar shared by policy consumers (CLI flags, daemon requests), so every
 * front end accepts the same strings. Sizes: decimal bytes with an optional binary suffix K, M, G
 * (or KiB, MiB, GiB): "512", "64M". Durations: decimal with an optional suffix ms, s, m, h (none =
 * seconds): "30", "500ms", "2m". Return 0, -EINVAL when malformed, -ERANGE on overflow. */
CORDON_PUBLIC int cordon_parse_size(const char *s, uint64_t *ret);
CORDON_PUBLIC int cordon_parse_duration_ms(const char *s, uint64_t *ret);

/* Per-call resolution (docs/policy.md, "Layers and resolution"): approved escalation > session >
 * deployment default. Any layer but `deployment_default` may be NULL. Scalars come from the highest
 * layer that sets them; lists are the union of all layers (a higher layer cannot remove a deny
 * rule). The result is a new, complete policy that shares nothing with its inputs. */
CORDON_PUBLIC int cordon_policy_resolve(const cordon_policy *deployment_default,
                                        const cordon_policy *session,
                                        const cordon_policy *approved_escalation,
                                        cordon_policy **ret, cordon_error *err);

#define CORDON_JSON_WITH_PLAN (1u << 0) /* include the derived plan (mounts, Landlock, seccomp, env) */
/* "policy" holds only what this layer sets, env.set values included (not "<redacted>"): a
 * document that loads back (cordon_policy_load_string) into an equal layer, for handing a layer
 * to another process such as cordond. Never print it where logs may keep it. */
#define CORDON_JSON_LAYER (1u << 1)
/* The policy as JSON text, caller frees. `environ` (may be NULL) is the environment the plan's
 * env section is computed from. */
CORDON_PUBLIC int cordon_policy_to_json(const cordon_policy *p, unsigned flags,
                                        char *const *environ, char **ret, cordon_error *err);

/* ---- macOS Seatbelt ------------------------------------------------------------------------ */

typedef struct cordon_seatbelt_options {
        const char *home;     /* the invoking user's home directory, absolute (required) */
        const char *cwd;      /* the current directory, absolute (required) */
        uint16_t proxy_port;  /* the session's egress proxy on localhost; 0: none (no TCP at all) */
        const char *tmpdir;   /* the run's private TMPDIR (writable, not executable); NULL: none */
} cordon_seatbelt_options;

/* The macOS Seatbelt profile (SBPL text, as `sandbox-exec -p` takes it) for a resolved policy,
 * built from the same plan the Linux backend applies (docs/design/seatbelt.md). Works on every
 * platform: `cordon policy show --seatbelt`. Caller frees *ret. Fails with CORDON_POLICY_INVALID
 * for mode danger-full-access (no sandbox, no profile) and CORDON_POLICY_UNENFORCEABLE for a path
 * a profile cannot hold (control characters, invalid UTF-8), besides plan_build's errors. */
CORDON_PUBLIC int cordon_policy_to_seatbelt(const cordon_policy *p,
                                            const cordon_seatbelt_options *opts, char **ret,
                                            cordon_error *err);

/* ---- Running a command -------------------------------------------------------------------- */

typedef enum cordon_backend {
        CORDON_BACKEND_AUTO = 0, /* the best available, stepping down only as docs/design/backends.md allows */
        CORDON_BACKEND_NATIVE,
        CORDON_BACKEND_LANDLOCK,
        CORDON_BACKEND_MICROVM,
        CORDON_BACKEND_NONE,     /* explicit opt-out: no confinement */
} cordon_backend;

CORDON_PUBLIC const char *cordon_backend_to_string(cordon_backend backend);
/* Parses a backend name for the command line: unknown names are -EINVAL (a usage error). */
CORDON_PUBLIC int cordon_backend_from_string(const char *name, cordon_backend *ret);

/* A refusal observed exactly where it happened (never inferred from the command's output).
 * `action`: "file-create-name" for a creation-time rule, "syscall" for a call the seccomp filter
 * refuses, "network-outbound" for a refused connection; `syscall`: the refused call ("openat",
 * "keyctl", "ia32:open", "connect", ...); `target`: the absolute path as the sandbox resolved it
 * (may be empty when the caller could not be inspected), the syscall's name for "syscall", the
 * destination for "network-outbound"; `rule`: the rule that refused it. `count`: how many
 * refusals this report stands for: 0 or 1 for one; N > 1 for an aggregate the rate limit sent
 * instead of N reports (docs/design/seccomp.md). Strings are valid only during the call. */
typedef struct cordon_violation {
        const char *action;
        const char *syscall;
        const char *target;
        const char *rule;
        uint64_t count;
        /* network-outbound: the deny entry's reason (cordon_policy_add_egress_deny_reason), or
         * NULL. Added in 0.2: only read it from a library that fills it. */
        const char *reason;
        /* network-request (a request rule refused an HTTP request, docs/policy.md "Request
         * rules"): its method and path; NULL otherwise. Added in 0.2 with reason. */
        const char *method;
        const char *path;
        /* network-request refused by the git push gateway (docs/policy.md, "Git push"): the
         * refused ref ("refs/heads/main"), or NULL. Added in 0.2: only read it from a library
         * that fills it. */
        const char *ref;
} cordon_violation;

typedef void (*cordon_violation_fn)(void *userdata, const cordon_violation *violation);

/* The egress ask mode (cordon_policy_set_egress_mode; docs/design/network.md, "Ask mode"): a
 * connection to a destination no egress entry names is held, and the launch's on_egress_ask is
 * asked about it. `target` "host:port" (the name the command asked for, or an address),
 * `protocol` "http", "socks5" or "tcp" (a redirected connection); `timeout_ms`: how long the
 * proxy holds it — an answer after that is too late (the connection was refused, the "timeout"
 * recorded). Strings are valid only during the call. */
typedef struct cordon_egress_question {
        const char *target;
        const char *protocol;
        uint64_t timeout_ms;
} cordon_egress_question;

typedef enum cordon_egress_answer {
        CORDON_EGRESS_DENY = 0,        /* refused (and not asked about again in this run) */
        CORDON_EGRESS_ALLOW_ONCE,      /* this connection (and its keep-alive requests) */
        CORDON_EGRESS_ALLOW_SESSION,   /* host:port for the rest of the run or warm session */
} cordon_egress_answer;

/* Called from the run's thread (as on_violation), one question at a time; returns the answer.
 * Any other value is a deny. Without one, ask mode refuses every unlisted destination at once
 * (the event says nobody was there to answer). */
typedef cordon_egress_answer (*cordon_egress_ask_fn)(void *userdata,
                                                     const cordon_egress_question *question);

/* The command policy's approvals (docs/policy.md, "Command policy"): a command line one of
 * whose commands begins with the words of an "ask" rule of the policy's mode runs only when
 * the launch's on_command_ask approves it, asked once per rule before anything starts (a
 * "refuse" rule refuses without asking). `argv` the command as given, `pattern` the rule's
 * words ("git push"), `mode` the policy's mode, `rule` its index in commandPolicy. Valid only
 * during the call. A convenience that keeps an agent's habits in check, not a security
 * boundary: a command can always write a script that does the same. */
typedef struct cordon_command_question {
        char *const *argv;
        const char *pattern;
        const char *mode;
        size_t rule;
} cordon_command_question;

typedef enum cordon_command_answer {
        CORDON_COMMAND_DENY = 0, /* not run: the launch fails with CORDON_EXEC_FAILED */
        CORDON_COMMAND_APPROVE,  /* this rule lets this command line run, this once */
} cordon_command_answer;

/* Called on the thread that launches (cordon_run's, a cordon_spawn() run's, the caller of
 * cordon_session_exec()), one question at a time, with `ask_userdata`. Any other value is a
 * deny. Without one, a command an "ask" rule names is refused, and the message says so. */
typedef cordon_command_answer (*cordon_command_ask_fn)(void *userdata,
                                                       const cordon_command_question *question);

/* The events stream (docs/events.schema.json; schema: docs/events.schema.json). `line` is one JSON
 * object on one line, ending in '\n' (not NUL-terminated), at most 32 KiB; valid only during the
 * call, which comes from cordon_run's thread. Every object has "type", "sessionId" (the policy's
 * session id, or a random UUID generated per run when it sets none) and "time" (RFC 3339, UTC,
 * milliseconds). Types, in the order a run produces them:
 *   "starting"  {"backend": requested name}                 before anything is checked or built
 *   "ready"     {"backend": used name}                      the command is about to be executed
 *   "violation" {"action", "target", "raw": {"syscall", "rule", "count"?}}  each refusal, as
 *                                                           observed ("count": an aggregate)
 *   "egress.ask" {"id", "target", "protocol", "timeoutMs"}  the ask mode holds a connection to
 *                                                           an unlisted destination and asks
 *   "egress.answer" {"id", "target", "protocol", "answer"}  what it came to: "allow-once",
 *                                                           "allow-session", "deny", "timeout",
 *                                                           "unanswered"
 *   "repository" {"path"} or {"more"}  a git repository the command created (its config and
 *                                      hooks vetted); sent when the run ends, not a refusal
 *   "stdout", "stderr" {"data", "encoding"?: "base64"}  with `capture`: a chunk (<= 16 KiB) of
 *                                                       the command's output, as text when it
 *                                                       is valid UTF-8, else base64
 *   then exactly one terminal event:
 *   "exit"      {"exitCode", "signal"?: "SIGKILL"...}       the command ended
 *   "killed"    {"reason": "timeout"|"oom"|"manual"}        limits.timeout, limits.memory (an
 *                                                           OOM kill in the run's cgroup) or
 *                                                           cancel_fd killed the sandbox
 *   "error"     {"code": "LAUNCH_FAILED"..., "message"}     cordon_run failed (an addition to
 *                                                           docs/events.schema.json: the same code and
 *                                                           message as the cordon_error)
 * A callback rather than a descriptor: the library never writes to a file it was not asked to,
 * and options fresh from cordon_run_options_init() (on_event NULL) mean no events. */
typedef void (*cordon_event_fn)(void *userdata, const char *line, size_t len);

#define CORDON_CAPTURE_STDOUT (1u << 0)
#define CORDON_CAPTURE_STDERR (1u << 1)

/* Options of cordon_run(). Initialize with cordon_run_options_init(), which sets `size` (the
 * struct may grow in later releases; the library reads only the fields `size` covers, as for
 * cordon_spawn_options). */
typedef struct cordon_run_options {
        size_t size;
        cordon_backend backend;
        char *const *environ;   /* the environment to filter for the command; NULL = environ */
        cordon_violation_fn on_violation; /* may be NULL; called from cordon_run's thread */
        void *userdata;
        cordon_event_fn on_event; /* may be NULL: no events */
        void *event_userdata;     /* passed to on_event */
        /* A descriptor >= 3 (e.g. the read end of a pipe a SIGINT/SIGTERM handler writes to): when
         * it becomes readable, the sandbox is killed with everything in it, the stream ends with
         * "killed" {"reason": "manual"} and cordon_run fails with CORDON_KILLED. 0: none. */
        int cancel_fd;
        /* CORDON_CAPTURE_* bits: the command's stdout/stderr go through pipes cordon_run reads;
         * each chunk is written on, unchanged, to the caller's fd 1/2 (where the command would
         * have written; the command no longer sees a terminal there) and emitted as a "stdout"
         * or "stderr" event. A slow reader of fd 1/2 or a slow on_event blocks the command's
         * writes, as a slow reader of its own output would: memory stays bounded. 0: none. */
        unsigned capture;
        /* Called once, from cordon_run's thread, before the command starts, when the unspecified
         * backend (AUTO) steps down from native to the landlock backend (docs/design/backends.md:
         * the step is said, in one log line): `used` is the backend that runs the command, `why`
         * one line (valid during the call). Gets `userdata`. May be NULL. */
        void (*on_backend_note)(void *userdata, cordon_backend used, const char *why);
        /* The ask mode's answerer (cordon_egress_ask_fn); NULL: nobody, every question is
         * denied at once. Gets `ask_userdata`. Added in 0.2. */
        cordon_egress_ask_fn on_egress_ask;
        void *ask_userdata;
        /* The command policy's approver (cordon_command_ask_fn), with `ask_userdata`; NULL: a
         * command an "ask" rule names is refused. Added in 0.2. */
        cordon_command_ask_fn on_command_ask;
} cordon_run_options;

/* Sets every field to its default (AUTO, no callbacks, no cancel_fd, no capture) and `size` to
 * sizeof(cordon_run_options). */
CORDON_PUBLIC void cordon_run_options_init(cordon_run_options *opts);

typedef struct cordon_run_result {
        cordon_backend backend; /* the backend actually used */
        int wait_status;        /* raw wait(2) status of the command */
        int exit_code;          /* the status cordon exits with: the command's, or 128+signal */
        unsigned violations;    /* how many refusals were reported */
} cordon_run_result;

/* Runs argv[0] (searched in the sandbox's PATH) under `policy`, with the caller's fds 0-2, and
 * waits for it. Returns 0 when the command ran (whatever its status), or a negative errno with
 * `err` set when the sandbox could not be built or the command could not be executed: then nothing
 * of the command ran unconfined. `opts` may be NULL (the defaults); options whose `size` is not
 * set, or that carry a field this library does not know (non-zero bytes beyond the size it
 * knows: a program built against a newer header), are refused with CORDON_USAGE before anything
 * runs and before any event.
 *
 * Managed settings (docs/settings.md, "Library callers"): every launch — cordon_run(),
 * cordon_spawn(), cordon_session_launch() — applies the administrator's
 * /etc/cordon/managed-settings.json, when it exists, over `policy` as cordon_settings_resolve()
 * would (its values win over the caller's; its lists are added), unless `policy` came from
 * cordon_settings_resolve(), which applied them already. A managed file that cannot be read or
 * parsed, or that anyone but root (or the caller) could modify, fails the launch
 * (CORDON_POLICY_INVALID); with allowUnsandboxedCommands false, backend CORDON_BACKEND_NONE or
 * mode danger-full-access is refused (CORDON_POLICY_INVALID, -EPERM). cordon_run() has no way
 * to opt out: a caller that must run without them uses cordon_spawn() with
 * CORDON_SPAWN_NO_MANAGED_SETTINGS and cordon_process_wait(). */
CORDON_PUBLIC int cordon_run(const cordon_policy *policy, char *const argv[],
                             const cordon_run_options *opts, cordon_run_result *ret,
                             cordon_error *err);

/* ---- Processes (docs/design/library.md) ----------------------------------------------------
 * cordon_spawn() starts a command under a policy and returns at once with a handle: the caller
 * chooses its stdio and any further descriptors, waits (blocking, with a timeout, or by polling
 * a descriptor), signals it, kills it. cordon_run() is cordon_spawn() + cordon_process_wait().
 *
 * Lifecycle: cordon_spawn_options_init() → set fields → cordon_spawn() → any of the
 * cordon_process_*() calls → cordon_process_wait() → cordon_process_free(). Freeing a handle
 * whose command still runs kills the sandbox with everything in it and waits for it.
 *
 * Threads: cordon_spawn() may be called from several threads at once, each with its own
 * descriptors. One handle may be used from several threads: signal and kill are safe at any
 * time; only one thread may wait on a handle at a time, and free must be the last call. Each run
 * has a thread of the library's own that forks the sandbox and reads it to its end, so the
 * thread that called cordon_spawn() may exit while the command runs. A handle's callbacks
 * (on_event, on_violation, on_backend_note) all come from that thread, one at a time; they must
 * not call cordon_process_wait/free on their own handle. */

typedef struct cordon_process cordon_process;

/* A descriptor handed to the command: the caller's `fd` becomes the command's `child_fd` (>= 3;
 * stdio has fields of its own). Every other descriptor of the caller stays out of the sandbox. */
typedef struct cordon_fd_map {
        int fd;
        int child_fd;
} cordon_fd_map;

#define CORDON_SPAWN_FDS_MAX 16   /* at most this many cordon_fd_map entries */
#define CORDON_FD_NULL (-1)       /* a stdio field: the command gets /dev/null there */

/* Options of cordon_spawn(). Initialize with cordon_spawn_options_init(), which sets `size`
 * (the struct may grow in later releases; the library reads only the fields `size` covers). */
typedef struct cordon_spawn_options {
        size_t size;
        cordon_backend backend;
        char *const *environ;  /* the environment to filter for the command; NULL = environ */
        /* The caller's descriptors that become the command's 0, 1 and 2 (default: 0, 1, 2, i.e.
         * the caller's own; CORDON_FD_NULL: /dev/null). They are checked as cordon_run checks
         * fds 0-2: a directory, a protected file open read-only, an unconnected or datagram
         * socket is refused (CORDON_POLICY_UNENFORCEABLE), since the command could reach past
         * the policy through it. The same holds for every entry of `fds`. */
        int stdin_fd, stdout_fd, stderr_fd;
        const cordon_fd_map *fds; /* copied; at most CORDON_SPAWN_FDS_MAX */
        size_t n_fds;
        /* The directory the policy's relative paths and the command's working directory
         * resolve against; NULL: the caller's current directory (a process-wide value: threads
         * that spawn in different directories set this). */
        const char *cwd;
        cordon_violation_fn on_violation; /* may be NULL; gets `userdata` */
        void *userdata;
        cordon_event_fn on_event;         /* may be NULL: no events; gets `event_userdata` */
        void *event_userdata;
        int cancel_fd;    /* as cordon_run_options.cancel_fd; -1 or 0: none */
        /* CORDON_CAPTURE_* bits: as cordon_run_options.capture, except that each chunk is
         * written on to stdout_fd / stderr_fd (where the command would have written; nowhere
         * for CORDON_FD_NULL: the events only). A session exec captures only streams whose fd
         * is CORDON_FD_NULL (cordon_session_exec). */
        unsigned capture;
        void (*on_backend_note)(void *userdata, cordon_backend used, const char *why);
        unsigned flags;   /* CORDON_SPAWN_* bits; unknown bits are refused (CORDON_USAGE) */
        /* As cordon_run_options.on_egress_ask. Added in 0.2. */
        cordon_egress_ask_fn on_egress_ask;
        void *ask_userdata;
        /* As cordon_run_options.on_command_ask (for cordon_session_exec() too). Added in 0.2. */
        cordon_command_ask_fn on_command_ask;
} cordon_spawn_options;

/* cordon_spawn_options.flags: stdin_fd is a terminal (the slave of a PTY the caller opened, for
 * a person's interactive shell) and the command makes it its controlling terminal: right after
 * the setsid() every command gets, TIOCSCTTY on fd 0 — job control and ^C work; it is still a
 * session of the command's own, so no other terminal can be reached. stdin_fd must be a
 * terminal (isatty), else CORDON_USAGE. Give the same PTY as stdout_fd and stderr_fd. */
#define CORDON_SPAWN_TTY (1u << 0)
/* cordon_spawn_options.flags: run under `policy` alone, without the administrator's managed
 * settings (cordon_run(), "Managed settings"), which the launch otherwise applies. An explicit
 * opt-out, for a harness that enforces the administrator's rules itself or answers to no
 * administrator: it can drop a managed deny rule or allowUnsandboxedCommands: false, so set it
 * only on a decision of whoever is accountable for the host, never from a request of the
 * command's or of a repository's. Refused by cordon_session_exec() (CORDON_USAGE): a session's
 * managed settings are settled at cordon_session_launch(). */
#define CORDON_SPAWN_NO_MANAGED_SETTINGS (1u << 1)

/* Sets every field to its default and `size` to sizeof(cordon_spawn_options). */
CORDON_PUBLIC void cordon_spawn_options_init(cordon_spawn_options *opts);

/* Builds the sandbox and starts argv[0] (searched in the sandbox's PATH) in it. Returns 0 once
 * the command's process is about to execute it, with *ret a new handle (caller frees with
 * cordon_process_free); or a negative errno with `err` set when the sandbox could not be built
 * (then nothing of the command ran, nothing is left to wait for). A command that cannot be
 * executed (not found, not executable) is reported by cordon_process_wait (CORDON_EXEC_FAILED).
 * The timeout of limits.timeout starts here. */
CORDON_PUBLIC int cordon_spawn(const cordon_policy *policy, char *const argv[],
                               const cordon_spawn_options *opts, cordon_process **ret,
                               cordon_error *err);

/* The process cordon_spawn() forked, in the caller's PID namespace: the sandbox's outermost
 * process (the command itself for the none backend). Its end is the sandbox's end. */
CORDON_PUBLIC pid_t cordon_process_pid(const cordon_process *p);
/* A pidfd for that process (owned by the handle; valid until cordon_process_free): poll() reports
 * it readable once the sandbox has ended. cordon_process_wait() may then still take a moment to
 * collect the last reports and output; cordon_process_fd() is readable exactly when it will not
 * block. */
CORDON_PUBLIC int cordon_process_pidfd(const cordon_process *p);
/* Readable (POLLIN) once the run's result is ready: cordon_process_wait() then returns at once.
 * Owned by the handle. */
CORDON_PUBLIC int cordon_process_fd(const cordon_process *p);
/* The backend running the command (after an AUTO step-down: the one stepped down to). */
CORDON_PUBLIC cordon_backend cordon_process_backend(const cordon_process *p);

/* Delivers `sig` (1..64) to the command's process group (the command leads it, as a shell's
 * job does: a ^C reaches a whole pipeline). 0, or -ESRCH once the command has ended, -EINVAL
 * for a bad signal number. Only the command's own processes can be reached: never the sandbox's
 * monitor, never a process outside. */
CORDON_PUBLIC int cordon_process_signal(cordon_process *p, int sig, cordon_error *err);
/* Kills the sandbox with everything in it; the run ends with "killed" {"reason": "manual"} and
 * cordon_process_wait() fails with CORDON_KILLED. 0, or -ESRCH when the run was already over. */
CORDON_PUBLIC int cordon_process_kill(cordon_process *p, cordon_error *err);

/* Waits up to `timeout_ms` (-1: until the end; 0: not at all) for the run to end. Returns 1 while
 * it still runs; 0 when the command ran (whatever its status), with *ret filled; or a negative
 * errno with `err` set when the run failed (exec failure, limits.timeout, a kill, a lost
 * channel), exactly as cordon_run() would have. Once ended, every later call returns the same. */
CORDON_PUBLIC int cordon_process_wait(cordon_process *p, int timeout_ms, cordon_run_result *ret,
                                      cordon_error *err);

/* Kills the sandbox if it still runs, waits for it, and frees the handle. NULL: no-op. */
CORDON_PUBLIC void cordon_process_free(cordon_process *p);

/* ---- Sessions (docs/design/library.md) -----------------------------------------------------
 * A warm session builds its sandbox once (namespaces, mounts, Landlock, seccomp, the creation-rule
 * supervisor, the egress proxy) and then runs each command in it for the price of a fork and an
 * exec. Lifecycle: cordon_session_options_init() → cordon_session_launch() → any number of
 * cordon_session_exec() (each a cordon_process handle, also at once) and suspend/resume →
 * cordon_session_destroy(). A session runs on the native backend, or with
 * cordon_session_options.backend CORDON_BACKEND_MICROVM in one VM booted at the launch, which
 * runs one exec at a time (a second one while it runs fails: docs/design/microvm.md).
 *
 * Threads: every call may come from any thread. Each session has a thread of the library's own
 * that owns its sandbox (it forked it) and delivers its execs' callbacks, one at a time; a
 * callback must not call into the session or free its own handle. With
 * CORDON_SESSION_EVENT_LOOP there is no such thread: the callbacks come from
 * cordon_session_dispatch() on the caller's thread (below). */

typedef struct cordon_session cordon_session;

typedef enum cordon_session_state {
        CORDON_SESSION_CREATED = 0, /* launching */
        CORDON_SESSION_WARM,        /* ready, nothing running */
        CORDON_SESSION_ACTIVE,      /* at least one exec running */
        CORDON_SESSION_SUSPENDED,   /* every process of the session stopped */
        CORDON_SESSION_DESTROYED,
        CORDON_SESSION_ERROR,       /* the sandbox could not be built, or ended */
} cordon_session_state;

/* "created", "warm", "active", "suspended", "destroyed", "error"; "unknown" outside the set. */
CORDON_PUBLIC const char *cordon_session_state_to_string(cordon_session_state state);

typedef struct cordon_session_options {
        size_t size;              /* set by cordon_session_options_init() */
        cordon_backend backend;   /* AUTO or NATIVE; anything else is refused */
        char *const *environ;     /* the environment the policy filters for the session */
        const char *cwd;          /* the session's directory; NULL: the caller's */
        unsigned flags;           /* CORDON_SESSION_* bits; unknown bits are refused (USAGE) */
} cordon_session_options;

/* cordon_session_options.flags: the session is driven by the caller's event loop, for programs
 * built around one thread and poll/epoll (a daemon, Node, Python asyncio). No thread of the
 * library's: cordon_session_launch() forks the session's host from the calling thread and
 * returns at once in state CREATED; the caller watches cordon_session_fd() and calls
 * cordon_session_dispatch() whenever it is readable, which delivers every event, result and
 * state change (CREATED → WARM once the sandbox is ready, or ERROR with cordon_session_error())
 * on the calling thread. The host dies with the thread that launched the session
 * (PR_SET_PDEATHSIG), so that thread must outlive the session. The host is a child of the
 * caller's process: a caller that reaps every child (waitpid(-1)) may reap it, the library
 * does not need its status. An exec's result comes only through dispatch: on the thread that
 * launched the session cordon_process_wait() with a timeout other than 0 fails at once
 * (CORDON_USAGE, -EDEADLK) instead of never returning; poll cordon_process_fd() in the loop and
 * wait with 0 once it is readable. cordon_process_free() of an exec still running kills it and
 * returns at once. Stopping to dispatch (e.g. while a consumer of the output falls behind) stops
 * the host, and in turn the commands, at their next write: backpressure, memory stays bounded. */
#define CORDON_SESSION_EVENT_LOOP (1u << 0)
/* cordon_session_options.flags: the session's sandbox is built from `policy` alone, without the
 * administrator's managed settings, which cordon_session_launch() otherwise applies (cordon_run(),
 * "Managed settings"); the same explicit opt-out as CORDON_SPAWN_NO_MANAGED_SETTINGS. */
#define CORDON_SESSION_NO_MANAGED_SETTINGS (1u << 1)
/* cordon_session_options.flags: the caller answers the egress ask mode's questions
 * (cordon_policy_set_egress_mode): each comes as an "egress.ask" event ({"id", "target",
 * "protocol", "timeoutMs"}) in the stream of the exec whose process made the connection (every
 * running exec's when that is not known), and is answered with cordon_session_egress_answer();
 * the "egress.answer" event that follows says what the proxy did. Without this flag every
 * question is refused at once ("unanswered"). Added in 0.2. */
#define CORDON_SESSION_EGRESS_ANSWERS (1u << 2)

CORDON_PUBLIC void cordon_session_options_init(cordon_session_options *opts);

/* Answers the egress.ask event with this `id` (CORDON_SESSION_EGRESS_ANSWERS). Asynchronous: the
 * outcome is the "egress.answer" event; an answer after the question's timeout, or for a question
 * already answered, changes nothing (the proxy records "timeout"). 0, or a negative errno with
 * `err` set: CORDON_USAGE for a session without the flag or an answer that is none of the three,
 * CORDON_LAUNCH_FAILED once the session's sandbox is gone. */
CORDON_PUBLIC int cordon_session_egress_answer(cordon_session *s, uint64_t id,
                                               cordon_egress_answer answer, cordon_error *err);

/* Builds the session's sandbox and returns once it is ready (state WARM), or a negative errno
 * with `err` set when it could not be built (nothing is left running). The managed settings are
 * applied here, before anything is forked, as for cordon_run(); every exec runs under them.
 * Caller frees with
 * cordon_session_destroy(). With CORDON_SESSION_EVENT_LOOP it returns once the host is forked
 * (state CREATED): a sandbox that cannot be built ends in state ERROR during a later dispatch,
 * with the reason in cordon_session_error(); execs may be started meanwhile (they run once the
 * sandbox is ready, or end with CORDON_LAUNCH_FAILED). */
CORDON_PUBLIC int cordon_session_launch(const cordon_policy *policy,
                                        const cordon_session_options *opts,
                                        cordon_session **ret, cordon_error *err);
CORDON_PUBLIC cordon_session_state cordon_session_get_state(const cordon_session *s);
/* The session's id: the policy's sessionId, else a random UUID. Every event carries it. */
CORDON_PUBLIC const char *cordon_session_id(const cordon_session *s);
/* Why the session is in state ERROR (its sandbox could not be built, or its host ended); NULL in
 * every other state. Owned by the session, valid until cordon_session_destroy(). Any thread. */
CORDON_PUBLIC const cordon_error *cordon_session_error(const cordon_session *s);

/* CORDON_SESSION_EVENT_LOOP only (else -1). A descriptor the caller's loop watches for
 * readability (POLLIN/EPOLLIN, level-triggered): the host wrote something. Owned by the
 * session; valid until cordon_session_destroy(); never read or close it. */
CORDON_PUBLIC int cordon_session_fd(const cordon_session *s);
/* CORDON_SESSION_EVENT_LOOP only. Reads what the host wrote (one buffer: call it again while
 * the fd stays readable), without blocking, and delivers it on the calling thread: the execs'
 * events to their on_event/on_violation, their results to their handles (cordon_process_fd()
 * becomes readable), the session's state changes. Returns 0; or a negative errno with `err`
 * set: -EINVAL (CORDON_USAGE) for a threaded session, -EPIPE (CORDON_LAUNCH_FAILED) once the
 * host is gone — the state is ERROR (or DESTROYED), every exec has its result, and the caller
 * must stop watching the fd (it stays readable). Not from within a callback; one thread at a
 * time. */
CORDON_PUBLIC int cordon_session_dispatch(cordon_session *s, cordon_error *err);

/* Runs argv[0] in the session. `opts` as for cordon_spawn(), with these differences: stdio fields
 * only (n_fds must be 0); `capture` only of streams whose fd is CORDON_FD_NULL (their output
 * comes only as "stdout"/"stderr" events, read by the session's host, each after the refusals
 * reported before it; a captured stream with a descriptor of the caller's is refused with
 * CORDON_USAGE); CORDON_SPAWN_TTY as for cordon_spawn(), CORDON_SPAWN_NO_MANAGED_SETTINGS
 * refused (CORDON_USAGE: the session's sandbox holds them or not since its launch); `environ`
 * entries are set over the
 * session's environment
 * (the proxy variables stay the session's); `cwd` defaults to the session's directory; `backend`
 * is ignored. The descriptors are checked as cordon_spawn() checks them. Returns 0 with *ret a
 * handle (cordon_process_pid/_pidfd: -1, the command lives in the session's PID namespace), or a
 * negative errno with `err` set. The command's own failures (not found, refused descriptors,
 * limits.timeout, which holds per exec) come from cordon_process_wait(). */
CORDON_PUBLIC int cordon_session_exec(cordon_session *s, char *const argv[],
                                      const cordon_spawn_options *opts, cordon_process **ret,
                                      cordon_error *err);
/* Stops every process of the session (the cgroup v2 freezer where the session has one, else
 * SIGSTOP from the session's init) / lets them run again. Idempotent. */
CORDON_PUBLIC int cordon_session_suspend(cordon_session *s, cordon_error *err);
CORDON_PUBLIC int cordon_session_resume(cordon_session *s, cordon_error *err);
/* Ends the session: every process in it is killed, its cgroup removed, the handle freed. Exec
 * handles still held end with CORDON_LAUNCH_FAILED ("the session was destroyed") and must still
 * be freed. Returns once the host has ended (normally a few milliseconds; a host still there
 * after 3 s is killed); in event-loop mode nothing more is dispatched. NULL: no-op. */
CORDON_PUBLIC void cordon_session_destroy(cordon_session *s);

/* ---- Policy-checked file operations (docs/design/fs-ops.md) --------------------------------
 * A harness's own file tools (read, write, edit, list) run in the harness, outside any sandbox.
 * These calls act on the host's files only as a command under `policy` could, decided on the
 * plan the native backend would mount for a command started now: each call plans `policy`
 * afresh (so a protected path created since, a `.vscode` made later, counts) and checks the path
 * the kernel reports for what was actually opened, not the path string:
 *   - writes (cordon_fs_write, cordon_fs_edit) only where the plan's deepest mount is a writable
 *     root; never on or beneath a protected path (.git/config, .git/hooks, .bashrc, .vscode,
 *     protectedPaths, denyWrite, ..., also one that does not exist yet) or an ancestor of one (a
 *     file named .git), never to a name denyCreateNames denies (also for a file that exists),
 *     never into a .cordon directory at any depth, a git repository's config or hooks; never
 *     through a symlink (the directory is walked from the writable root without following one,
 *     so a parent swapped for a symlink meanwhile fails the walk) and never into a file with
 *     other hard links. The content goes into a new file in the same directory, which then takes
 *     the name by a rename (readers see the old or the new file, never a mix; a new file gets
 *     mode 0644 less the umask, a replaced one keeps its permission bits). No directory is made.
 *   - reads (cordon_fs_read, _stat, _list) never of the secret set (the policy's secret paths
 *     and denyRead), also not through a symlink or another hard link; never of the sandbox's
 *     private /tmp and /dev/shm (the host's are not what a command sees there). A FIFO or device
 *     is never opened.
 *   - never the calling process's own /proc and /dev, nor /sys for writes, in every mode (its
 *     /proc/self/environ would be the caller's environment); in danger-full-access nothing else
 *     is refused.
 * Stricter than the sandbox on purpose: an existing .env cannot be written, a write never goes
 * through a symlink even inside a writable root, a mount made inside a writable root is not
 * crossed, and a writable root that is a single bound file cannot be replaced (EXEC_FAILED).
 *
 * Arguments: `path` absolute and lexically normalisable (no ".." component; "//" and "/./" are
 * fine), else CORDON_USAGE. `cwd`: the directory a command would start in, as
 * cordon_spawn_options.cwd (the plan's working directory when the policy sets none); NULL: the
 * caller's current directory. The home directory is the one a run uses: $HOME when absolute,
 * else the password database's; the environment is the process's (`environ`), as for a
 * cordon_run() without cordon_run_options.environ: it places the tool cache root
 * (XDG_CACHE_HOME). Nothing is created but the file written; the tool cache root is not
 * (cordon_run() creates it before its plan; until then nothing is there to act on).
 *
 * Errors: 0, or a negative errno with `err` set:
 *   CORDON_POLICY_UNENFORCEABLE, -EACCES, and *refusal filled (the `violation` a command's
 *     refusal would be: action, target, rule): the policy refused. `refusal` may be NULL; when
 *     given, its `action` is NULL after every call the policy did not refuse. A plan that cannot
 *     be built also fails with CORDON_POLICY_UNENFORCEABLE (a field the backend cannot honour)
 *     or CORDON_POLICY_INVALID, with no refusal: `action` tells the two apart.
 *   CORDON_EXEC_FAILED: the operation itself failed; the message names the path and why, the
 *     errno is the failure's (-ENOENT, -EISDIR, -EFBIG over CORDON_FS_CONTENT_MAX, -EAGAIN when
 *     the file or its directory changed while being written: then nothing was written).
 *   CORDON_USAGE, -EINVAL: a bad argument (a relative path, an empty old text).
 *   CORDON_LAUNCH_FAILED: out of memory, no home or current directory.
 * On failure nothing is left to free.
 *
 * Ownership and threads: the inputs are read during the call only. *ret of cordon_fs_read and
 * the entries of cordon_fs_list are the caller's, freed with cordon_fs_data_free() and
 * cordon_fs_entries_free(). The calls keep no state and change nothing of the process (no
 * chdir, no umask): any number may run at once from any threads, on one shared `policy`. */

#define CORDON_FS_CONTENT_MAX (8u * 1024 * 1024) /* bytes read, written or edited in one call */
#define CORDON_FS_LIST_MAX 10000u                /* entries one cordon_fs_list() returns */

typedef enum cordon_fs_type {
        CORDON_FS_FILE = 0,
        CORDON_FS_DIRECTORY,
        CORDON_FS_SYMLINK,
        CORDON_FS_FIFO,
        CORDON_FS_SOCKET,
        CORDON_FS_CHAR_DEVICE,
        CORDON_FS_BLOCK_DEVICE,
        CORDON_FS_OTHER,
} cordon_fs_type;

/* "file", "directory", "symlink", "fifo", "socket", "char-device", "block-device", "other";
 * "unknown" outside the set. Static storage. */
CORDON_PUBLIC const char *cordon_fs_type_to_string(cordon_fs_type type);

/* What refused an operation: what the `violation` event of a refused command carries
 * (cordon_violation). Strings longer than the arrays are cut. */
typedef struct cordon_fs_refusal {
        const char *action;  /* "file-read*", "file-write*", "file-create-name" (static storage);
                              * NULL: not refused */
        char target[4096];   /* the path the rule met, as resolved */
        char rule[4096];     /* the rule: a secret or protected path, a name glob, or a reason
                              * ("outside the writable roots", "symlink", "hard link") */
} cordon_fs_refusal;

typedef struct cordon_fs_data {
        char *data;          /* the bytes, NUL-terminated after `len` (they may hold NUL) */
        size_t len;
        uint64_t size;       /* the file's size */
        uint64_t offset;     /* where data starts */
        bool eof;            /* data reaches the end of the file */
} cordon_fs_data;

typedef struct cordon_fs_written {
        bool created;        /* the file did not exist (cordon_fs_edit: always false) */
        uint64_t size;       /* bytes now in the file */
} cordon_fs_written;

typedef struct cordon_fs_entry {
        char *name;          /* cordon_fs_list: the entry's name, bytes as on disk (not always
                              * UTF-8); cordon_fs_stat: NULL */
        cordon_fs_type type; /* of the entry itself: a symlink is not followed */
        uint64_t size;       /* 0 for a secret */
        uint32_t mode;       /* permission bits (07777) */
        int64_t mtime_sec;   /* last modification: seconds since the epoch ... */
        uint32_t mtime_nsec; /* ... and nanoseconds (0-999999999) */
        bool secret;         /* in the secret set: the sandbox shows it empty (cordon_fs_list) */
} cordon_fs_entry;

/* `length` bytes (at most CORDON_FS_CONTENT_MAX, else CORDON_USAGE; 0: the rest of the file,
 * which must then be at most that, else -EFBIG: read it in parts) from `offset` of the regular
 * file at `path`. Symlinks are followed, as inside the sandbox; what was opened is checked. A
 * read at or beyond the end is empty, with `eof`. Caller frees with cordon_fs_data_free(). */
CORDON_PUBLIC int cordon_fs_read(const cordon_policy *policy, const char *cwd, const char *path,
                                 uint64_t offset, uint64_t length, cordon_fs_data *ret,
                                 cordon_fs_refusal *refusal, cordon_error *err);
/* Frees what cordon_fs_read() put in *d (not `d` itself) and empties it. NULL: no-op. */
CORDON_PUBLIC void cordon_fs_data_free(cordon_fs_data *d);

/* Replaces (or creates) the regular file at `path` with `len` bytes of `data` (at most
 * CORDON_FS_CONTENT_MAX; any bytes). Its directory must exist. */
CORDON_PUBLIC int cordon_fs_write(const cordon_policy *policy, const char *cwd, const char *path,
                                  const void *data, size_t len, cordon_fs_written *ret,
                                  cordon_fs_refusal *refusal, cordon_error *err);

/* Replaces the one occurrence of `old_text` (`old_len` > 0 bytes) in the existing file at `path`
 * with `new_text` (`new_len` bytes, may be 0). No occurrence (-ENOENT), or more than one (-EEXIST;
 * overlapping ones count: "aa" is twice in "aaa"), is CORDON_EXEC_FAILED saying which; so is a
 * file changed between its read and the replacement (-EAGAIN): no concurrent write is lost. */
CORDON_PUBLIC int cordon_fs_edit(const cordon_policy *policy, const char *cwd, const char *path,
                                 const char *old_text, size_t old_len, const char *new_text,
                                 size_t new_len, cordon_fs_written *ret,
                                 cordon_fs_refusal *refusal, cordon_error *err);

/* The entry at `path` itself (a final symlink is reported, not followed). ret->name is NULL:
 * nothing to free. */
CORDON_PUBLIC int cordon_fs_stat(const cordon_policy *policy, const char *cwd, const char *path,
                                 cordon_fs_entry *ret, cordon_fs_refusal *refusal,
                                 cordon_error *err);

/* The entries of the directory at `path` (symlinks to it followed, as by cordon_fs_read),
 * sorted by name (bytewise), "." and ".." left out, at most CORDON_FS_LIST_MAX: *ret_truncated
 * says there were more. A secret inside it is listed as the sandbox shows it: `secret`, size 0.
 * *ret is an array of *ret_n entries (NULL when empty); caller frees with
 * cordon_fs_entries_free(). */
CORDON_PUBLIC int cordon_fs_list(const cordon_policy *policy, const char *cwd, const char *path,
                                 cordon_fs_entry **ret, size_t *ret_n, bool *ret_truncated,
                                 cordon_fs_refusal *refusal, cordon_error *err);
/* Frees an array cordon_fs_list() returned, with its names. NULL: no-op. */
CORDON_PUBLIC void cordon_fs_entries_free(cordon_fs_entry *entries, size_t n);

/* The same in a session: under the policy the session was launched with, with its directory
 * (cordon_session_options.cwd, or the launching thread's current directory), its home and its
 * environment (cordon_session_options.environ, or `environ` at the launch) — copies the session
 * keeps — planned afresh at each call as above. The session's sandbox is not entered: the
 * caller's files are acted on, which the session's commands see at the same paths. Any state but
 * DESTROYED and ERROR (SUSPENDED too, and CREATED while an event-loop launch is under way); in
 * those two, CORDON_USAGE (-ESRCH). Safe from any thread, also while execs run. */
CORDON_PUBLIC int cordon_session_fs_read(cordon_session *s, const char *path, uint64_t offset,
                                         uint64_t length, cordon_fs_data *ret,
                                         cordon_fs_refusal *refusal, cordon_error *err);
CORDON_PUBLIC int cordon_session_fs_write(cordon_session *s, const char *path, const void *data,
                                          size_t len, cordon_fs_written *ret,
                                          cordon_fs_refusal *refusal, cordon_error *err);
CORDON_PUBLIC int cordon_session_fs_edit(cordon_session *s, const char *path,
                                         const char *old_text, size_t old_len,
                                         const char *new_text, size_t new_len,
                                         cordon_fs_written *ret, cordon_fs_refusal *refusal,
                                         cordon_error *err);
CORDON_PUBLIC int cordon_session_fs_stat(cordon_session *s, const char *path,
                                         cordon_fs_entry *ret, cordon_fs_refusal *refusal,
                                         cordon_error *err);
CORDON_PUBLIC int cordon_session_fs_list(cordon_session *s, const char *path,
                                         cordon_fs_entry **ret, size_t *ret_n,
                                         bool *ret_truncated, cordon_fs_refusal *refusal,
                                         cordon_error *err);

/* ---- Denial decoder (docs/design/errors.md; docs/explain.md)
 * ----------------------------------------- */

/* How a finished run ended. Exit status 125 alone proves nothing (a command may exit 125 by
 * itself): SANDBOX_BROKEN needs an "error" event or cordon's exact fatal line. */
typedef enum cordon_outcome {
        CORDON_OUTCOME_OK = 0,          /* "ok": exit status 0 (refusals, if any, still listed) */
        CORDON_OUTCOME_COMMAND_FAILED,  /* "command-failed": non-zero, no refusal observed */
        CORDON_OUTCOME_SANDBOX_DENIED,  /* "sandbox-denied": non-zero after observed refusals, or
                                         * killed by a limit (timeout, memory) */
        CORDON_OUTCOME_SANDBOX_BROKEN,  /* "sandbox-broken": cordon itself failed (fatal code) */
} cordon_outcome;

/* "ok", "command-failed", "sandbox-denied", "sandbox-broken"; "unknown" outside the set. */
CORDON_PUBLIC const char *cordon_outcome_to_string(cordon_outcome outcome);

/* One observed refusal with what would allow it. Identical refusals (same action, target, rule)
 * are folded into one entry with a count. Every string is one line without control characters;
 * all are owned by the explanation. */
typedef struct cordon_explained_violation {
        const char *action;   /* as observed: "file-create-name", "network-outbound", "syscall" */
        const char *target;   /* path, "host:port", syscall name; may be empty */
        const char *rule;     /* the rule that refused it (raw.rule), or "" */
        const char *syscall;  /* raw.syscall, or "" */
        uint64_t count;
        const char *summary;  /* "network example.com:443 (not in allowlist)" */
        const char *change;   /* the exact policy change that would allow it, e.g.
                               * "--allow-domain api.example.com:443", with shell quoting where
                               * needed; NULL when no policy change can (then `why` says which
                               * rule stands) */
        const char *why;      /* one or two sentences */
        const char *reason;   /* raw.reason: the refusing deny entry's reason, or "" */
} cordon_explained_violation;

/* The decoder's state and, after cordon_explanation_finish(), its verdict. Lifecycle:
 * cordon_explanation_new() → add_events / add_stderr / set_exit_status, in any order and in any
 * number of pieces → finish() → accessors, to_json, to_text → cordon_explanation_free(). Memory
 * stays bounded whatever the inputs' size. */
typedef struct cordon_explanation cordon_explanation;

/* Caller frees with cordon_explanation_free(). Returns 0 or -ENOMEM (CORDON_LAUNCH_FAILED). */
CORDON_PUBLIC int cordon_explanation_new(cordon_explanation **ret, cordon_error *err);
CORDON_PUBLIC void cordon_explanation_free(cordon_explanation *x);

/* Feeds bytes of an events stream (what cordon_run's on_event produced, or a `cordon run
 * --events` file), split anywhere. A "starting" event begins a new run and forgets the previous
 * one, so a stream holding several runs explains the last. Unknown event types and fields are
 * skipped (later versions add some). A line that is not a JSON object with a string "type", or
 * whose known fields have the wrong type, fails with -EBADMSG and CORDON_USAGE ("events line N:
 * ..."). */
CORDON_PUBLIC int cordon_explanation_add_events(cordon_explanation *x, const char *data,
                                                size_t len, cordon_error *err);
/* Feeds bytes of the run's standard error as the caller saw it (the command's and cordon's
 * own), split anywhere: the source of cordon's fatal line (only when no terminal event was fed)
 * and of inferred hints. Returns 0. */
CORDON_PUBLIC int cordon_explanation_add_stderr(cordon_explanation *x, const char *data,
                                                size_t len);
/* The status the run exited with as a shell reports it, 0-255. Returns 0 or -EINVAL. */
CORDON_PUBLIC int cordon_explanation_set_exit_status(cordon_explanation *x, int status);

/* Classifies what was fed. Returns 0; -EBADMSG (CORDON_USAGE) when the events end inside a
 * line; -ENODATA (CORDON_USAGE) when nothing tells how the run ended (no terminal event, no exit
 * status, no fatal line); -EINVAL (CORDON_USAGE) when the exit status contradicts the events'
 * exit event. Feeding after finish() fails with -EALREADY. */
CORDON_PUBLIC int cordon_explanation_finish(cordon_explanation *x, cordon_error *err);

/* Accessors, valid after a successful finish(). */
CORDON_PUBLIC cordon_outcome cordon_explanation_outcome(const cordon_explanation *x);
CORDON_PUBLIC size_t cordon_explanation_violation_count(const cordon_explanation *x);
/* NULL when i is out of range. */
CORDON_PUBLIC const cordon_explained_violation *
cordon_explanation_violation(const cordon_explanation *x, size_t i);

/* The verdict as one JSON object (schema in docs/explain.md; the same object `cordon run --json`
 * writes), or as text for people. Caller frees *ret. Fails with -EINVAL (CORDON_USAGE) before a
 * successful finish(), -ENOMEM (CORDON_LAUNCH_FAILED) out of memory. */
CORDON_PUBLIC int cordon_explanation_to_json(const cordon_explanation *x, char **ret,
                                             cordon_error *err);
CORDON_PUBLIC int cordon_explanation_to_text(const cordon_explanation *x, char **ret,
                                             cordon_error *err);

/* One call for whole buffers: events (may be NULL), exit_status (< 0: unknown), stderr (may be
 * NULL). On success *ret is finished; caller frees. Errors as above. */
CORDON_PUBLIC int cordon_explain(const char *events, size_t events_len, int exit_status,
                                 const char *stderr_text, size_t stderr_len,
                                 cordon_explanation **ret, cordon_error *err);

/* ---- Probe -------------------------------------------------------------------------------- */

typedef struct cordon_probe cordon_probe;

/* Probes the host once (user namespaces, Landlock ABI, seccomp user notification, KVM). */
CORDON_PUBLIC int cordon_probe_run(cordon_probe **ret, cordon_error *err);
CORDON_PUBLIC void cordon_probe_free(cordon_probe *probe);
/* What the probe found, as JSON (`cordon probe --json`) or as text. Caller frees *ret. */
CORDON_PUBLIC int cordon_probe_to_json(const cordon_probe *probe, char **ret, cordon_error *err);
CORDON_PUBLIC int cordon_probe_to_text(const cordon_probe *probe, char **ret, cordon_error *err);

/* ---- Settings files (docs/settings.md; docs/settings.md) ----------------------------------------
 * */

/* Layered settings, resolved once per call: managed (administrator) > approved escalation >
 * command line (the caller's own layer) > each --settings file (the last first) > user
 * (~/.config/cordon/settings.json) > project (<root>/.cordon/settings.json, the root being the
 * nearest of cwd and its ancestors that holds one, not above $HOME) > deployment default.
 * Scalars come from the highest layer that sets them; lists are unions. A file may be in cordon's
 * format or the Node sandbox runtime's (~/.srt-settings.json), told apart by its keys. The
 * project file may always tighten; its settings that loosen the sandbox are ignored and reported
 * (cordon_settings_ignored) unless its exact content is in the trust store
 * (cordon_settings_trust_project), and always when the managed settings forbid unsandboxed
 * commands or lock the domain list (docs/settings.md). */
typedef struct cordon_settings cordon_settings;

#define CORDON_SETTINGS_NO_USER (1u << 0)    /* skip ~/.config/cordon/settings.json */
#define CORDON_SETTINGS_NO_PROJECT (1u << 1) /* skip the project settings file */
#define CORDON_SETTINGS_NO_MANAGED (1u << 2) /* skip the managed settings file here; the
                                              * launch then applies it (cordon_run()) */
#define CORDON_SETTINGS_NO_TRUST (1u << 3)   /* never read the trust store: the project file's
                                              * loosening items are always ignored */

typedef struct cordon_settings_options {
        const char *cwd;          /* required, absolute: the workspace */
        const char *home;         /* required, absolute: the invoking user's home */
        const char *managed_path; /* NULL: /etc/cordon/managed-settings.json. A caller that lets
                                   * someone else choose this path lets them drop the admin's
                                   * rules: the CLI takes it from CORDON_MANAGED_SETTINGS only
                                   * (docs/settings.md). The launch of the resolved policy does
                                   * not read /etc/cordon/managed-settings.json over this one */
        const char *const *files; /* --settings FILEs, lowest precedence first (must exist) */
        size_t n_files;
        const cordon_policy *command_line;        /* may be NULL; copied */
        const cordon_policy *approved_escalation; /* may be NULL; copied */
        const cordon_policy *deployment_default;  /* NULL: cordon_policy_new_default(cwd, home) */
        unsigned flags;                           /* CORDON_SETTINGS_NO_* */
        const char *trust_path; /* NULL: <home>/.config/cordon/trusted-projects.json. Like
                                 * managed_path: whoever chooses it chooses which project files
                                 * may loosen the sandbox */
} cordon_settings_options;

/* Loads and resolves. Fails with CORDON_POLICY_INVALID ("file:line:col: key 'k': what; hint")
 * for a malformed file, a file that grants authority (or a managed file, whatever it says) but
 * that other users can modify, or a resolved mode danger-full-access that the settings forbid.
 * Caller frees *ret.
 * Unless resolved with CORDON_SETTINGS_NO_MANAGED, the resolved policy (cordon_settings_policy)
 * holds the managed settings, and no launch applies them again: neither to it, nor to a copy of
 * it, nor after the setters changed it, nor to cordon_policy_resolve()'s result when it is the
 * highest layer given (a layer over it could override what they set: that result gets them again
 * at launch). The resolver's caller enforces their switches itself
 * (cordon_settings_check_unconfined, as the CLI does): only it can tell an excludedCommands run
 * from any other unconfined one. */
CORDON_PUBLIC int cordon_settings_resolve(const cordon_settings_options *opts,
                                          cordon_settings **ret, cordon_error *err);
CORDON_PUBLIC void cordon_settings_free(cordon_settings *s);

/* The resolved policy; owned by `s`, valid until cordon_settings_free(). */
CORDON_PUBLIC const cordon_policy *cordon_settings_policy(const cordon_settings *s);
/* failIfUnavailable (default true: fail closed) and allowUnsandboxedCommands (default true: an
 * explicit --sandbox off is honoured), as resolved. */
CORDON_PUBLIC bool cordon_settings_fail_if_unavailable(const cordon_settings *s);
CORDON_PUBLIC bool cordon_settings_allow_unsandboxed(const cordon_settings *s);

/* A setting that was read but not applied: a loosening project setting under an admin mandate,
 * or a best-effort srt key cordon cannot honour. Strings are owned by the settings object. */
typedef struct cordon_settings_note {
        const char *layer;  /* "project", "user", "settings", "managed" */
        const char *file;
        const char *key;    /* "sandbox.egressAllowlist", "network.allowLocalBinding" */
        const char *value;  /* the item, or NULL for the whole key */
        unsigned line, column; /* of the key; 0 when unknown */
        const char *why;
} cordon_settings_note;

CORDON_PUBLIC size_t cordon_settings_n_ignored(const cordon_settings *s);
/* NULL when i is out of range. */
CORDON_PUBLIC const cordon_settings_note *cordon_settings_ignored(const cordon_settings *s,
                                                                  size_t i);

/* The project settings file the resolution read (absolute), or NULL; whether its exact content
 * is trusted (then its loosening items apply, unless a mandate forbids them). */
CORDON_PUBLIC const char *cordon_settings_project_file(const cordon_settings *s);
CORDON_PUBLIC bool cordon_settings_project_trusted(const cordon_settings *s);

/* The explicit trust step, for a tool the user runs outside any sandbox (`cordon settings
 * trust`): records the project file `s` read, by path and the SHA-256 of the bytes it parsed, in
 * the trust store (`trust_path`, NULL: <home>/.config/cordon/trusted-projects.json), written
 * atomically with mode 0600. A changed byte makes the file untrusted again. Inside a sandbox the
 * store is read-only and this fails. */
CORDON_PUBLIC int cordon_settings_trust_project(const cordon_settings *s, const char *trust_path,
                                                cordon_error *err);
/* Removes `project_file` (absolute) from the store: 1 removed, 0 it was not there, or -errno. */
CORDON_PUBLIC int cordon_settings_untrust_project(const char *home, const char *trust_path,
                                                  const char *project_file, cordon_error *err);
/* The store's entries with their state ("trusted", "changed", "missing"), as JSON (an array of
 * {path, sha256, state}) or text. Caller frees *ret. */
CORDON_PUBLIC int cordon_settings_trusted_list(const char *home, const char *trust_path,
                                               bool json, char **ret, cordon_error *err);

/* Whether an unconfined run (`what`: "--sandbox off", "--backend none") is allowed: 0, or
 * -EPERM with CORDON_POLICY_INVALID naming the file and key that forbid it. */
CORDON_PUBLIC int cordon_settings_check_unconfined(const cordon_settings *s, const char *what,
                                                   cordon_error *err);

/* The backend a run should ask for: `requested`, except that with failIfUnavailable false (and
 * unconfined runs allowed) an AUTO request on a host where `probe` finds no confining backend
 * becomes CORDON_BACKEND_NONE; *ret_why (may be NULL) then says why (owned by `s`). */
CORDON_PUBLIC cordon_backend cordon_settings_backend(const cordon_settings *s,
                                                     cordon_backend requested,
                                                     const cordon_probe *probe,
                                                     const char **ret_why);

/* An excludedCommands entry that matched (strings owned by the settings object). */
typedef struct cordon_excluded_match {
        const char *entry; /* its words joined by spaces */
        const char *layer;
        const char *file;
        unsigned line, column;
} cordon_excluded_match;

/* excludedCommands: a convenience, not a security boundary. Returns 1 when the whole argv equals
 * an entry word for word and may run outside the sandbox; 0 when it runs sandboxed as usual —
 * then *ret_refusal (may be NULL) is a static phrase when something made the line ineligible
 * (redirections, cd, $(...), backticks, ; && || | &, newlines, a shell or other command runner,
 * an executable inside a writable root), or NULL when no entry matched. `environ` (NULL: the
 * process's) is the command's environment: its PATH locates argv[0]. */
CORDON_PUBLIC int cordon_settings_match_excluded(const cordon_settings *s, char *const argv[],
                                                 char *const *environ,
                                                 cordon_excluded_match *ret,
                                                 const char **ret_refusal);

/* The resolved policy with the file and key each value came from, the switches, the excluded
 * commands and the ignored settings (`cordon policy show --explain`): as JSON or as text. Caller
 * frees *ret. */
CORDON_PUBLIC int cordon_settings_to_json(const cordon_settings *s, char **ret, cordon_error *err);
CORDON_PUBLIC int cordon_settings_to_text(const cordon_settings *s, char **ret, cordon_error *err);

/* Reads a settings file of either format and returns the equivalent cordon-format settings
 * document (JSON text, caller frees). Relative srt paths resolve against `cwd`, "~/" against
 * `home`. *ret_notes (may be NULL; caller frees; NULL when there is nothing to say) gets one
 * line per best-effort key left out and about paths resolved against `cwd`. */
CORDON_PUBLIC int cordon_settings_import(const char *path, const char *cwd, const char *home,
                                         char **ret, char **ret_notes, cordon_error *err);

/* The library's version, "MAJOR.MINOR.PATCH" (static storage). */
CORDON_PUBLIC const char *cordon_version(void);

#ifdef __cplusplus
}
#endif
#endif
