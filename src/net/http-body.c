/* SPDX-License-Identifier: Apache-2.0 */
/* Body framing (RFC 9112 §6, §7.1). The chunked decoder is a byte-at-a-time state machine over
 * the chunk-size lines, the CRLF after each chunk and the trailer section, which skips chunk data
 * in one step; it keeps no bytes, so it cannot be made to buffer anything. Every leniency other
 * readers might take (bare LF, whitespace before ';', overlong or overflowing sizes) is refused:
 * a body we end at another byte than the upstream does is a smuggled request. */
#include "net/http-body.h"

#include <errno.h>
#include <limits.h>

enum {
        CH_SIZE,         /* chunk-size hex digits */
        CH_EXT,          /* ";" chunk extensions up to CR */
        CH_SIZE_LF,      /* LF ending the chunk-size line */
        CH_DATA,         /* chunk data */
        CH_DATA_CR,      /* CR after chunk data */
        CH_DATA_LF,      /* LF after chunk data */
        CH_TRAILER,      /* start of a trailer field line, or CR of the final CRLF */
        CH_TRAILER_NAME, /* field name up to ':' */
        CH_TRAILER_VALUE,/* field value up to CR */
        CH_TRAILER_LF,   /* LF ending a trailer field line */
        CH_END_LF,       /* LF ending the message */
};

void http_body_init(http_body *b, http_framing framing, uint64_t content_length) {
        *b = (http_body){ .framing = framing, .state = CH_SIZE };
        switch (framing) {
        case HTTP_FRAMING_NONE:
                b->done = true;
                break;
        case HTTP_FRAMING_LENGTH:
                b->remaining = content_length;
                b->done = content_length == 0;
                break;
        case HTTP_FRAMING_CHUNKED:
        case HTTP_FRAMING_CLOSE:
                break;
        default:
                b->error = -EINVAL;
                b->why = "unknown framing";
                break;
        }
}

static int fail(http_body *b, const char *why) {
        b->error = -EBADMSG;
        b->why = why;
        return b->error;
}

static int hex_value(unsigned char c) {
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

/* One byte of the chunk-size line. */
static int size_byte(http_body *b, unsigned char c) {
        /* The CR ending the line is not part of it. */
        if (c != '\r' && ++b->line_len > HTTP_CHUNK_LINE_MAX)
                return fail(b, "chunk-size line too long");
        if (b->state == CH_EXT) {
                if (c == '\r')
                        b->state = CH_SIZE_LF;
                else if (c == '\n')
                        return fail(b, "bare LF in chunk extension");
                else if (!http_is_field_char(c))
                        return fail(b, "control character in chunk extension");
                return 0;
        }
        int d = hex_value(c);
        if (d >= 0) {
                /* Readers that keep 32 or 64 bits, signed or not, would see another size. */
                if (++b->digits > HTTP_CHUNK_DIGITS_MAX || b->size > (uint64_t) INT64_MAX >> 4)
                        return fail(b, "chunk-size too large");
                b->size = b->size << 4 | (uint64_t) d;
                return 0;
        }
        if (b->digits == 0)
                return fail(b, "chunk-size is not hex");
        if (c == ';')
                b->state = CH_EXT;
        else if (c == '\r')
                b->state = CH_SIZE_LF;
        else if (c == ' ' || c == '\t')
                return fail(b, "whitespace after chunk-size");
        else if (c == '\n')
                return fail(b, "bare LF after chunk-size");
        else
                return fail(b, "invalid character in chunk-size");
        return 0;
}

static int size_lf(http_body *b, unsigned char c) {
        if (c != '\n')
                return fail(b, "bare CR in chunk-size line");
        if (b->size == 0) {
                b->state = CH_TRAILER;
                return 0;
        }
        b->remaining = b->size;
        b->state = CH_DATA;
        return 0;
}

/* One byte of the trailer section (field lines, then CRLF). */
static int trailer_byte(http_body *b, unsigned char c) {
        if (++b->trailer_len > HTTP_TRAILER_MAX)
                return fail(b, "trailer section too large");
        switch (b->state) {
        case CH_TRAILER:
                if (c == '\r')
                        b->state = CH_END_LF;
                else if (c == ' ' || c == '\t')
                        return fail(b, "obs-fold in trailer");
                else if (http_is_tchar(c))
                        b->state = CH_TRAILER_NAME;
                else
                        return fail(b, "invalid trailer field line");
                return 0;
        case CH_TRAILER_NAME:
                if (c == ':')
                        b->state = CH_TRAILER_VALUE;
                else if (!http_is_tchar(c))
                        return fail(b, "invalid trailer field name");
                return 0;
        case CH_TRAILER_VALUE:
                if (c == '\r')
                        b->state = CH_TRAILER_LF;
                else if (!http_is_field_char(c))
                        return fail(b, "control character in trailer value");
                return 0;
        case CH_TRAILER_LF:
        case CH_END_LF:
                if (c != '\n')
                        return fail(b, "bare CR in trailer section");
                if (b->state == CH_END_LF)
                        b->done = true;
                b->state = CH_TRAILER;
                return 0;
        default:
                return fail(b, "internal: not in a trailer state");
        }
}

static int chunked_byte(http_body *b, unsigned char c) {
        switch (b->state) {
        case CH_SIZE:
        case CH_EXT:
                return size_byte(b, c);
        case CH_SIZE_LF:
                return size_lf(b, c);
        case CH_DATA_CR:
                if (c != '\r')
                        return fail(b, "missing CRLF after chunk data");
                b->state = CH_DATA_LF;
                return 0;
        case CH_DATA_LF:
                if (c != '\n')
                        return fail(b, "missing CRLF after chunk data");
                b->state = CH_SIZE;
                b->digits = b->line_len = 0;
                b->size = 0;
                return 0;
        case CH_TRAILER:
        case CH_TRAILER_NAME:
        case CH_TRAILER_VALUE:
        case CH_TRAILER_LF:
        case CH_END_LF:
                return trailer_byte(b, c);
        default:
                return fail(b, "internal: bad chunked state");
        }
}

static ssize_t feed_chunked(http_body *b, const char *buf, size_t len, http_body_sink sink,
                            void *ctx) {
        size_t i = 0;
        while (i < len && !b->done) {
                if (b->state == CH_DATA) {
                        size_t take = len - i;
                        if (take > b->remaining)
                                take = (size_t) b->remaining;
                        if (sink)
                                sink(ctx, buf + i, take);
                        i += take;
                        b->remaining -= take;
                        if (b->remaining == 0)
                                b->state = CH_DATA_CR;
                        continue;
                }
                int r = chunked_byte(b, (unsigned char) buf[i]);
                if (r < 0)
                        return r;
                i++;
        }
        return (ssize_t) i;
}

ssize_t http_body_feed(http_body *b, const char *buf, size_t len) {
        return http_body_feed_data(b, buf, len, NULL, NULL);
}

ssize_t http_body_feed_data(http_body *b, const char *buf, size_t len, http_body_sink sink,
                            void *ctx) {
        if (b->error)
                return b->error;
        if (b->done)
                return 0;
        /* The count must fit the return type; the rest is accounted on the next call. */
        if (len > SSIZE_MAX)
                len = SSIZE_MAX;
        switch (b->framing) {
        case HTTP_FRAMING_LENGTH: {
                size_t take = len < b->remaining ? len : (size_t) b->remaining;
                b->remaining -= take;
                b->done = b->remaining == 0;
                if (sink && take)
                        sink(ctx, buf, take);
                return (ssize_t) take;
        }
        case HTTP_FRAMING_CHUNKED:
                return feed_chunked(b, buf, len, sink, ctx);
        case HTTP_FRAMING_CLOSE:
                return (ssize_t) len;
        case HTTP_FRAMING_NONE:
        default:
                return 0;
        }
}
