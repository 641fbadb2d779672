/* SPDX-License-Identifier: Apache-2.0 */
/* The toolCaches policy key: on/off and the extra caches a policy adds (docs/policy.md,
 * docs/design/tool-caches.md). */
#include "policy/policy.h"
#include "policy/tool-cache-table.h"

#define TOOL_CACHE_NAME_MAX 32

/* Each variable is documented by its tool as the location of its download cache or store. Not
 * XDG_CACHE_HOME: every XDG program would move its cache, not only the tools listed here.
 * cargo: CARGO_HOME moves registry/ and git/ (the downloads) but also config.toml and bin/; the
 * host's ~/.cargo/bin (programs the user runs) stays read-only where it is and on PATH.
 * pnpm: PNPM_HOME (its store is $PNPM_HOME/store): pnpm 9 and 10 ignore pnpm_config_store_dir,
 * and npm_config_store_dir makes every npm command warn about an unknown setting.
 * clang: CLANG_MODULE_CACHE_PATH, the compiled module cache of clang and swiftc (Objective-C and
 * Swift modules; on macOS its default is in the per-user cache directory, not writable inside,
 * and a module another process loads later is code the sandbox must not write). */
const tool_cache_builtin policy_builtin_tool_caches[] = {
        { "npm", "npm_config_cache", "npm", NULL, false }, /* npx: <cache>/_npx */
        { "pnpm", "PNPM_HOME", "pnpm", NULL, false },
        { "yarn", "YARN_CACHE_FOLDER", "yarn/cache", NULL, false },
        { "yarn", "YARN_GLOBAL_FOLDER", "yarn/global", NULL, false }, /* yarn 2+ global cache */
        { "bun", "BUN_INSTALL_CACHE_DIR", "bun", NULL, false },
        { "pip", "PIP_CACHE_DIR", "pip", NULL, false },
        { "uv", "UV_CACHE_DIR", "uv", NULL, false },
        { "cargo", "CARGO_HOME", "cargo", NULL, false },
        { "go", "GOMODCACHE", "go/mod", NULL, false },
        { "go", "GOCACHE", "go/build", NULL, false },
        { "gradle", "GRADLE_USER_HOME", "gradle", NULL, false },
        { "maven", "MAVEN_OPTS", "maven/repository", "-Dmaven.repo.local=", true },
        { "clang", "CLANG_MODULE_CACHE_PATH", "clang/ModuleCache", NULL, false },
        { NULL, NULL, NULL, NULL, false },
};

bool tool_cache_is_builtin_tool(const char *name) {
        for (const tool_cache_builtin *t = policy_builtin_tool_caches; t->tool; t++)
                if (strcmp(t->tool, name) == 0)
                        return true;
        return false;
}

bool tool_cache_is_builtin_env(const char *env) {
        for (const tool_cache_builtin *t = policy_builtin_tool_caches; t->tool; t++)
                if (strcmp(t->env, env) == 0)
                        return true;
        return false;
}

const char *policy_check_tool_cache_name(const char *s) {
        if (!s || !*s)
                return "must not be empty";
        if (strnlen(s, TOOL_CACHE_NAME_MAX + 1) > TOOL_CACHE_NAME_MAX)
                return "is longer than 32 bytes";
        if (!((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= '0' && s[0] <= '9')))
                return "must start with a lower-case letter or a digit";
        /* A directory name below the cache root: no '/', no "..", nothing to quote. */
        if (strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789._-") != strlen(s))
                return "may hold only a-z, 0-9, '.', '_' and '-'";
        if (tool_cache_is_builtin_tool(s))
                return "is a built-in tool cache already";
        return NULL;
}

/* Variables cordon sets itself for the proxies (src/plan/env.c), and the built-in caches'. */
static const char *const reserved_env[] = {
        "HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy",
        "NO_PROXY", "no_proxy", "GIT_SSH_COMMAND", NULL,
};

const char *policy_check_tool_cache_env(const char *s) {
        const char *why = policy_check_env_name(s);
        if (why)
                return why;
        for (size_t i = 0; reserved_env[i]; i++)
                if (strcmp(reserved_env[i], s) == 0)
                        return "is set by cordon for the egress proxy";
        if (tool_cache_is_builtin_env(s))
                return "is set by a built-in tool cache already";
        return NULL;
}

int policy_set_tool_caches(cordon_policy *p, bool enabled) {
        if (!p)
                return -EINVAL;
        p->tool_caches_set = true;
        p->tool_caches_enabled = enabled;
        return 0;
}

static int replace(char **slot, const char *v) {
        char *c = strdup(v);
        if (!c)
                return -ENOMEM;
        free(*slot);
        *slot = c;
        return 0;
}

int policy_add_tool_cache(cordon_policy *p, const char *name, const char *env) {
        if (!p || policy_check_tool_cache_name(name) || policy_check_tool_cache_env(env))
                return -EINVAL;
        for (size_t i = 0; i < p->n_tool_caches; i++) {
                if (strcmp(p->tool_caches[i].name, name) == 0)
                        return replace(&p->tool_caches[i].env, env);
        }
        if (p->n_tool_caches >= POLICY_MAX_LIST)
                return -E2BIG;
        _cleanup_free_ char *n = strdup(name), *e = strdup(env);
        if (!n || !e)
                return -ENOMEM;
        policy_tool_cache *nt = realloc(p->tool_caches, (p->n_tool_caches + 1) * sizeof(*nt));
        if (!nt)
                return -ENOMEM;
        p->tool_caches = nt;
        p->tool_caches[p->n_tool_caches++] = (policy_tool_cache) { TAKE_PTR(n), TAKE_PTR(e) };
        return 0;
}

int policy_caches_merge(cordon_policy *dst, const cordon_policy *src) {
        if (src->tool_caches_set) {
                dst->tool_caches_set = true;
                dst->tool_caches_enabled = src->tool_caches_enabled;
        }
        for (size_t i = 0; i < src->n_tool_caches; i++) {
                int r = policy_add_tool_cache(dst, src->tool_caches[i].name,
                                              src->tool_caches[i].env);
                if (r < 0)
                        return r;
        }
        return 0;
}

void policy_caches_clear(cordon_policy *p) {
        for (size_t i = 0; i < p->n_tool_caches; i++) {
                free(p->tool_caches[i].name);
                free(p->tool_caches[i].env);
        }
        free(p->tool_caches);
        p->tool_caches = NULL;
        p->n_tool_caches = 0;
}

/* Off with "toolCaches": false, and outside workspace-write: the read-only modes promise that a
 * run changes nothing but its runnerStateDirs, and danger-full-access uses the host's own. */
bool policy_tool_caches_on(const cordon_policy *p) {
        if (p->tool_caches_set && !p->tool_caches_enabled)
                return false;
        return !p->mode_set || p->mode == CORDON_MODE_WORKSPACE_WRITE;
}
