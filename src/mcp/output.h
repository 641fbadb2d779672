/* SPDX-License-Identifier: Apache-2.0 */
/* A command's output kept for its tool result within a bound: the first MCP_OUTPUT_HEAD bytes
 * and the last MCP_OUTPUT_TAIL, whatever it writes (a build log's errors are at its end, its
 * cause often at its start). What lies between is counted and replaced by one marker line. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MCP_OUTPUT_HEAD (32u * 1024)
#define MCP_OUTPUT_TAIL (32u * 1024)

typedef struct mcp_output {
        char head[MCP_OUTPUT_HEAD];
        size_t head_len;
        char tail[MCP_OUTPUT_TAIL]; /* a ring: the last bytes after the head */
        size_t tail_pos, tail_len;
        uint64_t total;             /* every byte written */
} mcp_output;

void mcp_output_add(mcp_output *o, const char *data, size_t len);
/* The bytes omitted between head and tail (0: nothing was cut). */
uint64_t mcp_output_omitted(const mcp_output *o);
/* The kept output as valid UTF-8, with "\n[cordon: N bytes of output omitted]\n" where it was
 * cut; caller frees; NULL out of memory. */
char *mcp_output_text(const mcp_output *o);
