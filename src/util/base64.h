/* SPDX-License-Identifier: Apache-2.0 */
/* Base64 (RFC 4648 §4, standard alphabet, padded): the events' binary output chunks
 * (src/linux/events.c writes them, `cordon explain` reads them back in src/explain/explain.c),
 * file contents in cordond's fs.* methods (docs/protocol.md) and the egress proxy's
 * Proxy-Authorization: Basic (src/net/http.c). Decoding is strict: one spelling per byte
 * string, so two different texts never stand for the same bytes (two spellings of one credential
 * would be two credentials to whoever compares encoded forms). */
#pragma once

#include <stddef.h>

/* The encoded length of `len` bytes, without the NUL: 4 * ceil(len / 3). */
size_t base64_encoded_len(size_t len);

/* Encodes `len` bytes into `out`, which holds base64_encoded_len(len) + 1 bytes (a NUL ends
 * it). */
void base64_encode_into(const void *in, size_t len, char *out);

/* Encodes `len` bytes into a malloc'ed NUL-terminated string; NULL on allocation failure. */
char *base64_encode(const void *in, size_t len);

/* Decodes `len` characters of `in` into a malloc'ed buffer (NUL-terminated for convenience; the
 * bytes may hold NUL themselves). Refuses with -EINVAL anything but the canonical encoding: a
 * length that is not a multiple of 4, characters outside the alphabet (whitespace included),
 * '=' anywhere but the last one or two places, and non-zero bits under the padding (so two
 * different texts never decode to the same bytes). -ENOMEM on allocation failure. */
int base64_decode(const char *in, size_t len, char **ret, size_t *ret_len);

/* The same decoding into `out` (`cap` bytes, no allocation): -EINVAL as above, -ENOSPC when the
 * bytes do not fit. */
int base64_decode_into(const char *in, size_t len, void *out, size_t cap, size_t *ret_len);
