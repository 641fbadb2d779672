/* SPDX-License-Identifier: Apache-2.0 */
/* git in the plan. The user runs `git` on the host, unconfined, in the workspace after the
 * sandboxed command has ended (or a shell prompt does it on every `cd`). Whatever that git
 * executes or reads its configuration from must not be writable by the command, or the command
 * escapes the sandbox through it ("configuration-based sandbox escape"):
 *
 * - ROOT/.git itself when it is not a directory: a `.git` *file* saying "gitdir: evil" makes git
 *   obey evil/config (core.fsmonitor runs on `git status`);
 * - inside the git dir, besides hooks/ and config (the mandatory set): commondir (git reads
 *   config and hooks from the directory it names), config.worktree, modules/ (submodule git dirs
 *   with their own config), and in linked-worktree admin dirs worktrees/N/commondir, gitdir and
 *   config.worktree;
 * - the directories and files the existing configuration names: core.hooksPath (husky keeps
 *   hooks in the working tree), a core.fsmonitor command, included config files.
 *
 * What commits write stays writable: objects, refs, index, logs, HEAD, packed-refs,
 * COMMIT_EDITMSG, the worktree admin dirs' HEAD, index and logs.
 *
 * Linked worktrees (docs/policy.md): their main repository's shared .git becomes writable so
 * commits work, with the same list denied inside it. */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>

#include "plan/gitconfig.h"
#include "plan/plan-internal.h"

#define GITFILE_MAX 4096
#define GIT_MAX_CONFIG_FILES 32  /* per repository, includes counted */
#define GIT_MAX_INCLUDE_DEPTH 10 /* git's own MAX_INCLUDE_DEPTH */

/* Inside a git dir, each relative to it. hooks/ and config are in the mandatory set already for
 * ROOT/.git; they are listed for git dirs found elsewhere (a `.git` file's target, a commondir). */
static const char *const git_internals[] = {
        "hooks",           "config",           "commondir",
        "config.worktree", "modules",          "worktrees/*/commondir",
        "worktrees/*/gitdir", "worktrees/*/config.worktree",
};

/* githooks(5): the names git runs from a hooks directory. */
const char *const plan_git_hook_names[] = {
        "applypatch-msg", "pre-applypatch", "post-applypatch", "pre-commit",
        "pre-merge-commit", "prepare-commit-msg", "commit-msg", "post-commit",
        "pre-rebase", "post-checkout", "post-merge", "pre-push",
        "pre-receive", "update", "proc-receive", "post-receive",
        "post-update", "reference-transaction", "push-to-checkout", "pre-auto-gc",
        "post-rewrite", "sendemail-validate", "fsmonitor-watchman", "p4-changelist",
        "p4-prepare-changelist", "p4-post-changelist", "p4-pre-submit", "post-index-change",
        NULL,
};

/* Configuration read for every repository: the system file (Debian's git) and the user's two. */
static const char *const git_user_configs[] = { ".gitconfig", ".config/git/config" };
#define GIT_SYSTEM_CONFIG "/etc/gitconfig"

typedef struct git_repo {
        const char *worktree;    /* the worktree root, as written; NULL for user-wide files */
        const char *gitdir;      /* resolved; NULL for user-wide files */
        char common[PATH_MAX];   /* what gitdir/commondir names, else gitdir */
        unsigned n_files;
} git_repo;

/* ---- pushing derived paths ------------------------------------------------------------------ */

/* `path` with glob syntax defused (path_defuse_glob: a '[' in a config value or a directory name
 * is part of the name), then `/suffix` as written (it may hold wildcards). */
static char *globify(const char *path, const char *suffix) {
        _cleanup_free_ char *d = strdup(path);
        if (!d)
                return NULL;
        path_defuse_glob(d);
        return suffix ? path_join(d, suffix) : TAKE_PTR(d);
}

/* Pushes `base` (+ `/suffix`, which may hold wildcards) as written, if it is free of ".." (a
 * lexical guess would name something else), and with symlinks resolved. */
static int push_derived(strv *list, const char *base, const char *suffix) {
        _cleanup_free_ char *literal = NULL, *resolved = NULL, *a = NULL, *b = NULL;
        int r = path_normalize(base, &literal);
        if (r == -ENOMEM)
                return r;
        if (r >= 0 && !(a = globify(literal, suffix)))
                return -ENOMEM;
        r = path_resolve_lenient(base, &resolved);
        if (r == -ENOMEM)
                return r;
        if (r >= 0 && !(b = globify(resolved, suffix)))
                return -ENOMEM;
        if (a && (r = strv_push_unique(list, a)) < 0)
                return r;
        return b ? strv_push_unique(list, b) : 0;
}

/* Whether `path` is, or is an ancestor of, something that must stay writable: a writable root or
 * the repository's git dirs. A rule there would freeze the workspace (or every commit), and the
 * planner refuses a writable root inside a protected path outright. */
static int covers_keep(const plan_builder *b, const git_repo *repo, const char *path,
                       bool *ret) {
        _cleanup_free_ char *resolved = NULL;
        int r = path_resolve_lenient(path, &resolved);
        if (r == -ENOMEM)
                return r;
        const char *forms[] = { path, r >= 0 ? resolved : path };
        *ret = false;
        for (size_t f = 0; f < ELEMENTSOF(forms); f++) {
                for (size_t i = 0; i < b->n_roots; i++)
                        if (path_startswith(b->roots[i].resolved, forms[f]) ||
                            path_startswith(b->roots[i].literal, forms[f]))
                                *ret = true;
                if (repo && repo->gitdir && (path_startswith(repo->gitdir, forms[f]) ||
                                             path_startswith(repo->common, forms[f])))
                        *ret = true;
        }
        return 0;
}

/* Protects a path taken from the repository's layout or configuration, unless it would cover
 * something that must stay writable (then *ret_skipped). */
static int protect_path(plan_builder *b, const git_repo *repo, const char *path,
                        bool *ret_skipped) {
        bool covers = false;
        int r = covers_keep(b, repo, path, &covers);
        if (ret_skipped)
                *ret_skipped = covers;
        if (r < 0 || covers)
                return r;
        return push_derived(&b->protect, path, NULL);
}

/* git_config_pathname(): ":(optional)" dropped, "~/" is $HOME, relative paths start at `base`.
 * -ENOENT for what cannot be placed: "~user/" and "%(prefix)/" (git's install prefix, outside
 * any workspace) are not expanded, nor a relative path without a base. */
static int expand_git_path(const plan_builder *b, const char *value, const char *base,
                           char **ret) {
        const char *v = value;
        if (strncmp(v, ":(optional)", 11) == 0)
                v += 11;
        if (!*v || strncmp(v, "%(prefix)/", 10) == 0)
                return -ENOENT;
        if (v[0] == '~') {
                if (v[1] != '\0' && v[1] != '/')
                        return -ENOENT;
                *ret = v[1] && v[2] ? path_join(b->home, v + 2) : strdup(b->home);
        } else if (v[0] == '/')
                *ret = strdup(v);
        else if (base)
                *ret = path_join(base, v);
        else
                return -ENOENT;
        return *ret ? 0 : -ENOMEM;
}

/* ---- what the configuration names ----------------------------------------------------------- */

/* A hooks directory is protected whole (husky's hooks source helper scripts next to them).
 * When that would cover the workspace or the git dir (hooksPath = "."), the hook names in it
 * are protected instead: git runs nothing else from there. */
static int protect_hooks_dir(plan_builder *b, const git_repo *repo, const char *dir) {
        bool skipped = false;
        int r = protect_path(b, repo, dir, &skipped);
        for (size_t i = 0; r >= 0 && skipped && plan_git_hook_names[i]; i++) {
                _cleanup_free_ char *hook = path_join(dir, plan_git_hook_names[i]);
                r = hook ? protect_path(b, repo, hook, NULL) : -ENOMEM;
        }
        return r;
}

/* core.hooksPath: relative to the worktree root (githooks(5): hooks run there). */
static int protect_hooks_path(plan_builder *b, const git_repo *repo, const char *value) {
        _cleanup_free_ char *dir = NULL;
        int r = expand_git_path(b, value, repo->worktree, &dir);
        if (r < 0)
                return r == -ENOMEM ? r : 0;
        if ((r = protect_hooks_dir(b, repo, dir)) < 0)
                return r;
        /* husky >= 9 sets core.hooksPath to .husky/_, whose hooks run the user's scripts one
         * level up (.husky/pre-commit): that directory is the real hooks directory. */
        char *slash = strrchr(dir, '/');
        if (!slash || strcmp(slash, "/_") != 0 || slash == dir)
                return 0;
        *slash = '\0';
        return protect_hooks_dir(b, repo, dir);
}

/* core.fsmonitor: unless a boolean, a shell command git runs in the worktree root. Its first
 * word, when it is a path (has a '/'), is the program; a bare name is looked up in PATH, which
 * the plan does not model. */
static int protect_fsmonitor(plan_builder *b, const git_repo *repo, const char *value) {
        if (gitconfig_is_bool(value))
                return 0;
        const char *v = value;
        size_t n;
        if (v[0] == '\'' || v[0] == '"') { /* one quoted word, as sh reads it (simply) */
                const char *close = strchr(v + 1, v[0]);
                n = close ? (size_t) (close - v - 1) : strlen(v + 1);
                v++;
        } else
                n = strcspn(v, " \t\n");
        _cleanup_free_ char *word = strndup(v, n), *path = NULL;
        if (!word)
                return -ENOMEM;
        if (!strchr(word, '/'))
                return 0;
        int r = expand_git_path(b, word, repo->worktree, &path);
        if (r < 0)
                return r == -ENOMEM ? r : 0;
        return protect_path(b, repo, path, NULL);
}

static int scan_config(plan_builder *b, git_repo *repo, const char *file, unsigned depth);

/* include.path / includeIf.*.path: relative to the including file's directory. The included
 * file is configuration too: protected (existing or not) and read in turn. */
static int follow_include(plan_builder *b, git_repo *repo, const char *file, const char *value,
                          unsigned depth) {
        _cleanup_free_ char *dir = strdup(file), *inc = NULL;
        if (!dir)
                return -ENOMEM;
        char *slash = strrchr(dir, '/'); /* `file` is absolute: there is one */
        if (slash == dir)
                dir[1] = '\0';
        else if (slash)
                *slash = '\0';
        int r = expand_git_path(b, value, dir, &inc);
        if (r < 0)
                return r == -ENOMEM ? r : 0;
        if ((r = protect_path(b, repo, inc, NULL)) < 0)
                return r;
        return depth < GIT_MAX_INCLUDE_DEPTH ? scan_config(b, repo, inc, depth + 1) : 0;
}

/* Reads one config file and protects what it names. A file that is missing, unreadable, not a
 * regular file, larger than GITCONFIG_MAX_SIZE or not valid config syntax adds nothing and does
 * not fail the plan: git itself refuses to run with a config it cannot parse, so no hook or
 * monitor named in it runs; the others are simply not there. */
static int scan_config(plan_builder *b, git_repo *repo, const char *file, unsigned depth) {
        if (++repo->n_files > GIT_MAX_CONFIG_FILES)
                return 0; /* an include loop or a fan-out no real setup has */
        _cleanup_free_ char *text = NULL;
        /* Followed, as git reads it (a symlinked ~/.gitconfig is common); O_NONBLOCK and
         * regular files only: a FIFO swapped in by a command in the same workspace must not
         * hang the launcher. */
        int r = read_file_at(AT_FDCWD, file, GITCONFIG_MAX_SIZE, READ_FILE_REGULAR | READ_FILE_TEXT,
                             &text, NULL);
        if (r < 0)
                return r == -ENOMEM ? r : 0;
        _cleanup_(gitconfig_values_done) gitconfig_values v = { 0 };
        r = gitconfig_parse(text, strlen(text), &v);
        if (r < 0)
                return r == -ENOMEM ? r : 0;
        /* Every value counts, not only the last one git would use: protecting more is safe,
         * and an include may override a value in an order this reader does not track. */
        for (size_t i = 0; r >= 0 && i < v.hooks_path.n; i++)
                r = protect_hooks_path(b, repo, v.hooks_path.v[i]);
        for (size_t i = 0; r >= 0 && i < v.fsmonitor.n; i++)
                r = protect_fsmonitor(b, repo, v.fsmonitor.v[i]);
        for (size_t i = 0; r >= 0 && i < v.include.n; i++)
                r = follow_include(b, repo, file, v.include.v[i], depth);
        return r;
}

/* /etc/gitconfig, ~/.gitconfig, ~/.config/git/config ($XDG_CONFIG_HOME is not consulted). */
static int scan_user_configs(plan_builder *b, git_repo *repo) {
        int r = scan_config(b, repo, GIT_SYSTEM_CONFIG, 0);
        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(git_user_configs); i++) {
                _cleanup_free_ char *f = path_join(b->home, git_user_configs[i]);
                r = f ? scan_config(b, repo, f, 0) : -ENOMEM;
        }
        return r;
}

/* ---- one repository ------------------------------------------------------------------------- */

static void strip_line(char *s) {
        size_t n = strlen(s);
        while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' '))
                s[--n] = '\0';
}

/* The realpath of a path read from a git file, relative ones taken from `base`. */
static int realpath_from(const char *base, const char *path, char out[PATH_MAX]) {
        _cleanup_free_ char *joined = path[0] == '/' ? strdup(path) : path_join(base, path);
        if (!joined)
                return -ENOMEM;
        return realpath(joined, out) ? 0 : -errno;
}

/* Reads a one-line git file into a realpath; -ENOENT for anything unexpected. */
static int read_git_pointer(const char *file, const char *prefix, const char *base,
                            char out[PATH_MAX]) {
        _cleanup_free_ char *content = NULL;
        /* Not followed: a symlink must not redirect a read that decides what becomes writable. */
        int r = read_file_at(AT_FDCWD, file, GITFILE_MAX,
                             READ_FILE_NOFOLLOW | READ_FILE_REGULAR | READ_FILE_TEXT, &content, NULL);
        if (r == -ENOMEM)
                return r;
        if (r < 0 || strncmp(content, prefix, strlen(prefix)) != 0)
                return -ENOENT;
        char *v = content + strlen(prefix);
        strip_line(v);
        if (!*v || strchr(v, '\n'))
                return -ENOENT;
        r = realpath_from(base, v, out);
        return r == -ENOMEM ? r : (r < 0 ? -ENOENT : 0);
}

static int protect_each(plan_builder *b, const git_repo *repo, const char *dir,
                        const char *const *names, size_t n) {
        int r = 0;
        for (size_t i = 0; r >= 0 && i < n; i++) {
                _cleanup_free_ char *p = path_join(dir, names[i]);
                if (!p)
                        return -ENOMEM;
                if (!path_is_glob(names[i])) {
                        r = protect_path(b, repo, p, NULL);
                        continue;
                }
                /* A glob (worktrees/<any>/gitdir) lies below the git dir: it cannot cover a
                 * writable root, and its pattern part must stay a pattern. */
                r = push_derived(&b->protect, dir, names[i]);
        }
        return r;
}

/* A git dir in use by the worktree at `worktree`: its internals, its common dir's
 * internals, and everything its configuration (and the user's) names. */
static int scan_repo(plan_builder *b, const char *worktree, const char *gitdir) {
        git_repo repo = { .worktree = worktree, .gitdir = gitdir };
        _cleanup_free_ char *cd = path_join(gitdir, "commondir");
        if (!cd)
                return -ENOMEM;
        int r = read_git_pointer(cd, "", gitdir, repo.common);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                if (strlen(gitdir) >= sizeof(repo.common))
                        return 0; /* realpath()ed: cannot happen */
                strcpy(repo.common, gitdir);
        }
        static const char *const per_worktree[] = { "commondir", "config.worktree" };
        if ((r = protect_each(b, &repo, repo.common, git_internals,
                              ELEMENTSOF(git_internals))) < 0 ||
            (r = protect_each(b, &repo, gitdir, per_worktree, ELEMENTSOF(per_worktree))) < 0)
                return r;
        const char *files[][2] = { { repo.common, "config" },
                                   { repo.common, "config.worktree" },
                                   { gitdir, "config.worktree" } };
        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(files); i++) {
                _cleanup_free_ char *f = path_join(files[i][0], files[i][1]);
                r = f ? scan_config(b, &repo, f, 0) : -ENOMEM;
        }
        return r < 0 ? r : scan_user_configs(b, &repo);
}

/* ---- linked worktrees ----------------------------------------------------------------------- */

/* If ROOT/.git is a file "gitdir: X/worktrees/N", returns X (the common dir) and the worktree's
 * own git dir. The link is trusted only if it points back: X/worktrees/N/gitdir names ROOT/.git.
 * A command confined earlier cannot rewrite ROOT/.git (it is protected), and could not before
 * either write files outside its writable roots, so it cannot make an unrelated repository (or
 * any directory with a "worktrees" child) writable. */
static int worktree_dirs(const char *root, char **ret_common, char **ret_gitdir) {
        _cleanup_free_ char *gitfile = path_join(root, ".git"), *back = NULL;
        bool is_dir;
        if (!gitfile)
                return -ENOMEM;
        if (!path_exists(gitfile, &is_dir) || is_dir)
                return 0;
        char gitdir[PATH_MAX], pointed[PATH_MAX];
        int r = read_git_pointer(gitfile, "gitdir: ", root, gitdir);
        if (r < 0)
                return r == -ENOMEM ? r : 0;
        back = path_join(gitdir, "gitdir");
        if (!back)
                return -ENOMEM;
        r = read_git_pointer(back, "", gitdir, pointed);
        if (r < 0)
                return r == -ENOMEM ? r : 0;
        if (strcmp(pointed, gitfile) != 0)
                return 0;
        char common[PATH_MAX];
        strcpy(common, gitdir);
        char *slash = strrchr(common, '/');
        if (!slash || slash == common)
                return 0;
        *slash = '\0'; /* X/worktrees */
        slash = strrchr(common, '/');
        /* X = "/" would make the whole filesystem writable: never a git common dir. */
        if (!slash || slash == common || strcmp(slash + 1, "worktrees") != 0)
                return 0;
        *slash = '\0';
        *ret_common = strdup(common);
        *ret_gitdir = strdup(gitdir);
        return *ret_common && *ret_gitdir ? 1 : -ENOMEM;
}

/* docs/policy.md: in a linked worktree the main repository's shared .git stays writable (refs,
 * index, objects) so commits work; what git executes or obeys there stays denied (scan_repo()
 * protects it once the common dir is a root, so the rules are checked against it). */
static int add_worktree(plan_builder *b, const plan_root *root, const char *common,
                        const char *gitdir) {
        git_repo none = { 0 };
        int r = 0;
        /* ROOT/.git itself: rewriting it would point git at another repository. X's internals
         * by its path, whatever worktrees/N/commondir says (X is what becomes writable). */
        if ((r = push_derived(&b->protect, root->literal, ".git")) < 0 ||
            (r = push_derived(&b->protect, root->resolved, ".git")) < 0 ||
            (r = protect_each(b, &none, common, git_internals, ELEMENTSOF(git_internals))) < 0)
                return r;
        if (!plan_beneath_root(b, common) &&
            (r = plan_add_root(b, common, common, true, plan_why_git_common)) < 0)
                return r;
        return scan_repo(b, root->literal, gitdir);
}

/* ---- ROOT/.git ------------------------------------------------------------------------------ */

/* A symlinked .git: the link may not be replaced (unlink is not a creating call, but making a
 * new .git is), and what it points to is the git dir, or a gitdir file, or nothing yet. */
static int git_symlink(plan_builder *b, const char *literal, const char *resolved) {
        int r;
        if ((r = push_derived(&b->protect_names, literal, ".git")) < 0 ||
            (r = push_derived(&b->protect_names, resolved, ".git")) < 0)
                return r;
        _cleanup_free_ char *link = path_join(resolved, ".git");
        if (!link)
                return -ENOMEM;
        char target[PATH_MAX];
        struct stat st;
        if (realpath(link, target) && stat(target, &st) == 0 && S_ISDIR(st.st_mode))
                return scan_repo(b, literal, target);
        /* A file ("gitdir: ...", bound read-only) or dangling (its target may not be created). */
        return push_derived(&b->protect, link, NULL);
}

/* A .git file that is not a linked worktree of ours: it stays as it is, and if it names a git
 * dir (a submodule checkout, --separate-git-dir) that dir is treated like ROOT/.git. */
static int git_file(plan_builder *b, const char *literal, const char *resolved) {
        int r;
        if ((r = push_derived(&b->protect, literal, ".git")) < 0 ||
            (r = push_derived(&b->protect, resolved, ".git")) < 0)
                return r;
        _cleanup_free_ char *file = path_join(resolved, ".git");
        if (!file)
                return -ENOMEM;
        char gitdir[PATH_MAX];
        struct stat st;
        r = read_git_pointer(file, "gitdir: ", resolved, gitdir);
        if (r == -ENOMEM)
                return r;
        if (r < 0 || stat(gitdir, &st) < 0 || !S_ISDIR(st.st_mode))
                return 0;
        return scan_repo(b, literal, gitdir);
}

/* A workspace top without a repository: nothing named .git may come into existence there (a
 * `.git` file "gitdir: evil" next to a crafted evil/config would run evil's core.fsmonitor on
 * the host's next `git status`). `git init` there is refused already (it writes .git/config);
 * `git init sub` keeps working. */
static int git_root(plan_builder *b, const char *literal, const char *resolved) {
        _cleanup_free_ char *dotgit = path_join(resolved, ".git");
        if (!dotgit)
                return -ENOMEM;
        struct stat st;
        if (lstat(dotgit, &st) < 0) {
                int r = push_derived(&b->protect, literal, ".git");
                return r < 0 ? r : push_derived(&b->protect, resolved, ".git");
        }
        if (S_ISDIR(st.st_mode))
                return scan_repo(b, literal, dotgit);
        if (S_ISLNK(st.st_mode))
                return git_symlink(b, literal, resolved);
        return git_file(b, literal, resolved); /* a file, or anything else: bound read-only */
}

static bool is_root(const plan_builder *b, const char *resolved) {
        for (size_t i = 0; i < b->n_roots; i++)
                if (strcmp(b->roots[i].resolved, resolved) == 0)
                        return true;
        return false;
}

/* A writable $HOME below a writable root is a worktree root of its own for git run in ~. */
static int git_home(plan_builder *b) {
        bool writable = false;
        _cleanup_free_ char *resolved = NULL;
        int r = plan_home_is_writable(b, &writable);
        if (r < 0 || !writable)
                return r;
        if ((r = path_resolve_lenient(b->home, &resolved)) < 0)
                return r == -ENOMEM ? r : 0;
        bool is_dir = false;
        if (is_root(b, resolved) || !path_exists(resolved, &is_dir) || !is_dir)
                return 0;
        return git_root(b, b->home, resolved);
}

int plan_git(plan_builder *b) {
        size_t n = b->n_roots; /* add_worktree() appends; those are git dirs themselves */
        int r = 0;
        for (size_t i = 0; r >= 0 && i < n; i++) {
                _cleanup_free_ char *common = NULL, *gitdir = NULL;
                if (!b->roots[i].is_dir)
                        continue;
                plan_root root = b->roots[i]; /* a copy: add_worktree() may move the array */
                r = worktree_dirs(root.resolved, &common, &gitdir);
                if (r > 0)
                        r = add_worktree(b, &root, common, gitdir);
                else if (r == 0)
                        r = git_root(b, root.literal, root.resolved);
        }
        if (r >= 0)
                r = git_home(b);
        /* The user-wide files once more without a worktree: their includes, absolute hooks
         * paths and monitors matter even when no writable root is a repository. */
        git_repo user = { 0 };
        return r < 0 ? r : scan_user_configs(b, &user);
}
