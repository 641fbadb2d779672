/* SPDX-License-Identifier: Apache-2.0 */
/* cordond's fs.* methods (docs/protocol.md) on libcordon's public file operations, as any client
 * of the library would call them: the session's policy resolved for each call by the function
 * its execs use (session_resolve_policy()), then cordon_fs_* on it with the session's workdir
 * (the library plans it afresh, so a protected path created since launch counts), and the answer
 * as a protocol line. Not cordon_session_fs_* for a warm session: that plans the policy the
 * session was launched with, and the settings files a per-call resolution reads may have changed
 * since. A policy refusal is answered with a `violation` event (action, target, rule:
 * docs/events.schema.json) and then an error response with code POLICY_UNENFORCEABLE; a failed
 * operation with EXEC_FAILED. */
#include "daemon/daemon.h"

#include <jansson.h>
#include <stdio.h>

#include "util/base64.h"
#include "run/events.h"
#include "util/utf8.h"
#include "util/util.h"

/* What the protocol accepts, the library must take in one call. */
_Static_assert(PROTO_FS_CONTENT_MAX <= CORDON_FS_CONTENT_MAX,
               "an fs.* request's content fits one cordon_fs_* call");

/* Responses a client has not read yet: above this an fs.* call is refused rather than queued, so
 * a client that sends reads and never reads the answers cannot grow the daemon without bound
 * (one answer is at most about 4/3 of 8 MiB, plus escapes). */
#define FS_QUEUE_MAX (32u * 1024 * 1024)

static void reply_error(client *c, uint64_t id, const cordon_error *err) {
        (void) client_send(c, proto_error_line(id, err->code, err->message));
}

static void reply_json(client *c, uint64_t id, json_t *result) {
        char *txt = result ? json_dumps(result, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
        json_decref(result);
        (void) client_send(c, txt ? proto_result_line(id, txt) : NULL);
        free(txt);
}

typedef struct event_sink {
        client *c;
        uint64_t id;
} event_sink;

static void send_event(void *userdata, const char *line, size_t len) {
        const event_sink *k = userdata;
        (void) client_send(k->c, proto_event_line(k->id, line, len));
}

/* One fs.* call: what it runs under, and what the library said besides the result. */
typedef struct fs_call {
        const cordon_policy *policy;   /* the session's, resolved for this call */
        const char *cwd;               /* the session's workdir */
        cordon_error err;
        cordon_fs_refusal refusal;
} fs_call;

/* The refusal as the sandbox reports its own: one `violation` event, tagged with the request. */
static void send_violation(client *c, uint64_t id, const session *s, proto_method m,
                           const cordon_fs_refusal *ref) {
        event_sink sink = { c, id };
        events ev;
        events_init(&ev, send_event, &sink, s->id);
        cordon_violation v = { .action = ref->action, .syscall = proto_method_name(m),
                               .target = ref->target, .rule = ref->rule };
        events_violation(&ev, &v);
        session_analytics_violation(s, &v);
}

static bool valid_utf8(const char *s, size_t n) {
        for (size_t i = 0; i < n;) {
                size_t k = utf8_char_len(s + i, n - i);
                if (k == 0)
                        return false;
                i += k;
        }
        return true;
}

/* The bytes valid UTF-8 `s` takes in the daemon's ASCII-only lines (JSON_ENSURE_ASCII): a
 * control character becomes "\u0001" (6), a character beyond ASCII "\uXXXX" (6) or a surrogate
 * pair (12). */
static size_t ascii_json_len(const char *s, size_t n) {
        size_t out = 0;
        for (size_t i = 0; i < n;) {
                size_t k = utf8_char_len(s + i, n - i);
                unsigned char b = (unsigned char) s[i];
                out += k == 4 ? 12 : k > 1 ? 6 : b == '"' || b == '\\' ? 2 : b < 0x20 ? 6 : 1;
                i += k ? k : 1;
        }
        return out;
}

/* File content as a result member: text when asked for, or by default when it is valid UTF-8
 * and at most twice as long escaped (a file of control characters would grow six-fold: a 48 MiB
 * line for 8 MiB), base64 otherwise. */
static int set_content(fs_call *c, json_t *o, const char *data, size_t len, proto_encoding want) {
        bool text = want == PROTO_ENCODING_UTF8 ||
                    (want == PROTO_ENCODING_DEFAULT && valid_utf8(data, len) &&
                     ascii_json_len(data, len) <= 2 * len + 64);
        if (text && !valid_utf8(data, len))
                return cordon_set_error(&c->err, CORDON_EXEC_FAILED, EILSEQ,
                                        "the content is not valid UTF-8: ask for "
                                        "\"encoding\": \"base64\"");
        char *b64 = text ? NULL : base64_encode(data, len);
        json_t *v = text ? json_stringn(data, len) : b64 ? json_string(b64) : NULL;
        free(b64);
        if (!v || json_object_set_new(o, "content", v) < 0 ||
            json_object_set_new(o, "encoding", json_string(text ? "utf-8" : "base64")) < 0)
                return cordon_set_error(&c->err, CORDON_LAUNCH_FAILED, ENOMEM, "out of memory");
        return 0;
}

static json_t *do_read(fs_call *c, const proto_fs *f) {
        cordon_fs_data d;
        if (cordon_fs_read(c->policy, c->cwd, f->path, f->offset, f->length, &d, &c->refusal,
                           &c->err) < 0)
                return NULL;
        json_t *o = json_pack("{s:s,s:I,s:I,s:b}", "path", f->path, "size", (json_int_t) d.size,
                              "offset", (json_int_t) d.offset, "eof", d.eof);
        if (!o)
                (void) cordon_set_error(&c->err, CORDON_LAUNCH_FAILED, ENOMEM, "out of memory");
        else if (set_content(c, o, d.data, d.len, f->encoding) < 0) {
                json_decref(o);
                o = NULL;
        }
        cordon_fs_data_free(&d);
        return o;
}

static json_t *do_write(fs_call *c, const proto_fs *f, bool edit) {
        cordon_fs_written w;
        int r = edit ? cordon_fs_edit(c->policy, c->cwd, f->path, f->old_string, f->old_len,
                                      f->new_string, f->new_len, &w, &c->refusal, &c->err)
                     : cordon_fs_write(c->policy, c->cwd, f->path, f->content, f->content_len,
                                       &w, &c->refusal, &c->err);
        if (r < 0)
                return NULL;
        if (edit)
                return json_pack("{s:s,s:I}", "path", f->path, "size", (json_int_t) w.size);
        return json_pack("{s:s,s:I,s:b}", "path", f->path, "size", (json_int_t) w.size,
                         "created", w.created);
}

/* type, size, mode (octal text), mtime (RFC 3339, ms) and mtimeNs (ns since the epoch). */
static json_t *entry_json(const cordon_fs_entry *e) {
        char mode[8], when[40];
        (void) snprintf(mode, sizeof(mode), "%04o", (unsigned) e->mode);
        events_format_time(when, sizeof(when), e->mtime_sec, (long) e->mtime_nsec);
        json_int_t ns = (json_int_t) e->mtime_sec * 1000000000 + e->mtime_nsec;
        json_t *o = json_pack("{s:s,s:I,s:s,s:s,s:I}", "type",
                              cordon_fs_type_to_string(e->type), "size", (json_int_t) e->size,
                              "mode", mode, "mtime", when, "mtimeNs", ns);
        if (o && e->secret)
                (void) json_object_set_new(o, "secret", json_true());
        return o;
}

static json_t *do_stat(fs_call *c, const proto_fs *f) {
        cordon_fs_entry e;
        if (cordon_fs_stat(c->policy, c->cwd, f->path, &e, &c->refusal, &c->err) < 0)
                return NULL;
        json_t *o = entry_json(&e);
        if (o && json_object_set_new(o, "path", json_string(f->path)) < 0) {
                json_decref(o);
                o = NULL;
        }
        return o;
}

/* A name is text when it is valid UTF-8; other bytes come as "nameBase64", so every entry can
 * be named back exactly. */
static json_t *list_entry_json(const cordon_fs_entry *e) {
        json_t *o = entry_json(e);
        size_t n = strlen(e->name);
        bool text = valid_utf8(e->name, n);
        char *b64 = text ? NULL : base64_encode(e->name, n);
        json_t *name = text ? json_string(e->name) : b64 ? json_string(b64) : NULL;
        free(b64);
        if (!o || !name || json_object_set_new(o, text ? "name" : "nameBase64", name) < 0) {
                json_decref(o);
                return NULL;
        }
        return o;
}

static json_t *do_list(fs_call *c, const proto_fs *f) {
        cordon_fs_entry *e = NULL;
        size_t n = 0;
        bool truncated = false;
        if (cordon_fs_list(c->policy, c->cwd, f->path, &e, &n, &truncated, &c->refusal,
                           &c->err) < 0)
                return NULL;
        json_t *a = json_array();
        for (size_t i = 0; a && i < n; i++)
                if (json_array_append_new(a, list_entry_json(&e[i])) < 0) {
                        json_decref(a);
                        a = NULL;
                }
        cordon_fs_entries_free(e, n);
        json_t *o = a ? json_pack("{s:s,s:o,s:b}", "path", f->path, "entries", a, "truncated",
                                  truncated)
                      : NULL;
        if (!o)
                (void) cordon_set_error(&c->err, CORDON_LAUNCH_FAILED, ENOMEM, "out of memory");
        return o;
}

static json_t *run_op(fs_call *c, proto_method m, const proto_fs *f) {
        switch (m) {
        case PROTO_FS_READ:
                return do_read(c, f);
        case PROTO_FS_WRITE:
        case PROTO_FS_EDIT:
                return do_write(c, f, m == PROTO_FS_EDIT);
        case PROTO_FS_LIST:
                return do_list(c, f);
        case PROTO_FS_STAT:
                return do_stat(c, f);
        case PROTO_PROBE:
        case PROTO_SESSION_LAUNCH:
        case PROTO_SESSION_EXEC:
        case PROTO_SESSION_LIST:
        case PROTO_SESSION_DESTROY:
        case PROTO_SESSION_SUSPEND:
        case PROTO_SESSION_RESUME:
        case PROTO_SESSION_TERMINAL:
        case PROTO_TERMINAL_INPUT:
        case PROTO_TERMINAL_RESIZE:
        case PROTO_TERMINAL_CLOSE:
        case PROTO_SESSION_EGRESS_ANSWER:
        case _PROTO_METHOD_MAX:
        default:
                (void) cordon_set_error(&c->err, CORDON_USAGE, EINVAL, "not an fs.* method");
                return NULL;
        }
}

void fs_request(daemon_t *d, client *c, const proto_request *rq) {
        cordon_error err = { 0 };
        session *s = session_find(d, rq->fs.session_id);
        if (!s || s->state == SESSION_ERROR) {
                (void) cordon_set_error(&err, CORDON_USAGE, ENOENT, "%s",
                                        s ? "the session failed to start" : "no such session");
                reply_error(c, rq->id, &err);
                return;
        }
        if (client_queued(c) > FS_QUEUE_MAX) {
                (void) cordon_set_error(&err, CORDON_LAUNCH_FAILED, ENOBUFS,
                                        "%zu bytes of earlier responses are still unread: read "
                                        "them before sending more fs.* requests",
                                        client_queued(c));
                reply_error(c, rq->id, &err);
                return;
        }
        /* The policy the session's execs get now (docs/policy.md, "Layers and resolution"). */
        cordon_policy *pol = NULL;
        if (session_resolve_policy(d, s, &pol, &err) < 0) {
                reply_error(c, rq->id, &err);
                return;
        }
        fs_call ctx = { .policy = pol, .cwd = s->workdir };
        json_t *result = run_op(&ctx, rq->method, &rq->fs);
        cordon_policy_free(pol);
        if (result) {
                reply_json(c, rq->id, result);
                return;
        }
        if (ctx.err.code == CORDON_OK)
                (void) cordon_set_error(&ctx.err, CORDON_LAUNCH_FAILED, ENOMEM, "out of memory");
        if (ctx.refusal.action) {
                send_violation(c, rq->id, s, rq->method, &ctx.refusal);
                daemon_log("session %s: %s refused: %s", s->id, proto_method_name(rq->method),
                           ctx.err.message);
        }
        reply_error(c, rq->id, &ctx.err);
}
