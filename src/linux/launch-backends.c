/* SPDX-License-Identifier: Apache-2.0 */
/* The Linux backends as the launch sequence drives them (launch.h: launch_backend): what each
 * checks, builds before the fork, runs as the sandbox's first process, and removes afterwards.
 * launch.c knows none of them by name; a backend plugs in here once (docs/design/backends.md). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "linux/creds.h"
#include "linux/landlock.h"
#include "linux/launch.h"
#include "linux/probe.h"
#include "linux/sandbox.h"
#include "linux/tls-bundle.h"

/* ---- native: namespaces, mounts, Landlock, seccomp, the supervisor, the proxy --------------- */

static int native_available(cordon_error *err) {
        if (landlock_abi() < 1)
                return cordon_set_error(err, CORDON_SANDBOX_UNAVAILABLE, ENOSYS,
                                        "refusing to run the command unconfined: Landlock is not "
                                        "available on this kernel; hint: enable unprivileged user "
                                        "namespaces and a Landlock-enforcing kernel "
                                        "(lsm=...,landlock), see 'cordon probe'");
        return 0;
}

/* Brokers get the run's id: the events' sessionId when there is one. */
static void brokers_run_id(launch *l) {
        if (l->creds_home && !l->creds_run.id[0] && l->ev.session_id[0])
                (void) snprintf(l->creds_run.id, sizeof(l->creds_run.id), "%s",
                                l->ev.session_id);
}

/* The egress proxy's channels first; the proxy itself is forked right after the monitor, so its
 * start overlaps with the monitor's namespace set-up. It waits for the listeners, which the
 * monitor creates inside the sandbox's network namespace. */
static int native_proxy_open(launch *l, proxy_channels *pch, cordon_error *err) {
        tls_bundle_drop(&l->tls_ca); /* a retried attempt gets a CA of its own */
        creds_drop(&l->creds);       /* and placeholders of its own */
        int r = tls_bundle_prepare(l->p, true, &l->tls_ca, err);
        brokers_run_id(l);
        if (r >= 0 && l->creds_home)
                r = creds_prepare(l->p, l->creds_home, &l->creds_run, &l->creds, err);
        if (r >= 0)
                r = proxy_prepare(pch, err);
        if (r >= 0)
                l->px.listen_ch = pch->lch[1]; /* the monitor's end */
        return r;
}

/* Not before the fork: the proxy would hold the capture pipes' sandbox ends until it closes
 * what it does not need. */
static int native_proxy_start(launch *l, proxy_channels *pch, cordon_error *err) {
        int r = proxy_start(l->p, l->tls_ca, l->creds, pch, &l->px, err);
        tls_bundle_drop(&l->tls_ca); /* the proxy has it: the launcher needs no key */
        creds_drop(&l->creds);       /* nor the secrets */
        return r;
}

static _noreturn_ void native_child(launch *l, char *const argv[], int report_fd,
                                    pid_t launcher) {
        tls_bundle_drop(&l->tls_ca); /* the sandbox's side never holds the key */
        creds_drop(&l->creds);       /* nor a secret */
        sandbox_monitor_main(l->p, argv, report_fd, launcher, l->px.listen_ch);
}

const launch_backend launch_backend_native = {
        .base = { .id = CORDON_BACKEND_NATIVE, .confined = true, .available = native_available },
        .proxy_open = native_proxy_open, .proxy_start = native_proxy_start,
        .child_main = native_child,
};

/* ---- landlock: no namespaces; Landlock layers, seccomp, a loopback proxy -------------------- */

static int landlock_available(cordon_error *err) {
        int r = landlock_backend_available(err);
        return r < 0 ? r : native_available(err);
}

static int landlock_prepare(launch *l, cordon_error *err) {
        plan *p = l->p;
        /* The default process ceiling without a cgroup: RLIMIT_NPROC would count every process
         * of the user on the host here (no user namespace), so it is not applied; a limits.pids
         * the policy sets is refused instead (backend-landlock.c). */
        if (!p->cgroup && p->pids_default)
                p->pids = 0;
        tls_bundle_drop(&l->tls_ca); /* the landlock backend makes its own (backend-landlock.h) */
        brokers_run_id(l);
        landlock_creds lc = { .home = l->creds_home, .run = &l->creds_run };
        int r = landlock_run_prepare(p, &l->lr, &lc, err);
        if (r >= 0)
                l->have_landlock = true;
        return r;
}

/* Its proxy listens on the host's loopback already (landlock_run_prepare, with the run's
 * credentials): the launch takes it over. */
static int landlock_proxy_open(launch *l, proxy_channels *pch, cordon_error *err) {
        l->px = l->lr.proxy;
        l->lr.proxy = (proxy_proc) { .pid = -1, .listen_ch = -1, .report_fd = -1 };
        return 0;
}

static _noreturn_ void landlock_child(launch *l, char *const argv[], int report_fd,
                                      pid_t launcher) {
        tls_bundle_drop(&l->tls_ca); /* none here (landlock_run_prepare frees its own) */
        landlock_sandbox_main(l->p, &l->lr, argv, report_fd, launcher);
}

static void landlock_done(launch *l) {
        if (l->have_landlock)
                landlock_run_done(&l->lr);
        l->have_landlock = false;
}

const launch_backend launch_backend_landlock = {
        .base = { .id = CORDON_BACKEND_LANDLOCK, .confined = true,
                  .available = landlock_available },
        .prepare = landlock_prepare, .proxy_open = landlock_proxy_open,
        .child_main = landlock_child, .done = landlock_done,
};

/* ---- none: asked for (danger-full-access, --backend none); nothing confines ----------------- */

static _noreturn_ void none_child(launch *l, char *const argv[], int report_fd, pid_t launcher) {
        sandbox_unconfined_main(l->p, argv, report_fd);
}

const launch_backend launch_backend_none = {
        .base = { .id = CORDON_BACKEND_NONE, .confined = false },
        .child_main = none_child,
};

/* ---- microvm: the VMM as the native sandbox's command (docs/design/microvm.md) ------------ */

/* docs/design/backends.md: an explicitly requested backend never steps down. The refusal names
 * every prerequisite this host lacks (the probe's hint), so that one message says what to
 * install. The accelerator is checked by prepare(), which knows the policy's choice. */
static int microvm_available(cordon_error *err) {
        const probe_facts *f = NULL;
        if (probe_facts_get(&f) < 0)
                return cordon_set_error(err, CORDON_SANDBOX_UNAVAILABLE, ENOTSUP,
                                        "refusing to run the command unconfined: the microvm "
                                        "backend is not available (the host could not be "
                                        "probed); hint: use --backend native (see 'cordon "
                                        "probe')");
        if (f->vmm[0] != '\0' && f->kernel[0] != '\0')
                return native_available(err); /* the VMM runs in a native sandbox */
        char hint[1024] = "";
        bool install = false;
        (void) probe_vm_missing(f, hint, sizeof(hint), &install);
        return cordon_set_error(err, CORDON_SANDBOX_UNAVAILABLE, ENOTSUP,
                                "refusing to run the command unconfined: the microvm backend is "
                                "not available: %s; hint: use --backend native or landlock "
                                "(see 'cordon probe')", hint);
}

/* KVM only where it boots a stock kernel (hardware KVM); software emulation only when the policy
 * opted into it (microvm.accel "tcg"): it is slower by an order of magnitude, which a run must
 * not get silently. Then the probe's facts are copied for the sandbox's VMM host. */
static int microvm_prepare(launch *l, cordon_error *err) {
        const probe_facts *f = NULL;
        int r = probe_facts_get(&f);
        if (r < 0)
                return cordon_set_error(err, CORDON_SANDBOX_UNAVAILABLE, -r,
                                        "the host could not be probed: %s", strerror(-r));
        if (!l->p->microvm_tcg && !(f->kvm_guest_ran && f->kvm_kind == PROBE_KVM_HW)) {
                char hint[1024] = "";
                bool install = false;
                (void) probe_vm_missing(f, hint, sizeof(hint), &install);
                return cordon_set_error(err, CORDON_SANDBOX_UNAVAILABLE, ENOTSUP,
                                        "refusing to run the command unconfined: the microvm "
                                        "backend cannot use KVM here: %s; hint: opt into "
                                        "software emulation with --microvm-accel tcg (policy "
                                        "\"microvm\": {\"accel\": \"tcg\"}), or use --backend "
                                        "native", hint[0] ? hint : "no hardware KVM");
        }
        l->vm = (vm_host) { .tcg = l->p->microvm_tcg };
        (void) snprintf(l->vm.vmm, sizeof(l->vm.vmm), "%s", f->vmm);
        (void) snprintf(l->vm.kernel, sizeof(l->vm.kernel), "%s", f->kernel);
        (void) snprintf(l->vm.modules, sizeof(l->vm.modules), "%s", f->kernel_modules);
        l->p->vm = &l->vm;
        return 0;
}

const launch_backend launch_backend_microvm = {
        .base = { .id = CORDON_BACKEND_MICROVM, .confined = true, .available = microvm_available },
        .prepare = microvm_prepare, .proxy_open = native_proxy_open,
        .proxy_start = native_proxy_start, .child_main = native_child,
};

/* Linux's table: the unspecified backend's choice first. */
static const run_backend *const linux_backends[] = {
        &launch_backend_native.base, &launch_backend_landlock.base, &launch_backend_none.base,
        &launch_backend_microvm.base,
};

const launch_backend *launch_backend_for(cordon_backend id) {
        const run_backend *rb = NULL;
        cordon_error ignored = { 0 };
        if (run_backend_pick(linux_backends, ELEMENTSOF(linux_backends), id, "Linux", &rb,
                             &ignored) < 0)
                return &launch_backend_native; /* an id outside the enum: the most confining */
        /* `base` is each entry's first member. */
        return (const launch_backend *) (const void *) rb;
}
