/* SPDX-License-Identifier: Apache-2.0 */
/* Tool results (mcp-internal.h): text content for the model, structuredContent for programs,
 * isError for a tool that failed. */
#include "mcp/mcp-internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/utf8.h"

json_t *mcp_result(json_t *structured, const char *text, bool is_error) {
        if (!structured)
                return NULL;
        return json_pack("{s:[{s:s, s:o}], s:o, s:b}", "content", "type", "text", "text",
                         mcp_json_text(text), "structuredContent", structured, "isError",
                         is_error);
}

json_t *mcp_result_fail(const char *fmt, ...) {
        char msg[1024];
        va_list ap;
        va_start(ap, fmt);
        (void) vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        char *clean = mcp_utf8_clean(msg, strlen(msg));
        if (!clean)
                return NULL;
        json_t *r = mcp_result(json_pack("{s:{s:s, s:s}}", "error", "code", "USAGE", "message",
                                         clean),
                               clean, true);
        free(clean);
        return r;
}

json_t *mcp_result_cordon(const cordon_error *err, const cordon_fs_refusal *ref, const char *path) {
        char *msg = mcp_utf8_clean(err->message, strnlen(err->message, sizeof(err->message)));
        if (!msg)
                return NULL;
        json_t *violations = json_array();
        char text[2048];
        if (ref && ref->action) {
                char *target = mcp_utf8_clean(ref->target, strnlen(ref->target, sizeof(ref->target)));
                char *rule = mcp_utf8_clean(ref->rule, strnlen(ref->rule, sizeof(ref->rule)));
                if (target && rule)
                        (void) json_array_append_new(violations,
                                                     json_pack("{s:s, s:s, s:s}", "action",
                                                               ref->action, "target", target,
                                                               "rule", rule));
                (void) snprintf(text, sizeof(text), "refused by the sandbox: %s %s (rule: %s)\n%s",
                                ref->action, target ? target : "", rule ? rule : "", msg);
                free(target);
                free(rule);
        } else
                (void) snprintf(text, sizeof(text), "%s: %s", cordon_code_name(err->code), msg);
        json_t *s = json_pack("{s:o?, s:{s:s, s:s}, s:o}", "path", mcp_json_text(path), "error", "code",
                              cordon_code_name(err->code), "message", msg, "violations",
                              violations);
        free(msg);
        char *clean = mcp_utf8_clean(text, strlen(text));
        json_t *r = clean ? mcp_result(s, clean, true) : (json_decref(s), NULL);
        free(clean);
        return r;
}

/* Invalid bytes and NUL become U+FFFD: the text goes into JSON strings and to a model, which
 * must see that bytes were there, not lose them silently. */
char *mcp_utf8_clean(const char *bytes, size_t len) {
        if (len > (SIZE_MAX - 1) / 3)
                return NULL;
        char *out = malloc(len * 3 + 1), *o = out;
        if (!out)
                return NULL;
        for (size_t i = 0; i < len;) {
                size_t k = utf8_char_len(bytes + i, len - i);
                if (k == 0 || bytes[i] == '\0') {
                        memcpy(o, "\xef\xbf\xbd", 3);
                        o += 3;
                        i++;
                        continue;
                }
                memcpy(o, bytes + i, k);
                o += k;
                i += k;
        }
        *o = '\0';
        return out;
}

json_t *mcp_json_text(const char *s) {
        char *clean = s ? mcp_utf8_clean(s, strlen(s)) : NULL;
        json_t *j = clean ? json_string(clean) : NULL;
        free(clean);
        return j;
}

char *mcp_abs_path(const mcp_server *srv, const char *path) {
        if (path[0] == '/')
                return strdup(path);
        size_t n = strlen(srv->cfg->cwd) + strlen(path) + 2;
        char *p = malloc(n);
        if (p)
                (void) snprintf(p, n, "%s%s%s", srv->cfg->cwd,
                                strcmp(srv->cfg->cwd, "/") == 0 ? "" : "/", path);
        return p;
}
