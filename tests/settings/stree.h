/* SPDX-License-Identifier: Apache-2.0 */
/* Temporary trees for the settings tests, under /var/tmp (never /tmp: the sandbox has a private
 * /tmp). A tree has ws/ (the workspace, the current directory of a run) and home/. */
#pragma once

#include <sys/types.h>

/* mkdtemp + ws/ + home/; returns the absolute root (malloc'ed); aborts the test on failure. */
char *stree_new(void);
void stree_remove(char *root); /* rm -rf and free */

/* "$root/rel" in a rotating set of eight buffers, so several fit in one expression. */
const char *stree_at(const char *root, const char *rel);

/* Writes `content` to root/rel (parents created 0755), then chmods it to `mode`. */
void stree_write(const char *root, const char *rel, const char *content, mode_t mode);
