/* SPDX-License-Identifier: Apache-2.0 */
/* cordon_policy_to_seatbelt(): the public face of the generator (seatbelt.h). */
#include "seatbelt/seatbelt.h"

static void plan_freep(plan **p) {
        plan_free(*p);
}

int cordon_policy_to_seatbelt(const cordon_policy *p, const cordon_seatbelt_options *opts,
                              char **ret, cordon_error *err) {
        if (ret)
                *ret = NULL;
        if (!p || !opts || !ret)
                return cordon_set_error(err, CORDON_POLICY_INVALID, EINVAL,
                                        "cordon_policy_to_seatbelt: no policy or options");
        if (err)
                err->code = CORDON_OK;
        if (opts->tmpdir && !path_is_absolute(opts->tmpdir))
                return cordon_set_error(err, CORDON_POLICY_INVALID, EINVAL,
                                        "the temporary directory must be an absolute path");
        _cleanup_(plan_freep) plan *pl = NULL;
        /* No environment: the profile does not depend on it (the launcher scrubs it). */
        int r = plan_build(p, opts->home, opts->cwd, NULL, &pl, err);
        if (r < 0)
                return r;
        seatbelt_params params = { .proxy_port = opts->proxy_port, .tmpdir = opts->tmpdir };
        return seatbelt_profile(pl, p, &params, ret, err);
}
