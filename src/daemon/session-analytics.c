/* SPDX-License-Identifier: Apache-2.0 */
/* A session's analytics file (session.launch's params.analytics, docs/protocol.md): every exec's
 * violations as analytics-safe records (run/analytics.h), then one summary per exec, appended to
 * a file the daemon opened at launch (0600). The records come from the exec's own event lines,
 * warm and cold alike, so they are exactly the violations its client is told of. */
#include "daemon/daemon.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Before the session's sandbox is planned: the key directory is in the secret set, and a secret
 * that comes into existence after a warm sandbox was built would not be hidden in it. */
int session_analytics_open(daemon_t *d, session *s, const char *path, cordon_error *err) {
        s->analytics_fd = -1;
        if (!path)
                return 0;
        int r = analytics_key_load(d->home, s->analytics_key, err);
        if (r < 0)
                return r;
        s->analytics_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOCTTY, 0600);
        if (s->analytics_fd < 0)
                return cordon_set_error(err, CORDON_POLICY_INVALID, errno,
                                        "params.analytics: cannot open '%s': %s; give a file the "
                                        "daemon's user can write", path, strerror(errno));
        return 0;
}

void session_analytics_close(session *s) {
        if (s->analytics_fd >= 0)
                (void) close(s->analytics_fd);
        s->analytics_fd = -1;
        explicit_bzero(s->analytics_key, sizeof(s->analytics_key));
}

static void put(const session *s, const char *line, int len) {
        /* O_APPEND: each record is one write(), whole, after every other exec's. A failure loses
         * the record, never the exec. */
        if (len > 0 && s->analytics_fd >= 0)
                (void) !write(s->analytics_fd, line, (size_t) len);
}

static analytics *exec_analytics(exec_run *x) {
        if (x->s->analytics_fd < 0)
                return NULL;
        if (!x->analytics && (x->analytics = calloc(1, sizeof(*x->analytics))))
                memcpy(x->analytics->key, x->s->analytics_key, sizeof(x->analytics->key));
        return x->analytics;
}

/* A refusal of the session's own (an fs.* request): a record, outside any exec's summary. */
void session_analytics_violation(const session *s, const cordon_violation *v) {
        if (s->analytics_fd < 0)
                return;
        analytics a = { 0 };
        memcpy(a.key, s->analytics_key, sizeof(a.key));
        char line[ANALYTICS_LINE_MAX];
        put(s, line, analytics_violation_line(&a, v, line, sizeof(line)));
        explicit_bzero(&a, sizeof(a));
}

void exec_analytics_event(exec_run *x, const char *json, size_t len) {
        if (x->s->analytics_fd < 0 || !memmem(json, len, "\"violation\"", 11))
                return;
        json_t *o = json_loadb(json, len, 0, NULL);
        const char *type = json_string_value(json_object_get(o, "type"));
        json_t *raw = json_object_get(o, "raw");
        analytics *a = type && strcmp(type, "violation") == 0 ? exec_analytics(x) : NULL;
        if (a) {
                json_t *n = json_object_get(raw, "count");
                cordon_violation v = {
                        .action = json_string_value(json_object_get(o, "action")),
                        .target = json_string_value(json_object_get(o, "target")),
                        .syscall = json_string_value(json_object_get(raw, "syscall")),
                        .count = json_is_integer(n) && json_integer_value(n) > 0
                                         ? (uint64_t) json_integer_value(n)
                                         : 0,
                };
                char line[ANALYTICS_LINE_MAX];
                put(x->s, line, analytics_violation_line(a, &v, line, sizeof(line)));
        }
        json_decref(o);
}

/* The summary: from the exec's result ({"exitCode"} or {"error": {"code"}}); without one the
 * exec's worker or sandbox died, or the session was destroyed. */
void exec_analytics_end(exec_run *x) {
        analytics *a = exec_analytics(x);
        if (!a)
                return;
        json_t *o = x->result ? json_loads(x->result, 0, NULL) : NULL;
        json_t *e = json_object_get(o, "error");
        const char *code = json_string_value(json_object_get(e, "code"));
        json_t *exit_code = json_object_get(o, "exitCode");
        const char *end = json_is_object(e) ? (code && (strcmp(code, "KILLED") == 0 ||
                                                        strcmp(code, "TIMEOUT") == 0)
                                                        ? "killed"
                                                        : "error")
                          : json_is_integer(exit_code) ? "exit"
                                                       : "killed";
        char line[ANALYTICS_LINE_MAX];
        put(x->s, line,
            analytics_summary_line(a, end, (int) json_integer_value(exit_code),
                                   json_is_object(e) ? (code ? code : "LAUNCH_FAILED") : NULL,
                                   line, sizeof(line)));
        json_decref(o);
        explicit_bzero(a, sizeof(*a));
        free(a);
        x->analytics = NULL;
}
