/* SPDX-License-Identifier: Apache-2.0 */
/* The JKS truststore writer (jks.h). The format is the JDK's sun.security.provider.JavaKeyStore:
 *
 *   u32 0xFEEDFEED, u32 version 2, u32 entry count
 *   per entry: u32 tag 2 (trusted certificate), UTF alias, u64 date (ms), UTF "X.509",
 *              u32 length, the certificate's DER
 *   SHA-1( password as UTF-16BE || "Mighty Aphrodite" || everything above )
 *
 * (UTF: a u16 byte count and modified UTF-8; every string here is ASCII.) Big-endian
 * throughout. Why JKS and not PKCS12: JKS trusted-certificate entries need no attribute OpenSSL
 * does not know (a PKCS12 truststore for Java needs the Oracle trusted-key-usage attribute on
 * every bag), no key derivation and no MAC iterations, and it is what Debian's JDK already reads
 * at that path. The SHA-1 digest is an integrity check of the format, not
 * security: the store is mounted read-only and holds no secret. */
#include "net/jks.h"

#include <errno.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JKS_MAGIC 0xFEEDFEEDu
#define JKS_VERSION 2u
#define JKS_TAG_TRUSTED_CERT 2u
#define JKS_DIGEST_LEN 20
#define JKS_WHITENER "Mighty Aphrodite"

typedef struct buf {
        uint8_t *data;
        size_t len, cap;
        int err; /* the first failure: every later append is a no-op */
} buf;

static void reserve(buf *b, size_t n) {
        if (b->err || b->len + n <= b->cap)
                return;
        if (n > SIZE_MAX / 2 - b->len) {
                b->err = -E2BIG;
                return;
        }
        size_t cap = b->cap ? b->cap : 64 * 1024;
        while (cap < b->len + n)
                cap *= 2;
        uint8_t *d = realloc(b->data, cap);
        if (!d) {
                b->err = -ENOMEM;
                return;
        }
        b->data = d;
        b->cap = cap;
}

static void put(buf *b, const void *p, size_t n) {
        reserve(b, n);
        if (b->err)
                return;
        memcpy(b->data + b->len, p, n);
        b->len += n;
}

static void put_u16(buf *b, uint16_t v) {
        put(b, (const uint8_t[]){ (uint8_t) (v >> 8), (uint8_t) v }, 2);
}

static void put_u32(buf *b, uint32_t v) {
        put_u16(b, (uint16_t) (v >> 16));
        put_u16(b, (uint16_t) v);
}

static void put_u64(buf *b, uint64_t v) {
        put_u32(b, (uint32_t) (v >> 32));
        put_u32(b, (uint32_t) v);
}

/* ASCII only (the aliases and "X.509"): its modified UTF-8 is itself. */
static void put_utf(buf *b, const char *s) {
        size_t n = strlen(s);
        put_u16(b, (uint16_t) n);
        put(b, s, n);
}

static void put_entry(buf *b, size_t index, int64_t date_ms, const uint8_t *der, long der_len) {
        char alias[32];
        (void) snprintf(alias, sizeof(alias), "cordon-%zu", index);
        put_u32(b, JKS_TAG_TRUSTED_CERT);
        put_utf(b, alias);
        put_u64(b, (uint64_t) date_ms);
        put_utf(b, "X.509");
        put_u32(b, (uint32_t) der_len);
        put(b, der, (size_t) der_len);
}

/* The store's digest, appended: the password's UTF-16BE, the JDK's fixed whitener, the data. */
static void put_digest(buf *b) {
        if (b->err)
                return;
        uint8_t pw[2 * sizeof(JKS_PASSWORD)];
        size_t n = 0;
        for (const char *c = JKS_PASSWORD; *c; c++) {
                pw[n++] = 0;
                pw[n++] = (uint8_t) *c;
        }
        uint8_t md[EVP_MAX_MD_SIZE];
        unsigned md_len = 0;
        EVP_MD_CTX *ctx = EVP_MD_CTX_new();
        bool ok = ctx && EVP_DigestInit_ex(ctx, EVP_sha1(), NULL) == 1 &&
                  EVP_DigestUpdate(ctx, pw, n) == 1 &&
                  EVP_DigestUpdate(ctx, JKS_WHITENER, strlen(JKS_WHITENER)) == 1 &&
                  EVP_DigestUpdate(ctx, b->data, b->len) == 1 &&
                  EVP_DigestFinal_ex(ctx, md, &md_len) == 1 && md_len == JKS_DIGEST_LEN;
        EVP_MD_CTX_free(ctx);
        if (!ok) {
                b->err = -EIO;
                return;
        }
        put(b, md, md_len);
}

/* Appends one entry per CERTIFICATE block; the count of entries in *count. */
static int put_entries(buf *b, BIO *in, int64_t date_ms, size_t *count) {
        *count = 0;
        for (;;) {
                char *name = NULL, *header = NULL;
                unsigned char *der = NULL;
                long der_len = 0;
                if (PEM_read_bio(in, &name, &header, &der, &der_len) != 1) {
                        unsigned long e = ERR_peek_last_error();
                        ERR_clear_error();
                        /* No further block: the end. Anything else is a malformed block. */
                        return ERR_GET_REASON(e) == PEM_R_NO_START_LINE ? 0 : -EIO;
                }
                bool cert = strcmp(name, PEM_STRING_X509) == 0;
                if (cert && *count >= JKS_MAX_CERTS)
                        b->err = b->err ? b->err : -E2BIG;
                else if (cert && der_len > 0)
                        put_entry(b, (*count)++, date_ms, der, der_len);
                OPENSSL_free(name);
                OPENSSL_free(header);
                OPENSSL_free(der);
                if (b->err)
                        return b->err;
        }
}

int jks_from_pem(const char *pem, size_t len, int64_t date_ms, uint8_t **ret, size_t *ret_len) {
        *ret = NULL;
        *ret_len = 0;
        if (len > INT32_MAX)
                return -E2BIG;
        BIO *in = BIO_new_mem_buf(pem, (int) len);
        if (!in)
                return -ENOMEM;
        buf b = { 0 };
        put_u32(&b, JKS_MAGIC);
        put_u32(&b, JKS_VERSION);
        put_u32(&b, 0); /* the count, filled in below */
        size_t count = 0;
        int r = put_entries(&b, in, date_ms, &count);
        BIO_free(in);
        if (r >= 0 && b.err == 0 && count == 0)
                r = -EINVAL;
        if (r >= 0 && b.err == 0) {
                for (int i = 0; i < 4; i++)
                        b.data[8 + i] = (uint8_t) (count >> (24 - 8 * i));
                put_digest(&b);
        }
        if (r >= 0)
                r = b.err;
        if (r < 0) {
                free(b.data);
                return r;
        }
        *ret = b.data;
        *ret_len = b.len;
        return 0;
}
