/* SPDX-License-Identifier: Apache-2.0 */
/* cordond: holds sandbox sessions for agent harnesses (docs/design/daemon.md, docs/protocol.md).
 *
 *   cordond [--socket PATH] [--sandbox off]
 *
 * Listens on $XDG_RUNTIME_DIR/cordon/cordond.sock (a private 0700 directory) unless --socket is
 * given or systemd passed a listening socket (activation.c), and writes exactly one start-up
 * line about the sandbox (docs/design/backends.md). */
#include <errno.h>
#include <jansson.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "daemon/activation.h"
#include "daemon/server.h"
#include "util/util.h"

static const char usage[] =
        "Usage: cordond [--socket PATH] [--sandbox off]\n"
        "\n"
        "Serves cordon sandbox sessions on a Unix socket (protocol: docs/protocol.md).\n"
        "  --socket PATH   listen on PATH (default: $XDG_RUNTIME_DIR/cordon/cordond.sock)\n"
        "  --sandbox off   run every session unconfined (says so at start-up)\n"
        "Only the daemon's own user may connect. SIGTERM destroys every session.\n"
        "Socket activation: with LISTEN_PID=<this pid> and LISTEN_FDS=1 (systemd), fd 3 is the\n"
        "listening socket and --socket is ignored (contrib/systemd/cordond.socket).\n";

static int default_socket(char *buf, size_t size) {
        const char *rt = getenv("XDG_RUNTIME_DIR");
        if (rt && rt[0] == '/')
                return snprintf(buf, size, "%s/cordon/cordond.sock", rt) < (int) size ? 0
                                                                                    : -ENAMETOOLONG;
        /* No session runtime dir (root, cron): a per-uid directory under /run or /tmp. */
        const char *base = access("/run/user", W_OK) == 0 ? "/run/user" : "/tmp";
        return snprintf(buf, size, "%s/cordon-%u/cordond.sock", base, (unsigned) getuid()) <
                               (int) size
                       ? 0
                       : -ENAMETOOLONG;
}

static void home_of(char *buf, size_t size) {
        const char *h = getenv("HOME");
        struct passwd *pw = (!h || h[0] != '/') ? getpwuid(getuid()) : NULL;
        (void) snprintf(buf, size, "%s", h && h[0] == '/' ? h : pw ? pw->pw_dir : "/");
}

/* The probe's member `key` of the backend named `name`, or NULL. */
static const char *backend_field(json_t *probe, const char *name, const char *key) {
        size_t i;
        json_t *b;
        json_array_foreach(json_object_get(probe, "backends"), i, b)
                if (json_is_string(json_object_get(b, "name")) &&
                    strcmp(json_string_value(json_object_get(b, "name")), name) == 0)
                        return json_string_value(json_object_get(b, key));
        return NULL;
}

/* docs/design/backends.md: one line saying whether commands will be sandboxed, and by what:
 * "agent sandbox ON (<backend>: <description>)", or "no OS-native agent sandbox on this host:
 * <hint>" with the native backend's hint (what to enable or install), or the --sandbox off line. */
static void startup_line(const daemon_t *d) {
        if (d->sandbox_off) {
                printf("agent sandbox DISABLED by --sandbox off\n");
                fflush(stdout);
                return;
        }
        cordon_probe *p = NULL;
        cordon_error err = { 0 };
        json_t *o = NULL;
        char *txt = NULL;
        if (cordon_probe_run(&p, &err) >= 0 && cordon_probe_to_json(p, &txt, &err) >= 0)
                o = json_loads(txt, 0, NULL);
        free(txt);
        const char *def = o ? json_string_value(json_object_get(o, "defaultBackend")) : NULL;
        const char *desc = def ? backend_field(o, def, "description") : NULL;
        const char *hint = o ? backend_field(o, "native", "hint") : NULL;
        if (def && strcmp(def, "none") != 0)
                printf("agent sandbox ON (%s: %s)\n", def, desc && desc[0] ? desc : def);
        else
                printf("no OS-native agent sandbox on this host: %s\n",
                       !o ? (err.message[0] ? err.message : "the probe failed")
                       : hint && hint[0] ? hint
                                         : "see 'cordon probe'");
        fflush(stdout);
        json_decref(o);
        cordon_probe_free(p);
}

static int parse_args(int argc, char **argv, char *sock, size_t size, bool *off) {
        for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "--socket") == 0 && i + 1 < argc && argv[i + 1][0] == '/') {
                        if (snprintf(sock, size, "%s", argv[++i]) >= (int) size)
                                return -ENAMETOOLONG;
                } else if (strcmp(argv[i], "--sandbox") == 0 && i + 1 < argc &&
                           strcmp(argv[i + 1], "off") == 0) {
                        *off = true;
                        i++;
                } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
                        fputs(usage, stdout);
                        exit(0);
                } else {
                        return -EINVAL;
                }
        }
        return 0;
}

int main(int argc, char **argv) {
        static daemon_t d = { .listen_fd = -1, .signal_fd = -1, .epfd = -1 };
        char sock[108] = "";
        if (parse_args(argc, argv, sock, sizeof(sock), &d.sandbox_off) < 0) {
                fprintf(stderr, "cordon: fatal: USAGE: bad arguments (--socket needs an absolute "
                                "path; --sandbox takes only 'off'; see 'cordond --help')\n");
                return 125;
        }
        if (!sock[0] && default_socket(sock, sizeof(sock)) < 0) {
                fprintf(stderr, "cordon: fatal: USAGE: the socket path is too long\n");
                return 125;
        }
        d.uid = getuid();
        daemon_raise_nofile(); /* before anything forks */
        /* Orphans of the daemon's children (a sandbox winding down after its exec worker was
         * killed) come back to the daemon, which reaps them and waits for them at shutdown. */
        (void) prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
        /* The admin's settings path, as the CLI takes it (docs/settings.md): only from the
         * daemon's own environment, never from a client. */
        d.managed_settings = getenv("CORDON_MANAGED_SETTINGS");
        home_of(d.home, sizeof(d.home));
        /* Given a socket by systemd: serve it, and leave its path to systemd at exit. */
        int r = activation_listen_fd(sock, sizeof(sock));
        bool activated = r >= 0;
        if (r < 0 && r != -ENOENT) {
                fprintf(stderr, "cordon: fatal: LAUNCH_FAILED: socket activation: %s (cordond "
                                "takes one listening Unix stream socket, in a private 0700 "
                                "directory, as fd 3)\n", strerror(-r));
                return 125;
        }
        if (activated)
                d.listen_fd = r;
        r = server_setup_signals(&d);
        if (r >= 0)
                r = d.epfd = epoll_create1(EPOLL_CLOEXEC);
        if (r >= 0 && !activated)
                r = d.listen_fd = server_open_socket(sock);
        if (r < 0) {
                fprintf(stderr, "cordon: fatal: LAUNCH_FAILED: cannot listen on %s: %s%s\n", sock,
                        strerror(-r),
                        r == -EPERM ? " (its directory must be ours and mode 0700)" : "");
                return 125;
        }
        startup_line(&d);
        daemon_log("listening on %s%s", sock, activated ? " (socket activation)" : "");
        r = server_run(&d);
        if (!activated)
                (void) unlink(sock);
        return r < 0 ? 1 : 0;
}
