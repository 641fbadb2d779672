/* SPDX-License-Identifier: Apache-2.0 */
/*
 * attack: network escapes. The sandbox has its own network namespace with only loopback and
 * AF_UNIX socket creation is filtered, so none of these may reach the listeners the driver runs
 * on the host (`attack host-listen` checks that from outside as well).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "attack.h"

static int parse_port(const char *s) {
        char *end = NULL;
        long v = strtol(s, &end, 10);
        return (end == s || *end || v <= 0 || v > 65535) ? -1 : (int) v;
}

static int connect_unix(const char *path, bool abstract) {
        int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (s < 0)
                return refused("socket(AF_UNIX): %s", strerror(errno));
        struct sockaddr_un a = { .sun_family = AF_UNIX };
        size_t len = strlen(path);
        if (len + 1 >= sizeof a.sun_path) {
                close(s);
                return harness("path too long");
        }
        memcpy(a.sun_path + (abstract ? 1 : 0), path, len);
        socklen_t alen = (socklen_t) (offsetof(struct sockaddr_un, sun_path) + len +
                                      (abstract ? 1 : 0));
        int r = connect(s, (struct sockaddr *) &a, alen);
        int e = errno;
        if (r == 0)
                write_ignored(s, "escaped\n", 8);
        close(s);
        if (r == 0)
                return escaped("connected to %s%s", abstract ? "@" : "", path);
        return refused("connect %s%s: %s", abstract ? "@" : "", path, strerror(e));
}

/* unix-connect PATH: a listening socket on the host (docker.sock, ssh-agent, D-Bus stand-in). */
static int cmd_unix_connect(int argc, char **argv) {
        return connect_unix(argv[0], false);
}

/* abstract-connect NAME: abstract sockets ignore the filesystem; only the netns separates them. */
static int cmd_abstract_connect(int argc, char **argv) {
        return connect_unix(argv[0], true);
}

/* tcp-connect PORT: the host's 127.0.0.1:PORT and [::1]:PORT must be unreachable. */
static int cmd_tcp_connect(int argc, char **argv) {
        int port = parse_port(argv[0]);
        if (port < 0)
                return harness("bad port %s", argv[0]);
        int ok = 0;
        int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (s >= 0) {
                struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t) port),
                                         .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
                if (connect(s, (struct sockaddr *) &a, sizeof a) == 0)
                        ok++, write_ignored(s, "escaped\n", 8);
                else
                        fprintf(stderr, "  127.0.0.1:%d: %s\n", port, strerror(errno));
                close(s);
        } else
                fprintf(stderr, "  socket(AF_INET): %s\n", strerror(errno));
        s = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (s >= 0) {
                struct sockaddr_in6 a = { .sin6_family = AF_INET6,
                                          .sin6_port = htons((uint16_t) port),
                                          .sin6_addr = IN6ADDR_LOOPBACK_INIT };
                if (connect(s, (struct sockaddr *) &a, sizeof a) == 0)
                        ok++, write_ignored(s, "escaped\n", 8);
                else
                        fprintf(stderr, "  [::1]:%d: %s\n", port, strerror(errno));
                close(s);
        }
        if (ok)
                return escaped("connected to a loopback listener on port %d (%d family/ies)", port,
                               ok);
        return refused("no loopback connection on port %d", port);
}

/* udp-send PORT: a datagram to 127.0.0.1:PORT. sendto() succeeds into the sandbox's own loopback
 * whatever happens, so the verdict is the host listener's (`host-listen udp`), not ours. */
static int cmd_udp_send(int argc, char **argv) {
        int port = parse_port(argv[0]);
        if (port < 0)
                return harness("bad port %s", argv[0]);
        int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (s < 0)
                return refused("socket(AF_INET, DGRAM): %s", strerror(errno));
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t) port),
                                 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        ssize_t r = 0;
        for (int i = 0; i < 5 && r >= 0; i++)
                r = sendto(s, "escaped\n", 8, 0, (struct sockaddr *) &a, sizeof a);
        fprintf(stderr, "  sendto 127.0.0.1:%d: %s\n", port, r >= 0 ? "sent" : strerror(errno));
        close(s);
        return refused("datagrams sent; the host listener decides");
}

const attack_cmd attack_net_cmds[] = {
        { "unix-connect", "PATH", 1, cmd_unix_connect },
        { "abstract-connect", "NAME", 1, cmd_abstract_connect },
        { "tcp-connect", "PORT", 1, cmd_tcp_connect },
        { "udp-send", "PORT", 1, cmd_udp_send },
        { NULL, NULL, 0, NULL },
};
