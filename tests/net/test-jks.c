/* SPDX-License-Identifier: Apache-2.0 */
/* The Java truststore writer (src/net/jks.c): the layout the JDK reads (magic, version, count,
 * one trusted-certificate entry per CERTIFICATE block in order, each certificate's DER as
 * OpenSSL encodes it) and the integrity digest over the password "changeit", recomputed here
 * independently; no certificate, or a malformed block, is an error, never an empty store.
 * (The JDK itself reads the store in tests/net/it/rules.sh, "tls: Java".) */
#include <errno.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "net/jks.h"
#include "net/tls-ca.h"

static uint32_t be32(const uint8_t *p) {
        return (uint32_t) p[0] << 24 | (uint32_t) p[1] << 16 | (uint32_t) p[2] << 8 | p[3];
}

static uint16_t be16(const uint8_t *p) {
        return (uint16_t) (p[0] << 8 | p[1]);
}

/* Two CA certificates' PEM, with a non-certificate block between them (skipped). */
static char *two_certs(X509 **first, X509 **second) {
        tls_ca *a = NULL, *b = NULL;
        assert_int_equal(tls_ca_new(&a, "a"), 0);
        assert_int_equal(tls_ca_new(&b, "b"), 0);
        char *pa = NULL, *pb = NULL;
        assert_int_equal(tls_ca_pem(a, &pa), 0);
        assert_int_equal(tls_ca_pem(b, &pb), 0);
        *first = X509_dup(tls_ca_cert(a));
        *second = X509_dup(tls_ca_cert(b));
        static const char other[] = "-----BEGIN X509 CRL-----\nAAAA\n-----END X509 CRL-----\n";
        size_t n = strlen(pa) + strlen(other) + strlen(pb) + 1;
        char *all = malloc(n);
        assert_non_null(all);
        (void) snprintf(all, n, "%s%s%s", pa, other, pb);
        free(pa);
        free(pb);
        tls_ca_free(a);
        tls_ca_free(b);
        return all;
}

/* Checks one entry at *off against `cert`, moving *off past it. */
static void check_entry(const uint8_t *s, size_t len, size_t *off, const char *alias, X509 *cert) {
        size_t o = *off;
        assert_true(o + 6 <= len);
        assert_int_equal(be32(s + o), 2); /* trusted certificate */
        uint16_t an = be16(s + o + 4);
        assert_int_equal(an, strlen(alias));
        assert_memory_equal(s + o + 6, alias, an);
        o += 6 + an + 8; /* the date */
        assert_int_equal(be16(s + o), 5);
        assert_memory_equal(s + o + 2, "X.509", 5);
        o += 7;
        uint8_t *der = NULL;
        int dn = i2d_X509(cert, &der);
        assert_true(dn > 0);
        assert_int_equal(be32(s + o), (uint32_t) dn);
        assert_memory_equal(s + o + 4, der, (size_t) dn);
        OPENSSL_free(der);
        *off = o + 4 + (size_t) dn;
}

static void test_layout_and_digest(void **state) {
        (void) state;
        X509 *c1 = NULL, *c2 = NULL;
        char *pem = two_certs(&c1, &c2);
        uint8_t *s = NULL;
        size_t len = 0;
        assert_int_equal(jks_from_pem(pem, strlen(pem), 1234, &s, &len), 0);
        assert_true(len > 12 + 20);
        assert_int_equal(be32(s), 0xFEEDFEEDu);
        assert_int_equal(be32(s + 4), 2);
        assert_int_equal(be32(s + 8), 2); /* the CRL block is not an entry */
        size_t off = 12;
        check_entry(s, len, &off, "cordon-0", c1);
        check_entry(s, len, &off, "cordon-1", c2);
        assert_int_equal(off + 20, len);
        /* SHA-1("\0c\0h\0a\0n\0g\0e\0i\0t" "Mighty Aphrodite" data), as the JDK checks it. */
        static const uint8_t pw[] = { 0, 'c', 0, 'h', 0, 'a', 0, 'n',
                                      0, 'g', 0, 'e', 0, 'i', 0, 't' };
        size_t n = sizeof(pw) + 16 + off;
        uint8_t *in = malloc(n);
        assert_non_null(in);
        memcpy(in, pw, sizeof(pw));
        memcpy(in + sizeof(pw), "Mighty Aphrodite", 16);
        memcpy(in + sizeof(pw) + 16, s, off);
        uint8_t md[20];
        unsigned md_len = 0;
        assert_int_equal(EVP_Digest(in, n, md, &md_len, EVP_sha1(), NULL), 1);
        assert_memory_equal(md, s + off, 20);
        free(in);
        free(s);
        free(pem);
        X509_free(c1);
        X509_free(c2);
}

static void test_no_certificate(void **state) {
        (void) state;
        uint8_t *s = (uint8_t *) "x";
        size_t len = 1;
        static const char none[] = "just text, no PEM block\n";
        assert_int_equal(jks_from_pem(none, strlen(none), 0, &s, &len), -EINVAL);
        assert_null(s);
        assert_int_equal(len, 0);
        assert_int_equal(jks_from_pem("", 0, 0, &s, &len), -EINVAL);
}

static void test_malformed_block(void **state) {
        (void) state;
        static const char bad[] = "-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n";
        uint8_t *s = NULL;
        size_t len = 0;
        assert_int_equal(jks_from_pem(bad, strlen(bad), 0, &s, &len), -EIO);
        assert_null(s);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_layout_and_digest),
                cmocka_unit_test(test_no_certificate),
                cmocka_unit_test(test_malformed_block),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
