/* SPDX-License-Identifier: Apache-2.0 */
/* Text that goes into a Seatbelt profile (SBPL, a TinyScheme dialect). Every string a profile
 * holds passes through sbpl_quote(); every regex is built by sbpl_glob_regex() and then quoted
 * like any other string. A profile is program text: a path holding `")(allow default)(` must stay
 * one string, or the command's own file names would rewrite its sandbox. Pure code, no I/O. */
#pragma once

#include "util/util.h"

/* A growable text buffer with a sticky error: appends after a failure do nothing, so a
 * generator can write straight-line code and check once. */
typedef struct sbuf {
        char *s;    /* NUL-terminated once anything was added */
        size_t len, cap;
        int err;    /* 0, or the first -errno */
} sbuf;

void sbuf_add(sbuf *b, const char *s);
void sbuf_addn(sbuf *b, const char *s, size_t n);
void sbuf_addf(sbuf *b, const char *fmt, ...) _printf_(2, 3);
/* Records -errno `r` (the first one wins). */
void sbuf_fail(sbuf *b, int r);
/* Hands the text out (caller frees), or returns NULL with the buffer's error in *ret_err. */
char *sbuf_take(sbuf *b, int *ret_err);
void sbuf_done(sbuf *b);

/* Whether `s` may appear in a profile at all: valid UTF-8 (the profile is UTF-8 text, and APFS
 * names are UTF-8), no C0 control character and no DEL (a newline in a path is refused, not
 * escaped: nothing legitimate needs one, and the rule stays readable). Returns 0, -EINVAL for a
 * control character, -EILSEQ for bytes that are not UTF-8. */
int sbpl_check_string(const char *s);

/* Appends `s` as an SBPL string literal: '"', the bytes with '\' and '"' escaped by a backslash,
 * '"'. Nothing else is special inside a string (parentheses, ';', '#' are text there). What
 * sbpl_check_string() refuses is refused here too (sticky error, nothing appended). */
void sbpl_quote(sbuf *b, const char *s);

typedef enum sbpl_glob_kind {
        /* An absolute path or path glob: matches the path and everything beneath it (a subpath,
         * as the plan's deny rules mean it). "/" matches everything. */
        SBPL_GLOB_SUBPATH,
        /* An absolute path or path glob: matches exactly that path. */
        SBPL_GLOB_EXACT,
        /* A file-name glob (denyCreateNames): matches any path whose final component it
         * matches. */
        SBPL_GLOB_NAME,
} sbpl_glob_kind;

/* The one glob → regex translator. The glob is read by the parser the Linux name rules use
 * (util/globtok.h, which states the syntax): '*' and '?' never match '/', '\' quotes the next
 * byte, '[...]' is a bracket expression ('!' or '^' negates; an unclosed '[' is literal), ASCII
 * letters match either case, no special leading dot. The result is anchored ('^' ... '$') and
 * escapes every regex metacharacter of the path. A bracket becomes the set of bytes the name
 * rules match for it, case folded ("[[:digit:]]" is "[0123456789]"). Only deny rules use
 * regexes, so where the regex dialect cannot say exactly what the glob says it says more: a set
 * holding a regex-special, control or non-ASCII byte (every negated one does) or no byte at all
 * becomes "any one byte but '/'". Returns 0 and a malloc'ed regex (not yet quoted), -EINVAL for a
 * relative path or a control character, -EILSEQ for invalid UTF-8, -ENOMEM. */
int sbpl_glob_regex(const char *glob, sbpl_glob_kind kind, char **ret);

/* A glob that matches exactly the path `path`: every '*', '?', '[' and '\' quoted by a '\'. For
 * paths that are names, not patterns (a bind's directory may be called "a[1]" or "back\slash"):
 * translated unquoted, such a byte would become syntax and the deny would miss the very path it
 * names. Returns a malloc'ed glob, or NULL on allocation failure. */
char *sbpl_glob_quote(const char *path);

/* The regex text for `glob` without anchors and suffixes (for regexes the generator composes
 * of several globs, and for tests that substitute a temporary directory's name in a generated
 * profile). Same returns. */
int sbpl_glob_regex_body(const char *glob, char **ret);
