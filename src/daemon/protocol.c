/* SPDX-License-Identifier: Apache-2.0 */
/* Parsing and building cordond protocol lines (protocol.h, docs/protocol.md). The client is the
 * daemon's own user, but still untrusted input: a harness bug or a compromised harness plug-in
 * must get a structured error, never a crash or a half-applied request. */
#include "daemon/protocol.h"

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/base64.h"
#include "policy/json-pos.h"
#include "policy/policy.h"
#include "util/utf8.h"
#include "util/util.h"

#define PROTO_DEPTH_MAX 32

static const char *const method_names[_PROTO_METHOD_MAX] = {
        [PROTO_PROBE] = "probe",
        [PROTO_SESSION_LAUNCH] = "session.launch",
        [PROTO_SESSION_EXEC] = "session.exec",
        [PROTO_SESSION_LIST] = "session.list",
        [PROTO_SESSION_DESTROY] = "session.destroy",
        [PROTO_SESSION_SUSPEND] = "session.suspend",
        [PROTO_SESSION_RESUME] = "session.resume",
        [PROTO_FS_READ] = "fs.read",
        [PROTO_FS_WRITE] = "fs.write",
        [PROTO_FS_EDIT] = "fs.edit",
        [PROTO_FS_LIST] = "fs.list",
        [PROTO_FS_STAT] = "fs.stat",
        [PROTO_SESSION_TERMINAL] = "session.terminal",
        [PROTO_TERMINAL_INPUT] = "terminal.input",
        [PROTO_TERMINAL_RESIZE] = "terminal.resize",
        [PROTO_TERMINAL_CLOSE] = "terminal.close",
        [PROTO_SESSION_EGRESS_ANSWER] = "session.egressAnswer",
};

const char *proto_method_name(proto_method m) {
        return (unsigned) m < _PROTO_METHOD_MAX ? method_names[m] : "?";
}

/* A message fit for one JSON string on one line: control characters and bytes that are not valid
 * UTF-8 become '?', in place. Messages quote request text ("unknown member \"%.64s\""), and the
 * precision cuts bytes, not characters: a multi-byte character cut in half made json_pack()
 * refuse the error response, so the client waited for an answer that never came. */
static void message_clean(char *s) {
        size_t n = strlen(s);
        for (size_t i = 0; i < n;) {
                size_t k = utf8_char_len(s + i, n - i);
                if (k == 0 || (k == 1 && ((unsigned char) s[i] < 0x20 || s[i] == 0x7f))) {
                        s[i++] = '?';
                        continue;
                }
                i += k;
        }
}

_printf_(2, 3) static int bad(cordon_error *err, const char *fmt, ...) {
        if (err) {
                va_list ap;
                va_start(ap, fmt);
                err->code = CORDON_USAGE;
                err->sys_errno = EBADMSG;
                (void) vsnprintf(err->message, sizeof(err->message), fmt, ap);
                va_end(ap);
                message_clean(err->message);
        }
        return -EBADMSG;
}

/* Every key of `obj` must be one of `allowed` (NULL-terminated): a misspelt key must not be
 * silently ignored (a "polcy" override would otherwise run with the session's policy). */
static int only_keys(const json_t *obj, const char *what, const char *const *allowed,
                     cordon_error *err) {
        const char *key;
        json_t *v;
        json_object_foreach((json_t *) obj, key, v) {
                bool known = false;
                for (size_t i = 0; allowed[i] && !known; i++)
                        known = strcmp(key, allowed[i]) == 0;
                if (!known)
                        return bad(err, "%s: unknown member \"%.64s\"", what, key);
        }
        return 0;
}

static int get_string(const json_t *obj, const char *key, bool required, size_t max,
                      const char **ret, cordon_error *err) {
        json_t *v = json_object_get(obj, key);
        *ret = NULL;
        if (!v) {
                return required ? bad(err, "params.%s is required", key) : 0;
        }
        if (!json_is_string(v))
                return bad(err, "params.%s must be a string", key);
        if (json_string_length(v) > max || strlen(json_string_value(v)) != json_string_length(v))
                return bad(err, "params.%s is longer than %zu bytes or contains NUL", key, max);
        *ret = json_string_value(v);
        return 0;
}

static int dup_abs_path(const char *key, const char *s, char **ret, cordon_error *err) {
        const char *why = s ? policy_check_path(s) : NULL;
        if (why)
                return bad(err, "params.%s %s", key, why);
        *ret = s ? strdup(s) : NULL;
        return s && !*ret ? -ENOMEM : 0;
}

static int get_session_id(const json_t *params, char out[PROTO_ID_MAX + 1], cordon_error *err) {
        const char *s;
        int r = get_string(params, "sessionId", true, PROTO_ID_MAX, &s, err);
        if (r < 0)
                return r;
        const char *why = policy_check_id(s);
        if (why)
                return bad(err, "params.sessionId %s", why);
        (void) snprintf(out, PROTO_ID_MAX + 1, "%s", s);
        return 0;
}

/* A policy document given inline: kept as text so the policy loader (with its own strict
 * validation and messages) parses it at use. */
static int get_policy(const json_t *params, const char *key, char **ret, cordon_error *err) {
        json_t *v = json_object_get(params, key);
        *ret = NULL;
        if (!v)
                return 0;
        if (!json_is_object(v))
                return bad(err, "params.%s must be an object (a policy document)", key);
        *ret = json_dumps(v, JSON_COMPACT);
        return *ret ? 0 : -ENOMEM;
}

static int parse_launch(const json_t *params, proto_launch *l, cordon_error *err) {
        static const char *const keys[] = { "policy", "backend", "workdir", "analytics", NULL };
        int r = only_keys(params, "params", keys, err);
        const char *backend = NULL, *workdir = NULL, *analytics = NULL;
        if (r >= 0)
                r = get_policy(params, "policy", &l->policy_json, err);
        if (r >= 0)
                r = get_string(params, "backend", false, 32, &backend, err);
        if (r >= 0)
                r = get_string(params, "workdir", false, 4096, &workdir, err);
        if (r >= 0)
                r = get_string(params, "analytics", false, 4096, &analytics, err);
        if (r >= 0 && analytics && analytics[0] != '/')
                r = bad(err, "params.analytics must be an absolute path");
        if (r >= 0)
                r = dup_abs_path("analytics", analytics, &l->analytics, err);
        if (r < 0)
                return r;
        l->backend = CORDON_BACKEND_NATIVE;
        if (backend && cordon_backend_from_string(backend, &l->backend) < 0)
                return bad(err, "params.backend: unknown backend \"%.32s\" (native, landlock, "
                                "microvm, none)", backend);
        return dup_abs_path("workdir", workdir, &l->workdir, err);
}

static int parse_argv(const json_t *params, proto_exec *e, cordon_error *err) {
        json_t *a = json_object_get(params, "argv");
        if (!json_is_array(a) || json_array_size(a) == 0)
                return bad(err, "params.argv must be a non-empty array of strings");
        if (json_array_size(a) > PROTO_ARGV_MAX)
                return bad(err, "params.argv has more than %d entries", PROTO_ARGV_MAX);
        e->argv = calloc(json_array_size(a) + 1, sizeof(char *));
        if (!e->argv)
                return -ENOMEM;
        size_t i;
        json_t *v;
        json_array_foreach(a, i, v) {
                if (!json_is_string(v) ||
                    strlen(json_string_value(v)) != json_string_length(v))
                        return bad(err, "params.argv[%zu] must be a string without NUL", i);
                if (i == 0 && json_string_length(v) == 0)
                        return bad(err, "params.argv[0] must not be empty");
                if (!(e->argv[i] = strdup(json_string_value(v))))
                        return -ENOMEM;
                e->n_argv++;
        }
        return 0;
}

static int parse_env(const json_t *params, proto_exec *e, cordon_error *err) {
        json_t *o = json_object_get(params, "env");
        e->env = calloc(1, sizeof(char *));
        if (!e->env)
                return -ENOMEM;
        if (!o)
                return 0;
        if (!json_is_object(o))
                return bad(err, "params.env must be an object of strings");
        if (json_object_size(o) > PROTO_ENV_MAX)
                return bad(err, "params.env has more than %d entries", PROTO_ENV_MAX);
        char **nv = realloc(e->env, (json_object_size(o) + 1) * sizeof(char *));
        if (!nv)
                return -ENOMEM;
        e->env = nv;
        e->env[0] = NULL;
        const char *name;
        json_t *v;
        json_object_foreach(o, name, v) {
                const char *why = policy_check_env_name(name);
                if (why)
                        return bad(err, "params.env: variable name \"%.64s\" %s", name, why);
                if (!json_is_string(v) || strlen(json_string_value(v)) != json_string_length(v))
                        return bad(err, "params.env.%.64s must be a string without NUL", name);
                if ((why = policy_check_env_value(json_string_value(v))))
                        return bad(err, "params.env.%.64s %s", name, why);
                if (asprintf(&e->env[e->n_env], "%s=%s", name, json_string_value(v)) < 0)
                        return -ENOMEM;
                e->env[++e->n_env] = NULL;
        }
        return 0;
}

static int parse_exec(const json_t *params, proto_exec *e, cordon_error *err) {
        static const char *const keys[] = { "sessionId", "argv", "cwd", "env", "stdin",
                                            "policyOverride", "escalationApproved",
                                            "commandApproved", NULL };
        int r = only_keys(params, "params", keys, err);
        if (r >= 0)
                r = get_session_id(params, e->session_id, err);
        if (r >= 0)
                r = parse_argv(params, e, err);
        const char *cwd = NULL, *in = NULL;
        if (r >= 0)
                r = get_string(params, "cwd", false, 4096, &cwd, err);
        if (r >= 0)
                r = dup_abs_path("cwd", cwd, &e->cwd, err);
        if (r >= 0)
                r = parse_env(params, e, err);
        if (r >= 0)
                r = get_string(params, "stdin", false, PROTO_STDIN_MAX, &in, err);
        if (r >= 0 && in) {
                e->stdin_len = strlen(in);
                if (!(e->stdin_data = strdup(in)))
                        r = -ENOMEM;
        }
        if (r >= 0)
                r = get_policy(params, "policyOverride", &e->policy_override, err);
        json_t *esc = json_object_get(params, "escalationApproved");
        if (r >= 0 && esc && !json_is_boolean(esc))
                r = bad(err, "params.escalationApproved must be true or false");
        e->escalation_approved = esc && json_is_true(esc);
        json_t *approved = json_object_get(params, "commandApproved");
        if (r >= 0 && approved && !json_is_boolean(approved))
                r = bad(err, "params.commandApproved must be true or false");
        e->command_approved = approved && json_is_true(approved);
        return r;
}

/* ---- fs.* ----------------------------------------------------------------------------------- */

/* File content or edit text, copied with its length. (The parser refuses "\u0000", so text holds
 * no NUL; content with NUL bytes comes as base64.) */
static int get_bytes(const json_t *obj, const char *key, size_t max, char **ret, size_t *ret_len,
                     cordon_error *err) {
        json_t *v = json_object_get(obj, key);
        if (!json_is_string(v))
                return bad(err, "params.%s is required and must be a string", key);
        size_t n = json_string_length(v);
        if (n > max)
                return bad(err, "params.%s is longer than %zu bytes", key, max);
        if (!(*ret = malloc(n + 1)))
                return -ENOMEM;
        memcpy(*ret, json_string_value(v), n);
        (*ret)[n] = '\0';
        *ret_len = n;
        return 0;
}

static int get_u64(const json_t *obj, const char *key, uint64_t max, uint64_t *ret,
                   cordon_error *err) {
        json_t *v = json_object_get(obj, key);
        if (!v)
                return 0;
        if (!json_is_integer(v) || json_integer_value(v) < 0 ||
            (uint64_t) json_integer_value(v) > max)
                return bad(err, "params.%s must be an integer from 0 to %llu", key,
                           (unsigned long long) max);
        *ret = (uint64_t) json_integer_value(v);
        return 0;
}

static int get_encoding(const json_t *params, proto_encoding *ret, cordon_error *err) {
        const char *s;
        int r = get_string(params, "encoding", false, 16, &s, err);
        if (r < 0 || !s)
                return r;
        if (strcmp(s, "utf-8") == 0)
                *ret = PROTO_ENCODING_UTF8;
        else if (strcmp(s, "base64") == 0)
                *ret = PROTO_ENCODING_BASE64;
        else
                return bad(err, "params.encoding must be \"utf-8\" or \"base64\"");
        return 0;
}

/* fs.write's content: text as it is, or base64 decoded (strictly: one spelling per content). */
static int get_content(const json_t *params, proto_fs *f, cordon_error *err) {
        if (f->encoding != PROTO_ENCODING_BASE64)
                return get_bytes(params, "content", PROTO_FS_CONTENT_MAX, &f->content,
                                 &f->content_len, err);
        _cleanup_free_ char *text = NULL;
        size_t n = 0;
        int r = get_bytes(params, "content", base64_encoded_len(PROTO_FS_CONTENT_MAX), &text, &n,
                          err);
        if (r < 0)
                return r;
        r = base64_decode(text, n, &f->content, &f->content_len);
        if (r == -EINVAL)
                return bad(err, "params.content is not base64 (RFC 4648: standard alphabet, "
                                "padded, no whitespace)");
        if (r >= 0 && f->content_len > PROTO_FS_CONTENT_MAX)
                return bad(err, "params.content is longer than %d bytes", PROTO_FS_CONTENT_MAX);
        return r;
}

static const char *const *fs_keys(proto_method m) {
        static const char *const read_keys[] = { "sessionId", "path", "encoding", "offset",
                                                  "length", NULL };
        static const char *const write_keys[] = { "sessionId", "path", "content", "encoding",
                                                   NULL };
        static const char *const edit_keys[] = { "sessionId", "path", "oldString", "newString",
                                                  NULL };
        static const char *const path_keys[] = { "sessionId", "path", NULL };
        return m == PROTO_FS_READ ? read_keys : m == PROTO_FS_WRITE ? write_keys
             : m == PROTO_FS_EDIT ? edit_keys : path_keys;
}

static int parse_fs(proto_method m, const json_t *params, proto_fs *f, cordon_error *err) {
        const char *path = NULL;
        int r = only_keys(params, "params", fs_keys(m), err);
        if (r >= 0)
                r = get_session_id(params, f->session_id, err);
        if (r >= 0)
                r = get_string(params, "path", true, 4096, &path, err);
        if (r >= 0)
                r = dup_abs_path("path", path, &f->path, err);
        if (r >= 0 && (m == PROTO_FS_READ || m == PROTO_FS_WRITE))
                r = get_encoding(params, &f->encoding, err);
        if (r < 0)
                return r;
        if (m == PROTO_FS_READ) {
                r = get_u64(params, "offset", INT64_MAX, &f->offset, err);
                return r < 0 ? r : get_u64(params, "length", PROTO_FS_CONTENT_MAX, &f->length, err);
        }
        if (m == PROTO_FS_WRITE)
                return get_content(params, f, err);
        if (m != PROTO_FS_EDIT)
                return 0;
        r = get_bytes(params, "oldString", PROTO_FS_CONTENT_MAX, &f->old_string, &f->old_len, err);
        if (r >= 0 && f->old_len == 0)
                r = bad(err, "params.oldString must not be empty");
        return r < 0 ? r : get_bytes(params, "newString", PROTO_FS_CONTENT_MAX, &f->new_string,
                                     &f->new_len, err);
}

static int get_dim(const json_t *params, const char *key, uint16_t *ret, cordon_error *err) {
        json_t *v = json_object_get(params, key);
        if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > 1000)
                return bad(err, "params.%s must be an integer from 1 to 1000", key);
        *ret = (uint16_t) json_integer_value(v);
        return 0;
}

static int get_terminal_id(const json_t *params, uint64_t *ret, cordon_error *err) {
        json_t *v = json_object_get(params, "terminalId");
        if (!json_is_integer(v) || json_integer_value(v) < 1)
                return bad(err, "params.terminalId must be the id of a session.terminal request");
        *ret = (uint64_t) json_integer_value(v);
        return 0;
}

static int parse_terminal_open(const json_t *params, proto_terminal *t, cordon_error *err) {
        static const char *const keys[] = { "sessionId", "cols", "rows", "backend", "argv", NULL };
        int r = only_keys(params, "params", keys, err);
        if (r >= 0)
                r = get_session_id(params, t->session_id, err);
        if (r >= 0)
                r = get_dim(params, "cols", &t->cols, err);
        if (r >= 0)
                r = get_dim(params, "rows", &t->rows, err);
        const char *backend = NULL;
        if (r >= 0)
                r = get_string(params, "backend", false, 16, &backend, err);
        if (r < 0)
                return r;
        /* docs/design/daemon.md: "none" unless the client asks for "native" (inside the
         * session's sandbox, a microvm session's VM included) or "microvm" (only in a VM). */
        if (backend && strcmp(backend, "none") != 0 && strcmp(backend, "native") != 0 &&
            strcmp(backend, "microvm") != 0)
                return bad(err, "params.backend must be \"none\", \"native\" or \"microvm\"");
        t->microvm = backend && strcmp(backend, "microvm") == 0;
        t->native = t->microvm || (backend && strcmp(backend, "native") == 0);
        if (!json_object_get(params, "argv"))
                return 0;
        proto_exec tmp = { 0 };
        r = parse_argv(params, &tmp, err);
        t->argv = tmp.argv;
        t->n_argv = tmp.n_argv;
        return r;
}

static int parse_terminal(proto_method m, const json_t *params, proto_terminal *t,
                          cordon_error *err) {
        static const char *const input_keys[] = { "terminalId", "data", NULL };
        static const char *const resize_keys[] = { "terminalId", "cols", "rows", NULL };
        static const char *const close_keys[] = { "terminalId", NULL };
        const char *data = NULL;
        int r;
        if (m == PROTO_SESSION_TERMINAL)
                return parse_terminal_open(params, t, err);
        if (m == PROTO_TERMINAL_INPUT) {
                r = only_keys(params, "params", input_keys, err);
                if (r >= 0)
                        r = get_terminal_id(params, &t->terminal_id, err);
                if (r >= 0)
                        r = get_string(params, "data", true, PROTO_TERM_INPUT_MAX, &data, err);
                if (r < 0)
                        return r;
                t->data_len = strlen(data);
                return (t->data = strdup(data)) ? 0 : -ENOMEM;
        }
        if (m == PROTO_TERMINAL_RESIZE) {
                r = only_keys(params, "params", resize_keys, err);
                if (r >= 0)
                        r = get_terminal_id(params, &t->terminal_id, err);
                if (r >= 0)
                        r = get_dim(params, "cols", &t->cols, err);
                return r < 0 ? r : get_dim(params, "rows", &t->rows, err);
        }
        r = only_keys(params, "params", close_keys, err);
        return r < 0 ? r : get_terminal_id(params, &t->terminal_id, err);
}

/* session.egressAnswer {sessionId, id, answer}: the egress.ask event's id (docs/protocol.md). */
static int parse_egress_answer(const json_t *params, proto_request *out, cordon_error *err) {
        static const char *const keys[] = { "sessionId", "id", "answer", NULL };
        int r = only_keys(params, "params", keys, err);
        if (r >= 0)
                r = get_session_id(params, out->session_id, err);
        if (r < 0)
                return r;
        json_t *id = json_object_get(params, "id");
        if (!json_is_integer(id) || json_integer_value(id) < 0)
                return bad(err, "params.id must be the id of an egress.ask event");
        out->ask_id = (uint64_t) json_integer_value(id);
        const char *a = json_string_value(json_object_get(params, "answer"));
        if (a && strcmp(a, "allow-once") == 0)
                out->answer = CORDON_EGRESS_ALLOW_ONCE;
        else if (a && strcmp(a, "allow-session") == 0)
                out->answer = CORDON_EGRESS_ALLOW_SESSION;
        else if (a && strcmp(a, "deny") == 0)
                out->answer = CORDON_EGRESS_DENY;
        else
                return bad(err, "params.answer must be \"allow-once\", \"allow-session\" or "
                                "\"deny\"");
        return 0;
}

static int parse_params(proto_method m, const json_t *params, proto_request *out,
                        cordon_error *err) {
        static const char *const none[] = { NULL };
        static const char *const only_id[] = { "sessionId", NULL };
        switch (m) {
        case PROTO_PROBE:
        case PROTO_SESSION_LIST:
                return only_keys(params, "params", none, err);
        case PROTO_SESSION_DESTROY:
        case PROTO_SESSION_SUSPEND:
        case PROTO_SESSION_RESUME: {
                int r = only_keys(params, "params", only_id, err);
                return r < 0 ? r : get_session_id(params, out->session_id, err);
        }
        case PROTO_SESSION_LAUNCH:
                return parse_launch(params, &out->launch, err);
        case PROTO_SESSION_EGRESS_ANSWER:
                return parse_egress_answer(params, out, err);
        case PROTO_SESSION_EXEC:
                return parse_exec(params, &out->exec, err);
        case PROTO_FS_READ:
        case PROTO_FS_WRITE:
        case PROTO_FS_EDIT:
        case PROTO_FS_LIST:
        case PROTO_FS_STAT:
                return parse_fs(m, params, &out->fs, err);
        case PROTO_SESSION_TERMINAL:
        case PROTO_TERMINAL_INPUT:
        case PROTO_TERMINAL_RESIZE:
        case PROTO_TERMINAL_CLOSE:
                return parse_terminal(m, params, &out->term, err);
        case _PROTO_METHOD_MAX:
        default:
                return bad(err, "unknown method");
        }
}

/* The envelope: v, id, method, params. */
static int parse_envelope(const json_t *root, proto_request *out, uint64_t *ret_id,
                          cordon_error *err) {
        static const char *const keys[] = { "v", "id", "method", "params", NULL };
        if (!json_is_object(root))
                return bad(err, "a request is a JSON object");
        json_t *id = json_object_get(root, "id");
        if (!json_is_integer(id) || json_integer_value(id) < 1)
                return bad(err, "\"id\" must be a positive integer");
        out->id = *ret_id = (uint64_t) json_integer_value(id);
        int r = only_keys(root, "request", keys, err);
        if (r < 0)
                return r;
        json_t *v = json_object_get(root, "v");
        if (!json_is_integer(v) || json_integer_value(v) != PROTO_VERSION)
                return bad(err, "\"v\" must be %d (this daemon speaks protocol version %d)",
                           PROTO_VERSION, PROTO_VERSION);
        json_t *method = json_object_get(root, "method");
        if (!json_is_string(method))
                return bad(err, "\"method\" must be a string");
        for (int m = 0; m < _PROTO_METHOD_MAX; m++)
                if (strcmp(json_string_value(method), method_names[m]) == 0) {
                        out->method = (proto_method) m;
                        json_t *params = json_object_get(root, "params");
                        json_t *empty = NULL;
                        if (!params)
                                params = empty = json_object();
                        if (!json_is_object(params)) {
                                json_decref(empty);
                                return bad(err, "\"params\" must be an object");
                        }
                        r = parse_params(out->method, params, out, err);
                        json_decref(empty);
                        return r;
                }
        return bad(err, "unknown method \"%.64s\"", json_string_value(method));
}

/* What jansson refused, in the protocol's words (docs/protocol.md, "Errors"): its own texts
 * ("\\u0000 is not allowed", "end of file expected near ...") are not part of the protocol and
 * change with its version. */
static int syntax_error(const json_error_t *je, cordon_error *err) {
        static const struct {
                enum json_error_code code;
                const char *what;
        } words[] = {
                { json_error_invalid_utf8, "not valid UTF-8" },
                { json_error_premature_end_of_input, "the line ends inside the JSON text" },
                { json_error_end_of_input_expected, "more text after the request object" },
                { json_error_null_character, "a string holds \\u0000 (NUL), which no member of "
                                             "a request may hold" },
                { json_error_null_byte_in_key, "a member name holds \\u0000 (NUL)" },
                { json_error_duplicate_key, "a duplicate member name (twice in one object)" },
                { json_error_numeric_overflow, "a number out of range" },
                { json_error_stack_overflow, "nested too deep" },
        };
        enum json_error_code code = json_error_code(je);
        if (code == json_error_out_of_memory) {
                (void) bad(err, "out of memory");
                if (err)
                        err->code = CORDON_LAUNCH_FAILED;
                return -ENOMEM;
        }
        const char *what = "not valid JSON";
        for (size_t i = 0; i < ELEMENTSOF(words); i++)
                if (words[i].code == code)
                        what = words[i].what;
        return bad(err, "column %d: %s", je->column, what);
}

/* The column (1-based, in characters, as json_pos counts) of a one-line text as a byte offset. */
static size_t column_offset(const char *line, size_t len, unsigned column) {
        size_t o = 0;
        for (unsigned c = 1; c < column && o < len; c++) {
                size_t k = utf8_char_len(line + o, len - o);
                o += k ? k : 1;
        }
        return o;
}

/* The id of a request that is JSON but for a NUL in a string or a member name given twice, so
 * that its error answers that request (docs/protocol.md). 0 when there is none, or when "id"
 * itself is given twice with different values (jansson keeps the last, json_pos finds the
 * first): the answer must not name a request the client did not mean. */
static uint64_t salvage_id(const char *line, size_t len, enum json_error_code code) {
        if (code != json_error_null_character && code != json_error_duplicate_key)
                return 0;
        json_t *root = json_loadb(line, len, JSON_ALLOW_NUL, NULL);
        json_t *id = json_object_get(root, "id");
        uint64_t ret = 0;
        json_pos pos;
        if (json_is_integer(id) && json_integer_value(id) >= 1 &&
            json_pos_find(line, len, &(json_pos_step){ .key = "id" }, 1, false, &pos) == 0 &&
            pos.line == 1) {
                size_t o = column_offset(line, len, pos.column);
                char num[24] = "";
                size_t n = 0;
                while (o + n < len && n < sizeof(num) - 1 && line[o + n] >= '0' && line[o + n] <= '9')
                        n++;
                memcpy(num, line + o, n);
                num[n] = '\0';
                if (n > 0 && strtoull(num, NULL, 10) == (uint64_t) json_integer_value(id))
                        ret = (uint64_t) json_integer_value(id);
        }
        json_decref(root);
        return ret;
}

int proto_parse_request(const char *line, size_t len, proto_request *out, uint64_t *ret_id,
                        cordon_error *err) {
        memset(out, 0, sizeof(*out));
        *ret_id = 0;
        if (len > PROTO_LINE_MAX)
                return bad(err, "the request is longer than %d bytes", PROTO_LINE_MAX);
        json_pos pos;
        if (json_pos_check_depth(line, len, PROTO_DEPTH_MAX, &pos) < 0)
                return bad(err, "line 1, column %u: nested deeper than %d levels", pos.column,
                           PROTO_DEPTH_MAX);
        json_error_t je;
        json_t *root = json_loadb(line, len, JSON_REJECT_DUPLICATES, &je);
        if (!root) {
                *ret_id = salvage_id(line, len, json_error_code(&je));
                return syntax_error(&je, err);
        }
        int r = parse_envelope(root, out, ret_id, err);
        json_decref(root);
        if (r == -ENOMEM) {
                r = bad(err, "out of memory");
                if (err)
                        err->code = CORDON_LAUNCH_FAILED;
        }
        if (r < 0)
                proto_request_done(out);
        return r;
}

static void strv_free_n(char **v, size_t n) {
        for (size_t i = 0; v && i < n; i++)
                free(v[i]);
        free(v);
}

void proto_request_done(proto_request *r) {
        free(r->launch.policy_json);
        free(r->launch.workdir);
        free(r->launch.analytics);
        strv_free_n(r->exec.argv, r->exec.n_argv);
        strv_free_n(r->exec.env, r->exec.n_env);
        free(r->exec.cwd);
        free(r->exec.stdin_data);
        free(r->exec.policy_override);
        free(r->fs.path);
        free(r->fs.content);
        free(r->fs.old_string);
        free(r->fs.new_string);
        strv_free_n(r->term.argv, r->term.n_argv);
        free(r->term.data);
        memset(r, 0, sizeof(*r));
}

/* ---- building ------------------------------------------------------------------------------- */

char *proto_result_line(uint64_t id, const char *result_json) {
        char *s = NULL;
        if (asprintf(&s, "{\"v\":%d,\"id\":%llu,\"result\":%s}\n", PROTO_VERSION,
                     (unsigned long long) id, result_json ? result_json : "{}") < 0)
                return NULL;
        return s;
}

char *proto_error_line(uint64_t id, cordon_code code, const char *message) {
        _cleanup_free_ char *msg = strdup(message ? message : "");
        if (!msg)
                return NULL;
        message_clean(msg); /* messages from other modules quote request text too */
        json_t *o = json_pack("{s:i,s:I,s:{s:s,s:s}}", "v", PROTO_VERSION, "id", (json_int_t) id,
                              "error", "code", cordon_code_name(code), "message", msg);
        if (!o)
                return NULL;
        char *body = json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII);
        json_decref(o);
        if (!body)
                return NULL;
        char *s = NULL;
        int n = asprintf(&s, "%s\n", body);
        free(body);
        return n < 0 ? NULL : s;
}

char *proto_event_line(uint64_t id, const char *event_json, size_t len) {
        /* Event lines from src/linux/events.c end in '\n': strip it. */
        while (len > 0 && (event_json[len - 1] == '\n' || event_json[len - 1] == '\r'))
                len--;
        /* A NUL would cut the line short mid-object: the client would get broken JSON. JSON
         * text never holds one raw, so such a line is not an event; drop it. */
        if (memchr(event_json, '\0', len))
                return NULL;
        char *s = NULL;
        if (asprintf(&s, "{\"v\":%d,\"id\":%llu,\"event\":%.*s}\n", PROTO_VERSION,
                     (unsigned long long) id, (int) len, event_json) < 0)
                return NULL;
        return s;
}
