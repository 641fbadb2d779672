/* SPDX-License-Identifier: Apache-2.0 */
/* The Node sandbox runtime's settings (~/.srt-settings.json) translated: a realistic file gives
 * exactly the policy of the hand-written cordon settings it stands for (compared as
 * cordon_policy_to_json text), `settings import` prints a file that resolves to it too, and what
 * cannot be honoured is refused or, when marked best-effort, left out and reported. */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "cordon/cordon.h"
#include "policy/policy.h"
#include "tmptree.h"

static char *root;
static char cwd[PATH_MAX], home[PATH_MAX], file[PATH_MAX];

static int setup(void **state) {
        root = tmptree_new_workspace("settings");
        snprintf(cwd, sizeof(cwd), "%s/ws", root);
        snprintf(home, sizeof(home), "%s/home", root);
        snprintf(file, sizeof(file), "%s/s.json", root);
        return 0;
}

static int teardown(void **state) {
        tmptree_remove(root);
        root = NULL;
        return 0;
}

static cordon_settings *resolve_text(const char *json) {
        tmptree_write(root, "s.json", json, 0644);
        const char *files[] = { file };
        cordon_settings_options o = { .cwd = cwd, .home = home, .files = files, .n_files = 1,
                                      .flags = CORDON_SETTINGS_NO_USER | CORDON_SETTINGS_NO_PROJECT |
                                               CORDON_SETTINGS_NO_MANAGED };
        cordon_settings *s = NULL;
        cordon_error err = { 0 };
        if (cordon_settings_resolve(&o, &s, &err) < 0)
                fail_msg("resolve: %s", err.message);
        return s;
}

static char *policy_text(const cordon_settings *s) {
        char *json = NULL;
        assert_int_equal(cordon_policy_to_json(cordon_settings_policy(s), 0, NULL, &json, NULL), 0);
        return json;
}

static const char srt_template[] =
        "{\n"
        "  \"filesystem\": {\n"
        "    \"denyRead\": [\"~/.ssh\", \"~/.aws/**\", \"/etc/shadow\"],\n"
        "    \"allowWrite\": [\".\", \"/var/tmp/build-cache\", \"~/.npm/_logs\"],\n"
        "    \"denyWrite\": [\".env\", \"config/production.json\", \"./secrets/*.key\"],\n"
        "    \"allowGitConfig\": false\n"
        "  },\n"
        "  \"network\": {\n"
        "    \"allowedDomains\": [\"github.com\", \"*.github.com\", \"registry.npmjs.org\",\n"
        "                       \"*.npmjs.org\", \"api.example.com:443\"],\n"
        "    \"deniedDomains\": [\"telemetry.example.com\"],\n"
        "    \"allowUnixSockets\": [\"/var/run/docker.sock\"],\n"
        "    \"allowLocalBinding\": true,\n"
        "    \"allowMachLookup\": []\n"
        "  },\n"
        "  \"credentials\": {\n"
        "    \"files\": [{\"path\": \"~/.netrc\", \"mode\": \"deny\"},\n"
        "              {\"path\": \"~/.config/gh/hosts.yml\", \"mode\": \"mask\"}],\n"
        "    \"envVars\": [{\"name\": \"NPM_TOKEN\", \"mode\": \"deny\"}]\n"
        "  },\n"
        "  \"enableWeakerNestedSandbox\": false,\n"
        "  \"cordon\": {\"bestEffort\": [\"network.allowLocalBinding\", \"credentials.files\"]}\n"
        "}\n";

/* The same, written by hand in cordon's format (HOME and WS substituted). */
static const char cordon_template[] =
        "{\"sandbox\": {\n"
        "  \"bindMounts\": [{\"hostPath\": \"WS\"}, {\"hostPath\": \"/var/tmp/build-cache\"},\n"
        "                 {\"hostPath\": \"HOME/.npm/_logs\"}],\n"
        "  \"denyRead\": [\"HOME/.ssh\", \"HOME/.aws\", \"/etc/shadow\", \"HOME/.netrc\",\n"
        "               \"HOME/.config/gh/hosts.yml\"],\n"
        "  \"denyWrite\": [\"WS/.env\", \"WS/config/production.json\", \"WS/secrets/*.key\"],\n"
        "  \"networkEnabled\": true,\n"
        "  \"egressAllowlist\": [\"github.com\", \"*.github.com\", \"registry.npmjs.org\",\n"
        "                      \"*.npmjs.org\", \"api.example.com:443\"],\n"
        "  \"egressDenylist\": [\"telemetry.example.com\"],\n"
        "  \"allowUnixSockets\": [\"/var/run/docker.sock\"],\n"
        "  \"env\": {\"scrub\": [\"NPM_TOKEN\"]}\n"
        "}}\n";

/* Replaces every "HOME" and "WS" in `t`. */
static char *fill(const char *t) {
        size_t cap = strlen(t) * 4 + 8 * PATH_MAX, o = 0;
        char *out = malloc(cap);
        assert_non_null(out);
        for (const char *p = t; *p;)
                if (strncmp(p, "HOME", 4) == 0) {
                        o += (size_t) snprintf(out + o, cap - o, "%s", home);
                        p += 4;
                } else if (strncmp(p, "WS", 2) == 0) {
                        o += (size_t) snprintf(out + o, cap - o, "%s", cwd);
                        p += 2;
                } else
                        out[o++] = *p++;
        out[o] = '\0';
        return out;
}

static void test_realistic_file_translates_exactly(void **state) {
        cordon_settings *srt = resolve_text(srt_template);
        char *from_srt = policy_text(srt);

        char *hand = fill(cordon_template);
        cordon_settings *ours = resolve_text(hand);
        char *from_ours = policy_text(ours);
        assert_string_equal(from_srt, from_ours);

        /* What was left out is reported, with the key and where it is. */
        assert_int_equal(cordon_settings_n_ignored(srt), 2);
        const cordon_settings_note *n = cordon_settings_ignored(srt, 0);
        assert_string_equal(n->layer, "settings");
        assert_string_equal(n->key, "network.allowLocalBinding");
        assert_null(n->value);
        assert_int_equal(n->line, 13);
        assert_int_equal(n->column, 26);
        n = cordon_settings_ignored(srt, 1);
        assert_string_equal(n->key, "credentials.files");
        assert_string_equal(n->value, "~/.config/gh/hosts.yml");
        assert_int_equal(n->line, 18);
        assert_non_null(strstr(n->why, "the secret is denied instead"));
        assert_int_equal(cordon_settings_n_ignored(ours), 0);

        /* Provenance names the srt key each value came from. */
        char *text = NULL;
        assert_int_equal(cordon_settings_to_text(srt, &text, NULL), 0);
        char want[PATH_MAX * 2];
        snprintf(want, sizeof(want), "%s/.netrc", home);
        const char *line = strstr(text, want);
        assert_non_null(line);
        assert_non_null(strstr(line, "(credentials.files)"));
        assert_true(strstr(line, "(credentials.files)") < strchr(line, '\n'));
        free(text);

        cordon_settings_free(srt);
        cordon_settings_free(ours);
        free(from_srt);
        free(from_ours);
        free(hand);
}

static void test_import_round_trip(void **state) {
        tmptree_write(root, "s.json", srt_template, 0644);
        char *out = NULL, *notes = NULL;
        cordon_error err = { 0 };
        assert_int_equal(cordon_settings_import(file, cwd, home, &out, &notes, &err), 0);
        /* The imported file is cordon's format and resolves to the same policy. */
        json_t *j = json_loads(out, 0, NULL);
        assert_non_null(j);
        assert_non_null(json_object_get(j, "sandbox"));
        assert_int_equal(json_object_size(j), 1);
        json_decref(j);
        cordon_settings *imported = resolve_text(out);
        char *hand = fill(cordon_template);
        cordon_settings *ours = resolve_text(hand);
        char *a = policy_text(imported), *b = policy_text(ours);
        assert_string_equal(a, b);
        char want[PATH_MAX * 4];
        snprintf(want, sizeof(want), "%s:13:26: network.allowLocalBinding: left out: not honoured "
                 "(marked best-effort): the command has its own loopback: a server it starts is "
                 "not reachable from the host\n", file);
        assert_memory_equal(notes, want, strlen(want));
        snprintf(want, sizeof(want), "%s: relative paths and the workspace were resolved against "
                 "%s: the output is for that directory\n", file, cwd);
        assert_non_null(strstr(notes, want));
        free(a);
        free(b);
        free(hand);
        free(out);
        free(notes);
        cordon_settings_free(imported);
        cordon_settings_free(ours);

        /* A cordon-format file imports as itself (env.set values kept: it is a conversion). */
        tmptree_write(root, "s.json",
                    "{\"sandbox\": {\"env\": {\"set\": {\"LANG\": \"C.UTF-8\"}}}, "
                    "\"excludedCommands\": [\"git status\", [\"echo\", \"a b\"]]}", 0644);
        assert_int_equal(cordon_settings_import(file, cwd, home, &out, &notes, &err), 0);
        assert_null(notes);
        assert_string_equal(out, "{\n  \"sandbox\": {\n    \"env\": {\n      \"set\": {\n"
                                 "        \"LANG\": \"C.UTF-8\"\n      }\n    }\n  },\n"
                                 "  \"excludedCommands\": [\n    \"git status\",\n    [\n"
                                 "      \"echo\",\n      \"a b\"\n    ]\n  ]\n}");
        free(out);
}

/* The runtime writes nowhere allowWrite does not name: cordon's default workspace becomes
 * read-only unless an entry covers it. */
static void test_workspace_follows_allow_write(void **state) {
        cordon_settings *s = resolve_text("{\"filesystem\": {\"allowWrite\": [\"/var/tmp/out\"]}}");
        const cordon_policy *p = cordon_settings_policy(s);
        bool ws_ro = false, out_rw = false;
        for (size_t i = 0; i < p->n_binds; i++) {
                ws_ro |= strcmp(p->binds[i].host_path, cwd) == 0 && p->binds[i].read_only;
                out_rw |= strcmp(p->binds[i].host_path, "/var/tmp/out") == 0 &&
                          !p->binds[i].read_only;
        }
        assert_true(ws_ro);
        assert_true(out_rw);
        cordon_settings_free(s);

        /* A parent of the workspace covers it. */
        char json[PATH_MAX + 64];
        snprintf(json, sizeof(json), "{\"filesystem\": {\"allowWrite\": [\"%s\"]}}", root);
        s = resolve_text(json);
        p = cordon_settings_policy(s);
        for (size_t i = 0; i < p->n_binds; i++)
                assert_false(p->binds[i].read_only);
        cordon_settings_free(s);
}

static void test_network_mapping(void **state) {
        cordon_settings *s = resolve_text("{\"network\": {\"allowedDomains\": []}}");
        assert_false(cordon_settings_policy(s)->network_enabled);
        cordon_settings_free(s);
        s = resolve_text("{\"network\": {\"allowedDomains\": [\"github.com\"], "
                         "\"deniedDomains\": [\"*\"]}}");
        assert_false(cordon_settings_policy(s)->network_enabled);
        assert_true(cordon_settings_policy(s)->network_set);
        cordon_settings_free(s);
        s = resolve_text("{\"network\": {\"allowedDomains\": [\"localhost\", \"example.com\"], "
                         "\"strictAllowlist\": false}}");
        assert_true(cordon_settings_policy(s)->network_enabled);
        assert_true(strv_contains(&cordon_settings_policy(s)->egress_allowlist, "localhost"));
        cordon_settings_free(s);
}

int main(void) {
        umask(022);
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_realistic_file_translates_exactly, setup,
                                                teardown),
                cmocka_unit_test_setup_teardown(test_import_round_trip, setup, teardown),
                cmocka_unit_test_setup_teardown(test_workspace_follows_allow_write, setup,
                                                teardown),
                cmocka_unit_test_setup_teardown(test_network_mapping, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
