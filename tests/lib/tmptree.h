/* SPDX-License-Identifier: Apache-2.0 */
/* Temporary directory trees for the tests (the planner's, the settings', the landlock backend's).
 * Paths are relative to the tree's root. A failing call fails the test (cmocka's assertions). */
#pragma once

#include <sys/types.h>

/* Creates a fresh directory below $CORDON_BUILD_DIR, or /var/tmp when that is unset or under
 * /tmp (the plan treats /tmp specially: the sandbox gets a private /tmp).
 * Returns a malloc'ed absolute path. */
char *tmptree_new(void);
/* Creates /var/tmp/cordon-NAME-XXXXXX (never below /tmp, never inside the source tree, whose
 * settings and repository a workspace would find) with ws/ (the workspace, the current directory
 * of a run) and home/. Returns a malloc'ed absolute path. */
char *tmptree_new_workspace(const char *name);
void tmptree_remove(char *root); /* rm -rf and free; NULL is a no-op */
void tmptree_rm_rf(const char *path); /* rm -rf (without following symlinks), best effort */

/* The absolute path "$root/rel" (static buffer, overwritten by the next call). */
const char *tmptree_path(const char *root, const char *rel);
/* "$root/rel" in a rotating set of eight buffers, so several can be used in one expression. */
const char *tmptree_at(const char *root, const char *rel);

void tmptree_mkdir(const char *root, const char *rel); /* mkdir -p, 0755 */
/* Writes `content` to root/rel (created 0644 less the umask; the parent must exist). */
void tmptree_file(const char *root, const char *rel, const char *content);
/* Writes `content` to root/rel (parents created 0755), then chmods it to `mode`. */
void tmptree_write(const char *root, const char *rel, const char *content, mode_t mode);
void tmptree_symlink(const char *root, const char *rel, const char *target);
