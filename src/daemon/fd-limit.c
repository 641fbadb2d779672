/* SPDX-License-Identifier: Apache-2.0 */
/* cordond's descriptor limit (docs/design/daemon.md, "Limits").
 *
 * The daemon holds two descriptors per warm session (the session handle's socket to its host and
 * the host's pidfd) and one per client, so the usual soft RLIMIT_NOFILE of 1,024 ended it near
 * 500 sessions: every launch past that failed for want of a descriptor, well below
 * DAEMON_MAX_SESSIONS. The daemon raises its soft limit to the hard one, which needs no
 * privilege. Its children — session hosts, exec workers, terminals' shells, and through them
 * every command — get the user's own soft limit back as they are forked: the raise is the
 * daemon's, and a command must not find a limit that `cordon run` would not give it (programs
 * that pass descriptors to select() rely on the soft limit staying at FD_SETSIZE). */
#include <pthread.h>
#include <sys/resource.h>

#include "daemon/server.h"

static struct rlimit user_nofile;
static bool raised;

/* In the child of every fork() of the daemon, whichever thread forked (the daemon's own, or a
 * run thread of libcordon's). setrlimit() is a plain system call: safe between fork and exec. */
static void restore_in_child(void) {
        if (raised)
                (void) setrlimit(RLIMIT_NOFILE, &user_nofile);
}

void daemon_raise_nofile(void) {
        if (getrlimit(RLIMIT_NOFILE, &user_nofile) < 0 ||
            user_nofile.rlim_cur >= user_nofile.rlim_max)
                return;
        /* Registered before the raise: no child forked after it can miss the restore. */
        if (pthread_atfork(NULL, NULL, restore_in_child) != 0)
                return;
        struct rlimit rl = { .rlim_cur = user_nofile.rlim_max, .rlim_max = user_nofile.rlim_max };
        raised = setrlimit(RLIMIT_NOFILE, &rl) == 0;
}
