/* SPDX-License-Identifier: Apache-2.0 */
#include "linux/tls-bundle.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "linux/mount.h"
#include "net/proxy-tls.h"
#include "net/tls-ca.h"

#define TLS_BUNDLE_SYSTEM_MAX (8 * 1024 * 1024)

/* The system bundle with the session CA's PEM after it, NUL-terminated. */
static int merge(const char *ca_pem, char **ret) {
        int fd = open(PROXY_TLS_SYSTEM_BUNDLE, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        size_t cap = 256 * 1024, len = 0, extra = strlen(ca_pem) + 2;
        char *buf = malloc(cap + extra);
        int r = buf ? 0 : -ENOMEM;
        while (r == 0) {
                if (len == cap) {
                        char *n = cap < TLS_BUNDLE_SYSTEM_MAX ? realloc(buf, cap * 2 + extra) : NULL;
                        if (!n) {
                                r = cap < TLS_BUNDLE_SYSTEM_MAX ? -ENOMEM : -EFBIG;
                                break;
                        }
                        buf = n;
                        cap *= 2;
                }
                ssize_t k = read(fd, buf + len, cap - len);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        r = -errno;
                else if (k == 0)
                        break;
                else
                        len += (size_t) k;
        }
        (void) close(fd);
        if (r < 0) {
                free(buf);
                return r;
        }
        if (len > 0 && buf[len - 1] != '\n')
                buf[len++] = '\n';
        memcpy(buf + len, ca_pem, extra - 1);
        *ret = buf;
        return 0;
}

int tls_bundle_prepare(plan *p, struct tls_ca **ret, cordon_error *err) {
        *ret = NULL;
        free(p->net.ca_bundle);
        p->net.ca_bundle = NULL;
        if (!policy_req_terminates(&p->net.req))
                return 0;
        char label[32], *pem = NULL;
        (void) snprintf(label, sizeof(label), "pid %ld", (long) getpid());
        tls_ca *ca = NULL;
        int r = tls_ca_new(&ca, label);
        if (r >= 0)
                r = tls_ca_pem(ca, &pem);
        if (r < 0) {
                tls_ca_free(ca);
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, -r,
                                        "TLS inspection: cannot make the session CA: %s",
                                        strerror(-r));
        }
        r = merge(pem, &p->net.ca_bundle);
        free(pem);
        if (r < 0) {
                tls_ca_free(ca);
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, -r,
                                        "TLS inspection: cannot read the system trust store %s: %s",
                                        PROXY_TLS_SYSTEM_BUNDLE, strerror(-r));
        }
        *ret = ca;
        return 0;
}

void tls_bundle_drop(struct tls_ca **ca) {
        tls_ca_free(*ca);
        *ca = NULL;
}

int tls_bundle_mount(const plan *p) {
        if (!p->net.ca_bundle)
                return 0;
        return mount_file_over(PROXY_TLS_SYSTEM_BUNDLE, p->net.ca_bundle);
}
