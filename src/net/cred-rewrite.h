/* SPDX-License-Identifier: Apache-2.0 */
/* Credentials in requests (docs/policy.md, "Credentials"; docs/design/network.md,
 * "Credentials"): the sandbox holds a placeholder per credential, never the secret. Pure: no
 * sockets. The proxy (src/net/proxy-request.c) hands this each request head it reads in the
 * clear, and each response chunk going back into the sandbox (src/net/proxy-tls.c).
 *
 *   - In a request to a host a credential is bound to, over TLS the proxy terminated, each
 *     placeholder of that credential becomes the secret (raw anywhere in the head, and inside
 *     "Basic" credentials, decoded and encoded again); with a header (or basic) the proxy sets
 *     that header itself, replacing the client's. Accept-Encoding becomes "identity", so that
 *     the response can be scrubbed (below).
 *   - A placeholder anywhere else (another host, plain http, a tunnel's target name) refuses
 *     the request: the client is told 403 and the credential is reported by name.
 *   - Responses: every occurrence of a secret becomes the placeholder, cut or padded with '*'
 *     to the secret's length (so Content-Length and chunk sizes stay true), across chunk
 *     boundaries: a tail that may begin a secret is held back until the bytes after it decide.
 *     A tail shorter than CRED_HOLD_MIN is passed on (holding every byte that could begin a
 *     secret would stall a response that ends in one), and remembered: a secret that began
 *     in it is masked from there on, so at most CRED_HOLD_MIN - 1 leading bytes of a secret
 *     can reach the sandbox, and only when a read ends right after them. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/egress-pattern.h"
#include "policy/policy.h"
#include "util/host.h"

#define CRED_PLACEHOLDER_PREFIX "cordon-cred-"
#define CRED_PLACEHOLDER_HEX 32
#define CRED_PLACEHOLDER_LEN (sizeof(CRED_PLACEHOLDER_PREFIX) - 1 + CRED_PLACEHOLDER_HEX)
#define CRED_VALUE_MAX 16384
#define CRED_HOLD_MIN 4
/* A rewritten head never grows past this (the client's head is at most HTTP_HEAD_MAX). */
#define CRED_HEAD_MAX (64 * 1024)

typedef struct cred {
        const char *name;    /* the variable of the placeholder: what reports name */
        const char *secret;  /* the store's name of the secret, or the broker's (messages) */
        bool brokered;       /* issued by a credential broker for this run */
        const char *header;  /* NULL, or the header the proxy sets */
        const char *format;  /* with header: "{}" is the secret; NULL: "{}" */
        const char *basic;   /* NULL, or basic auth's user */
        char placeholder[CRED_PLACEHOLDER_LEN + 1];
        char *value;         /* the secret (owned, wiped when freed); NULL until set */
        size_t value_len;
        egress_pattern *hosts;
        size_t n_hosts;
} cred;

/* Immutable once the values are set: shared by every connection of the proxy. The strings
 * point into the policy data `q` given to cred_set_new, which must outlive the set. */
typedef struct cred_set {
        cred *v;
        size_t n;
} cred_set;

/* One entry per credential of q, hosts parsed, no placeholder or value yet. *out NULL when q
 * has none. 0, -ENOMEM, or -EINVAL (a host pattern that no longer parses). */
int cred_set_new(cred_set **out, const policy_req *q);
/* Wipes every value and frees the set (NULL: nothing). */
void cred_set_free(cred_set *s);
/* Sets entry i's placeholder ("cordon-cred-" and 32 lower-case hex digits of the 16 random
 * bytes given) and a copy of its value. -EINVAL when the value cannot go into a header
 * (empty, longer than CRED_VALUE_MAX, or a byte outside visible ASCII and obs-text: a line
 * break would let it write headers of its own), -ENOMEM. */
int cred_set_value(cred_set *s, size_t i, const uint8_t random[16], const char *value,
                   size_t len);

bool cred_bound(const cred *c, const net_host *h, uint16_t port);
/* Whether some credential is bound to h:port (its HTTPS must be terminated). */
bool cred_set_binds(const cred_set *s, const net_host *h, uint16_t port);
/* The credential one of whose placeholders buf[0..len) holds (raw, or in the base64 of a
 * "Basic" credential), or NULL. */
const cred *cred_find_placeholder(const cred_set *s, const char *buf, size_t len);

/* The request head head[0..len) (request line through the final CRLF CRLF, as a parser
 * accepted it) to h:port; `tls`: it goes over TLS the proxy verified.
 * Returns 0: send it unchanged (*out NULL); 1: send *out[0..*out_len) instead (malloc'ed; it
 * holds secrets: the caller wipes it, cred_head_free); -EACCES: refuse it, *offender is the
 * credential whose placeholder it carries where it may not go; -EINVAL: a head to be rewritten
 * has no request line or does not end in CRLF CRLF; -ENOMEM; -E2BIG. */
int cred_rewrite_head(const cred_set *s, const net_host *h, uint16_t port, bool tls,
                      const char *head, size_t len, char **out, size_t *out_len,
                      const cred **offender);
void cred_head_free(char *head, size_t len);

/* The response side's state: the held-back tail (one per connection). */
typedef struct cred_scrub {
        char *hold;
        size_t held;
        /* The last bytes that went out (a secret that began in them is masked from there on). */
        char ctx[CRED_HOLD_MIN - 1];
        size_t ctx_len;
} cred_scrub;

/* Scrubs in[0..len) after the held tail: *out (malloc'ed, *out_len bytes, maybe 0) is what may
 * go to the client now; a new tail is held. 0 or -ENOMEM. */
int cred_scrub_feed(const cred_set *s, cred_scrub *st, const char *in, size_t len, char **out,
                    size_t *out_len);
/* The stream ended: the held tail goes out as it is (it is no whole secret). Returns the tail's
 * length; *out points into st until cred_scrub_done. */
size_t cred_scrub_flush(cred_scrub *st, const char **out);
void cred_scrub_done(cred_scrub *st);
