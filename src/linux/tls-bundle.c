/* SPDX-License-Identifier: Apache-2.0 */
#include "linux/tls-bundle.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "linux/mount.h"
#include "net/jks.h"
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

/* The merged bundle's certificates as a Java truststore, when this host has a JDK's cacerts: a
 * host without one runs no Java that would read it, and the launch does not pay for it. */
static int make_java_truststore(plan *p) {
        struct stat st;
        if (stat(TLS_BUNDLE_JAVA_CACERTS, &st) < 0 || !S_ISREG(st.st_mode))
                return 0;
        struct timespec now;
        (void) clock_gettime(CLOCK_REALTIME, &now);
        return jks_from_pem(p->net.ca_bundle, strlen(p->net.ca_bundle),
                            (int64_t) now.tv_sec * 1000, &p->net.java_truststore,
                            &p->net.java_truststore_len);
}

static void drop_bundles(plan *p) {
        free(p->net.ca_bundle);
        p->net.ca_bundle = NULL;
        free(p->net.java_truststore);
        p->net.java_truststore = NULL;
        p->net.java_truststore_len = 0;
}

int tls_bundle_prepare(plan *p, bool java, struct tls_ca **ret, cordon_error *err) {
        *ret = NULL;
        drop_bundles(p);
        if (!policy_req_inspects(&p->net.req))
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
        /* Without it a Java client of a ruled host would fail verification: fail the run now,
         * saying why, rather than hand Java a store without the session CA. */
        r = java ? make_java_truststore(p) : 0;
        if (r < 0) {
                tls_ca_free(ca);
                drop_bundles(p);
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, -r,
                                        "TLS inspection: cannot make the Java truststore from "
                                        "%s: %s",
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

int tls_bundle_mount_java(const plan *p) {
        if (!p->net.java_truststore)
                return 0;
        int r = mount_bytes_over(TLS_BUNDLE_JAVA_CACERTS, p->net.java_truststore,
                                 p->net.java_truststore_len);
        return r == -ENOENT ? 0 : r; /* no JDK's cacerts in the sandbox's root: nothing reads it */
}

/* One file of the landlock backend's directory: created (never through an existing name),
 * written whole, read-only. */
static int write_file(int dfd, const char *name, const void *data, size_t len) {
        int fd = openat(dfd, name, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0444);
        if (fd < 0)
                return -errno;
        const char *c = data;
        int r = 0;
        while (r == 0 && len > 0) {
                ssize_t k = write(fd, c, len);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        r = k < 0 ? -errno : -EIO;
                else {
                        c += k;
                        len -= (size_t) k;
                }
        }
        if (close(fd) < 0 && r == 0)
                r = -errno;
        return r;
}

int tls_bundle_write(const plan *p, const char *dir, cordon_error *err) {
        if (!p->net.ca_bundle)
                return 0;
        int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int r = dfd < 0 ? -errno : 0;
        if (r >= 0)
                r = write_file(dfd, TLS_BUNDLE_FILE, p->net.ca_bundle, strlen(p->net.ca_bundle));
        if (dfd >= 0)
                (void) close(dfd);
        if (r < 0)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, -r,
                                        "TLS inspection: cannot write %s/%s: %s", dir,
                                        TLS_BUNDLE_FILE, strerror(-r));
        return 0;
}
