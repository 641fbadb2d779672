/* SPDX-License-Identifier: Apache-2.0 */
/* libcordon as a harness uses it: built against the public header alone and linked through
 * `pkg-config --cflags --libs cordon` (tests/linux/process-api.sh), run as root and as an
 * unprivileged user. Two threads spawn sandboxed commands at once, each with its own pipes, and
 * read their output; the main thread waits for both on their pidfds with poll(); one command is
 * signalled, one killed; descriptors are handed over and refused; events arrive in order;
 * cordon_spawn_options and cordon_run_options grow by their size. Warm sessions: one on its own
 * thread, one driven by this program's poll() loop (event-loop mode, output captured to events);
 * commands on a terminal (CORDON_SPAWN_TTY); the policy-checked file operations of a session
 * (cordon_session_fs_*), whose writes its execs see; the managed settings' opt-out flags.
 *
 *   process-api [WORKDIR]     (default: $CORDON_TEST_TMP, as tests/lib/run-as-user.sh sets it)
 *
 * Prints one "ok"/"not ok" line per check and exits 1 on any failure. */
#define _GNU_SOURCE
#include <cordon/cordon.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <pty.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

static int failures;
static const char *workdir;

static void check(int ok, const char *what, const char *detail) {
        printf("%s - %s%s%s\n", ok ? "ok" : "not ok", what, detail && !ok ? ": " : "",
               detail && !ok ? detail : "");
        if (!ok)
                failures++;
}

static cordon_policy *policy(void) {
        cordon_policy *p = NULL;
        cordon_error err = { 0 };
        const char *home = getenv("HOME");
        if (cordon_policy_new_default(workdir, home && home[0] == '/' ? home : "/", &p, &err) < 0) {
                fprintf(stderr, "cordon_policy_new_default: %s\n", err.message);
                exit(2);
        }
        return p;
}

/* Everything a descriptor yields until end of file, NUL-terminated (at most size - 1 bytes). */
static void read_all(int fd, char *buf, size_t size) {
        size_t n = 0;
        for (;;) {
                ssize_t r = read(fd, buf + n, size - 1 - n);
                if (r < 0 && errno == EINTR)
                        continue;
                if (r <= 0 || (n += (size_t) r) == size - 1)
                        break;
        }
        buf[n] = '\0';
}

/* Spawns `script` under sh with its stdout on a new pipe; returns the handle, *out_fd the read
 * end. */
static cordon_process *spawn_sh(cordon_policy *pol, const char *script, cordon_spawn_options *o,
                                int *out_fd, cordon_error *err) {
        int pp[2];
        if (pipe2(pp, O_CLOEXEC) < 0)
                return NULL;
        char *argv[] = { "sh", "-c", (char *) script, NULL };
        o->stdout_fd = pp[1];
        o->cwd = workdir;
        cordon_process *p = NULL;
        int r = cordon_spawn(pol, argv, o, &p, err);
        (void) close(pp[1]); /* the sandbox holds its own copy */
        if (r < 0) {
                (void) close(pp[0]);
                return NULL;
        }
        *out_fd = pp[0];
        return p;
}

/* ---- two threads, two commands at once ---------------------------------------------------- */

typedef struct worker {
        int id;
        cordon_policy *pol;
        pthread_barrier_t *barrier;
        cordon_process *proc;
        char out[256];
        char events[4096];
        size_t n_events;
        pthread_t self;          /* the worker's own thread */
        pthread_t starting;      /* the thread "starting" came from */
        bool library_side;       /* not the worker's: the run's own */
        bool one_thread;         /* "exit" came from the same one */
        cordon_error err;
} worker;

static void on_event(void *userdata, const char *line, size_t len) {
        worker *w = userdata;
        /* The event's type, in order: "starting,ready,exit,". */
        const char *t = memmem(line, len, "\"type\":\"", 8);
        if (!t)
                return;
        t += 8;
        size_t tl = strcspn(t, "\"");
        if (tl == 8 && memcmp(t, "starting", 8) == 0) {
                w->starting = pthread_self();
                w->library_side = !pthread_equal(w->self, pthread_self());
        }
        if (tl == 4 && memcmp(t, "exit", 4) == 0)
                w->one_thread = pthread_equal(w->starting, pthread_self());
        if (w->n_events + tl + 2 < sizeof(w->events)) {
                memcpy(w->events + w->n_events, t, tl);
                w->n_events += tl;
                w->events[w->n_events++] = ',';
                w->events[w->n_events] = '\0';
        }
}

static void *worker_main(void *arg) {
        worker *w = arg;
        char script[128];
        /* Both commands overlap in time: each sleeps between its two lines. */
        (void) snprintf(script, sizeof(script), "echo start-%d; sleep 0.3; echo end-%d", w->id,
                        w->id);
        cordon_spawn_options o;
        cordon_spawn_options_init(&o);
        o.on_event = on_event;
        o.event_userdata = w;
        int fd = -1;
        w->self = pthread_self();
        pthread_barrier_wait(w->barrier);
        w->proc = spawn_sh(w->pol, script, &o, &fd, &w->err);
        if (w->proc) {
                read_all(fd, w->out, sizeof(w->out));
                (void) close(fd);
        }
        return NULL;
}

static void test_two_threads(cordon_policy *pol) {
        pthread_barrier_t barrier;
        pthread_barrier_init(&barrier, NULL, 2);
        worker w[2] = { { .id = 1, .pol = pol, .barrier = &barrier },
                        { .id = 2, .pol = pol, .barrier = &barrier } };
        pthread_t t[2];
        for (int i = 0; i < 2; i++)
                pthread_create(&t[i], NULL, worker_main, &w[i]);
        for (int i = 0; i < 2; i++)
                pthread_join(t[i], NULL);
        pthread_barrier_destroy(&barrier);
        for (int i = 0; i < 2; i++) {
                char want[64], what[96];
                (void) snprintf(what, sizeof(what), "thread %d spawned its command", w[i].id);
                check(w[i].proc != NULL, what, w[i].err.message);
                (void) snprintf(want, sizeof(want), "start-%d\nend-%d\n", w[i].id, w[i].id);
                (void) snprintf(what, sizeof(what), "thread %d read its own command's output",
                                w[i].id);
                check(strcmp(w[i].out, want) == 0, what, w[i].out);
        }
        if (!w[0].proc || !w[1].proc)
                return;
        check(cordon_process_pid(w[0].proc) != cordon_process_pid(w[1].proc) &&
                      cordon_process_pidfd(w[0].proc) >= 0 && cordon_process_pidfd(w[1].proc) >= 0,
              "each handle has its own pid and pidfd", NULL);
        /* Both ends through their pidfds. */
        struct pollfd pfd[2] = { { .fd = cordon_process_pidfd(w[0].proc), .events = POLLIN },
                                 { .fd = cordon_process_pidfd(w[1].proc), .events = POLLIN } };
        int ended = 0;
        for (int rounds = 0; ended < 2 && rounds < 200; rounds++) {
                if (poll(pfd, 2, 100) < 0)
                        break;
                for (int i = 0; i < 2; i++)
                        if (pfd[i].fd >= 0 && (pfd[i].revents & POLLIN)) {
                                pfd[i].fd = -1;
                                ended++;
                        }
        }
        check(ended == 2, "poll() on both pidfds saw both sandboxes end", NULL);
        for (int i = 0; i < 2; i++) {
                cordon_run_result res = { 0 };
                cordon_error err = { 0 };
                int r = cordon_process_wait(w[i].proc, -1, &res, &err);
                check(r == 0 && res.exit_code == 0, "cordon_process_wait: exit 0", err.message);
                check(strcmp(w[i].events, "starting,ready,exit,") == 0,
                      "events: starting, ready, exit", w[i].events);
                check(w[i].library_side && w[i].one_thread,
                      "events: all from the run's own thread", NULL);
                cordon_process_free(w[i].proc);
        }
}

/* A worker thread spawns and exits at once: the sandbox must outlive it (it dies with the thread
 * that forked it, which is the run's own). */
typedef struct short_lived {
        cordon_policy *pol;
        cordon_process *proc;
        int fd;
        cordon_error err;
} short_lived;

static void *short_lived_main(void *arg) {
        short_lived *s = arg;
        cordon_spawn_options o;
        cordon_spawn_options_init(&o);
        s->proc = spawn_sh(s->pol, "sleep 0.3; echo still-here", &o, &s->fd, &s->err);
        return NULL;
}

static void test_spawner_exits(cordon_policy *pol) {
        short_lived s = { .pol = pol, .fd = -1 };
        pthread_t t;
        pthread_create(&t, NULL, short_lived_main, &s);
        pthread_join(t, NULL);
        check(s.proc != NULL, "a thread spawned and exited", s.err.message);
        if (!s.proc)
                return;
        char out[64];
        read_all(s.fd, out, sizeof(out));
        (void) close(s.fd);
        cordon_run_result res = { 0 };
        int r = cordon_process_wait(s.proc, -1, &res, &s.err);
        check(r == 0 && res.exit_code == 0 && strcmp(out, "still-here\n") == 0,
              "the command outlived the thread that spawned it", out);
        cordon_process_free(s.proc);
}

/* ---- signal, kill ------------------------------------------------------------------------- */

static void test_signal(cordon_policy *pol) {
        cordon_spawn_options o;
        cordon_spawn_options_init(&o);
        cordon_error err = { 0 };
        int fd = -1;
        /* The shell's job: a TERM reaches its whole process group (sleep too), the trap exits 7. */
        cordon_process *p = spawn_sh(pol, "trap 'echo got-term; exit 7' TERM; echo ready; "
                                          "while :; do sleep 0.05; done", &o, &fd, &err);
        check(p != NULL, "spawned the command to signal", err.message);
        if (!p)
                return;
        char line[16] = { 0 };
        ssize_t n = read(fd, line, 6);
        check(n == 6 && memcmp(line, "ready\n", 6) == 0, "it is running", line);
        check(cordon_process_wait(p, 0, NULL, NULL) == 1, "wait(0) while it runs says 1", NULL);
        check(cordon_process_signal(p, SIGTERM, &err) == 0, "cordon_process_signal(SIGTERM)",
              err.message);
        char rest[64];
        read_all(fd, rest, sizeof(rest));
        (void) close(fd);
        check(strcmp(rest, "got-term\n") == 0, "the command's trap ran", rest);
        cordon_run_result res = { 0 };
        int r = cordon_process_wait(p, 10000, &res, &err);
        check(r == 0 && res.exit_code == 7, "it exited 7 from its trap", err.message);
        check(cordon_process_signal(p, SIGTERM, &err) == -ESRCH, "no signal after the end", NULL);
        check(cordon_process_signal(p, 0, &err) == -EINVAL && err.code == CORDON_USAGE,
              "signal 0 is refused", NULL);
        cordon_process_free(p);
}

static void test_kill(cordon_policy *pol) {
        cordon_spawn_options o;
        cordon_spawn_options_init(&o);
        cordon_error err = { 0 };
        int fd = -1;
        cordon_process *p = spawn_sh(pol, "echo up; exec sleep 60", &o, &fd, &err);
        check(p != NULL, "spawned the command to kill", err.message);
        if (!p)
                return;
        char line[8] = { 0 };
        (void) read(fd, line, 3);
        check(cordon_process_kill(p, &err) == 0, "cordon_process_kill", err.message);
        struct pollfd pfd = { .fd = cordon_process_fd(p), .events = POLLIN };
        check(poll(&pfd, 1, 10000) == 1, "cordon_process_fd became readable", NULL);
        int r = cordon_process_wait(p, 0, NULL, &err);
        check(r < 0 && err.code == CORDON_KILLED, "wait says KILLED", err.message);
        check(cordon_process_kill(p, &err) == -ESRCH, "no kill after the end", NULL);
        (void) close(fd);
        cordon_process_free(p);
        /* Freeing a running handle kills and reaps it. */
        p = spawn_sh(pol, "exec sleep 60", &o, &fd, &err);
        check(p != NULL, "spawned a command to free while it runs", err.message);
        if (p) {
                cordon_process_free(p);
                char buf[8];
                check(read(fd, buf, sizeof(buf)) == 0, "freeing it ended the sandbox", NULL);
                (void) close(fd);
        }
}

/* ---- descriptors -------------------------------------------------------------------------- */

static void test_fds(cordon_policy *pol) {
        cordon_error err = { 0 };
        int side[2], in[2];
        if (pipe2(side, O_CLOEXEC) < 0 || pipe2(in, O_CLOEXEC) < 0)
                exit(2);
        cordon_fd_map map[] = { { .fd = side[1], .child_fd = 5 } };
        cordon_spawn_options o;
        cordon_spawn_options_init(&o);
        o.stdin_fd = in[0];
        o.fds = map;
        o.n_fds = 1;
        int fd = -1;
        cordon_process *p = spawn_sh(pol, "read line; echo \"$line\" >&5; ls /proc/self/fd | "
                                          "tr '\\n' ' '", &o, &fd, &err);
        (void) close(side[1]);
        (void) close(in[0]);
        check(p != NULL, "spawned with stdin and fd 5 handed over", err.message);
        if (!p)
                return;
        (void) write(in[1], "via-stdin\n", 10);
        (void) close(in[1]);
        char got[64], fds[256];
        read_all(side[0], got, sizeof(got));
        read_all(fd, fds, sizeof(fds));
        check(strcmp(got, "via-stdin\n") == 0, "stdin in, fd 5 out", got);
        /* ls sees 0, 1, 2, 5 and its own directory fd: nothing else of the caller's. */
        check(strcmp(fds, "0 1 2 3 5 ") == 0, "only the handed-over descriptors are open", fds);
        cordon_process_free(p);
        (void) close(side[0]);
        (void) close(fd);

        /* A directory reaches past the policy: refused before anything runs. */
        int dir = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        cordon_fd_map dmap[] = { { .fd = dir, .child_fd = 4 } };
        o.stdin_fd = 0;
        o.fds = dmap;
        p = spawn_sh(pol, "true", &o, &fd, &err);
        check(p == NULL && err.code == CORDON_POLICY_UNENFORCEABLE, "a directory fd is refused",
              err.message);
        cordon_process_free(p);
        (void) close(dir);
        /* An unconnected socket could be connected anywhere from the host's network. */
        int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        cordon_fd_map smap[] = { { .fd = s, .child_fd = 4 } };
        o.fds = smap;
        p = spawn_sh(pol, "true", &o, &fd, &err);
        check(p == NULL && err.code == CORDON_POLICY_UNENFORCEABLE,
              "an unconnected socket is refused", err.message);
        cordon_process_free(p);
        (void) close(s);
        /* Options that grow: a newer caller's larger struct is honoured while what this library
         * does not know is zero, refused otherwise; an unset size is refused. */
        struct {
                cordon_spawn_options o;
                uint64_t newer_field;
        } big;
        memset(&big, 0, sizeof(big));
        cordon_spawn_options_init(&big.o);
        big.o.size = sizeof(big);
        p = spawn_sh(pol, "true", &big.o, &fd, &err);
        check(p != NULL, "a larger options struct with zeros beyond is accepted", err.message);
        if (p) {
                check(cordon_process_wait(p, -1, NULL, &err) == 0, "and runs", err.message);
                cordon_process_free(p);
                (void) close(fd);
        }
        big.newer_field = 1;
        p = spawn_sh(pol, "true", &big.o, &fd, &err);
        check(p == NULL && err.code == CORDON_USAGE, "a field this library does not know is refused",
              err.message);
        cordon_spawn_options unset;
        memset(&unset, 0, sizeof(unset));
        p = spawn_sh(pol, "true", &unset, &fd, &err);
        check(p == NULL && err.code == CORDON_USAGE && strstr(err.message, "_init()"),
              "an options struct without its size is refused", err.message);
        /* Bad maps are usage errors. */
        cordon_fd_map bad[] = { { .fd = 0, .child_fd = 1 } };
        o.fds = bad;
        p = spawn_sh(pol, "true", &o, &fd, &err);
        check(p == NULL && err.code == CORDON_USAGE, "child_fd below 3 is refused", err.message);
}

/* ---- cordon_run's options ------------------------------------------------------------------ */

static void count_event(void *userdata, const char *line, size_t len) {
        (void) line;
        (void) len;
        ++*(int *) userdata;
}

/* cordon_run_options grow as cordon_spawn_options do (test_fds): a newer caller's larger struct
 * is honoured while what this library does not know is zero, refused otherwise, and so is an
 * unset size; a refused struct runs nothing and starts no events stream. NULL: the defaults. */
static void test_run_options(cordon_policy *pol) {
        char marker[4096];
        (void) snprintf(marker, sizeof(marker), "%s/run-options-ran", workdir);
        char sh[] = "/bin/sh", dash_c[] = "-c", script[] = "echo ran > \"$0\"";
        char *argv[] = { sh, dash_c, script, marker, NULL };
        cordon_run_result res;
        cordon_error err = { 0 };
        int r = cordon_run(pol, argv, NULL, &res, &err);
        check(r == 0 && res.exit_code == 0 && access(marker, F_OK) == 0,
              "cordon_run without options runs with the defaults", err.message);
        (void) unlink(marker);
        struct {
                cordon_run_options o;
                uint64_t newer_field;
        } big;
        memset(&big, 0, sizeof(big));
        cordon_run_options_init(&big.o);
        big.o.size = sizeof(big);
        int events = 0;
        big.o.on_event = count_event;
        big.o.event_userdata = &events;
        r = cordon_run(pol, argv, &big.o, &res, &err);
        check(r == 0 && res.exit_code == 0 && events > 0 && access(marker, F_OK) == 0,
              "a larger cordon_run_options with zeros beyond is honoured", err.message);
        (void) unlink(marker);
        events = 0;
        big.newer_field = 1;
        r = cordon_run(pol, argv, &big.o, &res, &err);
        check(r < 0 && err.code == CORDON_USAGE && events == 0 && access(marker, F_OK) < 0,
              "a cordon_run_options field this library does not know is refused before anything "
              "runs", err.message);
        cordon_run_options unset;
        memset(&unset, 0, sizeof(unset));
        unset.on_event = count_event;
        unset.event_userdata = &events;
        r = cordon_run(pol, argv, &unset, &res, &err);
        check(r < 0 && err.code == CORDON_USAGE && strstr(err.message, "cordon_run_options_init()") &&
                      events == 0 && access(marker, F_OK) < 0,
              "cordon_run_options without its size is refused", err.message);
}

/* ---- a warm session ------------------------------------------------------------------------ */

/* Runs `script` in the session with its stdout on a pipe; its output and result. */
static int session_sh(cordon_session *s, const char *script, char *out, size_t size,
                      cordon_run_result *res, cordon_error *err) {
        int pp[2];
        if (pipe2(pp, O_CLOEXEC) < 0)
                return -errno;
        char *argv[] = { "sh", "-c", (char *) script, NULL };
        cordon_spawn_options o;
        cordon_spawn_options_init(&o);
        o.stdout_fd = pp[1];
        cordon_process *p = NULL;
        int r = cordon_session_exec(s, argv, &o, &p, err);
        (void) close(pp[1]);
        if (r >= 0) {
                read_all(pp[0], out, size);
                r = cordon_process_wait(p, -1, res, err);
        }
        (void) close(pp[0]);
        cordon_process_free(p);
        return r;
}

static void test_session(cordon_policy *pol) {
        cordon_session_options so;
        cordon_session_options_init(&so);
        so.cwd = workdir;
        cordon_session *s = NULL;
        cordon_error err = { 0 };
        int r = cordon_session_launch(pol, &so, &s, &err);
        check(r == 0, "cordon_session_launch", err.message);
        if (r < 0)
                return;
        check(cordon_session_get_state(s) == CORDON_SESSION_WARM, "the session is warm", NULL);
        /* Three execs in the one sandbox: a file the first writes, the second sees. */
        char out[128];
        cordon_run_result res = { 0 };
        r = session_sh(s, "echo first > from-exec-1; echo one", out, sizeof(out), &res, &err);
        check(r == 0 && res.exit_code == 0 && strcmp(out, "one\n") == 0, "exec 1", err.message);
        r = session_sh(s, "cat from-exec-1; exit 3", out, sizeof(out), &res, &err);
        check(r == 0 && res.exit_code == 3 && strcmp(out, "first\n") == 0,
              "exec 2 sees exec 1's file and exits 3", out);
        /* The third runs while a fourth is signalled: two at once, each its own stdio. */
        int pp[2];
        if (pipe2(pp, O_CLOEXEC) < 0)
                exit(2);
        cordon_spawn_options o;
        cordon_spawn_options_init(&o);
        o.stdout_fd = pp[1];
        char *loop[] = { "sh", "-c", "trap 'echo term; exit 9' TERM; echo up; "
                                     "while :; do sleep 0.05; done", NULL };
        cordon_process *bg = NULL;
        r = cordon_session_exec(s, loop, &o, &bg, &err);
        (void) close(pp[1]);
        check(r == 0, "exec 4 (long-running) started", err.message);
        if (r == 0) {
                char up[8] = { 0 };
                (void) read(pp[0], up, 3);
                check(cordon_session_get_state(s) == CORDON_SESSION_ACTIVE, "the session is active",
                      NULL);
                r = session_sh(s, "echo three", out, sizeof(out), &res, &err);
                check(r == 0 && strcmp(out, "three\n") == 0, "exec 3 runs beside it", err.message);
                check(cordon_session_suspend(s, &err) == 0 &&
                              cordon_session_get_state(s) == CORDON_SESSION_SUSPENDED,
                      "suspend", err.message);
                /* Stopped: the signal stays pending, the trap cannot run until the resume. */
                check(cordon_process_signal(bg, SIGTERM, &err) == 0, "signal exec 4", err.message);
                struct pollfd pfd = { .fd = pp[0], .events = POLLIN };
                check(poll(&pfd, 1, 300) == 0, "suspended: exec 4 does not answer", NULL);
                check(cordon_session_resume(s, &err) == 0, "resume", err.message);
                read_all(pp[0], out, sizeof(out));
                r = cordon_process_wait(bg, 10000, &res, &err);
                check(r == 0 && res.exit_code == 9 && strcmp(out, "term\n") == 0,
                      "exec 4's trap ran and it exited 9", out);
                cordon_process_free(bg);
        }
        (void) close(pp[0]);
        check(cordon_session_get_state(s) == CORDON_SESSION_WARM, "warm again", NULL);
        /* A directory as stdin reaches past the policy: the exec fails, the session goes on. */
        int dir = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        cordon_spawn_options_init(&o);
        o.stdin_fd = dir;
        char *t[] = { "true", NULL };
        cordon_process *p = NULL;
        r = cordon_session_exec(s, t, &o, &p, &err);
        if (r == 0)
                r = cordon_process_wait(p, -1, &res, &err);
        check(r < 0 && err.code == CORDON_POLICY_UNENFORCEABLE, "a directory stdin is refused",
              err.message);
        cordon_process_free(p);
        (void) close(dir);
        cordon_session_destroy(s);
}

/* ---- a session driven by the caller's event loop ------------------------------------------ */

typedef struct loop_exec {
        cordon_process *proc;
        char types[256];      /* the events' types in order, "starting,ready,stdout,..." */
        char out[256];        /* the captured stdout */
        pthread_t from;       /* the thread the last event came from */
        char sid[128];        /* the first event's sessionId */
        bool done;
        int result;
        cordon_run_result res;
        cordon_error err;
} loop_exec;

static void loop_event(void *userdata, const char *line, size_t len) {
        loop_exec *x = userdata;
        x->from = pthread_self();
        const char *id = memmem(line, len, "\"sessionId\":\"", 13);
        if (id && !x->sid[0])
                (void) snprintf(x->sid, sizeof(x->sid), "%.*s", (int) strcspn(id + 13, "\""),
                                id + 13);
        const char *t = memmem(line, len, "\"type\":\"", 8);
        if (!t)
                return;
        t += 8;
        size_t tl = strcspn(t, "\""), n = strlen(x->types);
        if (n + tl + 2 < sizeof(x->types))
                (void) snprintf(x->types + n, sizeof(x->types) - n, "%.*s,", (int) tl, t);
        /* "data":"..." of a stdout chunk: these scripts write plain ASCII lines. */
        const char *d = tl == 6 && memcmp(t, "stdout", 6) == 0 ? memmem(line, len, "\"data\":\"", 8)
                                                               : NULL;
        if (d) {
                d += 8;
                size_t dl = strcspn(d, "\""), m = strlen(x->out);
                if (m + dl + 1 < sizeof(x->out))
                        (void) snprintf(x->out + m, sizeof(x->out) - m, "%.*s", (int) dl, d);
        }
}

/* Polls the session's fd and the execs' result fds, dispatching, until every exec is done. */
static bool loop_until_done(cordon_session *s, loop_exec *xs, size_t n) {
        for (int rounds = 0; rounds < 2000; rounds++) {
                struct pollfd pfd[4] = { { .fd = cordon_session_fd(s), .events = POLLIN } };
                bool all = true;
                for (size_t i = 0; i < n; i++) {
                        pfd[i + 1] = (struct pollfd){ .fd = xs[i].done ? -1
                                                                    : cordon_process_fd(xs[i].proc),
                                                      .events = POLLIN };
                        all = all && xs[i].done;
                }
                if (all)
                        return true;
                if (poll(pfd, n + 1, 10000) <= 0) {
                        fprintf(stderr, "loop: nothing to read for 10 s\n");
                        return false;
                }
                cordon_error err = { 0 };
                if ((pfd[0].revents & POLLIN) && cordon_session_dispatch(s, &err) < 0) {
                        fprintf(stderr, "loop: %s\n", err.message);
                        return false;
                }
                for (size_t i = 0; i < n; i++)
                        if (!xs[i].done && (pfd[i + 1].revents & POLLIN)) {
                                xs[i].result = cordon_process_wait(xs[i].proc, 0, &xs[i].res,
                                                                   &xs[i].err);
                                xs[i].done = xs[i].result != 1;
                        }
        }
        return false;
}

static int loop_exec_start(cordon_session *s, loop_exec *x, const char *script,
                           cordon_spawn_options *o, cordon_error *err) {
        char *argv[] = { "sh", "-c", (char *) script, NULL };
        memset(x, 0, sizeof(*x));
        o->on_event = loop_event;
        o->event_userdata = x;
        return cordon_session_exec(s, argv, o, &x->proc, err);
}

static void test_event_loop(cordon_policy *pol) {
        cordon_session_options so;
        cordon_session_options_init(&so);
        so.cwd = workdir;
        so.flags = CORDON_SESSION_EVENT_LOOP;
        cordon_session *s = NULL;
        cordon_error err = { 0 };
        int r = cordon_session_launch(pol, &so, &s, &err);
        check(r == 0 && cordon_session_get_state(s) == CORDON_SESSION_CREATED &&
                      cordon_session_fd(s) >= 0,
              "event loop: launch returns at once, in state created", err.message);
        if (r < 0)
                return;
        for (int i = 0; i < 500 && cordon_session_get_state(s) == CORDON_SESSION_CREATED; i++) {
                struct pollfd pfd = { .fd = cordon_session_fd(s), .events = POLLIN };
                if (poll(&pfd, 1, 10000) > 0 && cordon_session_dispatch(s, &err) < 0)
                        break;
        }
        check(cordon_session_get_state(s) == CORDON_SESSION_WARM && !cordon_session_error(s),
              "event loop: dispatch makes it warm", err.message);
        /* Two execs at once: one captured to events, one on a pipe of ours. */
        loop_exec xs[2];
        cordon_spawn_options o;
        cordon_spawn_options_init(&o);
        o.stdout_fd = CORDON_FD_NULL;
        o.capture = CORDON_CAPTURE_STDOUT;
        r = loop_exec_start(s, &xs[0], "echo captured; touch .env 2>/dev/null; echo after", &o, &err);
        check(r == 0, "event loop: exec with capture to events", err.message);
        int pp[2];
        if (r < 0 || pipe2(pp, O_CLOEXEC) < 0)
                exit(2);
        cordon_spawn_options_init(&o);
        o.stdout_fd = pp[1];
        r = loop_exec_start(s, &xs[1], "echo piped", &o, &err);
        (void) close(pp[1]);
        check(r == 0, "event loop: a second exec beside it", err.message);
        if (r < 0)
                exit(2);
        cordon_error werr = { 0 };
        r = cordon_process_wait(xs[0].proc, 100, NULL, &werr);
        check(r == -EDEADLK && werr.code == CORDON_USAGE,
              "event loop: waiting on the loop's thread fails instead of hanging", werr.message);
        bool done = loop_until_done(s, xs, 2);
        char piped[64];
        read_all(pp[0], piped, sizeof(piped));
        (void) close(pp[0]);
        char what[1200];
        (void) snprintf(what, sizeof(what), "done %d, result %d, exit %d, violations %u: %s",
                        done, xs[0].result, xs[0].res.exit_code, xs[0].res.violations,
                        xs[0].err.message);
        check(done && xs[0].result == 0 && xs[0].res.exit_code == 0 && xs[0].res.violations == 1,
              "event loop: the captured exec ran, its refusal counted", what);
        check(strcmp(xs[0].out, "captured\\nafter\\n") == 0, "event loop: its output as events",
              xs[0].out);
        const char *v = strstr(xs[0].types, "violation");
        const char *last_out = strstr(xs[0].types, "stdout,exit,");
        check(strncmp(xs[0].types, "starting,ready,", 15) == 0 && v && last_out &&
                      v < last_out && pthread_equal(xs[0].from, pthread_self()),
              "event loop: events in order, the refusal before the output after it, on this "
              "thread", xs[0].types);
        (void) snprintf(what, sizeof(what), "result %d, output '%s', events %s", xs[1].result,
                        piped, xs[1].types);
        const char *sid = cordon_session_id(s);
        check(sid && sid[0] && strcmp(xs[0].sid, sid) == 0 && strcmp(xs[1].sid, sid) == 0,
              "event loop: every exec's events carry the session's id", xs[0].sid);
        check(xs[1].result == 0 && strcmp(piped, "piped\n") == 0 &&
                      strcmp(xs[1].types, "starting,ready,exit,") == 0,
              "event loop: the piped exec", what);
        cordon_process_free(xs[0].proc);
        cordon_process_free(xs[1].proc);
        /* Capture of a stream with a descriptor of ours is refused. */
        cordon_spawn_options_init(&o);
        o.capture = CORDON_CAPTURE_STDERR;
        char *t[] = { "true", NULL };
        cordon_process *p = NULL;
        r = cordon_session_exec(s, t, &o, &p, &err);
        check(r < 0 && err.code == CORDON_USAGE, "capture to a descriptor is refused", err.message);
        /* A handle freed while its command runs: killed, and free returns at once. */
        char *slow[] = { "sleep", "100", NULL };
        cordon_spawn_options_init(&o);
        r = cordon_session_exec(s, slow, &o, &p, &err);
        check(r == 0, "event loop: a long exec", err.message);
        cordon_process_free(p);
        check(cordon_session_get_state(s) == CORDON_SESSION_WARM,
              "event loop: freeing a running exec ends it", NULL);
        cordon_session_destroy(s);
}

/* ---- commands on a terminal ------------------------------------------------------------- */

/* What the PTY shows until `want` appears (or 10 s pass). */
static bool pty_read_until(int master, const char *want, char *buf, size_t size) {
        size_t n = 0;
        buf[0] = '\0';
        for (int i = 0; i < 100 && !strstr(buf, want); i++) {
                struct pollfd pfd = { .fd = master, .events = POLLIN };
                if (poll(&pfd, 1, 100) <= 0)
                        continue;
                ssize_t r = read(master, buf + n, size - 1 - n);
                if (r <= 0)
                        break;
                n += (size_t) r;
                buf[n] = '\0';
        }
        return strstr(buf, want) != NULL;
}

/* The command's shell has fd 0 as its controlling terminal (tty_nr of /proc/PID/stat). */
static const char tty_script[] = "read -r _ _ _ _ _ _ t _ < /proc/$$/stat; test -t 1 && "
                                 "[ \"$t\" != 0 ] && echo ctty-ok";

static void test_tty(cordon_policy *pol) {
        int m, sl;
        if (openpty(&m, &sl, NULL, NULL, NULL) < 0) {
                check(0, "openpty", strerror(errno));
                return;
        }
        cordon_spawn_options o;
        cordon_spawn_options_init(&o);
        o.stdin_fd = o.stdout_fd = o.stderr_fd = sl;
        o.flags = CORDON_SPAWN_TTY;
        o.cwd = workdir;
        char *argv[] = { "sh", "-c", (char *) tty_script, NULL };
        cordon_process *p = NULL;
        cordon_error err = { 0 };
        int r = cordon_spawn(pol, argv, &o, &p, &err);
        check(r == 0, "cordon_spawn with CORDON_SPAWN_TTY", err.message);
        char buf[512];
        check(r == 0 && pty_read_until(m, "ctty-ok", buf, sizeof(buf)),
              "spawn: the PTY is the command's controlling terminal", buf);
        cordon_run_result res = { 0 };
        check(r == 0 && cordon_process_wait(p, 10000, &res, &err) == 0 && res.exit_code == 0,
              "spawn: the terminal's command exits 0", err.message);
        cordon_process_free(p);
        /* The same in a warm session. */
        cordon_session_options so;
        cordon_session_options_init(&so);
        so.cwd = workdir;
        cordon_session *s = NULL;
        r = cordon_session_launch(pol, &so, &s, &err);
        if (r == 0)
                r = cordon_session_exec(s, argv, &o, &p, &err);
        check(r == 0, "cordon_session_exec with CORDON_SPAWN_TTY", err.message);
        check(r == 0 && pty_read_until(m, "ctty-ok", buf, sizeof(buf)),
              "session: the PTY is the command's controlling terminal", buf);
        check(r == 0 && cordon_process_wait(p, 10000, &res, &err) == 0 && res.exit_code == 0,
              "session: the terminal's command exits 0", err.message);
        cordon_process_free(p);
        /* Not a terminal: refused. */
        o.stdin_fd = CORDON_FD_NULL;
        p = NULL;
        check(s && cordon_session_exec(s, argv, &o, &p, &err) < 0 && err.code == CORDON_USAGE,
              "CORDON_SPAWN_TTY without a terminal is refused", err.message);
        cordon_session_destroy(s);
        (void) close(sl);
        (void) close(m);
}

/* ---- file operations in a session ---------------------------------------------------------- */

/* workdir + "/" + rel (static: one at a time). */
static const char *at(const char *rel) {
        static char buf[4096];
        (void) snprintf(buf, sizeof(buf), "%s/%s", workdir, rel);
        return buf;
}

static bool exists(const char *path) {
        return access(path, F_OK) == 0;
}

/* The harness's own file tools through a warm session (cordon_session_fs_*): a write into the
 * workspace that an exec of the same session reads back, an edit, a read; a protected path and
 * a secret refused, with the refusal filled as a command's `violation` would be. */
static void test_session_fs(void) {
        cordon_policy *pol = policy();
        char secret[4096];
        (void) snprintf(secret, sizeof(secret), "%s", at("fs-secret.txt"));
        int fd = open(secret, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        check(fd >= 0 && write(fd, "hunter2\n", 8) == 8, "fs: the secret file", strerror(errno));
        (void) close(fd);
        check(cordon_policy_add_deny_read(pol, secret) == 0, "fs: denyRead the secret", NULL);
        cordon_session_options so;
        cordon_session_options_init(&so);
        so.cwd = workdir;
        cordon_session *s = NULL;
        cordon_error err = { 0 };
        int r = cordon_session_launch(pol, &so, &s, &err);
        check(r == 0, "fs: cordon_session_launch", err.message);
        if (r < 0) {
                cordon_policy_free(pol);
                return;
        }
        static const char text[] = "written by the harness\n";
        cordon_fs_written w = { 0 };
        cordon_fs_refusal ref = { .action = "stale" };
        r = cordon_session_fs_write(s, at("from-fs.txt"), text, strlen(text), &w, &ref, &err);
        check(r == 0 && w.created && w.size == strlen(text) && !ref.action,
              "fs: cordon_session_fs_write into the workspace", err.message);
        char out[128];
        cordon_run_result res = { 0 };
        r = session_sh(s, "cat from-fs.txt", out, sizeof(out), &res, &err);
        check(r == 0 && res.exit_code == 0 && strcmp(out, text) == 0,
              "fs: an exec of the session reads it back", out);
        r = cordon_session_fs_edit(s, at("from-fs.txt"), "harness", 7, "library", 7, &w, &ref,
                                   &err);
        cordon_fs_data d = { 0 };
        if (r == 0)
                r = cordon_session_fs_read(s, at("from-fs.txt"), 0, 0, &d, &ref, &err);
        check(r == 0 && d.len == strlen(text) && strcmp(d.data, "written by the library\n") == 0
                      && d.eof, "fs: cordon_session_fs_edit, then _read", err.message);
        cordon_fs_data_free(&d);
        /* A hooks directory the user made after the launch: planned at the call, protected. */
        check(mkdir(at(".git"), 0755) == 0 && mkdir(at(".git/hooks"), 0755) == 0,
              "fs: .git/hooks made", strerror(errno));
        r = cordon_session_fs_write(s, at(".git/hooks/pre-commit"), "evil", 4, &w, &ref, &err);
        check(r == -EACCES && err.code == CORDON_POLICY_UNENFORCEABLE && ref.action &&
                      strcmp(ref.action, "file-write*") == 0 && strstr(ref.rule, ".git/hooks") &&
                      strstr(ref.target, ".git/hooks/pre-commit"),
              "fs: a write into .git/hooks is refused, the refusal filled", err.message);
        check(!exists(at(".git/hooks/pre-commit")), "fs: nothing was written there", NULL);
        r = cordon_session_fs_write(s, at(".bashrc"), "evil", 4, &w, &ref, &err);
        check(r == -EACCES && err.code == CORDON_POLICY_UNENFORCEABLE && ref.action &&
                      strstr(ref.rule, ".bashrc"),
              "fs: a shell start-up file is refused", err.message);
        check(!exists(at(".bashrc")), "fs: no .bashrc was made", NULL);
        r = cordon_session_fs_read(s, secret, 0, 0, &d, &ref, &err);
        check(r == -EACCES && err.code == CORDON_POLICY_UNENFORCEABLE && !d.data && ref.action &&
                      strcmp(ref.action, "file-read*") == 0 && strstr(ref.rule, "fs-secret.txt"),
              "fs: a read of a secret is refused, the refusal filled", err.message);
        cordon_fs_entry *e = NULL;
        size_t n = 0;
        bool truncated = true;
        r = cordon_session_fs_list(s, workdir, &e, &n, &truncated, NULL, &err);
        bool listed = false;
        for (size_t i = 0; r == 0 && i < n; i++)
                if (strcmp(e[i].name, "fs-secret.txt") == 0)
                        listed = e[i].secret && e[i].size == 0;
        check(r == 0 && !truncated && listed, "fs: the listing shows the secret as the sandbox does",
              err.message);
        cordon_fs_entries_free(e, n);
        check(cordon_session_fs_stat(NULL, workdir, &(cordon_fs_entry) { 0 }, NULL, &err) < 0 &&
                      err.code == CORDON_USAGE, "fs: no session is a usage error", err.message);
        cordon_session_destroy(s);
        (void) rmdir(at(".git/hooks"));
        (void) rmdir(at(".git"));
        cordon_policy_free(pol);
}

/* ---- the managed settings' opt-outs ---------------------------------------------------- */

/* The flags through the public header: accepted by cordon_spawn and cordon_session_launch, refused
 * by cordon_session_exec (the session's sandbox settled them at its launch). What they opt out of
 * is tests/linux/test-managed.c's (it points the launch at a managed file of its own). */
static void test_managed_opt_out(cordon_policy *pol) {
        char *argv[] = { "true", NULL };
        cordon_spawn_options o;
        cordon_spawn_options_init(&o);
        o.cwd = workdir;
        o.flags = CORDON_SPAWN_NO_MANAGED_SETTINGS;
        cordon_process *p = NULL;
        cordon_error err = { 0 };
        cordon_run_result res = { 0 };
        int r = cordon_spawn(pol, argv, &o, &p, &err);
        check(r == 0 && cordon_process_wait(p, 10000, &res, &err) == 0 && res.exit_code == 0,
              "cordon_spawn with CORDON_SPAWN_NO_MANAGED_SETTINGS", err.message);
        cordon_process_free(p);
        cordon_session_options so;
        cordon_session_options_init(&so);
        so.cwd = workdir;
        so.flags = CORDON_SESSION_NO_MANAGED_SETTINGS;
        cordon_session *s = NULL;
        r = cordon_session_launch(pol, &so, &s, &err);
        check(r == 0, "cordon_session_launch with CORDON_SESSION_NO_MANAGED_SETTINGS",
              err.message);
        p = NULL;
        check(s && cordon_session_exec(s, argv, &o, &p, &err) < 0 && err.code == CORDON_USAGE &&
                      !p,
              "cordon_session_exec refuses CORDON_SPAWN_NO_MANAGED_SETTINGS", err.message);
        cordon_session_destroy(s);
}

int main(int argc, char **argv) {
        workdir = argc > 1 ? argv[1] : getenv("CORDON_TEST_TMP");
        if (argc > 2 || !workdir || workdir[0] != '/') {
                fprintf(stderr, "usage: process-api [WORKDIR] (or CORDON_TEST_TMP)\n");
                return 2;
        }
        char hv[32];
        (void) snprintf(hv, sizeof(hv), "%d.%d.%d", CORDON_VERSION_MAJOR, CORDON_VERSION_MINOR,
                        CORDON_VERSION_PATCH);
        check(strcmp(hv, cordon_version()) == 0 && CORDON_VERSION_AT_LEAST(0, 1, 0) &&
                      !CORDON_VERSION_AT_LEAST(CORDON_VERSION_MAJOR + 1, 0, 0),
              "the header's version macros are the library's version", cordon_version());
        cordon_policy *pol = policy();
        test_two_threads(pol);
        test_spawner_exits(pol);
        test_signal(pol);
        test_kill(pol);
        test_fds(pol);
        test_run_options(pol);
        test_session(pol);
        test_event_loop(pol);
        test_tty(pol);
        test_session_fs();
        test_managed_opt_out(pol);
        cordon_policy_free(pol);
        printf("%d failed\n", failures);
        return failures ? 1 : 0;
}
