/* SPDX-License-Identifier: Apache-2.0 */
/* Credentials in request heads and responses (src/net/cred-rewrite.c): the placeholder becomes
 * the secret only towards a bound host over TLS (raw, in a Bearer header, inside Basic), the
 * proxy's own header replaces the client's, a placeholder anywhere else is refused with the
 * credential named, and responses never carry a secret back, however they are split. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "net/cred-rewrite.h"
#include "util/base64.h"

#define SECRET "ghp_S3cretValue0123456789abcdefXYZ"

static net_host name(const char *text) {
        net_host h = { .kind = NET_HOST_NAME };
        strcpy(h.text, text);
        return h;
}

typedef struct fixture {
        policy_req q;
        cred_set *s;
} fixture;

static void add(policy_req *q, const char *secret, const char *env, const char *host,
                const char *header, const char *format, const char *basic) {
        policy_cred c = { .secret = (char *) secret, .env = (char *) env,
                          .header = (char *) header, .format = (char *) format,
                          .basic = (char *) basic };
        assert_int_equal(strv_push(&c.hosts, host), 0);
        assert_int_equal(policy_req_add_cred(q, &c), 0);
        strv_done(&c.hosts);
}

/* Two credentials: GITHUB_TOKEN (Bearer header) on api.github.com, NPM_TOKEN (no header) on
 * registry.npmjs.org. */
static int setup(void **state) {
        fixture *f = calloc(1, sizeof(*f));
        add(&f->q, "github-token", "GITHUB_TOKEN", "api.github.com", "Authorization",
            "Bearer {}", NULL);
        add(&f->q, "npm-token", "NPM_TOKEN", "registry.npmjs.org", NULL, NULL, NULL);
        assert_int_equal(cred_set_new(&f->s, &f->q), 0);
        uint8_t r1[16], r2[16];
        memset(r1, 0xab, sizeof(r1));
        memset(r2, 0x12, sizeof(r2));
        assert_int_equal(cred_set_value(f->s, 0, r1, SECRET, strlen(SECRET)), 0);
        assert_int_equal(cred_set_value(f->s, 1, r2, "npm_XYZ", 7), 0);
        *state = f;
        return 0;
}

static int teardown(void **state) {
        fixture *f = *state;
        cred_set_free(f->s);
        policy_req_clear(&f->q);
        free(f);
        return 0;
}

static const char *ph(fixture *f, size_t i) {
        return f->s->v[i].placeholder;
}

/* The head rewritten for host:443 over TLS; NULL when refused (then *off is set). */
static char *rewrite(fixture *f, const char *host, bool tls, const char *head, const cred **off,
                     int *rc) {
        net_host h = name(host);
        char *out = NULL;
        size_t n = 0;
        *rc = cred_rewrite_head(f->s, &h, 443, tls, head, strlen(head), &out, &n, off);
        if (*rc == 0)
                return strdup(head);
        if (*rc < 0)
                return NULL;
        char *z = malloc(n + 1);
        memcpy(z, out, n);
        z[n] = '\0';
        cred_head_free(out, n);
        return z;
}

static void test_placeholder(void **state) {
        fixture *f = *state;
        assert_int_equal(strlen(ph(f, 0)), CRED_PLACEHOLDER_LEN);
        assert_string_equal(ph(f, 0), "cordon-cred-abababababababababababababababab");
        /* A value that could end a header line is refused. */
        uint8_t r[16] = { 0 };
        assert_int_equal(cred_set_value(f->s, 1, r, "a\r\nX: y", 7), -EINVAL);
        assert_int_equal(cred_set_value(f->s, 1, r, "", 0), -EINVAL);
        assert_int_equal(cred_set_value(f->s, 1, r, "a b", 3), -EINVAL);
}

static void test_bearer_replaced(void **state) {
        fixture *f = *state;
        char head[512];
        snprintf(head, sizeof(head),
                 "GET /user HTTP/1.1\r\nHost: api.github.com\r\nAuthorization: Bearer %s\r\n"
                 "Accept-Encoding: gzip\r\nX-Echo: %s\r\n\r\n",
                 ph(f, 0), ph(f, 0));
        const cred *off = NULL;
        int rc;
        char *out = rewrite(f, "api.github.com", true, head, &off, &rc);
        assert_int_equal(rc, 1);
        /* The proxy's header once, the client's dropped; the raw placeholder replaced. */
        assert_non_null(strstr(out, "\r\nAuthorization: Bearer " SECRET "\r\n"));
        assert_null(strstr(strstr(out, "Authorization") + 1, "Authorization"));
        assert_non_null(strstr(out, "\r\nX-Echo: " SECRET "\r\n"));
        assert_null(strstr(out, CRED_PLACEHOLDER_PREFIX));
        assert_non_null(strstr(out, "\r\nAccept-Encoding: identity\r\n"));
        assert_null(strstr(out, "gzip"));
        assert_int_equal(strncmp(out, "GET /user HTTP/1.1\r\n", 20), 0);
        size_t n = strlen(out);
        assert_string_equal(out + n - 4, "\r\n\r\n");
        /* The dropped lines leave no empty line behind: one end of head, every other line
         * kept. */
        assert_true(strstr(out, "\r\n\r\n") == out + n - 4);
        assert_non_null(strstr(out, "\r\nHost: api.github.com\r\n"));
        free(out);
}

static void test_basic_replaced(void **state) {
        fixture *f = *state;
        char up[128], head[512];
        snprintf(up, sizeof(up), "x-access-token:%s", ph(f, 1));
        char *enc = base64_encode(up, strlen(up));
        snprintf(head, sizeof(head),
                 "GET /pkg?t=%s HTTP/1.1\r\nHost: registry.npmjs.org\r\nAuthorization: Basic "
                 "%s\r\n\r\n",
                 ph(f, 1), enc);
        free(enc);
        const cred *off = NULL;
        int rc;
        char *out = rewrite(f, "registry.npmjs.org", true, head, &off, &rc);
        assert_int_equal(rc, 1);
        char *want = base64_encode("x-access-token:npm_XYZ", 22);
        assert_non_null(strstr(out, want));
        assert_non_null(strstr(out, "GET /pkg?t=npm_XYZ HTTP/1.1\r\n"));
        assert_null(strstr(out, CRED_PLACEHOLDER_PREFIX));
        free(want);
        free(out);
}

static void test_refused_elsewhere(void **state) {
        fixture *f = *state;
        char head[512];
        const cred *off = NULL;
        int rc;
        /* To another host. */
        snprintf(head, sizeof(head), "GET /?k=%s HTTP/1.1\r\nHost: evil.example\r\n\r\n",
                 ph(f, 0));
        assert_null(rewrite(f, "evil.example", true, head, &off, &rc));
        assert_int_equal(rc, -EACCES);
        assert_string_equal(off->name, "GITHUB_TOKEN");
        /* One credential's placeholder to the other's host. */
        snprintf(head, sizeof(head), "GET / HTTP/1.1\r\nHost: api.github.com\r\nX: %s\r\n\r\n",
                 ph(f, 1));
        assert_null(rewrite(f, "api.github.com", true, head, &off, &rc));
        assert_string_equal(off->name, "NPM_TOKEN");
        /* To its own host, over plain http. */
        snprintf(head, sizeof(head), "GET / HTTP/1.1\r\nHost: api.github.com\r\nX: %s\r\n\r\n",
                 ph(f, 0));
        assert_null(rewrite(f, "api.github.com", false, head, &off, &rc));
        assert_string_equal(off->name, "GITHUB_TOKEN");
        /* Hidden in Basic to another host. */
        char up[128];
        snprintf(up, sizeof(up), "x:%s", ph(f, 0));
        char *enc = base64_encode(up, strlen(up));
        snprintf(head, sizeof(head),
                 "GET / HTTP/1.1\r\nHost: evil.example\r\nAuthorization: basic %s\r\n\r\n", enc);
        free(enc);
        assert_null(rewrite(f, "evil.example", true, head, &off, &rc));
        assert_string_equal(off->name, "GITHUB_TOKEN");
        /* Nothing of ours: unchanged. */
        char *out = rewrite(f, "evil.example", true,
                            "GET / HTTP/1.1\r\nHost: evil.example\r\nX: cordon-cred-00\r\n\r\n",
                            &off, &rc);
        assert_int_equal(rc, 0);
        free(out);
}

/* A secret in a response, split at every byte, comes out masked to the same length. */
static void test_scrub_split(void **state) {
        fixture *f = *state;
        const char body[] = "{\"headers\": {\"Authorization\": \"Bearer " SECRET "\"}} tail";
        size_t n = strlen(body);
        for (size_t cut = 0; cut <= n; cut++) {
                cred_scrub st = { 0 };
                char got[256];
                size_t gl = 0;
                const char *parts[2] = { body, body + cut };
                size_t lens[2] = { cut, n - cut };
                for (int k = 0; k < 2; k++) {
                        char *o = NULL;
                        size_t ol = 0;
                        assert_int_equal(cred_scrub_feed(f->s, &st, parts[k], lens[k], &o, &ol), 0);
                        if (ol)
                                memcpy(got + gl, o, ol);
                        gl += ol;
                        free(o);
                }
                const char *t = NULL;
                size_t tl = cred_scrub_flush(&st, &t);
                if (tl)
                        memcpy(got + gl, t, tl);
                gl += tl;
                cred_scrub_done(&st);
                assert_int_equal(gl, n);
                got[gl] = '\0';
                assert_null(strstr(got, "S3cretValue"));
                /* At most CRED_HOLD_MIN - 1 leading bytes can be split off at a read's end;
                 * every later byte is masked. */
                const char *at = strstr(got, "Bearer ") + 7;
                size_t leaked = 0;
                while (leaked < strlen(SECRET) && at[leaked] == SECRET[leaked])
                        leaked++;
                assert_true(leaked < CRED_HOLD_MIN);
                static const char masked[] = "cordon-cred-abababab";
                assert_memory_equal(at + leaked, &masked[leaked], 20 - leaked);
        }
}

/* A tail that only looks like a secret's start is released by the bytes after it. */
static void test_scrub_false_start(void **state) {
        fixture *f = *state;
        cred_scrub st = { 0 };
        char *o = NULL;
        size_t ol = 0;
        assert_int_equal(cred_scrub_feed(f->s, &st, "abc ghp_S3", 10, &o, &ol), 0);
        assert_int_equal(ol, 4);
        free(o);
        assert_int_equal(cred_scrub_feed(f->s, &st, "x done", 6, &o, &ol), 0);
        assert_int_equal(ol, 12);
        assert_memory_equal(o, "ghp_S3x done", 12);
        free(o);
        cred_scrub_done(&st);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_placeholder, setup, teardown),
                cmocka_unit_test_setup_teardown(test_bearer_replaced, setup, teardown),
                cmocka_unit_test_setup_teardown(test_basic_replaced, setup, teardown),
                cmocka_unit_test_setup_teardown(test_refused_elsewhere, setup, teardown),
                cmocka_unit_test_setup_teardown(test_scrub_split, setup, teardown),
                cmocka_unit_test_setup_teardown(test_scrub_false_start, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
