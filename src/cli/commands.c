/* SPDX-License-Identifier: Apache-2.0 */
/* The `cordon` commands on top of the public API (see commands.h). */
#include "cli/analytics-sink.h"
#include "cli/cancel.h"
#include "cli/commands.h"
#include "cli/completion.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "cli/args.h"
#include "cli/cli-policy.h"
#include "cli/cmd-cache.h"
#include "cli/cmd-secret.h"
#include "cli/cmd-explain.h"
#include "cli/cmd-trust.h"
#include "cli/cmd-session.h"
#include "cli/help.h"
#include "cli/render.h"
#include "cli/ask-prompt.h"
#include "mcp/mcp.h"
#include "policy/policy.h"

#define EXIT_FATAL 125 /* docs/design/errors.md: cordon itself failed */

/* Exactly one line: a message is one line by contract, but control characters are replaced
 * anyway, because the denial decoder trusts this line to be the only one cordon printed. */
static int fatal(const cordon_error *err) {
        char msg[sizeof(err->message)];
        size_t n = strnlen(err->message, sizeof(err->message) - 1);
        for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char) err->message[i];
                msg[i] = c < 0x20 || c == 0x7f ? '?' : (char) c;
        }
        msg[n] = '\0';
        fprintf(stderr, "cordon: fatal: %s: %s\n", cordon_code_name(err->code),
                msg[0] ? msg : "unknown error");
        return EXIT_FATAL;
}

__attribute__((format(printf, 2, 3)))
static int fatal_msg(cordon_code code, const char *fmt, ...) {
        cordon_error err = { .code = code };
        va_list ap;
        va_start(ap, fmt);
        (void) vsnprintf(err.message, sizeof(err.message), fmt, ap);
        va_end(ap);
        return fatal(&err);
}

static int print_text(const char *s) {
        if (!s)
                return fatal_msg(CORDON_LAUNCH_FAILED, "out of memory");
        if (fputs(s, stdout) < 0 || fflush(stdout) != 0)
                return fatal_msg(CORDON_LAUNCH_FAILED, "cannot write to standard output: %s",
                                 strerror(errno));
        return 0;
}

static int cmd_probe(const cli_args *a) {
        cordon_error err = { 0 };
        cordon_probe *probe = NULL;
        if (cordon_probe_run(&probe, &err) < 0)
                return fatal(&err);
        char *s = NULL;
        int r = a->json ? cordon_probe_to_json(probe, &s, &err)
                        : cordon_probe_to_text(probe, &s, &err);
        cordon_probe_free(probe);
        if (r < 0)
                return fatal(&err);
        int status = print_text(s);
        if (status == 0 && a->json)
                status = print_text("\n");
        free(s);
        return status;
}

/* danger-full-access runs unconfined: an explicit --sandbox on or confining --backend next to it
 * is a contradiction, refused rather than resolved silently in either direction
 * (docs/design/backends.md). */
static int check_mode_conflict(const cli_args *a, const cordon_policy *resolved) {
        if (cordon_policy_get_mode(resolved) != CORDON_MODE_DANGER_FULL_ACCESS)
                return 0;
        if (a->sandbox_set && a->sandbox)
                return fatal_msg(CORDON_POLICY_INVALID,
                                 "--sandbox: 'on' contradicts mode danger-full-access, which runs "
                                 "the command unconfined; drop --sandbox on or choose another "
                                 "--mode");
        if (a->backend_set && a->backend != CORDON_BACKEND_AUTO &&
            a->backend != CORDON_BACKEND_NONE)
                return fatal_msg(CORDON_POLICY_INVALID,
                                 "--backend: '%s' contradicts mode danger-full-access, which runs "
                                 "the command unconfined; drop --backend or choose another --mode",
                                 cordon_backend_to_string(a->backend));
        return 0;
}

/* The resolved policy for run / policy show (a copy the caller frees), the settings it was
 * resolved from in *ret_settings when that is not NULL (caller frees), or a fatal exit status in
 * *ret_status. Settings that were read but not applied are reported here, one warning each. */
static cordon_policy *build_policy(const cli_args *a, const char *cwd,
                                   cordon_settings **ret_settings, int *ret_status) {
        char *home = cli_home_dir();
        if (!home) {
                *ret_status = fatal_msg(CORDON_LAUNCH_FAILED, "cannot determine the home "
                                        "directory; set HOME to an absolute path");
                return NULL;
        }
        cordon_error err = { 0 };
        cordon_settings *settings = NULL;
        cordon_policy *resolved = NULL;
        int r = cli_settings_build(a, cwd, home, &settings, &err);
        free(home);
        if (r >= 0) {
                cli_settings_warn(settings, stderr);
                r = cordon_policy_resolve(cordon_settings_policy(settings), NULL, NULL, &resolved,
                                          &err);
        }
        if (r < 0) {
                cordon_settings_free(settings);
                *ret_status = fatal(&err);
                return NULL;
        }
        *ret_status = check_mode_conflict(a, resolved);
        if (*ret_status != 0 || !ret_settings) {
                cordon_settings_free(settings);
                if (*ret_status != 0) {
                        cordon_policy_free(resolved);
                        return NULL;
                }
                return resolved;
        }
        *ret_settings = settings;
        return resolved;
}

/* The macOS Seatbelt profile of the resolved policy, on any platform (docs/design/seatbelt.md).
 * No proxy runs here, so the profile shows none: every connection refused. */
static int cmd_policy_seatbelt(cordon_policy *policy, const char *cwd) {
        char *home = cli_home_dir(), *profile = NULL;
        cordon_error err = { 0 };
        cordon_seatbelt_options opts = { .home = home, .cwd = cwd };
        int r = home ? cordon_policy_to_seatbelt(policy, &opts, &profile, &err) : -ENOENT;
        free(home);
        cordon_policy_free(policy);
        if (!home && r == -ENOENT)
                return fatal_msg(CORDON_LAUNCH_FAILED, "cannot determine the home directory; "
                                 "set HOME to an absolute path");
        if (r < 0)
                return fatal(&err);
        int status = print_text(profile);
        free(profile);
        return status;
}

static int cmd_policy_show(const cli_args *a, const char *cwd) {
        int status;
        cordon_settings *settings = NULL;
        cordon_policy *policy = build_policy(a, cwd, a->explain ? &settings : NULL, &status);
        if (!policy)
                return status;
        if (a->explain) {
                cordon_policy_free(policy);
                status = cli_settings_show(a, settings);
                cordon_settings_free(settings);
                return status;
        }
        if (a->seatbelt)
                return cmd_policy_seatbelt(policy, cwd);
        cordon_error err = { 0 };
        char *json = NULL;
        int r = cordon_policy_to_json(policy, CORDON_JSON_WITH_PLAN, environ, &json, &err);
        cordon_policy_free(policy);
        if (r < 0)
                return fatal(&err);
        if (a->json) {
                status = print_text(json);
                if (status == 0)
                        status = print_text("\n");
        } else if (cli_render_json_text(json, stdout) < 0 || fflush(stdout) != 0)
                status = fatal_msg(CORDON_LAUNCH_FAILED, "cannot write the policy to standard "
                                   "output");
        free(json);
        return status;
}

/* Why this run is unconfined, or NULL when it is confined. */
static const char *unprotected_reason(const cli_args *a, const cordon_policy *policy) {
        if (a->sandbox_set && !a->sandbox)
                return "--sandbox off";
        if (a->backend_set && a->backend == CORDON_BACKEND_NONE)
                return "--backend none";
        if (cordon_policy_get_mode(policy) == CORDON_MODE_DANGER_FULL_ACCESS)
                return "mode danger-full-access";
        return NULL;
}

/* Where --events lines go. After the first failed write the stream stops (and a warning follows
 * the run): a half-written line is never followed by more. */
typedef struct events_sink {
        int fd;  /* -1: no --events */
        int err; /* errno of the first failed write, or 0 */
} events_sink;

/* write(2) with SIGPIPE blocked: a consumer that closed its end of an events pipe must not kill
 * cordon (and with it the run) by the signal's default action; the write fails with EPIPE
 * instead, and the signal it raised is consumed before the old mask returns. The sandbox's
 * processes were forked earlier, so they never inherit this mask. */
static ssize_t write_nosigpipe(int fd, const void *buf, size_t len) {
        sigset_t pipe_set, old, pending;
        sigemptyset(&pipe_set);
        sigaddset(&pipe_set, SIGPIPE);
        if (sigprocmask(SIG_BLOCK, &pipe_set, &old) < 0)
                return -1;
        bool was_pending = sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1;
        ssize_t n = write(fd, buf, len);
        int e = errno;
        /* Not only on EPIPE: a write into a pipe whose reader goes away half-way returns the
         * bytes it did write and raises SIGPIPE all the same (fs/pipe.c, pipe_write), which
         * would then kill cordon when the old mask comes back. */
        if (!was_pending && sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1)
                (void) sigtimedwait(&pipe_set, NULL, &(struct timespec) { 0, 0 });
        (void) sigprocmask(SIG_SETMASK, &old, NULL);
        errno = e;
        return n;
}

/* cordon_event_fn: writes the whole line, retrying short writes and EINTR. */
static void sink_write(void *userdata, const char *line, size_t len) {
        events_sink *s = userdata;
        while (len > 0 && s->err == 0) {
                ssize_t n = write_nosigpipe(s->fd, line, len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0) {
                        s->err = n < 0 ? errno : EIO;
                        return;
                }
                line += n;
                len -= (size_t) n;
        }
}

/* Opens the --events destination: FILE is created 0600 (events name the paths a command tried to
 * touch; other users need not read them) and truncated; fd:N must already be open for writing.
 * Either way it is made close-on-exec so the command cannot write forged events into it. Returns
 * the fd, -1 when --events was not given, or -2 after printing the fatal line (*status). */
static int open_events(const cli_args *a, int *status) {
        if (a->events_path) {
                int fd = open(a->events_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY,
                              0600);
                if (fd < 0) {
                        *status = fatal_msg(CORDON_POLICY_INVALID, "--events: cannot create '%s': "
                                            "%s; give a writable file path or fd:N",
                                            CLI_QUOTE(a->events_path), strerror(errno));
                        return -2;
                }
                return fd;
        }
        if (a->events_fd < 0)
                return -1;
        int fl = fcntl(a->events_fd, F_GETFL);
        if (fl < 0 || (fl & O_ACCMODE) == O_RDONLY ||
            fcntl(a->events_fd, F_SETFD, FD_CLOEXEC) < 0) {
                *status = fatal_msg(CORDON_POLICY_INVALID, "--events: fd %d is %s; open it for "
                                    "writing before starting cordon (e.g. 3>events.jsonl)",
                                    a->events_fd, fl < 0 ? "not open" : "not writable");
                return -2;
        }
        return a->events_fd;
}

/* docs/design/backends.md: when the unspecified backend steps down from native, one line says so
 * and why.
 * --quiet does not silence it: it tells how much the command is confined. */
static void backend_note(void *userdata, cordon_backend used, const char *why) {
        (void) userdata;
        fprintf(stderr, "cordon: note: using the %s backend: %s; see 'cordon probe'\n",
                cordon_backend_to_string(used), why);
}

/* The ask mode's answerer: the controlling terminal, when there is one (ask-prompt.c). Without
 * one the run gets none and every question is refused at once ("unanswered"), never held: ask
 * mode must not hang a run that nobody watches (docs/cli.md, "Ask mode"). */
static void ask_setup(const cordon_policy *policy, cli_ask *ask, cordon_run_options *opts) {
        bool net = !policy->network_set || policy->network_enabled;
        if (!net || !policy->egress_mode_set || policy->egress_mode != CORDON_EGRESS_ASK)
                return;
        if (cli_ask_open(ask) < 0) {
                fprintf(stderr, "cordon: warning: egressMode ask without a terminal to ask on: "
                                "every unlisted destination is refused\n");
                return;
        }
        opts->on_egress_ask = cli_ask_prompt;
        opts->ask_userdata = ask;
}

/* The command policy's approver: the same terminal, when the policy has an "ask" rule. Without
 * a terminal there is none, and such a command is refused with a message that says why. */
static void command_ask_setup(const cordon_policy *policy, cli_ask *ask,
                              cordon_run_options *opts) {
        bool any = false;
        for (size_t i = 0; i < policy->n_command_rules; i++)
                any = any || policy->command_rules[i].ask;
        if (!any || (ask->tty < 0 && cli_ask_open(ask) < 0))
                return;
        opts->on_command_ask = cli_ask_command;
        opts->ask_userdata = ask;
}

static void run_options(const cli_args *a, cordon_backend backend, cli_run_report *report,
                        events_sink *sink, cli_analytics *analytics, cordon_run_options *opts) {
        cordon_run_options_init(opts);
        opts->backend = backend;
        opts->environ = environ;
        /* The report, when there is one, feeds the decoder and passes each line on. */
        opts->on_event = report ? cli_run_report_event : sink->fd >= 0 ? sink_write : NULL;
        opts->event_userdata = report ? (void *) report : (void *) sink;
        opts->capture = a->capture ? CORDON_CAPTURE_STDOUT | CORDON_CAPTURE_STDERR : 0;
        opts->on_backend_note = backend_note;
        if (analytics) {
                opts->on_violation = cli_analytics_violation;
                opts->userdata = analytics;
        }
}

/* The terminal's modes before a run. The microvm backend makes the terminal raw while its
 * guest's PTY does the terminal's work (src/linux/vm-pty.h) and restores it when the VMM host
 * ends; a run ended by SIGKILL (--timeout, a kill) never gets there, so the modes found here are
 * put back after a microvm run. Only then: a native command's changes to its terminal are its
 * own, as they are without cordon. */
typedef struct term_modes {
        bool saved;
        struct termios t;
} term_modes;

static void term_save(term_modes *m) {
        m->saved = isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &m->t) == 0;
}

static void term_restore_after(const term_modes *m, cordon_backend used) {
        if (!m->saved || used != CORDON_BACKEND_MICROVM)
                return;
        /* Blocked SIGTTOU: a cordon run in the background sets the modes without stopping. */
        sigset_t ttou, old;
        sigemptyset(&ttou);
        sigaddset(&ttou, SIGTTOU);
        (void) sigprocmask(SIG_BLOCK, &ttou, &old);
        (void) tcsetattr(STDIN_FILENO, TCSADRAIN, &m->t);
        (void) sigprocmask(SIG_SETMASK, &old, NULL);
}

/* Nothing but the command's own output may reach stdout here. */
static int cmd_run(const cli_args *a, const char *cwd) {
        int status = 0;
        events_sink sink = { .fd = open_events(a, &status) };
        if (sink.fd == -2)
                return status;
        cordon_settings *settings = NULL;
        cordon_policy *policy = build_policy(a, cwd, &settings, &status);
        /* What the settings say: an unconfined run they forbid is refused; an excludedCommands
         * entry or failIfUnavailable false may make this run unconfined (and say why). */
        char why[1280] = "";
        cordon_backend backend = a->sandbox_set && !a->sandbox ? CORDON_BACKEND_NONE : a->backend;
        cordon_error decide_err = { 0 };
        if (policy && cli_settings_decide(a, settings, unprotected_reason(a, policy), &backend,
                                          why, sizeof(why), &decide_err) < 0) {
                status = fatal(&decide_err);
                cordon_policy_free(policy);
                policy = NULL;
        }
        cordon_settings_free(settings);
        if (!policy) {
                if (a->events_path)
                        (void) close(sink.fd);
                return status;
        }
        cli_analytics *analytics = cli_analytics_open(a->analytics_path, &status);
        cli_run_report *report = analytics || !status
                                         ? cli_run_report_new(a, sink.fd >= 0 ? sink_write : NULL,
                                                              &sink, &status)
                                         : NULL;
        if (!report && status) {
                const cordon_error failed = { .code = CORDON_LAUNCH_FAILED };
                cli_analytics_end(analytics, &failed, 0);
                cordon_policy_free(policy);
                if (a->events_path)
                        (void) close(sink.fd);
                return status;
        }
        const char *reason = why[0] ? why : NULL;
        if (reason)
                fprintf(stderr, "cordon: warning: the command runs UNPROTECTED (no sandbox): "
                                "%s\n", reason);
        cordon_run_options opts;
        run_options(a, backend, report, &sink, analytics, &opts);
        cli_ask ask = { .tty = -1 };
        ask_setup(policy, &ask, &opts);
        command_ask_setup(policy, &ask, &opts);
        cordon_run_result res = { 0 };
        cordon_error err = { 0 };
        /* SIGINT/SIGTERM/SIGHUP: the library kills the sandbox and reports "killed" manual. */
        cli_cancel cancel;
        opts.cancel_fd = cli_cancel_begin(&cancel);
        term_modes modes;
        term_save(&modes);
        int r = cordon_run(policy, a->argv, &opts, &res, &err);
        term_restore_after(&modes, res.backend);
        int cancel_sig = cli_cancel_end(&cancel);
        cli_analytics_end(analytics, r < 0 ? &err : NULL, res.exit_code);
        cli_ask_close(&ask);
        cordon_policy_free(policy);
        if (a->events_path && close(sink.fd) < 0 && sink.err == 0)
                sink.err = errno;
        if (sink.err)
                fprintf(stderr, "cordon: warning: --events: writing the events failed: %s\n",
                        strerror(sink.err));
        /* Before the fatal line: that line stays the last one cordon prints. */
        cli_run_report_end(report, r < 0 ? EXIT_FATAL : res.exit_code);
        if (r < 0 && cancel_sig && err.code == CORDON_KILLED) {
                (void) fatal(&err);
                return 128 + cancel_sig; /* as if the signal had ended cordon */
        }
        if (r < 0)
                return fatal(&err);
        return res.exit_code;
}

/* cordon mcp: the policy resolved as for `cordon run` (settings files, managed settings, what
 * they decide about unconfined runs), then the server on stdin/stdout until the client closes
 * stdin. Only the protocol reaches stdout; notes and warnings go to stderr. */
static int cmd_mcp(const cli_args *a, const char *cwd) {
        int status = 0;
        cordon_settings *settings = NULL;
        cordon_policy *policy = build_policy(a, cwd, &settings, &status);
        if (!policy)
                return status;
        char why[1280] = "";
        cordon_backend backend = a->sandbox_set && !a->sandbox ? CORDON_BACKEND_NONE : a->backend;
        cordon_error err = { 0 };
        int r = cli_settings_decide(a, settings, unprotected_reason(a, policy), &backend, why,
                                    sizeof(why), &err);
        cordon_settings_free(settings);
        if (r < 0) {
                cordon_policy_free(policy);
                return fatal(&err);
        }
        if (why[0])
                fprintf(stderr, "cordon: warning: the commands run UNPROTECTED (no sandbox): "
                                "%s\n", why);
        mcp_config cfg = { .policy = policy, .backend = backend, .cwd = cwd, .in_fd = 0,
                           .out_fd = 1, .unprotected = why[0] ? why : NULL };
        r = mcp_serve(&cfg, &err);
        cordon_policy_free(policy);
        return r < 0 ? fatal(&err) : 0;
}

static int dispatch(const cli_args *a, const char *cwd) {
        switch (a->command) {
        case CLI_COMMAND_HELP:
                return print_text(cli_help_text(a->help_topic));
        case CLI_COMMAND_VERSION:
                printf("cordon %s\n", cordon_version());
                return fflush(stdout) == 0 ? 0 : EXIT_FATAL;
        case CLI_COMMAND_PROBE:
                return cmd_probe(a);
        case CLI_COMMAND_POLICY_SHOW:
                return cmd_policy_show(a, cwd);
        case CLI_COMMAND_RUN:
                return cmd_run(a, cwd);
        case CLI_COMMAND_EXPLAIN:
                return cli_cmd_explain(a);
        case CLI_COMMAND_SETTINGS_IMPORT:
                return cli_cmd_settings_import(a, cwd);
        case CLI_COMMAND_SETTINGS_TRUST:
                return cli_cmd_settings_trust(a, cwd);
        case CLI_COMMAND_SETTINGS_UNTRUST:
                return cli_cmd_settings_untrust(a, cwd);
        case CLI_COMMAND_SETTINGS_TRUSTED:
                return cli_cmd_settings_trusted(a);
        case CLI_COMMAND_SESSION_LAUNCH:
                return cli_cmd_session_launch(a, cwd);
        case CLI_COMMAND_SESSION_LIST:
                return cli_cmd_session_list(a);
        case CLI_COMMAND_SESSION_DESTROY:
                return cli_cmd_session_destroy(a);
        case CLI_COMMAND_EXEC:
                return cli_cmd_exec(a);
        case CLI_COMMAND_TERMINAL:
                return cli_cmd_terminal(a);
        case CLI_COMMAND_MCP:
                return cmd_mcp(a, cwd);
        case CLI_COMMAND_SECRET_SET:
                return cli_cmd_secret_set(a);
        case CLI_COMMAND_SECRET_LIST:
                return cli_cmd_secret_list(a);
        case CLI_COMMAND_SECRET_RM:
                return cli_cmd_secret_rm(a);
        case CLI_COMMAND_CACHE: {
                cordon_error err = { 0 };
                return cli_cmd_cache(a, &err) < 0 ? fatal(&err) : 0;
        }
        default:
                return fatal_msg(CORDON_USAGE, "unknown command");
        }
}

int cli_main(int argc, char *argv[]) {
        if (argc >= 2 && strcmp(argv[1], "completion") == 0) /* src/cli/completion.c */
                return cli_cmd_completion(argc, argv);
        char *cwd = getcwd(NULL, 0);
        if (!cwd)
                return fatal_msg(CORDON_LAUNCH_FAILED, "cannot determine the current directory: "
                                 "%s; cd to an existing directory", strerror(errno));
        cli_args args;
        cordon_error err = { 0 };
        int status = cli_args_parse(argc, argv, cwd, &args, &err) < 0 ? fatal(&err)
                                                                      : dispatch(&args, cwd);
        cli_args_done(&args);
        free(cwd);
        return status;
}

int cli_fatal(const cordon_error *err) {
        return fatal(err);
}

ssize_t cli_write_nosigpipe(int fd, const void *buf, size_t len) {
        return write_nosigpipe(fd, buf, len);
}
