/* SPDX-License-Identifier: Apache-2.0 */
/* The fork gate (fork-gate.h): a reader-writer lock that entered threads hold for reading and
 * every fork(2) of the process takes for writing, through pthread_atfork handlers registered
 * when the library is loaded, so that the library's own forks, and a caller's, all wait.
 *
 * Writers are preferred (glibc's PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP): a fork waits
 * only for the entered threads to leave or pause, not for a steady stream of new entries.
 * Such a lock deadlocks a thread that takes it for reading twice while a writer waits, so a
 * thread holds it at most once and counts its nesting itself (depth). */
#include "util/fork-gate.h"

#include <pthread.h>
#include <string.h>

#ifdef PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP
#define GATE_INITIALIZER PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP
#else
#define GATE_INITIALIZER PTHREAD_RWLOCK_INITIALIZER
#endif

static pthread_rwlock_t gate = GATE_INITIALIZER;
static __thread unsigned depth;        /* how deeply this thread has entered */
static __thread unsigned depth_at_fork; /* the forking thread's depth, kept across the fork */

void fork_gate_enter(void) {
        if (depth++ == 0)
                (void) pthread_rwlock_rdlock(&gate);
}

void fork_gate_leave(void) {
        if (depth > 0 && --depth == 0)
                (void) pthread_rwlock_unlock(&gate);
}

unsigned fork_gate_pause(void) {
        unsigned d = depth;
        if (d > 0) {
                depth = 0;
                (void) pthread_rwlock_unlock(&gate);
        }
        return d;
}

void fork_gate_resume(unsigned d) {
        if (d > 0 && depth == 0) {
                (void) pthread_rwlock_rdlock(&gate);
                depth = d;
        }
}

unsigned fork_gate_depth(void) {
        return depth;
}

/* Before the fork: this thread steps out (a writer cannot wait for itself), then waits until
 * no other thread is inside. */
static void before_fork(void) {
        depth_at_fork = fork_gate_pause();
        (void) pthread_rwlock_wrlock(&gate);
}

static void after_fork_parent(void) {
        (void) pthread_rwlock_unlock(&gate);
        fork_gate_resume(depth_at_fork);
}

/* The child's only thread: the lock is the parent's, held for writing by a thread that is not
 * here; a fresh one replaces it. */
static void after_fork_child(void) {
        static const pthread_rwlock_t fresh = GATE_INITIALIZER;
        memcpy(&gate, &fresh, sizeof(gate));
        fork_gate_resume(depth_at_fork);
}

__attribute__((constructor)) static void fork_gate_install(void) {
        (void) pthread_atfork(before_fork, after_fork_parent, after_fork_child);
}
