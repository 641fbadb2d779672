/* SPDX-License-Identifier: Apache-2.0 */
/* Argument parsing for `cordon` (see args.h). Table-driven: one row per option says what value it
 * takes; one function per value kind checks it. Every message that quotes user input goes
 * through quote() so a fatal line stays one printable line. */
#include "cli/args-internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h" /* text_nearest(): the "did you mean" of policy files, reused */


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
        [CLI_FLAG_CPUS] = { "--cpus", VALUE_COUNT,
                            "use a whole number of vCPUs, 1 to 255 (e.g. 2)" },
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
        [CLI_FLAG_UPSTREAM_PROXY] = { "--upstream-proxy", VALUE_TEXT,
                                      "use http://[user:password@]host:port or "
                                      "socks5://[user:password@]host:port" },
        [CLI_FLAG_BLOCK_READS] = { "--block-reads-outside-workdirs", VALUE_NONE, "" },
        [CLI_FLAG_ALLOW_READ] = { "--allow-read", VALUE_PATH,
                                  "give a path readable under --block-reads-outside-workdirs" },
        [CLI_FLAG_EGRESS_ASK] = { "--egress-ask", VALUE_NONE, "" },
        [CLI_FLAG_ASK_TIMEOUT] = { "--ask-timeout", VALUE_DURATION,
                                   "use a duration from 100ms to 1h (e.g. 30s, 500ms, 2m)" },
        [CLI_FLAG_MICROVM_ACCEL] = { "--microvm-accel", VALUE_TEXT,
                                     "use kvm (hardware KVM, the default) or tcg (software "
                                     "emulation)" },
};

const char *cli_flag_name(cli_flag flag) {
        return (unsigned) flag < _CLI_FLAG_MAX ? flag_defs[flag].name : "--?";
}

const char *cli_flag_hint(cli_flag flag) {
        return (unsigned) flag < _CLI_FLAG_MAX ? flag_defs[flag].hint : "";
}


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
int cli_set_error(cordon_error *err, cordon_code code, const char *fmt, ...) {
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
int cli_usage(parser *p, const char *fmt, ...) {
        char what[768];
        va_list ap;
        va_start(ap, fmt);
        (void) vsnprintf(what, sizeof(what), fmt, ap);
        va_end(ap);
        return cli_set_error(p->err, CORDON_USAGE, "%s (see '%s')", what, p->see);
}

/* "--flag: <what>; <hint>", code POLICY_INVALID. */
CLI_PRINTF(3, 4)
static int bad_value(parser *p, cli_flag flag, const char *fmt, ...) {
        char what[768];
        va_list ap;
        va_start(ap, fmt);
        (void) vsnprintf(what, sizeof(what), fmt, ap);
        va_end(ap);
        return cli_set_error(p->err, CORDON_POLICY_INVALID, "%s: %s; %s", flag_defs[flag].name,
                             what, flag_defs[flag].hint);
}

/* ---- Values ------------------------------------------------------------------------------- */

/* A path as typed by a person, made absolute against the (physical, getcwd) cwd. Leading "." and
 * ".." components are resolved here, which is exact because cwd contains no symlinks; a ".."
 * anywhere else is kept, and the policy setter refuses it rather than guess what a symlink before
 * it points to. */
int cli_make_absolute(const char *cwd, const char *in, char **ret) {
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
                return cli_make_absolute(p->cwd, value, &s->text);
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
        { "--analytics", EXTRA_ANALYTICS, true, ALLOW_ANALYTICS },
};

static int set_sandbox(parser *p, const char *value) {
        if (strcmp(value, "on") != 0 && strcmp(value, "off") != 0)
                return cli_set_error(p->err, CORDON_POLICY_INVALID,
                                 "--sandbox: expected 'on' or 'off', got '%s'; 'off' runs the "
                                 "command unprotected", CLI_QUOTE(value));
        p->out->sandbox_set = true;
        p->out->sandbox = strcmp(value, "on") == 0;
        return 0;
}

static int set_backend(parser *p, const char *value) {
        /* docs/design/backends.md: an unknown backend name on the command line is a usage error. */
        if (cordon_backend_from_string(value, &p->out->backend) < 0)
                return cli_usage(p, "--backend: unknown backend '%s'; use auto, native, landlock, "
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
                return cli_usage(p, "--events given twice; give it once");
        if (!value[0])
                return cli_set_error(p->err, CORDON_POLICY_INVALID, "--events: empty value; %s",
                                 EVENTS_HINT);
        if (strncmp(value, "fd:", 3) != 0)
                return cli_make_absolute(p->cwd, value, &a->events_path);
        uint64_t n = 0;
        int r = parse_count(value + 3, &n);
        if (r < 0 || n > INT32_MAX || n < 3)
                return cli_set_error(p->err, CORDON_POLICY_INVALID,
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
                return cli_usage(p, "--json needs a destination for run: --json=FILE or "
                                    "--json=fd:N (N >= 3; fds 1 and 2 carry the command's own "
                                    "output)");
        if (a->json_path || a->json_fd >= 0)
                return cli_usage(p, "--json given twice; give it once");
        if (!value[0])
                return cli_set_error(p->err, CORDON_POLICY_INVALID, "--json: empty value; %s",
                                 EVENTS_HINT);
        if (strncmp(value, "fd:", 3) != 0)
                return cli_make_absolute(p->cwd, value, &a->json_path);
        uint64_t n = 0;
        int r = parse_count(value + 3, &n);
        if (r < 0 || n > INT32_MAX || n < 3)
                return cli_set_error(p->err, CORDON_POLICY_INVALID,
                                 "--json: '%s' is not a usable descriptor; %s", CLI_QUOTE(value),
                                 EVENTS_HINT);
        a->json_fd = (int) n;
        return 0;
}

/* explain --status N: the exit status the run ended with, as a shell reports it. */
static int set_status(parser *p, const char *value) {
        uint64_t n = 0;
        if (parse_count(value, &n) < 0 || n > 255)
                return cli_usage(p, "--status: '%s' is not an exit status 0-255", CLI_QUOTE(value));
        p->out->status_set = true;
        p->out->status = (int) n;
        return 0;
}

static int set_stderr_path(parser *p, const char *value) {
        if (p->out->stderr_path)
                return cli_usage(p, "--stderr given twice; give it once");
        if (!value[0])
                return cli_usage(p, "--stderr: empty path");
        return cli_make_absolute(p->cwd, value, &p->out->stderr_path);
}

/* session, exec --socket PATH: cordond's socket (cmd-session.c connects and checks it). */
static int set_socket(parser *p, const char *value) {
        if (p->out->socket_path)
                return cli_usage(p, "--socket given twice; give it once");
        if (!value[0])
                return cli_usage(p, "--socket: empty path; give the path of cordond's socket");
        return cli_make_absolute(p->cwd, value, &p->out->socket_path);
}

/* exec --cwd DIR: relative to the caller's directory, like every path on this command line. */
static int set_exec_cwd(parser *p, const char *value) {
        if (p->out->exec_cwd)
                return cli_usage(p, "--cwd given twice; give it once");
        if (!value[0])
                return cli_usage(p, "--cwd: empty path; give the directory the command starts in");
        return cli_make_absolute(p->cwd, value, &p->out->exec_cwd);
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
                return cli_usage(p, "--env: expected NAME=VALUE with NAME matching "
                                "[A-Za-z_][A-Za-z0-9_]*, got '%s'",
                             eq ? "<invalid name>=..." : CLI_QUOTE(value));
        if (a->n_exec_env >= EXEC_ENV_MAX)
                return cli_usage(p, "--env given more than %d times", EXEC_ENV_MAX);
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
                return cli_usage(p, "option '%s' needs a value: '%s VALUE' or '%s=VALUE'", name,
                                 name, name);
        *ret = p->argv[p->i++];
        return 0;
}

#define MAX_SETTINGS_FILES 64

/* --settings FILE (repeatable): only the path here; the file is read when the settings are
 * resolved (cli-policy.c), in the order given. */
static int add_settings_file(parser *p, const char *value) {
        cli_args *a = p->out;
        if (!value[0])
                return cli_set_error(p->err, CORDON_POLICY_INVALID,
                                 "--settings: empty path; give a settings file (JSON)");
        if (a->n_settings_files >= MAX_SETTINGS_FILES)
                return cli_usage(p, "--settings given more than %d times", MAX_SETTINGS_FILES);
        char **n = reallocarray(a->settings_files, a->n_settings_files + 1, sizeof(char *));
        if (!n)
                return -ENOMEM;
        a->settings_files = n;
        int r = cli_make_absolute(p->cwd, value, &a->settings_files[a->n_settings_files]);
        if (r >= 0)
                a->n_settings_files++;
        return r;
}

int cli_apply_extra(parser *p, extra_opt opt, const char *value) {
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
        case EXTRA_ANALYTICS:
                if (p->out->analytics_path)
                        return cli_usage(p, "--analytics given twice; give it once");
                if (!value[0])
                        return cli_set_error(p->err, CORDON_POLICY_INVALID,
                                             "--analytics: empty value; give a file path");
                return cli_make_absolute(p->cwd, value, &p->out->analytics_path);
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
                return cli_usage(p, "unknown option '%s'; did you mean '%s'?", CLI_QUOTE(name),
                                 near);
        if (elsewhere)
                return cli_usage(p, "option '%s' does not apply to this command", CLI_QUOTE(name));
        return cli_usage(p, "unknown option '%s'", CLI_QUOTE(name));
}

/* One "--name[=value]" argument (already consumed). Returns 1 when parsing should stop (--help). */
static int parse_option(parser *p, const char *arg, unsigned allow) {
        char name[64];
        const char *eq = strchr(arg, '=');
        size_t len = eq ? (size_t) (eq - arg) : strlen(arg);
        if (len >= sizeof(name))
                return cli_usage(p, "unknown option '%s'", CLI_QUOTE(arg));
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
                        return cli_usage(p, "option '%s' takes no value: write '%s' alone", name,
                                         name);
                if (extra_defs[i].takes_value && take_value(p, name, inline_value, &value) < 0)
                        return -EINVAL;
                return cli_apply_extra(p, extra_defs[i].opt, value);
        }
        for (int f = 0; (allow & ALLOW_POLICY) && f < _CLI_FLAG_MAX; f++) {
                if (strcmp(name, flag_defs[f].name) != 0)
                        continue;
                bool takes_value = flag_defs[f].kind != VALUE_NONE;
                if (!takes_value && inline_value)
                        return cli_usage(p, "option '%s' takes no value: write '%s' alone", name,
                                         name);
                if (takes_value && take_value(p, name, inline_value, &value) < 0)
                        return -EINVAL;
                return add_setting(p, (cli_flag) f, value);
        }
        return unknown_option(p, name, allow);
}

/* Options up to "--", the first non-option (with ALLOW_POSITIONAL) or the end. Returns 1 when
 * --help ended parsing, 0 otherwise, or -errno. */
int cli_parse_options(parser *p, unsigned allow) {
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
                        return cli_usage(p, "unexpected argument '%s'", CLI_QUOTE(arg));
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
int cli_check_conflicts(parser *p) {
        const cli_args *a = p->out;
        if (!a->sandbox_set || !a->backend_set || a->backend == CORDON_BACKEND_AUTO)
                return 0;
        if (a->sandbox && a->backend == CORDON_BACKEND_NONE)
                return cli_usage(p, "--sandbox on conflicts with --backend none");
        if (!a->sandbox && a->backend != CORDON_BACKEND_NONE)
                return cli_usage(p, "--sandbox off conflicts with --backend %s",
                             cordon_backend_to_string(a->backend));
        return 0;
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
        free(a->analytics_path);
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
        free(a->secret_name);
        for (size_t i = 0; i < a->n_exec_env; i++)
                free(a->exec_env[i]);
        free(a->exec_env);
        *a = (cli_args) { .events_fd = -1, .json_fd = -1 };
}

/* ---- The option table, for `cordon completion` ------------------------------------------- */

/* What each parse_*() above passes to cli_parse_options() (ALLOW_POSITIONAL aside). A completion
 * that offered an option the parser refuses, or missed one it takes, would teach the wrong
 * command line: tests/cli/test-completion.c parses every option listed here for its command. */
static unsigned command_allow(cli_command command) {
        switch (command) {
        case CLI_COMMAND_RUN:
                return ALLOW_POLICY | ALLOW_EVENTS | ALLOW_RUN_REPORT | ALLOW_QUIET |
                       ALLOW_ANALYTICS;
        case CLI_COMMAND_EXPLAIN:
                return ALLOW_JSON | ALLOW_EVENTS | ALLOW_EXPLAIN;
        case CLI_COMMAND_PROBE:
                return ALLOW_JSON;
        case CLI_COMMAND_POLICY_SHOW:
                return ALLOW_POLICY | ALLOW_JSON | ALLOW_SEATBELT | ALLOW_SHOW_EXPLAIN;
        case CLI_COMMAND_SESSION_LAUNCH:
                return ALLOW_POLICY | ALLOW_SOCKET | ALLOW_ANALYTICS;
        case CLI_COMMAND_SESSION_LIST:
                return ALLOW_JSON | ALLOW_SOCKET;
        case CLI_COMMAND_SESSION_DESTROY:
                return ALLOW_SOCKET;
        case CLI_COMMAND_EXEC:
                return ALLOW_SOCKET | ALLOW_EXEC | ALLOW_QUIET;
        case CLI_COMMAND_TERMINAL:
                return ALLOW_SOCKET | ALLOW_TERMINAL;
        case CLI_COMMAND_MCP:
                return ALLOW_POLICY;
        case CLI_COMMAND_SETTINGS_IMPORT: /* only --help (parse_settings) */
        case CLI_COMMAND_SETTINGS_TRUST:  /* only --help (parse_trust) */
        case CLI_COMMAND_SETTINGS_UNTRUST:
        case CLI_COMMAND_CACHE: /* only --help (parse_cache) */
        case CLI_COMMAND_SECRET_SET: /* only --help (parse_secret) */
        case CLI_COMMAND_SECRET_RM:
                return 0;
        case CLI_COMMAND_SETTINGS_TRUSTED:
        case CLI_COMMAND_SECRET_LIST:
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
        case EXTRA_ANALYTICS:
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
