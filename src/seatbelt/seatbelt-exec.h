/* SPDX-License-Identifier: Apache-2.0 */
/* Running a command under `sandbox-exec -p PROFILE` and what surrounds it: the run's private
 * temporary directory, a clean child (own session, no stray descriptors, the plan's scrubbed
 * environment), the wait with an optional timeout. Plain POSIX, so it is built and tested on
 * Linux with a stand-in for sandbox-exec; src/seatbelt/launch-macos.c uses it on macOS. */
#pragma once

#include "util/util.h"

#define SEATBELT_SANDBOX_EXEC "/usr/bin/sandbox-exec"

/* Creates "<base>/cordon-XXXXXX", mode 0700, for TMPDIR. Returns 0 and the path, or -errno. */
int seatbelt_tmpdir_create(const char *base, char **ret);

/* Removes the directory and everything the command left in it. Descends by descriptor
 * (openat with O_NOFOLLOW | O_DIRECTORY, unlinkat) and never follows a symlink: the command
 * controls the tree's contents, and `ln -s ~ tmp/x` must not make the cleanup delete the home
 * directory. Returns 0, or the first -errno (it keeps removing what it can). */
int seatbelt_tmpdir_remove(const char *path);

typedef struct seatbelt_exec_params {
        /* The program that applies the profile: SEATBELT_SANDBOX_EXEC, a stand-in in tests, or
         * NULL to run the command itself (an unconfined run, asked for explicitly). */
        const char *sandbox_exec;
        const char *profile;     /* passed as `-p PROFILE` */
        char *const *argv;       /* the command; argv[0] is looked up in PATH by sandbox-exec */
        char *const *envp;       /* the command's whole environment */
        const char *workdir;     /* where it starts */
        uint64_t timeout_ms;     /* 0: none */
        /* A descriptor to read while the command runs (the system log's refusals, on macOS):
         * on_watch(watch_userdata) is called from the caller's thread whenever watch_fd is
         * readable or hung up, and returns false to stop watching it. NULL: none. */
        bool (*on_watch)(void *userdata);
        void *watch_userdata;
        int watch_fd;
} seatbelt_exec_params;

typedef struct seatbelt_exec_result {
        int wait_status;  /* of sandbox-exec, which execs the command in place */
        bool timed_out;   /* killed (with its process group) after timeout_ms */
} seatbelt_exec_result;

/* Runs the command and waits for it. Returns 0 when it ran (whatever its status), or -errno with
 * `err` set: CORDON_LAUNCH_FAILED (fork, pipe, chdir), CORDON_EXEC_FAILED (the program could not
 * be executed; the message names it). When the command has ended, whatever is left in its
 * process group is killed. */
int seatbelt_exec_run(const seatbelt_exec_params *x, seatbelt_exec_result *ret,
                      cordon_error *err);
