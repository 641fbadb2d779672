/* SPDX-License-Identifier: Apache-2.0 */
#include "report/report.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util/uapi.h"

int report_channel(int fds[2]) {
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) < 0)
                return -errno;
        return 0;
}

static void report_send(int fd, report_msg *m) {
        size_t len = offsetof(report_msg, text) + m->text_len;
        /* A failed report cannot be reported; the launcher then sees EOF without a status and
         * fails closed with LAUNCH_FAILED. */
        (void) write_all(fd, m, len);
}

void report_fatal(int fd, cordon_code code, int sys_errno, const char *fmt, ...) {
        report_msg m = { .type = REPORT_FATAL, .code = code, .sys_errno = sys_errno };
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(m.text, sizeof(m.text), fmt, ap);
        va_end(ap);
        m.text_len = n < 0 ? 0 : (size_t) n >= sizeof(m.text) ? sizeof(m.text) - 1 : (uint32_t) n;
        report_send(fd, &m);
}

void report_error(int fd, const cordon_error *err) {
        report_fatal(fd, err->code, err->sys_errno, "%s", err->message);
}

void report_child_status(int fd, int wait_status) {
        report_msg m = { .type = REPORT_CHILD_STATUS, .status = wait_status };
        report_send(fd, &m);
}

void report_ready(int fd) {
        report_msg m = { .type = REPORT_READY };
        report_send(fd, &m);
}

void report_command_started(int fd) {
        report_msg m = { .type = REPORT_STARTED };
        report_send(fd, &m);
}

/* NUL-separated strings into one record's text (each at most 1000 bytes; what does not fit is
 * cut), then sent. */
static void report_send_strings(int fd, report_msg *m, const char *const *parts, size_t n) {
        size_t o = 0;
        for (size_t i = 0; i < n; i++) {
                const char *p = parts[i] ? parts[i] : "";
                size_t l = strnlen(p, 1000);
                if (o + l + 1 > sizeof(m->text))
                        break;
                memcpy(m->text + o, p, l);
                o += l;
                m->text[o++] = '\0';
        }
        m->text_len = (uint32_t) o;
        report_send(fd, m);
}

static void report_strings(int fd, report_type type, int32_t status, int32_t sid,
                           const char *const *parts, size_t n) {
        report_msg m = { .type = type, .status = status, .sid = sid };
        report_send_strings(fd, &m, parts, n);
}

void report_violation(int fd, const char *syscall, const char *path, const char *rule) {
        report_strings(fd, REPORT_VIOLATION, 0, 0, (const char *[]){ syscall, path, rule }, 3);
}

void report_net_violation(int fd, const char *proto, const char *target, const char *rule,
                          const char *client, const char *reason) {
        bool why = reason && *reason;
        report_strings(fd, REPORT_NET_VIOLATION, 0, 0,
                       (const char *[]){ proto, target, rule, client ? client : "", reason },
                       why ? 5 : client && *client ? 4 : 3);
}

void report_request_violation(int fd, const char *proto, const char *target, const char *rule,
                              const char *client, const char *reason, const char *method,
                              const char *path) {
        report_strings(fd, REPORT_NET_VIOLATION, 0, 0,
                       (const char *[]){ proto, target, rule, client ? client : "",
                                         reason ? reason : "", method, path },
                       7);
}

void report_git_violation(int fd, const char *proto, const char *target, const char *rule,
                          const char *client, const char *method, const char *path,
                          const char *ref) {
        report_strings(fd, REPORT_NET_VIOLATION, 0, 0,
                       (const char *[]){ proto, target, rule, client ? client : "", "", method,
                                         path, ref },
                       8);
}

void report_connection(int fd, pid_t sid, const char *client) {
        report_strings(fd, REPORT_CONNECTION, 0, sid, (const char *[]){ client }, 1);
}

void report_egress_ask(int fd, uint32_t id, uint32_t timeout_ms, const char *proto,
                       const char *target, const char *client) {
        report_msg m = { .type = REPORT_EGRESS_ASK, .code = (int32_t) timeout_ms,
                         .status = (int32_t) id };
        report_send_strings(fd, &m, (const char *[]){ proto, target, client }, 3);
}

void report_egress_answer(int fd, uint32_t id, report_ask_answer answer) {
        report_msg m = { .type = REPORT_EGRESS_ANSWER, .code = (int32_t) answer,
                         .status = (int32_t) id };
        report_send(fd, &m);
}

void report_egress_decided(int fd, uint32_t id, report_ask_answer outcome, const char *proto,
                           const char *target, const char *client) {
        report_msg m = { .type = REPORT_EGRESS_DECIDED, .code = (int32_t) outcome,
                         .status = (int32_t) id };
        report_send_strings(fd, &m, (const char *[]){ proto, target, client }, 3);
}

const char *report_ask_outcome_name(int32_t outcome) {
        switch ((report_ask_answer) outcome) {
        case REPORT_ASK_ALLOW_ONCE:
                return "allow-once";
        case REPORT_ASK_ALLOW_SESSION:
                return "allow-session";
        case REPORT_ASK_TIMEOUT:
                return "timeout";
        case REPORT_ASK_UNANSWERED:
                return "unanswered";
        case REPORT_ASK_DENY:
        default:
                return "deny";
        }
}

bool report_msg_ask(const report_msg *m, report_ask *a) {
        if (m->type != REPORT_EGRESS_ASK && m->type != REPORT_EGRESS_DECIDED)
                return false;
        const char *parts[3] = { "", "", "" };
        size_t o = 0;
        for (size_t i = 0; i < ELEMENTSOF(parts) && o < m->text_len; i++) {
                parts[i] = m->text + o;
                o += strnlen(m->text + o, m->text_len - o) + 1;
        }
        *a = (report_ask){ .id = (uint32_t) m->status, .value = m->code, .proto = parts[0],
                           .target = parts[1], .client = parts[2] };
        return true;
}

void report_endpoint(const struct sockaddr *sa, socklen_t len, char buf[static REPORT_ENDPOINT_MAX]) {
        char a[INET6_ADDRSTRLEN] = "";
        buf[0] = '\0';
        if (sa->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
                const struct sockaddr_in *in = (const struct sockaddr_in *) sa;
                if (inet_ntop(AF_INET, &in->sin_addr, a, sizeof(a)))
                        (void) snprintf(buf, REPORT_ENDPOINT_MAX, "%s:%u", a, ntohs(in->sin_port));
        } else if (sa->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
                const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *) sa;
                bool mapped = IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr);
                if (inet_ntop(mapped ? AF_INET : AF_INET6,
                              mapped ? (const void *) &in6->sin6_addr.s6_addr[12]
                                     : (const void *) &in6->sin6_addr,
                              a, sizeof(a)))
                        (void) snprintf(buf, REPORT_ENDPOINT_MAX, mapped ? "%s:%u" : "[%s]:%u", a,
                                        ntohs(in6->sin6_port));
        }
}

void report_violation_action(int fd, const char *action, const char *syscall, const char *target,
                             const char *rule, uint64_t count, pid_t sid) {
        report_strings(fd, REPORT_VIOLATION, count > INT32_MAX ? INT32_MAX : (int32_t) count, sid,
                       (const char *[]){ syscall, target, rule, action }, 4);
}

bool report_msg_violation(const report_msg *m, cordon_violation *v) {
        if (m->type != REPORT_VIOLATION && m->type != REPORT_NET_VIOLATION)
                return false;
        /* "syscall\0target\0rule\0[action\0]" (the proxy: "protocol\0host:port\0rule\0"
         * [client\0[reason\0[method\0path\0[ref\0]]]]). */
        const char *parts[8] = { "", "", "", "", "", "", "", "" };
        size_t o = 0;
        for (size_t i = 0; i < ELEMENTSOF(parts) && o < m->text_len; i++) {
                parts[i] = m->text + o;
                o += strnlen(m->text + o, m->text_len - o) + 1;
        }
        *v = (cordon_violation){ .syscall = parts[0], .target = parts[1], .rule = parts[2],
                                 .count = m->status > 1 ? (uint64_t) m->status : 1 };
        bool net = m->type == REPORT_NET_VIOLATION;
        bool request = net && parts[5][0];
        v->action = request ? "network-request"
                    : net   ? "network-outbound"
                    : parts[3][0] ? parts[3] : "file-create-name";
        v->reason = net && parts[4][0] ? parts[4] : NULL;
        v->method = request ? parts[5] : NULL;
        v->path = request ? parts[6] : NULL;
        v->ref = request && parts[7][0] ? parts[7] : NULL;
        return true;
}

void report_conn_key(const struct sockaddr *client, socklen_t len, uint16_t server_port,
                     char buf[static REPORT_ENDPOINT_MAX]) {
        char ep[REPORT_ENDPOINT_MAX];
        report_endpoint(client, len, ep);
        buf[0] = '\0';
        if (ep[0])
                (void) snprintf(buf, REPORT_ENDPOINT_MAX, "%.*s>%u", REPORT_ENDPOINT_MAX - 8, ep,
                                (unsigned) server_port);
}

const char *report_msg_client(const report_msg *m) {
        size_t skip = m->type == REPORT_NET_VIOLATION ? 3 : m->type == REPORT_CONNECTION ? 0 : SIZE_MAX;
        size_t o = 0;
        for (size_t i = 0; i < skip && o < m->text_len; i++)
                o += strnlen(m->text + o, m->text_len - o) + 1;
        return skip != SIZE_MAX && o < m->text_len ? m->text + o : "";
}

/* A message's length as read: 1 when it is well-formed (and NUL-terminates its text), else
 * -EBADMSG. */
static int report_check(report_msg *msg, ssize_t n) {
        if ((size_t) n < offsetof(report_msg, text) ||
            msg->text_len != (size_t) n - offsetof(report_msg, text) ||
            msg->text_len >= sizeof(msg->text))
                return -EBADMSG;
        msg->text[msg->text_len] = '\0';
        return 1;
}

int report_read(int fd, report_msg *msg) {
        memset(msg, 0, sizeof(*msg));
        /* SOCK_SEQPACKET: one read returns exactly one record. */
        ssize_t n;
        do
                n = read(fd, msg, sizeof(*msg));
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return -errno;
        if (n == 0)
                return 0;
        return report_check(msg, n);
}

int report_sender_on(int fd) {
        int one = 1;
        if (setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) < 0)
                return -errno;
        /* A pidfd names the process itself: a pid could be reused once the command has exited
         * and been reaped, and a signal meant for it would reach a stranger. Older kernels
         * (ENOPROTOOPT) name the pid alone. */
        (void) setsockopt(fd, SOL_SOCKET, SO_PASSPIDFD, &one, sizeof(one));
        return 0;
}

void report_sender_off(int fd) {
        int zero = 0;
        (void) setsockopt(fd, SOL_SOCKET, SO_PASSPIDFD, &zero, sizeof(zero));
        (void) setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &zero, sizeof(zero));
}

/* The sender's pidfd and pid from the ancillary data; every passed fd is taken (none leaks). */
static void sender_from_cmsgs(struct msghdr *mh, int *ret_pidfd, pid_t *ret_pid) {
        for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
                if (c->cmsg_level != SOL_SOCKET)
                        continue;
                if (c->cmsg_type == SCM_CREDENTIALS &&
                    c->cmsg_len >= CMSG_LEN(sizeof(struct ucred))) {
                        struct ucred uc;
                        memcpy(&uc, CMSG_DATA(c), sizeof(uc));
                        *ret_pid = uc.pid;
                } else if ((c->cmsg_type == SCM_PIDFD || c->cmsg_type == SCM_RIGHTS) &&
                           c->cmsg_len >= CMSG_LEN(sizeof(int))) {
                        size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                        for (size_t i = 0; i < n; i++) {
                                int fd;
                                memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(fd));
                                if (c->cmsg_type == SCM_PIDFD && *ret_pidfd < 0)
                                        *ret_pidfd = fd;
                                else
                                        (void) close(fd);
                        }
                }
        }
}

int report_read_sender(int fd, report_msg *msg, int *ret_pidfd, pid_t *ret_pid) {
        memset(msg, 0, sizeof(*msg));
        *ret_pidfd = -1;
        *ret_pid = 0;
        union {
                char buf[CMSG_SPACE(sizeof(struct ucred)) + CMSG_SPACE(sizeof(int) * 4)];
                struct cmsghdr align;
        } ctl;
        struct iovec iov = { .iov_base = msg, .iov_len = sizeof(*msg) };
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
                             .msg_controllen = sizeof(ctl.buf) };
        ssize_t n;
        do
                n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return -errno;
        sender_from_cmsgs(&mh, ret_pidfd, ret_pid);
        if (n == 0)
                return 0;
        return report_check(msg, n);
}
