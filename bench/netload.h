/* SPDX-License-Identifier: Apache-2.0 */
/*
 * netload: the egress proxy's benchmark client and its loopback server (bench/net.py). One
 * program from netload.c (the client, main), netserve.c (the server and the reference relay)
 * and this header.
 *
 *   netload serve                                  a server on 127.0.0.1 (ephemeral port)
 *   netload get     VIA HOST:PORT BYTES [verify]   one download of BYTES
 *   netload latency VIA HOST:PORT COUNT WARMUP     COUNT fresh connections, each timed
 *   netload tunnels VIA HOST:PORT COUNT PAYLOAD    COUNT concurrent tunnels, PAYLOAD echoed each
 *   netload relay   HOST:PORT                      a minimal relay to HOST:PORT (reference)
 *
 * VIA is how the client reaches HOST:PORT:
 *   direct   connect() to it (only works outside the sandbox);
 *   connect  an HTTP CONNECT tunnel through $HTTP_PROXY, then HTTP inside the tunnel;
 *   socks    a SOCKS5 CONNECT (no authentication, IPv4 address type) through $ALL_PROXY;
 *   forward  an absolute-form `GET http://HOST:PORT/...` sent to $HTTP_PROXY.
 * The proxy addresses are the ones cordon gives the command in its environment. HOST must be a
 * loopback address: this tool never talks to anything else.
 *
 * The server (one thread, epoll) speaks just enough HTTP/1.1:
 *   GET /bytes/N  200, Content-Length N, N bytes of the pattern (sendfile from a memfd)
 *   GET /tiny     200, Content-Length 2, "ok"
 *   GET /echo     no answer head: every byte after the request head is echoed back raw until
 *                 the client shuts its side down, then the server shuts down its side
 * It prints "port N" on stdout once listening and exits when its stdin reaches EOF.
 *
 * The relay is the floor of what any proxy in the path costs: it listens on 127.0.0.1 like the
 * server, connects each client to HOST:PORT and moves the bytes with blocking splice(2) through
 * a 256 KiB pipe, one thread per direction, with no parsing and no policy. The client reaches
 * it with VIA direct.
 *
 * The pattern is PATTERN_SIZE pseudo-random bytes; byte i of a download is pattern[i mod
 * PATTERN_SIZE], so the client can verify every byte it receives against its own copy.
 * Results are JSON objects, one a line, on stdout.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#define PATTERN_SIZE (4u << 20)
#define HEAD_MAX 4096
#define ECHO_BUF (16u << 10)

/* VIA_NAMED: HOST:PORT by name, resolved by the system's resolver and connected to directly, as
 * a client that knows nothing of proxies does (inside the sandbox: redirected to the proxy). */
typedef enum via { VIA_DIRECT, VIA_CONNECT, VIA_SOCKS, VIA_FORWARD, VIA_NAMED } via;

/* Where the client goes and how. */
typedef struct target {
        via v;
        const char *hostport;             /* the server, as given */
        struct sockaddr_storage server, proxy;
        socklen_t server_len, proxy_len;
} target;

__attribute__((format(printf, 1, 2))) _Noreturn void die(const char *fmt, ...);
void pattern_fill(uint8_t *p);
/* A TCP socket to the server (VIA direct) or to the proxy; connecting when nonblock. */
int dial(const target *t, bool nonblock);

int cmd_serve(void);
int cmd_relay(const target *t);
