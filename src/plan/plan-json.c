/* SPDX-License-Identifier: Apache-2.0 */
/* The plan as JSON (`cordon policy show --json`), and cordon_policy_to_json(). Environment values
 * are never printed, only names: the environment is where secrets live. */
#include <jansson.h>
#include <limits.h>
#include <pwd.h>

#include "plan/plan-internal.h"
#include "util/fork-gate.h"

const char *mount_op_kind_to_string(mount_op_kind kind) {
        switch (kind) {
        case MOUNT_OP_ROOT_RO:
                return "root-ro";
        case MOUNT_OP_DEV:
                return "dev";
        case MOUNT_OP_PROC:
                return "proc";
        case MOUNT_OP_TMPFS:
                return "tmpfs";
        case MOUNT_OP_BIND_RW:
                return "bind-rw";
        case MOUNT_OP_BIND_RO:
                return "bind-ro";
        case MOUNT_OP_HIDE:
                return "hide";
        case _MOUNT_OP_MAX:
        default:
                return "unknown";
        }
}

/* json_object_set_new() and json_array_append_new() steal the value even on failure. */
static bool put(json_t *obj, const char *key, json_t *value) {
        return value && json_object_set_new(obj, key, value) == 0;
}

static bool append(json_t *arr, json_t *value) {
        return value && json_array_append_new(arr, value) == 0;
}

static json_t *strv_json(const strv *s) {
        json_t *a = json_array();
        for (size_t i = 0; a && i < s->n; i++)
                if (!append(a, json_string(s->v[i]))) {
                        json_decref(a);
                        return NULL;
                }
        return a;
}

static json_t *mount_json(const mount_op *m) {
        json_t *o = json_object();
        if (o && put(o, "kind", json_string(mount_op_kind_to_string(m->kind))) &&
            put(o, "path", json_string(m->path)) && put(o, "isDir", json_boolean(m->is_dir)) &&
            put(o, "why", json_string(m->why ? m->why : "")) &&
            (!m->is_link || put(o, "isLink", json_true()))) /* only when set: older readers */
                return o;
        json_decref(o);
        return NULL;
}

static json_t *mounts_json(const plan *p) {
        json_t *a = json_array();
        for (size_t i = 0; a && i < p->n_mounts; i++)
                if (!append(a, mount_json(&p->mounts[i]))) {
                        json_decref(a);
                        return NULL;
                }
        return a;
}

static json_t *landlock_json(const plan *p) {
        json_t *a = json_array();
        for (size_t i = 0; a && i < p->n_landlock; i++) {
                json_t *o = json_object();
                if (!o || !put(o, "path", json_string(p->landlock[i].path)) ||
                    !put(o, "write", json_boolean(p->landlock[i].write))) {
                        json_decref(o);
                        json_decref(a);
                        return NULL;
                }
                if (!append(a, o)) {
                        json_decref(a);
                        return NULL;
                }
        }
        return a;
}

/* Names only, never values. */
static json_t *env_names_json(const strv *env) {
        json_t *a = json_array();
        for (size_t i = 0; a && i < env->n; i++) {
                const char *eq = strchr(env->v[i], '=');
                size_t n = eq ? (size_t) (eq - env->v[i]) : strlen(env->v[i]);
                if (!append(a, json_stringn(env->v[i], n))) {
                        json_decref(a);
                        return NULL;
                }
        }
        return a;
}

static json_t *limit_json(uint64_t v) {
        return v ? json_integer((json_int_t) v) : json_null();
}

static json_t *names_json(const plan *p) {
        json_t *o = json_object();
        if (o && put(o, "protected", strv_json(&p->names.protected)) &&
            put(o, "denyNames", strv_json(&p->names.deny_names)) &&
            put(o, "allowNames", strv_json(&p->names.allow_names)) &&
            put(o, "allowPaths", strv_json(&p->names.allow_paths)) &&
            put(o, "persistentRoots", strv_json(&p->names.persistent)) &&
            put(o, "denyNamesExempt", strv_json(&p->names.names_exempt)))
                return o;
        json_decref(o);
        return NULL;
}

static json_t *limits_json(const plan *p) {
        json_t *o = json_object();
        if (o && put(o, "timeoutMs", limit_json(p->timeout_ms)) &&
            put(o, "memoryBytes", limit_json(p->memory_bytes)) &&
            put(o, "pids", limit_json(p->pids)) &&
            put(o, "pidsDefault", json_boolean(p->pids_default)) &&
            put(o, "tmpBytes", limit_json(p->tmp_bytes)) &&
            put(o, "shmBytes", limit_json(p->shm_bytes)) &&
            put(o, "cpuSeconds", limit_json(p->cpu_seconds)) &&
            put(o, "cpus", limit_json(p->cpus)))
                return o;
        json_decref(o);
        return NULL;
}

/* {"root": path or null, "mounted": bool, "caches": [{"tool", "env", "value"}]} */
static json_t *tool_caches_json(const plan *p) {
        json_t *o = json_object(), *a = json_array();
        bool ok = o && a;
        for (size_t i = 0; ok && i < p->tool_cache_env.n; i++) {
                const char *e = p->tool_cache_env.v[i], *eq = strchr(e, '=');
                json_t *c = json_object();
                ok = c && put(c, "tool", json_string(p->tool_cache_tools.v[i])) &&
                     put(c, "env", json_stringn(e, eq ? (size_t) (eq - e) : strlen(e))) &&
                     put(c, "value", json_string(eq ? eq + 1 : ""));
                if (!ok)
                        json_decref(c);
                ok = ok && append(a, c);
        }
        ok = ok && put(o, "root", p->tool_cache_root ? json_string(p->tool_cache_root) : json_null()) &&
             put(o, "mounted", json_boolean(p->tool_cache_mounted));
        if (ok) {
                ok = put(o, "caches", a);
                a = NULL; /* stolen */
        }
        json_decref(a);
        if (!ok) {
                json_decref(o);
                return NULL;
        }
        return o;
}

/* {"hidden": [...], "exceptions": [...]}: blockReadsOutsideWorkdirs (plan-reads.c); both empty
 * when off. */
static json_t *read_narrowing_json(const plan *p) {
        json_t *o = json_object();
        if (o && put(o, "hidden", strv_json(&p->paths.narrowed)) &&
            put(o, "exceptions", strv_json(&p->paths.read_exceptions)))
                return o;
        json_decref(o);
        return NULL;
}

/* [{"env", "secret" | "broker", "hosts"}]: the variables the launch sets to a placeholder
 * (docs/policy.md, "Credentials"); never a value, which the plan does not hold. */
static json_t *credentials_json(const plan *p) {
        json_t *a = json_array();
        for (size_t i = 0; a && i < p->net.req.n_creds; i++) {
                const policy_cred *c = &p->net.req.creds[i];
                json_t *o = json_pack("{s:s, s:s, s:o}", "env", c->env,
                                      c->broker ? "broker" : "secret",
                                      c->broker ? c->broker : c->secret, "hosts",
                                      strv_json(&c->hosts));
                if (!o || json_array_append_new(a, o) < 0) {
                        json_decref(a);
                        return NULL;
                }
        }
        return a;
}

void *plan_to_json(const plan *p) {
        json_t *o = json_object();
        if (!o)
                return NULL;
        bool ok = put(o, "mode", json_string(cordon_mode_to_string(p->mode))) &&
                  put(o, "confined", json_boolean(p->mode != CORDON_MODE_DANGER_FULL_ACCESS)) &&
                  put(o, "workdir", json_string(p->workdir ? p->workdir : "")) &&
                  put(o, "writableRoots", strv_json(&p->writable_roots)) &&
                  put(o, "mounts", mounts_json(p)) && put(o, "landlock", landlock_json(p)) &&
                  put(o, "nameRules", names_json(p)) && put(o, "env", env_names_json(&p->env)) &&
                  put(o, "envScrubbed", strv_json(&p->env_scrubbed)) &&
                  put(o, "limits", limits_json(p)) && put(o, "toolCaches", tool_caches_json(p)) &&
                  put(o, "readNarrowing", read_narrowing_json(p)) &&
                  put(o, "credentials", credentials_json(p));
        if (!ok) {
                json_decref(o);
                return NULL;
        }
        return o;
}

/* ---- cordon_policy_to_json ------------------------------------------------------------------ */

/* $HOME from the given environment, else the password database. */
static int find_home(char *const *envp, char **ret) {
        const char *home = env_get(envp, "HOME");
        if (home && path_is_absolute(home)) {
                *ret = strdup(home);
                return *ret ? 0 : -ENOMEM;
        }
        struct passwd pw, *res = NULL;
        char buf[4096];
        fork_gate_enter(); /* NSS's locks: not reset in a child forked meanwhile */
        int e = getpwuid_r(geteuid(), &pw, buf, sizeof(buf), &res);
        fork_gate_leave();
        if (e != 0 || !res || !path_is_absolute(res->pw_dir))
                return -ENOENT;
        *ret = strdup(res->pw_dir);
        return *ret ? 0 : -ENOMEM;
}

static int add_plan(json_t *root, const cordon_policy *p, char *const *envp,
                    cordon_error *err) {
        _cleanup_free_ char *home = NULL;
        char cwd[PATH_MAX];
        int r = find_home(envp, &home);
        if (r < 0)
                return cordon_set_error(err, CORDON_POLICY_INVALID, r,
                                        "cannot find the home directory: set HOME");
        if (!getcwd(cwd, sizeof(cwd)))
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, errno,
                                        "cannot get the current directory: %s", strerror(errno));
        plan *pl = NULL;
        if ((r = plan_build(p, home, cwd, envp, &pl, err)) < 0)
                return r;
        json_t *pj = plan_to_json(pl);
        plan_free(pl);
        if (!put(root, "plan", pj))
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, ENOMEM, "out of memory");
        return 0;
}

int cordon_policy_to_json(const cordon_policy *p, unsigned flags, char *const *envp, char **ret,
                          cordon_error *err) {
        if (ret)
                *ret = NULL;
        if (!p || !ret)
                return cordon_set_error(err, CORDON_POLICY_INVALID, EINVAL,
                                        "cordon_policy_to_json: no policy");
        json_t *root = json_object();
        json_t *pol = flags & CORDON_JSON_LAYER ? policy_layer_to_json(p) : policy_to_json(p);
        if (!root || !put(root, "policy", pol)) {
                json_decref(root);
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, ENOMEM, "out of memory");
        }
        if (flags & CORDON_JSON_WITH_PLAN) {
                int r = add_plan(root, p, envp, err);
                if (r < 0) {
                        json_decref(root);
                        return r;
                }
        }
        char *s = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        json_decref(root);
        if (!s)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, ENOMEM, "out of memory");
        *ret = s;
        return 0;
}
