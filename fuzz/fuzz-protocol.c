/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target for cordond's request parser and line builders (src/daemon/protocol.c,
 * docs/protocol.md). The input is one request line as a client could send it. Oracles beyond
 * "no crash, no sanitizer report":
 *   - an accepted request holds only what the protocol allows: a positive id, a known method,
 *     a valid session id, a non-empty argv without NUL, "NAME=value" env entries with valid names,
 *     absolute paths, stdin within PROTO_STDIN_MAX, a policy that is a JSON object;
 *   - it is canonical: printed back as a request (from the parsed struct alone) it parses to the
 *     same struct, so the parser drops or invents nothing;
 *   - a refused request gets code USAGE and a one-line message of valid UTF-8, and the id it
 *     reports is the request's own id (or 0 when it had none that could be read);
 *   - every builder gives one line of JSON that parses back to what was put in (the error line
 *     for exactly the message the parser produced).
 * Built two ways (fuzz/meson.build): with libFuzzer (-DCORDON_LIBFUZZER), and as a plain program
 * replaying the seed corpus in the unit suite, where files named "valid-*" must be accepted and
 * "invalid-*" refused. Both first feed a request one byte over PROTO_LINE_MAX
 * (LLVMFuzzerInitialize). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "util/base64.h"
#include "daemon/protocol.h"
#include "policy/policy.h"
#include "util/utf8.h"

#include "replay.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

__attribute__((noreturn)) static void broken(const char *what) {
        fprintf(stderr, "fuzz-protocol: broken promise: %s\n", what);
        abort();
}

#define CHECK(cond)                                                                               \
        do {                                                                                      \
                if (!(cond))                                                                      \
                        broken(#cond);                                                            \
        } while (0)

/* One line of valid UTF-8 without control characters. */
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

static bool streq(const char *a, const char *b) {
        return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* ---- what an accepted request may hold ---------------------------------------------------- */

static void check_exec(const proto_exec *e) {
        CHECK(policy_check_id(e->session_id) == NULL);
        CHECK(e->n_argv >= 1 && e->n_argv <= PROTO_ARGV_MAX && e->argv[e->n_argv] == NULL);
        CHECK(e->argv[0][0] != '\0');
        CHECK(e->n_env <= PROTO_ENV_MAX && e->env && e->env[e->n_env] == NULL);
        for (size_t i = 0; i < e->n_env; i++) {
                const char *eq = strchr(e->env[i], '=');
                CHECK(eq != NULL);
                char *name = strndup(e->env[i], (size_t) (eq - e->env[i]));
                CHECK(name && policy_check_env_name(name) == NULL);
                free(name);
        }
        CHECK(!e->cwd || policy_check_path(e->cwd) == NULL);
        CHECK(!e->stdin_data || (e->stdin_len <= PROTO_STDIN_MAX &&
                                 strlen(e->stdin_data) == e->stdin_len));
        CHECK(e->stdin_data || e->stdin_len == 0);
}

static void check_policy_text(const char *text) {
        if (!text)
                return;
        json_t *o = json_loads(text, 0, NULL);
        CHECK(json_is_object(o));
        json_decref(o);
}

/* The methods whose params this target knows how to check and print back. Methods added to the
 * protocol later are still parsed and their refusals checked; their params join here when this
 * target learns them (an if-chain, not a switch: a new method must not break the build). */
static bool is_fs(proto_method m) {
        return m == PROTO_FS_READ || m == PROTO_FS_WRITE || m == PROTO_FS_EDIT ||
               m == PROTO_FS_LIST || m == PROTO_FS_STAT;
}

static bool is_terminal(proto_method m) {
        return m == PROTO_SESSION_TERMINAL || m == PROTO_TERMINAL_INPUT ||
               m == PROTO_TERMINAL_RESIZE || m == PROTO_TERMINAL_CLOSE;
}

static bool known_params(proto_method m) {
        return m == PROTO_PROBE || m == PROTO_SESSION_LIST || m == PROTO_SESSION_LAUNCH ||
               m == PROTO_SESSION_EXEC || m == PROTO_SESSION_DESTROY ||
               m == PROTO_SESSION_SUSPEND || m == PROTO_SESSION_RESUME || is_fs(m) ||
               is_terminal(m);
}

/* session.terminal: a session, a size, an optional argv; terminal.*: the id of the opening
 * request, input text only for terminal.input, a size only for terminal.resize. */
static void check_terminal(proto_method m, const proto_terminal *t) {
        bool open = m == PROTO_SESSION_TERMINAL, sized = open || m == PROTO_TERMINAL_RESIZE;
        CHECK(!open || policy_check_id(t->session_id) == NULL);
        CHECK(open ? t->terminal_id == 0 : t->terminal_id >= 1);
        CHECK(sized ? (t->cols >= 1 && t->cols <= 1000 && t->rows >= 1 && t->rows <= 1000)
                    : (t->cols == 0 && t->rows == 0));
        CHECK(open || (!t->argv && !t->native));
        CHECK(!t->argv || (t->n_argv >= 1 && t->argv[t->n_argv] == NULL && t->argv[0][0]));
        CHECK((m == PROTO_TERMINAL_INPUT) == (t->data != NULL));
        CHECK(!t->data || (t->data_len <= PROTO_TERM_INPUT_MAX && strlen(t->data) == t->data_len));
}

/* fs.*: a valid session id and absolute path; content only for fs.write, the edit strings only
 * for fs.edit (oldString non-empty), offset/length only for fs.read; every size in bounds. */
static void check_fs(proto_method m, const proto_fs *f) {
        CHECK(policy_check_id(f->session_id) == NULL);
        CHECK(f->path && policy_check_path(f->path) == NULL);
        CHECK((m == PROTO_FS_WRITE) == (f->content != NULL));
        CHECK(f->content_len <= PROTO_FS_CONTENT_MAX);
        CHECK((m == PROTO_FS_EDIT) == (f->old_string != NULL));
        CHECK((m == PROTO_FS_EDIT) == (f->new_string != NULL));
        CHECK(!f->old_string || (f->old_len >= 1 && f->old_len <= PROTO_FS_CONTENT_MAX));
        CHECK(f->new_len <= PROTO_FS_CONTENT_MAX);
        CHECK(m == PROTO_FS_READ || (f->offset == 0 && f->length == 0));
        CHECK(f->length <= PROTO_FS_CONTENT_MAX && f->offset <= (uint64_t) INT64_MAX);
        CHECK(f->encoding == PROTO_ENCODING_DEFAULT || m == PROTO_FS_READ ||
              m == PROTO_FS_WRITE);
}

static void check_accepted(const proto_request *rq) {
        CHECK(rq->id >= 1 && rq->id <= (uint64_t) INT64_MAX);
        CHECK((unsigned) rq->method < _PROTO_METHOD_MAX);
        CHECK(strcmp(proto_method_name(rq->method), "?") != 0);
        if (rq->method == PROTO_SESSION_LAUNCH) {
                CHECK(!rq->launch.workdir || policy_check_path(rq->launch.workdir) == NULL);
                check_policy_text(rq->launch.policy_json);
        } else if (rq->method == PROTO_SESSION_EXEC) {
                check_exec(&rq->exec);
                check_policy_text(rq->exec.policy_override);
        } else if (rq->method == PROTO_SESSION_DESTROY || rq->method == PROTO_SESSION_SUSPEND ||
                   rq->method == PROTO_SESSION_RESUME) {
                CHECK(policy_check_id(rq->session_id) == NULL);
        } else if (is_fs(rq->method)) {
                check_fs(rq->method, &rq->fs);
        } else if (is_terminal(rq->method)) {
                check_terminal(rq->method, &rq->term);
        }
}

/* ---- printing a parsed request back ------------------------------------------------------- */

static json_t *policy_value(const char *text) {
        return text ? json_loads(text, 0, NULL) : NULL;
}

static void set_new(json_t *o, const char *key, json_t *v) {
        CHECK(v && json_object_set_new(o, key, v) == 0);
}

static json_t *exec_params(const proto_exec *e) {
        json_t *p = json_object(), *argv = json_array(), *env = json_object();
        CHECK(p && argv && env);
        set_new(p, "sessionId", json_string(e->session_id));
        for (size_t i = 0; i < e->n_argv; i++)
                CHECK(json_array_append_new(argv, json_string(e->argv[i])) == 0);
        set_new(p, "argv", argv);
        for (size_t i = 0; i < e->n_env; i++) {
                const char *eq = strchr(e->env[i], '=');
                char *name = strndup(e->env[i], (size_t) (eq - e->env[i]));
                CHECK(name);
                set_new(env, name, json_string(eq + 1));
                free(name);
        }
        set_new(p, "env", env);
        if (e->cwd)
                set_new(p, "cwd", json_string(e->cwd));
        if (e->stdin_data)
                set_new(p, "stdin", json_string(e->stdin_data));
        if (e->policy_override)
                set_new(p, "policyOverride", policy_value(e->policy_override));
        set_new(p, "escalationApproved", json_boolean(e->escalation_approved));
        return p;
}

static json_t *fs_params(proto_method m, const proto_fs *f) {
        json_t *p = json_pack("{s:s,s:s}", "sessionId", f->session_id, "path", f->path);
        CHECK(p);
        if (f->encoding != PROTO_ENCODING_DEFAULT)
                set_new(p, "encoding", json_string(f->encoding == PROTO_ENCODING_BASE64 ? "base64"
                                                                                       : "utf-8"));
        if (m == PROTO_FS_READ && f->offset)
                set_new(p, "offset", json_integer((json_int_t) f->offset));
        if (m == PROTO_FS_READ && f->length)
                set_new(p, "length", json_integer((json_int_t) f->length));
        if (m == PROTO_FS_WRITE && f->encoding == PROTO_ENCODING_BASE64) {
                char *b64 = base64_encode(f->content, f->content_len);
                CHECK(b64);
                set_new(p, "content", json_string(b64));
                free(b64);
        } else if (m == PROTO_FS_WRITE) {
                set_new(p, "content", json_stringn(f->content, f->content_len));
        }
        if (m == PROTO_FS_EDIT) {
                set_new(p, "oldString", json_stringn(f->old_string, f->old_len));
                set_new(p, "newString", json_stringn(f->new_string, f->new_len));
        }
        return p;
}

static json_t *terminal_params(proto_method m, const proto_terminal *t) {
        json_t *p = json_object();
        CHECK(p);
        if (m == PROTO_SESSION_TERMINAL) {
                set_new(p, "sessionId", json_string(t->session_id));
                if (t->native)
                        set_new(p, "backend", json_string("native"));
                if (t->argv) {
                        json_t *argv = json_array();
                        CHECK(argv);
                        for (size_t i = 0; i < t->n_argv; i++)
                                CHECK(json_array_append_new(argv, json_string(t->argv[i])) == 0);
                        set_new(p, "argv", argv);
                }
        } else {
                set_new(p, "terminalId", json_integer((json_int_t) t->terminal_id));
        }
        if (m == PROTO_SESSION_TERMINAL || m == PROTO_TERMINAL_RESIZE) {
                set_new(p, "cols", json_integer(t->cols));
                set_new(p, "rows", json_integer(t->rows));
        }
        if (m == PROTO_TERMINAL_INPUT)
                set_new(p, "data", json_stringn(t->data, t->data_len));
        return p;
}

static json_t *params_of(const proto_request *rq) {
        if (rq->method == PROTO_SESSION_LAUNCH) {
                json_t *p = json_object();
                CHECK(p);
                set_new(p, "backend", json_string(cordon_backend_to_string(rq->launch.backend)));
                if (rq->launch.workdir)
                        set_new(p, "workdir", json_string(rq->launch.workdir));
                if (rq->launch.policy_json)
                        set_new(p, "policy", policy_value(rq->launch.policy_json));
                return p;
        }
        if (rq->method == PROTO_SESSION_EXEC)
                return exec_params(&rq->exec);
        if (rq->method == PROTO_SESSION_DESTROY || rq->method == PROTO_SESSION_SUSPEND ||
            rq->method == PROTO_SESSION_RESUME)
                return json_pack("{s:s}", "sessionId", rq->session_id);
        if (is_fs(rq->method))
                return fs_params(rq->method, &rq->fs);
        if (is_terminal(rq->method))
                return terminal_params(rq->method, &rq->term);
        return json_object(); /* probe, session.list */
}

static char *print_request(const proto_request *rq) {
        json_t *o = json_pack("{s:i,s:I,s:s,s:o}", "v", PROTO_VERSION, "id", (json_int_t) rq->id,
                              "method", proto_method_name(rq->method), "params", params_of(rq));
        CHECK(o);
        char *s = json_dumps(o, JSON_COMPACT);
        json_decref(o);
        CHECK(s);
        return s;
}

static bool same_strv(char **a, size_t na, char **b, size_t nb) {
        if (na != nb)
                return false;
        for (size_t i = 0; i < na; i++)
                if (strcmp(a[i], b[i]) != 0)
                        return false;
        return true;
}

/* Policies compare as JSON values: key order and spacing are not the parser's business. */
static bool same_policy(const char *a, const char *b) {
        json_t *x = policy_value(a), *y = policy_value(b);
        bool eq = (!a && !b) || (x && y && json_equal(x, y));
        json_decref(x);
        json_decref(y);
        return eq;
}

static bool same_bytes(const char *a, size_t na, const char *b, size_t nb) {
        return (!a && !b) || (a && b && na == nb && memcmp(a, b, na) == 0);
}

static bool same_fs(const proto_fs *a, const proto_fs *b) {
        return strcmp(a->session_id, b->session_id) == 0 && streq(a->path, b->path) &&
               a->encoding == b->encoding &&
               same_bytes(a->content, a->content_len, b->content, b->content_len) &&
               same_bytes(a->old_string, a->old_len, b->old_string, b->old_len) &&
               same_bytes(a->new_string, a->new_len, b->new_string, b->new_len) &&
               a->offset == b->offset && a->length == b->length;
}

static bool same_terminal(const proto_terminal *a, const proto_terminal *b) {
        return strcmp(a->session_id, b->session_id) == 0 && a->native == b->native &&
               a->cols == b->cols && a->rows == b->rows &&
               same_strv(a->argv, a->n_argv, b->argv, b->n_argv) && (!a->argv == !b->argv) &&
               a->terminal_id == b->terminal_id &&
               same_bytes(a->data, a->data_len, b->data, b->data_len);
}

static bool same_request(const proto_request *a, const proto_request *b) {
        const proto_exec *x = &a->exec, *y = &b->exec;
        return a->id == b->id && a->method == b->method &&
               strcmp(a->session_id, b->session_id) == 0 &&
               a->launch.backend == b->launch.backend &&
               streq(a->launch.workdir, b->launch.workdir) &&
               same_policy(a->launch.policy_json, b->launch.policy_json) &&
               strcmp(x->session_id, y->session_id) == 0 &&
               same_strv(x->argv, x->n_argv, y->argv, y->n_argv) &&
               same_strv(x->env, x->n_env, y->env, y->n_env) && streq(x->cwd, y->cwd) &&
               streq(x->stdin_data, y->stdin_data) && x->stdin_len == y->stdin_len &&
               same_policy(x->policy_override, y->policy_override) &&
               x->escalation_approved == y->escalation_approved && same_fs(&a->fs, &b->fs) &&
               same_terminal(&a->term, &b->term);
}

static void check_round_trip(const proto_request *rq) {
        char *line = print_request(rq);
        proto_request again;
        uint64_t id;
        cordon_error err = { 0 };
        if (proto_parse_request(line, strlen(line), &again, &id, &err) < 0) {
                fprintf(stderr, "printed request refused: %s\n%s\n", err.message, line);
                broken("a printed request parses");
        }
        if (!same_request(rq, &again)) {
                fprintf(stderr, "printed request differs:\n%s\n", line);
                broken("a printed request parses to the same struct");
        }
        proto_request_done(&again);
        free(line);
}

/* ---- builders ----------------------------------------------------------------------------- */

/* Parses a built line: one '\n', at the end, and a JSON object before it. */
static json_t *built(char *line) {
        CHECK(line);
        size_t n = strlen(line);
        CHECK(n >= 2 && line[n - 1] == '\n' && memchr(line, '\n', n - 1) == NULL);
        json_t *o = json_loadb(line, n - 1, 0, NULL);
        CHECK(json_is_object(o));
        CHECK(json_integer_value(json_object_get(o, "v")) == PROTO_VERSION);
        free(line);
        return o;
}

static void check_error_line(uint64_t id, const cordon_error *err) {
        json_t *o = built(proto_error_line(id, err->code, err->message));
        json_t *e = json_object_get(o, "error");
        CHECK((uint64_t) json_integer_value(json_object_get(o, "id")) == id);
        CHECK(streq(json_string_value(json_object_get(e, "code")), cordon_code_name(err->code)));
        CHECK(streq(json_string_value(json_object_get(e, "message")), err->message));
        json_decref(o);
}

/* The id a refused line carries, read independently: 0 unless it is an object with a positive
 * integer "id". Read leniently (a NUL in a string, a member given twice: the daemon answers
 * such a request with its id, docs/protocol.md); where jansson keeps the last of two "id"
 * members the daemon may answer 0 instead, never another number. */
static uint64_t own_id(const uint8_t *data, size_t size) {
        json_t *o = json_loadb((const char *) data, size, JSON_ALLOW_NUL, NULL);
        json_t *id = json_object_get(o, "id");
        uint64_t v = json_is_integer(id) && json_integer_value(id) >= 1
                             ? (uint64_t) json_integer_value(id)
                             : 0;
        json_decref(o);
        return v;
}

static int run_one(const uint8_t *data, size_t size, cordon_error *err) {
        proto_request rq;
        uint64_t id = 99;
        *err = (cordon_error) { 0 };
        int r = proto_parse_request((const char *) data, size, &rq, &id, err);
        if (r == 0) {
                CHECK(id == rq.id);
                check_accepted(&rq);
                if (known_params(rq.method))
                        check_round_trip(&rq);
                json_t *res = built(proto_result_line(rq.id, "{\"exitCode\":0}"));
                json_decref(res);
                proto_request_done(&rq);
                return 0;
        }
        CHECK(r == -EBADMSG);
        CHECK(err->code == CORDON_USAGE && err->message[0] != '\0');
        CHECK(one_clean_line(err->message));
        CHECK(id == 0 || id == own_id(data, size));
        check_error_line(id, err);
        /* The event builder takes the worker's lines as they come: one line out, or none for a
         * line with a NUL (never valid JSON text; jansson stops reading at it). */
        json_t *ev = json_loadb((const char *) data, size, 0, NULL);
        if (memchr(data, '\0', size))
                CHECK(proto_event_line(7, (const char *) data, size) == NULL);
        else if (json_is_object(ev) && !memchr(data, '\n', size) && !memchr(data, '\r', size))
                json_decref(built(proto_event_line(7, (const char *) data, size)));
        json_decref(ev);
        return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        cordon_error err;
        (void) run_one(data, size, &err);
        return 0;
}

/* A well-formed request one byte over the limit: refused by its length alone. */
static void check_oversize(void) {
        static const char head[] = "{\"v\":1,\"id\":1,\"method\":\"probe\",\"params\":{}}";
        size_t len = PROTO_LINE_MAX + 1;
        char *line = malloc(len);
        if (!line)
                broken("out of memory");
        memset(line, ' ', len);
        memcpy(line, head, sizeof(head) - 1);
        proto_request rq;
        uint64_t id;
        cordon_error err = { 0 };
        int r = proto_parse_request(line, len, &rq, &id, &err);
        int ok = proto_parse_request(line, len - 1, &rq, &id, &err) == 0;
        if (ok)
                proto_request_done(&rq);
        free(line);
        if (r != -EBADMSG || !ok) {
                fprintf(stderr, "oversize: a line of %zu bytes %s, one byte less %s\n", len,
                        r == -EBADMSG ? "was refused" : "was accepted",
                        ok ? "was accepted" : "was refused");
                broken("the line limit");
        }
}

/* libFuzzer's start-up hook, also run by the corpus replayer: the line limit is checked once. */
int LLVMFuzzerInitialize(int *argc, char ***argv) {
        check_oversize();
        return 0;
}

#ifndef CORDON_LIBFUZZER
bool fuzz_replay_seed(const char *name, const uint8_t *data, size_t size) {
        /* Seeds are files with a trailing newline; the server hands the parser the line without
         * it. */
        while (size > 0 && data[size - 1] == '\n')
                size--;
        cordon_error err;
        return fuzz_named_verdict(name, run_one(data, size, &err), err.message);
}
#endif
