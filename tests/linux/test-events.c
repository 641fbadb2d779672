/* SPDX-License-Identifier: Apache-2.0 */
/* The events stream of cordon_run() (cordon_run_options.on_event): which events a real run emits,
 * in which order, with which fields; exactly one terminal event (exit, killed or error). The
 * schema check of the same events through the CLI is tests/linux/test_events.py. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <cmocka.h>

#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cordon/cordon.h"
#include "run/events.h"

#define MAX_EVENTS 32

typedef struct stream {
        size_t n;
        json_t *ev[MAX_EVENTS];
} stream;

/* Each line must be exactly one JSON object followed by one '\n'. */
static void collect(void *userdata, const char *line, size_t len) {
        stream *s = userdata;
        assert_true(len > 1 && line[len - 1] == '\n');
        assert_null(memchr(line, '\n', len - 1));
        assert_true(s->n < MAX_EVENTS);
        json_error_t e;
        json_t *o = json_loadb(line, len, 0, &e);
        if (!o)
                fail_msg("not JSON: %.*s (%s)", (int) len, line, e.text);
        assert_true(json_is_object(o));
        s->ev[s->n++] = o;
}

static void stream_done(stream *s) {
        for (size_t i = 0; i < s->n; i++)
                json_decref(s->ev[i]);
        *s = (stream) { 0 };
}

static const char *field(const stream *s, size_t i, const char *key) {
        assert_true(i < s->n);
        const char *v = json_string_value(json_object_get(s->ev[i], key));
        if (!v)
                fail_msg("event %zu has no string '%s'", i, key);
        return v;
}

/* The types in order, as "a,b,c"; and the common fields checked on every event. */
static void assert_types(const stream *s, const char *want) {
        char got[256] = "";
        for (size_t i = 0; i < s->n; i++) {
                const char *t = field(s, i, "time");
                assert_int_equal(strlen(t), 24);
                assert_true(t[10] == 'T' && t[19] == '.' && t[23] == 'Z');
                assert_string_equal(field(s, i, "sessionId"), field(s, 0, "sessionId"));
                strcat(got, i ? "," : "");
                strcat(got, field(s, i, "type"));
        }
        assert_string_equal(got, want);
}

static char workspace[PATH_MAX / 2], home[PATH_MAX];

static int setup(void **state) {
        (void) state;
        const char *base = getenv("CORDON_TEST_TMP") ? getenv("CORDON_TEST_TMP") : "/var/tmp";
        snprintf(workspace, sizeof(workspace), "%s/cordon-events-XXXXXX", base);
        if (!mkdtemp(workspace))
                return -1;
        snprintf(home, sizeof(home), "%s/home", workspace);
        char ws[PATH_MAX];
        snprintf(ws, sizeof(ws), "%s/ws", workspace);
        return mkdir(home, 0700) < 0 || mkdir(ws, 0755) < 0 || chdir(ws) < 0 ? -1 : 0;
}

static int teardown(void **state) {
        (void) state;
        char cmd[PATH_MAX + 16];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", workspace);
        return system(cmd) == 0 ? 0 : -1;
}

/* Runs `script` under the default policy (plus `timeout_ms`, `session_id` when set). */
static int run(const char *script, cordon_backend backend, uint64_t timeout_ms,
               const char *session_id, stream *s, cordon_error *err) {
        char cwd[PATH_MAX];
        assert_non_null(getcwd(cwd, sizeof(cwd)));
        cordon_policy *p = NULL;
        assert_int_equal(cordon_policy_new_default(cwd, home, &p, err), 0);
        if (timeout_ms)
                assert_int_equal(cordon_policy_set_timeout_ms(p, timeout_ms), 0);
        if (session_id)
                assert_int_equal(cordon_policy_set_session_id(p, session_id), 0);
        char sh[] = "/bin/sh", dash_c[] = "-c", path[] = "PATH=/usr/bin:/bin", henv[PATH_MAX + 8];
        char *argv[] = { sh, dash_c, (char *) script, NULL };
        snprintf(henv, sizeof(henv), "HOME=%s", home);
        char *env[] = { henv, path, NULL };
        cordon_run_options o;
        cordon_run_options_init(&o);
        o.backend = backend;
        o.environ = env;
        o.on_event = collect;
        o.event_userdata = s;
        cordon_run_result res = { 0 };
        int r = cordon_run(p, argv, &o, &res, err);
        cordon_policy_free(p);
        return r < 0 ? r : res.exit_code;
}

static void test_normal_exit(void **state) {
        (void) state;
        stream s = { 0 };
        cordon_error err = { 0 };
        assert_int_equal(run("exit 3", CORDON_BACKEND_AUTO, 0, NULL, &s, &err), 3);
        assert_types(&s, "starting,ready,exit");
        assert_string_equal(field(&s, 0, "backend"), "auto");
        assert_string_equal(field(&s, 1, "backend"), "native");
        assert_int_equal(json_integer_value(json_object_get(s.ev[2], "exitCode")), 3);
        assert_null(json_object_get(s.ev[2], "signal"));
        /* No session id in the policy: a generated UUID (8-4-4-4-12, version 4). */
        const char *id = field(&s, 0, "sessionId");
        assert_int_equal(strlen(id), 36);
        assert_true(id[8] == '-' && id[13] == '-' && id[14] == '4' && id[23] == '-');
        stream_done(&s);
}

static void test_session_id_and_signal(void **state) {
        (void) state;
        stream s = { 0 };
        cordon_error err = { 0 };
        assert_int_equal(run("kill -USR1 $$", CORDON_BACKEND_AUTO, 0, "sess-42", &s, &err),
                         128 + 10);
        assert_types(&s, "starting,ready,exit");
        assert_string_equal(field(&s, 0, "sessionId"), "sess-42");
        assert_int_equal(json_integer_value(json_object_get(s.ev[2], "exitCode")), 138);
        assert_string_equal(field(&s, 2, "signal"), "SIGUSR1");
        stream_done(&s);
}

static void test_one_violation(void **state) {
        (void) state;
        stream s = { 0 };
        cordon_error err = { 0 };
        assert_int_equal(run("touch .env 2>/dev/null; touch ok.txt", CORDON_BACKEND_AUTO, 0,
                             NULL, &s, &err), 0);
        assert_types(&s, "starting,ready,violation,exit");
        char want[PATH_MAX + 8];
        assert_non_null(getcwd(want, sizeof(want) - 8));
        strcat(want, "/.env");
        assert_string_equal(field(&s, 2, "action"), "file-create-name");
        assert_string_equal(field(&s, 2, "target"), want);
        json_t *raw = json_object_get(s.ev[2], "raw");
        assert_string_equal(json_string_value(json_object_get(raw, "rule")), ".env");
        assert_non_null(json_string_value(json_object_get(raw, "syscall")));
        stream_done(&s);
}

static void test_timeout_is_killed(void **state) {
        (void) state;
        stream s = { 0 };
        cordon_error err = { 0 };
        assert_true(run("sleep 30", CORDON_BACKEND_AUTO, 300, NULL, &s, &err) < 0);
        assert_int_equal(err.code, CORDON_TIMEOUT);
        assert_types(&s, "starting,ready,killed");
        assert_string_equal(field(&s, 2, "reason"), "timeout");
        stream_done(&s);
}

static void test_launch_failure_is_error(void **state) {
        (void) state;
        stream s = { 0 };
        cordon_error err = { 0 };
        assert_true(run("touch ran.txt", CORDON_BACKEND_MICROVM, 0, NULL, &s, &err) < 0);
        assert_types(&s, "starting,error");
        assert_string_equal(field(&s, 0, "backend"), "microvm");
        assert_string_equal(field(&s, 1, "code"), "SANDBOX_UNAVAILABLE");
        assert_string_equal(field(&s, 1, "message"), err.message);
        assert_int_equal(access("ran.txt", F_OK), -1);
        stream_done(&s);
}

static void test_unconfined_run(void **state) {
        (void) state;
        stream s = { 0 };
        cordon_error err = { 0 };
        assert_int_equal(run("exit 0", CORDON_BACKEND_NONE, 0, NULL, &s, &err), 0);
        assert_types(&s, "starting,ready,exit");
        assert_string_equal(field(&s, 1, "backend"), "none");
        stream_done(&s);
}

/* The RFC 3339 form of the "time" field: UTC, milliseconds, truncated not rounded. */
static void test_time_format(void **state) {
        (void) state;
        char buf[40];
        events_format_time(buf, sizeof(buf), 0, 5000000);
        assert_string_equal(buf, "1970-01-01T00:00:00.005Z");
        events_format_time(buf, sizeof(buf), 1700000000, 999999999);
        assert_string_equal(buf, "2023-11-14T22:13:20.999Z");
        /* The lock-free date arithmetic agrees with gmtime_r over leap years, the year 2000 and
         * 2100 rules, and times before 1970 (a file's mtime can be). */
        for (int64_t t = -2208988800LL; t < 4102444800LL * 2; t += 86400 * 37 + 3601 * 7) {
                struct tm tm;
                time_t tt = (time_t) t;
                char want[96];
                assert_non_null(gmtime_r(&tt, &tm));
                (void) snprintf(want, sizeof(want), "%04d-%02d-%02dT%02d:%02d:%02d.000Z",
                                tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                                tm.tm_min, tm.tm_sec);
                events_format_time(buf, sizeof(buf), t, 0);
                assert_string_equal(buf, want);
        }
        events_format_time(buf, sizeof(buf), 951782400, 0); /* 2000-02-29 */
        assert_string_equal(buf, "2000-02-29T00:00:00.000Z");
        events_format_time(buf, sizeof(buf), -1, 0);
        assert_string_equal(buf, "1969-12-31T23:59:59.000Z");
}

static atomic_bool stop_formatting;

static void *format_times_with_libc(void *arg) {
        (void) arg;
        char buf[64];
        while (!atomic_load(&stop_formatting)) {
                struct tm tm;
                time_t t = time(NULL);
                if (gmtime_r(&t, &tm))
                        (void) strftime(buf, sizeof(buf), "%Y", &tm);
        }
        return NULL;
}

/* A session host is forked from a multi-threaded caller without exec (cordon mcp, cordond). A
 * child forked while another thread is inside gmtime_r() inherits glibc's time-zone lock held,
 * and gmtime_r() there waits forever: the time of an event must not need that lock. Each child
 * formats times; one that hangs is killed by its alarm and fails the test. */
static void test_time_format_after_fork(void **state) {
        (void) state;
        pthread_t t;
        atomic_store(&stop_formatting, false);
        assert_int_equal(pthread_create(&t, NULL, format_times_with_libc, NULL), 0);
        for (int i = 0; i < 200; i++) {
                pid_t pid = fork();
                assert_true(pid >= 0);
                if (pid == 0) {
                        alarm(5);
                        char buf[40];
                        for (int k = 0; k < 100; k++)
                                events_format_time(buf, sizeof(buf), (int64_t) time(NULL), 0);
                        _exit(0);
                }
                int status = 0;
                assert_int_equal(waitpid(pid, &status, 0), pid);
                assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        }
        atomic_store(&stop_formatting, true);
        pthread_join(t, NULL);
}

/* Exactly one terminal event, whichever comes first; bytes that are not UTF-8 read as '?'. */
static void test_terminal_once_and_bytes(void **state) {
        (void) state;
        stream s = { 0 };
        events ev;
        events_init(&ev, collect, &s, "id");
        events_violation(&ev, &(cordon_violation) { .action = "file-create-name",
                                                    .syscall = "openat", .target = "/w/\xff.env",
                                                    .rule = ".env" });
        events_killed(&ev, "timeout");
        cordon_error err = { .code = CORDON_LAUNCH_FAILED, .message = "lost" };
        events_error(&ev, &err);
        events_exit(&ev, 0, 0);
        assert_types(&s, "violation,killed");
        assert_string_equal(field(&s, 0, "target"), "/w/?.env");
        stream_done(&s);
        /* Without a callback nothing is called and nothing fails. */
        events_init(&ev, NULL, NULL, NULL);
        events_exit(&ev, 0, 0);
        assert_true(ev.ended);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_normal_exit, setup, teardown),
                cmocka_unit_test_setup_teardown(test_session_id_and_signal, setup, teardown),
                cmocka_unit_test_setup_teardown(test_one_violation, setup, teardown),
                cmocka_unit_test_setup_teardown(test_timeout_is_killed, setup, teardown),
                cmocka_unit_test_setup_teardown(test_launch_failure_is_error, setup, teardown),
                cmocka_unit_test_setup_teardown(test_unconfined_run, setup, teardown),
                cmocka_unit_test(test_time_format),
                cmocka_unit_test(test_time_format_after_fork),
                cmocka_unit_test(test_terminal_once_and_bytes),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
