/* SPDX-License-Identifier: Apache-2.0 */
/* The system log's stream of this run's refusals (docs/design/seatbelt.md, "Violation reports"):
 * `log stream --style ndjson --predicate ...` started before the command and read while it runs
 * (seatbelt-exec.h: on_watch), its lines handed to the parser (sandbox-log.h). Plain POSIX with
 * the program as a parameter, so Linux tests run it against a stand-in for /usr/bin/log. */
#pragma once

#include <sys/types.h>

#include "seatbelt/sandbox-log.h"

#define SEATBELT_LOG_PROGRAM "/usr/bin/log"

typedef struct seatbelt_log_stream {
        pid_t pid;                   /* -1: not running */
        int fd;                      /* its stdout; -1: closed */
        seatbelt_log_reader *reader; /* owned */
} seatbelt_log_stream;

/* Starts `program` (SEATBELT_LOG_PROGRAM) streaming the Sandbox sender's tagged messages for
 * `session`, and waits (at most `ready_ms`) for the first line it prints, its "Filtering the log
 * data ..." header: a refusal the kernel logs after that is in the stream. `fn` gets each of the
 * session's violations. Returns 0, or -errno with nothing left running (the program is missing,
 * exits or prints nothing in time). */
int seatbelt_log_stream_start(seatbelt_log_stream *s, const char *program, const char *session,
                              unsigned ready_ms, seatbelt_violation_fn fn, void *userdata);
/* Reads what is there (for seatbelt_exec_params.on_watch, with the stream as userdata); false
 * once the stream has ended. */
bool seatbelt_log_stream_read(void *stream);
/* After the command: reads until the stream is quiet for `quiet_ms` (the log delivers a refusal
 * some milliseconds after it happened) or `max_ms` have passed, then ends the program. Returns
 * how many of the session's violations were read in all. */
unsigned seatbelt_log_stream_stop(seatbelt_log_stream *s, unsigned quiet_ms, unsigned max_ms);
