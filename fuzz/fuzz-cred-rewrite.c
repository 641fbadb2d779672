/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target for credentials in requests and responses (src/net/cred-rewrite.c): every request
 * head a sandboxed client sends in the clear, and every response byte going back into the
 * sandbox, pass it. Input: one byte (bit 0: to the bound host, else another; bit 1: over TLS;
 * the rest: where the response is split), then the bytes, read as a request head and as a
 * response. The credential: secret "s3cr3t-VALUE-0123", placeholder
 * cordon-cred-000102...0f, bound to api.example.com with "Authorization: Bearer {}".
 * Promises checked:
 *  - to another host or over plain http nothing is rewritten, and the head is refused exactly
 *    when it holds the placeholder (raw or in Basic): cred_find_placeholder() agrees;
 *  - to the bound host over TLS a head is rewritten or refused (-EINVAL only when it does not
 *    end in CRLF CRLF or has no request line); a rewritten head holds no raw
 *    placeholder, ends in CRLF CRLF (its only empty line, when the input's was its last),
 *    and carries the proxy's Authorization line;
 *  - a response split anywhere comes out with the same number of bytes, and no whole secret
 *    in it.
 * Built with libFuzzer (-DCORDON_LIBFUZZER) and as a plain program replaying
 * fuzz/corpus/cred-rewrite in the unit suite ("ok-*" seeds must be rewritten, "refused-*"
 * refused, "clean-*" passed unchanged). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/cred-rewrite.h"

#include "replay.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define T "fuzz-cred-rewrite"
#define SECRET "s3cr3t-VALUE-0123"

static cred_set *set;
static policy_req q;

static void init(void) {
        if (set)
                return;
        policy_cred c = { .secret = (char *) "tok", .env = (char *) "TOKEN",
                          .header = (char *) "Authorization", .format = (char *) "Bearer {}" };
        uint8_t rnd[16];
        for (int i = 0; i < 16; i++)
                rnd[i] = (uint8_t) i;
        if (strv_push(&c.hosts, "api.example.com") < 0 || policy_req_add_cred(&q, &c) < 0 ||
            cred_set_new(&set, &q) < 0 || cred_set_value(set, 0, rnd, SECRET, strlen(SECRET)) < 0)
                abort();
        strv_done(&c.hosts);
}

static int check_head(bool bound, bool tls, const char *head, size_t len) {
        net_host h = { .kind = NET_HOST_NAME };
        strcpy(h.text, bound ? "api.example.com" : "other.example.com");
        char *out = NULL;
        size_t n = 0;
        const cred *off = NULL;
        int r = cred_rewrite_head(set, &h, 443, tls, head, len, &out, &n, &off);
        FUZZ_CHECK(T, (r == -EACCES) == (off != NULL));
        bool whole = len >= 4 && head[0] != '\r' && memcmp(head + len - 4, "\r\n\r\n", 4) == 0;
        FUZZ_CHECK(T, r != -EINVAL || (bound && tls && !whole));
        if (!bound || !tls) {
                FUZZ_CHECK(T, r == 0 || r == -EACCES);
                FUZZ_CHECK(T, (r == -EACCES) == (cred_find_placeholder(set, head, len) != NULL));
        }
        if (r == 1) {
                FUZZ_CHECK(T, bound && tls);
                FUZZ_CHECK(T, n >= 4 && memcmp(out + n - 4, "\r\n\r\n", 4) == 0);
                /* One end of head: a dropped line never leaves an empty one behind. */
                FUZZ_CHECK(T, (char *) memmem(out, n, "\r\n\r\n", 4) == out + n - 4 ||
                                      memmem(head, len, "\r\n\r\n", 4) != head + len - 4);
                FUZZ_CHECK(T, !memmem(out, n, set->v[0].placeholder, CRED_PLACEHOLDER_LEN));
                FUZZ_CHECK(T, memmem(out, n, "\r\nAuthorization: Bearer " SECRET "\r\n",
                                     strlen(SECRET) + 26));
        }
        cred_head_free(out, n);
        return r;
}

static void check_scrub(const char *in, size_t len, size_t cut) {
        cred_scrub st = { 0 };
        char *got = malloc(len + 1);
        size_t gl = 0;
        const char *parts[2] = { in, in + cut };
        size_t lens[2] = { cut, len - cut };
        for (int k = 0; k < 2; k++) {
                char *o = NULL;
                size_t ol = 0;
                FUZZ_CHECK(T, cred_scrub_feed(set, &st, parts[k], lens[k], &o, &ol) == 0);
                FUZZ_CHECK(T, gl + ol <= len);
                if (ol)
                        memcpy(got + gl, o, ol);
                gl += ol;
                free(o);
        }
        const char *t = NULL;
        size_t tl = cred_scrub_flush(&st, &t);
        FUZZ_CHECK(T, gl + tl == len);
        if (tl)
                memcpy(got + gl, t, tl);
        cred_scrub_done(&st);
        FUZZ_CHECK(T, !memmem(got, len, SECRET, strlen(SECRET)));
        free(got);
}

static int run_input(const uint8_t *data, size_t size) {
        init();
        if (size == 0)
                return 0;
        const char *s = (const char *) data + 1;
        size_t n = size - 1;
        int r = check_head(data[0] & 1, data[0] & 2, s, n);
        check_scrub(s, n, n ? (size_t) (data[0] >> 2) * n / 64 : 0);
        return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (size > 16384)
                size = 16384;
        (void) run_input(data, size);
        return 0;
}

#ifndef CORDON_LIBFUZZER
bool fuzz_replay_seed(const char *name, const uint8_t *data, size_t size) {
        int r = run_input(data, size);
        if (strncmp(name, "ok-", 3) == 0)
                return r == 1;
        if (strncmp(name, "refused-", 8) == 0)
                return r == -EACCES;
        if (strncmp(name, "clean-", 6) == 0)
                return r == 0;
        return true;
}
#endif
