/* SPDX-License-Identifier: Apache-2.0 */
/* The per-session CA and its leaf certificates (tls-ca.h). OpenSSL 3 (Debian's libssl-dev).
 *
 * Why these choices: a fresh key per session means a certificate or key that leaks from one run
 * (a client that logs its trust store) is worth nothing after it; P-256 is what every TLS client
 * accepts and costs a fraction of RSA to generate (the launch pays for it); pathlen 0 and
 * keyCertSign on the CA, CA:FALSE and serverAuth on leaves, so a leaf can never sign another
 * certificate; one subjectAltName per leaf, so a certificate minted for one ruled host is never
 * valid for another. */
#include "net/tls-ca.h"

#include <arpa/inet.h>
#include <errno.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LEAF_NAME_MAX 253
#define VALID_BACK_S (60L * 60)
#define VALID_DAYS 30

typedef struct leaf {
        char name[LEAF_NAME_MAX + 1];
        X509 *cert;
} leaf;

struct tls_ca {
        EVP_PKEY *key;      /* the CA's: signs leaves, never leaves this process */
        X509 *cert;
        EVP_PKEY *leaf_key; /* every leaf's */
        leaf *leaves;
        size_t n_leaves, cap_leaves;
};

static EVP_PKEY *new_key(void) {
        return EVP_EC_gen("P-256");
}

/* A random 127-bit positive serial: distinct leaves never share one (RFC 5280 §4.1.2.2). */
static bool set_serial(X509 *x) {
        unsigned char b[16];
        if (RAND_bytes(b, sizeof(b)) != 1)
                return false;
        b[0] &= 0x7f;
        BIGNUM *bn = BN_bin2bn(b, sizeof(b), NULL);
        bool ok = bn && BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x)) != NULL;
        BN_free(bn);
        return ok;
}

static bool add_ext(X509 *x, X509 *issuer, int nid, const char *value) {
        X509V3_CTX ctx;
        X509V3_set_ctx_nodb(&ctx);
        X509V3_set_ctx(&ctx, issuer, x, NULL, NULL, 0);
        X509_EXTENSION *e = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
        bool ok = e && X509_add_ext(x, e, -1) == 1;
        X509_EXTENSION_free(e);
        return ok;
}

/* Version 3, serial, validity, subject CN, public key; issuer from `issuer` (itself: NULL). */
static X509 *new_cert(const char *cn, EVP_PKEY *pub, X509 *issuer) {
        X509 *x = X509_new();
        X509_NAME *n = x ? X509_get_subject_name(x) : NULL;
        bool ok = n && X509_set_version(x, 2) == 1 && set_serial(x) &&
                  X509_gmtime_adj(X509_getm_notBefore(x), -VALID_BACK_S) &&
                  X509_time_adj_ex(X509_getm_notAfter(x), VALID_DAYS, 0, NULL) &&
                  X509_NAME_add_entry_by_txt(n, "O", MBSTRING_ASC,
                                             (const unsigned char *) "cordon", -1, -1, 0) == 1 &&
                  X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC, (const unsigned char *) cn,
                                             -1, -1, 0) == 1 &&
                  X509_set_issuer_name(x, issuer ? X509_get_subject_name(issuer) : n) == 1 &&
                  X509_set_pubkey(x, pub) == 1;
        if (!ok) {
                X509_free(x);
                return NULL;
        }
        return x;
}

static int make_ca_cert(tls_ca *ca, const char *label) {
        char cn[96];
        size_t n = 0;
        for (; label && label[n] && n < 64; n++)
                if ((unsigned char) label[n] < 0x20 || (unsigned char) label[n] >= 0x7f)
                        break;
        (void) snprintf(cn, sizeof(cn), "cordon session CA %.*s", (int) n, label ? label : "");
        X509 *x = new_cert(cn, ca->key, NULL);
        bool ok = x && add_ext(x, x, NID_basic_constraints, "critical,CA:TRUE,pathlen:0") &&
                  add_ext(x, x, NID_key_usage, "critical,keyCertSign,cRLSign") &&
                  add_ext(x, x, NID_subject_key_identifier, "hash") &&
                  X509_sign(x, ca->key, EVP_sha256()) > 0;
        if (!ok) {
                X509_free(x);
                return -EIO;
        }
        ca->cert = x;
        return 0;
}

int tls_ca_new(tls_ca **ret, const char *label) {
        *ret = NULL;
        tls_ca *ca = calloc(1, sizeof(*ca));
        if (!ca)
                return -ENOMEM;
        int r = (ca->key = new_key()) && (ca->leaf_key = new_key()) ? make_ca_cert(ca, label)
                                                                    : -EIO;
        if (r < 0) {
                tls_ca_free(ca);
                return r;
        }
        *ret = ca;
        return 0;
}

void tls_ca_free(tls_ca *ca) {
        if (!ca)
                return;
        for (size_t i = 0; i < ca->n_leaves; i++)
                X509_free(ca->leaves[i].cert);
        free(ca->leaves);
        X509_free(ca->cert);
        EVP_PKEY_free(ca->key); /* OpenSSL clears the private scalar as it frees it */
        EVP_PKEY_free(ca->leaf_key);
        free(ca);
}

X509 *tls_ca_cert(const tls_ca *ca) {
        return ca->cert;
}

int tls_ca_pem(const tls_ca *ca, char **ret) {
        *ret = NULL;
        BIO *b = BIO_new(BIO_s_mem());
        char *data = NULL;
        long n = b && PEM_write_bio_X509(b, ca->cert) == 1 ? BIO_get_mem_data(b, &data) : -1;
        char *out = n > 0 ? malloc((size_t) n + 1) : NULL;
        if (out) {
                memcpy(out, data, (size_t) n);
                out[n] = '\0';
        }
        BIO_free(b);
        if (!out)
                return n > 0 ? -ENOMEM : -EIO;
        *ret = out;
        return 0;
}

static X509 *mint(tls_ca *ca, const char *name) {
        unsigned char addr[16];
        bool ip = inet_pton(AF_INET, name, addr) == 1 || inet_pton(AF_INET6, name, addr) == 1;
        char san[LEAF_NAME_MAX + 8];
        (void) snprintf(san, sizeof(san), "%s:%s", ip ? "IP" : "DNS", name);
        X509 *x = new_cert(strlen(name) <= 64 ? name : "cordon inspected host", ca->leaf_key,
                           ca->cert);
        bool ok = x && add_ext(x, ca->cert, NID_basic_constraints, "critical,CA:FALSE") &&
                  add_ext(x, ca->cert, NID_key_usage, "critical,digitalSignature") &&
                  add_ext(x, ca->cert, NID_ext_key_usage, "serverAuth") &&
                  add_ext(x, ca->cert, NID_subject_alt_name, san) &&
                  add_ext(x, ca->cert, NID_authority_key_identifier, "keyid:always") &&
                  X509_sign(x, ca->key, EVP_sha256()) > 0;
        if (!ok) {
                X509_free(x);
                return NULL;
        }
        return x;
}

/* The name may only hold what a canonical host or address holds: it ends up in a
 * subjectAltName written in OpenSSL's config syntax, where ',' would start another entry. */
static bool name_ok(const char *name) {
        size_t n = strlen(name);
        if (n == 0 || n > LEAF_NAME_MAX)
                return false;
        for (size_t i = 0; i < n; i++) {
                char c = name[i];
                if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
                      c == '_' || c == ':'))
                        return false;
        }
        return true;
}

int tls_ca_leaf(tls_ca *ca, const char *name, X509 **cert, EVP_PKEY **key) {
        if (!name_ok(name))
                return -EINVAL;
        for (size_t i = 0; i < ca->n_leaves; i++)
                if (strcmp(ca->leaves[i].name, name) == 0) {
                        *cert = ca->leaves[i].cert;
                        *key = ca->leaf_key;
                        return 0;
                }
        if (ca->n_leaves >= TLS_CA_MAX_LEAVES)
                return -ENOSPC;
        if (ca->n_leaves == ca->cap_leaves) {
                size_t cap = ca->cap_leaves ? ca->cap_leaves * 2 : 16;
                leaf *v = realloc(ca->leaves, cap * sizeof(*v));
                if (!v)
                        return -ENOMEM;
                ca->leaves = v;
                ca->cap_leaves = cap;
        }
        X509 *x = mint(ca, name);
        if (!x)
                return -EIO;
        leaf *l = &ca->leaves[ca->n_leaves++];
        (void) snprintf(l->name, sizeof(l->name), "%s", name);
        l->cert = x;
        *cert = x;
        *key = ca->leaf_key;
        return 0;
}
