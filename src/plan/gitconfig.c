/* SPDX-License-Identifier: Apache-2.0 */
/* git configuration syntax, read the way git's own parser (config.c: git_parse_source,
 * get_base_var, get_extended_base_var, get_value, parse_value) reads it, so that a key git obeys
 * is never missed because this reader disagreed about a quote, a comment or a section name. Only
 * three things are kept: core.hooksPath, core.fsmonitor and include paths. Character classes are
 * git's "sane ctype" (ASCII only), never the process locale. */
#include "plan/gitconfig.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
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

/* A short lower-cased name; longer ones are remembered only as "too long" (no name the readers
 * look for is that long). */
typedef struct name {
        char s[32];
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

typedef struct section {
        section_kind kind;
        name base; /* the section's own name, lower-cased: "filter" in [filter "lfs"] */
        bool sub;  /* it has a subsection ([x "y"] or the legacy [x.y]) */
} section;

/* Called for every entry in file order; `value` is NULL for a key without '=' (boolean true). */
typedef int (*entry_fn)(void *userdata, const section *s, const name *key, const char *value);

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
static int parse_section(reader *r, section *ret) {
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
        *ret = (section) { .kind = SECTION_OTHER, .base = base, .sub = sub };
        if (!sub && name_is(&base, "core"))
                ret->kind = SECTION_CORE;
        else if (!sub && name_is(&base, "include"))
                ret->kind = SECTION_INCLUDE;
        else if (sub && name_is(&base, "includeif"))
                /* Every condition counts as true here: following an include that git would skip
                 * only protects more. */
                ret->kind = SECTION_INCLUDEIF;
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
static int parse_entry(reader *r, int first, const section *s, char *scratch, entry_fn fn,
                       void *userdata) {
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
                return fn(userdata, s, &key, NULL); /* no value: boolean true */
        if (c != '=')
                return -EINVAL;
        int e = parse_value(r, scratch);
        if (e < 0)
                return e;
        return fn(userdata, s, &key, scratch);
}

typedef struct collector {
        gitconfig_values *v;
        size_t n_values;
} collector;

/* gitconfig_parse()'s visitor. A key without a value is skipped: boolean true, never a path. */
static int collect(void *userdata, const section *s, const name *key, const char *value) {
        collector *c = userdata;
        strv *slot = value ? slot_for(c->v, s->kind, key) : NULL;
        if (!slot)
                return 0;
        if (++c->n_values > GITCONFIG_MAX_VALUES)
                return -E2BIG;
        return strv_push(slot, value);
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

static int parse_all(reader *r, char *scratch, entry_fn fn, void *userdata) {
        section sec = { .kind = SECTION_OTHER }; /* keys before any section belong to none */
        bool comment = false;
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
                        e = parse_section(r, &sec);
                else if (!g_isalpha(c))
                        return -EINVAL;
                else
                        e = parse_entry(r, c, &sec, scratch, fn, userdata);
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
        collector col = { &found, 0 };
        int e = parse_all(&r, scratch, collect, &col);
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

/* ---- vetting a repository's config ---------------------------------------------------------- */

/* Keys that make git run a program, or read or write a file the config names, in a repository
 * created inside the sandbox (git-config(1), gitattributes(5), git-lfs-config(5)): honoured by
 * the user's next host `git` there, they would run what the sandboxed command chose. Entries of
 * [section] without a subsection: "section.key", or "section.*" for every key of the section. */
static const char *const plain_keys[] = {
        "core.fsmonitor", /* a command run by every `git status` (unless a boolean) */
        "core.hookspath", "core.sshcommand", "core.editor", "core.pager", "core.askpass",
        "core.gitproxy", "core.alternaterefscommand", "core.excludesfile", "core.attributesfile",
        "core.worktree", /* unless inside the roots: worktree_inside() */
        "sequence.editor", "diff.external", "gpg.program", "credential.helper", "include.path",
        "uploadpack.packobjectshook", "http.proxy", "http.sslcert", "http.sslkey",
        "http.sslcainfo", "http.sslcapath", "http.cookiefile", "http.sslkeylogfile",
        "commit.template", "blame.ignorerevsfile", "interactive.difffilter", "web.browser",
        "protocol.allow", "init.templatedir", "fsmonitor.socketdir",
        "alias.*",     /* only "!command" values: is_dangerous() */
        "pager.*",     /* pager.<command> = a program */
        "sendemail.*", /* smtpServer, toCmd, ccCmd, sendmailCmd: programs */
        "imap.*",      /* imap.tunnel: a program */
        "trace2.*",    /* targets: files written */
        "instaweb.*",  /* httpd, modulePath */
        "hook.*",      /* config-based hooks */
};

/* Entries of [section "subsection"], any subsection: "section.*.key" ("*" as the key: all). */
static const char *const sub_keys[] = {
        "filter.*.clean", "filter.*.smudge", "filter.*.process", "diff.*.textconv",
        "diff.*.command", "merge.*.driver", "credential.*.helper", "gpg.*.program",
        "gpg.*.defaultkeycommand", "gpg.*.allowedsignersfile", "difftool.*.cmd",
        "difftool.*.path", "mergetool.*.cmd", "mergetool.*.path", "man.*.cmd", "man.*.path",
        "browser.*.cmd", "browser.*.path", "guitool.*.cmd", "remote.*.uploadpack",
        "remote.*.receivepack", "remote.*.proxy", "http.*.proxy", "http.*.sslcert",
        "http.*.sslkey", "http.*.sslcainfo", "http.*.sslcapath", "http.*.cookiefile",
        "includeif.*.path", "protocol.*.allow", "lfs.*.path", "lfs.*.clean", "lfs.*.smudge",
        "submodule.*.update", /* only "!command" values: is_dangerous() */
        "hook.*.*",
};

typedef struct vetter {
        const char *git_dir;
        const strv *roots;
        const char *key;  /* out: the table entry of the first dangerous key */
        strv *collect;    /* when set: every dangerous entry is added here instead */
        const strv *keep; /* dangerous entries that pass (the replaced file's own) */
} vetter;

/* The entry of `t` that [sec] key (with a subsection: `sub`) matches, or NULL. */
static const char *table_match(const char *const *t, size_t n, const name *sec, bool sub,
                               const name *key) {
        for (size_t i = 0; i < n; i++) {
                const char *dot = strchr(t[i], '.');
                size_t sl = (size_t) (dot - t[i]);
                if (sec->too_long || sec->n != sl || memcmp(sec->s, t[i], sl) != 0)
                        continue;
                const char *k = dot + 1 + (sub ? 2 : 0); /* past "*." */
                if (strcmp(k, "*") == 0 || name_is(key, k))
                        return t[i];
        }
        return NULL;
}

/* `value` joined to `dir` and resolved lexically ("." and ".." folded). -EINVAL when it climbs
 * above "/". */
static int lexical_join(const char *dir, const char *value, char out[static PATH_MAX]) {
        int n = snprintf(out, PATH_MAX, "%s/%s", value[0] == '/' ? "" : dir, value);
        if (n < 0 || n >= PATH_MAX)
                return -ENAMETOOLONG;
        char *w = out, *rd = out;
        while (*rd) {
                while (*rd == '/')
                        rd++;
                char *e = strchrnul(rd, '/');
                size_t len = (size_t) (e - rd);
                if (len == 0 || (len == 1 && rd[0] == '.')) {
                } else if (len == 2 && rd[0] == '.' && rd[1] == '.') {
                        if (w == out)
                                return -EINVAL;
                        while (w > out && *--w != '/')
                                ;
                } else {
                        *w++ = '/';
                        memmove(w, rd, len);
                        w += len;
                }
                rd = e;
        }
        if (w == out)
                *w++ = '/';
        *w = '\0';
        return 0;
}

/* core.worktree: `git submodule add` writes "../../../sub" into .git/modules/sub/config. Allowed
 * when it names a place inside one of the roots (lexically; git itself refuses a submodule path
 * through a symlink since 2.45.1). "~" and "%(prefix)" forms are refused. */
static bool worktree_inside(const vetter *v, const char *value) {
        char abs[PATH_MAX];
        if (!v->git_dir || !v->roots || !*value || value[0] == '~' || value[0] == '%' ||
            lexical_join(v->git_dir, value, abs) < 0)
                return false;
        for (size_t i = 0; i < v->roots->n; i++)
                if (path_startswith(abs, v->roots->v[i]))
                        return true;
        return false;
}

static const char *dangerous_key(const vetter *v, const section *s, const name *key,
                                 const char *value) {
        const char *hit = s->sub ? table_match(sub_keys, ELEMENTSOF(sub_keys), &s->base, true, key)
                                 : table_match(plain_keys, ELEMENTSOF(plain_keys), &s->base, false,
                                               key);
        if (!hit)
                return NULL;
        bool bang = value && value[0] == '!';
        if (name_is(&s->base, "alias") || name_is(&s->base, "submodule"))
                return bang ? hit : NULL; /* "!command" runs a shell; the rest are git's own */
        if (!s->sub && name_is(&s->base, "core") && name_is(key, "fsmonitor"))
                return value && !gitconfig_is_bool(value) ? hit : NULL; /* true: the built-in */
        if (!s->sub && name_is(&s->base, "core") && name_is(key, "worktree"))
                return value && worktree_inside(v, value) ? NULL : hit;
        return hit;
}

/* A dangerous entry's identity for gitconfig_vet_replacing(): the table entry and the value
 * (the subsection is not kept: the same value names the same program or file). */
static char *entry_id(const char *hit, const char *value) {
        char *id = NULL;
        return asprintf(&id, "%s\n%s", hit, value ? value : "\x01") < 0 ? NULL : id;
}

static int vet_entry(void *userdata, const section *s, const name *key, const char *value) {
        vetter *v = userdata;
        const char *hit = v->key ? NULL : dangerous_key(v, s, key, value);
        if (!hit)
                return 0;
        if (!v->collect && !v->keep) {
                v->key = hit;
                return 0;
        }
        _cleanup_free_ char *id = entry_id(hit, value);
        if (!id)
                return -ENOMEM;
        if (v->collect)
                return strv_push_unique(v->collect, id);
        if (!strv_contains(v->keep, id))
                v->key = hit;
        return 0;
}

bool gitconfig_is_vet_key(const char *s) {
        for (size_t i = 0; s && i < ELEMENTSOF(plain_keys); i++)
                if (strcmp(s, plain_keys[i]) == 0)
                        return true;
        for (size_t i = 0; s && i < ELEMENTSOF(sub_keys); i++)
                if (strcmp(s, sub_keys[i]) == 0)
                        return true;
        return false;
}

static int vet_run(const char *text, size_t len, vetter *v) {
        if (len > GITCONFIG_MAX_SIZE)
                return -E2BIG;
        if (len > 0 && memchr(text, '\0', len))
                return -EINVAL;
        _cleanup_free_ char *scratch = malloc(len + 1);
        if (!scratch)
                return -ENOMEM;
        reader r = { text, text + len, false };
        return parse_all(&r, scratch, vet_entry, v);
}

int gitconfig_vet(const char *text, size_t len, const char *git_dir, const strv *roots,
                  const char **ret_key) {
        return gitconfig_vet_replacing(text, len, NULL, 0, git_dir, roots, ret_key);
}

int gitconfig_vet_replacing(const char *text, size_t len, const char *old, size_t old_len,
                            const char *git_dir, const strv *roots, const char **ret_key) {
        _cleanup_(strv_done) strv keep = { 0 };
        if (old) {
                vetter o = { git_dir, roots, NULL, &keep, NULL };
                int e = vet_run(old, old_len, &o);
                if (e == -ENOMEM)
                        return e;
                if (e < 0)
                        strv_done(&keep); /* unreadable: nothing of it is kept */
        }
        vetter v = { git_dir, roots, NULL, NULL, old ? &keep : NULL };
        int e = vet_run(text, len, &v);
        if (e < 0)
                return e;
        if (ret_key)
                *ret_key = v.key;
        return v.key ? 1 : 0;
}
