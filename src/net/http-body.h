/* SPDX-License-Identifier: Apache-2.0 */
/* Where an HTTP/1.x message body ends, found without touching its bytes: the proxy forwards a
 * body exactly as received (a chunked body stays chunked) and only needs to know how many of the
 * bytes in hand still belong to the current message, so that the next request or response on the
 * same connection starts where both ends think it does.
 *
 * Incremental: the framer keeps its own state, so feeding a body in any pieces (down to single
 * bytes) gives the same counts, the same end and the same faults as feeding it at once. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "net/http.h"

#define HTTP_CHUNK_LINE_MAX 1024   /* chunk-size line: hex digits and extensions, CRLF excluded */
#define HTTP_CHUNK_DIGITS_MAX 16   /* hex digits of one chunk-size, leading zeros included */
#define HTTP_TRAILER_MAX 8192      /* the whole trailer section, CRLFs included */

typedef struct http_body {
        http_framing framing;
        bool done;              /* the message is complete; further bytes are not ours */
        const char *why;        /* static phrase once framing failed */
        int error;              /* 0, or the negative errno every later feed returns again */
        uint64_t remaining;     /* LENGTH: body bytes left; CHUNKED: data bytes left in a chunk */
        /* CHUNKED state (opaque to callers). */
        int state;
        uint32_t digits, line_len, trailer_len;
        uint64_t size;
} http_body;

/* Starts a body with the given framing. NONE and LENGTH 0 are done at once; CLOSE is never
 * done (the caller ends it at EOF). */
void http_body_init(http_body *b, http_framing framing, uint64_t content_length);

/* Accounts buf[0..len). Returns how many of these bytes belong to the current message (≤ len;
 * fewer only when the message ended inside buf, b->done is then set), or -EBADMSG on malformed
 * chunked framing (b->why says what; a chunk-size over 16 digits or above INT64_MAX, a bad hex
 * digit, whitespace before an extension, a missing CRLF, a bare CR or LF, a chunk-size line over
 * HTTP_CHUNK_LINE_MAX, a trailer section over HTTP_TRAILER_MAX or with a malformed field line).
 * After done, returns 0; after an error, returns the same error. */
ssize_t http_body_feed(http_body *b, const char *buf, size_t len);

/* http_body_feed(), also handing each run of the body's data bytes (chunked framing removed;
 * trailers are not data) to sink, in order. CLOSE framing (responses only) hands nothing. */
typedef void (*http_body_sink)(void *ctx, const char *data, size_t len);
ssize_t http_body_feed_data(http_body *b, const char *buf, size_t len, http_body_sink sink,
                            void *ctx);
