/* SPDX-License-Identifier: Apache-2.0 */
/* The sandbox's seccomp filter: the SPEC.md §7 deny list plus user-notification rules for every
 * name-creating syscall. Built with libseccomp from the rule table in src/plan/seccomp-plan.c,
 * exported as BPF and loaded with seccomp(2) so we can pass flags libseccomp 2.5 lacks
 * (SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV). */
#pragma once

#include <linux/seccomp.h> /* the kernel's UAPI header (src/ is searched for "" includes only) */
#include <stdbool.h>
#include <stddef.h>

typedef struct seccomp_options {
        bool notify_creates; /* add the user-notification rules (name rules enforced) */
} seccomp_options;

/* Loads the filter into the calling (single-threaded) process, which must already have
 * no_new_privs. With notify_creates, *ret_listener receives the listener fd (O_CLOEXEC).
 * Returns 0 or -errno. */
int seccomp_install_sandbox_filter(const seccomp_options *opt, int *ret_listener);

/* The filter as a BPF program (struct sock_filter array) built now with libseccomp, for the
 * build-time generator, tests and `policy show`; caller frees *ret. */
int seccomp_export_sandbox_filter(const seccomp_options *opt, void **ret, size_t *ret_len);

/* The program cordon loads: generated at build time from the same rule table (static storage). */
int seccomp_embedded_sandbox_filter(const seccomp_options *opt, const void **ret, size_t *ret_len);
