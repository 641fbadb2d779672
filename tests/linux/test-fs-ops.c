/* SPDX-License-Identifier: Apache-2.0 */
/* The policy-checked file operations through the public calls alone (cordon_fs_*: the installed
 * header <cordon/cordon.h>, linked to libcordon.so; the mechanism is src/linux/fs-ops.c and
 * fs-check.c) on real trees under /var/tmp, under the default policy of a workspace ws/ with the
 * home home/ ($HOME, as a run finds it): each rule tried the allowed way and the refused way, and
 * the races a sandboxed command can run against them (a parent directory swapped for a symlink
 * while writes run, a file swapped during an edit). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <cordon/cordon.h>

#include "tmptree.h"

static char T[128]; /* the tree of the running test */

static const char *P(const char *rel) {
        static char bufs[8][PATH_MAX + 128];
        static unsigned n;
        char *b = bufs[n++ % 8];
        (void) snprintf(b, sizeof(bufs[0]), "%s/%s", T, rel);
        return b;
}

static void mkdirs(const char *rel) {
        char p[PATH_MAX + 128];
        (void) snprintf(p, sizeof(p), "%s/%s", T, rel);
        for (char *s = p + strlen(T) + 1; *s; s++)
                if (*s == '/') {
                        *s = '\0';
                        assert_true(mkdir(p, 0755) == 0 || errno == EEXIST);
                        *s = '/';
                }
        assert_true(mkdir(p, 0755) == 0 || errno == EEXIST);
}

static void put(const char *rel, const char *content) {
        int fd = open(P(rel), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, content, strlen(content)), (ssize_t) strlen(content));
        close(fd);
}

/* The file's content (static buffer), or "<missing>". */
static const char *get(const char *path) {
        static char buf[65536];
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return "<missing>";
        ssize_t n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        buf[n < 0 ? 0 : n] = '\0';
        return buf;
}

static bool exists(const char *path) {
        struct stat st;
        return lstat(path, &st) == 0;
}

static int setup(void **state) {
        (void) snprintf(T, sizeof(T), "/var/tmp/cordon-fs-XXXXXX");
        assert_non_null(mkdtemp(T));
        mkdirs("home/.ssh");
        put("home/.ssh/id_rsa", "SECRET KEY");
        put("home/.netrc", "machine example.com password hunter2");
        mkdirs("ws/.git/hooks");
        put("ws/.git/config", "[core]\n");
        put("ws/.bashrc", "# rc\n");
        mkdirs("ws/.vscode");
        put("ws/.vscode/settings.json", "{}");
        mkdirs("ws/src");
        put("ws/src/a.txt", "hello world\n");
        mkdirs("outside");
        put("outside/victim.txt", "untouched");
        /* The calls find the home as a run does: $HOME. */
        assert_int_equal(setenv("HOME", P("home"), 1), 0);
        return 0;
}

static int teardown(void **state) {
        tmptree_rm_rf(T);
        return 0;
}

/* The resolved policy of a session with the default policy on ws/ (mode: the policy's default
 * unless `mode` is given). */
static cordon_policy *session_policy(const char *mode) {
        cordon_policy *def = NULL, *res = NULL;
        cordon_error err = { 0 };
        assert_int_equal(cordon_policy_new_default(P("ws"), P("home"), &def, &err), 0);
        cordon_mode m;
        if (mode) {
                assert_int_equal(cordon_mode_from_string(mode, &m), 0);
                assert_int_equal(cordon_policy_set_mode(def, m), 0);
        }
        assert_int_equal(cordon_policy_resolve(def, NULL, NULL, &res, &err), 0);
        cordon_policy_free(def);
        return res;
}

/* What one call said besides its result. */
typedef struct outcome {
        cordon_error err;
        cordon_fs_refusal refusal;
} outcome;

/* The calls, with the workspace as their directory; `c` is reset first. */
static int try_write(const cordon_policy *p, outcome *c, const char *path, const void *data,
                     size_t len, cordon_fs_written *w) {
        *c = (outcome) { .err.code = CORDON_OK };
        return cordon_fs_write(p, P("ws"), path, data, len, w, &c->refusal, &c->err);
}

static int try_edit(const cordon_policy *p, outcome *c, const char *path, const char *old,
                    const char *new, cordon_fs_written *w) {
        *c = (outcome) { .err.code = CORDON_OK };
        return cordon_fs_edit(p, P("ws"), path, old, strlen(old), new, strlen(new), w,
                              &c->refusal, &c->err);
}

static int try_read(const cordon_policy *p, outcome *c, const char *path, uint64_t offset,
                    uint64_t length, cordon_fs_data *d) {
        *c = (outcome) { .err.code = CORDON_OK };
        return cordon_fs_read(p, P("ws"), path, offset, length, d, &c->refusal, &c->err);
}

static int try_stat(const cordon_policy *p, outcome *c, const char *path, cordon_fs_entry *e) {
        *c = (outcome) { .err.code = CORDON_OK };
        return cordon_fs_stat(p, P("ws"), path, e, &c->refusal, &c->err);
}

static int try_list(const cordon_policy *p, outcome *c, const char *path, cordon_fs_entry **e,
                    size_t *n, bool *truncated) {
        *c = (outcome) { .err.code = CORDON_OK };
        return cordon_fs_list(p, P("ws"), path, e, n, truncated, &c->refusal, &c->err);
}

static void write_ok(const cordon_policy *p, const char *path, const char *content) {
        outcome c;
        cordon_fs_written w;
        if (try_write(p, &c, path, content, strlen(content), &w) < 0)
                fail_msg("cordon_fs_write %s: %s", path, c.err.message);
        assert_string_equal(get(path), content);
        assert_null(c.refusal.action);
}

/* A refused write: the policy's code, the action and rule named, nothing written. */
static void write_refused(const cordon_policy *p, const char *path, const char *action,
                          const char *rule) {
        static char before[65536];
        (void) snprintf(before, sizeof(before), "%s", get(path));
        outcome c;
        cordon_fs_written w;
        int r = try_write(p, &c, path, "EVIL", 4, &w);
        if (r >= 0 || !c.refusal.action)
                fail_msg("cordon_fs_write %s: expected a refusal (%s), got r=%d code=%s: %s", path,
                         action, r, cordon_code_name(c.err.code), c.err.message);
        assert_int_equal(c.err.code, CORDON_POLICY_UNENFORCEABLE);
        assert_string_equal(c.refusal.action, action);
        if (rule && !strstr(c.refusal.rule, rule))
                fail_msg("rule '%s' does not name '%s'", c.refusal.rule, rule);
        assert_string_equal(get(path), before);
}

static void read_refused(const cordon_policy *p, const char *path, const char *rule) {
        outcome c;
        cordon_fs_data d;
        int r = try_read(p, &c, path, 0, 0, &d);
        if (r >= 0) {
                cordon_fs_data_free(&d);
                fail_msg("cordon_fs_read %s: expected a refusal", path);
        }
        if (!c.refusal.action)
                fail_msg("cordon_fs_read %s: failed instead of refused: %s", path, c.err.message);
        assert_string_equal(c.refusal.action, "file-read*");
        assert_int_equal(c.err.code, CORDON_POLICY_UNENFORCEABLE);
        if (rule && !strstr(c.refusal.rule, rule))
                fail_msg("rule '%s' does not name '%s'", c.refusal.rule, rule);
}

static void read_is(const cordon_policy *p, const char *path, const char *want) {
        outcome c;
        cordon_fs_data d;
        if (try_read(p, &c, path, 0, 0, &d) < 0)
                fail_msg("cordon_fs_read %s: %s", path, c.err.message);
        assert_int_equal(d.len, strlen(want));
        assert_memory_equal(d.data, want, d.len);
        assert_true(d.eof);
        cordon_fs_data_free(&d);
}

/* Nothing but `keep` left in a directory (no temporary file survives). */
static void dir_holds_only(const char *dir, const char *const *keep) {
        DIR *d = opendir(dir);
        assert_non_null(d);
        struct dirent *e;
        while ((e = readdir(d))) {
                bool ok = strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0;
                for (size_t i = 0; keep[i] && !ok; i++)
                        ok = strcmp(e->d_name, keep[i]) == 0;
                if (!ok)
                        fail_msg("unexpected entry '%s' in %s", e->d_name, dir);
        }
        closedir(d);
}

/* ---- writes ---------------------------------------------------------------------------------- */

static void test_write_new_and_replace(void **state) {
        cordon_policy *p = session_policy(NULL);
        mode_t old = umask(022);
        outcome c;
        cordon_fs_written w;
        assert_int_equal(try_write(p, &c, P("ws/src/new.txt"), "one\n", 4, &w), 0);
        assert_true(w.created);
        assert_int_equal(w.size, 4);
        struct stat st;
        assert_int_equal(stat(P("ws/src/new.txt"), &st), 0);
        assert_int_equal(st.st_mode & 07777, 0644);
        /* Replacing keeps the permission bits; binary content with NUL is written as is. */
        assert_int_equal(chmod(P("ws/src/new.txt"), 0600), 0);
        assert_int_equal(try_write(p, &c, P("ws/src/new.txt"), "a\0b", 3, &w), 0);
        assert_false(w.created);
        assert_int_equal(stat(P("ws/src/new.txt"), &st), 0);
        assert_int_equal(st.st_mode & 07777, 0600);
        assert_int_equal(st.st_size, 3);
        /* Literal paths with "//" and "/./" are normalised; an empty file is a file. */
        write_ok(p, P("ws//src/./empty.txt"), "");
        dir_holds_only(P("ws/src"), (const char *const[]) { "a.txt", "new.txt", "empty.txt",
                                                            NULL });
        umask(old);
        cordon_policy_free(p);
}

static void test_write_outside_roots(void **state) {
        cordon_policy *p = session_policy(NULL);
        write_refused(p, P("outside/victim.txt"), "file-write*", "outside the writable roots");
        write_refused(p, P("outside/new.txt"), "file-write*", "outside the writable roots");
        assert_false(exists(P("outside/new.txt")));
        write_refused(p, "/etc/cordon-fs-test", "file-write*", "outside the writable roots");
        write_refused(p, P("home/notes.txt"), "file-write*", "outside the writable roots");
        /* The daemon's kernel interfaces and the sandbox's private /tmp. */
        write_refused(p, "/proc/self/comm", "file-write*", "/proc");
        write_refused(p, "/sys/kernel/mm/ksm/run", "file-write*", "/sys");
        write_refused(p, "/tmp/cordon-fs-test", "file-write*", "/tmp");
        assert_false(exists("/tmp/cordon-fs-test"));
        /* A relative or ".." path is a bad request, not a refusal. */
        outcome c;
        cordon_fs_written w;
        assert_true(try_write(p, &c, "ws/x", "x", 1, &w) < 0);
        assert_int_equal(c.err.code, CORDON_USAGE);
        assert_true(try_write(p, &c, P("ws/../outside/x"), "x", 1, &w) < 0);
        assert_int_equal(c.err.code, CORDON_USAGE);
        assert_false(exists(P("outside/x")));
        cordon_policy_free(p);
}

static void test_write_protected(void **state) {
        cordon_policy *p = session_policy(NULL);
        write_refused(p, P("ws/.git/config"), "file-write*", ".git/config");
        write_refused(p, P("ws/.git/hooks/pre-commit"), "file-write*", ".git/hooks");
        assert_false(exists(P("ws/.git/hooks/pre-commit")));
        write_refused(p, P("ws/.bashrc"), "file-write*", ".bashrc");
        write_refused(p, P("ws/.vscode/settings.json"), "file-write*", ".vscode");
        write_refused(p, P("ws/.vscode/tasks.json"), "file-write*", ".vscode");
        /* Protected names that do not exist yet: refused by the name rules, not a mount. */
        mkdirs("ws/.claude");
        write_refused(p, P("ws/.claude/settings.json"), "file-write*", ".claude/settings");
        write_refused(p, P("ws/.mcp.json"), "file-write*", ".mcp.json");
        write_refused(p, P("ws/HEAD"), "file-write*", "HEAD");
        write_refused(p, P("ws/.idea"), "file-write*", ".idea");
        /* The ancestor of a protected path: a file named .git would point git elsewhere. */
        write_refused(p, P("ws/.git"), "file-write*", ".git/");
        cordon_policy_free(p);
}

static void test_write_denied_names(void **state) {
        cordon_policy *p = session_policy(NULL);
        write_refused(p, P("ws/.env"), "file-create-name", ".env");
        write_refused(p, P("ws/src/.env.local"), "file-create-name", ".env.*");
        write_refused(p, P("ws/src/server.pem"), "file-create-name", "*.pem");
        write_refused(p, P("ws/src/ID.KEY"), "file-create-name", "*.key");
        write_refused(p, P("ws/src/.hidden.pem"), "file-create-name", "*.pem");
        assert_false(exists(P("ws/.env")));
        assert_false(exists(P("ws/src/server.pem")));
        /* Near misses are allowed. */
        write_ok(p, P("ws/env"), "x");
        write_ok(p, P("ws/src/.envrc"), "x"); /* .envrc is protected at the root only */
        write_ok(p, P("ws/src/pem"), "x");
        write_ok(p, P("ws/src/key.txt"), "x");
        /* Committed templates are not secrets (plan_default_allow_create_names). */
        write_ok(p, P("ws/.env.example"), "A=");
        write_ok(p, P("ws/src/.env.sample"), "A=");
        cordon_policy_free(p);
}

/* .cordon holds project settings: no file operation brings one into existence anywhere in a
 * writable root, in any case, nor writes beneath one that exists (issue 11). */
static void test_write_cordon_dir(void **state) {
        cordon_policy *p = session_policy(NULL);
        write_refused(p, P("ws/.cordon"), "file-write*", ".cordon");
        write_refused(p, P("ws/src/.CORDON"), "file-write*", ".cordon");
        mkdirs("ws/sub/.cordon");
        write_refused(p, P("ws/sub/.cordon/settings.json"), "file-write*", ".cordon");
        assert_false(exists(P("ws/sub/.cordon/settings.json")));
        write_ok(p, P("ws/src/.cordonrc"), "x");
        cordon_policy_free(p);
}

/* A repository's config and hooks are the supervisor's to vet: file operations write neither
 * (docs/design/git-repos.md). */
static void test_write_repo_files(void **state) {
        cordon_policy *p = session_policy(NULL);
        mkdirs("ws/sub/.git/objects");
        mkdirs("ws/sub/.git/hooks");
        put("ws/sub/.git/config", "[core]\n");
        write_refused(p, P("ws/sub/.git/config"), "file-write*", "git: a repository's config");
        write_refused(p, P("ws/sub/.git/config.worktree"), "file-write*", "git: a repository");
        write_refused(p, P("ws/sub/.git/hooks/pre-commit"), "file-write*", "git: a hooks");
        assert_false(exists(P("ws/sub/.git/hooks/pre-commit")));
        /* Not a repository: ordinary files of those names. */
        mkdirs("ws/app/hooks");
        write_ok(p, P("ws/app/config"), "x");
        write_ok(p, P("ws/app/hooks/pre-commit"), "x");
        cordon_policy_free(p);
}

/* A .cordon directory at any depth: its settings would choose a later run's sandbox. */
static void test_write_settings_dirs(void **state) {
        cordon_policy *p = session_policy(NULL);
        assert_int_equal(mkdir(P("ws/sub"), 0755), 0);
        assert_int_equal(mkdir(P("ws/sub/.cordon"), 0755), 0);
        assert_int_equal(mkdir(P("ws/sub/.Cordon"), 0755), 0);
        write_refused(p, P("ws/sub/.cordon/settings.json"), "file-write*", ".cordon");
        write_refused(p, P("ws/sub/.Cordon/settings.json"), "file-write*", ".cordon");
        assert_false(exists(P("ws/sub/.cordon/settings.json")));
        write_ok(p, P("ws/sub/.cordonrc"), "x");
        cordon_policy_free(p);
}

static void test_write_symlink_last_component(void **state) {
        cordon_policy *p = session_policy(NULL);
        assert_int_equal(symlink(P("outside/victim.txt"), P("ws/link")), 0);
        write_refused(p, P("ws/link"), "file-write*", "symlink");
        assert_string_equal(get(P("outside/victim.txt")), "untouched");
        /* Inside the root too: a write never goes through a link. */
        assert_int_equal(symlink("src/a.txt", P("ws/inner")), 0);
        write_refused(p, P("ws/inner"), "file-write*", "symlink");
        assert_string_equal(get(P("ws/src/a.txt")), "hello world\n");
        /* A dangling link is not created through either. */
        assert_int_equal(symlink(P("outside/new.txt"), P("ws/dangling")), 0);
        write_refused(p, P("ws/dangling"), "file-write*", "symlink");
        assert_false(exists(P("outside/new.txt")));
        struct stat st;
        assert_int_equal(lstat(P("ws/link"), &st), 0);
        assert_true(S_ISLNK(st.st_mode));
        cordon_policy_free(p);
}

static void test_write_symlinked_parent(void **state) {
        cordon_policy *p = session_policy(NULL);
        /* A directory symlink out of the root: checked where it leads. */
        assert_int_equal(symlink(P("outside"), P("ws/out")), 0);
        write_refused(p, P("ws/out/new.txt"), "file-write*", "outside the writable roots");
        assert_false(exists(P("outside/new.txt")));
        /* ... and one into a protected directory. */
        assert_int_equal(symlink(".git/hooks", P("ws/hooks")), 0);
        write_refused(p, P("ws/hooks/post-checkout"), "file-write*", ".git/hooks");
        assert_false(exists(P("ws/.git/hooks/post-checkout")));
        /* A link that stays inside the root is followed, as the sandbox would. */
        assert_int_equal(symlink("src", P("ws/alias")), 0);
        write_ok(p, P("ws/alias/via-alias.txt"), "ok");
        assert_string_equal(get(P("ws/src/via-alias.txt")), "ok");
        /* No directory is created implicitly; the error names the directory. */
        outcome c;
        cordon_fs_written w;
        assert_true(try_write(p, &c, P("ws/nodir/x.txt"), "x", 1, &w) < 0);
        assert_int_equal(c.err.code, CORDON_EXEC_FAILED);
        assert_non_null(strstr(c.err.message, "ws/nodir"));
        assert_null(c.refusal.action);
        cordon_policy_free(p);
}

static void test_write_hard_links(void **state) {
        cordon_policy *p = session_policy(NULL);
        assert_int_equal(link(P("ws/.git/config"), P("ws/innocent.txt")), 0);
        /* Planned at the call, after the link was made: the plan finds the other name of
         * .git/config and protects it as a path of its own (src/plan/plan-links.c); the link
         * count check of fs-ops.c stands behind it (below). */
        write_refused(p, P("ws/innocent.txt"), "file-write*", "innocent.txt");
        assert_string_equal(get(P("ws/.git/config")), "[core]\n");
        outcome c;
        cordon_fs_written w;
        assert_true(try_edit(p, &c, P("ws/innocent.txt"), "core", "evil", &w) < 0);
        assert_non_null(c.refusal.action);
        assert_string_equal(get(P("ws/.git/config")), "[core]\n");
        /* Any file with other names: refused by its link count. */
        assert_int_equal(link(P("ws/src/a.txt"), P("ws/other-name.txt")), 0);
        write_refused(p, P("ws/other-name.txt"), "file-write*", "hard link");
        assert_true(try_edit(p, &c, P("ws/other-name.txt"), "hello", "evil", &w) < 0);
        assert_string_equal(c.refusal.rule, "hard link");
        assert_string_equal(get(P("ws/src/a.txt")), "hello world\n");
        assert_int_equal(unlink(P("ws/other-name.txt")), 0);
        /* A hard link to a secret is not readable through its other name: inside a writable
         * root the plan hides that name as a secret of its own (plan-links.c again) ... */
        assert_int_equal(link(P("home/.ssh/id_rsa"), P("ws/src/copy")), 0);
        read_refused(p, P("ws/src/copy"), "ws/src/copy");
        /* ... and outside, where the plan does not look, the inode check of fs-check.c finds
         * the secret it is. */
        assert_int_equal(link(P("home/.ssh/id_rsa"), P("outside/copy")), 0);
        read_refused(p, P("outside/copy"), ".ssh");
        /* Any file with one link is. */
        read_is(p, P("ws/src/a.txt"), "hello world\n");
        cordon_policy_free(p);
}

static void test_modes(void **state) {
        /* Read-only: the workspace is not writable. */
        cordon_policy *p = session_policy("read-only");
        write_refused(p, P("ws/src/a.txt"), "file-write*", P("ws"));
        read_is(p, P("ws/src/a.txt"), "hello world\n");
        cordon_policy_free(p);
        /* danger-full-access: no file layer at all, but still no kernel interfaces. */
        p = session_policy("danger-full-access");
        write_ok(p, P("outside/new.txt"), "free");
        write_ok(p, P("ws/.env"), "free");
        read_is(p, P("home/.ssh/id_rsa"), "SECRET KEY");
        write_refused(p, "/proc/self/comm", "file-write*", "/proc");
        read_refused(p, "/proc/self/environ", "/proc");
        cordon_policy_free(p);
}

/* A writable root that is a single file: not replaceable by rename, refused cleanly. */
static void test_bound_file_root(void **state) {
        cordon_policy *def = NULL, *res = NULL;
        cordon_error err = { 0 };
        put("outside/state.json", "{}");
        assert_int_equal(cordon_policy_new_default(P("ws"), P("home"), &def, &err), 0);
        assert_int_equal(cordon_policy_add_bind(def, P("outside/state.json"), false), 0);
        assert_int_equal(cordon_policy_resolve(def, NULL, NULL, &res, &err), 0);
        const cordon_policy *p = res;
        outcome c;
        cordon_fs_written w;
        assert_true(try_write(p, &c, P("outside/state.json"), "x", 1, &w) < 0);
        assert_int_equal(c.err.code, CORDON_EXEC_FAILED);
        assert_non_null(strstr(c.err.message, "bound file"));
        assert_string_equal(get(P("outside/state.json")), "{}");
        /* Its siblings are not writable. */
        write_refused(p, P("outside/other.json"), "file-write*", "outside the writable roots");
        cordon_policy_free(def);
        cordon_policy_free(res);
}

/* ---- the race: a parent directory swapped for a symlink while writes run --------------------- */

typedef struct swapper {
        atomic_bool stop;
        atomic_ulong swaps;
} swapper;

/* Exchanges ws/d (a real directory) and ws/dl (a symlink) atomically, again and again: at any
 * moment ws/d is either the directory or the symlink. A pause of a few microseconds between
 * swaps keeps each state long enough for a write to pass the check in one and reach the open in
 * the other: without RESOLVE_NO_SYMLINKS and the name check after the walk, dozens of the
 * writes below land behind the symlink (verified by removing both). */
static void *swap_loop(void *arg) {
        swapper *s = arg;
        char d[PATH_MAX + 128], dl[PATH_MAX + 128];
        (void) snprintf(d, sizeof(d), "%s", P("ws/d"));
        (void) snprintf(dl, sizeof(dl), "%s", P("ws/dl"));
        while (!atomic_load(&s->stop)) {
                if (renameat2(AT_FDCWD, d, AT_FDCWD, dl, RENAME_EXCHANGE) == 0)
                        atomic_fetch_add(&s->swaps, 1);
                struct timespec ts = { 0, 20 * 1000 };
                (void) nanosleep(&ts, NULL);
        }
        return NULL;
}

static void race_against(const char *target_rel) {
        char target[PATH_MAX + 128];
        (void) snprintf(target, sizeof(target), "%s", P(target_rel));
        const char *victim_dir = target;
        cordon_policy *p = session_policy(NULL);
        mkdirs("ws/d");
        assert_int_equal(symlink(target, P("ws/dl")), 0);
        swapper s = { 0 };
        pthread_t th;
        assert_int_equal(pthread_create(&th, NULL, swap_loop, &s), 0);
        unsigned ok = 0, refused = 0, failed = 0;
        struct timespec t0, now;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        now = t0;
        /* Two seconds of writes, whatever this machine's speed. */
        for (int i = 0; now.tv_sec - t0.tv_sec < 2 || i < 1000; i++) {
                clock_gettime(CLOCK_MONOTONIC, &now);
                char path[PATH_MAX + 32];
                (void) snprintf(path, sizeof(path), "%s/f%d.txt", P("ws/d"), i);
                outcome c;
                cordon_fs_written w;
                if (try_write(p, &c, path, "x", 1, &w) >= 0)
                        ok++;
                else if (c.refusal.action)
                        refused++;
                else
                        failed++;
        }
        atomic_store(&s.stop, true);
        pthread_join(th, NULL);
        print_message("race -> %s: %lu swaps, %u written, %u refused, %u failed\n", target,
                      (unsigned long) atomic_load(&s.swaps), ok, refused, failed);
        /* Nothing ever landed where the symlink leads, not even a temporary file. */
        DIR *d = opendir(victim_dir);
        assert_non_null(d);
        struct dirent *e;
        while ((e = readdir(d)))
                if (strncmp(e->d_name, "f", 1) == 0 || strncmp(e->d_name, ".cordon-", 8) == 0)
                        fail_msg("a write landed in %s: %s", victim_dir, e->d_name);
        closedir(d);
        assert_true(atomic_load(&s.swaps) > 100);
        assert_true(ok > 0 && refused > 0);
        cordon_policy_free(p);
}

static void test_race_parent_swapped_outside(void **state) {
        race_against("outside");
}

static void test_race_parent_swapped_protected(void **state) {
        race_against("ws/.git/hooks");
}

/* ---- reads ----------------------------------------------------------------------------------- */

static void test_read_secrets(void **state) {
        cordon_policy *p = session_policy(NULL);
        read_refused(p, P("home/.ssh/id_rsa"), ".ssh");
        read_refused(p, P("home/.netrc"), ".netrc");
        /* Through a symlink: what was opened is what is checked. */
        assert_int_equal(symlink(P("home/.ssh/id_rsa"), P("ws/key")), 0);
        read_refused(p, P("ws/key"), ".ssh");
        assert_int_equal(symlink(P("home/.ssh"), P("ws/sshdir")), 0);
        read_refused(p, P("ws/sshdir/id_rsa"), ".ssh");
        outcome c;
        cordon_fs_entry *e = NULL;
        size_t n = 0;
        bool truncated;
        assert_true(try_list(p, &c, P("home/.ssh"), &e, &n, &truncated) < 0);
        assert_string_equal(c.refusal.action, "file-read*");
        cordon_fs_entry st;
        assert_true(try_stat(p, &c, P("home/.ssh/id_rsa"), &st) < 0);
        assert_string_equal(c.refusal.action, "file-read*");
        /* The daemon's own kernel interfaces and the sandbox's private /tmp. */
        read_refused(p, "/proc/self/environ", "/proc");
        assert_int_equal(symlink("/proc/self/environ", P("ws/env")), 0);
        read_refused(p, P("ws/env"), "/proc");
        read_refused(p, "/dev/zero", "/dev");
        read_refused(p, "/tmp/anything", "/tmp");
        /* Readable: the workspace and the read-only host. */
        read_is(p, P("ws/src/a.txt"), "hello world\n");
        read_is(p, P("outside/victim.txt"), "untouched");
        read_is(p, P("ws/.git/config"), "[core]\n");
        cordon_policy_free(p);
}

static void test_read_ranges(void **state) {
        cordon_policy *p = session_policy(NULL);
        outcome c;
        cordon_fs_data d;
        assert_int_equal(try_read(p, &c, P("ws/src/a.txt"), 6, 3, &d), 0);
        assert_int_equal(d.len, 3);
        assert_memory_equal(d.data, "wor", 3);
        assert_false(d.eof);
        assert_int_equal(d.size, 12);
        cordon_fs_data_free(&d);
        assert_int_equal(try_read(p, &c, P("ws/src/a.txt"), 100, 0, &d), 0);
        assert_int_equal(d.len, 0);
        assert_true(d.eof);
        cordon_fs_data_free(&d);
        /* More than CORDON_FS_CONTENT_MAX without a length: an error that says how to read it. */
        int fd = open(P("ws/big"), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        assert_true(fd >= 0);
        assert_int_equal(ftruncate(fd, CORDON_FS_CONTENT_MAX + 1), 0);
        close(fd);
        assert_true(try_read(p, &c, P("ws/big"), 0, 0, &d) < 0);
        assert_int_equal(c.err.code, CORDON_EXEC_FAILED);
        assert_non_null(strstr(c.err.message, "offset, length"));
        assert_int_equal(try_read(p, &c, P("ws/big"), 1, CORDON_FS_CONTENT_MAX, &d), 0);
        assert_int_equal(d.len, CORDON_FS_CONTENT_MAX);
        assert_true(d.eof);
        cordon_fs_data_free(&d);
        /* Not a regular file: a FIFO is never opened for reading (it would block). */
        assert_int_equal(mkfifo(P("ws/fifo"), 0644), 0);
        assert_true(try_read(p, &c, P("ws/fifo"), 0, 0, &d) < 0);
        assert_non_null(strstr(c.err.message, "not a regular file"));
        assert_true(try_read(p, &c, P("ws/src"), 0, 0, &d) < 0);
        assert_non_null(strstr(c.err.message, "directory"));
        cordon_policy_free(p);
}

/* ---- edit -------------------------------------------------------------------------------------- */

static int edit(const cordon_policy *p, const char *path, const char *old, const char *new,
                outcome *c) {
        cordon_fs_written w;
        return try_edit(p, c, path, old, new, &w);
}

static void test_edit_occurrences(void **state) {
        cordon_policy *p = session_policy(NULL);
        outcome c;
        assert_int_equal(chmod(P("ws/src/a.txt"), 0640), 0);
        assert_int_equal(edit(p, P("ws/src/a.txt"), "world", "there", &c), 0);
        assert_string_equal(get(P("ws/src/a.txt")), "hello there\n");
        struct stat st;
        assert_int_equal(stat(P("ws/src/a.txt"), &st), 0);
        assert_int_equal(st.st_mode & 07777, 0640);
        /* Zero occurrences. */
        assert_true(edit(p, P("ws/src/a.txt"), "absent", "x", &c) < 0);
        assert_int_equal(c.err.code, CORDON_EXEC_FAILED);
        assert_non_null(strstr(c.err.message, "does not occur"));
        /* Two, and two overlapping ones. */
        put("ws/src/b.txt", "aa aa");
        assert_true(edit(p, P("ws/src/b.txt"), "aa", "b", &c) < 0);
        assert_non_null(strstr(c.err.message, "occurs 2 times"));
        put("ws/src/c.txt", "aaa");
        assert_true(edit(p, P("ws/src/c.txt"), "aa", "b", &c) < 0);
        assert_non_null(strstr(c.err.message, "occurs 2 times"));
        assert_string_equal(get(P("ws/src/c.txt")), "aaa");
        /* Deleting text; a missing file; a protected one; a denied name that exists. */
        assert_int_equal(edit(p, P("ws/src/b.txt"), "aa aa", "", &c), 0);
        assert_string_equal(get(P("ws/src/b.txt")), "");
        assert_true(edit(p, P("ws/src/none.txt"), "a", "b", &c) < 0);
        assert_int_equal(c.err.code, CORDON_EXEC_FAILED);
        assert_true(edit(p, P("ws/.git/config"), "core", "x", &c) < 0);
        assert_string_equal(c.refusal.action, "file-write*");
        put("ws/.env", "A=1");
        assert_true(edit(p, P("ws/.env"), "A=1", "A=2", &c) < 0);
        assert_string_equal(c.refusal.action, "file-create-name");
        assert_string_equal(get(P("ws/.env")), "A=1");
        dir_holds_only(P("ws/src"), (const char *const[]) { "a.txt", "b.txt", "c.txt", NULL });
        cordon_policy_free(p);
}

/* ---- list and stat ---------------------------------------------------------------------------- */

static void test_list_and_stat(void **state) {
        cordon_policy *p = session_policy(NULL);
        assert_int_equal(symlink("a.txt", P("ws/src/l")), 0);
        mkdirs("ws/src/z");
        outcome c;
        cordon_fs_entry *e = NULL;
        size_t n = 0;
        bool truncated = true;
        assert_int_equal(try_list(p, &c, P("ws/src"), &e, &n, &truncated), 0);
        assert_false(truncated);
        assert_int_equal(n, 3);
        assert_string_equal(e[0].name, "a.txt");
        assert_int_equal(e[0].type, CORDON_FS_FILE);
        assert_int_equal(e[0].size, 12);
        assert_string_equal(e[1].name, "l");
        assert_int_equal(e[1].type, CORDON_FS_SYMLINK);
        assert_string_equal(e[2].name, "z");
        assert_int_equal(e[2].type, CORDON_FS_DIRECTORY);
        cordon_fs_entries_free(e, n);
        /* The home: .ssh and .netrc are listed as the sandbox shows them: secret, size 0. */
        assert_int_equal(try_list(p, &c, P("home"), &e, &n, &truncated), 0);
        assert_int_equal(n, 2);
        assert_string_equal(e[0].name, ".netrc");
        assert_true(e[0].secret);
        assert_int_equal(e[0].size, 0);
        assert_string_equal(e[1].name, ".ssh");
        assert_true(e[1].secret);
        cordon_fs_entries_free(e, n);
        assert_true(try_list(p, &c, P("ws/src/a.txt"), &e, &n, &truncated) < 0);
        assert_int_equal(c.err.code, CORDON_EXEC_FAILED);
        /* stat: the entry itself, a symlink not followed. */
        cordon_fs_entry st;
        assert_int_equal(chmod(P("ws/src/a.txt"), 0604), 0);
        assert_int_equal(try_stat(p, &c, P("ws/src/a.txt"), &st), 0);
        assert_int_equal(st.type, CORDON_FS_FILE);
        assert_int_equal(st.size, 12);
        assert_int_equal(st.mode, 0604);
        assert_true(st.mtime_sec > 0);
        assert_int_equal(try_stat(p, &c, P("ws/src/l"), &st), 0);
        assert_int_equal(st.type, CORDON_FS_SYMLINK);
        assert_int_equal(try_stat(p, &c, "/", &st), 0);
        assert_int_equal(st.type, CORDON_FS_DIRECTORY);
        assert_true(try_stat(p, &c, P("ws/src/missing"), &st) < 0);
        assert_int_equal(c.err.code, CORDON_EXEC_FAILED);
        cordon_policy_free(p);
}

/* ---- the calls themselves ------------------------------------------------------------------- */

/* Each call plans the policy anew: a secret that appears after the policy was made (~/.aws made
 * a symlink into the workspace) is one at the next call, through its resolved form too. */
static void test_planned_per_call(void **state) {
        cordon_policy *p = session_policy(NULL);
        mkdirs("ws/cloud");
        put("ws/cloud/credentials", "aws_secret_access_key");
        read_is(p, P("ws/cloud/credentials"), "aws_secret_access_key");
        assert_int_equal(symlink(P("ws/cloud"), P("home/.aws")), 0);
        read_refused(p, P("ws/cloud/credentials"), "cloud");
        write_refused(p, P("ws/cloud/config"), "file-write*", "cloud");
        cordon_policy_free(p);
}

/* The header's promises: the refusal is reset by every call and filled only by the policy's
 * refusal; NULL refusal and error pointers; NULL cwd; bad arguments refused before any work. */
static void test_api_contract(void **state) {
        cordon_policy *p = session_policy(NULL);
        cordon_fs_refusal ref = { .action = "stale" };
        cordon_error err = { 0 };
        cordon_fs_written w;
        assert_int_equal(cordon_fs_write(p, P("ws"), P("ws/ok.txt"), "x", 1, &w, &ref, &err), 0);
        assert_null(ref.action);
        assert_int_equal(cordon_fs_write(p, P("ws"), P("ws/.env"), "x", 1, &w, &ref, &err),
                         -EACCES);
        assert_string_equal(ref.action, "file-create-name");
        assert_string_equal(ref.target, P("ws/.env"));
        assert_string_equal(ref.rule, ".env");
        /* A failure that is no refusal leaves it empty. */
        assert_true(cordon_fs_write(p, P("ws"), P("ws/nodir/x"), "x", 1, &w, &ref, &err) < 0);
        assert_int_equal(err.code, CORDON_EXEC_FAILED);
        assert_null(ref.action);
        /* Neither pointer is required; nothing is written either way. */
        assert_int_equal(cordon_fs_write(p, P("ws"), P("ws/.env"), "x", 1, &w, NULL, NULL),
                         -EACCES);
        assert_false(exists(P("ws/.env")));
        /* cwd NULL: the caller's directory. */
        char here[PATH_MAX];
        assert_non_null(getcwd(here, sizeof(here)));
        assert_int_equal(chdir(P("ws")), 0);
        cordon_fs_data d;
        assert_int_equal(cordon_fs_read(p, NULL, P("ws/ok.txt"), 0, 0, &d, &ref, &err), 0);
        assert_memory_equal(d.data, "x", 2);
        cordon_fs_data_free(&d);
        assert_null(d.data);
        assert_int_equal(chdir(here), 0);
        /* Bad arguments: USAGE, nothing done. A length or text above the limit never sizes a
         * buffer (the pointers below do not hold that much). */
        assert_int_equal(cordon_fs_read(p, P("ws"), "ws/ok.txt", 0, 0, &d, &ref, &err), -EINVAL);
        assert_int_equal(err.code, CORDON_USAGE);
        assert_int_equal(cordon_fs_read(p, P("ws"), P("ws/ok.txt"), 0,
                                        (uint64_t) CORDON_FS_CONTENT_MAX + 1, &d, &ref, &err),
                         -EINVAL);
        assert_int_equal(err.code, CORDON_USAGE);
        assert_int_equal(cordon_fs_edit(p, P("ws"), P("ws/ok.txt"), "x", 1, "y", SIZE_MAX, &w,
                                        &ref, &err), -EINVAL);
        assert_int_equal(err.code, CORDON_USAGE);
        assert_int_equal(cordon_fs_write(p, P("ws"), P("ws/ok.txt"), NULL, 1, &w, &ref, &err),
                         -EINVAL);
        assert_int_equal(cordon_fs_write(NULL, P("ws"), P("ws/ok.txt"), "x", 1, &w, &ref, &err),
                         -EINVAL);
        assert_int_equal(err.code, CORDON_USAGE);
        assert_string_equal(get(P("ws/ok.txt")), "x");
        assert_null(ref.action);
        /* A policy that cannot be planned: its error, and no refusal. */
        cordon_policy *def = NULL, *bad = NULL;
        assert_int_equal(cordon_policy_new_default(P("ws"), P("home"), &def, &err), 0);
        assert_int_equal(cordon_policy_add_bind(def, P("home/.ssh"), false), 0);
        assert_int_equal(cordon_policy_resolve(def, NULL, NULL, &bad, &err), 0);
        assert_true(cordon_fs_read(bad, P("ws"), P("ws/ok.txt"), 0, 0, &d, &ref, &err) < 0);
        assert_int_equal(err.code, CORDON_POLICY_INVALID);
        assert_null(ref.action);
        assert_null(d.data);
        cordon_policy_free(bad);
        cordon_policy_free(def);
        /* The type names; freeing nothing. */
        assert_string_equal(cordon_fs_type_to_string(CORDON_FS_FILE), "file");
        assert_string_equal(cordon_fs_type_to_string(CORDON_FS_CHAR_DEVICE), "char-device");
        assert_string_equal(cordon_fs_type_to_string(CORDON_FS_OTHER), "other");
        assert_string_equal(cordon_fs_type_to_string((cordon_fs_type) 99), "unknown");
        cordon_fs_data_free(NULL);
        cordon_fs_entries_free(NULL, 0);
        cordon_policy_free(p);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_write_new_and_replace, setup, teardown),
                cmocka_unit_test_setup_teardown(test_write_outside_roots, setup, teardown),
                cmocka_unit_test_setup_teardown(test_write_protected, setup, teardown),
                cmocka_unit_test_setup_teardown(test_write_settings_dirs, setup, teardown),
                cmocka_unit_test_setup_teardown(test_write_cordon_dir, setup, teardown),
                cmocka_unit_test_setup_teardown(test_write_repo_files, setup, teardown),
                cmocka_unit_test_setup_teardown(test_write_denied_names, setup, teardown),
                cmocka_unit_test_setup_teardown(test_write_symlink_last_component, setup,
                                                teardown),
                cmocka_unit_test_setup_teardown(test_write_symlinked_parent, setup, teardown),
                cmocka_unit_test_setup_teardown(test_write_hard_links, setup, teardown),
                cmocka_unit_test_setup_teardown(test_modes, setup, teardown),
                cmocka_unit_test_setup_teardown(test_bound_file_root, setup, teardown),
                cmocka_unit_test_setup_teardown(test_race_parent_swapped_outside, setup,
                                                teardown),
                cmocka_unit_test_setup_teardown(test_race_parent_swapped_protected, setup,
                                                teardown),
                cmocka_unit_test_setup_teardown(test_read_secrets, setup, teardown),
                cmocka_unit_test_setup_teardown(test_read_ranges, setup, teardown),
                cmocka_unit_test_setup_teardown(test_edit_occurrences, setup, teardown),
                cmocka_unit_test_setup_teardown(test_list_and_stat, setup, teardown),
                cmocka_unit_test_setup_teardown(test_planned_per_call, setup, teardown),
                cmocka_unit_test_setup_teardown(test_api_contract, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
