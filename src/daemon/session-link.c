/* SPDX-License-Identifier: Apache-2.0 */
/* The daemon's end of a warm session's host link: the lines it writes to the host (a warm exec, a
 * terminal and its input, resizes and close), the lines the host writes back (the launch
 * answered, warm execs' events and results, errors), and what the daemon does when the host goes
 * away. The host itself is src/linux/session-host.c. */
#include "daemon/daemon.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "linux/session-host.h"
#include "linux/events.h"
#include "util/util.h"

/* ---- lines to the host --------------------------------------------------------------------- */

/* Writes one line to the session's host (blocking briefly: lines are small and the host reads
 * them as they come). Returns false when the host is gone. */
static bool host_write(session *s, const char *line) {
        if (s->host.fd < 0)
                return false;
        (void) fcntl(s->host.fd, F_SETFL, 0);
        size_t len = strlen(line), off = 0;
        while (off < len) {
                ssize_t w = write(s->host.fd, line + off, len - off);
                if (w < 0 && errno == EINTR)
                        continue;
                if (w <= 0)
                        break;
                off += (size_t) w;
        }
        (void) fcntl(s->host.fd, F_SETFL, O_NONBLOCK);
        return off == len;
}

/* Starts a warm exec or terminal: "<tag><id> <request json>\n" to the host ('X' an exec, 'T' a
 * terminal), and the exec_run its "E"/"R" lines will find. Takes `o`. */
static void start_warm(daemon_t *d, client *c, session *s, const proto_request *rq, char tag,
                       json_t *o) {
        char *txt = o ? json_dumps(o, JSON_COMPACT) : NULL;
        json_decref(o);
        exec_run *x = txt ? calloc(1, sizeof(*x)) : NULL;
        char *line = NULL;
        uint64_t id = ++d->next_exec_id;
        if (!x || asprintf(&line, "%c%llu %s\n", tag, (unsigned long long) id, txt) < 0) {
                free(x);
                free(txt);
                session_reply_error(c, rq->id, CORDON_LAUNCH_FAILED, "out of memory");
                return;
        }
        free(txt);
        *x = (exec_run){ .kind = WATCH_EXEC, .d = d, .request_id = rq->id, .owner = c, .s = s,
                         .pid = -1, .events_fd = -1, .warm = true, .terminal = tag == 'T',
                         .host_exec_id = id, .next = d->execs };
        d->execs = x;
        s->running++;
        s->state = SESSION_ACTIVE;
        if (!host_write(s, line))
                x->done = true; /* the host is gone: answered as failed */
        free(line);
}

/* A warm exec: {argv, env, cwd, stdin} to the host. */
void exec_warm(daemon_t *d, client *c, session *s, proto_request *rq) {
        const proto_exec *e = &rq->exec;
        json_t *argv = json_array(), *env = json_array();
        for (size_t i = 0; argv && i < e->n_argv; i++)
                (void) json_array_append_new(argv, json_string(e->argv[i]));
        for (size_t i = 0; env && i < e->n_env; i++)
                (void) json_array_append_new(env, json_string(e->env[i]));
        json_t *o = json_pack("{s:o,s:o}", "argv", argv, "env", env);
        if (o && e->cwd)
                (void) json_object_set_new(o, "cwd", json_string(e->cwd));
        if (o && e->stdin_data)
                (void) json_object_set_new(o, "stdin", json_string(e->stdin_data));
        start_warm(d, c, s, rq, 'X', o);
}

void session_terminal(daemon_t *d, client *c, const proto_request *rq) {
        const proto_terminal *t = &rq->term;
        session *s = session_find(d, t->session_id);
        if (!s) {
                session_reply_error(c, rq->id, CORDON_USAGE, "no such session");
                return;
        }
        /* docs/design/daemon.md: a native terminal that cannot be provided fails; it never falls
         * back to a host shell under a sandbox badge. */
        if (s->host.fd < 0 || (s->state != SESSION_WARM && s->state != SESSION_ACTIVE)) {
                session_reply_error(c, rq->id,
                                    t->native ? CORDON_SANDBOX_UNAVAILABLE : CORDON_USAGE,
                                    "terminals need a running confined session (session.launch "
                                    "with a confining backend)");
                return;
        }
        json_t *argv = json_array();
        for (size_t i = 0; argv && i < t->n_argv; i++)
                (void) json_array_append_new(argv, json_string(t->argv[i]));
        json_t *o = json_pack("{s:o,s:i,s:i,s:b}", "argv", argv, "cols", t->cols, "rows", t->rows,
                              "native", t->native);
        start_warm(d, c, s, rq, 'T', o);
        daemon_log("session %s: terminal %llu (%s)", s->id, (unsigned long long) rq->id,
                   t->native ? "native: inside the sandbox" : "none: an unconfined host shell");
}

void terminal_control(daemon_t *d, client *c, const proto_request *rq) {
        const proto_terminal *t = &rq->term;
        exec_run *x = NULL;
        for (exec_run *e = d->execs; e && !x; e = e->next)
                if (e->terminal && e->owner == c && e->request_id == t->terminal_id && !e->done)
                        x = e;
        if (!x) {
                session_reply_error(c, rq->id, CORDON_USAGE, "no such terminal on this connection");
                return;
        }
        char *line = NULL;
        unsigned long long hid = (unsigned long long) x->host_exec_id;
        int n = -1;
        if (rq->method == PROTO_TERMINAL_INPUT) {
                json_t *js = json_stringn(t->data, t->data_len);
                char *enc = js ? json_dumps(js, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
                json_decref(js);
                n = enc ? asprintf(&line, "I%llu %s\n", hid, enc) : -1;
                free(enc);
        } else if (rq->method == PROTO_TERMINAL_RESIZE) {
                n = asprintf(&line, "Z%llu %u %u\n", hid, t->cols, t->rows);
        } else {
                n = asprintf(&line, "K%llu \n", hid);
        }
        bool ok = n >= 0 && host_write(x->s, line);
        free(line);
        if (!ok)
                session_reply_error(c, rq->id, CORDON_LAUNCH_FAILED,
                                    "the session's sandbox is gone");
        else
                (void) client_send(c, proto_result_line(rq->id, "{}"));
}

/* ---- the warm session host's lines ----------------------------------------------------------- */

static exec_run *find_warm(daemon_t *d, const session *s, uint64_t id) {
        for (exec_run *x = d->execs; x; x = x->next)
                if (x->warm && x->s == s && x->host_exec_id == id)
                        return x;
        return NULL;
}

static void host_error_from_json(session *s, const char *json) {
        json_t *o = json_loads(json, 0, NULL);
        const char *code = json_string_value(json_object_get(o, "code"));
        const char *msg = json_string_value(json_object_get(o, "message"));
        cordon_code cc = CORDON_LAUNCH_FAILED;
        for (int k = CORDON_OK + 1; code && k <= CORDON_USAGE + 4; k++)
                if (strcmp(cordon_code_name((cordon_code) k), code) == 0)
                        cc = (cordon_code) k;
        (void) cordon_set_error(&s->error, cc, EIO, "%s", msg ? msg : "the session failed");
        json_decref(o);
}

static void launch_answered(session *s) {
        host_link *l = &s->host;
        daemon_log("session %s: %s (%s)", s->id, session_state_name(s->state),
                   cordon_backend_to_string(s->backend));
        if (l->launch_client)
                reply_handle(l->launch_client, l->launch_id, s);
        l->launch_client = NULL;
}

static void host_line(daemon_t *d, session *s, char *line, size_t len) {
        line[len] = '\0';
        if (line[0] == 'S' && s->state == SESSION_CREATED) {
                s->state = SESSION_WARM;
                launch_answered(s);
                return;
        }
        if (line[0] == 'F' && s->state == SESSION_CREATED) {
                host_error_from_json(s, line + 1);
                s->state = SESSION_ERROR;
                launch_answered(s);
                return;
        }
        char *sp = strchr(line, ' ');
        if (!sp || (line[0] != 'E' && line[0] != 'R'))
                return;
        exec_run *x = find_warm(d, s, strtoull(line + 1, NULL, 10));
        if (!x || x->done)
                return;
        if (line[0] == 'E' && x->owner)
                (void) client_send(x->owner, proto_event_line(x->request_id, sp + 1,
                                                              strlen(sp + 1)));
        if (line[0] == 'R') {
                free(x->result);
                x->result = strdup(sp + 1);
                x->done = true;
        }
}

/* The host died (or was killed): the session is over. */
static void host_gone(daemon_t *d, session *s) {
        host_close(d, s);
        if (s->state == SESSION_CREATED) {
                (void) cordon_set_error(&s->error, CORDON_LAUNCH_FAILED, EPIPE,
                                        "the session's sandbox host ended while starting");
                s->state = SESSION_ERROR;
                launch_answered(s);
        } else if (s->state != SESSION_DESTROYED) {
                (void) cordon_set_error(&s->error, CORDON_LAUNCH_FAILED, EPIPE,
                                        "the session's sandbox ended");
                s->state = SESSION_ERROR;
        }
}

void host_on_readable(daemon_t *d, host_link *l) {
        session *s = l->s;
        /* Backpressure: a client that does not read its events pauses the session's output. */
        for (exec_run *x = d->execs; x; x = x->next)
                if (x->s == s && x->owner && client_queued(x->owner) > DAEMON_OUT_MAX) {
                        x->paused = true;
                        (void) host_watch(d, l, false);
                        return;
                }
        if (l->cap - l->len < 65536) {
                size_t cap = l->cap ? l->cap * 2 : 65536;
                char *nb = cap <= 4 * 1024 * 1024 ? realloc(l->buf, cap) : NULL;
                if (!nb) {
                        host_gone(d, s);
                        return;
                }
                l->buf = nb;
                l->cap = cap;
        }
        ssize_t n = read(l->fd, l->buf + l->len, l->cap - l->len - 1);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
                return;
        if (n <= 0) {
                host_gone(d, s);
                return;
        }
        l->len += (size_t) n;
        size_t start = 0;
        for (size_t i = 0; i < l->len; i++)
                if (l->buf[i] == '\n') {
                        host_line(d, s, l->buf + start, i - start);
                        start = i + 1;
                }
        memmove(l->buf, l->buf + start, l->len - start);
        l->len -= start;
}
