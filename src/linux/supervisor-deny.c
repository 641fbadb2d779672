/* SPDX-License-Identifier: Apache-2.0 */
/* Refusals of the seccomp table, observed exactly (issue 4, docs/design/seccomp.md).
 *
 * When a supervisor listens, the filter returns SECCOMP_RET_USER_NOTIF instead of
 * SECCOMP_RET_ERRNO for every refusal of the table (QUIET ones excepted) and for every call of
 * another ABI. The supervisor reports the refusal, then answers with the errno the table gives, so
 * the caller sees what the kernel would have answered. Report first: a command that exits as soon
 * as its call fails must not end before its refusal is on the report channel (a warm session
 * would otherwise finish the exec without it). The report: action "syscall", target the call's
 * name, rule the table's entry and the reason for it. Allowed calls never get here (the filter
 * takes the same path for them as the program that refuses in the kernel: tested instruction by
 * instruction), so only refusals pay the round trip.
 *
 * The caller is not inspected (no memory): the answer depends only on the syscall number, the
 * architecture and register arguments, which the kernel copied into the notification and which
 * the caller cannot change any more. An attributing supervisor (a warm session) reads only the
 * caller's session id from /proc, before answering, for the report; the answer never depends
 * on it. If the supervisor dies, the kernel fails every notified call with ENOSYS: a refusal
 * still, never an allowed call. */
#include "linux/supervisor-internal.h"

#include <stdio.h>

/* "ia32:open" into buf. */
static const char *foreign_name(const struct seccomp_notif *n, const char *abi, const char *name,
                                char *buf, size_t size) {
        if (name)
                (void) snprintf(buf, size, "%s:%s", abi, name);
        else
                (void) snprintf(buf, size, "%s:%d", abi, n->data.nr);
        return buf;
}

static void refuse_foreign(supervisor *s, const struct seccomp_notif *n, const char *abi,
                           const char *name) {
        char label[96];
        const char *target = foreign_name(n, abi, name, label, sizeof(label));
        /* Keyed by ABI: a 32-bit program makes a different call each time it retries. */
        supervisor_report_refusal(s, &(supervisor_report) {
                                          .action = "syscall", .syscall = target, .target = target,
                                          .rule = "another ABI (ia32 int $0x80, x32): ENOSYS for "
                                                  "every call, the table is written for the "
                                                  "native numbers",
                                          .sid = supervisor_caller_sid(s, n) },
                                  abi, "foreign-abi");
        (void) supervisor_send_resp(s, n->id, 0, -ENOSYS);
}

bool supervisor_answer_refusal(supervisor *s, const struct seccomp_notif *n) {
        const char *abi = NULL;
        const char *name = seccomp_foreign_syscall_name(&n->data, &abi);
        if (abi) {
                refuse_foreign(s, n, abi, name);
                return true;
        }
        const seccomp_plan_rule *rule = seccomp_rule_for(&n->data, &s->filter);
        if (!rule || rule->action != SECCOMP_PLAN_ERRNO)
                return false;
        char text[512];
        int len = seccomp_plan_rule_format(rule, text, sizeof(text));
        if (len >= 0 && (size_t) len < sizeof(text))
                (void) snprintf(text + len, sizeof(text) - (size_t) len, " (%s)", rule->why);
        supervisor_report_refusal(s, &(supervisor_report) { .action = "syscall",
                                                            .syscall = rule->syscall,
                                                            .target = rule->syscall,
                                                            .rule = text,
                                                            .sid = supervisor_caller_sid(s, n) },
                                  rule, NULL);
        (void) supervisor_send_resp(s, n->id, 0, -rule->err);
        return true;
}
