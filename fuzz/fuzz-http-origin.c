/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target for the request reader of terminated TLS connections (src/net/http-origin.c),
 * which reads every request a sandboxed client sends inside TLS to a host with request rules.
 * Oracles beyond "no crash, no sanitizer report":
 *   - a complete head is a prefix of the input ending in CRLF CRLF, at most HTTP_HEAD_MAX
 *     bytes, and its rewritten form is exactly it with "http://HOST" before the path (so the
 *     path the rules judge is the path the server gets);
 *   - a verdict reached on a prefix is the verdict of every longer prefix: splitting a request
 *     across TLS records cannot change how it is read;
 *   - a request whose Host is not the connection's name never passes http_origin_host_is().
 * Seeds: "ok-*" complete and accepted for host a.example.test:443, "refused-*" refused,
 * "more-*" incomplete, "wronghost-*" complete but naming another host or port. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/http-origin.h"

#include "replay.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond) FUZZ_CHECK("fuzz-http-origin", cond)

static char pbuf[HTTP_ORIGIN_PARSE_MAX];
static http_req rq;

static int parse(const uint8_t *data, size_t len) {
        char *b = malloc(len ? len : 1); /* exactly len: a read past it is an ASan report */
        if (!b)
                fuzz_broken("fuzz-http-origin", "out of memory");
        memcpy(b, data, len);
        int r = http_origin_parse(b, len, pbuf, &rq);
        CHECK(r >= 0 || r == -HTTP_EREFUSED);
        CHECK(r != 0 || len < HTTP_HEAD_MAX);
        if (r < 0)
                CHECK(rq.status >= 400 && rq.why);
        if (r > 0) {
                size_t head = (size_t) r, hl = strlen("http://") + rq.authority.len;
                CHECK(head <= len && head <= HTTP_HEAD_MAX && head >= 4);
                CHECK(memcmp(b + head - 4, "\r\n\r\n", 4) == 0);
                CHECK(rq.head_len == head + hl);
                /* The rewritten head: the method and space, "http://" + authority, then the
                 * original bytes from the path on, unchanged. */
                size_t pre = strlen(rq.method) + 1;
                CHECK(memcmp(pbuf, b, pre) == 0 && memcmp(pbuf + pre, "http://", 7) == 0);
                CHECK(memcmp(pbuf + pre + hl, b + pre, head - pre) == 0);
                CHECK(rq.path.off == pre + hl && b[pre] == '/');
        }
        free(b);
        return r;
}

static int run(const uint8_t *data, size_t size) {
        int want = parse(data, size);
        http_req whole = rq;
        bool host_ok = want > 0 && http_origin_host_is(&rq, pbuf, "a.example.test", 443);
        if (host_ok) /* the Host names the connection's name, whatever its case or dot */
                CHECK(strncasecmp(whole.host, "a.example.test", 14) == 0);
        bool decided = false;
        for (size_t p = 0; p < size; p += p < 2048 ? 1 : 61) {
                int r = parse(data, p);
                if (r == 0) {
                        CHECK(!decided);
                        continue;
                }
                decided = true;
                CHECK(r == want);
                if (r < 0)
                        CHECK(rq.status == whole.status);
        }
        return parse(data, size); /* rq and pbuf are the whole input's again */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (size > HTTP_HEAD_MAX + 64)
                size = HTTP_HEAD_MAX + 64;
        (void) run(data, size);
        return 0;
}

#ifndef CORDON_LIBFUZZER
bool fuzz_replay_seed(const char *name, const uint8_t *buf, size_t len) {
        int r = run(buf, len);
        if (strncmp(name, "ok-", 3) == 0)
                return r > 0 && http_origin_host_is(&rq, pbuf, "a.example.test", 443);
        if (strncmp(name, "refused-", 8) == 0)
                return r < 0;
        if (strncmp(name, "more-", 5) == 0)
                return r == 0;
        if (strncmp(name, "wronghost-", 10) == 0)
                return r > 0 && !http_origin_host_is(&rq, pbuf, "a.example.test", 443);
        return true;
}
#endif
