/* SPDX-License-Identifier: Apache-2.0 */
/* Strict UTF-8 (RFC 3629): no overlong forms, no surrogates, nothing above U+10FFFF. Used where
 * bytes from a command become JSON text or terminal text (events, the denial decoder). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* The length (1-4) of the valid character at s[0..n), or 0 when the bytes there are not one
 * (invalid, or cut off by n). */
size_t utf8_char_len(const char *s, size_t n);

/* How many bytes at the end of s[0..n) (0-3) are the valid beginning of a character that later
 * bytes may complete, whatever comes before them. */
size_t utf8_incomplete_tail(const char *s, size_t n);
