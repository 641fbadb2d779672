/* SPDX-License-Identifier: Apache-2.0 */
/* The egress proxy (docs/design/network.md, docs/design/network.md): one HTTP proxy (CONNECT
 * tunnels and absolute-form http:// requests) and one SOCKS5 proxy per run, the only way out of the
 * sandbox's network namespace.
 *
 * Native backend: the launcher forks the proxy process right after the monitor (proxy_start(),
 * src/linux/launch.c); the monitor, once inside the new network namespace, creates the listening sockets on 127.0.0.1 and
 * ::1 there and hands them to the proxy over a Unix socket (proxy_listeners_send()). The proxy,
 * still in the host's network namespace, accepts on them directly: a connection from the command
 * crosses no relay process and no extra hop, and nothing outside the sandbox can reach the
 * listeners at all. Refusals go to the launcher as REPORT_NET_VIOLATION messages. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "cordon/cordon.h"
#include "plan/plan.h"

#define PROXY_HTTP_PORT 3128
#define PROXY_SOCKS_PORT 1080
#define PROXY_MAX_LISTENERS 8
#define PROXY_CRED_MAX 64

typedef enum proxy_listener_kind {
        PROXY_LISTENER_HTTP,
        PROXY_LISTENER_SOCKS5,
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
} proxy_config;

/* Serves the listeners until a fatal error or until stop_fd (if >= 0) becomes readable or hangs
 * up. Returns 0 or -errno. Takes ownership of nothing. */
int proxy_serve(const proxy_config *cfg, const int *listen_fds, const proxy_listener_kind *kinds,
                size_t n, int stop_fd);

/* ---- the native backend's proxy process ---------------------------------------------------- */

typedef struct proxy_proc {
        pid_t pid;        /* the proxy process; the launcher kills it when the run ends */
        int listen_ch;    /* for the monitor: proxy_listeners_send() */
        int report_fd;    /* for the launcher: the proxy's reports (report_read()) */
} proxy_proc;

/* Two steps, so the proxy's fork can come after the monitor's and overlap with its namespace
 * set-up: proxy_prepare() makes the channels (the monitor takes ch.lch[1]), then proxy_start()
 * forks the proxy process (it builds its rules from the plan, validated when the policy was
 * parsed, and waits for its listeners) and moves the launcher's ends into *out. */
typedef struct proxy_channels {
        int lch[2];   /* [0] the proxy's, [1] the monitor's */
        int rep[2];   /* [0] the launcher's, [1] the proxy's */
} proxy_channels;
int proxy_prepare(proxy_channels *ch, cordon_error *err);
int proxy_start(const plan *p, proxy_channels *ch, proxy_proc *out, cordon_error *err);
void proxy_channels_close(proxy_channels *ch);

/* Kills and reaps the proxy process and closes what the launcher holds. */
void proxy_proc_stop(proxy_proc *pp);

/* In the sandbox's network namespace (loopback up): creates the HTTP and SOCKS5 listeners on
 * 127.0.0.1 (and ::1 when the kernel has IPv6) and sends them over listen_ch, then closes them.
 * Returns 0 or -errno. */
int proxy_listeners_send(int listen_ch);
