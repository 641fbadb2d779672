/* SPDX-License-Identifier: Apache-2.0 */
/* Formatting of run events as JSON lines (see events.h). */
#include "run/events.h"

#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <time.h>

#include "util/base64.h"
#include "util/fork-gate.h"
#include "util/util.h"

/* A string as a JSON value. JSON text must be UTF-8, but paths and messages are bytes: a string
 * jansson refuses (invalid UTF-8) is emitted with every byte >= 0x80 replaced by '?', so an event
 * is never dropped for its target's spelling. The replacement is lossy, never silent: the schema
 * documents it. */
static json_t *text(const char *s) {
        json_t *j = json_string(s ? s : "");
        if (j)
                return j;
        char buf[4096];
        size_t n = 0;
        for (; s[n] && n + 1 < sizeof(buf); n++)
                buf[n] = (unsigned char) s[n] >= 0x80 ? '?' : s[n];
        buf[n] = '\0';
        return json_string(buf);
}

/* The civil (proleptic Gregorian) date of a count of days since 1970-01-01, by the era
 * arithmetic of a 400-year cycle (146097 days). */
static void civil_from_days(int64_t days, int64_t *year, unsigned *month, unsigned *day) {
        days += 719468; /* from 0000-03-01, so a year ends with February and its leap day */
        int64_t era = (days >= 0 ? days : days - 146096) / 146097;
        unsigned doe = (unsigned) (days - era * 146097);                        /* [0, 146096] */
        unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;   /* [0, 399] */
        unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);                  /* [0, 365] */
        unsigned mp = (5 * doy + 2) / 153;                                       /* March = 0 */
        *day = doy - (153 * mp + 2) / 5 + 1;
        *month = mp < 10 ? mp + 3 : mp - 9;
        *year = (int64_t) yoe + era * 400 + (*month <= 2);
}

/* Not gmtime_r() and strftime(): they take glibc's time-zone lock, and this runs in processes
 * forked from a multi-threaded caller without exec (a session host forked by cordon mcp or
 * cordond while another of their threads formatted a time): a lock held across the fork is
 * never released in the child, whose first event then waited forever. This takes no lock. */
void events_format_time(char *buf, size_t size, int64_t sec, long nsec) {
        int64_t days = sec >= 0 ? sec / 86400 : -((-sec + 86399) / 86400);
        int64_t rem = sec - days * 86400;
        int64_t year;
        unsigned month, day;
        civil_from_days(days, &year, &month, &day);
        if (year < 0 || year > 9999) {
                (void) snprintf(buf, size, "1970-01-01T00:00:00.000Z");
                return;
        }
        /* Milliseconds clamped to 0..999 so the field is always three digits. */
        int ms = nsec < 0 ? 0 : nsec >= 1000000000L ? 999 : (int) (nsec / 1000000);
        (void) snprintf(buf, size, "%04d-%02u-%02uT%02d:%02d:%02d.%03dZ", (int) year, month, day,
                        (int) (rem / 3600), (int) (rem / 60 % 60), (int) (rem % 60), ms);
}

void events_init(events *ev, cordon_event_fn fn, void *userdata, const char *session_id) {
        *ev = (events) { .fn = fn, .userdata = userdata };
        if (!ev->fn)
                return; /* no listener: nothing will carry the id, skip the getrandom() */
        if (session_id && session_id[0]) {
                (void) snprintf(ev->session_id, sizeof(ev->session_id), "%s", session_id);
                return;
        }
        uint8_t b[16] = { 0 };
        /* Not a secret, only unique: without entropy yet, the clock and pid stand in. */
        if (getrandom(b, sizeof(b), GRND_NONBLOCK) != (ssize_t) sizeof(b)) {
                struct timespec ts;
                (void) clock_gettime(CLOCK_REALTIME, &ts);
                uint64_t mix[2] = { (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec,
                                    (uint64_t) getpid() };
                memcpy(b, mix, sizeof(b));
        }
        b[6] = (uint8_t) ((b[6] & 0x0f) | 0x40); /* version 4 */
        b[8] = (uint8_t) ((b[8] & 0x3f) | 0x80); /* RFC 4122 variant */
        char *o = ev->session_id;
        for (size_t i = 0; i < sizeof(b); i++) {
                if (i == 4 || i == 6 || i == 8 || i == 10)
                        *o++ = '-';
                o += sprintf(o, "%02x", b[i]);
        }
}

/* Adds type, sessionId and time to `fields` (consumed), formats the line and hands it over. A
 * line that would exceed EVENTS_LINE_MAX is not emitted (inputs are bounded well below it: paths
 * by PATH_MAX, messages by cordon_error.message). */
static void emit(const events *ev, const char *type, json_t *fields) {
        if (!fields)
                return;
        struct timespec ts;
        (void) clock_gettime(CLOCK_REALTIME, &ts);
        char when[40];
        events_format_time(when, sizeof(when), ts.tv_sec, ts.tv_nsec);
        json_t *o = json_pack("{s:s, s:o, s:s}", "type", type, "sessionId",
                              text(ev->session_id), "time", when);
        if (o && json_object_update(o, fields) == 0) {
                char *line = malloc(EVENTS_LINE_MAX);
                size_t n = line ? json_dumpb(o, line, EVENTS_LINE_MAX - 1,
                                             JSON_COMPACT | JSON_PRESERVE_ORDER) : 0;
                if (n > 0 && n < EVENTS_LINE_MAX - 1) {
                        line[n++] = '\n';
                        FORK_GATE_PAUSED(ev->fn(ev->userdata, line, n)); /* the caller's code */
                }
                free(line);
        }
        json_decref(o);
        json_decref(fields);
}

void events_starting(const events *ev, cordon_backend requested) {
        if (ev->fn)
                emit(ev, "starting", json_pack("{s:s}", "backend",
                                               cordon_backend_to_string(requested)));
}

void events_ready(const events *ev, cordon_backend used) {
        if (ev->fn)
                emit(ev, "ready", json_pack("{s:s}", "backend", cordon_backend_to_string(used)));
}

void events_escalation(const events *ev, const char *const *fields, size_t n) {
        if (!ev->fn)
                return;
        json_t *a = json_array();
        for (size_t i = 0; a && i < n; i++)
                (void) json_array_append_new(a, text(fields[i]));
        emit(ev, "escalation", a ? json_pack("{s:o,s:b}", "fields", a, "approved", 1) : NULL);
}

void events_violation(const events *ev, const cordon_violation *v) {
        if (!ev->fn)
                return;
        if (strcmp(v->action, "repository") == 0) {
                /* Not a refusal: a repository created during the run (docs/design/git-repos.md),
                 * or, with an empty path, how many more there were. */
                emit(ev, "repository", v->target[0] ? json_pack("{s:o}", "path", text(v->target))
                                                    : json_pack("{s:I}", "more",
                                                                (json_int_t) v->count));
                return;
        }
        json_t *f = json_pack("{s:s, s:o, s:{s:o, s:o}}", "action", v->action, "target",
                              text(v->target), "raw", "syscall", text(v->syscall), "rule",
                              text(v->rule));
        /* An aggregate of a rate-limited storm says how many refusals it stands for. */
        if (f && v->count > 1)
                (void) json_object_set_new(json_object_get(f, "raw"), "count",
                                           json_integer((json_int_t) v->count));
        /* A deny entry's reason, for a harness to show the model (policy-reasons.c). */
        if (f && v->reason)
                (void) json_object_set_new(json_object_get(f, "raw"), "reason", text(v->reason));
        /* A refused request (network-request): what it asked. */
        if (f && v->method)
                (void) json_object_set_new(json_object_get(f, "raw"), "method", text(v->method));
        if (f && v->path)
                (void) json_object_set_new(json_object_get(f, "raw"), "path", text(v->path));
        if (f && v->ref)
                (void) json_object_set_new(json_object_get(f, "raw"), "ref", text(v->ref));
        emit(ev, "violation", f);
}

/* How long `data` is once escaped in a JSON string: "\n" and friends take 2 bytes, other
 * control characters 6 ("\u001b"). */
static size_t escaped_len(const char *data, size_t len) {
        size_t n = 0;
        for (size_t i = 0; i < len; i++) {
                unsigned char c = (unsigned char) data[i];
                bool short_escape = c == '\n' || c == '\r' || c == '\t' || c == '\b' ||
                                    c == '\f' || c == '"' || c == '\\';
                n += short_escape ? 2 : c < 0x20 ? 6 : 1;
        }
        return n;
}

/* Text when the chunk is valid UTF-8 (jansson checks) and its escaped form keeps the line under
 * EVENTS_LINE_MAX; base64 otherwise (4/3 of at most 16 KiB always fits). Nothing is dropped and
 * nothing is altered: a consumer gets the exact bytes back either way. */
void events_output(const events *ev, bool is_stderr, const char *data, size_t len) {
        if (!ev->fn || len == 0 || len > 16384)
                return;
        json_t *s = escaped_len(data, len) <= EVENTS_LINE_MAX / 4 * 3 ? json_stringn(data, len)
                                                                        : NULL;
        if (s) {
                emit(ev, is_stderr ? "stderr" : "stdout", json_pack("{s:o}", "data", s));
                return;
        }
        char *b64 = malloc(len / 3 * 4 + 5);
        if (b64) {
                base64_encode_into((const unsigned char *) data, len, b64);
                emit(ev, is_stderr ? "stderr" : "stdout",
                     json_pack("{s:s, s:s}", "data", b64, "encoding", "base64"));
        }
        free(b64);
}

/* Marks the stream ended; returns whether this terminal event is the first (to be emitted). */
static bool end_stream(events *ev) {
        bool first = !ev->ended;
        ev->ended = true;
        return first && ev->fn;
}

void events_killed(events *ev, const char *reason) {
        if (end_stream(ev))
                emit(ev, "killed", json_pack("{s:s}", "reason", reason));
}

void events_exit(events *ev, int wait_status, int exit_code) {
        if (!end_stream(ev))
                return;
        json_t *f = json_pack("{s:i}", "exitCode", exit_code);
        if (f && WIFSIGNALED(wait_status)) {
                /* By name: signal numbers differ between architectures. */
                const char *abbrev = sigabbrev_np(WTERMSIG(wait_status));
                char name[32];
                (void) snprintf(name, sizeof(name), "SIG%s", abbrev ? abbrev : "UNKNOWN");
                (void) json_object_set_new(f, "signal", json_string(name));
        }
        emit(ev, "exit", f);
}

void events_error(events *ev, const cordon_error *err) {
        if (end_stream(ev))
                emit(ev, "error", json_pack("{s:s, s:o}", "code", cordon_code_name(err->code),
                                            "message", text(err->message)));
}

/* ---- the egress ask mode (docs/design/network.md, "Ask mode") ------------------------------- */

void events_egress_ask(const events *ev, uint32_t id, const char *protocol, const char *target,
                       uint64_t timeout_ms) {
        if (!ev->fn)
                return;
        emit(ev, "egress.ask",
             json_pack("{s:I, s:o, s:o, s:I}", "id", (json_int_t) id, "target", text(target),
                       "protocol", text(protocol), "timeoutMs", (json_int_t) timeout_ms));
}

void events_egress_answer(const events *ev, uint32_t id, const char *protocol, const char *target,
                          const char *answer) {
        if (!ev->fn)
                return;
        emit(ev, "egress.answer",
             json_pack("{s:I, s:o, s:o, s:s}", "id", (json_int_t) id, "target", text(target),
                       "protocol", text(protocol), "answer", answer));
}
