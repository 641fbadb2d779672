/* SPDX-License-Identifier: Apache-2.0 */
/* The landlock backend's per-run directories and their reaper (run-dirs.h). */
#include "linux/run-dirs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "linux/process.h"
#include "util/fork-gate.h"
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

/* The reaper: out of the launcher's session (a Ctrl-C or a group kill of cordon's must not end
 * it before it has removed anything), holding no descriptor of the caller's (a capture pipe it
 * held would keep the caller's reader waiting), then waiting for end of file. */
static _noreturn_ void reaper_main(const char *const *paths, size_t n, int fd) {
        (void) setsid();
        (void) prctl(PR_SET_NAME, "cordon-reaper", 0, 0, 0);
        if (process_close_fds_keep(&fd, 1) < 0)
                _exit(1);
        int null = open("/dev/null", O_RDWR | O_CLOEXEC);
        for (int i = 0; null >= 0 && i < 3; i++)
                (void) dup2(null, i);
        if (chdir("/") < 0)
                _exit(1); /* cannot happen; the paths are absolute anyway */
        for (;;) {
                char c;
                ssize_t k = read(fd, &c, 1);
                if (k >= 0 || errno != EINTR)
                        break; /* the launcher's byte, or end of file: the run is over */
        }
        for (size_t i = 0; i < n; i++)
                if (paths[i])
                        run_dir_remove(paths[i]);
        _exit(0);
}

int run_dirs_reaper_start(const char *const *paths, size_t n, run_dirs_reaper *out) {
        *out = (run_dirs_reaper) RUN_DIRS_REAPER_INIT;
        if (n > RUN_DIRS_MAX)
                return -E2BIG;
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0)
                return -errno;
        pid_t pid = fork();
        if (pid == 0) {
                (void) close(p[1]);
                reaper_main(paths, n, p[0]);
        }
        int e = errno;
        (void) close(p[0]);
        if (pid < 0) {
                (void) close(p[1]);
                return -e;
        }
        *out = (run_dirs_reaper) { .pid = pid, .fd = p[1] };
        return 0;
}

void run_dirs_reaper_stop(run_dirs_reaper *r) {
        if (r->fd >= 0) {
                /* A byte, not only the close: a process forked meanwhile by another thread of a
                 * library caller (cordond) may still hold a copy of this end. If the byte cannot
                 * be written (it always can: the pipe is empty), the close still ends it once
                 * every copy is gone. */
                while (write(r->fd, "x", 1) < 0 && errno == EINTR)
                        ;
                (void) close(r->fd);
        }
        if (r->pid > 0) {
                unsigned gate = fork_gate_pause();
                while (waitpid(r->pid, NULL, 0) < 0 && errno == EINTR)
                        ;
                fork_gate_resume(gate);
        }
        *r = (run_dirs_reaper) RUN_DIRS_REAPER_INIT;
}
