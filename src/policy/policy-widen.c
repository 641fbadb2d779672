/* SPDX-License-Identifier: Apache-2.0 */
/* Which fields of a policy layer would widen what a sandbox allows when merged over another
 * (docs/policy.md, "Layers and resolution"): a per-call override that widens the session's policy
 * must be an approved escalation, and is reported as one. Lists merge as unions and scalars
 * replace, so a field widens when it adds to an allow-type list, turns something on, raises or
 * removes a limit, sets or changes egressUpstream, or moves the mode towards danger-full-access.
 * Deny-type lists (denyRead, denyWrite, denyCreateNames, protectedPaths, egressDenylist,
 * env.scrub) only ever narrow; allowCreateNames and allowCreatePaths widen. */
#include "policy/policy.h"

static int mode_rank(cordon_mode m) {
        switch (m) {
        case CORDON_MODE_READ_ONLY:
                return 0;
        case CORDON_MODE_WORKSPACE_WRITE:
                return 1;
        case CORDON_MODE_DANGER_FULL_ACCESS:
                return 2;
        default:
                return 2;
        }
}

/* A limit widens when the override sets a larger one than the base has (a base without the
 * limit cannot be widened by setting one). */
static bool limit_widens(uint64_t base, uint64_t over) {
        return over != 0 && base != 0 && over > base;
}

/* An allow-type list widens when it has an entry the base lacks. */
static bool list_adds(const strv *base, const strv *over) {
        for (size_t i = 0; i < over->n; i++)
                if (!strv_contains(base, over->v[i]))
                        return true;
        return false;
}

static bool binds_widen(const cordon_policy *base, const cordon_policy *over) {
        for (size_t i = 0; i < over->n_binds; i++) {
                bool known = false, was_ro = false;
                for (size_t j = 0; j < base->n_binds && !known; j++)
                        if (strcmp(base->binds[j].host_path, over->binds[i].host_path) == 0) {
                                known = true;
                                was_ro = base->binds[j].read_only;
                        }
                if (!known || (was_ro && !over->binds[i].read_only))
                        return true;
        }
        return false;
}

/* Setting or changing the upstream proxy widens, although it allows no other destination: the
 * upstream receives every allowed connection's bytes (it is a destination itself, one the
 * allowlist never judged), and it resolves the names, so the resolved-address guard no longer
 * applies to them (docs/design/network.md, "Upstream proxies"). The same URL as the base's does
 * not. */
static bool upstream_changes(const cordon_policy *base, const cordon_policy *over) {
        return over->egress_upstream &&
               (!base->egress_upstream ||
                strcmp(base->egress_upstream, over->egress_upstream) != 0);
}

int policy_widening_fields(const cordon_policy *base, const cordon_policy *over, strv *out) {
        cordon_mode bm = base->mode_set ? base->mode : CORDON_MODE_WORKSPACE_WRITE;
        bool base_net = base->network_set ? base->network_enabled : true;
        struct {
                bool widens;
                const char *name;
        } f[] = {
                { over->mode_set && mode_rank(over->mode) > mode_rank(bm), "mode" },
                { binds_widen(base, over), "bindMounts" },
                { list_adds(&base->runner_state_dirs, &over->runner_state_dirs), "runnerStateDirs" },
                { list_adds(&base->exec_grant_roots, &over->exec_grant_roots), "execGrantRoots" },
                { list_adds(&base->allow_create_names, &over->allow_create_names),
                  "allowCreateNames" },
                { list_adds(&base->allow_create_paths, &over->allow_create_paths),
                  "allowCreatePaths" },
                /* Turning the narrowing off, or excepting a path from it, makes more readable. */
                { over->block_reads_set && !over->block_reads && policy_reads_blocked(base),
                  "blockReadsOutsideWorkdirs" },
                { list_adds(&base->allow_read, &over->allow_read), "allowRead" },
                { over->network_set && over->network_enabled && !base_net, "networkEnabled" },
                { list_adds(&base->egress_allowlist, &over->egress_allowlist), "egressAllowlist" },
                { upstream_changes(base, over), "egressUpstream" },
                { policy_req_widens(&base->req, &over->req), "egressRules" },
                { policy_git_push_widens(&base->req.git_push, &over->req.git_push), "gitPush" },
                /* A secret reaches a host it did not before. */
                { policy_creds_widen(&base->req, &over->req), "credentials" },
                /* Ask widens: an answer can allow what the allowlist does not (a person's
                 * answer, but also a program's: on_egress_ask, a cordond client). */
                { over->egress_mode_set && over->egress_mode == CORDON_EGRESS_ASK &&
                          !(base->egress_mode_set && base->egress_mode == CORDON_EGRESS_ASK),
                  "egressMode" },
                { over->n_hosts > 0, "hosts" },
                /* Turning them back on adds a writable root the base had taken away. */
                { over->tool_caches_set && over->tool_caches_enabled && base->tool_caches_set &&
                          !base->tool_caches_enabled,
                  "toolCaches" },
                { list_adds(&base->allow_unix_sockets, &over->allow_unix_sockets),
                  "allowUnixSockets" },
                { list_adds(&base->env_pass, &over->env_pass), "env.pass" },
                { limit_widens(base->timeout_ms, over->timeout_ms), "limits.timeout" },
                { limit_widens(base->memory_bytes, over->memory_bytes), "limits.memory" },
                { limit_widens(base->pids ? base->pids : POLICY_DEFAULT_PIDS, over->pids),
                  "limits.pids" },
                { limit_widens(base->tmp_bytes ? base->tmp_bytes : policy_default_tmp_bytes(),
                               over->tmp_bytes),
                  "limits.tmpSize" },
                { limit_widens(base->shm_bytes ? base->shm_bytes : policy_default_shm_bytes(),
                               over->shm_bytes),
                  "limits.shmSize" },
                { limit_widens(base->cpu_seconds, over->cpu_seconds), "limits.cpu" },
                { limit_widens(base->cpus ? base->cpus : 1, over->cpus), "limits.cpus" },
                { limit_widens(base->wildcard_names ? base->wildcard_names
                                                    : POLICY_DEFAULT_WILDCARD_NAMES,
                               over->wildcard_names),
                  "limits.wildcardNames" },
        };
        int n = 0;
        for (size_t i = 0; i < ELEMENTSOF(f); i++)
                if (f[i].widens) {
                        int r = strv_push(out, f[i].name);
                        if (r < 0)
                                return r;
                        n++;
                }
        return n;
}
