/* SPDX-License-Identifier: Apache-2.0 */
#include "run/run-end.h"

#include <errno.h>
#include <sys/wait.h>

#include "util/util.h"

int run_exit_code(int wait_status) {
        return WIFEXITED(wait_status)     ? WEXITSTATUS(wait_status)
               : WIFSIGNALED(wait_status) ? 128 + WTERMSIG(wait_status)
                                          : 125;
}

int run_timeout_error(cordon_error *err, uint64_t timeout_ms, const char *what) {
        return cordon_set_error(err, CORDON_TIMEOUT, ETIME,
                                "the command ran longer than limits.timeout (%llu ms) and was "
                                "killed with %s",
                                (unsigned long long) timeout_ms, what);
}
