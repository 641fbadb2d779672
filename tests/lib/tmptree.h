/* SPDX-License-Identifier: Apache-2.0 */
/* Temporary directory trees for the planner tests. Paths are relative to the tree's root. */
#pragma once

#include <stdbool.h>

/* Creates a fresh directory below $CORDON_BUILD_DIR, or /var/tmp when that is under /tmp (the
 * plan treats /tmp specially).
 * Returns a malloc'ed absolute path; aborts the test on failure. */
char *tmptree_new(void);
void tmptree_remove(char *root); /* rm -rf and free */

/* Each returns the absolute path (static buffer, overwritten by the next call). */
const char *tmptree_path(const char *root, const char *rel);
void tmptree_mkdir(const char *root, const char *rel);       /* mkdir -p */
void tmptree_file(const char *root, const char *rel, const char *content);
void tmptree_symlink(const char *root, const char *rel, const char *target);

/* "$root/rel" in a rotating set of eight buffers, so several can be used in one expression. */
const char *tmptree_at(const char *root, const char *rel);
