/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target for the microvm channel's reader (src/linux/vm-frame.c): the input is what a
 * (possibly compromised) guest writes on the channel port. Oracles beyond "no crash, no
 * sanitizer report":
 *   - the host opened execs 1, 2 and 3 and then 4, which it closed (its END sent): every frame
 *     handed out is one a guest may send, with a payload inside the bounds and the shape of its
 *     type; an exec's frames name an open exec (1-3), never 0, the closed 4 or one never opened;
 *     the agent's (READY, ERROR) name 0; at most one EXIT per exec, and nothing of that exec
 *     after it; READY only first and empty; a violation leaves the reader failed with a reason,
 *     and every later call fails too;
 *   - chunking does not matter: fed one byte at a time, the reader hands out the same frames
 *     (type, size, bytes) and ends in the same state as fed the whole input at once.
 * Built with libFuzzer (-DCORDON_LIBFUZZER) and as a plain program replaying the seed corpus in
 * the unit suite: "ok-*" seeds end without a violation, "bad-*" seeds with one. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "linux/vm-frame.h"

#include "replay.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond) FUZZ_CHECK("fuzz-vm-frame", cond)

/* A digest of the frames handed out: enough to compare two readings. */
typedef struct reading {
        uint64_t hash;
        unsigned frames, exits[4]; /* per open exec 1..3 */
        bool failed;
} reading;

#define OPEN_EXECS 3u /* 1..3; 4 opened and closed */

static void check_frame(const vm_frame *f, reading *out) {
        CHECK(f->size <= VM_FRAME_MAX_PAYLOAD);
        bool agent = f->type == VM_FRAME_READY || f->type == VM_FRAME_ERROR;
        CHECK(agent ? f->exec == VM_FRAME_AGENT : f->exec >= 1 && f->exec <= OPEN_EXECS);
        if (!agent)
                CHECK(out->exits[f->exec] == 0); /* nothing of an exec after its exit */
        switch (f->type) {
        case VM_FRAME_STDOUT:
        case VM_FRAME_STDERR:
                CHECK(f->size > 0);
                break;
        case VM_FRAME_EXIT:
                CHECK(f->size == 8);
                CHECK(f->signaled ? f->value >= 1 && f->value <= 64 : f->value <= 255);
                out->exits[f->exec]++;
                break;
        case VM_FRAME_READY:
                CHECK(f->size == 0 && out->frames == 0);
                break;
        case VM_FRAME_ERROR:
                CHECK(f->size > 0 && f->size <= VM_FRAME_MAX_ERROR);
                for (size_t i = 0; i < f->size; i++)
                        CHECK(f->data[i] >= 0x20 && f->data[i] <= 0x7e);
                break;
        case VM_FRAME_EXEC:
        case VM_FRAME_STDIN:
        case VM_FRAME_STDIN_EOF:
        case VM_FRAME_SIGNAL:
        case VM_FRAME_RESIZE:
        case VM_FRAME_END:
        default:
                CHECK(!"a host-to-guest or unknown type handed out");
        }
        out->hash = out->hash * 1099511628211u + (uint64_t) f->type * 31u + f->size +
                    (uint64_t) f->exec * 7u;
        for (size_t i = 0; i < f->size; i++)
                out->hash = out->hash * 131u + f->data[i];
        out->frames++;
}

static void drain(vm_frame_reader *r, reading *out) {
        vm_frame f;
        int k;
        while ((k = vm_frame_next(r, &f)) == 1)
                check_frame(&f, out);
        if (k < 0) {
                CHECK(k == -EPROTO && r->failed && r->why[0] != '\0');
                CHECK(vm_frame_next(r, &f) == -EPROTO);
                CHECK(vm_frame_feed(r, (const uint8_t *) "x", 1) == -EPROTO);
                out->failed = true;
        }
}

static reading read_in(const uint8_t *data, size_t size, size_t chunk) {
        static vm_frame_reader r;
        reading out = { 0 };
        vm_frame_reader_init(&r);
        for (uint32_t id = 1; id <= OPEN_EXECS + 1; id++)
                CHECK(vm_frame_reader_open(&r, id) == 0);
        vm_frame_reader_close(&r, OPEN_EXECS + 1);
        size_t at = 0;
        while (at < size && !out.failed) {
                size_t want = size - at < chunk ? size - at : chunk;
                long n = vm_frame_feed(&r, data + at, want);
                CHECK(n >= 0 && (size_t) n <= want);
                at += (size_t) n;
                unsigned before = out.frames;
                drain(&r, &out);
                /* A full buffer always holds a whole frame (the largest fills it exactly) or a
                 * refused length: the reader never stalls. */
                if (n == 0)
                        CHECK(out.frames > before || out.failed);
        }
        drain(&r, &out);
        return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        reading whole = read_in(data, size, size ? size : 1);
        reading bytes = read_in(data, size, 1);
        CHECK(whole.failed == bytes.failed);
        CHECK(whole.frames == bytes.frames && whole.hash == bytes.hash);
        return 0;
}

bool fuzz_replay_seed(const char *name, const uint8_t *data, size_t size) {
        (void) LLVMFuzzerTestOneInput(data, size);
        reading r = read_in(data, size, size ? size : 1);
        if (strncmp(name, "ok-", 3) == 0)
                return !r.failed;
        if (strncmp(name, "bad-", 4) == 0)
                return r.failed;
        return true;
}
