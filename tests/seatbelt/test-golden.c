/* SPDX-License-Identifier: Apache-2.0 */
/* Golden files: for each policy in tests/seatbelt/cases/NAME.json the generated profile must equal
 * tests/seatbelt/golden/NAME.sb byte for byte, after the tree's random directory name is
 * replaced by "ws" (in plain and in regex form). Each profile is also read back and validated
 * (sbpl-eval.h) before it is compared, so a golden file cannot pin a broken profile.
 *
 * After an intended change, regenerate and review the diff:
 *     CORDON_UPDATE_GOLDEN=1 meson test -C BUILD seatbelt-golden
 *     git diff tests/seatbelt/golden/ */
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <unistd.h>

#include <cmocka.h>

#include "sb-harness.h"
#include "sbpl-eval.h"
#include "seatbelt/sbpl-escape.h"

static char *T;

typedef struct golden_case {
        const char *name;
        uint16_t proxy_port;
        const char *tmpdir; /* "@T@" is the tree */
} golden_case;

static const golden_case cases[] = {
        { "workspace-write", 0, NULL },
        { "read-only", 0, NULL },
        { "fields", 41000, "@T@/tmp/run-1" },
        { "symlinks", 0, "/var/folders/zz/abc/T/cordon-run" },
        { "network-on", 41000, NULL },
        { "network-on-no-proxy", 0, NULL },
        { "hostile", 0, NULL },
        { "worktree", 0, NULL },
        { "deep-read-only", 0, NULL },
        { "glob-ancestor", 0, NULL },
};

static char *read_text(const char *path) {
        char *buf = NULL;
        return read_file_at(AT_FDCWD, path, 1 << 22, 0, &buf, NULL) < 0 ? NULL : buf;
}

static void write_text(const char *path, const char *text) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        assert_true(fd >= 0);
        assert_int_equal(write_all(fd, text, strlen(text)), (ssize_t) strlen(text));
        close(fd);
}

static const char *source_path(const char *dir, const char *name, const char *ext) {
        static char buf[PATH_MAX];
        const char *src = getenv("CORDON_SOURCE_DIR");
        snprintf(buf, sizeof(buf), "%s/tests/seatbelt/%s/%s%s", src ? src : ".", dir, name, ext);
        return buf;
}

/* The tree's name, "/tmp/cordon-sb-XXXXXX", becomes "/tmp/ws" in every spelling. */
static char *normalize(const char *profile) {
        char *tree_re = NULL, *ws_re = NULL;
        assert_int_equal(sbpl_glob_regex_body(T, &tree_re), 0);
        assert_int_equal(sbpl_glob_regex_body("/tmp/ws", &ws_re), 0);
        char *a = sbt_replace(profile, T, "/tmp/ws");
        char *b = sbt_replace(a, tree_re, ws_re);
        free(a);
        free(tree_re);
        free(ws_re);
        return b;
}

/* The first line where the two differ, with both sides. */
static void report_difference(const char *want, const char *got, const char *golden) {
        unsigned line = 1;
        const char *w = want, *g = got;
        while (*w && *w == *g) {
                if (*w == '\n')
                        line++;
                w++;
                g++;
        }
        const char *wl = w, *gl = g;
        while (wl > want && wl[-1] != '\n')
                wl--;
        while (gl > got && gl[-1] != '\n')
                gl--;
        print_message("%s differs at line %u:\n  want: %.*s\n  got:  %.*s\n"
                      "If the change is intended: CORDON_UPDATE_GOLDEN=1 meson test -C BUILD "
                      "seatbelt-golden, then review git diff tests/seatbelt/golden/\n",
                      golden, line, (int) strcspn(wl, "\n"), wl, (int) strcspn(gl, "\n"), gl);
}

static void validate(const char *name, const char *profile) {
        char err[512];
        sx *top = sbpl_parse(profile, err, sizeof(err));
        if (!top)
                fail_msg("%s: does not parse: %s", name, err);
        if (!sbpl_validate(top, err, sizeof(err)))
                fail_msg("%s: invalid: %s", name, err);
        sbpl_free(top);
}

static void run_case(void **state) {
        const golden_case *c = *state;
        _cleanup_free_ char *json = read_text(source_path("cases", c->name, ".json"));
        assert_non_null(json);
        _cleanup_free_ char *tmpdir = c->tmpdir ? sbt_replace(c->tmpdir, "@T@", T) : NULL;
        cordon_error err = { 0 };
        _cleanup_free_ char *profile = sbt_profile(T, json, c->proxy_port, tmpdir, &err);
        if (!profile)
                fail_msg("%s: %s: %s", c->name, cordon_code_name(err.code), err.message);
        validate(c->name, profile);
        /* Deterministic: the same inputs give the same bytes. */
        _cleanup_free_ char *again = sbt_profile(T, json, c->proxy_port, tmpdir, &err);
        assert_non_null(again);
        assert_string_equal(profile, again);

        _cleanup_free_ char *got = normalize(profile);
        const char *golden = source_path("golden", c->name, ".sb");
        const char *update = getenv("CORDON_UPDATE_GOLDEN");
        if (update && strcmp(update, "1") == 0) {
                write_text(golden, got);
                print_message("wrote %s\n", golden);
                return;
        }
        _cleanup_free_ char *want = read_text(golden);
        if (!want)
                fail_msg("%s is missing; create it with CORDON_UPDATE_GOLDEN=1", golden);
        if (strcmp(want, got) != 0) {
                report_difference(want, got, golden);
                fail();
        }
}

static int setup(void **state) {
        T = sbt_tree();
        return 0;
}

static int teardown(void **state) {
        sbt_remove(T);
        T = NULL;
        return 0;
}

int main(void) {
        struct CMUnitTest tests[sizeof(cases) / sizeof(cases[0])];
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
                tests[i] = (struct CMUnitTest) { .name = cases[i].name, .test_func = run_case,
                                                 .initial_state = (void *) &cases[i] };
        return _cmocka_run_group_tests("seatbelt-golden", tests, sizeof(cases) / sizeof(cases[0]),
                                       setup, teardown);
}
