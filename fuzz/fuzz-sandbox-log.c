/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target for the Seatbelt log reader's parser (src/seatbelt/sandbox-log.c), which reads
 * lines of `log stream --style ndjson` naming paths and programs a sandboxed command chose. The
 * input is one line, for session "S". Oracles beyond "no crash, no sanitizer report":
 *   - the verdict is -EINVAL, 0 or 1, and the same on a second parse (same fields);
 *   - a violation has a known rule, a non-empty operation without blanks, NUL-terminated fields
 *     within their arrays, a target and a name without a newline, and an event with an action;
 *   - a line that is session S's is no other session's (session "T" gives 0);
 *   - the line splitter (seatbelt_log_feed) gives, for the input split into lines, the same
 *     verdicts fed whole, byte by byte, and in two pieces cut where the input's last byte says;
 *   - an input starting with 'R' is a round trip: "R", a pid byte, a rule byte, then the process
 *     name, operation and target separated by 0x1f; the line the kernel would log for them (made
 *     with jansson) parses back to exactly those fields when they are representable.
 * Built like the other targets (fuzz/meson.build): with libFuzzer, and as a replayer of
 * fuzz/corpus/sandbox-log in the unit suite: "tagged-*" seeds give a violation, "other-*" seeds
 * 0, "bad-*" seeds -EINVAL. */
#include <errno.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seatbelt/sandbox-log.h"

#include "replay.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond) FUZZ_CHECK("fuzz-sandbox-log", cond)

static void check_violation(const seatbelt_violation *v) {
        CHECK((unsigned) v->rule < SBR_COUNT_);
        CHECK(strnlen(v->process, sizeof(v->process)) < sizeof(v->process));
        CHECK(strnlen(v->operation, sizeof(v->operation)) < sizeof(v->operation));
        CHECK(strnlen(v->target, sizeof(v->target)) < sizeof(v->target));
        CHECK(v->operation[0] && !strpbrk(v->operation, " \n"));
        CHECK(!strchr(v->target, '\n') && !strchr(v->process, '\n'));
        cordon_violation e;
        seatbelt_violation_event(v, &e);
        CHECK(e.action && e.rule && e.syscall == v->operation && e.target == v->target);
}

static int run_line(const char *line, size_t len) {
        seatbelt_violation a, b;
        memset(&a, 0, sizeof(a));
        memset(&b, 0, sizeof(b));
        int r = seatbelt_log_parse(line, len, "S", &a);
        CHECK(r == -EINVAL || r == 0 || r == 1);
        CHECK(seatbelt_log_parse(line, len, "S", &b) == r);
        if (r == 1) {
                check_violation(&a);
                CHECK(memcmp(&a, &b, sizeof(a)) == 0);
                seatbelt_violation c;
                CHECK(seatbelt_log_parse(line, len, "T", &c) == 0);
        }
        return r;
}

/* Fields that the kernel's line can carry and the parser must give back unchanged. */
static bool representable(const char *name, const char *op, const char *target) {
        return strlen(name) < 256 && !strpbrk(name, "(\n") && op[0] && strlen(op) < 64 &&
               !strpbrk(op, " \n\t\r") && strlen(target) < 4096 && !strchr(target, '\n');
}

static void round_trip(const uint8_t *data, size_t size) {
        if (size < 3 || data[0] != 'R')
                return;
        /* The fields end at the first NUL of the input, or at its end: not strndup, which may
         * read past an input that has no NUL at all. */
        const uint8_t *nul = memchr(data + 3, 0, size - 3);
        size_t len = nul ? (size_t) (nul - (data + 3)) : size - 3;
        char *copy = malloc(len + 1);
        if (!copy)
                return;
        memcpy(copy, data + 3, len);
        copy[len] = '\0';
        char *name = copy, *op = strchr(name, 0x1f), *target = NULL;
        if (op && (*op++ = '\0', target = strchr(op, 0x1f)))
                *target++ = '\0';
        seatbelt_rule rule = (seatbelt_rule) (data[2] % SBR_COUNT_);
        if (!op || !target || !representable(name, op, target)) {
                free(copy);
                return;
        }
        char *msg = NULL;
        json_t *o = NULL;
        if (asprintf(&msg, "Sandbox: %s(%u) deny(1) %s %s\ncordon-deny %s S", name,
                     (unsigned) data[1], op, target, seatbelt_rule_name(rule)) >= 0)
                o = json_pack("{s:s, s:s, s:i}", "eventMessage", msg, "senderImagePath",
                              "/System/Library/Extensions/Sandbox.kext/Contents/MacOS/Sandbox",
                              "processID", 0); /* NULL: not UTF-8, nothing to check */
        char *line = o ? json_dumps(o, JSON_COMPACT) : NULL;
        if (line) {
                seatbelt_violation v;
                CHECK(seatbelt_log_parse(line, strlen(line), "S", &v) == 1);
                CHECK(v.rule == rule && v.pid == data[1] && v.count == 1);
                CHECK(strcmp(v.process, name) == 0 && strcmp(v.operation, op) == 0);
                CHECK(strcmp(v.target, target) == 0);
        }
        free(line);
        json_decref(o);
        free(msg);
        free(copy);
}

typedef struct tally {
        unsigned n;
        uint64_t sum; /* of pids and counts: the same violations, not only as many */
} tally;

static void add_up(void *userdata, const seatbelt_violation *v) {
        tally *t = userdata;
        t->n++;
        t->sum += (uint64_t) v->pid + v->count + (uint64_t) v->rule;
}

/* The stream reader against the lines parsed one by one (the input as a stream of lines). */
static void check_reader(const uint8_t *data, size_t size) {
        static seatbelt_log_reader r; /* 64 KiB: not on the stack */
        tally want = { 0 };
        unsigned want_bad = 0;
        for (size_t start = 0; start < size;) {
                const uint8_t *nl = memchr(data + start, '\n', size - start);
                size_t end = nl ? (size_t) (nl - data) : size;
                seatbelt_violation v;
                int q = end - start < SEATBELT_LOG_LINE_MAX
                                ? seatbelt_log_parse((const char *) data + start, end - start,
                                                     "S", &v)
                                : -EINVAL; /* over-long: the reader skips it */
                if (q == 1)
                        add_up(&want, &v);
                want_bad += q < 0;
                start = end + 1;
        }
        size_t cut = size ? data[size - 1] % (size + 1) : 0;
        for (int mode = 0; mode < 3; mode++) {
                tally got = { 0 };
                seatbelt_log_reader_init(&r, "S", add_up, &got);
                if (mode == 0)
                        seatbelt_log_feed(&r, (const char *) data, size);
                for (size_t i = 0; mode == 1 && i < size; i++)
                        seatbelt_log_feed(&r, (const char *) data + i, 1);
                if (mode == 2) {
                        seatbelt_log_feed(&r, (const char *) data, cut);
                        seatbelt_log_feed(&r, (const char *) data + cut, size - cut);
                }
                seatbelt_log_feed(&r, "\n", 1); /* the last line ends */
                CHECK(got.n == want.n && got.sum == want.sum && r.violations == want.n);
                CHECK(r.bad == want_bad);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        (void) run_line((const char *) data, size);
        round_trip(data, size);
        check_reader(data, size);
        return 0;
}

bool fuzz_replay_seed(const char *name, const uint8_t *data, size_t size) {
        int r = run_line((const char *) data, size);
        round_trip(data, size);
        check_reader(data, size);
        int want = strncmp(name, "tagged-", 7) == 0 ? 1
                   : strncmp(name, "other-", 6) == 0 ? 0
                   : strncmp(name, "bad-", 4) == 0   ? -EINVAL
                                                     : r;
        if (r != want)
                fprintf(stderr, "fuzz-sandbox-log: %s: %d, not %d\n", name, r, want);
        return r == want;
}
