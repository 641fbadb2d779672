/* SPDX-License-Identifier: Apache-2.0 */
/* The fork gate (src/util/fork-gate.h): a fork waits for a thread inside the gate, not for one
 * that paused to wait; entries nest; the child starts with a gate of its own; and, the reason
 * it exists, children forked while other threads allocate inside the gate can allocate
 * themselves (under ASan, whose allocator keeps its locks held across a fork, they hung). */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "util/fork-gate.h"

static void sleep_ms(long ms) {
        struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };
        while (nanosleep(&ts, &ts) < 0)
                ;
}

/* fork(), and in the child `child_status` as its exit status; returns the child's status. */
static int fork_and_wait(int child_status) {
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0)
                _exit(child_status);
        int st = 0;
        assert_int_equal(waitpid(pid, &st, 0), pid);
        assert_true(WIFEXITED(st));
        return WEXITSTATUS(st);
}

static atomic_bool inside, left;

/* Enters, says so, stays inside for a while, and only then leaves. */
static void *stay_inside(void *arg) {
        (void) arg;
        fork_gate_enter();
        atomic_store(&inside, true);
        sleep_ms(300);
        atomic_store(&left, true);
        fork_gate_leave();
        return NULL;
}

/* A fork made while another thread is inside returns only after it has left: in the parent and
 * in the child the thread's "left" is already set. Without the gate the fork would return at
 * once, 300 ms before it. */
static void test_fork_waits_for_a_thread_inside(void **state) {
        (void) state;
        atomic_store(&inside, false);
        atomic_store(&left, false);
        pthread_t t;
        assert_int_equal(pthread_create(&t, NULL, stay_inside, NULL), 0);
        while (!atomic_load(&inside))
                sleep_ms(1);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0)
                _exit(atomic_load(&left) ? 0 : 1);
        assert_true(atomic_load(&left));
        int st = 0;
        assert_int_equal(waitpid(pid, &st, 0), pid);
        assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
        pthread_join(t, NULL);
}

static int wait_pipe[2];
static atomic_bool resumed_well;

/* Enters, then waits (paused) for a byte that the test writes only after its fork. */
static void *wait_paused(void *arg) {
        (void) arg;
        fork_gate_enter();
        atomic_store(&inside, true);
        char c;
        ssize_t n;
        FORK_GATE_PAUSED(n = read(wait_pipe[0], &c, 1));
        /* back inside, as deep as before (checked on the test's thread: cmocka's asserts
         * belong there) */
        atomic_store(&resumed_well, n == 1 && fork_gate_depth() == 1);
        fork_gate_leave();
        return NULL;
}

/* A thread that paused to wait keeps no fork waiting: the fork completes while it still waits
 * for the byte (which would never come if the fork waited for it: the test would hang). */
static void test_fork_does_not_wait_for_a_paused_thread(void **state) {
        (void) state;
        atomic_store(&inside, false);
        assert_int_equal(pipe(wait_pipe), 0);
        pthread_t t;
        assert_int_equal(pthread_create(&t, NULL, wait_paused, NULL), 0);
        while (!atomic_load(&inside))
                sleep_ms(1);
        sleep_ms(20); /* let it reach its read(); if not, the fork merely waits for it */
        alarm(30);
        assert_int_equal(fork_and_wait(0), 0);
        alarm(0);
        assert_int_equal(write(wait_pipe[1], "x", 1), 1);
        pthread_join(t, NULL);
        assert_true(atomic_load(&resumed_well));
        close(wait_pipe[0]);
        close(wait_pipe[1]);
}

/* Entries nest on one thread; a pause drops them all and a resume gives them back. A thread
 * inside may fork itself (it steps out for the fork), and its child is inside as deeply, with a
 * gate of its own: the child can leave, and fork again. */
static void test_nesting_and_the_child(void **state) {
        (void) state;
        fork_gate_enter();
        fork_gate_enter();
        assert_int_equal(fork_gate_depth(), 2);
        unsigned d = fork_gate_pause();
        assert_int_equal(d, 2);
        assert_int_equal(fork_gate_depth(), 0);
        fork_gate_resume(d);
        assert_int_equal(fork_gate_depth(), 2);
        alarm(30);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                if (fork_gate_depth() != 2)
                        _exit(1);
                fork_gate_leave();
                fork_gate_leave();
                pid_t g = fork(); /* would wait forever on the parent's lock, were it kept */
                if (g == 0)
                        _exit(0);
                int st = 1;
                _exit(g > 0 && waitpid(g, &st, 0) == g && WIFEXITED(st) ? WEXITSTATUS(st) : 2);
        }
        int st = 0;
        assert_int_equal(waitpid(pid, &st, 0), pid);
        alarm(0);
        assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
        assert_int_equal(fork_gate_depth(), 2);
        fork_gate_leave();
        fork_gate_leave();
        assert_int_equal(fork_gate_depth(), 0);
}

static atomic_bool stop_allocating;

/* What a server's thread does: allocates and frees inside the gate, pausing now and then. */
static void *allocate_inside(void *arg) {
        unsigned seed = (unsigned) (uintptr_t) arg;
        fork_gate_enter();
        while (!atomic_load(&stop_allocating)) {
                void *blocks[64];
                for (int i = 0; i < 64; i++)
                        blocks[i] = malloc(16u + rand_r(&seed) % 4096u);
                for (int i = 0; i < 64; i++)
                        free(blocks[i]);
                FORK_GATE_PAUSED(sched_yield());
        }
        fork_gate_leave();
        return NULL;
}

/* 150 forks while three threads allocate: every child allocates and exits. */
static void test_children_allocate_while_threads_do(void **state) {
        (void) state;
        atomic_store(&stop_allocating, false);
        pthread_t t[3];
        for (uintptr_t i = 0; i < 3; i++)
                assert_int_equal(pthread_create(&t[i], NULL, allocate_inside, (void *) (i + 1)), 0);
        for (int i = 0; i < 150; i++) {
                pid_t pid = fork();
                assert_true(pid >= 0);
                if (pid == 0) {
                        alarm(10);
                        for (int k = 0; k < 256; k++)
                                free(malloc(16u + (unsigned) k * 64u));
                        _exit(0);
                }
                int st = 0;
                assert_int_equal(waitpid(pid, &st, 0), pid);
                assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
        }
        atomic_store(&stop_allocating, true);
        for (int i = 0; i < 3; i++)
                pthread_join(t[i], NULL);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_fork_waits_for_a_thread_inside),
                cmocka_unit_test(test_fork_does_not_wait_for_a_paused_thread),
                cmocka_unit_test(test_nesting_and_the_child),
                cmocka_unit_test(test_children_allocate_while_threads_do),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
