/* SPDX-License-Identifier: Apache-2.0 */
/* cordond's server (server.c) as main.c uses it. */
#pragma once

#include "daemon/daemon.h"

/* Creates PATH's directory (0700) if needed, refuses one that is not private and ours, replaces a
 * stale socket, and listens. Returns the listening fd or -errno (-EPERM: the directory is not
 * private). */
int server_open_socket(const char *path);
int server_setup_signals(daemon_t *d);
/* Serves until SIGTERM/SIGINT/SIGHUP, then destroys every session. */
int server_run(daemon_t *d);
void server_probe(daemon_t *d, client *c, const proto_request *rq);

/* fd-limit.c: raises the daemon's soft RLIMIT_NOFILE to the hard limit (two descriptors per
 * session) and gives every child forked after it the user's own soft limit back. */
void daemon_raise_nofile(void);
