/* SPDX-License-Identifier: Apache-2.0 */
/* The administrator's managed settings at a launch (docs/settings.md, "Library callers"). A
 * harness that builds its own policy (cordon_policy_new_default and the setters) instead of
 * resolving settings would otherwise escape them: the launch applies them itself, read with the
 * resolver's own loader and ownership check and stacked with the precedence the resolver gives
 * them, and refuses what their allowUnsandboxedCommands forbids. Only the caller's explicit
 * opt-out (CORDON_SPAWN_NO_MANAGED_SETTINGS, CORDON_SESSION_NO_MANAGED_SETTINGS) skips this;
 * a policy that cordon_settings_resolve produced holds them already (managed_applied). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "settings/settings.h"

const char *settings_managed_test_path;

static void settings_file_freep(settings_file **f) {
        settings_file_free(*f);
}

static void policy_freep(cordon_policy **p) {
        cordon_policy_free(*p);
}

static int oom(cordon_error *err) {
        return cordon_set_error(err, CORDON_LAUNCH_FAILED, ENOMEM, "out of memory");
}

/* What would run this command outside the sandbox, or NULL. */
static const char *unconfined_reason(const cordon_policy *p, cordon_backend backend) {
        if (backend == CORDON_BACKEND_NONE)
                return "backend none";
        if (p->mode_set && p->mode == CORDON_MODE_DANGER_FULL_ACCESS)
                return "mode danger-full-access";
        return NULL;
}

/* allowUnsandboxedCommands: false: the caller's backend none, or a danger-full-access from its
 * policy, would run the command outside the sandbox the administrator mandates. */
static int check_unconfined(const settings_file *f, const cordon_policy *p,
                            cordon_backend backend, cordon_error *err) {
        const char *what = unconfined_reason(p, backend);
        if (!what || !f->allow_unsandboxed.set || f->allow_unsandboxed.value)
                return 0;
        char where[PATH_MAX + 128];
        settings_switch_where(SETTINGS_LAYER_MANAGED, f->origin, &f->allow_unsandboxed, where,
                              sizeof(where));
        return settings_refuse_unconfined(what, where, err);
}

/* A managed file reached through a symlink stays unwritable where the link leads, as the resolver
 * protects every settings file it read (settings-resolve.c, protection_layer): a target inside a
 * writable root would otherwise let the command choose the next launch's managed settings. */
static int protect_target(cordon_policy *p, const char *path) {
        _cleanup_free_ char *real = realpath(path, NULL);
        if (!real || strcmp(real, path) == 0)
                return 0;
        return cordon_policy_add_protected_path(p, real);
}

int settings_managed_apply(const cordon_policy *policy, const char *cwd, const char *home,
                           cordon_backend backend, cordon_policy **ret, cordon_error *err) {
        *ret = NULL;
        if (policy->managed_applied)
                return 0;
        const char *path = settings_managed_test_path ? settings_managed_test_path
                                                      : SETTINGS_MANAGED_FILE;
        _cleanup_(settings_file_freep) settings_file *f = NULL;
        /* optional: a missing file (or /etc/cordon) is no managed settings at all; a file that
         * exists and cannot be read, parsed or trusted fails the launch, never ignored. */
        int r = settings_file_load(SETTINGS_LAYER_MANAGED, path, true, true, cwd, home, &f, err);
        if (r < 0 || !f)
                return r;
        _cleanup_(policy_freep) cordon_policy *applied = policy_dup(policy);
        if (!applied)
                return oom(err);
        /* Over the caller's whole policy, as the resolver stacks them over every other layer:
         * their scalars win, their lists are added (no deny of the caller's is removed). */
        r = policy_merge(applied, f->layer);
        if (r >= 0)
                r = protect_target(applied, path);
        if (r == -E2BIG)
                return cordon_set_error(err, CORDON_POLICY_INVALID, E2BIG,
                                        "applying the managed settings %s makes a list longer "
                                        "than %u entries",
                                        f->origin, POLICY_MAX_LIST);
        if (r < 0)
                return r == -ENOMEM ? oom(err)
                                    : cordon_set_error(err, CORDON_POLICY_INVALID, -r,
                                                       "applying the managed settings %s: %s",
                                                       f->origin, strerror(-r));
        if ((r = check_unconfined(f, applied, backend, err)) < 0)
                return r;
        applied->managed_applied = true;
        *ret = TAKE_PTR(applied);
        return 0;
}
