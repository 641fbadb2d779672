/* SPDX-License-Identifier: Apache-2.0 */
/* The events stream of one run (docs/events.schema.json, docs/events.schema.json): each event is
 * formatted as one line of compact JSON ending in '\n' and handed to the caller's cordon_event_fn.
 * Formatting only: this module does no I/O, so the library still never writes to a descriptor it
 * was not asked to. Every line is bounded by EVENTS_LINE_MAX bytes. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "cordon/cordon.h"

#define EVENTS_LINE_MAX 32768 /* bytes per line, '\n' included */
#define EVENTS_ID_MAX 257     /* POLICY_MAX_ID + NUL */

typedef struct events {
        cordon_event_fn fn;              /* NULL: every events_*() call is a no-op */
        void *userdata;
        char session_id[EVENTS_ID_MAX];  /* the policy's, or a generated random UUID */
        bool ended;                      /* a terminal event (exit, killed, error) was emitted */
} events;

/* Binds the stream to `fn` (NULL: no events) with `userdata` and fixes the session id:
 * `session_id` when non-NULL and non-empty, else a random version-4 UUID. */
void events_init(events *ev, cordon_event_fn fn, void *userdata, const char *session_id);

/* One call per event type; each emits exactly one line (or nothing when ev->fn is NULL). The
 * terminal ones (exit, killed, error) emit only the first time one of them is called, so a run
 * ends with exactly one terminal event even when a timeout races a lost report channel. */
void events_starting(const events *ev, cordon_backend requested);
void events_ready(const events *ev, cordon_backend used);
void events_violation(const events *ev, const cordon_violation *v);
/* An exec whose per-call policy widens its session's (cordond, docs/policy.md, "Layers and
 * resolution"): which fields, and that it was approved (an unapproved widening never runs). Before
 * "starting". */
void events_escalation(const events *ev, const char *const *fields, size_t n);
/* A chunk of the command's captured stdout or stderr (linux/capture.h), at most 16 KiB:
 * "data" as text when it is valid UTF-8, else base64 with "encoding": "base64". */
void events_output(const events *ev, bool is_stderr, const char *data, size_t len);
/* The ask mode: a question the proxy holds a connection for ("egress.ask"), and what it came to
 * ("egress.answer": "allow-once", "allow-session", "deny", "timeout" or "unanswered"). */
void events_egress_ask(const events *ev, uint32_t id, const char *protocol, const char *target,
                       uint64_t timeout_ms);
void events_egress_answer(const events *ev, uint32_t id, const char *protocol, const char *target,
                          const char *answer);
void events_killed(events *ev, const char *reason);
void events_exit(events *ev, int wait_status, int exit_code);
void events_error(events *ev, const cordon_error *err);

/* Formats "YYYY-MM-DDTHH:MM:SS.mmmZ" (UTC) for the realtime clock into buf (>= 25 bytes). */
void events_format_time(char *buf, size_t size, int64_t sec, long nsec);
