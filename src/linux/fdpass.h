/* SPDX-License-Identifier: Apache-2.0 */
/* Passing one file descriptor over a connected Unix socket (SCM_RIGHTS). */
#pragma once

int fd_send(int sock, int fd);
/* Returns the received fd (O_CLOEXEC) or -errno; -ECONNRESET when the peer closed first. */
int fd_recv(int sock);
