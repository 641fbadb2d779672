/* SPDX-License-Identifier: Apache-2.0 */
/* Strict UTF-8 (RFC 3629): no overlong forms, no surrogates, nothing above U+10FFFF. Used where
 * bytes from a command become JSON text or terminal text (events, the denial decoder). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* The length (1-4) of the valid character at s[0..n), or 0 when the bytes there are not one
 * (invalid, or cut off by n). */
size_t utf8_char_len(const char *s, size_t n);

/* The length of the longest prefix of s[0..n) that does not end inside a character, so that the
 * rest (at most 3 bytes) may be completed by later bytes. *valid tells whether that prefix is
 * valid UTF-8 and the rest a possible start of a character. */
size_t utf8_complete_prefix(const char *s, size_t n, bool *valid);
