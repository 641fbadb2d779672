/* SPDX-License-Identifier: Apache-2.0 */
/* The limits every run gets unless its policy sets others (docs/design/architecture.md,
 * "Limits"; docs/policy.md, "limits"). The policy's defaults: the planner fills them in
 * (src/plan/plan.c) and the widening check compares against them (policy-widen.c).
 *
 * The private /tmp and /dev/shm are tmpfs: what is written there is kept in RAM (no swap here)
 * until the run ends, and tmpfs's own default is half of RAM each, so one command could pin all
 * of the host's memory with two `dd`s. Each is bounded by a size= option instead: /tmp 2 GiB
 * (a pip wheel or a compiler's temporaries fit; a workspace is the place for bigger trees),
 * /dev/shm 256 MiB (POSIX shared memory, Python multiprocessing, Chromium's renderers; Docker's
 * 64 MiB is known to crash Chromium), each at most a quarter of RAM so small hosts keep the
 * larger part free (their inodes: src/plan/plan-limits.c).
 *
 * The process ceiling (POLICY_DEFAULT_PIDS): 2048 tasks (threads count, as in pids.max and
 * RLIMIT_NPROC). `make -j64` with compilers, npm with node's worker threads, a JVM build with a
 * few hundred threads stay far below; a fork bomb stops there. */
#include "policy/policy.h"

#include <sys/sysinfo.h>

#define TMP_DEFAULT (2ULL << 30)
#define SHM_DEFAULT (256ULL << 20)

static uint64_t quarter_of_ram(void) {
        struct sysinfo si;
        if (sysinfo(&si) < 0 || si.totalram == 0)
                return UINT64_MAX; /* unknown: the fixed default alone */
        return (uint64_t) si.totalram * (si.mem_unit ? si.mem_unit : 1) / 4;
}

static uint64_t at_most_quarter(uint64_t fixed) {
        uint64_t q = quarter_of_ram();
        return q < fixed ? q : fixed;
}

uint64_t policy_default_tmp_bytes(void) {
        return at_most_quarter(TMP_DEFAULT);
}

uint64_t policy_default_shm_bytes(void) {
        return at_most_quarter(SHM_DEFAULT);
}
