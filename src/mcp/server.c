/* SPDX-License-Identifier: Apache-2.0 */
/* The server of `cordon mcp` (mcp.h): reads one message per line from the client, answers
 * initialize, ping and tools/list at once, runs each tools/call on a thread of its own (a command
 * may run for minutes while the client pings, cancels or calls again) and kills what a
 * notifications/cancelled names. The protocol's rules: docs/mcp.md. */
#include "mcp/mcp-internal.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mcp/rpc.h"
#include "mcp/schema.h"
#include "util/fork-gate.h"
#include "util/util.h"

#define READ_CHUNK (64u * 1024)

/* The revisions this server speaks, newest first: a client asking for another gets the newest
 * (the MCP lifecycle's negotiation). */
static const char *const versions[] = { "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05" };

bool mcp_send(mcp_server *srv, char *line) {
        if (!line)
                return false;
        pthread_mutex_lock(&srv->out_lock);
        size_t len = strlen(line), off = 0;
        while (!srv->out_broken && off < len) {
                ssize_t n = write(srv->cfg->out_fd, line + off, len - off);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        srv->out_broken = true; /* EPIPE (SIGPIPE is blocked): the client left */
                else
                        off += (size_t) n;
        }
        bool ok = !srv->out_broken;
        pthread_mutex_unlock(&srv->out_lock);
        free(line);
        return ok;
}

void mcp_progress(mcp_call *c, const char *message) {
        if (!c->progress_token)
                return;
        uint64_t n = ++c->progress; /* "progress" must grow with every notification */
        if (c->cancelled)
                return;
        json_t *p = json_pack("{s:O, s:I, s:s}", "progressToken", c->progress_token, "progress",
                              (json_int_t) n, "message", message);
        (void) mcp_send(c->srv, p ? mcp_notification_line("notifications/progress", p) : NULL);
        json_decref(p);
}

static bool send_error(mcp_server *srv, const json_t *id, int code, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
static bool send_error(mcp_server *srv, const json_t *id, int code, const char *fmt, ...) {
        char msg[1024];
        va_list ap;
        va_start(ap, fmt);
        (void) vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        char *clean = mcp_utf8_clean(msg, strlen(msg));
        bool ok = mcp_send(srv, clean ? mcp_error_line(id, code, clean) : NULL);
        free(clean);
        return ok;
}

static bool send_result(mcp_server *srv, const json_t *id, json_t *result) {
        if (!result)
                return send_error(srv, id, MCP_INTERNAL_ERROR, "out of memory");
        bool ok = mcp_send(srv, mcp_result_line(id, result));
        json_decref(result);
        return ok;
}

/* Members of `params` outside `allowed` (NULL-terminated): a client's typo must not be ignored
 * silently. Returns the first unknown one, or NULL. */
static const char *unknown_member(const json_t *params, const char *const *allowed) {
        const char *key;
        json_t *v;
        json_object_foreach((json_t *) params, key, v) {
                bool known = false;
                for (size_t i = 0; allowed[i] && !known; i++)
                        known = strcmp(key, allowed[i]) == 0;
                if (!known)
                        return key;
        }
        return NULL;
}

static bool params_check(mcp_server *srv, const mcp_message *m, const char *const *allowed) {
        const char *k = m->params ? unknown_member(m->params, allowed) : NULL;
        if (k)
                send_error(srv, m->id, MCP_INVALID_PARAMS, "%s: unknown member '%.80s' in params",
                           m->method, k);
        json_t *meta = m->params ? json_object_get(m->params, "_meta") : NULL;
        if (!k && meta && !json_is_object(meta)) {
                send_error(srv, m->id, MCP_INVALID_PARAMS, "%s: params._meta must be an object",
                           m->method);
                return false;
        }
        return k == NULL;
}

static void handle_initialize(mcp_server *srv, const mcp_message *m) {
        static const char *const allowed[] = { "protocolVersion", "capabilities", "clientInfo",
                                               "_meta", NULL };
        if (srv->initialized) {
                send_error(srv, m->id, MCP_INVALID_REQUEST, "initialize: the session is "
                           "initialized already");
                return;
        }
        if (!params_check(srv, m, allowed))
                return;
        const json_t *p = m->params;
        const char *asked = json_string_value(json_object_get(p, "protocolVersion"));
        const json_t *info = json_object_get(p, "clientInfo");
        if (!asked || !json_is_object(json_object_get(p, "capabilities")) ||
            !json_is_object(info) || !json_is_string(json_object_get(info, "name")) ||
            !json_is_string(json_object_get(info, "version"))) {
                send_error(srv, m->id, MCP_INVALID_PARAMS, "initialize: params needs "
                           "protocolVersion (a string), capabilities (an object) and clientInfo "
                           "({name, version})");
                return;
        }
        const char *version = versions[0];
        for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++)
                if (strcmp(asked, versions[i]) == 0)
                        version = versions[i];
        char instructions[1536];
        (void) snprintf(instructions, sizeof(instructions),
                        "Every command and file operation of these tools runs under cordon's "
                        "sandbox policy for %s. A refusal of the sandbox is listed in the "
                        "result's violations: it is the policy, not a bug; change the approach "
                        "rather than retrying.%s%s",
                        srv->cfg->cwd, srv->cfg->unprotected ? " WARNING: commands run "
                                                               "UNPROTECTED (no sandbox): " : "",
                        srv->cfg->unprotected ? srv->cfg->unprotected : "");
        json_t *r = json_pack("{s:s, s:{s:{s:b}}, s:{s:s, s:s, s:s}, s:o}", "protocolVersion",
                              version, "capabilities", "tools", "listChanged", 0, "serverInfo",
                              "name", "cordon", "title", "cordon sandbox", "version",
                              cordon_version(), "instructions", mcp_json_text(instructions));
        if (send_result(srv, m->id, r))
                srv->initialized = true;
}

static void handle_tools_list(mcp_server *srv, const mcp_message *m) {
        static const char *const allowed[] = { "cursor", "_meta", NULL };
        if (!params_check(srv, m, allowed))
                return;
        if (m->params && json_object_get(m->params, "cursor")) {
                send_error(srv, m->id, MCP_INVALID_PARAMS, "tools/list: unknown cursor (the list "
                           "has one page)");
                return;
        }
        (void) send_result(srv, m->id, json_deep_copy(srv->tools));
}

static void call_free(mcp_call *c) {
        json_decref(c->id);
        json_decref(c->progress_token);
        json_decref(c->args);
        free(c);
}

/* A call's thread: runs the tool, then answers — unless the call was cancelled (the client
 * forgot the request; MCP says not to answer it). */
static void *call_main(void *arg) {
        mcp_call *c = arg;
        mcp_server *srv = c->srv;
        fork_gate_enter(); /* the server's threads take part: docs/design/library.md */
        json_t *result = c->tool->run(c);
        pthread_mutex_lock(&srv->lock);
        for (mcp_call **pp = &srv->calls; *pp; pp = &(*pp)->next)
                if (*pp == c) {
                        *pp = c->next;
                        break;
                }
        bool cancelled = c->cancelled;
        pthread_mutex_unlock(&srv->lock);
        if (cancelled)
                json_decref(result);
        else
                (void) send_result(srv, c->id, result);
        call_free(c);
        fork_gate_leave();
        /* Last: the server's end waits for n_calls to reach 0 before it frees anything. */
        pthread_mutex_lock(&srv->lock);
        srv->n_calls--;
        pthread_cond_broadcast(&srv->changed);
        pthread_mutex_unlock(&srv->lock);
        return NULL;
}

/* The call's name and arguments: an unknown tool is a protocol error (-32602); arguments
 * against the schema are a tool error, so that the model reads what to fix (MCP 2025-11-25
 * moved them there). Returns the tool, or NULL after answering. */
static const mcp_tool *call_tool(mcp_server *srv, const mcp_message *m, json_t **ret_args) {
        static const char *const allowed[] = { "name", "arguments", "_meta", NULL };
        if (!params_check(srv, m, allowed))
                return NULL;
        const char *name = json_string_value(json_object_get(m->params, "name"));
        json_t *args = json_object_get(m->params, "arguments");
        json_t *token = json_object_get(json_object_get(m->params, "_meta"), "progressToken");
        if (!name || (args && !json_is_object(args)) ||
            (token && !json_is_string(token) && !json_is_integer(token))) {
                send_error(srv, m->id, MCP_INVALID_PARAMS, "tools/call: params needs name (a "
                           "string), and arguments must be an object, _meta.progressToken a "
                           "string or an integer");
                return NULL;
        }
        const mcp_tool *t = mcp_tool_find(name);
        if (!t) {
                const char *names[MCP_TOOLS_MAX];
                size_t n = mcp_tool_names(names, MCP_TOOLS_MAX);
                const char *near = text_nearest(name, names, n);
                send_error(srv, m->id, MCP_INVALID_PARAMS, "unknown tool '%.80s'%s%s%s; tools/list "
                           "lists the tools", name, near ? "; did you mean '" : "",
                           near ? near : "", near ? "'?" : "");
                return NULL;
        }
        *ret_args = args ? json_incref(args) : json_object();
        char why[512];
        if (*ret_args && mcp_schema_check(mcp_tool_schema(srv->tools, t), *ret_args, "arguments",
                                          why, sizeof(why)) < 0) {
                json_decref(*ret_args);
                (void) send_result(srv, m->id, mcp_result_fail("%s: %s", t->name, why));
                return NULL;
        }
        return t;
}

static bool id_in_flight(mcp_server *srv, const json_t *id) {
        for (mcp_call *k = srv->calls; k; k = k->next)
                if (json_equal(k->id, id))
                        return true;
        return false;
}

static void handle_tools_call(mcp_server *srv, const mcp_message *m) {
        json_t *args = NULL;
        const mcp_tool *t = call_tool(srv, m, &args);
        if (!t)
                return;
        mcp_call *c = calloc(1, sizeof(*c));
        json_t *token = json_object_get(json_object_get(m->params, "_meta"), "progressToken");
        if (!c || !args) {
                free(c);
                json_decref(args);
                send_error(srv, m->id, MCP_INTERNAL_ERROR, "out of memory");
                return;
        }
        *c = (mcp_call) { .srv = srv, .id = json_incref(m->id), .tool = t, .args = args,
                          .progress_token = token ? json_incref(token) : NULL };
        pthread_mutex_lock(&srv->lock);
        int code = MCP_INVALID_REQUEST;
        const char *refused = id_in_flight(srv, m->id) ? "the id is in use by a call still running"
                              : srv->n_calls >= MCP_CALLS_MAX ? "too many calls in flight"
                                                              : NULL;
        pthread_attr_t attr;
        int r = refused ? -1 : pthread_attr_init(&attr);
        if (r == 0) {
                (void) pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
                r = pthread_create(&c->thread, &attr, call_main, c);
                (void) pthread_attr_destroy(&attr);
                if (r != 0) {
                        refused = "cannot start a thread";
                        code = MCP_INTERNAL_ERROR;
                }
        }
        if (r == 0) {
                c->next = srv->calls;
                srv->calls = c;
                srv->n_calls++;
        }
        pthread_mutex_unlock(&srv->lock);
        if (r != 0) {
                send_error(srv, m->id, code, "tools/call: %s", refused);
                call_free(c);
        }
}

/* notifications/cancelled: the call's command is killed (with everything in its sandbox) and
 * the call is not answered. Unknown ids (a call that has ended) are ignored, as MCP says. */
static void handle_cancelled(mcp_server *srv, const mcp_message *m) {
        const json_t *id = m->params ? json_object_get(m->params, "requestId") : NULL;
        if (!id)
                return;
        pthread_mutex_lock(&srv->lock);
        for (mcp_call *k = srv->calls; k; k = k->next)
                if (json_equal(k->id, id)) {
                        k->cancelled = true;
                        if (k->proc)
                                (void) cordon_process_kill(k->proc, NULL);
                }
        pthread_mutex_unlock(&srv->lock);
}

static void handle_request(mcp_server *srv, const mcp_message *m) {
        static const char *const meta_only[] = { "_meta", NULL };
        if (strcmp(m->method, "initialize") == 0)
                handle_initialize(srv, m);
        else if (strcmp(m->method, "ping") == 0) {
                if (params_check(srv, m, meta_only))
                        (void) send_result(srv, m->id, json_object());
        } else if (strcmp(m->method, "tools/list") != 0 && strcmp(m->method, "tools/call") != 0)
                send_error(srv, m->id, MCP_METHOD_NOT_FOUND, "unknown method '%.80s'; this server "
                           "implements initialize, ping, tools/list and tools/call", m->method);
        else if (!srv->initialized)
                send_error(srv, m->id, MCP_NOT_INITIALIZED, "%s before initialize", m->method);
        else if (strcmp(m->method, "tools/list") == 0)
                handle_tools_list(srv, m);
        else
                handle_tools_call(srv, m);
}

static void handle_line(mcp_server *srv, const char *line, size_t len) {
        mcp_message m;
        mcp_fault f;
        if (len == 1 && line[0] == '\r') /* a blank line of a CRLF client: no message */
                return;
        if (mcp_decode(line, len, &m, &f) < 0) {
                send_error(srv, f.id, f.code, "%s", f.message);
                mcp_fault_done(&f);
                return;
        }
        if (m.kind == MCP_REQUEST)
                handle_request(srv, &m);
        else if (m.kind == MCP_NOTIFICATION && strcmp(m.method, "notifications/cancelled") == 0)
                handle_cancelled(srv, &m);
        /* notifications/initialized and every other notification need nothing; a response
         * answers nothing this server asked (it sends no requests). */
        mcp_message_done(&m);
}

/* Reads lines until the end of input. A line longer than MCP_LINE_MAX is answered once and its
 * bytes are dropped up to its end: the buffer never grows past the bound. */
static void read_loop(mcp_server *srv) {
        size_t cap = READ_CHUNK, len = 0, scanned = 0;
        char *buf = malloc(cap);
        bool skipping = false;
        while (buf && !srv->out_broken) {
                if (cap - len < READ_CHUNK) {
                        char *nb = realloc(buf, cap * 2);
                        if (!nb)
                                break;
                        buf = nb;
                        cap *= 2;
                }
                ssize_t n;
                FORK_GATE_PAUSED(n = read(srv->cfg->in_fd, buf + len, READ_CHUNK));
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        break;
                len += (size_t) n;
                size_t start = 0;
                char *nl;
                while ((nl = memchr(buf + scanned, '\n', len - scanned))) {
                        size_t end = (size_t) (nl - buf);
                        if (!skipping && end > start)
                                handle_line(srv, buf + start, end - start);
                        skipping = false;
                        start = scanned = end + 1;
                }
                memmove(buf, buf + start, len - start);
                len -= start;
                scanned = len;
                if (len > MCP_LINE_MAX) {
                        if (!skipping)
                                send_error(srv, NULL, MCP_INVALID_REQUEST, "message longer than "
                                           "%u bytes: not read", MCP_LINE_MAX);
                        skipping = true;
                        len = scanned = 0;
                }
                if (cap > 4 * READ_CHUNK && len < READ_CHUNK) { /* give a big line's room back */
                        char *nb = realloc(buf, 4 * READ_CHUNK);
                        if (nb) {
                                buf = nb;
                                cap = 4 * READ_CHUNK;
                        }
                }
        }
        free(buf);
}

/* The end: every call killed and waited for, every session destroyed. Out of the fork gate
 * while it waits: a call may still fork before it sees the kill. */
static void server_end(mcp_server *srv) {
        pthread_mutex_lock(&srv->lock);
        for (mcp_call *k = srv->calls; k; k = k->next) {
                k->cancelled = true;
                if (k->proc)
                        (void) cordon_process_kill(k->proc, NULL);
        }
        while (srv->n_calls > 0)
                pthread_cond_wait(&srv->changed, &srv->lock);
        pthread_mutex_unlock(&srv->lock);
        fork_gate_enter();
        mcp_sessions_end(srv);
        fork_gate_leave();
}

int mcp_serve(const mcp_config *cfg, cordon_error *err) {
        mcp_server srv = { .cfg = cfg };
        if (!(srv.tools = mcp_tools_list())) {
                *err = (cordon_error) { .code = CORDON_LAUNCH_FAILED, .sys_errno = ENOMEM };
                (void) snprintf(err->message, sizeof(err->message), "mcp: cannot build the tool "
                                "list: out of memory");
                return -ENOMEM;
        }
        pthread_mutex_init(&srv.lock, NULL);
        pthread_mutex_init(&srv.out_lock, NULL);
        pthread_cond_init(&srv.changed, NULL);
        /* A client that goes away must end the server through EPIPE, not kill it with SIGPIPE
         * while its sandboxes are torn down. Blocked before any thread starts, so every thread
         * has it blocked; the library resets the mask of what it forks. */
        sigset_t pipe_set;
        sigemptyset(&pipe_set);
        sigaddset(&pipe_set, SIGPIPE);
        (void) pthread_sigmask(SIG_BLOCK, &pipe_set, NULL); /* kept: one may be pending */
        /* The server's threads (this one, each call's) are inside the fork gate but for their
         * waits: without it a session host forked while another thread was inside the
         * allocator would wait for that lock forever (docs/design/library.md). */
        fork_gate_enter();
        read_loop(&srv);
        fork_gate_leave();
        server_end(&srv);
        pthread_cond_destroy(&srv.changed);
        pthread_mutex_destroy(&srv.out_lock);
        pthread_mutex_destroy(&srv.lock);
        json_decref(srv.tools);
        return 0;
}
