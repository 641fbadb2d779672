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
/* Makes the next sandbox_monitor_main() build a warm session: its init serves exec requests on
 * `ctl` (session-init.h) instead of running argv. */
void sandbox_set_session_ctl(int ctl);
_noreturn_ void sandbox_unconfined_main(const plan *p, char *const argv[], int report_fd);
