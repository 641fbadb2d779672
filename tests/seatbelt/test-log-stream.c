/* SPDX-License-Identifier: Apache-2.0 */
/* The `log stream` reader (src/seatbelt/log-stream.c) against a stand-in for /usr/bin/log: the
 * arguments and predicate it is given, the wait for its header, the session's refusals handed
 * over, the program ended at the stop; a missing, silent or exiting program refused at the
 * start with nothing left running. */
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "sb-harness.h"
#include "seatbelt/log-stream.h"

static char *T;

#define SANDBOX "\\/System\\/Library\\/Extensions\\/Sandbox.kext\\/Contents\\/MacOS\\/Sandbox"

static void write_file(const char *path, const char *content, mode_t mode) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
        assert_true(fd >= 0);
        assert_int_equal(write_all(fd, content, strlen(content)), (ssize_t) strlen(content));
        close(fd);
}

/* Checks its arguments, keeps the predicate, prints $SB_OUT/lines in one write and stays until
 * it is ended (as log stream does), writing its pid first. */
static const char stand_in[] =
        "#!/bin/sh\n"
        "[ \"$1 $2 $3 $4\" = 'stream --style ndjson --predicate' ] && [ $# = 5 ] || exit 9\n"
        "printf '%s' \"$5\" > \"$SB_OUT/predicate\"\n"
        "echo $$ > \"$SB_OUT/pid\"\n"
        "cat \"$SB_OUT/lines\"\n"
        "exec sleep 1000\n";

static int setup(void **state) {
        T = sbt_tree();
        write_file(sbt_at(T, "log"), stand_in, 0755);
        write_file(sbt_at(T, "exits"), "#!/bin/sh\nexit 0\n", 0755);
        write_file(sbt_at(T, "silent"), "#!/bin/sh\nexec sleep 1000\n", 0755);
        return setenv("SB_OUT", T, 1);
}

static int teardown(void **state) {
        sbt_remove(T);
        return 0;
}

typedef struct seen {
        unsigned n;
        seatbelt_rule last;
} seen;

static void count(void *userdata, const seatbelt_violation *v) {
        seen *s = userdata;
        s->n++;
        s->last = v->rule;
}

static bool running(const char *pidfile) {
        char *text = NULL;
        if (read_file_at(AT_FDCWD, pidfile, 64, 0, &text, NULL) < 0)
                return false;
        long pid = strtol(text, NULL, 10);
        free(text);
        return pid > 0 && kill((pid_t) pid, 0) == 0;
}

static void test_stream(void **state) {
        char lines[2048];
        snprintf(lines, sizeof(lines),
                 "Filtering the log data using \"sender == \\\"Sandbox\\\"\"\n"
                 "{\"eventMessage\":\"Sandbox: cat(1) deny(1) file-read-data \\/k\\n"
                 "cordon-deny secret run-7\",\"senderImagePath\":\"%s\"}\n"
                 "{\"eventMessage\":\"Sandbox: cat(1) deny(1) file-read-data \\/k\\n"
                 "cordon-deny secret run-8\",\"senderImagePath\":\"%s\"}\n"
                 "{\"eventMessage\":\"Sandbox: sh(2) deny(1) process-exec* \\/w\\/a.out\\n"
                 "cordon-deny exec run-7\",\"senderImagePath\":\"%s\"}\n",
                 SANDBOX, SANDBOX, SANDBOX);
        write_file(sbt_at(T, "lines"), lines, 0644);
        seatbelt_log_stream s;
        seen got = { 0 };
        assert_int_equal(seatbelt_log_stream_start(&s, sbt_at(T, "log"), "run-7", 10000, count,
                                                   &got),
                         0);
        char *pred = NULL;
        assert_true(read_file_at(AT_FDCWD, sbt_at(T, "predicate"), 4096, 0, &pred, NULL) >= 0);
        assert_string_equal(pred, "sender == \"Sandbox\" AND eventMessage CONTAINS "
                                  "\"cordon-deny \" AND eventMessage CONTAINS \" run-7\"");
        free(pred);
        while (got.n < 2 && seatbelt_log_stream_read(&s))
                ; /* the lines are in the pipe already: each read returns at once */
        assert_int_equal(got.n, 2);
        assert_int_equal(got.last, SBR_EXEC);
        assert_true(running(sbt_at(T, "pid")));
        assert_int_equal(seatbelt_log_stream_stop(&s, 50, 1000), 2);
        assert_false(running(sbt_at(T, "pid")));
        assert_int_equal(s.pid, -1);
        assert_int_equal(s.fd, -1);
        /* A stop after a failed start, or twice, is harmless. */
        assert_int_equal(seatbelt_log_stream_stop(&s, 50, 1000), 0);
}

static void test_start_failures(void **state) {
        seatbelt_log_stream s;
        seen got = { 0 };
        assert_int_equal(seatbelt_log_stream_start(&s, sbt_at(T, "missing"), "S", 1000, count,
                                                   &got),
                         -ENOENT);
        assert_int_equal(s.pid, -1);
        assert_int_equal(seatbelt_log_stream_start(&s, sbt_at(T, "exits"), "S", 10000, count,
                                                   &got),
                         -EPIPE);
        assert_int_equal(s.pid, -1);
        /* Prints nothing: refused once ready_ms have passed, and ended. */
        assert_int_equal(seatbelt_log_stream_start(&s, sbt_at(T, "silent"), "S", 100, count,
                                                   &got),
                         -ETIMEDOUT);
        assert_int_equal(s.pid, -1);
        assert_int_equal(s.fd, -1);
        assert_int_equal(got.n, 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_stream),
                cmocka_unit_test(test_start_failures),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
