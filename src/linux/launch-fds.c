/* SPDX-License-Identifier: Apache-2.0 */
/* The descriptors the caller hands to the command: its stdio (fds 0-2 by default, or the
 * cordon_spawn_options fields) and cordon_spawn_options.fds. They reach the command as they are:
 * they refer to the host's objects, not to the sandbox's view of them, so each is checked for a
 * way past the policy before the sandbox is built, and only they survive into the command. */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "linux/launch.h"
#include "plan/name-rules.h"

/* A socket that is not connected to a peer, or a datagram (or raw) one, could be pointed at any
 * address the command can name: connect() or sendto() with an address reach docker.sock or the
 * session bus (AF_UNIX), or any host on the network from the host's network namespace the
 * socket was made in (AF_INET/AF_INET6: the sandbox's own namespace and its egress rules would
 * not apply to it). So such a descriptor is refused. Connected stream sockets (journald's
 * stdout, a harness's socketpair) and listening ones carry nothing further. */
static int check_socket(int fd, int child_fd, cordon_error *err) {
        int type = 0, listening = 0;
        socklen_t l = sizeof(int);
        (void) getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &l);
        l = sizeof(int);
        (void) getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &l);
        struct sockaddr_storage peer;
        socklen_t pl = sizeof(peer);
        bool connected = getpeername(fd, (struct sockaddr *) &peer, &pl) == 0;
        if ((type == SOCK_STREAM || type == SOCK_SEQPACKET) && (connected || listening))
                return 0;
        return cordon_set_error(err, CORDON_POLICY_UNENFORCEABLE, EPROTOTYPE,
                                "fd %d is an unconnected or datagram socket: the command could "
                                "connect or send it to any address it can name; hint: pass a "
                                "pipe or a connected stream socket", child_fd);
}

/* A protected file handed over read-only (`cordon run cmd < .git/config`) could be reopened for
 * writing through /proc/self/fd/N (Landlock allows writes anywhere beneath a writable root), and
 * a directory would let openat() reach the protected files beneath it: both refused rather than
 * run weaker; a pipe (`cat FILE | cordon run ...`) carries the same data safely. A file the
 * caller opened for writing was handed over on purpose. O_PATH descriptors are judged like the
 * others: their flags read as O_RDONLY, and fstat() sees what they name. */
static int check_one(int fd, int child_fd, const plan *p, cordon_error *err) {
        struct stat st;
        int fl = fcntl(fd, F_GETFL);
        if (fl < 0 || fstat(fd, &st) < 0)
                return 0; /* a closed stdio descriptor: the command inherits it closed */
        if (S_ISSOCK(st.st_mode))
                return check_socket(fd, child_fd, err);
        if (S_ISDIR(st.st_mode))
                return cordon_set_error(err, CORDON_POLICY_UNENFORCEABLE, EISDIR,
                                        "fd %d is a directory: the command could reach protected "
                                        "files beneath it; hint: pass a file or a pipe",
                                        child_fd);
        if (!S_ISREG(st.st_mode) || (fl & O_ACCMODE) != O_RDONLY)
                return 0;
        char link[32], path[PATH_MAX];
        (void) snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        ssize_t n = readlink(link, path, sizeof(path) - 1);
        if (n <= 0 || path[0] != '/')
                return 0;
        path[n] = '\0';
        const char *rule = NULL;
        if (name_rules_check_rename_source(&p->names, path, &rule) != NAME_ALLOWED)
                return cordon_set_error(err, CORDON_POLICY_UNENFORCEABLE, EACCES,
                                        "fd %d is the protected file %s (rule %s): the command "
                                        "could reopen it for writing; hint: pipe it in instead "
                                        "(cat FILE | cordon run ...)",
                                        child_fd, path, rule ? rule : "?");
        return 0;
}

int launch_fds_check(const launch_fds *f, const plan *p, cordon_error *err) {
        for (int i = 0; i < 3; i++) {
                int r = f->stdio[i] < 0 ? 0 : check_one(f->stdio[i], i, p, err);
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; i < f->n_map; i++) {
                if (fcntl(f->map[i].fd, F_GETFD) < 0)
                        return cordon_set_error(err, CORDON_USAGE, EBADF,
                                                "cordon_spawn_options.fds: fd %d (for the "
                                                "command's fd %d) is not open",
                                                f->map[i].fd, f->map[i].child_fd);
                int r = check_one(f->map[i].fd, f->map[i].child_fd, p, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

bool launch_fds_identity(const launch_fds *f) {
        return f->stdio[0] == 0 && f->stdio[1] == 1 && f->stdio[2] == 2 && f->n_map == 0;
}

static _noreturn_ void child_fail(int report_fd, const char *what, int child_fd) {
        report_fatal(report_fd, CORDON_LAUNCH_FAILED, errno,
                     "cannot hand the command its fd %d (%s): %s", child_fd, what,
                     strerror(errno));
        _exit(125);
}

/* The lowest number above every descriptor the mapping reads or writes. */
static int above_mapping(const launch_fds *f) {
        int floor = 3;
        for (int i = 0; i < 3; i++)
                if (f->stdio[i] >= floor)
                        floor = f->stdio[i] + 1;
        for (size_t i = 0; i < f->n_map; i++) {
                if (f->map[i].fd >= floor)
                        floor = f->map[i].fd + 1;
                if (f->map[i].child_fd >= floor)
                        floor = f->map[i].child_fd + 1;
        }
        return floor;
}

/* The source for the command's `child_fd`, as a close-on-exec copy at or above `floor`: the
 * dup2() calls that follow cannot overwrite a source another target still needs. */
static int source_copy(int fd, int child_fd, int floor, int report_fd) {
        int c = fd < 0 ? open("/dev/null", O_RDWR | O_CLOEXEC) : fcntl(fd, F_DUPFD_CLOEXEC, floor);
        if (c < 0)
                child_fail(report_fd, fd < 0 ? "/dev/null" : "dup", child_fd);
        if (fd < 0 && c < floor) {
                int m = fcntl(c, F_DUPFD_CLOEXEC, floor);
                (void) close(c);
                if (m < 0)
                        child_fail(report_fd, "dup", child_fd);
                c = m;
        }
        return c;
}

void launch_fds_child(const launch_fds *f, int *const own[], size_t n_own) {
        int floor = above_mapping(f);
        for (size_t i = 0; i < n_own; i++) {
                int fd = *own[i];
                if (fd < 0 || fd >= floor)
                        continue;
                int m = fcntl(fd, F_DUPFD_CLOEXEC, floor);
                if (m < 0)
                        child_fail(*own[0], "moving the sandbox's own descriptor", fd);
                (void) close(fd);
                *own[i] = m;
        }
        int report_fd = *own[0];
        int src[3 + CORDON_SPAWN_FDS_MAX], dst[3 + CORDON_SPAWN_FDS_MAX];
        size_t n = 0;
        for (int i = 0; i < 3; i++) {
                /* The caller's own fd i, closed: the command inherits it closed, as from
                 * cordon_run. */
                if (f->stdio[i] == i && fcntl(i, F_GETFD) < 0)
                        continue;
                src[n] = source_copy(f->stdio[i], i, floor, report_fd);
                dst[n++] = i;
        }
        for (size_t i = 0; i < f->n_map; i++, n++) {
                src[n] = source_copy(f->map[i].fd, f->map[i].child_fd, floor, report_fd);
                dst[n] = f->map[i].child_fd;
        }
        /* dup2() clears close-on-exec on the copy: the command inherits it. */
        for (size_t i = 0; i < n; i++)
                if (dup2(src[i], dst[i]) < 0)
                        child_fail(report_fd, "dup2", dst[i]);
        for (size_t i = 0; i < n; i++)
                (void) close(src[i]);
}
