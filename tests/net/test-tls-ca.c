/* SPDX-License-Identifier: Apache-2.0 */
/* The per-session CA (src/net/tls-ca.c): its certificate is a CA limited to signing leaves, a
 * leaf verifies against it for exactly its one name (a host name or an address) with serverAuth,
 * is not a CA itself, and is cached per name; two sessions' CAs trust nothing of each other's;
 * names that could inject another subjectAltName are refused. */
#include <errno.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "net/tls-ca.h"

/* Verifies `leaf` against a store holding only the CA in `pem`, for the SSL server purpose. */
static int verify(const char *pem, X509 *leaf) {
        BIO *b = BIO_new_mem_buf(pem, -1);
        X509 *ca = PEM_read_bio_X509(b, NULL, NULL, NULL);
        assert_non_null(ca);
        X509_STORE *store = X509_STORE_new();
        assert_int_equal(X509_STORE_add_cert(store, ca), 1);
        X509_STORE_CTX *ctx = X509_STORE_CTX_new();
        assert_int_equal(X509_STORE_CTX_init(ctx, store, leaf, NULL), 1);
        X509_STORE_CTX_set_purpose(ctx, X509_PURPOSE_SSL_SERVER);
        int ok = X509_verify_cert(ctx);
        int err = X509_STORE_CTX_get_error(ctx);
        X509_STORE_CTX_free(ctx);
        X509_STORE_free(store);
        X509_free(ca);
        BIO_free(b);
        return ok == 1 ? 0 : err;
}

static void test_leaf_verifies(void **state) {
        (void) state;
        tls_ca *ca = NULL;
        assert_int_equal(tls_ca_new(&ca, "session-1"), 0);
        char *pem = NULL;
        assert_int_equal(tls_ca_pem(ca, &pem), 0);
        assert_non_null(strstr(pem, "-----BEGIN CERTIFICATE-----"));
        assert_null(strstr(pem, "PRIVATE KEY"));
        assert_int_equal(X509_check_ca(tls_ca_cert(ca)), 1);
        X509 *leaf = NULL;
        EVP_PKEY *key = NULL;
        assert_int_equal(tls_ca_leaf(ca, "api.example.com", &leaf, &key), 0);
        assert_int_equal(verify(pem, leaf), 0);
        assert_int_equal(X509_check_host(leaf, "api.example.com", 0, 0, NULL), 1);
        assert_int_equal(X509_check_host(leaf, "other.example.com", 0, 0, NULL), 0);
        assert_int_equal(X509_check_private_key(leaf, key), 1);
        assert_int_equal(X509_check_ca(leaf), 0);
        /* Cached: the same certificate for the same name. */
        X509 *again = NULL;
        EVP_PKEY *k2 = NULL;
        assert_int_equal(tls_ca_leaf(ca, "api.example.com", &again, &k2), 0);
        assert_ptr_equal(again, leaf);
        /* Addresses get an IP subjectAltName. */
        X509 *ip = NULL;
        assert_int_equal(tls_ca_leaf(ca, "127.0.0.1", &ip, &k2), 0);
        assert_int_equal(verify(pem, ip), 0);
        assert_int_equal(X509_check_ip_asc(ip, "127.0.0.1", 0), 1);
        assert_int_equal(tls_ca_leaf(ca, "::1", &ip, &k2), 0);
        assert_int_equal(X509_check_ip_asc(ip, "::1", 0), 1);
        /* Another session's CA does not vouch for this session's leaves. */
        tls_ca *other = NULL;
        char *other_pem = NULL;
        assert_int_equal(tls_ca_new(&other, "session-2"), 0);
        assert_int_equal(tls_ca_pem(other, &other_pem), 0);
        assert_int_not_equal(verify(other_pem, leaf), 0);
        free(pem);
        free(other_pem);
        tls_ca_free(other);
        tls_ca_free(ca);
}

static void test_names_refused(void **state) {
        (void) state;
        tls_ca *ca = NULL;
        assert_int_equal(tls_ca_new(&ca, "s\x01\n"), 0);
        X509 *leaf = NULL;
        EVP_PKEY *key = NULL;
        const char *bad[] = { "", "a.example,DNS:evil.example", "A.EXAMPLE", "a b", "*.example" };
        for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++)
                assert_int_equal(tls_ca_leaf(ca, bad[i], &leaf, &key), -EINVAL);
        char longname[300];
        memset(longname, 'a', sizeof(longname) - 1);
        longname[sizeof(longname) - 1] = '\0';
        assert_int_equal(tls_ca_leaf(ca, longname, &leaf, &key), -EINVAL);
        /* A long but valid name gets a placeholder CN (64 bytes at most) and its SAN. */
        char name[200];
        memset(name, 'b', 190);
        memcpy(name + 190, ".example", 9);
        assert_int_equal(tls_ca_leaf(ca, name, &leaf, &key), 0);
        assert_int_equal(X509_check_host(leaf, name, 0, 0, NULL), 1);
        tls_ca_free(ca);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_leaf_verifies),
                cmocka_unit_test(test_names_refused),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
