/* SPDX-License-Identifier: Apache-2.0 */
/* The processes that make up a native sandbox, each a named stage:
 *
 *   launcher (cordon_run, host namespaces)
 *     └─ monitor: new user/mount/net/ipc/uts/cgroup namespaces; builds the root; becomes the
 *        creation-rule supervisor. Outside the command's PID namespace, so /proc inside cannot
 *        name it, and non-dumpable.
 *          └─ init (PID 1 of a new PID namespace): mounts /proc, drops every capability,
 *             no_new_privs, Landlock, seccomp (listener handed to the monitor), then reaps.
 *               └─ command: setsid, workdir, scrubbed environment, execvp.
 *
 * Every stage dies with its parent (PR_SET_PDEATHSIG + a handshake), so killing the launcher,
 * even with SIGKILL, takes the PID namespace and everything in it down. Failures before exec
 * travel over the report channel (report/report.h). These functions never return. */
#pragma once

#include "plan/plan.h"

_noreturn_ void sandbox_monitor_main(const plan *p, char *const argv[], int report_fd,
                                     pid_t launcher, int proxy_ch);
/* Closes every descriptor above 2 but the n_own of `own` (entries < 3 ignored) and those the
 * caller hands to the command (p->keep_fds). 0 or -errno. */
int sandbox_close_fds(const plan *p, const int *own, size_t n_own);
_noreturn_ void sandbox_unconfined_main(const plan *p, char *const argv[], int report_fd);
