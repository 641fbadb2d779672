/* SPDX-License-Identifier: Apache-2.0 */
/* The run core every launcher ends a run through (src/run/): the exit code for each kind of wait
 * status, the timeout's error, the events stream's rule that exactly one terminal event is
 * emitted, whichever of exit, killed and error is called first and however often, how
 * cordon_run()'s options are read by their size, and how a backend is picked from a platform's
 * table. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <setjmp.h>
#include <stdio.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>
#include <jansson.h>

#include "run/events.h"
#include "run/run-backend.h"
#include "run/run-end.h"
#include "run/run-options.h"

/* Wait statuses as the kernel encodes them (the W* macros decode exactly these). */
#define EXITED(code) ((code) << 8)
#define SIGNALLED(sig) (sig)
#define STOPPED(sig) (((sig) << 8) | 0x7f)

static void exit_codes(void **state) {
        (void) state;
        assert_int_equal(run_exit_code(EXITED(0)), 0);
        assert_int_equal(run_exit_code(EXITED(3)), 3);
        assert_int_equal(run_exit_code(EXITED(255)), 255);
        assert_int_equal(run_exit_code(SIGNALLED(SIGKILL)), 128 + SIGKILL);
        assert_int_equal(run_exit_code(SIGNALLED(SIGTERM) | 0x80), 128 + SIGTERM); /* core dumped */
        /* Neither exited nor killed: not the command's status, so cordon's own. */
        assert_int_equal(run_exit_code(STOPPED(SIGSTOP)), 125);
}

static void timeout_error(void **state) {
        (void) state;
        cordon_error err = { 0 };
        assert_int_equal(run_timeout_error(&err, 1500, "its process group"), -ETIME);
        assert_int_equal(err.code, CORDON_TIMEOUT);
        assert_string_equal(err.message, "the command ran longer than limits.timeout (1500 ms) "
                                         "and was killed with its process group");
        assert_int_equal(run_timeout_error(NULL, 1, "everything it started"), -ETIME);
}

typedef struct lines {
        char types[8][16];
        size_t n;
} lines;

static void collect(void *userdata, const char *line, size_t len) {
        lines *l = userdata;
        json_error_t e;
        json_t *o = json_loadb(line, len, 0, &e);
        assert_non_null(o);
        assert_true(l->n < 8);
        snprintf(l->types[l->n++], sizeof(l->types[0]), "%s",
                 json_string_value(json_object_get(o, "type")));
        json_decref(o);
}

static void one_terminal_event(void **state) {
        (void) state;
        lines l = { 0 };
        events ev;
        events_init(&ev, collect, &l, "s-1");
        events_starting(&ev, CORDON_BACKEND_AUTO);
        events_ready(&ev, CORDON_BACKEND_NATIVE);
        events_killed(&ev, "timeout");
        cordon_error err = { 0 };
        (void) run_timeout_error(&err, 10, "its process group");
        events_error(&ev, &err);             /* a launcher reports its failure after the kill */
        events_exit(&ev, EXITED(0), 0);
        assert_int_equal(l.n, 3);
        assert_string_equal(l.types[0], "starting");
        assert_string_equal(l.types[1], "ready");
        assert_string_equal(l.types[2], "killed");
        assert_true(ev.ended);
}

/* cordon_run_options grow as cordon_spawn_options do (tests/linux/process-api.c checks both
 * through cordon_run/cordon_spawn): NULL is the defaults; an older caller's smaller struct gets
 * the defaults beyond it; a newer caller's larger one is read while what is unknown here is zero,
 * refused otherwise; an unset size is refused with the hint to call _init(). */
static void run_options_by_size(void **state) {
        (void) state;
        cordon_run_options o;
        cordon_error err = { 0 };
        assert_int_equal(run_options_read(NULL, &o, &err), 0);
        assert_int_equal(o.size, sizeof(o));
        assert_int_equal(o.backend, CORDON_BACKEND_AUTO);
        assert_null(o.on_event);

        cordon_run_options older;
        cordon_run_options_init(&older);
        older.size = offsetof(cordon_run_options, capture);
        older.backend = CORDON_BACKEND_LANDLOCK;
        older.capture = CORDON_CAPTURE_STDERR; /* beyond its size: not the older caller's */
        assert_int_equal(run_options_read(&older, &o, &err), 0);
        assert_int_equal(o.size, sizeof(o));
        assert_int_equal(o.backend, CORDON_BACKEND_LANDLOCK);
        assert_int_equal(o.capture, 0);

        struct {
                cordon_run_options o;
                uint64_t newer_field;
        } big;
        memset(&big, 0, sizeof(big));
        cordon_run_options_init(&big.o);
        big.o.size = sizeof(big);
        big.o.capture = CORDON_CAPTURE_STDOUT;
        assert_int_equal(run_options_read(&big.o, &o, &err), 0);
        assert_int_equal(o.size, sizeof(o));
        assert_int_equal(o.capture, CORDON_CAPTURE_STDOUT);
        big.newer_field = 1;
        assert_int_equal(run_options_read(&big.o, &o, &err), -ENOTSUP);
        assert_int_equal(err.code, CORDON_USAGE);
        assert_non_null(strstr(err.message, "cordon_run_options has fields"));

        cordon_run_options unset;
        memset(&unset, 0, sizeof(unset));
        err = (cordon_error) { 0 };
        assert_int_equal(run_options_read(&unset, &o, &err), -EINVAL);
        assert_int_equal(err.code, CORDON_USAGE);
        assert_non_null(strstr(err.message, "call cordon_run_options_init() first"));
}

/* The one rule for choosing from a platform's table: AUTO is its first entry, an explicit
 * backend its own, and one the table lacks is refused, never replaced (no step down, nothing
 * unconfined unless asked for). */
static void backend_pick(void **state) {
        (void) state;
        static const run_backend native = { .id = CORDON_BACKEND_NATIVE, .confined = true };
        static const run_backend none = { .id = CORDON_BACKEND_NONE, .confined = false };
        static const run_backend *const table[] = { &native, &none };
        const run_backend *got = NULL;
        cordon_error err = { 0 };
        assert_int_equal(run_backend_pick(table, 2, CORDON_BACKEND_AUTO, "here", &got, &err), 0);
        assert_ptr_equal(got, &native);
        assert_int_equal(run_backend_pick(table, 2, CORDON_BACKEND_NONE, "here", &got, &err), 0);
        assert_ptr_equal(got, &none);
        assert_int_equal(run_backend_pick(table, 2, CORDON_BACKEND_LANDLOCK, "here", &got, &err),
                         -ENOTSUP);
        assert_null(got);
        assert_int_equal(err.code, CORDON_SANDBOX_UNAVAILABLE);
        assert_string_equal(err.message, "refusing to run the command unconfined: the landlock "
                                         "backend is not available on here; hint: use --backend "
                                         "native (see 'cordon probe')");
        assert_int_equal(run_backend_pick(table, 0, CORDON_BACKEND_AUTO, "here", &got, NULL),
                         -ENOTSUP);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(exit_codes),
                cmocka_unit_test(timeout_error),
                cmocka_unit_test(one_terminal_event),
                cmocka_unit_test(run_options_by_size),
                cmocka_unit_test(backend_pick),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
