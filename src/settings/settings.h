/* SPDX-License-Identifier: Apache-2.0 */
/* Settings files (docs/settings.md, docs/settings.md): layered JSON files that carry a policy layer
 * ("sandbox") plus the switches around it (failIfUnavailable, allowUnsandboxedCommands,
 * excludedCommands, lockDomains), in cordon's format or in the Node sandbox runtime's
 * (~/.srt-settings.json), which is translated. This header is internal to libcordon; the public
 * face is cordon_settings_* in include/cordon/cordon.h. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "cordon/cordon.h"
#include "policy/json-pos.h"
#include "policy/policy.h"
#include "util/util.h"

/* In ascending precedence: a layer overrides the scalars of every layer before it. */
typedef enum settings_layer_kind {
        SETTINGS_LAYER_DEFAULT = 0,   /* the deployment default (built in) */
        SETTINGS_LAYER_BUILTIN,       /* cordon's own additions: settings files are protected */
        SETTINGS_LAYER_PROJECT,       /* <project root>/.cordon/settings.json */
        SETTINGS_LAYER_USER,          /* ~/.config/cordon/settings.json */
        SETTINGS_LAYER_FILE,          /* --settings FILE */
        SETTINGS_LAYER_COMMAND_LINE,  /* the caller's own layer (CLI flags) */
        SETTINGS_LAYER_ESCALATION,    /* an approved escalation */
        SETTINGS_LAYER_MANAGED,       /* the administrator's managed settings */
        _SETTINGS_LAYER_MAX,
} settings_layer_kind;

/* "default", "built-in", "project", "user", "settings", "command line", "escalation",
 * "managed". */
const char *settings_layer_name(settings_layer_kind kind);
/* For messages: "project settings", "--settings file", "managed settings", ... */
const char *settings_layer_label(settings_layer_kind kind);

typedef enum settings_format {
        SETTINGS_FORMAT_CORDON = 0,
        SETTINGS_FORMAT_SRT,
} settings_format;

#define SETTINGS_PROJECT_DIR ".cordon"
#define SETTINGS_PROJECT_FILE ".cordon/settings.json"
#define SETTINGS_USER_DIR ".config/cordon"
#define SETTINGS_USER_FILE ".config/cordon/settings.json"
#define SETTINGS_MANAGED_FILE "/etc/cordon/managed-settings.json"

/* A boolean switch a file may set; `key` is static ("allowUnsandboxedCommands"). */
typedef struct settings_switch {
        bool set;
        bool value;
        const char *key;
        json_pos pos; /* 0:0 when unknown */
} settings_switch;

/* One excludedCommands entry. */
typedef struct settings_entry {
        char **words; /* NULL-terminated */
        char *text;   /* the words joined by spaces, for messages */
        size_t index; /* in the file's excludedCommands array */
        json_pos pos;
} settings_entry;

/* Something a file asked for that is not applied: a best-effort srt key cordon cannot honour,
 * or a loosening setting ignored under an admin mandate. */
typedef struct settings_note {
        char *key;   /* "network.allowLocalBinding", "sandbox.egressAllowlist" */
        char *value; /* the item, or NULL for the whole key */
        char *why;
        json_pos pos;
} settings_note;

/* Where a translated value came from (srt files): the srt key for a policy field's item. */
typedef struct settings_origin {
        int field;  /* settings_field */
        char *item; /* NULL: the field's scalar value */
        char *key;  /* "filesystem.allowWrite" */
} settings_origin;

typedef struct settings_file {
        settings_layer_kind kind;
        settings_format format;
        char *origin;              /* the path (or name) in messages */
        char *text;                /* the document, kept to find positions for --explain */
        size_t len;
        cordon_policy *layer;      /* the policy keys ("sandbox", or the srt translation) */
        settings_switch fail_if_unavailable, allow_unsandboxed, lock_domains;
        settings_entry *excluded;
        size_t n_excluded;
        settings_note *notes;      /* best-effort keys not honoured */
        size_t n_notes;
        settings_origin *origins;  /* srt only */
        size_t n_origins;
        bool used_cwd;             /* srt: a relative path was resolved against cwd */
        bool have_stat;            /* a file on disk: st and dir_st describe it */
        struct stat st, dir_st;
} settings_file;

/* Parses a settings document of either format (told apart by its top-level keys). `cwd` and
 * `home` (absolute) resolve the srt format's relative and "~/" paths. Returns 0 or -errno with
 * `err` set (POLICY_INVALID with "origin:line:col: key 'k': what; hint"). */
int settings_file_parse(settings_layer_kind kind, const char *origin, const char *text,
                        size_t len, const char *cwd, const char *home, settings_file **ret,
                        cordon_error *err);
/* Reads and parses `path`. When `optional`, a missing file (or missing directory) is no error:
 * *ret is NULL. Refuses what is not a regular file, and, with `check_owner` and when the file
 * grants authority (settings_file_grants), a file or directory other users can modify. */
int settings_file_load(settings_layer_kind kind, const char *path, bool optional,
                       bool check_owner, const char *cwd, const char *home, settings_file **ret,
                       cordon_error *err);
void settings_file_free(settings_file *f);

/* Adds a note / origin to a file. Return 0 or -ENOMEM. */
int settings_file_note(settings_file *f, const char *key, const char *value, const char *why,
                       json_pos pos);
int settings_file_origin(settings_file *f, int field, const char *item, const char *key);

/* The key in `f` that produced `item` of `field` ("sandbox.denyRead", "filesystem.allowWrite"),
 * written to buf. */
void settings_file_key(const settings_file *f, int field, const char *item, char *buf,
                       size_t size);
/* The position of a dotted key ("sandbox.env.pass") in f's text; false when unknown. */
bool settings_file_key_pos(const settings_file *f, const char *key, json_pos *ret);

/* Where a switch was set, for messages: "managed settings /etc/cordon/managed-settings.json:3:5
 * (allowUnsandboxedCommands: false)" (settings-resolve.c). */
void settings_switch_where(settings_layer_kind kind, const char *origin,
                           const settings_switch *sw, char *buf, size_t size);
/* Refuses an unconfined run (`what`: "--sandbox off", "backend none", ...) that the switch
 * described by `where` forbids: POLICY_INVALID, EPERM. Returns -EPERM. */
int settings_refuse_unconfined(const char *what, const char *where, cordon_error *err);

/* ---- the managed settings at a launch (settings-managed.c) -------------------------------------- */

/* Tests only: the managed settings file a launch reads instead of SETTINGS_MANAGED_FILE (NULL:
 * that one). Set by the white-box test programs, which link the layers themselves
 * (tests/linux/test-managed.c); nothing in src/ sets it, and libcordon.so does not export it
 * (src/libcordon.sym: everything not listed is local). No environment variable, file, flag or
 * option reaches it, so nothing a sandboxed command can write or set points a later launch at a
 * file of its choosing. cordon_settings_resolve never reads it: its caller names the file
 * (cordon_settings_options.managed_path). */
extern const char *settings_managed_test_path;

/* The administrator's managed settings applied at a launch (cordon_run, cordon_spawn,
 * cordon_session_launch) over the caller's `policy`, with the precedence the resolver gives them
 * (over every other layer), unless the policy already holds them (managed_applied). The file is
 * read with the resolver's loader and ownership check; a missing file is nothing. `cwd` and
 * `home` (absolute) resolve an srt-format file's relative and "~/" paths, as the resolver does.
 * With allowUnsandboxedCommands false a `backend` CORDON_BACKEND_NONE or a resulting mode
 * danger-full-access is refused (POLICY_INVALID, EPERM), as cordon_settings_check_unconfined
 * refuses it for the CLI. *ret: NULL when there is nothing to apply (use `policy`), else a new
 * policy with them applied, managed_applied set (caller frees). Returns 0 or -errno with `err`
 * set; an unreadable, invalid or foreign-writable file fails the launch (POLICY_INVALID). */
int settings_managed_apply(const cordon_policy *policy, const char *cwd, const char *home,
                           cordon_backend backend, cordon_policy **ret, cordon_error *err);

/* ---- the policy fields, as data (settings-fields.c) ------------------------------------------ */

typedef enum settings_field {
        SF_MODE = 0,
        SF_NETWORK,
        SF_SESSION_ID,
        SF_WORKSPACE_ID,
        SF_AGENT_ID,
        SF_WORKDIR,
        SF_TIMEOUT,
        SF_MEMORY,
        SF_PIDS,
        SF_CPU,
        SF_TMP_SIZE,
        SF_SHM_SIZE,
        SF_WILDCARD_NAMES,
        SF_EGRESS_UPSTREAM,
        SF_EGRESS_MODE,
        SF_EGRESS_ASK_TIMEOUT,
        SF_BINDS,
        SF_HOSTS,
        SF_ENV_SET,
        SF_PROTECTED,
        SF_RUNNER_STATE,
        SF_DENY_READ,
        SF_DENY_WRITE,
        SF_DENY_CREATE,
        SF_EXEC_GRANT,
        SF_EGRESS_ALLOW,
        SF_EGRESS_DENY,
        SF_UNIX_SOCKETS,
        SF_ENV_PASS,
        SF_ENV_SCRUB,
        SF_EGRESS_RULES,     /* egressRules: items are the rules (their host) */
        SF_TLS_PASSTHROUGH,  /* tls.passthrough */
        SF_TLS_UPSTREAM_CA,  /* tls.upstreamCa */
        SF_GIT_PUSH,         /* gitPush: item 0 the key itself, then its allow entries (repo) */
        SF_BLOCK_READS,
        SF_ALLOW_READ,
        SF_CREDENTIALS,      /* credentials: items are the entries (their env) */
        _SF_MAX,
} settings_field;

/* The field's key in the policy schema: "mode", "limits.timeout", "env.pass". */
const char *settings_field_key(settings_field f);
/* The list behind a plain string-list field, or NULL for other fields. */
const strv *settings_field_strv(const cordon_policy *p, settings_field f);
/* Whether the field is set in `p` (a scalar set, a list non-empty). */
bool settings_field_is_set(const cordon_policy *p, settings_field f);
/* Item i of a list field as text (binds: the host path; hosts, env.set: the name). NULL past the
 * end. Scalars: item 0 is the value as text in `buf` (egressUpstream: the URL with its password
 * as "****", the only form that may be shown). */
const char *settings_field_item(const cordon_policy *p, settings_field f, size_t i, char *buf,
                                size_t size);

/* Why item i of field f in `p` loosens the sandbox (a static phrase), or NULL when it does not:
 * writable paths, domains, host overrides, an upstream proxy, sockets, network on,
 * danger-full-access, passing a secret-looking variable. */
const char *settings_field_loosens(const cordon_policy *p, settings_field f, size_t i);

/* A copy of `src` without the loosening items; each one dropped is reported to `drop(userdata,
 * field, item text, why)`. Returns 0 or -ENOMEM. */
typedef int (*settings_drop_fn)(void *userdata, settings_field f, const char *item,
                                const char *why);
int settings_layer_filter(const cordon_policy *src, settings_drop_fn drop, void *userdata,
                          cordon_policy **ret);

/* True when the file asks for something that widens the sandbox (a loosening policy item, an
 * excludedCommands entry, allowUnsandboxedCommands true, failIfUnavailable false); `what` gets
 * the key that does ("sandbox.bindMounts", "excludedCommands", "filesystem.allowWrite"). */
bool settings_file_grants(const settings_file *f, char *what, size_t size);

/* NULL when `s` looks like a host pattern, else what is wrong with it ("has a scheme ('://')")
 * and, in *hint, how to write it. The policy's own check (policy_check_host_pattern) follows. */
const char *settings_check_domain(const char *s, const char **hint);

/* ---- formats ---------------------------------------------------------------------------------- */

typedef struct jread jread;
/* The srt translator (settings-srt.c): `root` is the parsed document. */
int settings_srt_parse(settings_file *f, jread *c, void *root, const char *cwd, const char *home);
/* credentialBrokers (settings-brokers.c): managed files only, into f->layer's brokers; v is a
 * json_t *. */
int settings_parse_brokers(jread *c, void *v, settings_file *f);
/* True when a top-level key belongs to the srt format. */
bool settings_srt_key(const char *key);

/* ---- output (settings-dump.c) ------------------------------------------------------------------ */

/* The equivalent cordon-format settings document for `f` (JSON text, caller frees). */
int settings_file_to_cordon_json(const settings_file *f, char **ret);
