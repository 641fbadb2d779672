/* SPDX-License-Identifier: Apache-2.0 */
/* The landlock backend's second seccomp filter: which sockets may exist at all on a host where
 * the command shares the network namespace (docs/design/landlock-backend.md).
 *
 * The rule table (src/plan/seccomp-plan.c, rules flagged SECCOMP_PLAN_LANDLOCK_ON) refuses the
 * usual ways out — UDP, raw IP, SCTP, DCCP, MPTCP, listen(), MSG_FASTOPEN — and those refusals
 * are reported as violations. But its conditions are masked equality tests, which cannot say
 * "any other family" or "any other protocol". This filter is that allowlist, by ranges:
 *
 *   socket():     AF_UNIX, AF_VSOCK (both decided by the table), AF_INET and AF_INET6 with a
 *                 type the table names or SOCK_STREAM with protocol 0, TCP, or one the table
 *                 names, AF_NETLINK with NETLINK_ROUTE; anything else fails in the kernel
 *                 (EAFNOSUPPORT / ESOCKTNOSUPPORT / EPROTONOSUPPORT), as on a kernel without it;
 *   socketpair(): AF_UNIX only (EOPNOTSUPP).
 *
 * "Decided by the table" matters: the kernel returns the strongest action of all stacked
 * filters, and SECCOMP_RET_ERRNO outranks SECCOMP_RET_USER_NOTIF, so this filter must let
 * through what the table refuses, or those refusals would no longer reach the supervisor and be
 * reported. tests/linux/landlock/test-landlock-seccomp.c checks the two programs together on a grid of
 * (family, type, protocol). Calls of other ABIs pass here: the main filter refuses them whole. */
#pragma once

#include <linux/filter.h>
#include <stddef.h>

/* The program (static storage). */
const struct sock_filter *seccomp_net_filter(size_t *ret_n);

/* Loads it into the calling (single-threaded) process, which must have no_new_privs. Returns 0
 * or -errno. */
int seccomp_install_net_filter(void);
