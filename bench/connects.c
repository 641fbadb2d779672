/* SPDX-License-Identifier: Apache-2.0 */
/*
 * connects: the cost of connect(2) as the command sees it (docs/design/seccomp.md: every
 * connect() of a run is performed by the supervisor; a blocking one on a thread of its pool).
 *
 *   connects tcp|unix N       N blocking connects to a listener of its own (127.0.0.1, or a
 *                             pathname socket in $TMPDIR or /tmp), each accepted and closed
 *
 * Prints the median time of one connect() in microseconds, then the mean.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static double now_us(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec * 1e6 + (double) ts.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;
        return x < y ? -1 : x > y;
}

static int listener(int unix_family, struct sockaddr_storage *addr, socklen_t *len) {
        int fd = socket(unix_family ? AF_UNIX : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -1;
        memset(addr, 0, sizeof(*addr));
        if (unix_family) {
                struct sockaddr_un *un = (struct sockaddr_un *) addr;
                const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
                un->sun_family = AF_UNIX;
                snprintf(un->sun_path, sizeof(un->sun_path), "%s/connects.%d", dir, (int) getpid());
                unlink(un->sun_path);
                *len = sizeof(*un);
        } else {
                struct sockaddr_in *in = (struct sockaddr_in *) addr;
                in->sin_family = AF_INET;
                in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
                *len = sizeof(*in);
        }
        if (bind(fd, (struct sockaddr *) addr, *len) < 0 || listen(fd, 16) < 0 ||
            getsockname(fd, (struct sockaddr *) addr, len) < 0)
                return -1;
        return fd;
}

int main(int argc, char **argv) {
        if (argc != 3 || (strcmp(argv[1], "tcp") != 0 && strcmp(argv[1], "unix") != 0)) {
                fprintf(stderr, "usage: connects tcp|unix N\n");
                return 2;
        }
        int unix_family = strcmp(argv[1], "unix") == 0;
        long n = strtol(argv[2], NULL, 10);
        if (n <= 0)
                return 2;
        struct sockaddr_storage addr;
        socklen_t len;
        int l = listener(unix_family, &addr, &len);
        double *t = calloc((size_t) n, sizeof(double)), sum = 0;
        if (l < 0 || !t) {
                fprintf(stderr, "connects: listener: %s\n", strerror(errno));
                return 1;
        }
        for (long i = 0; i < n; i++) {
                int c = socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
                double t0 = now_us();
                if (c < 0 || connect(c, (struct sockaddr *) &addr, len) < 0) {
                        fprintf(stderr, "connects: connect: %s\n", strerror(errno));
                        return 1;
                }
                t[i] = now_us() - t0;
                sum += t[i];
                int a = accept(l, NULL, NULL);
                if (a < 0) {
                        fprintf(stderr, "connects: accept: %s\n", strerror(errno));
                        return 1;
                }
                close(a);
                close(c);
        }
        qsort(t, (size_t) n, sizeof(double), cmp);
        printf("%.1f %.1f\n", t[n / 2], sum / (double) n);
        if (unix_family)
                unlink(((struct sockaddr_un *) &addr)->sun_path);
        return 0;
}
