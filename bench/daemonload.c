/* SPDX-License-Identifier: Apache-2.0 */
/*
 * daemonload: cordond's client for bench/daemon.py (BENCHMARKS.md, section "cordond").
 *
 *   daemonload latency SOCK WORKDIR ROUNDS WARMUP [LABEL CMD... [:: LABEL CMD...]...]
 *   daemonload concurrent SOCK WORKDIR SESSIONS EXECS
 *   daemonload idle SOCK WORKDIR SESSIONS CONNS
 *   daemonload spawn N
 *
 * latency: launches one warm session in WORKDIR, then in every round runs each of these once,
 * the order rotated by one per round (no variant always follows the same neighbour):
 *   bare  fork + exec + waitpid of /bin/true from this process (stdio on /dev/null);
 *   warm  session.exec of ["/bin/true"] in the warm session: request written, lines read up to
 *         the response with the same id (events included), response parsed, exitCode checked;
 *         when each of its three events arrived is recorded too ("marks");
 *   echo  the same client code against a trivial echo server (a forked process on a socketpair)
 *         that answers each request at once with the four lines a warm exec gets: this is what
 *         the client, the socket and two wake-ups cost, i.e. the floor of any daemon round trip;
 *   list  session.list on the daemon (a round trip through the daemon, no session host);
 *   and each extra command given (cold `cordon run -- /bin/true`, bwrap), fork + exec + waitpid;
 *   an extra LABEL given @SOCK instead of a command is a warm exec as above in a session of its
 *   own on the daemon at SOCK (another daemon's: one with many idle sessions, for instance).
 * Prints one JSON object per variant: {"label", "runs", "failures", "ms": [...]}.
 *
 * concurrent: SESSIONS threads, each on its own connection, launch one session each; then, all
 * started together, each runs EXECS execs of /bin/true in its session, one after the other;
 * then each destroys its session and disconnects. Between the phases it prints one JSON line
 * and waits for a line on stdin, so bench/daemon.py can sample the daemon's process tree:
 *   {"phase":"launched",...}  (wait)  {"phase":"execs",...}  (wait)  {"phase":"destroyed",...}
 * Every failure is counted by kind; a reply that takes more than 60 s counts as a timeout.
 *
 * idle: SESSIONS sessions launched over CONNS connections (one thread each, launching one after
 * the other) and then left idle; the same phases and stdin hand-shakes as concurrent, without
 * the execs: {"phase":"launched",...}  (wait)  {"phase":"destroyed",...}. A daemon takes a bounded
 * number of clients (DAEMON_MAX_CLIENTS), but any number of sessions per client.
 *
 * spawn: N fork + exec + waitpid of /bin/true in a tight loop (after 10 untimed ones), printed
 * as the latency variants are; run on the host and inside a session, it separates what the
 * confinement costs the command itself from what the daemon's plumbing costs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define REPLY_TIMEOUT_S 60
#define MAX_VARIANTS 8
#define LINE_MAX_BYTES (1u << 20)

_Noreturn static void die(const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        fputs("daemonload: ", stderr);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        va_end(ap);
        exit(2);
}

static double now_ms(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec * 1e3 + (double) ts.tv_nsec / 1e6;
}

/* ---- a connection: buffered lines ------------------------------------------------------------ */

typedef struct conn {
        int fd;
        char *buf;
        size_t len, off, cap;
        uint64_t next_id;
} conn;

static void conn_init(conn *c, int fd) {
        *c = (conn){ .fd = fd, .cap = 65536, .next_id = 1 };
        c->buf = malloc(c->cap);
        if (!c->buf)
                die("out of memory");
        struct timeval tv = { .tv_sec = REPLY_TIMEOUT_S };
        (void) setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

static int conn_open(conn *c, const char *path) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        if (strlen(path) >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        memcpy(sa.sun_path, path, strlen(path) + 1);
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        if (connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0) {
                int e = errno;
                (void) close(fd);
                return -e;
        }
        conn_init(c, fd);
        return 0;
}

static void conn_close(conn *c) {
        if (c->fd >= 0)
                (void) close(c->fd);
        c->fd = -1;
        free(c->buf);
        c->buf = NULL;
}

static int write_all(int fd, const char *s, size_t n) {
        while (n > 0) {
                ssize_t w = write(fd, s, n);
                if (w < 0 && errno == EINTR)
                        continue;
                if (w <= 0)
                        return w < 0 ? -errno : -EPIPE;
                s += w;
                n -= (size_t) w;
        }
        return 0;
}

/* The next line (without '\n', NUL-terminated in place); -ETIMEDOUT, -EPIPE at EOF. */
static int conn_line(conn *c, char **ret) {
        for (;;) {
                char *nl = memchr(c->buf + c->off, '\n', c->len - c->off);
                if (nl) {
                        *nl = '\0';
                        *ret = c->buf + c->off;
                        c->off = (size_t) (nl - c->buf) + 1;
                        return 0;
                }
                if (c->off > 0) {
                        memmove(c->buf, c->buf + c->off, c->len - c->off);
                        c->len -= c->off;
                        c->off = 0;
                }
                if (c->len == c->cap) {
                        if (c->cap >= LINE_MAX_BYTES)
                                return -E2BIG;
                        char *nb = realloc(c->buf, c->cap * 2);
                        if (!nb)
                                return -ENOMEM;
                        c->buf = nb;
                        c->cap *= 2;
                }
                ssize_t n = read(c->fd, c->buf + c->len, c->cap - c->len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return errno == EAGAIN || errno == EWOULDBLOCK ? -ETIMEDOUT : -errno;
                if (n == 0)
                        return -EPIPE;
                c->len += (size_t) n;
        }
}

#define MARKS 3 /* a warm exec's events: starting, ready, exit */

/* Sends {"v":1,"id":N,"method":M,"params":P} and reads lines up to the response with id N.
 * Returns its "result" (a new reference), or NULL with *ret_err set: the error's code for an
 * error response, "io" when the connection failed, "timeout" after REPLY_TIMEOUT_S. With
 * `marks`, the time from the request to the arrival of each of the first MARKS events (ms). */
static json_t *call_marked(conn *c, const char *method, const char *params, double *marks,
                           const char **ret_err) {
        uint64_t id = c->next_id++;
        char req[1024];
        int n = snprintf(req, sizeof(req), "{\"v\":1,\"id\":%" PRIu64 ",\"method\":\"%s\","
                         "\"params\":%s}\n", id, method, params);
        if (n < 0 || (size_t) n >= sizeof(req))
                die("request too long");
        double t0 = marks ? now_ms() : 0;
        int k = 0;
        if (write_all(c->fd, req, (size_t) n) < 0) {
                *ret_err = "io";
                return NULL;
        }
        for (;;) {
                char *line;
                int r = conn_line(c, &line);
                if (r < 0) {
                        *ret_err = r == -ETIMEDOUT ? "timeout" : "io";
                        return NULL;
                }
                json_t *o = json_loads(line, 0, NULL);
                json_t *res = json_object_get(o, "result"), *err = json_object_get(o, "error");
                bool ours = o && json_integer_value(json_object_get(o, "id")) == (json_int_t) id;
                if (!ours || (!res && !err)) {
                        if (ours && marks && k < MARKS)
                                marks[k++] = now_ms() - t0;
                        json_decref(o); /* an event of this call (or noise): read on */
                        continue;
                }
                if (res) {
                        json_incref(res);
                        json_decref(o);
                        return res;
                }
                static __thread char code[64];
                snprintf(code, sizeof(code), "%s",
                         json_string_value(json_object_get(err, "code")) ?: "error");
                json_decref(o);
                *ret_err = code;
                return NULL;
        }
}

static json_t *call(conn *c, const char *method, const char *params, const char **ret_err) {
        return call_marked(c, method, params, NULL, ret_err);
}

/* session.launch in `workdir`: the session id in `sid` when it came up warm. */
static int launch(conn *c, const char *workdir, char sid[300], const char **ret_err) {
        char params[600];
        int n = snprintf(params, sizeof(params), "{\"workdir\":\"%s\"}", workdir);
        if (n < 0 || (size_t) n >= sizeof(params) || strpbrk(workdir, "\"\\"))
                die("workdir unsuitable: %s", workdir);
        json_t *h = call(c, "session.launch", params, ret_err);
        if (!h)
                return -1;
        const char *state = json_string_value(json_object_get(h, "state"));
        const char *id = json_string_value(json_object_get(h, "sessionId"));
        int r = state && id && strcmp(state, "warm") == 0 && strlen(id) < 300 ? 0 : -1;
        if (r == 0)
                snprintf(sid, 300, "%s", id);
        else
                *ret_err = "launch-state";
        json_decref(h);
        return r;
}

/* One session.exec of /bin/true: 0, or -1 with *ret_err (an error code, or "exit-nonzero");
 * `marks` as for call_marked(). */
static int exec_true(conn *c, const char *sid, double *marks, const char **ret_err) {
        char params[512];
        snprintf(params, sizeof(params), "{\"sessionId\":\"%s\",\"argv\":[\"/bin/true\"]}", sid);
        json_t *res = call_marked(c, "session.exec", params, marks, ret_err);
        if (!res)
                return -1;
        json_int_t code = json_integer_value(json_object_get(res, "exitCode"));
        bool ok = json_is_integer(json_object_get(res, "exitCode")) && code == 0;
        json_decref(res);
        if (!ok)
                *ret_err = "exit-nonzero";
        return ok ? 0 : -1;
}

static int destroy(conn *c, const char *sid, const char **ret_err) {
        char params[512];
        snprintf(params, sizeof(params), "{\"sessionId\":\"%s\"}", sid);
        json_t *res = call(c, "session.destroy", params, ret_err);
        json_decref(res);
        return res ? 0 : -1;
}

/* ---- the echo server ------------------------------------------------------------------------- */

/* Answers every request line at once with what a warm exec of /bin/true gets: three events and
 * the response, with the request's id. Reads no JSON beyond the id: it costs next to nothing. */
_Noreturn static void echo_serve(int fd) {
        conn c;
        conn_init(&c, fd);
        struct timeval tv = { 0 }; /* no timeout: the client may be busy with other variants */
        (void) setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        char *line, out[2048];
        while (conn_line(&c, &line) == 0) {
                const char *p = strstr(line, "\"id\":");
                unsigned long long id = p ? strtoull(p + 5, NULL, 10) : 0;
                const char *ev = "\"sessionId\":\"s-0123456789abcdef01234567\","
                                 "\"time\":\"2026-11-30T16:51:22.439Z\"";
                int n = snprintf(out, sizeof(out),
                                 "{\"v\":1,\"id\":%llu,\"event\":{\"type\":\"starting\",%s,"
                                 "\"backend\":\"native\"}}\n"
                                 "{\"v\":1,\"id\":%llu,\"event\":{\"type\":\"ready\",%s,"
                                 "\"backend\":\"native\"}}\n"
                                 "{\"v\":1,\"id\":%llu,\"event\":{\"type\":\"exit\",%s,"
                                 "\"exitCode\":0}}\n"
                                 "{\"v\":1,\"id\":%llu,\"result\":{\"exitCode\":0,"
                                 "\"backend\":\"native\",\"violations\":0,\"warm\":true}}\n",
                                 id, ev, id, ev, id, ev, id);
                if (write_all(fd, out, (size_t) n) < 0)
                        break;
        }
        _exit(0);
}

static pid_t echo_start(conn *c) {
        int sp[2];
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0)
                die("socketpair: %s", strerror(errno));
        pid_t pid = fork();
        if (pid < 0)
                die("fork: %s", strerror(errno));
        if (pid == 0) {
                (void) close(sp[0]);
                echo_serve(sp[1]);
        }
        (void) close(sp[1]);
        conn_init(c, sp[0]);
        return pid;
}

/* ---- latency ----------------------------------------------------------------------------------- */

typedef enum kind { K_BARE, K_WARM, K_ECHO, K_LIST, K_CMD, K_WARM_AT } kind;

typedef struct variant {
        const char *label;
        kind k;
        char **argv;      /* K_BARE, K_CMD */
        double *ms;
        double (*marks)[MARKS]; /* K_WARM: when each event arrived */
        int n, failures;
        conn at;          /* K_WARM_AT: the other daemon, and the session there */
        char at_sid[300];
} variant;

typedef struct lat_ctx {
        conn daemon, echo;
        char sid[300];
        int devnull;
} lat_ctx;

static bool spawn_wait(lat_ctx *x, char **argv) {
        pid_t pid = fork();
        if (pid == 0) {
                (void) dup2(x->devnull, 0);
                (void) dup2(x->devnull, 1);
                (void) dup2(x->devnull, 2);
                execv(argv[0], argv);
                _exit(127);
        }
        int st = 0;
        if (pid < 0 || waitpid(pid, &st, 0) < 0)
                die("fork/waitpid: %s", strerror(errno));
        return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static void run_variant(lat_ctx *x, variant *v, bool record) {
        const char *err = NULL;
        json_t *res;
        bool ok = false;
        double t0 = now_ms();
        switch (v->k) {
        case K_BARE:
        case K_CMD:
                ok = spawn_wait(x, v->argv);
                break;
        case K_WARM:
                ok = exec_true(&x->daemon, x->sid, v->marks[v->n], &err) == 0;
                break;
        case K_ECHO:
                ok = exec_true(&x->echo, x->sid, NULL, &err) == 0;
                break;
        case K_WARM_AT:
                ok = exec_true(&v->at, v->at_sid, NULL, &err) == 0;
                break;
        case K_LIST:
                res = call(&x->daemon, "session.list", "{}", &err);
                ok = json_is_array(json_object_get(res, "sessions"));
                json_decref(res);
                break;
        default:
                die("unknown variant");
        }
        double dt = now_ms() - t0;
        if (!record)
                return;
        if (!ok) {
                v->failures++;
                fprintf(stderr, "daemonload: %s failed%s%s\n", v->label, err ? ": " : "",
                        err ? err : "");
        }
        v->ms[v->n++] = dt;
}

static void print_variant(const variant *v) {
        printf("{\"label\": \"%s\", \"runs\": %d, \"failures\": %d, \"ms\": [", v->label, v->n,
               v->failures);
        for (int i = 0; i < v->n; i++)
                printf("%s%.4f", i ? ", " : "", v->ms[i]);
        printf("]");
        if (v->marks) {
                printf(", \"marks\": [");
                for (int i = 0; i < v->n; i++)
                        printf("%s[%.4f, %.4f, %.4f]", i ? ", " : "", v->marks[i][0],
                               v->marks[i][1], v->marks[i][2]);
                printf("]");
        }
        printf("}\n");
}

/* A warm session on the daemon at `sock` for the variant (K_WARM_AT). */
static void warm_at_open(variant *v, const char *sock, const char *workdir) {
        const char *err = NULL;
        int rc = conn_open(&v->at, sock);
        if (rc < 0)
                die("%s: cannot connect to %s: %s", v->label, sock, strerror(-rc));
        if (launch(&v->at, workdir, v->at_sid, &err) < 0)
                die("%s: session.launch: %s", v->label, err);
}

/* The extra variants: LABEL CMD... [:: LABEL CMD...]..., each CMD an absolute path or @SOCK. */
static int parse_cmds(char **args, int nargs, variant *vs, int k, const char *workdir) {
        for (int i = 0; i < nargs && k < MAX_VARIANTS;) {
                variant *v = &vs[k++];
                *v = (variant){ .label = args[i++], .k = K_CMD, .argv = &args[i] };
                while (i < nargs && strcmp(args[i], "::") != 0)
                        i++;
                if (i < nargs)
                        args[i++] = NULL;
                if (v->argv[0] && v->argv[0][0] == '@') {
                        v->k = K_WARM_AT;
                        warm_at_open(v, v->argv[0] + 1, workdir);
                } else if (!v->argv[0] || v->argv[0][0] != '/') {
                        die("%s: the command must be an absolute path or @SOCK", v->label);
                }
        }
        return k;
}

static int cmd_latency(char **argv, int argc) {
        const char *sock = argv[0], *workdir = argv[1];
        int rounds = atoi(argv[2]), warmup = atoi(argv[3]);
        if (rounds <= 0 || warmup < 0)
                die("bad ROUNDS/WARMUP");
        static char true_path[] = "/bin/true";
        static char *bare_argv[] = { true_path, NULL };
        variant vs[MAX_VARIANTS] = {
                { .label = "bare", .k = K_BARE, .argv = bare_argv },
                { .label = "warm", .k = K_WARM },
                { .label = "echo", .k = K_ECHO },
                { .label = "list", .k = K_LIST },
        };
        int k = parse_cmds(argv + 4, argc - 4, vs, 4, workdir);
        lat_ctx x = { .devnull = open("/dev/null", O_RDWR | O_CLOEXEC) };
        const char *err = NULL;
        int rc = x.devnull < 0 ? -errno : conn_open(&x.daemon, sock);
        if (rc < 0)
                die("cannot connect to %s: %s", sock, strerror(-rc));
        if (launch(&x.daemon, workdir, x.sid, &err) < 0)
                die("session.launch: %s", err);
        pid_t echo = echo_start(&x.echo);
        for (int j = 0; j < k; j++)
                if (!(vs[j].ms = calloc((size_t) rounds, sizeof(double))))
                        die("out of memory");
        /* Warm-up runs write their marks in row 0, which the first recorded run overwrites. */
        if (!(vs[1].marks = calloc((size_t) rounds, sizeof(*vs[1].marks))))
                die("out of memory");
        for (int r = 0; r < warmup + rounds; r++)
                for (int j = 0; j < k; j++)
                        run_variant(&x, &vs[(r + j) % k], r >= warmup);
        if (destroy(&x.daemon, x.sid, &err) < 0)
                die("session.destroy: %s", err);
        conn_close(&x.echo);
        (void) waitpid(echo, NULL, 0);
        conn_close(&x.daemon);
        for (int j = 0; j < k; j++) {
                if (vs[j].k == K_WARM_AT) {
                        if (destroy(&vs[j].at, vs[j].at_sid, &err) < 0)
                                die("%s: session.destroy: %s", vs[j].label, err);
                        conn_close(&vs[j].at);
                }
                print_variant(&vs[j]);
                free(vs[j].ms);
                free(vs[j].marks);
        }
        (void) close(x.devnull);
        return 0;
}

/* ---- concurrent --------------------------------------------------------------------------------- */

typedef enum err_kind { E_CONNECT, E_LAUNCH, E_EXEC, E_EXIT, E_TIMEOUT, E_IO, E_DESTROY, E_N } err_kind;

static const char *const err_names[E_N] = {
        [E_CONNECT] = "connect", [E_LAUNCH] = "launch", [E_EXEC] = "exec-error",
        [E_EXIT] = "exit-nonzero", [E_TIMEOUT] = "timeout", [E_IO] = "io", [E_DESTROY] = "destroy",
};

typedef struct shared {
        const char *sock, *workdir;
        int execs;
        pthread_barrier_t launched, go_execs, done_execs, go_destroy, destroyed;
        pthread_mutex_t lock;
        unsigned errors[E_N];
        char first_error[256];
} shared;

typedef struct worker {
        shared *sh;
        pthread_t t;
        conn c;
        char sid[300];
        bool up;
        double *ms;   /* execs' latencies */
        int n_ms;
        double launch_ms;
} worker;

static void count_error(worker *w, err_kind k, const char *what) {
        shared *sh = w->sh;
        if (what && (strcmp(what, "timeout") == 0 || strcmp(what, "io") == 0))
                k = strcmp(what, "timeout") == 0 ? E_TIMEOUT : E_IO;
        pthread_mutex_lock(&sh->lock);
        sh->errors[k]++;
        if (!sh->first_error[0])
                snprintf(sh->first_error, sizeof(sh->first_error), "%s%s%s", err_names[k],
                         what && strcmp(what, err_names[k]) != 0 ? ": " : "",
                         what && strcmp(what, err_names[k]) != 0 ? what : "");
        pthread_mutex_unlock(&sh->lock);
}

static void worker_execs(worker *w) {
        for (int i = 0; w->up && i < w->sh->execs; i++) {
                const char *err = NULL;
                double t0 = now_ms();
                if (exec_true(&w->c, w->sid, NULL, &err) < 0)
                        count_error(w, strcmp(err, "exit-nonzero") == 0 ? E_EXIT : E_EXEC, err);
                else
                        w->ms[w->n_ms++] = now_ms() - t0;
        }
}

static void *worker_main(void *arg) {
        worker *w = arg;
        shared *sh = w->sh;
        const char *err = NULL;
        double t0 = now_ms();
        int r = conn_open(&w->c, sh->sock);
        if (r < 0)
                count_error(w, E_CONNECT, strerror(-r));
        else if (launch(&w->c, sh->workdir, w->sid, &err) < 0)
                count_error(w, E_LAUNCH, err);
        else
                w->up = true;
        w->launch_ms = now_ms() - t0;
        pthread_barrier_wait(&sh->launched);
        pthread_barrier_wait(&sh->go_execs);
        worker_execs(w);
        pthread_barrier_wait(&sh->done_execs);
        pthread_barrier_wait(&sh->go_destroy);
        if (w->up && destroy(&w->c, w->sid, &err) < 0)
                count_error(w, E_DESTROY, err);
        conn_close(&w->c);
        pthread_barrier_wait(&sh->destroyed);
        return NULL;
}

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;
        return x < y ? -1 : x > y;
}

static void print_phase(const char *phase, shared *sh, double wall_ms, double *ms, int n) {
        printf("{\"phase\": \"%s\", \"wall_ms\": %.1f, \"errors\": {", phase, wall_ms);
        for (int k = 0; k < E_N; k++)
                printf("%s\"%s\": %u", k ? ", " : "", err_names[k], sh->errors[k]);
        printf("}, \"first_error\": \"%s\"", sh->first_error);
        if (ms) {
                qsort(ms, (size_t) n, sizeof(double), cmp_double);
                printf(", \"ms\": [");
                for (int i = 0; i < n; i++)
                        printf("%s%.3f", i ? ", " : "", ms[i]);
                printf("]");
        }
        printf("}\n");
        fflush(stdout);
}

/* Waits for the orchestrator's go (a line on stdin); EOF also goes on. */
static void wait_go(void) {
        char line[64];
        (void) fgets(line, sizeof(line), stdin);
}

static void raise_nofile(void) {
        struct rlimit rl;
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
                rl.rlim_cur = rl.rlim_max;
                (void) setrlimit(RLIMIT_NOFILE, &rl);
        }
}

static void barriers(shared *sh, unsigned n, bool init) {
        pthread_barrier_t *bs[] = { &sh->launched, &sh->go_execs, &sh->done_execs,
                                    &sh->go_destroy, &sh->destroyed };
        for (size_t i = 0; i < sizeof(bs) / sizeof(bs[0]); i++)
                if (init)
                        pthread_barrier_init(bs[i], NULL, n);
                else
                        pthread_barrier_destroy(bs[i]);
}

static int cmd_concurrent(char **argv) {
        shared sh = { .sock = argv[0], .workdir = argv[1], .execs = atoi(argv[3]) };
        int n = atoi(argv[2]);
        if (n <= 0 || n > 1000 || sh.execs <= 0)
                die("bad SESSIONS/EXECS");
        raise_nofile();
        pthread_mutex_init(&sh.lock, NULL);
        barriers(&sh, (unsigned) n + 1, true);
        worker *ws = calloc((size_t) n, sizeof(*ws));
        double *all = calloc((size_t) n * (size_t) sh.execs, sizeof(double));
        if (!ws || !all)
                die("out of memory");
        double t0 = now_ms();
        for (int i = 0; i < n; i++) {
                ws[i] = (worker){ .sh = &sh, .c = { .fd = -1 } };
                if (!(ws[i].ms = calloc((size_t) sh.execs, sizeof(double))) ||
                    pthread_create(&ws[i].t, NULL, worker_main, &ws[i]) != 0)
                        die("cannot start thread %d", i);
        }
        pthread_barrier_wait(&sh.launched);
        double launch_ms[1000];
        for (int i = 0; i < n; i++)
                launch_ms[i] = ws[i].launch_ms;
        print_phase("launched", &sh, now_ms() - t0, launch_ms, n);
        wait_go();
        t0 = now_ms();
        pthread_barrier_wait(&sh.go_execs);
        pthread_barrier_wait(&sh.done_execs);
        double wall = now_ms() - t0;
        int m = 0;
        for (int i = 0; i < n; i++)
                for (int j = 0; j < ws[i].n_ms; j++)
                        all[m++] = ws[i].ms[j];
        print_phase("execs", &sh, wall, all, m);
        wait_go();
        t0 = now_ms();
        pthread_barrier_wait(&sh.go_destroy);
        pthread_barrier_wait(&sh.destroyed);
        print_phase("destroyed", &sh, now_ms() - t0, NULL, 0);
        for (int i = 0; i < n; i++) {
                pthread_join(ws[i].t, NULL);
                free(ws[i].ms);
        }
        barriers(&sh, 0, false);
        free(ws);
        free(all);
        return 0;
}

/* ---- idle ------------------------------------------------------------------------------------ */

typedef struct idler {
        shared *sh;
        pthread_t t;
        conn c;
        int first, count;   /* the sessions it launches: [first, first + count) */
        char (*sids)[300];  /* all sessions' ids ("" when the launch failed) */
        double *launch_ms;
} idler;

static void *idler_main(void *arg) {
        idler *w = arg;
        shared *sh = w->sh;
        worker as = { .sh = sh }; /* count_error's view */
        const char *err = NULL;
        int r = conn_open(&w->c, sh->sock);
        if (r < 0)
                count_error(&as, E_CONNECT, strerror(-r));
        for (int i = w->first; r >= 0 && i < w->first + w->count; i++) {
                double t0 = now_ms();
                if (launch(&w->c, sh->workdir, w->sids[i], &err) < 0) {
                        w->sids[i][0] = '\0';
                        count_error(&as, E_LAUNCH, err);
                }
                w->launch_ms[i] = now_ms() - t0;
        }
        pthread_barrier_wait(&sh->launched);
        pthread_barrier_wait(&sh->go_destroy);
        for (int i = w->first; r >= 0 && i < w->first + w->count; i++)
                if (w->sids[i][0] && destroy(&w->c, w->sids[i], &err) < 0)
                        count_error(&as, E_DESTROY, err);
        conn_close(&w->c);
        pthread_barrier_wait(&sh->destroyed);
        return NULL;
}

static int cmd_idle(char **argv) {
        shared sh = { .sock = argv[0], .workdir = argv[1] };
        int n = atoi(argv[2]), nc = atoi(argv[3]);
        if (n <= 0 || n > 100000 || nc <= 0 || nc > n)
                die("bad SESSIONS/CONNS");
        raise_nofile();
        pthread_mutex_init(&sh.lock, NULL);
        barriers(&sh, (unsigned) nc + 1, true);
        idler *ws = calloc((size_t) nc, sizeof(*ws));
        char (*sids)[300] = calloc((size_t) n, sizeof(*sids));
        double *launch_ms = calloc((size_t) n, sizeof(double));
        if (!ws || !sids || !launch_ms)
                die("out of memory");
        double t0 = now_ms();
        for (int i = 0, first = 0; i < nc; i++) {
                int count = n / nc + (i < n % nc);
                ws[i] = (idler){ .sh = &sh, .c = { .fd = -1 }, .first = first, .count = count,
                                 .sids = sids, .launch_ms = launch_ms };
                first += count;
                if (pthread_create(&ws[i].t, NULL, idler_main, &ws[i]) != 0)
                        die("cannot start thread %d", i);
        }
        pthread_barrier_wait(&sh.launched);
        print_phase("launched", &sh, now_ms() - t0, launch_ms, n);
        wait_go();
        t0 = now_ms();
        pthread_barrier_wait(&sh.go_destroy);
        pthread_barrier_wait(&sh.destroyed);
        print_phase("destroyed", &sh, now_ms() - t0, NULL, 0);
        for (int i = 0; i < nc; i++)
                pthread_join(ws[i].t, NULL);
        barriers(&sh, 0, false);
        free(ws);
        free(sids);
        free(launch_ms);
        return 0;
}

/* ---- spawn ------------------------------------------------------------------------------------ */

/* N × fork + execv + waitpid of /bin/true in a tight loop, wherever this runs (on the host, or
 * inside a session: what the confinement costs the command itself). */
static int cmd_spawn(int n) {
        static char true_path[] = "/bin/true";
        static char *argv[] = { true_path, NULL };
        lat_ctx x = { .devnull = open("/dev/null", O_RDWR | O_CLOEXEC) };
        variant v = { .label = "spawn", .k = K_BARE, .argv = argv,
                      .ms = calloc((size_t) n, sizeof(double)) };
        if (x.devnull < 0 || !v.ms || n <= 0)
                die("spawn: bad N or out of memory");
        for (int i = 0; i < n + 10; i++)
                run_variant(&x, &v, i >= 10);
        print_variant(&v);
        free(v.ms);
        (void) close(x.devnull);
        return 0;
}

int main(int argc, char **argv) {
        if (argc == 3 && strcmp(argv[1], "spawn") == 0)
                return cmd_spawn(atoi(argv[2]));
        if (argc >= 6 && strcmp(argv[1], "latency") == 0)
                return cmd_latency(argv + 2, argc - 2);
        if (argc == 6 && strcmp(argv[1], "concurrent") == 0)
                return cmd_concurrent(argv + 2);
        if (argc == 6 && strcmp(argv[1], "idle") == 0)
                return cmd_idle(argv + 2);
        fprintf(stderr, "usage: daemonload latency SOCK WORKDIR ROUNDS WARMUP [LABEL CMD... "
                        "[:: LABEL CMD...]...]\n"
                        "       daemonload concurrent SOCK WORKDIR SESSIONS EXECS\n"
                        "       daemonload idle SOCK WORKDIR SESSIONS CONNS\n"
                        "       daemonload spawn N\n");
        return 2;
}
