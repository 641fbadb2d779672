/* SPDX-License-Identifier: Apache-2.0 */
/* The --analytics file of `cordon run` (analytics-sink.h). */
#include "cli/analytics-sink.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli-policy.h"
#include "cli/commands.h"
#include "run/analytics.h"
#include "util/util.h"

struct cli_analytics {
        int fd;
        int err; /* the first write error (errno), then nothing more is written */
        analytics a;
};

static void put(cli_analytics *c, const char *line, int len) {
        for (size_t off = 0; len > 0 && c->err == 0 && off < (size_t) len;) {
                ssize_t n = cli_write_nosigpipe(c->fd, line + off, (size_t) len - off);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        c->err = n < 0 ? errno : EIO;
                else
                        off += (size_t) n;
        }
}

cli_analytics *cli_analytics_open(const char *path, int *status) {
        if (!path)
                return NULL;
        cli_analytics *c = calloc(1, sizeof(*c));
        char *home = cli_home_dir();
        cordon_error err = { 0 };
        int r = c && home ? analytics_key_load(home, c->a.key, &err) : -ENOMEM;
        free(home);
        if (r < 0) {
                if (err.code == CORDON_OK)
                        (void) cordon_set_error(&err, CORDON_LAUNCH_FAILED, -r,
                                                "--analytics: out of memory");
                *status = cli_fatal(&err);
                free(c);
                return NULL;
        }
        /* 0600: the records are about the user's runs. Close-on-exec: the command cannot forge
         * records into it. */
        c->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0600);
        if (c->fd < 0) {
                (void) cordon_set_error(&err, CORDON_POLICY_INVALID, errno,
                                        "--analytics: cannot create '%s': %s; give a writable "
                                        "file path", path, strerror(errno));
                *status = cli_fatal(&err);
                explicit_bzero(c, sizeof(*c));
                free(c);
                return NULL;
        }
        return c;
}

void cli_analytics_violation(void *userdata, const cordon_violation *v) {
        cli_analytics *c = userdata;
        char line[ANALYTICS_LINE_MAX];
        int n = analytics_violation_line(&c->a, v, line, sizeof(line));
        if (n > 0)
                put(c, line, n);
        else if (c->err == 0)
                c->err = -n;
}

void cli_analytics_end(cli_analytics *c, const cordon_error *err, int exit_code) {
        if (!c)
                return;
        char line[ANALYTICS_LINE_MAX];
        const char *end = !err ? "exit" : err->code == CORDON_KILLED || err->code == CORDON_TIMEOUT
                                                  ? "killed"
                                                  : "error";
        int n = analytics_summary_line(&c->a, end, exit_code,
                                       err ? cordon_code_name(err->code) : NULL, line,
                                       sizeof(line));
        if (n > 0)
                put(c, line, n);
        if (close(c->fd) < 0 && c->err == 0)
                c->err = errno;
        if (c->err)
                fprintf(stderr, "cordon: warning: --analytics: writing the records failed: %s\n",
                        strerror(c->err));
        explicit_bzero(&c->a, sizeof(c->a)); /* the key */
        free(c);
}
