/* SPDX-License-Identifier: Apache-2.0 */
/* The file and exec sections of a Seatbelt profile (docs/design/seatbelt.md), from the plan's path
 * sets (plan.h: plan_paths): the same secret set, writable roots, write-deny set and name rules the
 * Linux backend enforces, re-derived from nothing. */
#include "seatbelt/seatbelt-internal.h"

/* Every spelling of every path in `src`, sorted. */
static int collect_forms(sb_gen *g, const strv *src, bool glob, strv *out) {
        for (size_t i = 0; i < src->n; i++) {
                int r = sb_push_forms(g, out, src->v[i], glob);
                if (r < 0)
                        return r;
        }
        sb_sort(out);
        return 0;
}

/* ---- reads ---------------------------------------------------------------------------------- */

/* Seatbelt matches paths, not files: `ln ~/.ssh/id_ed25519 ws/k` or `cp -c ~/.aws/credentials
 * ws/c` (clonefile) would give the secret a second name no rule names, readable from there. The
 * link and the clone are refused with the secret as their source. */
static int section_reads(sb_gen *g) {
        strv forms = { 0 };
        int r = collect_forms(g, &g->p->paths.secrets, true, &forms);
        sb_comment(g, "");
        sb_comment(g, "reads: everything but the secret set (docs/policy.md) and denyRead, which");
        sb_comment(g, "cannot be hard-linked or cloned to a name outside it either");
        if (r >= 0)
                sb_rule(g, "deny file-read* file-link file-clone", SBR_SECRET,
                        SB_DENY_GLOB_SUBPATH, &forms);
        strv_done(&forms);
        return r;
}

/* ---- writes --------------------------------------------------------------------------------- */

/* Device files a shell writes to by name (`> /dev/null`, `/dev/tty` prompts, /dev/fd/N, which
 * only duplicates an descriptor the command holds already, with its access mode). Other ttys
 * are not here: writing into the user's other terminals could forge their output. */
static void allow_devices(sb_gen *g) {
        static const char *const literals[] = { "/dev/null", "/dev/zero", "/dev/tty",
                                                "/dev/dtracehelper" };
        sb_rule_begin(g, "allow file-write*", SB_UNTAGGED);
        for (size_t i = 0; i < ELEMENTSOF(literals); i++)
                sb_filter_add(g, SB_ALLOW_LITERAL, literals[i]);
        sb_filter_add(g, SB_ALLOW_SUBPATH, "/dev/fd");
        sb_rule_end(g);
}

/* The command's own pseudo-terminals, not the user's. Under allow-default every terminal is
 * readable and, with a descriptor, open to ioctls: reading /dev/ttys003 takes the keystrokes
 * typed into the user's other terminal (passwords), writing it forges what they see. So the
 * slaves are refused, except those the kernel marks with the com.apple.sandbox.pty extension
 * when this sandbox opens a new pty through /dev/ptmx (openpty, script, expect, a test harness
 * driving a REPL). A terminal the command inherited stays usable through its descriptor; the
 * command has no controlling terminal (setsid), so TIOCSTI cannot push input into it. */
static void section_ttys(sb_gen *g) {
        sb_comment(g, "terminals: the pseudo-terminals the command opens itself (/dev/ptmx, and");
        sb_comment(g, "the slaves the kernel gives it the pty extension for), no other terminal");
        sb_rule_begin(g, "deny file-read* file-write*", SBR_TTY);
        g->n_filters++;
        sbuf_add(&g->out, "\n  (regex \"^/dev/ttys[0-9]+$\"))\n");
        sbuf_add(&g->out, "(allow file-read* file-write* (literal \"/dev/ptmx\"))\n");
        sbuf_add(&g->out, "(allow file-read* file-write*\n  (require-all\n"
                          "    (regex \"^/dev/ttys[0-9]+$\")\n"
                          "    (extension \"com.apple.sandbox.pty\")))\n");
}

static size_t path_depth(const char *path) {
        size_t d = 0;
        for (const char *c = path; *c; c++)
                if (*c == '/' && c[1])
                        d++;
        return d;
}

/* Parents before children, and at one path a read-only bind after a writable one, so the
 * last-match rule gives what the Linux mount order gives: the deepest bind decides, and at equal
 * depth read-only wins. */
static int compare_binds(const void *a, const void *b) {
        const plan_bind *x = *(const plan_bind *const *) a, *y = *(const plan_bind *const *) b;
        size_t dx = path_depth(x->resolved), dy = path_depth(y->resolved);
        if (dx != dy)
                return dx < dy ? -1 : 1;
        int c = strcmp(x->resolved, y->resolved);
        if (c != 0)
                return c;
        return (int) y->writable - (int) x->writable;
}

static int bind_forms(sb_gen *g, const plan_bind *b, strv *out) {
        int r = sb_push_forms(g, out, b->literal, false);
        if (r >= 0)
                r = sb_push_forms(g, out, b->resolved, false);
        sb_sort(out);
        return r;
}

static int binds_in_order(sb_gen *g) {
        const plan_paths *k = &g->p->paths;
        if (k->n_binds == 0)
                return 0;
        _cleanup_free_ const plan_bind **order = calloc(k->n_binds, sizeof(*order));
        if (!order)
                return -ENOMEM;
        for (size_t i = 0; i < k->n_binds; i++)
                order[i] = &k->binds[i];
        qsort(order, k->n_binds, sizeof(*order), compare_binds);
        int r = 0;
        for (size_t i = 0; r >= 0 && i < k->n_binds; i++) {
                strv forms = { 0 };
                const plan_bind *b = order[i];
                r = bind_forms(g, b, &forms);
                if (r >= 0 && b->writable)
                        sb_add_disk_case(g, &forms);
                sb_comment(g, b->git_common ? "a linked worktree's shared .git (commits work)"
                              : b->writable ? "writable root"
                                            : "read-only bind");
                if (r >= 0)
                        sb_rule(g, b->writable ? "allow file-write*" : "deny file-write*",
                                SBR_READ_ONLY, b->writable ? SB_ALLOW_SUBPATH : SB_DENY_SUBPATH,
                                &forms);
                strv_done(&forms);
        }
        return r;
}

/* The write-deny set: the plan's protected paths and, as on Linux (hidden, never created), the
 * secrets. */
static int deny_set(sb_gen *g, strv *out) {
        int r = collect_forms(g, &g->p->paths.protect, true, out);
        if (r >= 0)
                r = collect_forms(g, &g->p->paths.secrets, true, out);
        sb_sort(out);
        return r;
}

/* The spellings of the worktrees' shared .git dirs strictly beneath the literal path `rule`. */
static int commons_beneath(sb_gen *g, const char *rule, strv *out) {
        if (sb_is_glob(rule))
                return 0;
        for (size_t i = 0; i < g->p->paths.n_binds; i++) {
                const plan_bind *b = &g->p->paths.binds[i];
                strv forms = { 0 };
                int r = b->git_common ? bind_forms(g, b, &forms) : 0;
                for (size_t f = 0; r >= 0 && f < forms.n; f++)
                        if (path_startswith(forms.v[f], rule) && strcmp(forms.v[f], rule) != 0)
                                r = strv_push_unique(out, forms.v[f]);
                strv_done(&forms);
                if (r < 0)
                        return r;
        }
        sb_sort(out);
        return 0;
}

/* What the write-deny set is denied. file-link: a hard link is the same file under a name no
 * rule names (`ln ws/.git/hooks/pre-commit ws/x; echo evil > ws/x` would arm the hook). On
 * Linux a new link of a protected file is refused too (SECURITY.md, "Protected hard links"). */
#define DENY_PROTECTED "deny file-write* file-link"

/* A protected path above a worktree's shared .git (protectedPaths holds the original checkout):
 * denied except beneath that .git, or no commit could be made. On Linux the mount order does
 * this (the shared .git is bound writable on top); the internals git executes or obeys inside
 * it (hooks, config, ...) are in the deny set on their own. */
static void deny_except_commons(sb_gen *g, const char *rule, const strv *commons) {
        sb_rule_begin(g, DENY_PROTECTED, SBR_PROTECTED);
        sb_filter_open(g, "require-all");
        sb_filter_add(g, SB_DENY_GLOB_SUBPATH, rule);
        for (size_t i = 0; i < commons->n; i++) {
                sbuf_add(&g->out, "\n    (require-not (subpath ");
                sbpl_quote(&g->out, commons->v[i]);
                sbuf_add(&g->out, "))");
        }
        sb_filter_close(g);
        sb_rule_end(g);
}

static int deny_protected(sb_gen *g, const strv *denied) {
        strv plain = { 0 };
        int r = 0;
        for (size_t i = 0; r >= 0 && i < denied->n; i++) {
                strv commons = { 0 };
                r = commons_beneath(g, denied->v[i], &commons);
                if (r >= 0 && commons.n > 0)
                        deny_except_commons(g, denied->v[i], &commons);
                else if (r >= 0)
                        r = strv_push(&plain, denied->v[i]);
                strv_done(&commons);
        }
        if (r >= 0)
                sb_rule(g, DENY_PROTECTED, SBR_PROTECTED, SB_DENY_GLOB_SUBPATH, &plain);
        strv_done(&plain);
        return r;
}

/* The regex bodies (any case) of fixed names, for the nested-repository rule. */
static int bodies(const char *const *names, char **out, size_t n) {
        for (size_t i = 0; i < n; i++) {
                int r = sbpl_glob_regex_body(names[i], &out[i]);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Beneath `root` (a glob-quoted root form), in any case: ROOT, any directories, .git, then
 *   - any directories, hooks, one of the hook names: a hook of a repository at any depth, its
 *     submodules' git dirs (.git/modules/NAME/hooks) included;
 *   - config, or config.worktree, directly or in a submodule's or worktree's admin dir
 *     (.git/modules/NAME/config, .git/worktrees/NAME/config.worktree): core.hooksPath,
 *     core.fsmonitor, a filter or diff driver there runs a program at the user's next git
 *     command in that repository. Not any directory: a branch named "config" is a file
 *     refs/heads/config. */
static int nested_git_regex(const char *root, sbuf *re) {
        static const char *const names[] = { ".git", "hooks", "modules", "worktrees", "config",
                                             "config.worktree" };
        char *b[ELEMENTSOF(names)] = { 0 };
        _cleanup_free_ char *body = NULL;
        int r = sbpl_glob_regex_body(root, &body); /* -EINVAL, -EILSEQ: the path's fault */
        if (r >= 0)
                r = bodies(names, b, ELEMENTSOF(names));
        if (r >= 0)
                sbuf_addf(re, "^%s(/.*)?/%s/((.*/)?%s/(", body, b[0], b[1]);
        for (size_t i = 0; r >= 0 && plan_git_hook_names[i]; i++) {
                _cleanup_free_ char *name = NULL;
                if ((r = sbpl_glob_regex_body(plan_git_hook_names[i], &name)) >= 0)
                        sbuf_addf(re, "%s%s", i ? "|" : "", name);
        }
        if (r >= 0)
                sbuf_addf(re, ")|((%s|%s)/.*/)?(%s|%s))$", b[2], b[3], b[4], b[5]);
        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                free(b[i]);
        return r < 0 ? r : re->err;
}

/* A repository below a writable root other than its top one (a clone, a submodule, `git init
 * sub`, one the user had): a hook placed in it, or a config key that runs a program, runs on the
 * user's next git command there, outside the sandbox. On Linux the supervisor refuses every hook
 * name in the hooks directory of any git-shaped directory and vets the config a run leaves
 * (docs/design/git-repos.md); a profile cannot read content, so here the hook names and the
 * config files beneath any .git at any depth are refused. The price: `git init`, `git clone`
 * and `git submodule update` of a repository inside a writable root fail on macOS (they write
 * that config); `*.sample` hooks stay writable. */
static int deny_nested_git(sb_gen *g) {
        strv roots = { 0 };
        int r = 0;
        for (size_t i = 0; r >= 0 && i < g->p->paths.n_binds; i++)
                if (g->p->paths.binds[i].writable)
                        r = bind_forms(g, &g->p->paths.binds[i], &roots);
        sb_sort(&roots);
        if (r >= 0 && roots.n > 0) {
                sb_comment(g, "nor a hook or the config of a repository at any depth beneath a");
                sb_comment(g, "writable root (git init and git clone there fail: they write it)");
                sb_rule_begin(g, "deny file-write* file-link", SBR_NESTED_GIT);
        }
        for (size_t i = 0; r >= 0 && i < roots.n; i++) {
                _cleanup_free_ char *quoted = sbpl_glob_quote(roots.v[i]);
                sbuf re = { 0 };
                r = quoted ? nested_git_regex(quoted, &re) : -ENOMEM;
                if (r >= 0) {
                        g->n_filters++;
                        sbuf_add(&g->out, "\n  (regex ");
                        sbpl_quote(&g->out, re.s);
                        sbuf_add(&g->out, ")");
                } else if (!g->bad)
                        g->bad = strdup(roots.v[i]);
                sbuf_done(&re);
        }
        if (r >= 0 && roots.n > 0)
                sb_rule_end(g);
        strv_done(&roots);
        return r;
}

static int section_writes(sb_gen *g, const strv *denied) {
        sb_comment(g, "");
        sb_comment(g, "writes: nowhere...");
        sb_rule_everywhere(g, "deny file-write*", SBR_WRITE);
        sb_comment(g, "...but to the device files a shell writes to,");
        allow_devices(g);
        section_ttys(g);
        int r = 0;
        if (g->params.tmpdir) {
                strv forms = { 0 };
                sb_comment(g, "the run's private temporary directory (TMPDIR),");
                r = sb_push_forms(g, &forms, g->params.tmpdir, false);
                sb_add_disk_case(g, &forms);
                if (r >= 0)
                        sb_rule(g, "allow file-write*", SB_UNTAGGED, SB_ALLOW_SUBPATH, &forms);
                strv_done(&forms);
        }
        sb_comment(g, "and the writable roots, with the read-only binds inside them, parents first;");
        if (r >= 0)
                r = binds_in_order(g);
        sb_comment(g, "never the write-deny set: mandatory names, protectedPaths, denyWrite, git's");
        sb_comment(g, "internals and configured paths, and the secrets");
        if (r >= 0)
                r = deny_protected(g, denied);
        return r < 0 ? r : deny_nested_git(g);
}

/* ---- renames -------------------------------------------------------------------------------- */

/* Every proper ancestor of `path` but "/", as written: a glob's ancestors may be globs themselves
 * (the worktree admin dirs matched by "worktrees/<any>" above "worktrees/<any>/gitdir"). */
static int push_ancestors(const char *path, strv *out) {
        _cleanup_free_ char *p = strdup(path);
        if (!p)
                return -ENOMEM;
        for (char *slash = strrchr(p, '/'); slash && slash != p; slash = strrchr(p, '/')) {
                *slash = '\0';
                int r = strv_push_unique(out, p);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* The ancestors of every read-only bind, in glob syntax (a bind is a name: its '[' or '*' is
 * quoted). On Linux the bind is a mount and moves with a rename of any directory above it,
 * still read-only; here the deny matches a path string, so `mv ws/a ws/x` would carry
 * ws/a/b/vendor out from under its rule, `ws/x/b/vendor` would be written and renamed back.
 * The bind itself is covered by its own file-write* deny. */
static int read_only_ancestors(sb_gen *g, strv *anc) {
        int r = 0;
        for (size_t i = 0; r >= 0 && i < g->p->paths.n_binds; i++) {
                const plan_bind *b = &g->p->paths.binds[i];
                strv forms = { 0 };
                r = b->writable ? 0 : bind_forms(g, b, &forms);
                for (size_t f = 0; r >= 0 && f < forms.n; f++) {
                        _cleanup_free_ char *quoted = sbpl_glob_quote(forms.v[f]);
                        r = quoted ? push_ancestors(quoted, anc) : -ENOMEM;
                }
                strv_done(&forms);
        }
        return r;
}

/* An ancestor that is itself a glob (".git/worktrees/<any>" above its gitdir, "ws/<any>" above a
 * denyWrite "ws/<any>/config.json") matches every entry of its parent: unscoped it would freeze
 * the whole workspace top (no file created, deleted or saved by rename there). Only a directory
 * or a symlink at that place leads to the protected path, so the rule holds for those two
 * types; for file-write-create the type is that of what is created or renamed into place. */
static void deny_glob_ancestor(sb_gen *g, const char *glob) {
        static const char *const types[] = { "DIRECTORY", "SYMLINK" };
        for (size_t t = 0; t < ELEMENTSOF(types); t++) {
                sb_filter_open(g, "require-all");
                sb_filter_add(g, SB_DENY_GLOB_EXACT, glob);
                sbuf_addf(&g->out, "\n    (vnode-type %s)", types[t]);
                sb_filter_close(g);
        }
}

/* A rename moves a whole tree: renaming an ancestor of a denied path away and a prepared
 * directory into its place would swap the protected file without ever writing it (docs/policy.md).
 * The denied paths themselves are covered: file-write* includes file-write-unlink and
 * file-write-create. For their ancestors both are denied as well; Seatbelt cannot tell a
 * rename's target from a mkdir, so inside a writable root a missing directory that leads to a
 * protected path (.claude, .config/git) cannot be created during the run. */
static int section_renames(sb_gen *g, const strv *denied) {
        strv anc = { 0 };
        int r = 0;
        for (size_t i = 0; r >= 0 && i < denied->n; i++)
                r = push_ancestors(denied->v[i], &anc);
        if (r >= 0)
                r = read_only_ancestors(g, &anc);
        sb_sort(&anc);
        sb_comment(g, "");
        sb_comment(g, "renames: the ancestors of every denied path and read-only bind may not be");
        sb_comment(g, "removed, renamed or created (a directory renamed into place would bring a");
        sb_comment(g, "protected path along); a wildcard ancestor only as a directory or symlink");
        if (r >= 0 && anc.n > 0) {
                sb_rule_begin(g, "deny file-write-unlink file-write-create", SBR_RENAME);
                for (size_t i = 0; i < anc.n; i++)
                        if (sb_is_glob(anc.v[i]))
                                deny_glob_ancestor(g, anc.v[i]);
                        else
                                sb_filter_add(g, SB_DENY_GLOB_EXACT, anc.v[i]);
                sb_rule_end(g);
        }
        strv_done(&anc);
        return r;
}

/* ---- creation-time names -------------------------------------------------------------------- */

static int section_names(sb_gen *g) {
        strv names = { 0 };
        int r = strv_copy(&names, &g->p->names.deny_names);
        sb_sort(&names);
        sb_comment(g, "");
        sb_comment(g, "creation-time names (denyCreateNames): no file, directory, link or rename");
        sb_comment(g, "target with such a name comes into existence; an existing one stays usable");
        if (r >= 0 && names.n == 0)
                sb_comment(g, "(none)");
        if (r >= 0)
                sb_rule(g, "deny file-write-create", SBR_CREATE_NAME, SB_DENY_NAME, &names);
        strv_done(&names);
        return r;
}

int sb_section_files(sb_gen *g) {
        strv denied = { 0 };
        int r = section_reads(g);
        if (r >= 0)
                r = deny_set(g, &denied);
        if (r >= 0)
                r = section_writes(g, &denied);
        if (r >= 0)
                r = section_renames(g, &denied);
        if (r >= 0)
                r = section_names(g);
        strv_done(&denied);
        return r;
}

/* ---- exec ----------------------------------------------------------------------------------- */

/* Each of these exists to act outside the caller's sandbox, and the allow-default profile leaves
 * the services they talk to reachable; denying the programs is defense in depth (a program the
 * command builds itself cannot run: writable places are not executable). */
const char *const seatbelt_denied_programs[] = {
        "/usr/bin/osascript",   /* Apple Events: `tell application "Terminal" to do script` */
        "/usr/bin/open",        /* LaunchServices starts apps and .command files unsandboxed */
        "/bin/launchctl",       /* submits launchd jobs, which run outside the sandbox */
        "/usr/bin/security",    /* reads keychain items (find-generic-password -w) */
        "/usr/bin/automator",   /* runs workflows: shell and AppleScript actions, outside */
        "/usr/bin/shortcuts",   /* runs shortcuts, which may run shell scripts, outside */
        "/usr/bin/crontab",     /* schedules commands cron runs later, unsandboxed */
        "/usr/bin/at",          /* same, through atrun */
        "/usr/bin/batch",       /* same */
        "/usr/bin/pbpaste",     /* reads the clipboard, where users copy passwords and tokens */
        "/usr/bin/pbcopy",      /* plants a command the user will paste into a terminal */
        NULL,
};

static int exec_places(sb_gen *g, strv *out) {
        int r = 0;
        for (size_t i = 0; r >= 0 && i < g->p->paths.n_binds; i++)
                if (g->p->paths.binds[i].writable)
                        r = bind_forms(g, &g->p->paths.binds[i], out);
        if (r >= 0 && g->params.tmpdir)
                r = sb_push_forms(g, out, g->params.tmpdir, false);
        sb_sort(out);
        return r;
}

static int program_forms(sb_gen *g, strv *out) {
        for (size_t i = 0; seatbelt_denied_programs[i]; i++) {
                int r = sb_push_forms(g, out, seatbelt_denied_programs[i], false);
                if (r < 0)
                        return r;
        }
        sb_sort(out);
        return 0;
}

/* docs/design/seatbelt.md: nothing the command wrote can be executed (a dropped Mach-O talks to any
 * Mach service directly), except below execGrantRoots; the denied programs nowhere. Interpreters
 * reading a script from a writable place still run: they are executed from elsewhere. */
/* What reaches outside the sandbox without running a program: the denied programs above are
 * front ends to these services, and any program (python with PyObjC, swift, a compiled tool in
 * an execGrantRoot) can call them itself. Apple events script other apps (`tell application
 * "Terminal" to do script`), LaunchServices opens apps and documents unsandboxed, cfprefsd
 * writes preferences the sandbox's file rules never see (`defaults write` of another app's
 * domain: a login item, a Terminal startup command), launchd runs submitted jobs outside,
 * and the pasteboard holds what the user copied. */
static void section_services(sb_gen *g) {
        static const char *const ops[] = { "deny appleevent-send", "deny lsopen",
                                           "deny user-preference-write", "deny job-creation" };
        sb_comment(g, "");
        sb_comment(g, "services that act outside the sandbox without a program: Apple events,");
        sb_comment(g, "LaunchServices opens, preference writes (cfprefsd), launchd jobs, the");
        sb_comment(g, "pasteboard");
        for (size_t i = 0; i < ELEMENTSOF(ops); i++)
                sb_rule_everywhere(g, ops[i], SBR_SERVICE);
        sb_rule_begin(g, "deny mach-lookup", SBR_SERVICE);
        g->n_filters++;
        sbuf_add(&g->out, " (global-name \"com.apple.pasteboard.1\"))\n");
}

int sb_section_exec(sb_gen *g) {
        strv places = { 0 }, grants = { 0 }, programs = { 0 };
        int r = exec_places(g, &places);
        if (r >= 0)
                r = collect_forms(g, &g->policy->exec_grant_roots, false, &grants);
        if (r >= 0)
                sb_add_disk_case(g, &grants);
        if (r >= 0)
                r = program_forms(g, &programs);
        sb_comment(g, "");
        sb_comment(g, "exec: nothing from a writable place, except beneath execGrantRoots;");
        if (r >= 0)
                sb_rule(g, "deny process-exec*", SBR_EXEC, SB_DENY_SUBPATH, &places);
        if (r >= 0)
                sb_rule(g, "allow process-exec*", SB_UNTAGGED, SB_ALLOW_SUBPATH, &grants);
        sb_comment(g, "never the programs whose purpose is to act outside the sandbox");
        if (r >= 0)
                sb_rule(g, "deny process-exec*", SBR_PROGRAM, SB_DENY_EXACT, &programs);
        if (r >= 0)
                section_services(g);
        strv_done(&places);
        strv_done(&grants);
        strv_done(&programs);
        return r;
}
