/* SPDX-License-Identifier: Apache-2.0 */
/* The egress ask mode through the public API (cordon_run_options.on_egress_ask,
 * cordon_spawn_options.on_egress_ask; docs/design/network.md, "Ask mode"): the callback is
 * asked with the destination, its answer is what the proxy does (allow once, for the session,
 * deny), an answer after the deadline is a timeout, and every question and answer is in the
 * events. A server of the test's own on 127.0.0.1; the command reaches it by a name (ask.test,
 * mapped with the hosts map) that no entry lists, through the proxy and through the redirected
 * path. Runs as root and as cordon-test (tests/linux/meson.build). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <limits.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cordon/cordon.h"

static char workspace[PATH_MAX / 2], home[PATH_MAX];
static int listen_fd = -1;
static uint16_t port;
static atomic_int hits;

/* Answers every request with 200 and counts it. */
static void *serve(void *arg) {
        (void) arg;
        for (;;) {
                int fd = accept(listen_fd, NULL, NULL);
                if (fd < 0)
                        return NULL;
                char buf[4096];
                ssize_t n = recv(fd, buf, sizeof(buf), 0);
                if (n > 0) {
                        atomic_fetch_add(&hits, 1);
                        static const char ok[] = "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n"
                                                 "Connection: close\r\n\r\nok\n";
                        (void) !write(fd, ok, sizeof(ok) - 1);
                }
                (void) close(fd);
        }
}

static int setup(void **state) {
        (void) state;
        const char *base = getenv("CORDON_TEST_TMP") ? getenv("CORDON_TEST_TMP") : "/var/tmp";
        snprintf(workspace, sizeof(workspace), "%s/cordon-ask-XXXXXX", base);
        if (!mkdtemp(workspace))
                return -1;
        snprintf(home, sizeof(home), "%s/home", workspace);
        char ws[PATH_MAX];
        _Static_assert(sizeof(workspace) + 8 < sizeof(ws), "room for a suffix");
        snprintf(ws, sizeof(ws), "%s/ws", workspace);
        if (mkdir(home, 0700) < 0 || mkdir(ws, 0755) < 0 || chdir(ws) < 0)
                return -1;
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t len = sizeof(a);
        listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (listen_fd < 0 || bind(listen_fd, (struct sockaddr *) &a, sizeof(a)) < 0 ||
            listen(listen_fd, 16) < 0 || getsockname(listen_fd, (struct sockaddr *) &a, &len) < 0)
                return -1;
        port = ntohs(a.sin_port);
        pthread_t t;
        return pthread_create(&t, NULL, serve, NULL) == 0 ? 0 : -1;
}

static int teardown(void **state) {
        (void) state;
        char cmd[PATH_MAX + 16];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", workspace);
        return system(cmd) == 0 ? 0 : -1;
}

/* The default policy in ask mode, ask.test mapped to the server; its address allowed on the
 * server's port (the guard then lets the name's loopback address through once it is allowed). */
static cordon_policy *ask_policy(uint64_t timeout_ms) {
        char cwd[PATH_MAX], allow[64];
        assert_non_null(getcwd(cwd, sizeof(cwd)));
        cordon_policy *p = NULL;
        cordon_error err = { 0 };
        if (cordon_policy_new_default(cwd, home, &p, &err) < 0)
                fail_msg("default policy: %s", err.message);
        snprintf(allow, sizeof(allow), "127.0.0.1:%u", (unsigned) port);
        assert_int_equal(cordon_policy_set_egress_mode(p, CORDON_EGRESS_ASK), 0);
        assert_int_equal(cordon_policy_set_host(p, "ask.test", "127.0.0.1"), 0);
        assert_int_equal(cordon_policy_add_egress_allow(p, allow), 0);
        if (timeout_ms)
                assert_int_equal(cordon_policy_set_egress_ask_timeout_ms(p, timeout_ms), 0);
        return p;
}

typedef struct asker {
        cordon_egress_answer answer;
        unsigned asked;
        char target[300], protocol[16];
        uint64_t timeout_ms;
        uint64_t late_ms; /* > 0: answer only this long after the deadline */
} asker;

static cordon_egress_answer on_ask(void *userdata, const cordon_egress_question *q) {
        asker *a = userdata;
        a->asked++;
        snprintf(a->target, sizeof(a->target), "%s", q->target);
        snprintf(a->protocol, sizeof(a->protocol), "%s", q->protocol);
        a->timeout_ms = q->timeout_ms;
        if (a->late_ms) {
                /* The behaviour under test is an answer after the deadline: the proxy decides
                 * by its clock when it reads the answer, so any wait past the deadline gives
                 * the same outcome. */
                uint64_t ms = q->timeout_ms + a->late_ms;
                struct timespec ts = { .tv_sec = (time_t) (ms / 1000),
                                       .tv_nsec = (long) (ms % 1000) * 1000000 };
                while (nanosleep(&ts, &ts) < 0)
                        ;
        }
        return a->answer;
}

typedef struct stream {
        char buf[65536];
        size_t len;
        unsigned violations;
        char rule[256];
} stream;

static void on_event(void *userdata, const char *line, size_t len) {
        stream *s = userdata;
        if (s->len + len < sizeof(s->buf)) {
                memcpy(s->buf + s->len, line, len);
                s->len += len;
                s->buf[s->len] = '\0';
        }
}

static void on_violation(void *userdata, const cordon_violation *v) {
        stream *s = userdata;
        s->violations++;
        snprintf(s->rule, sizeof(s->rule), "%s", v->rule);
}

static unsigned count(const char *hay, const char *needle) {
        unsigned n = 0;
        for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
                n++;
        return n;
}

/* Runs `script` with on_egress_ask = `a`; its exit code. */
static int run(cordon_policy *p, const char *script, asker *a, stream *s) {
        char sh[] = "/bin/sh", dash_c[] = "-c", path[] = "PATH=/usr/bin:/bin", henv[PATH_MAX + 8];
        char *argv[] = { sh, dash_c, (char *) script, NULL };
        snprintf(henv, sizeof(henv), "HOME=%s", home);
        char *env[] = { henv, path, NULL };
        cordon_run_options o;
        cordon_run_options_init(&o);
        o.environ = env;
        o.on_egress_ask = on_ask;
        o.ask_userdata = a;
        o.on_event = on_event;
        o.event_userdata = s;
        o.on_violation = on_violation;
        o.userdata = s;
        cordon_run_result res = { 0 };
        cordon_error err = { 0 };
        if (cordon_run(p, argv, &o, &res, &err) < 0)
                fail_msg("cordon_run: %s", err.message);
        return res.exit_code;
}

/* curl through the HTTP proxy, then through the redirected path, each printing its status. */
static const char *two_curls(char *buf, size_t size) {
        snprintf(buf, size,
                 "c='curl -s -o /dev/null --max-time 20 -w %%{http_code}'; "
                 "test \"$($c http://ask.test:%u/)\" = \"$1\" || exit 11; "
                 "test \"$($c --noproxy '*' http://ask.test:%u/)\" = \"$2\" || exit 12",
                 (unsigned) port, (unsigned) port);
        return buf;
}

static void test_allow_session(void **state) {
        (void) state;
        cordon_policy *p = ask_policy(0);
        asker a = { .answer = CORDON_EGRESS_ALLOW_SESSION };
        stream s = { 0 };
        char script[1024], sc[1100];
        two_curls(script, sizeof(script));
        snprintf(sc, sizeof(sc), "set -- 200 200; %s", script);
        atomic_store(&hits, 0);
        assert_int_equal(run(p, sc, &a, &s), 0);
        assert_int_equal(a.asked, 1); /* the second connection is not asked again */
        char want[64];
        snprintf(want, sizeof(want), "ask.test:%u", (unsigned) port);
        assert_string_equal(a.target, want);
        assert_string_equal(a.protocol, "http");
        assert_int_equal(a.timeout_ms, 30000);
        assert_int_equal(atomic_load(&hits), 2);
        assert_int_equal(count(s.buf, "\"type\":\"egress.ask\""), 1);
        assert_int_equal(count(s.buf, "\"answer\":\"allow-session\""), 1);
        assert_int_equal(s.violations, 0);
        cordon_policy_free(p);
}

static void test_allow_once(void **state) {
        (void) state;
        cordon_policy *p = ask_policy(0);
        asker a = { .answer = CORDON_EGRESS_ALLOW_ONCE };
        stream s = { 0 };
        char script[1024], sc[1100];
        snprintf(sc, sizeof(sc), "set -- 200 200; %s", two_curls(script, sizeof(script)));
        atomic_store(&hits, 0);
        assert_int_equal(run(p, sc, &a, &s), 0);
        assert_int_equal(a.asked, 2); /* once means this connection */
        assert_string_equal(a.protocol, "tcp");
        assert_int_equal(atomic_load(&hits), 2);
        assert_int_equal(count(s.buf, "\"answer\":\"allow-once\""), 2);
        cordon_policy_free(p);
}

static void test_deny(void **state) {
        (void) state;
        cordon_policy *p = ask_policy(0);
        asker a = { .answer = CORDON_EGRESS_DENY };
        stream s = { 0 };
        char script[1024], sc[1100];
        snprintf(sc, sizeof(sc), "set -- 403 000; %s", two_curls(script, sizeof(script)));
        atomic_store(&hits, 0);
        assert_int_equal(run(p, sc, &a, &s), 0);
        assert_int_equal(a.asked, 1); /* denied: not asked again */
        assert_int_equal(atomic_load(&hits), 0);
        assert_int_equal(s.violations, 2);
        assert_string_equal(s.rule, "ask: denied earlier in this run");
        assert_int_equal(count(s.buf, "\"answer\":\"deny\""), 1);
        cordon_policy_free(p);
}

static void test_late_answer_is_timeout(void **state) {
        (void) state;
        cordon_policy *p = ask_policy(200);
        asker a = { .answer = CORDON_EGRESS_ALLOW_SESSION, .late_ms = 50 };
        stream s = { 0 };
        char script[512];
        snprintf(script, sizeof(script),
                 "test \"$(curl -s -o /dev/null --max-time 20 -w %%{http_code} "
                 "http://ask.test:%u/)\" = 403", (unsigned) port);
        atomic_store(&hits, 0);
        assert_int_equal(run(p, script, &a, &s), 0);
        assert_int_equal(a.asked, 1);
        assert_int_equal(a.timeout_ms, 200);
        assert_int_equal(atomic_load(&hits), 0);
        assert_int_equal(s.violations, 1);
        assert_string_equal(s.rule, "ask: no answer within 200 ms");
        assert_int_equal(count(s.buf, "\"answer\":\"timeout\""), 1);
        assert_int_equal(count(s.buf, "\"answer\":\"allow-session\""), 0);
        cordon_policy_free(p);
}

/* cordon_spawn's options carry the callback too. */
static void test_spawn(void **state) {
        (void) state;
        cordon_policy *p = ask_policy(0);
        asker a = { .answer = CORDON_EGRESS_ALLOW_ONCE };
        char script[512];
        snprintf(script, sizeof(script),
                 "test \"$(curl -s -o /dev/null --max-time 20 -w %%{http_code} "
                 "--socks5-hostname 127.0.0.1:1080 http://ask.test:%u/)\" = 200",
                 (unsigned) port);
        char sh[] = "/bin/sh", dash_c[] = "-c", path[] = "PATH=/usr/bin:/bin", henv[PATH_MAX + 8];
        char *argv[] = { sh, dash_c, script, NULL };
        snprintf(henv, sizeof(henv), "HOME=%s", home);
        char *env[] = { henv, path, NULL };
        cordon_spawn_options o;
        cordon_spawn_options_init(&o);
        o.environ = env;
        o.on_egress_ask = on_ask;
        o.ask_userdata = &a;
        cordon_process *proc = NULL;
        cordon_error err = { 0 };
        if (cordon_spawn(p, argv, &o, &proc, &err) < 0)
                fail_msg("cordon_spawn: %s", err.message);
        cordon_run_result res = { 0 };
        assert_int_equal(cordon_process_wait(proc, -1, &res, &err), 0);
        assert_int_equal(res.exit_code, 0);
        assert_int_equal(a.asked, 1);
        assert_string_equal(a.protocol, "socks5");
        cordon_process_free(proc);
        cordon_policy_free(p);
}

/* A warm session: the question is an egress.ask event in the exec's stream, answered with
 * cordon_session_egress_answer() (here from the event callback itself); allow-session holds for
 * the session's later execs. Without CORDON_SESSION_EGRESS_ANSWERS every question is refused at
 * once. */
typedef struct session_asker {
        cordon_session *s;
        cordon_egress_answer answer;
        unsigned asked, answered;
        char events[16384];
        size_t len;
} session_asker;

static void session_event(void *userdata, const char *line, size_t len) {
        session_asker *a = userdata;
        if (a->len + len < sizeof(a->events)) {
                memcpy(a->events + a->len, line, len);
                a->len += len;
                a->events[a->len] = '\0';
        }
        const char *id = strstr(line, "\"id\":");
        if (!strstr(line, "\"type\":\"egress.ask\"") || !id || id >= line + len)
                return;
        a->asked++;
        cordon_error err = { 0 };
        if (cordon_session_egress_answer(a->s, strtoull(id + 5, NULL, 10), a->answer, &err) == 0)
                a->answered++;
}

static int session_run(session_asker *a, const char *script) {
        char sh[] = "/bin/sh", dash_c[] = "-c";
        char *argv[] = { sh, dash_c, (char *) script, NULL };
        cordon_spawn_options o;
        cordon_spawn_options_init(&o);
        o.on_event = session_event;
        o.event_userdata = a;
        o.stdin_fd = o.stdout_fd = o.stderr_fd = CORDON_FD_NULL;
        cordon_process *proc = NULL;
        cordon_error err = { 0 };
        if (cordon_session_exec(a->s, argv, &o, &proc, &err) < 0)
                fail_msg("cordon_session_exec: %s", err.message);
        cordon_run_result res = { 0 };
        assert_int_equal(cordon_process_wait(proc, -1, &res, &err), 0);
        cordon_process_free(proc);
        return res.exit_code;
}

static cordon_session *launch(cordon_policy *p, unsigned flags) {
        char henv[PATH_MAX + 8], path[] = "PATH=/usr/bin:/bin";
        snprintf(henv, sizeof(henv), "HOME=%s", home);
        char *env[] = { henv, path, NULL };
        cordon_session_options so;
        cordon_session_options_init(&so);
        so.environ = env;
        so.flags = flags;
        cordon_session *s = NULL;
        cordon_error err = { 0 };
        if (cordon_session_launch(p, &so, &s, &err) < 0)
                fail_msg("cordon_session_launch: %s", err.message);
        return s;
}

/* A script whose curl to ask.test (through the proxy, or `--noproxy '*'`: redirected) must
 * answer `code`. */
static const char *curl_is(char *buf, size_t size, const char *code, bool redirected) {
        snprintf(buf, size,
                 "test \"$(curl -s -o /dev/null --max-time 20 -w %%{http_code} %s "
                 "http://ask.test:%u/)\" = %s",
                 redirected ? "--noproxy '*'" : "", (unsigned) port, code);
        return buf;
}

static void test_session(void **state) {
        (void) state;
        cordon_policy *p = ask_policy(0);
        char sc[512];
        session_asker a = { .answer = CORDON_EGRESS_ALLOW_SESSION };
        a.s = launch(p, CORDON_SESSION_EGRESS_ANSWERS);
        atomic_store(&hits, 0);
        assert_int_equal(session_run(&a, curl_is(sc, sizeof(sc), "200", false)), 0);
        assert_int_equal(a.asked, 1);
        assert_int_equal(a.answered, 1);
        assert_int_equal(count(a.events, "\"answer\":\"allow-session\""), 1);
        /* A later exec of the same session: allowed for the session, not asked again. */
        assert_int_equal(session_run(&a, curl_is(sc, sizeof(sc), "200", true)), 0);
        assert_int_equal(a.asked, 1);
        assert_int_equal(atomic_load(&hits), 2);
        cordon_error err = { 0 };
        assert_true(cordon_session_egress_answer(a.s, 1, (cordon_egress_answer) 9, &err) < 0);
        assert_string_equal(cordon_code_name(err.code), "USAGE");
        cordon_session_destroy(a.s);

        /* Without the flag: refused at once, recorded as unanswered. */
        session_asker b = { .answer = CORDON_EGRESS_ALLOW_SESSION };
        b.s = launch(p, 0);
        assert_int_equal(session_run(&b, curl_is(sc, sizeof(sc), "403", false)), 0);
        assert_int_equal(b.asked, 1);
        assert_int_equal(b.answered, 0); /* refused: the session has no answerer */
        assert_int_equal(count(b.events, "\"answer\":\"unanswered\""), 1);
        assert_int_equal(count(b.events, "ask: nobody to answer"), 1);
        assert_int_equal(atomic_load(&hits), 2);
        cordon_session_destroy(b.s);
        cordon_policy_free(p);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_allow_session),
                cmocka_unit_test(test_allow_once),
                cmocka_unit_test(test_deny),
                cmocka_unit_test(test_late_answer_is_timeout),
                cmocka_unit_test(test_spawn),
                cmocka_unit_test(test_session),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
