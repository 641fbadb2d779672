/* SPDX-License-Identifier: Apache-2.0 */
/* The landlock backend's per-run directories and their removal (run-dirs.h). */
#include "linux/run-dirs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "util/util.h"

#define RUN_DIR_MAX_DEPTH 256

static void remove_children(int dfd, unsigned depth) {
        DIR *d = fdopendir(dfd);
        if (!d) {
                (void) close(dfd);
                return;
        }
        for (struct dirent *de; (de = readdir(d));) {
                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                if (unlinkat(dirfd(d), de->d_name, 0) == 0 || errno != EISDIR)
                        continue;
                int sub = openat(dirfd(d), de->d_name,
                                 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (sub >= 0 && depth < RUN_DIR_MAX_DEPTH)
                        remove_children(sub, depth + 1);
                else if (sub >= 0)
                        (void) close(sub);
                (void) unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR); /* may fail: left behind */
        }
        (void) closedir(d);
}

void run_dir_remove(const char *path) {
        int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd >= 0)
                remove_children(fd, 0);
        (void) rmdir(path);
}

/* The directories to remove, in the after-run process's copy of the launcher's memory. */
typedef struct run_dirs {
        const char *const *paths;
        size_t n;
} run_dirs;

static int remove_run_dirs(void *arg) {
        const run_dirs *d = arg;
        for (size_t i = 0; i < d->n; i++)
                if (d->paths[i])
                        run_dir_remove(d->paths[i]);
        return 0;
}

int run_dirs_reaper_start(const char *const *paths, size_t n, after_run *out) {
        *out = (after_run) AFTER_RUN_INIT;
        if (n > RUN_DIRS_MAX)
                return -E2BIG;
        run_dirs d = { .paths = paths, .n = n };
        return after_run_start("cordon-reaper", remove_run_dirs, &d, out);
}
