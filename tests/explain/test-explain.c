/* SPDX-License-Identifier: Apache-2.0 */
/* The denial decoder (src/explain/) as data: event streams, stderr texts and exit statuses in,
 * classification, violations, suggested changes and inferred hints out. Each rule is tried on
 * the side it allows and on the side it refuses. Real runs through the CLI: test_explain.py. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cordon/cordon.h"
#include "explain/explain.h"
#include "util/utf8.h"

#define T "\"sessionId\":\"s\",\"time\":\"2026-01-02T03:04:05.100Z\""
#define T2 "\"sessionId\":\"s\",\"time\":\"2026-01-02T03:04:06.350Z\""
#define STARTING "{\"type\":\"starting\"," T ",\"backend\":\"auto\"}\n"
#define READY "{\"type\":\"ready\"," T ",\"backend\":\"native\"}\n"
#define EXIT(n) "{\"type\":\"exit\"," T2 ",\"exitCode\":" #n "}\n"
#define VIOLATION(action, target, rule)                                                           \
        "{\"type\":\"violation\"," T ",\"action\":\"" action "\",\"target\":\"" target           \
        "\",\"raw\":{\"syscall\":\"openat\",\"rule\":\"" rule "\"}}\n"
#define ENV_RULE VIOLATION("file-create-name", "/w/.env", ".env")

/* cordon_explain() on whole buffers; asserts success. */
static cordon_explanation *explain(const char *events, int status, const char *err_text) {
        cordon_explanation *x = NULL;
        cordon_error err = { 0 };
        int r = cordon_explain(events, events ? strlen(events) : 0, status, err_text,
                               err_text ? strlen(err_text) : 0, &x, &err);
        if (r < 0)
                fail_msg("cordon_explain: %d %s: %s", r, cordon_code_name(err.code), err.message);
        return x;
}

/* cordon_explain() expected to fail with `want` (-errno); returns the message. */
static void explain_fails(const char *events, int status, const char *err_text, int want,
                          const char *message_part) {
        cordon_explanation *x = NULL;
        cordon_error err = { 0 };
        int r = cordon_explain(events, events ? strlen(events) : 0, status, err_text,
                               err_text ? strlen(err_text) : 0, &x, &err);
        assert_int_equal(r, want);
        assert_null(x);
        assert_string_equal(cordon_code_name(err.code), "USAGE");
        if (!strstr(err.message, message_part))
                fail_msg("message '%s' lacks '%s'", err.message, message_part);
}

/* The text form (caller frees); the test fails when there is none. */
static char *as_text(const cordon_explanation *x) {
        char *s = NULL;
        assert_int_equal(cordon_explanation_to_text(x, &s, NULL), 0);
        assert_non_null(s);
        return s;
}

static json_t *as_json(const cordon_explanation *x) {
        char *s = NULL;
        assert_int_equal(cordon_explanation_to_json(x, &s, NULL), 0);
        assert_non_null(s);
        json_error_t e;
        json_t *o = json_loads(s, 0, &e);
        if (!o)
                fail_msg("not JSON: %s (%s)", s, e.text);
        free(s);
        return o;
}

static const char *jstr(json_t *o, const char *path) {
        json_t *j = o;
        char key[64];
        for (const char *p = path; j && *p;) {
                size_t n = strcspn(p, ".");
                snprintf(key, sizeof(key), "%.*s", (int) n, p);
                j = (key[0] >= '0' && key[0] <= '9') ? json_array_get(j, (size_t) atoi(key))
                                                      : json_object_get(j, key);
                p += n + (p[n] == '.');
        }
        return json_string_value(j);
}

static void assert_outcome(const cordon_explanation *x, const char *want) {
        assert_string_equal(cordon_outcome_to_string(cordon_explanation_outcome(x)), want);
}

static void assert_contains(const char *hay, const char *needle) {
        if (!hay || !strstr(hay, needle))
                fail_msg("'%s' does not contain '%s'", hay ? hay : "(null)", needle);
}

/* ---- classification ----------------------------------------------------------------------- */

static void test_ok_and_ok_with_violation(void **state) {
        cordon_explanation *x = explain(STARTING READY EXIT(0), -1, NULL);
        assert_outcome(x, "ok");
        assert_int_equal(cordon_explanation_violation_count(x), 0);
        json_t *o = as_json(x);
        assert_string_equal(jstr(o, "backend"), "native");
        assert_string_equal(jstr(o, "requestedBackend"), "auto");
        assert_int_equal(json_integer_value(json_object_get(o, "exitCode")), 0);
        assert_int_equal(json_integer_value(json_object_get(o, "durationMs")), 1250);
        json_decref(o);
        cordon_explanation_free(x);
        /* A refusal the command went on after: still ok, still listed. */
        x = explain(STARTING READY ENV_RULE EXIT(0), 0, NULL);
        assert_outcome(x, "ok");
        assert_int_equal(cordon_explanation_violation_count(x), 1);
        cordon_explanation_free(x);
}

static void test_125_alone_is_not_proof(void **state) {
        /* The command exited 125 by itself: the exit event says so. */
        cordon_explanation *x = explain(STARTING READY EXIT(125), 125, NULL);
        assert_outcome(x, "command-failed");
        cordon_explanation_free(x);
        /* Status 125 and nothing else. */
        x = explain(NULL, 125, "make: *** [all] Error 125\n");
        assert_outcome(x, "command-failed");
        cordon_explanation_free(x);
        /* A fatal-looking line that is not the last line. */
        x = explain(NULL, 125, "cordon: fatal: LAUNCH_FAILED: forged\nmore output\n");
        assert_outcome(x, "command-failed");
        cordon_explanation_free(x);
        /* An unknown code. */
        x = explain(NULL, 125, "cordon: fatal: NOT_A_CODE: forged\n");
        assert_outcome(x, "command-failed");
        cordon_explanation_free(x);
        /* The right line with another status: cordon always exits 125 after it. */
        x = explain(NULL, 1, "cordon: fatal: LAUNCH_FAILED: forged\n");
        assert_outcome(x, "command-failed");
        cordon_explanation_free(x);
        /* Events with an exit event win over any line on stderr. */
        x = explain(STARTING READY EXIT(125), 125, "cordon: fatal: LAUNCH_FAILED: forged\n");
        assert_outcome(x, "command-failed");
        cordon_explanation_free(x);
}

static void test_fatal_line_is_broken(void **state) {
        cordon_explanation *x = explain(NULL, 125, "some output\ncordon: fatal: "
                                        "POLICY_UNENFORCEABLE: cannot enforce x; hint: y\n");
        assert_outcome(x, "sandbox-broken");
        json_t *o = as_json(x);
        assert_string_equal(jstr(o, "error.code"), "POLICY_UNENFORCEABLE");
        assert_string_equal(jstr(o, "error.message"), "cannot enforce x; hint: y");
        assert_int_equal(json_integer_value(json_object_get(o, "exitCode")), 125);
        json_decref(o);
        cordon_explanation_free(x);
        /* Without a status, without a trailing newline. */
        x = explain(NULL, -1, "cordon: fatal: SANDBOX_UNAVAILABLE: refusing");
        assert_outcome(x, "sandbox-broken");
        cordon_explanation_free(x);
}

static void test_error_event_is_broken(void **state) {
        cordon_explanation *x = explain(STARTING "{\"type\":\"error\"," T ",\"code\":"
                                        "\"SANDBOX_UNAVAILABLE\",\"message\":\"no microvm\"}\n",
                                        -1, NULL);
        assert_outcome(x, "sandbox-broken");
        char *text = as_text(x);
        assert_contains(text, "sandbox-broken: cordon itself failed (SANDBOX_UNAVAILABLE): "
                              "no microvm");
        free(text);
        json_t *o = as_json(x);
        assert_null(json_object_get(o, "backend")); /* never ready: no backend was used */
        json_decref(o);
        cordon_explanation_free(x);
}

static void test_denied_name(void **state) {
        cordon_explanation *x = explain(STARTING READY ENV_RULE EXIT(1), 1, NULL);
        assert_outcome(x, "sandbox-denied");
        const cordon_explained_violation *v = cordon_explanation_violation(x, 0);
        assert_non_null(v);
        assert_null(cordon_explanation_violation(x, 1));
        assert_string_equal(v->action, "file-create-name");
        assert_string_equal(v->target, "/w/.env");
        assert_string_equal(v->rule, ".env");
        assert_string_equal(v->summary, "create /w/.env (denyCreateNames .env)");
        assert_null(v->change); /* a name rule cannot be lifted: the rule is named instead */
        assert_contains(v->why, "denyCreateNames rule '.env'");
        json_t *o = as_json(x);
        assert_string_equal(jstr(o, "violations.0.evidence"), "observed");
        assert_true(json_is_null(json_object_get(json_array_get(json_object_get(o, "violations"),
                                                                0), "change")));
        assert_int_equal(json_array_size(json_object_get(o, "notes")), 0);
        json_decref(o);
        cordon_explanation_free(x);
}

/* The git rules and .cordon are named as what they are, not as denyCreateNames entries; a
 * repository event is not a refusal. */
static void test_fixed_rules(void **state) {
        cordon_explanation *x = explain(
                STARTING READY "{\"type\":\"repository\",\"sessionId\":\"s\",\"time\":\"t\","
                "\"path\":\"/w/sub/.git\"}\n"
                VIOLATION("file-create-name", "/w/sub/.git/config", "core.fsmonitor")
                VIOLATION("file-create-name", "/w/sub/.cordon", ".cordon") EXIT(1), 1, NULL);
        assert_outcome(x, "sandbox-denied");
        const cordon_explained_violation *v = cordon_explanation_violation(x, 0);
        assert_non_null(v);
        assert_string_equal(v->summary,
                            "create /w/sub/.git/config (git config key core.fsmonitor)");
        assert_contains(v->why, "docs/design/git-repos.md");
        assert_null(v->change);
        v = cordon_explanation_violation(x, 1);
        assert_non_null(v);
        assert_string_equal(v->summary, "create /w/sub/.cordon (.cordon)");
        assert_contains(v->why, "project settings");
        assert_null(cordon_explanation_violation(x, 2));
        cordon_explanation_free(x);
}

static void test_network_advice(void **state) {
        cordon_explanation *x = explain(
                STARTING READY VIOLATION("network-outbound", "api.example.com:443",
                                         "not in allowlist")
                        VIOLATION("network-outbound", "169.254.169.254:80", "169.254.169.254")
                                VIOLATION("network-outbound", "a.test:80", "network disabled")
                                        EXIT(6),
                -1, NULL);
        assert_outcome(x, "sandbox-denied");
        assert_int_equal(cordon_explanation_violation_count(x), 3);
        const cordon_explained_violation *v = cordon_explanation_violation(x, 0);
        assert_string_equal(v->change, "--allow-domain api.example.com:443");
        assert_string_equal(v->summary, "network api.example.com:443 (not in allowlist)");
        v = cordon_explanation_violation(x, 1);
        assert_null(v->change); /* deny beats allow */
        assert_contains(v->why, "deny rule '169.254.169.254'");
        v = cordon_explanation_violation(x, 2);
        assert_contains(v->change, "drop --no-network");
        json_t *o = as_json(x);
        assert_contains(jstr(o, "notes.0"), "ignore the proxy variables");
        json_decref(o);
        char *text = as_text(x);
        assert_contains(text, "to allow it: --allow-domain api.example.com:443");
        assert_contains(text, "note: on the native backend every TCP client meets the same rules");
        free(text);
        cordon_explanation_free(x);
}

/* The ask mode's refusals (rules "ask: ..."), with its egress.ask / egress.answer events in the
 * stream: not a deny rule; an allow entry lets the destination through without asking. */
static void test_ask_advice(void **state) {
        cordon_explanation *x = explain(
                STARTING READY "{\"type\":\"egress.ask\"," T ",\"id\":1,\"target\":\"a.test:80\","
                "\"protocol\":\"http\",\"timeoutMs\":300}\n"
                "{\"type\":\"egress.answer\"," T ",\"id\":1,\"target\":\"a.test:80\","
                "\"protocol\":\"http\",\"answer\":\"timeout\"}\n"
                VIOLATION("network-outbound", "a.test:80", "ask: no answer within 300 ms")
                        VIOLATION("network-outbound", "b.test:443", "ask: denied") EXIT(6),
                -1, NULL);
        assert_outcome(x, "sandbox-denied");
        assert_int_equal(cordon_explanation_violation_count(x), 2);
        const cordon_explained_violation *v = cordon_explanation_violation(x, 0);
        assert_string_equal(v->summary, "network a.test:80 (ask: no answer within 300 ms)");
        assert_string_equal(v->change, "--allow-domain a.test:80");
        assert_contains(v->why, "nobody answered the question in time");
        v = cordon_explanation_violation(x, 1);
        assert_contains(v->why, "it was denied when asked");
        cordon_explanation_free(x);
}

/* A deny entry's reason (raw.reason) is kept, shown in the JSON and woven into the advice. */
static void test_deny_reason(void **state) {
        cordon_explanation *x = explain(
                STARTING READY "{\"type\":\"violation\"," T ",\"action\":\"network-outbound\","
                "\"target\":\"pastebin.com:443\",\"raw\":{\"syscall\":\"http\","
                "\"rule\":\"pastebin.com\",\"reason\":\"no paste sites\"}}\n" EXIT(6),
                -1, NULL);
        assert_outcome(x, "sandbox-denied");
        const cordon_explained_violation *v = cordon_explanation_violation(x, 0);
        assert_null(v->change);
        assert_string_equal(v->reason, "no paste sites");
        assert_contains(v->why, "deny rule 'pastebin.com': no paste sites");
        json_t *o = as_json(x);
        assert_string_equal(jstr(o, "violations.0.reason"), "no paste sites");
        json_decref(o);
        cordon_explanation_free(x);
}

/* The landlock backend's supervisor refuses a connect() that bypasses the proxy: no policy change
 * allows it, and the advice says to use the proxy. */
static void test_landlock_direct_connect(void **state) {
        cordon_explanation *x = explain(
                STARTING READY VIOLATION("network-outbound", "127.0.0.1:8080",
                                         "the landlock backend connects only to the run's egress "
                                         "proxy on 127.0.0.1 (there is no network namespace: "
                                         "clients must use HTTP_PROXY/ALL_PROXY)") EXIT(7),
                -1, NULL);
        assert_outcome(x, "sandbox-denied");
        const cordon_explained_violation *v = cordon_explanation_violation(x, 0);
        assert_null(v->change);
        assert_string_equal(v->summary,
                            "network 127.0.0.1:8080 (direct connection, not through the proxy)");
        assert_contains(v->why, "ignoring HTTP_PROXY/HTTPS_PROXY/ALL_PROXY");
        cordon_explanation_free(x);
}

static void test_other_actions(void **state) {
        cordon_explanation *x = explain(
                STARTING READY VIOLATION("syscall", "ptrace", "ptrace")
                        VIOLATION("file-write-data", "/opt/x/y.txt", "")
                                VIOLATION("file-write-data", "/w/.bashrc", ".bashrc")
                                        VIOLATION("tomorrows-action", "thing", "") EXIT(2),
                -1, NULL);
        assert_outcome(x, "sandbox-denied");
        assert_null(cordon_explanation_violation(x, 0)->change);
        assert_contains(cordon_explanation_violation(x, 0)->why, "seccomp filter refuses ptrace");
        assert_string_equal(cordon_explanation_violation(x, 1)->change, "--writable /opt/x");
        assert_null(cordon_explanation_violation(x, 2)->change);
        /* An action this version does not know is listed, with no change. */
        assert_string_equal(cordon_explanation_violation(x, 3)->summary, "tomorrows-action thing");
        assert_null(cordon_explanation_violation(x, 3)->change);
        cordon_explanation_free(x);
}

/* The landlock backend's metadata refusals: outside the roots a --writable directory, a
 * protected file nothing. */
static void test_metadata(void **state) {
        cordon_explanation *x = explain(
                STARTING READY VIOLATION("file-metadata", "/opt/x/y.txt",
                                         "metadata (mode, owner, times, extended attributes) "
                                         "changes only beneath the writable roots")
                        VIOLATION("file-metadata", "/w/.git/hooks/pre-commit", "/w/.git/hooks")
                                EXIT(1),
                -1, NULL);
        assert_outcome(x, "sandbox-denied");
        assert_string_equal(cordon_explanation_violation(x, 0)->change, "--writable /opt/x");
        assert_contains(cordon_explanation_violation(x, 0)->summary, "/opt/x/y.txt");
        assert_null(cordon_explanation_violation(x, 1)->change);
        assert_contains(cordon_explanation_violation(x, 1)->why, "protected path or a secret");
        cordon_explanation_free(x);
}

/* The target is the hostile command's choice; the suggestion must stay one inert shell word. */
static void test_unix_socket_and_aggregate(void **state) {
        cordon_explanation *x = explain(
                STARTING READY VIOLATION("network-outbound", "/run/a \\\"b.sock", "")
                        VIOLATION("syscall", "keyctl", "keyctl: EPERM")
                                "{\"type\":\"violation\"," T ",\"action\":\"syscall\",\"target\":"
                                "\"\",\"raw\":{\"syscall\":\"\",\"rule\":\"keyctl: EPERM\","
                                "\"count\":40}}\n" EXIT(1),
                -1, NULL);
        const cordon_explained_violation *v = cordon_explanation_violation(x, 0);
        assert_string_equal(v->summary, "connect /run/a \"b.sock (not in allowUnixSockets)");
        assert_string_equal(v->change,
                            "--policy FILE with {\"allowUnixSockets\": [\"/run/a \\\"b.sock\"]}");
        json_t *o = as_json(x);
        assert_int_equal(json_array_size(json_object_get(o, "notes")), 0); /* not the proxy */
        json_decref(o);
        /* AF_UNIX sockets are the one syscall refusal a policy lifts. */
        cordon_explanation_free(x);
        x = explain(STARTING READY VIOLATION("syscall", "socket", "socket: EPERM if (arg0 & "
                                             "0xffffffff) == 0x1 (AF_UNIX: agents "
                                             "(allowUnixSockets is empty))") EXIT(1), -1, NULL);
        assert_contains(cordon_explanation_violation(x, 0)->change, "allowUnixSockets");
        cordon_explanation_free(x);
        x = explain(STARTING READY VIOLATION("network-outbound", "/run/a \\\"b.sock", "")
                            VIOLATION("syscall", "keyctl", "keyctl: EPERM")
                                    "{\"type\":\"violation\"," T ",\"action\":"
                                    "\"syscall\",\"target\":\"\",\"raw\":{\"syscall\":\"\","
                                    "\"rule\":\"keyctl: EPERM\",\"count\":40}}\n" EXIT(1),
                    -1, NULL);
        /* The aggregate (no target, raw.count) is its own entry with its count. */
        assert_int_equal(cordon_explanation_violation(x, 1)->count, 1);
        assert_int_equal(cordon_explanation_violation(x, 2)->count, 40);
        assert_string_equal(cordon_explanation_violation(x, 2)->summary,
                            "syscall ? (keyctl: EPERM)");
        cordon_explanation_free(x);
}

static void test_suggestions_are_shell_quoted(void **state) {
        cordon_explanation *x = explain(
                STARTING READY VIOLATION("file-write", "/w/$(touch pwned)/it's/f", "")
                        VIOLATION("network-outbound", "a.com;id:443", "") EXIT(1),
                -1, NULL);
        assert_string_equal(cordon_explanation_violation(x, 0)->change,
                            "--writable '/w/$(touch pwned)/it'\\''s'");
        assert_string_equal(cordon_explanation_violation(x, 1)->change,
                            "--allow-domain 'a.com;id:443'");
        cordon_explanation_free(x);
        char *q = explain_shell_quote("");
        assert_string_equal(q, "''");
        free(q);
}

static void test_killed(void **state) {
        cordon_explanation *x = explain(STARTING READY "{\"type\":\"killed\"," T2
                                        ",\"reason\":\"timeout\"}\n", 125,
                                        "cordon: fatal: TIMEOUT: ran longer\n");
        assert_outcome(x, "sandbox-denied");
        json_t *o = as_json(x);
        assert_string_equal(jstr(o, "killed.reason"), "timeout");
        assert_contains(jstr(o, "killed.change"), "--timeout");
        assert_null(json_object_get(o, "error")); /* the killed event, not the fatal line */
        json_decref(o);
        cordon_explanation_free(x);
        x = explain(STARTING READY "{\"type\":\"killed\"," T2 ",\"reason\":\"oom\"}\n", -1, NULL);
        assert_outcome(x, "sandbox-denied");
        cordon_explanation_free(x);
        x = explain(STARTING READY "{\"type\":\"killed\"," T2 ",\"reason\":\"manual\"}\n", -1,
                    NULL);
        assert_outcome(x, "command-failed");
        cordon_explanation_free(x);
        /* Without events: the TIMEOUT fatal line. */
        x = explain(NULL, 125, "cordon: fatal: TIMEOUT: ran longer than limits.timeout\n");
        assert_outcome(x, "sandbox-denied");
        cordon_explanation_free(x);
}

/* ---- inferred hints ----------------------------------------------------------------------- */

static void test_inferred_never_observed(void **state) {
        const char *err_text = "cat: /etc/shadow: Permission denied\n"
                               "cordon: warning: Permission denied is mine\n"
                               "curl: (6) Could not resolve host: example.com\n"
                               "cat: /x: Permission denied\n";
        cordon_explanation *x = explain(STARTING READY EXIT(1), 1, err_text);
        assert_outcome(x, "command-failed");
        assert_int_equal(cordon_explanation_violation_count(x), 0);
        json_t *o = as_json(x);
        json_t *inf = json_object_get(o, "inferred");
        assert_int_equal(json_array_size(inf), 2);
        assert_string_equal(jstr(o, "inferred.0.evidence"), "inferred");
        assert_string_equal(jstr(o, "inferred.0.kind"), "permission-denied");
        assert_string_equal(jstr(o, "inferred.0.line"), "cat: /etc/shadow: Permission denied");
        assert_int_equal(json_integer_value(json_object_get(json_array_get(inf, 0), "count")), 2);
        assert_string_equal(jstr(o, "inferred.1.kind"), "name-resolution");
        assert_contains(jstr(o, "notes.0"), "proxy variables"); /* DNS hint: the proxy note */
        char *s = NULL;
        assert_int_equal(cordon_explanation_to_json(x, &s, NULL), 0);
        assert_null(strstr(s, "observed\"")); /* "inferred" only, never "observed" */
        free(s);
        json_decref(o);
        char *text = as_text(x);
        assert_contains(text, "NOT observed");
        free(text);
        cordon_explanation_free(x);
        /* With an observed refusal the hints are not repeated: the refusal explains them. */
        x = explain(STARTING READY ENV_RULE EXIT(1), 1, err_text);
        assert_outcome(x, "sandbox-denied");
        o = as_json(x);
        assert_int_equal(json_array_size(json_object_get(o, "inferred")), 0);
        json_decref(o);
        cordon_explanation_free(x);
}

static void test_hints_from_captured_stderr(void **state) {
        /* "ls: x: Operation not permitted\n" in base64, then a text chunk. */
        const char *ev = STARTING READY
                "{\"type\":\"stderr\"," T ","
                "\"data\":\"bHM6IHg6IE9wZXJhdGlvbiBub3QgcGVybWl0dGVkCg==\","
                "\"encoding\":\"base64\"}\n"
                "{\"type\":\"stdout\"," T ",\"data\":\"Permission denied\\n\"}\n"
                "{\"type\":\"stderr\"," T ",\"data\":\"sh: Read-only file \"}\n"
                "{\"type\":\"stderr\"," T ",\"data\":\"system\\n\"}\n" EXIT(1);
        cordon_explanation *x = explain(ev, -1, NULL);
        json_t *o = as_json(x);
        assert_int_equal(json_array_size(json_object_get(o, "inferred")), 2); /* not stdout's */
        assert_string_equal(jstr(o, "inferred.0.kind"), "operation-not-permitted");
        assert_string_equal(jstr(o, "inferred.1.line"), "sh: Read-only file system");
        json_decref(o);
        cordon_explanation_free(x);
        explain_fails(STARTING "{\"type\":\"stderr\"," T ",\"data\":\"!!\",\"encoding\":"
                      "\"base64\"}\n", 1, NULL, -EBADMSG, "events line 2: \"data\" is not base64");
        /* "QR==" is "A" with bits under the padding: not what events.c writes. */
        explain_fails(STARTING "{\"type\":\"stderr\"," T ",\"data\":\"QR==\",\"encoding\":"
                      "\"base64\"}\n", 1, NULL, -EBADMSG, "events line 2: \"data\" is not base64");
}

static void test_overlong_stderr_line(void **state) {
        size_t n = EXPLAIN_STDERR_LINE_MAX * 3;
        char *s = malloc(n + 64);
        memset(s, 'x', n);
        /* The needle straddles the first buffer boundary. */
        memcpy(s + EXPLAIN_STDERR_LINE_MAX - 5, "Permission denied", 17);
        strcpy(s + n, "\n");
        cordon_explanation *x = explain(NULL, 1, s);
        json_t *o = as_json(x);
        assert_string_equal(jstr(o, "inferred.0.kind"), "permission-denied");
        assert_int_equal(json_integer_value(json_object_get(
                                 json_array_get(json_object_get(o, "inferred"), 0), "count")), 1);
        assert_true(strlen(jstr(o, "inferred.0.line")) <= EXPLAIN_QUOTE_MAX + 3);
        json_decref(o);
        cordon_explanation_free(x);
        free(s);
}

static void test_sigsys_hint(void **state) {
        cordon_explanation *x = explain(STARTING READY "{\"type\":\"exit\"," T2 ",\"exitCode\":159,"
                                        "\"signal\":\"SIGSYS\"}\n", -1, NULL);
        assert_outcome(x, "command-failed");
        json_t *o = as_json(x);
        assert_string_equal(jstr(o, "signal"), "SIGSYS");
        assert_string_equal(jstr(o, "inferred.0.kind"), "bad-system-call");
        assert_contains(jstr(o, "reason"), "died of SIGSYS");
        json_decref(o);
        cordon_explanation_free(x);
}

/* ---- the constructor's and the serializers' shape ----------------------------------------- */

/* include/cordon/cordon.h: 0 and the object or text, or -errno with err set and *ret NULL. */
static void test_call_shapes(void **state) {
        cordon_error err = { 0 };
        assert_int_equal(cordon_explanation_new(NULL, &err), -EINVAL);
        assert_int_equal(err.code, CORDON_USAGE);
        cordon_explanation *x = NULL;
        assert_int_equal(cordon_explanation_new(&x, &err), 0);
        char stale[] = "stale", *s = stale;
        err = (cordon_error) { 0 };
        assert_int_equal(cordon_explanation_to_json(x, &s, &err), -EINVAL);
        assert_null(s);
        assert_int_equal(err.code, CORDON_USAGE);
        assert_contains(err.message, "call cordon_explanation_finish() first");
        s = stale;
        assert_int_equal(cordon_explanation_to_text(x, &s, NULL), -EINVAL);
        assert_null(s);
        assert_int_equal(cordon_explanation_to_text(NULL, &s, NULL), -EINVAL);
        assert_int_equal(cordon_explanation_set_exit_status(x, 0), 0);
        assert_int_equal(cordon_explanation_finish(x, NULL), 0);
        assert_int_equal(cordon_explanation_to_json(x, NULL, &err), -EINVAL);
        char *text = as_text(x);
        assert_contains(text, "ok: ");
        free(text);
        cordon_explanation_free(x);
        x = (cordon_explanation *) stale;
        assert_int_equal(cordon_explain(NULL, 0, -1, NULL, 0, &x, &err), -ENODATA);
        assert_null(x);
}

/* ---- input handling ----------------------------------------------------------------------- */

static void test_split_anywhere(void **state) {
        const char *ev = STARTING READY ENV_RULE EXIT(1);
        cordon_explanation *x = NULL;
        assert_int_equal(cordon_explanation_new(&x, NULL), 0);
        for (const char *p = ev; *p; p++)
                assert_int_equal(cordon_explanation_add_events(x, p, 1, NULL), 0);
        const char *e = "a: Permission denied\n";
        for (const char *p = e; *p; p++)
                assert_int_equal(cordon_explanation_add_stderr(x, p, 1), 0);
        assert_int_equal(cordon_explanation_finish(x, NULL), 0);
        assert_outcome(x, "sandbox-denied");
        assert_int_equal(cordon_explanation_finish(x, NULL), -EALREADY);
        assert_int_equal(cordon_explanation_add_stderr(x, "x", 1), -EALREADY);
        cordon_explanation_free(x);
}

static void test_bad_input(void **state) {
        explain_fails(STARTING "not json\n", 1, NULL, -EBADMSG, "events line 2:");
        explain_fails(STARTING "[1]\n", 1, NULL, -EBADMSG, "events line 2: not a JSON object");
        explain_fails("{\"time\":\"x\"}\n", 1, NULL, -EBADMSG, "no string \"type\"");
        explain_fails(STARTING "{\"type\":\"exit\",\"exitCode\":\"1\"}\n", 1, NULL, -EBADMSG,
                      "exitCode");
        explain_fails(STARTING "{\"type\":\"exit\",\"exitCode\":1,\"exitCode\":2}\n", 1, NULL,
                      -EBADMSG, "events line 2");
        explain_fails(STARTING EXIT(1) EXIT(1), 1, NULL, -EBADMSG, "a second terminal event");
        explain_fails(STARTING "{\"type\":\"violation\",\"action\":1}\n" EXIT(1), 1, NULL,
                      -EBADMSG, "\"action\" is not a string");
        explain_fails(STARTING "{\"type\":\"exit\"", 1, NULL, -EBADMSG, "cut off");
        explain_fails(STARTING READY, -1, NULL, -ENODATA, "nothing tells how the run ended");
        explain_fails(NULL, -1, "hello\n", -ENODATA, "nothing tells");
        explain_fails(STARTING EXIT(3), 4, NULL, -EINVAL, "contradicts the events' exitCode 3");
        char *big = malloc(EXPLAIN_EVENT_LINE_MAX + 2);
        memset(big, ' ', EXPLAIN_EVENT_LINE_MAX + 1);
        big[EXPLAIN_EVENT_LINE_MAX + 1] = '\0';
        explain_fails(big, 1, NULL, -EBADMSG, "longer than");
        free(big);
        /* Unknown types and unknown fields are skipped. */
        cordon_explanation *x = explain(STARTING "{\"type\":\"future\",\"x\":1}\n"
                                        "{\"type\":\"exit\",\"exitCode\":0,\"extra\":[1]}\n",
                                        -1, NULL);
        assert_outcome(x, "ok");
        cordon_explanation_free(x);
}

static void test_last_run_wins(void **state) {
        cordon_explanation *x = explain(STARTING READY ENV_RULE EXIT(1) STARTING READY EXIT(0),
                                        -1, NULL);
        assert_outcome(x, "ok");
        assert_int_equal(cordon_explanation_violation_count(x), 0);
        cordon_explanation_free(x);
}

static void test_storm_is_bounded(void **state) {
        cordon_explanation *x = NULL;
        assert_int_equal(cordon_explanation_new(&x, NULL), 0);
        assert_int_equal(cordon_explanation_add_events(x, STARTING, strlen(STARTING), NULL), 0);
        for (int i = 0; i < 100000; i++)
                assert_int_equal(cordon_explanation_add_events(x, ENV_RULE, strlen(ENV_RULE),
                                                               NULL), 0);
        char line[512];
        for (unsigned i = 0; i < EXPLAIN_VIOLATIONS_MAX + 44; i++) {
                int n = snprintf(line, sizeof(line), "{\"type\":\"violation\",\"action\":"
                                 "\"syscall\",\"target\":\"call%u\",\"raw\":{\"count\":2}}\n",
                                 i);
                assert_int_equal(cordon_explanation_add_events(x, line, (size_t) n, NULL), 0);
        }
        assert_int_equal(cordon_explanation_add_events(x, EXIT(1), strlen(EXIT(1)), NULL), 0);
        assert_int_equal(cordon_explanation_finish(x, NULL), 0);
        assert_int_equal(cordon_explanation_violation_count(x), EXPLAIN_VIOLATIONS_MAX);
        assert_int_equal(cordon_explanation_violation(x, 0)->count, 100000);
        assert_int_equal(cordon_explanation_violation(x, 1)->count, 2); /* raw.count */
        json_t *o = as_json(x);
        assert_int_equal(json_integer_value(json_object_get(o, "violationsNotListed")), 45 * 2);
        json_decref(o);
        cordon_explanation_free(x);
}

/* Control characters, invalid UTF-8 and bidi overrides never reach the output. */
static void test_output_is_clean(void **state) {
        cordon_explanation *x = explain(
                STARTING READY VIOLATION("file-create-name", "/w/a\\u001b[31m\\u202e.env", ".env")
                        EXIT(1),
                -1, "\x1b]0;title\x07 Permission denied \xff\xc2\x85\n");
        const cordon_explained_violation *v = cordon_explanation_violation(x, 0);
        assert_string_equal(v->target, "/w/a?[31m?.env");
        char *text = as_text(x);
        for (const char *p = text; *p; p++)
                assert_true(*p == '\n' || (unsigned char) *p >= 0x20);
        free(text);
        cordon_explanation_free(x);
        x = explain(NULL, 1, "\x1b]0;title\x07 Permission denied \xff\xc2\x85\n");
        json_t *o = as_json(x);
        assert_string_equal(jstr(o, "inferred.0.line"), "?]0;title? Permission denied ??");
        json_decref(o);
        cordon_explanation_free(x);
        char *c = explain_clean_text("h\xc3\xa9llo w\xc3\xb6rld", 13, 6);
        assert_string_equal(c, "h\xc3\xa9llo...");
        free(c);
        c = explain_clean_text("h\xc3\xa9llo", 6, 2);
        assert_string_equal(c, "h..."); /* cut at a character boundary, never inside one */
        free(c);
}

static void test_utf8(void **state) {
        assert_int_equal(utf8_char_len("\xc3\xa9", 2), 2);
        assert_int_equal(utf8_char_len("\xc3", 1), 0);
        assert_int_equal(utf8_char_len("\xc0\x80", 2), 0);         /* overlong */
        assert_int_equal(utf8_char_len("\xed\xa0\x80", 3), 0);     /* surrogate */
        assert_int_equal(utf8_char_len("\xf4\x90\x80\x80", 4), 0); /* > U+10FFFF */
        assert_int_equal(utf8_char_len("\xf0\x9f\x98\x80", 4), 4);
        assert_int_equal(utf8_incomplete_tail("ab\xe2\x82", 4), 2);
        assert_int_equal(utf8_incomplete_tail("ab\xe2\x82\xac", 5), 0); /* complete */
        assert_int_equal(utf8_incomplete_tail("\xff\xfe" "caf\xc3", 6), 1); /* after junk */
        assert_int_equal(utf8_incomplete_tail("a\xf0\x9f\x98", 4), 3);
        assert_int_equal(utf8_incomplete_tail("\xf0\x9f\x98\x80", 4), 0);
        assert_int_equal(utf8_incomplete_tail("ab\xe0\x80", 4), 0); /* overlong: never valid */
        assert_int_equal(utf8_incomplete_tail("ab\x80\x80\x80", 5), 0); /* no lead */
        assert_int_equal(utf8_incomplete_tail("a\xc3", 2), 1);
        assert_int_equal(utf8_incomplete_tail("", 0), 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_ok_and_ok_with_violation),
                cmocka_unit_test(test_125_alone_is_not_proof),
                cmocka_unit_test(test_fatal_line_is_broken),
                cmocka_unit_test(test_error_event_is_broken),
                cmocka_unit_test(test_denied_name),
                cmocka_unit_test(test_fixed_rules),
                cmocka_unit_test(test_network_advice),
                cmocka_unit_test(test_ask_advice),
                cmocka_unit_test(test_landlock_direct_connect),
                cmocka_unit_test(test_deny_reason),
                cmocka_unit_test(test_other_actions),
                cmocka_unit_test(test_metadata),
                cmocka_unit_test(test_unix_socket_and_aggregate),
                cmocka_unit_test(test_suggestions_are_shell_quoted),
                cmocka_unit_test(test_killed),
                cmocka_unit_test(test_inferred_never_observed),
                cmocka_unit_test(test_hints_from_captured_stderr),
                cmocka_unit_test(test_overlong_stderr_line),
                cmocka_unit_test(test_sigsys_hint),
                cmocka_unit_test(test_call_shapes),
                cmocka_unit_test(test_split_anywhere),
                cmocka_unit_test(test_bad_input),
                cmocka_unit_test(test_last_run_wins),
                cmocka_unit_test(test_storm_is_bounded),
                cmocka_unit_test(test_output_is_clean),
                cmocka_unit_test(test_utf8),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
