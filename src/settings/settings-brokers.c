/* SPDX-License-Identifier: Apache-2.0 */
/* credentialBrokers (docs/settings.md): the administrator's commands that issue a per-run
 * credential at launch and revoke it afterwards (src/linux/creds-broker.c runs them). Accepted
 * in the managed settings file only: a broker is a program cordon runs outside the sandbox with
 * the user's rights, which no file a user or a repository writes may choose. */
#include <errno.h>
#include <jansson.h>
#include <string.h>

#include "policy/json-read.h"
#include "settings/settings.h"

#define BROKER_EXAMPLE "\"forge\": {\"issue\": [\"/usr/libexec/forge-cred\", \"issue\"], " \
                       "\"revoke\": [\"/usr/libexec/forge-cred\", \"revoke\"], \"timeout\": \"10s\"}"

static int parse_argv(jread *c, json_t *v, strv *out, const char *example) {
        int r = jread_expect(c, v, json_is_array(v) && json_array_size(v) > 0 &&
                                           json_array_size(v) <= 32,
                             "an array of 1 to 32 strings", example);
        size_t i;
        json_t *e;
        json_array_foreach(v, i, e) {
                if (r < 0)
                        return r;
                jread_push_index(c, i);
                const char *s = json_is_string(e) ? json_string_value(e) : NULL;
                if (!s || strlen(s) != json_string_length(e) || strlen(s) > 4096)
                        r = jread_expect(c, e, false, "a string without NUL, at most 4096 bytes",
                                         example);
                else if (i == 0 && (s[0] != '/' || policy_check_path(s)))
                        r = jread_fail(c, false, "give the program's absolute path",
                                       "'%s' is not an absolute path", s);
                else if ((r = strv_push(out, s)) < 0)
                        r = jread_fail(c, false, "", "out of memory");
                jread_pop(c);
        }
        return r;
}

static int parse_broker(jread *c, const char *name, json_t *v, cordon_policy *layer) {
        static const char *const keys[] = { "issue", "revoke", "timeout" };
        const char *why = policy_check_secret_name(name);
        if (why)
                return jread_fail(c, true, "a name such as \"forge\"", "'%s' %s", name, why);
        int r = jread_expect(c, v, json_is_object(v), "an object", "{" BROKER_EXAMPLE "}");
        policy_broker b = { .name = (char *) name,
                            .timeout_ms = POLICY_BROKER_DEFAULT_TIMEOUT_MS };
        const char *key;
        json_t *m;
        json_object_foreach(v, key, m) {
                if (r < 0)
                        break;
                jread_push_key(c, key);
                if (strcmp(key, "issue") == 0)
                        r = parse_argv(c, m, &b.issue, "\"issue\": [\"/usr/libexec/x\", \"issue\"]");
                else if (strcmp(key, "revoke") == 0)
                        r = parse_argv(c, m, &b.revoke, "\"revoke\": [\"/usr/libexec/x\", \"revoke\"]");
                else if (strcmp(key, "timeout") != 0)
                        r = jread_unknown_key(c, keys, ELEMENTSOF(keys));
                else if (!json_is_string(m) || parse_duration_ms(json_string_value(m), &b.timeout_ms) < 0 ||
                         b.timeout_ms < 100 || b.timeout_ms > 600000)
                        r = jread_expect(c, m, false, "a duration from 100ms to 10m", "\"timeout\": \"10s\"");
                jread_pop(c);
        }
        /* A credential nothing can revoke would outlive the run: both commands are required. */
        if (r >= 0 && (b.issue.n == 0 || b.revoke.n == 0))
                r = jread_fail(c, false, "give both \"issue\" and \"revoke\"",
                               "a credential broker needs 'issue' and 'revoke'");
        if (r >= 0 && (r = policy_req_add_broker(&layer->req, &b)) < 0)
                r = jread_fail(c, false, "use fewer brokers", "cannot add it: %s",
                               r == -E2BIG ? "too many brokers" : "out of memory");
        strv_done(&b.issue);
        strv_done(&b.revoke);
        return r;
}

int settings_parse_brokers(jread *c, void *value, settings_file *f) {
        json_t *v = value;
        if (f->kind != SETTINGS_LAYER_MANAGED)
                return jread_fail(c, true, "move it to the managed settings file "
                                  "(" SETTINGS_MANAGED_FILE ")",
                                  "only managed settings can configure credential brokers");
        int r = jread_expect(c, v, json_is_object(v), "an object", "{" BROKER_EXAMPLE "}");
        const char *name;
        json_t *b;
        json_object_foreach(v, name, b) {
                if (r < 0)
                        return r;
                jread_push_key(c, name);
                r = parse_broker(c, name, b, f->layer);
                jread_pop(c);
        }
        return r;
}
