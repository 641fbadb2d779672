/* SPDX-License-Identifier: Apache-2.0 */
/* Project settings: where they are found (the project root) and when their loosening items
 * apply (the trust store, keyed by path and SHA-256), on real files under /var/tmp
 * (docs/settings.md, "Project settings: the project root and trust"). */
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
#include <unistd.h>

#include <cmocka.h>

#include "cordon/cordon.h"
#include "policy/policy.h"
#include "settings/settings-trust.h"
#include "tmptree.h"

#define DANGER "{\"sandbox\": {\"mode\": \"danger-full-access\"}}\n"
#define STORE "home/.config/cordon/trusted-projects.json"

static char *root;

static int setup(void **state) {
        root = tmptree_new_workspace("settings");
        return 0;
}

static int teardown(void **state) {
        tmptree_remove(root);
        root = NULL;
        return 0;
}

/* Resolves for a run whose working directory is root/rel, home root/home, no managed file. */
static int resolve_in(const char *rel, const char *managed, cordon_settings **ret,
                      cordon_error *err) {
        char cwd[PATH_MAX], home[PATH_MAX], man[PATH_MAX];
        snprintf(cwd, sizeof(cwd), "%s/%s", root, rel);
        snprintf(home, sizeof(home), "%s/home", root);
        snprintf(man, sizeof(man), "%s/%s", root, managed ? managed : "no-managed.json");
        cordon_settings_options o = { .cwd = cwd, .home = home, .managed_path = man };
        return cordon_settings_resolve(&o, ret, err);
}

static cordon_settings *resolve_ok(const char *rel) {
        cordon_settings *s = NULL;
        cordon_error err = { 0 };
        if (resolve_in(rel, NULL, &s, &err) < 0)
                fail_msg("resolve in %s failed: %s", rel, err.message);
        return s;
}

static const char *resolve_err(const char *rel) {
        static cordon_error err;
        cordon_settings *s = NULL;
        memset(&err, 0, sizeof(err));
        assert_true(resolve_in(rel, NULL, &s, &err) < 0);
        assert_null(s);
        return err.message;
}

static bool is_danger(const cordon_settings *s) {
        return cordon_policy_get_mode(cordon_settings_policy(s)) == CORDON_MODE_DANGER_FULL_ACCESS;
}

static void trust(const char *rel) {
        cordon_settings *s = resolve_ok(rel);
        cordon_error err = { 0 };
        if (cordon_settings_trust_project(s, NULL, &err) < 0)
                fail_msg("trust failed: %s", err.message);
        cordon_settings_free(s);
}

/* ---- the exact reproduction ------------------------------------------------------------------ */

/* A file a sandboxed command (or a clone) left in a subdirectory: the next run there keeps the
 * sandbox on and says so; once trusted it applies; a changed byte makes it untrusted again. */
static void test_sub_project_untrusted_then_trusted(void **state) {
        tmptree_write(root, "ws/sub/.cordon/settings.json", DANGER, 0644);
        cordon_settings *s = resolve_ok("ws/sub");
        assert_false(is_danger(s));
        assert_int_equal(cordon_settings_n_ignored(s), 1);
        const cordon_settings_note *n = cordon_settings_ignored(s, 0);
        assert_string_equal(n->key, "sandbox.mode");
        assert_string_equal(n->file, tmptree_at(root, "ws/sub/.cordon/settings.json"));
        char want[PATH_MAX + 256];
        snprintf(want, sizeof(want), "turns the sandbox off; ignored because the project settings "
                 "are not trusted; to trust this exact content, run outside the sandbox: cordon "
                 "settings trust %s", tmptree_at(root, "ws/sub/.cordon/settings.json"));
        assert_string_equal(n->why, want);
        /* The project root's .cordon is protected along with the workspace's. */
        const cordon_policy *p = cordon_settings_policy(s);
        assert_true(strv_contains(&p->protected_paths, tmptree_at(root, "ws/sub/.cordon")));
        cordon_settings_free(s);

        trust("ws/sub");
        s = resolve_ok("ws/sub");
        assert_true(is_danger(s));
        assert_true(cordon_settings_project_trusted(s));
        assert_int_equal(cordon_settings_n_ignored(s), 0);
        /* --explain --json says which project file was read and whether it is trusted. */
        char *text = NULL;
        cordon_error xerr = { 0 };
        assert_int_equal(cordon_settings_to_json(s, &text, &xerr), 0);
        json_t *j = json_loads(text, 0, NULL);
        json_t *proj = json_object_get(j, "project");
        assert_string_equal(json_string_value(json_object_get(proj, "file")),
                            tmptree_at(root, "ws/sub/.cordon/settings.json"));
        assert_true(json_is_true(json_object_get(proj, "trusted")));
        json_decref(j);
        free(text);
        cordon_settings_free(s);

        /* One byte more: untrusted again. */
        tmptree_write(root, "ws/sub/.cordon/settings.json", DANGER " ", 0644);
        s = resolve_ok("ws/sub");
        assert_false(is_danger(s));
        assert_false(cordon_settings_project_trusted(s));
        cordon_settings_free(s);

        /* The record is keyed by path: the same content elsewhere is not trusted. */
        tmptree_write(root, "ws/sub/.cordon/settings.json", DANGER, 0644);
        tmptree_write(root, "ws/other/.cordon/settings.json", DANGER, 0644);
        s = resolve_ok("ws/other");
        assert_false(is_danger(s));
        cordon_settings_free(s);
        s = resolve_ok("ws/sub");
        assert_true(is_danger(s));
        cordon_settings_free(s);

        /* A run entering through a symlink reads (and trusts) the same, resolved, file. */
        assert_int_equal(symlink(tmptree_at(root, "ws/sub"), tmptree_at(root, "ws/sub-link")), 0);
        s = resolve_ok("ws/sub-link");
        assert_string_equal(cordon_settings_project_file(s),
                            tmptree_at(root, "ws/sub/.cordon/settings.json"));
        assert_true(is_danger(s));
        cordon_settings_free(s);

        /* Untrusted again by the explicit step. */
        cordon_error err = { 0 };
        char home[PATH_MAX];
        snprintf(home, sizeof(home), "%s/home", root);
        assert_int_equal(cordon_settings_untrust_project(
                                 home, NULL, tmptree_at(root, "ws/sub/.cordon/settings.json"), &err),
                         1);
        assert_int_equal(cordon_settings_untrust_project(
                                 home, NULL, tmptree_at(root, "ws/sub/.cordon/settings.json"), &err),
                         0);
        s = resolve_ok("ws/sub");
        assert_false(is_danger(s));
        cordon_settings_free(s);
}

/* A writable bind outside the workspace, from an untrusted project file: left out. */
static void test_writable_bind_ignored(void **state) {
        tmptree_write(root, "ws/.cordon/settings.json",
                    "{\"sandbox\": {\"bindMounts\": [{\"hostPath\": \"/var/tmp\"}],"
                    " \"denyRead\": [\"/var/tmp/s\"]}}",
                    0644);
        cordon_settings *s = resolve_ok("ws");
        const cordon_policy *p = cordon_settings_policy(s);
        for (size_t i = 0; i < p->n_binds; i++)
                assert_string_not_equal(p->binds[i].host_path, "/var/tmp");
        /* Tightening stays. */
        assert_true(strv_contains(&p->deny_read, "/var/tmp/s"));
        assert_int_equal(cordon_settings_n_ignored(s), 1);
        assert_string_equal(cordon_settings_ignored(s, 0)->value, "/var/tmp");
        cordon_settings_free(s);
}

/* The ask mode from an untrusted project file: its answers could allow what no entry lists, and
 * the answerer may be a program that says yes to everything: left out and reported; the
 * timeout, which allows nothing, stays; once trusted it applies. */
static void test_ask_mode_ignored(void **state) {
        tmptree_write(root, "ws/.cordon/settings.json",
                      "{\"sandbox\": {\"egressMode\": \"ask\", \"egressAskTimeout\": \"5s\"}}",
                      0644);
        cordon_settings *s = resolve_ok("ws");
        assert_false(cordon_settings_policy(s)->egress_mode_set &&
                     cordon_settings_policy(s)->egress_mode == CORDON_EGRESS_ASK);
        assert_int_equal(cordon_settings_policy(s)->egress_ask_timeout_ms, 5000);
        assert_int_equal(cordon_settings_n_ignored(s), 1);
        const cordon_settings_note *n = cordon_settings_ignored(s, 0);
        assert_string_equal(n->key, "sandbox.egressMode");
        assert_string_equal(n->value, "ask");
        assert_non_null(strstr(n->why, "unlisted destinations"));
        cordon_settings_free(s);
        trust("ws");
        s = resolve_ok("ws");
        assert_int_equal(cordon_settings_policy(s)->egress_mode, CORDON_EGRESS_ASK);
        cordon_settings_free(s);
}

/* An upstream proxy from an untrusted project file would receive every allowed connection: left
 * out, and reported without its password; once trusted it applies, still shown redacted. */
static void test_upstream_ignored_redacted(void **state) {
        tmptree_write(root, "ws/.cordon/settings.json",
                      "{\"sandbox\": {\"egressUpstream\": \"http://u:s3cr3t@10.1.2.3:3128\"}}",
                      0644);
        cordon_settings *s = resolve_ok("ws");
        assert_null(cordon_settings_policy(s)->egress_upstream);
        assert_int_equal(cordon_settings_n_ignored(s), 1);
        const cordon_settings_note *n = cordon_settings_ignored(s, 0);
        assert_string_equal(n->key, "sandbox.egressUpstream");
        assert_string_equal(n->value, "http://u:****@10.1.2.3:3128");
        assert_non_null(strstr(n->why, "through another proxy"));
        for (int as_json = 0; as_json < 2; as_json++) {
                char *text = NULL;
                assert_int_equal(as_json ? cordon_settings_to_json(s, &text, NULL)
                                         : cordon_settings_to_text(s, &text, NULL),
                                 0);
                assert_null(strstr(text, "s3cr3t"));
                free(text);
        }
        cordon_settings_free(s);
        trust("ws");
        s = resolve_ok("ws");
        assert_string_equal(cordon_settings_policy(s)->egress_upstream,
                            "http://u:s3cr3t@10.1.2.3:3128");
        for (int as_json = 0; as_json < 2; as_json++) {
                char *text = NULL;
                assert_int_equal(as_json ? cordon_settings_to_json(s, &text, NULL)
                                         : cordon_settings_to_text(s, &text, NULL),
                                 0);
                assert_null(strstr(text, "s3cr3t"));
                assert_non_null(strstr(text, "http://u:****@10.1.2.3:3128"));
                free(text);
        }
        cordon_settings_free(s);
}

/* The mandate wins over trust: a trusted project file still may not loosen under it. */
static void test_mandate_beats_trust(void **state) {
        tmptree_write(root, "ws/.cordon/settings.json", DANGER, 0644);
        tmptree_write(root, "managed.json", "{\"allowUnsandboxedCommands\": false}", 0644);
        trust("ws");
        cordon_settings *s = NULL;
        cordon_error err = { 0 };
        assert_int_equal(resolve_in("ws", "managed.json", &s, &err), 0);
        assert_false(is_danger(s));
        assert_int_equal(cordon_settings_n_ignored(s), 1);
        assert_non_null(strstr(cordon_settings_ignored(s, 0)->why, "forbid unsandboxed"));
        cordon_settings_free(s);
}

/* ---- the project root ---------------------------------------------------------------------- */

static void test_project_root(void **state) {
        /* The nearest ancestor holding .cordon/settings.json. */
        tmptree_write(root, "ws/.cordon/settings.json", "{\"sandbox\": {\"denyRead\": [\"/a\"]}}",
                    0644);
        tmptree_write(root, "ws/a/b/c/file", "", 0644);
        cordon_settings *s = resolve_ok("ws/a/b");
        assert_string_equal(cordon_settings_project_file(s),
                            tmptree_at(root, "ws/.cordon/settings.json"));
        assert_true(strv_contains(&cordon_settings_policy(s)->deny_read, "/a"));
        assert_true(strv_contains(&cordon_settings_policy(s)->protected_paths,
                                  tmptree_at(root, "ws/.cordon")));
        assert_true(strv_contains(&cordon_settings_policy(s)->protected_paths,
                                  tmptree_at(root, "ws/a/b/.cordon")));
        cordon_settings_free(s);
        tmptree_write(root, "ws/a/.cordon/settings.json", "{}", 0644);
        s = resolve_ok("ws/a/b");
        assert_string_equal(cordon_settings_project_file(s),
                            tmptree_at(root, "ws/a/.cordon/settings.json"));
        cordon_settings_free(s);

        /* Never above $HOME. */
        tmptree_write(root, ".cordon/settings.json", "{\"sandbox\": {\"denyRead\": [\"/b\"]}}",
                    0644);
        tmptree_write(root, "home/proj/x", "", 0644);
        s = resolve_ok("home/proj");
        assert_null(cordon_settings_project_file(s));
        cordon_settings_free(s);
        /* Outside $HOME it is found (root/ws is not beneath root/home). */
        s = resolve_ok("ws/a/b/c");
        assert_string_equal(cordon_settings_project_file(s),
                            tmptree_at(root, "ws/a/.cordon/settings.json"));
        cordon_settings_free(s);

        /* Not in or above a directory others may write (a /tmp-like directory). */
        assert_int_equal(chmod(tmptree_at(root, "ws/a/b"), 01777), 0);
        s = resolve_ok("ws/a/b/c");
        assert_null(cordon_settings_project_file(s));
        cordon_settings_free(s);
        /* Group-writable (umask 002): searched. */
        assert_int_equal(chmod(tmptree_at(root, "ws/a/b"), 0775), 0);
        s = resolve_ok("ws/a/b/c");
        assert_string_equal(cordon_settings_project_file(s),
                            tmptree_at(root, "ws/a/.cordon/settings.json"));
        cordon_settings_free(s);
        assert_int_equal(chmod(tmptree_at(root, "ws/a/b"), 0755), 0);
        /* Owned by another user: not searched (they could plant a .cordon there). */
        if (geteuid() == 0) {
                assert_int_equal(chown(tmptree_at(root, "ws/a/b"), 65534, 65534), 0);
                s = resolve_ok("ws/a/b/c");
                assert_null(cordon_settings_project_file(s));
                cordon_settings_free(s);
                assert_int_equal(chown(tmptree_at(root, "ws/a/b"), 0, 0), 0);
        }
}

/* ---- the trust store is read strictly -------------------------------------------------------- */

static void expect_store_error(const char *content, mode_t mode, const char *want) {
        tmptree_write(root, STORE, content, mode);
        const char *msg = resolve_err("ws");
        if (!strstr(msg, want))
                fail_msg("expected '%s' in: %s", want, msg);
}

static void test_store_validation(void **state) {
        tmptree_write(root, "ws/.cordon/settings.json", DANGER, 0644);
        char sha[TRUST_SHA256_HEX];
        assert_int_equal(trust_sha256_hex(DANGER, strlen(DANGER), sha), 0);
        char good[PATH_MAX + 256];
        snprintf(good, sizeof(good), "{\"trusted\": [{\"path\": \"%s\", \"sha256\": \"%s\"}]}",
                 tmptree_at(root, "ws/.cordon/settings.json"), sha);
        tmptree_write(root, STORE, good, 0600);
        cordon_settings *s = resolve_ok("ws");
        assert_true(is_danger(s));
        cordon_settings_free(s);

        expect_store_error(good, 0666, "the trust store is writable by other users (mode 0666)");
        expect_store_error("{\"trusted\": [], \"trustAll\": true}", 0600,
                           "trusted-projects.json:1:17: key 'trustAll'");
        expect_store_error("{\"trusted\": [{\"path\": \"/x/.cordon/settings.json\", "
                           "\"sha256\": \"ABC\"}]}",
                           0600, ":1:61: key 'trusted[0].sha256': not a SHA-256");
        expect_store_error("{\"trusted\": [{\"path\": \"x/settings.json\", \"sha256\": \"\"}]}",
                           0600, "key 'trusted[0].path'");
        expect_store_error("{\"trusted\": {}}", 0600, "key 'trusted': expected an array");
        expect_store_error("{\"trusted\": [], \"trusted\": []}", 0600, "duplicate");
        expect_store_error("[1,", 0600, "trusted-projects.json:1:");
        /* A symlink is refused (the store is cordon's own regular file). */
        assert_int_equal(unlink(tmptree_at(root, STORE)), 0);
        tmptree_write(root, "elsewhere.json", good, 0600);
        assert_int_equal(symlink(tmptree_at(root, "elsewhere.json"), tmptree_at(root, STORE)), 0);
        (void) resolve_err("ws");
        assert_int_equal(unlink(tmptree_at(root, STORE)), 0);
        /* Owned by someone else. */
        if (geteuid() == 0) {
                tmptree_write(root, STORE, good, 0600);
                assert_int_equal(chown(tmptree_at(root, STORE), 65534, 65534), 0);
                expect_store_error(good, 0600, "the trust store belongs to uid 65534");
                assert_int_equal(unlink(tmptree_at(root, STORE)), 0);
        }
        /* A broken store does not stop a run whose project file loosens nothing. */
        tmptree_write(root, STORE, "not json", 0600);
        tmptree_write(root, "ws/.cordon/settings.json", "{}", 0644);
        cordon_settings_free(resolve_ok("ws"));
        assert_int_equal(unlink(tmptree_at(root, STORE)), 0);
}

/* The SHA-256 is the real one (FIPS 180-4 test vector). */
static void test_sha256(void **state) {
        char sha[TRUST_SHA256_HEX];
        assert_int_equal(trust_sha256_hex("abc", 3, sha), 0);
        assert_string_equal(sha,
                            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

/* The listing says which records still match. */
static void test_list(void **state) {
        tmptree_write(root, "ws/l1/.cordon/settings.json", DANGER, 0644);
        tmptree_write(root, "ws/l2/.cordon/settings.json", DANGER, 0644);
        trust("ws/l1");
        trust("ws/l2");
        tmptree_write(root, "ws/l2/.cordon/settings.json", DANGER "\n", 0644);
        char home[PATH_MAX], *text = NULL;
        cordon_error err = { 0 };
        snprintf(home, sizeof(home), "%s/home", root);
        assert_int_equal(cordon_settings_trusted_list(home, NULL, true, &text, &err), 0);
        json_t *j = json_loads(text, 0, NULL);
        assert_non_null(j);
        size_t i;
        json_t *e;
        int seen = 0;
        json_array_foreach(j, i, e) {
                const char *path = json_string_value(json_object_get(e, "path"));
                const char *st = json_string_value(json_object_get(e, "state"));
                if (strcmp(path, tmptree_at(root, "ws/l1/.cordon/settings.json")) == 0)
                        seen += strcmp(st, "trusted") == 0;
                if (strcmp(path, tmptree_at(root, "ws/l2/.cordon/settings.json")) == 0)
                        seen += strcmp(st, "changed") == 0;
        }
        assert_int_equal(seen, 2);
        json_decref(j);
        free(text);
        struct stat st;
        assert_int_equal(stat(tmptree_at(root, STORE), &st), 0);
        assert_int_equal(st.st_mode & 07777, 0600);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_sub_project_untrusted_then_trusted, setup,
                                                teardown),
                cmocka_unit_test_setup_teardown(test_writable_bind_ignored, setup, teardown),
                cmocka_unit_test_setup_teardown(test_upstream_ignored_redacted, setup, teardown),
cmocka_unit_test_setup_teardown(test_ask_mode_ignored, setup, teardown),
                cmocka_unit_test_setup_teardown(test_mandate_beats_trust, setup, teardown),
                cmocka_unit_test_setup_teardown(test_project_root, setup, teardown),
                cmocka_unit_test_setup_teardown(test_store_validation, setup, teardown),
                cmocka_unit_test(test_sha256),
                cmocka_unit_test_setup_teardown(test_list, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
