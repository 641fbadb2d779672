/* SPDX-License-Identifier: Apache-2.0 */
/* The command under sandbox-exec (seatbelt-exec.h). Everything the child needs is built before
 * fork(): in a multi-threaded caller the child may only make async-signal-safe calls. */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "seatbelt/seatbelt-exec.h"

#define TMPDIR_MAX_DEPTH 256 /* deeper trees are left behind rather than recursed into */
#define CHILD_FD_MAX 65536   /* descriptors the child marks close-on-exec */

/* ---- the private temporary directory -------------------------------------------------------- */

int seatbelt_tmpdir_create(const char *base, char **ret) {
        if (!path_is_absolute(base))
                return -EINVAL;
        _cleanup_free_ char *tmpl = path_join(base, "cordon-XXXXXX");
        if (!tmpl)
                return -ENOMEM;
        if (!mkdtemp(tmpl)) /* mode 0700: other users cannot look in or plant files */
                return -errno;
        *ret = TAKE_PTR(tmpl);
        return 0;
}

static int remove_contents(int dfd, unsigned depth);

/* One entry of a directory being emptied: unlinked, or (a real directory, never a symlink to
 * one) emptied and removed. */
static int remove_entry(int dfd, const char *name, unsigned depth) {
        if (unlinkat(dfd, name, 0) == 0)
                return 0;
        if (errno != EISDIR && errno != EPERM) /* unlink(2) of a directory: EISDIR, or EPERM */
                return errno == ENOENT ? 0 : -errno;
        if (depth >= TMPDIR_MAX_DEPTH)
                return -ELOOP;
        int sub = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub < 0)
                return -errno; /* a symlink swapped in since: ELOOP/ENOTDIR, left alone */
        int r = remove_contents(sub, depth + 1); /* takes `sub` */
        if (unlinkat(dfd, name, AT_REMOVEDIR) < 0 && r >= 0)
                r = -errno;
        return r;
}

/* Empties the directory open at `dfd` and closes it. */
static int remove_contents(int dfd, unsigned depth) {
        DIR *d = fdopendir(dfd);
        if (!d) {
                int e = errno;
                (void) close(dfd);
                return -e;
        }
        int r = 0;
        struct dirent *de;
        while ((errno = 0, de = readdir(d))) {
                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                int q = remove_entry(dirfd(d), de->d_name, depth);
                if (q < 0 && r == 0)
                        r = q;
        }
        (void) closedir(d); /* closes dfd; nothing to report for a directory stream */
        return r;
}

int seatbelt_tmpdir_remove(const char *path) {
        int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? 0 : -errno;
        int r = remove_contents(fd, 0);
        if (rmdir(path) < 0 && r == 0)
                r = -errno;
        return r;
}

/* ---- the child ------------------------------------------------------------------------------ */

typedef struct child_report {
        int stage; /* 1: chdir, 2: exec */
        int err;
} child_report;

/* In the forked child: async-signal-safe calls only. Never returns. */
_noreturn_ static void child_main(const seatbelt_exec_params *x, char *const *args,
                                  char *const *candidates, int report_fd) {
        child_report rep = { 0, 0 };
        /* A new session: no controlling terminal to push keystrokes into (TIOCSTI), and one
         * process group to kill when the run ends. */
        (void) setsid();
        /* Only 0-2 reach the command: the caller's other descriptors (sockets to its own
         * server, files it has open) are not the command's business. */
        long max = sysconf(_SC_OPEN_MAX);
        for (int fd = 3; fd < (max > 0 && max < CHILD_FD_MAX ? max : CHILD_FD_MAX); fd++)
                if (fd != report_fd)
                        (void) fcntl(fd, F_SETFD, FD_CLOEXEC);
        if (x->workdir && chdir(x->workdir) < 0) {
                rep = (child_report) { 1, errno };
        } else {
                rep.stage = 2;
                for (size_t i = 0; candidates[i]; i++) {
                        (void) execve(candidates[i], args, x->envp);
                        /* Keep looking after ENOENT; remember why a found one failed. */
                        if (rep.err == 0 || errno != ENOENT)
                                rep.err = errno;
                }
        }
        (void) write_all(report_fd, &rep, sizeof(rep));
        _exit(127);
}

/* ---- what to execute ------------------------------------------------------------------------ */

/* sandbox-exec -p PROFILE -- ARGV..., or ARGV itself for an unconfined run. */
static char **build_args(const seatbelt_exec_params *x) {
        size_t n = 0;
        while (x->argv[n])
                n++;
        size_t extra = x->sandbox_exec ? 4 : 0;
        char **a = calloc(n + extra + 1, sizeof(char *));
        if (!a)
                return NULL;
        if (x->sandbox_exec) {
                a[0] = (char *) "sandbox-exec";
                a[1] = (char *) "-p";
                a[2] = (char *) x->profile;
                a[3] = (char *) "--"; /* a command named "-D..." is not an option */
        }
        for (size_t i = 0; i < n; i++)
                a[extra + i] = x->argv[i];
        return a;
}

/* The files to try: sandbox-exec itself, or argv[0] searched in the command's own PATH. */
static int build_candidates(const seatbelt_exec_params *x, strv *ret) {
        if (x->sandbox_exec)
                return strv_push(ret, x->sandbox_exec);
        const char *cmd = x->argv[0];
        if (strchr(cmd, '/'))
                return strv_push(ret, cmd);
        const char *path = env_get(x->envp, "PATH");
        _cleanup_free_ char *copy = strdup(path ? path : "/usr/bin:/bin");
        if (!copy)
                return -ENOMEM;
        int r = 0;
        for (char *save = NULL, *dir = strtok_r(copy, ":", &save); r >= 0 && dir;
             dir = strtok_r(NULL, ":", &save)) {
                _cleanup_free_ char *full = path_join(dir[0] ? dir : ".", cmd);
                r = full ? strv_push(ret, full) : -ENOMEM;
        }
        return r;
}

/* ---- waiting -------------------------------------------------------------------------------- */


static int wait_blocking(pid_t pid, int *status) {
        while (waitpid(pid, status, 0) < 0)
                if (errno != EINTR)
                        return -errno;
        return 0;
}

/* One pause of the wait loop: `step_us` asleep, or less when the watched descriptor has
 * something to read (then on_watch reads it). Returns whether it is still watched. */
static bool pause_or_watch(const seatbelt_exec_params *x, bool watching, long step_us) {
        if (!watching) {
                struct timespec ts = { 0, step_us * 1000 };
                (void) nanosleep(&ts, NULL);
                return false;
        }
        struct pollfd pfd = { .fd = x->watch_fd, .events = POLLIN };
        int n = poll(&pfd, 1, (int) (step_us / 1000));
        if (n > 0 && pfd.revents)
                return x->on_watch(x->watch_userdata);
        return !(n < 0 && errno != EINTR);
}

/* Waits at most timeout_ms (polling: portable, and no signal handler in a library), then kills
 * the process group; reads the watched descriptor meanwhile. */
static int wait_child(pid_t pid, const seatbelt_exec_params *x, seatbelt_exec_result *ret) {
        bool watching = x->on_watch != NULL;
        if (x->timeout_ms == 0 && !watching)
                return wait_blocking(pid, &ret->wait_status);
        uint64_t deadline = x->timeout_ms ? (uint64_t) monotonic_ms() + x->timeout_ms : UINT64_MAX;
        long step_us = 1000;
        for (;;) {
                pid_t w = waitpid(pid, &ret->wait_status, WNOHANG);
                if (w == pid)
                        return 0;
                if (w < 0 && errno != EINTR)
                        return -errno;
                if ((uint64_t) monotonic_ms() >= deadline) {
                        (void) kill(-pid, SIGKILL); /* the command and what it started */
                        ret->timed_out = true;
                        return wait_blocking(pid, &ret->wait_status);
                }
                watching = pause_or_watch(x, watching, step_us);
                if (step_us < 20000)
                        step_us *= 2;
        }
}

static int report_child_failure(const seatbelt_exec_params *x, const child_report *rep,
                                cordon_error *err) {
        if (rep->stage == 1)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, rep->err,
                                        "cannot enter the working directory: %s",
                                        strerror(rep->err));
        return cordon_set_error(err, CORDON_EXEC_FAILED, rep->err, "cannot execute %s: %s%s",
                                x->sandbox_exec ? x->sandbox_exec : "the command",
                                strerror(rep->err),
                                x->sandbox_exec ? "; hint: cordon needs macOS's sandbox-exec, "
                                                  "see 'cordon probe'"
                                                : "");
}

static int spawn_and_wait(const seatbelt_exec_params *x, char **args, char *const *candidates,
                          seatbelt_exec_result *ret, cordon_error *err) {
        int fds[2];
        int r = pipe_cloexec(fds);
        if (r < 0)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, -r, "pipe: %s", strerror(-r));
        pid_t pid = fork();
        if (pid < 0) {
                int e = errno;
                (void) close(fds[0]);
                (void) close(fds[1]);
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, e, "fork: %s", strerror(e));
        }
        if (pid == 0)
                child_main(x, args, candidates, fds[1]);
        (void) close(fds[1]);
        child_report rep = { 0, 0 };
        ssize_t n = read_full(fds[0], &rep, sizeof(rep)); /* EOF at exec: it worked */
        (void) close(fds[0]);
        *ret = (seatbelt_exec_result) { 0 };
        r = n == (ssize_t) sizeof(rep) ? wait_blocking(pid, &ret->wait_status)
                                       : wait_child(pid, x, ret);
        /* Whatever the command left running in its session goes with it. */
        (void) kill(-pid, SIGKILL);
        if (r < 0)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, -r, "waitpid: %s",
                                        strerror(-r));
        if (n == (ssize_t) sizeof(rep))
                return report_child_failure(x, &rep, err);
        return 0;
}

int seatbelt_exec_run(const seatbelt_exec_params *x, seatbelt_exec_result *ret,
                      cordon_error *err) {
        if (!x || !x->argv || !x->argv[0] || !x->argv[0][0] || !ret ||
            (x->sandbox_exec && !x->profile))
                return cordon_set_error(err, CORDON_USAGE, EINVAL, "no command to run");
        _cleanup_free_ char **args = build_args(x);
        strv candidates = { 0 };
        int r = args ? build_candidates(x, &candidates) : -ENOMEM;
        if (r >= 0 && candidates.n == 0)
                r = strv_push(&candidates, x->argv[0]);
        if (r < 0) {
                strv_done(&candidates);
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, -r, "out of memory");
        }
        r = spawn_and_wait(x, args, candidates.v, ret, err);
        strv_done(&candidates);
        return r;
}
