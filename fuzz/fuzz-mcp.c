/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target for the request decoder of `cordon mcp` (src/mcp/rpc.c, docs/mcp.md) and the
 * schema check every tools/call's arguments go through (src/mcp/schema.c). The input is one line
 * as a client could send it. Oracles beyond "no crash, no sanitizer report":
 *   - an accepted message holds only what the decoder promises: a request has a string id of
 *     1..MCP_ID_MAX bytes or an integer one and a method of 1..MCP_METHOD_MAX bytes without NUL;
 *     a notification no id; a response an id and neither method nor params; params, when there,
 *     an object;
 *   - it is canonical: written back from the struct alone it decodes to the same message, so the
 *     decoder drops or invents nothing it acts on;
 *   - a refused line gets PARSE_ERROR or INVALID_REQUEST, a one-line message of valid UTF-8, and
 *     an id only when the line had a valid one;
 *   - every builder gives one line of JSON that reads back to what was put in;
 *   - the arguments of a tools/call, checked against every tool's schema, pass or fail with one
 *     clean line naming "arguments".
 * Built two ways (fuzz/meson.build): with libFuzzer (-DCORDON_LIBFUZZER), and as a plain
 * program replaying fuzz/corpus/mcp in the unit suite ("valid-*" accepted, "invalid-*"
 * refused). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "mcp/mcp-internal.h"
#include "mcp/rpc.h"
#include "mcp/schema.h"
#include "util/utf8.h"

#include "replay.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond) FUZZ_CHECK("fuzz-mcp", cond)

static json_t *tools_list;

static bool one_clean_line(const char *s) {
        size_t n = strlen(s);
        for (size_t i = 0; i < n;) {
                size_t k = utf8_char_len(s + i, n - i);
                if (k == 0 || (k == 1 && ((unsigned char) s[i] < 0x20 || s[i] == 0x7f)))
                        return false;
                i += k;
        }
        return true;
}

static bool id_ok(const json_t *id) {
        return json_is_integer(id) || (json_is_string(id) && json_string_length(id) >= 1 &&
                                       json_string_length(id) <= MCP_ID_MAX);
}

/* A builder's line: one line, JSON, ending in exactly one '\n'. */
static json_t *read_line(char *line) {
        CHECK(line != NULL);
        size_t n = strlen(line);
        CHECK(n > 1 && line[n - 1] == '\n' && memchr(line, '\n', n - 1) == NULL);
        json_t *o = json_loadb(line, n - 1, 0, NULL);
        CHECK(json_is_object(o));
        free(line);
        return o;
}

static void check_message(const mcp_message *m) {
        size_t mlen = strlen(m->method);
        switch (m->kind) {
        case MCP_REQUEST:
                CHECK(id_ok(m->id) && mlen >= 1 && mlen <= MCP_METHOD_MAX);
                break;
        case MCP_NOTIFICATION:
                CHECK(!m->id && mlen >= 1 && mlen <= MCP_METHOD_MAX);
                break;
        case MCP_RESPONSE:
                CHECK(id_ok(m->id) && mlen == 0 && !m->params);
                break;
        default:
                CHECK(!"an unknown kind");
        }
        CHECK(!m->params || json_is_object(m->params));
}

/* Written back (a request or notification as a client would write it) it decodes the same. */
static void check_canonical(const mcp_message *m) {
        if (m->kind == MCP_RESPONSE)
                return;
        json_t *o = json_pack("{s:s, s:s, s:O*, s:O*}", "jsonrpc", "2.0", "method", m->method, "id",
                              m->id, "params", m->params);
        CHECK(o != NULL);
        char *text = json_dumps(o, JSON_COMPACT);
        json_decref(o);
        CHECK(text != NULL);
        mcp_message again;
        mcp_fault f;
        CHECK(mcp_decode(text, strlen(text), &again, &f) == 0);
        CHECK(again.kind == m->kind && strcmp(again.method, m->method) == 0);
        CHECK((!again.id && !m->id) || json_equal(again.id, m->id));
        CHECK((!again.params && !m->params) || json_equal(again.params, m->params));
        mcp_message_done(&again);
        free(text);
}

static void check_builders(const json_t *id, const char *message) {
        json_t *o = read_line(mcp_error_line(id, MCP_INVALID_REQUEST, message));
        CHECK(json_equal(json_object_get(o, "id"), id ? id : json_null()));
        CHECK(strcmp(json_string_value(json_object_get(json_object_get(o, "error"), "message")),
                     message) == 0);
        json_decref(o);
        json_t *r = json_pack("{s:s}", "k", message);
        o = read_line(mcp_result_line(id, r));
        CHECK(json_equal(json_object_get(o, "result"), r));
        json_decref(o);
        json_decref(r);
}

/* Every tool's schema against the arguments: the verdict is a bool and one clean line. */
static void check_arguments(const json_t *args) {
        const char *names[MCP_TOOLS_MAX];
        size_t n = mcp_tool_names(names, MCP_TOOLS_MAX);
        for (size_t i = 0; i < n; i++) {
                char why[512] = "";
                const json_t *schema = mcp_tool_schema(tools_list, mcp_tool_find(names[i]));
                CHECK(schema != NULL);
                int r = mcp_schema_check(schema, args, "arguments", why, sizeof(why));
                CHECK(r == 0 || (r == -EINVAL && strncmp(why, "arguments", 9) == 0 &&
                                 one_clean_line(why)));
        }
}

static int run(const uint8_t *data, size_t size) {
        if (!tools_list)
                CHECK((tools_list = mcp_tools_list()) != NULL);
        mcp_message m;
        mcp_fault f;
        int r = mcp_decode((const char *) data, size, &m, &f);
        if (r < 0) {
                CHECK(r == -EBADMSG);
                CHECK(f.code == MCP_PARSE_ERROR || f.code == MCP_INVALID_REQUEST);
                CHECK(f.message[0] && one_clean_line(f.message));
                CHECK(!f.id || id_ok(f.id));
                check_builders(f.id, f.message);
                mcp_fault_done(&f);
                return r;
        }
        check_message(&m);
        check_canonical(&m);
        json_t *args = m.params ? json_object_get(m.params, "arguments") : NULL;
        if (args)
                check_arguments(args);
        check_builders(m.id, m.method);
        mcp_message_done(&m);
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        (void) run(data, size);
        return 0;
}

#ifndef CORDON_LIBFUZZER
bool fuzz_replay_seed(const char *name, const uint8_t *data, size_t size) {
        /* Seeds are files with a trailing newline; the server hands the decoder the line
         * without it. */
        while (size > 0 && data[size - 1] == '\n')
                size--;
        int r = run(data, size);
        return fuzz_named_verdict(name, r, r < 0 ? "refused" : NULL);
}
#endif
