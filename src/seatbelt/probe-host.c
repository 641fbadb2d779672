/* SPDX-License-Identifier: Apache-2.0 */
/* The public probe calls on hosts that are not Linux (built there only; src/linux/probe*.c is the
 * Linux version). Two facts, found by looking, never assumed from the platform's name alone:
 * which system this is, and whether sandbox-exec is there to be executed. */
#include <stdio.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#include "seatbelt/probe-portable.h"
#include "seatbelt/seatbelt-exec.h"
#include "util/platform.h"

struct cordon_probe {
        portable_facts facts;
        portable_backend backends[PORTABLE_N_BACKENDS];
};

static bool executable_file(const char *path) {
        struct stat st;
        return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

int cordon_probe_run(cordon_probe **ret, cordon_error *err) {
        if (!ret)
                return cordon_set_error(err, CORDON_USAGE, EINVAL, "cordon_probe_run: ret is NULL");
        *ret = NULL;
        cordon_probe *p = calloc(1, sizeof(*p));
        if (!p)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, ENOMEM, "probe: out of memory");
        struct utsname u;
        if (uname(&u) == 0) {
                (void) snprintf(p->facts.system, sizeof(p->facts.system), "%s", u.sysname);
                (void) snprintf(p->facts.release, sizeof(p->facts.release), "%s", u.release);
        }
        p->facts.darwin = strcmp(p->facts.system, "Darwin") == 0;
        p->facts.sandbox_exec = p->facts.darwin && executable_file(SEATBELT_SANDBOX_EXEC);
        portable_probe_evaluate(&p->facts, p->backends);
        *ret = p;
        return 0;
}

int probe_auto_backend(const cordon_probe *probe) {
        return portable_default_backend(probe->backends);
}

void cordon_probe_free(cordon_probe *probe) {
        free(probe);
}

/* As the Linux version (src/linux/probe-backends.c): *ret NULL on failure. */
static int probe_render(const cordon_probe *probe,
                        char *(*format)(const portable_facts *,
                                        const portable_backend[PORTABLE_N_BACKENDS]),
                        const char *fn, char **ret, cordon_error *err) {
        if (ret)
                *ret = NULL;
        if (!probe || !ret)
                return cordon_set_error(err, CORDON_USAGE, EINVAL, "%s: no probe or no ret", fn);
        *ret = format(&probe->facts, probe->backends);
        return *ret ? 0
                    : cordon_set_error(err, CORDON_LAUNCH_FAILED, ENOMEM, "probe: out of memory");
}

int cordon_probe_to_json(const cordon_probe *probe, char **ret, cordon_error *err) {
        return probe_render(probe, portable_probe_json, "cordon_probe_to_json", ret, err);
}

int cordon_probe_to_text(const cordon_probe *probe, char **ret, cordon_error *err) {
        return probe_render(probe, portable_probe_text, "cordon_probe_to_text", ret, err);
}
