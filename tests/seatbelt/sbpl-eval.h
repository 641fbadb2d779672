/* SPDX-License-Identifier: Apache-2.0 */
/* A reader, validator and evaluator for the SBPL subset cordon generates, so profiles are
 * tested as data on Linux: the reader follows TinyScheme's string syntax (a wrongly escaped
 * string reads back as something else or breaks the structure), regexes run through glibc's
 * POSIX ERE engine in the C locale, and rules are evaluated the way Seatbelt does (the last
 * matching rule decides). No substitute for running sandbox-exec on macOS: it pins down what the
 * generator claims, not what Seatbelt does. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

typedef enum sx_kind {
        SX_LIST,
        SX_SYMBOL,
        SX_STRING,
        SX_NUMBER,
} sx_kind;

typedef struct sx {
        sx_kind kind;
        char *text;       /* SYMBOL, STRING (decoded), NUMBER */
        struct sx **items; /* LIST */
        size_t n;
} sx;

/* Parses a whole profile into a list of its top-level forms. NULL on a syntax error, with a
 * message ("line N: ...") in err. */
sx *sbpl_parse(const char *text, char *err, size_t errlen);
void sbpl_free(sx *x);

/* Checks the structure cordon promises (docs/design/seatbelt.md): (version 1) then (allow
 * default); rules are (allow|deny OPERATION... FILTER...) with known operations and filters;
 * every allow but the default has a filter; subpath/literal strings are absolute; every regex is
 * anchored and compiles. Returns true, or false with a message in err. */
bool sbpl_validate(const sx *profile, char *err, size_t errlen);

/* Whether `operation` ("file-write-create", "file-read-data", "process-exec",
 * "network-outbound"...) on `path` is allowed: the last rule whose operations cover it and whose
 * filters match decides. Filters other than subpath/literal/regex/require-* never match a path
 * (remote, target). */
bool sbpl_allows(const sx *profile, const char *operation, const char *path);
/* The same for an object of type `vnode` ("DIRECTORY", "SYMLINK", "REGULAR-FILE"): what a
 * (vnode-type T) filter is matched against (for file-write-create, the type being created or
 * renamed into place). NULL: no vnode-type filter matches. A (sysctl-name "N") filter matches
 * when `path` is N. */
bool sbpl_allows_vnode(const sx *profile, const char *operation, const char *path,
                       const char *vnode);

/* Every string of every (filter "...") form in the profile, for checks on what was emitted. */
size_t sbpl_strings(const sx *profile, const char *filter, const char **out, size_t max);
