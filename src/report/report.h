/* SPDX-License-Identifier: Apache-2.0 */
/* The report channel: how the sandbox's setup processes (monitor, init, command before exec) tell
 * the launching process what happened, so a launch fails synchronously with a real error code. It
 * is a SOCK_SEQPACKET socketpair, so each message is one record that never interleaves with another
 * process's, and it is close-on-exec: a successful exec closes the command's copy.
 *
 * Its own layer, below the Linux backend (which reads the channel) and the egress proxy (which
 * writes its refusals to it): neither includes the other for it. */
#pragma once

#include <limits.h>
#include <stdint.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "util/util.h"

typedef enum report_type {
        REPORT_FATAL = 1,     /* setup failed: code, sys_errno, text */
        REPORT_CHILD_STATUS,  /* the command's raw wait status in `status` */
        REPORT_VIOLATION,     /* a supervisor's refusal: text = "syscall\0path\0rule" and
                               * optionally "action\0" (default file-create-name); `status`: the
                               * count of an aggregate (0: one refusal) */
        REPORT_READY,         /* the command is about to be executed */
        REPORT_NET_VIOLATION, /* an egress refusal: text = "protocol\0host:port\0rule" and
                               * optionally "client\0": the connection as report_conn_key()
                               * names it (a warm session attributes by it), then optionally
                               * "reason\0": the deny entry's (policy-reasons.c) */
        REPORT_CONNECTION,    /* a warm session's supervisor connected a socket to the proxy:
                               * `sid` = the caller's session id, text = "client\0" (the
                               * connection, report_conn_key()) */
        REPORT_STARTED,       /* sent by the command's own process just before exec: the kernel
                               * names the sender to the launcher (report_read_sender()), which
                               * learns the command's pid and a pidfd for it in its own PID
                               * namespace (cordon_process_signal) */
        /* The egress ask mode (docs/design/network.md, "Ask mode"), on the proxy's channel only,
         * which is a socketpair both ends write: */
        REPORT_EGRESS_ASK,    /* proxy → launcher: a held connection to an unlisted
                               * destination. `status` = the question's id, `code` = how long
                               * the proxy waits (ms), text = "protocol\0host:port\0client\0" */
        REPORT_EGRESS_ANSWER, /* launcher → proxy: `status` = the id, `code` = the answer
                               * (report_ask_answer) */
        REPORT_EGRESS_DECIDED,/* proxy → launcher: what the question came to, the one record
                               * the events are written from: `status` = the id, `code` = the
                               * outcome (report_ask_answer), text as REPORT_EGRESS_ASK's */
} report_type;

/* An answer (REPORT_EGRESS_ANSWER) and an outcome (REPORT_EGRESS_DECIDED). The first three are
 * cordon_egress_answer's values. */
typedef enum report_ask_answer {
        REPORT_ASK_DENY = 0,
        REPORT_ASK_ALLOW_ONCE = 1,
        REPORT_ASK_ALLOW_SESSION = 2,
        REPORT_ASK_TIMEOUT = 3,    /* outcome only: no answer in time, refused */
        REPORT_ASK_UNANSWERED = 4, /* the launcher has nobody to ask: refused at once */
} report_ask_answer;

typedef struct report_msg {
        uint32_t type;
        int32_t code;
        int32_t sys_errno;
        int32_t status;
        int32_t sid;          /* REPORT_VIOLATION, REPORT_CONNECTION: the caller's session id in
                               * the sandbox's PID namespace, 0 when unknown
                               * (supervisor_report.sid) */
        uint32_t text_len;
        char text[3072];
} report_msg;

_Static_assert(sizeof(report_msg) <= 4096, "report messages stay small");

/* A connected pair: [0] for the launcher to read, [1] for the sandbox side. */
int report_channel(int fds[2]);

/* Sends a failure; usable after fork (no allocation, async-signal-safe apart from vsnprintf). */
void report_fatal(int fd, cordon_code code, int sys_errno, const char *fmt, ...) _printf_(4, 5);
/* Forwards a cordon_error filled by a library function. */
void report_error(int fd, const cordon_error *err);
void report_child_status(int fd, int wait_status);
void report_ready(int fd);
void report_command_started(int fd);
void report_violation(int fd, const char *syscall, const char *path, const char *rule);
/* Any action the supervisor reports ("file-create-name", "syscall", "network-outbound"), with the
 * count of an aggregate (0 or 1: one refusal) and the caller's session id (0: unknown). */
void report_violation_action(int fd, const char *action, const char *syscall, const char *target,
                             const char *rule, uint64_t count, pid_t sid);
/* `client`: the connection (report_conn_key()), NULL or "" when unknown. */
void report_net_violation(int fd, const char *proto, const char *target, const char *rule,
                          const char *client, const char *reason);
/* A request refused by a request rule (src/net/req-rules.h): a network-request violation with
 * the request's method and path (cut at 1000 bytes); same record as report_net_violation(). */
void report_request_violation(int fd, const char *proto, const char *target, const char *rule,
                              const char *client, const char *reason, const char *method,
                              const char *path);
/* A push the git push gateway refused (src/net/proxy-git.c): a network-request violation with
 * the refused ref ("" when the refusal names none). */
void report_git_violation(int fd, const char *proto, const char *target, const char *rule,
                          const char *client, const char *method, const char *path,
                          const char *ref);
void report_connection(int fd, pid_t sid, const char *client);
/* The ask mode's three records (above). */
void report_egress_ask(int fd, uint32_t id, uint32_t timeout_ms, const char *proto,
                       const char *target, const char *client);
void report_egress_answer(int fd, uint32_t id, report_ask_answer answer);
void report_egress_decided(int fd, uint32_t id, report_ask_answer outcome, const char *proto,
                           const char *target, const char *client);
/* The question a REPORT_EGRESS_ASK or REPORT_EGRESS_DECIDED message carries (strings point into
 * m->text). False for other messages. */
typedef struct report_ask {
        uint32_t id;
        int32_t value;        /* ASK: the timeout in ms; DECIDED: the outcome */
        const char *proto, *target, *client;
} report_ask;
bool report_msg_ask(const report_msg *m, report_ask *a);
/* An outcome's name in the "egress.answer" event: "allow-once", "allow-session", "timeout",
 * "unanswered"; anything else "deny". */
const char *report_ask_outcome_name(int32_t outcome);

/* "127.0.0.1:41234" or "[::1]:41234", the one spelling both ends of a connection use for it:
 * an IPv4-mapped IPv6 address is written as IPv4 (an AF_INET6 client connecting to
 * ::ffff:127.0.0.1 is an IPv4 peer to the proxy). "" for another family. */
#define REPORT_ENDPOINT_MAX 64
void report_endpoint(const struct sockaddr *sa, socklen_t len, char buf[static REPORT_ENDPOINT_MAX]);
/* A connection to the proxy as both ends name it: the client's endpoint and the proxy's port,
 * "127.0.0.1:41234>3128" — the 4-tuple (the proxy listens on loopback only), which the kernel
 * keeps unique among live connections; a client endpoint alone is not (one bound with
 * SO_REUSEADDR may reach both proxy ports). "" when the address has no spelling. */
void report_conn_key(const struct sockaddr *client, socklen_t len, uint16_t server_port,
                     char buf[static REPORT_ENDPOINT_MAX]);

/* The violation a REPORT_VIOLATION or REPORT_NET_VIOLATION message carries (strings point into
 * m->text). False for other messages. */
bool report_msg_violation(const report_msg *m, cordon_violation *v);
/* The connection a REPORT_NET_VIOLATION or REPORT_CONNECTION message names, "" if none. */
const char *report_msg_client(const report_msg *m);

/* Reads one message; returns 1 on a message, 0 on EOF, -errno on error. */
int report_read(int fd, report_msg *msg);

/* The launcher's end asks the kernel to name each message's sending process: its pid
 * (SO_PASSCRED) and, where the kernel has it (SO_PASSPIDFD, Linux 6.5+), a pidfd. Turned on only
 * until the command's REPORT_STARTED has been read (report_sender_off()): the messages after it
 * need no sender. Returns 0 or -errno. */
int report_sender_on(int fd);
void report_sender_off(int fd);

/* report_read() that also returns the sender report_sender_on() asked for: *ret_pidfd (the
 * caller's to close; -1 without SO_PASSPIDFD) and *ret_pid (the pid in the reader's PID
 * namespace; 0 when the kernel named no sender). */
int report_read_sender(int fd, report_msg *msg, int *ret_pidfd, pid_t *ret_pid);
