/* SPDX-License-Identifier: Apache-2.0 */
/* Host canonicalisation for the egress proxy (host.h). Every host a client names passes through
 * here before the matcher sees it; the matcher compares canonical text only. The rules are
 * strict on purpose: a byte this module lets through is a byte some later parser (the resolver,
 * the upstream server, a log reader) may read differently from the matcher. */
#include "util/host.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

static int refuse(const char **why, const char *reason) {
        if (why)
                *why = reason;
        return -EINVAL;
}

static bool is_digit(char c) {
        return c >= '0' && c <= '9';
}

static bool is_alpha(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static char to_lower(char c) {
        return c >= 'A' && c <= 'Z' ? (char) (c - 'A' + 'a') : c;
}

/* 0..15 for a hex digit (lower case only: callers fold first), -1 otherwise. */
static int hex_value(char c) {
        if (is_digit(c))
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        return -1;
}

/* The refusals that name an injection attempt, checked over every input byte first so that the
 * reason is the real one. */
static const char *check_bytes(const unsigned char *s, size_t len) {
        for (size_t i = 0; i < len; i++) {
                unsigned char c = s[i];
                /* A C resolver stops at NUL: "allowed.com\0.evil.com" would be matched as one
                 * host and dialled as another (the reference runtime's SOCKS5 bypass). */
                if (c == 0)
                        return "contains a NUL byte";
                /* CR/LF would split a forwarded request head or forge a log line. */
                if (c == '\r' || c == '\n')
                        return "contains a CR or LF byte";
                if (c < 0x20 || c == 0x7f)
                        return "contains a control character";
                if (c == ' ')
                        return "contains a space";
                /* Non-ASCII names have one canonical wire form (xn--); a raw UTF-8 name could be
                 * normalised differently by the resolver than by the matcher. */
                if (c >= 0x80)
                        return "contains a non-ASCII byte (send internationalised names as xn--)";
        }
        return NULL;
}

/* ---- IPv4 ----------------------------------------------------------------------------------- */

static void set_v4(net_host *out, uint32_t host_order) {
        out->kind = NET_HOST_IPV4;
        out->v4.s_addr = htonl(host_order);
        (void) snprintf(out->text, sizeof(out->text), "%u.%u.%u.%u", host_order >> 24,
                        (host_order >> 16) & 0xff, (host_order >> 8) & 0xff, host_order & 0xff);
}

/* One inet_aton part: decimal, octal (leading 0) or hex (0x). Lower-case input. */
static int v4_part(const char *s, size_t len, uint64_t *ret) {
        unsigned base = 10;
        size_t i = 0;
        if (len == 0)
                return -EINVAL;
        if (len >= 2 && s[0] == '0' && s[1] == 'x') {
                base = 16;
                i = 2;
                if (len == 2) /* "0x" alone: libc reads 0, a URL parser too; refused as ambiguous */
                        return -EINVAL;
        } else if (len >= 2 && s[0] == '0')
                base = 8;
        uint64_t v = 0;
        for (; i < len; i++) {
                int d = hex_value(s[i]);
                if (d < 0 || (unsigned) d >= base)
                        return -EINVAL;
                v = v * base + (unsigned) d;
                if (v > UINT32_MAX)
                        return -EINVAL;
        }
        *ret = v;
        return 0;
}

/* The inet_aton(3) grammar: 1 to 4 parts; each but the last is one byte, the last fills the
 * remaining bytes ("127.1" = 127.0.0.1, "2130706433" = 127.0.0.1). Every spelling a resolver
 * would accept as an address must become that address here, or "0x7f.1" would slip past a
 * deny entry for 127.0.0.1 as a "name". */
static int parse_v4(const char *s, size_t len, uint32_t *ret) {
        uint64_t part[4];
        size_t n = 0, start = 0;
        for (size_t i = 0; i <= len; i++) {
                if (i < len && s[i] != '.')
                        continue;
                if (n == 4 || v4_part(s + start, i - start, &part[n]) < 0)
                        return -EINVAL;
                n++;
                start = i + 1;
        }
        uint64_t v = 0;
        for (size_t i = 0; i + 1 < n; i++) {
                if (part[i] > 0xff)
                        return -EINVAL;
                v |= part[i] << (8 * (3 - i));
        }
        uint64_t last_max = UINT32_MAX >> (8 * (n - 1));
        if (part[n - 1] > last_max)
                return -EINVAL;
        *ret = (uint32_t) (v | part[n - 1]);
        return 0;
}

/* A last label that a resolver would read as a number: all digits, or 0x and hex digits. */
static bool looks_numeric(const char *label, size_t len) {
        size_t i = 0;
        if (len >= 2 && label[0] == '0' && label[1] == 'x') {
                for (i = 2; i < len; i++)
                        if (hex_value(label[i]) < 0)
                                return false;
                return true;
        }
        for (; i < len; i++)
                if (!is_digit(label[i]))
                        return false;
        return len > 0;
}

/* ---- IPv6 ----------------------------------------------------------------------------------- */

static bool v6_is_mapped(const struct in6_addr *a) {
        static const uint8_t prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
        return memcmp(a->s6_addr, prefix, sizeof(prefix)) == 0;
}

static uint32_t v4_at(const uint8_t *b) {
        return (uint32_t) b[0] << 24 | (uint32_t) b[1] << 16 | (uint32_t) b[2] << 8 | b[3];
}

/* RFC 5952 §4: lower-case hex, no leading zeros, the longest run (first on a tie) of two or more
 * zero fields as "::". Written here rather than taken from inet_ntop() so the canonical text
 * does not depend on the C library's choice of mixed notation. */
static void format_v6(const struct in6_addr *a, char out[static 40]) {
        unsigned w[8];
        for (int i = 0; i < 8; i++)
                w[i] = (unsigned) a->s6_addr[2 * i] << 8 | a->s6_addr[2 * i + 1];
        int best = -1, best_len = 0;
        for (int i = 0; i < 8;) {
                int j = i;
                while (j < 8 && w[j] == 0)
                        j++;
                if (j - i > best_len) {
                        best = i;
                        best_len = j - i;
                }
                i = j == i ? i + 1 : j;
        }
        if (best_len < 2) {
                best = -1;
                best_len = 0;
        }
        size_t n = 0;
        for (int i = 0; i < 8;) {
                if (i == best) {
                        out[n++] = ':';
                        out[n++] = ':';
                        i += best_len;
                        continue;
                }
                if (i > 0 && i != best + best_len)
                        out[n++] = ':';
                n += (size_t) snprintf(out + n, 5, "%x", w[i]);
                i++;
        }
        out[n] = '\0';
}

static void set_v6(net_host *out, const struct in6_addr *a) {
        /* ::ffff:a.b.c.d is connected to as a.b.c.d: one destination, one canonical form. */
        if (v6_is_mapped(a)) {
                set_v4(out, v4_at(a->s6_addr + 12));
                return;
        }
        out->kind = NET_HOST_IPV6;
        out->v6 = *a;
        format_v6(a, out->text);
}

static int canon_v6(const char *s, size_t len, net_host *out, const char **why) {
        char buf[64];
        struct in6_addr a;
        /* fe80::1%eth0 names an interface of the proxy's host, not a destination. */
        if (memchr(s, '%', len))
                return refuse(why, "has an IPv6 zone id");
        if (len >= sizeof(buf))
                return refuse(why, "is not a valid IPv6 address");
        memcpy(buf, s, len);
        buf[len] = '\0';
        if (inet_pton(AF_INET6, buf, &a) != 1)
                return refuse(why, "is not a valid IPv6 address");
        set_v6(out, &a);
        return 0;
}

/* ---- names ---------------------------------------------------------------------------------- */

static int canon_name(const char *s, size_t len, net_host *out, const char **why) {
        if (s[len - 1] == '.') /* the root label: "example.com." is example.com */
                len--;
        if (len == 0)
                return refuse(why, "has an empty label");
        if (len > NET_HOST_NAME_MAX)
                return refuse(why, "is longer than 253 bytes");
        size_t label = 0, last = 0;
        for (size_t i = 0; i < len; i++) {
                char c = s[i];
                if (c == '.') {
                        if (label == 0)
                                return refuse(why, "has an empty label");
                        label = 0;
                        last = i + 1;
                } else if (is_alpha(c) || is_digit(c) || c == '-' || c == '_') {
                        if (++label > NET_HOST_LABEL_MAX)
                                return refuse(why, "has a label longer than 63 bytes");
                } else
                        /* '@', '/', '\', '%', '#', '?', ... : URL and userinfo syntax that other
                         * parsers would split on differently. */
                        return refuse(why, "contains a byte a host name cannot contain");
                out->text[i] = to_lower(c);
        }
        if (label == 0)
                return refuse(why, "has an empty label");
        out->text[len] = '\0';
        if (looks_numeric(out->text + last, len - last)) {
                /* Never a name: a resolver would parse it as an address (or fail), so matching
                 * it as a name could allow "1.2.3.4.allowed.example" style confusion. */
                uint32_t v;
                if (parse_v4(out->text, len, &v) < 0)
                        return refuse(why, "looks like an IPv4 address but is not a valid one");
                set_v4(out, v);
                return 0;
        }
        /* A leading '-' reads as an option to any tool the name is ever handed to. */
        if (out->text[0] == '-')
                return refuse(why, "begins with '-'");
        out->kind = NET_HOST_NAME;
        return 0;
}

/* ---- public --------------------------------------------------------------------------------- */

int net_host_canon(const char *s, size_t len, net_host *out, const char **why) {
        memset(out, 0, sizeof(*out));
        if (why)
                *why = NULL;
        if (!s || len == 0)
                return refuse(why, "is empty");
        if (len > NET_HOST_INPUT_MAX)
                return refuse(why, "is longer than 253 bytes");
        const char *bad = check_bytes((const unsigned char *) s, len);
        if (bad)
                return refuse(why, bad);
        int r;
        if (s[0] == '[')
                r = len >= 2 && s[len - 1] == ']' ? canon_v6(s + 1, len - 2, out, why)
                                                  : refuse(why, "has '[' without a closing ']'");
        else if (memchr(s, ':', len))
                r = canon_v6(s, len, out, why);
        else
                r = canon_name(s, len, out, why);
        if (r < 0)
                memset(out, 0, sizeof(*out));
        return r;
}

static int parse_port(const char *s, size_t len, uint16_t *ret, const char **why) {
        if (len == 0)
                return refuse(why, "has an empty port");
        if (len > 5)
                return refuse(why, "has a port above 65535");
        unsigned v = 0;
        for (size_t i = 0; i < len; i++) {
                if (!is_digit(s[i]))
                        return refuse(why, "has a port that is not a decimal number");
                v = v * 10 + (unsigned) (s[i] - '0');
        }
        if (v == 0 || v > 65535)
                return refuse(why, "has a port outside 1-65535");
        *ret = (uint16_t) v;
        return 0;
}

int net_hostport_split(const char *s, size_t len, bool allow_bare_v6, size_t *ret_host_len,
                       uint16_t *ret_port, const char **why) {
        *ret_host_len = 0;
        *ret_port = 0;
        if (why)
                *why = NULL;
        if (!s || len == 0)
                return refuse(why, "is empty");
        if (s[0] == '[') {
                const char *close = memchr(s, ']', len);
                if (!close)
                        return refuse(why, "has '[' without a closing ']'");
                size_t host_len = (size_t) (close - s) + 1;
                *ret_host_len = host_len;
                if (host_len == len)
                        return 0;
                if (s[host_len] != ':')
                        return refuse(why, "has bytes after ']' that are not a port");
                return parse_port(s + host_len + 1, len - host_len - 1, ret_port, why);
        }
        const char *colon = memrchr(s, ':', len);
        if (!colon) {
                *ret_host_len = len;
                return 0;
        }
        if (memchr(s, ':', (size_t) (colon - s))) {
                /* "::1:80" is both an address and an address with a port; only brackets say
                 * which. Patterns may name a bare address (no port); requests may not. */
                if (!allow_bare_v6)
                        return refuse(why, "has an IPv6 address without brackets");
                *ret_host_len = len;
                return 0;
        }
        *ret_host_len = (size_t) (colon - s);
        return parse_port(colon + 1, len - *ret_host_len - 1, ret_port, why);
}

int net_host_parse_hostport(const char *s, size_t len, uint16_t default_port, net_host *out,
                            uint16_t *ret_port, const char **why) {
        size_t host_len;
        uint16_t port;
        memset(out, 0, sizeof(*out));
        *ret_port = 0;
        int r = net_hostport_split(s, len, false, &host_len, &port, why);
        if (r < 0)
                return r;
        r = net_host_canon(s, host_len, out, why);
        if (r < 0)
                return r;
        if (port == 0)
                port = default_port;
        if (port == 0) {
                memset(out, 0, sizeof(*out));
                return refuse(why, "needs a port");
        }
        *ret_port = port;
        return 0;
}

int net_host_from_sockaddr(const struct sockaddr *sa, net_host *out) {
        memset(out, 0, sizeof(*out));
        if (!sa)
                return -EINVAL;
        if (sa->sa_family == AF_INET) {
                const struct sockaddr_in *in = (const struct sockaddr_in *) sa;
                set_v4(out, ntohl(in->sin_addr.s_addr));
                return 0;
        }
        if (sa->sa_family == AF_INET6) {
                set_v6(out, &((const struct sockaddr_in6 *) sa)->sin6_addr);
                return 0;
        }
        return -EAFNOSUPPORT;
}

size_t net_v6_embedded_v4(const struct in6_addr *a, struct in_addr ret[2]) {
        static const uint8_t translated[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0 };
        static const uint8_t zero[12] = { 0 };
        static const uint8_t nat64[12] = { 0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0 };
        static const uint8_t nat64_local[6] = { 0, 0x64, 0xff, 0x9b, 0, 1 };
        const uint8_t *b = a->s6_addr;
        if (v6_is_mapped(a) || memcmp(b, translated, 12) == 0 || memcmp(b, nat64, 12) == 0 ||
            (memcmp(b, zero, 12) == 0 && v4_at(b + 12) > 1)) { /* ::/96 but not :: and ::1 */
                ret[0].s_addr = htonl(v4_at(b + 12));
                return 1;
        }
        if (memcmp(b, nat64_local, 6) == 0) {
                /* RFC 8215 local-use prefix: operators carve a /96 (address in bytes 12-15) or
                 * a /64 (bytes 9-12, suffix 13-15 zero) out of it (RFC 6052 §2.2). The /48 and
                 * /56 layouts leave bytes 12-15 zero, so their /96 reading is 0.0.0.0, which
                 * the guard refuses: every layout fails closed. */
                static const uint8_t zero3[3] = { 0 };
                ret[0].s_addr = htonl(v4_at(b + 12));
                if (memcmp(b + 13, zero3, 3) != 0)
                        return 1;
                ret[1].s_addr = htonl(v4_at(b + 9));
                return 2;
        }
        if (b[0] == 0x20 && b[1] == 0x02) { /* 6to4, RFC 3056: 2002:AABB:CCDD::/48 */
                ret[0].s_addr = htonl(v4_at(b + 2));
                return 1;
        }
        return 0;
}

bool net_host_is_localhost(const net_host *h) {
        static const char suffix[] = ".localhost";
        if (!h || h->kind != NET_HOST_NAME)
                return false;
        size_t len = strlen(h->text);
        return strcmp(h->text, "localhost") == 0 ||
               (len > sizeof(suffix) - 1 &&
                strcmp(h->text + len - (sizeof(suffix) - 1), suffix) == 0);
}
