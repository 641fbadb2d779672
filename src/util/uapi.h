/* SPDX-License-Identifier: Apache-2.0 */
/* Kernel UAPI definitions that Debian 12's linux-libc-dev (6.1) lacks. Everything a newer header
 * might also define is #ifndef-guarded; values are copied from the kernel's include/uapi/ (they
 * are ABI and never change). Structs that grew after 6.1 get a cordon_ name, because a struct
 * cannot be guarded and the system header already defines the short 6.1 layout.
 *
 * Whether the running kernel supports any of this is decided by probing (src/linux/probe.c),
 * never by the kernel version.
 *
 * Constants only, no code: it sits in util, below every layer, because the pure planner writes
 * Landlock rights as data (src/plan/landlock-plan.c) that the Linux backend applies, and both must
 * spell them the same. */
#pragma once

#include <linux/landlock.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <linux/types.h>
#include <sys/syscall.h>

/* ---- Syscall numbers (asm-generic table, identical on every architecture since 5.1) ------- */
#ifndef __NR_openat2
#define __NR_openat2 437
#endif
#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#endif
#ifndef __NR_landlock_add_rule
#define __NR_landlock_add_rule 445
#endif
#ifndef __NR_landlock_restrict_self
#define __NR_landlock_restrict_self 446
#endif

/* ---- Landlock ------------------------------------------------------------------------------
 * ABI history: 1 (5.13) base fs rights; 2 (5.19) REFER; 3 (6.2) TRUNCATE; 4 (6.7) TCP bind/connect;
 * 5 (6.10) IOCTL_DEV; 6 (6.12) abstract-unix-socket and signal scoping; 7 (6.15) audit log flags. */
#ifndef LANDLOCK_CREATE_RULESET_VERSION
#define LANDLOCK_CREATE_RULESET_VERSION (1U << 0)
#endif
#ifndef LANDLOCK_CREATE_RULESET_ERRATA
#define LANDLOCK_CREATE_RULESET_ERRATA (1U << 1)
#endif

#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13) /* ABI 2 */
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14) /* ABI 3 */
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15) /* ABI 5 */
#endif

#ifndef LANDLOCK_ACCESS_NET_BIND_TCP
#define LANDLOCK_ACCESS_NET_BIND_TCP (1ULL << 0) /* ABI 4 */
#endif
#ifndef LANDLOCK_ACCESS_NET_CONNECT_TCP
#define LANDLOCK_ACCESS_NET_CONNECT_TCP (1ULL << 1) /* ABI 4 */
#endif

#ifndef LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0) /* ABI 6 */
#endif
#ifndef LANDLOCK_SCOPE_SIGNAL
#define LANDLOCK_SCOPE_SIGNAL (1ULL << 1) /* ABI 6 */
#endif

#ifndef LANDLOCK_RESTRICT_SELF_LOG_SAME_EXEC_OFF
#define LANDLOCK_RESTRICT_SELF_LOG_SAME_EXEC_OFF (1U << 0) /* ABI 7 */
#endif
#ifndef LANDLOCK_RESTRICT_SELF_LOG_NEW_EXEC_ON
#define LANDLOCK_RESTRICT_SELF_LOG_NEW_EXEC_ON (1U << 1) /* ABI 7 */
#endif
#ifndef LANDLOCK_RESTRICT_SELF_LOG_SUBDOMAINS_OFF
#define LANDLOCK_RESTRICT_SELF_LOG_SUBDOMAINS_OFF (1U << 2) /* ABI 7 */
#endif

/* enum landlock_rule_type member LANDLOCK_RULE_NET_PORT (ABI 4): an enum member cannot be tested
 * with #ifdef, so it gets our own name. */
#define CORDON_LANDLOCK_RULE_NET_PORT 2

/* struct landlock_ruleset_attr as of ABI 6. The kernel accepts any size up to its own and checks
 * that unknown trailing bytes are zero, so passing sizeof() of this struct works on ABI 1..7 as
 * long as fields the kernel does not know stay 0 (the caller masks them by the probed ABI). */
struct cordon_landlock_ruleset_attr {
        __u64 handled_access_fs;
        __u64 handled_access_net; /* ABI 4 */
        __u64 scoped;             /* ABI 6 */
};

/* struct landlock_net_port_attr (ABI 4). */
struct cordon_landlock_net_port_attr {
        __u64 allowed_access;
        __u64 port;
};

/* ---- seccomp ------------------------------------------------------------------------------- */
#ifndef SECCOMP_GET_ACTION_AVAIL
#define SECCOMP_GET_ACTION_AVAIL 2
#endif
#ifndef SECCOMP_GET_NOTIF_SIZES
#define SECCOMP_GET_NOTIF_SIZES 3
#endif
#ifndef SECCOMP_RET_USER_NOTIF
#define SECCOMP_RET_USER_NOTIF 0x7fc00000U /* 5.0 */
#endif
#ifndef SECCOMP_FILTER_FLAG_NEW_LISTENER
#define SECCOMP_FILTER_FLAG_NEW_LISTENER (1UL << 3) /* 5.0 */
#endif
#ifndef SECCOMP_FILTER_FLAG_TSYNC_ESRCH
#define SECCOMP_FILTER_FLAG_TSYNC_ESRCH (1UL << 4) /* 5.7 */
#endif
#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5) /* 5.19 */
#endif
#ifndef SECCOMP_USER_NOTIF_FLAG_CONTINUE
#define SECCOMP_USER_NOTIF_FLAG_CONTINUE (1UL << 0) /* 5.5 */
#endif
#ifndef SECCOMP_ADDFD_FLAG_SETFD
#define SECCOMP_ADDFD_FLAG_SETFD (1UL << 0) /* 5.9 */
#endif
#ifndef SECCOMP_ADDFD_FLAG_SEND
#define SECCOMP_ADDFD_FLAG_SEND (1UL << 1) /* 5.14 */
#endif

/* ---- Sockets and pidfds --------------------------------------------------------------------- */
#ifndef SO_PASSPIDFD
#define SO_PASSPIDFD 76 /* 6.5: SCM_PIDFD with each message */
#endif
#ifndef SCM_PIDFD
#define SCM_PIDFD 0x04
#endif
#ifndef PIDFD_SIGNAL_PROCESS_GROUP
#define PIDFD_SIGNAL_PROCESS_GROUP (1UL << 2) /* 6.9: pidfd_send_signal() to the process group */
#endif
