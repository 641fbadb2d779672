/* SPDX-License-Identifier: Apache-2.0 */
/* From parsed arguments to a resolved policy, with the public setters only (see cli-policy.h). */
#include "cli/cli-policy.h"

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "policy/policy.h"

typedef int (*set_string_fn)(cordon_policy *p, const char *s);
typedef int (*set_number_fn)(cordon_policy *p, uint64_t v);

static const set_string_fn string_setters[_CLI_FLAG_MAX] = {
        [CLI_FLAG_PROTECT] = cordon_policy_add_protected_path,
        [CLI_FLAG_RUNNER_STATE_DIR] = cordon_policy_add_runner_state_dir,
        [CLI_FLAG_DENY_READ] = cordon_policy_add_deny_read,
        [CLI_FLAG_DENY_WRITE] = cordon_policy_add_deny_write,
        [CLI_FLAG_DENY_CREATE_NAME] = cordon_policy_add_deny_create_name,
        [CLI_FLAG_ALLOW_CREATE_NAME] = policy_add_allow_create_name,
        [CLI_FLAG_ALLOW_CREATE_PATH] = policy_add_allow_create_path,
        [CLI_FLAG_ENV_PASS] = cordon_policy_env_pass,
        [CLI_FLAG_ENV_SCRUB] = cordon_policy_env_scrub,
        [CLI_FLAG_WORKDIR] = cordon_policy_set_workdir,
        [CLI_FLAG_SESSION_ID] = cordon_policy_set_session_id,
        [CLI_FLAG_ALLOW_DOMAIN] = cordon_policy_add_egress_allow,
        [CLI_FLAG_DENY_DOMAIN] = cordon_policy_add_egress_deny,
        [CLI_FLAG_UPSTREAM_PROXY] = cordon_policy_set_egress_upstream,
        [CLI_FLAG_ALLOW_READ] = policy_add_allow_read,
        [CLI_FLAG_MICROVM_ACCEL] = cordon_policy_set_microvm_accel,
};

static const set_number_fn number_setters[_CLI_FLAG_MAX] = {
        [CLI_FLAG_TIMEOUT] = cordon_policy_set_timeout_ms,
        [CLI_FLAG_MEMORY] = cordon_policy_set_memory_bytes,
        [CLI_FLAG_PIDS] = cordon_policy_set_pids,
        [CLI_FLAG_CPU] = cordon_policy_set_cpu_seconds,
        [CLI_FLAG_CPUS] = cordon_policy_set_cpus,
        [CLI_FLAG_TMP_SIZE] = cordon_policy_set_tmp_size,
        [CLI_FLAG_SHM_SIZE] = cordon_policy_set_shm_size,
        [CLI_FLAG_ASK_TIMEOUT] = cordon_policy_set_egress_ask_timeout_ms,
};

static bool is_path_flag(cli_flag f) {
        return f == CLI_FLAG_WRITABLE || f == CLI_FLAG_READ_ONLY || f == CLI_FLAG_PROTECT ||
               f == CLI_FLAG_RUNNER_STATE_DIR || f == CLI_FLAG_DENY_READ ||
               f == CLI_FLAG_DENY_WRITE || f == CLI_FLAG_WORKDIR || f == CLI_FLAG_ALLOW_READ;
}

/* A setter refused a value that parsed: say which flag, which value and why (the library's own
 * reason, cordon_policy_last_error()), with the flag's hint. The library never shows an
 * --env-set value: it may well be a secret. */
static int setter_failed(const cordon_policy *session, const cli_setting *s, int r,
                         cordon_error *err) {
        if (!err)
                return r;
        const cordon_error *reason = cordon_policy_last_error(session);
        if (reason) {
                (void) cordon_set_error(err, reason->code, reason->sys_errno, "%s: %.700s; %s",
                                        cli_flag_name(s->flag), reason->message,
                                        cli_flag_hint(s->flag));
                return r;
        }
        err->sys_errno = -r;
        if (r == -ENOMEM) {
                err->code = CORDON_LAUNCH_FAILED;
                (void) snprintf(err->message, sizeof(err->message), "%s: out of memory",
                                cli_flag_name(s->flag));
                return r;
        }
        const char *why = r == -E2BIG                 ? "cannot be added: the list is full"
                          : number_setters[s->flag]   ? "is out of the accepted range"
                          : is_path_flag(s->flag)     ? "is not accepted (paths must not contain "
                                                        "'..' components or control characters)"
                                                      : "is not accepted";
        err->code = CORDON_POLICY_INVALID;
        /* The URL may carry the upstream's password: never quoted. */
        bool secret = s->flag == CLI_FLAG_UPSTREAM_PROXY;
        (void) snprintf(err->message, sizeof(err->message), "%s: '%s%s' %s; %s",
                        cli_flag_name(s->flag),
                        secret ? "<url>" : s->text ? CLI_QUOTE(s->text) : "",
                        s->flag == CLI_FLAG_ENV_SET ? "=..." : s->flag == CLI_FLAG_RESOLVE ? "=<address>" : "", why, cli_flag_hint(s->flag));
        return r;
}

static int apply_setting(cordon_policy *session, const cli_setting *s, cordon_error *err) {
        int r;
        switch (s->flag) {
        case CLI_FLAG_POLICY:
                return cordon_policy_load_file(session, s->text, err);
        case CLI_FLAG_MODE:
                r = cordon_policy_set_mode(session, s->mode);
                break;
        case CLI_FLAG_WRITABLE:
        case CLI_FLAG_READ_ONLY:
                r = cordon_policy_add_bind(session, s->text, s->flag == CLI_FLAG_READ_ONLY);
                break;
        case CLI_FLAG_ENV_SET:
                r = cordon_policy_env_set(session, s->text, s->text2);
                break;
        case CLI_FLAG_RESOLVE:
                r = cordon_policy_set_host(session, s->text, s->text2);
                break;
        case CLI_FLAG_NO_NETWORK:
                r = cordon_policy_set_network_enabled(session, false);
                break;
        case CLI_FLAG_BLOCK_READS:
                r = policy_set_block_reads(session, true);
                break;
        case CLI_FLAG_EGRESS_ASK:
                r = cordon_policy_set_egress_mode(session, CORDON_EGRESS_ASK);
                break;
        case CLI_FLAG_PROTECT:
        case CLI_FLAG_RUNNER_STATE_DIR:
        case CLI_FLAG_DENY_READ:
        case CLI_FLAG_DENY_WRITE:
        case CLI_FLAG_DENY_CREATE_NAME:
        case CLI_FLAG_ALLOW_CREATE_NAME:
        case CLI_FLAG_ALLOW_CREATE_PATH:
        case CLI_FLAG_ENV_PASS:
        case CLI_FLAG_ENV_SCRUB:
        case CLI_FLAG_WORKDIR:
        case CLI_FLAG_SESSION_ID:
        case CLI_FLAG_ALLOW_DOMAIN:
        case CLI_FLAG_DENY_DOMAIN:
        case CLI_FLAG_UPSTREAM_PROXY:
        case CLI_FLAG_ALLOW_READ:
        case CLI_FLAG_MICROVM_ACCEL:
                r = string_setters[s->flag](session, s->text);
                break;
        case CLI_FLAG_TIMEOUT:
        case CLI_FLAG_MEMORY:
        case CLI_FLAG_PIDS:
        case CLI_FLAG_CPU:
        case CLI_FLAG_CPUS:
        case CLI_FLAG_TMP_SIZE:
        case CLI_FLAG_SHM_SIZE:
        case CLI_FLAG_ASK_TIMEOUT:
                r = number_setters[s->flag](session, s->number);
                break;
        case _CLI_FLAG_MAX:
        default:
                r = -EINVAL;
                break;
        }
        return r < 0 ? setter_failed(session, s, r, err) : 0;
}

int cli_policy_apply(cordon_policy *session, const cli_args *args, cordon_error *err) {
        for (size_t i = 0; i < args->n_settings; i++) {
                int r = apply_setting(session, &args->settings[i], err);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* An errno from a public call that did not fill `err` itself (matching, finding $HOME). */
static int cli_errno_error(cordon_error *err, int r) {
        if (err) {
                err->code = CORDON_LAUNCH_FAILED;
                err->sys_errno = -r;
                (void) snprintf(err->message, sizeof(err->message), "%s",
                                r == -ENOENT ? "cannot determine the home directory; set HOME to "
                                               "an absolute path"
                                             : strerror(-r));
        }
        return r;
}

int cli_policy_build(const cli_args *args, const char *cwd, const char *home,
                     cordon_policy **ret, cordon_error *err) {
        cordon_policy *deployment = NULL;
        int r = cordon_policy_new_default(cwd, home, &deployment, err);
        if (r < 0)
                return r;
        cordon_policy *session = NULL;
        r = cordon_policy_new(&session, err);
        if (r >= 0)
                r = cli_policy_apply(session, args, err);
        if (r >= 0)
                r = cordon_policy_resolve(deployment, session, NULL, ret, err);
        cordon_policy_free(session);
        cordon_policy_free(deployment);
        return r;
}

/* ---- Settings files --------------------------------------------------------------------------- */

/* Like CLI_QUOTE, for the longer parts of settings warnings (paths, reasons). */
#define LONG_QUOTE(s) cli_quote((s), (char[1024]) { 0 }, 1024)

int cli_settings_build(const cli_args *args, const char *cwd, const char *home,
                       cordon_settings **ret, cordon_error *err) {
        cordon_policy *flags = NULL;
        int r = cordon_policy_new(&flags, err);
        if (r >= 0)
                r = cli_policy_apply(flags, args, err);
        if (r >= 0) {
                /* From cordon's own environment only. Whoever sets it could as well not run
                 * cordon; a sandboxed command cannot set it for the harness's later runs, and the
                 * settings scrub it from the command's environment (docs/settings.md). */
                const char *managed = getenv("CORDON_MANAGED_SETTINGS");
                cordon_settings_options o = {
                        .cwd = cwd,
                        .home = home,
                        .managed_path = managed && managed[0] ? managed : NULL,
                        .files = (const char *const *) args->settings_files,
                        .n_files = args->n_settings_files,
                        .command_line = flags,
                };
                r = cordon_settings_resolve(&o, ret, err);
        }
        cordon_policy_free(flags);
        return r;
}

void cli_settings_warn(const cordon_settings *s, FILE *out) {
        for (size_t i = 0; i < cordon_settings_n_ignored(s); i++) {
                const cordon_settings_note *n = cordon_settings_ignored(s, i);
                bool file = strcmp(n->layer, "settings") == 0;
                /* Each part quoted: a file name or value must not forge a second line. */
                fprintf(out, "cordon: warning: %s%s %s:%u:%u: %s%s%s%s: %s\n",
                        file ? "--settings" : n->layer, file ? " file" : " settings",
                        LONG_QUOTE(n->file), n->line, n->column, LONG_QUOTE(n->key),
                        n->value ? " '" : "", n->value ? LONG_QUOTE(n->value) : "",
                        n->value ? "'" : "", LONG_QUOTE(n->why));
        }
}

/* failIfUnavailable false: probe only then (a probe forks), and step down to none only when no
 * backend can confine here (cordon_settings_backend decides). */
static cordon_backend fallback_backend(const cordon_settings *s, cordon_backend backend,
                                       const char **why) {
        *why = NULL;
        if (cordon_settings_fail_if_unavailable(s) || backend != CORDON_BACKEND_AUTO)
                return backend;
        cordon_probe *probe = NULL;
        if (cordon_probe_run(&probe, NULL) < 0)
                return backend; /* cannot tell: stay with AUTO, which fails closed */
        backend = cordon_settings_backend(s, backend, probe, why);
        cordon_probe_free(probe);
        return backend;
}

int cli_settings_decide(const cli_args *a, const cordon_settings *s, const char *unprotected,
                        cordon_backend *backend, char *why, size_t why_size, cordon_error *err) {
        why[0] = '\0';
        if (unprotected) {
                int r = cordon_settings_check_unconfined(s, unprotected, err);
                if (r >= 0)
                        (void) snprintf(why, why_size, "%s", unprotected);
                return r;
        }
        cordon_excluded_match m;
        /* `cordon mcp` has no command line of its own: no entry can match it. */
        int r = a->argv ? cordon_settings_match_excluded(s, a->argv, environ, &m, NULL) : 0;
        if (r < 0)
                return cli_errno_error(err, r);
        if (r > 0) {
                /* The one line that says why this command ran outside the sandbox. */
                *backend = CORDON_BACKEND_NONE;
                bool file = strcmp(m.layer, "settings") == 0;
                (void) snprintf(why, why_size, "excludedCommands entry '%s' in %s%s %s:%u:%u",
                                LONG_QUOTE(m.entry), file ? "--settings" : m.layer,
                                file ? " file" : " settings", LONG_QUOTE(m.file), m.line,
                                m.column);
                return 0;
        }
        const char *fallback = NULL;
        *backend = fallback_backend(s, *backend, &fallback);
        if (fallback)
                (void) snprintf(why, why_size, "%s", fallback);
        return 0;
}

static int print_out(const char *s, bool newline) {
        if (fputs(s, stdout) < 0 || (newline && fputc('\n', stdout) < 0) || fflush(stdout) != 0) {
                cordon_error err = { .code = CORDON_LAUNCH_FAILED, .sys_errno = errno };
                (void) snprintf(err.message, sizeof(err.message),
                                "cannot write to standard output: %s", strerror(errno));
                return cli_fatal(&err);
        }
        return 0;
}

int cli_settings_show(const cli_args *a, const cordon_settings *s) {
        cordon_error err = { 0 };
        char *text = NULL;
        int r = a->json ? cordon_settings_to_json(s, &text, &err)
                        : cordon_settings_to_text(s, &text, &err);
        if (r < 0)
                return cli_fatal(&err);
        int status = print_out(text, a->json);
        free(text);
        return status;
}

/* $HOME when it is absolute, else the password database. Caller frees. */
char *cli_home_dir(void) {
        const char *h = getenv("HOME");
        if (h && h[0] == '/')
                return strdup(h);
        struct passwd pw, *res = NULL;
        char buf[4096];
        if (getpwuid_r(getuid(), &pw, buf, sizeof(buf), &res) == 0 && res && pw.pw_dir &&
            pw.pw_dir[0] == '/')
                return strdup(pw.pw_dir);
        return NULL;
}

/* Each line of `notes` as one warning (quoted: a path must not forge another line). */
static void warn_lines(const char *notes) {
        for (const char *p = notes; p && *p;) {
                size_t n = strcspn(p, "\n");
                char *line = strndup(p, n);
                if (line)
                        fprintf(stderr, "cordon: warning: %s\n", LONG_QUOTE(line));
                free(line);
                p += n + (p[n] == '\n');
        }
}

int cli_cmd_settings_import(const cli_args *a, const char *cwd) {
        cordon_error err = { 0 };
        char *home = cli_home_dir(), *json = NULL, *notes = NULL;
        int r = home ? cordon_settings_import(a->import_path, cwd, home, &json, &notes, &err)
                     : cli_errno_error(&err, -ENOENT);
        free(home);
        if (r < 0)
                return cli_fatal(&err);
        warn_lines(notes);
        int status = print_out(json, true);
        free(json);
        free(notes);
        return status;
}
