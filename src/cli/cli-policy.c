/* SPDX-License-Identifier: Apache-2.0 */
/* From parsed arguments to a resolved policy, with the public setters only (see cli-policy.h). */
#include "cli/cli-policy.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

typedef int (*set_string_fn)(cordon_policy *p, const char *s);
typedef int (*set_number_fn)(cordon_policy *p, uint64_t v);

static const set_string_fn string_setters[_CLI_FLAG_MAX] = {
        [CLI_FLAG_PROTECT] = cordon_policy_add_protected_path,
        [CLI_FLAG_RUNNER_STATE_DIR] = cordon_policy_add_runner_state_dir,
        [CLI_FLAG_DENY_READ] = cordon_policy_add_deny_read,
        [CLI_FLAG_DENY_WRITE] = cordon_policy_add_deny_write,
        [CLI_FLAG_DENY_CREATE_NAME] = cordon_policy_add_deny_create_name,
        [CLI_FLAG_ENV_PASS] = cordon_policy_env_pass,
        [CLI_FLAG_ENV_SCRUB] = cordon_policy_env_scrub,
        [CLI_FLAG_WORKDIR] = cordon_policy_set_workdir,
        [CLI_FLAG_SESSION_ID] = cordon_policy_set_session_id,
        [CLI_FLAG_ALLOW_DOMAIN] = cordon_policy_add_egress_allow,
        [CLI_FLAG_DENY_DOMAIN] = cordon_policy_add_egress_deny,
};

static const set_number_fn number_setters[_CLI_FLAG_MAX] = {
        [CLI_FLAG_TIMEOUT] = cordon_policy_set_timeout_ms,
        [CLI_FLAG_MEMORY] = cordon_policy_set_memory_bytes,
        [CLI_FLAG_PIDS] = cordon_policy_set_pids,
        [CLI_FLAG_CPU] = cordon_policy_set_cpu_seconds,
};

static bool is_path_flag(cli_flag f) {
        return f == CLI_FLAG_WRITABLE || f == CLI_FLAG_READ_ONLY || f == CLI_FLAG_PROTECT ||
               f == CLI_FLAG_RUNNER_STATE_DIR || f == CLI_FLAG_DENY_READ ||
               f == CLI_FLAG_DENY_WRITE || f == CLI_FLAG_WORKDIR;
}

/* A setter refused a value that parsed: say which flag, which value and why, with the flag's hint.
 * --env-set echoes only the NAME: its value may well be a secret. */
static int setter_failed(const cli_setting *s, int r, cordon_error *err) {
        if (!err)
                return r;
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
        (void) snprintf(err->message, sizeof(err->message), "%s: '%s%s' %s; %s",
                        cli_flag_name(s->flag), s->text ? CLI_QUOTE(s->text) : "",
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
        case CLI_FLAG_PROTECT:
        case CLI_FLAG_RUNNER_STATE_DIR:
        case CLI_FLAG_DENY_READ:
        case CLI_FLAG_DENY_WRITE:
        case CLI_FLAG_DENY_CREATE_NAME:
        case CLI_FLAG_ENV_PASS:
        case CLI_FLAG_ENV_SCRUB:
        case CLI_FLAG_WORKDIR:
        case CLI_FLAG_SESSION_ID:
        case CLI_FLAG_ALLOW_DOMAIN:
        case CLI_FLAG_DENY_DOMAIN:
                r = string_setters[s->flag](session, s->text);
                break;
        case CLI_FLAG_TIMEOUT:
        case CLI_FLAG_MEMORY:
        case CLI_FLAG_PIDS:
        case CLI_FLAG_CPU:
                r = number_setters[s->flag](session, s->number);
                break;
        case _CLI_FLAG_MAX:
        default:
                r = -EINVAL;
                break;
        }
        return r < 0 ? setter_failed(s, r, err) : 0;
}

int cli_policy_apply(cordon_policy *session, const cli_args *args, cordon_error *err) {
        for (size_t i = 0; i < args->n_settings; i++) {
                int r = apply_setting(session, &args->settings[i], err);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int out_of_memory(cordon_error *err) {
        if (err) {
                err->code = CORDON_LAUNCH_FAILED;
                err->sys_errno = ENOMEM;
                (void) snprintf(err->message, sizeof(err->message), "out of memory");
        }
        return -ENOMEM;
}

int cli_policy_build(const cli_args *args, const char *cwd, const char *home,
                     cordon_policy **ret, cordon_error *err) {
        cordon_policy *deployment = NULL;
        int r = cordon_policy_new_default(cwd, home, &deployment, err);
        if (r < 0)
                return r;
        cordon_policy *session = cordon_policy_new();
        if (!session) {
                cordon_policy_free(deployment);
                return out_of_memory(err);
        }
        r = cli_policy_apply(session, args, err);
        if (r >= 0)
                r = cordon_policy_resolve(deployment, session, NULL, ret, err);
        cordon_policy_free(session);
        cordon_policy_free(deployment);
        return r;
}
