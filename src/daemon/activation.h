/* SPDX-License-Identifier: Apache-2.0 */
/* Socket activation for cordond: systemd's sd_listen_fds(3) protocol, implemented by hand (no
 * libsystemd). contrib/systemd/cordond.socket hands the daemon its listening socket as fd 3. */
#pragma once

#include <stddef.h>

#define ACTIVATION_FD 3 /* SD_LISTEN_FDS_START */

/* When LISTEN_PID names this process and LISTEN_FDS is "1", checks that fd 3 is a listening
 * AF_UNIX stream socket bound to a path in a private directory of ours (mode 0700, no group or
 * other bits), makes it non-blocking and close-on-exec, writes its path into `path`, and returns
 * 3. The variables LISTEN_PID, LISTEN_FDS and LISTEN_FDNAMES are removed from the environment
 * either way, so no exec inherits them.
 * Returns -ENOENT when the daemon was not socket-activated (no variables, or LISTEN_PID names
 * another process); -EINVAL when the variables are malformed or LISTEN_FDS is not 1 (cordond
 * serves exactly one socket); -ENOTSOCK, -EPROTOTYPE or -EAFNOSUPPORT when fd 3 is not a
 * listening Unix stream socket; -EPERM when its directory is not private; -ENAMETOOLONG. */
int activation_listen_fd(char *path, size_t size);
