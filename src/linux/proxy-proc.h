/* SPDX-License-Identifier: Apache-2.0 */
/* The native backend's egress proxy process (docs/design/network.md). The proxy itself is
 * src/net/ (proxy_serve()); starting, confining and stopping the process it runs in is the
 * backend's.
 *
 * The launcher forks the proxy process right after the monitor (proxy_start(), launch.c); the
 * monitor, once
 * inside the new network namespace, creates the listening sockets on 127.0.0.1 and ::1 there and
 * hands them to the proxy over a Unix socket (proxy_listeners_send()). The proxy, still in the
 * host's network namespace, accepts on them directly: a connection from the command crosses no
 * relay process and no extra hop, and nothing outside the sandbox can reach the listeners at
 * all. Refusals go to the launcher as REPORT_NET_VIOLATION messages. */
#pragma once

#include <sys/types.h>

#include "cordon/cordon.h"
#include "net/proxy.h"
#include "plan/plan.h"

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
/* ca: TLS inspection's session CA (tls-bundle.h) the proxy terminates ruled hosts with; NULL:
 * none (their tunnels are refused unless tls.passthrough names them). */
struct tls_ca;
struct cred_set;
int proxy_start(const plan *p, struct tls_ca *ca, const struct cred_set *creds,
                proxy_channels *ch, proxy_proc *out,
                cordon_error *err);
void proxy_channels_close(proxy_channels *ch);

/* Kills and reaps the proxy process and closes what the launcher holds. */
void proxy_proc_stop(proxy_proc *pp);

/* In the sandbox's network namespace (loopback up): creates the HTTP and SOCKS5 listeners on
 * 127.0.0.1 (and ::1 when the kernel has IPv6) and sends them over listen_ch, then closes them.
 * Returns 0 or -errno. */
int proxy_listeners_send(int listen_ch);

/* For the proxy process (also the landlock backend's, proxy-loopback.c): gives up root (to
 * nobody), sets no_new_privs, non-dumpable, no core dumps, and confines it with Landlock (no
 * writes, no exec). 0 or -errno. */
int proxy_drop_privileges(void);
/* RLIMIT_NOFILE soft limit raised to the hard limit. */
void proxy_raise_nofile(void);
/* The plan's egressUpstream parsed into *storage, for proxy_config.upstream: NULL when the plan
 * has none. A URL that does not parse (it was validated when it entered the policy, so only a
 * bug gets here) ends the process: the proxy must not go direct where the policy says every
 * connection goes through the upstream. */
const policy_upstream *proxy_upstream_of(const plan *p, policy_upstream *storage);
/* In the proxy process, before proxy_drop_privileges(): the TLS contexts of inspection around
 * the session CA (taking it over), the system trust store and tls.upstreamCa files read now;
 * NULL when ca is NULL. A file that cannot be read is reported over report_fd and ends the
 * process (the run fails: its command would otherwise find its server untrusted with no word
 * why). */
struct proxy_tls *proxy_build_tls(const plan *p, struct tls_ca *ca, int report_fd);
