/* SPDX-License-Identifier: Apache-2.0 */
/* The egress proxy (docs/design/network.md, docs/design/network.md): one HTTP proxy (CONNECT
 * tunnels and absolute-form http:// requests) and one SOCKS5 proxy per run, the only way out of the
 * sandbox's network namespace.
 *
 * This is the proxy itself: it serves listening sockets it is given and knows nothing of how it
 * was started. The processes it runs in are the backends' (src/linux/proxy-proc.h: native,
 * src/linux/proxy-loopback.h: landlock). Refusals go to the launcher as REPORT_NET_VIOLATION
 * messages (report/report.h). */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "cordon/cordon.h"
#include "policy/policy.h"
#include "policy/upstream-url.h"

#define PROXY_HTTP_PORT 3128
#define PROXY_SOCKS_PORT 1080
/* Inside the sandbox's network namespace only (src/linux/intercept.h): where the kernel sends
 * every other TCP connection, and every DNS query. */
#define PROXY_TRANSPARENT_PORT 3129
#define PROXY_DNS_PORT 53
#define PROXY_MAX_LISTENERS 12
#define PROXY_CRED_MAX 64

typedef enum proxy_listener_kind {
        PROXY_LISTENER_HTTP,
        PROXY_LISTENER_SOCKS5,
        PROXY_LISTENER_TRANSPARENT, /* TCP the sandbox's NAT rule redirected (proxy-transparent.c) */
        PROXY_LISTENER_DNS,         /* UDP: the sandbox's resolver (proxy-dns.c) */
} proxy_listener_kind;

struct egress_rules;
struct net_local_addrs;

typedef struct proxy_config {
        const struct egress_rules *rules;
        const policy_host *hosts;        /* the policy's hosts map (name → address) */
        size_t n_hosts;
        /* Listeners on the host's loopback need credentials (any local process could connect);
         * listeners inside the sandbox's network namespace are reachable from the sandbox only. */
        bool require_auth;
        char user[PROXY_CRED_MAX + 1];
        char pass[PROXY_CRED_MAX + 1];
        int report_fd;                   /* REPORT_NET_VIOLATION messages; -1: none */
        /* Distinct names one wildcard entry lets the run resolve (limits.wildcardNames); 0: no
         * budget. */
        uint64_t wildcard_names;
        /* egressUpstream: every destination the rules allow is asked of this proxy, by name,
         * and never resolved or dialled here (proxy-upstream.c); NULL: direct. */
        const policy_upstream *upstream;
        /* egressMode "ask" (docs/design/network.md, "Ask mode"): a connection to an unlisted
         * destination is held and asked about on report_fd (REPORT_EGRESS_ASK), for at most
         * ask_timeout_ms, then refused. Needs report_fd. */
        bool ask;
        uint32_t ask_timeout_ms;
        /* A warm session's proxy: each refusal of the resolver names the asking socket (its
         * endpoint and the resolver's port, as conn->client does for a connection), so the
         * session host can tell which exec asked, and it is reported per lookup rather than
         * once per name (proxy-dns.c). */
        bool per_lookup_dns_reports;
        /* egressRules (req-rules.h): judged on every request the proxy reads; NULL: none. */
        const struct req_rules *req_rules;
        /* gitPush (git-push.h): pushes to git hosts judged; NULL: none. */
        const struct git_push *git_push;
        /* TLS termination of ruled hosts (proxy-tls.h): the session CA and trust; NULL: a tunnel
         * to a ruled host is refused unless tls.passthrough names it. */
        const struct proxy_tls *tls;
        /* credentials (cred-rewrite.h): the placeholders, the secrets and their hosts; NULL:
         * none. The only copy of the secrets: this process's memory (src/linux/creds.c). */
        const struct cred_set *creds;
} proxy_config;

/* Serves the listeners until a fatal error or until stop_fd (if >= 0) becomes readable or hangs
 * up. Returns 0 or -errno. Takes ownership of nothing. */
int proxy_serve(const proxy_config *cfg, const int *listen_fds, const proxy_listener_kind *kinds,
                size_t n, int stop_fd);
