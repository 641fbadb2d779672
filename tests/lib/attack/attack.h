/* SPDX-License-Identifier: Apache-2.0 */
/*
 * attack: the escape attempts the integration suite runs *inside* a cordon sandbox, plus a few
 * host-side helpers the driver runs *outside* it (listeners, a pty, process markers).
 *
 * Exit status contract of every inside subcommand:
 *   0  the escape was refused as expected (or, for an allowed case, the operation worked)
 *   1  the escape succeeded (or an allowed operation was refused); a line on stderr says what
 *   2  harness error: the attempt could not even be set up, so it proves nothing
 *
 * The helper is deliberately standalone (no libcordon code): it must not share a bug with what it
 * tests.
 */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <unistd.h>

#define V_REFUSED 0
#define V_ESCAPED 1
#define V_HARNESS 2

/* Every fake secret file the driver writes contains this line; finding it means a secret leaked. */
#define SECRET_MARKER "CORDON-IT-SECRET-7f3a9c"

typedef int (*attack_fn)(int argc, char **argv);

typedef struct attack_cmd {
        const char *name;
        const char *args;  /* usage text */
        int min_args;      /* after the subcommand name */
        attack_fn fn;
} attack_cmd;

/* Verdict helpers: print one line on stderr (prefixed "attack: <subcommand>: ") and return the
 * matching exit status. */
int refused(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int escaped(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int harness(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* For allowed cases: "worked" is status 0, "failed" is status 1. */
int worked(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int failed(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Reads up to cap-1 bytes of fd into buf, NUL-terminates; returns bytes or -errno. */
long read_some(int fd, char *buf, size_t cap);
/* True when the buffer holds the secret marker. */
bool has_marker(const char *buf);
/* Parses a pid argument: a number, "parent" (getppid) or "init" (1). Returns -1 on error. */
int parse_pid(const char *arg);

/* A write whose result does not matter (marker bytes into a file already proven writable). */
static inline void write_ignored(int fd, const void *buf, size_t len) {
        ssize_t r = write(fd, buf, len);
        (void) r;
}

extern const attack_cmd attack_fs_cmds[];
extern const attack_cmd attack_sys_cmds[];
extern const attack_cmd attack_race_cmds[];
extern const attack_cmd attack_net_cmds[];
extern const attack_cmd attack_host_cmds[];
extern const attack_cmd attack_unix_cmds[];
extern const attack_cmd attack_limits_cmds[];
extern const attack_cmd attack_meta_cmds[];
extern const char *attack_current;
