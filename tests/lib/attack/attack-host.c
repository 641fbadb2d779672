/* SPDX-License-Identifier: Apache-2.0 */
/*
 * attack: helpers the driver runs on the *host*, outside the sandbox: listeners that record any
 * connection from inside, a pty for the TIOCSTI test, marked processes and a way to look for them.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "attack.h"

#define MAX_LISTENERS 8

typedef struct listener {
        int fd;
        bool stream;
        char desc[128];
} listener;

static int listen_unix(listener *l, const char *path, bool abstract) {
        l->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (l->fd < 0)
                return -errno;
        struct sockaddr_un a = { .sun_family = AF_UNIX };
        size_t len = strlen(path);
        if (len + 1 >= sizeof a.sun_path)
                return -ENAMETOOLONG;
        memcpy(a.sun_path + (abstract ? 1 : 0), path, len);
        socklen_t alen = (socklen_t) (offsetof(struct sockaddr_un, sun_path) + len +
                                      (abstract ? 1 : 0));
        if (!abstract)
                (void) unlink(path);
        if (bind(l->fd, (struct sockaddr *) &a, alen) < 0 || listen(l->fd, 8) < 0)
                return -errno;
        if (!abstract)
                (void) chmod(path, 0777); /* reachable by any uid: only the sandbox stands between */
        l->stream = true;
        snprintf(l->desc, sizeof l->desc, "unix %s%s", abstract ? "@" : "", path);
        return 0;
}

/* Binds 127.0.0.1:0 and returns the port. */
static int listen_inet(listener *l, int type) {
        l->fd = socket(AF_INET, type | SOCK_CLOEXEC, 0);
        if (l->fd < 0)
                return -errno;
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t alen = sizeof a;
        if (bind(l->fd, (struct sockaddr *) &a, sizeof a) < 0 ||
            (type == SOCK_STREAM && listen(l->fd, 8) < 0) ||
            getsockname(l->fd, (struct sockaddr *) &a, &alen) < 0)
                return -errno;
        l->stream = type == SOCK_STREAM;
        int port = ntohs(a.sin_port);
        snprintf(l->desc, sizeof l->desc, "%s 127.0.0.1:%d", l->stream ? "tcp" : "udp", port);
        return port;
}

/* Replaces {TCP} and {UDP} in an argument with the bound ports. */
static char *subst(const char *arg, int tcp, int udp) {
        char *out = malloc(strlen(arg) + 32);
        if (!out)
                return NULL;
        if (strcmp(arg, "{TCP}") == 0)
                sprintf(out, "%d", tcp);
        else if (strcmp(arg, "{UDP}") == 0)
                sprintf(out, "%d", udp);
        else
                strcpy(out, arg);
        return out;
}

/* Polls the listeners; returns how many connections/datagrams arrived. */
static int drain(listener *ls, int n, int timeout_ms) {
        struct pollfd p[MAX_LISTENERS];
        for (int i = 0; i < n; i++)
                p[i] = (struct pollfd) { .fd = ls[i].fd, .events = POLLIN };
        if (poll(p, (nfds_t) n, timeout_ms) <= 0)
                return 0;
        int got = 0;
        for (int i = 0; i < n; i++) {
                if (!(p[i].revents & POLLIN))
                        continue;
                char buf[64];
                if (ls[i].stream) {
                        int c = accept4(ls[i].fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
                        if (c >= 0)
                                close(c);
                } else
                        (void) recv(ls[i].fd, buf, sizeof buf, MSG_DONTWAIT);
                fprintf(stderr, "attack: host-listen: RECEIVED on %s\n", ls[i].desc);
                got++;
        }
        return got;
}

static int exit_code(int st) {
        return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int setup_listener(listener *l, const char *spec, int *tcp, int *udp) {
        if (strncmp(spec, "unix:", 5) == 0)
                return listen_unix(l, spec + 5, false);
        if (strncmp(spec, "abstract:", 9) == 0)
                return listen_unix(l, spec + 9, true);
        if (strcmp(spec, "tcp") == 0)
                return *tcp = listen_inet(l, SOCK_STREAM);
        if (strcmp(spec, "udp") == 0)
                return *udp = listen_inet(l, SOCK_DGRAM);
        return -EINVAL;
}

/* host-listen SPEC... -- CMD...: runs CMD while listening; exit 1 if anything reached a listener,
 * else CMD's status. */
static int cmd_host_listen(int argc, char **argv) {
        listener ls[MAX_LISTENERS];
        int n = 0, tcp = 0, udp = 0, i;
        for (i = 0; i < argc && strcmp(argv[i], "--") != 0; i++) {
                if (n == MAX_LISTENERS)
                        return harness("too many listeners");
                int r = setup_listener(&ls[n], argv[i], &tcp, &udp);
                if (r < 0)
                        return harness("listener %s: %s", argv[i], strerror(-r));
                n++;
        }
        if (i + 1 >= argc)
                return harness("missing -- CMD");
        char **cmd = calloc((size_t) (argc - i), sizeof *cmd);
        for (int k = i + 1; k < argc && cmd; k++)
                if (!(cmd[k - i - 1] = subst(argv[k], tcp, udp)))
                        return harness("out of memory");
        pid_t pid = fork();
        if (pid == 0) {
                execvp(cmd[0], cmd);
                fprintf(stderr, "attack: host-listen: exec %s: %s\n", cmd[0], strerror(errno));
                _exit(127);
        }
        int got = 0, st = 0;
        while (waitpid(pid, &st, WNOHANG) == 0)
                got += drain(ls, n, 20);
        got += drain(ls, n, 100);
        if (got)
                return escaped("%d connection(s)/datagram(s) reached the host", got);
        return exit_code(st);
}

/* host-pty -- CMD...: CMD runs as a session leader with a fresh pty as controlling terminal and
 * stdin; afterwards any input waiting on that terminal means something was injected. */
static int cmd_host_pty(int argc, char **argv) {
        if (argc < 2 || strcmp(argv[0], "--") != 0)
                return harness("usage: host-pty -- CMD...");
        int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
        if (m < 0 || grantpt(m) < 0 || unlockpt(m) < 0)
                return harness("pty: %s", strerror(errno));
        const char *name = ptsname(m);
        int s = name ? open(name, O_RDWR | O_NOCTTY | O_CLOEXEC | O_NONBLOCK) : -1;
        if (s < 0)
                return harness("open pty slave: %s", strerror(errno));
        pid_t pid = fork();
        if (pid == 0) {
                (void) setsid();
                int t = open(name, O_RDWR); /* becomes the controlling terminal */
                if (t < 0 || dup2(t, 0) < 0)
                        _exit(126);
                execvp(argv[1], argv + 1);
                _exit(127);
        }
        int st = 0;
        (void) waitpid(pid, &st, 0);
        int pending = 0;
        (void) ioctl(s, FIONREAD, &pending);
        if (pending > 0)
                return escaped("%d byte(s) of input were injected into the terminal", pending);
        return exit_code(st);
}

/* sleeper MARKER [SECONDS]: a process whose argv[0] is MARKER. */
static int cmd_sleeper(int argc, char **argv) {
        execl("/bin/sleep", argv[0], argc > 1 ? argv[1] : "1000", (char *) NULL);
        return harness("exec /bin/sleep: %s", strerror(errno));
}

/* Counts live processes (not zombies) whose argv[0] is MARKER; prints them when loud. */
static int count_marker(const char *marker, bool loud) {
        DIR *d = opendir("/proc");
        int found = 0;
        for (struct dirent *e; d && (e = readdir(d));) {
                if (e->d_name[0] < '1' || e->d_name[0] > '9' || atoi(e->d_name) == getpid())
                        continue;
                char path[300], buf[512];
                snprintf(path, sizeof path, "/proc/%s/cmdline", e->d_name);
                int fd = open(path, O_RDONLY | O_CLOEXEC);
                if (fd < 0)
                        continue;
                long k = read_some(fd, buf, sizeof buf);
                close(fd);
                if (k > 0 && strcmp(buf, marker) == 0) {
                        found++;
                        if (loud)
                                fprintf(stderr, "  pid %s still runs %s\n", e->d_name, marker);
                }
        }
        if (d)
                closedir(d);
        return found;
}

static long now_ms(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* find-marker MARKER TIMEOUT_MS: exit 0 once no MARKER process is left, 1 if one survives. */
static int cmd_find_marker(int argc, char **argv) {
        long deadline = now_ms() + atol(argv[1]);
        while (count_marker(argv[0], false) > 0) {
                if (now_ms() > deadline) {
                        int n = count_marker(argv[0], true);
                        return escaped("%d process(es) marked %s outlived the sandbox", n,
                                       argv[0]);
                }
                usleep(20000);
        }
        return refused("no process marked %s is left", argv[0]);
}

/* wait-marker MARKER TIMEOUT_MS: exit 0 once a MARKER process runs, 2 on timeout. */
static int cmd_wait_marker(int argc, char **argv) {
        long deadline = now_ms() + atol(argv[1]);
        while (count_marker(argv[0], false) == 0) {
                if (now_ms() > deadline)
                        return harness("no process marked %s appeared", argv[0]);
                usleep(20000);
        }
        return 0;
}

const attack_cmd attack_host_cmds[] = {
        { "host-listen", "unix:PATH|abstract:NAME|tcp|udp... -- CMD ({TCP},{UDP} replaced)", 2,
          cmd_host_listen },
        { "host-pty", "-- CMD...", 2, cmd_host_pty },
        { "sleeper", "MARKER [SECONDS]", 1, cmd_sleeper },
        { "find-marker", "MARKER TIMEOUT_MS", 2, cmd_find_marker },
        { "wait-marker", "MARKER TIMEOUT_MS", 2, cmd_wait_marker },
        { NULL, NULL, 0, NULL },
};
