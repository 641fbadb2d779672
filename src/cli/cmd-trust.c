/* SPDX-License-Identifier: Apache-2.0 */
/* cordon settings trust|untrust [PATH], cordon settings trusted: the explicit step that lets a
 * project settings file loosen the sandbox (docs/settings.md, "Trusting a project file"). The
 * step records the SHA-256 of exactly the bytes it showed the user; it cannot be taken from
 * inside a sandbox, where ~/.config/cordon is read-only. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cmd-trust.h"
#include "cli/cli-policy.h"
#include "cli/commands.h"

#define SUFFIX "/.cordon/settings.json"
#define EXIT_FATAL 125

static void free_str(char **p) {
        free(*p);
}
#define _cleanup_str_ __attribute__((cleanup(free_str)))

__attribute__((format(printf, 4, 5))) static int fail(cordon_error *err, cordon_code code,
                                                      int errnum, const char *fmt, ...) {
        va_list ap;
        err->code = code;
        err->sys_errno = errnum;
        va_start(ap, fmt);
        (void) vsnprintf(err->message, sizeof(err->message), fmt, ap);
        va_end(ap);
        return -(errnum ? errnum : EINVAL);
}

static int errno_error(cordon_error *err, int r) {
        return r == -ENOENT ? fail(err, CORDON_LAUNCH_FAILED, ENOENT,
                                   "cannot determine the home directory; set HOME to an "
                                   "absolute path")
                            : fail(err, CORDON_LAUNCH_FAILED, -r, "%s", strerror(-r));
}

/* The directory whose project file PATH names: PATH itself when it is a directory, the root of
 * <root>/.cordon/settings.json, resolved (the runs see the physical working directory). */
static int target_dir(const char *target, const char *cwd, char **ret, cordon_error *err) {
        _cleanup_str_ char *dir = strdup(target ? target : cwd);
        struct stat st;
        if (!dir)
                return errno_error(err, -ENOMEM);
        size_t n = strlen(dir), k = strlen(SUFFIX);
        if (stat(dir, &st) == 0 && !S_ISDIR(st.st_mode)) {
                if (n <= k || strcmp(dir + n - k, SUFFIX) != 0)
                        return fail(err, CORDON_USAGE, EINVAL,
                                                "'%s' is not a project settings file (DIR%s) "
                                                "nor a directory; give the project directory",
                                                target, SUFFIX);
                dir[n - k] = '\0';
        }
        *ret = realpath(dir, NULL);
        if (!*ret)
                return fail(err, CORDON_USAGE, errno, "'%s': %s", dir,
                                        strerror(errno));
        return 0;
}

/* The settings as a run in `dir` resolves them, without the trust store: every loosening item
 * of the project file is then listed as ignored. */
static int resolve_in(const char *dir, const char *home, cordon_settings **ret,
                      cordon_error *err) {
        const char *managed = getenv("CORDON_MANAGED_SETTINGS");
        cordon_settings_options o = { .cwd = dir, .home = home,
                                      .managed_path = managed && managed[0] ? managed : NULL,
                                      .flags = CORDON_SETTINGS_NO_TRUST };
        return cordon_settings_resolve(&o, ret, err);
}

/* "  sandbox.mode (line 1, column 14): turns the sandbox off" for each loosening item. */
static size_t print_loosening(const cordon_settings *s, const char *file) {
        size_t n = 0;
        for (size_t i = 0; i < cordon_settings_n_ignored(s); i++) {
                const cordon_settings_note *e = cordon_settings_ignored(s, i);
                if (strcmp(e->layer, "project") != 0 || strcmp(e->file, file) != 0)
                        continue;
                const char *cut = strstr(e->why, "; ignored because");
                int len = cut ? (int) (cut - e->why) : (int) strlen(e->why);
                printf("  %s%s%s%s (line %u, column %u): %.*s\n", CLI_QUOTE(e->key),
                       e->value ? " '" : "", e->value ? CLI_QUOTE(e->value) : "",
                       e->value ? "'" : "", e->line, e->column, len, e->why);
                n++;
        }
        return n;
}

int cli_cmd_settings_trust(const cli_args *a, const char *cwd) {
        cordon_error err = { 0 };
        _cleanup_str_ char *home = cli_home_dir(), *dir = NULL;
        cordon_settings *s = NULL;
        int r = home ? target_dir(a->trust_target, cwd, &dir, &err) : errno_error(&err, -ENOENT);
        if (r >= 0)
                r = resolve_in(dir, home, &s, &err);
        const char *file = r >= 0 ? cordon_settings_project_file(s) : NULL;
        if (r >= 0 && !file)
                r = fail(&err, CORDON_USAGE, ENOENT,
                                     "no project settings file for '%s' (.cordon/settings.json "
                                     "there or in a parent directory up to $HOME)", dir);
        if (r < 0) {
                cordon_settings_free(s);
                return cli_fatal(&err);
        }
        printf("Project settings %s\n", CLI_QUOTE(file));
        if (print_loosening(s, file) == 0)
                printf("  (it loosens nothing: trusting it changes nothing)\n");
        r = cordon_settings_trust_project(s, NULL, &err);
        cordon_settings_free(s);
        if (r < 0)
                return cli_fatal(&err);
        printf("Trusted this exact content. Any change to the file makes it untrusted again; "
               "'cordon settings untrust' removes the record.\n");
        return fflush(stdout) == 0 ? 0 : EXIT_FATAL;
}

/* The file to forget: PATH when it names a file (or nothing any more), else the project file a
 * run in PATH (default: cwd) would read, else <dir>/.cordon/settings.json. */
static int untrust_file(const cli_args *a, const char *cwd, const char *home, char **ret,
                        cordon_error *err) {
        struct stat st;
        if (a->trust_target && (stat(a->trust_target, &st) < 0 || !S_ISDIR(st.st_mode))) {
                char *real = realpath(a->trust_target, NULL);
                *ret = real ? real : strdup(a->trust_target);
                return *ret ? 0 : errno_error(err, -ENOMEM);
        }
        _cleanup_str_ char *dir = NULL;
        cordon_settings *s = NULL;
        int r = target_dir(a->trust_target, cwd, &dir, err);
        if (r >= 0)
                r = resolve_in(dir, home, &s, err);
        const char *file = r >= 0 ? cordon_settings_project_file(s) : NULL;
        if (r >= 0 && asprintf(ret, "%s%s", file ? file : dir, file ? "" : SUFFIX) < 0)
                r = errno_error(err, -ENOMEM);
        cordon_settings_free(s);
        return r;
}

int cli_cmd_settings_untrust(const cli_args *a, const char *cwd) {
        cordon_error err = { 0 };
        _cleanup_str_ char *home = cli_home_dir(), *file = NULL;
        int r = home ? untrust_file(a, cwd, home, &file, &err) : errno_error(&err, -ENOENT);
        if (r >= 0)
                r = cordon_settings_untrust_project(home, NULL, file, &err);
        if (r < 0)
                return cli_fatal(&err);
        printf(r > 0 ? "Untrusted %s: its loosening settings are ignored again.\n"
                     : "%s was not trusted: nothing to do.\n",
               CLI_QUOTE(file));
        return fflush(stdout) == 0 ? 0 : EXIT_FATAL;
}

int cli_cmd_settings_trusted(const cli_args *a) {
        cordon_error err = { 0 };
        _cleanup_str_ char *home = cli_home_dir(), *text = NULL;
        int r = home ? cordon_settings_trusted_list(home, NULL, a->json, &text, &err)
                     : errno_error(&err, -ENOENT);
        if (r < 0)
                return cli_fatal(&err);
        fputs(text, stdout);
        if (a->json)
                fputc('\n', stdout);
        return fflush(stdout) == 0 ? 0 : EXIT_FATAL;
}
