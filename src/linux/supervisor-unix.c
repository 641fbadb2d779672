/* SPDX-License-Identifier: Apache-2.0 */
/* allowUnixSockets: connect() to exactly the listed pathname sockets (issue 6).
 *
 * In every run (the list may be empty) the filter lets the command create AF_UNIX stream and
 * seqpacket sockets and notifies every connect(): refusing socket(AF_UNIX) itself could not tell
 * glibc's name-service lookups (nss_lookup_socket()) from a real attempt on a host socket. The supervisor performs the connect itself, on its own duplicate
 * of the caller's socket (pidfd_getfd: the same open file, so the caller's socket is the one that
 * ends up connected), to an inode it checked, never to a path the kernel would resolve again:
 *   - the address is copied once; the caller rewriting it afterwards changes nothing;
 *   - the socket is duplicated before NOTIF_ID_VALID; another thread swapping the descriptor
 *     number afterwards changes nothing either (the duplicate is the object that was checked);
 *   - the listed sockets are pinned with O_PATH when the run starts, before the sandbox's root
 *     exists: the final component with O_NOFOLLOW (a symlink there is refused: an earlier run
 *     could have planted it) and it must be a socket. A connect whose path names one of them,
 *     as written or as resolved, goes to the pinned inode through /proc/self/fd/N of the
 *     supervisor, so renaming something else to that path during the call redirects nothing;
 *   - any other path is resolved as the caller would (the creation supervisor's rules: its own
 *     cwd and /proc aliases, no foreign magic links, no procfs), each symlink expanded as text,
 *     the final inode pinned and compared with the pinned ones by device and inode; a socket on
 *     the sandbox's own tmpfs mounts (/tmp, /dev/shm: nothing outside can bind there) is
 *     allowed too, so servers the command starts for itself work;
 *   - abstract addresses are refused (EPERM, as Landlock's scoping answers), so are all others
 *     (EACCES), each reported as a network-outbound violation with the path as target.
 * Sockets of other families are connected as asked, also on the duplicate: the descriptor
 * number could name an AF_UNIX socket by the time the kernel read it again. In a warm session a
 * TCP connect to the proxy's ports on loopback is recorded (caller's session id, local address)
 * before the call is answered, so the session host can attribute the proxy's refusals
 * (docs/design/daemon.md). A blocking connect
 * runs on a pool thread (supervisor-blocked.c; a full backlog would stall the workers otherwise). */
#include "linux/supervisor-internal.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/un.h>

#define UNIX_PRIVATE_MAX 4

typedef enum allow_state {
        ALLOW_PINNED,   /* pin is the socket */
        ALLOW_MISSING,  /* nothing there when the run started */
        ALLOW_REFUSED,  /* not a socket, or a symlink: never connected to */
} allow_state;

typedef struct allow_entry {
        char *path;      /* as the policy lists it (absolute, normalised) */
        char *resolved;  /* with the directory's symlinks resolved, or NULL when the same */
        allow_state state;
        int pin;         /* O_PATH of the socket (ALLOW_PINNED) */
        dev_t dev;
        ino_t ino;
} allow_entry;

struct supervisor_unix_allow {
        allow_entry *e;
        size_t n;
        dev_t private_dev[UNIX_PRIVATE_MAX];
        size_t n_private;
};

static const char rule_not_listed[] = "not in allowUnixSockets";
static const char rule_abstract[] = "abstract Unix sockets are refused (allowUnixSockets lists "
                                    "paths)";
static const char rule_planted[] = "the allowUnixSockets path was not a socket (or was a "
                                   "symlink) when the run started";

/* ---- The allowlist, pinned while the host's file system is in view ---------------------------- */

static int pin_entry(allow_entry *a) {
        _cleanup_free_ char *dir = strdup(a->path);
        if (!dir)
                return -ENOMEM;
        char *slash = strrchr(dir, '/');
        const char *name = slash + 1; /* policy paths are absolute: there is a slash */
        *slash = '\0';
        char real[PATH_MAX];
        /* The directory resolves like every other policy path (realpath when the run starts). */
        if (!realpath(dir[0] ? dir : "/", real)) {
                a->state = errno == ENOENT || errno == ENOTDIR ? ALLOW_MISSING : ALLOW_REFUSED;
                return 0;
        }
        _cleanup_close_ int dfd = open(real, O_PATH | O_DIRECTORY | O_CLOEXEC);
        int fd = dfd < 0 ? -1 : openat(dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0) {
                a->state = errno == ENOENT ? ALLOW_MISSING : ALLOW_REFUSED;
                safe_close(fd);
                return 0;
        }
        if (!S_ISSOCK(st.st_mode)) { /* a symlink (O_NOFOLLOW), a file, a directory */
                a->state = ALLOW_REFUSED;
                safe_close(fd);
                return 0;
        }
        a->state = ALLOW_PINNED;
        a->pin = fd;
        a->dev = st.st_dev;
        a->ino = st.st_ino;
        char *res = path_join(real, name);
        if (!res)
                return -ENOMEM;
        if (strcmp(res, a->path) == 0)
                free(res);
        else
                a->resolved = res;
        return 0;
}

int supervisor_unix_allow_new(const strv *paths, supervisor_unix_allow **ret) {
        supervisor_unix_allow *a = calloc(1, sizeof(*a));
        if (!a || !(a->e = calloc(paths->n ? paths->n : 1, sizeof(*a->e)))) {
                free(a);
                return -ENOMEM;
        }
        for (size_t i = 0; i < paths->n; i++) {
                allow_entry *e = &a->e[a->n++];
                *e = (allow_entry) { .pin = -1 };
                int r = !path_is_absolute(paths->v[i]) ? -EINVAL
                        : (e->path = strdup(paths->v[i])) ? pin_entry(e) : -ENOMEM;
                if (r < 0) {
                        supervisor_unix_allow_free(a);
                        return r;
                }
        }
        *ret = a;
        return 0;
}

int supervisor_unix_allow_add_private(supervisor_unix_allow *a, const char *dir) {
        struct stat st;
        if (stat(dir, &st) < 0)
                return -errno;
        if (a->n_private >= UNIX_PRIVATE_MAX)
                return -E2BIG;
        a->private_dev[a->n_private++] = st.st_dev;
        return 0;
}

void supervisor_unix_allow_free(supervisor_unix_allow *a) {
        if (!a)
                return;
        for (size_t i = 0; i < a->n; i++) {
                free(a->e[i].path);
                free(a->e[i].resolved);
                safe_close(a->e[i].pin);
        }
        free(a->e);
        free(a);
}

size_t supervisor_unix_allow_pinned(const supervisor_unix_allow *a) {
        size_t n = 0;
        for (size_t i = 0; a && i < a->n; i++)
                n += a->e[i].state == ALLOW_PINNED;
        return n;
}

/* ---- Deciding ------------------------------------------------------------------------------------ */

/* Reports a refused connect (action network-outbound, the socket's path as target). */
static int refuse_connect(request *r, const char *target, const char *rule) {
        supervisor_report_refusal(r->s, &(supervisor_report) { .action = "network-outbound",
                                                              .syscall = "connect",
                                                              .target = target, .rule = rule,
                                                              .sid = request_sid(r) },
                                  "connect", rule);
        return -EACCES;
}

/* An absolute path with no "." or ".." component, repeated slashes collapsed, into buf; false
 * for anything else (resolved like the kernel would instead). */
static bool plain_absolute(const char *path, char buf[static PATH_MAX]) {
        if (path[0] != '/')
                return false;
        size_t o = 0;
        for (const char *p = path; *p;) {
                while (*p == '/')
                        p++;
                size_t n = strcspn(p, "/");
                if (n == 0)
                        break;
                if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
                        return false;
                if (o + 1 + n >= PATH_MAX)
                        return false;
                buf[o++] = '/';
                memcpy(buf + o, p, n);
                o += n;
                p += n;
        }
        if (o == 0 || path[strlen(path) - 1] == '/')
                return false; /* "/" or "dir/": never a socket (ENOTDIR, ECONNREFUSED) */
        buf[o] = '\0';
        return true;
}

static const allow_entry *by_text(const supervisor_unix_allow *a, const char *path) {
        char canon[PATH_MAX];
        if (!plain_absolute(path, canon))
                return NULL;
        for (size_t i = 0; i < a->n; i++)
                if (streq(a->e[i].path, canon) || (a->e[i].resolved && streq(a->e[i].resolved, canon)))
                        return &a->e[i];
        return NULL;
}

/* The inode the caller's path leads to, pinned (O_PATH), following symlinks as text the way
 * open_emulated() does; *res keeps the last parent for the report. */
static int pin_caller_path(request *r, const char *path, resolved *res) {
        char cur[PATH_MAX], link[PATH_MAX];
        _cleanup_close_ int link_dir = -1;
        snprintf(cur, sizeof(cur), "%s", path);
        for (unsigned links = 0; links < SUPERVISOR_MAX_LINKS; links++) {
                int e = link_dir >= 0 ? resolve_parent_at(r, link_dir, cur, res)
                                      : resolve_parent(r, AT_FDCWD, cur, res);
                if (e < 0)
                        return e;
                if (res->trailing_slash)
                        return -ENOTDIR;
                /* In the caller's own /proc/<pid>, a magic link leads to the caller's own file. */
                int pin = openat(res->dir_fd, res->name,
                                 O_PATH | O_CLOEXEC | (res->in_target_proc ? 0 : O_NOFOLLOW));
                struct stat st;
                if (pin < 0 || fstat(pin, &st) < 0) {
                        e = -errno;
                        safe_close(pin);
                        return e;
                }
                if (!S_ISLNK(st.st_mode))
                        return pin;
                ssize_t n = readlinkat(pin, "", link, sizeof(link) - 1);
                (void) close(pin);
                if (n < 0)
                        return -errno;
                link[n] = '\0';
                safe_close(link_dir);
                link_dir = TAKE_FD(res->dir_fd);
                memcpy(cur, link, sizeof(cur));
        }
        return -ELOOP;
}

static bool on_private_mount(const supervisor_unix_allow *a, dev_t dev) {
        for (size_t i = 0; i < a->n_private; i++)
                if (a->private_dev[i] == dev)
                        return true;
        return false;
}

/* The sockets glibc's name-service lookups try on their own: nscd for every getpwuid() (`ls -l`,
 * `id`, `whoami`, Python's getpass, Node's os.userInfo()), nss-systemd's varlink services
 * (io.systemd.Multiplexer and the others in /run/systemd/userdb), nss-resolve. Matched on the
 * address exactly as written, never connected: the caller gets ENOENT (what it gets on a host
 * without the service, so it falls back to /etc/passwd or DNS through the proxy) and nothing is
 * reported. Still refused: an attacker aiming at nscd or userdb reaches nothing, it is only not
 * counted. Every other host socket stays refused and reported. */
static bool nss_lookup_socket(const char *path) {
        static const char *const exact[] = { "/var/run/nscd/socket", "/run/nscd/socket",
                                             "/run/systemd/resolve/io.systemd.Resolve" };
        static const char userdb[] = "/run/systemd/userdb/";
        for (size_t i = 0; i < ELEMENTSOF(exact); i++)
                if (streq(path, exact[i]))
                        return true;
        const char *name = path + sizeof(userdb) - 1;
        return strncmp(path, userdb, sizeof(userdb) - 1) == 0 && *name && *name != '.' &&
               !strchr(name, '/');
}

/* A socket the caller may reach, pinned: the fd to connect through (owned by the allowlist, or
 * *ret_own when it is a fresh pin). Returns it, or -errno (-EACCES: refused and reported). */
static int decide(request *r, const char *path, int *ret_own) {
        const supervisor_unix_allow *a = r->s->unix_allow;
        if (!a) /* connect() notified for another reason: no pathname socket is listed */
                return refuse_connect(r, path, rule_not_listed);
        const allow_entry *hit = by_text(a, path);
        if (hit) {
                if (hit->state == ALLOW_PINNED)
                        return hit->pin;
                if (hit->state == ALLOW_MISSING)
                        return -ENOENT;
                return refuse_connect(r, hit->path, rule_planted);
        }
        if (nss_lookup_socket(path))
                return -ENOENT; /* quiet: see nss_lookup_socket() */
        resolved res = RESOLVED_INIT;
        int pin = pin_caller_path(r, path, &res);
        struct stat st;
        if (pin >= 0 && fstat(pin, &st) < 0)
                pin = -errno;
        if (pin < 0) {
                resolved_done(&res);
                return pin; /* ENOENT, ENOTDIR, ELOOP...: the kernel's own answers */
        }
        int ret = -ECONNREFUSED; /* what connect() says for an inode that is no socket */
        if (S_ISSOCK(st.st_mode)) {
                for (size_t i = 0; i < a->n && ret < 0; i++)
                        if (a->e[i].state == ALLOW_PINNED && a->e[i].dev == st.st_dev &&
                            a->e[i].ino == st.st_ino)
                                ret = a->e[i].pin;
                if (ret < 0 && on_private_mount(a, st.st_dev)) {
                        *ret_own = pin;
                        pin = -1;
                        ret = *ret_own;
                }
                if (ret < 0)
                        ret = refuse_connect(r, resolved_path(r, &res) == 0 ? res.path : path,
                                             rule_not_listed);
        }
        safe_close(pin);
        resolved_done(&res);
        return ret;
}

/* ---- Connecting ------------------------------------------------------------------------------------ */

/* Connects the caller's socket (r->sock_fd) to the pinned inode `via` (our /proc/self/fd/N),
 * here or on a pool thread when the socket blocks. */
static int connect_pinned(request *r, int via, int own_pin) {
        struct sockaddr_un sun = { .sun_family = AF_UNIX };
        int len = snprintf(sun.sun_path, sizeof(sun.sun_path), "self/fd/%d", via);
        socklen_t sl = (socklen_t) (offsetof(struct sockaddr_un, sun_path) + (size_t) len + 1);
        return supervisor_connect(r, (const struct sockaddr *) &sun, sl, true, own_pin);
}

static int connect_unix(request *r, size_t len) {
        const struct sockaddr_un *sun = (const struct sockaddr_un *) r->addr;
        size_t off = offsetof(struct sockaddr_un, sun_path);
        if (len <= off || sun->sun_family != AF_UNIX)
                /* No path: the kernel refuses it (EINVAL), or AF_UNSPEC dissolves an association
                 * of a datagram socket. Nothing is reached either way. */
                return supervisor_connect(r, (const struct sockaddr *) r->addr, (socklen_t) len,
                                          false, -1);
        if (sun->sun_path[0] == '\0') {
                char name[80] = "@";
                for (size_t i = 1, o = 1; i < len - off && o + 1 < sizeof(name); i++, o++)
                        name[o] = sun->sun_path[i] >= 0x20 && sun->sun_path[i] < 0x7f ? sun->sun_path[i] : '?';
                (void) refuse_connect(r, name, rule_abstract);
                return -EPERM;
        }
        size_t plen = strnlen(sun->sun_path, len - off);
        memcpy(r->path[0], sun->sun_path, plen);
        r->path[0][plen] = '\0';
        int own = -1;
        int via = decide(r, r->path[0], &own);
        if (via < 0)
                return via;
        return connect_pinned(r, via, own);
}

/* A TCP connect to the sandbox's own loopback on a recorded port (a warm session's proxy), or
 * to any address outside the loopback, which the interception redirects to the proxy
 * (record_redirect_port); a UDP connect to port 53 of any address, which the interception
 * redirects to the resolver (record_dns_port: glibc's resolver connects its socket before it
 * sends, so every getaddrinfo() is one). Judged on the copied address: the caller rewriting it
 * afterwards changes nothing. Only these are recorded, so the session host's table holds the
 * proxy's and the resolver's clients and nothing else. (The loopback test is the interception
 * rule's: 127.0.0.0/8 and ::1.) */
static uint16_t recorded_port(const supervisor *s, int sock, const void *addr, size_t len) {
        const struct sockaddr_in *in = addr;
        const struct sockaddr_in6 *in6 = addr;
        int type = 0;
        socklen_t tl = sizeof(type);
        if (!s->on_connection || getsockopt(sock, SOL_SOCKET, SO_TYPE, &type, &tl) < 0 ||
            (type != SOCK_STREAM && type != SOCK_DGRAM))
                return 0;
        bool loopback;
        uint16_t port;
        if (len >= sizeof(*in) && in->sin_family == AF_INET) {
                loopback = (ntohl(in->sin_addr.s_addr) >> 24) == 127;
                port = ntohs(in->sin_port);
        } else if (len >= sizeof(*in6) && in6->sin6_family == AF_INET6) {
                bool mapped = IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr);
                loopback = IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr) ||
                           (mapped && in6->sin6_addr.s6_addr[12] == 127);
                port = ntohs(in6->sin6_port);
        } else
                return 0;
        if (type == SOCK_DGRAM)
                return port == 53 ? s->record_dns_port : 0;
        if (!loopback)
                return s->record_redirect_port;
        return port && (port == s->record_ports[0] || port == s->record_ports[1]) ? port : 0;
}

int op_connect(request *r) {
        int len = (int) r->n->data.args[2];
        if (len < 0 || (size_t) len > sizeof(r->addr))
                return -EINVAL;
        /* Copy and duplicate before NOTIF_ID_VALID (see op_bind). */
        int e = target_copy_mem(r, r->n->data.args[1], r->addr, (size_t) len);
        if (e == 0)
                e = target_dup_fd(r, (int) r->n->data.args[0]);
        if (e == 0)
                e = target_validate(r);
        if (e < 0)
                return e;
        int domain = 0;
        socklen_t dl = sizeof(domain);
        if (getsockopt(r->sock_fd, SOL_SOCKET, SO_DOMAIN, &domain, &dl) < 0)
                return -errno; /* ENOTSOCK */
        if (domain == AF_UNIX)
                return connect_unix(r, (size_t) len);
        /* The landlock backend: the run's proxy only (supervisor-landlock.c). */
        e = supervisor_landlock_check_connect(r, (const struct sockaddr *) r->addr, (socklen_t) len);
        if (e < 0)
                return e;
        r->record_port = recorded_port(r->s, r->sock_fd, r->addr, (size_t) len);
        return supervisor_connect(r, (const struct sockaddr *) r->addr, (socklen_t) len, false, -1);
}
