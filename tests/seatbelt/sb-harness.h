/* SPDX-License-Identifier: Apache-2.0 */
/* A directory tree that looks like a developer's machine (a home with secrets, a git project, a
 * linked worktree, hostile names), placed below /tmp so macOS's /tmp -> /private/tmp can be
 * simulated, and the steps from a policy to a profile. */
#pragma once

#include "cordon/cordon.h"
#include "seatbelt/seatbelt.h"

/* Creates the tree below a fresh /tmp/cordon-sb-XXXXXX (the suffix is letters and digits only,
 * so tests can substitute it); aborts the test on failure. */
char *sbt_tree(void);
void sbt_remove(char *root); /* rm -rf and free */
/* "$root/rel" in a rotating set of eight buffers. */
const char *sbt_at(const char *root, const char *rel);

/* The resolver that simulates macOS on Linux (seatbelt_resolve_fn, userdata unused): symlinks
 * inside the tree are resolved for real, then /tmp, /var and /etc become /private/tmp,
 * /private/var and /private/etc. Other paths have no second spelling. */
int sbt_macos_resolve(void *userdata, const char *path, char **ret);

/* Loads `json` (every "@T@" replaced by `root`) as a policy, plans it with home
 * $root/home/alice and cwd $root/home/alice/project, and generates the profile with the macOS
 * resolver. Returns the profile, or NULL with `err` set. */
char *sbt_profile(const char *root, const char *json, uint16_t proxy_port, const char *tmpdir,
                  cordon_error *err);

/* `s` with every occurrence of `from` replaced by `to` (malloc'ed). */
char *sbt_replace(const char *s, const char *from, const char *to);
