/* SPDX-License-Identifier: Apache-2.0 */
/* The creation-rule supervisor: serves seccomp user notifications for every syscall that can bring
 * a name into existence, performs the call itself on its own copy of the arguments, and hands the
 * result back (see docs/design/creation-rules.md and ../shared/notes/creation-rules.md). */
#pragma once

#include "plan/name-rules.h"

typedef struct supervisor supervisor;

/* Called from a worker thread for each refusal. Must be thread-safe and must not block long. */
typedef void (*supervisor_violation_fn)(void *userdata, const char *syscall, const char *path,
                                        const char *rule);

typedef struct supervisor_config {
        int listener_fd;   /* seccomp listener; taken (closed by supervisor_stop) */
        int proc_fd;       /* O_PATH|O_DIRECTORY fd of a procfs in which notification pids are
                            * valid (the supervisor's own PID namespace); borrowed */
        const name_rules *rules; /* borrowed; must outlive the supervisor */
        supervisor_violation_fn on_violation; /* may be NULL */
        void *userdata;
        unsigned workers;  /* 0 = default */
} supervisor_config;

int supervisor_start(const supervisor_config *cfg, supervisor **ret);
/* Stops the workers (the listener is closed: pending notifications fail), joins, frees. NULL ok. */
void supervisor_stop(supervisor *s);
