/* SPDX-License-Identifier: Apache-2.0 */
#include "run/run-options.h"

#include "util/util.h"

void cordon_run_options_init(cordon_run_options *opts) {
        if (!opts)
                return;
        *opts = (cordon_run_options) { .size = sizeof(*opts) };
}

int run_options_read(const cordon_run_options *in, cordon_run_options *out, cordon_error *err) {
        cordon_run_options_init(out);
        return options_read_sized(out, sizeof(*out), in, "cordon_run_options", err);
}
