/* SPDX-License-Identifier: Apache-2.0 */
/* The fork gate: no thread of the library (or of a program built on it that takes part) is
 * inside code that may hold a lock a fork does not reset while the library forks. The child of
 * a fork runs library code before it execs anything (building a plan, NSS, the proxy), and a
 * lock another thread held at the fork stays held in the child forever: glibc resets its malloc
 * and stdio locks, but not NSS's, and sanitizer allocators reset none. The rules and the
 * reasons: docs/design/library.md, "Forked without exec, from a caller with threads".
 *
 * A thread "enters" while it runs such code and "pauses" around every wait that can last
 * (poll, a blocking read, waitpid, a caller's callback). Every fork(2) of the process (the
 * library's and the caller's: pthread_atfork) waits for every other entered thread to leave or
 * pause, never for a wait; the child starts with a fresh gate, entered as deeply as the forking
 * thread was. Entries nest on one thread. A thread never enters or resumes while it holds a
 * mutex another entered thread may wait for: that thread would wait for it, it for the fork,
 * and the fork for that thread. */
#pragma once

void fork_gate_enter(void);
void fork_gate_leave(void);

/* Around a wait: returns how deeply this thread had entered (0: not at all) for the resume. */
unsigned fork_gate_pause(void);
void fork_gate_resume(unsigned depth);

/* `wait` (a statement) with this thread out of the gate. */
#define FORK_GATE_PAUSED(wait)                                  \
        do {                                                    \
                unsigned fork_gate_depth_ = fork_gate_pause(); \
                wait;                                           \
                fork_gate_resume(fork_gate_depth_);             \
        } while (0)

/* How deeply this thread has entered: for tests. */
unsigned fork_gate_depth(void);
