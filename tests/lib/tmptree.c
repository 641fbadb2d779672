/* SPDX-License-Identifier: Apache-2.0 */
#include "tmptree.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdbool.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

/* mkdtemp(TEMPLATE) made absolute without symlinks (realpath). */
static char *make_root(char *tmpl) {
        char *d = mkdtemp(tmpl);
        assert_non_null(d);
        char *r = realpath(d, NULL);
        assert_non_null(r);
        return r;
}

char *tmptree_new(void) {
        /* Never below /tmp: the sandbox gets a private /tmp, so the planner rightly drops
         * protective mounts there and the tests would check something else. */
        const char *base = getenv("CORDON_BUILD_DIR");
        if (!base || strncmp(base, "/tmp/", 5) == 0 || strcmp(base, "/tmp") == 0)
                base = "/var/tmp";
        char tmpl[PATH_MAX];
        snprintf(tmpl, sizeof(tmpl), "%s/cordon-test-XXXXXX", base);
        return make_root(tmpl);
}

char *tmptree_new_workspace(const char *name) {
        char tmpl[PATH_MAX];
        snprintf(tmpl, sizeof(tmpl), "/var/tmp/cordon-%s-XXXXXX", name);
        char *root = make_root(tmpl);
        assert_int_equal(mkdir(tmptree_at(root, "ws"), 0755), 0);
        assert_int_equal(mkdir(tmptree_at(root, "home"), 0755), 0);
        return root;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        (void) st;
        (void) ftw;
        if (flag == FTW_DP)
                return rmdir(path) < 0 ? -1 : 0;
        return unlink(path) < 0 ? -1 : 0;
}

void tmptree_rm_rf(const char *path) {
        (void) nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

void tmptree_remove(char *root) {
        if (!root)
                return;
        tmptree_rm_rf(root);
        free(root);
}

const char *tmptree_path(const char *root, const char *rel) {
        static char buf[PATH_MAX];
        snprintf(buf, sizeof(buf), "%s/%s", root, rel);
        return buf;
}

const char *tmptree_at(const char *root, const char *rel) {
        static char bufs[8][PATH_MAX];
        static unsigned n;
        char *b = bufs[n++ % 8];
        snprintf(b, sizeof(bufs[0]), "%s/%s", root, rel);
        return b;
}

/* mkdir -p of p's components after root's (those of root itself exist); the last one too when
 * `last`. */
static void make_parents(const char *root, char *p, bool last) {
        for (char *s = p + strlen(root) + 1; *s; s++)
                if (*s == '/') {
                        *s = '\0';
                        assert_true(mkdir(p, 0755) == 0 || errno == EEXIST);
                        *s = '/';
                }
        if (last)
                assert_true(mkdir(p, 0755) == 0 || errno == EEXIST);
}

void tmptree_mkdir(const char *root, const char *rel) {
        char p[PATH_MAX];
        snprintf(p, sizeof(p), "%s/%s", root, rel);
        make_parents(root, p, true);
}

/* Writes content whole to an open fd. */
static void write_all(int fd, const char *content) {
        assert_true(fd >= 0);
        size_t n = strlen(content);
        assert_int_equal(write(fd, content, n), (ssize_t) n);
}

void tmptree_file(const char *root, const char *rel, const char *content) {
        const char *p = tmptree_path(root, rel);
        int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        write_all(fd, content);
        close(fd);
}

void tmptree_write(const char *root, const char *rel, const char *content, mode_t mode) {
        char p[PATH_MAX];
        snprintf(p, sizeof(p), "%s/%s", root, rel);
        make_parents(root, p, false);
        int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        write_all(fd, content);
        assert_int_equal(fchmod(fd, mode), 0);
        close(fd);
}

void tmptree_symlink(const char *root, const char *rel, const char *target) {
        assert_int_equal(symlink(target, tmptree_path(root, rel)), 0);
}
