/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target for the command policy's shell-line splitter (src/policy/cmdline.c), which reads
 * the `sh -c` strings an agent hands cordon. Input: a line (a NUL ends it). Promises checked:
 *  - splitting terminates, never reads past the line, and stays within CMDLINE_MAX_WORDS;
 *  - no word is empty unless it came from quotes, and no word holds a NUL;
 *  - the split is deterministic: the same line gives the same commands;
 *  - splitting is monotone under a prefix: for a line of plain words (letters, digits, spaces),
 *    it is one command with at most those words (none of them `eval`, whose words are split
 *    again into the commands they run); and "X; Y" holds X's commands then Y's
 *    (separators never join commands), checked for X and Y the two halves of the input at its
 *    first newline when neither half contains a quote, backslash, substitution or '#';
 *  - a `sh -c` of a line finds every command the line itself has.
 * Built two ways, like the other targets: with libFuzzer (-DCORDON_LIBFUZZER), and as a plain
 * program replaying fuzz/corpus/cmdline in the unit suite ("unreadable-*" seeds must be
 * unreadable, "readable-*" seeds must not). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/cmdline.h"

#include "replay.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) FUZZ_CHECK("fuzz-cmdline", c)

static bool same_word(const cmd_word *a, const cmd_word *b) {
        return a->dynamic == b->dynamic && strcmp(a->text, b->text) == 0;
}

static bool same_command(const cmd_simple *a, const cmd_simple *b) {
        if (a->n != b->n)
                return false;
        for (size_t i = 0; i < a->n; i++)
                if (!same_word(&a->w[i], &b->w[i]))
                        return false;
        return true;
}

static void split(const char *line, cmd_list *l) {
        *l = (cmd_list) { 0 };
        CHECK(cmdline_split_line(line, l) == 0); /* only ENOMEM fails */
        CHECK(l->words <= CMDLINE_MAX_WORDS);
}

/* `inner`'s commands appear in `outer`, in order, as a contiguous run. */
static bool contains_run(const cmd_list *outer, const cmd_list *inner) {
        if (inner->n == 0)
                return true;
        for (size_t s = 0; s + inner->n <= outer->n; s++) {
                size_t k = 0;
                while (k < inner->n && same_command(&outer->v[s + k], &inner->v[k]))
                        k++;
                if (k == inner->n)
                        return true;
        }
        return false;
}

static bool plain(const char *s) {
        return strpbrk(s, "'\"\\`$#") == NULL;
}

static void check_halves(const char *line, const cmd_list *whole) {
        const char *nl = strchr(line, '\n');
        if (!nl || whole->unreadable || !plain(line))
                return;
        char *x = strndup(line, (size_t) (nl - line));
        CHECK(x != NULL);
        cmd_list a, b;
        split(x, &a);
        split(nl + 1, &b);
        if (!a.unreadable && !b.unreadable && a.words + b.words < CMDLINE_MAX_WORDS) {
                CHECK(a.n + b.n == whole->n);
                for (size_t i = 0; i < a.n; i++)
                        CHECK(same_command(&a.v[i], &whole->v[i]));
                for (size_t i = 0; i < b.n; i++)
                        CHECK(same_command(&b.v[i], &whole->v[a.n + i]));
        }
        cmd_list_done(&a);
        cmd_list_done(&b);
        free(x);
}

static void check_plain_words(const char *line, const cmd_list *l) {
        if (strspn(line, "abcdefghijklmnopqrstuvwxyz0123456789 ") != strlen(line))
                return;
        size_t words = 0;
        for (const char *c = line; *c;) {
                c += strspn(c, " ");
                size_t n = strcspn(c, " ");
                if (n == 4 && strncmp(c, "eval", 4) == 0)
                        return; /* "eval git push": git push, and the eval itself */
                if (n > 0)
                        words++;
                c += n;
        }
        if (words == 0) {
                CHECK(l->n == 0);
                return;
        }
        /* Keywords and runners are looked through: only the count of words can shrink. */
        CHECK(l->n <= 1 && !l->unreadable);
        CHECK(l->n == 0 || l->v[0].n <= words);
}

static void check_sh_c(const char *line, const cmd_list *l) {
        char *argv[] = { (char *) "sh", (char *) "-c", (char *) line, NULL };
        cmd_list n = { 0 };
        CHECK(cmdline_split_argv(argv, &n) == 0);
        if (!l->unreadable && !n.unreadable && l->words * 2 < CMDLINE_MAX_WORDS)
                CHECK(contains_run(&n, l));
        cmd_list_done(&n);
}

static bool run(const char *line) {
        cmd_list a, b;
        split(line, &a);
        split(line, &b);
        CHECK(a.n == b.n && a.unreadable == b.unreadable);
        for (size_t i = 0; i < a.n; i++) {
                CHECK(same_command(&a.v[i], &b.v[i]));
                CHECK(a.v[i].n > 0);
        }
        check_plain_words(line, &a);
        check_halves(line, &a);
        check_sh_c(line, &a);
        bool unreadable = a.unreadable;
        cmd_list_done(&a);
        cmd_list_done(&b);
        return unreadable;
}

static char *terminated(const uint8_t *data, size_t size) {
        const uint8_t *nul = memchr(data, '\0', size);
        size_t n = nul ? (size_t) (nul - data) : size;
        char *s = malloc(n + 1);
        CHECK(s != NULL);
        memcpy(s, data, n);
        s[n] = '\0';
        return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (size > CMDLINE_MAX_BYTES)
                return 0;
        char *line = terminated(data, size);
        (void) run(line);
        free(line);
        return 0;
}

bool fuzz_replay_seed(const char *name, const uint8_t *data, size_t size) {
        char *line = terminated(data, size);
        bool unreadable = run(line);
        free(line);
        if (strncmp(name, "unreadable-", 11) == 0 && !unreadable)
                return fprintf(stderr, "%s: expected unreadable\n", name), false;
        if (strncmp(name, "readable-", 9) == 0 && unreadable)
                return fprintf(stderr, "%s: expected readable\n", name), false;
        return true;
}
