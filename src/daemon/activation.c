/* SPDX-License-Identifier: Apache-2.0 */
/* Socket activation (activation.h). The checks are as strict as for a socket the daemon creates
 * itself (server_open_socket): the peer-credential check in server.c is the boundary, and it
 * only means something on a Unix socket whose path nobody else can replace. */
#include "daemon/activation.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "util/util.h"

/* A positive decimal without sign, spaces or leading zeros, as systemd writes it. */
static int parse_positive(const char *s, unsigned long *ret) {
        if (!s || s[0] < '1' || s[0] > '9' || strspn(s, "0123456789") != strlen(s) ||
            strlen(s) > 9)
                return -EINVAL;
        *ret = strtoul(s, NULL, 10);
        return 0;
}

static void forget_variables(void) {
        /* Execs start from the daemon's environment: a command must not see (and a later
         * process must not misread) variables that were meant for the daemon alone. */
        (void) unsetenv("LISTEN_PID");
        (void) unsetenv("LISTEN_FDS");
        (void) unsetenv("LISTEN_FDNAMES");
}

static int sock_int(int fd, int opt, int *ret) {
        socklen_t len = sizeof(*ret);
        return getsockopt(fd, SOL_SOCKET, opt, ret, &len) < 0 ? -errno : 0;
}

/* fd is a listening AF_UNIX stream socket bound to a filesystem path; the path into `path`. An
 * inet socket would take connections SO_PEERCRED cannot vouch for; an abstract one has no
 * directory to keep others from binding it first. */
static int check_socket(int fd, char *path, size_t size) {
        struct stat st;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISSOCK(st.st_mode))
                return -ENOTSOCK;
        int type = 0, listening = 0;
        int r = sock_int(fd, SO_TYPE, &type);
        if (r >= 0)
                r = sock_int(fd, SO_ACCEPTCONN, &listening);
        if (r < 0)
                return r;
        if (type != SOCK_STREAM || !listening)
                return -EPROTOTYPE;
        struct sockaddr_un sa = { 0 };
        socklen_t len = sizeof(sa);
        if (getsockname(fd, (struct sockaddr *) &sa, &len) < 0)
                return -errno;
        if (sa.sun_family != AF_UNIX || len <= offsetof(struct sockaddr_un, sun_path) ||
            sa.sun_path[0] != '/')
                return -EAFNOSUPPORT;
        size_t n = strnlen(sa.sun_path, len - offsetof(struct sockaddr_un, sun_path));
        if (n >= size || n >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        memcpy(path, sa.sun_path, n);
        path[n] = '\0';
        return 0;
}

/* The socket's directory: ours, a directory, no group or other permissions (as
 * server_open_socket requires), so no other user can have replaced the socket. */
static int check_directory(const char *path) {
        _cleanup_free_ char *dir = strdup(path);
        if (!dir)
                return -ENOMEM;
        char *slash = strrchr(dir, '/');
        if (!slash || slash == dir)
                return -EPERM; /* directly in "/": not a private directory */
        *slash = '\0';
        struct stat st;
        if (lstat(dir, &st) < 0)
                return -errno;
        if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077))
                return -EPERM;
        return 0;
}

int activation_listen_fd(char *path, size_t size) {
        const char *pid_s = getenv("LISTEN_PID"), *fds_s = getenv("LISTEN_FDS");
        unsigned long pid, fds;
        int r = 0;
        if (!pid_s && !fds_s)
                r = -ENOENT;
        else if (parse_positive(pid_s, &pid) < 0 || parse_positive(fds_s, &fds) < 0)
                r = -EINVAL;
        else if (pid != (unsigned long) getpid())
                r = -ENOENT; /* meant for another process (we were exec'ed by it) */
        else if (fds != 1)
                r = -EINVAL;
        forget_variables();
        if (r < 0)
                return r;
        r = check_socket(ACTIVATION_FD, path, size);
        if (r >= 0)
                r = check_directory(path);
        if (r < 0)
                return r;
        int fl = fcntl(ACTIVATION_FD, F_GETFL);
        /* server.c accepts in a loop until EAGAIN: a blocking listener would hang the daemon. */
        if (fl < 0 || fcntl(ACTIVATION_FD, F_SETFL, fl | O_NONBLOCK) < 0 ||
            fcntl(ACTIVATION_FD, F_SETFD, FD_CLOEXEC) < 0)
                return -errno;
        return ACTIVATION_FD;
}
