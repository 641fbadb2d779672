/* SPDX-License-Identifier: Apache-2.0 */
/* The sandbox's seccomp rule table as plain data (SPEC.md §7 plus the creation-rule notifications),
 * and a small classic-BPF interpreter so the exported program can be tested as data, without a
 * kernel. Nothing here touches kernel state; src/linux/seccomp.c turns the table into BPF with
 * libseccomp. Why each entry exists: docs/design/seccomp.md. */
#pragma once

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum seccomp_plan_action {
        SECCOMP_PLAN_ERRNO,  /* fail the call with `err` */
        SECCOMP_PLAN_NOTIFY, /* SECCOMP_RET_USER_NOTIF: the creation-rule supervisor performs it */
} seccomp_plan_action;

/* One argument condition: (arg[n] & mask) == value. Every condition of the table is a masked
 * compare: 32-bit kernel arguments (ioctl cmd, socket domain, open flags) are masked to 32 bits
 * so garbage in the upper half of the register cannot slip past an equality test. */
typedef struct seccomp_plan_cond {
        uint8_t arg;
        uint64_t mask;
        uint64_t value;
} seccomp_plan_cond;

typedef struct seccomp_plan_rule {
        const char *syscall;  /* libseccomp name */
        int generic_nr;       /* asm-generic number (>= 424, the same on every arch) used when
                               * libseccomp 2.5 does not know the name; 0 = none */
        seccomp_plan_action action;
        int err;              /* errno for SECCOMP_PLAN_ERRNO */
        uint8_t n_conds;      /* all must hold (AND) */
        seccomp_plan_cond conds[2];
        const char *why;      /* one line: the attack this entry stops */
} seccomp_plan_rule;

/* The whole table, notification rules included (they carry SECCOMP_PLAN_NOTIFY). Static. */
const seccomp_plan_rule *seccomp_plan_rules(size_t *ret_n);

/* Whether `rule` belongs in the filter: notification rules only when name rules are enforced. */
bool seccomp_plan_rule_wanted(const seccomp_plan_rule *rule, bool notify_creates);

/* "clone: EPERM if (arg0 & 0x10000000) == 0x10000000" into buf; returns what snprintf returns. */
int seccomp_plan_rule_format(const seccomp_plan_rule *rule, char *buf, size_t size);

/* A jansson json_t * array describing the wanted rules (as void * so this header needs no jansson
 * include); caller json_decref()s. NULL on allocation failure. */
void *seccomp_plan_to_json(bool notify_creates);

/* Runs a seccomp classic-BPF program on one syscall, as the kernel would, and returns the
 * SECCOMP_RET_* value (action | data). A malformed program (out-of-range jump or load, no return)
 * yields SECCOMP_RET_KILL_PROCESS, like a program the kernel would have refused. */
uint32_t seccomp_bpf_run(const struct sock_filter *prog, size_t n, const struct seccomp_data *d);
