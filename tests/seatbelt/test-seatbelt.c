/* SPDX-License-Identifier: Apache-2.0 */
/* The generated profile as behaviour: each rule tried both ways (allowed and refused) with the
 * SBPL evaluator (sbpl-eval.h: last match wins, glibc regexes), on the spellings macOS would
 * check (as written, /private/..., other letter case); and the refusals of the generator itself
 * (danger-full-access, paths a profile cannot hold). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "policy/policy.h"
#include "sb-harness.h"
#include "sbpl-eval.h"
#include "seatbelt/seatbelt-internal.h"

static char *T;

static const char *at(const char *rel) {
        return sbt_at(T, rel);
}

/* The profile for `json`, parsed and validated. */
static sx *profile_of(const char *json, uint16_t port, const char *tmpdir) {
        cordon_error err = { 0 };
        char *text = sbt_profile(T, json, port, tmpdir, &err);
        if (!text)
                fail_msg("%s: %s", cordon_code_name(err.code), err.message);
        char msg[512];
        sx *top = sbpl_parse(text, msg, sizeof(msg));
        if (!top)
                fail_msg("does not parse: %s", msg);
        if (!sbpl_validate(top, msg, sizeof(msg)))
                fail_msg("invalid: %s", msg);
        free(text);
        return top;
}

/* Checks `op` on `rel` (in the tree; absolute paths as they are) in every spelling macOS may
 * present: as written, below /private, and with the letters' case flipped (a case-insensitive
 * volume). Allowed must hold for the exact spellings only: an allow matches the exact string. */
static void expect(const sx *p, const char *op, const char *rel, bool allowed) {
        char path[4096], priv[4200], upper[4096];
        snprintf(path, sizeof(path), "%s", rel[0] == '/' ? rel : at(rel));
        snprintf(priv, sizeof(priv), "/private%s", path);
        snprintf(upper, sizeof(upper), "%s", path);
        size_t skip = rel[0] == '/' ? 0 : strlen(T); /* the tree's own name stays as it is */
        for (char *c = upper + skip; *c; c++)
                if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z'))
                        *c ^= 0x20;
        const char *forms[] = { path, priv, upper };
        bool firmlinked = strncmp(path, "/tmp/", 5) == 0 || strncmp(path, "/var/", 5) == 0 ||
                          strncmp(path, "/etc/", 5) == 0;
        for (size_t i = 0; i < 3; i++) {
                if (i == 1 && !firmlinked)
                        continue;
                if (allowed && i == 2)
                        continue;
                if (sbpl_allows(p, op, forms[i]) != allowed)
                        fail_msg("%s %s: expected %s", op, forms[i], allowed ? "allowed" : "denied");
        }
}

static const char workspace_json[] =
        "{ \"bindMounts\": [ { \"hostPath\": \"@T@/home/alice/project\" },"
        "  { \"hostPath\": \"@T@/home/alice/project/vendor\", \"readOnly\": true } ],"
        "  \"denyCreateNames\": [ \".env\", \".env.*\", \"*.pem\", \"*.key\" ],"
        "  \"denyRead\": [ \"@T@/home/alice/project/secrets\" ],"
        "  \"denyWrite\": [ \"@T@/home/alice/project/ci/*.yml\" ],"
        "  \"execGrantRoots\": [ \"@T@/home/alice/project/node_modules/.bin\" ],"
        "  \"networkEnabled\": false }";

static void test_writes(void **state) {
        sx *p = profile_of(workspace_json, 0, at("tmp/run-1"));
        expect(p, "file-write-data", "home/alice/project/src/main.c", true);
        expect(p, "file-write-create", "home/alice/project/src/new.c", true);
        expect(p, "file-write-data", "home/alice/project/.git/objects/ab/cd", true);
        expect(p, "file-write-data", "home/alice/project/.git/index", true);
        expect(p, "file-write-data", "home/alice/project/vendor/lib.c", false);
        expect(p, "file-write-data", "home/alice/project/.git/hooks/pre-commit", false);
        expect(p, "file-write-data", "home/alice/project/.git/config", false);
        expect(p, "file-write-data", "home/alice/project/.vscode/tasks.json", false);
        expect(p, "file-write-data", "home/alice/project/.claude/settings.local.json", false);
        expect(p, "file-write-data", "home/alice/project/.claude/notes.md", true);
        expect(p, "file-write-data", "home/alice/project/ci/deploy.yml", false);
        expect(p, "file-write-data", "home/alice/project/ci/deploy.txt", true);
        expect(p, "file-write-data", "home/alice/project/.bashrc", false);
        expect(p, "file-write-data", "home/alice/project/HEAD", false);
        expect(p, "file-write-data", "home/alice/notes.txt", false);
        expect(p, "file-write-data", "home/alice/.githooks/pre-push", false); /* hooksPath */
        expect(p, "file-write-data", "/etc/hosts", false);
        expect(p, "file-write-data", "/dev/null", true);
        expect(p, "file-write-data", "/dev/fd/1", true);
        expect(p, "file-write-data", "/dev/ttys003", false);
        expect(p, "file-write-data", "tmp/run-1/cc123.o", true);
        expect(p, "file-write-data", "tmp/other", false);
        sbpl_free(p);
}

static void test_reads(void **state) {
        sx *p = profile_of(workspace_json, 0, NULL);
        expect(p, "file-read-data", "home/alice/.ssh/id_ed25519", false);
        expect(p, "file-read-metadata", "home/alice/.ssh", false);
        expect(p, "file-read-data", "home/alice/.aws/credentials", false);
        expect(p, "file-read-data", "home/alice/project/secrets/db.txt", false);
        expect(p, "file-read-data", "home/alice/.sshx", true);
        expect(p, "file-read-data", "home/alice/.gitconfig", true);
        expect(p, "file-read-data", "home/alice/project/src/main.c", true);
        expect(p, "file-read-data", "/usr/lib/libSystem.B.dylib", true);
        /* No second name for a secret: a hard link or a clone would be read through it. */
        expect(p, "file-link", "home/alice/.ssh/id_ed25519", false);
        expect(p, "file-clone", "home/alice/.ssh/id_ed25519", false);
        expect(p, "file-link", "home/alice/.aws/credentials", false);
        expect(p, "file-clone", "home/alice/project/secrets/db.txt", false);
        expect(p, "file-link", "home/alice/project/src/main.c", true);
        expect(p, "file-clone", "home/alice/project/src/main.c", true);
        /* Nor for a protected file: writing the link would write it. A copy is harmless. */
        expect(p, "file-link", "home/alice/project/.git/hooks/pre-commit", false);
        expect(p, "file-link", "home/alice/project/.git/config", false);
        expect(p, "file-clone", "home/alice/project/.git/config", true);
        /* Secrets cannot be planted or replaced either. */
        expect(p, "file-write-create", "home/alice/.ssh/authorized_keys", false);
        sbpl_free(p);
}

static void test_names_and_renames(void **state) {
        sx *p = profile_of(workspace_json, 0, NULL);
        expect(p, "file-write-create", "home/alice/project/.env", false);
        expect(p, "file-write-create", "home/alice/project/src/.env.local", false);
        expect(p, "file-write-create", "home/alice/project/src/server.pem", false);
        expect(p, "file-write-create", "home/alice/project/src/.id.pem", false);
        expect(p, "file-write-create", "home/alice/project/src/envfile", true);
        /* .envrc is in the mandatory set (direnv sources it); the set is joined at each root. */
        expect(p, "file-write-create", "home/alice/project/.envrc", false);
        expect(p, "file-write-create", "home/alice/project/src/.envrc", true);
        expect(p, "file-write-create", "home/alice/project/.aider.conf.yml", false);
        expect(p, "file-write-create", "home/alice/project/.github/copilot-instructions.md",
               false);
        expect(p, "file-write-create", "home/alice/project/.github/CODEOWNERS", true);
        expect(p, "file-write-create", "home/alice/project/.cordon/settings.json", false);
        expect(p, "file-write-create", "home/alice/project/src/pem", true);
        /* An existing .env stays writable: only its coming into existence is refused. */
        expect(p, "file-write-data", "home/alice/project/.env", true);
        /* Ancestors of protected paths: no rename away, no directory renamed into place. */
        expect(p, "file-write-unlink", "home/alice/project/.git", false);
        expect(p, "file-write-unlink", "home/alice/project", false);
        expect(p, "file-write-create", "home/alice/project/.claude", false);
        expect(p, "file-write-unlink", "home/alice/project/.git/objects/ab", true);
        expect(p, "file-write-unlink", "home/alice/project/src", true);
        expect(p, "file-write-create", "home/alice/project/src/sub", true);
        sbpl_free(p);
}

/* As expect(), for an object of one type (vnode-type filters), as written and in other case. */
static void expect_vnode(const sx *p, const char *op, const char *rel, const char *vnode,
                         bool allowed) {
        char upper[4096];
        snprintf(upper, sizeof(upper), "%s", at(rel));
        for (char *c = upper + strlen(T); *c; c++)
                if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z'))
                        *c ^= 0x20;
        if (sbpl_allows_vnode(p, op, at(rel), vnode) != allowed)
                fail_msg("%s %s (%s): expected %s", op, rel, vnode, allowed ? "allowed" : "denied");
        if (!allowed && sbpl_allows_vnode(p, op, upper, vnode))
                fail_msg("%s %s (%s): expected denied", op, upper, vnode);
}

/* Item: a read-only bind deep inside a writable root. On Linux it is a mount and moves with a
 * rename of any directory above it; here its ancestors must not be renamed away (mv a x, edit
 * x/b/vendor, mv x a). */
static void test_read_only_ancestors(void **state) {
        sx *p = profile_of("{ \"bindMounts\": [ { \"hostPath\": \"@T@/home/alice/project\" },"
                           "  { \"hostPath\": \"@T@/home/alice/project/a/b/vendor\", "
                           "\"readOnly\": true } ], \"networkEnabled\": false }",
                           0, NULL);
        expect(p, "file-write-data", "home/alice/project/a/b/vendor/lib.c", false);
        expect(p, "file-write-unlink", "home/alice/project/a/b/vendor", false);
        expect(p, "file-write-unlink", "home/alice/project/a", false);
        expect(p, "file-write-unlink", "home/alice/project/a/b", false);
        expect(p, "file-write-create", "home/alice/project/a", false); /* renamed back */
        expect(p, "file-write-create", "home/alice/project/a/b", false);
        expect(p, "file-write-unlink", "home/alice/project/a/c", true);
        expect(p, "file-write-create", "home/alice/project/a/b/new.c", true);
        expect(p, "file-write-data", "home/alice/project/a/b/new.c", true);
        sbpl_free(p);
}

/* Item: a wildcard in a middle component. The ancestor "project/<any>" holds for directories
 * and symlinks only; files directly in the project stay creatable, removable, renamable. */
static void test_glob_ancestors(void **state) {
        sx *p = profile_of("{ \"bindMounts\": [ { \"hostPath\": \"@T@/home/alice/project\" } ],"
                           "  \"denyWrite\": [ \"@T@/home/alice/project/*/config.json\" ],"
                           "  \"networkEnabled\": false }",
                           0, NULL);
        expect(p, "file-write-data", "home/alice/project/pkg/config.json", false);
        expect(p, "file-write-data", "home/alice/project/pkg/other.json", true);
        static const char *const files[] = { "home/alice/project/notes.md",
                                             "home/alice/project/Makefile.tmp" };
        for (size_t i = 0; i < ELEMENTSOF(files); i++) {
                expect_vnode(p, "file-write-create", files[i], "REGULAR-FILE", true);
                expect_vnode(p, "file-write-unlink", files[i], "REGULAR-FILE", true);
        }
        expect_vnode(p, "file-write-unlink", "home/alice/project/pkg", "DIRECTORY", false);
        expect_vnode(p, "file-write-create", "home/alice/project/pkg", "DIRECTORY", false);
        expect_vnode(p, "file-write-create", "home/alice/project/pkg", "SYMLINK", false);
        expect_vnode(p, "file-write-create", "home/alice/project/pkg/sub", "DIRECTORY", true);
        /* The built-in .git/worktrees/<any>/gitdir: the same, inside .git/worktrees. */
        expect_vnode(p, "file-write-unlink", "home/alice/project/.git/worktrees/w1", "DIRECTORY",
                     false);
        expect_vnode(p, "file-write-create", "home/alice/project/.git/worktrees/x.lock",
                     "REGULAR-FILE", true);
        sbpl_free(p);
}

/* Item: other processes' environments. proc_pidinfo and kin only for the sandbox's own
 * processes (a target filter: checked as text, the evaluator matches no target); the sysctl that
 * `ps -E` reads for nobody. */
static void test_process_info(void **state) {
        cordon_error err = { 0 };
        _cleanup_free_ char *text = sbt_profile(T, workspace_json, 0, NULL, &err);
        assert_non_null(text);
        assert_non_null(strstr(text, "\n(deny process-info* (with message \"cordon-deny process -\"))\n"
                                     "(allow process-info* (target same-sandbox))\n"
                                     "(allow process-info-listpids)\n"));
        sx *p = profile_of(workspace_json, 0, NULL);
        assert_false(sbpl_allows(p, "process-info-pidinfo", "another process"));
        assert_false(sbpl_allows(p, "process-info-codesignature", "another process"));
        assert_true(sbpl_allows(p, "process-info-listpids", ""));
        assert_false(sbpl_allows(p, "sysctl-read", "kern.procargs2"));
        assert_false(sbpl_allows(p, "sysctl-read", "kern.procargs"));
        assert_true(sbpl_allows(p, "sysctl-read", "kern.osrelease"));
        assert_true(sbpl_allows(p, "sysctl-read", "hw.ncpu"));
        sbpl_free(p);
}

static void expect_disk_case(const char *rel, bool folds, const char *want_rel) {
        char *got = NULL;
        assert_int_equal(sb_disk_case(at(rel), folds, &got), 0);
        assert_string_equal(got, at(want_rel));
        free(got);
}

/* Item: allows match the exact string, and a case-insensitive volume hands the kernel the
 * on-disk spelling: an allow spelled otherwise would refuse the writable root. On Linux (case
 * sensitive) the lookup is the same code: each component found in its directory's listing. */
static void test_disk_case(void **state) {
        assert_int_equal(mkdir(at("home/alice/CaseDir"), 0755), 0);
        assert_int_equal(mkdir(at("home/alice/CaseDir/Sub"), 0755), 0);
        /* A volume that folds case (macOS's default), simulated: */
        expect_disk_case("home/alice/casedir/sub", true, "home/alice/CaseDir/Sub");
        expect_disk_case("HOME/Alice/CASEDIR", true, "home/alice/CaseDir");
        expect_disk_case("home/alice/CaseDir/Sub", true, "home/alice/CaseDir/Sub");
        /* From the first missing component on, as written. */
        expect_disk_case("home/alice/casedir/missing/SUB", true,
                         "home/alice/CaseDir/missing/SUB");
        /* This volume does not fold: casedir is not CaseDir here, and an allow for CaseDir
         * would name a directory the policy did not. */
        expect_disk_case("home/alice/casedir/sub", false, "home/alice/casedir/sub");
        expect_disk_case("home/alice/CaseDir/Sub", false, "home/alice/CaseDir/Sub");
        char *root = NULL;
        assert_int_equal(sb_disk_case("/", false, &root), 0);
        assert_string_equal(root, "/");
        free(root);
        /* In a profile, on this case-sensitive volume: the policy's spelling only. */
        assert_int_equal(mkdir(at("home/alice/project/tools"), 0755), 0);
        sx *p = profile_of("{ \"bindMounts\": [ { \"hostPath\": \"@T@/home/alice/project\" } ],"
                           "  \"execGrantRoots\": [ \"@T@/home/alice/project/TOOLS\" ],"
                           "  \"networkEnabled\": false }",
                           0, NULL);
        assert_false(sbpl_allows(p, "process-exec", at("home/alice/project/tools/cc")));
        assert_true(sbpl_allows(p, "process-exec", at("home/alice/project/TOOLS/cc")));
        sbpl_free(p);
        assert_int_equal(rmdir(at("home/alice/project/tools")), 0);
        assert_int_equal(rmdir(at("home/alice/CaseDir/Sub")), 0);
        assert_int_equal(rmdir(at("home/alice/CaseDir")), 0);
}

/* Item: a repository below the top of a writable root (a clone, a submodule, `git init sub`):
 * its hooks run outside the sandbox on the user's next commit there. Linux's supervisor refuses
 * hook names in any repository's hooks directory; here beneath any .git at any depth. */
static void test_nested_hooks(void **state) {
        sx *p = profile_of(workspace_json, 0, NULL);
        static const char *const hooks[] = {
                "home/alice/project/sub/.git/hooks/pre-commit",
                "home/alice/project/a/b/c/.git/hooks/post-checkout",
                "home/alice/project/.git/modules/lib/hooks/pre-push",
                "home/alice/project/vendored/x/.git/modules/y/hooks/fsmonitor-watchman",
        };
        for (size_t i = 0; i < ELEMENTSOF(hooks); i++) {
                expect(p, "file-write-create", hooks[i], false);
                expect(p, "file-write-data", hooks[i], false);
                expect(p, "file-link", hooks[i], false);
        }
        expect(p, "file-write-create", "home/alice/project/sub/.git/hooks/pre-commit.sample",
               true);
        expect(p, "file-write-create", "home/alice/project/sub/.git/hooks/helper.sh", true);
        expect(p, "file-write-create", "home/alice/project/src/hooks/pre-commit", true);
        expect(p, "file-write-create", "home/alice/project/sub/.git/objects/ab/cd", true);
        /* The mandatory set reaches the profile whole: zsh's login and logout files and
         * Claude Code's user settings, at the root and in $HOME. .gitmodules is not in it, on
         * either backend (data/protected/names.list says why). */
        expect(p, "file-write-data", "home/alice/project/.zlogin", false);
        expect(p, "file-write-data", "home/alice/.zlogout", false);
        expect(p, "file-write-data", "home/alice/.claude.json", false);
        expect(p, "file-write-data", "home/alice/project/.claude.json", false);
        expect(p, "file-write-data", "home/alice/project/.gitmodules", true);
        sbpl_free(p);
}

/* Item: a nested repository's config, at any depth (Linux vets its content, a profile cannot
 * read it): refused, with its submodules' and worktrees' config files; refs named "config" and
 * files called config elsewhere stay writable. The price, git init/clone inside the workspace
 * failing, is docs/design/seatbelt.md's. */
static void test_nested_config(void **state) {
        sx *p = profile_of(workspace_json, 0, NULL);
        static const char *const denied[] = {
                "home/alice/project/sub/.git/config",
                "home/alice/project/a/b/.GIT/CONFIG",
                "home/alice/project/.git/modules/lib/config",
                "home/alice/project/sub/.git/modules/a/modules/b/config",
                "home/alice/project/sub/.git/worktrees/wt/config.worktree",
        };
        for (size_t i = 0; i < ELEMENTSOF(denied); i++) {
                expect(p, "file-write-create", denied[i], false);
                expect(p, "file-write-data", denied[i], false);
                expect(p, "file-link", denied[i], false);
        }
        expect(p, "file-write-create", "home/alice/project/sub/.git/refs/heads/config", true);
        expect(p, "file-write-create", "home/alice/project/sub/.git/config.lock", true);
        expect(p, "file-write-data", "home/alice/project/src/config", true);
        expect(p, "file-write-data", "home/alice/project/sub/.git/HEAD", true);
        sbpl_free(p);
}

/* Item: the command's own PTYs. Slaves are refused for reading and writing (the user's other
 * terminals: keystrokes, forged output) unless the kernel gave this sandbox their pty
 * extension, which this model never has; /dev/ptmx opens; /dev/tty stays writable. */
static void test_ttys(void **state) {
        cordon_error err = { 0 };
        _cleanup_free_ char *text = sbt_profile(T, workspace_json, 0, NULL, &err);
        assert_non_null(text);
        assert_non_null(strstr(text, "(allow file-read* file-write*\n  (require-all\n"
                                     "    (regex \"^/dev/ttys[0-9]+$\")\n"
                                     "    (extension \"com.apple.sandbox.pty\")))\n"));
        sx *p = profile_of(workspace_json, 0, NULL);
        assert_false(sbpl_allows(p, "file-read-data", "/dev/ttys003"));
        assert_false(sbpl_allows(p, "file-write-data", "/dev/ttys000"));
        assert_true(sbpl_allows(p, "file-read-data", "/dev/ptmx"));
        assert_true(sbpl_allows(p, "file-write-data", "/dev/ptmx"));
        assert_true(sbpl_allows(p, "file-write-data", "/dev/tty"));
        assert_true(sbpl_allows(p, "file-write-data", "/dev/null"));
        assert_true(sbpl_allows(p, "file-read-data", "/dev/urandom"));
        assert_false(sbpl_allows(p, "file-write-data", "/dev/disk0"));
        sbpl_free(p);
}

/* Item: the command's own Unix-socket servers in its TMPDIR (bind, accept, connect), in each
 * spelling; no other socket, and none without a TMPDIR. */
static void test_tmpdir_sockets(void **state) {
        sx *p = profile_of(workspace_json, 0, at("tmp/run-1"));
        assert_true(sbpl_allows(p, "network-bind", at("tmp/run-1/db.sock")));
        assert_true(sbpl_allows(p, "network-inbound", at("tmp/run-1/db.sock")));
        assert_true(sbpl_allows(p, "network-outbound", at("tmp/run-1/a/b.sock")));
        assert_false(sbpl_allows(p, "network-outbound", at("tmp/run-10/x.sock")));
        assert_false(sbpl_allows(p, "network-bind", at("home/alice/project/s.sock")));
        assert_false(sbpl_allows(p, "network-outbound", "/var/run/docker.sock"));
        assert_false(sbpl_allows(p, "network-outbound", at("home/alice/.ssh/agent.sock")));
        sbpl_free(p);
        p = profile_of(workspace_json, 0, NULL);
        assert_false(sbpl_allows(p, "network-bind", at("tmp/run-1/db.sock")));
        sbpl_free(p);
}

/* Item: what reaches outside without a program (Apple events, LaunchServices, cfprefsd writes,
 * launchd jobs, the pasteboard) is refused whatever program asks; reads of preferences and other
 * Mach services stay. */
static void test_services(void **state) {
        sx *p = profile_of(workspace_json, 0, NULL);
        assert_false(sbpl_allows(p, "appleevent-send", "com.apple.Terminal"));
        assert_false(sbpl_allows(p, "lsopen", "/Applications/Terminal.app"));
        assert_false(sbpl_allows(p, "user-preference-write", "com.apple.Terminal"));
        assert_false(sbpl_allows(p, "job-creation", "evil.plist"));
        assert_false(sbpl_allows(p, "mach-lookup", "com.apple.pasteboard.1"));
        assert_true(sbpl_allows(p, "mach-lookup", "com.apple.system.logger"));
        assert_true(sbpl_allows(p, "user-preference-read", "com.apple.Terminal"));
        sbpl_free(p);
}

/* Item: every deny names its rule and the session in (with message ...), the same words the log
 * reader (sandbox-log.c) maps back; the session is the caller's, the policy's, or "-". */
static void test_tags(void **state) {
        cordon_error err = { 0 };
        static const char with_id[] = "{ \"sessionId\": \"run-42\" }";
        _cleanup_free_ char *a = sbt_profile(T, workspace_json, 0, NULL, &err);
        _cleanup_free_ char *b = sbt_profile(T, with_id, 0, NULL, &err);
        assert_non_null(a);
        assert_non_null(b);
        for (int r = 0; r < SBR_COUNT_; r++) {
                char tag[128];
                if (r == SBR_READ_ONLY || r == SBR_RENAME)
                        continue; /* no read-only bind in these policies; renames: below */
                snprintf(tag, sizeof(tag), "(with message \"cordon-deny %s -\")",
                         seatbelt_rule_name((seatbelt_rule) r));
                if (!strstr(a, tag))
                        fail_msg("no %s", tag);
        }
        assert_non_null(strstr(a, "(with message \"cordon-deny rename -\")"));
        assert_null(strstr(b, " -\")"));
        assert_non_null(strstr(b, "(with message \"cordon-deny secret run-42\")"));
        /* Every deny rule line has exactly one message; no allow has one. */
        for (const char *l = a; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
                if (strncmp(l, "(deny ", 6) == 0) {
                        const char *end = strchr(l, '\n');
                        const char *m = strstr(l, "(with message ");
                        assert_true(m && (!end || m < end));
                }
                if (strncmp(l, "(allow ", 7) == 0) {
                        const char *end = strchr(l, '\n');
                        const char *m = strstr(l, "(with message ");
                        assert_true(!m || (end && m > end));
                }
        }
}

static void test_exec(void **state) {
        sx *p = profile_of(workspace_json, 0, at("tmp/run-1"));
        expect(p, "process-exec", "home/alice/project/build/a.out", false);
        expect(p, "process-exec", "home/alice/project/node_modules/.bin/tsc", true);
        expect(p, "process-exec", "home/alice/project/node_modules/evil", false);
        expect(p, "process-exec", "tmp/run-1/a.out", false);
        expect(p, "process-exec", "/usr/bin/git", true);
        expect(p, "process-exec", "/bin/sh", true);
        expect(p, "process-exec", "/usr/bin/osascript", false);
        expect(p, "process-exec", "/bin/launchctl", false);
        expect(p, "process-exec", "/usr/bin/security", false);
        /* process-exec*: a #! script's interpreter is checked too (process-exec-interpreter),
         * so `#!/usr/bin/osascript` in a script from an allowed place does not run it. */
        expect(p, "process-exec-interpreter", "/usr/bin/osascript", false);
        expect(p, "process-exec-interpreter", "home/alice/project/bin/interp", false);
        expect(p, "process-exec-interpreter", "/bin/sh", true);
        sbpl_free(p);
}

static void test_read_only_mode(void **state) {
        sx *p = profile_of("{ \"mode\": \"plan\", \"bindMounts\": [ { \"hostPath\": "
                           "\"@T@/home/alice/project\" } ], \"runnerStateDirs\": [ \"@T@/state\" "
                           "], \"networkEnabled\": false }",
                           0, NULL);
        expect(p, "file-write-data", "home/alice/project/src/main.c", false);
        expect(p, "file-write-data", "state/run.log", true);
        expect(p, "process-exec", "state/tool", false);
        expect(p, "process-exec", "home/alice/project/tool", true); /* not writable here */
        sbpl_free(p);
        /* Nothing writable at all: no allow rule may be left without its filters. */
        p = profile_of("{ \"mode\": \"read-only\", \"networkEnabled\": false }", 0, NULL);
        expect(p, "file-write-data", "home/alice/project/src/main.c", false);
        expect(p, "file-write-data", "/tmp/x", false);
        expect(p, "file-write-data", "/dev/null", true);
        sbpl_free(p);
}

static void test_worktree(void **state) {
        sx *p = profile_of("{ \"bindMounts\": [ { \"hostPath\": \"@T@/wt\" } ], "
                           "\"protectedPaths\": [ \"@T@/orig\" ], \"networkEnabled\": false }",
                           0, NULL);
        expect(p, "file-write-data", "wt/src.c", true);
        expect(p, "file-write-data", "wt/.git", false);
        expect(p, "file-write-data", "orig/.git/objects/ab/cd", true);
        expect(p, "file-write-data", "orig/.git/refs/heads/wt", true);
        expect(p, "file-write-data", "orig/.git/worktrees/wt/index", true);
        expect(p, "file-write-data", "orig/.git/worktrees/wt/gitdir", false);
        expect(p, "file-write-data", "orig/.git/hooks/post-checkout", false);
        expect(p, "file-write-data", "orig/.git/config", false);
        expect(p, "file-write-data", "orig/README", false);
        sbpl_free(p);
}

static void plan_freep(plan **p) {
        plan_free(*p);
}

/* The generator reads allowUnixSockets from the policy; planned without it, as the committed
 * planner still refuses the field (the Linux supervisor side is in progress). */
static char *profile_with_socket(const char *socket) {
        cordon_policy *pol = NULL;
        assert_int_equal(cordon_policy_new(&pol, NULL), 0);
        assert_int_equal(cordon_policy_set_network_enabled(pol, false), 0);
        cordon_error err = { 0 };
        _cleanup_(plan_freep) plan *p = NULL;
        char *home = strdup(at("home/alice")), *cwd = strdup(at("home/alice/project"));
        assert_int_equal(plan_build(pol, home, cwd, NULL, &p, &err), 0);
        assert_int_equal(policy_add_unix_socket(pol, socket), 0);
        seatbelt_params params = { .resolve = sbt_macos_resolve };
        char *text = NULL;
        assert_int_equal(seatbelt_profile(p, pol, &params, &text, &err), 0);
        cordon_policy_free(pol);
        free(home);
        free(cwd);
        return text;
}

static void test_network(void **state) {
        cordon_error err = { 0 };
        static const char on[] = "{ \"networkEnabled\": true }";
        static const char off[] = "{ \"networkEnabled\": false }";
        char *a = sbt_profile(T, on, 41000, NULL, &err);
        char *b = sbt_profile(T, off, 41000, NULL, &err);
        char *c = sbt_profile(T, on, 0, NULL, &err);
        assert_non_null(a);
        assert_non_null(b);
        assert_non_null(c);
        assert_non_null(strstr(a, "(deny network* (with message \"cordon-deny network -\"))\n"));
        assert_non_null(strstr(a, "(allow network-outbound (remote tcp \"localhost:41000\"))"));
        assert_non_null(strstr(a, "(literal \"/private/var/run/mDNSResponder\")"));
        /* Off: the proxy (which refuses everything and reports it) but no DNS. */
        assert_non_null(strstr(b, "(remote tcp \"localhost:41000\")"));
        assert_null(strstr(b, "mDNSResponder"));
        /* No proxy: no TCP destination at all. */
        assert_null(strstr(c, "remote tcp"));
        /* allowUnixSockets: those paths (both spellings) and nothing else, network on or off. */
        char *d = profile_with_socket("/var/run/agent.sock");
        char msg[256];
        sx *top = sbpl_parse(d, msg, sizeof(msg));
        assert_non_null(top);
        assert_true(sbpl_validate(top, msg, sizeof(msg)));
        assert_true(sbpl_allows(top, "network-outbound", "/private/var/run/agent.sock"));
        assert_true(sbpl_allows(top, "network-outbound", "/var/run/agent.sock"));
        assert_false(sbpl_allows(top, "network-outbound", "/var/run/docker.sock"));
        assert_false(sbpl_allows(top, "network-outbound", "/private/var/run/mDNSResponder"));
        sbpl_free(top);
        free(d);
        /* Never a loopback-wide allow, never a Unix socket beyond DNS. */
        for (const char *s = a; (s = strstr(s, "network-outbound")); s++)
                assert_null(strstr(s, "localhost:*"));
        assert_null(strstr(a, "unix-socket"));
        free(a);
        free(b);
        free(c);
}

/* Names that are syntax in SBPL, regexes or globs stay names: no rule breaks out, and each rule
 * still applies to the directory it names. */
static void test_hostile_names(void **state) {
        sx *p = profile_of("{ \"bindMounts\": ["
                           "  { \"hostPath\": \"@T@/odd/we\\\"ird (x); y\" },"
                           "  { \"hostPath\": \"@T@/odd/back\\\\slash\" },"
                           "  { \"hostPath\": \"@T@/odd/semi;colon\", \"readOnly\": true },"
                           "  { \"hostPath\": \"@T@/odd/p)(allow default)(\" } ],"
                           "  \"denyCreateNames\": [ \"we\\\"ird\", \"back\\\\\\\\slash\" ],"
                           "  \"networkEnabled\": false }",
                           0, NULL);
        expect(p, "file-write-data", "odd/we\"ird (x); y/f", true);
        expect(p, "file-write-data", "odd/back\\slash/f", true);
        expect(p, "file-write-data", "odd/p)(allow default)(/f", true);
        expect(p, "file-write-data", "odd/semi;colon/f", false);
        expect(p, "file-write-data", "odd/p)(allow default)(/.git/config", false);
        expect(p, "file-write-data", "/etc/passwd", false);
        expect(p, "process-exec", "odd/back\\slash/a.out", false);
        expect(p, "process-exec", "odd/we\"ird (x); y/a.out", false);
        expect(p, "process-exec", "odd/p)(allow default)(/a.out", false);
        expect(p, "process-exec", "odd/backslash/a.out", true); /* a different directory */
        expect(p, "file-write-create", "odd/back\\slash/we\"ird", false);
        expect(p, "file-write-create", "odd/back\\slash/back\\slash", false);
        expect(p, "file-write-create", "odd/back\\slash/backslash", true);
        sbpl_free(p);
}

static void test_danger_refused(void **state) {
        cordon_error err = { 0 };
        assert_null(sbt_profile(T, "{ \"mode\": \"danger-full-access\" }", 0, NULL, &err));
        assert_int_equal(err.code, CORDON_POLICY_INVALID);
        assert_non_null(strstr(err.message, "no Seatbelt profile"));
}

/* A writable root whose resolved path holds a newline: refused, and the message stays one
 * line. */
static void test_control_char_refused(void **state) {
        assert_int_equal(mkdir(at("a\nb"), 0755), 0);
        assert_int_equal(symlink("a\nb", at("nl-link")), 0);
        cordon_error err = { 0 };
        assert_null(sbt_profile(T, "{ \"bindMounts\": [ { \"hostPath\": \"@T@/nl-link\" } ], "
                                   "\"networkEnabled\": false }",
                                0, NULL, &err));
        assert_int_equal(err.code, CORDON_POLICY_UNENFORCEABLE);
        assert_non_null(strstr(err.message, "control character"));
        assert_null(strchr(err.message, '\n'));
        (void) unlink(at("nl-link"));
        (void) rmdir(at("a\nb"));
}


/* A bind named with bytes that are not UTF-8 (set through the API: JSON cannot carry them). */
static void test_invalid_utf8_refused(void **state) {
        assert_int_equal(mkdir(at("bad\xff"), 0755), 0);
        cordon_policy *pol = NULL;
        assert_int_equal(cordon_policy_new(&pol, NULL), 0);
        assert_int_equal(cordon_policy_add_bind(pol, at("bad\xff"), false), 0);
        assert_int_equal(cordon_policy_set_network_enabled(pol, false), 0);
        cordon_error err = { 0 };
        _cleanup_(plan_freep) plan *p = NULL;
        char *home = strdup(at("home/alice")), *cwd = strdup(at("home/alice/project"));
        assert_int_equal(plan_build(pol, home, cwd, NULL, &p, &err), 0);
        char *profile = NULL;
        assert_true(seatbelt_profile(p, pol, NULL, &profile, &err) < 0);
        assert_null(profile);
        assert_int_equal(err.code, CORDON_POLICY_UNENFORCEABLE);
        assert_non_null(strstr(err.message, "not valid UTF-8"));
        cordon_policy_free(pol);
        free(home);
        free(cwd);
        (void) rmdir(at("bad\xff"));
}

/* The public entry point, from the built-in default policy. */
static void test_public_api(void **state) {
        cordon_policy *def = NULL;
        cordon_error err = { 0 };
        assert_int_equal(cordon_policy_new_default(at("home/alice/project"), at("home/alice"),
                                                   &def, &err),
                         0);
        char *home = strdup(at("home/alice")), *cwd = strdup(at("home/alice/project"));
        cordon_seatbelt_options opts = { .home = home, .cwd = cwd, .proxy_port = 8080 };
        char *text = NULL;
        assert_int_equal(cordon_policy_to_seatbelt(def, &opts, &text, &err), 0);
        char msg[512];
        sx *top = sbpl_parse(text, msg, sizeof(msg));
        assert_non_null(top);
        assert_true(sbpl_validate(top, msg, sizeof(msg)));
        assert_true(sbpl_allows(top, "file-write-data", at("home/alice/project/x")));
        assert_false(sbpl_allows(top, "file-write-data", at("home/alice/project/.git/config")));
        assert_non_null(strstr(text, "localhost:8080"));
        sbpl_free(top);
        free(text);
        opts.tmpdir = "relative";
        assert_true(cordon_policy_to_seatbelt(def, &opts, &text, &err) < 0);
        assert_int_equal(err.code, CORDON_POLICY_INVALID);
        assert_null(text); /* not the freed profile of the call before */
        cordon_policy_free(def);
        free(home);
        free(cwd);
}

/* `cordon policy show --seatbelt` prints a valid profile; with --json it is a usage error. */
static void test_cli(void **state) {
        const char *build = getenv("CORDON_BUILD_DIR");
        if (!build)
                skip();
        char cmd[8192];
        snprintf(cmd, sizeof(cmd),
                 "cd '%s' && HOME='%s' '%s/cordon' policy show --seatbelt --deny-read '%s'",
                 at("home/alice/project"), at("home/alice"), build, at("home/alice/private"));
        FILE *f = popen(cmd, "r");
        assert_non_null(f);
        size_t cap = 1 << 20, len = 0;
        char *text = malloc(cap);
        assert_non_null(text);
        size_t n;
        while ((n = fread(text + len, 1, cap - 1 - len, f)) > 0)
                len += n;
        text[len] = '\0';
        assert_int_equal(pclose(f), 0);
        char msg[512];
        sx *top = sbpl_parse(text, msg, sizeof(msg));
        assert_non_null(top);
        assert_true(sbpl_validate(top, msg, sizeof(msg)));
        assert_true(sbpl_allows(top, "file-write-data", at("home/alice/project/x.c")));
        assert_false(sbpl_allows(top, "file-read-data", at("home/alice/private/x")));
        sbpl_free(top);
        free(text);
        snprintf(cmd, sizeof(cmd), "cd '%s' && '%s/cordon' policy show --seatbelt --json "
                 "2>/dev/null >/dev/null", at("home/alice/project"), build);
        int st = system(cmd);
        assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 125);
}

static int setup(void **state) {
        T = sbt_tree();
        return 0;
}

static int teardown(void **state) {
        sbt_remove(T);
        T = NULL;
        return 0;
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_writes),
                cmocka_unit_test(test_reads),
                cmocka_unit_test(test_names_and_renames),
                cmocka_unit_test(test_read_only_ancestors),
                cmocka_unit_test(test_glob_ancestors),
                cmocka_unit_test(test_process_info),
                cmocka_unit_test(test_disk_case),
                cmocka_unit_test(test_nested_hooks),
                cmocka_unit_test(test_nested_config),
                cmocka_unit_test(test_ttys),
                cmocka_unit_test(test_services),
                cmocka_unit_test(test_tmpdir_sockets),
                cmocka_unit_test(test_tags),
                cmocka_unit_test(test_exec),
                cmocka_unit_test(test_read_only_mode),
                cmocka_unit_test(test_worktree),
                cmocka_unit_test(test_network),
                cmocka_unit_test(test_hostile_names),
                cmocka_unit_test(test_danger_refused),
                cmocka_unit_test(test_control_char_refused),
                cmocka_unit_test(test_invalid_utf8_refused),
                cmocka_unit_test(test_public_api),
                cmocka_unit_test(test_cli),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
