/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fsops: the file-operation loops of the creation-cost benchmark (bench/run.py).
 *
 *   fsops create DIR N     create DIR, then N files in it (O_CREAT|O_WRONLY, 100 bytes, close)
 *   fsops prepare DIR K    create K files f0..f(K-1) in DIR (setup, not timed by the driver)
 *   fsops open DIR N       open f(i mod K) read-only and close it, N times (K found by prepare)
 *
 * Prints the loop's own elapsed time in seconds on stdout, so the driver can report it apart from
 * the command's start-up.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static int die(const char *what, const char *arg) {
        fprintf(stderr, "fsops: %s %s: %s\n", what, arg, strerror(errno));
        return 1;
}

static int create_files(const char *dir, long n, const char *prefix) {
        char buf[100], path[4096];
        memset(buf, 'x', sizeof buf);
        if (mkdir(dir, 0755) < 0 && errno != EEXIST)
                return die("mkdir", dir);
        for (long i = 0; i < n; i++) {
                snprintf(path, sizeof path, "%s/%s%ld", dir, prefix, i);
                int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0644);
                if (fd < 0)
                        return die("open", path);
                if (write(fd, buf, sizeof buf) != (ssize_t) sizeof buf)
                        return die("write", path);
                close(fd);
        }
        return 0;
}

static int open_files(const char *dir, long n) {
        char path[4096];
        long k = 0;
        for (;; k++) { /* how many files prepare made */
                snprintf(path, sizeof path, "%s/f%ld", dir, k);
                if (access(path, F_OK) < 0)
                        break;
        }
        if (k == 0)
                return die("no prepared files in", dir);
        for (long i = 0; i < n; i++) {
                snprintf(path, sizeof path, "%s/f%ld", dir, i % k);
                int fd = open(path, O_RDONLY | O_CLOEXEC);
                if (fd < 0)
                        return die("open", path);
                close(fd);
        }
        return 0;
}

int main(int argc, char **argv) {
        if (argc != 4) {
                fprintf(stderr, "usage: fsops create|prepare|open DIR N\n");
                return 2;
        }
        long n = strtol(argv[3], NULL, 10);
        double t0 = now();
        int r;
        if (strcmp(argv[1], "create") == 0)
                r = create_files(argv[2], n, "c");
        else if (strcmp(argv[1], "prepare") == 0)
                r = create_files(argv[2], n, "f");
        else if (strcmp(argv[1], "open") == 0)
                r = open_files(argv[2], n);
        else
                r = 2;
        if (r == 0)
                printf("%.6f\n", now() - t0);
        return r;
}
