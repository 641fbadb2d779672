/* SPDX-License-Identifier: Apache-2.0 */
/* git configuration syntax, read the way git's own parser (config.c: git_parse_source,
 * get_base_var, get_extended_base_var, get_value, parse_value) reads it, so that a key git obeys
 * is never missed because this reader disagreed about a quote, a comment or a section name. Only
 * three things are kept: core.hooksPath, core.fsmonitor and include paths. Character classes are
 * git's "sane ctype" (ASCII only), never the process locale. */
#include "plan/gitconfig.h"

#include <inttypes.h>
#include <limits.h>
#include <strings.h>

typedef struct reader {
        const char *p, *end;
        bool eof;
} reader;

/* git's get_next_char(): CR LF reads as LF; the end reads as LF (again and again) with eof set. */
static int next_char(reader *r) {
        if (r->p >= r->end) {
                r->eof = true;
                return '\n';
        }
        int c = (unsigned char) *r->p++;
        if (c == '\r' && r->p < r->end && *r->p == '\n') {
                r->p++;
                c = '\n';
        }
        return c;
}

static bool g_isspace(int c) {
        return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static bool g_isalpha(int c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool g_iskeychar(int c) {
        return g_isalpha(c) || (c >= '0' && c <= '9') || c == '-';
}

static char g_tolower(int c) {
        return (char) (c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
}

/* A short lower-cased name; longer ones are remembered only as "too long" (they are none of
 * ours). */
typedef struct name {
        char s[16];
        size_t n;
        bool too_long;
} name;

static void name_add(name *nm, int c) {
        if (nm->n + 1 >= sizeof(nm->s)) {
                nm->too_long = true;
                return;
        }
        nm->s[nm->n++] = g_tolower(c);
        nm->s[nm->n] = '\0';
}

static bool name_is(const name *nm, const char *s) {
        return !nm->too_long && strcmp(nm->s, s) == 0;
}

typedef enum section_kind {
        SECTION_OTHER,
        SECTION_CORE,      /* [core], exactly: [core "x"] and [core.x] are other sections */
        SECTION_INCLUDE,   /* [include] */
        SECTION_INCLUDEIF, /* [includeIf "<condition>"] (or the legacy [includeif.<condition>]) */
} section_kind;

/* get_extended_base_var(): `[name "subsection"]`, entered at the first blank after the name. */
static int skip_subsection(reader *r, int c) {
        do {
                if (c == '\n')
                        return -EINVAL;
                c = next_char(r);
        } while (g_isspace(c));
        if (c != '"')
                return -EINVAL;
        for (;;) {
                c = next_char(r);
                if (c == '\n')
                        return -EINVAL;
                if (c == '"')
                        break;
                if (c == '\\' && next_char(r) == '\n')
                        return -EINVAL;
        }
        return next_char(r) == ']' ? 0 : -EINVAL;
}

/* get_base_var(), after '['. The section's own name is what precedes the first '.'; a dot or a
 * quoted part makes the rest a subsection. */
static int parse_section(reader *r, section_kind *ret) {
        name base = { 0 };
        size_t len = 0;
        bool sub = false, dotted = false;
        for (;;) {
                int c = next_char(r);
                if (r->eof)
                        return -EINVAL;
                if (c == ']')
                        break;
                if (g_isspace(c)) {
                        int e = skip_subsection(r, c);
                        if (e < 0)
                                return e;
                        sub = true;
                        len++; /* git appends '.' + the subsection: never empty then */
                        break;
                }
                if (!g_iskeychar(c) && c != '.')
                        return -EINVAL;
                if (c == '.')
                        dotted = sub = true;
                else if (!dotted)
                        name_add(&base, c);
                len++;
        }
        if (len == 0) /* "[]" */
                return -EINVAL;
        *ret = SECTION_OTHER;
        if (!sub && name_is(&base, "core"))
                *ret = SECTION_CORE;
        else if (!sub && name_is(&base, "include"))
                *ret = SECTION_INCLUDE;
        else if (sub && name_is(&base, "includeif"))
                /* Every condition counts as true here: following an include that git would skip
                 * only protects more. */
                *ret = SECTION_INCLUDEIF;
        return 0;
}

/* The escapes git accepts after a backslash in a value; -1 for the rest (git rejects them). */
static int value_escape(int c) {
        switch (c) {
        case 't':
                return '\t';
        case 'b':
                return '\b';
        case 'n':
                return '\n';
        case '\\':
        case '"':
                return c;
        default:
                return -1;
        }
}

/* parse_value(), after '='. `out` has room for the rest of the input. */
static int parse_value(reader *r, char *out) {
        bool quote = false, comment = false;
        size_t n = 0, trim = 0;
        for (;;) {
                int c = next_char(r);
                if (c == '\n') {
                        if (quote)
                                return -EINVAL;
                        out[trim ? trim : n] = '\0'; /* trailing blanks outside quotes go */
                        return 0;
                }
                if (comment)
                        continue;
                if (g_isspace(c) && !quote) {
                        if (!trim)
                                trim = n;
                        if (n) /* leading blanks go too */
                                out[n++] = (char) c;
                        continue;
                }
                if (!quote && (c == ';' || c == '#')) {
                        comment = true;
                        continue;
                }
                trim = 0;
                if (c == '\\') {
                        c = next_char(r);
                        if (c == '\n') /* a continuation line */
                                continue;
                        if ((c = value_escape(c)) < 0)
                                return -EINVAL;
                        out[n++] = (char) c;
                } else if (c == '"')
                        quote = !quote;
                else
                        out[n++] = (char) c;
        }
}

static strv *slot_for(gitconfig_values *v, section_kind kind, const name *key) {
        switch (kind) {
        case SECTION_CORE:
                if (name_is(key, "hookspath"))
                        return &v->hooks_path;
                if (name_is(key, "fsmonitor"))
                        return &v->fsmonitor;
                return NULL;
        case SECTION_INCLUDE:
        case SECTION_INCLUDEIF:
                return name_is(key, "path") ? &v->include : NULL;
        case SECTION_OTHER:
        default:
                return NULL;
        }
}

/* get_value(): a key (its first letter already read), blanks, then '=' and a value or the end
 * of the line. */
static int parse_entry(reader *r, int first, section_kind kind, char *scratch,
                       gitconfig_values *v, size_t *n_values) {
        name key = { 0 };
        name_add(&key, first);
        int c;
        for (;;) {
                c = next_char(r);
                if (r->eof || !g_iskeychar(c))
                        break;
                name_add(&key, c);
        }
        while (c == ' ' || c == '\t')
                c = next_char(r);
        if (c == '\n')
                return 0; /* no value: boolean true, never a path */
        if (c != '=')
                return -EINVAL;
        int e = parse_value(r, scratch);
        if (e < 0)
                return e;
        strv *slot = slot_for(v, kind, &key);
        if (!slot)
                return 0;
        if (++*n_values > GITCONFIG_MAX_VALUES)
                return -E2BIG;
        return strv_push(slot, scratch);
}

/* A UTF-8 byte order mark is skipped; part of one is an error (as in git). */
static int skip_bom(reader *r) {
        static const char bom[] = "\xef\xbb\xbf";
        size_t k = 0;
        while (k < 3 && r->p + k < r->end && r->p[k] == bom[k])
                k++;
        if (k == 3)
                r->p += 3;
        return k == 0 || k == 3 ? 0 : -EINVAL;
}

static int parse_all(reader *r, char *scratch, gitconfig_values *v) {
        section_kind kind = SECTION_OTHER; /* keys before any section belong to none */
        bool comment = false;
        size_t n_values = 0;
        int e = skip_bom(r);
        while (e >= 0) {
                int c = next_char(r);
                if (c == '\n') {
                        if (r->eof)
                                return 0;
                        comment = false;
                } else if (comment || g_isspace(c))
                        continue;
                else if (c == '#' || c == ';')
                        comment = true;
                else if (c == '[')
                        e = parse_section(r, &kind);
                else if (!g_isalpha(c))
                        return -EINVAL;
                else
                        e = parse_entry(r, c, kind, scratch, v, &n_values);
        }
        return e;
}

void gitconfig_values_done(gitconfig_values *v) {
        if (!v)
                return;
        strv_done(&v->hooks_path);
        strv_done(&v->fsmonitor);
        strv_done(&v->include);
}

int gitconfig_parse(const char *text, size_t len, gitconfig_values *ret) {
        if (len > GITCONFIG_MAX_SIZE)
                return -E2BIG;
        if (len > 0 && memchr(text, '\0', len))
                return -EINVAL; /* not a text file */
        _cleanup_free_ char *scratch = malloc(len + 1);
        if (!scratch)
                return -ENOMEM;
        _cleanup_(gitconfig_values_done) gitconfig_values found = { 0 };
        reader r = { text, text + len, false };
        int e = parse_all(&r, scratch, &found);
        if (e < 0)
                return e;
        /* All or nothing, so a caller never acts on half of a file git would reject. */
        gitconfig_values merged = { 0 };
        if (strv_copy(&merged.hooks_path, &ret->hooks_path) < 0 ||
            strv_extend(&merged.hooks_path, &found.hooks_path) < 0 ||
            strv_copy(&merged.fsmonitor, &ret->fsmonitor) < 0 ||
            strv_extend(&merged.fsmonitor, &found.fsmonitor) < 0 ||
            strv_copy(&merged.include, &ret->include) < 0 ||
            strv_extend(&merged.include, &found.include) < 0) {
                gitconfig_values_done(&merged);
                return -ENOMEM;
        }
        gitconfig_values_done(ret);
        *ret = merged;
        return 0;
}

/* git_parse_maybe_bool(): the words, then git_parse_int() (strtoimax base 0, a k/m/g unit, the
 * result within int). Anything else is a command for core.fsmonitor. */
bool gitconfig_is_bool(const char *value) {
        static const char *const words[] = { "true", "yes", "on", "false", "no", "off" };
        if (!value || !*value)
                return true;
        for (size_t i = 0; i < ELEMENTSOF(words); i++)
                if (strcasecmp(value, words[i]) == 0)
                        return true;
        char *end = NULL;
        errno = 0;
        intmax_t v = strtoimax(value, &end, 0);
        if (errno == ERANGE || end == value)
                return false;
        intmax_t factor = 0;
        if (!*end)
                factor = 1;
        else if (!end[1] && (*end == 'k' || *end == 'K'))
                factor = 1024;
        else if (!end[1] && (*end == 'm' || *end == 'M'))
                factor = 1024 * 1024;
        else if (!end[1] && (*end == 'g' || *end == 'G'))
                factor = 1024 * 1024 * 1024;
        if (!factor)
                return false;
        return (v >= 0 || -INT_MAX / factor <= v) && (v <= 0 || INT_MAX / factor >= v);
}
