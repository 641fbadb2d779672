/* SPDX-License-Identifier: Apache-2.0 */
/* Seatbelt's refusals, read back from the system log (sandbox-log.h). A tagged refusal's
 * eventMessage is
 *     Sandbox: NAME(PID) deny(N) OPERATION TARGET
 *     ... (lines the kernel adds: the violation again, backtrace hints)
 *     cordon-deny RULE SESSION
 * or, for refusals the kernel folded, "Sandbox: K duplicate report(s) for NAME deny(N) ...".
 * Everything in it is untrusted: NAME is the program's, TARGET a path the command chose. */
#include <jansson.h>
#include <stdio.h>

#include "seatbelt/sandbox-log.h"
#include "util/util.h"

typedef struct rule_info {
        const char *name;
        const char *action; /* NULL: from the operation (file-read or file-write) */
        const char *why;    /* raw.rule of the event */
} rule_info;

static const rule_info rules[SBR_COUNT_] = {
        [SBR_PROCESS] = { "process", "process",
                          "process: another process's signals, task port or information" },
        [SBR_NETWORK] = { "network", "network-outbound",
                          "network: not the session's proxy nor an allowed Unix socket" },
        [SBR_SECRET] = { "secret", NULL, "secret: the secret set or denyRead" },
        [SBR_WRITE] = { "write", "file-write", "write: outside the writable roots" },
        [SBR_READ_ONLY] = { "read-only", "file-write", "read-only: a read-only bind" },
        [SBR_PROTECTED] = { "protected", "file-write",
                            "protected: the write-deny set (mandatory names, protectedPaths, "
                            "denyWrite, git internals)" },
        [SBR_NESTED_GIT] = { "nested-git", "file-write",
                             "nested-git: a hook or config of a repository beneath a writable "
                             "root" },
        [SBR_RENAME] = { "rename", "file-write",
                         "rename: an ancestor of a denied path or read-only bind" },
        [SBR_CREATE_NAME] = { "create-name", "file-create-name", "create-name: denyCreateNames" },
        [SBR_EXEC] = { "exec", "process-exec", "exec: a program in a writable place" },
        [SBR_PROGRAM] = { "program", "process-exec",
                          "program: a program that acts outside the sandbox" },
        [SBR_SERVICE] = { "service", "service",
                          "service: Apple events, LaunchServices, preference writes, launchd "
                          "jobs or the pasteboard" },
        [SBR_TTY] = { "tty", NULL, "tty: a terminal the command did not open" },
};

const char *seatbelt_rule_name(seatbelt_rule r) {
        return (unsigned) r < SBR_COUNT_ ? rules[r].name : NULL;
}

/* ---- the tag -------------------------------------------------------------------------------- */

static bool is_blank(char c) {
        return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* The last "cordon-deny " of `msg` that starts the message or follows a blank and runs, with
 * RULE and SESSION, to the end of the message (trailing blanks aside). A path in the first line
 * cannot impersonate it: the kernel's own tag comes after it. NULL: none. */
static const char *find_tag(const char *msg, size_t len, size_t *tag_len) {
        size_t end = len;
        while (end > 0 && is_blank(msg[end - 1]))
                end--;
        const size_t plen = strlen(SEATBELT_TAG_PREFIX);
        for (size_t i = end; i-- > 0;) {
                if (end - i < plen || memcmp(msg + i, SEATBELT_TAG_PREFIX, plen) != 0)
                        continue;
                if (i > 0 && !is_blank(msg[i - 1]))
                        continue;
                *tag_len = end - i;
                return msg + i;
        }
        return NULL;
}

/* "cordon-deny RULE SESSION": 1 with the rule for `session`, 0 for another session, -EINVAL
 * for a rule this version does not write or a malformed tag. */
static int parse_tag(const char *tag, size_t len, const char *session, seatbelt_rule *ret) {
        const size_t plen = strlen(SEATBELT_TAG_PREFIX);
        const char *rule = tag + plen, *end = tag + len;
        const char *sp = memchr(rule, ' ', (size_t) (end - rule));
        if (!sp || sp == rule || sp + 1 == end)
                return -EINVAL;
        for (const char *c = sp + 1; c < end; c++)
                if (is_blank(*c))
                        return -EINVAL; /* a session id holds no blank */
        size_t slen = (size_t) (end - sp - 1);
        if (strlen(session) != slen || memcmp(sp + 1, session, slen) != 0)
                return 0;
        for (int r = 0; r < SBR_COUNT_; r++)
                if (strlen(rules[r].name) == (size_t) (sp - rule) &&
                    memcmp(rule, rules[r].name, (size_t) (sp - rule)) == 0) {
                        *ret = (seatbelt_rule) r;
                        return 1;
                }
        return -EINVAL;
}

/* ---- the refusal line ----------------------------------------------------------------------- */

/* A decimal number of at most `max_digits` digits at *p, advancing past it. */
static bool read_number(const char **p, const char *end, unsigned max_digits, uint64_t *ret) {
        uint64_t v = 0;
        unsigned n = 0;
        for (; *p < end && **p >= '0' && **p <= '9' && n < max_digits; (*p)++, n++)
                v = v * 10 + (uint64_t) (**p - '0');
        *ret = v;
        return n > 0 && (*p == end || **p < '0' || **p > '9');
}

static bool read_literal(const char **p, const char *end, const char *lit) {
        size_t n = strlen(lit);
        if ((size_t) (end - *p) < n || memcmp(*p, lit, n) != 0)
                return false;
        *p += n;
        return true;
}

static void copy_cut(char *dst, size_t size, const char *src, size_t len) {
        size_t n = len < size - 1 ? len : size - 1;
        memcpy(dst, src, n);
        dst[n] = '\0';
}

/* "(PID) deny(N) " at `p`: the first place in the line where it stands ends the name (*open:
 * its '('). */
static const char *find_pid(const char *p, const char *end, const char **open, uint64_t *pid,
                            uint64_t *count) {
        for (const char *c = p; c < end; c++) {
                const char *q = c;
                if (*q != '(')
                        continue;
                q++;
                uint64_t p_ = 0, n = 0; /* written only once the whole shape is there */
                if (read_number(&q, end, 9, &p_) && read_literal(&q, end, ") deny(") &&
                    read_number(&q, end, 19, &n) && read_literal(&q, end, ") ")) {
                        *open = c;
                        *pid = p_;
                        *count = n;
                        return q;
                }
        }
        return NULL;
}

/* "K duplicate report(s) for NAME deny(N) " at `p` (no pid). */
static const char *find_duplicates(const char *p, const char *end, const char **name,
                                   size_t *name_len, uint64_t *count) {
        uint64_t k = 0;
        if (!read_number(&p, end, 19, &k) ||
            !(read_literal(&p, end, " duplicate reports for ") ||
              read_literal(&p, end, " duplicate report for ")))
                return NULL;
        *name = p;
        for (const char *c = p; c < end; c++) {
                const char *q = c;
                uint64_t n = 0;
                if (read_literal(&q, end, " deny(") && read_number(&q, end, 19, &n) &&
                    read_literal(&q, end, ") ")) {
                        *name_len = (size_t) (c - p);
                        *count = k + n;
                        return q;
                }
        }
        return NULL;
}

static int parse_refusal(const char *msg, size_t len, seatbelt_violation *v) {
        const char *nl = memchr(msg, '\n', len), *end = nl ? nl : msg + len, *p = msg;
        if (!read_literal(&p, end, "Sandbox: "))
                return -EINVAL;
        const char *name = p, *rest = NULL, *open = NULL;
        size_t name_len = 0;
        uint64_t pid = 0, count = 0;
        if ((rest = find_pid(p, end, &open, &pid, &count)))
                name_len = (size_t) (open - name);
        else if (!(rest = find_duplicates(p, end, &name, &name_len, &count)))
                return -EINVAL;
        const char *op = rest, *sp = op;
        while (sp < end && *sp != ' ')
                sp++;
        if (sp == op || (size_t) (sp - op) >= sizeof(v->operation))
                return -EINVAL;
        copy_cut(v->process, sizeof(v->process), name, name_len);
        v->pid = (long) pid;
        v->count = count;
        copy_cut(v->operation, sizeof(v->operation), op, (size_t) (sp - op));
        const char *target = sp < end ? sp + 1 : end;
        copy_cut(v->target, sizeof(v->target), target, (size_t) (end - target));
        return 0;
}

/* ---- the JSON line -------------------------------------------------------------------------- */

static const char *string_field(json_t *o, const char *key, size_t *len) {
        json_t *s = json_object_get(o, key);
        if (!json_is_string(s))
                return NULL;
        *len = json_string_length(s);
        return json_string_value(s);
}

/* The Sandbox kernel extension's image is ".../Sandbox.kext/Contents/MacOS/Sandbox". */
static bool from_sandbox(json_t *o) {
        size_t len = 0;
        const char *img = string_field(o, "senderImagePath", &len);
        if (!img || memchr(img, '\0', len))
                return false;
        const char *base = strrchr(img, '/');
        return base && strcmp(base, "/Sandbox") == 0;
}

static int parse_object(json_t *o, const char *session, seatbelt_violation *ret) {
        if (!json_is_object(o))
                return -EINVAL;
        if (!from_sandbox(o))
                return 0;
        size_t len = 0, tag_len = 0;
        const char *msg = string_field(o, "eventMessage", &len);
        if (!msg)
                return -EINVAL;
        const char *tag = find_tag(msg, len, &tag_len);
        if (!tag)
                return 0; /* a refusal of another profile, or not a refusal */
        seatbelt_violation v = { 0 };
        int r = parse_tag(tag, tag_len, session, &v.rule);
        if (r <= 0)
                return r;
        /* The refusal is what comes before the tag and the one blank that separates them. */
        size_t before = (size_t) (tag - msg);
        if (before > 0)
                before--;
        if ((r = parse_refusal(msg, before, &v)) < 0)
                return r;
        *ret = v;
        return 1;
}

int seatbelt_log_parse(const char *line, size_t len, const char *session, seatbelt_violation *ret) {
        if (!line || !session || !ret)
                return -EINVAL;
        size_t i = 0;
        while (i < len && is_blank(line[i]))
                i++;
        /* `log stream` starts with "Filtering the log data using ..." and may print other
         * status text: only objects are events. */
        if (i == len || line[i] != '{')
                return 0;
        json_error_t jerr;
        json_t *o = json_loadb(line + i, len - i, JSON_REJECT_DUPLICATES, &jerr);
        if (!o)
                return -EINVAL;
        int r = parse_object(o, session, ret);
        json_decref(o);
        return r;
}

void seatbelt_violation_event(const seatbelt_violation *v, cordon_violation *ret) {
        const rule_info *ri = &rules[(unsigned) v->rule < SBR_COUNT_ ? v->rule : SBR_WRITE];
        const char *action = ri->action;
        if (!action)
                action = strncmp(v->operation, "file-read", 9) == 0 ? "file-read" : "file-write";
        *ret = (cordon_violation) { .action = action, .syscall = v->operation,
                                    .target = v->target, .rule = ri->why,
                                    .count = v->count > 1 ? v->count : 0 };
}

/* ---- a stream of lines ---------------------------------------------------------------------- */

void seatbelt_log_reader_init(seatbelt_log_reader *r, const char *session,
                              seatbelt_violation_fn fn, void *userdata) {
        r->session = session;
        r->fn = fn;
        r->userdata = userdata;
        r->violations = r->bad = 0;
        r->skipping = false;
        r->len = 0;
}

static void line_done(seatbelt_log_reader *r, const char *line, size_t len) {
        seatbelt_violation v;
        int q = seatbelt_log_parse(line, len, r->session, &v);
        if (q < 0)
                r->bad++;
        if (q != 1)
                return;
        r->violations++;
        if (r->fn)
                r->fn(r->userdata, &v);
}

void seatbelt_log_feed(seatbelt_log_reader *r, const char *data, size_t len) {
        while (len > 0) {
                const char *nl = memchr(data, '\n', len);
                size_t n = nl ? (size_t) (nl - data) : len;
                if (!r->skipping && r->len + n >= sizeof(r->buf)) {
                        r->skipping = true; /* over-long: not one of the kernel's */
                        r->bad++;
                }
                if (!r->skipping) {
                        memcpy(r->buf + r->len, data, n);
                        r->len += n;
                }
                if (!nl)
                        return;
                if (!r->skipping)
                        line_done(r, r->buf, r->len);
                r->skipping = false;
                r->len = 0;
                data = nl + 1;
                len -= n + 1;
        }
}
