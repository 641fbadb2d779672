/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target for the host canonicaliser (src/util/host.c): net_host_canon(),
 * net_host_parse_hostport() and net_hostport_split() on arbitrary bytes, as a SOCKS5 client can
 * send them. Promises checked:
 *  - a refusal says why and leaves the output zeroed;
 *  - an accepted host came from bytes without NUL, control characters, spaces or non-ASCII;
 *  - the canonical text is short, NUL-terminated, in the alphabet of its kind, and a fixed point
 *    (canonicalising it again gives the same kind and text);
 *  - an address's text and binary form agree (inet_pton), an IPv6 result is never IPv4-mapped,
 *    and a name never ends in a numeric label (that would be an address matched as a name);
 *  - host:port parsing yields a port in 1..65535 and the same host as canonicalising the host
 *    part alone.
 * Built two ways, like fuzz-policy: with libFuzzer (-DCORDON_LIBFUZZER), and as a plain program
 * replaying the seed corpus in the unit suite ("valid-*" seeds must canonicalise as hosts,
 * "invalid-*" seeds must be refused). */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/host.h"
#include "util/util.h"

#include "replay.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

__attribute__((noreturn)) static void broken(const char *what, const net_host *h) {
        fprintf(stderr, "fuzz-host: broken promise: %s ('%s')\n", what, h ? h->text : "");
        abort();
}

static bool all_zero(const void *p, size_t n) {
        const uint8_t *b = p;
        for (size_t i = 0; i < n; i++)
                if (b[i])
                        return false;
        return true;
}

static bool clean_input(const uint8_t *s, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (s[i] <= 0x20 || s[i] >= 0x7f)
                        return false;
        return true;
}

static void check_name(const net_host *h) {
        size_t len = strlen(h->text);
        if (len == 0 || len > NET_HOST_NAME_MAX)
                broken("name length", h);
        if (strspn(h->text, "abcdefghijklmnopqrstuvwxyz0123456789-_.") != len)
                broken("name alphabet", h);
        if (h->text[0] == '.' || h->text[len - 1] == '.' || strstr(h->text, ".."))
                broken("empty label", h);
        const char *last = strrchr(h->text, '.');
        last = last ? last + 1 : h->text;
        if (strspn(last, "0123456789") == strlen(last) ||
            (strncmp(last, "0x", 2) == 0 && strspn(last + 2, "0123456789abcdef") == strlen(last + 2)))
                broken("a name ending in a numeric label", h);
}

static void check_canonical(const net_host *h) {
        if (!memchr(h->text, '\0', sizeof(h->text)))
                broken("text not terminated", h);
        switch (h->kind) {
        case NET_HOST_NAME:
                check_name(h);
                break;
        case NET_HOST_IPV4: {
                struct in_addr a;
                if (inet_pton(AF_INET, h->text, &a) != 1 || a.s_addr != h->v4.s_addr)
                        broken("IPv4 text and address differ", h);
                break;
        }
        case NET_HOST_IPV6: {
                struct in6_addr a;
                if (inet_pton(AF_INET6, h->text, &a) != 1 || memcmp(&a, &h->v6, sizeof(a)) != 0)
                        broken("IPv6 text and address differ", h);
                if (IN6_IS_ADDR_V4MAPPED(&a))
                        broken("an IPv4-mapped address left as IPv6", h);
                if (strlen(h->text) > 39 || strpbrk(h->text, "ABCDEF."))
                        broken("IPv6 text not in RFC 5952 form", h);
                break;
        }
        default:
                broken("unknown kind", h);
        }
        net_host again;
        const char *why;
        if (net_host_canon(h->text, strlen(h->text), &again, &why) < 0)
                broken(why, h);
        if (again.kind != h->kind || strcmp(again.text, h->text) != 0)
                broken("canonical text is not a fixed point", h);
}

static int canon_checked(const uint8_t *data, size_t size) {
        net_host h;
        const char *why = NULL;
        int r = net_host_canon((const char *) data, size, &h, &why);
        if (r < 0) {
                if (r != -EINVAL || !why || !all_zero(&h, sizeof(h)))
                        broken("a refusal without a reason or with output", &h);
                return r;
        }
        if (!clean_input(data, size))
                broken("a host with NUL, control, space or non-ASCII bytes accepted", &h);
        check_canonical(&h);
        return 0;
}

static void hostport_checked(const uint8_t *data, size_t size, uint16_t def) {
        net_host h, alone;
        uint16_t port = 7, split_port;
        size_t host_len;
        const char *why = NULL;
        if (net_host_parse_hostport((const char *) data, size, def, &h, &port, &why) < 0) {
                if (!why || port != 0 || !all_zero(&h, sizeof(h)))
                        broken("hostport refusal without a reason or with output", &h);
                return;
        }
        if (port == 0)
                broken("port 0 accepted", &h);
        check_canonical(&h);
        if (net_hostport_split((const char *) data, size, false, &host_len, &split_port, &why) < 0)
                broken("split refuses what hostport accepted", &h);
        if (net_host_canon((const char *) data, host_len, &alone, &why) < 0 ||
            strcmp(alone.text, h.text) != 0 || alone.kind != h.kind)
                broken("hostport host differs from the host part alone", &h);
        if ((split_port ? split_port : def) != port)
                broken("hostport port differs from the split port", &h);
}

static int run_one(const uint8_t *data, size_t size) {
        int r = canon_checked(data, size);
        hostport_checked(data, size, 0);
        hostport_checked(data, size, 80);
        size_t host_len;
        uint16_t port;
        const char *why;
        if (net_hostport_split((const char *) data, size, true, &host_len, &port, &why) == 0 &&
            host_len > size)
                broken("split host longer than its input", NULL);
        return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        (void) run_one(data, size);
        return 0;
}

#ifndef CORDON_LIBFUZZER
bool fuzz_replay_seed(const char *name, const uint8_t *data, size_t size) {
        return fuzz_named_verdict(name, run_one(data, size), NULL);
}
#endif
