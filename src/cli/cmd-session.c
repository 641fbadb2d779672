/* SPDX-License-Identifier: Apache-2.0 */
/* cordond's clients in the cordon CLI (cmd-session.h). The wire format is docs/protocol.md:
 * one JSON object per line, requests {"v":1,"id","method","params"}, answers with the same id
 * carrying "result" or "error", and for session.exec "event" lines before the answer. Only the
 * public API and jansson are used here: the CLI is a client like any other. */
#include "cli/cmd-session.h"

#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "cli/cli-policy.h"
#include "cli/cmd-explain.h"
#include "cli/commands.h"

#define PROTO_VERSION 1
#define REQUEST_LINE_MAX (1024 * 1024) /* docs/protocol.md: a request line, '\n' excluded */
#define ANSWER_LINE_MAX (16 * 1024 * 1024) /* longer than any line the daemon writes */
#define STDIN_MAX (1024 * 1024)        /* docs/protocol.md: session.exec's stdin */

__attribute__((format(printf, 3, 4)))
static int set_err(cordon_error *err, cordon_code code, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        err->code = code;
        (void) vsnprintf(err->message, sizeof(err->message), fmt, ap);
        va_end(ap);
        return -EPROTO;
}

/* ---- the connection --------------------------------------------------------------------------- */

typedef struct conn {
        int fd;
        char *buf; /* bytes received and not yet consumed */
        size_t len, cap;
} conn;

/* The daemon's default (src/daemon/main.c): $XDG_RUNTIME_DIR/cordon/cordond.sock, else a per-uid
 * directory under /run/user or /tmp. */
static int socket_path(const cli_args *a, char *buf, size_t size) {
        const char *rt = getenv("XDG_RUNTIME_DIR");
        int n;
        if (a->socket_path)
                n = snprintf(buf, size, "%s", a->socket_path);
        else if (rt && rt[0] == '/')
                n = snprintf(buf, size, "%s/cordon/cordond.sock", rt);
        else
                n = snprintf(buf, size, "%s/cordon-%u/cordond.sock",
                             access("/run/user", W_OK) == 0 ? "/run/user" : "/tmp",
                             (unsigned) getuid());
        return n > 0 && (size_t) n < size ? 0 : -ENAMETOOLONG;
}

/* Connects and checks who serves the socket. Only a daemon of our own uid is believed: a
 * /tmp/cordon-UID directory can be created by any user before ours exists, and a daemon
 * impersonated there would receive our policies and could answer an exec with forged output and
 * a forged exit status. */
static int conn_open(const cli_args *a, conn *c, cordon_error *err) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        char path[sizeof(sa.sun_path)];
        *c = (conn) { .fd = -1 };
        if (socket_path(a, path, sizeof(path)) < 0)
                return set_err(err, CORDON_USAGE, "--socket: the path is longer than %zu bytes",
                               sizeof(path) - 1);
        memcpy(sa.sun_path, path, strlen(path) + 1);
        c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (c->fd < 0 || connect(c->fd, (struct sockaddr *) &sa, sizeof(sa)) < 0)
                return set_err(err, CORDON_LAUNCH_FAILED,
                               "cannot connect to cordond at %s: %s; start it with 'cordond' (or "
                               "'systemctl --user start cordond.socket'), or give --socket PATH",
                               CLI_QUOTE(path), strerror(errno));
        struct ucred cred;
        socklen_t len = sizeof(cred);
        if (getsockopt(c->fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || cred.uid != getuid())
                return set_err(err, CORDON_LAUNCH_FAILED,
                               "%s is served by uid %d, not by us (uid %u): refusing to talk to "
                               "it; give --socket PATH of your own cordond",
                               CLI_QUOTE(path), len ? (int) cred.uid : -1, (unsigned) getuid());
        return 0;
}

static void conn_close(conn *c) {
        if (c->fd >= 0)
                (void) close(c->fd);
        free(c->buf);
        *c = (conn) { .fd = -1 };
}

static int conn_send(conn *c, const char *line, cordon_error *err) {
        size_t len = strlen(line), off = 0;
        while (off < len) {
                /* MSG_NOSIGNAL: a daemon gone away is an error here, not a SIGPIPE. */
                ssize_t n = send(c->fd, line + off, len - off, MSG_NOSIGNAL);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return set_err(err, CORDON_LAUNCH_FAILED,
                                       "cannot send the request to cordond: %s",
                                       strerror(n < 0 ? errno : EPIPE));
                off += (size_t) n;
        }
        return 0;
}

/* The next line from the daemon, parsed: a JSON object with "v": 1. */
static int conn_read(conn *c, json_t **ret, cordon_error *err) {
        for (;;) {
                char *nl = c->len ? memchr(c->buf, '\n', c->len) : NULL;
                if (nl) {
                        size_t n = (size_t) (nl - c->buf);
                        json_error_t je;
                        json_t *o = json_loadb(c->buf, n, 0, &je);
                        memmove(c->buf, nl + 1, c->len - n - 1);
                        c->len -= n + 1;
                        if (!json_is_object(o) ||
                            json_integer_value(json_object_get(o, "v")) != PROTO_VERSION) {
                                json_decref(o);
                                return set_err(err, CORDON_LAUNCH_FAILED,
                                               "cordond sent a line that is not a protocol "
                                               "version %d message", PROTO_VERSION);
                        }
                        *ret = o;
                        return 0;
                }
                if (c->cap - c->len < 65536) {
                        size_t cap = c->cap ? c->cap * 2 : 65536;
                        char *nb = cap <= ANSWER_LINE_MAX ? realloc(c->buf, cap) : NULL;
                        if (!nb)
                                return set_err(err, CORDON_LAUNCH_FAILED,
                                               "cordond sent a line longer than %d bytes",
                                               ANSWER_LINE_MAX);
                        c->buf = nb;
                        c->cap = cap;
                }
                ssize_t n = recv(c->fd, c->buf + c->len, c->cap - c->len, 0);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return set_err(err, CORDON_LAUNCH_FAILED,
                                       "cordond closed the connection before answering%s%s",
                                       n < 0 ? ": " : "", n < 0 ? strerror(errno) : "");
                c->len += (size_t) n;
        }
}

/* ---- requests ----------------------------------------------------------------------------- */

static cordon_code code_from_name(const char *name) {
        for (int k = CORDON_OK + 1; name && k < _CORDON_CODE_MAX; k++)
                if (strcmp(cordon_code_name((cordon_code) k), name) == 0)
                        return (cordon_code) k;
        return CORDON_LAUNCH_FAILED;
}

/* An error response as the fatal line's error. A code this cordon does not know (a newer
 * daemon) keeps its name in the message. */
static int error_from(const json_t *e, cordon_error *err) {
        const char *code = json_string_value(json_object_get(e, "code"));
        const char *msg = json_string_value(json_object_get(e, "message"));
        cordon_code cc = code_from_name(code);
        if (code && strcmp(cordon_code_name(cc), code) != 0)
                return set_err(err, cc, "cordond: %s: %s", CLI_QUOTE(code), msg ? msg : "");
        return set_err(err, cc, "%s", msg && msg[0] ? msg : "cordond gave no message");
}

/* Sends {"v":1,"id":1,"method":M,"params":P} (takes P). Returns 0, or -EMSGSIZE when the line is
 * over the protocol's limit (err says so). */
static int send_request(conn *c, const char *method, json_t *params, cordon_error *err) {
        json_t *o = json_pack("{s:i,s:i,s:s,s:o}", "v", PROTO_VERSION, "id", 1, "method", method,
                              "params", params);
        char *body = o ? json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
        json_decref(o);
        if (!body)
                return set_err(err, CORDON_LAUNCH_FAILED, "cannot build the request (out of "
                               "memory, or text that is not UTF-8)");
        size_t n = strlen(body);
        if (n > REQUEST_LINE_MAX) {
                free(body);
                (void) set_err(err, CORDON_USAGE, "the request is %zu bytes, over the protocol's "
                               "limit of 1 MiB (standard input, arguments and environment "
                               "together)", n);
                return -EMSGSIZE;
        }
        char *line = malloc(n + 2);
        int r = line ? 0 : set_err(err, CORDON_LAUNCH_FAILED, "out of memory");
        if (line) {
                memcpy(line, body, n);
                memcpy(line + n, "\n", 2);
                r = conn_send(c, line, err);
        }
        free(line);
        free(body);
        return r;
}

/* One request without events: its result object (caller frees) or an error in err. */
static int call(const cli_args *a, const char *method, json_t *params, json_t **ret,
                cordon_error *err) {
        conn c;
        int r = conn_open(a, &c, err);
        if (r >= 0)
                r = send_request(&c, method, params, err);
        else
                json_decref(params);
        json_t *o = NULL;
        while (r >= 0 && !o) {
                r = conn_read(&c, &o, err);
                if (r >= 0 && json_integer_value(json_object_get(o, "id")) != 1) {
                        json_decref(o); /* not ours: the protocol never sends one, skip it */
                        o = NULL;
                }
        }
        conn_close(&c);
        if (r < 0)
                return r;
        json_t *res = json_object_get(o, "result");
        if (!json_is_object(res)) {
                r = error_from(json_object_get(o, "error"), err);
                json_decref(o);
                return r;
        }
        *ret = json_incref(res);
        json_decref(o);
        return 0;
}

/* ---- session launch, list, destroy ---------------------------------------------------------- */

/* The session's layer: the policy flags applied to an empty policy, printed as a layer document
 * (CORDON_JSON_LAYER: only what the flags set, env.set values included, so the daemon loads the
 * same layer; the display form would send "<redacted>" values and every unset default). */
static int layer_document(const cli_args *a, json_t **ret, cordon_error *err) {
        cordon_policy *layer = NULL;
        char *txt = NULL;
        int r = cordon_policy_new(&layer, err);
        if (r >= 0)
                r = cli_policy_apply(layer, a, err);
        if (r >= 0)
                r = cordon_policy_to_json(layer, CORDON_JSON_LAYER, NULL, &txt, err);
        cordon_policy_free(layer);
        json_t *o = r >= 0 ? json_loads(txt, 0, NULL) : NULL;
        free(txt);
        json_t *pol = json_object_get(o, "policy");
        if (r >= 0 && !json_is_object(pol))
                r = set_err(err, CORDON_LAUNCH_FAILED, "cannot print the session's policy");
        if (r >= 0)
                *ret = json_incref(pol);
        json_decref(o);
        return r;
}

/* The session's workspace: the last --workdir, else the current directory (as `cordon run`'s
 * workspace is the current directory). */
static const char *launch_workdir(const cli_args *a, const char *cwd) {
        const char *w = cwd;
        for (size_t i = 0; i < a->n_settings; i++)
                if (a->settings[i].flag == CLI_FLAG_WORKDIR)
                        w = a->settings[i].text;
        return w;
}

static json_t *launch_params(const cli_args *a, const char *cwd, json_t *policy) {
        json_t *p = json_pack("{s:o,s:s}", "policy", policy, "workdir", launch_workdir(a, cwd));
        const char *backend = a->sandbox_set && !a->sandbox ? "none"
                              : a->backend_set ? cordon_backend_to_string(a->backend)
                                               : NULL;
        if (p && ((backend && json_object_set_new(p, "backend", json_string(backend)) < 0) ||
                  (a->analytics_path &&
                   json_object_set_new(p, "analytics", json_string(a->analytics_path)) < 0))) {
                json_decref(p);
                return NULL;
        }
        return p;
}

/* A session that failed to start stays listed in state "error"; nobody else knows its id, so it
 * is destroyed again here. Best effort: the launch error is what gets reported. */
static void destroy_quietly(const cli_args *a, const char *id) {
        cordon_error ignored = { 0 };
        json_t *res = NULL;
        if (call(a, "session.destroy", json_pack("{s:s}", "sessionId", id), &res, &ignored) >= 0)
                json_decref(res);
}

int cli_cmd_session_launch(const cli_args *a, const char *cwd) {
        cordon_error err = { 0 };
        json_t *policy = NULL, *h = NULL;
        if (layer_document(a, &policy, &err) < 0)
                return cli_fatal(&err);
        json_t *params = launch_params(a, cwd, policy);
        if (!params)
                return cli_fatal(&(cordon_error) { .code = CORDON_LAUNCH_FAILED,
                                                   .message = "out of memory" });
        if (call(a, "session.launch", params, &h, &err) < 0)
                return cli_fatal(&err);
        const char *id = json_string_value(json_object_get(h, "sessionId"));
        const char *state = json_string_value(json_object_get(h, "state"));
        const char *backend = json_string_value(json_object_get(h, "backend"));
        int status = 0;
        if (!id || !state) {
                status = cli_fatal(&(cordon_error) { .code = CORDON_LAUNCH_FAILED,
                                   .message = "cordond answered without a session id" });
        } else if (strcmp(state, "error") == 0) {
                (void) error_from(json_object_get(h, "error"), &err);
                destroy_quietly(a, id);
                status = cli_fatal(&err);
        } else {
                if (backend && strcmp(backend, "none") == 0)
                        fprintf(stderr, "cordon: warning: session %s is UNPROTECTED (backend "
                                        "none): its commands run without a sandbox\n",
                                CLI_QUOTE(id));
                printf("%s\n", id);
                if (fflush(stdout) != 0)
                        status = 125;
        }
        json_decref(h);
        return status;
}

static void print_handle(const json_t *s) {
        const json_t *det = json_object_get(s, "details");
        const char *msg = json_string_value(json_object_get(json_object_get(s, "error"),
                                                            "message"));
        printf("%-28s %-9s %-9s %7lld  %s%s%s\n",
               CLI_QUOTE(json_string_value(json_object_get(s, "sessionId")) ?: "?"),
               json_string_value(json_object_get(s, "state")) ?: "?",
               json_string_value(json_object_get(s, "backend")) ?: "?",
               (long long) json_integer_value(json_object_get(det, "running")),
               CLI_QUOTE(json_string_value(json_object_get(det, "workdir")) ?: ""),
               msg ? "  error: " : "", msg ? CLI_QUOTE(msg) : "");
}

int cli_cmd_session_list(const cli_args *a) {
        cordon_error err = { 0 };
        json_t *res = NULL;
        if (call(a, "session.list", json_object(), &res, &err) < 0)
                return cli_fatal(&err);
        if (a->json) {
                char *txt = json_dumps(res, JSON_COMPACT | JSON_ENSURE_ASCII);
                if (txt)
                        printf("%s\n", txt);
                free(txt);
        } else {
                size_t i;
                json_t *s;
                printf("%-28s %-9s %-9s %7s  %s\n", "SESSION", "STATE", "BACKEND", "RUNNING",
                       "WORKDIR");
                json_array_foreach(json_object_get(res, "sessions"), i, s)
                        print_handle(s);
        }
        json_decref(res);
        return fflush(stdout) == 0 ? 0 : 125;
}

int cli_cmd_session_destroy(const cli_args *a) {
        cordon_error err = { 0 };
        json_t *res = NULL;
        if (call(a, "session.destroy", json_pack("{s:s}", "sessionId", a->session_id), &res,
                 &err) < 0)
                return cli_fatal(&err);
        json_decref(res);
        return 0;
}

/* ---- exec --------------------------------------------------------------------------------- */

/* Standard input, read to its end: NULL when it is a terminal (a person cannot be asked to type
 * all of it before the command starts) or closed. At most STDIN_MAX bytes of UTF-8 text without
 * NUL: a JSON string carries nothing else. */
static int read_stdin(json_t **ret, cordon_error *err) {
        *ret = NULL;
        if (isatty(STDIN_FILENO))
                return 0;
        char *buf = malloc(STDIN_MAX + 1);
        size_t len = 0;
        if (!buf)
                return set_err(err, CORDON_LAUNCH_FAILED, "out of memory");
        for (;;) {
                ssize_t n = read(STDIN_FILENO, buf + len, STDIN_MAX + 1 - len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 && errno == EBADF)
                        break; /* no stdin at all: like /dev/null */
                if (n < 0) {
                        free(buf);
                        return set_err(err, CORDON_USAGE, "cannot read standard input: %s",
                                       strerror(errno));
                }
                if (n == 0 || (len += (size_t) n) > STDIN_MAX)
                        break;
        }
        int r = 0;
        if (len > STDIN_MAX)
                r = set_err(err, CORDON_USAGE, "standard input is larger than 1 MiB, the "
                            "protocol's limit for session.exec");
        else if (memchr(buf, '\0', len) || !(*ret = json_stringn(buf, len)))
                r = set_err(err, CORDON_USAGE, "standard input is not UTF-8 text without NUL "
                            "bytes; binary input cannot be sent to cordond");
        free(buf);
        return r;
}

static json_t *exec_params(const cli_args *a, json_t *in) {
        json_t *argv = json_array(), *env = json_object();
        json_t *p = json_pack("{s:s,s:o,s:o}", "sessionId", a->session_id, "argv", argv, "env",
                              env);
        bool ok = p != NULL;
        for (size_t i = 0; ok && a->argv[i]; i++)
                ok = json_array_append_new(argv, json_string(a->argv[i])) == 0;
        for (size_t i = 0; ok && i < a->n_exec_env; i++) {
                char *eq = strchr(a->exec_env[i], '=');
                *eq = '\0'; /* args.c checked the form NAME=VALUE */
                ok = json_object_set_new(env, a->exec_env[i], json_string(eq + 1)) == 0;
                *eq = '=';
        }
        if (ok && a->exec_cwd)
                ok = json_object_set_new(p, "cwd", json_string(a->exec_cwd)) == 0;
        if (ok && in)
                ok = json_object_set(p, "stdin", in) == 0;
        if (!ok) {
                json_decref(p);
                return NULL;
        }
        return p;
}

static int b64_value(unsigned char ch) {
        if (ch >= 'A' && ch <= 'Z')
                return ch - 'A';
        if (ch >= 'a' && ch <= 'z')
                return ch - 'a' + 26;
        if (ch >= '0' && ch <= '9')
                return ch - '0' + 52;
        return ch == '+' ? 62 : ch == '/' ? 63 : -1;
}

/* Decodes standard base64 (with padding) in place; returns the length, or -1 when malformed. */
static ssize_t b64_decode(char *s, size_t n) {
        size_t out = 0;
        uint32_t acc = 0;
        int bits = 0;
        for (size_t i = 0; i < n && s[i] != '='; i++) {
                int v = b64_value((unsigned char) s[i]);
                if (v < 0)
                        return -1;
                acc = (acc << 6) | (uint32_t) v;
                if ((bits += 6) >= 8) {
                        bits -= 8;
                        s[out++] = (char) ((acc >> bits) & 0xff);
                }
        }
        return (ssize_t) out;
}

/* Writes all of it; false when the reader is gone (EPIPE) or the write fails. */
static bool write_all(int fd, const char *p, size_t n) {
        while (n > 0) {
                ssize_t w = cli_write_nosigpipe(fd, p, n);
                if (w < 0 && errno == EINTR)
                        continue;
                if (w <= 0)
                        return false;
                p += w;
                n -= (size_t) w;
        }
        return true;
}

/* A stdout/stderr event goes to our fd 1/2; the other events are not printed. Returns 0, -EPIPE
 * when the write failed (the reader is gone), or -ENOMEM. */
static int show_event(json_t *ev) {
        const char *type = json_string_value(json_object_get(ev, "type"));
        int fd = !type                       ? -1
                 : strcmp(type, "stdout") == 0 ? STDOUT_FILENO
                 : strcmp(type, "stderr") == 0 ? STDERR_FILENO
                                               : -1;
        json_t *data = json_object_get(ev, "data");
        if (fd < 0 || !json_is_string(data))
                return 0;
        size_t len = json_string_length(data);
        char *buf = malloc(len + 1);
        if (!buf)
                return -ENOMEM;
        memcpy(buf, json_string_value(data), len);
        ssize_t n = (ssize_t) len;
        const char *enc = json_string_value(json_object_get(ev, "encoding"));
        if (enc && strcmp(enc, "base64") == 0)
                n = b64_decode(buf, len);
        int r = n >= 0 && write_all(fd, buf, (size_t) n) ? 0 : -EPIPE;
        free(buf);
        return r;
}

/* The daemon's event line again, for the refusal report (the same decoder `cordon run` feeds,
 * so both print the same "cordon: denied ..." lines). */
static void report_event(cli_run_report *report, json_t *ev) {
        char *json = report ? json_dumps(ev, JSON_COMPACT) : NULL, *line = NULL;
        if (json && asprintf(&line, "%s\n", json) >= 0) /* one events line, newline included */
                cli_run_report_event(report, line, strlen(line));
        free(line);
        free(json);
}

/* Reads events and the answer to request 1. Returns the exit status, or -1 after filling err
 * (the caller prints the fatal line after the refusal lines, as `cordon run` does). */
static int exec_loop(conn *c, cli_run_report *report, cordon_error *err) {
        for (;;) {
                json_t *o = NULL;
                if (conn_read(c, &o, err) < 0)
                        return -1;
                json_t *ev = json_object_get(o, "event"), *res = json_object_get(o, "result");
                int status = -2;
                if (json_integer_value(json_object_get(o, "id")) != 1) {
                        /* not ours */
                } else if (json_is_object(ev)) {
                        report_event(report, ev);
                        int r = show_event(ev);
                        /* Nobody reads our output any more: hanging up makes the daemon kill
                         * the command, and we end as it would have, by SIGPIPE. */
                        if (r == -EPIPE)
                                status = 128 + SIGPIPE;
                        else if (r < 0) {
                                *err = (cordon_error){ .code = CORDON_LAUNCH_FAILED,
                                                       .message = "out of memory" };
                                status = -1;
                        }
                } else if (json_is_object(res)) {
                        json_int_t code = json_integer_value(json_object_get(res, "exitCode"));
                        status = code >= 0 && code <= 255 ? (int) code : 125;
                } else {
                        (void) error_from(json_object_get(o, "error"), err);
                        status = -1;
                }
                json_decref(o);
                if (status >= -1)
                        return status;
        }
}

int cli_cmd_exec(const cli_args *a) {
        cordon_error err = { 0 };
        json_t *in = NULL;
        if (read_stdin(&in, &err) < 0)
                return cli_fatal(&err);
        json_t *params = exec_params(a, in);
        json_decref(in);
        if (!params)
                return cli_fatal(&(cordon_error) { .code = CORDON_USAGE,
                                 .message = "an argument or --env value is not UTF-8 text" });
        int status = 0;
        cli_run_report *report = cli_run_report_new(a, NULL, NULL, &status);
        if (!report && status != 0) {
                json_decref(params);
                return status;
        }
        conn c;
        int r = conn_open(a, &c, &err);
        if (r >= 0)
                r = send_request(&c, "session.exec", params, &err);
        else
                json_decref(params);
        status = r < 0 ? -1 : exec_loop(&c, report, &err);
        conn_close(&c);
        cli_run_report_end(report, status < 0 ? 125 : status);
        return status < 0 ? cli_fatal(&err) : status;
}

/* ---- cordon terminal ------------------------------------------------------------------------ */

/* The terminal's size, or 80x24 when stdin is not one. */
static void term_size(int *cols, int *rows) {
        struct winsize ws;
        *cols = 80;
        *rows = 24;
        if (ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col && ws.ws_row) {
                *cols = ws.ws_col > 1000 ? 1000 : ws.ws_col;
                *rows = ws.ws_row > 1000 ? 1000 : ws.ws_row;
        }
}

static json_int_t term_next_id = 2;

/* terminal.input / terminal.resize for terminal 1 (the session.terminal request). Their answers
 * are read and ignored by the loop; a failure shows in the terminal's own end. */
static int term_send(conn *c, const char *method, json_t *params, cordon_error *err) {
        (void) json_object_set_new(params, "terminalId", json_integer(1));
        json_t *o = json_pack("{s:i,s:I,s:s,s:o}", "v", PROTO_VERSION, "id", term_next_id++,
                              "method", method, "params", params);
        char *body = o ? json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
        json_decref(o);
        if (!body)
                return set_err(err, CORDON_LAUNCH_FAILED, "out of memory");
        size_t n = strlen(body);
        char *line = realloc(body, n + 2);
        if (!line) {
                free(body);
                return set_err(err, CORDON_LAUNCH_FAILED, "out of memory");
        }
        memcpy(line + n, "\n", 2);
        int r = conn_send(c, line, err);
        free(line);
        return r;
}

/* Keyboard bytes as protocol text: bytes that are not UTF-8 (rare from a terminal) become '?'. */
static int term_input(conn *c, const char *buf, size_t n, cordon_error *err) {
        json_t *s = json_stringn(buf, n);
        if (!s) {
                char *copy = malloc(n);
                if (!copy)
                        return set_err(err, CORDON_LAUNCH_FAILED, "out of memory");
                for (size_t i = 0; i < n; i++)
                        copy[i] = (unsigned char) buf[i] < 0x80 ? buf[i] : '?';
                s = json_stringn(copy, n);
                free(copy);
        }
        return term_send(c, "terminal.input", json_pack("{s:o}", "data", s), err);
}

/* One message from the daemon: output to our stdout, the end as our status (>= 0), else -1. */
static int term_message(json_t *o, cordon_error *err) {
        if (json_integer_value(json_object_get(o, "id")) != 1)
                return -1; /* an answer to input or resize */
        json_t *ev = json_object_get(o, "event"), *res = json_object_get(o, "result");
        if (json_is_object(ev))
                return show_event(ev) == 0 ? -1 : 128 + SIGPIPE;
        if (json_is_object(res)) {
                json_int_t code = json_integer_value(json_object_get(res, "exitCode"));
                return code >= 0 && code <= 255 ? (int) code : 125;
        }
        (void) error_from(json_object_get(o, "error"), err);
        return cli_fatal(err);
}

static int term_loop(conn *c, int sfd, cordon_error *err) {
        bool in_open = true;
        for (;;) {
                /* Lines already received come first: poll() cannot see them. */
                while (c->len && memchr(c->buf, '\n', c->len)) {
                        json_t *o = NULL;
                        if (conn_read(c, &o, err) < 0)
                                return cli_fatal(err);
                        int st = term_message(o, err);
                        json_decref(o);
                        if (st >= 0)
                                return st;
                }
                struct pollfd p[3] = { { .fd = c->fd, .events = POLLIN },
                                       { .fd = in_open ? STDIN_FILENO : -1, .events = POLLIN },
                                       { .fd = sfd, .events = POLLIN } };
                if (poll(p, 3, -1) < 0 && errno != EINTR)
                        return cli_fatal(&(cordon_error){ .code = CORDON_LAUNCH_FAILED,
                                                          .message = "poll failed" });
                if (p[2].revents & POLLIN) {
                        struct signalfd_siginfo si;
                        while (read(sfd, &si, sizeof(si)) == sizeof(si))
                                ;
                        int cols, rows;
                        term_size(&cols, &rows);
                        if (term_send(c, "terminal.resize",
                                      json_pack("{s:i,s:i}", "cols", cols, "rows", rows), err) < 0)
                                return cli_fatal(err);
                }
                if (p[1].revents & (POLLIN | POLLHUP)) {
                        char buf[4096];
                        ssize_t n = read(STDIN_FILENO, buf, sizeof(buf));
                        if (n > 0 && term_input(c, buf, (size_t) n, err) < 0)
                                return cli_fatal(err);
                        if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
                                in_open = false; /* the shell ends on its own (or on close) */
                }
                if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
                        json_t *o = NULL;
                        if (conn_read(c, &o, err) < 0)
                                return cli_fatal(err);
                        int st = term_message(o, err);
                        json_decref(o);
                        if (st >= 0)
                                return st;
                }
        }
}

int cli_cmd_terminal(const cli_args *a) {
        cordon_error err = { 0 };
        int cols, rows;
        term_size(&cols, &rows);
        json_t *params = json_pack("{s:s,s:i,s:i,s:s}", "sessionId", a->session_id, "cols", cols,
                                   "rows", rows, "backend", a->terminal_native ? "native" : "none");
        if (!params)
                return cli_fatal(&(cordon_error){ .code = CORDON_USAGE,
                                                  .message = "SESSION is not UTF-8 text" });
        conn c;
        int r = conn_open(a, &c, &err);
        if (r >= 0)
                r = send_request(&c, "session.terminal", params, &err);
        else
                json_decref(params);
        if (r < 0) {
                conn_close(&c);
                return cli_fatal(&err);
        }
        /* Keys go through as typed (^C reaches the session's shell, not us); restored at the
         * end whatever happens inside. */
        struct termios saved;
        bool raw = isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &saved) == 0;
        if (raw) {
                struct termios t = saved;
                cfmakeraw(&t);
                (void) tcsetattr(STDIN_FILENO, TCSANOW, &t);
        }
        sigset_t winch;
        sigemptyset(&winch);
        sigaddset(&winch, SIGWINCH);
        (void) sigprocmask(SIG_BLOCK, &winch, NULL);
        int sfd = signalfd(-1, &winch, SFD_CLOEXEC | SFD_NONBLOCK);
        int status = term_loop(&c, sfd, &err);
        if (raw)
                (void) tcsetattr(STDIN_FILENO, TCSANOW, &saved);
        if (sfd >= 0)
                (void) close(sfd);
        conn_close(&c);
        return status;
}
