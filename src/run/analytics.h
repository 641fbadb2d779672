/* SPDX-License-Identifier: Apache-2.0 */
/* Violation records safe to send to analytics (docs/events.schema.json, "analytics"): each
 * violation as its action, syscall and an HMAC-SHA256 of its target (path or host:port) under a
 * per-user key, plus counts per action and how the run ended. Never a path, host, rule, reason,
 * command line, environment or file content: a record that leaves the machine says what kind of
 * thing was refused, and lets one machine's records be grouped by target, without saying which.
 *
 * The key (32 random bytes) is $HOME/.config/cordon/secrets/analytics.key, mode 0600, made on
 * first use. That directory is in the secret read-deny set (docs/policy.md), so no sandboxed
 * command can read the key (and guess targets against their hashes) or plant one (the set is
 * creation-protected). Formatting is pure; only analytics_key_load() does I/O. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "cordon/cordon.h"

#define ANALYTICS_KEY_BYTES 32
#define ANALYTICS_KEY_PATH ".config/cordon/secrets/analytics.key" /* relative to $HOME */
#define ANALYTICS_HASH_HEX 65                                     /* 64 hex digits + NUL */
#define ANALYTICS_LINE_MAX 1024
#define ANALYTICS_MAX_ACTIONS 16

typedef struct analytics {
        unsigned char key[ANALYTICS_KEY_BYTES];
        uint64_t violations; /* refusals, an aggregate by its count */
        struct {
                char action[32];
                uint64_t n;
        } by_action[ANALYTICS_MAX_ACTIONS];
        size_t n_actions;
} analytics;

/* Reads the key under `home` (absolute), creating it (and the directories, 0700) when missing.
 * Refuses a key that is not a regular file of the caller's with 32 bytes and no group or other
 * access (POLICY_INVALID: a key others can read makes the hashes guessable). */
int analytics_key_load(const char *home, unsigned char key[ANALYTICS_KEY_BYTES],
                       cordon_error *err);

/* HMAC-SHA256(key, text) in lower-case hex. */
int analytics_hash_hex(const unsigned char key[ANALYTICS_KEY_BYTES], const char *text,
                       char out[ANALYTICS_HASH_HEX]);

/* Counts `v` and formats its record, one JSON line ending in '\n', into buf (at least
 * ANALYTICS_LINE_MAX bytes). Returns the length, or -errno. */
int analytics_violation_line(analytics *a, const cordon_violation *v, char *buf, size_t size);

/* The closing record: counts, and `end` ("exit", "killed", "error") with the exit code (exit)
 * or the error code's name (error). Returns the length, or -errno. */
int analytics_summary_line(const analytics *a, const char *end, int exit_code,
                           const char *error_code, char *buf, size_t size);
