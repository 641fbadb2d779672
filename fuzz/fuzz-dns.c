/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target for the sandbox resolver's message parser and builder (src/net/dns.c), which read
 * every datagram a sandboxed command sends to any DNS server. Oracles beyond "no crash, no
 * sanitizer report":
 *   - a parsed query's name has labels of 1..63 bytes, at most 253 bytes in all, and lies inside
 *     the input; question_end is within the input;
 *   - FORMERR/NOTIMP carry no name; -1 only for inputs shorter than a header;
 *   - every response builds within DNS_UDP_MAX, echoes the id, has QR set and the rcode given,
 *     and the question it echoes is byte for byte the input's;
 *   - a response parsed as a query is refused (QR set): the responder never answers its own
 *     answers, so two of them cannot be made to talk to each other forever.
 * Seeds: "ok-*" parse as queries, "bad-*" are answered FORMERR or NOTIMP, "short-*" get nothing. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/dns.h"

#include "replay.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond) FUZZ_CHECK("fuzz-dns", cond)

static void check_name(const dns_query *q) {
        CHECK(q->name_len <= NET_HOST_NAME_MAX && strlen(q->name) == q->name_len);
        size_t label = 0;
        if (q->name_len == 0)
                return; /* the root */
        for (size_t i = 0; i <= q->name_len; i++) {
                if (i == q->name_len || q->name[i] == '.') {
                        CHECK(label >= 1 && label <= NET_HOST_LABEL_MAX);
                        label = 0;
                } else
                        label++;
        }
}

static void check_response(const dns_query *q, const uint8_t *msg, uint8_t rcode, bool with_a) {
        uint8_t out[DNS_UDP_MAX];
        static const uint8_t addr[4] = { 198, 18, 0, 1 };
        size_t n = dns_build_response(q, msg, rcode, with_a ? addr : NULL, with_a ? 4 : 0, 60,
                                      out, sizeof(out));
        if (with_a && q->question_end == 0) {
                CHECK(n == 0); /* no question, no answer record */
                return;
        }
        CHECK(n >= DNS_HEADER_LEN && n <= sizeof(out));
        CHECK(((out[0] << 8) | out[1]) == q->id);
        CHECK((out[2] & 0x80) && (out[3] & 0x0f) == rcode);
        if (q->question_end > DNS_HEADER_LEN)
                CHECK(memcmp(out + DNS_HEADER_LEN, msg + DNS_HEADER_LEN,
                             q->question_end - DNS_HEADER_LEN) == 0);
        dns_query again;
        CHECK(dns_parse_query(out, n, &again) == DNS_RCODE_FORMERR);
}

static int run(const uint8_t *data, size_t size) {
        dns_query q;
        int rc = dns_parse_query(data, size, &q);
        if (rc < 0) {
                CHECK(size < DNS_HEADER_LEN);
                return -1;
        }
        CHECK(size >= DNS_HEADER_LEN);
        if (rc != DNS_RCODE_NOERROR) {
                CHECK(rc == DNS_RCODE_FORMERR || rc == DNS_RCODE_NOTIMP);
                CHECK(q.name_len == 0 || q.question_end > 0);
                check_response(&q, data, (uint8_t) rc, false);
                return rc;
        }
        CHECK(q.question_end > DNS_HEADER_LEN && q.question_end <= size);
        check_name(&q);
        check_response(&q, data, DNS_RCODE_NOERROR, true);
        check_response(&q, data, DNS_RCODE_NXDOMAIN, false);
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (size > 4096)
                size = 4096;
        uint8_t *copy = malloc(size ? size : 1); /* exactly its size: a read past it is reported */
        if (!copy)
                fuzz_broken("fuzz-dns", "out of memory");
        memcpy(copy, data, size);
        (void) run(copy, size);
        free(copy);
        return 0;
}

#ifndef CORDON_LIBFUZZER
bool fuzz_replay_seed(const char *name, const uint8_t *buf, size_t len) {
        int r = run(buf, len);
        if (strncmp(name, "ok-", 3) == 0)
                return r == 0;
        if (strncmp(name, "bad-", 4) == 0)
                return r > 0;
        if (strncmp(name, "short-", 6) == 0)
                return r == -1;
        return true;
}
#endif
