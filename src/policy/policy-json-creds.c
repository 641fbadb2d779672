/* SPDX-License-Identifier: Apache-2.0 */
/* The policy's credentials key (docs/policy.md, "Credentials"): each entry a secret of cordon's
 * store, the variable that holds its placeholder in the sandbox, the hosts it is bound to, and
 * optionally the header the proxy sets (a format with "{}"), or basic auth's user. Every error
 * names the file, line and column of the value (json-read.c). */
#include <errno.h>
#include <string.h>
#include <strings.h>

#include "policy/policy-json-internal.h"

/* The grammar of secret_name_valid() (src/secrets/secret-store.h; the policy layer cannot use
 * the secrets layer): a file name in the file store and a shell-safe word in messages. */
const char *policy_check_secret_name(const char *s) {
        size_t n = s ? strnlen(s, 65) : 0;
        if (n == 0 || n > 64)
                return "must be 1 to 64 characters";
        if (s[0] == '.' || s[0] == '-')
                return "must not start with '.' or '-'";
        if (strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") != n)
                return "may hold only letters, digits, '.', '_' and '-'";
        return NULL;
}

/* Variables cordon sets itself for TLS inspection (src/plan/env.c): a placeholder there would
 * replace the trust bundle's path and break every client, or be replaced by it. */
static const char *const tls_env[] = {
        "SSL_CERT_FILE",     "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS", "GIT_SSL_CAINFO",
        "CURL_CA_BUNDLE",    "PIP_CERT",           "CARGO_HTTP_CAINFO",   NULL,
};

const char *policy_check_cred_env(const char *s) {
        /* The proxy variables and the tool caches' (policy-caches.c). */
        const char *why = policy_check_tool_cache_env(s);
        if (why)
                return why;
        for (size_t i = 0; tls_env[i]; i++)
                if (strcmp(tls_env[i], s) == 0)
                        return "is set by cordon for TLS inspection";
        if (strncmp(s, "CORDON", 6) == 0)
                return "starts with CORDON, which cordon's own variables use";
        return NULL;
}

/* An RFC 9110 field name. Host and the framing and hop-by-hop headers are the proxy's own: a
 * credential written into them would change where or how a request goes, not who sends it. */
const char *policy_check_header_name(const char *s) {
        static const char *const reserved[] = {
                "host", "content-length", "transfer-encoding", "connection", "keep-alive",
                "proxy-connection", "proxy-authorization", "te", "trailer", "upgrade", NULL,
        };
        size_t n = s ? strnlen(s, 65) : 0;
        if (n == 0 || n > 64)
                return "must be 1 to 64 characters";
        for (size_t i = 0; i < n; i++) {
                char ch = s[i];
                bool tchar = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                             (ch >= '0' && ch <= '9') || (ch && strchr("!#$%&'*+-.^_`|~", ch));
                if (!tchar)
                        return "must be an HTTP header name (letters, digits, '-', ...)";
        }
        for (size_t i = 0; reserved[i]; i++)
                if (strcasecmp(reserved[i], s) == 0)
                        return "is a header the proxy writes itself";
        return NULL;
}

const char *policy_check_cred_format(const char *s) {
        size_t n = s ? strnlen(s, POLICY_CRED_FORMAT_MAX + 1) : 0;
        if (n == 0 || n > POLICY_CRED_FORMAT_MAX)
                return "must be 1 to 256 bytes";
        const char *at = strstr(s, "{}");
        if (!at || strstr(at + 2, "{}"))
                return "must contain \"{}\" (where the secret goes) exactly once";
        for (size_t i = 0; i < n; i++)
                if ((unsigned char) s[i] < 0x20 || (unsigned char) s[i] >= 0x7f)
                        return "must be printable ASCII";
        return NULL;
}

/* RFC 7617: the user id may not contain ':' (the first one ends it). */
const char *policy_check_basic_user(const char *s) {
        size_t n = s ? strnlen(s, 256) : 0;
        if (n == 0 || n > 255)
                return "must be 1 to 255 bytes";
        for (size_t i = 0; i < n; i++)
                if ((unsigned char) s[i] <= 0x20 || (unsigned char) s[i] >= 0x7f || s[i] == ':')
                        return "must be printable ASCII without spaces or ':'";
        return NULL;
}

#define CRED_EXAMPLE "{\"secret\": \"github-token\", \"env\": \"GITHUB_TOKEN\", " \
                     "\"hosts\": [\"api.github.com\"], \"header\": \"Authorization\", " \
                     "\"format\": \"Bearer {}\"}"

static int parse_secret(parse_ctx *c, json_t *v, void *target) {
        policy_cred *p = target;
        const char *s = NULL;
        int r = policy_json_checked(c, v, &s, "\"secret\": \"github-token\"",
                                    policy_check_secret_name,
                                    "a name given to 'cordon secret set', e.g. \"github-token\"");
        p->secret = (char *) s;
        return r;
}

static int parse_broker(parse_ctx *c, json_t *v, void *target) {
        policy_cred *p = target;
        const char *s = NULL;
        int r = policy_json_checked(c, v, &s, "\"broker\": \"forge\"", policy_check_secret_name,
                                    "a credentialBrokers name of the managed settings");
        p->broker = (char *) s;
        return r;
}

static int parse_env(parse_ctx *c, json_t *v, void *target) {
        policy_cred *p = target;
        const char *s = NULL;
        int r = policy_json_checked(c, v, &s, "\"env\": \"GITHUB_TOKEN\"", policy_check_cred_env,
                                    "a variable name such as \"GITHUB_TOKEN\"");
        p->env = (char *) s;
        return r;
}

static int parse_hosts(parse_ctx *c, json_t *v, void *target) {
        policy_cred *p = target;
        int r = jread_expect(&c->j, v, json_is_array(v), "an array",
                             "\"hosts\": [\"api.github.com\"]");
        if (r < 0)
                return r;
        if (json_array_size(v) == 0)
                return jread_fail(&c->j, false, "name the hosts that receive the secret",
                                  "is empty: the secret would go nowhere");
        if (json_array_size(v) > 64)
                return jread_fail(&c->j, false, "use fewer, broader patterns",
                                  "has %zu entries; at most 64 are allowed", json_array_size(v));
        size_t i;
        json_t *e;
        json_array_foreach(v, i, e) {
                const char *s = NULL;
                jread_push_index(&c->j, i);
                r = policy_json_checked(c, e, &s, "\"api.github.com\"", policy_check_host_pattern,
                                        "a host name, \"*.example.com\" or \"host:port\"");
                jread_pop(&c->j);
                if (r < 0)
                        return r;
                if ((r = strv_push_unique(&p->hosts, s)) < 0)
                        return policy_json_fail_errno(c, r);
        }
        return 0;
}

static int parse_header(parse_ctx *c, json_t *v, void *target) {
        policy_cred *p = target;
        const char *s = NULL;
        int r = policy_json_checked(c, v, &s, "\"header\": \"Authorization\"",
                                    policy_check_header_name, "an HTTP header name");
        p->header = (char *) s;
        return r;
}

static int parse_format(parse_ctx *c, json_t *v, void *target) {
        policy_cred *p = target;
        const char *s = NULL;
        int r = policy_json_checked(c, v, &s, "\"format\": \"Bearer {}\"",
                                    policy_check_cred_format,
                                    "printable text with \"{}\" where the secret goes");
        p->format = (char *) s;
        return r;
}

static int parse_basic(parse_ctx *c, json_t *v, void *target) {
        policy_cred *p = target;
        const char *s = NULL;
        int r = policy_json_checked(c, v, &s, "\"basic\": \"x-access-token\"",
                                    policy_check_basic_user,
                                    "the basic-auth user name (the secret is the password)");
        p->basic = (char *) s;
        return r;
}

static const field cred_fields[] = {
        { "secret", parse_secret, NULL }, { "broker", parse_broker, NULL },
        { "env", parse_env, NULL },
        { "hosts", parse_hosts, NULL },   { "header", parse_header, NULL },
        { "format", parse_format, NULL }, { "basic", parse_basic, NULL },
};

/* The combinations that say one thing: header with or without format (default "{}"), or basic
 * alone (it is the Authorization header), or neither (the placeholder is only replaced). */
static int check_cred(parse_ctx *c, const policy_cred *p) {
        if (!p->secret && !p->broker)
                return jread_fail(&c->j, false, "add \"secret\": \"github-token\"",
                                  "a credential needs 'secret' (or 'broker')");
        if (p->secret && p->broker)
                return jread_fail(&c->j, false, "keep one of them",
                                  "a credential comes from 'secret' or from 'broker', not both");
        if (!p->env)
                return jread_fail(&c->j, false, "add \"env\": \"GITHUB_TOKEN\"",
                                  "a credential needs 'env'");
        if (p->hosts.n == 0)
                return jread_fail(&c->j, false, "add \"hosts\": [\"api.github.com\"]",
                                  "a credential needs 'hosts'");
        if (p->format && !p->header)
                return jread_fail(&c->j, false, "add \"header\": \"Authorization\"",
                                  "'format' needs 'header'");
        if (p->basic && p->header)
                return jread_fail(&c->j, false, "keep one of them",
                                  "'basic' sets the Authorization header: it excludes 'header'");
        return 0;
}

static int parse_cred(parse_ctx *c, json_t *e) {
        policy_cred p = { 0 };
        int r = policy_json_fields(c, e, cred_fields, ELEMENTSOF(cred_fields), CRED_EXAMPLE, &p);
        if (r == 0)
                r = check_cred(c, &p);
        int added = r == 0 ? policy_req_add_cred(&c->layer->req, &p) : 0;
        if (added == -EEXIST)
                r = jread_fail(&c->j, false, "bind each variable once",
                               "another credential holds '%s' already", p.env);
        else if (added < 0)
                r = policy_json_fail_errno(c, added);
        /* The strings point into the document; only the list was copied. */
        strv_done(&p.hosts);
        return r;
}

int policy_json_credentials(parse_ctx *c, json_t *v, void *target) {
        (void) target;
        return policy_json_array(c, v, "[" CRED_EXAMPLE "]", POLICY_MAX_CREDS, "bind fewer secrets",
                                 parse_cred);
}
