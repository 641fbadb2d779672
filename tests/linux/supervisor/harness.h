/* SPDX-License-Identifier: Apache-2.0 */
/* A sandbox in miniature for the supervisor tests: a child that installs cordon's real seccomp
 * filter (no_new_privs, then seccomp_install_sandbox_filter), hands the listener to the parent
 * and closes its copy, then runs a scenario in a fresh temporary workspace; the parent runs the
 * real supervisor with the workspace's rules and records every violation. Afterwards the parent
 * walks the workspace on the host: no denied name may exist unless the test put it there. */
#pragma once

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "linux/supervisor.h"
#include "plan/plan.h"

typedef struct sup_env {
        char root[PATH_MAX]; /* realpath of the workspace (a fresh directory under $TMPDIR) */
        name_rules rules;    /* root/.git/hooks, root/.git/config, root/.bashrc, root/HEAD,
                              * root/.vscode, root/.claude/settings*.json; .env .env.* *.pem *.key */
        unsigned workers;    /* 0: the supervisor's default */
        strv preexisting;    /* denied names the test created on the host itself (relative) */

        pthread_mutex_t lock;
        strv violations;     /* file-create-name: "syscall path rule", an aggregate of N
                              * refusals (rate limit) as N entries */
        strv reports;        /* every report: "action syscall target rule", an aggregate as one
                              * entry ending in " xN" */
        const supervisor_unix_allow *unix_allow; /* allowUnixSockets for sup_run (NULL: none) */
        int ready_fd;        /* sup_run_stop_live: the scenario writes one byte here, then waits */
} sup_env;

typedef int (*scenario_fn)(sup_env *env, void *arg);

int sup_env_new(sup_env **ret);
void sup_env_free(sup_env *env);

/* Forks, runs `fn` confined in env->root, supervises it. Returns the child's wait status. */
int sup_run(sup_env *env, scenario_fn fn, void *arg);
/* Like sup_run, but kills the child after `kill_after_ms` and checks supervisor_stop() returns. */
int sup_run_killed(sup_env *env, scenario_fn fn, void *arg, unsigned kill_after_ms);

/* Like sup_run, but stops the supervisor while the child still lives: once the scenario has
 * written a byte to env->ready_fd (and then waits, never to be served again), supervisor_stop()
 * is called with the child's tasks still using the filter, then the child is killed. Returns
 * the time supervisor_stop() took in ms, or -errno. */
long sup_run_stop_live(sup_env *env, scenario_fn fn, void *arg);

/* Host-side checks (parent). */
size_t sup_violations(sup_env *env, const char *needle);
/* Reports (any action) containing `needle`, NULL for all; an aggregate counts as its N. */
uint64_t sup_reports(sup_env *env, const char *needle);
/* Every entry under root checked with the create rules; returns the first denied relative path
 * not in env->preexisting, or NULL (static buffer). */
const char *sup_first_denied(sup_env *env);
/* Creates a file on the host (outside the sandbox), relative to root, and records it as
 * preexisting when its name is denied. */
void sup_host_file(sup_env *env, const char *rel, const char *content);
void sup_host_dir(sup_env *env, const char *rel);

/* Scenario-side checks: print both sides and fail the scenario (return 1). */
#define CHECK(cond)                                                                               \
        do {                                                                                      \
                if (!(cond)) {                                                                    \
                        fprintf(stderr, "%s:%d: CHECK(%s) failed (errno %d: %s)\n", __FILE__,     \
                                __LINE__, #cond, errno, strerror(errno));                         \
                        return 1;                                                                 \
                }                                                                                 \
        } while (0)

/* `expr` must fail with errno `err`. */
#define CHECK_ERR(expr, err)                                                                      \
        do {                                                                                      \
                errno = 0;                                                                        \
                long _r = (long) (expr);                                                          \
                int _e = errno;                                                                   \
                if (_r != -1 || _e != (err)) {                                                    \
                        fprintf(stderr, "%s:%d: %s returned %ld errno %d (%s), want -1 errno %d "  \
                                "(%s)\n", __FILE__, __LINE__, #expr, _r, _e, strerror(_e),        \
                                (err), strerror(err));                                            \
                        return 1;                                                                 \
                }                                                                                 \
        } while (0)

/* `expr` must succeed (>= 0); the result is closed if `close_it`. */
#define CHECK_OK(expr)                                                                            \
        do {                                                                                      \
                errno = 0;                                                                        \
                long _r = (long) (expr);                                                          \
                if (_r < 0) {                                                                     \
                        fprintf(stderr, "%s:%d: %s failed: errno %d (%s)\n", __FILE__, __LINE__,   \
                                #expr, errno, strerror(errno));                                   \
                        return 1;                                                                 \
                }                                                                                 \
        } while (0)

/* Opens with O_CREAT; must succeed; closes. */
#define CHECK_CREATE(path)                                                                        \
        do {                                                                                      \
                int _fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);                       \
                CHECK(_fd >= 0);                                                                  \
                close(_fd);                                                                       \
        } while (0)

bool sup_is_root(void);
