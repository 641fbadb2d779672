/* SPDX-License-Identifier: Apache-2.0 */
/*
 * attack: resource limits (limits.pids, limits.memory). Run under `cordon run --pids N` and
 * `--memory M`; the driver knows from `cordon probe` whether a cgroup or rlimits enforce them and
 * judges the run's status and events accordingly.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "attack.h"

/* forkbomb LIMIT: forks sleeping children until fork fails or 4 x LIMIT exist; contained when
 * fork failed before LIMIT children. All children are killed before the verdict. */
static int cmd_forkbomb(int argc, char **argv) {
        long limit = atol(argv[0]);
        if (limit <= 0 || limit > 4096)
                return harness("bad limit %s", argv[0]);
        pid_t *kids = calloc((size_t) (4 * limit), sizeof(*kids));
        if (!kids)
                return harness("out of memory");
        long n = 0;
        int e = 0;
        while (n < 4 * limit) {
                pid_t p = fork();
                if (p < 0) {
                        e = errno;
                        break;
                }
                if (p == 0) {
                        pause();
                        _exit(0);
                }
                kids[n++] = p;
        }
        for (long i = 0; i < n; i++)
                kill(kids[i], SIGKILL);
        for (long i = 0; i < n; i++)
                waitpid(kids[i], NULL, 0);
        free(kids);
        if (n >= limit)
                return escaped("%ld children forked under a limit of %ld", n, limit);
        return refused("fork failed after %ld children (%s)", n, e ? strerror(e) : "?");
}

/* memhog MIB: allocates and touches MIB MiB, one MiB at a time. Under a cgroup the OOM killer
 * ends it (and the run); under RLIMIT_AS an allocation fails first. Finishing is an escape. */
static int cmd_memhog(int argc, char **argv) {
        long mib = atol(argv[0]);
        if (mib <= 0)
                return harness("bad size %s", argv[0]);
        for (long i = 0; i < mib; i++) {
                char *p = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                               -1, 0);
                if (p == MAP_FAILED)
                        return refused("allocation failed after %ld MiB: %s", i, strerror(errno));
                memset(p, 0x5a, 1 << 20);
        }
        return escaped("allocated and touched %ld MiB", mib);
}

const attack_cmd attack_limits_cmds[] = {
        { "forkbomb", "LIMIT", 1, cmd_forkbomb },
        { "memhog", "MIB", 1, cmd_memhog },
        { NULL, NULL, 0, NULL },
};
