/* SPDX-License-Identifier: Apache-2.0 */
/* The command's environment: the caller's, minus secret-looking variables
 * (docs/design/threat-model.md), plus env.set. A prompt-injected command's first move is `env`; API
 * keys and agent sockets must not be there. */
#include <fnmatch.h>
#include <stdio.h>

#include "plan/plan-internal.h"

#define ENV_MAX_VARS 4096
#define ENV_MAX_BYTES (1u << 20)

/* Name globs, matched case-sensitively with fnmatch(3). Sockets and bus addresses are here too:
 * ssh-agent, gpg-agent, D-Bus, Docker, tmux and screen let a command act with the user's
 * credentials or type into the user's other terminals without reading a single secret. */
const char *const plan_default_env_scrub[] = {
        "*_TOKEN", "*_TOKEN_*", "*_SECRET", "*_SECRET_*", "*SECRET_KEY*", "*_PASSWORD",
        "*_PASSWD", "*_API_KEY", "*_APIKEY", "*_ACCESS_KEY*", "*_PRIVATE_KEY*", "*_CREDENTIALS",
        "*_AUTH*", "AWS_*", "GITHUB_TOKEN", "GH_TOKEN", "GITLAB_TOKEN", "NPM_TOKEN",
        "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GOOGLE_APPLICATION_CREDENTIALS", "SSH_AUTH_SOCK",
        "GPG_AGENT_INFO", "DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR", "DOCKER_HOST",
        "KUBECONFIG", "TMUX", "TMUX_PANE", "STY",
        NULL,
};

/* Caught by "*_AUTH*" but holding no secret; commits need them. Only the built-in list yields to
 * these: a policy's own env.scrub still removes them. */
static const char *const builtin_exempt[] = {
        "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_AUTHOR_DATE", NULL,
};

static bool in_list(const char *const *list, const char *name) {
        for (size_t i = 0; list[i]; i++)
                if (strcmp(list[i], name) == 0)
                        return true;
        return false;
}

static bool matches_any(const char *const *globs, size_t n, const char *name) {
        for (size_t i = 0; i < n && globs[i]; i++)
                if (fnmatch(globs[i], name, 0) == 0)
                        return true;
        return false;
}

static bool should_scrub(const cordon_policy *pol, const char *name) {
        if (strv_contains(&pol->env_pass, name))
                return false;
        if (matches_any(plan_default_env_scrub, SIZE_MAX, name) &&
            !in_list(builtin_exempt, name))
                return true;
        return matches_any((const char *const *) pol->env_scrub.v, pol->env_scrub.n, name);
}

static int check_size(const strv *env, cordon_error *err, const char *which) {
        size_t bytes = 0;
        for (size_t i = 0; i < env->n; i++)
                bytes += strlen(env->v[i]) + 1;
        if (env->n > ENV_MAX_VARS || bytes > ENV_MAX_BYTES)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, E2BIG,
                                        "%s environment is too large (%zu variables, %zu bytes; "
                                        "at most %u and %u); unset what the command does not "
                                        "need",
                                        which, env->n, bytes, ENV_MAX_VARS, ENV_MAX_BYTES);
        return 0;
}

/* Filters the caller's environment into p->env. */
static int filter_environ(const cordon_policy *pol, char *const *envp, plan *p,
                          cordon_error *err) {
        size_t count = 0, bytes = 0;
        for (char *const *e = envp; e && *e; e++) {
                /* Counted before anything is copied: a huge environment costs nothing. */
                bytes += strlen(*e) + 1;
                if (++count > ENV_MAX_VARS || bytes > ENV_MAX_BYTES)
                        return cordon_set_error(err, CORDON_LAUNCH_FAILED, E2BIG,
                                                "the caller's environment is larger than %u "
                                                "variables or %u bytes; unset what the command "
                                                "does not need",
                                                ENV_MAX_VARS, ENV_MAX_BYTES);
                const char *eq = strchr(*e, '=');
                if (!eq || eq == *e)
                        continue; /* not NAME=value: nothing a program could look up */
                _cleanup_free_ char *name = strndup(*e, (size_t) (eq - *e));
                if (!name)
                        return -ENOMEM;
                /* Keep the first of duplicate names, as getenv() does; a second copy could
                 * smuggle a different value past a program that reads the last one. */
                if (env_find(p->env.v, name) >= 0)
                        continue;
                int r = should_scrub(pol, name) ? strv_push_unique(&p->env_scrubbed, name)
                                                : strv_push(&p->env, *e);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int apply_set(const cordon_policy *pol, plan *p) {
        for (size_t i = 0; i < pol->n_env_set; i++) {
                int r = strv_env_set(&p->env, pol->env_set[i].name, pol->env_set[i].value);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Every client finds the proxies (docs/design/network.md). NO_PROXY is set empty on purpose: the
 * usual "localhost,127.0.0.1,..." would send clients for an allowed local dev server straight into
 * the sandbox's own, empty loopback; through the proxy they reach it when the policy allows it.
 * Inherited values are dropped: they name proxies the sandbox cannot reach. git over ssh needs no
 * setting: plain ssh's connection is redirected to the proxy (src/linux/intercept.c), so a
 * GIT_SSH_COMMAND of the user's own (a key, options) is left as it is. */
static const char *const proxy_env[] = {
        "HTTP_PROXY=" PLAN_PROXY_HTTP_URL,
        "HTTPS_PROXY=" PLAN_PROXY_HTTP_URL,
        "http_proxy=" PLAN_PROXY_HTTP_URL,
        "https_proxy=" PLAN_PROXY_HTTP_URL,
        "ALL_PROXY=" PLAN_PROXY_SOCKS_URL,
        "all_proxy=" PLAN_PROXY_SOCKS_URL,
        "NO_PROXY=",
        "no_proxy=",
        NULL,
};
static const char *const proxy_env_drop[] = { "FTP_PROXY", "ftp_proxy", "RSYNC_PROXY",
                                              "GRPC_PROXY", "grpc_proxy", NULL };

/* TLS inspection (docs/design/network.md, "TLS inspection"): when some host has request rules,
 * the native backend mounts the system bundle with the session CA after it over the system
 * bundle's own path (src/linux/tls-bundle.h), and the common clients are pointed at that path,
 * including those that carry a bundle of their own (pip's certifi, Node's built-in list). */
#define PLAN_CA_BUNDLE "/etc/ssl/certs/ca-certificates.crt"
static const char *const tls_env[] = {
        "SSL_CERT_FILE=" PLAN_CA_BUNDLE,       "REQUESTS_CA_BUNDLE=" PLAN_CA_BUNDLE,
        "NODE_EXTRA_CA_CERTS=" PLAN_CA_BUNDLE, "GIT_SSL_CAINFO=" PLAN_CA_BUNDLE,
        "CURL_CA_BUNDLE=" PLAN_CA_BUNDLE,      "PIP_CERT=" PLAN_CA_BUNDLE,
        "CARGO_HTTP_CAINFO=" PLAN_CA_BUNDLE,   NULL,
};

static int set_all(plan *p, const char *const *vars) {
        for (size_t i = 0; vars[i]; i++) {
                char name[64];
                size_t n = strcspn(vars[i], "=");
                (void) snprintf(name, sizeof(name), "%.*s", (int) n, vars[i]);
                (void) strv_env_unset(&p->env, name);
                int r = strv_push(&p->env, vars[i]);
                if (r < 0)
                        return r;
        }
        return 0;
}

int plan_proxy_env(plan *p) {
        for (size_t i = 0; proxy_env_drop[i]; i++)
                (void) strv_env_unset(&p->env, proxy_env_drop[i]);
        int r = set_all(p, proxy_env);
        return r < 0 || !policy_req_terminates(&p->net.req) ? r : set_all(p, tls_env);
}

int plan_env(const cordon_policy *policy, char *const *envp, plan *p, cordon_error *err) {
        int r = filter_environ(policy, envp, p, err);
        if (r < 0)
                return r;
        if ((r = apply_set(policy, p)) < 0)
                return r;
        return check_size(&p->env, err, "the command's");
}
