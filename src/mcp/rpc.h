/* SPDX-License-Identifier: Apache-2.0 */
/* JSON-RPC 2.0 as the Model Context Protocol frames it over stdio (docs/mcp.md): one message per
 * line. The decoder is the boundary for untrusted input: it turns a line into a typed message or
 * a JSON-RPC error, and nothing else of the server reads raw bytes. Pure: no I/O, no state.
 * Fuzzed by fuzz/fuzz-mcp.c. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

/* The longest line read: a write_file of CORDON_FS_CONTENT_MAX bytes as a JSON string, with room
 * for escapes. A longer line is answered with MCP_INVALID_REQUEST and skipped, never buffered
 * whole (memory stays bounded whatever a client sends). */
#define MCP_LINE_MAX (24u * 1024 * 1024)
/* A request id that is a string: at most this many bytes. */
#define MCP_ID_MAX 256u
/* A method name: at most this many bytes. */
#define MCP_METHOD_MAX 128u

/* JSON-RPC 2.0's error codes, and the one MCP adds. */
#define MCP_PARSE_ERROR (-32700)
#define MCP_INVALID_REQUEST (-32600)
#define MCP_METHOD_NOT_FOUND (-32601)
#define MCP_INVALID_PARAMS (-32602)
#define MCP_INTERNAL_ERROR (-32603)
#define MCP_NOT_INITIALIZED (-32002) /* a request before initialize (server-defined range) */

typedef enum mcp_kind {
        MCP_REQUEST = 0,  /* method and id: answered */
        MCP_NOTIFICATION, /* method, no id: never answered */
        MCP_RESPONSE,     /* result or error with an id: an answer to a request of ours */
} mcp_kind;

typedef struct mcp_message {
        mcp_kind kind;
        json_t *id;        /* a string or an integer (REQUEST, RESPONSE); NULL otherwise; owned */
        char method[MCP_METHOD_MAX + 1]; /* REQUEST, NOTIFICATION */
        json_t *params;    /* an object, or NULL when absent; owned */
} mcp_message;

typedef struct mcp_fault {
        int code;          /* MCP_PARSE_ERROR, MCP_INVALID_REQUEST */
        json_t *id;        /* the request's id when it could be read, else NULL (answered with
                            * "id": null); owned */
        char message[256]; /* one line */
} mcp_fault;

/* Decodes one line (without its '\n'; a trailing '\r' is dropped). Returns 0 with *ret filled
 * (free with mcp_message_done), or -EBADMSG with *fault filled (free with mcp_fault_done):
 * not JSON (PARSE_ERROR); a batch (arrays were removed from MCP in revision 2025-06-18), not an
 * object, "jsonrpc" other than "2.0", an id that is neither a string (1..MCP_ID_MAX bytes) nor an
 * integer, a method that is not a non-empty string, params that are not an object, a message that
 * is both a request and a response, or a member JSON-RPC does not define (INVALID_REQUEST). */
int mcp_decode(const char *line, size_t len, mcp_message *ret, mcp_fault *fault);

void mcp_message_done(mcp_message *m);
void mcp_fault_done(mcp_fault *f);

/* One line ("...}\n", NUL-terminated; caller frees), or NULL out of memory. `id` NULL writes
 * "id": null. The builders take references of their own; the caller keeps its. */
char *mcp_result_line(const json_t *id, json_t *result);
char *mcp_error_line(const json_t *id, int code, const char *message);
char *mcp_notification_line(const char *method, json_t *params);
