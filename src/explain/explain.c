/* SPDX-License-Identifier: Apache-2.0 */
/* The denial decoder: ingestion of a run's events, stderr and exit status, and the classification
 * (see explain.h for the layout, docs/explain.md for the rules). */
#include "explain/explain.h"

#include <jansson.h>
#include <stdio.h>
#include <strings.h>
#include <time.h>

#include "util/base64.h"
#include "util/util.h"

/* Words on stderr that suggest the sandbox refused something. A match is only ever reported as
 * "inferred": the same words come from a missing file mode or a server's answer, and a command
 * can print them on purpose. */
const explain_hint_def explain_hint_defs[EXPLAIN_HINT_KINDS] = {
        { "Permission denied", "permission-denied",
          "a file operation was refused (EACCES): if the path is outside the writable roots, "
          "--writable DIR allows writing there; the secret set, denyRead and protected paths "
          "cannot be lifted", false },
        { "Operation not permitted", "operation-not-permitted",
          "an operation was refused (EPERM): the sandbox's seccomp filter refuses some system "
          "calls (ptrace, mount, bpf, ...) in every policy, and the command has no capabilities",
          false },
        { "Read-only file system", "read-only-file-system",
          "a write outside the writable roots (EROFS): everything else is mounted read-only; "
          "--writable DIR allows writing there", false },
        { "Could not resolve host", "name-resolution",
          "the sandbox's resolver answers only names the egress rules allow (--allow-domain "
          "HOST); on the landlock backend there is no DNS at all: only the proxy in "
          "HTTP_PROXY/HTTPS_PROXY/ALL_PROXY connects",
          true },
        { "Temporary failure in name resolution", "name-resolution",
          "the sandbox's resolver answers only names the egress rules allow (--allow-domain "
          "HOST); on the landlock backend there is no DNS at all: only the proxy in "
          "HTTP_PROXY/HTTPS_PROXY/ALL_PROXY connects",
          true },
        { "Name or service not known", "name-resolution",
          "the sandbox's resolver answers only names the egress rules allow (--allow-domain "
          "HOST); on the landlock backend there is no DNS at all: only the proxy in "
          "HTTP_PROXY/HTTPS_PROXY/ALL_PROXY connects",
          true },
        { "Network is unreachable", "network-unreachable",
          "the sandbox's network namespace has only loopback: only its egress proxy connects, "
          "to allowed hosts (--allow-domain HOST)",
          true },
        { "Bad system call", "bad-system-call",
          "the command died of SIGSYS: a system call the seccomp filter ends the process for",
          false },
};

const char *cordon_outcome_to_string(cordon_outcome outcome) {
        switch (outcome) {
        case CORDON_OUTCOME_OK:
                return "ok";
        case CORDON_OUTCOME_COMMAND_FAILED:
                return "command-failed";
        case CORDON_OUTCOME_SANDBOX_DENIED:
                return "sandbox-denied";
        case CORDON_OUTCOME_SANDBOX_BROKEN:
                return "sandbox-broken";
        default:
                return "unknown";
        }
}

int cordon_explanation_new(cordon_explanation **ret, cordon_error *err) {
        if (!ret)
                return cordon_set_error(err, CORDON_USAGE, EINVAL,
                                        "cordon_explanation_new: ret is NULL");
        *ret = NULL;
        cordon_explanation *x = calloc(1, sizeof(*x));
        if (!x)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, ENOMEM, "out of memory");
        x->start_ms = x->end_ms = -1;
        x->result_exit_code = -1;
        *ret = x;
        return 0;
}

static void violation_done(explain_violation *v) {
        free(v->action);
        free(v->target);
        free(v->rule);
        free(v->syscall);
        free(v->reason);
        free(v->method);
        free(v->path);
        free(v->ref);
        free(v->summary);
        free(v->change);
        free(v->why);
}

/* Forgets the run told so far (a new "starting" event, or the end). */
static void run_reset(cordon_explanation *x) {
        for (size_t i = 0; i < x->n_v; i++)
                violation_done(&x->v[i]);
        free(x->v);
        free(x->session_id);
        free(x->requested_backend);
        free(x->backend);
        free(x->signal);
        free(x->killed_reason);
        free(x->error_code);
        free(x->error_message);
        x->v = NULL;
        x->n_v = 0;
        x->v_not_listed = 0;
        x->session_id = x->requested_backend = x->backend = x->signal = NULL;
        x->killed_reason = x->error_code = x->error_message = NULL;
        x->error_from_stderr = false;
        x->started = false;
        x->start_ms = x->end_ms = -1;
        x->terminal = TERMINAL_NONE;
        x->exit_code = 0;
}

void cordon_explanation_free(cordon_explanation *x) {
        if (!x)
                return;
        run_reset(x);
        free(x->carry);
        free(x->reason);
        free(x->killed_change);
        free(x);
}

/* ---- stderr ------------------------------------------------------------------------------- */

/* memmem, ignoring ASCII case: tools capitalise the same errno text differently ("permission
 * denied", "Permission denied", "PERMISSION DENIED"). */
static bool contains_nocase(const char *hay, size_t len, const char *needle) {
        size_t n = strlen(needle);
        for (size_t i = 0; n <= len && i <= len - n; i++)
                if (strncasecmp(hay + i, needle, n) == 0)
                        return true;
        return false;
}

/* Words besides the hints with which a command says the sandbox's refusal stopped it: the
 * proxy's 403 ("CONNECT tunnel failed, response 403"), a refused connect, EPERM/EACCES in a
 * language runtime's own words. */
static const char *const refusal_words[] = { "denied", "not permitted", "refused", "forbidden",
                                             "proxy", " 403", "eacces", "eperm", "erofs",
                                             "read-only", "no space left", "resource temporarily" };

/* Counts each hint kind at most once per line. */
static void scan_hints(explain_scan *s, const char *line, size_t len) {
        for (size_t i = 0; i < ELEMENTSOF(refusal_words) && !s->refusal_words; i++)
                s->refusal_words = contains_nocase(line, len, refusal_words[i]);
        for (unsigned k = 0; k < EXPLAIN_HINT_KINDS; k++) {
                const char *needle = explain_hint_defs[k].needle;
                if ((s->line_kinds & (1u << k)) || !contains_nocase(line, len, needle))
                        continue;
                s->refusal_words = true;
                s->line_kinds |= 1u << k;
                /* Kinds sharing a name (three spellings of a DNS failure) share the first slot. */
                unsigned slot = k;
                for (unsigned j = 0; j < k; j++)
                        if (strcmp(explain_hint_defs[j].kind, explain_hint_defs[k].kind) == 0) {
                                slot = j;
                                break;
                        }
                explain_hint *h = &s->hints[slot];
                if (h->count++ == 0) {
                        char *q = explain_clean_text(line, len, EXPLAIN_QUOTE_MAX);
                        (void) snprintf(h->line, sizeof(h->line), "%s", q ? q : "");
                        free(q);
                }
        }
}

/* The current line is complete. cordon's own lines ("cordon: ...": warnings, denied lines, the
 * fatal line) are not hints: they already say what they are. */
static void scan_line_end(explain_scan *s) {
        bool own = s->len >= 8 && memcmp(s->line, "cordon: ", 8) == 0 && !s->overlong;
        if (!own)
                scan_hints(s, s->line, s->len);
        if (s->len > 0 || s->overlong) {
                s->last_len = s->overlong ? 0 : s->len;
                memcpy(s->last, s->line, s->len);
        }
        s->len = 0;
        s->overlong = false;
        s->line_kinds = 0;
}

/* A line longer than the buffer is scanned in pieces that overlap by 63 bytes, so a needle
 * (< 64 bytes) crossing a boundary is still found; per-line counting keeps it from counting
 * twice. */
static void scan_feed(explain_scan *s, const char *data, size_t len) {
        s->used |= len > 0; /* no bytes: as if none were given (one call or many, the same) */
        for (size_t i = 0; i < len; i++) {
                if (data[i] == '\n') {
                        scan_line_end(s);
                        continue;
                }
                if (s->len == sizeof(s->line)) {
                        scan_hints(s, s->line, s->len);
                        memmove(s->line, s->line + s->len - 63, 63);
                        s->len = 63;
                        s->overlong = true;
                }
                s->line[s->len++] = data[i];
        }
}

static void scan_flush(explain_scan *s) {
        if (s->len > 0 || s->overlong)
                scan_line_end(s);
}

int cordon_explanation_add_stderr(cordon_explanation *x, const char *data, size_t len) {
        if (!x || (!data && len))
                return -EINVAL;
        if (x->finished)
                return -EALREADY;
        scan_feed(&x->given, data, len);
        return 0;
}

int cordon_explanation_set_exit_status(cordon_explanation *x, int status) {
        if (!x || status < 0 || status > 255)
                return -EINVAL;
        if (x->finished)
                return -EALREADY;
        x->has_status = true;
        x->status = status;
        return 0;
}

/* ---- events ------------------------------------------------------------------------------- */

typedef struct line_ctx {
        cordon_explanation *x;
        cordon_error *err;
} line_ctx;

_printf_(2, 3) static int bad_line(line_ctx *c, const char *fmt, ...) {
        char what[512];
        va_list ap;
        va_start(ap, fmt);
        (void) vsnprintf(what, sizeof(what), fmt, ap);
        va_end(ap);
        return cordon_set_error(c->err, CORDON_USAGE, EBADMSG,
                                "events line %llu: %s; give the file 'cordon run --events' wrote",
                                (unsigned long long) c->x->line_no, what);
}

/* A string member, cleaned; "" when absent. -EBADMSG when present with another type. */
static int get_text(line_ctx *c, json_t *o, const char *key, char **ret) {
        json_t *j = json_object_get(o, key);
        if (j && !json_is_string(j))
                return bad_line(c, "\"%s\" is not a string", key);
        *ret = explain_clean_text(j ? json_string_value(j) : "", j ? json_string_length(j) : 0,
                                  EXPLAIN_TEXT_MAX);
        return *ret ? 0 : -ENOMEM;
}

/* "YYYY-MM-DDTHH:MM:SS.mmmZ" → milliseconds since the epoch, or -1. */
static int64_t parse_time(const char *s) {
        struct tm tm = { 0 };
        int ms = 0, n = 0;
        if (!s || sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d.%3dZ%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                         &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms, &n) != 7 ||
            n != 24 || s[n] != '\0')
                return -1;
        tm.tm_year -= 1900;
        tm.tm_mon -= 1;
        time_t t = timegm(&tm);
        return t < 0 ? -1 : (int64_t) t * 1000 + ms;
}

static int on_starting(line_ctx *c, json_t *o) {
        cordon_explanation *x = c->x;
        run_reset(x);
        x->started = true;
        x->start_ms = parse_time(json_string_value(json_object_get(o, "time")));
        int r = get_text(c, o, "sessionId", &x->session_id);
        return r < 0 ? r : get_text(c, o, "backend", &x->requested_backend);
}

static int on_ready(line_ctx *c, json_t *o) {
        free(c->x->backend);
        c->x->backend = NULL;
        return get_text(c, o, "backend", &c->x->backend);
}

/* The entry for (action, target, rule): the last one first, since a storm repeats itself. */
static explain_violation *find_violation(cordon_explanation *x, const explain_violation *k) {
        for (size_t i = x->n_v; i-- > 0;) {
                explain_violation *v = &x->v[i];
                if (strcmp(v->action, k->action) == 0 && strcmp(v->target, k->target) == 0 &&
                    strcmp(v->rule, k->rule) == 0)
                        return v;
        }
        return NULL;
}

/* A producer that folds a storm of refusals reports how many in raw.count. */
static uint64_t raw_count(json_t *raw) {
        json_t *n = json_object_get(raw, "count");
        return json_is_integer(n) && json_integer_value(n) > 0 ? (uint64_t) json_integer_value(n)
                                                                : 1;
}

static int on_violation(line_ctx *c, json_t *o) {
        cordon_explanation *x = c->x;
        json_t *raw = json_object_get(o, "raw");
        if (raw && !json_is_object(raw))
                return bad_line(c, "\"raw\" is not an object");
        explain_violation k = { .count = raw_count(raw) };
        int r = get_text(c, o, "action", &k.action);
        if (r >= 0)
                r = get_text(c, o, "target", &k.target);
        if (r >= 0)
                r = get_text(c, raw, "rule", &k.rule);
        if (r >= 0)
                r = get_text(c, raw, "syscall", &k.syscall);
        if (r >= 0)
                r = get_text(c, raw, "reason", &k.reason);
        if (r >= 0)
                r = get_text(c, raw, "method", &k.method);
        if (r >= 0)
                r = get_text(c, raw, "path", &k.path);
        if (r >= 0)
                r = get_text(c, raw, "ref", &k.ref);
        explain_violation *v = r >= 0 ? find_violation(x, &k) : NULL;
        if (v || r < 0 || x->n_v >= EXPLAIN_VIOLATIONS_MAX) {
                if (v)
                        v->count += k.count;
                else if (r >= 0)
                        x->v_not_listed += k.count;
                violation_done(&k);
                return r;
        }
        explain_violation *nv = reallocarray(x->v, x->n_v + 1, sizeof(*nv));
        if (!nv) {
                violation_done(&k);
                return -ENOMEM;
        }
        x->v = nv;
        x->v[x->n_v++] = k;
        return 0;
}

/* stderr capture events feed the second scanner: the command's own output, never cordon's. */
static int on_output(line_ctx *c, json_t *o, bool is_stderr) {
        json_t *data = json_object_get(o, "data");
        if (!json_is_string(data))
                return bad_line(c, "\"data\" is missing or not a string");
        if (!is_stderr)
                return 0;
        const char *enc = json_string_value(json_object_get(o, "encoding"));
        if (!enc) {
                scan_feed(&c->x->captured, json_string_value(data), json_string_length(data));
                return 0;
        }
        if (strcmp(enc, "base64") != 0)
                return bad_line(c, "unknown \"encoding\"");
        /* events.c encodes with util/base64.h, so the strict decoder reads every chunk cordon
         * wrote; a non-canonical text was not written by cordon. */
        size_t n = 0;
        _cleanup_free_ char *bytes = NULL;
        int r = base64_decode(json_string_value(data), json_string_length(data), &bytes, &n);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return bad_line(c, "\"data\" is not base64");
        scan_feed(&c->x->captured, bytes, n);
        return 0;
}

/* The stream ends with exactly one terminal event per run (events.h); a second one before the
 * next "starting" means the input is not one cordon stream. */
static int begin_terminal(line_ctx *c, json_t *o, explain_terminal t) {
        if (c->x->terminal != TERMINAL_NONE)
                return bad_line(c, "a second terminal event (exit, killed or error) in one run");
        c->x->terminal = t;
        c->x->end_ms = parse_time(json_string_value(json_object_get(o, "time")));
        return 0;
}

static int on_exit_event(line_ctx *c, json_t *o) {
        json_t *code = json_object_get(o, "exitCode");
        if (!json_is_integer(code) || json_integer_value(code) < 0 ||
            json_integer_value(code) > 255)
                return bad_line(c, "\"exitCode\" is missing or not an integer 0-255");
        int r = begin_terminal(c, o, TERMINAL_EXIT);
        if (r < 0)
                return r;
        c->x->exit_code = (int) json_integer_value(code);
        if (!json_object_get(o, "signal"))
                return 0;
        return get_text(c, o, "signal", &c->x->signal);
}

static int on_killed(line_ctx *c, json_t *o) {
        int r = begin_terminal(c, o, TERMINAL_KILLED);
        return r < 0 ? r : get_text(c, o, "reason", &c->x->killed_reason);
}

static int on_error_event(line_ctx *c, json_t *o) {
        int r = begin_terminal(c, o, TERMINAL_ERROR);
        if (r >= 0)
                r = get_text(c, o, "code", &c->x->error_code);
        if (r >= 0)
                r = get_text(c, o, "message", &c->x->error_message);
        if (r >= 0 && !c->x->error_code[0])
                return bad_line(c, "an error event without a \"code\"");
        return r;
}

static int on_line(cordon_explanation *x, const char *line, size_t len, cordon_error *err) {
        line_ctx c = { .x = x, .err = err };
        x->line_no++;
        if (len == 0)
                return bad_line(&c, "empty line");
        json_error_t je;
        json_t *o = json_loadb(line, len, JSON_REJECT_DUPLICATES, &je);
        if (!o || !json_is_object(o)) {
                json_decref(o);
                return o ? bad_line(&c, "not a JSON object") : bad_line(&c, "%s", je.text);
        }
        const char *type = json_string_value(json_object_get(o, "type"));
        int r = 0;
        if (!type)
                r = bad_line(&c, "no string \"type\"");
        else if (strcmp(type, "starting") == 0)
                r = on_starting(&c, o);
        else if (strcmp(type, "ready") == 0)
                r = on_ready(&c, o);
        else if (strcmp(type, "violation") == 0)
                r = on_violation(&c, o);
        else if (strcmp(type, "stdout") == 0 || strcmp(type, "stderr") == 0)
                r = on_output(&c, o, type[3] == 'e');
        else if (strcmp(type, "exit") == 0)
                r = on_exit_event(&c, o);
        else if (strcmp(type, "killed") == 0)
                r = on_killed(&c, o);
        else if (strcmp(type, "error") == 0)
                r = on_error_event(&c, o);
        /* else: a type from a later version; skipped */
        json_decref(o);
        if (r == -ENOMEM)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, ENOMEM, "out of memory");
        return r;
}

/* Appends to the partial line; a line longer than EXPLAIN_EVENT_LINE_MAX is refused. */
static int carry_append(cordon_explanation *x, const char *data, size_t len, cordon_error *err) {
        if (x->carry_len + len > EXPLAIN_EVENT_LINE_MAX)
                return cordon_set_error(err, CORDON_USAGE, EBADMSG,
                                        "events line %llu: longer than %u bytes; give the file "
                                        "'cordon run --events' wrote",
                                        (unsigned long long) x->line_no + 1,
                                        EXPLAIN_EVENT_LINE_MAX);
        if (!x->carry && !(x->carry = malloc(EXPLAIN_EVENT_LINE_MAX)))
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, ENOMEM, "out of memory");
        memcpy(x->carry + x->carry_len, data, len);
        x->carry_len += len;
        return 0;
}

int cordon_explanation_add_events(cordon_explanation *x, const char *data, size_t len,
                                  cordon_error *err) {
        if (!x || (!data && len))
                return cordon_set_error(err, CORDON_USAGE, EINVAL, "no explanation to feed");
        if (x->finished)
                return cordon_set_error(err, CORDON_USAGE, EALREADY, "already finished");
        while (len > 0) {
                const char *nl = memchr(data, '\n', len);
                size_t part = nl ? (size_t) (nl - data) : len;
                int r = 0;
                if (!nl)
                        return carry_append(x, data, part, err);
                if (x->carry_len == 0)
                        r = on_line(x, data, part, err); /* the whole line is here: no copy */
                else if ((r = carry_append(x, data, part, err)) >= 0) {
                        r = on_line(x, x->carry, x->carry_len, err);
                        x->carry_len = 0;
                }
                if (r < 0)
                        return r;
                data += part + 1;
                len -= part + 1;
        }
        return 0;
}

/* ---- classification ----------------------------------------------------------------------- */

/* The last line of the given stderr when it is exactly "cordon: fatal: CODE: message" with CODE
 * in the closed set (docs/design/errors.md). Only the last line: cordon prints it after everything
 * else, and a command that prints such a line earlier does not end the stream with it. */
static bool parse_fatal(const explain_scan *s, const char **ret_code, char **ret_message) {
        static const char prefix[] = "cordon: fatal: ";
        size_t n = s->last_len;
        if (n < sizeof(prefix) || memcmp(s->last, prefix, sizeof(prefix) - 1) != 0)
                return false;
        const char *code = s->last + sizeof(prefix) - 1;
        size_t code_len = strspn(code, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_");
        const char *msg = code + code_len;
        if ((size_t) (msg - s->last) + 3 > n || msg[0] != ':' || msg[1] != ' ')
                return false;
        for (int c = CORDON_OK + 1; c < _CORDON_CODE_MAX; c++) {
                const char *name = cordon_code_name((cordon_code) c);
                if (strlen(name) == code_len && memcmp(name, code, code_len) == 0) {
                        *ret_code = name;
                        *ret_message = explain_clean_text(msg + 2, n - (size_t) (msg + 2 - s->last),
                                                          EXPLAIN_TEXT_MAX);
                        return *ret_message != NULL;
                }
        }
        return false;
}

static uint64_t refusals(const cordon_explanation *x) {
        uint64_t n = x->v_not_listed;
        for (size_t i = 0; i < x->n_v; i++)
                n += x->v[i].count;
        return n;
}

_printf_(3, 4) static int set_verdict(cordon_explanation *x, cordon_outcome o, const char *fmt,
                                      ...) {
        va_list ap;
        va_start(ap, fmt);
        free(x->reason);
        int r = vasprintf(&x->reason, fmt, ap);
        va_end(ap);
        x->outcome = o;
        if (r < 0) {
                x->reason = NULL;
                return -ENOMEM;
        }
        return 0;
}

/* The inferred hints come from the stderr the caller gave, else from the captured one. A death
 * by SIGSYS counts as a "Bad system call" line (the shell's words for it). */
static void pick_hints(cordon_explanation *x) {
        explain_scan *s = x->given.used ? &x->given : x->captured.used ? &x->captured : NULL;
        if (x->signal && strcmp(x->signal, "SIGSYS") == 0) {
                if (!s)
                        s = &x->given;
                explain_hint *h = &s->hints[EXPLAIN_HINT_KINDS - 1];
                if (h->count++ == 0)
                        (void) snprintf(h->line, sizeof(h->line), "(the command died of SIGSYS)");
        }
        x->hint_source = s;
}

/* Whether the refusals observed plausibly made the command fail: not when the shell could not
 * find the command (127), nor when its error output (given or captured) has no word a refusal
 * would cause (a curl 404 after a refused, unrelated lookup). Without any error output there is
 * nothing to tell them apart: plausible. */
static bool refusal_plausible(const cordon_explanation *x, int status) {
        if (status == 127 && !x->signal)
                return false;
        const explain_scan *s = x->given.used ? &x->given : x->captured.used ? &x->captured : NULL;
        return !s || s->refusal_words || (x->signal && strcmp(x->signal, "SIGSYS") == 0);
}

/* ok / command-failed / sandbox-denied from an exit status (the command's own). */
static int verdict_by_status(cordon_explanation *x, int status) {
        uint64_t n = refusals(x);
        char how[64];
        if (x->signal)
                (void) snprintf(how, sizeof(how), "died of %s (status %d)", x->signal, status);
        else
                (void) snprintf(how, sizeof(how), "exited with status %d", status);
        x->result_exit_code = status;
        if (status == 0)
                return set_verdict(x, CORDON_OUTCOME_OK, "the command %s%s", how,
                                   n ? "; it went on after the refusals listed" : "");
        if (n > 0 && !refusal_plausible(x, status)) {
                pick_hints(x);
                return set_verdict(x, CORDON_OUTCOME_COMMAND_FAILED,
                                   status == 127 ? "the command %s (not found); the %llu "
                                                   "refusal%s listed did not cause that"
                                                 : "the command %s; its error output points "
                                                   "to none of the %llu refusal%s listed",
                                   how, (unsigned long long) n, n == 1 ? "" : "s");
        }
        if (n > 0)
                return set_verdict(x, CORDON_OUTCOME_SANDBOX_DENIED,
                                   "the command %s after the sandbox refused %llu operation%s",
                                   how, (unsigned long long) n, n == 1 ? "" : "s");
        pick_hints(x);
        return set_verdict(x, CORDON_OUTCOME_COMMAND_FAILED,
                           "the command %s; the sandbox observed no refusal", how);
}

/* A limit or a request ended the run ("killed" event, or a TIMEOUT/KILLED fatal line). */
static int verdict_killed(cordon_explanation *x) {
        const char *why = x->killed_reason ? x->killed_reason : "";
        x->result_exit_code = x->has_status ? x->status : -1;
        if (strcmp(why, "manual") == 0)
                return set_verdict(x, CORDON_OUTCOME_COMMAND_FAILED,
                                   "the run was stopped on request (killed: manual); neither "
                                   "the command nor the sandbox's rules ended it");
        const char *change = explain_killed_change(why);
        if (change && !(x->killed_change = strdup(change)))
                return -ENOMEM;
        return set_verdict(x, CORDON_OUTCOME_SANDBOX_DENIED,
                           "the sandbox killed the command and everything it started: %s",
                           strcmp(why, "timeout") == 0 ? "limits.timeout was reached"
                           : strcmp(why, "oom") == 0   ? "limits.memory was exhausted"
                                                       : "a limit was reached");
}

/* EXEC_FAILED with ENOENT: the sandbox started and the command named does not exist there (a
 * typo, a tool not installed): the command's failure, not cordon's. */
static bool command_not_found(const cordon_explanation *x) {
        static const char enoent[] = ": No such file or directory";
        size_t n = x->error_message ? strlen(x->error_message) : 0;
        return x->error_code && strcmp(x->error_code, "EXEC_FAILED") == 0 &&
               n >= sizeof(enoent) - 1 &&
               strcmp(x->error_message + n - (sizeof(enoent) - 1), enoent) == 0;
}

static int verdict_broken(cordon_explanation *x) {
        /* `cordon run` exits 125 whenever it failed (docs/design/errors.md). */
        x->result_exit_code = x->has_status ? x->status : 125;
        if (command_not_found(x))
                return set_verdict(x, CORDON_OUTCOME_COMMAND_FAILED,
                                   "the command was not found inside the sandbox (%s): %s",
                                   x->error_code, x->error_message);
        return set_verdict(x, CORDON_OUTCOME_SANDBOX_BROKEN, "cordon itself failed (%s)%s: %s",
                           x->error_code,
                           x->error_from_stderr ? ", says its fatal line" : "",
                           x->error_message);
}

/* No terminal event: the exit status and cordon's fatal line are all there is. A fatal line
 * counts only with status 125 (or none given): cordon exits 125 whenever it prints one. */
static int verdict_without_events(cordon_explanation *x, cordon_error *err) {
        const char *code = NULL;
        char *message = NULL;
        if ((!x->has_status || x->status == 125) && parse_fatal(&x->given, &code, &message)) {
                x->error_from_stderr = true;
                x->error_message = message;
                if (!(x->error_code = strdup(code)))
                        return -ENOMEM;
                if (strcmp(code, "TIMEOUT") == 0 || strcmp(code, "KILLED") == 0) {
                        x->killed_reason = strdup(code[0] == 'T' ? "timeout" : "");
                        return x->killed_reason ? verdict_killed(x) : -ENOMEM;
                }
                return verdict_broken(x);
        }
        if (!x->has_status)
                return cordon_set_error(err, CORDON_USAGE, ENODATA,
                                        "nothing tells how the run ended: no exit, killed or "
                                        "error event, no exit status and no fatal line; give "
                                        "the events file of a finished run, or --status");
        return verdict_by_status(x, x->status);
}

static int classify(cordon_explanation *x, cordon_error *err) {
        switch (x->terminal) {
        case TERMINAL_ERROR:
                return verdict_broken(x);
        case TERMINAL_KILLED:
                return verdict_killed(x);
        case TERMINAL_EXIT:
                /* Events are cordon's own record of the run: a mismatch means two runs. */
                if (x->has_status && x->status != x->exit_code)
                        return cordon_set_error(err, CORDON_USAGE, EINVAL,
                                                "the exit status %d contradicts the events' "
                                                "exitCode %d: are they from the same run?",
                                                x->status, x->exit_code);
                return verdict_by_status(x, x->exit_code);
        case TERMINAL_NONE:
        default:
                return verdict_without_events(x, err);
        }
}

static void publish(explain_violation *v) {
        v->pub = (cordon_explained_violation) {
                .action = v->action, .target = v->target, .rule = v->rule,
                .syscall = v->syscall, .count = v->count, .summary = v->summary,
                .change = v->change, .why = v->why, .reason = v->reason,
        };
}

int cordon_explanation_finish(cordon_explanation *x, cordon_error *err) {
        if (!x)
                return cordon_set_error(err, CORDON_USAGE, EINVAL, "no explanation to finish");
        if (x->finished)
                return cordon_set_error(err, CORDON_USAGE, EALREADY, "already finished");
        if (x->carry_len > 0)
                return cordon_set_error(err, CORDON_USAGE, EBADMSG,
                                        "events line %llu: cut off (no newline at the end); the "
                                        "run may still be going on or its writer was killed",
                                        (unsigned long long) x->line_no + 1);
        scan_flush(&x->given);
        scan_flush(&x->captured);
        int r = classify(x, err);
        for (size_t i = 0; r >= 0 && i < x->n_v; i++) {
                r = explain_advise(&x->v[i]);
                x->network_note |= x->v[i].network;
                publish(&x->v[i]);
        }
        if (r == -ENOMEM)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, ENOMEM, "out of memory");
        if (r < 0)
                return r;
        for (unsigned k = 0; x->hint_source && k < EXPLAIN_HINT_KINDS; k++)
                x->network_note |= x->hint_source->hints[k].count && explain_hint_defs[k].network;
        x->finished = true;
        return 0;
}

/* ---- accessors ---------------------------------------------------------------------------- */

cordon_outcome cordon_explanation_outcome(const cordon_explanation *x) {
        return x && x->finished ? x->outcome : CORDON_OUTCOME_SANDBOX_BROKEN;
}

size_t cordon_explanation_violation_count(const cordon_explanation *x) {
        return x && x->finished ? x->n_v : 0;
}

const cordon_explained_violation *cordon_explanation_violation(const cordon_explanation *x,
                                                               size_t i) {
        return x && x->finished && i < x->n_v ? &x->v[i].pub : NULL;
}

int cordon_explain(const char *events, size_t events_len, int exit_status,
                   const char *stderr_text, size_t stderr_len, cordon_explanation **ret,
                   cordon_error *err) {
        cordon_explanation *x = NULL;
        if (!ret)
                return cordon_set_error(err, CORDON_USAGE, EINVAL, "cordon_explain: ret is NULL");
        *ret = NULL;
        int r = cordon_explanation_new(&x, err);
        if (r < 0)
                return r;
        r = events ? cordon_explanation_add_events(x, events, events_len, err) : 0;
        if (r >= 0 && stderr_text)
                r = cordon_explanation_add_stderr(x, stderr_text, stderr_len);
        if (r >= 0 && exit_status >= 0 && cordon_explanation_set_exit_status(x, exit_status) < 0)
                r = cordon_set_error(err, CORDON_USAGE, EINVAL, "exit status %d is not 0-255",
                                     exit_status);
        if (r >= 0)
                r = cordon_explanation_finish(x, err);
        if (r < 0) {
                cordon_explanation_free(x);
                return r;
        }
        *ret = x;
        return 0;
}
