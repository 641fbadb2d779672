/* SPDX-License-Identifier: Apache-2.0 */
/* The landlock backend's egress proxy (docs/design/landlock-backend.md): without a network
 * namespace the proxy cannot be the only thing on the command's loopback, so it listens on the
 * host's 127.0.0.1, on two ephemeral ports, and every request must carry this run's random
 * credentials (HTTP Proxy-Authorization Basic, SOCKS5 RFC 1929): any local process can connect
 * to a loopback port, and another user's process must not borrow the run's egress. Landlock
 * lets the command connect to these two ports only, and the supervisor to 127.0.0.1 only. */
#pragma once

#include <stdint.h>

#include "linux/proxy-proc.h"

typedef struct proxy_loopback {
        uint16_t http_port;
        uint16_t socks_port;
        char user[PROXY_CRED_MAX + 1]; /* "cordon-" + 16 hex digits */
        char pass[PROXY_CRED_MAX + 1]; /* 32 hex digits: 128 bits from getrandom() */
} proxy_loopback;

/* Validates the plan's egress rules (CORDON_POLICY_INVALID on a bad pattern), creates the two
 * listeners here (so their ports are known before the command's environment is written) and
 * forks the proxy process, which serves them with require_auth. `out` as for proxy_spawn()
 * (listen_ch is -1: nothing to send); stop it with proxy_proc_stop(). ca: TLS inspection's
 * session CA, which the proxy process terminates ruled hosts with (the caller still owns and
 * frees its copy); NULL: none. creds: the run's credentials (creds.h), which only the proxy
 * process puts into requests (the caller still owns and wipes its copy); NULL: none. */
struct tls_ca;
int proxy_spawn_loopback(const plan *p, struct tls_ca *ca, const struct cred_set *creds,
                         proxy_proc *out, proxy_loopback *ret, cordon_error *err);

/* Replaces the proxy variables of p->env (set by plan_build for the native backend's fixed
 * in-namespace ports) with URLs carrying this run's ports and credentials, e.g.
 * HTTP_PROXY=http://cordon-…:…@127.0.0.1:PORT, ALL_PROXY=socks5h://…@127.0.0.1:PORT, and
 * GIT_SSH_COMMAND through socat's HTTP CONNECT client, which can send credentials (OpenBSD nc
 * cannot, non-interactively). 0 or -ENOMEM. */
int proxy_loopback_env(plan *p, const proxy_loopback *lb);
