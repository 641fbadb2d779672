/* SPDX-License-Identifier: Apache-2.0 */
/* The JSON policy loader: every key, and every error with its exact file:line:col. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <sys/stat.h>

#include <cmocka.h>
#include <jansson.h>

#include "policy/json-pos.h"
#include "policy/policy.h"
#include "cleanup.h"
#include "tmptree.h"


static int load(cordon_policy *p, const char *json, cordon_error *err) {
        return cordon_policy_load_string(p, json, strlen(json), "t.json", err);
}

/* Loads `json` (len bytes) into a fresh policy and checks the message starts with `prefix`. */
static void expect_error_n(const char *json, size_t len, const char *prefix) {
        _cleanup_policy_ cordon_policy *p = test_policy_new();
        cordon_error err = { 0 };
        assert_true(cordon_policy_load_string(p, json, len, "t.json", &err) < 0);
        assert_int_equal(err.code, CORDON_POLICY_INVALID);
        char got[sizeof(err.message)];
        snprintf(got, sizeof(got), "%.*s", (int) strlen(prefix), err.message);
        if (strcmp(got, prefix) != 0)
                print_message("full message: %s\n", err.message);
        assert_string_equal(got, prefix);
        /* A failed load leaves nothing behind. */
        assert_int_equal(p->n_binds + p->deny_read.n + p->protected_paths.n, 0);
        assert_false(p->mode_set);
}

static void expect_error(const char *json, const char *prefix) {
        expect_error_n(json, strlen(json), prefix);
}

static void test_unknown_keys(void **state) {
        expect_error("{\n  \"mode\": \"read-only\",\n  \"bogus\": 1\n}",
                     "t.json:3:3: key 'bogus': unknown key; allowed keys here: sessionId, "
                     "workspaceId, agentId, bindMounts, mode");
        expect_error("{\"netwrkEnabled\": false}",
                     "t.json:1:2: key 'netwrkEnabled': unknown key; did you mean "
                     "'networkEnabled'?");
        expect_error("{\"limits\": {\"timeout\": \"30s\",\n            \"memroy\": 5}}",
                     "t.json:2:13: key 'limits.memroy': unknown key; did you mean 'memory'?");
        expect_error("{\"bindMounts\": [{\"hostPath\": \"/w\"}, {\"hostPath\": \"/x\", "
                     "\"ro\": true}]}",
                     "t.json:1:56: key 'bindMounts[1].ro': unknown key; allowed keys here: "
                     "hostPath, guestPath, readOnly");
        expect_error("{\"env\": {\"passthrough\": []}}",
                     "t.json:1:10: key 'env.passthrough': unknown key; allowed keys here: pass, "
                     "set, scrub");
        /* Keys are matched exactly: the documented camelCase only. */
        expect_error("{\"session_id\": \"x\"}", "t.json:1:2: key 'session_id': unknown key");
}

static void test_wrong_types(void **state) {
        expect_error("{\"mode\": 1}",
                     "t.json:1:10: key 'mode': expected a string, got an integer; write it like "
                     "\"mode\": \"workspace-write\"");
        expect_error("{\"denyRead\": [1]}",
                     "t.json:1:15: key 'denyRead[0]': expected a string, got an integer");
        expect_error("{\"denyRead\": \"/x\"}",
                     "t.json:1:14: key 'denyRead': expected an array of strings, got a string");
        expect_error("{\"networkEnabled\": \"false\"}",
                     "t.json:1:20: key 'networkEnabled': expected a boolean, got a string");
        expect_error("{\"mode\": null}", "t.json:1:10: key 'mode': expected a string, got null");
        expect_error("{\"env\": []}", "t.json:1:9: key 'env': expected an object, got an array");
        expect_error("{\"limits\": {\"pids\": 1.5}}",
                     "t.json:1:21: key 'limits.pids': expected an integer, got a real number");
        expect_error("{\"bindMounts\": [{\"hostPath\": \"/w\", \"readOnly\": \"yes\"}]}",
                     "t.json:1:48: key 'bindMounts[0].readOnly': expected a boolean, got a "
                     "string");
        expect_error("[1]", "t.json:1:1: the policy must be a JSON object, not an array");
}

static void test_bad_values(void **state) {
        expect_error("{\"protectedPaths\": [\"/ok\",\n                    \"rel/x\"]}",
                     "t.json:2:21: key 'protectedPaths[1]': 'rel/x' must be an absolute path; "
                     "use an absolute path");
        expect_error("{\"denyWrite\": [\"/a/../b\"]}",
                     "t.json:1:16: key 'denyWrite[0]': '/a/../b' must not contain '..' "
                     "components");
        expect_error("{\"bindMounts\": [\n  {\"hostPath\": \"/w\", \"guestPath\": \"/x\"}\n]}",
                     "t.json:2:35: key 'bindMounts[0].guestPath': must equal hostPath on the "
                     "native backend; omit guestPath or set it to hostPath");
        expect_error("{\"bindMounts\": [{\"readOnly\": true}]}",
                     "t.json:1:17: key 'bindMounts[0]': a bind mount needs 'hostPath'");
        expect_error("{\"bindMounts\": [{\"hostPath\": \"/w\"}, {\"hostPath\": \"/w/\"}]}",
                     "t.json:1:50: key 'bindMounts[1].hostPath': this hostPath is already "
                     "bound");
        expect_error("{\"mode\": \"yolo\"}",
                     "t.json:1:10: key 'mode': unknown mode 'yolo'; use one of chat, "
                     "workspace-write, review, plan, orchestrate, read-only, danger-full-access");
        expect_error("{\"limits\": {\"memory\": \"12Q\"}}",
                     "t.json:1:23: key 'limits.memory': '12Q' is not a valid value; write bytes");
        expect_error("{\"limits\": {\"memory\": 1024}}",
                     "t.json:1:23: key 'limits.memory': must be between 1M and 1P bytes");
        expect_error("{\"limits\": {\"tmpSize\": \"lots\"}}",
                     "t.json:1:24: key 'limits.tmpSize': 'lots' is not a valid value; write bytes");
        expect_error("{\"limits\": {\"shmSize\": 4096}}",
                     "t.json:1:24: key 'limits.shmSize': must be between 1M and 1T bytes");
        expect_error("{\"limits\": {\"tmpsize\": \"1G\"}}",
                     "t.json:1:13: key 'limits.tmpsize': unknown key; did you mean 'tmpSize'?");
        expect_error("{\"limits\": {\"cpus\": 0}}",
                     "t.json:1:21: key 'limits.cpus': must be between 1 and 255");
        expect_error("{\"limits\": {\"cpus\": 256}}",
                     "t.json:1:21: key 'limits.cpus': must be between 1 and 255");
        expect_error("{\"limits\": {\"cpus\": \"2\"}}",
                     "t.json:1:21: key 'limits.cpus': expected an integer");
        expect_error("{\"limits\": {\"wildcardNames\": 0}}",
                     "t.json:1:30: key 'limits.wildcardNames': must be between 1 and 65536");
        expect_error("{\"limits\": {\"wildcardNames\": 65537}}",
                     "t.json:1:30: key 'limits.wildcardNames': must be between 1 and 65536");
        expect_error("{\"limits\": {\"wildcardNames\": \"many\"}}",
                     "t.json:1:30: key 'limits.wildcardNames': expected an integer");
        expect_error("{\"limits\": {\"pids\": -1}}",
                     "t.json:1:21: key 'limits.pids': must not be negative");
        expect_error("{\"limits\": {\"timeout\": 0}}",
                     "t.json:1:24: key 'limits.timeout': must be between 1ms and 30 days");
        expect_error("{\"limits\": {\"timeout\": \"30x\"}}",
                     "t.json:1:24: key 'limits.timeout': '30x' is not a valid value");
        expect_error("{\"limits\": {\"cpu\": \"60s\"}}",
                     "t.json:1:20: key 'limits.cpu': expected an integer, got a string");
        expect_error("{\"denyCreateNames\": [\"a/b\"]}",
                     "t.json:1:22: key 'denyCreateNames[0]': 'a/b' is a file-name glob and must "
                     "not contain '/'");
        expect_error("{\"allowCreateNames\": [\"tests/x.pem\"]}",
                     "t.json:1:23: key 'allowCreateNames[0]': 'tests/x.pem' is a file-name glob "
                     "and must not contain '/'");
        expect_error("{\"allowCreateNames\": [\"..\"]}",
                     "t.json:1:23: key 'allowCreateNames[0]': '..' must not be '.' or '..'");
        expect_error("{\"allowCreatePaths\": [\"tests/data/x.pem\"]}",
                     "t.json:1:23: key 'allowCreatePaths[0]': 'tests/data/x.pem' must be an "
                     "absolute path");
        expect_error("{\"allowCreatePaths\": [\"/w/../x.pem\"]}",
                     "t.json:1:23: key 'allowCreatePaths[0]': '/w/../x.pem' must not contain '..'");
        expect_error("{\"allowCreatePaths\": \"/w/x.pem\"}",
                     "t.json:1:22: key 'allowCreatePaths': expected an array of strings, got a "
                     "string");
        expect_error("{\"env\": {\"set\": {\"1A\": \"x\"}}}",
                     "t.json:1:18: key 'env.set.1A': variable name must match");
        expect_error("{\"env\": {\"set\": {\"A\": 1}}}",
                     "t.json:1:23: key 'env.set.A': expected a string, got an integer");
        expect_error("{\"env\": {\"pass\": [\"A-B\"]}}",
                     "t.json:1:19: key 'env.pass[0]': 'A-B' must match");
        expect_error("{\"sessionId\": \"a b\"}",
                     "t.json:1:15: key 'sessionId': 'a b' may contain only printable ASCII");
        expect_error("{\"egressAllowlist\": [\"http://x\"]}",
                     "t.json:1:22: key 'egressAllowlist[0]': 'http://x' may contain only");
        /* A control character in a value is shown as '?', never echoed raw. */
        expect_error("{\"denyRead\": [\"/a\\nb\"]}",
                     "t.json:1:15: key 'denyRead[0]': '/a?b' must not contain control "
                     "characters");
}

/* Positions survive escapes in keys and multi-byte characters before the error. */
static void test_positions(void **state) {
        expect_error("{\"mo\\u0064e\": 5}", "t.json:1:15: key 'mode': expected a string");
        expect_error("{\"denyRead\": [\"/\xc3\xa9\"], \"mode\": 7}",
                     "t.json:1:30: key 'mode': expected a string");
        expect_error("{\"sessionId\": \"\\ud83d\\ude00\"}",
                     "t.json:1:15: key 'sessionId': '\xf0\x9f\x98\x80' may contain only");
        expect_error("\r\n\t{ \"denyRead\" :\r\n [ \"/a\" , 3 ] }",
                     "t.json:3:11: key 'denyRead[1]': expected a string");
        /* The value of a duplicate-free sibling with the same prefix is not confused. */
        expect_error("{\"modeX\": 1}", "t.json:1:2: key 'modeX': unknown key; did you mean");
}

static void test_syntax_errors(void **state) {
        expect_error("{\"mode\": \"chat\",\n \"mode\": \"plan\"}",
                     "t.json:2:7: invalid JSON: duplicate object key near '\"mode\"'; each key "
                     "may appear only once in an object");
        expect_error("{\"mode\": \"chat\"} x",
                     "t.json:1:18: invalid JSON: end of file expected near 'x'; remove what "
                     "follows the closing '}'");
        expect_error("{\"sessionId\": \"a\\u0000b\"}",
                     "t.json:1:24: invalid JSON: \\u0000 is not allowed without JSON_ALLOW_NUL");
        static const char raw_nul[] = "{\"sessionId\": \"a\0b\"}";
        expect_error_n(raw_nul, sizeof(raw_nul) - 1,
                       "t.json:1:16: invalid JSON: control character 0x0");
        expect_error("", "t.json:1:0: invalid JSON: '[' or '{' expected near end of file");
        expect_error("{\"mode\": \"chat\"", "t.json:1:15: invalid JSON: '}' expected");
        expect_error("{\"mode\": \"ch\xff\"}", "t.json:1:12: invalid JSON: unable to decode");
        expect_error("{\"mode\": \"chat\",}", "t.json:1:17: invalid JSON:");
}

static void test_limits_on_input(void **state) {
        /* 17 levels: the root object plus 16 arrays; the 17th opening bracket is reported. */
        expect_error("{\"a\":[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]}",
                     "t.json:1:21: nesting deeper than 16 levels");
        /* Brackets inside strings do not count. */
        expect_error("{\"denyRead\": [\"/[[[[[[[[[[[[[[[[[[[[[[[[\"], \"x\": 1}",
                     "t.json:1:45: key 'x': unknown key");
        size_t big = POLICY_MAX_FILE + 1;
        char *buf = malloc(big);
        assert_non_null(buf);
        memset(buf, ' ', big);
        buf[0] = '{';
        buf[big - 1] = '}';
        expect_error_n(buf, big, "t.json: the policy is 1048577 bytes; at most 1048576 are "
                                 "allowed");
        /* Exactly at the limit it parses. */
        _cleanup_policy_ cordon_policy *p = test_policy_new();
        cordon_error err = { 0 };
        buf[big - 2] = '}';
        assert_int_equal(cordon_policy_load_string(p, buf, big - 1, "t.json", &err), 0);
        free(buf);
        /* An enormous unknown key is named, shortened, in a bounded message. */
        char *key = malloc(6000);
        assert_non_null(key);
        memset(key, 'k', 6000);
        memcpy(key, "{\"", 2);
        memcpy(key + 5990, "\": 1}", 6);
        expect_error(key, "t.json:1:2: key 'kkkk");
        free(key);
}

static const char full_policy[] =
        "{\n"
        "  \"sessionId\": \"s-1\",\n"
        "  \"workspaceId\": \"w-1\",\n"
        "  \"agentId\": \"a-1\",\n"
        "  \"bindMounts\": [{\"hostPath\": \"/w\", \"guestPath\": \"/w/\", \"readOnly\": false},\n"
        "                 {\"hostPath\": \"/data\", \"readOnly\": true}],\n"
        "  \"mode\": \"review\",\n"
        "  \"protectedPaths\": [\"/repo\"],\n"
        "  \"runnerStateDirs\": [\"/state\"],\n"
        "  \"denyRead\": [\"/w/secret\", \"/home/*/.token\"],\n"
        "  \"denyWrite\": [\"/w/ci.yml\"],\n"
        "  \"denyCreateNames\": [\"*.p12\"],\n"
        "  \"allowCreateNames\": [\".env.test\"],\n"
        "  \"allowCreatePaths\": [\"/w/tests/data/*.pem\"],\n"
        "  \"execGrantRoots\": [\"/tools\"],\n"
        "  \"networkEnabled\": false,\n"
        "  \"egressAllowlist\": [\"*.example.com\", \"api.example.org:443\"],\n"
        "  \"allowUnixSockets\": [\"/run/x.sock\"],\n"
        "  \"guestWorkdir\": \"/w/src\",\n"
        "  \"env\": {\"pass\": [\"GITHUB_TOKEN\"], \"set\": {\"LANG\": \"C.UTF-8\"},\n"
        "          \"scrub\": [\"*_COOKIE\"]},\n"
        "  \"limits\": {\"timeout\": \"2m\", \"memory\": \"512M\", \"pids\": 128, \"cpu\": 30}\n"
        "}\n";

static void test_every_key(void **state) {
        _cleanup_policy_ cordon_policy *p = test_policy_new();
        cordon_error err = { 0 };
        int r = load(p, full_policy, &err);
        if (r < 0)
                print_message("%s\n", err.message);
        assert_int_equal(r, 0);
        assert_string_equal(p->session_id, "s-1");
        assert_string_equal(p->workspace_id, "w-1");
        assert_string_equal(p->agent_id, "a-1");
        assert_int_equal(p->n_binds, 2);
        assert_string_equal(p->binds[0].host_path, "/w");
        assert_false(p->binds[0].read_only);
        assert_string_equal(p->binds[1].host_path, "/data");
        assert_true(p->binds[1].read_only);
        assert_true(p->mode_set);
        assert_int_equal(p->mode, CORDON_MODE_READ_ONLY);
        assert_string_equal(p->protected_paths.v[0], "/repo");
        assert_string_equal(p->runner_state_dirs.v[0], "/state");
        assert_int_equal(p->deny_read.n, 2);
        assert_string_equal(p->deny_read.v[1], "/home/*/.token");
        assert_string_equal(p->deny_write.v[0], "/w/ci.yml");
        assert_string_equal(p->deny_create_names.v[0], "*.p12");
        assert_string_equal(p->allow_create_names.v[0], ".env.test");
        assert_string_equal(p->allow_create_paths.v[0], "/w/tests/data/*.pem");
        assert_string_equal(p->exec_grant_roots.v[0], "/tools");
        assert_true(p->network_set);
        assert_false(p->network_enabled);
        assert_int_equal(p->egress_allowlist.n, 2);
        assert_string_equal(p->allow_unix_sockets.v[0], "/run/x.sock");
        assert_string_equal(p->workdir, "/w/src");
        assert_string_equal(p->env_pass.v[0], "GITHUB_TOKEN");
        assert_string_equal(p->env_set[0].name, "LANG");
        assert_string_equal(p->env_set[0].value, "C.UTF-8");
        assert_string_equal(p->env_scrub.v[0], "*_COOKIE");
        assert_int_equal(p->timeout_ms, 120000);
        assert_int_equal(p->memory_bytes, 512ULL << 20);
        assert_int_equal(p->pids, 128);
        assert_int_equal(p->cpu_seconds, 30);

        /* Integer forms of timeout and memory; null for the optional strings. */
        _cleanup_policy_ cordon_policy *q = test_policy_new();
        assert_int_equal(load(q,
                              "{\"limits\": {\"timeout\": 1500, \"memory\": 2097152, "
                              "\"pids\": null, \"cpu\": null}, \"sessionId\": null, "
                              "\"workspaceId\": null, \"agentId\": null, \"guestWorkdir\": null}",
                              &err),
                         0);
        assert_int_equal(q->timeout_ms, 1500);
        assert_int_equal(q->memory_bytes, 2097152);
        assert_null(q->agent_id);
        assert_null(q->workdir);
        assert_null(q->session_id);
        assert_int_equal(q->pids, 0);

        /* The tmpfs sizes: a size string or bytes; unset stays 0 (the plan's defaults). */
        _cleanup_policy_ cordon_policy *t = test_policy_new();
        assert_int_equal(load(t, "{\"limits\": {\"tmpSize\": \"512M\", \"shmSize\": 1048576}}",
                              &err),
                         0);
        assert_int_equal(t->tmp_bytes, 512ULL << 20);
        assert_int_equal(t->shm_bytes, 1048576);
        assert_int_equal(q->tmp_bytes, 0);
        /* The wildcard budget: a count; unset stays 0 (the plan's default, 64). */
        _cleanup_policy_ cordon_policy *w = test_policy_new();
        assert_int_equal(load(w, "{\"limits\": {\"wildcardNames\": 8}}", &err), 0);
        assert_int_equal(w->wildcard_names, 8);
        assert_int_equal(t->wildcard_names, 0);
}

static char *dump(const cordon_policy *p) {
        char *s = NULL;
        assert_int_equal(cordon_policy_to_json(p, 0, NULL, &s, NULL), 0);
        return s;
}

/* Loading merges (lists append, scalars replace); a failed load changes nothing. */
static void test_merge_and_atomicity(void **state) {
        _cleanup_policy_ cordon_policy *p = NULL;
        cordon_error err = { 0 };
        assert_int_equal(cordon_policy_new_default("/w", "/home/u", &p, &err), 0);
        assert_int_equal(load(p, "{\"mode\": \"plan\", \"denyCreateNames\": [\"*.p12\"]}", &err),
                         0);
        assert_int_equal(p->mode, CORDON_MODE_READ_ONLY);
        assert_true(strv_contains(&p->deny_create_names, ".env"));
        assert_true(strv_contains(&p->deny_create_names, "*.p12"));
        assert_int_equal(p->n_binds, 1);

        _cleanup_free_ char *before = dump(p);
        /* Valid keys before the bad one must not leak into the policy. */
        assert_true(load(p,
                         "{\"mode\": \"chat\", \"denyRead\": [\"/x\"], \"bindMounts\": "
                         "[{\"hostPath\": \"/y\"}], \"limits\": {\"pids\": \"many\"}}",
                         &err) < 0);
        assert_int_equal(err.code, CORDON_POLICY_INVALID);
        _cleanup_free_ char *after = dump(p);
        assert_string_equal(before, after);
}

static void test_load_file(void **state) {
        char *root = tmptree_new();
        _cleanup_policy_ cordon_policy *p = test_policy_new();
        cordon_error err = { 0 };

        char missing[4096];
        snprintf(missing, sizeof(missing), "%s", tmptree_path(root, "nope.json"));
        assert_true(cordon_policy_load_file(p, missing, &err) < 0);
        assert_int_equal(err.code, CORDON_POLICY_INVALID);
        assert_int_equal(err.sys_errno, ENOENT);
        assert_non_null(strstr(err.message, "nope.json: cannot open the policy file"));

        tmptree_file(root, "ok.json", "{\"mode\": \"review\"}\n");
        char ok[4096];
        snprintf(ok, sizeof(ok), "%s", tmptree_path(root, "ok.json"));
        assert_int_equal(cordon_policy_load_file(p, ok, &err), 0);
        assert_int_equal(p->mode, CORDON_MODE_READ_ONLY);

        /* Errors name the file. */
        tmptree_file(root, "bad.json", "{\n\"mode\": 3}\n");
        char bad[4096];
        snprintf(bad, sizeof(bad), "%s", tmptree_path(root, "bad.json"));
        assert_true(cordon_policy_load_file(p, bad, &err) < 0);
        char want[4200];
        snprintf(want, sizeof(want), "%s:2:9: key 'mode': expected a string", bad);
        assert_memory_equal(err.message, want, strlen(want));

        /* Another user could widen the sandbox through a world-writable policy. */
        assert_int_equal(chmod(ok, 0666), 0);
        assert_true(cordon_policy_load_file(p, ok, &err) < 0);
        assert_non_null(strstr(err.message, "world-writable"));
        assert_int_equal(chmod(ok, 0644), 0);

        /* Not a regular file: a directory, a FIFO (must not hang). */
        tmptree_mkdir(root, "dir.json");
        assert_true(cordon_policy_load_file(p, tmptree_path(root, "dir.json"), &err) < 0);
        assert_non_null(strstr(err.message, "not a regular file"));
        assert_int_equal(mkfifo(tmptree_path(root, "fifo.json"), 0600), 0);
        assert_true(cordon_policy_load_file(p, tmptree_path(root, "fifo.json"), &err) < 0);
        assert_non_null(strstr(err.message, "not a regular file"));

        /* Oversize. */
        FILE *f = fopen(tmptree_path(root, "big.json"), "w");
        assert_non_null(f);
        assert_int_equal(fseek(f, POLICY_MAX_FILE, SEEK_SET), 0);
        fputc('}', f);
        fclose(f);
        assert_true(cordon_policy_load_file(p, tmptree_path(root, "big.json"), &err) < 0);
        assert_int_equal(err.sys_errno, EFBIG);
        assert_int_equal(p->mode, CORDON_MODE_READ_ONLY); /* unchanged by the failures */
        tmptree_remove(root);
}

/* toolCaches (docs/design/tool-caches.md): both forms, every refusal with its position, and
 * layering: a later layer's "enabled" wins, extras union, a name is listed once per layer. */
static void test_tool_caches(void **state) {
        _cleanup_policy_ cordon_policy *p = test_policy_new();
        cordon_error err = { 0 };
        assert_true(policy_tool_caches_on(p)); /* unset: on */
        assert_int_equal(load(p, "{\"toolCaches\": false}", &err), 0);
        assert_true(p->tool_caches_set);
        assert_false(policy_tool_caches_on(p));
        assert_int_equal(load(p,
                              "{\"toolCaches\": {\"enabled\": true, \"extra\": [{\"name\": "
                              "\"sbt\", \"env\": \"COURSIER_CACHE\"}]}}",
                              &err),
                         0);
        assert_true(policy_tool_caches_on(p));
        assert_int_equal(p->n_tool_caches, 1);
        /* A later layer with the same name replaces its variable; others add. */
        assert_int_equal(load(p,
                              "{\"toolCaches\": {\"extra\": [{\"name\": \"sbt\", \"env\": "
                              "\"SBT_CACHE\"}, {\"name\": \"deno\", \"env\": \"DENO_DIR\"}]}}",
                              &err),
                         0);
        assert_int_equal(p->n_tool_caches, 2);
        assert_string_equal(p->tool_caches[0].env, "SBT_CACHE");
        assert_string_equal(p->tool_caches[1].name, "deno");
        /* Outside workspace-write there are none. */
        assert_int_equal(load(p, "{\"mode\": \"read-only\"}", &err), 0);
        assert_false(policy_tool_caches_on(p));

        expect_error("{\"toolCaches\": \"yes\"}",
                     "t.json:1:16: key 'toolCaches': expected a boolean or an object, got a "
                     "string");
        expect_error("{\"toolCaches\": {\"enable\": false}}",
                     "t.json:1:17: key 'toolCaches.enable': unknown key; did you mean 'enabled'?");
        expect_error("{\"toolCaches\": {\"enabled\": 0}}",
                     "t.json:1:28: key 'toolCaches.enabled': expected a boolean, got an integer");
        expect_error("{\"toolCaches\": {\"extra\": {}}}",
                     "t.json:1:26: key 'toolCaches.extra': expected an array of objects");
        expect_error("{\"toolCaches\": {\"extra\": [{\"name\": \"../x\", \"env\": \"X\"}]}}",
                     "t.json:1:36: key 'toolCaches.extra[0].name': '../x' must start with a "
                     "lower-case letter or a digit");
        expect_error("{\"toolCaches\": {\"extra\": [{\"name\": \"a/b\", \"env\": \"X\"}]}}",
                     "t.json:1:36: key 'toolCaches.extra[0].name': 'a/b' may hold only a-z, 0-9");
        expect_error("{\"toolCaches\": {\"extra\": [{\"name\": \"npm\", \"env\": \"X\"}]}}",
                     "t.json:1:36: key 'toolCaches.extra[0].name': 'npm' is a built-in tool "
                     "cache already");
        expect_error("{\"toolCaches\": {\"extra\": [{\"name\": \"x\", \"env\": \"GOCACHE\"}]}}",
                     "t.json:1:48: key 'toolCaches.extra[0].env': 'GOCACHE' is set by a built-in "
                     "tool cache already");
        expect_error("{\"toolCaches\": {\"extra\": [{\"name\": \"x\", \"env\": \"HTTPS_PROXY\"}]}}",
                     "t.json:1:48: key 'toolCaches.extra[0].env': 'HTTPS_PROXY' is set by cordon "
                     "for the egress proxy");
        expect_error("{\"toolCaches\": {\"extra\": [{\"name\": \"x\", \"env\": \"A-B\"}]}}",
                     "t.json:1:48: key 'toolCaches.extra[0].env': 'A-B' must match");
        expect_error("{\"toolCaches\": {\"extra\": [{\"name\": \"x\"}]}}",
                     "t.json:1:27: key 'toolCaches.extra[0]': a tool cache needs 'env'");
        expect_error("{\"toolCaches\": {\"extra\": [{\"name\": \"x\", \"env\": \"A\"}, "
                     "{\"name\": \"x\", \"env\": \"B\"}]}}",
                     "t.json:1:54: key 'toolCaches.extra[1]': this name is listed already");
}

/* The layer document keeps toolCaches exactly: loaded elsewhere it is the same layer. */
static void test_tool_caches_layer(void **state) {
        _cleanup_policy_ cordon_policy *p = test_policy_new();
        cordon_error err = { 0 };
        assert_int_equal(load(p,
                              "{\"toolCaches\": {\"enabled\": false, \"extra\": [{\"name\": "
                              "\"sbt\", \"env\": \"COURSIER_CACHE\"}]}}",
                              &err),
                         0);
        json_t *j = policy_layer_to_json(p);
        char *s = json_dumps(j, 0);
        json_decref(j);
        assert_non_null(s);
        _cleanup_policy_ cordon_policy *q = test_policy_new();
        assert_int_equal(load(q, s, &err), 0);
        free(s);
        assert_true(q->tool_caches_set);
        assert_false(q->tool_caches_enabled);
        assert_int_equal(q->n_tool_caches, 1);
        assert_string_equal(q->tool_caches[0].env, "COURSIER_CACHE");
        /* An empty layer prints no toolCaches at all. */
        _cleanup_policy_ cordon_policy *e = test_policy_new();
        j = policy_layer_to_json(e);
        assert_null(json_object_get(j, "toolCaches"));
        json_decref(j);
        /* Turning caches back on over a base that turned them off widens; adding extras does
         * not (the root is writable either way). */
        _cleanup_policy_ cordon_policy *on = test_policy_new();
        assert_int_equal(load(on, "{\"toolCaches\": true}", &err), 0);
        strv w = { 0 };
        assert_int_equal(policy_widening_fields(p, on, &w), 1);
        assert_string_equal(w.v[0], "toolCaches");
        strv_done(&w);
        assert_int_equal(policy_widening_fields(on, p, &w), 0);
        strv_done(&w);
}

/* egressDenylist entries with reasons: both forms load, the layer prints them back as objects,
 * a later layer's reason replaces an earlier one's, bad reasons and objects are refused with
 * their position, and a reason never removes the entry. */
static void test_deny_reasons(void **state) {
        (void) state;
        _cleanup_policy_ cordon_policy *p = test_policy_new();
        cordon_error err = { 0 };
        assert_int_equal(load(p, "{\"egressDenylist\": [\"a.test\", {\"host\": \"paste.test\", "
                                 "\"reason\": \"no paste sites\"}]}",
                              &err),
                         0);
        assert_int_equal(p->egress_denylist.n, 2);
        assert_string_equal(policy_deny_reason(p, "paste.test"), "no paste sites");
        assert_null(policy_deny_reason(p, "a.test"));
        json_t *j = policy_layer_to_json(p);
        char *s = json_dumps(j, JSON_COMPACT);
        json_decref(j);
        assert_non_null(strstr(s, "[\"a.test\",{\"host\":\"paste.test\",\"reason\":\"no paste sites\"}]"));
        _cleanup_policy_ cordon_policy *q = test_policy_new();
        assert_int_equal(load(q, s, &err), 0);
        free(s);
        assert_string_equal(policy_deny_reason(q, "paste.test"), "no paste sites");
        /* A higher layer's reason wins; the entry is listed once. */
        _cleanup_policy_ cordon_policy *top = test_policy_new();
        assert_int_equal(load(top, "{\"egressDenylist\": [{\"host\": \"paste.test\", "
                                   "\"reason\": \"ask first\"}]}",
                              &err),
                         0);
        assert_int_equal(policy_merge(q, top), 0);
        assert_int_equal(q->egress_denylist.n, 2);
        assert_string_equal(policy_deny_reason(q, "paste.test"), "ask first");
        expect_error("{\"egressDenylist\": [{\"host\": \"x.test\", \"reason\": \"\"}]}",
                     "t.json:1:50: key 'egressDenylist[0].reason': '' must not be empty");
        expect_error("{\"egressDenylist\": [{\"host\": \"x.test\", \"reason\": \"a\\nb\"}]}",
                     "t.json:1:50: key 'egressDenylist[0].reason': 'a?b' contains a control");
        expect_error("{\"egressDenylist\": [{\"reason\": \"r\"}]}",
                     "t.json:1:21: key 'egressDenylist[0]': a deny entry needs 'host'");
        expect_error("{\"egressDenylist\": [42]}",
                     "t.json:1:21: key 'egressDenylist[0]': expected a string or an object");
        /* The setter: a bad reason fails the call and keeps the entry. */
        _cleanup_policy_ cordon_policy *r = test_policy_new();
        assert_true(cordon_policy_add_egress_deny_reason(r, "y.test", "\x01") < 0);
        assert_true(strv_contains(&r->egress_denylist, "y.test"));
        assert_null(policy_deny_reason(r, "y.test"));
        assert_non_null(strstr(cordon_policy_last_error(r)->message, "control character"));
}

/* credentials: every field checked with its position; the entries print back (never a value:
 * the policy holds none) and load into an equal layer; a new binding widens, an equal one does
 * not; one variable bound differently twice is an error. */
static void test_credentials(void **state) {
        (void) state;
        expect_error("{\"credentials\": [{\"env\": \"T\", \"hosts\": [\"a.test\"]}]}",
                     "t.json:1:18: key 'credentials[0]': a credential needs 'secret' (or 'broker')");
        expect_error("{\"credentials\": [{\"secret\": \".x\", \"env\": \"T\", "
                     "\"hosts\": [\"a.test\"]}]}",
                     "t.json:1:29: key 'credentials[0].secret': '.x' must not start with");
        expect_error("{\"credentials\": [{\"secret\": \"s\", \"env\": \"HTTPS_PROXY\", "
                     "\"hosts\": [\"a.test\"]}]}",
                     "t.json:1:41: key 'credentials[0].env': 'HTTPS_PROXY' is set by cordon");
        expect_error("{\"credentials\": [{\"secret\": \"s\", \"env\": \"SSL_CERT_FILE\", "
                     "\"hosts\": [\"a.test\"]}]}",
                     "t.json:1:41: key 'credentials[0].env': 'SSL_CERT_FILE' is set by cordon "
                     "for TLS inspection");
        expect_error("{\"credentials\": [{\"secret\": \"s\", \"env\": \"T\", \"hosts\": []}]}",
                     "t.json:1:55: key 'credentials[0].hosts': is empty");
        expect_error("{\"credentials\": [{\"secret\": \"s\", \"env\": \"T\", "
                     "\"hosts\": [\"a.test\"], \"header\": \"Host\"}]}",
                     "t.json:1:77: key 'credentials[0].header': 'Host' is a header the proxy");
        expect_error("{\"credentials\": [{\"secret\": \"s\", \"env\": \"T\", "
                     "\"hosts\": [\"a.test\"], \"header\": \"X-T\", \"format\": \"x\"}]}",
                     "t.json:1:94: key 'credentials[0].format': 'x' must contain \"{}\"");
        expect_error("{\"credentials\": [{\"secret\": \"s\", \"env\": \"T\", "
                     "\"hosts\": [\"a.test\"], \"format\": \"B {}\"}]}",
                     "t.json:1:18: key 'credentials[0]': 'format' needs 'header'");
        expect_error("{\"credentials\": [{\"secret\": \"s\", \"broker\": \"b\", \"env\": \"T\", "
                     "\"hosts\": [\"a.test\"]}]}",
                     "t.json:1:18: key 'credentials[0]': a credential comes from 'secret' or");
        expect_error("{\"credentials\": [{\"secret\": \"s\", \"env\": \"T\", "
                     "\"hosts\": [\"a.test\"], \"basic\": \"a:b\"}]}",
                     "t.json:1:76: key 'credentials[0].basic': 'a:b' must be printable ASCII");
        expect_error("{\"credentials\": [{\"secret\": \"s\", \"env\": \"T\", "
                     "\"hosts\": [\"a.test\"]}, {\"secret\": \"t\", \"env\": \"T\", "
                     "\"hosts\": [\"a.test\"]}]}",
                     "t.json:1:68: key 'credentials[1]': another credential holds 'T' already");
        cordon_error err = { 0 };
        _cleanup_policy_ cordon_policy *p = test_policy_new();
        const char *doc = "{\"credentials\": [{\"secret\": \"gh\", \"env\": \"GITHUB_TOKEN\", "
                          "\"hosts\": [\"api.github.com\"], \"header\": \"Authorization\", "
                          "\"format\": \"Bearer {}\"}, {\"broker\": \"forge\", \"env\": \"F\", "
                          "\"hosts\": [\"f.test\"], \"basic\": \"x-token\"}]}";
        assert_int_equal(load(p, doc, &err), 0);
        assert_int_equal(p->req.n_creds, 2);
        assert_string_equal(p->req.creds[1].broker, "forge");
        json_t *j = policy_layer_to_json(p);
        char *s = json_dumps(j, JSON_COMPACT);
        json_decref(j);
        _cleanup_policy_ cordon_policy *q = test_policy_new();
        assert_int_equal(load(q, s, &err), 0);
        free(s);
        assert_int_equal(q->req.n_creds, 2);
        assert_string_equal(q->req.creds[0].format, "Bearer {}");
        assert_string_equal(q->req.creds[1].basic, "x-token");
        assert_int_equal(policy_merge(q, p), 0);
        assert_int_equal(q->req.n_creds, 2);
        strv w = { 0 };
        assert_int_equal(policy_widening_fields(p, q, &w), 0);
        _cleanup_policy_ cordon_policy *empty = test_policy_new();
        assert_int_equal(policy_widening_fields(empty, p, &w), 1);
        assert_string_equal(w.v[0], "credentials");
        strv_done(&w);
        _cleanup_policy_ cordon_policy *other = test_policy_new();
        assert_int_equal(load(other, "{\"credentials\": [{\"secret\": \"x\", "
                                     "\"env\": \"GITHUB_TOKEN\", \"hosts\": [\"e.test\"]}]}",
                              &err), 0);
        assert_int_equal(policy_merge(other, p), -EEXIST);
}

/* egressRules and tls: every field checked with its position; the rules and lists print back
 * and load into an equal layer; merging appends without duplicates; an allow rule, a passthrough
 * pattern or an upstream CA widens, a deny rule does not. */
static void test_egress_rules(void **state) {
        (void) state;
        expect_error("{\"egressRules\": [{\"host\": \"a.test\"}]}",
                     "t.json:1:18: key 'egressRules[0]': a request rule needs 'action'");
        expect_error("{\"egressRules\": [{\"action\": \"allow\"}]}",
                     "t.json:1:18: key 'egressRules[0]': a request rule needs 'host'");
        expect_error("{\"egressRules\": [{\"host\": \"a.test\", \"action\": \"permit\"}]}",
                     "t.json:1:47: key 'egressRules[0].action': 'permit' is not an action");
        expect_error("{\"egressRules\": [{\"host\": \"a.test\", \"action\": \"allow\", "
                     "\"methods\": [\"get\"]}]}",
                     "t.json:1:68: key 'egressRules[0].methods[0]': 'get' must be an upper-case");
        expect_error("{\"egressRules\": [{\"host\": \"a.test\", \"action\": \"allow\", "
                     "\"methods\": []}]}",
                     "t.json:1:67: key 'egressRules[0].methods': is empty, which would match nothing");
        expect_error("{\"egressRules\": [{\"host\": \"a.test\", \"action\": \"allow\", "
                     "\"paths\": [\"v1/*\"]}]}",
                     "t.json:1:66: key 'egressRules[0].paths[0]': 'v1/*' must start with '/'");
        expect_error("{\"egressRules\": [{\"host\": \"*\", \"action\": \"allow\"}]}",
                     "t.json:1:27: key 'egressRules[0].host': '*'");
        expect_error("{\"egressRules\": [{\"host\": \"a.test\", \"action\": \"deny\", "
                     "\"why\": \"x\"}]}",
                     "t.json:1:55: key 'egressRules[0].why': unknown key");
        expect_error("{\"tls\": {\"upstreamCa\": [\"ca.pem\"]}}",
                     "t.json:1:25: key 'tls.upstreamCa[0]': 'ca.pem' must be an absolute path");
        expect_error("{\"tls\": {\"passthrough\": \"a.test\"}}",
                     "t.json:1:25: key 'tls.passthrough': expected an array");
        cordon_error err = { 0 };
        _cleanup_policy_ cordon_policy *p = test_policy_new();
        const char *doc = "{\"egressRules\": [{\"host\": \"a.test\", \"methods\": [\"GET\", \"*\"], "
                          "\"paths\": [\"/v1/*\"], \"action\": \"allow\", \"reason\": \"ro\"}, "
                          "{\"host\": \"a.test\", \"action\": \"deny\"}], "
                          "\"tls\": {\"passthrough\": [\"*.pin.test\"], \"upstreamCa\": [\"/ca.pem\"]}}";
        assert_int_equal(load(p, doc, &err), 0);
        assert_int_equal(p->req.n_rules, 2);
        assert_int_equal(p->req.rules[0].methods.n, 0); /* "*" means every method */
        assert_string_equal(p->req.rules[0].reason, "ro");
        assert_true(p->req.rules[1].deny);
        json_t *j = policy_layer_to_json(p);
        char *s = json_dumps(j, JSON_COMPACT);
        json_decref(j);
        _cleanup_policy_ cordon_policy *q = test_policy_new();
        assert_int_equal(load(q, s, &err), 0);
        free(s);
        assert_int_equal(q->req.n_rules, 2);
        assert_string_equal(q->req.passthrough.v[0], "*.pin.test");
        assert_string_equal(q->req.upstream_ca.v[0], "/ca.pem");
        assert_int_equal(policy_merge(q, p), 0);
        assert_int_equal(q->req.n_rules, 2);
        strv w = { 0 };
        assert_int_equal(policy_widening_fields(p, q, &w), 0);
        _cleanup_policy_ cordon_policy *deny = test_policy_new();
        assert_int_equal(load(deny, "{\"egressRules\": [{\"host\": \"b.test\", "
                                    "\"action\": \"deny\"}]}", &err), 0);
        assert_int_equal(policy_widening_fields(p, deny, &w), 0);
        _cleanup_policy_ cordon_policy *allow = test_policy_new();
        assert_int_equal(load(allow, "{\"egressRules\": [{\"host\": \"b.test\", "
                                     "\"action\": \"allow\"}]}", &err), 0);
        assert_int_equal(policy_widening_fields(p, allow, &w), 1);
        assert_string_equal(w.v[0], "egressRules");
        strv_done(&w);
}

/* egressMode and egressAskTimeout: parsed and refused with their positions, printed with their
 * defaults, kept in a layer document only when set; ask over allowlist widens, the reverse and
 * the timeout do not. */
static void test_egress_ask(void **state) {
        cordon_error err = { 0 };
        expect_error("{\"egressMode\": \"prompt\"}",
                     "t.json:1:16: key 'egressMode': unknown egress mode 'prompt'; use "
                     "\"allowlist\" or \"ask\"");
        expect_error("{\"egressMode\": true}",
                     "t.json:1:16: key 'egressMode': expected a string, got a boolean");
        expect_error("{\"egressAskTimeout\": \"50ms\"}",
                     "t.json:1:22: key 'egressAskTimeout': 50 ms is out of range; write "
                     "milliseconds (30000) or a duration (\"30s\", \"500ms\", \"2m\"), from "
                     "100ms to 1h");
        expect_error("{\"egressAskTimeout\": \"soon\"}",
                     "t.json:1:22: key 'egressAskTimeout': 'soon' is not a valid duration; write "
                     "milliseconds (30000) or a duration (\"30s\", \"500ms\", \"2m\"), from "
                     "100ms to 1h");
        _cleanup_policy_ cordon_policy *none = test_policy_new();
        char *shown = dump(none);
        assert_non_null(strstr(shown, "\"egressMode\": \"allowlist\""));
        assert_non_null(strstr(shown, "\"egressAskTimeout\": 30000"));
        free(shown);
        json_t *j = policy_layer_to_json(none);
        assert_null(json_object_get(j, "egressMode"));
        assert_null(json_object_get(j, "egressAskTimeout"));
        json_decref(j);

        _cleanup_policy_ cordon_policy *p = test_policy_new();
        assert_int_equal(load(p, "{\"egressMode\": \"ask\", \"egressAskTimeout\": \"2m\"}",
                              &err),
                         0);
        assert_true(p->egress_mode_set);
        assert_int_equal(p->egress_mode, CORDON_EGRESS_ASK);
        assert_int_equal(p->egress_ask_timeout_ms, 120000);
        j = policy_layer_to_json(p);
        assert_string_equal(json_string_value(json_object_get(j, "egressMode")), "ask");
        assert_int_equal(json_integer_value(json_object_get(j, "egressAskTimeout")), 120000);
        json_decref(j);
        assert_true(cordon_policy_set_egress_ask_timeout_ms(p, 99) < 0);
        assert_true(cordon_policy_set_egress_ask_timeout_ms(p, 3600001) < 0);
        assert_true(cordon_policy_set_egress_mode(p, (cordon_egress_mode) 7) < 0);
        assert_int_equal(p->egress_ask_timeout_ms, 120000);

        /* Scalars: the highest layer that sets one wins. */
        _cleanup_policy_ cordon_policy *back = test_policy_new();
        assert_int_equal(cordon_policy_set_egress_mode(back, CORDON_EGRESS_ALLOWLIST), 0);
        _cleanup_policy_ cordon_policy *res = NULL;
        assert_int_equal(cordon_policy_resolve(p, NULL, back, &res, &err), 0);
        assert_int_equal(res->egress_mode, CORDON_EGRESS_ALLOWLIST);
        assert_int_equal(res->egress_ask_timeout_ms, 120000);

        /* Turning ask on widens; turning it off, or a timeout alone, does not. */
        strv w = { 0 };
        assert_int_equal(policy_widening_fields(none, p, &w), 1);
        assert_string_equal(w.v[0], "egressMode");
        strv_done(&w);
        assert_int_equal(policy_widening_fields(p, back, &w), 0);
        assert_int_equal(policy_widening_fields(p, p, &w), 0);
        strv_done(&w);
}

/* egressUpstream: parsed and refused with its position, never quoted; printed redacted, kept
 * whole in a layer document; the highest layer wins; setting or changing it widens. */
static void test_egress_upstream(void **state) {
        cordon_error err = { 0 };
        expect_error("{\"egressUpstream\": \"http://u:s3cr3t@h\"}",
                     "t.json:1:20: key 'egressUpstream': the proxy URL has no port; write "
                     "host:PORT");
        expect_error("{\"egressUpstream\": 3128}",
                     "t.json:1:20: key 'egressUpstream': expected a string, got an integer");
        _cleanup_policy_ cordon_policy *bad = test_policy_new();
        assert_true(load(bad, "{\"egressUpstream\": \"https://u:s3cr3t@h:1\"}", &err) < 0);
        assert_null(strstr(err.message, "s3cr3t"));
        assert_true(cordon_policy_set_egress_upstream(bad, "ftp://u:s3cr3t@h:1") < 0);
        assert_non_null(cordon_policy_last_error(bad));
        assert_null(strstr(cordon_policy_last_error(bad)->message, "s3cr3t"));
        assert_null(bad->egress_upstream);

        _cleanup_policy_ cordon_policy *p = test_policy_new();
        assert_int_equal(load(p, "{\"egressUpstream\": \"socks5h://al%69ce:s3cr3t@GW:1080\"}",
                              &err),
                         0);
        assert_string_equal(p->egress_upstream, "socks5://alice:s3cr3t@gw:1080");
        assert_string_equal(p->egress_upstream_shown, "socks5://alice:****@gw:1080");
        char *shown = dump(p);
        assert_non_null(strstr(shown, "\"egressUpstream\": \"socks5://alice:****@gw:1080\""));
        assert_null(strstr(shown, "s3cr3t"));
        free(shown);
        /* The layer document carries it whole, and loads back into the same layer. */
        json_t *j = policy_layer_to_json(p);
        assert_string_equal(json_string_value(json_object_get(j, "egressUpstream")),
                            "socks5://alice:s3cr3t@gw:1080");
        char *text = json_dumps(j, 0);
        json_decref(j);
        _cleanup_policy_ cordon_policy *q = test_policy_new();
        assert_int_equal(load(q, text, &err), 0);
        free(text);
        assert_string_equal(q->egress_upstream, p->egress_upstream);
        /* null is unset (policy show prints it for a policy without one). */
        _cleanup_policy_ cordon_policy *n = test_policy_new();
        assert_int_equal(load(n, "{\"egressUpstream\": null}", &err), 0);
        assert_null(n->egress_upstream);
        j = policy_layer_to_json(n);
        assert_null(json_object_get(j, "egressUpstream"));
        json_decref(j);

        /* A scalar: the highest layer wins, a layer without it keeps the lower one's. */
        _cleanup_policy_ cordon_policy *over = test_policy_new();
        assert_int_equal(cordon_policy_set_egress_upstream(over, "http://10.0.0.1:3128"), 0);
        _cleanup_policy_ cordon_policy *res = NULL;
        assert_int_equal(cordon_policy_resolve(p, n, over, &res, &err), 0);
        assert_string_equal(res->egress_upstream, "http://10.0.0.1:3128");
        cordon_policy_free(res);
        res = NULL;
        assert_int_equal(cordon_policy_resolve(p, n, NULL, &res, &err), 0);
        assert_string_equal(res->egress_upstream_shown, "socks5://alice:****@gw:1080");

        /* Setting one, or another one, widens; the same one, or none, does not. */
        strv w = { 0 };
        assert_int_equal(policy_widening_fields(n, p, &w), 1);
        assert_string_equal(w.v[0], "egressUpstream");
        strv_done(&w);
        assert_int_equal(policy_widening_fields(p, over, &w), 1);
        strv_done(&w);
        assert_int_equal(policy_widening_fields(p, q, &w), 0);
        assert_int_equal(policy_widening_fields(p, n, &w), 0);
        strv_done(&w);
}

static void test_json_pos_direct(void **state) {
        static const char doc[] = "{\"a\": {\"b\\\"c\": [10, {\"d\": true}]}, \"e\": null}";
        json_pos pos;
        json_pos_step path[] = { { "a", 0 }, { "b\"c", 0 }, { NULL, 1 }, { "d", 0 } };
        assert_int_equal(json_pos_find(doc, strlen(doc), path, 4, false, &pos), 0);
        assert_int_equal(pos.line, 1);
        assert_int_equal(pos.column, 27);
        assert_int_equal(json_pos_find(doc, strlen(doc), path, 4, true, &pos), 0);
        assert_int_equal(pos.column, 22);
        json_pos_step e[] = { { "e", 0 } };
        assert_int_equal(json_pos_find(doc, strlen(doc), e, 1, false, &pos), 0);
        assert_int_equal(pos.column, 41);
        json_pos_step missing[] = { { "a", 0 }, { "zz", 0 } };
        assert_int_equal(json_pos_find(doc, strlen(doc), missing, 2, false, &pos), -ENOENT);
        json_pos_step oob[] = { { "a", 0 }, { "b\"c", 0 }, { NULL, 5 } };
        assert_int_equal(json_pos_find(doc, strlen(doc), oob, 3, false, &pos), -ENOENT);
        /* Garbage never crashes it. */
        static const char junk[] = "{\"a\": [1, {\"b\": \"\\u12";
        json_pos_step deep[] = { { "a", 0 }, { NULL, 1 }, { "b", 0 }, { "c", 0 } };
        assert_int_equal(json_pos_find(junk, strlen(junk), deep, 4, false, &pos), -ENOENT);
        assert_int_equal(json_pos_check_depth("[[\"[[[\"]]", 9, 2, &pos), 0);
        assert_int_equal(json_pos_check_depth("[[[", 3, 2, &pos), -E2BIG);
        assert_int_equal(pos.column, 3);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_unknown_keys),
                cmocka_unit_test(test_wrong_types),
                cmocka_unit_test(test_bad_values),
                cmocka_unit_test(test_positions),
                cmocka_unit_test(test_syntax_errors),
                cmocka_unit_test(test_limits_on_input),
                cmocka_unit_test(test_every_key),
                cmocka_unit_test(test_merge_and_atomicity),
                cmocka_unit_test(test_load_file),
                cmocka_unit_test(test_egress_upstream),
                cmocka_unit_test(test_egress_ask),
                cmocka_unit_test(test_json_pos_direct),
                cmocka_unit_test(test_tool_caches),
                cmocka_unit_test(test_tool_caches_layer),
                cmocka_unit_test(test_deny_reasons),
                cmocka_unit_test(test_egress_rules),
                cmocka_unit_test(test_credentials),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
