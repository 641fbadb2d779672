/* SPDX-License-Identifier: Apache-2.0 */
/* The landlock backend's proxy on the host's loopback: credentials are random per run and
 * required on both listeners (HTTP 407 without, SOCKS5 no acceptable method), the command's
 * environment carries them, and nothing else of the caller's environment names another proxy. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <cmocka.h>

#include "linux/proxy-loopback.h"
#include "policy/policy.h"
#include "tmptree.h"

static char *T;

static int setup(void **state) {
        (void) state;
        T = tmptree_new();
        tmptree_mkdir(T, "home");
        tmptree_mkdir(T, "ws");
        return 0;
}

static int teardown(void **state) {
        (void) state;
        tmptree_remove(T);
        return 0;
}

static plan *make_plan(void) {
        cordon_policy *pol = NULL;
        cordon_error err = { 0 };
        assert_int_equal(cordon_policy_new_default(tmptree_at(T, "ws"), tmptree_at(T, "home"),
                                                   &pol, &err), 0);
        char e0[] = "PATH=/usr/bin", e1[] = "HTTP_PROXY=http://corp-proxy:8080",
             e2[] = "GIT_SSH_COMMAND=ssh -o ProxyCommand=corp";
        char *env[] = { e0, e1, e2, NULL };
        plan *p = NULL;
        int r = plan_build(pol, tmptree_at(T, "home"), tmptree_at(T, "ws"), env, &p, &err);
        cordon_policy_free(pol);
        if (r < 0)
                fail_msg("plan_build: %s", err.message);
        return p;
}

static int dial(uint16_t port) {
        int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port),
                                 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        struct timeval tv = { .tv_sec = 5 };
        (void) setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        assert_int_equal(connect(s, (struct sockaddr *) &a, sizeof(a)), 0);
        return s;
}

/* Sends `req`, returns the first line of the answer (static). */
static const char *http_status(uint16_t port, const char *req) {
        static char buf[512];
        int s = dial(port);
        assert_int_equal(write(s, req, strlen(req)), (ssize_t) strlen(req));
        ssize_t n = read(s, buf, sizeof(buf) - 1);
        close(s);
        buf[n > 0 ? n : 0] = '\0';
        buf[strcspn(buf, "\r\n")] = '\0';
        return buf;
}

static const char *basic(const char *user, const char *pass) {
        static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        static char out[256];
        char in[160];
        int len = snprintf(in, sizeof(in), "%s:%s", user, pass);
        size_t o = 0;
        for (int i = 0; i < len; i += 3) {
                unsigned v = (unsigned char) in[i] << 16;
                if (i + 1 < len)
                        v |= (unsigned char) in[i + 1] << 8;
                if (i + 2 < len)
                        v |= (unsigned char) in[i + 2];
                out[o++] = b64[(v >> 18) & 63];
                out[o++] = b64[(v >> 12) & 63];
                out[o++] = i + 1 < len ? b64[(v >> 6) & 63] : '=';
                out[o++] = i + 2 < len ? b64[v & 63] : '=';
        }
        out[o] = '\0';
        return out;
}

static const char *env_of(const plan *p, const char *name) {
        size_t nl = strlen(name);
        for (size_t i = 0; i < p->env.n; i++)
                if (strncmp(p->env.v[i], name, nl) == 0 && p->env.v[i][nl] == '=')
                        return p->env.v[i] + nl + 1;
        return NULL;
}

static void test_credentials_required(void **state) {
        (void) state;
        plan *p = make_plan();
        proxy_proc px;
        proxy_loopback lb, other;
        cordon_error err = { 0 };
        assert_int_equal(proxy_spawn_loopback(p, NULL, NULL, &px, &lb, &err), 0);
        assert_int_equal(strlen(lb.pass), 32);
        assert_int_equal(strncmp(lb.user, "cordon-", 7), 0);
        assert_true(lb.http_port != 0 && lb.socks_port != 0 && lb.http_port != lb.socks_port);
        /* Without credentials, with wrong ones, and with the run's (then the rules decide:
         * 203.0.113.1 is in no allowlist, so 403 proves the credentials were accepted). */
        const char *req = "GET http://203.0.113.1/ HTTP/1.1\r\nHost: 203.0.113.1\r\n\r\n";
        assert_non_null(strstr(http_status(lb.http_port, req), " 407 "));
        char auth[512];
        snprintf(auth, sizeof(auth), "GET http://203.0.113.1/ HTTP/1.1\r\nHost: 203.0.113.1\r\n"
                                     "Proxy-Authorization: Basic %s\r\n\r\n", basic(lb.user, "x"));
        assert_non_null(strstr(http_status(lb.http_port, auth), " 407 "));
        snprintf(auth, sizeof(auth), "GET http://203.0.113.1/ HTTP/1.1\r\nHost: 203.0.113.1\r\n"
                                     "Proxy-Authorization: Basic %s\r\n\r\n", basic(lb.user, lb.pass));
        assert_non_null(strstr(http_status(lb.http_port, auth), " 403 "));
        /* SOCKS5: offering "no authentication" only gets "no acceptable method" (0xFF). */
        int s = dial(lb.socks_port);
        assert_int_equal(write(s, "\x05\x01\x00", 3), 3);
        unsigned char ans[2] = { 0 };
        assert_int_equal(read(s, ans, 2), 2);
        assert_int_equal(ans[0], 5);
        assert_int_equal(ans[1], 0xff);
        close(s);
        /* Another run gets other credentials. */
        proxy_proc px2;
        assert_int_equal(proxy_spawn_loopback(p, NULL, NULL, &px2, &other, &err), 0);
        assert_string_not_equal(lb.pass, other.pass);
        assert_string_not_equal(lb.user, other.user);
        proxy_proc_stop(&px2);
        proxy_proc_stop(&px);
        plan_free(p);
}

static void test_environment(void **state) {
        (void) state;
        plan *p = make_plan();
        proxy_loopback lb = { .http_port = 41000, .socks_port = 41001, .user = "cordon-u",
                              .pass = "p4ss" };
        assert_int_equal(proxy_loopback_env(p, &lb), 0);
        static const char *const http[] = { "HTTP_PROXY", "HTTPS_PROXY", "http_proxy",
                                            "https_proxy" };
        for (size_t i = 0; i < 4; i++)
                assert_string_equal(env_of(p, http[i]), "http://cordon-u:p4ss@127.0.0.1:41000");
        assert_string_equal(env_of(p, "ALL_PROXY"), "socks5h://cordon-u:p4ss@127.0.0.1:41001");
        assert_string_equal(env_of(p, "all_proxy"), "socks5h://cordon-u:p4ss@127.0.0.1:41001");
        assert_string_equal(env_of(p, "NO_PROXY"), "");
        assert_null(env_of(p, "GIT_SSH_COMMAND")); /* no way to pass credentials safely */
        for (size_t i = 0; i < p->env.n; i++) /* one entry per name */
                for (size_t j = i + 1; j < p->env.n; j++)
                        assert_false(strcspn(p->env.v[i], "=") == strcspn(p->env.v[j], "=") &&
                                     strncmp(p->env.v[i], p->env.v[j], strcspn(p->env.v[i], "=")) == 0);
        plan_free(p);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_credentials_required),
                cmocka_unit_test(test_environment),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
