/* SPDX-License-Identifier: Apache-2.0 */
/* plan_build(): a resolved policy → the mount plan, Landlock rules, name rules and environment the
 * Linux backend applies verbatim. Reads the filesystem (realpath, lstat) but changes nothing. */
#include <limits.h>
#include <stdio.h>

#include "plan/plan-internal.h"
#include "protected-names.h" /* generated (build tree): from data/protected/names.list */

const char plan_why_writable_root[] = "writable root";
const char plan_why_runner_state[] = "runner state dir";
const char plan_why_git_common[] = "git worktree common dir";
const char plan_why_ro_bind[] = "read-only bind";
const char plan_why_secret[] = "secret";
const char plan_why_protected[] = "protected path";
const char plan_why_tool_cache[] = "tool caches";

/* docs/policy.md: the secret read-deny set, relative to $HOME. */
const char *const plan_secret_home_paths[] = {
        ".ssh", ".aws", ".gnupg", ".config/gh", ".config/gcloud", ".azure", ".kube",
        ".docker/config.json", ".netrc", ".git-credentials", "Library/Keychains",
        ".config/cordon/secrets", /* cordon's own secret store (docs/design/threat-model.md) */
        NULL,
};

/* The mandatory write-deny set, relative to every writable root and $HOME: shell start-up files,
 * git hooks and config, editor tasks, agent settings and hooks, MCP servers, cordon's own settings
 * directories, and the files that turn a workdir into a bare repository git would pick up. The
 * list, with the tool that executes or trusts each entry, is data/protected/names.list (generated
 * into protected-names.h at build time). More git paths: plan-git.c. */
const char *const plan_mandatory_protected_names[] = {
        PLAN_PROTECTED_NAMES
        NULL,
};

/* Names that match a default deny glob but hold no secret: committed templates with
 * placeholders (dotenv's .env.example, Symfony's .env.dist, ...; refusing them only breaks
 * `cp .env.example .env`-style set-ups, and the .env they are copied to stays refused), and
 * cacert.pem, the public CA bundle that pip vendors (certifi) into every virtual environment:
 * without it `python3 -m venv .venv` fails in the workspace. */
const char *const plan_default_allow_create_names[] = {
        ".env.example", ".env.sample", ".env.template", ".env.dist", "cacert.pem", NULL,
};

/* ---- small pieces --------------------------------------------------------------------------- */

int plan_add_mount(plan *p, mount_op_kind kind, const char *path, bool is_dir, const char *why) {
        char *c = strdup(path);
        if (!c)
                return -ENOMEM;
        mount_op *n = realloc(p->mounts, (p->n_mounts + 1) * sizeof(*n));
        if (!n) {
                free(c);
                return -ENOMEM;
        }
        p->mounts = n;
        p->mounts[p->n_mounts++] = (mount_op){ kind, c, is_dir, why };
        return 0;
}

static int add_landlock(plan *p, const char *path) {
        for (size_t i = 0; i < p->n_landlock; i++)
                if (strcmp(p->landlock[i].path, path) == 0)
                        return 0;
        char *c = strdup(path);
        if (!c)
                return -ENOMEM;
        landlock_rule *n = realloc(p->landlock, (p->n_landlock + 1) * sizeof(*n));
        if (!n) {
                free(c);
                return -ENOMEM;
        }
        p->landlock = n;
        p->landlock[p->n_landlock++] = (landlock_rule){ c, true };
        return 0;
}

bool plan_beneath_root(const plan_builder *b, const char *path) {
        for (size_t i = 0; i < b->n_roots; i++)
                if (path_startswith(path, b->roots[i].resolved))
                        return true;
        return false;
}

static void roots_free(plan_root *r, size_t n) {
        for (size_t i = 0; i < n; i++) {
                free(r[i].literal);
                free(r[i].resolved);
        }
        free(r);
}

static int push_root(plan_root **list, size_t *n, const char *literal, const char *resolved,
                     bool git_common, const char *why) {
        plan_root r = { strdup(literal), strdup(resolved), true, git_common, why };
        if (!r.literal || !r.resolved) {
                free(r.literal);
                free(r.resolved);
                return -ENOMEM;
        }
        (void) path_exists(resolved, &r.is_dir); /* it exists: realpath() just succeeded */
        plan_root *nl = realloc(*list, (*n + 1) * sizeof(*nl));
        if (!nl) {
                free(r.literal);
                free(r.resolved);
                return -ENOMEM;
        }
        *list = nl;
        (*list)[(*n)++] = r;
        return 0;
}

int plan_add_root(plan_builder *b, const char *literal, const char *resolved, bool git_common,
                  const char *why) {
        return push_root(&b->roots, &b->n_roots, literal, resolved, git_common, why);
}

/* ---- the steps ------------------------------------------------------------------------------ */

/* Fails closed on fields this backend cannot enforce yet instead of dropping them
 * (docs/design/backends.md). */
static int check_enforceable(const plan_builder *b) {
        /* allowUnixSockets: enforced by the supervisor (src/linux/supervisor-unix.c). */
        (void) b;
        return 0;
}

static int copy_net(const cordon_policy *pol, plan_net *net) {
        net->enabled = pol->network_set ? pol->network_enabled : true;
        net->wildcard_names = pol->wildcard_names ? pol->wildcard_names
                                                  : POLICY_DEFAULT_WILDCARD_NAMES;
        net->ask = net->enabled && pol->egress_mode_set && pol->egress_mode == CORDON_EGRESS_ASK;
        net->ask_timeout_ms = (uint32_t) (pol->egress_ask_timeout_ms
                                                  ? pol->egress_ask_timeout_ms
                                                  : POLICY_DEFAULT_ASK_TIMEOUT_MS);
        if (pol->egress_upstream && !(net->upstream = strdup(pol->egress_upstream)))
                return -ENOMEM;
        int r = policy_req_copy(&net->req, &pol->req);
        if (r >= 0)
                r = strv_extend(&net->allow, &pol->egress_allowlist);
        if (r >= 0)
                r = strv_extend(&net->deny, &pol->egress_denylist);
        if (r < 0)
                return r;
        if (pol->n_deny_reasons) {
                net->deny_reasons = calloc(pol->n_deny_reasons, sizeof(*net->deny_reasons));
                if (!net->deny_reasons)
                        return -ENOMEM;
        }
        for (size_t i = 0; i < pol->n_deny_reasons; i++) {
                net->deny_reasons[i].pattern = strdup(pol->deny_reasons[i].pattern);
                net->deny_reasons[i].reason = strdup(pol->deny_reasons[i].reason);
                net->n_deny_reasons++;
                if (!net->deny_reasons[i].pattern || !net->deny_reasons[i].reason)
                        return -ENOMEM;
        }
        if (pol->n_hosts == 0)
                return 0;
        net->hosts = calloc(pol->n_hosts, sizeof(*net->hosts));
        if (!net->hosts)
                return -ENOMEM;
        for (size_t i = 0; i < pol->n_hosts; i++) {
                net->hosts[i].name = strdup(pol->hosts[i].name);
                net->hosts[i].address = strdup(pol->hosts[i].address);
                net->n_hosts++;
                if (!net->hosts[i].name || !net->hosts[i].address)
                        return -ENOMEM;
        }
        return 0;
}

static int set_workdir(plan_builder *b, const char *cwd) {
        const char *wd = b->policy->workdir ? b->policy->workdir : cwd;
        const char *why = policy_check_path(wd);
        if (why)
                return cordon_set_error(b->err, CORDON_POLICY_INVALID, EINVAL,
                                        "the working directory '%s' %s", wd, why);
        int r = path_normalize(wd, &b->p->workdir);
        return r < 0 ? cordon_set_error(b->err, CORDON_LAUNCH_FAILED, r, "workdir: %s",
                                        strerror(-r))
                     : 0;
}

/* Host kernel interfaces are never a workspace: a writable (or re-bound) /proc, /dev or /sys
 * would hand the command the host's devices, processes and kernel knobs. */
static bool is_kernel_path(const char *resolved, bool writable) {
        return path_startswith(resolved, "/proc") || path_startswith(resolved, "/dev") ||
               (writable && path_startswith(resolved, "/sys"));
}

static int add_one_root(plan_builder *b, const char *path, bool writable, const char *why) {
        char resolved[PATH_MAX];
        if (!realpath(path, resolved))
                return cordon_set_error(b->err, CORDON_POLICY_INVALID, errno,
                                        "%s '%s' cannot be resolved: %s; create it or remove it "
                                        "from the policy",
                                        why, path, strerror(errno));
        if (strcmp(resolved, "/") == 0)
                /* The whole filesystem writable is not a sandbox; say so instead of pretending. */
                return cordon_set_error(b->err, CORDON_POLICY_INVALID, EINVAL,
                                        "%s '%s' is the root directory; bind a project "
                                        "directory, or use mode danger-full-access to run "
                                        "without a sandbox",
                                        why, path);
        if (is_kernel_path(resolved, writable))
                return cordon_set_error(b->err, CORDON_POLICY_INVALID, EINVAL,
                                        "%s '%s' (%s) is a host kernel interface; bind a "
                                        "directory outside /proc, /dev and /sys",
                                        why, path, resolved);
        if (writable)
                return plan_add_root(b, path, resolved, false, why);
        return push_root(&b->ro_binds, &b->n_ro_binds, path, resolved, false, why);
}

/* Writable roots: rw binds (workspace-write only) + runnerStateDirs (every mode). */
static int collect_roots(plan_builder *b) {
        const cordon_policy *pol = b->policy;
        bool rw_mode = b->p->mode == CORDON_MODE_WORKSPACE_WRITE;
        int r = 0;
        for (size_t i = 0; r >= 0 && i < pol->n_binds; i++) {
                bool w = rw_mode && !pol->binds[i].read_only;
                r = add_one_root(b, pol->binds[i].host_path, w,
                                 w ? plan_why_writable_root : plan_why_ro_bind);
        }
        for (size_t i = 0; r >= 0 && i < pol->runner_state_dirs.n; i++)
                r = add_one_root(b, pol->runner_state_dirs.v[i], true, plan_why_runner_state);
        return r;
}

static int add_fixed_mounts(plan *p) {
        int r;
        if ((r = plan_add_mount(p, MOUNT_OP_ROOT_RO, "/", true, "host root, read-only")) < 0 ||
            (r = plan_add_mount(p, MOUNT_OP_DEV, "/dev", true, "minimal /dev")) < 0 ||
            (r = plan_add_mount(p, MOUNT_OP_PROC, "/proc", true, "own /proc")) < 0 ||
            (r = plan_add_mount(p, MOUNT_OP_TMPFS, "/tmp", true, "private /tmp")) < 0 ||
            (r = plan_add_mount(p, MOUNT_OP_TMPFS, "/dev/shm", true, "private /dev/shm")) < 0)
                return r;
        p->mounts[p->n_mounts - 2].tmpfs_bytes = p->tmp_bytes;
        p->mounts[p->n_mounts - 1].tmpfs_bytes = p->shm_bytes;
        return 0;
}

static int add_root_mounts(plan_builder *b) {
        int r = 0;
        for (size_t i = 0; r >= 0 && i < b->n_roots; i++)
                r = plan_add_mount(b->p, MOUNT_OP_BIND_RW, b->roots[i].resolved,
                                   b->roots[i].is_dir, b->roots[i].why);
        for (size_t i = 0; r >= 0 && i < b->n_ro_binds; i++)
                r = plan_add_mount(b->p, MOUNT_OP_BIND_RO, b->ro_binds[i].resolved,
                                   b->ro_binds[i].is_dir, b->ro_binds[i].why);
        return r;
}

static int add_landlock_rules(plan_builder *b) {
        int r = 0;
        for (size_t i = 0; r >= 0 && i < b->n_roots; i++)
                r = add_landlock(b->p, b->roots[i].resolved);
        /* Our own private tmpfs mounts and minimal /dev (for /dev/null, /dev/tty). */
        static const char *const fixed[] = { "/tmp", "/dev", "/dev/shm" };
        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(fixed); i++)
                r = add_landlock(b->p, fixed[i]);
        return r;
}

/* ---- finishing the mount list --------------------------------------------------------------- */

#define N_FIXED_MOUNTS 5 /* ROOT_RO, DEV, PROC, TMPFS /tmp, TMPFS /dev/shm: always first */

static size_t path_depth(const char *path) {
        size_t d = 0;
        for (const char *c = path; *c; c++)
                if (*c == '/' && c[1])
                        d++;
        return d;
}

static int kind_rank(mount_op_kind k) {
        switch (k) {
        case MOUNT_OP_BIND_RW:
                return 0;
        case MOUNT_OP_BIND_RO:
                return 1;
        case MOUNT_OP_HIDE:
                return 2;
        case MOUNT_OP_ROOT_RO:
        case MOUNT_OP_DEV:
        case MOUNT_OP_PROC:
        case MOUNT_OP_TMPFS:
        case _MOUNT_OP_MAX:
        default:
                return 3;
        }
}

/* Parents before children; at equal path the stronger op last, so it ends up on top. */
static int compare_mounts(const void *a, const void *b) {
        const mount_op *x = a, *y = b;
        size_t dx = path_depth(x->path), dy = path_depth(y->path);
        if (dx != dy)
                return dx < dy ? -1 : 1;
        int c = strcmp(x->path, y->path);
        if (c != 0)
                return c;
        return kind_rank(x->kind) - kind_rank(y->kind);
}

/* A protective op: it only narrows what an earlier mount shows (HIDE, or a read-only bind made
 * for a deny rule rather than for a bindMounts entry). */
static bool is_protective(const mount_op *m) {
        return m->kind == MOUNT_OP_HIDE ||
               (m->kind == MOUNT_OP_BIND_RO && m->why != plan_why_ro_bind &&
                m->why != plan_why_allow_read);
}

/* The op that shows `path` before m[i] is applied: the deepest earlier op at or above it. */
static const mount_op *covering_op(const mount_op *m, size_t i) {
        const mount_op *best = NULL;
        for (size_t j = 0; j < i; j++)
                if (path_startswith(m[i].path, m[j].path) && strcmp(m[i].path, m[j].path) != 0 &&
                    (!best || strlen(m[j].path) >= strlen(best->path)))
                        best = &m[j];
        return best;
}

/* Whether protective op `m` changes nothing under `cover`, the op that shows its path:
 * - under a hide, a private tmpfs or our minimal /dev the host's file is not there at all (and
 *   the mountpoint would not exist);
 * - a read-only bind under a read-only view adds nothing.
 * Not under /proc: a fresh procfs still has global files (/proc/kcore, /proc/sys/...), so a deny
 * rule there stays, and fails the launch loudly if its path does not exist. */
static bool redundant(const mount_op *m, const mount_op *cover) {
        if (!cover)
                return false;
        switch (cover->kind) {
        case MOUNT_OP_HIDE:
        case MOUNT_OP_TMPFS:
        case MOUNT_OP_DEV:
                return true;
        case MOUNT_OP_ROOT_RO:
        case MOUNT_OP_BIND_RO:
                return m->kind == MOUNT_OP_BIND_RO;
        case MOUNT_OP_PROC:
        case MOUNT_OP_BIND_RW:
        case _MOUNT_OP_MAX:
        default:
                return false;
        }
}

/* Sorts parents first, keeps only the strongest op at each path, and drops protective ops that
 * change nothing (redundant()). */
static void finish_mounts(plan *p) {
        if (p->n_mounts <= N_FIXED_MOUNTS)
                return;
        mount_op *m = p->mounts;
        qsort(m + N_FIXED_MOUNTS, p->n_mounts - N_FIXED_MOUNTS, sizeof(*m), compare_mounts);
        size_t o = N_FIXED_MOUNTS;
        for (size_t i = N_FIXED_MOUNTS; i < p->n_mounts; i++) {
                if (i + 1 < p->n_mounts && strcmp(m[i].path, m[i + 1].path) == 0) {
                        free(m[i].path); /* a weaker op at the same path */
                        continue;
                }
                m[o] = m[i]; /* o <= i: that slot was moved out or freed already */
                if (is_protective(&m[o]) && redundant(&m[o], covering_op(m, o))) {
                        free(m[o].path);
                        continue;
                }
                o++;
        }
        p->n_mounts = o;
}

static int collect_writable_roots(plan *p) {
        for (size_t i = 0; i < p->n_mounts; i++)
                if (p->mounts[i].kind == MOUNT_OP_BIND_RW) {
                        int r = strv_push_unique(&p->writable_roots, p->mounts[i].path);
                        if (r < 0)
                                return r;
                }
        return 0;
}

/* Moves the builder's path sets into the plan for string-matching backends (plan.h: plan_paths).
 * Runs last: the sets are not used by the builder any more. */
static int keep_paths(plan_builder *b) {
        plan_paths *k = &b->p->paths;
        int r = strv_extend(&b->protect, &b->protect_names);
        if (r < 0)
                return r;
        k->secrets = b->secrets;
        k->protect = b->protect;
        b->secrets = b->protect = (strv) { 0 };
        k->binds = calloc(b->n_roots + b->n_ro_binds, sizeof(*k->binds));
        if (!k->binds && b->n_roots + b->n_ro_binds > 0)
                return -ENOMEM;
        plan_root *lists[] = { b->roots, b->ro_binds };
        size_t counts[] = { b->n_roots, b->n_ro_binds };
        for (size_t l = 0; l < ELEMENTSOF(lists); l++)
                for (size_t i = 0; i < counts[l]; i++) {
                        plan_root *root = &lists[l][i];
                        k->binds[k->n_binds++] = (plan_bind) {
                                .literal = TAKE_PTR(root->literal),
                                .resolved = TAKE_PTR(root->resolved),
                                .writable = l == 0,
                                .git_common = root->git_common,
                        };
                }
        return 0;
}

/* ---- entry points --------------------------------------------------------------------------- */

static void paths_free(plan_paths *k) {
        for (size_t i = 0; i < k->n_binds; i++) {
                free(k->binds[i].literal);
                free(k->binds[i].resolved);
        }
        free(k->binds);
        strv_done(&k->secrets);
        strv_done(&k->protect);
        strv_done(&k->narrowed);
        strv_done(&k->read_exceptions);
}

void plan_free(plan *p) {
        if (!p)
                return;
        paths_free(&p->paths);
        free(p->workdir);
        strv_done(&p->writable_roots);
        for (size_t i = 0; i < p->n_mounts; i++)
                free(p->mounts[i].path);
        free(p->mounts);
        for (size_t i = 0; i < p->n_landlock; i++)
                free(p->landlock[i].path);
        free(p->landlock);
        strv_done(&p->names.protected);
        strv_done(&p->names.deny_names);
        strv_done(&p->names.allow_names);
        strv_done(&p->names.allow_paths);
        strv_done(&p->names.persistent);
        strv_done(&p->names.names_exempt);
        strv_done(&p->env);
        strv_done(&p->env_scrubbed);
        free(p->tool_cache_root);
        free(p->tool_cache_anchor);
        free(p->tool_cache_rel);
        strv_done(&p->tool_cache_env);
        strv_done(&p->tool_cache_tools);
        strv_done(&p->unix_sockets);
        strv_done(&p->net.allow);
        strv_done(&p->net.deny);
        policy_req_clear(&p->net.req);
        for (size_t i = 0; i < p->net.n_deny_reasons; i++) {
                free(p->net.deny_reasons[i].pattern);
                free(p->net.deny_reasons[i].reason);
        }
        free(p->net.deny_reasons);
        for (size_t i = 0; i < p->net.n_hosts; i++) {
                free(p->net.hosts[i].name);
                free(p->net.hosts[i].address);
        }
        free(p->net.hosts);
        if (p->net.upstream) /* it holds the upstream's password */
                explicit_bzero(p->net.upstream, strlen(p->net.upstream));
        free(p->net.upstream);
        free(p->net.ca_bundle);
        free(p->net.java_truststore);
        free(p);
}

static void builder_done(plan_builder *b) {
        roots_free(b->roots, b->n_roots);
        roots_free(b->ro_binds, b->n_ro_binds);
        strv_done(&b->secrets);
        strv_done(&b->protect);
        strv_done(&b->protect_names);
        plan_free(b->p);
}

/* The file-system part: everything but env, workdir and limits. */
static int build_confinement(plan_builder *b) {
        int r;
        if ((r = add_fixed_mounts(b->p)) < 0)
                return r;
        if ((r = collect_roots(b)) < 0 || (r = plan_tool_caches_root(b)) < 0 ||
            (r = plan_git(b)) < 0 ||
            (r = plan_secrets(b)) < 0 || (r = plan_protected(b)) < 0 ||
            (r = plan_read_narrowing(b)) < 0)
                return r;
        if ((r = add_root_mounts(b)) < 0 || (r = add_landlock_rules(b)) < 0 ||
            (r = plan_name_rules(b)) < 0)
                return r;
        finish_mounts(b->p);
        if ((r = collect_writable_roots(b->p)) < 0)
                return r;
        return keep_paths(b);
}

static int plan_build_cached(const cordon_policy *policy, const char *home, const char *cwd,
                             char *const *envp, plan **ret, cordon_error *err);

int plan_build(const cordon_policy *policy, const char *home, const char *cwd,
               char *const *envp, plan **ret, cordon_error *err) {
        resolve_cache_begin();
        int r = plan_build_cached(policy, home, cwd, envp, ret, err);
        resolve_cache_end();
        return r;
}

static int plan_build_cached(const cordon_policy *policy, const char *home, const char *cwd,
                             char *const *envp, plan **ret, cordon_error *err) {
        if (!policy || !ret)
                return cordon_set_error(err, CORDON_POLICY_INVALID, EINVAL, "plan_build: no policy");
        const char *why;
        if ((why = policy_check_path(home)))
                return cordon_set_error(err, CORDON_POLICY_INVALID, EINVAL,
                                        "the home directory '%s' %s; set HOME to an absolute "
                                        "path",
                                        home ? home : "(null)", why);
        if ((why = policy_check_path(cwd)))
                return cordon_set_error(err, CORDON_POLICY_INVALID, EINVAL,
                                        "the current directory '%s' %s", cwd ? cwd : "(null)",
                                        why);
        _cleanup_(builder_done) plan_builder b = { .policy = policy, .home = home, .err = err };
        if (err)
                err->code = CORDON_OK;
        b.p = calloc(1, sizeof(plan));
        if (!b.p)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, ENOMEM, "out of memory");
        plan *p = b.p;
        p->session_ctl = -1;
        p->mode = policy->mode_set ? policy->mode : CORDON_MODE_WORKSPACE_WRITE;
        p->timeout_ms = policy->timeout_ms;
        p->microvm_tcg = policy->microvm_tcg;
        p->memory_bytes = policy->memory_bytes;
        p->pids = policy->pids ? policy->pids : POLICY_DEFAULT_PIDS;
        p->pids_default = !policy->pids;
        p->tmp_bytes = policy->tmp_bytes ? policy->tmp_bytes : policy_default_tmp_bytes();
        p->shm_bytes = policy->shm_bytes ? policy->shm_bytes : policy_default_shm_bytes();
        p->cpu_seconds = policy->cpu_seconds;
        p->cpus = policy->cpus;
        int r = set_workdir(&b, cwd);
        /* danger-full-access runs without a sandbox on purpose: nothing there is "unenforced". */
        if (r >= 0 && p->mode != CORDON_MODE_DANGER_FULL_ACCESS)
                r = check_enforceable(&b);
        if (r >= 0)
                r = copy_net(policy, &p->net);
        if (r >= 0)
                r = strv_extend(&p->unix_sockets, &policy->allow_unix_sockets);
        if (r >= 0)
                r = plan_env(policy, envp, p, err);
        /* Over inherited values (they name host caches the sandbox cannot write). */
        if (r >= 0)
                r = plan_tool_caches_env(policy, envp, home, p);
        /* Last, over env.set too: inside the sandbox's network namespace no other proxy exists,
         * so another value could only break clients. */
        if (r >= 0 && p->mode != CORDON_MODE_DANGER_FULL_ACCESS)
                r = plan_proxy_env(p);
        if (r >= 0 && p->mode != CORDON_MODE_DANGER_FULL_ACCESS)
                r = build_confinement(&b);
        if (r < 0) {
                /* Steps that fail with a message set err themselves; the rest is memory. */
                if (err && err->code == CORDON_OK)
                        return cordon_set_error(err, CORDON_LAUNCH_FAILED, r,
                                                "building the sandbox plan: %s", strerror(-r));
                return r;
        }
        *ret = TAKE_PTR(b.p);
        return 0;
}
