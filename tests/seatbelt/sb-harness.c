/* SPDX-License-Identifier: Apache-2.0 */
#include "sb-harness.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "plan/plan-internal.h"
#include "policy/policy.h"
#include "tmptree.h"

const char *sbt_at(const char *root, const char *rel) {
        static char bufs[8][PATH_MAX];
        static unsigned next;
        char *b = bufs[next++ % 8];
        snprintf(b, PATH_MAX, "%s/%s", root, rel);
        return b;
}

static void mkdir_p(const char *root, const char *rel) {
        char p[PATH_MAX];
        snprintf(p, sizeof(p), "%s/%s", root, rel);
        for (char *s = p + strlen(root) + 1; *s; s++)
                if (*s == '/') {
                        *s = '\0';
                        assert_true(mkdir(p, 0755) == 0 || errno == EEXIST);
                        *s = '/';
                }
        assert_true(mkdir(p, 0755) == 0 || errno == EEXIST);
}

static void file(const char *root, const char *rel, const char *content) {
        int fd = open(sbt_at(root, rel), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        assert_true(fd >= 0);
        size_t n = strlen(content);
        assert_int_equal(write(fd, content, n), (ssize_t) n);
        close(fd);
}

static void populate(const char *t) {
        mkdir_p(t, "home/alice/.ssh");
        file(t, "home/alice/.ssh/id_ed25519", "KEY");
        file(t, "home/alice/.gitconfig", "[core]\n\thooksPath = ~/.githooks\n");
        mkdir_p(t, "home/alice/project/.git/hooks");
        file(t, "home/alice/project/.git/config", "[core]\n\tbare = false\n");
        mkdir_p(t, "home/alice/project/src");
        mkdir_p(t, "home/alice/project/vendor");
        mkdir_p(t, "home/alice/project/a/b/vendor");
        mkdir_p(t, "home/alice/tools/bin");
        mkdir_p(t, "state");
        mkdir_p(t, "tmp/run-1");
        assert_int_equal(symlink("home/alice/project", sbt_at(t, "link-project")), 0);
        /* A linked worktree: wt/.git names orig/.git/worktrees/wt, which names it back. */
        mkdir_p(t, "orig/.git/hooks");
        mkdir_p(t, "orig/.git/worktrees/wt");
        file(t, "orig/.git/config", "[core]\n");
        file(t, "orig/.git/worktrees/wt/HEAD", "ref: refs/heads/wt\n");
        char line[PATH_MAX + 16];
        snprintf(line, sizeof(line), "%s/wt/.git\n", t);
        file(t, "orig/.git/worktrees/wt/gitdir", line);
        mkdir_p(t, "wt");
        snprintf(line, sizeof(line), "gitdir: %s/orig/.git/worktrees/wt\n", t);
        file(t, "wt/.git", line);
        /* Names that are syntax in SBPL, in regexes or in globs. */
        static const char *const odd[] = {
                "odd/we\"ird (x); y", "odd/uni-\xc3\xbc-\xe5\x90\x8d", "odd/back\\slash",
                "odd/semi;colon",     "odd/p)(allow default)(",
        };
        for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]); i++)
                mkdir_p(t, odd[i]);
}

char *sbt_tree(void) {
        char tmpl[] = "/tmp/cordon-sb-XXXXXX";
        char *d = mkdtemp(tmpl);
        assert_non_null(d);
        char *real = realpath(d, NULL);
        assert_non_null(real);
        if (strcmp(real, d) != 0) {
                /* /tmp is a symlink on this host: the simulation would mean something else. */
                print_message("/tmp resolves to %s; skipping\n", real);
                (void) rmdir(d);
                free(real);
                exit(77);
        }
        populate(real);
        return real;
}

void sbt_remove(char *root) {
        tmptree_remove(root);
}

int sbt_macos_resolve(void *userdata, const char *path, char **ret) {
        static const char *const firmlinks[] = { "/tmp", "/var", "/etc" };
        _cleanup_free_ char *real = NULL;
        /* This host's symlinks only inside the tree: elsewhere (/var/run -> /run on Debian) they
         * are not macOS's, and the golden files must not depend on the host. */
        if (strncmp(path, "/tmp/cordon-sb-", 15) == 0) {
                int r = path_resolve_lenient(path, &real);
                if (r < 0)
                        return r;
        } else if (!(real = strdup(path)))
                return -ENOMEM;
        for (size_t i = 0; i < sizeof(firmlinks) / sizeof(firmlinks[0]); i++)
                if (path_startswith(real, firmlinks[i])) {
                        size_t n = strlen(real) + sizeof("/private");
                        *ret = malloc(n);
                        if (!*ret)
                                return -ENOMEM;
                        snprintf(*ret, n, "/private%s", real);
                        return 0;
                }
        if (strcmp(real, path) == 0)
                return -ENOENT;
        *ret = TAKE_PTR(real);
        return 0;
}

char *sbt_replace(const char *s, const char *from, const char *to) {
        size_t fl = strlen(from), tl = strlen(to), n = 0;
        for (const char *p = strstr(s, from); p; p = strstr(p + fl, from))
                n++;
        char *out = malloc(strlen(s) + n * (tl > fl ? tl - fl : 0) + 1);
        assert_non_null(out);
        char *o = out;
        for (const char *p = s;;) {
                const char *hit = strstr(p, from);
                size_t k = hit ? (size_t) (hit - p) : strlen(p);
                memcpy(o, p, k);
                o += k;
                if (!hit)
                        break;
                memcpy(o, to, tl);
                o += tl;
                p = hit + fl;
        }
        *o = '\0';
        return out;
}

static void plan_freep(plan **p) {
        plan_free(*p);
}

static void policy_freep(cordon_policy **p) {
        cordon_policy_free(*p);
}

char *sbt_profile(const char *root, const char *json, uint16_t proxy_port, const char *tmpdir,
                  cordon_error *err) {
        _cleanup_free_ char *text = sbt_replace(json, "@T@", root);
        _cleanup_(policy_freep) cordon_policy *pol = NULL;
        assert_int_equal(cordon_policy_new(&pol, NULL), 0);
        if (cordon_policy_load_string(pol, text, strlen(text), "case", err) < 0)
                return NULL;
        _cleanup_(plan_freep) plan *p = NULL;
        _cleanup_free_ char *home = strdup(sbt_at(root, "home/alice"));
        _cleanup_free_ char *cwd = strdup(sbt_at(root, "home/alice/project"));
        if (plan_build(pol, home, cwd, NULL, &p, err) < 0)
                return NULL;
        seatbelt_params params = { .proxy_port = proxy_port, .tmpdir = tmpdir,
                                   .resolve = sbt_macos_resolve };
        char *profile = NULL;
        if (seatbelt_profile(p, pol, &params, &profile, err) < 0)
                return NULL;
        return profile;
}
