/* SPDX-License-Identifier: Apache-2.0 */
#include "report/report.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <sys/socket.h>

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

/* NUL-separated strings in one record (each at most 1000 bytes; what does not fit is cut). */
static void report_strings(int fd, report_type type, int32_t status, int32_t sid,
                           const char *const *parts, size_t n) {
        report_msg m = { .type = type, .status = status, .sid = sid };
        size_t o = 0;
        for (size_t i = 0; i < n; i++) {
                const char *p = parts[i] ? parts[i] : "";
                size_t l = strnlen(p, 1000);
                if (o + l + 1 > sizeof(m.text))
                        break;
                memcpy(m.text + o, p, l);
                o += l;
                m.text[o++] = '\0';
        }
        m.text_len = (uint32_t) o;
        report_send(fd, &m);
}

void report_violation(int fd, const char *syscall, const char *path, const char *rule) {
        report_strings(fd, REPORT_VIOLATION, 0, 0, (const char *[]){ syscall, path, rule }, 3);
}

void report_net_violation(int fd, const char *proto, const char *target, const char *rule,
                          const char *client) {
        report_strings(fd, REPORT_NET_VIOLATION, 0, 0,
                       (const char *[]){ proto, target, rule, client }, client && *client ? 4 : 3);
}

void report_connection(int fd, pid_t sid, const char *client) {
        report_strings(fd, REPORT_CONNECTION, 0, sid, (const char *[]){ client }, 1);
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
        /* "syscall\0target\0rule\0[action\0]" (the proxy: "protocol\0host:port\0rule\0"). */
        const char *parts[4] = { "", "", "", "" };
        size_t o = 0;
        for (size_t i = 0; i < ELEMENTSOF(parts) && o < m->text_len; i++) {
                parts[i] = m->text + o;
                o += strnlen(m->text + o, m->text_len - o) + 1;
        }
        *v = (cordon_violation){ .syscall = parts[0], .target = parts[1], .rule = parts[2],
                                 .count = m->status > 1 ? (uint64_t) m->status : 1 };
        v->action = m->type == REPORT_NET_VIOLATION ? "network-outbound"
                    : parts[3][0]                   ? parts[3]
                                                    : "file-create-name";
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
        if ((size_t) n < offsetof(report_msg, text) ||
            msg->text_len != (size_t) n - offsetof(report_msg, text) ||
            msg->text_len >= sizeof(msg->text))
                return -EBADMSG;
        msg->text[msg->text_len] = '\0';
        return 1;
}
