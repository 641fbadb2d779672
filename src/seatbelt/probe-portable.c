/* SPDX-License-Identifier: Apache-2.0 */
/* Probe verdicts for hosts that are not Linux (probe-portable.h). Pure: built and tested on
 * every platform. */
#include <jansson.h>
#include <stdio.h>

#include "seatbelt/probe-portable.h"
#include "seatbelt/seatbelt-exec.h"

static void eval_native(const portable_facts *f, portable_backend *b) {
        b->backend = CORDON_BACKEND_NATIVE;
        b->status = "unusable";
        if (!f->darwin) {
                (void) snprintf(b->description, sizeof(b->description), "none on %s",
                                f->system[0] ? f->system : "this platform");
                (void) snprintf(b->hint, sizeof(b->hint),
                                "no native sandbox on this platform: cordon confines commands on "
                                "Linux (namespaces + Landlock + seccomp) and macOS (Seatbelt); "
                                "here it can only run them unprotected (--sandbox off)");
                return;
        }
        (void) snprintf(b->description, sizeof(b->description),
                        "macOS Seatbelt (sandbox-exec), shared kernel");
        if (!f->sandbox_exec) {
                (void) snprintf(b->hint, sizeof(b->hint),
                                "%s is missing or not executable: check /usr/bin/sandbox-exec",
                                SEATBELT_SANDBOX_EXEC);
                return;
        }
        /* What Seatbelt enforces from the plan (docs/design/seatbelt.md), and what it cannot. */
        b->status = "partial";
        b->fs = b->name_rules = b->network = true;
        (void) snprintf(b->hint, sizeof(b->hint),
                        "no PID isolation (the command sees the user's processes; signals "
                        "outside the sandbox are refused) and no syscall filter; network only "
                        "through the session proxy");
}

static void eval_unavailable(portable_backend *b, cordon_backend which, const char *desc,
                             const char *hint, bool install) {
        b->backend = which;
        b->status = "unusable";
        b->requires_install = install;
        (void) snprintf(b->description, sizeof(b->description), "%s", desc);
        (void) snprintf(b->hint, sizeof(b->hint), "%s", hint);
}

void portable_probe_evaluate(const portable_facts *f, portable_backend ret[PORTABLE_N_BACKENDS]) {
        memset(ret, 0, sizeof(portable_backend) * PORTABLE_N_BACKENDS);
        eval_native(f, &ret[0]);
        eval_unavailable(&ret[1], CORDON_BACKEND_LANDLOCK,
                         "Landlock + seccomp without namespaces",
                         "Linux only: Landlock is a Linux security module", false);
        eval_unavailable(&ret[2], CORDON_BACKEND_MICROVM,
                         "a microVM with its own kernel (kernel boundary)",
                         "no microVM runtime is built into this version of cordon", true);
        ret[3].backend = CORDON_BACKEND_NONE;
        ret[3].status = "full";
        (void) snprintf(ret[3].description, sizeof(ret[3].description),
                        "no confinement: environment scrub only");
        (void) snprintf(ret[3].hint, sizeof(ret[3].hint),
                        "explicit opt-out only (--sandbox off or --backend none): the command "
                        "runs unprotected");
}

int portable_default_backend(const portable_backend b[PORTABLE_N_BACKENDS]) {
        /* docs/design/backends.md: auto may step down between confining backends, never to none. */
        for (size_t i = 0; i < PORTABLE_N_BACKENDS; i++)
                if (b[i].backend != CORDON_BACKEND_NONE && strcmp(b[i].status, "unusable") != 0)
                        return (int) b[i].backend;
        return -1;
}

static void enforces_text(const portable_backend *b, char *buf, size_t size) {
        (void) snprintf(buf, size, "%s%s%s%s%s", b->fs ? "fs," : "",
                        b->name_rules ? "nameRules," : "", b->network ? "network," : "",
                        b->pid ? "pid," : "", b->syscalls ? "syscalls," : "");
        size_t n = strlen(buf);
        if (n == 0)
                (void) snprintf(buf, size, "-");
        else
                buf[n - 1] = '\0';
}

char *portable_probe_text(const portable_facts *f, const portable_backend b[PORTABLE_N_BACKENDS]) {
        char *buf = NULL;
        size_t len = 0;
        FILE *out = open_memstream(&buf, &len);
        if (!out)
                return NULL;
        fprintf(out, "%-9s %-9s %-36s %-8s %s\n", "BACKEND", "STATUS", "ENFORCES", "INSTALL",
                "HINT");
        for (size_t i = 0; i < PORTABLE_N_BACKENDS; i++) {
                char enforces[64];
                enforces_text(&b[i], enforces, sizeof(enforces));
                fprintf(out, "%-9s %-9s %-36s %-8s %s\n", cordon_backend_to_string(b[i].backend),
                        b[i].status, enforces, b[i].requires_install ? "required" : "no",
                        b[i].hint[0] ? b[i].hint : "-");
        }
        int def = portable_default_backend(b);
        if (def < 0)
                fprintf(out, "\ndefault backend: none usable (cordon run refuses to run "
                             "confined commands)\n");
        else
                fprintf(out, "\ndefault backend: %s\n",
                        cordon_backend_to_string((cordon_backend) def));
        fprintf(out, "\nhost facts:\n  %-28s %s %s\n", "system", f->system, f->release);
        if (f->darwin)
                fprintf(out, "  %-28s %s\n", SEATBELT_SANDBOX_EXEC, f->sandbox_exec ? "yes" : "no");
        bool failed = ferror(out);
        if (fclose(out) != 0 || failed) {
                free(buf);
                return NULL;
        }
        return buf;
}

static json_t *backend_json(const portable_backend *b) {
        return json_pack("{s:s, s:s, s:{s:b, s:b, s:b, s:b, s:b}, s:b, s:s, s:s}", "name",
                         cordon_backend_to_string(b->backend), "status", b->status, "enforces",
                         "fs", b->fs, "nameRules", b->name_rules, "network", b->network, "pid",
                         b->pid, "syscalls", b->syscalls, "requiresInstall", b->requires_install,
                         "hint", b->hint, "description", b->description);
}

char *portable_probe_json(const portable_facts *f, const portable_backend b[PORTABLE_N_BACKENDS]) {
        json_t *backends = json_array();
        for (size_t i = 0; backends && i < PORTABLE_N_BACKENDS; i++)
                if (json_array_append_new(backends, backend_json(&b[i])) < 0) {
                        json_decref(backends);
                        return NULL;
                }
        int def = portable_default_backend(b);
        json_t *root = json_pack("{s:o, s:{s:s, s:s, s:b}, s:s?}", "backends", backends, "host",
                                 "system", f->system, "release", f->release, "sandboxExec",
                                 f->sandbox_exec, "defaultBackend",
                                 def < 0 ? NULL : cordon_backend_to_string((cordon_backend) def));
        if (!root)
                return NULL;
        char *s = json_dumps(root, JSON_INDENT(2));
        json_decref(root);
        return s;
}
