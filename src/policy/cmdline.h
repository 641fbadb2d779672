/* SPDX-License-Identifier: Apache-2.0 */
/* The command policy's view of a command line (docs/policy.md, "Command policy"): the simple
 * commands a shell line would run, each as its words, so that `git push` is found in
 * `sh -c 'make && git push origin'`. A convenience, not a security boundary: it reads the line
 * the way a shell would in the common cases and errs towards finding a match —
 *   - `;`, `&`, `&&`, `|`, `||`, newlines, `(`, `)`, `{`, `}`, `!` separate commands, and so do
 *     `$(`, `` ` `` and the `)` that ends a substitution, whose contents are commands of their own;
 *   - redirections (`>`, `2>>`, `<`, `&>`, `<<`, ...) and their targets are dropped, and leading
 *     assignments (`X=1 git push`);
 *   - quotes and backslashes are removed as a shell would; a word with `$`, a glob character or
 *     a substitution inside is "dynamic": it may be anything, so it matches every pattern word;
 *   - runners are looked through (`sudo`, `env A=1`, `nice -n 5`, `timeout 10`, `xargs`,
 *     `command`, `exec`, `nohup`, `time`, `stdbuf`), and `sh -c STRING` / `bash -c STRING` /
 *     `eval WORDS` are split again (a few levels deep);
 *   - a line that cannot be read (an unclosed quote or substitution, too deep, too long) is
 *     "unreadable": the caller refuses it when a rule could apply.
 * Pure: string work only. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#define CMDLINE_MAX_BYTES 65536
#define CMDLINE_MAX_WORDS 4096 /* words over every command of a line */
#define CMDLINE_MAX_DEPTH 4    /* sh -c inside sh -c ... */

typedef struct cmd_word {
        char *text;
        bool dynamic; /* its value is decided when the shell runs: matches any pattern word */
} cmd_word;

typedef struct cmd_simple {
        cmd_word *w;
        size_t n;
} cmd_simple;

typedef struct cmd_list {
        cmd_simple *v;
        size_t n;
        size_t words;    /* over every command, for the bound */
        bool unreadable; /* see above: set, and the list may hold only part of the line */
} cmd_list;

/* Appends the commands of the shell line `line` to `out`. -ENOMEM only; a line that cannot be
 * read sets out->unreadable. */
int cmdline_split_line(const char *line, cmd_list *out);
/* Appends the command an argument vector runs (and, for a shell's -c, the commands in it). */
int cmdline_split_argv(char *const argv[], cmd_list *out);
void cmd_list_done(cmd_list *l);

/* Whether the command `c` begins with the words of `pattern` (NULL-terminated): the first word
 * compared by its basename (/usr/bin/git is git), a dynamic word matching anything. */
bool cmdline_matches(const cmd_simple *c, char *const *pattern);
