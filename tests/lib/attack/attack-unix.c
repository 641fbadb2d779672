/* SPDX-License-Identifier: Apache-2.0 */
/*
 * attack: path-selective Unix sockets (allowUnixSockets). The driver lists one host socket
 * (ALLOWED) and serves another (FORBIDDEN) with `attack host-serve`, which fails the run when
 * anything reaches FORBIDDEN. Inside, the allowed socket must work; everything that tries to
 * turn a connect to ALLOWED into one to FORBIDDEN (a symlink, a rename during the call, a buffer
 * rewritten during the call) must not reach it.
 */
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "attack.h"

#define GREETING "cordon-allowed\n"

static double now_s(void) {
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        return (double) t.tv_sec + (double) t.tv_nsec / 1e9;
}

static socklen_t fill_addr(struct sockaddr_un *a, const char *path) {
        *a = (struct sockaddr_un) { .sun_family = AF_UNIX };
        snprintf(a->sun_path, sizeof(a->sun_path), "%s", path);
        return (socklen_t) (offsetof(struct sockaddr_un, sun_path) + strlen(a->sun_path) + 1);
}

/* Connects and reads the greeting: 1 greeted (the allowed server), 0 connected but no greeting,
 * -errno when the connect failed. */
static int try_connect(const struct sockaddr_un *a, socklen_t len) {
        int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (s < 0)
                return -errno;
        if (connect(s, (const struct sockaddr *) a, len) < 0) {
                int e = -errno;
                close(s);
                return e;
        }
        char buf[32] = "";
        long n = read_some(s, buf, sizeof(buf));
        close(s);
        return n > 0 && strcmp(buf, GREETING) == 0 ? 1 : 0;
}

/* unix-allowed PATH: the listed socket works from inside. */
static int cmd_unix_allowed(int argc, char **argv) {
        struct sockaddr_un a;
        socklen_t len = fill_addr(&a, argv[0]);
        int r = try_connect(&a, len);
        if (r == 1)
                return worked("connected to %s and got its greeting", argv[0]);
        if (r == 0)
                return failed("connected to %s but got no greeting", argv[0]);
        return failed("connect %s: %s", argv[0], strerror(-r));
}

typedef struct race {
        const char *allowed, *forbidden;
        atomic_bool stop;
        struct sockaddr_un addr; /* flipped under the connecting thread's feet */
        unsigned long swaps;
} race;

/* Keeps replacing ALLOWED's name: by a symlink to FORBIDDEN, then by the socket again (kept alive
 * under another name by a hard link). */
static void *swapper(void *arg) {
        race *r = arg;
        char keep[4200], evil[4200], good[4200];
        snprintf(keep, sizeof(keep), "%s.keep", r->allowed);
        snprintf(evil, sizeof(evil), "%s.evil", r->allowed);
        snprintf(good, sizeof(good), "%s.good", r->allowed);
        while (!atomic_load(&r->stop)) {
                unlink(evil);
                unlink(good);
                if (symlink(r->forbidden, evil) == 0 && rename(evil, r->allowed) == 0)
                        r->swaps++;
                if (link(keep, good) == 0)
                        (void) rename(good, r->allowed);
        }
        return NULL;
}

static void *flipper(void *arg) {
        race *r = arg;
        size_t la = strlen(r->allowed), lf = strlen(r->forbidden);
        char *p = r->addr.sun_path;
        while (!atomic_load(&r->stop)) {
                memcpy(p, r->forbidden, lf + 1);
                memcpy(p, r->allowed, la + 1);
                r->swaps++;
        }
        return NULL;
}

/* The connecting side of both races. The host server is the judge of escapes; here a greeting
 * counts the connects that went through. */
static int race_connects(race *r, void *(*fn)(void *), double seconds, bool flip) {
        pthread_t t;
        if (pthread_create(&t, NULL, fn, r) != 0)
                return harness("pthread_create failed");
        unsigned long tries = 0, greeted = 0, other = 0;
        struct sockaddr_un fixed;
        socklen_t len = fill_addr(&fixed, r->allowed);
        for (double end = now_s() + seconds; now_s() < end; tries++) {
                int c = try_connect(flip ? &r->addr : &fixed,
                                    flip ? (socklen_t) sizeof(r->addr) : len);
                greeted += c == 1;
                other += c == 0;
        }
        atomic_store(&r->stop, true);
        pthread_join(t, NULL);
        fprintf(stderr, "  %lu connects, %lu greeted by the allowed server, %lu other, %lu "
                        "swaps\n", tries, greeted, other, r->swaps);
        if (other)
                return escaped("%lu connections reached something else than the allowed socket",
                               other);
        if (greeted == 0)
                return failed("the allowed socket never answered");
        return refused("every connect reached the allowed socket or was refused");
}

/* unix-swap ALLOWED FORBIDDEN SECONDS: ALLOWED is in a writable directory; its name is swapped
 * for a symlink to FORBIDDEN while connects go on. */
static int cmd_unix_swap(int argc, char **argv) {
        race r = { .allowed = argv[0], .forbidden = argv[1] };
        char keep[4200];
        snprintf(keep, sizeof(keep), "%s.keep", r.allowed);
        unlink(keep);
        if (link(r.allowed, keep) < 0)
                return harness("link %s: %s", r.allowed, strerror(errno));
        return race_connects(&r, swapper, atof(argv[2]), false);
}

/* unix-flip ALLOWED FORBIDDEN SECONDS: the address buffer flips between the two paths while
 * connect() is called with it. */
static int cmd_unix_flip(int argc, char **argv) {
        race r = { .allowed = argv[0], .forbidden = argv[1] };
        if (strlen(r.allowed) >= sizeof(r.addr.sun_path) ||
            strlen(r.forbidden) >= sizeof(r.addr.sun_path))
                return harness("paths too long");
        r.addr.sun_family = AF_UNIX;
        snprintf(r.addr.sun_path, sizeof(r.addr.sun_path), "%s", r.allowed);
        return race_connects(&r, flipper, atof(argv[2]), true);
}

/* unix-dgram PATH: a datagram socket could sendto() any pathname socket: never created. */
static int cmd_unix_dgram(int argc, char **argv) {
        int s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (s < 0)
                return refused("socket(AF_UNIX, SOCK_DGRAM): %s", strerror(errno));
        struct sockaddr_un a;
        socklen_t len = fill_addr(&a, argv[0]);
        ssize_t n = sendto(s, "escaped\n", 8, 0, (struct sockaddr *) &a, len);
        close(s);
        return n < 0 ? refused("sendto: %s", strerror(errno)) : escaped("datagram sent");
}

/* ---- host side ------------------------------------------------------------------------------ */

static int listen_path(const char *path) {
        int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        struct sockaddr_un a;
        socklen_t len = fill_addr(&a, path);
        unlink(path);
        if (s < 0 || bind(s, (struct sockaddr *) &a, len) < 0 || listen(s, 64) < 0 ||
            chmod(path, 0666) < 0)
                return -1;
        return s;
}

/* Accepts what is pending; greets on the allowed listener, counts the forbidden ones. */
static unsigned long serve_pending(int allowed, int forbidden, int timeout_ms) {
        struct pollfd p[2] = { { .fd = allowed, .events = POLLIN },
                               { .fd = forbidden, .events = POLLIN } };
        unsigned long bad = 0;
        if (poll(p, 2, timeout_ms) <= 0)
                return 0;
        for (int i = 0; i < 2; i++) {
                int c;
                while ((c = accept4(p[i].fd, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
                        if (i == 0)
                                write_ignored(c, GREETING, strlen(GREETING));
                        else
                                bad++;
                        close(c);
                }
        }
        return bad;
}

/* host-serve ALLOWED FORBIDDEN -- CMD...: runs CMD while serving both; exit 1 when anything
 * reached FORBIDDEN, else CMD's status. */
static int cmd_host_serve(int argc, char **argv) {
        if (argc < 4 || strcmp(argv[2], "--") != 0)
                return harness("usage: host-serve ALLOWED FORBIDDEN -- CMD...");
        int ok = listen_path(argv[0]), bad = listen_path(argv[1]);
        if (ok < 0 || bad < 0)
                return harness("listen: %s", strerror(errno));
        pid_t pid = fork();
        if (pid == 0) {
                execvp(argv[3], argv + 3);
                fprintf(stderr, "attack: host-serve: exec %s: %s\n", argv[3], strerror(errno));
                _exit(127);
        }
        unsigned long got = 0;
        int st = 0;
        while (waitpid(pid, &st, WNOHANG) == 0)
                got += serve_pending(ok, bad, 5);
        got += serve_pending(ok, bad, 50);
        unlink(argv[0]);
        unlink(argv[1]);
        if (got)
                return escaped("%lu connection(s) reached the forbidden socket %s", got, argv[1]);
        return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

const attack_cmd attack_unix_cmds[] = {
        { "unix-allowed", "PATH", 1, cmd_unix_allowed },
        { "unix-swap", "ALLOWED FORBIDDEN SECONDS", 3, cmd_unix_swap },
        { "unix-flip", "ALLOWED FORBIDDEN SECONDS", 3, cmd_unix_flip },
        { "unix-dgram", "PATH", 1, cmd_unix_dgram },
        { "host-serve", "ALLOWED FORBIDDEN -- CMD...", 4, cmd_host_serve },
        { NULL, NULL, 0, NULL },
};
