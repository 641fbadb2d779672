/* SPDX-License-Identifier: Apache-2.0 */
/* A policy layer printed in the policy-file schema (docs/policy.md), for `cordon policy show`, and
 * as a layer document that loads back into an equal layer (policy_layer_to_json). The printed
 * form never holds a secret: env.set values are "<redacted>", the egressUpstream password
 * "****". */
#include <jansson.h>

#include "policy/policy.h"

/* json_object_set_new() steals the value even on failure, so one check per object suffices. */
static bool put(json_t *obj, const char *key, json_t *value) {
        return value && json_object_set_new(obj, key, value) == 0;
}

static json_t *string_or_null(const char *s) {
        return s ? json_string(s) : json_null();
}

static json_t *strv_to_json(const strv *s) {
        json_t *a = json_array();
        for (size_t i = 0; a && i < s->n; i++)
                if (json_array_append_new(a, json_string(s->v[i])) < 0) {
                        json_decref(a);
                        return NULL;
                }
        return a;
}

/* egressDenylist: each entry as written, an object where it has a reason (loads back). */
static json_t *deny_to_json(const cordon_policy *p) {
        json_t *a = json_array();
        for (size_t i = 0; a && i < p->egress_denylist.n; i++) {
                const char *pat = p->egress_denylist.v[i], *why = policy_deny_reason(p, pat);
                json_t *e = why ? json_pack("{s:s,s:s}", "host", pat, "reason", why)
                                : json_string(pat);
                if (json_array_append_new(a, e) < 0) {
                        json_decref(a);
                        return NULL;
                }
        }
        return a;
}

/* egressRules and tls (policy-rules.c); `always`: printed even when empty (policy show). */
static bool put_req(json_t *o, const cordon_policy *p, bool always) {
        bool failed = false;
        json_t *rules = policy_req_rules_json(&p->req, &failed);
        json_t *tls = failed ? NULL : policy_req_tls_json(&p->req, &failed);
        json_t *git = failed ? NULL : policy_git_push_json(&p->req.git_push, &failed);
        json_t *creds = failed ? NULL : policy_req_creds_json(&p->req, &failed);
        if (!failed && always && !rules)
                rules = json_array();
        if (!failed && always && !creds)
                creds = json_array();
        if (!failed && always && !tls)
                tls = json_pack("{s:[], s:[]}", "passthrough", "upstreamCa");
        bool ok = !failed && (!rules || put(o, "egressRules", rules)) &&
                  (!tls || put(o, "tls", tls)) && (!git || put(o, "gitPush", git)) &&
                  (!creds || put(o, "credentials", creds));
        if (!ok && failed) {
                json_decref(rules);
                json_decref(tls);
                json_decref(git);
                json_decref(creds);
        }
        return ok;
}

static json_t *binds_to_json(const cordon_policy *p) {
        json_t *a = json_array();
        for (size_t i = 0; a && i < p->n_binds; i++) {
                json_t *b = json_object();
                bool ok = b && put(b, "hostPath", json_string(p->binds[i].host_path)) &&
                          put(b, "guestPath", json_string(p->binds[i].guest_path)) &&
                          put(b, "readOnly", json_boolean(p->binds[i].read_only));
                if (!ok)
                        json_decref(b);
                /* json_array_append_new() steals `b` even when it fails. */
                if (!ok || json_array_append_new(a, b) < 0) {
                        json_decref(a);
                        return NULL;
                }
        }
        return a;
}

static json_t *env_to_json(const cordon_policy *p) {
        json_t *env = json_object(), *set = json_object();
        bool ok = env && set;
        /* Values are never printed: a policy may carry a credential on purpose (env.set), and
         * `policy show` output ends up in logs and bug reports. */
        for (size_t i = 0; ok && i < p->n_env_set; i++)
                ok = put(set, p->env_set[i].name, json_string("<redacted>"));
        ok = ok && put(env, "pass", strv_to_json(&p->env_pass));
        if (ok) {
                ok = put(env, "set", set);
                set = NULL; /* stolen */
        }
        ok = ok && put(env, "scrub", strv_to_json(&p->env_scrub));
        json_decref(set);
        if (!ok) {
                json_decref(env);
                return NULL;
        }
        return env;
}

static json_t *hosts_to_json(const cordon_policy *p) {
        json_t *o = json_object();
        for (size_t i = 0; o && i < p->n_hosts; i++)
                if (!put(o, p->hosts[i].name, json_string(p->hosts[i].address))) {
                        json_decref(o);
                        return NULL;
                }
        return o;
}

static json_t *tool_cache_extra_json(const cordon_policy *p) {
        json_t *a = json_array();
        for (size_t i = 0; a && i < p->n_tool_caches; i++) {
                json_t *e = json_object();
                bool ok = e && put(e, "name", json_string(p->tool_caches[i].name)) &&
                          put(e, "env", json_string(p->tool_caches[i].env));
                if (!ok)
                        json_decref(e);
                if (!ok || json_array_append_new(a, e) < 0) {
                        json_decref(a);
                        return NULL;
                }
        }
        return a;
}

/* `layer`: only what the layer sets (policy_layer_to_json); else the effective value. */
/* microvm: {"accel": "kvm" | "tcg"}; the default is kvm. */
static json_t *microvm_json(const cordon_policy *p) {
        json_t *o = json_object();
        if (o && json_object_set_new(o, "accel", json_string(p->microvm_tcg ? "tcg" : "kvm")) < 0) {
                json_decref(o);
                return NULL;
        }
        return o;
}

static json_t *tool_caches_json(const cordon_policy *p, bool layer) {
        json_t *o = json_object();
        bool ok = o;
        if (ok && (!layer || p->tool_caches_set))
                ok = put(o, "enabled",
                         json_boolean(p->tool_caches_set ? p->tool_caches_enabled : true));
        if (ok && (!layer || p->n_tool_caches))
                ok = put(o, "extra", tool_cache_extra_json(p));
        if (!ok) {
                json_decref(o);
                return NULL;
        }
        return o;
}

static json_t *tool_caches_layer_json(const cordon_policy *p) {
        return tool_caches_json(p, true);
}

static json_t *limit_or_null(uint64_t v) {
        return v ? json_integer((json_int_t) v) : json_null();
}

static json_t *limits_to_json(const cordon_policy *p) {
        json_t *l = json_object();
        if (l && put(l, "timeout", limit_or_null(p->timeout_ms)) &&
            put(l, "memory", limit_or_null(p->memory_bytes)) &&
            put(l, "pids", limit_or_null(p->pids)) &&
            put(l, "cpu", limit_or_null(p->cpu_seconds)) &&
            put(l, "cpus", limit_or_null(p->cpus)) &&
            put(l, "tmpSize", limit_or_null(p->tmp_bytes)) &&
            put(l, "shmSize", limit_or_null(p->shm_bytes)) &&
            put(l, "wildcardNames", limit_or_null(p->wildcard_names)))
                return l;
        json_decref(l);
        return NULL;
}

static json_t *egress_mode_json(const cordon_policy *p) {
        return json_string(policy_egress_mode_name(p->egress_mode_set ? p->egress_mode
                                                                      : CORDON_EGRESS_ALLOWLIST));
}

static uint64_t ask_timeout(const cordon_policy *p) {
        return p->egress_ask_timeout_ms ? p->egress_ask_timeout_ms : POLICY_DEFAULT_ASK_TIMEOUT_MS;
}

static json_t *ask_timeout_json(const cordon_policy *p) {
        return json_integer((json_int_t) ask_timeout(p));
}

void *policy_to_json(const cordon_policy *p) {
        json_t *o = json_object();
        if (!o)
                return NULL;
        /* Unset scalars print their effective defaults (docs/policy.md): mode chat, network on.
         * Unset limits print null (settings import writes this document back; the plan's "limits"
         * show the built-in ceiling and tmpfs sizes in effect). */
        bool ok = put(o, "sessionId", string_or_null(p->session_id)) &&
                  put(o, "workspaceId", string_or_null(p->workspace_id)) &&
                  put(o, "agentId", string_or_null(p->agent_id)) &&
                  put(o, "bindMounts", binds_to_json(p)) &&
                  put(o, "mode", json_string(cordon_mode_to_string(
                                         p->mode_set ? p->mode : CORDON_MODE_WORKSPACE_WRITE))) &&
                  put(o, "protectedPaths", strv_to_json(&p->protected_paths)) &&
                  put(o, "runnerStateDirs", strv_to_json(&p->runner_state_dirs)) &&
                  put(o, "denyRead", strv_to_json(&p->deny_read)) &&
                  put(o, "denyWrite", strv_to_json(&p->deny_write)) &&
                  put(o, "denyCreateNames", strv_to_json(&p->deny_create_names)) &&
                  put(o, "allowCreateNames", strv_to_json(&p->allow_create_names)) &&
                  put(o, "allowCreatePaths", strv_to_json(&p->allow_create_paths)) &&
                  put(o, "execGrantRoots", strv_to_json(&p->exec_grant_roots)) &&
                  put(o, "blockReadsOutsideWorkdirs", json_boolean(policy_reads_blocked(p))) &&
                  put(o, "allowRead", strv_to_json(&p->allow_read)) &&
                  put(o, "commandPolicy", policy_command_rules_to_json(p)) &&
                  put(o, "networkEnabled",
                      json_boolean(p->network_set ? p->network_enabled : true)) &&
                  put(o, "egressAllowlist", strv_to_json(&p->egress_allowlist)) &&
                  put(o, "egressDenylist", deny_to_json(p)) &&
                  /* The password as "****": this is for display, and a credential of the
                   * operator's must not reach logs and bug reports. */
                  put(o, "egressUpstream", string_or_null(p->egress_upstream_shown)) &&
                  put_req(o, p, true) &&
                  put(o, "egressMode", egress_mode_json(p)) &&
                  put(o, "egressAskTimeout", json_integer((json_int_t) ask_timeout(p))) &&
                  put(o, "hosts", hosts_to_json(p)) &&
                  put(o, "allowUnixSockets", strv_to_json(&p->allow_unix_sockets)) &&
                  put(o, "guestWorkdir", string_or_null(p->workdir)) &&
                  put(o, "env", env_to_json(p)) && put(o, "limits", limits_to_json(p)) &&
                  put(o, "toolCaches", tool_caches_json(p, false)) &&
                  put(o, "microvm", microvm_json(p));
        if (!ok) {
                json_decref(o);
                return NULL;
        }
        return o;
}

/* ---- a layer, faithfully ---------------------------------------------------------------------- */

/* Adds `key` only when the layer sets it: an unset scalar printed as its default would, loaded
 * elsewhere as a layer, override a lower layer that the original did not touch. */
static bool put_if(json_t *o, const char *key, bool set, json_t *(*make)(const cordon_policy *),
                   const cordon_policy *p) {
        return !set || put(o, key, make(p));
}

static json_t *env_layer_to_json(const cordon_policy *p) {
        json_t *env = json_object(), *set = json_object();
        bool ok = env && set;
        /* The values themselves: this document is handed to another process (cordond) to be
         * loaded as the same layer; it is not for display. */
        for (size_t i = 0; ok && i < p->n_env_set; i++)
                ok = put(set, p->env_set[i].name, json_string(p->env_set[i].value));
        if (ok && p->env_pass.n)
                ok = put(env, "pass", strv_to_json(&p->env_pass));
        if (ok && p->n_env_set) {
                ok = put(env, "set", set);
                set = NULL; /* stolen */
        }
        if (ok && p->env_scrub.n)
                ok = put(env, "scrub", strv_to_json(&p->env_scrub));
        json_decref(set);
        if (!ok) {
                json_decref(env);
                return NULL;
        }
        return env;
}

static json_t *limits_layer_to_json(const cordon_policy *p) {
        json_t *l = json_object();
        if (l && (!p->timeout_ms || put(l, "timeout", limit_or_null(p->timeout_ms))) &&
            (!p->memory_bytes || put(l, "memory", limit_or_null(p->memory_bytes))) &&
            (!p->pids || put(l, "pids", limit_or_null(p->pids))) &&
            (!p->cpu_seconds || put(l, "cpu", limit_or_null(p->cpu_seconds))) &&
            (!p->cpus || put(l, "cpus", limit_or_null(p->cpus))) &&
            (!p->tmp_bytes || put(l, "tmpSize", limit_or_null(p->tmp_bytes))) &&
            (!p->shm_bytes || put(l, "shmSize", limit_or_null(p->shm_bytes))) &&
            (!p->wildcard_names ||
             put(l, "wildcardNames", limit_or_null(p->wildcard_names))))
                return l;
        json_decref(l);
        return NULL;
}

static json_t *mode_json(const cordon_policy *p) {
        return json_string(cordon_mode_to_string(p->mode));
}

static json_t *network_json(const cordon_policy *p) {
        return json_boolean(p->network_enabled);
}

static json_t *block_reads_json(const cordon_policy *p) {
        return json_boolean(p->block_reads);
}

static bool put_strv(json_t *o, const char *key, const strv *s) {
        return !s->n || put(o, key, strv_to_json(s));
}

static bool put_string(json_t *o, const char *key, const char *s) {
        return !s || put(o, key, json_string(s));
}

void *policy_layer_to_json(const cordon_policy *p) {
        json_t *o = json_object();
        bool ok = o && put_string(o, "sessionId", p->session_id) &&
                  put_string(o, "workspaceId", p->workspace_id) &&
                  put_string(o, "agentId", p->agent_id) &&
                  put_if(o, "bindMounts", p->n_binds > 0, binds_to_json, p) &&
                  put_if(o, "mode", p->mode_set, mode_json, p) &&
                  put_strv(o, "protectedPaths", &p->protected_paths) &&
                  put_strv(o, "runnerStateDirs", &p->runner_state_dirs) &&
                  put_strv(o, "denyRead", &p->deny_read) &&
                  put_strv(o, "denyWrite", &p->deny_write) &&
                  put_strv(o, "denyCreateNames", &p->deny_create_names) &&
                  put_strv(o, "allowCreateNames", &p->allow_create_names) &&
                  put_strv(o, "allowCreatePaths", &p->allow_create_paths) &&
                  put_strv(o, "execGrantRoots", &p->exec_grant_roots) &&
                  put_if(o, "blockReadsOutsideWorkdirs", p->block_reads_set, block_reads_json,
                         p) &&
                  put_strv(o, "allowRead", &p->allow_read) &&
                  (!p->n_command_rules ||
                   put(o, "commandPolicy", policy_command_rules_to_json(p))) &&
                  put_if(o, "networkEnabled", p->network_set, network_json, p) &&
                  put_strv(o, "egressAllowlist", &p->egress_allowlist) &&
                  (!p->egress_denylist.n || put(o, "egressDenylist", deny_to_json(p))) &&
                  /* With its password: loaded by cordond as this same layer, never shown. */
                  put_string(o, "egressUpstream", p->egress_upstream) && put_req(o, p, false) &&
                  put_if(o, "egressMode", p->egress_mode_set, egress_mode_json, p) &&
                  put_if(o, "egressAskTimeout", p->egress_ask_timeout_ms, ask_timeout_json, p) &&
                  put_if(o, "hosts", p->n_hosts > 0, hosts_to_json, p) &&
                  put_strv(o, "allowUnixSockets", &p->allow_unix_sockets) &&
                  put_string(o, "guestWorkdir", p->workdir) &&
                  put_if(o, "env", p->env_pass.n || p->env_scrub.n || p->n_env_set,
                         env_layer_to_json, p) &&
                  put_if(o, "limits", p->timeout_ms || p->memory_bytes || p->pids ||
                                              p->cpu_seconds || p->tmp_bytes || p->shm_bytes ||
                                              p->wildcard_names || p->cpus,
                         limits_layer_to_json, p) &&
                  put_if(o, "toolCaches", p->tool_caches_set || p->n_tool_caches,
                         tool_caches_layer_json, p) &&
                  put_if(o, "microvm", p->microvm_accel_set, microvm_json, p);
        if (!ok) {
                json_decref(o);
                return NULL;
        }
        return o;
}
