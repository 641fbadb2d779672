/* SPDX-License-Identifier: Apache-2.0 */
/* Argument parsing for `cordon` (see args.h). Table-driven: one row per option says what value it
 * takes; one function per value kind checks it. Every message that quotes user input goes
 * through quote() so a fatal line stays one printable line. */
#include "cli/args.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h" /* text_nearest(): the "did you mean" of policy files, reused */

#define CLI_PRINTF(a, b) __attribute__((format(printf, a, b)))

typedef enum value_kind {
        VALUE_NONE = 0,
        VALUE_PATH,     /* made absolute against cwd */
        VALUE_TEXT,     /* non-empty string, checked by the policy setter */
        VALUE_ENV_SET,  /* NAME=VALUE */
        VALUE_MODE,
        VALUE_DURATION, /* milliseconds, > 0 */
        VALUE_SIZE,     /* bytes, > 0 */
        VALUE_COUNT,    /* plain decimal, > 0 */
} value_kind;

typedef struct flag_def {
        const char *name;
        value_kind kind;
        const char *hint; /* what a good value looks like, ends every POLICY_INVALID message */
} flag_def;

static const flag_def flag_defs[_CLI_FLAG_MAX] = {
        [CLI_FLAG_POLICY] = { "--policy", VALUE_PATH, "give the path of a JSON policy file" },
        [CLI_FLAG_MODE] = { "--mode", VALUE_MODE,
                            "use workspace-write (alias chat), read-only (aliases review, plan, "
                            "orchestrate) or danger-full-access" },
        [CLI_FLAG_WRITABLE] = { "--writable", VALUE_PATH, "give a directory the command may write" },
        [CLI_FLAG_READ_ONLY] = { "--read-only", VALUE_PATH,
                                 "give a path the command may read but not write" },
        [CLI_FLAG_PROTECT] = { "--protect", VALUE_PATH, "give a path that is never writable" },
        [CLI_FLAG_RUNNER_STATE_DIR] = { "--runner-state-dir", VALUE_PATH,
                                        "give a directory writable in every mode" },
        [CLI_FLAG_DENY_READ] = { "--deny-read", VALUE_PATH, "give a path (or glob) never readable" },
        [CLI_FLAG_DENY_WRITE] = { "--deny-write", VALUE_PATH,
                                  "give a path (or glob) never writable" },
        [CLI_FLAG_DENY_CREATE_NAME] = { "--deny-create-name", VALUE_TEXT,
                                        "give a file-name glob such as '*.pem' or '.env.*'" },
        [CLI_FLAG_ALLOW_CREATE_NAME] = { "--allow-create-name", VALUE_TEXT,
                                         "give a file-name glob such as '.env.test'" },
        [CLI_FLAG_ALLOW_CREATE_PATH] = { "--allow-create-path", VALUE_PATH,
                                         "give a path (or glob) such as tests/data/*.pem" },
        [CLI_FLAG_ENV_PASS] = { "--env-pass", VALUE_TEXT,
                                "give the name of an environment variable to keep" },
        [CLI_FLAG_ENV_SET] = { "--env-set", VALUE_ENV_SET, "use NAME=VALUE, e.g. LANG=C.UTF-8" },
        [CLI_FLAG_ENV_SCRUB] = { "--env-scrub", VALUE_TEXT,
                                 "give a variable-name glob such as '*_TOKEN'" },
        [CLI_FLAG_WORKDIR] = { "--workdir", VALUE_PATH,
                               "give the directory the command starts in" },
        [CLI_FLAG_SESSION_ID] = { "--session-id", VALUE_TEXT, "give a stable session identifier" },
        [CLI_FLAG_TIMEOUT] = { "--timeout", VALUE_DURATION,
                               "use a whole number with an optional unit ms, s, m or h (e.g. "
                               "30s, 500ms, 2m)" },
        [CLI_FLAG_MEMORY] = { "--memory", VALUE_SIZE,
                              "use a whole number of bytes with an optional unit K, M or G (e.g. "
                              "512M, 2G)" },
        [CLI_FLAG_PIDS] = { "--pids", VALUE_COUNT, "use a whole number of processes (e.g. 256)" },
        [CLI_FLAG_CPU] = { "--cpu", VALUE_COUNT, "use a whole number of CPU seconds (e.g. 600)" },
        [CLI_FLAG_TMP_SIZE] = { "--tmp-size", VALUE_SIZE,
                                "use a whole number of bytes with an optional unit K, M or G, "
                                "1M to 1T (e.g. 512M, 4G)" },
        [CLI_FLAG_SHM_SIZE] = { "--shm-size", VALUE_SIZE,
                                "use a whole number of bytes with an optional unit K, M or G, "
                                "1M to 1T (e.g. 64M, 1G)" },
        [CLI_FLAG_NO_NETWORK] = { "--no-network", VALUE_NONE, "" },
        [CLI_FLAG_ALLOW_DOMAIN] = { "--allow-domain", VALUE_TEXT,
                                    "give a host pattern such as api.example.com, "
                                    "*.example.com or localhost:3000" },
        [CLI_FLAG_DENY_DOMAIN] = { "--deny-domain", VALUE_TEXT,
                                   "give a host pattern such as tracker.example.com" },
        [CLI_FLAG_RESOLVE] = { "--resolve", VALUE_ENV_SET,
                               "use NAME=ADDRESS, e.g. dev.test=127.0.0.1" },
};

const char *cli_flag_name(cli_flag flag) {
        return (unsigned) flag < _CLI_FLAG_MAX ? flag_defs[flag].name : "--?";
}

const char *cli_flag_hint(cli_flag flag) {
        return (unsigned) flag < _CLI_FLAG_MAX ? flag_defs[flag].hint : "";
}

typedef struct parser {
        int argc;
        char *const *argv;
        int i;           /* next argv index */
        const char *cwd;
        const char *see; /* the help to point at in usage errors */
        bool dashdash;   /* parse_options consumed a "--" */
        cli_args *out;
        cordon_error *err;
} parser;

/* ---- Messages ----------------------------------------------------------------------------- */

/* User input as it may appear in a one-line message: control and non-ASCII bytes become '?'
 * (a hostile argument must not forge extra diagnostic lines), long values are cut. */
const char *cli_quote(const char *s, char *buf, size_t size) {
        size_t n = 0;
        for (; s[n] && n + 4 < size; n++)
                buf[n] = (s[n] >= 0x20 && s[n] < 0x7f) ? s[n] : '?';
        if (s[n])
                memcpy(buf + (n > 3 ? n - 3 : 0), "...", 4);
        else
                buf[n] = '\0';
        return buf;
}

CLI_PRINTF(3, 4)
static int set_error(cordon_error *err, cordon_code code, const char *fmt, ...) {
        if (err) {
                va_list ap;
                va_start(ap, fmt);
                err->code = code;
                err->sys_errno = EINVAL;
                (void) vsnprintf(err->message, sizeof(err->message), fmt, ap);
                va_end(ap);
        }
        return -EINVAL;
}

/* "<what> (see '<help>')", code USAGE. */
CLI_PRINTF(2, 3)
static int usage(parser *p, const char *fmt, ...) {
        char what[768];
        va_list ap;
        va_start(ap, fmt);
        (void) vsnprintf(what, sizeof(what), fmt, ap);
        va_end(ap);
        return set_error(p->err, CORDON_USAGE, "%s (see '%s')", what, p->see);
}

/* "--flag: <what>; <hint>", code POLICY_INVALID. */
CLI_PRINTF(3, 4)
static int bad_value(parser *p, cli_flag flag, const char *fmt, ...) {
        char what[768];
        va_list ap;
        va_start(ap, fmt);
        (void) vsnprintf(what, sizeof(what), fmt, ap);
        va_end(ap);
        return set_error(p->err, CORDON_POLICY_INVALID, "%s: %s; %s", flag_defs[flag].name, what,
                         flag_defs[flag].hint);
}

/* ---- Values ------------------------------------------------------------------------------- */

/* A path as typed by a person, made absolute against the (physical, getcwd) cwd. Leading "." and
 * ".." components are resolved here, which is exact because cwd contains no symlinks; a ".."
 * anywhere else is kept, and the policy setter refuses it rather than guess what a symlink before
 * it points to. */
static int make_absolute(const char *cwd, const char *in, char **ret) {
        if (in[0] == '/') {
                *ret = strdup(in);
                return *ret ? 0 : -ENOMEM;
        }
        size_t base = strlen(cwd);
        while (base > 1 && cwd[base - 1] == '/')
                base--;
        const char *rest = in;
        for (;;) {
                size_t len = strcspn(rest, "/");
                if (len == 1 && rest[0] == '.') {
                        /* "./": nothing to do */
                } else if (len == 2 && rest[0] == '.' && rest[1] == '.') {
                        while (base > 1 && cwd[base - 1] != '/')
                                base--;
                        while (base > 1 && cwd[base - 1] == '/')
                                base--;
                } else
                        break;
                rest += len;
                rest += strspn(rest, "/");
        }
        bool root = base == 1 && cwd[0] == '/';
        if (asprintf(ret, "%.*s%s%s", (int) base, cwd, root || !*rest ? "" : "/", rest) < 0)
                return -ENOMEM;
        return 0;
}

static int parse_count(const char *s, uint64_t *ret) {
        if (!s[0] || strspn(s, "0123456789") != strlen(s))
                return -EINVAL;
        uint64_t v = 0;
        for (const char *c = s; *c; c++) {
                unsigned d = (unsigned) (*c - '0');
                if (v > (UINT64_MAX - d) / 10)
                        return -ERANGE;
                v = v * 10 + d;
        }
        *ret = v;
        return 0;
}

/* Sizes, durations and counts: the number must parse and be > 0 (0 would mean "no limit", which
 * is what leaving the flag out says). */
static int parse_limit(parser *p, cli_flag flag, const char *value, cli_setting *s) {
        static const char *const kind_names[] = {
                [VALUE_DURATION] = "duration", [VALUE_SIZE] = "size", [VALUE_COUNT] = "number",
        };
        value_kind kind = flag_defs[flag].kind;
        s->text = strdup(value); /* kept for messages about the range (cli-policy.c) */
        if (!s->text)
                return -ENOMEM;
        int r = kind == VALUE_DURATION ? cordon_parse_duration_ms(value, &s->number)
                : kind == VALUE_SIZE   ? cordon_parse_size(value, &s->number)
                                       : parse_count(value, &s->number);
        if (r == -ERANGE)
                return bad_value(p, flag, "%s '%s' is too large", kind_names[kind], CLI_QUOTE(value));
        if (r < 0)
                return bad_value(p, flag, "invalid %s '%s'", kind_names[kind], CLI_QUOTE(value));
        if (s->number == 0)
                return bad_value(p, flag, "'%s' is not a limit (leave %s out for none)",
                                 CLI_QUOTE(value), flag_defs[flag].name);
        return 0;
}

/* NAME=VALUE (--env-set) and NAME=ADDRESS (--resolve). */
static int parse_env_set(parser *p, cli_flag flag, const char *value, cli_setting *s) {
        const char *eq = strchr(value, '=');
        if (!eq || eq == value)
                return bad_value(p, flag, "expected %s, got '%s'",
                                 flag == CLI_FLAG_RESOLVE ? "NAME=ADDRESS" : "NAME=VALUE",
                                 CLI_QUOTE(value));
        s->text = strndup(value, (size_t) (eq - value));
        s->text2 = strdup(eq + 1);
        return s->text && s->text2 ? 0 : -ENOMEM;
}

/* Checks and converts one policy flag's value into `s`. */
static int parse_value(parser *p, cli_flag flag, const char *value, cli_setting *s) {
        s->flag = flag;
        switch (flag_defs[flag].kind) {
        case VALUE_NONE:
                return 0;
        case VALUE_PATH:
                if (!value[0])
                        return bad_value(p, flag, "empty path");
                return make_absolute(p->cwd, value, &s->text);
        case VALUE_TEXT:
                if (!value[0])
                        return bad_value(p, flag, "empty value");
                s->text = strdup(value);
                return s->text ? 0 : -ENOMEM;
        case VALUE_ENV_SET:
                return parse_env_set(p, flag, value, s);
        case VALUE_MODE:
                if (cordon_mode_from_string(value, &s->mode) < 0)
                        return bad_value(p, flag, "unknown mode '%s'", CLI_QUOTE(value));
                return 0;
        case VALUE_DURATION:
        case VALUE_SIZE:
        case VALUE_COUNT:
                return parse_limit(p, flag, value, s);
        default:
                return -EINVAL;
        }
}

static void setting_done(cli_setting *s) {
        free(s->text);
        free(s->text2);
        *s = (cli_setting) { 0 };
}

static int add_setting(parser *p, cli_flag flag, const char *value) {
        cli_args *a = p->out;
        cli_setting s = { 0 };
        int r = parse_value(p, flag, value, &s);
        if (r < 0) {
                setting_done(&s);
                return r;
        }
        cli_setting *n = reallocarray(a->settings, a->n_settings + 1, sizeof(*n));
        if (!n) {
                setting_done(&s);
                return -ENOMEM;
        }
        a->settings = n;
        a->settings[a->n_settings++] = s;
        return 0;
}

/* ---- Options ------------------------------------------------------------------------------ */

typedef enum extra_opt {
        EXTRA_HELP,
        EXTRA_SETTINGS,
        EXTRA_SHOW_EXPLAIN,
        EXTRA_JSON,
        EXTRA_SANDBOX,
        EXTRA_BACKEND,
        EXTRA_EVENTS,
        EXTRA_SEATBELT,
        EXTRA_QUIET,
        EXTRA_CAPTURE,
        EXTRA_STATUS,
        EXTRA_STDERR,
        EXTRA_SOCKET,
        EXTRA_CWD,
        EXTRA_ENV,
        EXTRA_NATIVE,
} extra_opt;

#define ALLOW_POLICY (1u << 0)  /* the policy flags, --sandbox, --backend */
#define ALLOW_JSON (1u << 1)
#define ALLOW_POSITIONAL (1u << 2) /* stop at the first non-option (run's command) */
#define ALLOW_EVENTS (1u << 3)     /* run's --events */
#define ALLOW_RUN_REPORT (1u << 5) /* run's --json=DEST, --capture */
#define ALLOW_QUIET (1u << 14)     /* run, exec: --quiet */
#define ALLOW_EXPLAIN (1u << 6)    /* explain's --status, --stderr */
#define ALLOW_SEATBELT (1u << 4)   /* policy show --seatbelt */
#define ALLOW_SHOW_EXPLAIN (1u << 12) /* policy show --explain */
#define ALLOW_SOCKET (1u << 7)     /* session, exec: --socket */
#define ALLOW_EXEC (1u << 8)       /* exec's --cwd, --env */
#define ALLOW_TERMINAL (1u << 13)  /* terminal's --native */

static const struct {
        const char *name;
        extra_opt opt;
        bool takes_value;
        unsigned needs; /* ALLOW_* bit the command must have */
} extra_defs[] = {
        { "--help", EXTRA_HELP, false, 0 },
        { "--json", EXTRA_JSON, false, ALLOW_JSON },
        { "--sandbox", EXTRA_SANDBOX, true, ALLOW_POLICY },
        { "--backend", EXTRA_BACKEND, true, ALLOW_POLICY },
        { "--events", EXTRA_EVENTS, true, ALLOW_EVENTS },
        { "--quiet", EXTRA_QUIET, false, ALLOW_QUIET },
        { "--capture", EXTRA_CAPTURE, false, ALLOW_RUN_REPORT },
        { "--status", EXTRA_STATUS, true, ALLOW_EXPLAIN },
        { "--stderr", EXTRA_STDERR, true, ALLOW_EXPLAIN },
        { "--seatbelt", EXTRA_SEATBELT, false, ALLOW_SEATBELT },
        { "--settings", EXTRA_SETTINGS, true, ALLOW_POLICY },
        { "--explain", EXTRA_SHOW_EXPLAIN, false, ALLOW_SHOW_EXPLAIN },
        { "--socket", EXTRA_SOCKET, true, ALLOW_SOCKET },
        { "--cwd", EXTRA_CWD, true, ALLOW_EXEC },
        { "--env", EXTRA_ENV, true, ALLOW_EXEC },
        { "--native", EXTRA_NATIVE, false, ALLOW_TERMINAL },
};

static int set_sandbox(parser *p, const char *value) {
        if (strcmp(value, "on") != 0 && strcmp(value, "off") != 0)
                return set_error(p->err, CORDON_POLICY_INVALID,
                                 "--sandbox: expected 'on' or 'off', got '%s'; 'off' runs the "
                                 "command unprotected", CLI_QUOTE(value));
        p->out->sandbox_set = true;
        p->out->sandbox = strcmp(value, "on") == 0;
        return 0;
}

static int set_backend(parser *p, const char *value) {
        /* docs/design/backends.md: an unknown backend name on the command line is a usage error. */
        if (cordon_backend_from_string(value, &p->out->backend) < 0)
                return usage(p, "--backend: unknown backend '%s'; use auto, native, landlock, "
                                "microvm or none", CLI_QUOTE(value));
        p->out->backend_set = true;
        return 0;
}

#define EVENTS_HINT "use a file path or fd:N with N >= 3 (fds 0-2 are the command's stdio)"

/* --events FILE or fd:N. Only the syntax is checked here (no I/O in this module): commands.c
 * opens FILE or checks that fd N is open. fds 0-2 are refused: events written into the command's
 * own stdin, stdout or stderr would interleave with its data, and a consumer could not tell the
 * two apart. */
static int set_events(parser *p, const char *value) {
        cli_args *a = p->out;
        if (a->events_path || a->events_fd >= 0)
                return usage(p, "--events given twice; give it once");
        if (!value[0])
                return set_error(p->err, CORDON_POLICY_INVALID, "--events: empty value; %s",
                                 EVENTS_HINT);
        if (strncmp(value, "fd:", 3) != 0)
                return make_absolute(p->cwd, value, &a->events_path);
        uint64_t n = 0;
        int r = parse_count(value + 3, &n);
        if (r < 0 || n > INT32_MAX || n < 3)
                return set_error(p->err, CORDON_POLICY_INVALID,
                                 "--events: '%s' is not a usable descriptor; %s",
                                 CLI_QUOTE(value), EVENTS_HINT);
        a->events_fd = (int) n;
        return 0;
}

/* run --json=FILE|fd:N: where the summary goes. Only with '=': `cordon run --json ls` must not
 * read the command as a destination. No default: fd 1 and 2 carry the command's own output, and
 * a summary mixed into it could not be told apart (nor could a command fake one there). */
static int set_json_dest(parser *p, const char *value) {
        cli_args *a = p->out;
        if (!value)
                return usage(p, "--json needs a destination for run: --json=FILE or --json=fd:N "
                                "(N >= 3; fds 1 and 2 carry the command's own output)");
        if (a->json_path || a->json_fd >= 0)
                return usage(p, "--json given twice; give it once");
        if (!value[0])
                return set_error(p->err, CORDON_POLICY_INVALID, "--json: empty value; %s",
                                 EVENTS_HINT);
        if (strncmp(value, "fd:", 3) != 0)
                return make_absolute(p->cwd, value, &a->json_path);
        uint64_t n = 0;
        int r = parse_count(value + 3, &n);
        if (r < 0 || n > INT32_MAX || n < 3)
                return set_error(p->err, CORDON_POLICY_INVALID,
                                 "--json: '%s' is not a usable descriptor; %s", CLI_QUOTE(value),
                                 EVENTS_HINT);
        a->json_fd = (int) n;
        return 0;
}

/* explain --status N: the exit status the run ended with, as a shell reports it. */
static int set_status(parser *p, const char *value) {
        uint64_t n = 0;
        if (parse_count(value, &n) < 0 || n > 255)
                return usage(p, "--status: '%s' is not an exit status 0-255", CLI_QUOTE(value));
        p->out->status_set = true;
        p->out->status = (int) n;
        return 0;
}

static int set_stderr_path(parser *p, const char *value) {
        if (p->out->stderr_path)
                return usage(p, "--stderr given twice; give it once");
        if (!value[0])
                return usage(p, "--stderr: empty path");
        return make_absolute(p->cwd, value, &p->out->stderr_path);
}

/* session, exec --socket PATH: cordond's socket (cmd-session.c connects and checks it). */
static int set_socket(parser *p, const char *value) {
        if (p->out->socket_path)
                return usage(p, "--socket given twice; give it once");
        if (!value[0])
                return usage(p, "--socket: empty path; give the path of cordond's socket");
        return make_absolute(p->cwd, value, &p->out->socket_path);
}

/* exec --cwd DIR: relative to the caller's directory, like every path on this command line. */
static int set_exec_cwd(parser *p, const char *value) {
        if (p->out->exec_cwd)
                return usage(p, "--cwd given twice; give it once");
        if (!value[0])
                return usage(p, "--cwd: empty path; give the directory the command starts in");
        return make_absolute(p->cwd, value, &p->out->exec_cwd);
}

#define EXEC_ENV_MAX 4096 /* PROTO_ENV_MAX: what one exec request may carry */

static bool env_name_ok(const char *s, size_t n) {
        if (n == 0 || n > 255 || (s[0] >= '0' && s[0] <= '9'))
                return false;
        for (size_t i = 0; i < n; i++)
                if (!(s[i] == '_' || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') ||
                      (s[i] >= '0' && s[i] <= '9')))
                        return false;
        return true;
}

/* exec --env NAME=VALUE (repeatable). The value is never echoed in a message: it may be a
 * secret. */
static int add_exec_env(parser *p, const char *value) {
        cli_args *a = p->out;
        const char *eq = strchr(value, '=');
        if (!eq || !env_name_ok(value, (size_t) (eq - value)))
                return usage(p, "--env: expected NAME=VALUE with NAME matching "
                                "[A-Za-z_][A-Za-z0-9_]*, got '%s'",
                             eq ? "<invalid name>=..." : CLI_QUOTE(value));
        if (a->n_exec_env >= EXEC_ENV_MAX)
                return usage(p, "--env given more than %d times", EXEC_ENV_MAX);
        char **n = reallocarray(a->exec_env, a->n_exec_env + 1, sizeof(char *));
        if (!n)
                return -ENOMEM;
        a->exec_env = n;
        if (!(a->exec_env[a->n_exec_env] = strdup(value)))
                return -ENOMEM;
        a->n_exec_env++;
        return 0;
}

/* The value of an option: after '=' or the next argument. */
static int take_value(parser *p, const char *name, const char *inline_value, const char **ret) {
        if (inline_value) {
                *ret = inline_value;
                return 0;
        }
        if (p->i >= p->argc)
                return usage(p, "option '%s' needs a value: '%s VALUE' or '%s=VALUE'", name, name,
                             name);
        *ret = p->argv[p->i++];
        return 0;
}

#define MAX_SETTINGS_FILES 64

/* --settings FILE (repeatable): only the path here; the file is read when the settings are
 * resolved (cli-policy.c), in the order given. */
static int add_settings_file(parser *p, const char *value) {
        cli_args *a = p->out;
        if (!value[0])
                return set_error(p->err, CORDON_POLICY_INVALID,
                                 "--settings: empty path; give a settings file (JSON)");
        if (a->n_settings_files >= MAX_SETTINGS_FILES)
                return usage(p, "--settings given more than %d times", MAX_SETTINGS_FILES);
        char **n = reallocarray(a->settings_files, a->n_settings_files + 1, sizeof(char *));
        if (!n)
                return -ENOMEM;
        a->settings_files = n;
        int r = make_absolute(p->cwd, value, &a->settings_files[a->n_settings_files]);
        if (r >= 0)
                a->n_settings_files++;
        return r;
}

static int apply_extra(parser *p, extra_opt opt, const char *value) {
        switch (opt) {
        case EXTRA_SETTINGS:
                return add_settings_file(p, value);
        case EXTRA_SHOW_EXPLAIN:
                p->out->explain = true;
                return 0;
        case EXTRA_HELP:
                p->out->help_topic = p->out->command;
                p->out->command = CLI_COMMAND_HELP;
                return 1; /* stop: everything after --help is ignored */
        case EXTRA_JSON:
                p->out->json = true;
                return 0;
        case EXTRA_SANDBOX:
                return set_sandbox(p, value);
        case EXTRA_BACKEND:
                return set_backend(p, value);
        case EXTRA_EVENTS:
                return set_events(p, value);
        case EXTRA_QUIET:
                p->out->quiet = true;
                return 0;
        case EXTRA_CAPTURE:
                p->out->capture = true;
                return 0;
        case EXTRA_STATUS:
                return set_status(p, value);
        case EXTRA_STDERR:
                return set_stderr_path(p, value);
        case EXTRA_SEATBELT:
                p->out->seatbelt = true;
                return 0;
        case EXTRA_SOCKET:
                return set_socket(p, value);
        case EXTRA_CWD:
                return set_exec_cwd(p, value);
        case EXTRA_ENV:
                return add_exec_env(p, value);
        case EXTRA_NATIVE:
                p->out->terminal_native = true;
                return 0;
        default:
                return -EINVAL;
        }
}

/* "unknown option '--writeable'; did you mean '--writable'?": the nearest option this command
 * takes; or, for an option of another command, says so rather than "unknown". */
static int unknown_option(parser *p, const char *name, unsigned allow) {
        const char *known[ELEMENTSOF(extra_defs) + _CLI_FLAG_MAX + 1];
        size_t n = 0;
        bool elsewhere = strcmp(name, "--json") == 0;
        for (size_t i = 0; i < ELEMENTSOF(extra_defs); i++) {
                if (!(extra_defs[i].needs & ~allow))
                        known[n++] = extra_defs[i].name;
                else
                        elsewhere |= strcmp(name, extra_defs[i].name) == 0;
        }
        for (int f = 0; f < _CLI_FLAG_MAX; f++) {
                if (allow & ALLOW_POLICY)
                        known[n++] = flag_defs[f].name;
                else
                        elsewhere |= strcmp(name, flag_defs[f].name) == 0;
        }
        if ((allow & ALLOW_RUN_REPORT))
                known[n++] = "--json";
        const char *near = text_nearest(name, known, n);
        if (near)
                return usage(p, "unknown option '%s'; did you mean '%s'?", CLI_QUOTE(name), near);
        if (elsewhere)
                return usage(p, "option '%s' does not apply to this command", CLI_QUOTE(name));
        return usage(p, "unknown option '%s'", CLI_QUOTE(name));
}

/* One "--name[=value]" argument (already consumed). Returns 1 when parsing should stop (--help). */
static int parse_option(parser *p, const char *arg, unsigned allow) {
        char name[64];
        const char *eq = strchr(arg, '=');
        size_t len = eq ? (size_t) (eq - arg) : strlen(arg);
        if (len >= sizeof(name))
                return usage(p, "unknown option '%s'", CLI_QUOTE(arg));
        memcpy(name, arg, len);
        name[len] = '\0';
        const char *inline_value = eq ? eq + 1 : NULL;
        const char *value = NULL;

        if (strcmp(name, "-h") == 0)
                memcpy(name, "--help", sizeof("--help"));
        if ((allow & ALLOW_RUN_REPORT) && strcmp(name, "--json") == 0)
                return set_json_dest(p, inline_value);
        for (size_t i = 0; i < sizeof(extra_defs) / sizeof(extra_defs[0]); i++) {
                if (strcmp(name, extra_defs[i].name) != 0 || (extra_defs[i].needs & ~allow))
                        continue;
                if (!extra_defs[i].takes_value && inline_value)
                        return usage(p, "option '%s' takes no value: write '%s' alone", name, name);
                if (extra_defs[i].takes_value && take_value(p, name, inline_value, &value) < 0)
                        return -EINVAL;
                return apply_extra(p, extra_defs[i].opt, value);
        }
        for (int f = 0; (allow & ALLOW_POLICY) && f < _CLI_FLAG_MAX; f++) {
                if (strcmp(name, flag_defs[f].name) != 0)
                        continue;
                bool takes_value = flag_defs[f].kind != VALUE_NONE;
                if (!takes_value && inline_value)
                        return usage(p, "option '%s' takes no value: write '%s' alone", name, name);
                if (takes_value && take_value(p, name, inline_value, &value) < 0)
                        return -EINVAL;
                return add_setting(p, (cli_flag) f, value);
        }
        return unknown_option(p, name, allow);
}

/* Options up to "--", the first non-option (with ALLOW_POSITIONAL) or the end. Returns 1 when
 * --help ended parsing, 0 otherwise, or -errno. */
static int parse_options(parser *p, unsigned allow) {
        while (p->i < p->argc) {
                const char *arg = p->argv[p->i];
                if (strcmp(arg, "--") == 0 && (allow & ALLOW_POSITIONAL)) {
                        p->i++;
                        p->dashdash = true;
                        return 0;
                }
                if (arg[0] != '-' || arg[1] == '\0') {
                        if (allow & ALLOW_POSITIONAL)
                                return 0;
                        return usage(p, "unexpected argument '%s'", CLI_QUOTE(arg));
                }
                p->i++;
                int r = parse_option(p, arg, allow);
                if (r != 0)
                        return r;
        }
        return 0;
}

/* --sandbox off means backend "none"; a contradicting --backend is refused rather than one of
 * them silently winning. */
static int check_conflicts(parser *p) {
        const cli_args *a = p->out;
        if (!a->sandbox_set || !a->backend_set || a->backend == CORDON_BACKEND_AUTO)
                return 0;
        if (a->sandbox && a->backend == CORDON_BACKEND_NONE)
                return usage(p, "--sandbox on conflicts with --backend none");
        if (!a->sandbox && a->backend != CORDON_BACKEND_NONE)
                return usage(p, "--sandbox off conflicts with --backend %s",
                             cordon_backend_to_string(a->backend));
        return 0;
}

/* ---- Commands ----------------------------------------------------------------------------- */

/* The rest of the command line is the command; `synopsis` says where it goes. */
static int copy_command(parser *p, const char *synopsis) {
        size_t n = (size_t) (p->argc - p->i);
        if (n == 0)
                return usage(p, "no command given: %s", synopsis);
        if (p->argv[p->i][0] == '\0')
                return usage(p, "empty command name");
        char **v = calloc(n + 1, sizeof(char *));
        if (!v)
                return -ENOMEM;
        p->out->argv = v;
        for (size_t k = 0; k < n; k++)
                if (!(v[k] = strdup(p->argv[p->i + (int) k])))
                        return -ENOMEM;
        p->i = p->argc;
        return 0;
}

/* --capture puts the output into the events; one destination cannot take both streams. */
static int check_run_report(parser *p) {
        const cli_args *a = p->out;
        if (a->capture && !a->events_path && a->events_fd < 0)
                return usage(p, "--capture needs --events FILE|fd:N: the captured output goes "
                                "into the events");
        if ((a->json_fd >= 0 && a->json_fd == a->events_fd) ||
            (a->json_path && a->events_path && strcmp(a->json_path, a->events_path) == 0))
                return usage(p, "--json and --events need different destinations");
        return 0;
}

static int parse_run(parser *p) {
        p->out->command = CLI_COMMAND_RUN;
        p->see = "cordon run --help";
        int r = parse_options(p, ALLOW_POLICY | ALLOW_POSITIONAL | ALLOW_EVENTS |
                                         ALLOW_RUN_REPORT | ALLOW_QUIET);
        if (r != 0)
                return r < 0 ? r : 0;
        r = check_conflicts(p);
        if (r >= 0)
                r = check_run_report(p);
        return r < 0 ? r : copy_command(p, "cordon run [OPTIONS] [--] CMD [ARG...]");
}

static int parse_explain(parser *p) {
        p->out->command = CLI_COMMAND_EXPLAIN;
        p->see = "cordon explain --help";
        int r = parse_options(p, ALLOW_JSON | ALLOW_EVENTS | ALLOW_EXPLAIN);
        if (r != 0)
                return r < 0 ? r : 0;
        const cli_args *a = p->out;
        if (!a->events_path && a->events_fd < 0 && !a->status_set && !a->stderr_path)
                return usage(p, "nothing to explain: give --events FILE, --status N or --stderr "
                                "FILE");
        return 0;
}

static int parse_probe(parser *p) {
        p->out->command = CLI_COMMAND_PROBE;
        p->see = "cordon probe --help";
        int r = parse_options(p, ALLOW_JSON);
        return r < 0 ? r : 0;
}

static int parse_policy(parser *p) {
        p->see = "cordon policy show --help";
        if (p->i >= p->argc)
                return usage(p, "'cordon policy' needs a subcommand: show");
        const char *sub = p->argv[p->i++];
        p->out->command = CLI_COMMAND_POLICY_SHOW;
        if (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0)
                return apply_extra(p, EXTRA_HELP, NULL) < 0 ? -EINVAL : 0;
        if (strcmp(sub, "show") != 0)
                return usage(p, "unknown policy subcommand '%s'; the only one is 'show'",
                             CLI_QUOTE(sub));
        int r = parse_options(p, ALLOW_POLICY | ALLOW_JSON | ALLOW_SEATBELT | ALLOW_SHOW_EXPLAIN);
        if (r != 0)
                return r < 0 ? r : 0;
        if (p->out->json && p->out->seatbelt)
                return usage(p, "--json and --seatbelt print different things; choose one");
        if (p->out->explain && p->out->seatbelt)
                return usage(p, "--explain and --seatbelt print different things; choose one");
        return check_conflicts(p);
}

/* cordon settings trust|untrust [PATH], cordon settings trusted [--json] */
static int parse_trust(parser *p, const char *sub) {
        const char *arg = p->i < p->argc ? p->argv[p->i++] : NULL;
        if (arg && (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0))
                return apply_extra(p, EXTRA_HELP, NULL) < 0 ? -EINVAL : 0;
        if (strcmp(sub, "trusted") == 0) {
                p->out->command = CLI_COMMAND_SETTINGS_TRUSTED;
                if (arg && strcmp(arg, "--json") != 0)
                        return usage(p, "unexpected argument '%s'", CLI_QUOTE(arg));
                p->out->json = arg != NULL;
                return p->i < p->argc ? usage(p, "unexpected argument '%s'",
                                              CLI_QUOTE(p->argv[p->i]))
                                      : 0;
        }
        p->out->command = strcmp(sub, "trust") == 0 ? CLI_COMMAND_SETTINGS_TRUST
                                                    : CLI_COMMAND_SETTINGS_UNTRUST;
        if (p->i < p->argc)
                return usage(p, "unexpected argument '%s'", CLI_QUOTE(p->argv[p->i]));
        if (!arg)
                return 0;
        if (!arg[0])
                return usage(p, "'cordon settings %s' needs a PATH, not an empty name", sub);
        return make_absolute(p->cwd, arg, &p->out->trust_target);
}

/* cordon settings import FILE | trust [PATH] | untrust [PATH] | trusted [--json] */
static int parse_settings(parser *p) {
        p->see = "cordon help settings";
        p->out->command = CLI_COMMAND_SETTINGS_IMPORT;
        if (p->i >= p->argc)
                return usage(p, "'cordon settings' needs a subcommand: import FILE, trust "
                                "[PATH], untrust [PATH] or trusted");
        const char *sub = p->argv[p->i++];
        if (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0)
                return apply_extra(p, EXTRA_HELP, NULL) < 0 ? -EINVAL : 0;
        if (strcmp(sub, "trust") == 0 || strcmp(sub, "untrust") == 0 ||
            strcmp(sub, "trusted") == 0)
                return parse_trust(p, sub);
        if (strcmp(sub, "import") != 0)
                return usage(p, "unknown settings subcommand '%s'; the subcommands are import, "
                                "trust, untrust and trusted",
                             CLI_QUOTE(sub));
        if (p->i >= p->argc)
                return usage(p, "'cordon settings import' needs a FILE");
        const char *file = p->argv[p->i++];
        if (strcmp(file, "--help") == 0 || strcmp(file, "-h") == 0)
                return apply_extra(p, EXTRA_HELP, NULL) < 0 ? -EINVAL : 0;
        if (p->i < p->argc)
                return usage(p, "unexpected argument '%s'", CLI_QUOTE(p->argv[p->i]));
        if (!file[0])
                return usage(p, "'cordon settings import' needs a FILE, not an empty name");
        return make_absolute(p->cwd, file, &p->out->import_path);
}

/* cordon cache list | cordon cache clear [TOOL] (docs/design/tool-caches.md) */
static int parse_cache(parser *p) {
        p->see = "cordon help cache";
        p->out->command = CLI_COMMAND_CACHE;
        if (p->i >= p->argc)
                return usage(p, "'cordon cache' needs a subcommand: list or clear [TOOL]");
        const char *sub = p->argv[p->i++];
        if (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0)
                return apply_extra(p, EXTRA_HELP, NULL) < 0 ? -EINVAL : 0;
        if (strcmp(sub, "list") != 0 && strcmp(sub, "clear") != 0)
                return usage(p, "unknown cache subcommand '%s'; use list or clear [TOOL]",
                             CLI_QUOTE(sub));
        p->out->cache_clear = strcmp(sub, "clear") == 0;
        if (p->out->cache_clear && p->i < p->argc) {
                const char *tool = p->argv[p->i++];
                if (strcmp(tool, "--help") == 0 || strcmp(tool, "-h") == 0)
                        return apply_extra(p, EXTRA_HELP, NULL) < 0 ? -EINVAL : 0;
                if (!tool[0])
                        return usage(p, "'cordon cache clear' needs a TOOL name, not an empty one");
                if (!(p->out->cache_tool = strdup(tool)))
                        return -ENOMEM;
        }
        if (p->i < p->argc)
                return usage(p, "unexpected argument '%s'", CLI_QUOTE(p->argv[p->i]));
        return 0;
}

/* ---- cordond's clients: session launch|list|destroy, exec -------------------------------- */

/* One positional SESSION (a non-empty argument; the daemon checks the rest). */
static int take_session(parser *p, const char *synopsis) {
        if (p->i >= p->argc)
                return usage(p, "no SESSION given: %s", synopsis);
        const char *id = p->argv[p->i++];
        if (!id[0])
                return usage(p, "empty SESSION: %s", synopsis);
        p->out->session_id = strdup(id);
        return p->out->session_id ? 0 : -ENOMEM;
}

/* cordon session launch: the policy flags build the session's layer (cmd-session.c), as they
 * build the session layer of `cordon run`. Settings files are not read: the daemon's sessions
 * take one policy document, and reading some layers but not others would be a silent gap. */
static int parse_session_launch(parser *p) {
        int r = parse_options(p, ALLOW_POLICY | ALLOW_SOCKET);
        if (r != 0)
                return r < 0 ? r : 0;
        if (p->out->n_settings_files > 0)
                return usage(p, "--settings is not read by 'cordon session launch'; give the "
                                "session's policy as flags or --policy FILE");
        return check_conflicts(p);
}

static int parse_session_destroy(parser *p) {
        static const char synopsis[] = "cordon session destroy [--socket PATH] SESSION";
        int r = parse_options(p, ALLOW_SOCKET | ALLOW_POSITIONAL);
        if (r != 0)
                return r < 0 ? r : 0;
        if ((r = take_session(p, synopsis)) < 0)
                return r;
        r = parse_options(p, ALLOW_SOCKET);
        return r < 0 ? r : 0;
}

/* cordon session launch|list|destroy */
static int parse_session(parser *p) {
        static const struct {
                const char *name;
                cli_command command;
        } subs[] = {
                { "launch", CLI_COMMAND_SESSION_LAUNCH },
                { "list", CLI_COMMAND_SESSION_LIST },
                { "destroy", CLI_COMMAND_SESSION_DESTROY },
        };
        p->see = "cordon session --help";
        p->out->command = CLI_COMMAND_SESSION_LAUNCH; /* the topic of `cordon session --help` */
        if (p->i >= p->argc)
                return usage(p, "'cordon session' needs a subcommand: launch, list or destroy");
        const char *sub = p->argv[p->i++];
        if (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0)
                return apply_extra(p, EXTRA_HELP, NULL) < 0 ? -EINVAL : 0;
        for (size_t i = 0; i < sizeof(subs) / sizeof(subs[0]); i++) {
                if (strcmp(sub, subs[i].name) != 0)
                        continue;
                p->out->command = subs[i].command;
                if (subs[i].command == CLI_COMMAND_SESSION_LAUNCH)
                        return parse_session_launch(p);
                if (subs[i].command == CLI_COMMAND_SESSION_DESTROY)
                        return parse_session_destroy(p);
                int r = parse_options(p, ALLOW_JSON | ALLOW_SOCKET);
                return r < 0 ? r : 0;
        }
        const char *names[] = { "launch", "list", "destroy" };
        const char *near = text_nearest(sub, names, ELEMENTSOF(names));
        if (near)
                return usage(p, "unknown session subcommand '%s'; did you mean '%s'?",
                             CLI_QUOTE(sub), near);
        return usage(p, "unknown session subcommand '%s'; use launch, list or destroy",
                     CLI_QUOTE(sub));
}

/* cordon exec SESSION [OPTIONS] [--] CMD [ARG...]: options may come before and after SESSION. */
static int parse_exec(parser *p) {
        static const char synopsis[] = "cordon exec SESSION [OPTIONS] [--] CMD [ARG...]";
        p->out->command = CLI_COMMAND_EXEC;
        p->see = "cordon exec --help";
        unsigned allow = ALLOW_SOCKET | ALLOW_EXEC | ALLOW_POSITIONAL | ALLOW_QUIET;
        int r = parse_options(p, allow);
        if (r != 0)
                return r < 0 ? r : 0;
        if (p->dashdash)
                return usage(p, "no SESSION before '--': %s", synopsis);
        if ((r = take_session(p, synopsis)) < 0)
                return r;
        r = parse_options(p, allow);
        if (r != 0)
                return r < 0 ? r : 0;
        return copy_command(p, synopsis);
}

/* cordon terminal [--native] [--socket PATH] SESSION */
static int parse_terminal(parser *p) {
        static const char synopsis[] = "cordon terminal [--native] [--socket PATH] SESSION";
        p->out->command = CLI_COMMAND_TERMINAL;
        p->see = "cordon terminal --help";
        unsigned allow = ALLOW_SOCKET | ALLOW_TERMINAL | ALLOW_POSITIONAL;
        int r = parse_options(p, allow);
        if (r != 0)
                return r < 0 ? r : 0;
        if ((r = take_session(p, synopsis)) < 0)
                return r;
        r = parse_options(p, ALLOW_SOCKET | ALLOW_TERMINAL);
        return r < 0 ? r : 0;
}

static int parse_help(parser *p) {
        static const struct {
                const char *name;
                cli_command topic;
        } topics[] = {
                { "run", CLI_COMMAND_RUN },         { "probe", CLI_COMMAND_PROBE },
                { "policy", CLI_COMMAND_POLICY_SHOW }, { "version", CLI_COMMAND_VERSION },
                { "explain", CLI_COMMAND_EXPLAIN }, { "help", CLI_COMMAND_HELP },
                { "settings", CLI_COMMAND_SETTINGS_IMPORT },
                { "session", CLI_COMMAND_SESSION_LAUNCH }, { "exec", CLI_COMMAND_EXEC },
                { "terminal", CLI_COMMAND_TERMINAL }, { "cache", CLI_COMMAND_CACHE },
        };
        p->out->command = CLI_COMMAND_HELP;
        p->out->help_topic = CLI_COMMAND_HELP;
        if (p->i >= p->argc)
                return 0;
        const char *t = p->argv[p->i++];
        if (p->i < p->argc)
                return usage(p, "unexpected argument '%s'", CLI_QUOTE(p->argv[p->i]));
        for (size_t i = 0; i < sizeof(topics) / sizeof(topics[0]); i++)
                if (strcmp(t, topics[i].name) == 0) {
                        p->out->help_topic = topics[i].topic;
                        return 0;
                }
        return usage(p, "unknown help topic '%s'", CLI_QUOTE(t));
}

/* Every command, for "no command given" and "did you mean" (help.c's overview lists the same). */
static const char *const command_names[] = { "run",     "exec",   "session",  "terminal",
                                             "explain", "policy", "settings", "cache",
                                             "probe",   "completion", "version", "help" };
#define COMMAND_LIST                                                                              \
        "run, exec, session launch|list|destroy, terminal, explain, policy show, settings "       \
        "import|trust|untrust|trusted, cache list|clear, probe, completion, version and help"

static int unknown_command(parser *p, const char *cmd) {
        const char *near = text_nearest(cmd, command_names, ELEMENTSOF(command_names));
        if (near)
                return usage(p, "unknown command '%s'; did you mean '%s'?", CLI_QUOTE(cmd), near);
        return usage(p, "unknown command '%s'; the commands are " COMMAND_LIST, CLI_QUOTE(cmd));
}

static int parse_command(parser *p) {
        if (p->argc < 2)
                return usage(p, "no command given; the commands are " COMMAND_LIST);
        const char *cmd = p->argv[p->i++];
        if (strcmp(cmd, "run") == 0)
                return parse_run(p);
        if (strcmp(cmd, "probe") == 0)
                return parse_probe(p);
        if (strcmp(cmd, "explain") == 0)
                return parse_explain(p);
        if (strcmp(cmd, "policy") == 0)
                return parse_policy(p);
        if (strcmp(cmd, "settings") == 0)
                return parse_settings(p);
        if (strcmp(cmd, "session") == 0)
                return parse_session(p);
        if (strcmp(cmd, "exec") == 0)
                return parse_exec(p);
        if (strcmp(cmd, "terminal") == 0)
                return parse_terminal(p);
        if (strcmp(cmd, "cache") == 0)
                return parse_cache(p);
        if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0)
                return parse_help(p);
        if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0) {
                p->out->command = CLI_COMMAND_VERSION;
                if (p->i < p->argc)
                        return usage(p, "unexpected argument '%s'", CLI_QUOTE(p->argv[p->i]));
                return 0;
        }
        if (cmd[0] == '-')
                return usage(p, "unknown option '%s'; options come after the command: 'cordon "
                                "COMMAND %s ...'", CLI_QUOTE(cmd), CLI_QUOTE(cmd));
        return unknown_command(p, cmd);
}

int cli_args_parse(int argc, char *const argv[], const char *cwd, cli_args *ret,
                   cordon_error *err) {
        *ret = (cli_args) { .events_fd = -1, .json_fd = -1 };
        parser p = { .argc = argc, .argv = argv, .i = 1, .cwd = cwd, .see = "cordon help",
                     .out = ret, .err = err };
        if (!cwd || cwd[0] != '/')
                return set_error(err, CORDON_USAGE, "the current directory is not known");
        int r = parse_command(&p);
        if (r == -ENOMEM) {
                (void) set_error(err, CORDON_LAUNCH_FAILED, "out of memory parsing arguments");
                if (err)
                        err->sys_errno = ENOMEM;
        }
        if (r < 0)
                cli_args_done(ret);
        return r < 0 ? r : 0;
}

void cli_args_done(cli_args *a) {
        for (size_t i = 0; i < a->n_settings; i++)
                setting_done(&a->settings[i]);
        free(a->settings);
        if (a->argv)
                for (char **v = a->argv; *v; v++)
                        free(*v);
        free(a->argv);
        free(a->events_path);
        for (size_t i = 0; i < a->n_settings_files; i++)
                free(a->settings_files[i]);
        free(a->settings_files);
        free(a->import_path);
        free(a->trust_target);
        free(a->json_path);
        free(a->stderr_path);
        free(a->socket_path);
        free(a->session_id);
        free(a->exec_cwd);
        free(a->cache_tool);
        for (size_t i = 0; i < a->n_exec_env; i++)
                free(a->exec_env[i]);
        free(a->exec_env);
        *a = (cli_args) { .events_fd = -1, .json_fd = -1 };
}

/* ---- The option table, for `cordon completion` ------------------------------------------- */

/* What each parse_*() above passes to parse_options() (ALLOW_POSITIONAL aside). A completion
 * that offered an option the parser refuses, or missed one it takes, would teach the wrong
 * command line: tests/cli/test-completion.c parses every option listed here for its command. */
static unsigned command_allow(cli_command command) {
        switch (command) {
        case CLI_COMMAND_RUN:
                return ALLOW_POLICY | ALLOW_EVENTS | ALLOW_RUN_REPORT | ALLOW_QUIET;
        case CLI_COMMAND_EXPLAIN:
                return ALLOW_JSON | ALLOW_EVENTS | ALLOW_EXPLAIN;
        case CLI_COMMAND_PROBE:
                return ALLOW_JSON;
        case CLI_COMMAND_POLICY_SHOW:
                return ALLOW_POLICY | ALLOW_JSON | ALLOW_SEATBELT | ALLOW_SHOW_EXPLAIN;
        case CLI_COMMAND_SESSION_LAUNCH:
                return ALLOW_POLICY | ALLOW_SOCKET;
        case CLI_COMMAND_SESSION_LIST:
                return ALLOW_JSON | ALLOW_SOCKET;
        case CLI_COMMAND_SESSION_DESTROY:
                return ALLOW_SOCKET;
        case CLI_COMMAND_EXEC:
                return ALLOW_SOCKET | ALLOW_EXEC | ALLOW_QUIET;
        case CLI_COMMAND_TERMINAL:
                return ALLOW_SOCKET | ALLOW_TERMINAL;
        case CLI_COMMAND_SETTINGS_IMPORT: /* only --help (parse_settings) */
        case CLI_COMMAND_SETTINGS_TRUST:  /* only --help (parse_trust) */
        case CLI_COMMAND_SETTINGS_UNTRUST:
        case CLI_COMMAND_CACHE: /* only --help (parse_cache) */
                return 0;
        case CLI_COMMAND_SETTINGS_TRUSTED:
                return ALLOW_JSON;
        case CLI_COMMAND_HELP:
        case CLI_COMMAND_VERSION:
        default:
                return ~0u; /* no options at all */
        }
}

static cli_value_kind extra_value(extra_opt opt, bool takes_value) {
        switch (opt) {
        case EXTRA_BACKEND:
                return CLI_VALUE_BACKEND;
        case EXTRA_SANDBOX:
                return CLI_VALUE_ON_OFF;
        case EXTRA_EVENTS:
        case EXTRA_STDERR:
        case EXTRA_SETTINGS:
        case EXTRA_SOCKET:
        case EXTRA_CWD:
                return CLI_VALUE_PATH;
        case EXTRA_HELP:
        case EXTRA_SHOW_EXPLAIN:
        case EXTRA_JSON:
        case EXTRA_SEATBELT:
        case EXTRA_QUIET:
        case EXTRA_CAPTURE:
        case EXTRA_STATUS:
        case EXTRA_ENV:
        case EXTRA_NATIVE:
        default:
                return takes_value ? CLI_VALUE_TEXT : CLI_VALUE_NONE;
        }
}

static size_t add_option(cli_option *ret, size_t max, size_t n, cli_option o) {
        if (n < max)
                ret[n] = o;
        return n + 1;
}

size_t cli_command_options(cli_command command, cli_option *ret, size_t max) {
        unsigned allow = command_allow(command);
        if (allow == ~0u)
                return 0;
        size_t n = add_option(ret, max, 0, (cli_option) { "-h", CLI_VALUE_NONE, false });
        for (size_t i = 0; i < sizeof(extra_defs) / sizeof(extra_defs[0]); i++) {
                if (extra_defs[i].needs & ~allow)
                        continue;
                /* session launch refuses --settings (parse_session_launch) */
                if (extra_defs[i].opt == EXTRA_SETTINGS && command == CLI_COMMAND_SESSION_LAUNCH)
                        continue;
                cli_option o = { extra_defs[i].name,
                                 extra_value(extra_defs[i].opt, extra_defs[i].takes_value), false };
                n = add_option(ret, max, n, o);
        }
        if (allow & ALLOW_RUN_REPORT) /* parse_option: --json=FILE|fd:N */
                n = add_option(ret, max, n, (cli_option) { "--json", CLI_VALUE_PATH, true });
        for (int f = 0; (allow & ALLOW_POLICY) && f < _CLI_FLAG_MAX; f++) {
                value_kind k = flag_defs[f].kind;
                cli_value_kind v = k == VALUE_NONE ? CLI_VALUE_NONE
                                   : k == VALUE_PATH ? CLI_VALUE_PATH
                                   : k == VALUE_MODE ? CLI_VALUE_MODE
                                                     : CLI_VALUE_TEXT;
                n = add_option(ret, max, n, (cli_option) { flag_defs[f].name, v, false });
        }
        return n;
}
