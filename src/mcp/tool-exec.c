/* SPDX-License-Identifier: Apache-2.0 */
/* The shell and session_exec tools: a command under the policy through cordon_spawn() or
 * cordon_session_exec(), its output captured by the library (never the server's own stdio: the
 * command's fds 0-2 are /dev/null and capture pipes, so it cannot write into the protocol
 * stream), streamed as progress, kept within a bound, and its refusals listed. */
#include "mcp/mcp-internal.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mcp/output.h"
#include "util/base64.h"
#include "util/fork-gate.h"

#define TIMEOUT_DEFAULT_MS 600000
/* Output streamed as progress per call: past it one notification says the rest is in the
 * result. A command printing without end must not make the client hold all of it. */
#define STREAM_MAX (1024u * 1024)

typedef struct exec_state {
        mcp_call *call;
        mcp_output out[2];      /* stdout, stderr */
        json_t *violations;
        uint64_t n_violations;  /* also those past MCP_VIOLATIONS_MAX */
        uint64_t streamed;
} exec_state;

static void stream(exec_state *x, const char *data, size_t len) {
        if (!x->call->progress_token || x->streamed >= STREAM_MAX)
                return;
        x->streamed += len;
        char *text = x->streamed >= STREAM_MAX
                             ? strdup("[cordon: streaming stopped after 1 MiB; the result "
                                      "holds the output's end]\n")
                             : mcp_utf8_clean(data, len);
        if (text)
                mcp_progress(x->call, text);
        free(text);
}

/* cordon_event_fn: the "stdout"/"stderr" events of the capture (docs/events.schema.json). */
static void on_event(void *userdata, const char *line, size_t len) {
        exec_state *x = userdata;
        fork_gate_enter(); /* the library calls back out of the gate; the server takes part */
        json_t *ev = json_loadb(line, len, 0, NULL);
        const char *type = json_string_value(json_object_get(ev, "type"));
        const char *data = json_string_value(json_object_get(ev, "data"));
        int which = !type ? -1 : strcmp(type, "stdout") == 0 ? 0 : strcmp(type, "stderr") == 0 ? 1 : -1;
        if (which >= 0 && data) {
                size_t n = json_string_length(json_object_get(ev, "data"));
                char *bytes = NULL;
                if (json_object_get(ev, "encoding") && base64_decode(data, n, &bytes, &n) < 0)
                        n = 0;
                mcp_output_add(&x->out[which], bytes ? bytes : data, n);
                stream(x, bytes ? bytes : data, n);
                free(bytes);
        }
        json_decref(ev);
        fork_gate_leave();
}

static void record_violation(exec_state *x, const cordon_violation *v) {
        x->n_violations += v->count > 1 ? v->count : 1;
        if (json_array_size(x->violations) >= MCP_VIOLATIONS_MAX)
                return;
        char *target = mcp_utf8_clean(v->target ? v->target : "", strlen(v->target ? v->target : ""));
        char *rule = mcp_utf8_clean(v->rule ? v->rule : "", strlen(v->rule ? v->rule : ""));
        if (target && rule) {
                json_t *o = json_pack("{s:s, s:s, s:s, s:s?, s:I}", "action", v->action, "target",
                                      target, "rule", rule, "syscall", v->syscall, "count",
                                      (json_int_t) (v->count > 1 ? v->count : 1));
                if (o && v->reason && v->reason[0])
                        (void) json_object_set_new(o, "reason", json_string(v->reason));
                (void) json_array_append_new(x->violations, o);
                char msg[1024];
                (void) snprintf(msg, sizeof(msg), "cordon: denied %s %s (rule: %s)\n", v->action,
                                target, rule);
                char *clean = mcp_utf8_clean(msg, strlen(msg));
                if (clean && x->call->progress_token)
                        mcp_progress(x->call, clean);
                free(clean);
        }
        free(target);
        free(rule);
}

static void on_violation(void *userdata, const cordon_violation *v) {
        fork_gate_enter(); /* as on_event */
        record_violation(userdata, v);
        fork_gate_leave();
}

/* The command as argv: "command" through /bin/sh -c, or "argv" as given. Exactly one. */
static char **command_argv(const json_t *args, json_t **ret_result) {
        const json_t *cmd = json_object_get(args, "command"), *argv = json_object_get(args, "argv");
        if (!cmd == !argv) {
                *ret_result = mcp_result_fail("arguments: give exactly one of 'command' (a shell "
                                              "command line) and 'argv' (a program and its "
                                              "arguments)");
                return NULL;
        }
        size_t n = cmd ? 3 : json_array_size(argv);
        char **v = calloc(n + 1, sizeof(char *));
        for (size_t i = 0; v && i < n; i++) {
                const char *s = cmd ? (const char *[]) { "/bin/sh", "-c",
                                                         json_string_value(cmd) }[i]
                                    : json_string_value(json_array_get(argv, i));
                if (!(v[i] = strdup(s)))
                        break;
        }
        if (v && v[0] && !v[0][0]) {
                *ret_result = mcp_result_fail("arguments.argv[0]: the program name is empty");
                goto fail;
        }
        if (v && (n == 0 || v[n - 1]))
                return v;
        *ret_result = NULL;
fail:
        for (size_t i = 0; v && i < n; i++)
                free(v[i]);
        free(v);
        return NULL;
}

static void strv_free(char **v) {
        for (size_t i = 0; v && v[i]; i++)
                free(v[i]);
        free(v);
}

/* "NAME=value" entries of the "env" argument, after `base` (NULL: none). NULL with *ret_result
 * for a bad name. */
static char **command_env(const json_t *env, char *const *base, json_t **ret_result) {
        size_t nb = 0;
        while (base && base[nb])
                nb++;
        size_t n = json_object_size(env);
        char **v = calloc(nb + n + 1, sizeof(char *));
        size_t k = 0;
        for (size_t i = 0; v && i < nb; i++) {
                /* A variable the call sets replaces the server's: one entry per name, so that
                 * which one the command gets does not depend on the policy filter's order. */
                const char *eq = strchr(base[i], '=');
                char name[256];
                if (eq && (size_t) (eq - base[i]) < sizeof(name)) {
                        memcpy(name, base[i], (size_t) (eq - base[i]));
                        name[eq - base[i]] = '\0';
                        if (json_object_get(env, name))
                                continue;
                }
                if (!(v[k++] = strdup(base[i])))
                        goto oom;
        }
        const char *name;
        json_t *val;
        json_object_foreach((json_t *) env, name, val) {
                if (!name[0] || strchr(name, '=')) {
                        *ret_result = mcp_result_fail("arguments.env: '%.80s' is not a variable "
                                                      "name", name);
                        strv_free(v);
                        return NULL;
                }
                if (!v)
                        goto oom;
                if (asprintf(&v[k], "%s=%s", name, json_string_value(val)) < 0) {
                        v[k] = NULL;
                        goto oom;
                }
                k++;
        }
        if (v)
                return v;
oom:
        strv_free(v);
        *ret_result = NULL;
        return NULL;
}

/* Starts the command: in `slot`'s session, or in a sandbox of its own. */
static int start(mcp_call *c, mcp_slot *slot, char **argv, char **env, const char *cwd,
                 exec_state *x, cordon_process **ret, cordon_error *err) {
        cordon_spawn_options o;
        cordon_spawn_options_init(&o);
        o.backend = c->srv->cfg->backend;
        o.environ = env;
        o.stdin_fd = o.stdout_fd = o.stderr_fd = CORDON_FD_NULL;
        o.capture = CORDON_CAPTURE_STDOUT | CORDON_CAPTURE_STDERR;
        o.cwd = cwd;
        o.on_event = on_event;
        o.event_userdata = x;
        o.on_violation = on_violation;
        o.userdata = x;
        if (slot)
                return cordon_session_exec(slot->session, argv, &o, ret, err);
        o.cwd = cwd ? cwd : c->srv->cfg->cwd;
        return cordon_spawn(c->srv->cfg->policy, argv, &o, ret, err);
}

/* Waits for the end, killing the command after `timeout_ms`. *timed_out says whether that
 * happened. The handle is registered with the call meanwhile, so that a cancellation kills
 * it. */
static int wait_end(mcp_call *c, cordon_process *p, uint64_t timeout_ms, bool *timed_out,
                    cordon_run_result *res, cordon_error *err) {
        pthread_mutex_lock(&c->srv->lock);
        c->proc = p;
        /* A cancellation or session_destroy that came before the handle was here found nothing
         * to kill: it is done now. */
        if (c->cancelled || (c->slot && c->slot->doomed))
                (void) cordon_process_kill(p, NULL);
        pthread_mutex_unlock(&c->srv->lock);
        int r = cordon_process_wait(p, (int) timeout_ms, res, err);
        *timed_out = r == 1;
        if (r == 1) {
                (void) cordon_process_kill(p, NULL);
                r = cordon_process_wait(p, -1, res, err);
        }
        pthread_mutex_lock(&c->srv->lock);
        c->proc = NULL;
        pthread_mutex_unlock(&c->srv->lock);
        return r;
}

static json_t *stream_json(const mcp_output *o, char **ret_text) {
        *ret_text = mcp_output_text(o);
        return *ret_text ? json_string(*ret_text) : NULL;
}

/* The result: text for the model (output, then the status and the refusals), structured for
 * programs. A command that ran is not a tool error, whatever its status: its failure is the
 * answer. One that could not run, timed out or was killed is. */
static json_t *exec_result(exec_state *x, int r, bool timed_out, const cordon_run_result *res,
                           const cordon_error *err) {
        char *out = NULL, *errs = NULL;
        json_t *s = json_pack("{s:o, s:o, s:o, s:I, s:b}", "stdout", stream_json(&x->out[0], &out),
                              "stderr", stream_json(&x->out[1], &errs), "violations",
                              json_incref(x->violations), "violationCount",
                              (json_int_t) x->n_violations, "timedOut", timed_out);
        bool cut = mcp_output_omitted(&x->out[0]) || mcp_output_omitted(&x->out[1]);
        char status[1200];
        if (s && r == 0) {
                (void) json_object_set_new(s, "exitCode", json_integer(res->exit_code));
                if (WIFSIGNALED(res->wait_status)) { /* as the events' "exit" names it */
                        const char *abbrev = sigabbrev_np(WTERMSIG(res->wait_status));
                        char name[32];
                        (void) snprintf(name, sizeof(name), "SIG%s", abbrev ? abbrev : "UNKNOWN");
                        (void) json_object_set_new(s, "signal", json_string(name));
                }
                (void) snprintf(status, sizeof(status), "[exit status %d]", res->exit_code);
        } else if (s) {
                char *msg = mcp_utf8_clean(err->message, strnlen(err->message, sizeof(err->message)));
                (void) json_object_set_new(s, "exitCode", json_null());
                (void) json_object_set_new(s, "error", json_pack("{s:s, s:s}", "code",
                                                                 cordon_code_name(err->code),
                                                                 "message", msg ? msg : ""));
                (void) snprintf(status, sizeof(status), timed_out ? "[timed out: killed]"
                                                                  : "[%s: %s]",
                                cordon_code_name(err->code), msg ? msg : "");
                free(msg);
        }
        if (s)
                (void) json_object_set_new(s, "truncated", json_boolean(cut));
        char *text = NULL;
        size_t nv = json_array_size(x->violations);
        if (s && asprintf(&text, "%s%s%s%s%s%s", out, out[0] && out[strlen(out) - 1] != '\n' ? "\n" : "",
                          errs, errs[0] && errs[strlen(errs) - 1] != '\n' ? "\n" : "", status,
                          nv ? "\nrefused by the sandbox (see violations):" : "") < 0)
                text = NULL;
        for (size_t i = 0; text && i < nv; i++) {
                json_t *v = json_array_get(x->violations, i);
                char *more = NULL;
                if (asprintf(&more, "%s\n  %s %s (rule: %s)", text,
                             json_string_value(json_object_get(v, "action")),
                             json_string_value(json_object_get(v, "target")),
                             json_string_value(json_object_get(v, "rule"))) < 0)
                        more = NULL;
                free(text);
                text = more;
        }
        json_t *result = text ? mcp_result(s, text, r < 0) : (json_decref(s), NULL);
        free(text);
        free(out);
        free(errs);
        return result;
}

/* shell and session_exec: `slot` NULL for a sandbox of the command's own. */
static json_t *run(mcp_call *c, mcp_slot *slot) {
        json_t *result = NULL;
        char **argv = command_argv(c->args, &result);
        if (!argv)
                return result;
        const json_t *env_arg = json_object_get(c->args, "env");
        char **env = env_arg || !slot ? command_env(env_arg, slot ? NULL : environ, &result) : NULL;
        const char *cwd_arg = json_string_value(json_object_get(c->args, "cwd"));
        char *cwd = cwd_arg ? mcp_abs_path(c->srv, cwd_arg) : NULL;
        exec_state *x = calloc(1, sizeof(*x)); /* 128 KiB of buffers: not on the stack */
        if ((env_arg || !slot) && !env)
                goto out;
        if (!x || !(x->violations = json_array()) || (cwd_arg && !cwd))
                goto out;
        x->call = c;
        json_t *t = json_object_get(c->args, "timeoutMs");
        uint64_t timeout_ms = t ? (uint64_t) json_integer_value(t) : TIMEOUT_DEFAULT_MS;
        cordon_process *p = NULL;
        cordon_error err = { 0 };
        int r = start(c, slot, argv, env, cwd, x, &p, &err);
        bool timed_out = false;
        cordon_run_result res = { 0 };
        if (r >= 0) {
                r = wait_end(c, p, timeout_ms, &timed_out, &res, &err);
                cordon_process_free(p);
        }
        timed_out = timed_out || (r < 0 && err.code == CORDON_TIMEOUT); /* limits.timeout */
        /* A session exec killed by session_destroy ends as a command a signal ended: the call
         * says what happened instead. */
        if (c->destroyed) {
                err = (cordon_error) { .code = CORDON_KILLED, .sys_errno = ECANCELED };
                (void) snprintf(err.message, sizeof(err.message), "the session was destroyed "
                                "(session_destroy) while the command ran: it was killed");
                r = -ECANCELED;
        }
        result = exec_result(x, r, timed_out, &res, &err);
out:
        if (x)
                json_decref(x->violations);
        free(x);
        free(cwd);
        strv_free(argv);
        strv_free(env);
        return result;
}

json_t *mcp_tool_shell(mcp_call *c) {
        return run(c, NULL);
}

json_t *mcp_tool_session_exec(mcp_call *c) {
        json_t *result = NULL;
        mcp_slot *slot = mcp_slot_acquire(c->srv, json_string_value(json_object_get(c->args,
                                                                                  "sessionId")),
                                          &result);
        if (!slot)
                return result;
        /* The slot stays held while the command runs: session_destroy kills the command
         * (the call's slot field) and then waits for this call to let go. */
        pthread_mutex_lock(&c->srv->lock);
        c->slot = slot;
        slot->execs++;
        pthread_mutex_unlock(&c->srv->lock);
        result = run(c, slot);
        pthread_mutex_lock(&c->srv->lock);
        c->slot = NULL;
        pthread_mutex_unlock(&c->srv->lock);
        mcp_slot_release(c->srv, slot);
        return result;
}
