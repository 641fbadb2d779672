/* SPDX-License-Identifier: Apache-2.0 */
/* From probed facts to backend verdicts, and the public cordon_probe_* API. Everything here but
 * cordon_probe_run() is pure: it reads a probe_facts and touches no kernel state, so the verdicts
 * are unit-tested with made-up hosts (tests/linux/test-probe.c). */
#include <jansson.h>
#include <stdio.h>

#include "linux/probe.h"
#include "plan/landlock-plan.h"
#include "util/platform.h"
#include "util/util.h"

struct cordon_probe {
        probe_facts facts;
        probe_backend backends[PROBE_N_BACKENDS];
        int default_backend; /* cordon_backend, or -1 */
        probe_secrets secrets;
};

/* The Landlock ABI that adds abstract-Unix-socket and signal scoping; below it native is partial
 * (docs/design/backends.md: "Older Landlock ABIs report partial"). */
#define PROBE_LANDLOCK_SCOPING_ABI 6

const char *probe_status_to_string(probe_status s) {
        switch (s) {
        case PROBE_FULL:
                return "full";
        case PROBE_PARTIAL:
                return "partial";
        case PROBE_UNUSABLE:
        default:
                return "unusable";
        }
}

const char *probe_limits_to_string(probe_limits l) {
        return l == PROBE_LIMITS_CGROUP ? "cgroup" : "rlimit";
}

const char *probe_cgroup_to_string(probe_cgroup c) {
        switch (c) {
        case PROBE_CGROUP_UNIFIED:
                return "unified";
        case PROBE_CGROUP_HYBRID:
                return "hybrid";
        case PROBE_CGROUP_NONE:
        default:
                return "none";
        }
}

void probe_hint_add(char *hint, size_t size, const char *fmt, ...) {
        size_t used = strlen(hint);
        if (used + 3 >= size)
                return;
        if (used > 0) {
                memcpy(hint + used, "; ", 3);
                used += 2;
        }
        va_list ap;
        va_start(ap, fmt);
        (void) vsnprintf(hint + used, size - used, fmt, ap);
        va_end(ap);
}

/* A backend's hint: a probe_backend's. */
#define hint_add(buf, ...) probe_hint_add(buf, sizeof(((probe_backend *) NULL)->hint), __VA_ARGS__)

static void hint_userns(const probe_facts *f, char *hint) {
        hint_add(hint, "user namespaces are not usable (%s: %s)", f->userns_step,
                 strerror(f->userns_errno));
        if (f->unprivileged_userns_clone == 0)
                hint_add(hint, "enable them: sysctl -w kernel.unprivileged_userns_clone=1");
        else if (f->max_user_namespaces == 0)
                hint_add(hint, "enable them: sysctl -w user.max_user_namespaces=15000");
        else if (f->apparmor_restrict_userns == 1)
                hint_add(hint, "AppArmor restricts unprivileged user namespaces "
                               "(kernel.apparmor_restrict_unprivileged_userns=1): allow cordon "
                               "in an AppArmor profile");
        else
                hint_add(hint, "enable unprivileged user namespaces, or use a Landlock-enforcing "
                               "kernel");
}

static void hint_notify(const probe_facts *f, char *hint) {
        if (f->seccomp_listener_errno == EBUSY)
                hint_add(hint, "a seccomp listener already exists above this process (already "
                               "inside a sandbox?): creation-time name rules need their own");
        else
                hint_add(hint, "seccomp user notification is not usable (%s): needs "
                               "CONFIG_SECCOMP_FILTER with SECCOMP_RET_USER_NOTIF",
                         strerror(f->seccomp_listener_errno));
}

/* What native lacks on a host where it can run at all: each item names the missing kernel
 * feature and what it costs. */
static void hint_native_missing(const probe_facts *f, char *hint) {
        if (f->landlock_abi == 0)
                hint_add(hint, "no Landlock (%s): the write-access defense-in-depth layer is "
                               "missing; boot with lsm=...,landlock",
                         strerror(f->landlock_errno));
        else if (f->landlock_abi < PROBE_LANDLOCK_SCOPING_ABI)
                hint_add(hint, "Landlock ABI %d < %d: no abstract Unix socket or signal "
                               "scoping; a newer kernel adds it",
                         f->landlock_abi, PROBE_LANDLOCK_SCOPING_ABI);
        if (!f->seccomp_wait_killable_recv)
                hint_add(hint, "no SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV: creation-time name "
                               "rules cannot be enforced (a signal would replay a completed "
                               "create); policies with denyCreateNames or protected paths are "
                               "refused");
        if (!f->seccomp_addfd_send)
                hint_add(hint, "no SECCOMP_ADDFD_FLAG_SEND: creation-time name rules cannot be "
                               "enforced; policies that need them are refused");
        if (!f->nft_nat)
                hint_add(hint, "no nf_tables NAT in a network namespace (%s): only clients that "
                               "honour the proxy variables connect, the rest reach nothing",
                         strerror(f->nft_nat_errno));
        if (f->limits == PROBE_LIMITS_RLIMIT && f->root)
                hint_add(hint, "no cgroup for limits, and RLIMIT_NPROC does not apply to root: "
                               "policies with limits.pids are refused, and the default process "
                               "ceiling is not enforced");
}

static void eval_native(const probe_facts *f, probe_backend *b) {
        b->backend = CORDON_BACKEND_NATIVE;
        b->enforces = (probe_enforces) {
                .fs = f->userns,
                .network = f->userns,
                .pid = f->userns,
                .syscalls = f->seccomp_filter,
                .name_rules = f->seccomp_user_notif && f->seccomp_wait_killable_recv &&
                              f->seccomp_addfd_send,
        };
        b->requires_install = false; /* kernel features: nothing to install, see the hint */
        (void) snprintf(b->description, sizeof(b->description),
                        "Linux namespaces + Landlock ABI %d + seccomp user notification",
                        f->landlock_abi);
        if (!f->userns)
                hint_userns(f, b->hint);
        if (!f->seccomp_user_notif)
                hint_notify(f, b->hint);
        if (!f->seccomp_filter)
                hint_add(b->hint, "seccomp filters are not available");
        if (b->hint[0] != '\0') {
                b->status = PROBE_UNUSABLE;
                return;
        }
        hint_native_missing(f, b->hint);
        b->status = b->hint[0] == '\0' ? PROBE_FULL : PROBE_PARTIAL;
}

/* What the landlock backend can never do, whatever the kernel (docs/design/landlock-backend.md):
 * always "partial". */
static const char landlock_lacks[] =
        "no PID namespace: other processes show in /proc (not their memory, environment or "
        "signals); no private /tmp (a private TMPDIR instead); network: only clients that honour "
        "the proxy variables (no namespace to redirect the rest in), TCP to the host-loopback "
        "proxy only, no listening sockets, git over SSH unproxied; names inside secret "
        "directories are listable; entries created after launch in a directory holding a secret "
        "or protected file are out of reach; no new terminals (/dev/pts); limits.pids needs a "
        "cgroup";

static void eval_landlock(const probe_facts *f, probe_backend *b) {
        b->backend = CORDON_BACKEND_LANDLOCK;
        (void) snprintf(b->description, sizeof(b->description),
                        "Landlock ABI %d + seccomp user notification, no namespaces: for hosts "
                        "without user namespaces", f->landlock_abi);
        if (f->landlock_abi < LANDLOCK_PLAN_MIN_ABI)
                hint_add(b->hint, "needs Landlock ABI %d (Linux 6.12: signal scoping, the only "
                                  "thing that keeps the command from signalling the user's other "
                                  "processes without a PID namespace), this host has %d%s",
                         LANDLOCK_PLAN_MIN_ABI, f->landlock_abi,
                         f->landlock_abi == 0 ? " (boot with lsm=...,landlock)" : "");
        if (!f->seccomp_user_notif)
                hint_notify(f, b->hint);
        else if (!f->seccomp_wait_killable_recv || !f->seccomp_addfd_send)
                hint_add(b->hint, "seccomp user notification lacks WAIT_KILLABLE_RECV or "
                                  "ADDFD_FLAG_SEND (Linux 5.19): creation-time name rules "
                                  "cannot be enforced");
        if (!f->seccomp_filter)
                hint_add(b->hint, "seccomp filters are not available");
        if (b->hint[0] != '\0') {
                b->status = PROBE_UNUSABLE; /* enforces nothing: all false */
                return;
        }
        b->enforces = (probe_enforces) { .fs = true, .name_rules = true, .network = true,
                                         .pid = false, .syscalls = true };
        b->status = PROBE_PARTIAL;
        hint_add(b->hint, "%s", landlock_lacks);
        if (f->limits == PROBE_LIMITS_RLIMIT)
                hint_add(b->hint, "no cgroup here: policies with limits.pids are refused, and "
                                  "the default process ceiling is not enforced");
}

/* docs/design/microvm.md "Probe": full with hardware KVM, the VMM and a guest kernel; partial
 * (software emulation) with the VMM and a kernel but no KVM that boots a stock kernel, which a
 * run gets only by opting in (microvm.accel "tcg"); unusable without the VMM or the kernel. Only
 * an explicit --backend microvm runs it (never the unspecified default: warm sessions and the
 * native rules inside the guest are not built yet), so the hint says so. */
static void eval_microvm(const probe_facts *f, probe_backend *b) {
        b->backend = CORDON_BACKEND_MICROVM;
        (void) snprintf(b->description, sizeof(b->description),
                        "a microVM with its own kernel (kernel boundary): qemu microvm");
        if (f->vmm[0] == '\0' || f->kernel[0] == '\0') {
                b->status = PROBE_UNUSABLE;
                (void) probe_vm_missing(f, b->hint, sizeof(b->hint), &b->requires_install);
                return;
        }
        b->enforces = (probe_enforces) { .fs = true, .name_rules = true, .network = true,
                                         .pid = true, .syscalls = true };
        if (f->kvm_guest_ran && f->kvm_kind == PROBE_KVM_HW) {
                b->status = PROBE_FULL;
                hint_add(b->hint, "explicit --backend microvm only (hardware KVM, %s, kernel %s)",
                         f->vmm, f->kernel);
                return;
        }
        b->status = PROBE_PARTIAL;
        hint_add(b->hint, "software emulation: only with --microvm-accel tcg (policy "
                          "\"microvm\": {\"accel\": \"tcg\"}), an order of magnitude slower");
        (void) probe_vm_missing(f, b->hint, sizeof(b->hint), &b->requires_install);
}

static void eval_none(probe_backend *b) {
        b->backend = CORDON_BACKEND_NONE;
        b->status = PROBE_FULL;
        (void) snprintf(b->description, sizeof(b->description),
                        "no confinement: environment scrub only");
        hint_add(b->hint, "explicit opt-out only (--sandbox off or --backend none): the command "
                          "runs unprotected");
}

void probe_evaluate(const probe_facts *facts, probe_backend ret[PROBE_N_BACKENDS]) {
        memset(ret, 0, sizeof(probe_backend) * PROBE_N_BACKENDS);
        eval_native(facts, &ret[0]);
        eval_landlock(facts, &ret[1]);
        eval_microvm(facts, &ret[2]);
        eval_none(&ret[3]);
}

int probe_default_backend(const probe_backend backends[PROBE_N_BACKENDS]) {
        /* docs/design/backends.md: the unspecified default is native (→ landlock), never
         * "none": an unconfined run must be asked for explicitly. microvm runs only when asked
         * for until warm sessions exist (docs/design/microvm.md "Probe"). */
        static const cordon_backend order[] = {
                CORDON_BACKEND_NATIVE, CORDON_BACKEND_LANDLOCK,
        };
        for (size_t i = 0; i < ELEMENTSOF(order); i++)
                for (size_t j = 0; j < PROBE_N_BACKENDS; j++)
                        if (backends[j].backend == order[i] && backends[j].status != PROBE_UNUSABLE)
                                return (int) order[i];
        return -1;
}

const probe_facts *probe_get_facts(const cordon_probe *probe) {
        return &probe->facts;
}

int probe_auto_backend(const cordon_probe *probe) {
        return probe->default_backend;
}

const probe_backend *probe_get_backend(const cordon_probe *probe, cordon_backend backend) {
        for (size_t i = 0; i < PROBE_N_BACKENDS; i++)
                if (probe->backends[i].backend == backend)
                        return &probe->backends[i];
        return NULL;
}

/* ---- Public API --------------------------------------------------------------------------- */

int cordon_probe_run(cordon_probe **ret, cordon_error *err) {
        if (!ret)
                return cordon_set_error(err, CORDON_USAGE, EINVAL, "cordon_probe_run: ret is NULL");
        *ret = NULL;
        const probe_facts *facts;
        int r = probe_facts_get(&facts);
        if (r < 0)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, -r,
                                        "probe: could not start a probe process: %s; free "
                                        "processes or memory and retry", strerror(-r));
        cordon_probe *p = calloc(1, sizeof(*p));
        if (!p)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, ENOMEM, "probe: out of memory");
        p->facts = *facts;
        probe_evaluate(&p->facts, p->backends);
        p->default_backend = probe_default_backend(p->backends);
        probe_secrets_collect(&p->secrets);
        *ret = p;
        return 0;
}

void cordon_probe_free(cordon_probe *probe) {
        free(probe);
}

static json_t *json_sysctl(long v) {
        return v < 0 ? json_null() : json_integer(v);
}

static json_t *facts_to_json(const probe_facts *f) {
        char userns_error[256] = "";
        if (!f->userns)
                (void) snprintf(userns_error, sizeof(userns_error), "%s: %s", f->userns_step,
                                strerror(f->userns_errno));
        return json_pack("{s:s, s:b, s:b, s:s?, s:o, s:o, s:o, s:i, s:b, s:b, s:b, s:b, s:b, "
                         "s:b, s:s, s:s, s:s, s:b, s:b, s:s, s:s?, s:s?, s:s?}",
                         "release", f->release, "root", f->root, "userNamespaces", f->userns,
                         "userNamespacesError", f->userns ? NULL : userns_error,
                         "maxUserNamespaces", json_sysctl(f->max_user_namespaces),
                         "unprivilegedUsernsClone", json_sysctl(f->unprivileged_userns_clone),
                         "apparmorRestrictUnprivilegedUserns",
                         json_sysctl(f->apparmor_restrict_userns), "landlockAbi", f->landlock_abi,
                         "seccompFilter", f->seccomp_filter, "seccompUserNotif",
                         f->seccomp_user_notif, "seccompWaitKillableRecv",
                         f->seccomp_wait_killable_recv, "seccompAddfdSend", f->seccomp_addfd_send,
                         "openat2", f->openat2, "nftablesNat", f->nft_nat,
                         "cgroup2", probe_cgroup_to_string(f->cgroup2),
                         "limits", probe_limits_to_string(f->limits), "limitsDetail",
                         f->limits_detail, "kvm", f->kvm, "kvmGuestRuns", f->kvm_guest_ran,
                         "kvmKind", probe_kvm_kind_to_string(f->kvm_kind),
                         "vmm", f->vmm[0] ? f->vmm : NULL,
                         "guestKernel", f->kernel[0] ? f->kernel : NULL,
                         "guestModules", f->kernel_modules[0] ? f->kernel_modules : NULL);
}

static json_t *backend_to_json(const probe_backend *b) {
        const probe_enforces *e = &b->enforces;
        return json_pack("{s:s, s:s, s:{s:b, s:b, s:b, s:b, s:b}, s:b, s:s, s:s}",
                         "name", cordon_backend_to_string(b->backend),
                         "status", probe_status_to_string(b->status),
                         "enforces", "fs", e->fs, "nameRules", e->name_rules, "network",
                         e->network, "pid", e->pid, "syscalls", e->syscalls,
                         "requiresInstall", b->requires_install, "hint", b->hint,
                         "description", b->description);
}

static char *probe_json(const cordon_probe *probe) {
        json_t *backends = json_array();
        if (!backends)
                return NULL;
        for (size_t i = 0; i < PROBE_N_BACKENDS; i++)
                if (json_array_append_new(backends, backend_to_json(&probe->backends[i])) < 0) {
                        json_decref(backends);
                        return NULL;
                }
        const char *def = probe->default_backend < 0
                                  ? NULL
                                  : cordon_backend_to_string((cordon_backend) probe->default_backend);
        const probe_secrets *sec = &probe->secrets;
        json_t *root = json_pack("{s:o, s:o, s:s?, s:{s:s?, s:b, s:b, s:s, s:s}}", "backends",
                                 backends, "kernel", facts_to_json(&probe->facts),
                                 "defaultBackend", def, "secrets", "store",
                                 !sec->usable ? NULL : sec->service ? "secret-service" : "file",
                                 "usable", sec->usable, "requiresInstall", sec->requires_install,
                                 "detail", sec->detail, "hint", sec->hint);
        if (!root)
                return NULL;
        char *s = json_dumps(root, JSON_INDENT(2));
        json_decref(root);
        return s;
}

/* "fs,nameRules,..." or "-" */
static void enforces_to_text(const probe_enforces *e, char *buf, size_t size) {
        (void) snprintf(buf, size, "%s%s%s%s%s", e->fs ? "fs," : "",
                        e->name_rules ? "nameRules," : "", e->network ? "network," : "",
                        e->pid ? "pid," : "", e->syscalls ? "syscalls," : "");
        size_t n = strlen(buf);
        if (n == 0)
                (void) snprintf(buf, size, "-");
        else
                buf[n - 1] = '\0';
}

static void backends_to_text(const cordon_probe *probe, FILE *out) {
        fprintf(out, "%-9s %-9s %-36s %-8s %s\n", "BACKEND", "STATUS", "ENFORCES", "INSTALL",
                "HINT");
        for (size_t i = 0; i < PROBE_N_BACKENDS; i++) {
                const probe_backend *b = &probe->backends[i];
                char enforces[64];
                enforces_to_text(&b->enforces, enforces, sizeof(enforces));
                fprintf(out, "%-9s %-9s %-36s %-8s %s\n", cordon_backend_to_string(b->backend),
                        probe_status_to_string(b->status), enforces,
                        b->requires_install ? "required" : "no",
                        b->hint[0] ? b->hint : "-");
        }
        if (probe->default_backend < 0)
                fprintf(out, "\ndefault backend: none usable (cordon run refuses to run "
                             "confined commands)\n");
        else
                fprintf(out, "\ndefault backend: %s\n",
                        cordon_backend_to_string((cordon_backend) probe->default_backend));
        fprintf(out, "secrets: %s\n", probe->secrets.detail);
        if (probe->secrets.hint[0])
                fprintf(out, "  hint: %s%s\n", probe->secrets.hint,
                        probe->secrets.requires_install ? " (install required)" : "");
}

static const char *yes_no(bool b) {
        return b ? "yes" : "no";
}

static void facts_to_text(const probe_facts *f, FILE *out) {
        fprintf(out, "\nkernel facts:\n");
        fprintf(out, "  %-28s %s\n", "release", f->release);
        fprintf(out, "  %-28s %s\n", "running as root", yes_no(f->root));
        if (f->userns)
                fprintf(out, "  %-28s yes\n", "user namespaces");
        else
                fprintf(out, "  %-28s no (%s: %s)\n", "user namespaces", f->userns_step,
                        strerror(f->userns_errno));
        fprintf(out, "  %-28s %d\n", "landlock ABI", f->landlock_abi);
        fprintf(out, "  %-28s %s\n", "seccomp filter", yes_no(f->seccomp_filter));
        fprintf(out, "  %-28s %s\n", "seccomp user notification", yes_no(f->seccomp_user_notif));
        fprintf(out, "  %-28s %s\n", "seccomp WAIT_KILLABLE_RECV",
                yes_no(f->seccomp_wait_killable_recv));
        fprintf(out, "  %-28s %s\n", "seccomp ADDFD_FLAG_SEND", yes_no(f->seccomp_addfd_send));
        fprintf(out, "  %-28s %s\n", "openat2", yes_no(f->openat2));
        if (f->nft_nat)
                fprintf(out, "  %-28s yes\n", "nf_tables NAT (every TCP)");
        else
                fprintf(out, "  %-28s no (%s)\n", "nf_tables NAT (every TCP)",
                        strerror(f->nft_nat_errno));
        fprintf(out, "  %-28s %s\n", "cgroup v2", probe_cgroup_to_string(f->cgroup2));
        fprintf(out, "  %-28s %s (%s)\n", "limits (memory, pids)", probe_limits_to_string(f->limits),
                f->limits_detail);
        fprintf(out, "  %-28s %s\n", "KVM (/dev/kvm read-write)", yes_no(f->kvm));
        fprintf(out, "  %-28s %s (%s)\n", "KVM runs a test guest", yes_no(f->kvm_guest_ran),
                probe_kvm_kind_to_string(f->kvm_kind));
        fprintf(out, "  %-28s %s\n", "VMM", f->vmm[0] ? f->vmm : "none");
        fprintf(out, "  %-28s %s\n", "guest kernel", f->kernel[0] ? f->kernel : "none");
}

static char *probe_text(const cordon_probe *probe) {
        char *buf = NULL;
        size_t len = 0;
        FILE *out = open_memstream(&buf, &len);
        if (!out)
                return NULL;
        backends_to_text(probe, out);
        facts_to_text(&probe->facts, out);
        bool failed = ferror(out);
        if (fclose(out) != 0 || failed) {
                free(buf);
                return NULL;
        }
        return buf;
}

/* Both formats' checks and result (include/cordon/cordon.h: *ret NULL on failure). */
static int probe_render(const cordon_probe *probe, char *(*format)(const cordon_probe *),
                        const char *fn, char **ret, cordon_error *err) {
        if (ret)
                *ret = NULL;
        if (!probe || !ret)
                return cordon_set_error(err, CORDON_USAGE, EINVAL, "%s: no probe or no ret", fn);
        *ret = format(probe);
        return *ret ? 0
                    : cordon_set_error(err, CORDON_LAUNCH_FAILED, ENOMEM, "probe: out of memory");
}

int cordon_probe_to_json(const cordon_probe *probe, char **ret, cordon_error *err) {
        return probe_render(probe, probe_json, "cordon_probe_to_json", ret, err);
}

int cordon_probe_to_text(const cordon_probe *probe, char **ret, cordon_error *err) {
        return probe_render(probe, probe_text, "cordon_probe_to_text", ret, err);
}
