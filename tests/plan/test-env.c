/* SPDX-License-Identifier: Apache-2.0 */
/* The command's environment: built-in scrub list, env.pass, env.scrub, env.set, duplicates,
 * malformed entries and size limits. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>

#include <cmocka.h>

#include "plan/plan-internal.h"
#include "cleanup.h"
#include "tmptree.h"


/* Runs the filter over a NULL-terminated list of string literals. */
static plan *filter(const cordon_policy *pol, const char *const *in, int *ret_r,
                    cordon_error *err) {
        size_t n = 0;
        while (in[n])
                n++;
        char **env = calloc(n + 1, sizeof(char *));
        assert_non_null(env);
        for (size_t i = 0; i < n; i++)
                env[i] = strdup(in[i]);
        plan *p = calloc(1, sizeof(plan));
        assert_non_null(p);
        *ret_r = plan_env(pol, env, p, err);
        for (size_t i = 0; i < n; i++)
                free(env[i]);
        free(env);
        return p;
}

static bool has_entry(const plan *p, const char *entry) {
        return strv_contains(&p->env, entry);
}

static bool has_name(const plan *p, const char *name) {
        size_t l = strlen(name);
        for (size_t i = 0; i < p->env.n; i++)
                if (strncmp(p->env.v[i], name, l) == 0 && p->env.v[i][l] == '=')
                        return true;
        return false;
}

static void test_builtin_scrub(void **state) {
        _cleanup_policy_ cordon_policy *pol = test_policy_new();
        static const char *const scrubbed[] = {
                "GITHUB_TOKEN=1",      "MY_TOKEN=1",       "MY_TOKEN_FILE=1",
                "APP_SECRET=1",        "APP_SECRET_V2=1",  "DJANGO_SECRET_KEY=1",
                "DB_PASSWORD=1",       "DB_PASSWD=1",      "STRIPE_API_KEY=1",
                "X_APIKEY=1",          "S3_ACCESS_KEY_ID=1", "GPG_PRIVATE_KEY_B64=1",
                "GCP_CREDENTIALS=1",   "NPM_AUTH=1",       "AWS_REGION=1",
                "GH_TOKEN=1",          "GITLAB_TOKEN=1",   "NPM_TOKEN=1",
                "ANTHROPIC_API_KEY=1", "OPENAI_API_KEY=1", "GOOGLE_APPLICATION_CREDENTIALS=1",
                "SSH_AUTH_SOCK=1",     "GPG_AGENT_INFO=1", "DBUS_SESSION_BUS_ADDRESS=1",
                "XDG_RUNTIME_DIR=1",   "DOCKER_HOST=1",    "KUBECONFIG=1",
                "TMUX=1",              "TMUX_PANE=1",      "STY=1",
                NULL,
        };
        static const char *const kept[] = {
                "PATH=/usr/bin", "HOME=/home/u", "LANG=C.UTF-8", "TOKENIZER=x", "TERM=xterm",
                /* Exempted from "*_AUTH*": no secret, and commits need them. */
                "GIT_AUTHOR_NAME=A", "GIT_AUTHOR_EMAIL=a@x",
                /* Case-sensitive matching: lower-case names are not caught. */
                "github_token=x",
                NULL,
        };
        const char *all[64];
        size_t n = 0;
        for (size_t i = 0; scrubbed[i]; i++)
                all[n++] = scrubbed[i];
        for (size_t i = 0; kept[i]; i++)
                all[n++] = kept[i];
        all[n] = NULL;
        int r;
        cordon_error err = { 0 };
        plan *p = filter(pol, all, &r, &err);
        assert_int_equal(r, 0);
        for (size_t i = 0; scrubbed[i]; i++) {
                char name[64];
                snprintf(name, sizeof(name), "%.*s", (int) strcspn(scrubbed[i], "="),
                         scrubbed[i]);
                if (has_name(p, name))
                        print_message("not scrubbed: %s\n", name);
                assert_false(has_name(p, name));
                assert_true(strv_contains(&p->env_scrubbed, name));
        }
        for (size_t i = 0; kept[i]; i++)
                assert_true(has_entry(p, kept[i]));
        assert_int_equal(p->env.n, 8);
        plan_free(p);
}

static void test_pass_scrub_set(void **state) {
        _cleanup_policy_ cordon_policy *pol = test_policy_new();
        assert_int_equal(cordon_policy_env_pass(pol, "GITHUB_TOKEN"), 0);
        assert_int_equal(cordon_policy_env_scrub(pol, "*_COOKIE"), 0);
        assert_int_equal(cordon_policy_env_scrub(pol, "GIT_AUTHOR_*"), 0);
        assert_int_equal(cordon_policy_env_set(pol, "LANG", "C"), 0);
        assert_int_equal(cordon_policy_env_set(pol, "NEW", "v=1"), 0);
        assert_int_equal(cordon_policy_env_set(pol, "API_TOKEN", "scoped"), 0);
        static const char *const in[] = { "GITHUB_TOKEN=pass-me", "SESSION_COOKIE=c",
                                          "GIT_AUTHOR_NAME=A",   "LANG=en_US.UTF-8",
                                          "API_TOKEN=host-token", "PATH=/bin",
                                          NULL };
        int r;
        cordon_error err = { 0 };
        plan *p = filter(pol, in, &r, &err);
        assert_int_equal(r, 0);
        assert_true(has_entry(p, "GITHUB_TOKEN=pass-me"));
        assert_false(has_name(p, "SESSION_COOKIE"));
        assert_false(has_name(p, "GIT_AUTHOR_NAME")); /* the policy's scrub still applies */
        assert_true(has_entry(p, "LANG=C"));
        assert_false(has_entry(p, "LANG=en_US.UTF-8"));
        assert_true(has_entry(p, "NEW=v=1"));
        /* The host's token is gone; the policy's own value is set on purpose. */
        assert_true(has_entry(p, "API_TOKEN=scoped"));
        assert_true(strv_contains(&p->env_scrubbed, "API_TOKEN"));
        assert_true(has_entry(p, "PATH=/bin"));
        assert_int_equal(p->env.n, 5);
        plan_free(p);
}

static void test_malformed_and_duplicates(void **state) {
        _cleanup_policy_ cordon_policy *pol = test_policy_new();
        static const char *const in[] = { "A=1", "NOEQUALS", "=x", "A=2", "B=", "X_TOKEN=1",
                                          "X_TOKEN=2", NULL };
        int r;
        cordon_error err = { 0 };
        plan *p = filter(pol, in, &r, &err);
        assert_int_equal(r, 0);
        assert_int_equal(p->env.n, 2);
        assert_string_equal(p->env.v[0], "A=1"); /* the first wins, as with getenv() */
        assert_string_equal(p->env.v[1], "B=");
        assert_int_equal(p->env_scrubbed.n, 1); /* names recorded once */
        plan_free(p);

        /* No environment at all. */
        plan *q = calloc(1, sizeof(plan));
        assert_int_equal(plan_env(pol, NULL, q, &err), 0);
        assert_int_equal(q->env.n, 0);
        plan_free(q);
}

static void test_limits(void **state) {
        _cleanup_policy_ cordon_policy *pol = test_policy_new();
        const char **many = calloc(4098, sizeof(char *));
        char (*buf)[16] = calloc(4097, 16);
        assert_non_null(many);
        assert_non_null(buf);
        for (size_t i = 0; i < 4097; i++) {
                snprintf(buf[i], 16, "V%zu=1", i);
                many[i] = buf[i];
        }
        int r;
        cordon_error err = { 0 };
        many[4096] = NULL; /* exactly the limit */
        plan *p = filter(pol, many, &r, &err);
        assert_int_equal(r, 0);
        plan_free(p);
        many[4096] = buf[4096];
        p = filter(pol, many, &r, &err);
        assert_int_equal(r, -E2BIG);
        assert_int_equal(err.code, CORDON_LAUNCH_FAILED);
        assert_non_null(strstr(err.message, "environment is larger than 4096"));
        plan_free(p);
        free(many);
        free(buf);

        /* Bytes: two half-megabyte values. */
        char *big = malloc(600000);
        assert_non_null(big);
        memset(big, 'x', 599999);
        big[599999] = '\0';
        memcpy(big, "A=", 2);
        char *big2 = strdup(big);
        big2[0] = 'B';
        const char *in[] = { big, big2, NULL };
        p = filter(pol, in, &r, &err);
        assert_int_equal(r, -E2BIG);
        plan_free(p);
        /* One fits; env.set pushing it over the limit is refused too. */
        assert_int_equal(cordon_policy_env_set(pol, "C", big + 600000 - 60000), 0);
        const char *in1[] = { big, NULL };
        p = filter(pol, in1, &r, &err);
        assert_int_equal(r, 0);
        plan_free(p);
        for (int i = 0; i < 8; i++) {
                char name[8];
                snprintf(name, sizeof(name), "S%d", i);
                assert_int_equal(cordon_policy_env_set(pol, name, big + 600000 - 60000), 0);
        }
        p = filter(pol, in1, &r, &err);
        assert_int_equal(r, -E2BIG);
        assert_non_null(strstr(err.message, "the command's environment is too large"));
        plan_free(p);
        free(big);
        free(big2);
}

/* The one NAME= scanner (util/util.h): a prefix is not a name, the first entry wins, set
 * replaces in place, unset removes every copy. */
static void test_env_helpers(void **state) {
        char *envp[] = { (char *) "PATHX=no", (char *) "PATH=/a", (char *) "PATH=/b",
                         (char *) "EMPTY=", (char *) "NOEQ", NULL };
        assert_int_equal(env_find(envp, "PATH"), 1);
        assert_string_equal(env_get(envp, "PATH"), "/a");
        assert_string_equal(env_get(envp, "EMPTY"), "");
        assert_null(env_get(envp, "PAT"));
        assert_null(env_get(envp, "NOEQ"));
        assert_null(env_get(NULL, "PATH"));
        strv s = { 0 };
        assert_int_equal(strv_env_unset(&s, "A"), 0);
        for (size_t i = 0; envp[i]; i++)
                assert_int_equal(strv_push(&s, envp[i]), 0);
        assert_int_equal(strv_env_set(&s, "PATH", "/c"), 0);
        assert_string_equal(s.v[1], "PATH=/c");
        assert_string_equal(s.v[2], "PATH=/b");
        assert_int_equal(strv_env_set(&s, "NEW", "v=w"), 0);
        assert_string_equal(s.v[5], "NEW=v=w");
        assert_int_equal(strv_env_unset(&s, "PATH"), 2);
        assert_null(env_get(s.v, "PATH"));
        assert_string_equal(env_get(s.v, "PATHX"), "no");
        assert_int_equal(s.n, 4);
        assert_null(s.v[4]);
        strv_done(&s);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_env_helpers),
                cmocka_unit_test(test_builtin_scrub),
                cmocka_unit_test(test_pass_scrub_set),
                cmocka_unit_test(test_malformed_and_duplicates),
                cmocka_unit_test(test_limits),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
