/* SPDX-License-Identifier: Apache-2.0 */
/* The one walk to cordon's private directories beneath $HOME (.config/cordon/secrets and
 * below): the file store (secret-file.c) and the analytics key (src/run/analytics.c) use it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* Opens home/parts[0]/.../parts[n - 1] one component at a time with O_NOFOLLOW, creating each
 * missing one 0700 when `create`: a symbolic link planted at .config/cordon (by anyone who can
 * write the home directory, or a sandboxed command with a writable ~/.config) would otherwise
 * send a secret, or the read of one, to a place someone else chose. `home` must be absolute.
 * Returns 0 with *ret an O_RDONLY directory descriptor (close-on-exec), or -errno (-ENOENT when
 * a component is missing and !create; -ELOOP or -ENOTDIR for a link or a file in the way). The
 * caller checks the last directory's owner and mode. */
int secret_dir_open(const char *home, const char *const *parts, size_t n, bool create, int *ret);
