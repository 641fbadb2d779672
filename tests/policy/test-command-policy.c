/* SPDX-License-Identifier: Apache-2.0 */
/* The command policy (src/policy/command-policy.c) and its shell-line splitter
 * (src/policy/cmdline.c): what a line's commands are, which rules match them in which mode,
 * what is refused and how, what is asked and when, and the commandPolicy key's grammar. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>

#include <cmocka.h>

#include "policy/cmdline.h"
#include "policy/policy.h"
#include "cleanup.h"

/* The commands of `line` as "w1 w2|w3 w4" (dynamic words as "?word"). */
static void commands_of(const char *line, char *buf, size_t size, bool *unreadable) {
        cmd_list l = { 0 };
        assert_int_equal(cmdline_split_line(line, &l), 0);
        buf[0] = '\0';
        for (size_t i = 0; i < l.n; i++)
                for (size_t k = 0; k < l.v[i].n; k++) {
                        size_t o = strlen(buf);
                        snprintf(buf + o, size - o, "%s%s%s", k ? " " : i ? "|" : "",
                                 l.v[i].w[k].dynamic ? "?" : "", l.v[i].w[k].text);
                }
        *unreadable = l.unreadable;
        cmd_list_done(&l);
}

static void expect_split(const char *line, const char *want) {
        char got[1024];
        bool unreadable = false;
        commands_of(line, got, sizeof(got), &unreadable);
        if (strcmp(got, want) != 0)
                print_message("line [%s]: got [%s], want [%s]\n", line, got, want);
        assert_string_equal(got, want);
        assert_false(unreadable);
}

static void test_split(void **state) {
        expect_split("git push origin main", "git push origin main");
        expect_split("make && git push; echo done", "make|git push|echo done");
        expect_split("a || b | c & d\ne", "a|b|c|d|e");
        expect_split("git push > log 2>&1 < in", "git push");
        expect_split("git push &>/dev/null", "git push");
        expect_split("X=1 Y=2 git push", "git push");
        expect_split("sudo -E env A=1 nice -n 5 timeout 10s git push", "git push");
        expect_split("'git' \"push\" o\\ rigin", "git push o rigin");
        expect_split("echo $(git push) `git pull`", "git push|git pull|echo ? ?");
        expect_split("echo \"x $(git push)\"", "git push|echo ?x ");
        expect_split("git $CMD", "git ?$CMD");
        expect_split("if git push; then echo ok; fi", "git push|echo ok");
        expect_split("(cd sub && git push)", "cd sub|git push");
        expect_split("sh -c 'git push'", "git push|sh -c git push");
        expect_split("bash -ec \"make && git push\"", "make|git push|bash -ec make && git push");
        expect_split("eval git push", "git push|eval git push");
        expect_split("git push # a comment", "git push");
        expect_split("", "");
}

static void test_unreadable(void **state) {
        const char *const lines[] = { "echo \"x", "echo 'x", "x=$(git push", "echo `x",
                                      "sh -c 'sh -c \"sh -c \\\"sh -c \\\\\\\"sh -c x\\\\\\\"\\\"\"'" };
        for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
                char got[1024];
                bool unreadable = false;
                commands_of(lines[i], got, sizeof(got), &unreadable);
                if (!unreadable)
                        print_message("line [%s] should be unreadable: [%s]\n", lines[i], got);
                assert_true(unreadable);
        }
}

static cordon_policy *with_rules(const char *json, cordon_mode mode) {
        cordon_policy *p = policy_new();
        cordon_error err = { 0 };
        assert_non_null(p);
        int r = cordon_policy_load_string(p, json, strlen(json), "t", &err);
        if (r < 0)
                print_message("%s\n", err.message);
        assert_int_equal(r, 0);
        assert_int_equal(cordon_policy_set_mode(p, mode), 0);
        return p;
}

#define RULES "{\"commandPolicy\": [" \
        "{\"command\": \"git push\", \"action\": \"refuse\", \"modes\": [\"review\"]}," \
        "{\"command\": [\"rm\", \"-rf\", \"/\"], \"action\": \"ask\"}]}"

static int check(const cordon_policy *p, char *const *argv, cordon_error *err) {
        *err = (cordon_error) { 0 };
        return policy_check_command(p, argv, NULL, NULL, err);
}

/* An approver that answers `answer` and records what it was asked. */
typedef struct approver {
        cordon_command_answer answer;
        unsigned asked;
        char pattern[64], mode[32], first_word[32];
        size_t rule;
} approver;

static cordon_command_answer approve(void *userdata, const cordon_command_question *q) {
        approver *a = userdata;
        a->asked++;
        snprintf(a->pattern, sizeof(a->pattern), "%s", q->pattern);
        snprintf(a->mode, sizeof(a->mode), "%s", q->mode);
        snprintf(a->first_word, sizeof(a->first_word), "%s", q->argv[0]);
        a->rule = q->rule;
        return a->answer;
}

static int check_asking(const cordon_policy *p, char *const *argv, approver *a,
                        cordon_error *err) {
        *err = (cordon_error) { 0 };
        a->asked = 0;
        return policy_check_command(p, argv, approve, a, err);
}

static void test_check(void **state) {
        _cleanup_policy_ cordon_policy *ro = with_rules(RULES, CORDON_MODE_READ_ONLY);
        _cleanup_policy_ cordon_policy *rw = with_rules(RULES, CORDON_MODE_WORKSPACE_WRITE);
        cordon_error err;
        char *push[] = { (char *) "/usr/bin/git", (char *) "push", (char *) "origin", NULL };
        char *sh[] = { (char *) "bash", (char *) "-lc", (char *) "make test && git push", NULL };
        char *status[] = { (char *) "git", (char *) "status", NULL };
        char *pusher[] = { (char *) "git", (char *) "pusher", NULL };
        char *rm[] = { (char *) "sudo", (char *) "rm", (char *) "-rf", (char *) "/", NULL };
        char *rm_tmp[] = { (char *) "rm", (char *) "-rf", (char *) "/tmp/x", NULL };
        assert_int_equal(check(ro, push, &err), -EPERM);
        assert_int_equal(err.code, CORDON_EXEC_FAILED);
        assert_non_null(strstr(err.message, "refuses 'git push' in mode read-only"));
        assert_int_equal(check(ro, sh, &err), -EPERM);
        assert_int_equal(check(ro, status, &err), 0);
        assert_int_equal(check(ro, pusher, &err), 0);
        assert_int_equal(check(rw, push, &err), 0); /* not in this mode */
        assert_int_equal(check(rw, rm, &err), -EPERM);
        assert_non_null(strstr(err.message, "needs approval for 'rm -rf /'"));
        assert_non_null(strstr(err.message, "remove the rule"));
        assert_int_equal(check(rw, rm_tmp, &err), 0);
        /* A line that cannot be read is refused where a rule could apply, allowed where none. */
        char *odd[] = { (char *) "sh", (char *) "-c", (char *) "echo \"x", NULL };
        assert_int_equal(check(rw, odd, &err), -EPERM);
        assert_non_null(strstr(err.message, "cannot be checked"));
        _cleanup_policy_ cordon_policy *none = policy_new();
        assert_int_equal(check(none, odd, &err), 0);
}

/* "ask": the approver is asked once per rule, with the rule's words, the mode and the command;
 * its approval lets the line run, anything else refuses. A "refuse" rule, or a line that cannot
 * be read, refuses without asking. */
static void test_approval(void **state) {
        _cleanup_policy_ cordon_policy *ro = with_rules(RULES, CORDON_MODE_READ_ONLY);
        _cleanup_policy_ cordon_policy *rw = with_rules(RULES, CORDON_MODE_WORKSPACE_WRITE);
        cordon_error err;
        char *rm[] = { (char *) "sudo", (char *) "rm", (char *) "-rf", (char *) "/", NULL };
        char *twice[] = { (char *) "sh", (char *) "-c", (char *) "rm -rf / ; rm -rf / --x", NULL };
        char *rm_and_push[] = { (char *) "sh", (char *) "-c", (char *) "rm -rf / && git push",
                                NULL };
        char *odd[] = { (char *) "sh", (char *) "-c", (char *) "rm -rf / \"x", NULL };
        char *status[] = { (char *) "git", (char *) "status", NULL };
        approver yes = { .answer = CORDON_COMMAND_APPROVE }, no = { .answer = CORDON_COMMAND_DENY };
        approver odd_answer = { .answer = (cordon_command_answer) 7 };

        assert_int_equal(check_asking(rw, rm, &yes, &err), 0);
        assert_int_equal(yes.asked, 1);
        assert_string_equal(yes.pattern, "rm -rf /");
        assert_string_equal(yes.mode, "workspace-write");
        assert_string_equal(yes.first_word, "sudo");
        assert_int_equal(yes.rule, 1);
        assert_int_equal(check_asking(rw, twice, &yes, &err), 0);
        assert_int_equal(yes.asked, 1); /* one rule, one question */

        assert_int_equal(check_asking(rw, rm, &no, &err), -EPERM);
        assert_int_equal(no.asked, 1);
        assert_int_equal(err.code, CORDON_EXEC_FAILED);
        assert_non_null(strstr(err.message, "it was not approved"));
        assert_int_equal(check_asking(rw, rm, &odd_answer, &err), -EPERM); /* not an approval */

        /* In review, git push is refused: nobody is asked about the rm. */
        assert_int_equal(check_asking(ro, rm_and_push, &yes, &err), -EPERM);
        assert_int_equal(yes.asked, 0);
        assert_non_null(strstr(err.message, "refuses 'git push'"));
        assert_int_equal(check_asking(rw, odd, &yes, &err), -EPERM);
        assert_int_equal(yes.asked, 0);
        assert_non_null(strstr(err.message, "cannot be checked"));
        /* Nothing matches: nobody is asked. */
        assert_int_equal(check_asking(rw, status, &yes, &err), 0);
        assert_int_equal(yes.asked, 0);
        /* Without an approver the refusal says how to approve. */
        assert_int_equal(check(rw, rm, &err), -EPERM);
        assert_non_null(strstr(err.message, "nobody to ask"));
        assert_non_null(strstr(err.message, "commandApproved"));
}

static void test_layers_and_json(void **state) {
        _cleanup_policy_ cordon_policy *a = with_rules(RULES, CORDON_MODE_READ_ONLY);
        _cleanup_policy_ cordon_policy *b = with_rules(RULES, CORDON_MODE_READ_ONLY);
        assert_int_equal(policy_merge(a, b), 0);
        assert_int_equal(a->n_command_rules, 2); /* a union: the same rule once */
        strv w = { 0 };
        assert_int_equal(policy_widening_fields(a, b, &w), 0); /* rules never widen */
        strv_done(&w);
        static const char *const bad[] = {
                "{\"commandPolicy\": [{\"command\": \"git push\"}]}",
                "{\"commandPolicy\": [{\"command\": \"\", \"action\": \"refuse\"}]}",
                "{\"commandPolicy\": [{\"command\": \"git;push\", \"action\": \"refuse\"}]}",
                "{\"commandPolicy\": [{\"command\": \"git\", \"action\": \"deny\"}]}",
                "{\"commandPolicy\": [{\"command\": \"git\", \"action\": \"ask\", \"modes\": [\"x\"]}]}",
                "{\"commandPolicy\": [{\"command\": \"git\", \"action\": \"ask\", \"extra\": 1}]}",
                "{\"commandPolicy\": {}}",
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                _cleanup_policy_ cordon_policy *p = policy_new();
                cordon_error err = { 0 };
                assert_true(cordon_policy_load_string(p, bad[i], strlen(bad[i]), "t", &err) < 0);
                assert_int_equal(err.code, CORDON_POLICY_INVALID);
        }
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_split),
                cmocka_unit_test(test_unreadable),
                cmocka_unit_test(test_check),
                cmocka_unit_test(test_approval),
                cmocka_unit_test(test_layers_and_json),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
