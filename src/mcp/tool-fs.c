/* SPDX-License-Identifier: Apache-2.0 */
/* The file tools: read_file, write_file, edit_file, list_directory through the policy-checked
 * file operations (cordon_fs_*, or cordon_session_fs_* for a session: docs/design/fs-ops.md), so
 * that a model's file tool can do only what its sandboxed commands could. */
#include "mcp/mcp-internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/base64.h"
#include "util/utf8.h"

#define READ_DEFAULT (256u * 1024)

/* What every file tool starts with: the absolute path, and the session when one is named
 * (held: release it). NULL path with *ret_result set (or NULL out of memory). */
typedef struct fs_target {
        char *path;
        mcp_slot *slot;
} fs_target;

static bool target_get(mcp_call *c, fs_target *t, json_t **ret_result) {
        *t = (fs_target) { 0 };
        *ret_result = NULL;
        const char *sid = json_string_value(json_object_get(c->args, "sessionId"));
        if (sid && !(t->slot = mcp_slot_acquire(c->srv, sid, ret_result)))
                return false;
        t->path = mcp_abs_path(c->srv, json_string_value(json_object_get(c->args, "path")));
        if (!t->path && t->slot)
                mcp_slot_release(c->srv, t->slot);
        return t->path != NULL;
}

static void target_done(mcp_call *c, fs_target *t) {
        if (t->slot)
                mcp_slot_release(c->srv, t->slot);
        free(t->path);
}

static bool valid_utf8(const char *s, size_t n) {
        for (size_t i = 0; i < n;) {
                size_t k = utf8_char_len(s + i, n - i);
                if (k == 0 || s[i] == '\0')
                        return false;
                i += k;
        }
        return true;
}

static json_t *read_result(const char *path, const cordon_fs_data *d) {
        bool text = valid_utf8(d->data, d->len);
        char *b64 = text ? NULL : base64_encode(d->data, d->len);
        if (!text && !b64)
                return NULL;
        json_t *s = json_pack("{s:o, s:s, s:s, s:I, s:I, s:I, s:b}", "path", mcp_json_text(path), "content",
                              text ? d->data : b64, "encoding", text ? "utf-8" : "base64", "size",
                              (json_int_t) d->size, "offset", (json_int_t) d->offset, "bytes",
                              (json_int_t) d->len, "eof", d->eof);
        char *msg = NULL;
        if (!text && asprintf(&msg, "[%zu bytes that are not UTF-8 text, as base64 in "
                                    "structuredContent.content]", d->len) < 0)
                msg = NULL;
        else if (text && !d->eof && asprintf(&msg, "%s\n[cordon: %llu of %llu bytes shown; read "
                                             "on with offset %llu]", d->data,
                                             (unsigned long long) d->len,
                                             (unsigned long long) d->size,
                                             (unsigned long long) (d->offset + d->len)) < 0)
                msg = NULL;
        json_t *r = mcp_result(s, msg ? msg : text ? d->data : "", false);
        free(msg);
        free(b64);
        return r;
}

json_t *mcp_tool_read_file(mcp_call *c) {
        fs_target t;
        json_t *result;
        if (!target_get(c, &t, &result))
                return result;
        json_t *off = json_object_get(c->args, "offset"), *len = json_object_get(c->args, "length");
        uint64_t offset = off ? (uint64_t) json_integer_value(off) : 0;
        uint64_t length = len ? (uint64_t) json_integer_value(len) : READ_DEFAULT;
        cordon_fs_data d = { 0 };
        cordon_fs_refusal ref;
        cordon_error err = { 0 };
        int r = t.slot ? cordon_session_fs_read(t.slot->session, t.path, offset, length, &d, &ref,
                                                &err)
                       : cordon_fs_read(c->srv->cfg->policy, c->srv->cfg->cwd, t.path, offset,
                                        length, &d, &ref, &err);
        result = r < 0 ? mcp_result_cordon(&err, &ref, t.path) : read_result(t.path, &d);
        cordon_fs_data_free(&d);
        target_done(c, &t);
        return result;
}

static json_t *written_result(const char *what, const char *path, const cordon_fs_written *w) {
        char text[4200];
        (void) snprintf(text, sizeof(text), "%s %s (%llu bytes)", what, path,
                        (unsigned long long) w->size);
        char *clean = mcp_utf8_clean(text, strlen(text));
        json_t *r = clean ? mcp_result(json_pack("{s:o, s:b, s:I}", "path", mcp_json_text(path), "created",
                                                 w->created, "size", (json_int_t) w->size),
                                       clean, false)
                          : NULL;
        free(clean);
        return r;
}

json_t *mcp_tool_write_file(mcp_call *c) {
        fs_target t;
        json_t *result;
        if (!target_get(c, &t, &result))
                return result;
        const json_t *content = json_object_get(c->args, "content");
        const char *enc = json_string_value(json_object_get(c->args, "encoding"));
        char *bytes = NULL;
        size_t n = json_string_length(content);
        if (enc && strcmp(enc, "base64") == 0 &&
            base64_decode(json_string_value(content), n, &bytes, &n) < 0) {
                target_done(c, &t);
                return mcp_result_fail("arguments.content: not canonical base64 (RFC 4648, "
                                       "padded, no whitespace)");
        }
        const char *data = bytes ? bytes : json_string_value(content);
        cordon_fs_written w = { 0 };
        cordon_fs_refusal ref;
        cordon_error err = { 0 };
        int r = t.slot ? cordon_session_fs_write(t.slot->session, t.path, data, n, &w, &ref, &err)
                       : cordon_fs_write(c->srv->cfg->policy, c->srv->cfg->cwd, t.path, data, n,
                                         &w, &ref, &err);
        result = r < 0 ? mcp_result_cordon(&err, &ref, t.path)
                       : written_result(w.created ? "created" : "wrote", t.path, &w);
        free(bytes);
        target_done(c, &t);
        return result;
}

json_t *mcp_tool_edit_file(mcp_call *c) {
        fs_target t;
        json_t *result;
        if (!target_get(c, &t, &result))
                return result;
        const json_t *o = json_object_get(c->args, "oldText"), *n = json_object_get(c->args, "newText");
        cordon_fs_written w = { 0 };
        cordon_fs_refusal ref;
        cordon_error err = { 0 };
        int r = t.slot ? cordon_session_fs_edit(t.slot->session, t.path, json_string_value(o),
                                                json_string_length(o), json_string_value(n),
                                                json_string_length(n), &w, &ref, &err)
                       : cordon_fs_edit(c->srv->cfg->policy, c->srv->cfg->cwd, t.path,
                                        json_string_value(o), json_string_length(o),
                                        json_string_value(n), json_string_length(n), &w, &ref,
                                        &err);
        result = r < 0 ? mcp_result_cordon(&err, &ref, t.path) : written_result("edited", t.path, &w);
        target_done(c, &t);
        return result;
}

static json_t *list_result(const char *path, const cordon_fs_entry *e, size_t n, bool truncated) {
        json_t *list = json_array();
        char *text = NULL;
        size_t text_len = 0;
        FILE *f = open_memstream(&text, &text_len);
        for (size_t i = 0; list && f && i < n; i++) {
                char *name = mcp_utf8_clean(e[i].name, strlen(e[i].name));
                const char *type = cordon_fs_type_to_string(e[i].type);
                (void) json_array_append_new(list, json_pack("{s:s?, s:s, s:I, s:b}", "name", name,
                                                             "type", type, "size",
                                                             (json_int_t) e[i].size, "secret",
                                                             e[i].secret));
                if (name)
                        (void) fprintf(f, "%s%s\t%s\t%llu\n", name,
                                       e[i].type == CORDON_FS_DIRECTORY ? "/" : "", type,
                                       (unsigned long long) e[i].size);
                free(name);
        }
        if (f && truncated)
                (void) fprintf(f, "[cordon: only the first %zu entries are listed]\n", n);
        bool ok = f && fclose(f) == 0 && text;
        json_t *r = ok ? mcp_result(json_pack("{s:o, s:o, s:b}", "path", mcp_json_text(path), "entries", list,
                                              "truncated", truncated),
                                    text[0] ? text : "(empty)\n", false)
                       : (json_decref(list), NULL);
        free(text);
        return r;
}

json_t *mcp_tool_list_directory(mcp_call *c) {
        fs_target t;
        json_t *result;
        if (!target_get(c, &t, &result))
                return result;
        cordon_fs_entry *e = NULL;
        size_t n = 0;
        bool truncated = false;
        cordon_fs_refusal ref;
        cordon_error err = { 0 };
        int r = t.slot ? cordon_session_fs_list(t.slot->session, t.path, &e, &n, &truncated, &ref,
                                                &err)
                       : cordon_fs_list(c->srv->cfg->policy, c->srv->cfg->cwd, t.path, &e, &n,
                                        &truncated, &ref, &err);
        result = r < 0 ? mcp_result_cordon(&err, &ref, t.path) : list_result(t.path, e, n, truncated);
        cordon_fs_entries_free(e, n);
        target_done(c, &t);
        return result;
}
