/* SPDX-License-Identifier: Apache-2.0 */
/* An exec's environment in a warm session: the session's, with the variables the exec request
 * sets over it (docs/protocol.md, "session.exec"), except those that stay the session's. */
#include "linux/session-host-internal.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

/* The proxy variables stay the session's: an exec cannot point clients elsewhere (there is
 * nowhere else to go from the sandbox's network namespace). */
static bool fixed_var(const char *entry) {
        static const char *const fixed[] = { "HTTP_PROXY=", "HTTPS_PROXY=", "http_proxy=",
                                             "https_proxy=", "ALL_PROXY=", "all_proxy=",
                                             "NO_PROXY=", "no_proxy=", NULL };
        for (size_t i = 0; fixed[i]; i++)
                if (strncmp(entry, fixed[i], strlen(fixed[i])) == 0)
                        return true;
        return false;
}

/* The session's environment with the exec's variables set over it. */
int host_exec_env(const plan *p, json_t *env, strv *out) {
        int r = strv_extend(out, &p->env);
        size_t i;
        json_t *v;
        json_array_foreach(env, i, v) {
                const char *e = json_string_value(v);
                if (r < 0 || !e || !strchr(e, '=') || fixed_var(e))
                        continue;
                size_t nl = (size_t) (strchr(e, '=') - e) + 1;
                for (size_t k = 0; k < out->n; k++)
                        if (strncmp(out->v[k], e, nl) == 0) {
                                free(out->v[k]);
                                memmove(&out->v[k], &out->v[k + 1], (out->n - k) * sizeof(char *));
                                out->n--;
                                break;
                        }
                r = strv_push(out, e);
        }
        return r;
}
