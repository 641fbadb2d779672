/* SPDX-License-Identifier: Apache-2.0 */
/* `cordon explain` and the end-of-run report of `cordon run` (see cmd-explain.h). */
#include "cli/cmd-explain.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"

#define EXIT_FATAL 125
#define TTY_LINES_MAX 20 /* a storm of refusals must not scroll the command's output away */
#define READ_CHUNK 65536

__attribute__((format(printf, 2, 3)))
static int fatal_code(cordon_code code, const char *fmt, ...) {
        cordon_error err = { .code = code };
        va_list ap;
        va_start(ap, fmt);
        (void) vsnprintf(err.message, sizeof(err.message), fmt, ap);
        va_end(ap);
        return cli_fatal(&err);
}

/* ---- cordon explain ----------------------------------------------------------------------- */

typedef int (*feed_fn)(cordon_explanation *x, const char *data, size_t len, cordon_error *err);

static int feed_events(cordon_explanation *x, const char *data, size_t len, cordon_error *err) {
        return cordon_explanation_add_events(x, data, len, err);
}

static int feed_stderr(cordon_explanation *x, const char *data, size_t len, cordon_error *err) {
        return cordon_explanation_add_stderr(x, data, len);
}

/* Streams a file (or fd N >= 0) into the decoder in bounded chunks: an events file with captured
 * output can be far larger than what the decoder keeps. */
static int feed_input(cordon_explanation *x, const char *what, const char *path, int fd,
                      feed_fn feed) {
        int own = path ? open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY) : -1;
        if (path && own < 0)
                return fatal_code(CORDON_USAGE, "%s: cannot open '%s': %s", what, CLI_QUOTE(path),
                                  strerror(errno));
        char *buf = malloc(READ_CHUNK);
        cordon_error err = { 0 };
        int r = buf ? 0 : -ENOMEM;
        while (r >= 0) {
                ssize_t n = read(path ? own : fd, buf, READ_CHUNK);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0) {
                        r = n < 0 ? -errno : 0;
                        break;
                }
                r = feed(x, buf, (size_t) n, &err);
        }
        free(buf);
        if (own >= 0)
                (void) close(own); /* read-only: close(2) has nothing to report */
        if (r >= 0)
                return 0;
        if (err.message[0])
                return cli_fatal(&err);
        return fatal_code(CORDON_USAGE, "%s: cannot read %s: %s", what,
                          path ? CLI_QUOTE(path) : "the descriptor", strerror(-r));
}

static int print_out(char *s) {
        int status = 0;
        if (!s)
                status = fatal_code(CORDON_LAUNCH_FAILED, "out of memory");
        else if (fputs(s, stdout) < 0 || fflush(stdout) != 0)
                status = fatal_code(CORDON_LAUNCH_FAILED, "cannot write to standard output: %s",
                                    strerror(errno));
        free(s);
        return status;
}

/* The verdict as `cordon explain` prints it: the JSON object on a line of its own, or the text. */
static int print_verdict(const cordon_explanation *x, bool json) {
        cordon_error err = { 0 };
        char *text = NULL, *line = NULL;
        int r = json ? cordon_explanation_to_json(x, &text, &err)
                     : cordon_explanation_to_text(x, &text, &err);
        if (r < 0)
                return cli_fatal(&err);
        if (!json)
                return print_out(text);
        if (asprintf(&line, "%s\n", text) < 0)
                line = NULL;
        free(text);
        return print_out(line);
}

int cli_cmd_explain(const cli_args *a) {
        cordon_explanation *x = NULL;
        cordon_error err = { 0 };
        if (cordon_explanation_new(&x, &err) < 0)
                return cli_fatal(&err);
        int status = 0;
        if (a->events_path || a->events_fd >= 0)
                status = feed_input(x, "--events", a->events_path, a->events_fd, feed_events);
        if (status == 0 && a->stderr_path)
                status = feed_input(x, "--stderr", a->stderr_path, -1, feed_stderr);
        if (status == 0 && a->status_set)
                (void) cordon_explanation_set_exit_status(x, a->status); /* 0-255: args.c */
        if (status == 0 && cordon_explanation_finish(x, &err) < 0)
                status = cli_fatal(&err);
        if (status == 0)
                status = print_verdict(x, a->json);
        cordon_explanation_free(x);
        return status;
}

/* ---- the end-of-run report of cordon run ------------------------------------------------- */

struct cli_run_report {
        cordon_event_fn inner;
        void *inner_userdata;
        cordon_explanation *x;
        cordon_error feed_err; /* the first line the decoder refused; code OK while none */
        bool tty_lines;
        int json_fd;           /* -1: no summary */
        bool json_owned;       /* opened from --json=FILE: closed at the end */
};

/* Like --events (commands.c): FILE is created 0600 (a summary names the paths and hosts the
 * command tried) and truncated; fd N must be open for writing. Both close-on-exec, so the
 * command cannot write a forged summary into it. Returns the fd, or -1 after the fatal line. */
static int open_summary(const cli_args *a, bool *owned, int *status) {
        *owned = a->json_path != NULL;
        if (a->json_path) {
                int fd = open(a->json_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY,
                              0600);
                if (fd < 0)
                        *status = fatal_code(CORDON_POLICY_INVALID, "--json: cannot create '%s': "
                                             "%s; give a writable file path or fd:N",
                                             CLI_QUOTE(a->json_path), strerror(errno));
                return fd;
        }
        int fl = fcntl(a->json_fd, F_GETFL);
        if (fl < 0 || (fl & O_ACCMODE) == O_RDONLY || fcntl(a->json_fd, F_SETFD, FD_CLOEXEC) < 0) {
                *status = fatal_code(CORDON_POLICY_INVALID, "--json: fd %d is %s; open it for "
                                     "writing before starting cordon (e.g. 3>summary.json)",
                                     a->json_fd, fl < 0 ? "not open" : "not writable");
                return -1;
        }
        return a->json_fd;
}

cli_run_report *cli_run_report_new(const cli_args *a, cordon_event_fn inner, void *inner_userdata,
                                   int *status) {
        *status = 0;
        bool want_json = a->json_path || a->json_fd >= 0;
        /* Refusal lines only for a person watching: on a pipe or in a file they would mix with
         * the command's own stderr that a program parses. */
        bool tty_lines = !a->quiet && isatty(STDERR_FILENO);
        if (!want_json && !tty_lines)
                return NULL;
        cli_run_report *r = calloc(1, sizeof(*r));
        if (!r) {
                *status = fatal_code(CORDON_LAUNCH_FAILED, "out of memory");
                return NULL;
        }
        cordon_error err = { 0 };
        if (cordon_explanation_new(&r->x, &err) < 0) {
                free(r);
                *status = cli_fatal(&err);
                return NULL;
        }
        *r = (cli_run_report) { .inner = inner, .inner_userdata = inner_userdata, .x = r->x,
                                .tty_lines = tty_lines, .json_fd = -1 };
        if (want_json && (r->json_fd = open_summary(a, &r->json_owned, status)) < 0) {
                cordon_explanation_free(r->x);
                free(r);
                return NULL;
        }
        return r;
}

void cli_run_report_event(void *userdata, const char *line, size_t len) {
        cli_run_report *r = userdata;
        if (r->inner)
                r->inner(r->inner_userdata, line, len);
        if (r->feed_err.code == CORDON_OK &&
            cordon_explanation_add_events(r->x, line, len, &r->feed_err) < 0 &&
            r->feed_err.code == CORDON_OK)
                r->feed_err.code = CORDON_LAUNCH_FAILED;
}

/* "cordon: denied network example.com:443 (not in allowlist)", one per folded refusal. */
static void print_tty_lines(const cordon_explanation *x) {
        size_t n = cordon_explanation_violation_count(x);
        for (size_t i = 0; i < n && i < TTY_LINES_MAX; i++) {
                const cordon_explained_violation *v = cordon_explanation_violation(x, i);
                if (v->count > 1)
                        fprintf(stderr, "cordon: denied %s, %llu times\n", v->summary,
                                (unsigned long long) v->count);
                else
                        fprintf(stderr, "cordon: denied %s\n", v->summary);
        }
        if (n > TTY_LINES_MAX)
                fprintf(stderr, "cordon: ... and %zu more kinds of refusal (--json or --events "
                                "with 'cordon explain' list them all)\n", n - TTY_LINES_MAX);
}

static void write_summary(cli_run_report *r) {
        char *json = NULL, *line = NULL;
        int e = -cordon_explanation_to_json(r->x, &json, NULL); /* 0 or an errno */
        if (e == 0 && asprintf(&line, "%s\n", json) < 0)
                e = ENOMEM;
        free(json);
        for (size_t off = 0, len = line ? strlen(line) : 0; e == 0 && off < len;) {
                ssize_t n = cli_write_nosigpipe(r->json_fd, line + off, len - off);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        e = n < 0 ? errno : EIO;
                else
                        off += (size_t) n;
        }
        free(line);
        if (r->json_owned && close(r->json_fd) < 0 && e == 0)
                e = errno;
        if (e)
                fprintf(stderr, "cordon: warning: --json: writing the summary failed: %s\n",
                        strerror(e));
}

void cli_run_report_end(cli_run_report *r, int exit_status) {
        if (!r)
                return;
        cordon_error err = r->feed_err;
        int ok = err.code == CORDON_OK &&
                 cordon_explanation_set_exit_status(r->x, exit_status) == 0 &&
                 cordon_explanation_finish(r->x, &err) == 0;
        if (ok && r->tty_lines)
                print_tty_lines(r->x);
        if (ok && r->json_fd >= 0)
                write_summary(r);
        else if (r->json_fd >= 0) {
                fprintf(stderr, "cordon: warning: --json: no summary: %s\n",
                        err.message[0] ? err.message : "the run's events could not be decoded");
                if (r->json_owned)
                        (void) close(r->json_fd); /* nothing was written to it */
        }
        cordon_explanation_free(r->x);
        free(r);
}
