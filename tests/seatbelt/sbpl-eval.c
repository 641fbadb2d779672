/* SPDX-License-Identifier: Apache-2.0 */
#include "sbpl-eval.h"

#include <ctype.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- reader --------------------------------------------------------------------------------- */

typedef struct reader {
        const char *p;
        unsigned line;
        char *err;
        size_t errlen;
        bool failed;
} reader;

__attribute__((format(printf, 2, 3))) static void fail(reader *r, const char *fmt, ...) {
        if (r->failed)
                return;
        r->failed = true;
        int n = snprintf(r->err, r->errlen, "line %u: ", r->line);
        va_list ap;
        va_start(ap, fmt);
        if (n >= 0 && (size_t) n < r->errlen)
                (void) vsnprintf(r->err + n, r->errlen - (size_t) n, fmt, ap);
        va_end(ap);
}

static sx *node(sx_kind kind) {
        sx *x = calloc(1, sizeof(*x));
        if (!x)
                abort();
        x->kind = kind;
        return x;
}

static void push(sx *list, sx *item) {
        list->items = realloc(list->items, (list->n + 1) * sizeof(sx *));
        if (!list->items)
                abort();
        list->items[list->n++] = item;
}

static void skip_space(reader *r) {
        for (;;) {
                if (*r->p == '\n')
                        r->line++;
                if (isspace((unsigned char) *r->p))
                        r->p++;
                else if (*r->p == ';')
                        while (*r->p && *r->p != '\n')
                                r->p++;
                else
                        return;
        }
}

/* TinyScheme's string escapes: \n \t \r \xHH; a backslash before anything else stands for that
 * character. A raw newline inside a string is legal Scheme, but cordon never writes one. */
static sx *read_string(reader *r) {
        size_t cap = 64, len = 0;
        char *s = malloc(cap);
        r->p++; /* the opening quote */
        while (s && *r->p && *r->p != '"') {
                char c = *r->p++;
                if (c == '\n')
                        fail(r, "raw newline inside a string");
                if (c == '\\') {
                        c = *r->p++;
                        if (c == 'n')
                                c = '\n';
                        else if (c == 't')
                                c = '\t';
                        else if (c == 'r')
                                c = '\r';
                        else if (c == 'x')
                                c = (char) strtol(r->p, (char **) &r->p, 16);
                        else if (c == '\0') {
                                r->p--;
                                break;
                        }
                }
                if (len + 2 > cap)
                        s = realloc(s, cap *= 2);
                if (s)
                        s[len++] = c;
        }
        if (!s)
                abort();
        s[len] = '\0';
        if (*r->p != '"')
                fail(r, "unterminated string");
        else
                r->p++;
        sx *x = node(SX_STRING);
        x->text = s;
        return x;
}

static sx *read_form(reader *r);

static sx *read_list(reader *r) {
        sx *l = node(SX_LIST);
        r->p++;
        for (;;) {
                skip_space(r);
                if (!*r->p) {
                        fail(r, "unbalanced '('");
                        return l;
                }
                if (*r->p == ')') {
                        r->p++;
                        return l;
                }
                push(l, read_form(r));
                if (r->failed)
                        return l;
        }
}

static sx *read_atom(reader *r) {
        const char *start = r->p;
        while (*r->p && !isspace((unsigned char) *r->p) && !strchr("()\";", *r->p))
                r->p++;
        if (r->p == start) {
                fail(r, "unexpected '%c'", *r->p);
                r->p++;
        }
        sx *x = node(isdigit((unsigned char) *start) ? SX_NUMBER : SX_SYMBOL);
        x->text = strndup(start, (size_t) (r->p - start));
        return x;
}

static sx *read_form(reader *r) {
        skip_space(r);
        if (*r->p == '(')
                return read_list(r);
        if (*r->p == '"')
                return read_string(r);
        if (*r->p == ')') {
                fail(r, "unbalanced ')'");
                r->p++;
                return node(SX_SYMBOL);
        }
        return read_atom(r);
}

sx *sbpl_parse(const char *text, char *err, size_t errlen) {
        reader r = { .p = text, .line = 1, .err = err, .errlen = errlen };
        sx *top = node(SX_LIST);
        for (;;) {
                skip_space(&r);
                if (!*r.p || r.failed)
                        break;
                push(top, read_form(&r));
        }
        if (r.failed) {
                sbpl_free(top);
                return NULL;
        }
        return top;
}

void sbpl_free(sx *x) {
        if (!x)
                return;
        for (size_t i = 0; i < x->n; i++)
                sbpl_free(x->items[i]);
        free(x->items);
        free(x->text);
        free(x);
}

/* ---- validation ----------------------------------------------------------------------------- */

static bool is(const sx *x, sx_kind kind, const char *text) {
        return x && x->kind == kind && (!text || (x->text && strcmp(x->text, text) == 0));
}

static const char *const operations[] = {
        "default", "file-read*", "file-write*", "file-write-unlink", "file-write-create",
        "process-exec", "network*", "network-outbound", "signal", "mach-priv-task-port",
        "file-link", "file-clone", "process-info*", "process-info-listpids", "sysctl-read",
        "process-exec*", "appleevent-send", "lsopen", "user-preference-write", "job-creation",
        "mach-lookup", "network-bind", "network-inbound", NULL,
};

/* Rules that may stand without a filter (they apply everywhere on purpose). */
static const char *const unfiltered[] = {
        "allow default", "deny file-write*", "deny network*", "deny signal",
        "deny mach-priv-task-port", "deny process-info*", "allow process-info-listpids",
        "deny appleevent-send", "deny lsopen", "deny user-preference-write", "deny job-creation",
        NULL,
};

/* (with message "cordon-deny RULE SESSION"): an action modifier, not a filter. */
static bool is_modifier(const sx *f) {
        return f->kind == SX_LIST && f->n >= 1 && is(f->items[0], SX_SYMBOL, "with");
}

static bool in_list(const char *const *list, const char *s) {
        for (size_t i = 0; list[i]; i++)
                if (strcmp(list[i], s) == 0)
                        return true;
        return false;
}

static bool regex_ok(const char *re) {
        size_t n = strlen(re);
        if (n < 2 || re[0] != '^' || re[n - 1] != '$')
                return false;
        regex_t c;
        if (regcomp(&c, re, REG_EXTENDED | REG_NOSUB) != 0)
                return false;
        regfree(&c);
        return true;
}

static bool filter_ok(const sx *f, char *err, size_t errlen) {
        if (f->kind != SX_LIST || f->n == 0 || f->items[0]->kind != SX_SYMBOL) {
                snprintf(err, errlen, "a filter is not a list");
                return false;
        }
        const char *h = f->items[0]->text;
        if (strcmp(h, "require-all") == 0 || strcmp(h, "require-not") == 0) {
                bool ok = f->n >= 2 && (strcmp(h, "require-all") == 0 || f->n == 2);
                for (size_t i = 1; ok && i < f->n; i++)
                        ok = filter_ok(f->items[i], err, errlen);
                if (!ok && !err[0])
                        snprintf(err, errlen, "bad %s", h);
                return ok;
        }
        if (strcmp(h, "target") == 0)
                return f->n == 2 && is(f->items[1], SX_SYMBOL, "same-sandbox");
        if (strcmp(h, "vnode-type") == 0)
                return f->n == 2 && (is(f->items[1], SX_SYMBOL, "DIRECTORY") ||
                                     is(f->items[1], SX_SYMBOL, "SYMLINK") ||
                                     is(f->items[1], SX_SYMBOL, "REGULAR-FILE"));
        if (strcmp(h, "sysctl-name") == 0 || strcmp(h, "global-name") == 0 ||
            strcmp(h, "extension") == 0)
                return f->n == 2 && is(f->items[1], SX_STRING, NULL);
        if ((strcmp(h, "local") == 0 || strcmp(h, "remote") == 0) && f->n == 3 &&
            is(f->items[1], SX_SYMBOL, "unix-socket"))
                return f->items[2]->kind == SX_LIST && f->items[2]->n == 2 &&
                       is(f->items[2]->items[0], SX_SYMBOL, "subpath") &&
                       filter_ok(f->items[2], err, errlen);
        if (strcmp(h, "remote") == 0)
                return f->n == 3 && is(f->items[1], SX_SYMBOL, "tcp") &&
                       is(f->items[2], SX_STRING, NULL) &&
                       strncmp(f->items[2]->text, "localhost:", 10) == 0;
        if (f->n != 2 || f->items[1]->kind != SX_STRING) {
                snprintf(err, errlen, "filter %s needs one string", h);
                return false;
        }
        const char *s = f->items[1]->text;
        if (strcmp(h, "subpath") == 0 || strcmp(h, "literal") == 0) {
                if (s[0] != '/')
                        snprintf(err, errlen, "%s \"%s\" is not absolute", h, s);
                return s[0] == '/';
        }
        if (strcmp(h, "regex") == 0) {
                if (!regex_ok(s))
                        snprintf(err, errlen, "regex \"%s\" is not anchored or does not compile",
                                 s);
                return regex_ok(s);
        }
        snprintf(err, errlen, "unknown filter %s", h);
        return false;
}

static bool rule_ok(const sx *r, char *err, size_t errlen) {
        if (r->kind != SX_LIST || r->n < 2 ||
            !(is(r->items[0], SX_SYMBOL, "allow") || is(r->items[0], SX_SYMBOL, "deny"))) {
                snprintf(err, errlen, "a top-level form is not an allow/deny rule");
                return false;
        }
        size_t i = 1;
        for (; i < r->n && r->items[i]->kind == SX_SYMBOL; i++)
                if (!in_list(operations, r->items[i]->text)) {
                        snprintf(err, errlen, "unknown operation %s", r->items[i]->text);
                        return false;
                }
        if (i == 1) {
                snprintf(err, errlen, "a rule without an operation");
                return false;
        }
        char head[128];
        snprintf(head, sizeof(head), "%s %s", r->items[0]->text, r->items[1]->text);
        bool deny = is(r->items[0], SX_SYMBOL, "deny");
        size_t n_ops = i - 1, n_filters = 0, n_messages = 0;
        for (; i < r->n; i++) {
                if (is_modifier(r->items[i])) {
                        const sx *m = r->items[i];
                        if (m->n != 3 || !is(m->items[1], SX_SYMBOL, "message") ||
                            !is(m->items[2], SX_STRING, NULL) ||
                            strncmp(m->items[2]->text, "cordon-deny ", 12) != 0) {
                                snprintf(err, errlen, "(%s) has a bad (with ...)", head);
                                return false;
                        }
                        n_messages++;
                } else if (!filter_ok(r->items[i], err, errlen))
                        return false;
                else
                        n_filters++;
        }
        /* Every deny says which rule it is, so its refusals can be read back from the log. */
        if (n_messages != (deny ? 1u : 0u)) {
                snprintf(err, errlen, "(%s) needs exactly %s (with message ...)", head,
                         deny ? "one" : "no");
                return false;
        }
        if (n_filters == 0 && !(n_ops == 1 && in_list(unfiltered, head))) {
                snprintf(err, errlen, "(%s) has no filter: it would apply everywhere", head);
                return false;
        }
        return true;
}

bool sbpl_validate(const sx *p, char *err, size_t errlen) {
        err[0] = '\0';
        if (p->n < 2 || p->items[0]->n != 2 || !is(p->items[0]->items[0], SX_SYMBOL, "version") ||
            !is(p->items[0]->items[1], SX_NUMBER, "1")) {
                snprintf(err, errlen, "the profile does not start with (version 1)");
                return false;
        }
        if (p->items[1]->n != 2 || !is(p->items[1]->items[0], SX_SYMBOL, "allow") ||
            !is(p->items[1]->items[1], SX_SYMBOL, "default")) {
                snprintf(err, errlen, "the second form is not (allow default)");
                return false;
        }
        for (size_t i = 1; i < p->n; i++)
                if (!rule_ok(p->items[i], err, errlen))
                        return false;
        return true;
}

/* ---- evaluation ----------------------------------------------------------------------------- */

static bool covers(const char *rule_op, const char *op) {
        if (strcmp(rule_op, "default") == 0 || strcmp(rule_op, op) == 0)
                return true;
        size_t n = strlen(rule_op);
        /* "file-write*" covers "file-write-create"; "file-read*" covers "file-read-data". */
        return n > 0 && rule_op[n - 1] == '*' && strncmp(rule_op, op, n - 1) == 0;
}

static bool filter_matches(const sx *f, const char *path, const char *vnode) {
        const char *h = f->items[0]->text;
        if (strcmp(h, "require-all") == 0) {
                for (size_t i = 1; i < f->n; i++)
                        if (!filter_matches(f->items[i], path, vnode))
                                return false;
                return true;
        }
        if (strcmp(h, "require-not") == 0)
                return !filter_matches(f->items[1], path, vnode);
        if (strcmp(h, "vnode-type") == 0)
                return vnode && strcmp(f->items[1]->text, vnode) == 0;
        if (strcmp(h, "sysctl-name") == 0 || strcmp(h, "global-name") == 0)
                return strcmp(f->items[1]->text, path) == 0; /* the "path" is the name */
        if ((strcmp(h, "local") == 0 || strcmp(h, "remote") == 0) && f->n == 3 &&
            is(f->items[1], SX_SYMBOL, "unix-socket"))
                return filter_matches(f->items[2], path, vnode); /* the socket's path */
        if (strcmp(h, "extension") == 0 || strcmp(h, "with") == 0)
                return false; /* no sandbox extension in this model; a modifier is no filter */
        if (f->n != 2 || f->items[1]->kind != SX_STRING)
                return false; /* remote, target: not about paths */
        const char *s = f->items[1]->text;
        size_t n = strlen(s);
        if (strcmp(h, "literal") == 0)
                return strcmp(path, s) == 0;
        if (strcmp(h, "subpath") == 0)
                return strncmp(path, s, n) == 0 && (path[n] == '\0' || path[n] == '/');
        regex_t re;
        if (regcomp(&re, s, REG_EXTENDED | REG_NOSUB) != 0)
                return false;
        bool m = regexec(&re, path, 0, NULL, 0) == 0;
        regfree(&re);
        return m;
}

static bool rule_applies(const sx *r, const char *op, const char *path, const char *vnode) {
        bool op_match = false;
        size_t i = 1;
        for (; i < r->n && r->items[i]->kind == SX_SYMBOL; i++)
                op_match = op_match || covers(r->items[i]->text, op);
        if (!op_match)
                return false;
        bool any_filter = false;
        for (; i < r->n; i++) {
                if (is_modifier(r->items[i]))
                        continue;
                any_filter = true;
                if (filter_matches(r->items[i], path, vnode))
                        return true;
        }
        return !any_filter;
}

bool sbpl_allows_vnode(const sx *p, const char *op, const char *path, const char *vnode) {
        bool allowed = false; /* (allow default) comes first in a valid profile */
        for (size_t i = 1; i < p->n; i++)
                if (rule_applies(p->items[i], op, path, vnode))
                        allowed = is(p->items[i]->items[0], SX_SYMBOL, "allow");
        return allowed;
}

bool sbpl_allows(const sx *p, const char *op, const char *path) {
        return sbpl_allows_vnode(p, op, path, NULL);
}

static void collect(const sx *x, const char *filter, const char **out, size_t max, size_t *n) {
        if (x->kind != SX_LIST)
                return;
        if (x->n == 2 && is(x->items[0], SX_SYMBOL, filter) && x->items[1]->kind == SX_STRING) {
                if (*n < max)
                        out[*n] = x->items[1]->text;
                (*n)++;
                return;
        }
        for (size_t i = 0; i < x->n; i++)
                collect(x->items[i], filter, out, max, n);
}

size_t sbpl_strings(const sx *p, const char *filter, const char **out, size_t max) {
        size_t n = 0;
        collect(p, filter, out, max, &n);
        return n;
}
