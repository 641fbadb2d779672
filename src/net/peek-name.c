/* SPDX-License-Identifier: Apache-2.0 */
#include "net/peek-name.h"

#include <string.h>
#include <strings.h>

#define TLS_HANDSHAKE 22
#define TLS_CLIENT_HELLO 1
#define TLS_RECORD_HEADER 5
#define TLS_RECORD_MAX 16384 /* plaintext fragment limit (RFC 8446 §5.1) */
#define TLS_EXT_SERVER_NAME 0
#define TLS_NAME_HOST 0

static uint32_t get16(const uint8_t *p) {
        return (uint32_t) p[0] << 8 | p[1];
}

/* The handshake bytes of the leading run of handshake records, joined into out, up to the record
 * that completes the first handshake message: what follows it is not looked at, so the verdict
 * on a ClientHello is the same whether the next record came in the same read or later (a bad
 * record after it once turned a name into a refusal only when it arrived together with it).
 * Returns the bytes joined, or -1 when a record before that point is not a handshake record or
 * lies about its length. */
static long join_handshake(const uint8_t *buf, size_t len, uint8_t *out, size_t cap,
                           size_t *records_end) {
        size_t off = 0, n = 0;
        *records_end = 0;
        while (off + TLS_RECORD_HEADER <= len) {
                if (buf[off] != TLS_HANDSHAKE || buf[off + 1] != 3)
                        return off == 0 ? -1 : (long) n; /* a later record of another type */
                size_t rl = get16(buf + off + 3);
                if (rl == 0 || rl > TLS_RECORD_MAX)
                        return -1;
                size_t have = len - off - TLS_RECORD_HEADER < rl ? len - off - TLS_RECORD_HEADER : rl;
                if (n + have > cap)
                        return -1;
                memcpy(out + n, buf + off + TLS_RECORD_HEADER, have);
                n += have;
                if (have < rl)
                        return (long) n; /* the record is still arriving */
                off += TLS_RECORD_HEADER + rl;
                *records_end = off;
                if (n >= 4 && n >= 4 + ((size_t) out[1] << 16 | get16(out + 2)))
                        break; /* the first message is whole */
        }
        return (long) n;
}

/* The server_name extension's host name, RFC 6066 §3: a list holding one host_name. */
static peek_result sni_of(const uint8_t *e, size_t len, net_host *ret) {
        if (len < 2 || get16(e) != len - 2)
                return PEEK_INVALID;
        e += 2;
        len -= 2;
        if (len < 3 || e[0] != TLS_NAME_HOST || get16(e + 1) != len - 3 || len - 3 == 0)
                return PEEK_INVALID; /* also: a second entry in the list */
        if (net_host_canon((const char *) e + 3, len - 3, ret, NULL) < 0 ||
            ret->kind != NET_HOST_NAME)
                return PEEK_INVALID;
        return PEEK_NAME;
}

/* A whole ClientHello body (after the 4-byte handshake header). */
static peek_result hello_name(const uint8_t *h, size_t len, net_host *ret) {
        size_t off = 2 + 32; /* legacy_version, random */
        if (off + 1 > len)
                return PEEK_INVALID;
        off += 1 + h[off]; /* legacy_session_id */
        if (off + 2 > len)
                return PEEK_INVALID;
        off += 2 + get16(h + off); /* cipher_suites */
        if (off + 1 > len)
                return PEEK_INVALID;
        off += 1 + h[off]; /* legacy_compression_methods */
        if (off == len)
                return PEEK_NONE; /* no extensions at all */
        if (off + 2 > len || off + 2 + get16(h + off) != len)
                return PEEK_INVALID;
        off += 2;
        peek_result found = PEEK_NONE;
        while (off < len) {
                if (off + 4 > len)
                        return PEEK_INVALID;
                uint32_t type = get16(h + off), el = get16(h + off + 2);
                off += 4;
                if (off + el > len)
                        return PEEK_INVALID;
                if (type == TLS_EXT_SERVER_NAME) {
                        if (found != PEEK_NONE)
                                return PEEK_INVALID; /* two: which one would the server read? */
                        found = sni_of(h + off, el, ret);
                        if (found == PEEK_INVALID)
                                return found;
                }
                off += el;
        }
        return found;
}

static peek_result tls_name(const uint8_t *buf, size_t len, net_host *ret) {
        uint8_t hs[PEEK_MAX];
        size_t records_end;
        long n = join_handshake(buf, len, hs, sizeof(hs), &records_end);
        if (n < 0)
                return PEEK_INVALID;
        if (n < 4)
                return len >= PEEK_MAX ? PEEK_INVALID : PEEK_MORE;
        if (hs[0] != TLS_CLIENT_HELLO)
                return PEEK_INVALID;
        size_t hl = (size_t) hs[1] << 16 | get16(hs + 2);
        if (hl + 4 > sizeof(hs))
                return PEEK_INVALID;
        if ((size_t) n < hl + 4)
                return len >= PEEK_MAX ? PEEK_INVALID : PEEK_MORE;
        return hello_name(hs + 4, hl, ret);
}

/* An HTTP/1 request line: "METHOD SP target SP HTTP/1.x" (RFC 9112 §3). 1: it is one; 0: the
 * line has not ended yet; -1: not HTTP (a line protocol that happens to start with a word). */
#define METHOD_MAX 20

static int http_request_line(const uint8_t *buf, size_t len) {
        size_t i = 0;
        while (i < len && i <= METHOD_MAX && buf[i] >= 'A' && buf[i] <= 'Z')
                i++;
        if (i > METHOD_MAX)
                return -1; /* no method is this long: whatever follows, not HTTP */
        if (i == len)
                return 0;
        if (i == 0 || buf[i] != ' ')
                return -1;
        const uint8_t *nl = memchr(buf, '\n', len);
        if (!nl)
                return len >= PEEK_MAX ? -1 : 0;
        size_t ll = (size_t) (nl - buf);
        if (ll > 0 && buf[ll - 1] == '\r')
                ll--;
        return ll >= 9 && memcmp(buf + ll - 9, " HTTP/1.", 8) == 0 ? 1 : -1;
}

/* An absolute-form request-target's authority ("GET http://NAME/ HTTP/1.1"), which a server
 * must prefer to the Host field (RFC 9112 §3.2.2): a client could otherwise name one host in
 * Host and ask for another here. */
static peek_result target_name(const uint8_t *buf, size_t line_len, net_host *ret) {
        const uint8_t *sp = memchr(buf, ' ', line_len);
        size_t t = (size_t) (sp - buf) + 1, e = t;
        while (e < line_len && buf[e] != ' ')
                e++;
        const uint8_t *scheme = memmem(buf + t, e - t, "://", 3);
        if (!scheme)
                return buf[t] == '/' || buf[t] == '*' ? PEEK_NONE : PEEK_INVALID;
        size_t a = (size_t) (scheme - buf) + 3, z = a;
        while (z < e && buf[z] != '/' && buf[z] != '?' && buf[z] != '#')
                z++;
        if (memchr(buf + a, '@', z - a))
                return PEEK_INVALID; /* userinfo: which part is the host is a parser's guess */
        uint16_t port;
        if (net_host_parse_hostport((const char *) buf + a, z - a, 80, ret, &port, NULL) < 0 ||
            ret->kind != NET_HOST_NAME)
                return PEEK_INVALID;
        return PEEK_NAME;
}

/* Where the line starting at `from` ends (its CR), or `to` when no CRLF comes before `to`. */
static size_t line_end(const uint8_t *buf, size_t from, size_t to) {
        const uint8_t *crlf = memmem(buf + from, to - from, "\r\n", 2);
        return crlf ? (size_t) (crlf - buf) : to;
}

/* The host the request asks for: the absolute-form target's, the one Host field's, or both when
 * they agree. The head ends at the first empty line. */
static peek_result http_name(const uint8_t *buf, size_t len, net_host *ret) {
        const uint8_t *end = memmem(buf, len, "\r\n\r\n", 4);
        if (!end)
                return len >= PEEK_MAX ? PEEK_INVALID : PEEK_MORE;
        size_t head = (size_t) (end - buf) + 2; /* each header line ends with its CRLF */
        size_t line_len = line_end(buf, 0, head);
        net_host target;
        peek_result in_target = target_name(buf, line_len, &target);
        if (in_target == PEEK_INVALID)
                return PEEK_INVALID;
        peek_result found = PEEK_NONE;
        size_t off = line_len + 2;
        while (off < head) {
                size_t eol = line_end(buf, off, head);
                if (eol - off >= 5 && strncasecmp((const char *) buf + off, "host:", 5) == 0) {
                        if (found != PEEK_NONE)
                                return PEEK_INVALID; /* two Host fields (RFC 9112 §3.2: a 400) */
                        size_t v = off + 5, e = eol;
                        while (v < e && (buf[v] == ' ' || buf[v] == '\t'))
                                v++;
                        while (e > v && (buf[e - 1] == ' ' || buf[e - 1] == '\t'))
                                e--;
                        uint16_t port;
                        if (net_host_parse_hostport((const char *) buf + v, e - v, 80, ret, &port,
                                                    NULL) < 0 || ret->kind != NET_HOST_NAME)
                                return PEEK_INVALID;
                        found = PEEK_NAME;
                }
                off = eol + 2;
        }
        if (in_target == PEEK_NAME) {
                if (found == PEEK_NAME && strcmp(ret->text, target.text) != 0)
                        return PEEK_INVALID; /* two names: which one the server uses varies */
                *ret = target;
                return PEEK_NAME;
        }
        return found;
}

peek_result peek_name(const uint8_t *buf, size_t len, net_host *ret) {
        memset(ret, 0, sizeof(*ret));
        if (len == 0)
                return PEEK_MORE;
        if (buf[0] == TLS_HANDSHAKE)
                return tls_name(buf, len, ret);
        int m = http_request_line(buf, len);
        if (m == 0)
                return PEEK_MORE;
        if (m < 0)
                return PEEK_NONE;
        return http_name(buf, len, ret);
}
