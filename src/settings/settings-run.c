/* SPDX-License-Identifier: Apache-2.0 */
/* What the resolved settings decide about a run: whether it may be unconfined, which backend to
 * ask for when failIfUnavailable is false, and whether an excludedCommands entry lets it run
 * outside the sandbox. The caller (CLI, daemon) acts on the answers and says so. */
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>

#include "settings/excluded.h"
#include "settings/settings-resolve.h"
#include "util/platform.h"

cordon_backend cordon_settings_backend(const cordon_settings *s, cordon_backend requested,
                                       const cordon_probe *probe, const char **ret_why) {
        if (ret_why)
                *ret_why = NULL;
        /* Only the unspecified default may step down (docs/design/backends.md), only to none, and
         * only when a layer allowed to loosen said failIfUnavailable: false. */
        if (!s || !probe || requested != CORDON_BACKEND_AUTO || s->fail_if_unavailable.value ||
            !s->allow_unsandboxed.value || !s->backend_why || probe_auto_backend(probe) >= 0)
                return requested;
        if (ret_why)
                *ret_why = s->backend_why;
        return CORDON_BACKEND_NONE;
}

/* ---- excludedCommands -------------------------------------------------------------------------- */

/* The PATH the command will search: env.set's when the policy sets one, else the caller's. */
static const char *env_path(const cordon_policy *p, char *const *envp) {
        for (size_t i = 0; i < p->n_env_set; i++)
                if (strcmp(p->env_set[i].name, "PATH") == 0)
                        return p->env_set[i].value;
        const char *path = env_get(envp, "PATH");
        return path ? path : "/usr/local/bin:/usr/bin:/bin";
}

static bool is_executable_file(const char *path) {
        struct stat st;
        return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* The file execvp(3) would run for argv0, resolved (realpath), or -ENOENT. */
static int find_executable(const cordon_settings *s, const char *argv0, char *const *envp,
                           char ret[PATH_MAX]) {
        char cand[PATH_MAX];
        /* Relative to where the command starts: guestWorkdir when a layer sets it. */
        const char *dir = s->resolved->workdir ? s->resolved->workdir : s->cwd;
        if (strchr(argv0, '/')) {
                if (snprintf(cand, sizeof(cand), "%s%s%s", argv0[0] == '/' ? "" : dir,
                             argv0[0] == '/' ? "" : "/", argv0) >= (int) sizeof(cand))
                        return -ENAMETOOLONG;
                return is_executable_file(cand) && realpath(cand, ret) ? 0 : -ENOENT;
        }
        const char *p = env_path(s->resolved, envp);
        for (;;) {
                size_t n = strcspn(p, ":");
                /* An empty PATH element means the current directory, as for execvp. */
                int w = n ? snprintf(cand, sizeof(cand), "%.*s/%s", (int) n, p, argv0)
                          : snprintf(cand, sizeof(cand), "%s/%s", dir, argv0);
                if (w > 0 && w < (int) sizeof(cand) && is_executable_file(cand) &&
                    realpath(cand, ret))
                        return 0;
                if (!p[n])
                        return -ENOENT;
                p += n + 1;
        }
}

static bool beneath_root(const char *exe, const char *root) {
        char real[PATH_MAX];
        return path_startswith(exe, root) || (realpath(root, real) && path_startswith(exe, real));
}

/* An executable the sandbox could have written (inside a writable root) would run outside it:
 * the classic way an excluded command is turned against its author. */
static bool in_writable_root(const cordon_settings *s, const char *exe) {
        const cordon_policy *p = s->resolved;
        bool rw_mode = !p->mode_set || p->mode == CORDON_MODE_WORKSPACE_WRITE;
        for (size_t i = 0; rw_mode && i < p->n_binds; i++)
                if (!p->binds[i].read_only && beneath_root(exe, p->binds[i].host_path))
                        return true;
        for (size_t i = 0; i < p->runner_state_dirs.n; i++)
                if (beneath_root(exe, p->runner_state_dirs.v[i]))
                        return true;
        return false;
}

/* An unsandboxed command inherits env.set: from the project file (which comes with the
 * repository) LD_PRELOAD, PATH, BASH_ENV and the like would choose what it runs. */
static bool project_sets_env(const cordon_settings *s) {
        for (size_t i = 0; i < s->n_layers; i++)
                if (s->layers[i].kind == SETTINGS_LAYER_PROJECT && s->layers[i].policy->n_env_set)
                        return true;
        return false;
}

int cordon_settings_match_excluded(const cordon_settings *s, char *const argv[],
                                   char *const *envp, cordon_excluded_match *ret,
                                   const char **ret_refusal) {
        const char *refusal = NULL;
        if (ret_refusal)
                *ret_refusal = NULL;
        if (!s || !argv || !ret)
                return -EINVAL;
        excluded_refusal why = excluded_check_argv(argv);
        if (why != EXCLUDED_OK) {
                if (ret_refusal)
                        *ret_refusal = excluded_refusal_to_string(why);
                return 0;
        }
        const settings_excl *m = NULL;
        for (size_t i = 0; i < s->n_excluded && !m; i++)
                if (excluded_equal(s->excluded[i].entry->words, argv))
                        m = &s->excluded[i];
        if (!m)
                return 0;
        char exe[PATH_MAX];
        if (project_sets_env(s))
                refusal = "the project settings set environment variables (env.set) it would "
                          "inherit unsandboxed";
        else if (find_executable(s, argv[0], envp ? envp : environ, exe) < 0)
                refusal = "its executable was not found";
        else if (in_writable_root(s, exe))
                refusal = "its executable lies in a directory the sandbox can write";
        if (refusal) {
                if (ret_refusal)
                        *ret_refusal = refusal;
                return 0;
        }
        const settings_layer *l = &s->layers[m->layer];
        *ret = (cordon_excluded_match){ m->entry->text, settings_layer_name(l->kind),
                                        settings_layer_origin(l), m->entry->pos.line,
                                        m->entry->pos.column };
        return 1;
}
