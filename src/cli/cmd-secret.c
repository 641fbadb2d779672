/* SPDX-License-Identifier: Apache-2.0 */
/* cordon secret set|list|rm: the user's side of cordon's secret store (src/secrets/). The value
 * comes from standard input only (args-commands.c refuses it as an argument), read without echo
 * from a terminal, and is wiped from memory once stored. */
#include "cli/cmd-secret.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "cli/cli-policy.h"
#include "cli/commands.h"
#include "secrets/secret-store.h"

#define EXIT_FATAL 125

/* "the Secret Service (why)" or "the file store ~/.config/cordon/secrets/store (why)": which
 * store a command used and why, said by every command (a user must never wonder whether a
 * secret went to the keyring or to a file). 0, or -errno with err set when no store is usable. */
static int store_words(char *buf, size_t size, cordon_error *err) {
        secret_backend b;
        char why[256];
        int r = secret_store_which(&b, why, sizeof(why));
        if (r < 0)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, -r,
                                        "secrets: %s; cordon uses no secret store until it can "
                                        "(unset DBUS_SESSION_BUS_ADDRESS to use the file store "
                                        "instead)",
                                        why);
        if (b == SECRET_BACKEND_SERVICE)
                (void) snprintf(buf, size, "the Secret Service (%s)", why);
        else
                (void) snprintf(buf, size, "the file store ~/" SECRET_FILE_DIR " (%s)", why);
        return 0;
}

/* A failure before any store was asked: no home directory, or no memory. */
static int fatal_early(const char *home) {
        cordon_error err = { .code = CORDON_LAUNCH_FAILED, .sys_errno = home ? ENOMEM : ENOENT };
        (void) snprintf(err.message, sizeof(err.message), "secrets: %s",
                        home ? "out of memory"
                             : "cannot determine the home directory; set HOME to an absolute path");
        return cli_fatal(&err);
}

/* Reads standard input into buf (of size) until EOF, or until a newline from a terminal; *n
 * gets the length. -EFBIG when it does not fit. */
static int read_input(char *buf, size_t size, bool tty, size_t *n) {
        *n = 0;
        for (;;) {
                if (*n == size)
                        return -EFBIG;
                ssize_t got = read(STDIN_FILENO, buf + *n, size - *n);
                if (got < 0 && errno == EINTR)
                        continue;
                if (got < 0)
                        return -errno;
                if (got == 0)
                        return 0;
                *n += (size_t) got;
                if (tty && buf[*n - 1] == '\n')
                        return 0;
        }
}

/* From a terminal: a prompt on stderr and no echo, restored before returning (a value typed at
 * a prompt must not stay on the screen or in a terminal's scrollback). */
static int read_value(const char *name, char *buf, size_t size, size_t *n) {
        struct termios old, quiet;
        bool tty = isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &old) == 0;
        if (tty) {
                /* Echo off first, then the prompt: input typed once the prompt shows is never
                 * flushed (TCSAFLUSH drops only what came before it). */
                quiet = old;
                quiet.c_lflag &= ~(tcflag_t) ECHO;
                quiet.c_lflag |= ECHONL;
                if (tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet) < 0)
                        return -errno;
                fprintf(stderr, "Value of secret '%s' (not echoed): ", name);
                fflush(stderr);
        }
        int r = read_input(buf, size, tty, n);
        if (tty)
                (void) tcsetattr(STDIN_FILENO, TCSAFLUSH, &old);
        if (r >= 0 && *n > 0 && buf[*n - 1] == '\n')
                (*n)--; /* one trailing newline: echo VALUE | ... and the terminal's Enter */
        return r;
}

int cli_cmd_secret_set(const cli_args *a) {
        cordon_error err = { 0 };
        char where[512];
        char *home = cli_home_dir();
        /* One byte more than a value and its newline: a longer input is refused, not cut. */
        size_t size = SECRET_VALUE_MAX + 2, n = 0;
        char *buf = malloc(size);
        int r = !home || !buf ? -ENOMEM : store_words(where, sizeof(where), &err);
        if (r >= 0 && (r = read_value(a->secret_name, buf, size, &n)) >= 0 &&
            n > SECRET_VALUE_MAX)
                r = -EFBIG; /* no newline at its end: one byte too many */
        if (r < 0 && !err.message[0] && r != -ENOMEM)
                r = r == -EFBIG ? cordon_set_error(&err, CORDON_USAGE, EFBIG,
                                                   "secrets: the value is longer than %d bytes",
                                                   SECRET_VALUE_MAX)
                                : cordon_set_error(&err, CORDON_LAUNCH_FAILED, -r,
                                                   "secrets: cannot read the value from standard "
                                                   "input: %s", strerror(-r));
        if (r >= 0 && n == 0)
                r = cordon_set_error(&err, CORDON_USAGE, EINVAL,
                                     "secrets: the value is empty; give it on standard input "
                                     "(cordon secret set %s < FILE)", a->secret_name);
        if (r >= 0)
                r = secret_store_set(home, a->secret_name, buf, n, &err);
        secret_value_free(buf, size);
        bool no_home = !home;
        free(home);
        if (r == -ENOMEM && !err.message[0])
                return fatal_early(no_home ? NULL : "");
        if (r < 0)
                return cli_fatal(&err);
        printf("Stored secret '%s' in %s.\n", a->secret_name, where);
        return fflush(stdout) == 0 ? 0 : EXIT_FATAL;
}

int cli_cmd_secret_rm(const cli_args *a) {
        cordon_error err = { 0 };
        char where[512];
        char *home = cli_home_dir();
        int r = home ? store_words(where, sizeof(where), &err) : -ENOMEM;
        if (r >= 0)
                r = secret_store_remove(home, a->secret_name, &err);
        bool no_home = !home;
        free(home);
        if (r == -ENOMEM && !err.message[0])
                return fatal_early(no_home ? NULL : "");
        if (r < 0)
                return cli_fatal(&err);
        printf("Removed secret '%s' from %s.\n", a->secret_name, where);
        return fflush(stdout) == 0 ? 0 : EXIT_FATAL;
}

/* With the Secret Service in use, the names the file store still holds: they are not read (one
 * store is in use, never both: docs/design/secrets.md "Which store"), and the user should know. */
static void unused_file_names(const char *home, secret_backend b, strv *ret) {
        cordon_error ignored = { 0 };
        if (b == SECRET_BACKEND_SERVICE)
                (void) secret_file_list(home, ret, &ignored); /* best effort: a note only */
}

static int print_json(const char *where, secret_backend b, const strv *names, const strv *unused) {
        json_t *o = json_object(), *list = json_array(), *extra = json_array();
        for (size_t i = 0; list && i < names->n; i++)
                (void) json_array_append_new(list, json_string(names->v[i]));
        for (size_t i = 0; extra && i < unused->n; i++)
                (void) json_array_append_new(extra, json_string(unused->v[i]));
        (void) json_object_set_new(o, "store", json_string(secret_backend_to_string(b)));
        (void) json_object_set_new(o, "where", json_string(where));
        (void) json_object_set_new(o, "names", list);
        (void) json_object_set_new(o, "unusedFileNames", extra);
        char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
        json_decref(o);
        if (!text)
                return fatal_early("");
        puts(text);
        free(text);
        return fflush(stdout) == 0 ? 0 : EXIT_FATAL;
}

int cli_cmd_secret_list(const cli_args *a) {
        cordon_error err = { 0 };
        char where[512];
        char *home = cli_home_dir();
        strv names = { 0 }, unused = { 0 };
        secret_backend b = SECRET_BACKEND_FILE;
        int r = home ? store_words(where, sizeof(where), &err) : -ENOMEM;
        if (r >= 0 && (r = secret_store_list(home, &names, &b, &err)) >= 0)
                unused_file_names(home, b, &unused);
        bool no_home = !home;
        free(home);
        int status = 0;
        if (r == -ENOMEM && !err.message[0])
                status = fatal_early(no_home ? NULL : "");
        else if (r < 0)
                status = cli_fatal(&err);
        else if (a->json)
                status = print_json(where, b, &names, &unused);
        else {
                fprintf(stderr, "cordon: %zu secret%s in %s\n", names.n, names.n == 1 ? "" : "s",
                        where);
                for (size_t i = 0; i < unused.n; i++)
                        fprintf(stderr, "cordon: note: '%s' in the file store is not used while "
                                "the Secret Service is on the session bus\n", unused.v[i]);
                for (size_t i = 0; i < names.n; i++)
                        puts(names.v[i]);
                status = fflush(stdout) == 0 ? 0 : EXIT_FATAL;
        }
        strv_done(&names);
        strv_done(&unused);
        return status;
}
