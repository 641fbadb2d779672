/* SPDX-License-Identifier: Apache-2.0 */
/* excludedCommands matching (see excluded.h). */
#include "settings/excluded.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

const char *excluded_refusal_to_string(excluded_refusal r) {
        static const char *const s[_EXCLUDED_REFUSAL_MAX] = {
                [EXCLUDED_OK] = "is eligible",
                [EXCLUDED_EMPTY] = "is empty",
                [EXCLUDED_REDIRECTION] = "contains a redirection ('<' or '>')",
                [EXCLUDED_CD] = "contains 'cd'",
                [EXCLUDED_SUBSTITUTION] = "contains a command substitution ('$(')",
                [EXCLUDED_BACKTICK] = "contains a backtick",
                [EXCLUDED_SEMICOLON] = "contains ';'",
                [EXCLUDED_AND] = "contains '&&'",
                [EXCLUDED_OR] = "contains '||'",
                [EXCLUDED_PIPE] = "contains a pipe ('|')",
                [EXCLUDED_BACKGROUND] = "contains '&'",
                [EXCLUDED_NEWLINE] = "contains a newline",
                [EXCLUDED_CONTROL] = "contains a control character",
                [EXCLUDED_RUNNER] = "runs another command (a shell or command runner such as "
                                    "sh -c, env, sudo or xargs)",
                [EXCLUDED_SHELL_SYNTAX] = "contains shell syntax (quotes, '\\', '$', globs, "
                                          "braces, '#', '~' or an assignment)",
                [EXCLUDED_TOO_LONG] = "is too long",
        };
        return (unsigned) r < _EXCLUDED_REFUSAL_MAX ? s[r] : "is refused";
}

/* Programs whose job is to run another command (or code given in their arguments): an excluded
 * "env X", "sudo X", "sh -c X" or "xargs X" would run X unsandboxed, and X is not what the entry's
 * author reviewed. Compared with the basename of the first word. */
static const char *const runners[] = {
        "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish", "csh", "tcsh", "busybox",
        "env", "sudo", "doas", "su", "runuser", "pkexec", "xargs", "exec", "eval", "command",
        "builtin", "nohup", "timeout", "nice", "ionice", "time", "stdbuf", "setsid", "chroot",
        "unshare", "nsenter", "flock", "watch", "script", "strace", "ltrace", "gdb", "parallel",
        "systemd-run", "cordon", NULL,
};

static bool is_runner(const char *word) {
        const char *base = strrchr(word, '/');
        base = base ? base + 1 : word;
        for (size_t i = 0; runners[i]; i++)
                if (strcmp(base, runners[i]) == 0)
                        return true;
        return false;
}

/* The operators a shell would act on, in any word (an argv word is never interpreted, but a
 * command that hands its arguments to a shell would act on them; refusing costs nothing). */
static excluded_refusal check_word(const char *w) {
        if (strcmp(w, "cd") == 0)
                return EXCLUDED_CD;
        for (const char *c = w; *c; c++) {
                switch (*c) {
                case '\n':
                case '\r':
                        return EXCLUDED_NEWLINE;
                case '<':
                case '>':
                        return EXCLUDED_REDIRECTION;
                case '`':
                        return EXCLUDED_BACKTICK;
                case ';':
                        return EXCLUDED_SEMICOLON;
                case '$':
                        if (c[1] == '(')
                                return EXCLUDED_SUBSTITUTION;
                        break;
                case '&':
                        return c[1] == '&' ? EXCLUDED_AND : EXCLUDED_BACKGROUND;
                case '|':
                        return c[1] == '|' ? EXCLUDED_OR : EXCLUDED_PIPE;
                default:
                        /* A tab separates words in a line; inside a word it is harmless. */
                        if (((unsigned char) *c < 0x20 && *c != '\t') || *c == 0x7f)
                                return EXCLUDED_CONTROL;
                        break;
                }
        }
        return EXCLUDED_OK;
}

excluded_refusal excluded_check_argv(char *const argv[]) {
        if (!argv || !argv[0] || !argv[0][0])
                return EXCLUDED_EMPTY;
        size_t bytes = 0, n = 0;
        for (; argv[n]; n++) {
                bytes += strlen(argv[n]) + 1;
                if (n >= EXCLUDED_MAX_WORDS || bytes > EXCLUDED_MAX_BYTES)
                        return EXCLUDED_TOO_LONG;
                excluded_refusal r = check_word(argv[n]);
                if (r != EXCLUDED_OK)
                        return r;
        }
        /* A shell anywhere (`git -c core.pager=x`, `docker exec c sh -c ...` aside) is checked
         * only in first position: that is where it would run the rest of the line. */
        return is_runner(argv[0]) ? EXCLUDED_RUNNER : EXCLUDED_OK;
}

/* Characters that mean something to a shell beyond the operators check_word refuses: in a
 * string they would make the words differ from what a shell passes to the program. */
static bool has_shell_syntax(const char *w, bool first) {
        if (strpbrk(w, "\"'\\$*?[]{}()#!~"))
                return true;
        /* "FOO=bar make": an assignment prefix changes the environment, not the program. */
        return first && strchr(w, '=');
}

void excluded_words_free(char **words) {
        for (char **w = words; w && *w; w++)
                free(*w);
        free(words);
}

static int split_words(const char *line, char ***ret) {
        char **v = calloc(EXCLUDED_MAX_WORDS + 1, sizeof(char *));
        if (!v)
                return -ENOMEM;
        size_t n = 0;
        for (const char *p = line; *p;) {
                p += strspn(p, " \t");
                size_t len = strcspn(p, " \t");
                if (len == 0)
                        break;
                if (n == EXCLUDED_MAX_WORDS) {
                        excluded_words_free(v);
                        return -E2BIG;
                }
                if (!(v[n++] = strndup(p, len))) {
                        excluded_words_free(v);
                        return -ENOMEM;
                }
                p += len;
        }
        *ret = v;
        return (int) n;
}

int excluded_split(const char *line, char ***ret, excluded_refusal *ret_why) {
        *ret = NULL;
        if (strnlen(line, EXCLUDED_MAX_BYTES + 1) > EXCLUDED_MAX_BYTES) {
                *ret_why = EXCLUDED_TOO_LONG;
                return 0;
        }
        /* Newlines and operators first, over the whole line: a word split would hide none of
         * them, but "a\nb" must read as a newline, not as two words. */
        excluded_refusal why = check_word(line);
        char **words = NULL;
        int n = why == EXCLUDED_OK ? split_words(line, &words) : 0;
        if (n == -ENOMEM)
                return n;
        if (n == -E2BIG)
                why = EXCLUDED_TOO_LONG;
        else if (why == EXCLUDED_OK && n == 0)
                why = EXCLUDED_EMPTY;
        for (int i = 0; why == EXCLUDED_OK && i < n; i++)
                if (has_shell_syntax(words[i], i == 0))
                        why = EXCLUDED_SHELL_SYNTAX;
        if (why == EXCLUDED_OK)
                why = excluded_check_argv(words);
        *ret_why = why;
        if (why != EXCLUDED_OK) {
                excluded_words_free(words);
                return 0;
        }
        *ret = words;
        return 0;
}

bool excluded_equal(char *const *entry, char *const argv[]) {
        size_t i = 0;
        for (; entry[i] && argv[i]; i++)
                if (strcmp(entry[i], argv[i]) != 0)
                        return false;
        return !entry[i] && !argv[i];
}
