/* SPDX-License-Identifier: Apache-2.0 */
/* Strict validation of settings files, both formats: every refusal with its exact message,
 * position (file:line:column) and hint. A settings file that is not what it seems is an error,
 * never ignored and never replaced by defaults. */
#include <errno.h>
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
#include "tmptree.h"

typedef struct vcase {
        const char *json;
        const char *message; /* after "<file>" */
} vcase;

/* Resolves with `json` as the only --settings file; returns the error message (static). */
static const char *settings_error(const char *json) {
        static char msg[1024];
        char *root = tmptree_new_workspace("settings");
        tmptree_write(root, "v.json", json, 0644);
        char cwd[PATH_MAX], home[PATH_MAX], file[PATH_MAX];
        snprintf(cwd, sizeof(cwd), "%s/ws", root);
        snprintf(home, sizeof(home), "%s/home", root);
        snprintf(file, sizeof(file), "%s/v.json", root);
        const char *files[] = { file };
        cordon_settings_options o = { .cwd = cwd, .home = home, .files = files, .n_files = 1,
                                      .flags = CORDON_SETTINGS_NO_MANAGED };
        cordon_settings *s = NULL;
        cordon_error err = { 0 };
        int r = cordon_settings_resolve(&o, &s, &err);
        cordon_settings_free(s);
        if (r >= 0) {
                tmptree_remove(root);
                return NULL;
        }
        assert_int_equal(err.code, CORDON_POLICY_INVALID);
        /* Strip the file's directory: the cases name "v.json". */
        const char *m = err.message;
        size_t rl = strlen(root);
        if (strncmp(m, root, rl) == 0 && m[rl] == '/')
                m += rl + 1;
        snprintf(msg, sizeof(msg), "%s", m);
        tmptree_remove(root);
        return msg;
}

static void run_cases(const vcase *cases, size_t n) {
        for (size_t i = 0; i < n; i++) {
                const char *got = settings_error(cases[i].json);
                if (!got)
                        fail_msg("case %zu accepted: %s", i, cases[i].json);
                if (strcmp(got, cases[i].message) != 0)
                        fail_msg("case %zu (%s):\n  got:  %s\n  want: %s", i, cases[i].json, got,
                                 cases[i].message);
        }
}

static void test_cordon_format_errors(void **state) {
        static const vcase cases[] = {
                { "{\"sandbx\": {}}",
                  "v.json:1:2: key 'sandbx': unknown key; did you mean 'sandbox'?" },
                { "{\"failIfUnavailable\": \"no\"}",
                  "v.json:1:23: key 'failIfUnavailable': expected a boolean, got a string; write "
                  "it like \"failIfUnavailable\": true" },
                { "{\"sandbox\": []}",
                  "v.json:1:13: key 'sandbox': expected an object, got an array; write it like "
                  "\"sandbox\": {\"denyRead\": [\"/home/me/.secrets\"]}" },
                { "{\"sandbox\": {\"denyRead\": [\"/home/**/.env\"]}}",
                  "v.json:1:27: key 'sandbox.denyRead[0]': '/home/**/.env' uses '**': '*' never "
                  "matches '/' in cordon's globs, so it would match less than it seems to; list "
                  "each directory, or use denyCreateNames for a file name anywhere" },
                { "{\"sandbox\": {\"denyWrite\": [\"/srv/*.[ch\"]}}",
                  "v.json:1:28: key 'sandbox.denyWrite[0]': '/srv/*.[ch' has an unclosed '['; "
                  "close the bracket expression, e.g. \"*.[ch]\"" },
                { "{\"sandbox\": {\"protectedPaths\": [\"~/repo\"]}}",
                  "v.json:1:33: key 'sandbox.protectedPaths[0]': '~/repo' starts with '~': paths "
                  "in cordon settings are absolute; write the home directory out, e.g. "
                  "\"/home/me/.secrets\"" },
                { "{\"sandbox\": {\"denyWrite\": [\"rel/path\"]}}",
                  "v.json:1:28: key 'sandbox.denyWrite[0]': 'rel/path' must be an absolute path; "
                  "use an absolute path without '..', e.g. \"/home/me/project\"" },
                { "{\"sandbox\": {\"runnerStateDirs\": [\"/var/cache/*\"]}}",
                  "v.json:1:34: key 'sandbox.runnerStateDirs[0]': '/var/cache/*' contains '*' or "
                  "'?'; name the directory itself: globs are not supported here" },
                { "{\"sandbox\": {\"bindMounts\": [{\"hostPath\": \"/srv/?\"}]}}",
                  "v.json:1:42: key 'sandbox.bindMounts[0].hostPath': '/srv/?' contains '*' or "
                  "'?'; name the directory itself: globs are not supported here" },
                { "{\"sandbox\": {\"egressAllowlist\": [\"https://example.com\"]}}",
                  "v.json:1:34: key 'sandbox.egressAllowlist[0]': 'https://example.com' has a "
                  "scheme ('://'); write the host name only, e.g. \"api.example.com\", "
                  "\"*.example.com\" or \"example.com:443\"" },
                { "{\"sandbox\": {\"egressDenylist\": [\"example.com/upload\"]}}",
                  "v.json:1:33: key 'sandbox.egressDenylist[0]': 'example.com/upload' has a path "
                  "('/'); write the host name only, e.g. \"api.example.com\", \"*.example.com\" or "
                  "\"example.com:443\"" },
                { "{\"sandbox\": {\"mode\": \"yolo\"}}",
                  "v.json:1:22: key 'sandbox.mode': unknown mode 'yolo'; use one of chat, "
                  "workspace-write, review, plan, orchestrate, read-only, danger-full-access" },
                { "{\"sandbox\": {\"denyReed\": []}}",
                  "v.json:1:14: key 'sandbox.denyReed': unknown key; did you mean 'denyRead'?" },
                { "{\"excludedCommands\": [\"ls | sh\"]}",
                  "v.json:1:23: key 'excludedCommands[0]': this entry contains a pipe ('|'), so "
                  "it could never run unsandboxed safely; an entry is one whole command line "
                  "compared word for word (\"docker ps\", or [\"git\", \"status\"]); remove shell "
                  "syntax or give the words as an array" },
                { "{\"excludedCommands\": [[\"sh\", \"-c\", \"ls\"]]}",
                  "v.json:1:23: key 'excludedCommands[0]': this entry runs another command (a "
                  "shell or command runner such as sh -c, env, sudo or xargs), so it could never "
                  "run unsandboxed safely; an entry is one whole command line compared word for "
                  "word (\"docker ps\", or [\"git\", \"status\"]); remove shell syntax or give the "
                  "words as an array" },
                { "{\"excludedCommands\": [\"echo $HOME\"]}",
                  "v.json:1:23: key 'excludedCommands[0]': this entry contains shell syntax "
                  "(quotes, '\\', '$', globs, braces, '#', '~' or an assignment), so it could "
                  "never run unsandboxed safely; an entry is one whole command line compared word "
                  "for word (\"docker ps\", or [\"git\", \"status\"]); remove shell syntax or give "
                  "the words as an array" },
                { "{\"excludedCommands\": [7]}",
                  "v.json:1:23: key 'excludedCommands[0]': expected a string or an array of "
                  "strings, got an integer; write it like \"docker ps\"" },
                { "{\"lockDomains\": true}",
                  "v.json:1:2: key 'lockDomains': only managed settings can lock the domain "
                  "list; move it to the managed settings file (/etc/cordon/managed-settings.json)" },
                { "{\"sandbox\": {}, \"network\": {}}",
                  "v.json:1:17: key 'network': an srt settings key in a cordon settings file; "
                  "'sandbox' is a cordon settings key: use one format per file (see 'cordon "
                  "settings import' to convert an srt file)" },
                { "{\"sandbox\": }",
                  "v.json:1:13: invalid JSON: unexpected token near '}'; fix the JSON syntax "
                  "there" },
                { "{\"excludedCommands\": [], \"excludedCommands\": [\"ls\"]}",
                  "v.json:1:43: invalid JSON: duplicate object key near '\"excludedCommands\"'; "
                  "each key may appear only once in an object" },
                { "[]",
                  "v.json:1:1: settings must be a JSON object, not an array; write the settings "
                  "as { \"key\": value, ... }" },
        };
        run_cases(cases, sizeof(cases) / sizeof(cases[0]));
}

#define BE_HINT(k)                                                                                 \
        "remove it, or list \"" k "\" in \"cordon\": {\"bestEffort\": [...]} to have it left out " \
        "with a warning"

static void test_srt_format_errors(void **state) {
        static const vcase cases[] = {
                { "{\"filesystem\": {\"denyRaed\": []}}",
                  "v.json:1:17: key 'filesystem.denyRaed': unknown key; did you mean "
                  "'denyRead'?" },
                { "{\"filesystem\": {\"allowWrite\": \"/srv\"}}",
                  "v.json:1:31: key 'filesystem.allowWrite': expected an array, got a string; "
                  "write it like []" },
                { "{\"network\": {\"allowLocalBinding\": true}}",
                  "v.json:1:35: key 'network.allowLocalBinding': cordon cannot honour this: the "
                  "command has its own loopback: a server it starts is not reachable from the "
                  "host; " BE_HINT("network.allowLocalBinding") },
                { "{\"filesystem\": {\"allowRead\": [\"/srv/ok\"]}}",
                  "v.json:1:30: key 'filesystem.allowRead': cordon cannot honour this: cordon "
                  "has no read carve-outs inside denied paths (what denyRead hides stays hidden); "
                  BE_HINT("filesystem.allowRead") },
                { "{\"network\": {\"allowedDomains\": [\"*.com\"]}}",
                  "v.json:1:33: key 'network.allowedDomains[0]': '*.com' is too broad: '*.' "
                  "needs at least two labels after it (\"*.example.com\"); write "
                  "\"example.com\", \"*.example.com\" or \"example.com:443\"" },
                { "{\"network\": {\"allowedDomains\": [\"http://github.com\"]}}",
                  "v.json:1:33: key 'network.allowedDomains[0]': 'http://github.com' has a "
                  "scheme ('://'); write the host name only, e.g. \"api.example.com\", "
                  "\"*.example.com\" or \"example.com:443\"" },
                { "{\"network\": {\"allowedDomains\": [\"github.com:99999\"]}}",
                  "v.json:1:33: key 'network.allowedDomains[0]': 'github.com:99999' has a bad "
                  "port (1-65535); write \"example.com\", \"*.example.com\" or "
                  "\"example.com:443\"" },
                { "{\"network\": {\"deniedDomains\": [\"*:22\"]}}",
                  "v.json:1:32: key 'network.deniedDomains[0]': cordon cannot honour this: a "
                  "per-port deny-all (\"*:22\") has no cordon equivalent; "
                  BE_HINT("network.deniedDomains") },
                { "{\"filesystem\": {\"denyRead\": [\"**/.env\"]}}",
                  "v.json:1:30: key 'filesystem.denyRead[0]': cordon cannot honour this: '**' "
                  "(any depth) cannot be expressed: '*' never matches '/' in cordon's globs; "
                  BE_HINT("filesystem.denyRead") },
                { "{\"filesystem\": {\"allowWrite\": [\"build/*\"]}}",
                  "v.json:1:32: key 'filesystem.allowWrite[0]': cordon cannot honour this: a "
                  "glob here would grant a literal path (the runtime skips such globs on Linux); "
                  "name the directories; " BE_HINT("filesystem.allowWrite") },
                { "{\"filesystem\": {\"denyWrite\": [\"~bob/x\"]}}",
                  "v.json:1:31: key 'filesystem.denyWrite[0]': '~bob/x': ~user paths are not "
                  "supported; write the path out, or use \"~/...\"" },
                { "{\"filesystem\": {\"denyWrite\": [\"a/../b\"]}}",
                  "v.json:1:31: key 'filesystem.denyWrite[0]': 'a/../b' must not contain '..' "
                  "components; use an absolute path, \"~/...\" or a path relative to the current "
                  "directory, without '..' inside" },
                { "{\"cordon\": {\"bestEffort\": [\"network.allowedDomains\"]}, \"network\": {}}",
                  "v.json:1:28: key 'cordon.bestEffort[0]': 'network.allowedDomains' is not an "
                  "srt key cordon may leave out (it is honoured, or unknown); see "
                  "docs/settings.md for the list" },
                { "{\"cordon\": {\"bestEfort\": []}, \"network\": {}}",
                  "v.json:1:13: key 'cordon.bestEfort': unknown key; did you mean "
                  "'bestEffort'?" },
                { "{\"credentials\": {\"files\": [{\"path\": \"~/.netrc\", \"mode\": \"hide\"}]}}",
                  "v.json:1:57: key 'credentials.files[0].mode': unknown mode 'hide'; use "
                  "\"deny\" or \"mask\"" },
                { "{\"credentials\": {\"envVars\": [{\"name\": \"NPM_TOKEN\", \"mode\": \"mask\"}]}}",
                  "v.json:1:60: key 'credentials.envVars[0].mode': cordon cannot honour this: "
                  "masking is not implemented; marked best-effort, the secret is denied instead; "
                  BE_HINT("credentials.envVars") },
                { "{\"credentials\": {\"envVars\": [{\"mode\": \"deny\"}]}}",
                  "v.json:1:30: key 'credentials.envVars[0]': the entry needs 'name'; "
                  "{\"name\": \"GITHUB_TOKEN\", \"mode\": \"deny\"}" },
                { "{\"bwrapPath\": \"/usr/bin/bwrap\"}",
                  "v.json:1:15: key 'bwrapPath': cordon cannot honour this: cordon does not use "
                  "bubblewrap; " BE_HINT("bwrapPath") },
        };
        run_cases(cases, sizeof(cases) / sizeof(cases[0]));
}

/* What asks for nothing is accepted as it is: false, empty lists, empty objects. */
static void test_srt_noops_accepted(void **state) {
        assert_null(settings_error("{\"network\": {\"allowLocalBinding\": false, \"allowMachLookup\": "
                                   "[], \"strictAllowlist\": true, \"allowAllDomains\": false}, "
                                   "\"filesystem\": {\"allowRead\": [], \"allowGitConfig\": false, "
                                   "\"disabled\": false}, \"enableWeakerNestedSandbox\": false, "
                                   "\"ignoreViolations\": {}}"));
        assert_null(settings_error("{\"network\": {\"allowLocalBinding\": true}, \"cordon\": "
                                   "{\"bestEffort\": [\"network.allowLocalBinding\"]}}"));
        assert_null(settings_error("{}"));
}

int main(void) {
        umask(022);
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_cordon_format_errors),
                cmocka_unit_test(test_srt_format_errors),
                cmocka_unit_test(test_srt_noops_accepted),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
