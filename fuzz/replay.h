/* SPDX-License-Identifier: Apache-2.0 */
/* The seed-corpus replayer (fuzz/replay.c): the main() of every fuzz target's plain build, the
 * fuzz-*-corpus programs of fuzz/meson.build, so the unit suite runs each seed corpus without
 * libFuzzer. It takes the files, and the files of the directories (in name order, dot files
 * skipped), named on its command line; hands each to the target in a buffer of exactly its size
 * (a read past the end is an ASan report, as under libFuzzer); and fails when a seed cannot be
 * read or is larger than FUZZ_REPLAY_MAX, when a seed is not what its name says, or when there
 * was no seed at all. A broken promise inside the target aborts, as under libFuzzer.
 *
 * A target that defines libFuzzer's optional LLVMFuzzerInitialize() gets it called once, with the
 * command line, before the first seed. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* The largest seed the replayer reads (seed corpora are small; this only bounds a mistake). */
#define FUZZ_REPLAY_MAX (2u << 20)

/* Defined by each target: runs one seed through the same checks LLVMFuzzerTestOneInput() makes
 * and returns whether the outcome is the one the seed's name states (true when the name states
 * none). name is the file's name without its directory; data holds exactly size bytes. */
bool fuzz_replay_seed(const char *name, const uint8_t *data, size_t size);

/* The naming most seed corpora use: "valid-*" seeds must be accepted (r >= 0), "invalid-*" seeds
 * refused (r < 0). On a mismatch prints what happened, with why (the refusal's message, or NULL),
 * and returns false. */
bool fuzz_named_verdict(const char *name, int r, const char *why);

/* A broken promise of the target named `target`: says which, and aborts (under libFuzzer, the
 * crash it records with the input). */
__attribute__((noreturn)) static inline void fuzz_broken(const char *target, const char *what) {
        fprintf(stderr, "%s: broken promise: %s\n", target, what);
        abort();
}

#define FUZZ_CHECK(target, cond)                                                                  \
        do {                                                                                      \
                if (!(cond))                                                                      \
                        fuzz_broken(target, #cond);                                               \
        } while (0)
