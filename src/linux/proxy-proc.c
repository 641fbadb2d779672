/* SPDX-License-Identifier: Apache-2.0 */
/* The native backend's proxy process and its listeners (see proxy-proc.h for the layout).
 *
 * The proxy is a process of its own, not a thread of the launcher: it parses what a hostile
 * command sends, so a fault in it must not take the caller (a harness embedding libcordon) with
 * it, and it never shares a thread with anything that waits on the sandbox (a synchronous wait
 * in the proxy's loop would stall every tunnel). It stays in the host's network namespace (it
 * must dial out), holds no capabilities, gives up root when started as root, is not dumpable
 * (the command cannot read its memory or ptrace it: it is outside the sandbox's PID namespace
 * anyway) and dies with the launcher. */
#include "linux/proxy-proc.h"
#include "net/proxy-tls.h"
#include "net/cred-rewrite.h"

#include <arpa/inet.h>
#include <errno.h>
#include <grp.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "linux/fdpass.h"
#include "linux/landlock.h"
#include "linux/process.h"
#include "net/egress.h"
#include "net/git-push.h"
#include "net/req-rules.h"
#include "report/report.h"
#include "util/fork-gate.h"

#define NOBODY 65534

/* ---- the listeners (run by the monitor inside the sandbox's network namespace) -------------- */

static int listen_on(int family, int type, uint16_t port) {
        int fd = socket(family, type | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        int one = 1;
        /* Not for the resolver's UDP socket: there SO_REUSEADDR would let a second socket with
         * it share the port and take the queries (the command could not bind 53 anyway, it holds
         * no capability, but nothing is gained by allowing it). */
        if (type == SOCK_STREAM)
                (void) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        struct sockaddr_storage ss = { 0 };
        socklen_t len;
        if (family == AF_INET) {
                struct sockaddr_in *s4 = (struct sockaddr_in *) &ss;
                s4->sin_family = AF_INET;
                s4->sin_port = htons(port);
                s4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
                len = sizeof(*s4);
        } else {
                (void) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
                struct sockaddr_in6 *s6 = (struct sockaddr_in6 *) &ss;
                s6->sin6_family = AF_INET6;
                s6->sin6_port = htons(port);
                s6->sin6_addr = in6addr_loopback;
                len = sizeof(*s6);
        }
        if (bind(fd, (struct sockaddr *) &ss, len) < 0 ||
            (type == SOCK_STREAM && listen(fd, SOMAXCONN) < 0)) {
                int e = errno;
                (void) close(fd);
                return -e;
        }
        return fd;
}

int proxy_listeners_send(int listen_ch) {
        /* The proxy's two ports, and the ports the interception rules redirect to
         * (linux/intercept.h): every other TCP connection, and DNS. */
        static const struct { int family, type; uint16_t port; } want[] = {
                { AF_INET, SOCK_STREAM, PROXY_HTTP_PORT },
                { AF_INET, SOCK_STREAM, PROXY_SOCKS_PORT },
                { AF_INET, SOCK_STREAM, PROXY_TRANSPARENT_PORT },
                { AF_INET, SOCK_DGRAM, PROXY_DNS_PORT },
                { AF_INET6, SOCK_STREAM, PROXY_HTTP_PORT },
                { AF_INET6, SOCK_STREAM, PROXY_SOCKS_PORT },
                { AF_INET6, SOCK_STREAM, PROXY_TRANSPARENT_PORT },
                { AF_INET6, SOCK_DGRAM, PROXY_DNS_PORT },
        };
        for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
                int fd = listen_on(want[i].family, want[i].type, want[i].port);
                /* ::1 exists only when the kernel has IPv6; 127.0.0.1 is required. */
                if (fd < 0 && want[i].family == AF_INET6 &&
                    (fd == -EAFNOSUPPORT || fd == -EADDRNOTAVAIL))
                        continue;
                if (fd < 0)
                        return fd;
                int r = fd_send(listen_ch, fd);
                (void) close(fd);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* ---- the proxy process ---------------------------------------------------------------------- */

static int listener_kind(int fd, proxy_listener_kind *kind) {
        struct sockaddr_storage ss;
        socklen_t len = sizeof(ss);
        if (getsockname(fd, (struct sockaddr *) &ss, &len) < 0)
                return -errno;
        uint16_t port = ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *) &ss)->sin_port
                                                      : ((struct sockaddr_in6 *) &ss)->sin6_port);
        int type = 0;
        socklen_t tl = sizeof(type);
        if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) < 0)
                return -errno;
        if (type == SOCK_DGRAM && port == PROXY_DNS_PORT)
                *kind = PROXY_LISTENER_DNS;
        else if (type != SOCK_STREAM)
                return -EINVAL;
        else if (port == PROXY_HTTP_PORT)
                *kind = PROXY_LISTENER_HTTP;
        else if (port == PROXY_SOCKS_PORT)
                *kind = PROXY_LISTENER_SOCKS5;
        else if (port == PROXY_TRANSPARENT_PORT)
                *kind = PROXY_LISTENER_TRANSPARENT;
        else
                return -EINVAL;
        return 0;
}

/* Root is not needed to dial out; a proxy bug must not hand a command root's file access. */
int proxy_drop_privileges(void) {
        if (geteuid() == 0) {
                pid_t parent = getppid();
                if (setgroups(0, NULL) < 0 || setresgid(NOBODY, NOBODY, NOBODY) < 0 ||
                    setresuid(NOBODY, NOBODY, NOBODY) < 0)
                        return -errno;
                /* Changing credentials clears the parent-death signal (prctl(2)): arm it again,
                 * or a proxy started as root would outlive a launcher killed with SIGKILL — and
                 * keep the sandbox's network namespace alive through its listeners. The check
                 * covers a parent that died in between (it was armed until the setresuid). */
                if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
                        return -errno;
                if (getppid() != parent)
                        return -ESRCH;
        }
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
                return -errno;
        int r = process_disable_core_dumps();
        /* A bug in the proxy's parsers must not become the user's file access or a shell: the
         * proxy never writes a file nor executes anything. */
        return r < 0 ? r : landlock_confine_helper();
}

/* Room for many tunnels: each takes two sockets (and two pipes while its bytes move). */
void proxy_raise_nofile(void) {
        struct rlimit rl;
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
                rl.rlim_cur = rl.rlim_max;
                (void) setrlimit(RLIMIT_NOFILE, &rl);
        }
}

const policy_upstream *proxy_upstream_of(const plan *p, policy_upstream *storage) {
        if (!p->net.upstream)
                return NULL;
        if (policy_upstream_parse(p->net.upstream, storage, NULL))
                _exit(1); /* fail closed: without a proxy the command reaches nothing */
        return storage;
}

/* The TLS contexts, before the privileges go: the trust store and tls.upstreamCa files are read
 * now. A file that cannot be read fails the run (the command would otherwise find its server
 * untrusted with no word why). */
proxy_tls *proxy_build_tls(const plan *p, tls_ca *ca, int report_fd) {
        if (!ca)
                return NULL;
        proxy_tls *t = NULL;
        const char *bad = NULL;
        int r = proxy_tls_new(&t, ca, &p->net.req.upstream_ca, &bad);
        if (r < 0) {
                cordon_error e = { 0 };
                (void) cordon_set_error(&e, CORDON_LAUNCH_FAILED, -r,
                                        "TLS inspection: cannot load the trusted certificates "
                                        "of %s",
                                        bad ? bad : "the proxy");
                report_error(report_fd, &e);
                _exit(1);
        }
        return t;
}

static _noreturn_ void proxy_main(const plan *p, const egress_rules *rules, proxy_tls *tls,
                                  const cred_set *creds, int listen_ch, int report_fd) {
        int fds[PROXY_MAX_LISTENERS];
        proxy_listener_kind kinds[PROXY_MAX_LISTENERS];
        size_t n = 0;
        /* The monitor sends the listeners, then closes its end; an early close (the sandbox
         * failed to start) ends this process too. */
        while (n < PROXY_MAX_LISTENERS) {
                int fd = fd_recv(listen_ch);
                if (fd < 0)
                        break;
                if (listener_kind(fd, &kinds[n]) < 0) {
                        (void) close(fd);
                        continue;
                }
                fds[n++] = fd;
        }
        (void) close(listen_ch);
        if (n == 0)
                _exit(0);
        if (proxy_drop_privileges() < 0)
                _exit(1); /* fail closed: the command finds no proxy, so nothing leaves */
        proxy_raise_nofile();
        policy_upstream up;
        /* Validated with the policy: only memory can fail, and then nothing leaves at all. */
        req_rules *req = NULL;
        git_push *git = NULL;
        if (req_rules_new(&req, &p->net.req) < 0 || git_push_new(&git, &p->net.req.git_push) < 0)
                _exit(1);
        proxy_config cfg = { .rules = rules, .req_rules = req, .git_push = git, .hosts = p->net.hosts, .n_hosts = p->net.n_hosts,
                             .report_fd = report_fd, .wildcard_names = p->net.wildcard_names,
                             .upstream = proxy_upstream_of(p, &up), .ask = p->net.ask,
                             .ask_timeout_ms = p->net.ask_timeout_ms,
                             .per_lookup_dns_reports = p->session_ctl >= 0, .tls = tls,
                             .creds = creds };
        int r = proxy_serve(&cfg, fds, kinds, n, -1);
        _exit(r < 0 ? 1 : 0);
}

/* In the proxy process, while the monitor builds the sandbox (off the start-up's critical path).
 * Every pattern was validated when it entered the policy (policy_check_host_pattern() is
 * egress_check_pattern()), so only memory can fail here; then the run fails with the error and
 * the command, if already started, has reached nothing (there is no proxy). */
static egress_rules *build_rules(const plan *p, int report_fd) {
        egress_rules *rules = NULL;
        cordon_error e = { 0 };
        if (egress_rules_new(&rules, p->net.enabled, &p->net.allow, &p->net.deny, &e) < 0 ||
            (egress_rules_add_reasons(rules, p->net.deny_reasons, p->net.n_deny_reasons) < 0 &&
             cordon_set_error(&e, CORDON_LAUNCH_FAILED, ENOMEM, "out of memory") < 0)) {
                report_error(report_fd, &e);
                _exit(1);
        }
        return rules;
}

int proxy_prepare(proxy_channels *ch, cordon_error *err) {
        *ch = (proxy_channels){ { -1, -1 }, { -1, -1 } };
        int r;
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ch->lch) < 0) {
                r = -errno;
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, -r, "proxy: socketpair: %s",
                                        strerror(-r));
        }
        if ((r = report_channel(ch->rep)) < 0) {
                proxy_channels_close(ch);
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, -r, "proxy: socketpair: %s",
                                        strerror(-r));
        }
        return 0;
}

void proxy_channels_close(proxy_channels *ch) {
        int *fds[] = { &ch->lch[0], &ch->lch[1], &ch->rep[0], &ch->rep[1] };
        for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
                if (*fds[i] >= 0) {
                        (void) close(*fds[i]);
                        *fds[i] = -1;
                }
}

int proxy_start(const plan *p, tls_ca *ca, const cred_set *creds, proxy_channels *ch,
                proxy_proc *out, cordon_error *err) {
        *out = (proxy_proc){ .pid = -1, .listen_ch = -1, .report_fd = -1 };
        pid_t launcher = getpid();
        pid_t pid = fork();
        if (pid == 0) {
                if (process_die_with_parent(launcher) < 0 ||
                    process_close_fds_keep((int[]){ ch->lch[0], ch->rep[1] }, 2) < 0)
                        _exit(1);
                (void) prctl(PR_SET_NAME, "cordon-proxy", 0, 0, 0);
                egress_rules *rules = build_rules(p, ch->rep[1]);
                proxy_main(p, rules, proxy_build_tls(p, ca, ch->rep[1]), creds, ch->lch[0], ch->rep[1]);
        }
        int e = errno;
        (void) close(ch->lch[0]);
        (void) close(ch->rep[1]);
        ch->lch[0] = ch->rep[1] = -1;
        if (pid < 0) {
                proxy_channels_close(ch);
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, e, "proxy: fork: %s",
                                        strerror(e));
        }
        *out = (proxy_proc){ .pid = pid, .listen_ch = ch->lch[1], .report_fd = ch->rep[0] };
        ch->lch[1] = ch->rep[0] = -1;
        return 0;
}

void proxy_proc_stop(proxy_proc *pp) {
        if (pp->pid > 0) {
                (void) kill(pp->pid, SIGKILL);
                unsigned gate = fork_gate_pause();
                while (waitpid(pp->pid, NULL, 0) < 0 && errno == EINTR)
                        ;
                fork_gate_resume(gate);
        }
        if (pp->listen_ch >= 0)
                (void) close(pp->listen_ch);
        if (pp->report_fd >= 0)
                (void) close(pp->report_fd);
        *pp = (proxy_proc){ .pid = -1, .listen_ch = -1, .report_fd = -1 };
}
