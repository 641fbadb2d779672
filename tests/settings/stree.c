/* SPDX-License-Identifier: Apache-2.0 */
#include "stree.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

char *stree_new(void) {
        char tmpl[] = "/var/tmp/cordon-settings-XXXXXX";
        assert_non_null(mkdtemp(tmpl));
        char *root = realpath(tmpl, NULL);
        assert_non_null(root);
        assert_int_equal(mkdir(stree_at(root, "ws"), 0755), 0);
        assert_int_equal(mkdir(stree_at(root, "home"), 0755), 0);
        return root;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        (void) st;
        (void) ftw;
        if (flag == FTW_DP)
                return rmdir(path) < 0 ? -1 : 0;
        return unlink(path) < 0 ? -1 : 0;
}

void stree_remove(char *root) {
        if (!root)
                return;
        (void) nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
        free(root);
}

const char *stree_at(const char *root, const char *rel) {
        static char bufs[8][PATH_MAX];
        static unsigned n;
        char *b = bufs[n++ % 8];
        snprintf(b, sizeof(bufs[0]), "%s/%s", root, rel);
        return b;
}

void stree_write(const char *root, const char *rel, const char *content, mode_t mode) {
        char p[PATH_MAX];
        snprintf(p, sizeof(p), "%s/%s", root, rel);
        for (char *s = p + strlen(root) + 1; *s; s++)
                if (*s == '/') {
                        *s = '\0';
                        assert_true(mkdir(p, 0755) == 0 || errno == EEXIST);
                        *s = '/';
                }
        int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        assert_true(fd >= 0);
        size_t n = strlen(content);
        assert_int_equal(write(fd, content, n), (ssize_t) n);
        assert_int_equal(fchmod(fd, mode), 0);
        close(fd);
}
