/* SPDX-License-Identifier: Apache-2.0 */
/* Strict base64 (base64.h). */
#include "util/base64.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t base64_encoded_len(size_t len) {
        return (len / 3 + (len % 3 != 0)) * 4;
}

void base64_encode_into(const void *in, size_t len, char *out) {
        const unsigned char *s = in;
        size_t o = 0;
        for (size_t i = 0; i < len; i += 3) {
                uint32_t v = (uint32_t) s[i] << 16;
                if (i + 1 < len)
                        v |= (uint32_t) s[i + 1] << 8;
                if (i + 2 < len)
                        v |= s[i + 2];
                out[o++] = alphabet[v >> 18 & 63];
                out[o++] = alphabet[v >> 12 & 63];
                out[o++] = i + 1 < len ? alphabet[v >> 6 & 63] : '=';
                out[o++] = i + 2 < len ? alphabet[v & 63] : '=';
        }
        out[o] = '\0';
}

char *base64_encode(const void *in, size_t len) {
        if (len > (SIZE_MAX - 1) / 4 * 3 - 3)
                return NULL;
        char *out = malloc(base64_encoded_len(len) + 1);
        if (out)
                base64_encode_into(in, len, out);
        return out;
}

/* The 6-bit value of one character, or -1. */
static int value_of(char c) {
        if (c >= 'A' && c <= 'Z')
                return c - 'A';
        if (c >= 'a' && c <= 'z')
                return c - 'a' + 26;
        if (c >= '0' && c <= '9')
                return c - '0' + 52;
        if (c == '+')
                return 62;
        if (c == '/')
                return 63;
        return -1;
}

/* One group of four characters (`last`: the final group, the only one that may be padded).
 * Returns the bytes it stands for (1-3), or -EINVAL. */
static int decode_group(const char *g, bool last, unsigned char out[3]) {
        int pad = 0;
        if (last && g[3] == '=')
                pad = g[2] == '=' ? 2 : 1;
        uint32_t v = 0;
        for (int k = 0; k < 4 - pad; k++) {
                int x = value_of(g[k]);
                if (x < 0)
                        return -EINVAL;
                v = v << 6 | (uint32_t) x;
        }
        v <<= 6 * pad;
        /* Non-canonical: bits under the padding must be zero. */
        if ((pad == 1 && (v & 0xff)) || (pad == 2 && (v & 0xffff)))
                return -EINVAL;
        out[0] = (unsigned char) (v >> 16);
        out[1] = (unsigned char) (v >> 8);
        out[2] = (unsigned char) v;
        return 3 - pad;
}

int base64_decode_into(const char *in, size_t len, void *out, size_t cap, size_t *ret_len) {
        unsigned char *o = out;
        size_t n_out = 0;
        if (len % 4 != 0)
                return -EINVAL;
        for (size_t i = 0; i < len; i += 4) {
                unsigned char group[3];
                int n = decode_group(in + i, i + 4 == len, group);
                if (n < 0)
                        return n;
                if ((size_t) n > cap - n_out)
                        return -ENOSPC;
                for (int k = 0; k < n; k++)
                        o[n_out++] = group[k];
        }
        *ret_len = n_out;
        return 0;
}

int base64_decode(const char *in, size_t len, char **ret, size_t *ret_len) {
        *ret = NULL;
        *ret_len = 0;
        if (len % 4 != 0)
                return -EINVAL;
        size_t cap = len / 4 * 3;
        char *out = malloc(cap + 1);
        if (!out)
                return -ENOMEM;
        size_t n = 0;
        int r = base64_decode_into(in, len, out, cap, &n);
        if (r < 0) {
                free(out);
                return r;
        }
        out[n] = '\0';
        *ret = out;
        *ret_len = n;
        return 0;
}
