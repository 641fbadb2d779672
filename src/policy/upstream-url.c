/* SPDX-License-Identifier: Apache-2.0 */
/* The egressUpstream URL (see upstream-url.h). Strict in the way a URL parser has to be when two
 * programs read the same text: one '@' at most (URL parsers disagree on which of two separates
 * the credentials, so a second one could move the host), no path or query that someone else
 * could read as part of the host, percent-encoding only in the credentials, and the host
 * canonicalised by the egress proxy's own canonicaliser (util/host.h), so "0x7f.1" and
 * "127.0.0.1" are one upstream. */
#include "policy/upstream-url.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "util/host.h"

/* What is wrong, and how to write it instead. */
typedef struct fault {
        const char *why, *hint;
} fault;

#define FAULT(w, h) ((fault){ (w), (h) })
#define NO_FAULT ((fault){ NULL, NULL })

static const struct {
        const char *name;
        policy_upstream_kind kind;
} schemes[] = {
        { "http", POLICY_UPSTREAM_HTTP },
        { "socks5", POLICY_UPSTREAM_SOCKS5 },
        /* curl's spelling for "the proxy resolves the name": ours always does. */
        { "socks5h", POLICY_UPSTREAM_SOCKS5 },
};

static fault scheme_kind(const char *s, size_t len, policy_upstream_kind *kind) {
        for (size_t i = 0; i < sizeof(schemes) / sizeof(schemes[0]); i++)
                if (strlen(schemes[i].name) == len && strncasecmp(s, schemes[i].name, len) == 0) {
                        *kind = schemes[i].kind;
                        return NO_FAULT;
                }
        if (len == 5 && strncasecmp(s, "https", 5) == 0)
                return FAULT("uses https://, which is not supported",
                             "write http://host:port: a CONNECT tunnel carries TLS end to end");
        return FAULT("has an unsupported scheme", POLICY_UPSTREAM_HINT);
}

static int hex_value(char c) {
        return c >= '0' && c <= '9'   ? c - '0'
               : c >= 'a' && c <= 'f' ? c - 'a' + 10
               : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                      : -1;
}

/* RFC 3986 §3.2.1 userinfo characters other than ':' and '%': unreserved and sub-delims. */
static bool userinfo_char(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               strchr("-._~!$&'()*+,;=", c) != NULL;
}

/* Percent-decodes s[0..len) into out (POLICY_UPSTREAM_CRED_MAX + 1 bytes). `password`: a raw ':'
 * belongs to the text (only the first ':' separates the user name from the password). */
static fault decode_cred(const char *s, size_t len, bool password, char *out, size_t *ret_len) {
        size_t n = 0;
        for (size_t i = 0; i < len; i++) {
                unsigned char c = (unsigned char) s[i];
                if (c == '%') {
                        int hi = i + 2 < len ? hex_value(s[i + 1]) : -1;
                        int lo = i + 2 < len ? hex_value(s[i + 2]) : -1;
                        if (hi < 0 || lo < 0)
                                return FAULT("has a '%' in its credentials that is not followed "
                                             "by two hex digits",
                                             "write a '%' in a user name or password as %25");
                        c = (unsigned char) (hi << 4 | lo);
                        i += 2;
                } else if (!userinfo_char((char) c) && !(password && c == ':'))
                        return FAULT("has a character in its credentials that must be "
                                     "percent-encoded",
                                     "write it as %XX, e.g. '@' as %40, '[' as %5B");
                /* Neither a C string's end nor a line break may hide inside a credential: the
                 * proxy writes it into a request and compares it as a string. */
                if (c < 0x20 || c == 0x7f)
                        return FAULT("has a control character in its credentials",
                                     POLICY_UPSTREAM_HINT);
                if (!password && c == ':')
                        return FAULT("has a ':' in its user name",
                                     "HTTP Basic credentials separate the user name from the "
                                     "password with it: use a user name without ':'");
                if (n == POLICY_UPSTREAM_CRED_MAX)
                        return FAULT("has a user name or password longer than 255 bytes",
                                     "SOCKS5 credentials (RFC 1929) hold at most 255 bytes each");
                out[n++] = (char) c;
        }
        out[n] = '\0';
        *ret_len = n;
        return NO_FAULT;
}

static fault parse_creds(const char *s, size_t len, policy_upstream *out) {
        const char *colon = memchr(s, ':', len);
        if (!colon)
                return FAULT("has a user name without a password", "write user:password@host:port");
        size_t ulen = (size_t) (colon - s), plen = len - ulen - 1;
        if (ulen == 0 || plen == 0)
                return FAULT("has an empty user name or password", "write user:password@host:port");
        fault f = decode_cred(s, ulen, false, out->user, &out->user_len);
        if (!f.why)
                f = decode_cred(colon + 1, plen, true, out->pass, &out->pass_len);
        out->has_creds = !f.why;
        return f;
}

static fault parse_port(const char *s, size_t len, uint16_t *ret) {
        static const fault bad = { "has no valid port", "PORT is a number from 1 to 65535" };
        unsigned v = 0;
        if (len == 0 || len > 5)
                return bad;
        for (size_t i = 0; i < len; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return bad;
                v = v * 10 + (unsigned) (s[i] - '0');
        }
        if (v == 0 || v > 65535)
                return bad;
        *ret = (uint16_t) v;
        return NO_FAULT;
}

/* HOST:PORT or [V6]:PORT. */
static fault parse_authority(const char *s, size_t len, policy_upstream *out) {
        static const fault no_port = { "has no port",
                                       "write host:PORT, e.g. http://proxy.example:3128" };
        const char *host = s, *port;
        size_t hlen;
        bool bracketed = len > 0 && s[0] == '[';
        if (bracketed) {
                const char *close = memchr(s, ']', len);
                if (!close)
                        return FAULT("has an IPv6 address without its closing ']'",
                                     "write http://[::1]:3128");
                host = s + 1;
                hlen = (size_t) (close - host);
                port = close + 1;
                if (port == s + len || *port != ':')
                        return no_port;
        } else {
                port = memrchr(s, ':', len);
                if (!port)
                        return no_port;
                hlen = (size_t) (port - s);
                if (memchr(s, ':', hlen))
                        return FAULT("has an IPv6 address without brackets",
                                     "write http://[::1]:3128");
        }
        port++;
        fault f = parse_port(port, (size_t) (s + len - port), &out->port);
        if (f.why)
                return f;
        net_host h;
        if (hlen == 0 || net_host_canon(host, hlen, &h, NULL) < 0 ||
            (bracketed && h.kind == NET_HOST_NAME))
                return FAULT("has an invalid host",
                             "write a DNS name, an IPv4 address or a bracketed IPv6 address");
        size_t n = strlen(h.text);
        if (n > POLICY_UPSTREAM_HOST_MAX)
                return FAULT("has a host longer than 253 bytes", POLICY_UPSTREAM_HINT);
        memcpy(out->host, h.text, n + 1);
        out->host_ipv6 = h.kind == NET_HOST_IPV6;
        return NO_FAULT;
}

static fault parse(const char *url, policy_upstream *out) {
        if (!url || !*url)
                return FAULT("must not be empty", POLICY_UPSTREAM_HINT);
        size_t len = strnlen(url, POLICY_UPSTREAM_URL_MAX + 1);
        if (len > POLICY_UPSTREAM_URL_MAX)
                return FAULT("is longer than 2048 bytes", POLICY_UPSTREAM_HINT);
        /* A URL has no space or control character, and a log line must not get one either. */
        for (size_t i = 0; i < len; i++)
                if ((unsigned char) url[i] <= 0x20 || (unsigned char) url[i] >= 0x7f)
                        return FAULT("has a space, a control character or a non-ASCII byte",
                                     "percent-encode such bytes of a user name or password");
        const char *sep = strstr(url, "://");
        if (!sep)
                return FAULT("has no scheme", POLICY_UPSTREAM_HINT);
        fault f = scheme_kind(url, (size_t) (sep - url), &out->kind);
        if (f.why)
                return f;
        const char *rest = sep + 3, *end = url + len;
        const char *path = strpbrk(rest, "/?#");
        if (path && strchr(path, '@'))
                return FAULT("has a '/', '?' or '#' in its credentials",
                             "percent-encode it: %2F, %3F, %23");
        if (path)
                return FAULT("has a path, query or fragment", "write only scheme://host:port");
        const char *at = strchr(rest, '@');
        if (at && strchr(at + 1, '@'))
                return FAULT("has more than one '@'",
                             "write an '@' inside the user name or password as %40");
        if (at && (f = parse_creds(rest, (size_t) (at - rest), out)).why)
                return f;
        const char *auth = at ? at + 1 : rest;
        return parse_authority(auth, (size_t) (end - auth), out);
}

const char *policy_upstream_parse(const char *url, policy_upstream *out, const char **hint) {
        memset(out, 0, sizeof(*out));
        fault f = parse(url, out);
        if (f.why)
                policy_upstream_wipe(out);
        if (hint)
                *hint = f.hint;
        return f.why;
}

static bool unreserved(unsigned char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '-' || c == '.' || c == '_' || c == '~';
}

/* Appends s[0..len) percent-encoded at buf + *n, leaving room for the NUL; false when it does
 * not fit. */
static bool put_encoded(char *buf, size_t size, size_t *n, const char *s, size_t len) {
        static const char hex[] = "0123456789ABCDEF";
        for (size_t i = 0; i < len; i++) {
                unsigned char c = (unsigned char) s[i];
                if (*n + 4 > size)
                        return false;
                if (unreserved(c)) {
                        buf[(*n)++] = (char) c;
                        continue;
                }
                buf[(*n)++] = '%';
                buf[(*n)++] = hex[c >> 4];
                buf[(*n)++] = hex[c & 15];
        }
        return true;
}

static bool put_text(char *buf, size_t size, size_t *n, const char *s) {
        size_t len = strlen(s);
        if (*n + len + 1 > size)
                return false;
        memcpy(buf + *n, s, len);
        *n += len;
        return true;
}

int policy_upstream_format(const policy_upstream *u, bool redact, char *buf, size_t size) {
        char port[8];
        size_t n = 0;
        (void) snprintf(port, sizeof(port), ":%u", (unsigned) u->port);
        bool ok = put_text(buf, size, &n,
                           u->kind == POLICY_UPSTREAM_SOCKS5 ? "socks5://" : "http://");
        if (ok && u->has_creds)
                ok = put_encoded(buf, size, &n, u->user, u->user_len) &&
                     put_text(buf, size, &n, ":") &&
                     (redact ? put_text(buf, size, &n, POLICY_UPSTREAM_REDACTED)
                             : put_encoded(buf, size, &n, u->pass, u->pass_len)) &&
                     put_text(buf, size, &n, "@");
        ok = ok && put_text(buf, size, &n, u->host_ipv6 ? "[" : "") &&
             put_text(buf, size, &n, u->host) &&
             put_text(buf, size, &n, u->host_ipv6 ? "]" : "") && put_text(buf, size, &n, port);
        if (!ok) {
                /* A partial URL may hold part of the password. */
                if (size > 0)
                        explicit_bzero(buf, size);
                return -ENOSPC;
        }
        buf[n] = '\0';
        return (int) n;
}

void policy_upstream_wipe(policy_upstream *u) {
        explicit_bzero(u, sizeof(*u));
}
