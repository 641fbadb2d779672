/* SPDX-License-Identifier: Apache-2.0 */
/* The sandbox's seccomp filter: the docs/design/threat-model.md deny list plus user-notification
 * rules for every name-creating syscall. Built with libseccomp from the rule table in
 * src/plan/seccomp-plan.c, exported as BPF and loaded with seccomp(2) so we can pass flags
 * libseccomp 2.5 lacks (SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV). */
#pragma once

#include <linux/seccomp.h> /* the kernel's UAPI header (src/ is searched for "" includes only) */
#include <stdbool.h>
#include <stddef.h>

#include "plan/seccomp-plan.h" /* seccomp_options */

/* Loads the filter into the calling (single-threaded) process, which must already have
 * no_new_privs. With notify_creates, *ret_listener receives the listener fd (O_CLOEXEC).
 * Returns 0 or -errno. */
int seccomp_install_sandbox_filter(const seccomp_options *opt, int *ret_listener);

/* The filter as a BPF program (struct sock_filter array) built now with libseccomp, for the
 * build-time generator, tests and `policy show`; caller frees *ret. */
int seccomp_export_sandbox_filter(const seccomp_options *opt, void **ret, size_t *ret_len);

/* The program cordon loads: generated at build time from the same rule table (static storage).
 * -EINVAL for a combination that is never generated (unix_connect or landlock_backend
 * without notify_creates, kernel_denials, vm_guest with any other option). vm_guest's is the
 * microvm guest's, which the guest agent loads (vm-host.c carries it in the initramfs). */
int seccomp_embedded_sandbox_filter(const seccomp_options *opt, const void **ret, size_t *ret_len);

/* The table rule a notified native call matched, in the program `opt` describes (for the
 * supervisor, which answers refusals with the rule's errno), or NULL. Uses the syscall numbers
 * libseccomp resolved at build time. */
const seccomp_plan_rule *seccomp_rule_for(const struct seccomp_data *d, const seccomp_options *opt);

/* Names a call of another ABI for a report: *ret_abi "ia32" or "x32" (NULL when `d` is native),
 * the syscall's name in that ABI, or NULL when unknown. */
const char *seccomp_foreign_syscall_name(const struct seccomp_data *d, const char **ret_abi);

/* Build time and tests only (seccomp-build.c, linked with libseccomp): the rule's number on this
 * architecture, or -ENOSYS when libseccomp knows none and the rule carries no generic number. */
int seccomp_build_rule_nr(const seccomp_plan_rule *r);

/* Whether `d` uses another ABI than the one the table is written for (ia32, x32): such calls
 * are refused whatever they are. */
bool seccomp_is_foreign(const struct seccomp_data *d);
