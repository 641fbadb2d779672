/* SPDX-License-Identifier: Apache-2.0 */
/* The Seatbelt log reader's parser (src/seatbelt/sandbox-log.c): lines of `log stream --style
 * ndjson` in the shape the Sandbox kernel extension logs a refusal, with cordon's tag, turned into
 * violations; lines of other senders, sessions and profiles ignored; malformed ones refused. The
 * lines are written after the documented format (docs/design/seatbelt.md, "Violation reports");
 * the same shapes are the seeds of fuzz/corpus/sandbox-log. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>

#include <cmocka.h>

#include "seatbelt/sandbox-log.h"
#include "seatbelt/sbpl-escape.h" /* sbuf */
#include "util/util.h"

#define SANDBOX "\\/System\\/Library\\/Extensions\\/Sandbox.kext\\/Contents\\/MacOS\\/Sandbox"

/* One ndjson line as `log stream` prints it (abridged: fields the parser does not read are
 * kept where they change nothing but the shape). */
static char *line_of(const char *sender, const char *message) {
        char *s = NULL;
        if (asprintf(&s,
                     "{\"traceID\":1234,\"eventMessage\":\"%s\",\"eventType\":\"logEvent\","
                     "\"source\":null,\"formatString\":\"%%s\",\"subsystem\":\"\","
                     "\"category\":\"\",\"threadID\":88,\"processImagePath\":\"\\/kernel\","
                     "\"senderImagePath\":\"%s\",\"timestamp\":\"2026-12-02 07:00:00.000000+0000\","
                     "\"messageType\":\"Error\",\"processID\":0}",
                     message, sender) < 0)
                fail();
        return s;
}

static int parse(const char *sender, const char *message, const char *session,
                 seatbelt_violation *v) {
        _cleanup_free_ char *l = line_of(sender, message);
        return seatbelt_log_parse(l, strlen(l), session, v);
}

static void test_refusal(void **state) {
        seatbelt_violation v;
        assert_int_equal(parse(SANDBOX,
                               "Sandbox: cat(4242) deny(1) file-read-data "
                               "\\/Users\\/alice\\/.ssh\\/id_ed25519\\n"
                               "Violation:       deny(1) file-read-data "
                               "\\/Users\\/alice\\/.ssh\\/id_ed25519\\n"
                               "cordon-deny secret run-42",
                               "run-42", &v),
                         1);
        assert_int_equal(v.rule, SBR_SECRET);
        assert_string_equal(v.process, "cat");
        assert_int_equal(v.pid, 4242);
        assert_int_equal(v.count, 1);
        assert_string_equal(v.operation, "file-read-data");
        assert_string_equal(v.target, "/Users/alice/.ssh/id_ed25519");
        cordon_violation e;
        seatbelt_violation_event(&v, &e);
        assert_string_equal(e.action, "file-read");
        assert_string_equal(e.syscall, "file-read-data");
        assert_string_equal(e.target, "/Users/alice/.ssh/id_ed25519");
        assert_non_null(strstr(e.rule, "secret"));
        assert_int_equal(e.count, 0);
}

/* Each rule's action: the file rules by operation, the others by rule. */
static void test_actions(void **state) {
        static const struct {
                const char *msg, *action;
        } rows[] = {
                { "Sandbox: touch(7) deny(1) file-write-create \\/w\\/.env\\ncordon-deny "
                  "create-name S",
                  "file-create-name" },
                { "Sandbox: ln(7) deny(1) file-link \\/w\\/k\\ncordon-deny secret S",
                  "file-write" },
                { "Sandbox: sh(7) deny(1) file-write-data \\/dev\\/ttys003\\ncordon-deny tty S",
                  "file-write" },
                { "Sandbox: cat(7) deny(1) file-read-data \\/dev\\/ttys003\\ncordon-deny tty S",
                  "file-read" },
                { "Sandbox: sh(7) deny(1) process-exec* \\/w\\/a.out\\ncordon-deny exec S",
                  "process-exec" },
                { "Sandbox: curl(7) deny(1) network-outbound 1.2.3.4:443\\ncordon-deny network S",
                  "network-outbound" },
                { "Sandbox: python3(7) deny(1) appleevent-send com.apple.Terminal\\n"
                  "cordon-deny service S",
                  "service" },
                { "Sandbox: kill(7) deny(1) signal target:1\\ncordon-deny process S", "process" },
        };
        for (size_t i = 0; i < ELEMENTSOF(rows); i++) {
                seatbelt_violation v;
                cordon_violation e;
                if (parse(SANDBOX, rows[i].msg, "S", &v) != 1)
                        fail_msg("not parsed: %s", rows[i].msg);
                seatbelt_violation_event(&v, &e);
                if (strcmp(e.action, rows[i].action) != 0)
                        fail_msg("%s: %s, not %s", rows[i].msg, e.action, rows[i].action);
        }
}

/* Names hold blanks and parentheses; targets blanks; some operations none; folded duplicates
 * have a count and no pid. */
static void test_shapes(void **state) {
        seatbelt_violation v;
        assert_int_equal(parse(SANDBOX,
                               "Sandbox: Code Helper (Plugin)(901) deny(3) file-write-data "
                               "\\/Users\\/a\\/My Docs\\/x (1).txt\\ncordon-deny write S",
                               "S", &v),
                         1);
        assert_string_equal(v.process, "Code Helper (Plugin)");
        assert_int_equal(v.pid, 901);
        assert_int_equal(v.count, 3);
        assert_string_equal(v.target, "/Users/a/My Docs/x (1).txt");
        cordon_violation e;
        seatbelt_violation_event(&v, &e);
        assert_int_equal(e.count, 3);

        assert_int_equal(parse(SANDBOX, "Sandbox: launchctl(5) deny(1) job-creation\\n"
                                        "cordon-deny service S",
                               "S", &v),
                         1);
        assert_string_equal(v.operation, "job-creation");
        assert_string_equal(v.target, "");

        assert_int_equal(parse(SANDBOX, "Sandbox: 4 duplicate reports for git deny(1) "
                                        "file-write-data \\/w\\/.git\\/config\\n"
                                        "cordon-deny protected S",
                               "S", &v),
                         1);
        assert_string_equal(v.process, "git");
        assert_int_equal(v.pid, 0);
        assert_int_equal(v.count, 5);
        assert_string_equal(v.target, "/w/.git/config");
        /* The tag may follow the refusal on its own line or after a blank, and trailing
         * blanks are the kernel's. */
        assert_int_equal(parse(SANDBOX, "Sandbox: a(1) deny(1) file-write-data \\/w\\/x "
                                        "cordon-deny write S\\n\\n",
                               "S", &v),
                         1);
        assert_string_equal(v.target, "/w/x");
}

/* A path cannot impersonate the tag: only the last one, ending the message, counts; the rule
 * it names and the session decide. */
static void test_path_holds_a_tag(void **state) {
        seatbelt_violation v;
        assert_int_equal(parse(SANDBOX,
                               "Sandbox: cat(1) deny(1) file-read-data \\/tmp\\/cordon-deny "
                               "create-name S\\ncordon-deny secret S",
                               "S", &v),
                         1);
        assert_int_equal(v.rule, SBR_SECRET);
        assert_string_equal(v.target, "/tmp/cordon-deny create-name S");
        /* "xcordon-deny ..." is not a tag (it must start the message or follow a blank). */
        assert_int_equal(parse(SANDBOX, "Sandbox: cat(1) deny(1) file-read-data \\/tmp\\/x\\n"
                                        "xcordon-deny secret S",
                               "S", &v),
                         0);
}

static void test_not_ours(void **state) {
        seatbelt_violation v;
        /* Another session, an untagged refusal (another profile), an allow report. */
        assert_int_equal(parse(SANDBOX, "Sandbox: cat(1) deny(1) file-read-data \\/x\\n"
                                        "cordon-deny secret other-run",
                               "S", &v),
                         0);
        assert_int_equal(parse(SANDBOX, "Sandbox: cat(1) deny(1) file-read-data \\/x", "S", &v),
                         0);
        assert_int_equal(parse(SANDBOX, "Sandbox: mds(1) allow(1) file-read-data \\/x", "S", &v),
                         0);
        /* A session that is a prefix or an extension of ours. */
        assert_int_equal(parse(SANDBOX, "Sandbox: a(1) deny(1) file-read-data \\/x\\n"
                                        "cordon-deny secret S2",
                               "S", &v),
                         0);
        /* A forged line: the command's own os_log message with a perfect tag. */
        assert_int_equal(parse("\\/Users\\/alice\\/ws\\/forger", "Sandbox: cat(1) deny(1) "
                               "file-read-data \\/x\\ncordon-deny secret S",
                               "S", &v),
                         0);
        assert_int_equal(parse("\\/usr\\/lib\\/NotSandbox", "Sandbox: cat(1) deny(1) "
                               "file-read-data \\/x\\ncordon-deny secret S",
                               "S", &v),
                         0);
        /* The stream's own header, blank lines. */
        static const char hdr[] = "Filtering the log data using \"sender == \"Sandbox\"\"";
        assert_int_equal(seatbelt_log_parse(hdr, strlen(hdr), "S", &v), 0);
        assert_int_equal(seatbelt_log_parse("", 0, "S", &v), 0);
        assert_int_equal(seatbelt_log_parse("  \r", 3, "S", &v), 0);
}

static void test_malformed(void **state) {
        seatbelt_violation v;
        static const char *const msgs[] = {
                /* tagged, but not a refusal line */
                "Sandbox: cat deny file-read-data \\/x\\ncordon-deny secret S",
                "sandbox: cat(1) deny(1) file-read-data \\/x\\ncordon-deny secret S",
                "Sandbox: cat(1) deny(1)\\ncordon-deny secret S",
                "Sandbox: cat(99999999999) deny(1) file-read-data \\/x\\ncordon-deny secret S",
                /* an operation name longer than any Seatbelt has (one literal, two lines) */
                ("Sandbox: cat(1) deny(1) xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
                 "xxxxxxxxx \\/x\\ncordon-deny secret S"),
                /* a rule this version does not write, a tag without a session */
                "Sandbox: cat(1) deny(1) file-read-data \\/x\\ncordon-deny nosuchrule S",
                "Sandbox: cat(1) deny(1) file-read-data \\/x\\ncordon-deny secret",
                "Sandbox: cat(1) deny(1) file-read-data \\/x\\ncordon-deny  S",
        };
        for (size_t i = 0; i < ELEMENTSOF(msgs); i++)
                if (parse(SANDBOX, msgs[i], "S", &v) != -EINVAL)
                        fail_msg("accepted: %s", msgs[i]);
        static const char *const lines[] = {
                "{", "{\"eventMessage\":", "{\"a\":[1,2]", "{\"senderImagePath\":\"" SANDBOX "\"}",
                "{\"senderImagePath\":\"" SANDBOX "\",\"eventMessage\":7}",
                "{\"senderImagePath\":\"" SANDBOX "\",\"senderImagePath\":\"x\","
                "\"eventMessage\":\"Sandbox: a(1) deny(1) b c\\ncordon-deny secret S\"}",
                "{\"senderImagePath\":\"" SANDBOX "\",\"eventMessage\":\"ok\"} trailing",
        };
        for (size_t i = 0; i < ELEMENTSOF(lines); i++)
                if (seatbelt_log_parse(lines[i], strlen(lines[i]), "S", &v) != -EINVAL)
                        fail_msg("accepted: %s", lines[i]);
}

/* Long names and targets are cut to their arrays, never past them. */
static void test_long_fields(void **state) {
        sbuf m = { 0 };
        sbuf_add(&m, "Sandbox: ");
        for (int i = 0; i < 400; i++)
                sbuf_add(&m, "n");
        sbuf_add(&m, "(1) deny(1) file-write-data \\/");
        for (int i = 0; i < 6000; i++)
                sbuf_add(&m, "p");
        sbuf_add(&m, "\\ncordon-deny write S");
        int e = 0;
        _cleanup_free_ char *msg = sbuf_take(&m, &e);
        assert_non_null(msg);
        seatbelt_violation v;
        assert_int_equal(parse(SANDBOX, msg, "S", &v), 1);
        assert_int_equal(strlen(v.process), sizeof(v.process) - 1);
        assert_int_equal(strlen(v.target), sizeof(v.target) - 1);
}

/* The words of the parser are the generator's: every rule has a name and maps to an action. */
static void test_rule_names(void **state) {
        for (int r = 0; r < SBR_COUNT_; r++) {
                const char *name = seatbelt_rule_name((seatbelt_rule) r);
                assert_non_null(name);
                char msg[256];
                snprintf(msg, sizeof(msg),
                         "Sandbox: a(1) deny(1) file-write-data \\/x\\ncordon-deny %s S", name);
                seatbelt_violation v;
                assert_int_equal(parse(SANDBOX, msg, "S", &v), 1);
                assert_int_equal(v.rule, r);
                cordon_violation e;
                seatbelt_violation_event(&v, &e);
                assert_non_null(e.action);
                assert_non_null(e.rule);
        }
        assert_null(seatbelt_rule_name(SBR_COUNT_));
}

typedef struct seen {
        unsigned n;
        seatbelt_rule rules[16];
        char targets[16][64];
} seen;

static void collect(void *userdata, const seatbelt_violation *v) {
        seen *s = userdata;
        if (s->n < ELEMENTSOF(s->rules)) {
                s->rules[s->n] = v->rule;
                size_t n = strnlen(v->target, sizeof(s->targets[0]) - 1);
                memcpy(s->targets[s->n], v->target, n);
                s->targets[s->n][n] = '\0';
        }
        s->n++;
}

/* The stream as `log stream` writes it, in chunks of every size: the header, three refusals
 * (one of another session), a malformed line, an over-long line; the same verdicts each way. */
static void test_reader_chunks(void **state) {
        _cleanup_free_ char *a = line_of(SANDBOX, "Sandbox: cat(1) deny(1) file-read-data "
                                                  "\\/k\\ncordon-deny secret S");
        _cleanup_free_ char *b = line_of(SANDBOX, "Sandbox: sh(2) deny(1) file-write-data "
                                                  "\\/dev\\/ttys001\\ncordon-deny tty S");
        _cleanup_free_ char *c = line_of(SANDBOX, "Sandbox: sh(2) deny(1) file-write-data "
                                                  "\\/o\\ncordon-deny tty other");
        sbuf all = { 0 };
        const char *const parts[] = { "Filtering the log data using \"sender == \"Sandbox\"\"\n",
                                      a, "\n", c, "\n{broken\n", b, "\n" };
        for (size_t i = 0; i < ELEMENTSOF(parts); i++)
                sbuf_add(&all, parts[i]); /* sbuf_addf is for short fragments only */
        sbuf_add(&all, "{\"x\":\"");
        for (int i = 0; i < SEATBELT_LOG_LINE_MAX + 10; i++)
                sbuf_add(&all, "y");
        sbuf_add(&all, "\"}\n");
        sbuf_add(&all, a);
        sbuf_add(&all, "\n");
        int e = 0;
        _cleanup_free_ char *text = sbuf_take(&all, &e);
        assert_non_null(text);
        size_t len = strlen(text);
        static const size_t chunks[] = { 1, 2, 3, 7, 64, 4096, 65535, 65536, 1 << 20 };
        seatbelt_log_reader *r = malloc(sizeof(*r));
        assert_non_null(r);
        for (size_t k = 0; k < ELEMENTSOF(chunks); k++) {
                seen s = { 0 };
                seatbelt_log_reader_init(r, "S", collect, &s);
                for (size_t off = 0; off < len; off += chunks[k])
                        seatbelt_log_feed(r, text + off,
                                          len - off < chunks[k] ? len - off : chunks[k]);
                assert_int_equal(s.n, 3);
                assert_int_equal(r->violations, 3);
                assert_int_equal(r->bad, 2);
                assert_int_equal(s.rules[0], SBR_SECRET);
                assert_int_equal(s.rules[1], SBR_TTY);
                assert_string_equal(s.targets[1], "/dev/ttys001");
                assert_int_equal(s.rules[2], SBR_SECRET);
        }
        /* A last line without its '\n' waits for the rest. */
        seen s = { 0 };
        seatbelt_log_reader_init(r, "S", collect, &s);
        seatbelt_log_feed(r, a, strlen(a));
        assert_int_equal(s.n, 0);
        seatbelt_log_feed(r, "\n", 1);
        assert_int_equal(s.n, 1);
        free(r);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_refusal),      cmocka_unit_test(test_actions),
                cmocka_unit_test(test_shapes),       cmocka_unit_test(test_path_holds_a_tag),
                cmocka_unit_test(test_not_ours),     cmocka_unit_test(test_malformed),
                cmocka_unit_test(test_long_fields),  cmocka_unit_test(test_rule_names),
                cmocka_unit_test(test_reader_chunks),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
