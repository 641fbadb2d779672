/* SPDX-License-Identifier: Apache-2.0 */
#include "run/run-backend.h"

#include <errno.h>

#include "util/util.h"

int run_backend_pick(const run_backend *const *table, size_t n, cordon_backend requested,
                     const char *platform, const run_backend **ret, cordon_error *err) {
        *ret = NULL;
        if (n == 0)
                return cordon_set_error(err, CORDON_SANDBOX_UNAVAILABLE, ENOTSUP,
                                        "refusing to run the command unconfined: no backend on "
                                        "%s", platform);
        if (requested == CORDON_BACKEND_AUTO) {
                *ret = table[0];
                return 0;
        }
        for (size_t i = 0; i < n; i++)
                if (table[i]->id == requested) {
                        *ret = table[i];
                        return 0;
                }
        return cordon_set_error(err, CORDON_SANDBOX_UNAVAILABLE, ENOTSUP,
                                "refusing to run the command unconfined: the %s backend is not "
                                "available on %s; hint: use --backend %s (see 'cordon probe')",
                                cordon_backend_to_string(requested), platform,
                                cordon_backend_to_string(table[0]->id));
}
