/* SPDX-License-Identifier: Apache-2.0 */
/* The sandbox's seccomp rule table as plain data (docs/design/threat-model.md plus the
 * creation-rule notifications), and a small classic-BPF interpreter so the exported program can be
 * tested as data, without a kernel. Nothing here touches kernel state; src/linux/seccomp.c turns
 * the table into BPF with libseccomp. Why each entry exists: docs/design/seccomp.md. */
#pragma once

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum seccomp_plan_action {
        SECCOMP_PLAN_ERRNO,  /* refuse the call with `err` (reported: see seccomp_plan_rule_ret) */
        SECCOMP_PLAN_NOTIFY, /* SECCOMP_RET_USER_NOTIF: the supervisor performs the call itself */
} seccomp_plan_action;

/* One argument condition: (arg[n] & mask) == value. Every condition of the table is a masked
 * compare: 32-bit kernel arguments (ioctl cmd, socket domain, open flags) are masked to 32 bits
 * so garbage in the upper half of the register cannot slip past an equality test. */
typedef struct seccomp_plan_cond {
        uint8_t arg;
        uint64_t mask;
        uint64_t value;
} seccomp_plan_cond;

/* Rule flags. */
#define SECCOMP_PLAN_QUIET (1u << 0)     /* ERRNO answered by the kernel even when a supervisor
                                          * listens, never reported: it steers libc to an older
                                          * call the table checks (clone3 -> clone) */
#define SECCOMP_PLAN_UNIX_OFF (1u << 1)  /* only without allowUnixSockets */
#define SECCOMP_PLAN_UNIX_ON (1u << 2)   /* only with allowUnixSockets */
#define SECCOMP_PLAN_LANDLOCK_ON (1u << 3)  /* only in the landlock backend's programs */
#define SECCOMP_PLAN_LANDLOCK_OFF (1u << 4) /* only in the native backend's programs */

typedef struct seccomp_plan_rule {
        const char *syscall;  /* libseccomp name */
        int generic_nr;       /* asm-generic number (>= 424, the same on every arch) used when
                               * libseccomp 2.5 does not know the name; 0 = none */
        seccomp_plan_action action;
        int err;              /* errno for SECCOMP_PLAN_ERRNO */
        uint8_t flags;        /* SECCOMP_PLAN_* */
        uint8_t n_conds;      /* all must hold (AND) */
        seccomp_plan_cond conds[2];
        const char *why;      /* one line: the attack this entry stops */
} seccomp_plan_rule;

/* Which program: the three the sandbox can load are generated at build time (seccomp-gen). */
typedef struct seccomp_options {
        /* A supervisor serves a listener: name-creating calls are notified (creation rules), and
         * so is every refusal of the table (except QUIET ones), which the supervisor answers with
         * the table's errno and reports as a `syscall` violation. Without it: no listener, every
         * refusal answered by the kernel, nothing reported. */
        bool notify_creates;
        /* allowUnixSockets is non-empty (needs notify_creates): socket(AF_UNIX) of the stream and
         * seqpacket types is allowed and every connect() is notified, so the supervisor performs
         * it after checking the destination (docs/design/seccomp.md). */
        bool unix_connect;
        /* The landlock backend (docs/design/landlock-backend.md): no network namespace and no
         * read-only mounts. Sockets that could leave the host other than by TCP are refused
         * (with a second, stacked filter for what masked compares cannot express:
         * linux/seccomp-net.h), connect() is notified so the supervisor connects only to the
         * run's proxy, and unlink() of files is notified so the supervisor can keep protected
         * files in place (needs notify_creates). */
        bool landlock_backend;
        /* The microvm guest's commands (docs/design/microvm.md "The guest's rules"): no
         * supervisor runs in the guest, so no NOTIFY rule (every place a guest command can
         * create a name is a 9p export whose creations are the VMM's own calls, which the host's
         * supervisor judges) and every refusal answered by the guest kernel. The deny rules are
         * the native sandbox's unix variant: AF_UNIX stream sockets allowed (a guest socket
         * reaches only the guest's own listeners: no host socket is reachable through 9p),
         * datagram ones refused. Alone: with no other option. */
        bool vm_guest;
        /* Answer every ERRNO rule in the kernel even with a listener. Not used by the sandbox:
         * tests compare its cost with the reporting program's. */
        bool kernel_denials;
} seccomp_options;

/* The whole table, notification and variant rules included. Static. */
const seccomp_plan_rule *seccomp_plan_rules(size_t *ret_n);

/* Whether `rule` belongs in the program `opt` describes. */
bool seccomp_plan_rule_wanted(const seccomp_plan_rule *rule, const seccomp_options *opt);

/* The SECCOMP_RET_* value (action | data) a wanted rule yields in that program. */
uint32_t seccomp_plan_rule_ret(const seccomp_plan_rule *rule, const seccomp_options *opt);

/* What a call of another ABI (ia32 via int $0x80, x32 numbers) yields: ENOSYS, notified (and
 * reported) when a supervisor listens. */
uint32_t seccomp_plan_badarch_ret(const seccomp_options *opt);

/* Whether the call `d` (native ABI) is the rule's syscall, numbered `nr` on this architecture,
 * with every condition met. */
bool seccomp_plan_rule_matches(const seccomp_plan_rule *rule, int nr, const struct seccomp_data *d);

/* "clone: EPERM if (arg0 & 0x10000000) == 0x10000000" into buf; returns what snprintf returns. */
int seccomp_plan_rule_format(const seccomp_plan_rule *rule, char *buf, size_t size);

/* A jansson json_t * array describing the wanted rules (as void * so this header needs no jansson
 * include); caller json_decref()s. NULL on allocation failure. */
void *seccomp_plan_to_json(const seccomp_options *opt);

/* Runs a seccomp classic-BPF program on one syscall, as the kernel would, and returns the
 * SECCOMP_RET_* value (action | data). A malformed program (out-of-range jump or load, no return)
 * yields SECCOMP_RET_KILL_PROCESS, like a program the kernel would have refused. */
uint32_t seccomp_bpf_run(const struct sock_filter *prog, size_t n, const struct seccomp_data *d);
/* The same, also counting the instructions executed (the filter's cost for that call). */
uint32_t seccomp_bpf_run_counted(const struct sock_filter *prog, size_t n,
                                 const struct seccomp_data *d, unsigned *ret_steps);
