/* SPDX-License-Identifier: Apache-2.0 */
/* excludedCommands (docs/settings.md): command lines that run outside the sandbox when the WHOLE
 * line equals an entry, word for word. A convenience, not a security boundary: an excluded
 * command runs with the user's full authority, so anything that could make it run something else
 * (redirections, `cd`, command substitution, separators, pipes, background jobs, newlines, a shell
 * or another command runner) makes the line ineligible, and it runs sandboxed as usual. Pure:
 * string work only, no filesystem access. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

typedef enum excluded_refusal {
        EXCLUDED_OK = 0,
        EXCLUDED_EMPTY,        /* no words */
        EXCLUDED_REDIRECTION,  /* '<' or '>' */
        EXCLUDED_CD,           /* a word "cd" */
        EXCLUDED_SUBSTITUTION, /* "$(" */
        EXCLUDED_BACKTICK,     /* '`' */
        EXCLUDED_SEMICOLON,    /* ';' */
        EXCLUDED_AND,          /* "&&" */
        EXCLUDED_OR,           /* "||" */
        EXCLUDED_PIPE,         /* '|' */
        EXCLUDED_BACKGROUND,   /* '&' */
        EXCLUDED_NEWLINE,      /* '\n' or '\r' */
        EXCLUDED_CONTROL,      /* another control character */
        EXCLUDED_RUNNER,       /* a shell or command runner: sh -c, env, sudo, xargs, ... */
        EXCLUDED_SHELL_SYNTAX, /* in a line or string entry: quotes, '\', '$', globs, ... */
        EXCLUDED_TOO_LONG,     /* more than EXCLUDED_MAX_WORDS words or EXCLUDED_MAX_BYTES */
        _EXCLUDED_REFUSAL_MAX,
} excluded_refusal;

#define EXCLUDED_MAX_WORDS 64
#define EXCLUDED_MAX_BYTES 4096

/* A phrase for messages: "contains a redirection ('<' or '>')". */
const char *excluded_refusal_to_string(excluded_refusal r);

/* Whether the argument vector may be compared with entries at all. */
excluded_refusal excluded_check_argv(char *const argv[]);

/* Splits a command line or a string entry at spaces and tabs into words (caller frees with
 * excluded_words_free). Any shell syntax refuses the line (*ret_why set, *ret NULL, returns 0):
 * a string is compared word for word, never interpreted, so a line whose meaning depends on a
 * shell cannot be matched honestly. Returns 0, or -ENOMEM. */
int excluded_split(const char *line, char ***ret, excluded_refusal *ret_why);
void excluded_words_free(char **words);

/* True when argv equals `entry` word for word (both NULL-terminated). */
bool excluded_equal(char *const *entry, char *const argv[]);
