/* SPDX-License-Identifier: Apache-2.0 */
/* The one boundary where policy JSON (untrusted input) becomes a typed, validated cordon_policy
 * layer. Raw JSON never leaves this file. Every error names the file, line and column of the
 * offending key or value, what is wrong, and a hint; a file that cannot be read or parsed is an
 * error, never replaced by defaults; on any error the target policy is left unchanged. */
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <sys/stat.h>

#include "policy/policy-json-internal.h"
#include "policy/upstream-url.h"

/* ---- error reporting ------------------------------------------------------------------------ */

int policy_json_fail_errno(parse_ctx *c, int r) {
        if (r == -E2BIG)
                return jread_fail(&c->j, false, "split the policy or merge entries",
                                  "too many entries (at most %u)", POLICY_MAX_LIST);
        return cordon_set_error(c->j.err, CORDON_LAUNCH_FAILED, r, "%s: loading the policy: %s",
                                c->j.origin, strerror(-r));
}

/* ---- unknown keys: "did you mean" ----------------------------------------------------------- */

/* The longest field table (root_fields). */
#define FIELDS_MAX 32

static int fail_unknown_key(parse_ctx *c, const field *fields, size_t n) {
        const char *keys[FIELDS_MAX];
        for (size_t i = 0; i < n && i < FIELDS_MAX; i++)
                keys[i] = fields[i].key;
        return jread_unknown_key(&c->j, keys, n < FIELDS_MAX ? n : FIELDS_MAX);
}

int policy_json_fields(parse_ctx *c, json_t *obj, const field *fields, size_t n,
                       const char *example, void *target) {
        int r = jread_expect(&c->j, obj, json_is_object(obj), "an object", example);
        if (r < 0)
                return r;
        const char *key;
        json_t *v;
        json_object_foreach(obj, key, v) {
                const field *f = NULL;
                for (size_t i = 0; i < n && !f; i++)
                        if (strcmp(fields[i].key, key) == 0)
                                f = &fields[i];
                jread_push_key(&c->j, key);
                r = f ? f->parse(c, v, target) : fail_unknown_key(c, fields, n);
                jread_pop(&c->j);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* ---- scalar and list values ----------------------------------------------------------------- */

int policy_json_string(parse_ctx *c, json_t *v, const char *example,
                       const char *(*check)(const char *), string_adder add, const char *hint) {
        int r = jread_expect(&c->j, v, json_is_string(v), "a string", example);
        if (r < 0)
                return r;
        const char *s = json_string_value(v);
        const char *why = check(s);
        if (why) {
                char shown[160];
                return jread_fail(&c->j, false, hint, "'%s' %s",
                                  jread_shorten(s, shown, sizeof(shown)), why);
        }
        r = add(c->layer, s);
        return r < 0 ? policy_json_fail_errno(c, r) : 0;
}

int policy_json_array(parse_ctx *c, json_t *v, const char *example, size_t max, const char *fix,
                      int (*entry)(parse_ctx *c, json_t *e)) {
        int r = jread_expect(&c->j, v, json_is_array(v), "an array", example);
        if (r < 0)
                return r;
        if (json_array_size(v) > max)
                return jread_fail(&c->j, false, fix, "has %zu entries; at most %zu are allowed",
                                  json_array_size(v), max);
        size_t i;
        json_t *e;
        json_array_foreach(v, i, e) {
                jread_push_index(&c->j, i);
                r = entry(c, e);
                jread_pop(&c->j);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int parse_list_with(parse_ctx *c, json_t *v, const char *example,
                           const char *(*check)(const char *), string_adder add,
                           const char *hint) {
        int r = jread_expect(&c->j, v, json_is_array(v), "an array of strings", example);
        if (r < 0)
                return r;
        if (json_array_size(v) > POLICY_MAX_LIST)
                return jread_fail(&c->j, false, "split the list or use globs",
                                  "has %zu entries; at most %u are allowed", json_array_size(v),
                                  POLICY_MAX_LIST);
        size_t i;
        json_t *e;
        json_array_foreach(v, i, e) {
                jread_push_index(&c->j, i);
                r = policy_json_string(c, e, example, check, add, hint);
                jread_pop(&c->j);
                if (r < 0)
                        return r;
        }
        return 0;
}

#define PATH_HINT "use an absolute path without '..', e.g. \"/home/me/project\""

#define DEFINE_LIST(fn, adder, check, example, hint)                                           \
        static int fn(parse_ctx *c, json_t *v, void *target) {                                  \
                return parse_list_with(c, v, example, check, adder, hint);                      \
        }

DEFINE_LIST(parse_protected, cordon_policy_add_protected_path, policy_check_path,
            "[\"/home/me/repo\"]", PATH_HINT)
DEFINE_LIST(parse_runner_dirs, cordon_policy_add_runner_state_dir, policy_check_path,
            "[\"/home/me/.runner\"]", PATH_HINT)
DEFINE_LIST(parse_deny_read, cordon_policy_add_deny_read, policy_check_path,
            "[\"/home/me/.secrets\"]", PATH_HINT)
DEFINE_LIST(parse_deny_write, cordon_policy_add_deny_write, policy_check_path,
            "[\"/home/me/project/ci.yml\"]", PATH_HINT)
DEFINE_LIST(parse_exec_grant, policy_add_exec_grant_root, policy_check_path,
            "[\"/home/me/tools\"]", PATH_HINT)
DEFINE_LIST(parse_allow_read, policy_add_allow_read, policy_check_path,
            "[\"/home/me/reference\"]", PATH_HINT)
DEFINE_LIST(parse_unix_sockets, policy_add_unix_socket, policy_check_path,
            "[\"/run/user/1000/docker.sock\"]", PATH_HINT)
DEFINE_LIST(parse_deny_create, cordon_policy_add_deny_create_name, policy_check_name_glob,
            "[\".env\", \"*.pem\"]", "a file-name glob such as \"*.pem\" (no '/')")
DEFINE_LIST(parse_allow_create, policy_add_allow_create_name, policy_check_name_glob,
            "[\".env.test\"]", "a file-name glob such as \"*.example.pem\" (no '/')")
DEFINE_LIST(parse_allow_create_paths, policy_add_allow_create_path, policy_check_path,
            "[\"/home/me/project/tests/data/*.pem\"]", PATH_HINT)
DEFINE_LIST(parse_egress, cordon_policy_add_egress_allow, policy_check_host_pattern,
            "[\"*.example.com\", \"api.example.com:443\"]",
            "a host name, \"*.example.com\" or \"host:port\"")
DEFINE_LIST(parse_env_pass, cordon_policy_env_pass, policy_check_env_name, "[\"GITHUB_TOKEN\"]",
            "a variable name such as \"MY_VAR\"")
DEFINE_LIST(parse_env_scrub, cordon_policy_env_scrub, policy_check_env_glob, "[\"*_COOKIE\"]",
            "a name glob such as \"*_COOKIE\"")

#define ID_HINT "use letters, digits and punctuation such as - _ . : (no spaces or '/')"

/* null stands for "unset" wherever a scalar is optional, so `cordon policy show` output (which
 * prints unset scalars as null) loads back. */
static int parse_session_id(parse_ctx *c, json_t *v, void *target) {
        if (json_is_null(v))
                return 0;
        return policy_json_string(c, v, "\"sessionId\": \"s-123\"", policy_check_id,
                                 cordon_policy_set_session_id, ID_HINT);
}

static int parse_workspace_id(parse_ctx *c, json_t *v, void *target) {
        if (json_is_null(v))
                return 0;
        return policy_json_string(c, v, "\"workspaceId\": \"w-1\"", policy_check_id,
                                 policy_set_workspace_id, ID_HINT);
}

static int parse_agent_id(parse_ctx *c, json_t *v, void *target) {
        if (json_is_null(v))
                return 0;
        return policy_json_string(c, v, "\"agentId\": \"a-1\"", policy_check_id,
                                 policy_set_agent_id, ID_HINT);
}

static int parse_workdir(parse_ctx *c, json_t *v, void *target) {
        if (json_is_null(v)) /* the current directory */
                return 0;
        return policy_json_string(c, v, "\"guestWorkdir\": \"/home/me/project\"",
                                 policy_check_path, cordon_policy_set_workdir, PATH_HINT);
}

/* Never quoted in a message, unlike every other string: the URL may carry the upstream's
 * password, and policy errors end up in logs. The position says which value it is. */
static int parse_egress_upstream(parse_ctx *c, json_t *v, void *target) {
        if (json_is_null(v)) /* direct: the proxy dials what it allows */
                return 0;
        int r = jread_expect(&c->j, v, json_is_string(v), "a string",
                             "\"egressUpstream\": \"http://proxy.example:3128\"");
        if (r < 0)
                return r;
        policy_upstream u;
        const char *hint = NULL;
        const char *why = policy_upstream_parse(json_string_value(v), &u, &hint);
        policy_upstream_wipe(&u);
        if (why)
                return jread_fail(&c->j, false, hint, "the proxy URL %s", why);
        r = cordon_policy_set_egress_upstream(c->layer, json_string_value(v));
        return r < 0 ? policy_json_fail_errno(c, r) : 0;
}

static int parse_mode(parse_ctx *c, json_t *v, void *target) {
        int r = jread_expect(&c->j, v, json_is_string(v), "a string",
                             "\"mode\": \"workspace-write\"");
        if (r < 0)
                return r;
        cordon_mode m;
        if (cordon_mode_from_string(json_string_value(v), &m) < 0) {
                char shown[80];
                return jread_fail(&c->j, false,
                                  "use one of chat, workspace-write, review, plan, orchestrate, "
                                  "read-only, danger-full-access",
                                  "unknown mode '%s'",
                                  jread_shorten(json_string_value(v), shown, sizeof(shown)));
        }
        return cordon_policy_set_mode(c->layer, m);
}

static int parse_network(parse_ctx *c, json_t *v, void *target) {
        int r = jread_expect(&c->j, v, json_is_boolean(v), "a boolean",
                             "\"networkEnabled\": false");
        if (r < 0)
                return r;
        return cordon_policy_set_network_enabled(c->layer, json_is_true(v));
}

static int parse_block_reads(parse_ctx *c, json_t *v, void *target) {
        int r = jread_expect(&c->j, v, json_is_boolean(v), "a boolean",
                             "\"blockReadsOutsideWorkdirs\": true");
        return r < 0 ? r : policy_set_block_reads(c->layer, json_is_true(v));
}

/* ---- bindMounts ----------------------------------------------------------------------------- */

typedef struct bind_parse {
        const char *host, *guest;
        bool read_only;
} bind_parse;

int policy_json_checked(parse_ctx *c, json_t *v, const char **slot, const char *example,
                        const char *(*check)(const char *), const char *hint) {
        int r = jread_expect(&c->j, v, json_is_string(v), "a string", example);
        if (r < 0)
                return r;
        const char *why = check(json_string_value(v));
        char shown[160];
        if (why)
                return jread_fail(&c->j, false, hint, "'%s' %s",
                                  jread_shorten(json_string_value(v), shown, sizeof(shown)), why);
        *slot = json_string_value(v);
        return 0;
}

static int parse_bind_path(parse_ctx *c, json_t *v, const char **slot, const char *example) {
        return policy_json_checked(c, v, slot, example, policy_check_path, PATH_HINT);
}

static int parse_bind_host(parse_ctx *c, json_t *v, void *target) {
        bind_parse *b = target;
        return parse_bind_path(c, v, &b->host, "\"hostPath\": \"/home/me/project\"");
}

static int parse_bind_guest(parse_ctx *c, json_t *v, void *target) {
        bind_parse *b = target;
        return parse_bind_path(c, v, &b->guest, "\"guestPath\": \"/home/me/project\"");
}

static int parse_bind_ro(parse_ctx *c, json_t *v, void *target) {
        bind_parse *b = target;
        int r = jread_expect(&c->j, v, json_is_boolean(v), "a boolean", "\"readOnly\": true");
        b->read_only = json_is_true(v);
        return r;
}

static const field bind_fields[] = {
        { "hostPath", parse_bind_host, NULL },
        { "guestPath", parse_bind_guest, NULL },
        { "readOnly", parse_bind_ro, NULL },
};

static bool same_path(const char *a, const char *b) {
        _cleanup_free_ char *na = NULL, *nb = NULL;
        return path_normalize(a, &na) >= 0 && path_normalize(b, &nb) >= 0 && strcmp(na, nb) == 0;
}

static bool layer_has_bind(const cordon_policy *p, const char *host) {
        _cleanup_free_ char *n = NULL;
        if (path_normalize(host, &n) < 0)
                return false;
        for (size_t i = 0; i < p->n_binds; i++)
                if (strcmp(p->binds[i].host_path, n) == 0)
                        return true;
        return false;
}

static int parse_one_bind(parse_ctx *c, json_t *v) {
        static const char example[] = "{\"hostPath\": \"/home/me/project\", \"readOnly\": false}";
        bind_parse b = { 0 };
        int r = policy_json_fields(c, v, bind_fields, ELEMENTSOF(bind_fields), example, &b);
        if (r < 0)
                return r;
        if (!b.host)
                return jread_fail(&c->j, false, "add \"hostPath\": \"/absolute/path\"",
                                  "a bind mount needs 'hostPath'");
        if (b.guest && !same_path(b.host, b.guest)) {
                /* The native backend shares the host's path namespace
                 * (docs/design/architecture.md): a path the fs seam returns must be the path the
                 * command sees. */
                jread_push_key(&c->j, "guestPath");
                r = jread_fail(&c->j, false, "omit guestPath or set it to hostPath",
                               "must equal hostPath on the native backend");
                jread_pop(&c->j);
                return r;
        }
        if (layer_has_bind(c->layer, b.host)) {
                jread_push_key(&c->j, "hostPath");
                r = jread_fail(&c->j, false, "list each host path once",
                               "this hostPath is already bound");
                jread_pop(&c->j);
                return r;
        }
        r = cordon_policy_add_bind(c->layer, b.host, b.read_only);
        return r < 0 ? policy_json_fail_errno(c, r) : 0;
}

/* An array of at most POLICY_MAX_LIST objects, each handed to `each` with its index on the key
 * path (bindMounts, toolCaches.extra). `too_many` is the hint when the array is longer. */
static int parse_object_array(parse_ctx *c, json_t *v, const char *example, const char *too_many,
                              int (*each)(parse_ctx *c, json_t *e)) {
        int r = jread_expect(&c->j, v, json_is_array(v), "an array of objects", example);
        if (r < 0)
                return r;
        if (json_array_size(v) > POLICY_MAX_LIST)
                return jread_fail(&c->j, false, too_many, "has %zu entries; at most %u are allowed",
                                  json_array_size(v), POLICY_MAX_LIST);
        size_t i;
        json_t *e;
        json_array_foreach(v, i, e) {
                jread_push_index(&c->j, i);
                r = each(c, e);
                jread_pop(&c->j);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int parse_binds(parse_ctx *c, json_t *v, void *target) {
        return parse_object_array(c, v,
                                  "\"bindMounts\": [{\"hostPath\": \"/home/me/project\"}]",
                                  "bind a common parent instead", parse_one_bind);
}

/* ---- env -------------------------------------------------------------------------------------- */

static int parse_env_set_one(parse_ctx *c, const char *name, json_t *val) {
        const char *why = policy_check_env_name(name);
        if (why)
                return jread_fail(&c->j, true, "use a variable name such as \"MY_VAR\"",
                                  "variable name %s", why);
        int r = jread_expect(&c->j, val, json_is_string(val), "a string",
                             "\"LANG\": \"C.UTF-8\"");
        if (r < 0)
                return r;
        if ((why = policy_check_env_value(json_string_value(val))))
                return jread_fail(&c->j, false, "shorten the value", "value %s", why);
        r = cordon_policy_env_set(c->layer, name, json_string_value(val));
        return r < 0 ? policy_json_fail_errno(c, r) : 0;
}

static int parse_env_set(parse_ctx *c, json_t *v, void *target) {
        int r = jread_expect(&c->j, v, json_is_object(v), "an object",
                             "\"set\": {\"LANG\": \"C.UTF-8\"}");
        if (r < 0)
                return r;
        if (json_object_size(v) > POLICY_MAX_LIST)
                return jread_fail(&c->j, false, "set fewer variables",
                                  "has %zu entries; at most %u", json_object_size(v),
                                  POLICY_MAX_LIST);
        const char *name;
        json_t *val;
        json_object_foreach(v, name, val) {
                jread_push_key(&c->j, name);
                r = parse_env_set_one(c, name, val);
                jread_pop(&c->j);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* ---- hosts ---------------------------------------------------------------------------------- */

static int parse_host_one(parse_ctx *c, const char *name, json_t *val) {
        const char *why = policy_check_host_name(name);
        if (why)
                return jread_fail(&c->j, true, "use a host name such as \"dev.test\"",
                                  "host name %s", why);
        int r = jread_expect(&c->j, val, json_is_string(val), "a string",
                             "\"dev.test\": \"127.0.0.1\"");
        if (r < 0)
                return r;
        if ((why = policy_check_ip_address(json_string_value(val))))
                return jread_fail(&c->j, false, "write an address such as \"127.0.0.1\" or \"::1\"",
                                  "address '%s' %s", json_string_value(val), why);
        r = cordon_policy_set_host(c->layer, name, json_string_value(val));
        return r < 0 ? policy_json_fail_errno(c, r) : 0;
}

static int parse_hosts(parse_ctx *c, json_t *v, void *target) {
        int r = jread_expect(&c->j, v, json_is_object(v), "an object",
                             "\"hosts\": {\"dev.test\": \"127.0.0.1\"}");
        if (r < 0)
                return r;
        if (json_object_size(v) > POLICY_MAX_LIST)
                return jread_fail(&c->j, false, "map fewer names", "has %zu entries; at most %u",
                                  json_object_size(v), POLICY_MAX_LIST);
        const char *name;
        json_t *val;
        json_object_foreach(v, name, val) {
                jread_push_key(&c->j, name);
                r = parse_host_one(c, name, val);
                jread_pop(&c->j);
                if (r < 0)
                        return r;
        }
        return 0;
}

static const field env_fields[] = {
        { "pass", parse_env_pass, NULL },
        { "set", parse_env_set, NULL },
        { "scrub", parse_env_scrub, NULL },
};

static int parse_env(parse_ctx *c, json_t *v, void *target) {
        return policy_json_fields(c, v, env_fields, ELEMENTSOF(env_fields),
                            "\"env\": {\"pass\": [], \"set\": {}, \"scrub\": []}", NULL);
}

/* ---- toolCaches ------------------------------------------------------------------------------ */

#define TOOL_CACHES_EXAMPLE                                                                     \
        "\"toolCaches\": {\"enabled\": true, \"extra\": [{\"name\": \"sbt\", \"env\": "           \
        "\"COURSIER_CACHE\"}]}"

typedef struct tool_cache_parse {
        const char *name, *env;
} tool_cache_parse;

static int parse_cache_string(parse_ctx *c, json_t *v, const char **slot, const char *example,
                              const char *(*check)(const char *), const char *hint) {
        int r = jread_expect(&c->j, v, json_is_string(v), "a string", example);
        if (r < 0)
                return r;
        const char *why = check(json_string_value(v));
        char shown[80];
        if (why)
                return jread_fail(&c->j, false, hint, "'%s' %s",
                                  jread_shorten(json_string_value(v), shown, sizeof(shown)), why);
        *slot = json_string_value(v);
        return 0;
}

static int parse_cache_name(parse_ctx *c, json_t *v, void *target) {
        tool_cache_parse *t = target;
        return parse_cache_string(c, v, &t->name, "\"name\": \"sbt\"",
                                  policy_check_tool_cache_name,
                                  "a directory name of your own such as \"sbt\" (built-in "
                                  "tools need no entry)");
}

static int parse_cache_env(parse_ctx *c, json_t *v, void *target) {
        tool_cache_parse *t = target;
        return parse_cache_string(c, v, &t->env, "\"env\": \"COURSIER_CACHE\"",
                                  policy_check_tool_cache_env,
                                  "the variable the tool reads its cache directory from");
}

static const field tool_cache_fields[] = {
        { "name", parse_cache_name, NULL },
        { "env", parse_cache_env, NULL },
};

static int parse_one_tool_cache(parse_ctx *c, json_t *v) {
        tool_cache_parse t = { 0 };
        int r = policy_json_fields(c, v, tool_cache_fields, ELEMENTSOF(tool_cache_fields),
                             "{\"name\": \"sbt\", \"env\": \"COURSIER_CACHE\"}", &t);
        if (r < 0)
                return r;
        if (!t.name || !t.env)
                return jread_fail(&c->j, false, "write {\"name\": \"sbt\", \"env\": \"VAR\"}",
                                  "a tool cache needs '%s'", t.name ? "env" : "name");
        for (size_t i = 0; i < c->layer->n_tool_caches; i++)
                if (strcmp(c->layer->tool_caches[i].name, t.name) == 0 ||
                    strcmp(c->layer->tool_caches[i].env, t.env) == 0)
                        return jread_fail(&c->j, false, "list each tool and variable once",
                                          "this %s is listed already",
                                          strcmp(c->layer->tool_caches[i].name, t.name) == 0
                                                  ? "name" : "env");
        r = policy_add_tool_cache(c->layer, t.name, t.env);
        return r < 0 ? policy_json_fail_errno(c, r) : 0;
}

static int parse_cache_extra(parse_ctx *c, json_t *v, void *target) {
        return parse_object_array(c, v,
                                  "\"extra\": [{\"name\": \"sbt\", \"env\": \"COURSIER_CACHE\"}]",
                                  "list fewer tools", parse_one_tool_cache);
}

static int parse_cache_enabled(parse_ctx *c, json_t *v, void *target) {
        int r = jread_expect(&c->j, v, json_is_boolean(v), "a boolean", "\"enabled\": false");
        return r < 0 ? r : policy_set_tool_caches(c->layer, json_is_true(v));
}

static const field tool_caches_fields[] = {
        { "enabled", parse_cache_enabled, NULL },
        { "extra", parse_cache_extra, NULL },
};

/* true / false, or an object with "enabled" and "extra". */
static int parse_tool_caches(parse_ctx *c, json_t *v, void *target) {
        if (json_is_boolean(v))
                return policy_set_tool_caches(c->layer, json_is_true(v));
        if (!json_is_object(v))
                return jread_fail(&c->j, false, "write true, false or " TOOL_CACHES_EXAMPLE,
                                  "expected a boolean or an object, got %s", jread_type_name(v));
        return policy_json_fields(c, v, tool_caches_fields, ELEMENTSOF(tool_caches_fields),
                            TOOL_CACHES_EXAMPLE, NULL);
}

/* ---- microvm -------------------------------------------------------------------------------- */

static int parse_microvm_accel(parse_ctx *c, json_t *v, void *target) {
        static const char *const known[] = { "kvm", "tcg" };
        int r = jread_expect(&c->j, v, json_is_string(v), "a string",
                             "\"microvm\": {\"accel\": \"tcg\"}");
        if (r >= 0)
                r = jread_check_enum(&c->j, json_string_value(v), known, ELEMENTSOF(known),
                                     "an accelerator (kvm, tcg)");
        return r < 0 ? r : cordon_policy_set_microvm_accel(c->layer, json_string_value(v));
}

static const field microvm_fields[] = {
        { "accel", parse_microvm_accel, NULL },
};

static int parse_microvm(parse_ctx *c, json_t *v, void *target) {
        return policy_json_fields(c, v, microvm_fields, ELEMENTSOF(microvm_fields),
                                  "\"microvm\": {\"accel\": \"tcg\"}", NULL);
}

/* ---- the document --------------------------------------------------------------------------- */

/* Every policy key (docs/policy.md). */
static const field root_fields[] = {
        { "sessionId", parse_session_id, NULL },
        { "workspaceId", parse_workspace_id, NULL },
        { "agentId", parse_agent_id, NULL },
        { "bindMounts", parse_binds, NULL },
        { "mode", parse_mode, NULL },
        { "protectedPaths", parse_protected, NULL },
        { "runnerStateDirs", parse_runner_dirs, NULL },
        { "denyRead", parse_deny_read, NULL },
        { "denyWrite", parse_deny_write, NULL },
        { "denyCreateNames", parse_deny_create, NULL },
        { "allowCreateNames", parse_allow_create, NULL },
        { "allowCreatePaths", parse_allow_create_paths, NULL },
        { "execGrantRoots", parse_exec_grant, NULL },
        { "blockReadsOutsideWorkdirs", parse_block_reads, NULL },
        { "allowRead", parse_allow_read, NULL },
        { "commandPolicy", policy_json_command_policy, NULL },
        { "networkEnabled", parse_network, NULL },
        { "egressAllowlist", parse_egress, NULL },
        { "egressDenylist", policy_json_egress_deny, NULL },
        { "egressUpstream", parse_egress_upstream, NULL },
        { "egressRules", policy_json_egress_rules, NULL },
        { "tls", policy_json_tls, NULL },
        { "gitPush", policy_json_git_push, NULL },
        { "credentials", policy_json_credentials, NULL },
        { "egressMode", policy_json_egress_mode, NULL },
        { "egressAskTimeout", policy_json_egress_ask_timeout, NULL },
        { "hosts", parse_hosts, NULL },
        { "allowUnixSockets", parse_unix_sockets, NULL },
        { "guestWorkdir", parse_workdir, NULL },
        { "env", parse_env, NULL },
        { "limits", policy_json_limits, NULL },
        { "toolCaches", parse_tool_caches, NULL },
        { "microvm", parse_microvm, NULL },
};

/* Parses `text` into the fresh layer c->layer. */
static int parse_document(parse_ctx *c) {
        json_t *root = NULL;
        int r = jread_parse(&c->j, "a policy needs at most 3", &root);
        if (r < 0)
                return r;
        r = json_is_object(root)
                    ? policy_json_fields(c, root, root_fields, ELEMENTSOF(root_fields), "{}", NULL)
                    : jread_fail(&c->j, false, "write the policy as { \"key\": value, ... }",
                                 "the policy must be a JSON object, not %s",
                                 jread_type_name(root));
        json_decref(root);
        return r;
}

/* The settings loader (src/settings/) embeds policy keys in a larger document, e.g. the member
 * "sandbox" of a settings file: parse that member with the same rules and messages, its key path
 * ("sandbox.denyRead[0]") and position taken from the whole document. */
int policy_parse_json_member(cordon_policy *layer, void *value, const char *origin,
                             const char *text, size_t len, const char *const *prefix,
                             size_t n_prefix, cordon_error *err) {
        if (!layer || !value || !text || n_prefix > 4)
                return cordon_set_error(err, CORDON_POLICY_INVALID, EINVAL,
                                        "%s: no policy member to parse", origin ? origin : "?");
        parse_ctx c = { .j = { .origin = origin ? origin : "<string>", .text = text, .len = len,
                               .err = err },
                        .layer = layer };
        for (size_t i = 0; i < n_prefix; i++)
                jread_push_key(&c.j, prefix[i]);
        json_t *v = value;
        if (!json_is_object(v))
                return jread_fail(&c.j, false,
                                  "write the policy keys as an object, e.g. {\"denyRead\": []}",
                                  "expected an object, got %s", jread_type_name(v));
        return policy_json_fields(&c, v, root_fields, ELEMENTSOF(root_fields), "{}", NULL);
}

static void policy_freep(cordon_policy **p) {
        cordon_policy_free(*p);
}

int cordon_policy_load_string(cordon_policy *policy, const char *json, size_t len,
                              const char *origin, cordon_error *err) {
        if (!origin)
                origin = "<string>";
        if (!policy || !json)
                return cordon_set_error(err, CORDON_POLICY_INVALID, EINVAL,
                                        "%s: no policy or no text to load", origin);
        if (len > POLICY_MAX_FILE)
                return cordon_set_error(err, CORDON_POLICY_INVALID, EFBIG,
                                        "%s: the policy is %zu bytes; at most %u are allowed",
                                        origin, len, POLICY_MAX_FILE);
        _cleanup_(policy_freep) cordon_policy *layer = policy_new();
        if (!layer)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, ENOMEM, "out of memory");
        parse_ctx c = { .j = { .origin = origin, .text = json, .len = len, .err = err },
                        .layer = layer };
        int r = parse_document(&c);
        if (r < 0)
                return r;
        /* Merge into a scratch copy and swap, so a failure leaves `policy` untouched. */
        _cleanup_(policy_freep) cordon_policy *next = policy_dup(policy);
        if (!next)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, ENOMEM, "out of memory");
        r = policy_merge(next, layer);
        if (r < 0)
                return cordon_set_error(err, r == -E2BIG ? CORDON_POLICY_INVALID
                                                         : CORDON_LAUNCH_FAILED,
                                        r, "%s: merging the policy: %s", origin, strerror(-r));
        policy_swap(policy, next);
        return 0;
}

/* Reads a policy file: a regular file, at most POLICY_MAX_FILE bytes, not writable by other
 * users. */
static int read_policy_file(const char *path, char **ret, size_t *ret_len, cordon_error *err) {
        /* O_NONBLOCK: a FIFO planted at the path must not hang us; it is refused below. */
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return cordon_set_error(err, CORDON_POLICY_INVALID, errno,
                                        "%s: cannot open the policy file: %s; check the path",
                                        path, strerror(errno));
        struct stat st;
        if (fstat(fd, &st) < 0)
                return cordon_set_error(err, CORDON_POLICY_INVALID, errno, "%s: fstat: %s",
                                        path, strerror(errno));
        if (!S_ISREG(st.st_mode))
                return cordon_set_error(err, CORDON_POLICY_INVALID, EINVAL,
                                        "%s: not a regular file; pass a policy file", path);
        /* Like doas.conf: a policy another user can edit lets that user widen this sandbox. */
        if (st.st_mode & S_IWOTH)
                return cordon_set_error(err, CORDON_POLICY_INVALID, EPERM,
                                        "%s: the policy file is world-writable; run chmod o-w "
                                        "on it",
                                        path);
        if (st.st_uid != geteuid() && st.st_uid != 0)
                return cordon_set_error(err, CORDON_POLICY_INVALID, EPERM,
                                        "%s: the policy file belongs to uid %u, not to you or "
                                        "root; copy it to a file you own",
                                        path, (unsigned) st.st_uid);
        if (st.st_size > (off_t) POLICY_MAX_FILE)
                return cordon_set_error(err, CORDON_POLICY_INVALID, EFBIG,
                                        "%s: the policy is %lld bytes; at most %u are allowed",
                                        path, (long long) st.st_size, POLICY_MAX_FILE);
        int r = read_fd_bounded(fd, POLICY_MAX_FILE, ret, ret_len);
        if (r == -EFBIG) /* it grew after the fstat() */
                return cordon_set_error(err, CORDON_POLICY_INVALID, EFBIG,
                                        "%s: the policy is larger than %u bytes", path,
                                        POLICY_MAX_FILE);
        if (r < 0)
                return cordon_set_error(err, r == -ENOMEM ? CORDON_LAUNCH_FAILED
                                                          : CORDON_POLICY_INVALID,
                                        r, "%s: cannot read the policy file: %s", path,
                                        strerror(-r));
        return 0;
}

int cordon_policy_load_file(cordon_policy *policy, const char *path, cordon_error *err) {
        if (!policy || !path)
                return cordon_set_error(err, CORDON_POLICY_INVALID, EINVAL,
                                        "no policy or no file name given");
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;
        int r = read_policy_file(path, &buf, &len, err);
        if (r < 0)
                return r;
        return cordon_policy_load_string(policy, buf, len, path, err);
}
