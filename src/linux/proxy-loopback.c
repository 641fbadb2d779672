/* SPDX-License-Identifier: Apache-2.0 */
/* The landlock backend's proxy process: the same proxy as the native backend's (proxy-proc.c),
 * serving listeners on the host's loopback with per-run credentials (proxy-loopback.h). */
#include "linux/proxy-loopback.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>
#include <fcntl.h>

#include "linux/process.h"
#include "linux/proxy-proc.h"
#include "net/egress.h"
#include "net/git-push.h"
#include "net/req-rules.h"
#include "report/report.h"

/* 127.0.0.1, port chosen by the kernel. Loopback only: nothing off this host can connect. */
static int listen_loopback(uint16_t *ret_port) {
        _cleanup_close_ int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t len = sizeof(a);
        if (bind(fd, (struct sockaddr *) &a, sizeof(a)) < 0 || listen(fd, SOMAXCONN) < 0 ||
            getsockname(fd, (struct sockaddr *) &a, &len) < 0)
                return -errno;
        *ret_port = ntohs(a.sin_port);
        return TAKE_FD(fd);
}

static int random_hex(char *buf, size_t bytes) {
        unsigned char raw[32];
        if (bytes > sizeof(raw))
                return -EINVAL;
        for (size_t got = 0; got < bytes;) {
                ssize_t n = getrandom(raw + got, bytes - got, 0);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                got += (size_t) n;
        }
        for (size_t i = 0; i < bytes; i++)
                (void) snprintf(buf + 2 * i, 3, "%02x", raw[i]);
        explicit_bzero(raw, sizeof(raw));
        return 0;
}

/* Unguessable: a local process that does not hold them (another user's) gets 407 / SOCKS5 auth
 * failure. The user name is random too, so one run's credentials never match another's. */
static int make_credentials(proxy_loopback *lb) {
        memcpy(lb->user, "cordon-", 7);
        int r = random_hex(lb->user + 7, 8);
        return r < 0 ? r : random_hex(lb->pass, 16);
}

static _noreturn_ void serve_main(const plan *p, const egress_rules *rules, struct tls_ca *ca,
                                  const struct cred_set *creds, const int fds[2],
                                  const proxy_loopback *lb, int report_fd) {
        static const proxy_listener_kind kinds[2] = { PROXY_LISTENER_HTTP, PROXY_LISTENER_SOCKS5 };
        /* It reads the trust store's files: before the privileges go. */
        struct proxy_tls *tls = proxy_build_tls(p, ca, report_fd);
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
                             .require_auth = true, .report_fd = report_fd,
                             .wildcard_names = p->net.wildcard_names,
                             .upstream = proxy_upstream_of(p, &up), .ask = p->net.ask,
                             .ask_timeout_ms = p->net.ask_timeout_ms, .tls = tls,
                             .creds = creds };
        memcpy(cfg.user, lb->user, sizeof(cfg.user));
        memcpy(cfg.pass, lb->pass, sizeof(cfg.pass));
        int r = proxy_serve(&cfg, fds, kinds, 2, -1);
        _exit(r < 0 ? 1 : 0);
}

/* The proxy keeps exactly its two listeners and its report channel, as fds 3, 4 and 5: nothing
 * else of the caller's. */
static _noreturn_ void child_main(const plan *p, const egress_rules *rules, struct tls_ca *ca,
                                  const struct cred_set *creds, int http, int socks, int report,
                                  const proxy_loopback *lb, pid_t launcher) {
        if (process_die_with_parent(launcher) < 0)
                _exit(1);
        (void) prctl(PR_SET_NAME, "cordon-proxy", 0, 0, 0);
        int from[3] = { http, socks, report };
        for (int i = 0; i < 3; i++) /* out of the way of 3..5 first */
                if ((from[i] = fcntl(from[i], F_DUPFD_CLOEXEC, 100)) < 0)
                        _exit(1);
        for (int i = 0; i < 3; i++)
                if (dup3(from[i], 3 + i, O_CLOEXEC) < 0)
                        _exit(1);
        if (process_close_fds_keep((const int[]){ 3, 4, 5 }, 3) < 0)
                _exit(1);
        static const int fds[2] = { 3, 4 };
        serve_main(p, rules, ca, creds, fds, lb, 5);
}

int proxy_spawn_loopback(const plan *p, struct tls_ca *ca, const struct cred_set *creds,
                         proxy_proc *out, proxy_loopback *lb, cordon_error *err) {
        *out = (proxy_proc) { .pid = -1, .listen_ch = -1, .report_fd = -1 };
        *lb = (proxy_loopback) { 0 };
        egress_rules *rules = NULL;
        int r = egress_rules_new(&rules, p->net.enabled, &p->net.allow, &p->net.deny, err);
        if (r >= 0 && egress_rules_add_reasons(rules, p->net.deny_reasons, p->net.n_deny_reasons) < 0)
                r = cordon_set_error(err, CORDON_LAUNCH_FAILED, ENOMEM, "out of memory");
        if (r < 0) {
                egress_rules_free(rules);
                return r;
        }
        _cleanup_close_ int http = -1, socks = -1;
        int rep[2] = { -1, -1 };
        if ((r = make_credentials(lb)) < 0 || (r = http = listen_loopback(&lb->http_port)) < 0 ||
            (r = socks = listen_loopback(&lb->socks_port)) < 0 || (r = report_channel(rep)) < 0) {
                egress_rules_free(rules);
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, -r,
                                        "proxy: cannot listen on 127.0.0.1: %s", strerror(-r));
        }
        pid_t launcher = getpid();
        pid_t pid = fork();
        if (pid == 0)
                child_main(p, rules, ca, creds, http, socks, rep[1], lb, launcher);
        int e = errno;
        (void) close(rep[1]);
        egress_rules_free(rules);
        if (pid < 0) {
                (void) close(rep[0]);
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, e, "proxy: fork: %s",
                                        strerror(e));
        }
        *out = (proxy_proc) { .pid = pid, .listen_ch = -1, .report_fd = rep[0] };
        return 0;
}

/* ---- the command's environment -------------------------------------------------------------- */

int proxy_loopback_env(plan *p, const proxy_loopback *lb) {
        char http[2 * PROXY_CRED_MAX + 64], socks[2 * PROXY_CRED_MAX + 64];
        (void) snprintf(http, sizeof(http), "http://%s:%s@127.0.0.1:%u", lb->user, lb->pass,
                        lb->http_port);
        (void) snprintf(socks, sizeof(socks), "socks5h://%s:%s@127.0.0.1:%u", lb->user,
                        lb->pass, lb->socks_port);
        static const char *const http_vars[] = { "HTTP_PROXY", "HTTPS_PROXY", "http_proxy",
                                                 "https_proxy" };
        int r = 0;
        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(http_vars); i++)
                r = strv_env_set(&p->env, http_vars[i], http);
        if (r >= 0)
                r = strv_env_set(&p->env, "ALL_PROXY", socks);
        if (r >= 0)
                r = strv_env_set(&p->env, "all_proxy", socks);
        /* OpenBSD nc cannot present SOCKS5 or HTTP proxy credentials without a terminal, and a
         * ProxyCommand that carried them would show them to every local user in its argv: git
         * over SSH is left without a proxy (its direct connect is refused and reported). */
        (void) strv_env_unset(&p->env, "GIT_SSH_COMMAND");
        explicit_bzero(http, sizeof(http));
        explicit_bzero(socks, sizeof(socks));
        return r;
}
