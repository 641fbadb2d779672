/* SPDX-License-Identifier: Apache-2.0 */
/* The server side of SOCKS5 (RFC 1928) with username/password authentication (RFC 1929): strict,
 * bounded, pure parsers for the three client messages (greeting, authentication, request) and
 * builders for the three server replies. No sockets and no allocation: the caller feeds the bytes
 * received so far and sends what the builders produce.
 *
 * Each parse function takes the whole buffer received so far for that message and returns
 *   > 0  the message is complete; that many bytes were consumed (a client may send the next
 *        message in the same segment: it starts at buf + the return value);
 *   0    need more bytes (no prefix of a valid message is ever refused);
 *   < 0  refuse: the out structure says what to send before closing (see each function).
 * Checks run in byte order, so any split of the input gives the one-piece result. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define SOCKS5_VERSION 0x05
#define SOCKS5_AUTH_VERSION 0x01 /* RFC 1929 sub-negotiation version */
#define SOCKS5_CRED_MAX 255      /* ULEN / PLEN are one byte */
#define SOCKS5_REPLY_MAX 22      /* VER REP RSV ATYP + 16-byte address + port */

enum {
        SOCKS5_METHOD_NO_AUTH = 0x00,
        SOCKS5_METHOD_USERPASS = 0x02,
        SOCKS5_METHOD_NONE_ACCEPTABLE = 0xFF,
};

enum {
        SOCKS5_CMD_CONNECT = 0x01,
        SOCKS5_CMD_BIND = 0x02,
        SOCKS5_CMD_UDP_ASSOCIATE = 0x03,
};

enum {
        SOCKS5_ATYP_IPV4 = 0x01,
        SOCKS5_ATYP_DOMAIN = 0x03,
        SOCKS5_ATYP_IPV6 = 0x04,
};

/* REP codes of the request reply (RFC 1928 §6). */
enum {
        SOCKS5_REP_SUCCEEDED = 0x00,
        SOCKS5_REP_GENERAL_FAILURE = 0x01,
        SOCKS5_REP_NOT_ALLOWED = 0x02,
        SOCKS5_REP_NETWORK_UNREACHABLE = 0x03,
        SOCKS5_REP_HOST_UNREACHABLE = 0x04,
        SOCKS5_REP_CONNECTION_REFUSED = 0x05,
        SOCKS5_REP_TTL_EXPIRED = 0x06,
        SOCKS5_REP_COMMAND_NOT_SUPPORTED = 0x07,
        SOCKS5_REP_ADDRESS_NOT_SUPPORTED = 0x08,
};

/* ---- Greeting: VER NMETHODS METHODS[NMETHODS] -------------------------------------------- */

typedef struct socks5_greeting {
        uint8_t method;   /* the selected method; SOCKS5_METHOD_NONE_ACCEPTABLE on refusal */
        const char *why;  /* static phrase on refusal, NULL otherwise */
} socks5_greeting;

/* require_auth: the caller requires username/password (0x02); otherwise it accepts no
 * authentication (0x00) only. A client that does not offer that method is refused.
 * Returns > 0 with out->method selected, 0, or -EPROTO (VER is not 5, NMETHODS is 0) or -EACCES
 * (the required method is not offered). On every refusal send
 * socks5_method_reply(SOCKS5_METHOD_NONE_ACCEPTABLE) and close. */
int socks5_greeting_parse(const void *buf, size_t len, bool require_auth, socks5_greeting *out);

/* Writes the method-selection reply {5, method}. Returns 2. */
size_t socks5_method_reply(uint8_t out[2], uint8_t method);

/* ---- Username/password sub-negotiation: VER ULEN UNAME PLEN PASSWD (RFC 1929) ------------- */

typedef struct socks5_auth {
        const uint8_t *user, *pass; /* into the caller's buffer, raw bytes (not NUL-terminated) */
        size_t user_len, pass_len;  /* 1..255 each */
        const char *why;
} socks5_auth;

/* Returns > 0, 0, or -EPROTO (VER is not 1, ULEN or PLEN is 0). On refusal, or when the
 * credentials are wrong (socks5_creds_equal()), send socks5_auth_reply(false) and close. */
int socks5_auth_parse(const void *buf, size_t len, socks5_auth *out);

/* Writes the sub-negotiation reply {1, ok ? 0 : 1}. Returns 2. */
size_t socks5_auth_reply(uint8_t out[2], bool ok);

/* True when (user, pass) equals (want_user, want_pass). Both pairs are always compared in full
 * and the time taken does not depend on where the bytes differ, so a client cannot find the
 * session's credential byte by byte (timing oracle). Inputs longer than SOCKS5_CRED_MAX and NULL
 * wanted values never match. Also used for HTTP Basic credentials (http_req_creds_equal()). */
bool socks5_creds_equal(const void *user, size_t user_len, const void *pass, size_t pass_len,
                        const char *want_user, const char *want_pass);

/* ---- Request: VER CMD RSV ATYP DST.ADDR DST.PORT ------------------------------------------ */

typedef struct socks5_request {
        /* On refusal: the REP code to answer with socks5_request_reply() and a static phrase. */
        uint8_t reply;
        const char *why;

        uint8_t atyp;            /* SOCKS5_ATYP_IPV4, _DOMAIN or _IPV6 */
        /* ATYP 3: the name exactly as sent, 1..255 bytes, into the caller's buffer. It is NOT
         * checked here: NUL, control characters and any other byte are passed through as they
         * are, and the caller must canonicalise (src/util/host.h), which refuses them. Never treat
         * it as a C string (a NUL inside would cut it short: "allowed.com\0.evil"). */
        const uint8_t *domain;
        size_t domain_len;
        uint8_t addr[16];        /* ATYP 1: 4 bytes, ATYP 4: 16 bytes; network byte order */
        uint16_t port;           /* host byte order, 1..65535 */
} socks5_request;

/* Only CONNECT is accepted. Returns > 0, 0, or
 *   -EPROTO   (VER is not 5, RSV is not 0, an empty domain)       reply 0x01 general failure;
 *   -ENOTSUP  (BIND, UDP ASSOCIATE or an unknown command)          reply 0x07;
 *   -EAFNOSUPPORT (ATYP other than 1, 3, 4)                        reply 0x08;
 *   -EINVAL   (destination port 0)                                 reply 0x02.
 * On refusal send socks5_request_reply(out->reply, NULL) and close. */
int socks5_request_parse(const void *buf, size_t len, socks5_request *out);

/* Writes the request reply with REP rep and the bound address (AF_INET or AF_INET6; NULL gives
 * 0.0.0.0:0). Returns its length (10 or 22) or -EAFNOSUPPORT for another family. */
int socks5_request_reply(uint8_t out[SOCKS5_REPLY_MAX], uint8_t rep, const struct sockaddr *bound);
