/* SPDX-License-Identifier: Apache-2.0 */
/* The policy fields as data, for what settings do with a whole layer: decide which items loosen
 * the sandbox, copy a layer without them (through the policy setters: only src/policy/ builds a
 * policy), and name where each value came from. */
#include <fnmatch.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>

#include "plan/plan.h"
#include "settings/settings.h"

typedef int (*strv_adder)(cordon_policy *p, const char *s);

static const struct {
        const char *key;
        size_t strv_offset; /* string lists: offsetof the strv; 0 otherwise */
        strv_adder add;
} fields[_SF_MAX] = {
        [SF_MODE] = { "mode", 0, NULL },
        [SF_NETWORK] = { "networkEnabled", 0, NULL },
        [SF_SESSION_ID] = { "sessionId", 0, NULL },
        [SF_WORKSPACE_ID] = { "workspaceId", 0, NULL },
        [SF_AGENT_ID] = { "agentId", 0, NULL },
        [SF_WORKDIR] = { "guestWorkdir", 0, NULL },
        [SF_TIMEOUT] = { "limits.timeout", 0, NULL },
        [SF_MEMORY] = { "limits.memory", 0, NULL },
        [SF_PIDS] = { "limits.pids", 0, NULL },
        [SF_CPU] = { "limits.cpu", 0, NULL },
        [SF_TMP_SIZE] = { "limits.tmpSize", 0, NULL },
        [SF_SHM_SIZE] = { "limits.shmSize", 0, NULL },
        [SF_WILDCARD_NAMES] = { "limits.wildcardNames", 0, NULL },
        [SF_EGRESS_UPSTREAM] = { "egressUpstream", 0, NULL },
        [SF_EGRESS_MODE] = { "egressMode", 0, NULL },
        [SF_EGRESS_ASK_TIMEOUT] = { "egressAskTimeout", 0, NULL },
        [SF_BINDS] = { "bindMounts", 0, NULL },
        [SF_HOSTS] = { "hosts", 0, NULL },
        [SF_ENV_SET] = { "env.set", 0, NULL },
        [SF_PROTECTED] = { "protectedPaths", offsetof(cordon_policy, protected_paths),
                           cordon_policy_add_protected_path },
        [SF_RUNNER_STATE] = { "runnerStateDirs", offsetof(cordon_policy, runner_state_dirs),
                              cordon_policy_add_runner_state_dir },
        [SF_DENY_READ] = { "denyRead", offsetof(cordon_policy, deny_read),
                           cordon_policy_add_deny_read },
        [SF_DENY_WRITE] = { "denyWrite", offsetof(cordon_policy, deny_write),
                            cordon_policy_add_deny_write },
        [SF_DENY_CREATE] = { "denyCreateNames", offsetof(cordon_policy, deny_create_names),
                             cordon_policy_add_deny_create_name },
        [SF_EXEC_GRANT] = { "execGrantRoots", offsetof(cordon_policy, exec_grant_roots),
                            policy_add_exec_grant_root },
        [SF_EGRESS_ALLOW] = { "egressAllowlist", offsetof(cordon_policy, egress_allowlist),
                              cordon_policy_add_egress_allow },
        [SF_EGRESS_DENY] = { "egressDenylist", offsetof(cordon_policy, egress_denylist),
                             cordon_policy_add_egress_deny },
        [SF_UNIX_SOCKETS] = { "allowUnixSockets", offsetof(cordon_policy, allow_unix_sockets),
                              policy_add_unix_socket },
        [SF_ENV_PASS] = { "env.pass", offsetof(cordon_policy, env_pass), cordon_policy_env_pass },
        [SF_ENV_SCRUB] = { "env.scrub", offsetof(cordon_policy, env_scrub),
                           cordon_policy_env_scrub },
        [SF_EGRESS_RULES] = { "egressRules", 0, NULL },
        [SF_TLS_PASSTHROUGH] = { "tls.passthrough", offsetof(cordon_policy, req.passthrough),
                                 policy_add_tls_passthrough },
        [SF_TLS_UPSTREAM_CA] = { "tls.upstreamCa", offsetof(cordon_policy, req.upstream_ca),
                                 policy_add_tls_upstream_ca },
        [SF_GIT_PUSH] = { "gitPush", 0, NULL },
        [SF_BLOCK_READS] = { "blockReadsOutsideWorkdirs", 0, NULL },
        [SF_ALLOW_READ] = { "allowRead", offsetof(cordon_policy, allow_read),
                            policy_add_allow_read },
        [SF_CREDENTIALS] = { "credentials", 0, NULL },
};

const char *settings_field_key(settings_field f) {
        return (unsigned) f < _SF_MAX ? fields[f].key : "?";
}

const strv *settings_field_strv(const cordon_policy *p, settings_field f) {
        if ((unsigned) f >= _SF_MAX || !fields[f].strv_offset)
                return NULL;
        return (const strv *) ((const char *) p + fields[f].strv_offset);
}

static const char *scalar_string(const cordon_policy *p, settings_field f) {
        return f == SF_SESSION_ID     ? p->session_id
               : f == SF_WORKSPACE_ID ? p->workspace_id
               : f == SF_AGENT_ID     ? p->agent_id
               : f == SF_WORKDIR      ? p->workdir
               /* Shown, compared and reported in drops: never the password. */
               : f == SF_EGRESS_UPSTREAM ? p->egress_upstream_shown
                                         : NULL;
}

static uint64_t scalar_number(const cordon_policy *p, settings_field f) {
        return f == SF_TIMEOUT  ? p->timeout_ms
               : f == SF_MEMORY ? p->memory_bytes
               : f == SF_PIDS   ? p->pids
               : f == SF_CPU    ? p->cpu_seconds
               : f == SF_TMP_SIZE ? p->tmp_bytes
               : f == SF_SHM_SIZE ? p->shm_bytes
               : f == SF_WILDCARD_NAMES ? p->wildcard_names
               : f == SF_EGRESS_ASK_TIMEOUT ? p->egress_ask_timeout_ms
                                : 0;
}

static size_t field_count(const cordon_policy *p, settings_field f) {
        const strv *s = settings_field_strv(p, f);
        if (s)
                return s->n;
        if (f == SF_BINDS)
                return p->n_binds;
        if (f == SF_HOSTS)
                return p->n_hosts;
        if (f == SF_ENV_SET)
                return p->n_env_set;
        if (f == SF_EGRESS_RULES)
                return p->req.n_rules;
        if (f == SF_GIT_PUSH)
                return p->req.git_push.on ? 1 + p->req.git_push.n_allow : 0;
        if (f == SF_CREDENTIALS)
                return p->req.n_creds;
        if (f == SF_MODE)
                return p->mode_set;
        if (f == SF_NETWORK)
                return p->network_set;
        if (f == SF_BLOCK_READS)
                return p->block_reads_set;
        if (f == SF_EGRESS_MODE)
                return p->egress_mode_set;
        return scalar_string(p, f) || scalar_number(p, f) ? 1 : 0;
}

bool settings_field_is_set(const cordon_policy *p, settings_field f) {
        return field_count(p, f) > 0;
}

const char *settings_field_item(const cordon_policy *p, settings_field f, size_t i, char *buf,
                                size_t size) {
        const strv *s = settings_field_strv(p, f);
        if (i >= field_count(p, f))
                return NULL;
        if (s)
                return s->v[i];
        if (f == SF_BINDS)
                return p->binds[i].host_path;
        if (f == SF_HOSTS)
                return p->hosts[i].name;
        if (f == SF_ENV_SET)
                return p->env_set[i].name;
        if (f == SF_EGRESS_RULES)
                return p->req.rules[i].host;
        if (f == SF_GIT_PUSH)
                return i == 0 ? "default deny" : p->req.git_push.allow[i - 1].repo;
        if (f == SF_CREDENTIALS)
                return p->req.creds[i].env;
        if (f == SF_MODE)
                return cordon_mode_to_string(p->mode);
        if (f == SF_NETWORK)
                return p->network_enabled ? "true" : "false";
        if (f == SF_BLOCK_READS)
                return p->block_reads ? "true" : "false";
        if (f == SF_EGRESS_MODE)
                return policy_egress_mode_name(p->egress_mode);
        if (scalar_string(p, f))
                return scalar_string(p, f);
        (void) snprintf(buf, size, "%" PRIu64, scalar_number(p, f));
        return buf;
}

/* Would the variable be scrubbed by the built-in list (plan/env.c)? Passing it hands the
 * command a credential. */
static bool looks_secret(const char *name) {
        for (size_t i = 0; plan_default_env_scrub[i]; i++)
                if (fnmatch(plan_default_env_scrub[i], name, 0) == 0)
                        return true;
        return false;
}

/* What each field's items do to the sandbox when a layer adds them: NULL = nothing that widens
 * it (deny rules, limits, ids, read-only binds). */
static const char *const widens[_SF_MAX] = {
        [SF_RUNNER_STATE] = "adds a writable path",
        [SF_EXEC_GRANT] = "allows executing from a writable path",
        [SF_EGRESS_ALLOW] = "adds an allowed domain",
        [SF_HOSTS] = "overrides a host's address",
        /* It receives every allowed connection, and resolves the names past the address guard. */
        [SF_EGRESS_UPSTREAM] = "sends the allowed traffic through another proxy",
        [SF_UNIX_SOCKETS] = "allows connecting to a Unix socket",
        /* A host's tunnels go through unjudged; an upstream is trusted the system does not. */
        [SF_TLS_PASSTHROUGH] = "takes a host's HTTPS out of its request rules",
        [SF_TLS_UPSTREAM_CA] = "trusts another CA for upstream servers",
        [SF_ALLOW_READ] = "adds a readable path",
        /* A secret of the user's store goes to hosts the file names: a repository's settings
         * could send the user's token to a host that logs it. */
        [SF_CREDENTIALS] = "sends a secret to hosts (credentials)",
};

const char *settings_field_loosens(const cordon_policy *p, settings_field f, size_t i) {
        if ((unsigned) f >= _SF_MAX || i >= field_count(p, f))
                return NULL;
        if (f == SF_MODE)
                return p->mode == CORDON_MODE_DANGER_FULL_ACCESS ? "turns the sandbox off" : NULL;
        if (f == SF_NETWORK)
                return p->network_enabled ? "turns the network on" : NULL;
        if (f == SF_BLOCK_READS)
                return p->block_reads ? NULL : "turns the read narrowing off";
        /* An answer may allow what no entry lists, and the answerer may be a program that says
         * yes to everything: a repository's file must not turn that on. */
        if (f == SF_EGRESS_MODE)
                return p->egress_mode == CORDON_EGRESS_ASK ? "asks to allow unlisted destinations"
                                                           : NULL;
        if (f == SF_BINDS)
                return p->binds[i].read_only ? NULL : "adds a writable path";
        if (f == SF_ENV_PASS)
                return looks_secret(p->env_pass.v[i]) ? "passes a secret-looking variable" : NULL;
        /* An allow rule can admit requests the other layers' rules refuse; a deny rule only
         * refuses (policy-rules.c). */
        if (f == SF_EGRESS_RULES)
                return p->req.rules[i].deny ? NULL : "adds an allowed request (egressRules allow)";
        /* The key alone refuses pushes; each allow entry admits some (policy-git-push.c). */
        if (f == SF_GIT_PUSH)
                return i == 0 ? NULL : "adds an allowed push (gitPush allow)";
        return widens[f];
}

/* ---- copying a layer without its loosening items --------------------------------------------- */

static int copy_scalars(const cordon_policy *src, cordon_policy *dst) {
        int r = 0;
        if (src->session_id)
                r = cordon_policy_set_session_id(dst, src->session_id);
        if (r >= 0 && src->workspace_id)
                r = policy_set_workspace_id(dst, src->workspace_id);
        if (r >= 0 && src->agent_id)
                r = policy_set_agent_id(dst, src->agent_id);
        if (r >= 0 && src->workdir)
                r = cordon_policy_set_workdir(dst, src->workdir);
        if (r >= 0 && src->timeout_ms)
                r = cordon_policy_set_timeout_ms(dst, src->timeout_ms);
        if (r >= 0 && src->memory_bytes)
                r = cordon_policy_set_memory_bytes(dst, src->memory_bytes);
        if (r >= 0 && src->pids)
                r = cordon_policy_set_pids(dst, src->pids);
        if (r >= 0 && src->cpu_seconds)
                r = cordon_policy_set_cpu_seconds(dst, src->cpu_seconds);
        if (r >= 0 && src->cpus)
                r = cordon_policy_set_cpus(dst, src->cpus);
        if (r >= 0 && src->tmp_bytes)
                r = cordon_policy_set_tmp_size(dst, src->tmp_bytes);
        if (r >= 0 && src->shm_bytes)
                r = cordon_policy_set_shm_size(dst, src->shm_bytes);
        if (r >= 0 && src->wildcard_names)
                r = cordon_policy_set_wildcard_names(dst, src->wildcard_names);
        if (r >= 0 && src->egress_ask_timeout_ms)
                r = cordon_policy_set_egress_ask_timeout_ms(dst, src->egress_ask_timeout_ms);
        for (size_t i = 0; r >= 0 && i < src->n_env_set; i++)
                r = cordon_policy_env_set(dst, src->env_set[i].name, src->env_set[i].value);
        /* toolCaches neither adds a host path nor a destination: the cache root is cordon's
         * own directory (docs/design/tool-caches.md). */
        if (r >= 0)
                r = policy_caches_merge(dst, src);
        /* Command rules only ever refuse: kept from every layer. */
        if (r >= 0)
                r = policy_command_rules_merge(dst, src);
        return r;
}

/* Calls `drop` for item i when it loosens; returns 1 when dropped, 0 to keep, or -errno. */
static int maybe_drop(const cordon_policy *src, settings_field f, size_t i, settings_drop_fn drop,
                      void *userdata) {
        const char *why = settings_field_loosens(src, f, i);
        if (!why)
                return 0;
        char buf[32];
        int r = drop(userdata, f, settings_field_item(src, f, i, buf, sizeof(buf)), why);
        return r < 0 ? r : 1;
}

static int copy_switches(const cordon_policy *src, cordon_policy *dst, settings_drop_fn drop,
                         void *userdata) {
        int r = 0;
        /* maybe_drop() returns 1 for a dropped item: still >= 0, so the copy goes on. */
        if (src->mode_set && (r = maybe_drop(src, SF_MODE, 0, drop, userdata)) == 0)
                r = cordon_policy_set_mode(dst, src->mode);
        if (r >= 0 && src->network_set &&
            (r = maybe_drop(src, SF_NETWORK, 0, drop, userdata)) == 0)
                r = cordon_policy_set_network_enabled(dst, src->network_enabled);
        if (r >= 0 && src->block_reads_set &&
            (r = maybe_drop(src, SF_BLOCK_READS, 0, drop, userdata)) == 0)
                r = policy_set_block_reads(dst, src->block_reads);
        for (size_t i = 0; r >= 0 && i < src->n_binds; i++)
                if ((r = maybe_drop(src, SF_BINDS, i, drop, userdata)) == 0)
                        r = cordon_policy_add_bind(dst, src->binds[i].host_path,
                                                   src->binds[i].read_only);
        for (size_t i = 0; r >= 0 && i < src->n_hosts; i++)
                if ((r = maybe_drop(src, SF_HOSTS, i, drop, userdata)) == 0)
                        r = cordon_policy_set_host(dst, src->hosts[i].name, src->hosts[i].address);
        if (r >= 0 && src->egress_upstream &&
            (r = maybe_drop(src, SF_EGRESS_UPSTREAM, 0, drop, userdata)) == 0)
                r = cordon_policy_set_egress_upstream(dst, src->egress_upstream);
        for (size_t i = 0; r >= 0 && i < src->req.n_rules; i++)
                if ((r = maybe_drop(src, SF_EGRESS_RULES, i, drop, userdata)) == 0)
                        r = policy_req_add_rule(&dst->req, &src->req.rules[i]);
        if (r >= 0 && src->req.git_push.on)
                dst->req.git_push.on = true;
        for (size_t i = 0; r >= 0 && i < src->req.git_push.n_allow; i++)
                if ((r = maybe_drop(src, SF_GIT_PUSH, i + 1, drop, userdata)) == 0)
                        r = policy_git_push_add(&dst->req.git_push, &src->req.git_push.allow[i]);
        for (size_t i = 0; r >= 0 && i < src->req.n_creds; i++)
                if ((r = maybe_drop(src, SF_CREDENTIALS, i, drop, userdata)) == 0)
                        r = policy_req_add_cred(&dst->req, &src->req.creds[i]);
        if (r >= 0 && src->egress_mode_set &&
            (r = maybe_drop(src, SF_EGRESS_MODE, 0, drop, userdata)) == 0)
                r = cordon_policy_set_egress_mode(dst, src->egress_mode);
        return r < 0 ? r : 0;
}

int settings_layer_filter(const cordon_policy *src, settings_drop_fn drop, void *userdata,
                          cordon_policy **ret) {
        cordon_policy *dst = policy_new();
        if (!dst)
                return -ENOMEM;
        int r = copy_scalars(src, dst);
        if (r >= 0)
                r = copy_switches(src, dst, drop, userdata);
        for (int f = 0; r >= 0 && f < _SF_MAX; f++) {
                const strv *s = settings_field_strv(src, (settings_field) f);
                for (size_t i = 0; r >= 0 && s && i < s->n; i++)
                        if ((r = maybe_drop(src, (settings_field) f, i, drop, userdata)) == 0)
                                r = fields[f].add(dst, s->v[i]);
        }
        /* A deny entry's reason goes with it, for the entries that were kept (a deny entry is
         * only ever narrowing, so none is dropped: the check keeps that true if it changes). */
        for (size_t i = 0; r >= 0 && i < src->n_deny_reasons; i++)
                if (strv_contains(&dst->egress_denylist, src->deny_reasons[i].pattern))
                        r = cordon_policy_add_egress_deny_reason(dst, src->deny_reasons[i].pattern,
                                                                 src->deny_reasons[i].reason);
        if (r < 0) {
                cordon_policy_free(dst);
                return r;
        }
        *ret = dst;
        return 0;
}
