/* SPDX-License-Identifier: Apache-2.0 */
#include "net/dns.h"

#include <string.h>

#define FLAG_QR 0x8000u
#define FLAG_OPCODE 0x7800u
#define FLAG_AA 0x0400u
#define FLAG_RD 0x0100u
#define FLAG_RA 0x0080u

static uint16_t get16(const uint8_t *p) {
        return (uint16_t) (p[0] << 8 | p[1]);
}

static void put16(uint8_t *p, uint16_t v) {
        p[0] = (uint8_t) (v >> 8);
        p[1] = (uint8_t) v;
}

/* The question's name: labels of 1..63 bytes up to the root label, at most 255 bytes on the wire
 * (RFC 1035 §2.3.4). A compression pointer (0xC0) or an extended label type (0x40, 0x80) is
 * refused: a query has nothing earlier to point at, and a pointer is how a parser is made to
 * loop or read outside the message. Returns the offset past the name, or 0. */
static size_t parse_name(const uint8_t *msg, size_t len, size_t off, dns_query *q) {
        size_t start = off, n = 0;
        for (;;) {
                if (off >= len)
                        return 0;
                uint8_t l = msg[off++];
                if (l == 0)
                        break;
                if (l > NET_HOST_LABEL_MAX || off + l > len)
                        return 0;
                if (n + (n ? 1 : 0) + l > NET_HOST_NAME_MAX)
                        return 0;
                /* A NUL or a '.' inside a label would make the dotted text name another
                 * name than the one asked ("a.b" as one label is not a.b): refused. */
                if (memchr(msg + off, '\0', l) || memchr(msg + off, '.', l))
                        return 0;
                if (n)
                        q->name[n++] = '.';
                memcpy(q->name + n, msg + off, l);
                n += l;
                off += l;
        }
        if (off - start > 255)
                return 0;
        q->name[n] = '\0';
        q->name_len = n;
        return off;
}

int dns_parse_query(const uint8_t *msg, size_t len, dns_query *q) {
        memset(q, 0, sizeof(*q));
        if (len < DNS_HEADER_LEN)
                return -1;
        q->id = get16(msg);
        q->flags = get16(msg + 2);
        if (q->flags & FLAG_QR)
                return DNS_RCODE_FORMERR; /* a response sent to a resolver */
        if (q->flags & FLAG_OPCODE)
                return DNS_RCODE_NOTIMP;  /* IQUERY, STATUS, NOTIFY, UPDATE */
        /* Exactly one question, no answers or authority; additional records (an EDNS OPT) are
         * allowed and not read. */
        if (get16(msg + 4) != 1 || get16(msg + 6) != 0 || get16(msg + 8) != 0)
                return DNS_RCODE_FORMERR;
        size_t off = parse_name(msg, len, DNS_HEADER_LEN, q);
        if (off == 0 || off + 4 > len) {
                q->name[0] = '\0';
                q->name_len = 0;
                return DNS_RCODE_FORMERR;
        }
        q->qtype = get16(msg + off);
        q->qclass = get16(msg + off + 2);
        q->question_end = off + 4;
        /* What follows may only be additional records, which the header says are there. */
        if (q->question_end < len && get16(msg + 10) == 0) {
                q->question_end = 0;
                q->name[0] = '\0';
                q->name_len = 0;
                return DNS_RCODE_FORMERR;
        }
        return DNS_RCODE_NOERROR;
}

size_t dns_build_response(const dns_query *q, const uint8_t *msg, uint8_t rcode,
                          const void *rdata, size_t rdata_len, uint32_t ttl, uint8_t *out,
                          size_t size) {
        size_t qlen = q->question_end > DNS_HEADER_LEN ? q->question_end - DNS_HEADER_LEN : 0;
        size_t need = DNS_HEADER_LEN + qlen + (rdata ? 12 + rdata_len : 0);
        if (need > size || (rdata && qlen == 0) || rdata_len > 16)
                return 0;
        put16(out, q->id);
        put16(out + 2, (uint16_t) (FLAG_QR | FLAG_AA | FLAG_RA | (q->flags & FLAG_RD) |
                                   (rcode & 0x0f)));
        put16(out + 4, qlen ? 1 : 0);
        put16(out + 6, rdata ? 1 : 0);
        put16(out + 8, 0);
        put16(out + 10, 0);
        memcpy(out + DNS_HEADER_LEN, msg + DNS_HEADER_LEN, qlen);
        size_t off = DNS_HEADER_LEN + qlen;
        if (rdata) {
                put16(out + off, 0xc000 | DNS_HEADER_LEN); /* the name: the question's */
                put16(out + off + 2, q->qtype);
                put16(out + off + 4, DNS_CLASS_IN);
                put16(out + off + 6, (uint16_t) (ttl >> 16));
                put16(out + off + 8, (uint16_t) ttl);
                put16(out + off + 10, (uint16_t) rdata_len);
                memcpy(out + off + 12, rdata, rdata_len);
                off += 12 + rdata_len;
        }
        return off;
}
