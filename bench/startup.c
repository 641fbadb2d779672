/* SPDX-License-Identifier: Apache-2.0 */
/*
 * startup: times commands started cold, interleaved (bench/run.py).
 *
 *   startup ROUNDS WARMUP LABEL CMD... [:: LABEL CMD...]...
 *
 * Each round runs every command once, the order rotated by one per round so no command always
 * runs after the same neighbour. Each run is fork+exec with stdin/stdout/stderr on /dev/null;
 * wall time is CLOCK_MONOTONIC around fork..wait4, and the peak RSS is wait4's ru_maxrss: the
 * largest resident set of the child or of any descendant it waited for (so, for cordon, the
 * largest of cordon's own processes and the command). Prints one JSON object per command:
 *   {"label": L, "runs": N, "failures": F, "ms": [...], "maxrss_kib": [...]}
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_CMDS 8

typedef struct cmd {
        const char *label;
        char **argv;
        double *ms;
        long *rss;
        int n, failures;
} cmd;

static double now_ms(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec * 1e3 + (double) ts.tv_nsec / 1e6;
}

static void run_once(cmd *c, bool record) {
        double t0 = now_ms();
        pid_t pid = fork();
        if (pid == 0) {
                int null = open("/dev/null", O_RDWR);
                dup2(null, 0), dup2(null, 1), dup2(null, 2);
                execvp(c->argv[0], c->argv);
                _exit(127);
        }
        int st = 0;
        struct rusage ru;
        if (pid < 0 || wait4(pid, &st, 0, &ru) < 0) {
                perror("startup: fork/wait4");
                exit(2);
        }
        double dt = now_ms() - t0;
        if (!record)
                return;
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
                c->failures++;
        c->ms[c->n] = dt;
        c->rss[c->n] = ru.ru_maxrss;
        c->n++;
}

static void print_cmd(const cmd *c) {
        printf("{\"label\": \"%s\", \"runs\": %d, \"failures\": %d, \"ms\": [", c->label, c->n,
               c->failures);
        for (int i = 0; i < c->n; i++)
                printf("%s%.4f", i ? ", " : "", c->ms[i]);
        printf("], \"maxrss_kib\": [");
        for (int i = 0; i < c->n; i++)
                printf("%s%ld", i ? ", " : "", c->rss[i]);
        printf("]}\n");
}

int main(int argc, char **argv) {
        if (argc < 5) {
                fprintf(stderr, "usage: startup ROUNDS WARMUP LABEL CMD... [:: LABEL CMD...]\n");
                return 2;
        }
        int rounds = atoi(argv[1]), warmup = atoi(argv[2]), k = 0;
        cmd cmds[MAX_CMDS];
        for (int i = 3; i < argc && k < MAX_CMDS;) {
                cmd *c = &cmds[k++];
                memset(c, 0, sizeof *c);
                c->label = argv[i++];
                c->argv = &argv[i];
                while (i < argc && strcmp(argv[i], "::") != 0)
                        i++;
                if (i < argc)
                        argv[i++] = NULL; /* terminates this command's argv */
                c->ms = calloc((size_t) rounds, sizeof *c->ms);
                c->rss = calloc((size_t) rounds, sizeof *c->rss);
                if (!c->ms || !c->rss || !c->argv[0])
                        return 2;
        }
        for (int r = 0; r < warmup + rounds; r++)
                for (int j = 0; j < k; j++)
                        run_once(&cmds[(r + j) % k], r >= warmup);
        for (int j = 0; j < k; j++)
                print_cmd(&cmds[j]);
        return 0;
}
