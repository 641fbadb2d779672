/* SPDX-License-Identifier: Apache-2.0 */
/* The bounded head-and-tail output of a command (output.h). */
#include "mcp/output.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp/mcp-internal.h"

void mcp_output_add(mcp_output *o, const char *data, size_t len) {
        o->total += len;
        size_t h = MCP_OUTPUT_HEAD - o->head_len;
        if (h > len)
                h = len;
        memcpy(o->head + o->head_len, data, h);
        o->head_len += h;
        data += h;
        len -= h;
        if (len >= MCP_OUTPUT_TAIL) { /* only the last bytes can stay */
                data += len - MCP_OUTPUT_TAIL;
                len = MCP_OUTPUT_TAIL;
        }
        for (size_t i = 0; i < len; i++) {
                o->tail[o->tail_pos] = data[i];
                o->tail_pos = (o->tail_pos + 1) % MCP_OUTPUT_TAIL;
        }
        o->tail_len = o->tail_len + len > MCP_OUTPUT_TAIL ? MCP_OUTPUT_TAIL : o->tail_len + len;
}

uint64_t mcp_output_omitted(const mcp_output *o) {
        return o->total - o->head_len - o->tail_len;
}

char *mcp_output_text(const mcp_output *o) {
        size_t n = o->head_len + o->tail_len;
        char *raw = malloc(n + 1);
        if (!raw)
                return NULL;
        memcpy(raw, o->head, o->head_len);
        size_t start = (o->tail_pos + MCP_OUTPUT_TAIL - o->tail_len) % MCP_OUTPUT_TAIL;
        for (size_t i = 0; i < o->tail_len; i++)
                raw[o->head_len + i] = o->tail[(start + i) % MCP_OUTPUT_TAIL];
        uint64_t omitted = mcp_output_omitted(o);
        char *head = mcp_utf8_clean(raw, o->head_len);
        /* A cut inside a character would show as replacement characters: the tail starts at
         * the next character (continuation bytes are 10xxxxxx). */
        size_t skip = 0;
        while (omitted && skip < 3 && skip < o->tail_len &&
               ((unsigned char) raw[o->head_len + skip] & 0xc0) == 0x80)
                skip++;
        char *tail = mcp_utf8_clean(raw + o->head_len + skip, o->tail_len - skip);
        free(raw);
        char marker[96] = "";
        if (omitted)
                (void) snprintf(marker, sizeof(marker),
                                "\n[cordon: %llu bytes of output omitted]\n",
                                (unsigned long long) (omitted + skip));
        char *out = NULL;
        if (head && tail && asprintf(&out, "%s%s%s", head, marker, tail) < 0)
                out = NULL;
        free(head);
        free(tail);
        return out;
}
