/* SPDX-License-Identifier: Apache-2.0 */
/* attack: dispatch and shared helpers. See attack.h for the exit status contract. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attack.h"

const char *attack_current = "?";

__attribute__((format(printf, 3, 0))) static int verdict(int status, const char *tag,
                                                        const char *fmt, va_list ap) {
        fprintf(stderr, "attack: %s: %s: ", attack_current, tag);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        return status;
}

#define DEFINE_VERDICT(fn, status, tag)                                                           \
        int fn(const char *fmt, ...) {                                                            \
                va_list ap;                                                                       \
                va_start(ap, fmt);                                                                \
                int r = verdict(status, tag, fmt, ap);                                            \
                va_end(ap);                                                                       \
                return r;                                                                         \
        }

DEFINE_VERDICT(refused, V_REFUSED, "refused (good)")
DEFINE_VERDICT(escaped, V_ESCAPED, "ESCAPED")
DEFINE_VERDICT(harness, V_HARNESS, "harness error")
DEFINE_VERDICT(worked, V_REFUSED, "worked (good)")
DEFINE_VERDICT(failed, V_ESCAPED, "ALLOWED CASE FAILED")

long read_some(int fd, char *buf, size_t cap) {
        size_t n = 0;
        while (n + 1 < cap) {
                ssize_t k = read(fd, buf + n, cap - 1 - n);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0) {
                        buf[n] = '\0';
                        return n > 0 ? (long) n : -errno;
                }
                if (k == 0)
                        break;
                n += (size_t) k;
        }
        buf[n] = '\0';
        return (long) n;
}

bool has_marker(const char *buf) {
        return strstr(buf, SECRET_MARKER) != NULL;
}

int parse_pid(const char *arg) {
        if (strcmp(arg, "parent") == 0)
                return getppid();
        if (strcmp(arg, "init") == 0)
                return 1;
        char *end = NULL;
        errno = 0;
        long v = strtol(arg, &end, 10);
        if (errno != 0 || end == arg || *end != '\0' || v < 0 || v > 4194304)
                return -1;
        return (int) v;
}

static const attack_cmd *const tables[] = {
        attack_fs_cmds, attack_sys_cmds, attack_race_cmds, attack_net_cmds, attack_host_cmds,
        attack_unix_cmds, attack_limits_cmds, attack_meta_cmds,
};

static void usage(void) {
        fprintf(stderr, "usage: attack SUBCOMMAND [ARGS...]\n");
        for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++)
                for (const attack_cmd *c = tables[t]; c->name; c++)
                        fprintf(stderr, "  %-20s %s\n", c->name, c->args);
}

int main(int argc, char **argv) {
        if (argc < 2) {
                usage();
                return V_HARNESS;
        }
        /* Unbuffered so that output interleaves sanely with the sandbox's own messages. */
        setvbuf(stdout, NULL, _IONBF, 0);
        for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++)
                for (const attack_cmd *c = tables[t]; c->name; c++) {
                        if (strcmp(c->name, argv[1]) != 0)
                                continue;
                        attack_current = c->name;
                        if (argc - 2 < c->min_args) {
                                fprintf(stderr, "attack: %s: usage: %s %s\n", c->name, c->name,
                                        c->args);
                                return V_HARNESS;
                        }
                        return c->fn(argc - 2, argv + 2);
                }
        fprintf(stderr, "attack: unknown subcommand '%s'\n", argv[1]);
        usage();
        return V_HARNESS;
}
