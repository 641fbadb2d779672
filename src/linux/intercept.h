/* SPDX-License-Identifier: Apache-2.0 */
/* Transparent egress interception inside the sandbox's network namespace (docs/design/network.md,
 * "Every TCP client"): every TCP connection the command opens to an address that is not the
 * namespace's own loopback, and every DNS query to any address, is redirected by the kernel to
 * the run's egress proxy, which judges it by the same rules as a proxied request. Installed by
 * the monitor once the namespace exists and before the command does; the command holds no
 * capability in the namespace, so it cannot remove or change the rules.
 *
 * Why this is safe by construction: the namespace has no interface but loopback. The default
 * routes this installs point at loopback too, so a packet the rules did not redirect (UDP other
 * than DNS, ICMP, raw IP) goes nowhere; the only way out is the proxy's process, which stays in
 * the host's namespace. The rules add a way to the proxy, never a way past it. */
#pragma once

#include <stdint.h>

/* Installs, in the calling process's network namespace (CAP_NET_ADMIN there, loopback up):
 *   - default routes (IPv4 and, when the kernel has it, IPv6) through loopback, with loopback
 *     as the source address, so connect() to any address reaches the NAT hook instead of
 *     failing with ENETUNREACH;
 *   - table inet cordon, chain output (type nat, hook output): UDP and TCP to port 53 at any
 *     address → the DNS responder on `dns_port`; any other TCP not to the loopback → `tcp_port`.
 * Returns 0 or -errno; a failure must fail the launch (the command would otherwise run with
 * clients that ignore proxy variables unable to connect, where the policy promised rules). */
int intercept_install(uint16_t tcp_port, uint16_t dns_port);

/* The nf_tables part alone (the probe: in a throw-away network namespace, where the routes do
 * not matter). Returns 0 or -errno. */
int intercept_rules_install(uint16_t tcp_port, uint16_t dns_port);
