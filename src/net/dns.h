/* SPDX-License-Identifier: Apache-2.0 */
/* DNS messages as the sandbox's resolver reads and writes them (docs/design/network.md, "Names
 * without a leak"; RFC 1035 §4). Pure: no sockets. The responder (net/proxy-dns.c) reads every
 * byte a hostile command sends here, so the parser accepts exactly one shape — a standard query
 * with one question whose name is uncompressed labels — and anything else is answered FORMERR
 * or NOTIMP, or dropped when not even a header can be read. fuzz/fuzz-dns.c runs it. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "util/host.h"

#define DNS_UDP_MAX 512        /* the classic limit; answers stay below it, so never truncated */
#define DNS_HEADER_LEN 12

#define DNS_TYPE_A 1
#define DNS_TYPE_AAAA 28
#define DNS_CLASS_IN 1

#define DNS_RCODE_NOERROR 0
#define DNS_RCODE_FORMERR 1
#define DNS_RCODE_SERVFAIL 2
#define DNS_RCODE_NXDOMAIN 3
#define DNS_RCODE_NOTIMP 4
#define DNS_RCODE_REFUSED 5

typedef struct dns_query {
        uint16_t id;
        uint16_t flags;               /* the header's second word, as received */
        /* The question's name as dotted text (no trailing dot, bytes as received: the caller
         * canonicalises it with net_host_canon(), which refuses what no host name can be). */
        char name[NET_HOST_NAME_MAX + 2];
        size_t name_len;
        uint16_t qtype, qclass;
        size_t question_end;          /* offset just past the question: the bytes echoed back */
} dns_query;

/* Parses a query. Returns DNS_RCODE_NOERROR with *q filled; DNS_RCODE_FORMERR or
 * DNS_RCODE_NOTIMP (a response, an opcode other than QUERY, not exactly one question, answer or
 * authority records, a compressed or overlong name, trailing junk in the question) with only
 * q->id and q->flags set (no name, question_end 0), so the caller can answer with that code; or -1 when the message is shorter
 * than a header (nothing to answer). */
int dns_parse_query(const uint8_t *msg, size_t len, dns_query *q);

/* Writes the response to `q` into out[0..size): the question echoed from msg[0..question_end)
 * (for FORMERR/NOTIMP answers q->question_end is 0: no question), rcode, and one answer record
 * of q's type carrying `rdata` (4 bytes for A, 16 for AAAA) when rdata is not NULL. Authoritative,
 * recursion available, RD copied. Returns the length, or 0 when it would not fit. */
size_t dns_build_response(const dns_query *q, const uint8_t *msg, uint8_t rcode,
                          const void *rdata, size_t rdata_len, uint32_t ttl, uint8_t *out,
                          size_t size);
