/* SPDX-License-Identifier: Apache-2.0 */
/* Sandbox-owned tool caches (docs/design/tool-caches.md): one directory of cordon's own, by
 * default $XDG_CACHE_HOME/cordon/tools, writable inside the sandbox, and environment variables
 * pointing each package manager's cache into it. The host's own caches (~/.npm, ~/.cache/pip,
 * ~/.cargo, ...) are never made writable: a cache is code the user runs later, and a command that
 * poisons one must only reach later *sandboxed* runs, never the host's tools. */
#pragma once

#include "policy/policy.h"
#include "policy/tool-cache-table.h"

/* Where the cache root of the calling user is, as an existing directory `anchor` (symlinks in it
 * are the user's own) plus a relative path of exactly three components that cordon creates and
 * checks itself: XDG_CACHE_HOME (absolute) from `envp` -> dirname + "basename/cordon/tools";
 * else, when `home` is a directory owned by the caller, home + ".cache/cordon/tools"; else
 * /var/tmp + "cordon-UID/cordon/tools" (users without a home directory). */
typedef struct tool_cache_root {
        char *anchor;
        char *rel;
        char *path; /* anchor + "/" + rel */
} tool_cache_root;

int tool_cache_root_find(char *const *envp, const char *home, tool_cache_root *ret);
void tool_cache_root_done(tool_cache_root *r);

/* Opens the cache root (O_DIRECTORY) walking `rel` from `anchor` one component at a time with
 * O_NOFOLLOW, each component owned by the caller's euid and writable by nobody else; with `create`
 * a missing component is made 0700 first. Returns the fd, 0 when a component is missing and
 * !create (*ret_fd = -1), or a negative errno with `err` naming the component (ELOOP: a symlink,
 * EPERM: another owner or group/world-writable). */
int tool_cache_root_open(const tool_cache_root *r, bool create, int *ret_fd, cordon_error *err);

/* For launchers, before plan_build(): creates the cache root when the policy uses tool caches.
 * The failure is fatal (LAUNCH_FAILED): a root that another user planted or that a symlink
 * redirects is never used, and silently running without caches would change what tools do. */
int tool_caches_prepare(const cordon_policy *resolved, char *const *envp, const char *home,
                        cordon_error *err);
