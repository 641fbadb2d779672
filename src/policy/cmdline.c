/* SPDX-License-Identifier: Apache-2.0 */
/* A shell line as the simple commands it would run (cmdline.h). */
#include "policy/cmdline.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

typedef struct lexer {
        const char *s;
        size_t i, len;
        cmd_list *out;
        int depth;      /* sh -c nesting */
        char *buf;      /* the word being read */
        size_t blen, bcap;
        bool in_word, dynamic;
        bool redirect;  /* the next word is a redirection's target: dropped */
        cmd_simple cur; /* the command being read */
} lexer;

static int finish_command(cmd_list *out, cmd_simple *c, int depth);

/* ---- the list ------------------------------------------------------------------------------- */

static void simple_done(cmd_simple *c) {
        for (size_t i = 0; i < c->n; i++)
                free(c->w[i].text);
        free(c->w);
        *c = (cmd_simple) { 0 };
}

void cmd_list_done(cmd_list *l) {
        for (size_t i = 0; i < l->n; i++)
                simple_done(&l->v[i]);
        free(l->v);
        *l = (cmd_list) { 0 };
}

static int push_word(cmd_list *out, cmd_simple *c, const char *text, size_t len, bool dynamic) {
        if (out->words >= CMDLINE_MAX_WORDS) {
                out->unreadable = true;
                return 0;
        }
        /* Not strndup: the lexer's buffer has no terminating NUL to stop at. */
        char *t = malloc(len + 1);
        if (t) {
                memcpy(t, text, len);
                t[len] = '\0';
        }
        cmd_word *n = t ? realloc(c->w, (c->n + 1) * sizeof(*n)) : NULL;
        if (!n) {
                free(t);
                return -ENOMEM;
        }
        c->w = n;
        c->w[c->n++] = (cmd_word) { t, dynamic };
        out->words++;
        return 0;
}

static int push_command(cmd_list *out, cmd_simple *c) {
        cmd_simple *n = realloc(out->v, (out->n + 1) * sizeof(*n));
        if (!n)
                return -ENOMEM;
        out->v = n;
        out->v[out->n++] = *c;
        *c = (cmd_simple) { 0 };
        return 0;
}

/* ---- what a command really runs ------------------------------------------------------------ */

static const char *base(const char *w) {
        const char *s = strrchr(w, '/');
        return s ? s + 1 : w;
}

static bool in_list(const char *w, const char *const *list) {
        for (size_t i = 0; list[i]; i++)
                if (strcmp(w, list[i]) == 0)
                        return true;
        return false;
}

/* Shell keywords that may come before a command (`if git push; then`, `! make`, `{ ...; }`). */
static const char *const keywords[] = {
        "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "{", "}", "!", "(",
        ")", "time", "coproc", NULL,
};
/* Programs that run the command in their arguments. */
static const char *const runners[] = {
        "sudo", "doas", "env", "nice", "ionice", "nohup", "time", "timeout", "xargs", "command",
        "exec", "builtin", "stdbuf", "setsid", "chrt", "taskset", "flock", "unbuffer", NULL,
};
static const char *const shells[] = {
        "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "busybox", NULL,
};

/* NAME=value (a shell assignment before the command, or env's). */
static bool is_assignment(const cmd_word *w) {
        const char *eq = strchr(w->text, '=');
        if (!eq || eq == w->text)
                return false;
        for (const char *c = w->text; c < eq; c++)
                if (!(*c == '_' || (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                      (c > w->text && *c >= '0' && *c <= '9')))
                        return false;
        return true;
}

/* An option or a runner's value (`-n`, `--preserve-env`, `5`, `10s`, `0x3`): skipped after a
 * runner, so `nice -n 5 git push` is `git push`. */
static bool is_runner_arg(const char *w) {
        if (w[0] == '-')
                return true;
        size_t digits = strspn(w, "0123456789.x");
        return digits > 0 && (w[digits] == '\0' || (strchr("smhd", w[digits]) && !w[digits + 1]));
}

static void drop_front(cmd_simple *c, size_t k) {
        for (size_t i = 0; i < k; i++)
                free(c->w[i].text);
        memmove(c->w, c->w + k, (c->n - k) * sizeof(*c->w));
        c->n -= k;
}

/* Removes what comes before the command proper: keywords, assignments, runners and their
 * options. */
static void strip_front(cmd_simple *c) {
        for (bool again = true; again && c->n > 0;) {
                again = false;
                const cmd_word *w = &c->w[0];
                if (!w->dynamic && (in_list(w->text, keywords) || is_assignment(w))) {
                        drop_front(c, 1);
                        again = true;
                } else if (!w->dynamic && in_list(base(w->text), runners)) {
                        size_t k = 1;
                        while (k < c->n && (is_runner_arg(c->w[k].text) || is_assignment(&c->w[k])))
                                k++;
                        drop_front(c, k);
                        again = true;
                }
        }
}

static char *join(const cmd_simple *c, size_t from) {
        size_t len = 1;
        for (size_t i = from; i < c->n; i++)
                len += strlen(c->w[i].text) + 1;
        char *s = malloc(len);
        if (!s)
                return NULL;
        s[0] = '\0';
        for (size_t i = from; i < c->n; i++) {
                strcat(s, c->w[i].text);
                strcat(s, " ");
        }
        return s;
}

static int cmdline_split_line_at(const char *line, cmd_list *out, int depth);

/* `sh -c STRING` (also `-ec`, `-lc`, a dynamic first word that could be a shell) and `eval
 * WORDS`: what they run is split again, one level deeper. */
static int split_nested(cmd_list *out, const cmd_simple *c, int depth) {
        const cmd_word *w = &c->w[0];
        if (!w->dynamic && strcmp(base(w->text), "eval") == 0) {
                _cleanup_free_ char *s = join(c, 1);
                return s ? cmdline_split_line_at(s, out, depth + 1) : -ENOMEM;
        }
        if (!w->dynamic && !in_list(base(w->text), shells))
                return 0;
        for (size_t i = 1; i + 1 < c->n && c->w[i].text[0] == '-'; i++)
                if (strchr(c->w[i].text, 'c') && c->w[i].text[1] != '-')
                        return cmdline_split_line_at(c->w[i + 1].text, out, depth + 1);
        return 0;
}

static int finish_command(cmd_list *out, cmd_simple *c, int depth) {
        strip_front(c);
        if (c->n == 0) {
                simple_done(c);
                return 0;
        }
        int r = split_nested(out, c, depth);
        if (r < 0) {
                simple_done(c);
                return r;
        }
        if ((r = push_command(out, c)) < 0)
                simple_done(c);
        return r;
}

/* ---- the lexer ------------------------------------------------------------------------------ */

static int put(lexer *lx, char ch) {
        if (lx->blen + 1 >= lx->bcap) {
                size_t cap = lx->bcap ? 2 * lx->bcap : 64;
                char *n = realloc(lx->buf, cap);
                if (!n)
                        return -ENOMEM;
                lx->buf = n;
                lx->bcap = cap;
        }
        lx->buf[lx->blen++] = ch;
        lx->in_word = true;
        return 0;
}

static int end_word(lexer *lx) {
        int r = 0;
        if (lx->in_word && lx->redirect)
                lx->redirect = false; /* the target of `> file`: not a word of the command */
        else if (lx->in_word)
                r = push_word(lx->out, &lx->cur, lx->buf ? lx->buf : "", lx->blen, lx->dynamic);
        lx->blen = 0;
        lx->in_word = lx->dynamic = false;
        return r;
}

static int end_command(lexer *lx) {
        int r = end_word(lx);
        lx->redirect = false;
        return r < 0 ? r : finish_command(lx->out, &lx->cur, lx->depth);
}

static int lex(lexer *lx, char closing);

/* `$(...)` or `...`: its commands are commands of their own; the word holding it is dynamic. */
static int substitution(lexer *lx, char closing) {
        lexer sub = { .s = lx->s, .i = lx->i, .len = lx->len, .out = lx->out,
                      .depth = lx->depth };
        int r = lex(&sub, closing);
        if (r >= 0)
                r = end_command(&sub);
        free(sub.buf);
        simple_done(&sub.cur);
        lx->i = sub.i;
        lx->in_word = lx->dynamic = true;
        return r;
}

static int single_quoted(lexer *lx) {
        const char *end = memchr(lx->s + lx->i, '\'', lx->len - lx->i);
        if (!end) {
                lx->out->unreadable = true;
                lx->i = lx->len;
                return 0;
        }
        for (; lx->s + lx->i < end; lx->i++)
                if (put(lx, lx->s[lx->i]) < 0)
                        return -ENOMEM;
        lx->i++;
        lx->in_word = true;
        return 0;
}

static int double_quoted(lexer *lx) {
        lx->in_word = true;
        while (lx->i < lx->len) {
                char ch = lx->s[lx->i++];
                int r = 0;
                if (ch == '"')
                        return 0;
                if (ch == '\\' && lx->i < lx->len && strchr("$`\"\\\n", lx->s[lx->i]))
                        r = put(lx, lx->s[lx->i++]);
                else if (ch == '$' && lx->i < lx->len && lx->s[lx->i] == '(') {
                        lx->i++;
                        r = substitution(lx, ')');
                } else if (ch == '`')
                        r = substitution(lx, '`');
                else {
                        if (ch == '$')
                                lx->dynamic = true;
                        r = put(lx, ch);
                }
                if (r < 0)
                        return r;
        }
        lx->out->unreadable = true; /* no closing quote */
        return 0;
}

/* `>`, `>>`, `2>&1`, `&>`, `<`, `<<`, `<<<`, `>|`: a word of digits before it is its fd. */
static int redirection(lexer *lx) {
        bool fd = lx->in_word && !lx->dynamic && lx->blen > 0;
        for (size_t k = 0; fd && k < lx->blen; k++) /* the buffer holds no terminator */
                fd = lx->buf[k] >= '0' && lx->buf[k] <= '9';
        if (fd)
                lx->blen = 0, lx->in_word = false;
        int r = end_word(lx);
        while (lx->i < lx->len && strchr("<>&|", lx->s[lx->i]))
                lx->i++;
        lx->redirect = true;
        return r;
}

/* One character outside quotes; returns 1 when `closing` ends this lexer. */
static int lex_char(lexer *lx, char ch, char closing, int *parens) {
        switch (ch) {
        case ' ': case '\t':
                return end_word(lx);
        case '\n': case ';': case '|':
                return end_command(lx);
        case '&':
                if (lx->i < lx->len && lx->s[lx->i] == '>')
                        return redirection(lx);
                return end_command(lx);
        case '<': case '>':
                lx->i--;
                return redirection(lx);
        case '(':
                ++*parens;
                return end_command(lx);
        case ')':
                if (closing == ')' && *parens == 0)
                        return 1;
                --*parens;
                return end_command(lx);
        case '`':
                return closing == '`' ? 1 : substitution(lx, '`');
        case '\'':
                return single_quoted(lx);
        case '"':
                return double_quoted(lx);
        case '\\':
                if (lx->i < lx->len && lx->s[lx->i] == '\n')
                        return lx->i++, 0; /* a continued line */
                return lx->i < lx->len ? put(lx, lx->s[lx->i++]) : 0;
        case '#':
                if (lx->in_word)
                        return put(lx, ch);
                while (lx->i < lx->len && lx->s[lx->i] != '\n')
                        lx->i++;
                return 0;
        case '$':
                if (lx->i < lx->len && lx->s[lx->i] == '(')
                        return lx->i++, substitution(lx, ')');
                lx->dynamic = true;
                return put(lx, ch);
        case '*': case '?': case '[': case '~':
                lx->dynamic = true;
                return put(lx, ch);
        default:
                return put(lx, ch);
        }
}

static int lex(lexer *lx, char closing) {
        int parens = 0;
        while (lx->i < lx->len) {
                int r = lex_char(lx, lx->s[lx->i++], closing, &parens);
                if (r != 0)
                        return r < 0 ? r : 0;
        }
        if (closing)
                lx->out->unreadable = true; /* an unclosed substitution */
        return 0;
}

static int cmdline_split_line_at(const char *line, cmd_list *out, int depth) {
        size_t len = strlen(line);
        if (depth > CMDLINE_MAX_DEPTH || len > CMDLINE_MAX_BYTES) {
                out->unreadable = true;
                return 0;
        }
        lexer lx = { .s = line, .len = len, .out = out, .depth = depth };
        int r = lex(&lx, '\0');
        if (r >= 0)
                r = end_command(&lx);
        free(lx.buf);
        simple_done(&lx.cur);
        return r;
}

int cmdline_split_line(const char *line, cmd_list *out) {
        return cmdline_split_line_at(line, out, 0);
}

int cmdline_split_argv(char *const argv[], cmd_list *out) {
        cmd_simple c = { 0 };
        for (size_t i = 0; argv && argv[i]; i++) {
                int r = push_word(out, &c, argv[i], strlen(argv[i]), false);
                if (r < 0) {
                        simple_done(&c);
                        return r;
                }
        }
        return finish_command(out, &c, 0);
}

bool cmdline_matches(const cmd_simple *c, char *const *pattern) {
        size_t n = 0;
        while (pattern[n])
                n++;
        if (n == 0 || c->n < n)
                return false;
        for (size_t i = 0; i < n; i++) {
                const cmd_word *w = &c->w[i];
                if (!w->dynamic && strcmp(i == 0 ? base(w->text) : w->text, pattern[i]) != 0)
                        return false;
        }
        return true;
}
