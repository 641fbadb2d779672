/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target for the first-bytes reader of redirected connections (src/net/peek-name.c), which
 * reads what a sandboxed client sends before the proxy lets its tunnel start. Oracles beyond "no
 * crash, no sanitizer report":
 *   - PEEK_NAME comes with a canonical host name (kind NAME, non-empty, NUL-terminated);
 *   - a verdict, once reached on a prefix, is the verdict of every longer prefix, with the same
 *     name: more bytes never change what the proxy already decided, so a client cannot get a
 *     name past the check by splitting its ClientHello or request head;
 *   - PEEK_MORE never holds at PEEK_MAX bytes.
 * Seeds: "name-*" yield a name, "none-*" nothing to compare, "invalid-*" a refusal, "more-*"
 * no verdict yet. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/peek-name.h"

#include "replay.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond) FUZZ_CHECK("fuzz-peek-name", cond)

static peek_result judge(const uint8_t *data, size_t len, net_host *h) {
        uint8_t *b = malloc(len ? len : 1); /* exactly len: a read past it is an ASan report */
        if (!b)
                fuzz_broken("fuzz-peek-name", "out of memory");
        memcpy(b, data, len);
        peek_result r = peek_name(b, len, h);
        free(b);
        CHECK(r == PEEK_MORE || r == PEEK_NONE || r == PEEK_NAME || r == PEEK_INVALID);
        if (r == PEEK_NAME)
                CHECK(h->kind == NET_HOST_NAME && h->text[0] && memchr(h->text, 0, sizeof(h->text)));
        CHECK(r != PEEK_MORE || len < PEEK_MAX);
        return r;
}

static peek_result run(const uint8_t *data, size_t size) {
        net_host whole;
        peek_result want = judge(data, size, &whole);
        /* Prefixes: the first verdict must hold to the end. Beyond 4 KiB only every 64th. */
        bool decided = false;
        for (size_t p = 0; p < size; p += p < 4096 ? 1 : 64) {
                net_host h;
                peek_result r = judge(data, p, &h);
                if (r == PEEK_MORE) {
                        CHECK(!decided);
                        continue;
                }
                decided = true;
                CHECK(r == want);
                if (r == PEEK_NAME)
                        CHECK(strcmp(h.text, whole.text) == 0);
        }
        return want;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (size > PEEK_MAX + 64)
                size = PEEK_MAX + 64;
        (void) run(data, size);
        return 0;
}

#ifndef CORDON_LIBFUZZER
bool fuzz_replay_seed(const char *name, const uint8_t *buf, size_t len) {
        peek_result r = run(buf, len);
        if (strncmp(name, "name-", 5) == 0)
                return r == PEEK_NAME;
        if (strncmp(name, "none-", 5) == 0)
                return r == PEEK_NONE;
        if (strncmp(name, "invalid-", 8) == 0)
                return r == PEEK_INVALID;
        if (strncmp(name, "more-", 5) == 0)
                return r == PEEK_MORE;
        return true;
}
#endif
