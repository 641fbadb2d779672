/* SPDX-License-Identifier: Apache-2.0 */
/* The JSON-RPC 2.0 line decoder and builders of `cordon mcp` (rpc.h). */
#include "mcp/rpc.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/utf8.h"

__attribute__((format(printf, 3, 4)))
static int fault_set(mcp_fault *f, int code, const char *fmt, ...) {
        f->code = code;
        va_list ap;
        va_start(ap, fmt);
        (void) vsnprintf(f->message, sizeof(f->message), fmt, ap);
        va_end(ap);
        /* jansson's messages quote the bytes near the error: a client's control characters and
         * broken UTF-8 must not reach a log line or a terminal through the answer. */
        size_t n = strlen(f->message);
        for (size_t i = 0; i < n;) {
                size_t k = utf8_char_len(f->message + i, n - i);
                if (k == 0 || (k == 1 && ((unsigned char) f->message[i] < 0x20 ||
                                          f->message[i] == 0x7f)))
                        f->message[i] = '?', k = 1;
                i += k;
        }
        return -EBADMSG;
}

/* A string id of 1..MCP_ID_MAX bytes, or an integer: what a client may use to match its
 * answer. null is refused (JSON-RPC discourages it, and MCP forbids it), and so are reals: an id
 * compared after a rounding would match the wrong request. */
static bool id_valid(const json_t *id) {
        if (json_is_integer(id))
                return true;
        return json_is_string(id) && json_string_length(id) > 0 &&
               json_string_length(id) <= MCP_ID_MAX;
}

static bool member_known(const char *key) {
        static const char *const known[] = { "jsonrpc", "id", "method", "params", "result",
                                             "error" };
        for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
                if (strcmp(key, known[i]) == 0)
                        return true;
        return false;
}

/* The envelope of an object already parsed: id first, so that a fault after it names it. */
static int decode_envelope(json_t *o, mcp_message *m, mcp_fault *f) {
        json_t *id = json_object_get(o, "id");
        if (id && id_valid(id))
                f->id = json_incref(id);
        const char *key;
        json_t *v;
        json_object_foreach(o, key, v) {
                if (!member_known(key))
                        return fault_set(f, MCP_INVALID_REQUEST, "unknown member in the message; "
                                         "JSON-RPC 2.0 defines jsonrpc, id, method, params, "
                                         "result and error");
        }
        json_t *ver = json_object_get(o, "jsonrpc");
        if (!json_is_string(ver) || strcmp(json_string_value(ver), "2.0") != 0)
                return fault_set(f, MCP_INVALID_REQUEST, "\"jsonrpc\" must be \"2.0\"");
        if (id && !id_valid(id))
                return fault_set(f, MCP_INVALID_REQUEST, "\"id\" must be an integer or a "
                                 "non-empty string of at most %u bytes", MCP_ID_MAX);
        json_t *method = json_object_get(o, "method");
        bool response = json_object_get(o, "result") || json_object_get(o, "error");
        if (response) {
                if (method || json_object_get(o, "params") || !id ||
                    (json_object_get(o, "result") && json_object_get(o, "error")))
                        return fault_set(f, MCP_INVALID_REQUEST, "a response has an id and "
                                         "exactly one of result and error, and no method");
                m->kind = MCP_RESPONSE;
                m->id = json_incref(id);
                return 0;
        }
        if (!json_is_string(method) || json_string_length(method) == 0 ||
            json_string_length(method) > MCP_METHOD_MAX ||
            strlen(json_string_value(method)) != json_string_length(method))
                return fault_set(f, MCP_INVALID_REQUEST, "\"method\" must be a non-empty string "
                                 "of at most %u bytes", MCP_METHOD_MAX);
        json_t *params = json_object_get(o, "params");
        if (params && !json_is_object(params))
                return fault_set(f, MCP_INVALID_REQUEST, "\"params\" must be an object");
        m->kind = id ? MCP_REQUEST : MCP_NOTIFICATION;
        memcpy(m->method, json_string_value(method), json_string_length(method) + 1);
        m->id = id ? json_incref(id) : NULL;
        m->params = params ? json_incref(params) : NULL;
        return 0;
}

int mcp_decode(const char *line, size_t len, mcp_message *ret, mcp_fault *fault) {
        *ret = (mcp_message) { 0 };
        *fault = (mcp_fault) { 0 };
        if (len > 0 && line[len - 1] == '\r')
                len--;
        if (len > MCP_LINE_MAX)
                return fault_set(fault, MCP_INVALID_REQUEST, "message longer than %u bytes",
                                 MCP_LINE_MAX);
        json_error_t jerr;
        /* Duplicate keys are refused: two "id"s or two "method"s would let what the server acts
         * on differ from what a logging proxy in between read. */
        json_t *o = json_loadb(line, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
        if (!o)
                return fault_set(fault, MCP_PARSE_ERROR, "not JSON: %s at column %d", jerr.text,
                                 jerr.column);
        int r;
        if (json_is_array(o))
                r = fault_set(fault, MCP_INVALID_REQUEST, "batches are not supported (MCP "
                              "2025-06-18 removed them): send one message per line");
        else if (!json_is_object(o))
                r = fault_set(fault, MCP_INVALID_REQUEST, "a message must be a JSON object");
        else
                r = decode_envelope(o, ret, fault);
        json_decref(o);
        if (r < 0)
                mcp_message_done(ret);
        else
                mcp_fault_done(fault);
        return r;
}

void mcp_message_done(mcp_message *m) {
        json_decref(m->id);
        json_decref(m->params);
        *m = (mcp_message) { 0 };
}

void mcp_fault_done(mcp_fault *f) {
        json_decref(f->id);
        f->id = NULL;
}

/* "...}\n" from an object the caller's reference stays with. */
static char *line_of(json_t *o) {
        if (!o)
                return NULL;
        char *s = json_dumps(o, JSON_COMPACT);
        json_decref(o);
        if (!s)
                return NULL;
        size_t n = strlen(s);
        char *line = realloc(s, n + 2);
        if (!line) {
                free(s);
                return NULL;
        }
        line[n] = '\n';
        line[n + 1] = '\0';
        return line;
}

char *mcp_result_line(const json_t *id, json_t *result) {
        return line_of(json_pack("{s:s, s:O?, s:O}", "jsonrpc", "2.0", "id", id, "result",
                                 result));
}

char *mcp_error_line(const json_t *id, int code, const char *message) {
        return line_of(json_pack("{s:s, s:O?, s:{s:i, s:s}}", "jsonrpc", "2.0", "id", id, "error",
                                 "code", code, "message", message));
}

char *mcp_notification_line(const char *method, json_t *params) {
        return line_of(json_pack("{s:s, s:s, s:O}", "jsonrpc", "2.0", "method", method, "params",
                                 params));
}
