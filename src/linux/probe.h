/* SPDX-License-Identifier: Apache-2.0 */
/* Host probing (docs/design/backends.md "Probe"): which kernel features cordon's backends need are
 * really usable here. Every fact is found by trying the feature (in a throw-away child when trying
 * it changes process state), never by reading the kernel version. The public face is
 * cordon_probe_run()/..._to_json()/..._to_text(); launch code reads the cached facts directly. */
#pragma once

#include <stdbool.h>

#include "cordon/cordon.h"

typedef enum probe_cgroup {
        PROBE_CGROUP_NONE = 0, /* no cgroup2 hierarchy mounted where we look */
        PROBE_CGROUP_HYBRID,   /* v1 at /sys/fs/cgroup, v2 only at /sys/fs/cgroup/unified */
        PROBE_CGROUP_UNIFIED,  /* /sys/fs/cgroup is a cgroup2 mount */
} probe_cgroup;

/* How limits.memory and limits.pids are enforced (linux/cgroup.h). */
typedef enum probe_limits {
        PROBE_LIMITS_RLIMIT = 0, /* RLIMIT_AS and RLIMIT_NPROC (the latter not for root) */
        PROBE_LIMITS_CGROUP,     /* a cgroup per run, created here just now and removed */
} probe_limits;

/* What implements /dev/kvm, from the vendor module the kernel has loaded (probe-vm.c). */
typedef enum probe_kvm_kind {
        PROBE_KVM_NONE = 0, /* no usable /dev/kvm */
        PROBE_KVM_HW,       /* kvm_intel or kvm_amd: hardware virtualization boots any kernel */
        PROBE_KVM_PVM,      /* kvm_pvm: boots only kernels built as PVM guests */
        PROBE_KVM_UNKNOWN,  /* /dev/kvm runs a guest, but neither module is visible */
} probe_kvm_kind;

typedef struct probe_facts {
        char release[65];          /* uname -r */
        bool root;                 /* effective uid 0 */

        /* unshare(USER|NS|PID|NET|IPC|UTS|CGROUP) in a child, then setgroups/uid_map/gid_map and a
         * private remount of "/" (proves CAP_SYS_ADMIN inside, which AppArmor's userns
         * restriction would withhold). */
        bool userns;
        const char *userns_step;   /* static: the step that failed, NULL when usable */
        int userns_errno;
        long max_user_namespaces;  /* /proc/sys/user/max_user_namespaces, -1 if absent */
        long unprivileged_userns_clone; /* /proc/sys/kernel/unprivileged_userns_clone, -1 if absent */
        long apparmor_restrict_userns;  /* /proc/sys/kernel/apparmor_restrict_unprivileged_userns */

        int landlock_abi;          /* 0 = no Landlock */
        int landlock_errno;        /* why 0: ENOSYS (not built), EOPNOTSUPP (disabled at boot) */

        bool seccomp_filter;       /* SECCOMP_RET_ERRNO filters available */
        bool seccomp_user_notif;   /* SECCOMP_RET_USER_NOTIF available and a listener created */
        int seccomp_listener_errno;/* why no listener (EBUSY: one exists above us already) */
        bool seccomp_wait_killable_recv;
        bool seccomp_addfd_send;

        bool openat2;
        /* nf_tables NAT in a network namespace of a child's own (linux/intercept.h): the native
         * backend redirects every TCP client and DNS query to its proxy. */
        bool nft_nat;
        int nft_nat_errno;
        probe_cgroup cgroup2;
        probe_limits limits;
        char limits_detail[256];   /* which hierarchy, or why none */
        bool kvm;                  /* /dev/kvm opened O_RDWR */
        int kvm_errno;             /* ENOENT: no device; EACCES: no permission */
        /* The microvm backend's prerequisites (probe-vm.c, docs/design/microvm.md). */
        bool kvm_guest_ran;        /* a real-mode guest ran to its HLT through KVM_RUN */
        probe_kvm_kind kvm_kind;   /* what implements KVM here */
        char vmm[256];             /* the VMM (qemu-system-x86_64) found, "" when none */
        char kernel[256];          /* the guest kernel image, "" when none */
        char kernel_modules[256];  /* ... and its module tree */
} probe_facts;

typedef enum probe_status {
        PROBE_UNUSABLE = 0,
        PROBE_PARTIAL,
        PROBE_FULL,
} probe_status;

typedef struct probe_enforces {
        bool fs, name_rules, network, pid, syscalls;
} probe_enforces;

typedef struct probe_backend {
        cordon_backend backend;
        probe_status status;
        probe_enforces enforces;
        bool requires_install;
        char description[256];
        char hint[768];
} probe_backend;

/* The secret store `cordon secret` and a policy's credentials use (probe-secrets.c), probed at
 * each cordon_probe_run() (not cached with the facts: a session bus comes and goes). */
typedef struct probe_secrets {
        bool usable;           /* false: the bus has, or may have, a service cordon cannot ask */
        bool service;          /* the Secret Service (else the file store) */
        bool requires_install; /* a package would give the keyring (or the bus library) */
        char detail[256];      /* which store and why, one line */
        char hint[256];        /* what to do, or "" */
} probe_secrets;

/* Pure: the report from secret_store_which()'s answer (r: 0 or -errno; service: it chose the
 * Secret Service; bus: DBUS_SESSION_BUS_ADDRESS is set; why: its words). */
void probe_secrets_evaluate(int r, bool service, bool bus, const char *why, probe_secrets *ret);
/* Asks the session bus now (secret_store_which) and evaluates. */
void probe_secrets_collect(probe_secrets *ret);

#define PROBE_N_BACKENDS 4 /* native, landlock, microvm, none: the order they are reported in */

/* Probes the host now (no cache). Returns 0, or -errno when a probe could not even be attempted
 * (pipe/fork failed): then *ret is undefined. */
int probe_facts_collect(probe_facts *ret);

/* The facts, probed on first use and cached for the life of the process; thread-safe. A failed
 * attempt is not cached. */
int probe_facts_get(const probe_facts **ret);

/* Pure: what each backend can do given `facts`. `ret` gets PROBE_N_BACKENDS entries. */
void probe_evaluate(const probe_facts *facts, probe_backend ret[PROBE_N_BACKENDS]);

/* Pure: the backend CORDON_BACKEND_AUTO resolves to (a cordon_backend value), or -1 when no
 * confining backend is usable: auto never steps down to "none" (docs/design/backends.md). */
int probe_default_backend(const probe_backend backends[PROBE_N_BACKENDS]);

/* Accessors for a public probe result. probe_get_backend returns NULL for AUTO. */
const probe_facts *probe_get_facts(const cordon_probe *probe);
const probe_backend *probe_get_backend(const cordon_probe *probe, cordon_backend backend);

const char *probe_status_to_string(probe_status s);
const char *probe_cgroup_to_string(probe_cgroup c);
const char *probe_limits_to_string(probe_limits l);
const char *probe_kvm_kind_to_string(probe_kvm_kind k);

/* probe-vm.c: fills the microvm facts of `f` (kvm .. kernel_modules; `release` must be set). */
void probe_vm(probe_facts *f);
/* Appends "; "-separated text to the hint (a buffer of `size`), truncating rather than
 * overflowing: the hints of the backends' availability (probe-backends.c, probe-vm.c). */
__attribute__((format(printf, 3, 4))) void probe_hint_add(char *hint, size_t size, const char *fmt, ...);
/* Pure: appends to `hint` (of `size` bytes, "; "-separated) what keeps the microvm backend from
 * booting a stock kernel on a host with `f`; returns whether anything was missing, and sets
 * *install when a package would supply it. */
bool probe_vm_missing(const probe_facts *f, char *hint, size_t size, bool *install);
