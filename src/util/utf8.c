/* SPDX-License-Identifier: Apache-2.0 */
#include "util/utf8.h"

#include <stdint.h>

/* How many continuation bytes follow lead byte c, and the range its first one must be in
 * (which rules out overlong forms, surrogates and code points above U+10FFFF). */
static int lead(unsigned char c, unsigned char *lo, unsigned char *hi) {
        *lo = 0x80;
        *hi = 0xbf;
        if (c < 0x80)
                return 0;
        if (c >= 0xc2 && c <= 0xdf)
                return 1;
        if (c >= 0xe0 && c <= 0xef) {
                if (c == 0xe0)
                        *lo = 0xa0;
                if (c == 0xed)
                        *hi = 0x9f;
                return 2;
        }
        if (c >= 0xf0 && c <= 0xf4) {
                if (c == 0xf0)
                        *lo = 0x90;
                if (c == 0xf4)
                        *hi = 0x8f;
                return 3;
        }
        return -1;
}

/* The number of bytes of s[0..n) that are a valid beginning of one character (n may cut it). */
static size_t valid_start(const unsigned char *s, size_t n, int *need) {
        unsigned char lo, hi;
        *need = lead(s[0], &lo, &hi);
        if (*need < 0)
                return 0;
        size_t i = 1;
        for (; i <= (size_t) *need && i < n; i++) {
                unsigned char c = s[i];
                if (c < (i == 1 ? lo : 0x80) || c > (i == 1 ? hi : 0xbf))
                        return 0;
        }
        return i;
}

size_t utf8_char_len(const char *s, size_t n) {
        if (n == 0)
                return 0;
        int need;
        size_t got = valid_start((const unsigned char *) s, n, &need);
        return got == (size_t) need + 1 ? got : 0;
}

size_t utf8_incomplete_tail(const char *s, size_t n) {
        for (size_t k = 1; k <= 3 && k <= n; k++) {
                unsigned char c = (unsigned char) s[n - k];
                if (c >= 0x80 && c <= 0xbf)
                        continue; /* a continuation byte: its lead is further back */
                int need;
                size_t got = valid_start((const unsigned char *) s + n - k, k, &need);
                return got == k && (size_t) need >= k ? k : 0;
        }
        return 0;
}
