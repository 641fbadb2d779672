/* SPDX-License-Identifier: Apache-2.0 */
/* The egress pattern grammar (egress-pattern.h): a pattern is split into host and port, and the
 * host is canonicalised by the proxy's own canonicaliser (util/host.h), so a pattern and a
 * client's host are compared in one spelling. */
#include "policy/egress-pattern.h"

#include <string.h>

/* "*.example.com" or "a.*.example.com": host[0..len), '*' at `at`. */
static const char *parse_wildcard(const char *host, size_t len, size_t at, egress_pattern *out) {
        char buf[NET_HOST_INPUT_MAX + 1];
        net_host h;
        const char *why;
        if (memchr(host + at + 1, '*', len - at - 1))
                return "has more than one '*'";
        if (host[0] == '[')
                return "has a '*' in an IPv6 address (wildcards match names only)";
        /* Only a whole label: "*x.com", "x*.com" or "x.*" mean different things to different
         * matchers (glob, suffix, label), so none of them is accepted. */
        size_t end = host[len - 1] == '.' ? len - 1 : len; /* "a.*." : '*' is still last */
        if ((at > 0 && host[at - 1] != '.') || at + 1 >= end || host[at + 1] != '.')
                return "must use '*' as a whole label that is not the last one "
                       "('*.example.com' or 'a.*.example.com')";
        if (len >= sizeof(buf))
                return "is longer than 253 bytes";
        /* Validate with a one-byte label in place of the '*': the shortest name it can match
         * must itself be a valid name. */
        memcpy(buf, host, len);
        buf[at] = '0';
        if (net_host_canon(buf, len, &h, &why) < 0)
                return why;
        if (h.kind != NET_HOST_NAME)
                return "has a '*' but names an IP address (wildcards match names only)";
        if (at == 0) {
                out->kind = EGRESS_PATTERN_SUFFIX;
                memcpy(out->key, h.text + 2, strlen(h.text + 2) + 1);
        } else {
                out->kind = EGRESS_PATTERN_MIDDLE;
                memcpy(out->key, h.text, strlen(h.text) + 1);
                out->key[at] = '*';
        }
        return NULL;
}

const char *egress_pattern_parse(const char *p, egress_pattern *out) {
        size_t len, host_len;
        const char *why;
        net_host h;
        memset(out, 0, sizeof(*out));
        if (!p || !*p)
                return "must not be empty";
        len = strnlen(p, EGRESS_PATTERN_MAX + 1);
        if (len > EGRESS_PATTERN_MAX)
                return "is longer than a host name and port can be";
        if (net_hostport_split(p, len, true, &host_len, &out->port, &why) < 0)
                return why;
        if (host_len == 1 && p[0] == '*')
                return "is '*' alone, which would allow every host";
        const char *star = memchr(p, '*', host_len);
        if (star)
                return parse_wildcard(p, host_len, (size_t) (star - p), out);
        if (net_host_canon(p, host_len, &h, &why) < 0)
                return why;
        out->kind = h.kind == NET_HOST_NAME ? EGRESS_PATTERN_NAME : EGRESS_PATTERN_ADDR;
        memcpy(out->key, h.text, strlen(h.text) + 1);
        return NULL;
}

const char *egress_check_pattern(const char *pattern) {
        egress_pattern scratch;
        return egress_pattern_parse(pattern, &scratch);
}
