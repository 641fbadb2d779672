/* SPDX-License-Identifier: Apache-2.0 */
/* The tools of `cordon mcp`: names, descriptions and input schemas (docs/mcp.md lists the same;
 * tests/mcp/ checks the list against it). One table: tools/list shows the schemas as they are
 * written here, and schema.c applies them to every call. */
#include "mcp/mcp-internal.h"

#include <string.h>

/* Shared pieces of the schemas. The limits: an argv of at most 4096 words, a command line of at
 * most 128 KiB (what execve takes in one argument), 1 ms to 24 h. */
#define SESSION_ID                                                                               \
        "\"sessionId\": {\"type\": \"string\", \"minLength\": 1, \"maxLength\": 127, "             \
        "\"description\": \"a session from session_create\"}"
#define SESSION_ID_OPT                                                                           \
        "\"sessionId\": {\"type\": \"string\", \"minLength\": 1, \"maxLength\": 127, "             \
        "\"description\": \"act as the commands of this session (session_create) could; "         \
        "default: the server's policy and directory\"}"
#define PATH(what)                                                                               \
        "\"path\": {\"type\": \"string\", \"minLength\": 1, \"maxLength\": 4095, "                 \
        "\"description\": \"" what "; relative paths resolve against the server's directory\"}"
#define COMMAND_ARGS                                                                             \
        "\"command\": {\"type\": \"string\", \"minLength\": 1, \"maxLength\": 131072, "            \
        "\"description\": \"a shell command line, run as /bin/sh -c COMMAND\"}, "                  \
        "\"argv\": {\"type\": \"array\", \"minItems\": 1, \"maxItems\": 4096, \"items\": "        \
        "{\"type\": \"string\", \"maxLength\": 131072}, \"description\": \"the program and its "   \
        "arguments, without a shell (give command or argv)\"}, "                                   \
        "\"cwd\": {\"type\": \"string\", \"minLength\": 1, \"maxLength\": 4095, \"description\": " \
        "\"the working directory (default: the server's, or the session's)\"}, "                  \
        "\"env\": {\"type\": \"object\", \"additionalProperties\": {\"type\": \"string\", "        \
        "\"maxLength\": 131072}, \"description\": \"variables set for the command, still "         \
        "filtered by the policy\"}, "                                                              \
        "\"timeoutMs\": {\"type\": \"integer\", \"minimum\": 1, \"maximum\": 86400000, "           \
        "\"description\": \"kill the command after this many milliseconds (default 600000)\"}"

static const mcp_tool tools[] = {
        { "shell", "Run a sandboxed command",
          "Runs a command in a new cordon sandbox under the server's policy: only the writable "
          "roots can be written, secrets (~/.ssh, ~/.aws, ...) are unreadable, denied file names "
          "(.env, *.pem, ...) cannot be created, the network goes only to allowlisted hosts. "
          "Returns the output (very large output is cut in the middle, with a marker), the exit "
          "status, and every refusal of the sandbox (violations), which explain a failure. Output "
          "is streamed as progress notifications when the request carries a progressToken.",
          "{\"type\": \"object\", \"properties\": {" COMMAND_ARGS "}, "
          "\"additionalProperties\": false}",
          false, mcp_tool_shell },
        { "read_file", "Read a file through the sandbox's rules",
          "Reads a range of a regular file as a sandboxed command could: secrets and the "
          "sandbox's private /tmp are refused (the refusal is reported as a violation). Text is "
          "returned as is; other bytes as base64 (encoding).",
          "{\"type\": \"object\", \"properties\": {" PATH("the file") ", "
          "\"offset\": {\"type\": \"integer\", \"minimum\": 0, \"description\": \"the first "
          "byte (default 0)\"}, "
          "\"length\": {\"type\": \"integer\", \"minimum\": 1, \"maximum\": 8388608, "
          "\"description\": \"bytes to read (default 262144); eof says whether the end was "
          "reached\"}, " SESSION_ID_OPT "}, \"required\": [\"path\"], "
          "\"additionalProperties\": false}",
          true, mcp_tool_read_file },
        { "write_file", "Write a file through the sandbox's rules",
          "Replaces or creates a file atomically, only where a sandboxed command could write: "
          "beneath a writable root, never a protected path (.git/hooks, .bashrc, .vscode, ...), "
          "never a denied name (.env, *.pem, ...), never through a symlink. Its directory must "
          "exist. A refusal is reported as a violation.",
          "{\"type\": \"object\", \"properties\": {" PATH("the file") ", "
          "\"content\": {\"type\": \"string\", \"maxLength\": 11184812, \"description\": \"the "
          "new content (at most 8 MiB of bytes)\"}, "
          "\"encoding\": {\"type\": \"string\", \"enum\": [\"utf-8\", \"base64\"], "
          "\"description\": \"how content is written (default utf-8)\"}, " SESSION_ID_OPT "}, "
          "\"required\": [\"path\", \"content\"], \"additionalProperties\": false}",
          false, mcp_tool_write_file },
        { "edit_file", "Edit a file through the sandbox's rules",
          "Replaces the one occurrence of oldText in an existing file with newText, under the "
          "same rules as write_file. No occurrence, or more than one, writes nothing and says "
          "so.",
          "{\"type\": \"object\", \"properties\": {" PATH("the file") ", "
          "\"oldText\": {\"type\": \"string\", \"minLength\": 1, \"maxLength\": 8388608}, "
          "\"newText\": {\"type\": \"string\", \"maxLength\": 8388608}, " SESSION_ID_OPT "}, "
          "\"required\": [\"path\", \"oldText\", \"newText\"], \"additionalProperties\": false}",
          false, mcp_tool_edit_file },
        { "list_directory", "List a directory through the sandbox's rules",
          "Lists a directory's entries (name, type, size) as a sandboxed command sees them: a "
          "secret is shown empty.",
          "{\"type\": \"object\", \"properties\": {" PATH("the directory") ", " SESSION_ID_OPT
          "}, \"required\": [\"path\"], \"additionalProperties\": false}",
          true, mcp_tool_list_directory },
        { "session_create", "Create a warm sandbox session",
          "Builds a sandbox once (namespaces, mounts, proxy) under the server's policy and keeps "
          "it: each session_exec then starts only the command. Returns the sessionId.",
          "{\"type\": \"object\", \"properties\": {\"cwd\": {\"type\": \"string\", \"minLength\": "
          "1, \"maxLength\": 4095, \"description\": \"the session's directory (default: the "
          "server's)\"}}, \"additionalProperties\": false}",
          false, mcp_tool_session_create },
        { "session_exec", "Run a command in a session",
          "Runs a command in a session's sandbox, as shell does in a new one.",
          "{\"type\": \"object\", \"properties\": {" SESSION_ID ", " COMMAND_ARGS "}, "
          "\"required\": [\"sessionId\"], \"additionalProperties\": false}",
          false, mcp_tool_session_exec },
        { "session_destroy", "Destroy a session",
          "Ends a session: everything running in it is killed.",
          "{\"type\": \"object\", \"properties\": {" SESSION_ID "}, \"required\": "
          "[\"sessionId\"], \"additionalProperties\": false}",
          false, mcp_tool_session_destroy },
        { "session_list", "List the sessions", "The server's sessions and their states.",
          "{\"type\": \"object\", \"properties\": {}, \"additionalProperties\": false}", true,
          mcp_tool_session_list },
};

#define N_TOOLS (sizeof(tools) / sizeof(tools[0]))
_Static_assert(N_TOOLS <= MCP_TOOLS_MAX, "mcp_tool_names() callers size their arrays so");

const mcp_tool *mcp_tool_find(const char *name) {
        for (size_t i = 0; i < N_TOOLS; i++)
                if (strcmp(tools[i].name, name) == 0)
                        return &tools[i];
        return NULL;
}

size_t mcp_tool_names(const char **ret, size_t max) {
        for (size_t i = 0; i < N_TOOLS && i < max; i++)
                ret[i] = tools[i].name;
        return N_TOOLS < max ? N_TOOLS : max;
}

static json_t *tool_json(const mcp_tool *t) {
        json_t *schema = json_loads(t->input_schema, JSON_REJECT_DUPLICATES, NULL);
        if (!schema)
                return NULL;
        /* destructiveHint: a command may delete files inside the writable roots; openWorldHint:
         * it may reach the allowlisted hosts. */
        return json_pack("{s:s, s:s, s:s, s:o, s:{s:b, s:b, s:b}}", "name", t->name, "title",
                         t->title, "description", t->description, "inputSchema", schema,
                         "annotations", "readOnlyHint", t->read_only, "destructiveHint",
                         !t->read_only, "openWorldHint", !t->read_only);
}

json_t *mcp_tools_list(void) {
        json_t *list = json_array();
        for (size_t i = 0; list && i < N_TOOLS; i++) {
                json_t *t = tool_json(&tools[i]);
                if (!t || json_array_append_new(list, t) < 0) {
                        json_decref(list);
                        return NULL;
                }
        }
        return list ? json_pack("{s:o}", "tools", list) : NULL;
}

const json_t *mcp_tool_schema(const json_t *list, const mcp_tool *t) {
        size_t i = (size_t) (t - tools);
        return json_object_get(json_array_get(json_object_get(list, "tools"), i), "inputSchema");
}
