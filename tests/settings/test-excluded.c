/* SPDX-License-Identifier: Apache-2.0 */
/* excludedCommands: a command runs outside the sandbox only when the whole command line equals an
 * entry word for word, and never when the line holds a redirection, cd, $(...), backticks, ;,
 * &&, ||, |, &, a newline, a shell or other command runner, or when its executable lies where the
 * sandbox can write. Each refusal case, both as an argument vector and as a command line. */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "cordon/cordon.h"
#include "settings/excluded.h"
#include "tmptree.h"

typedef struct refusal_case {
        const char *line;     /* as a command line (split at spaces unless it holds an operator) */
        const char *argv[5];  /* as an argument vector */
        excluded_refusal why; /* for both */
} refusal_case;

static const refusal_case refusals[] = {
        { "ls -l > out", { "ls", "-l", ">", "out", NULL }, EXCLUDED_REDIRECTION },
        { "ls 2>err", { "ls", "2>err", NULL }, EXCLUDED_REDIRECTION },
        { "wc < in", { "wc", "<", "in", NULL }, EXCLUDED_REDIRECTION },
        { "cd /srv", { "cd", "/srv", NULL }, EXCLUDED_CD },
        { "echo $(id)", { "echo", "$(id)", NULL }, EXCLUDED_SUBSTITUTION },
        { "echo `id`", { "echo", "`id`", NULL }, EXCLUDED_BACKTICK },
        { "ls ; id", { "ls", ";", "id", NULL }, EXCLUDED_SEMICOLON },
        { "ls && id", { "ls", "&&", "id", NULL }, EXCLUDED_AND },
        { "ls || id", { "ls", "||", "id", NULL }, EXCLUDED_OR },
        { "ls | sh", { "ls", "|", "sh", NULL }, EXCLUDED_PIPE },
        { "sleep 9 &", { "sleep", "9", "&", NULL }, EXCLUDED_BACKGROUND },
        { "ls\nid", { "ls", "a\nid", NULL }, EXCLUDED_NEWLINE },
        { "sh -c ls", { "sh", "-c", "ls", NULL }, EXCLUDED_RUNNER },
        { "/bin/bash -c ls", { "/bin/bash", "-c", "ls", NULL }, EXCLUDED_RUNNER },
        { "env ls", { "env", "ls", NULL }, EXCLUDED_RUNNER },
        { "sudo ls", { "sudo", "ls", NULL }, EXCLUDED_RUNNER },
        { "xargs rm", { "xargs", "rm", NULL }, EXCLUDED_RUNNER },
        { "timeout 5 ls", { "timeout", "5", "ls", NULL }, EXCLUDED_RUNNER },
};

static void test_refusals(void **state) {
        for (size_t i = 0; i < sizeof(refusals) / sizeof(refusals[0]); i++) {
                const refusal_case *c = &refusals[i];
                excluded_refusal got = excluded_check_argv((char *const *) c->argv);
                if (got != c->why)
                        fail_msg("argv case %zu: %s, expected %s", i,
                                 excluded_refusal_to_string(got),
                                 excluded_refusal_to_string(c->why));
                char **words = NULL;
                assert_int_equal(excluded_split(c->line, &words, &got), 0);
                assert_null(words);
                if (got != c->why)
                        fail_msg("line case %zu: %s, expected %s", i,
                                 excluded_refusal_to_string(got),
                                 excluded_refusal_to_string(c->why));
        }
}

/* Strings are never interpreted, so what a shell would change in them is refused too. */
static void test_line_shell_syntax(void **state) {
        static const char *const lines[] = { "ls 'a b'", "ls \"a\"", "ls a\\ b", "echo $HOME",
                                             "ls *.c", "ls ~", "FOO=1 make", "ls {a,b}",
                                             "ls # x", "ls !!" };
        for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
                char **words = NULL;
                excluded_refusal why = EXCLUDED_OK;
                assert_int_equal(excluded_split(lines[i], &words, &why), 0);
                assert_null(words);
                if (why != EXCLUDED_SHELL_SYNTAX)
                        fail_msg("'%s': %s", lines[i], excluded_refusal_to_string(why));
        }
        excluded_refusal why = EXCLUDED_OK;
        char **words = NULL;
        assert_int_equal(excluded_split("  git\tstatus  --short ", &words, &why), 0);
        assert_int_equal(why, EXCLUDED_OK);
        const char *want[] = { "git", "status", "--short", NULL };
        assert_true(excluded_equal(words, (char *const *) want));
        excluded_words_free(words);
        assert_int_equal(excluded_split("   ", &words, &why), 0);
        assert_int_equal(why, EXCLUDED_EMPTY);
}

/* Word for word: no prefixes, no extra words, no different spelling of the program. */
static void test_whole_line_equality(void **state) {
        const char *entry[] = { "git", "status", NULL };
        const char *same[] = { "git", "status", NULL }, *longer[] = { "git", "status", "-s", NULL },
                   *shorter[] = { "git", NULL }, *path[] = { "/usr/bin/git", "status", NULL },
                   *joined[] = { "git status", NULL };
#define EQ(a, b) excluded_equal((char *const *) (a), (char *const *) (b))
        assert_true(EQ(entry, same));
        assert_false(EQ(entry, longer));
        assert_false(EQ(entry, shorter));
        assert_false(EQ(entry, path));
        assert_false(EQ(entry, joined));
}

/* Through the settings: a match, a near miss, each refusal, and executables the sandbox could
 * have planted. */
static void test_settings_matching(void **state) {
        char *root = tmptree_new_workspace("settings");
        char cwd[PATH_MAX], home[PATH_MAX], path_env[PATH_MAX + 32];
        snprintf(cwd, sizeof(cwd), "%s/ws", root);
        snprintf(home, sizeof(home), "%s/home", root);
        tmptree_write(root, "ws/tool", "#!/bin/sh\nexit 0\n", 0755);
        tmptree_write(root, "ws/bin/mytool", "#!/bin/sh\nexit 0\n", 0755);
        tmptree_write(root, "home/.config/cordon/settings.json",
                    "{\"excludedCommands\": [\"ls -l\", [\"git\", \"status\"], \"./tool\", "
                    "\"mytool\"]}", 0644);
        cordon_settings_options o = { .cwd = cwd, .home = home,
                                      .flags = CORDON_SETTINGS_NO_MANAGED };
        cordon_settings *s = NULL;
        cordon_error err = { 0 };
        if (cordon_settings_resolve(&o, &s, &err) < 0)
                fail_msg("%s", err.message);
        snprintf(path_env, sizeof(path_env), "PATH=%s/bin:/usr/bin:/bin", cwd);
        char *env[] = { path_env, NULL };
        cordon_excluded_match m;
        const char *why = NULL;

        const char *ls[] = { "ls", "-l", NULL };
        assert_int_equal(cordon_settings_match_excluded(s, (char **) ls, env, &m, &why), 1);
        assert_null(why);
        assert_string_equal(m.entry, "ls -l");
        assert_string_equal(m.layer, "user");
        assert_string_equal(m.file, tmptree_at(root, "home/.config/cordon/settings.json"));
        assert_int_equal(m.line, 1);
        assert_int_equal(m.column, 23);
        const char *git[] = { "git", "status", NULL };
        if (cordon_settings_match_excluded(s, (char **) git, env, &m, &why) == 1)
                assert_int_equal(m.column, 32);
        else
                assert_string_equal(why, "its executable was not found"); /* no git here */

        const char *near[] = { "ls", "-l", "/", NULL };
        assert_int_equal(cordon_settings_match_excluded(s, (char **) near, env, &m, &why), 0);
        assert_null(why);
        for (size_t i = 0; i < sizeof(refusals) / sizeof(refusals[0]); i++) {
                assert_int_equal(cordon_settings_match_excluded(s, (char **) refusals[i].argv,
                                                                env, &m, &why),
                                 0);
                assert_string_equal(why, excluded_refusal_to_string(refusals[i].why));
        }
        /* Planted where the sandbox writes: by path, and first in PATH. */
        const char *tool[] = { "./tool", NULL }, *mytool[] = { "mytool", NULL };
        assert_int_equal(cordon_settings_match_excluded(s, (char **) tool, env, &m, &why), 0);
        assert_string_equal(why, "its executable lies in a directory the sandbox can write");
        assert_int_equal(cordon_settings_match_excluded(s, (char **) mytool, env, &m, &why), 0);
        assert_string_equal(why, "its executable lies in a directory the sandbox can write");
        cordon_settings_free(s);

        /* PATH as the command will see it: a (trusted) env.set PATH counts, not only ours. */
        char json[PATH_MAX + 128];
        snprintf(json, sizeof(json), "{\"sandbox\": {\"env\": {\"set\": {\"PATH\": "
                 "\"%s/bin:/usr/bin:/bin\"}}}, \"excludedCommands\": [\"mytool\"]}", cwd);
        tmptree_write(root, "home/.config/cordon/settings.json", json, 0644);
        if (cordon_settings_resolve(&o, &s, &err) < 0)
                fail_msg("%s", err.message);
        char *plain_env[] = { NULL };
        assert_int_equal(cordon_settings_match_excluded(s, (char **) mytool, plain_env, &m, &why),
                         0);
        assert_string_equal(why, "its executable lies in a directory the sandbox can write");
        cordon_settings_free(s);

        /* The project file (it comes with the repository) sets variables the command would
         * inherit outside the sandbox: LD_PRELOAD, BASH_ENV, ... No excluded command then. */
        tmptree_write(root, "home/.config/cordon/settings.json",
                    "{\"excludedCommands\": [\"ls -l\"]}", 0644);
        tmptree_write(root, "ws/.cordon/settings.json",
                    "{\"sandbox\": {\"env\": {\"set\": {\"LD_PRELOAD\": \"/x.so\"}}}}", 0644);
        if (cordon_settings_resolve(&o, &s, &err) < 0)
                fail_msg("%s", err.message);
        assert_int_equal(cordon_settings_match_excluded(s, (char **) ls, env, &m, &why), 0);
        assert_string_equal(why, "the project settings set environment variables (env.set) it "
                                 "would inherit unsandboxed");
        cordon_settings_free(s);
        tmptree_remove(root);
}

int main(void) {
        umask(022);
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_refusals),
                cmocka_unit_test(test_line_shell_syntax),
                cmocka_unit_test(test_whole_line_equality),
                cmocka_unit_test(test_settings_matching),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
