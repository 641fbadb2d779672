/* SPDX-License-Identifier: Apache-2.0 */
/* The microvm guest's network (docs/design/microvm.md "Confinement"): the one virtio-net device
 * on qemu's user-mode network (libslirp), whose sockets are made inside the native sandbox's
 * network namespace, so the guest's only route is the run's egress proxy and the transparent
 * interception. Part of the static guest agent. */
#pragma once

#include <stddef.h>

/* Loopback and eth0 up, eth0 10.0.2.15/24 with the default route through slirp's 10.0.2.2, and
 * `root`/etc/resolv.conf covered by one naming slirp's resolver 10.0.2.3 (which forwards to the
 * sandbox's). 0, or -1 with the reason in `why`. */
int guest_net_up(const char *root, char *why, size_t size);
