/* SPDX-License-Identifier: Apache-2.0 */
/* A strict reader for git's configuration syntax, just enough to find the keys that make git run
 * or read a file the sandboxed command could write: core.hooksPath, core.fsmonitor and the include
 * paths. Pure: text in, values out; src/plan/plan-git.c decides what to protect. */
#pragma once

#include "util/util.h"

/* Bounds: the planner reads at most this much of one config file, and takes at most this many
 * values of interest from it (a real config has one or two). */
#define GITCONFIG_MAX_SIZE (1024 * 1024)
#define GITCONFIG_MAX_VALUES 64

typedef struct gitconfig_values {
        strv hooks_path; /* every core.hooksPath value, in file order (git uses the last one) */
        strv fsmonitor;  /* every core.fsmonitor value */
        strv include;    /* include.path and includeIf.<any condition>.path values */
} gitconfig_values;

/* Parses `len` bytes of config text the way git's config.c does (sections case-insensitive,
 * `[core "x"]` and `[core.x]` are not [core], quoted values, backslash escapes, # and ;
 * comments, continuation lines, a UTF-8 BOM) and appends the values of interest to `ret`. Keys
 * without a value ("hooksPath" alone) are skipped: git reads them as boolean true, an error for a
 * path. On anything git would reject it returns -EINVAL and leaves `ret` untouched (git refuses
 * to run with such a file, so no hook or monitor from it runs either); -E2BIG above
 * GITCONFIG_MAX_SIZE bytes or GITCONFIG_MAX_VALUES values; -ENOMEM. */
int gitconfig_parse(const char *text, size_t len, gitconfig_values *ret);
void gitconfig_values_done(gitconfig_values *v);

/* Vets the config of a repository created inside the sandbox (docs/design/git-repos.md): 1 when
 * it holds a key that makes git run a program or read a file the config names (core.fsmonitor,
 * core.hooksPath, filter drivers, include paths, ...), *ret_key then pointing at a static string
 * naming it ("core.fsmonitor", "filter.*.clean", "pager.*"); 0 when it holds none. core.worktree passes when it names a place inside one
 * of `roots` resolved from `git_dir` (a submodule's "../../../sub"). -EINVAL for anything git's
 * parser rejects or this reader cannot follow (the caller refuses: fail closed), -E2BIG above
 * GITCONFIG_MAX_SIZE, -ENOMEM. */
int gitconfig_vet(const char *text, size_t len, const char *git_dir, const strv *roots,
                  const char **ret_key);

/* As gitconfig_vet(), for a config that replaces `old` (old_len bytes; NULL: none): a dangerous
 * entry that `old` holds with the same value passes (`git config user.name x` in a repository
 * whose config already names the user's hooksPath rewrites that line too). */
int gitconfig_vet_replacing(const char *text, size_t len, const char *old, size_t old_len,
                            const char *git_dir, const strv *roots, const char **ret_key);

/* `s` is one of the key names gitconfig_vet() reports (the rule of such a refusal). */
bool gitconfig_is_vet_key(const char *s);

/* Whether git reads `value` as a boolean (true/yes/on/false/no/off in any case, "", or an
 * integer with an optional k/m/g unit): core.fsmonitor then means the built-in daemon or off,
 * not a command. */
bool gitconfig_is_bool(const char *value);
