/* SPDX-License-Identifier: Apache-2.0 */
/* The policy's "limits" object (docs/policy.md): each limit a number or its string form
 * (durations, sizes), checked against its range by policy_check_limit(). */
#include <inttypes.h>
#include <stdio.h>

#include "policy/policy-json-internal.h"

/* ---- limits --------------------------------------------------------------------------------- */

typedef struct limit_desc {
        policy_limit which;
        int (*parse_text)(const char *s, uint64_t *ret); /* NULL: integers only */
        int (*set)(cordon_policy *p, uint64_t v);
        const char *hint;
} limit_desc;

static const limit_desc limit_descs[_POLICY_LIMIT_MAX] = {
        [POLICY_LIMIT_TIMEOUT_MS] = { POLICY_LIMIT_TIMEOUT_MS, parse_duration_ms,
                                      cordon_policy_set_timeout_ms,
                                      "write milliseconds (30000) or a duration (\"30s\", "
                                      "\"500ms\", \"2m\", \"1h\")" },
        [POLICY_LIMIT_MEMORY_BYTES] = { POLICY_LIMIT_MEMORY_BYTES, parse_size,
                                        cordon_policy_set_memory_bytes,
                                        "write bytes (536870912) or a size (\"512M\", \"2G\")" },
        [POLICY_LIMIT_PIDS] = { POLICY_LIMIT_PIDS, NULL, cordon_policy_set_pids,
                                "write a number of processes, e.g. 256" },
        [POLICY_LIMIT_CPU_SECONDS] = { POLICY_LIMIT_CPU_SECONDS, NULL,
                                       cordon_policy_set_cpu_seconds,
                                       "write CPU seconds, e.g. 60" },
        [POLICY_LIMIT_TMP_BYTES] = { POLICY_LIMIT_TMP_BYTES, parse_size, cordon_policy_set_tmp_size,
                                     "write bytes (1073741824) or a size (\"512M\", \"4G\")" },
        [POLICY_LIMIT_SHM_BYTES] = { POLICY_LIMIT_SHM_BYTES, parse_size, cordon_policy_set_shm_size,
                                     "write bytes (268435456) or a size (\"64M\", \"1G\")" },
        [POLICY_LIMIT_WILDCARD_NAMES] = { POLICY_LIMIT_WILDCARD_NAMES, NULL,
                                          cordon_policy_set_wildcard_names,
                                          "write a number of names, e.g. 64" },
        [POLICY_LIMIT_CPUS] = { POLICY_LIMIT_CPUS, NULL, cordon_policy_set_cpus,
                                "write a number of vCPUs, e.g. 2" },
};

static int parse_limit(parse_ctx *c, json_t *v, const limit_desc *d) {
        uint64_t val;
        char shown[80];
        if (json_is_null(v)) /* no limit */
                return 0;
        if (json_is_integer(v)) {
                if (json_integer_value(v) < 0)
                        return jread_fail(&c->j, false, d->hint, "must not be negative");
                val = (uint64_t) json_integer_value(v);
        } else if (d->parse_text && json_is_string(v)) {
                if (d->parse_text(json_string_value(v), &val) < 0) {
                        const char *text = json_string_value(v);
                        return jread_fail(&c->j, false, d->hint, "'%s' is not a valid value",
                                          jread_shorten(text, shown, sizeof(shown)));
                }
        } else {
                return jread_fail(&c->j, false, d->hint, "expected %s, got %s",
                                  d->parse_text ? "an integer or a string" : "an integer",
                                  jread_type_name(v));
        }
        const char *why = policy_check_limit(d->which, val);
        if (why)
                return jread_fail(&c->j, false, d->hint, "%s", why);
        int r = d->set(c->layer, val);
        return r < 0 ? policy_json_fail_errno(c, r) : 0;
}

static int parse_timeout(parse_ctx *c, json_t *v, void *target) {
        return parse_limit(c, v, &limit_descs[POLICY_LIMIT_TIMEOUT_MS]);
}

static int parse_memory(parse_ctx *c, json_t *v, void *target) {
        return parse_limit(c, v, &limit_descs[POLICY_LIMIT_MEMORY_BYTES]);
}

static int parse_wildcard_names(parse_ctx *c, json_t *v, void *target) {
        return parse_limit(c, v, &limit_descs[POLICY_LIMIT_WILDCARD_NAMES]);
}

static int parse_pids(parse_ctx *c, json_t *v, void *target) {
        return parse_limit(c, v, &limit_descs[POLICY_LIMIT_PIDS]);
}

static int parse_cpu(parse_ctx *c, json_t *v, void *target) {
        return parse_limit(c, v, &limit_descs[POLICY_LIMIT_CPU_SECONDS]);
}

static int parse_cpus(parse_ctx *c, json_t *v, void *target) {
        return parse_limit(c, v, &limit_descs[POLICY_LIMIT_CPUS]);
}

static int parse_tmp_size(parse_ctx *c, json_t *v, void *target) {
        return parse_limit(c, v, &limit_descs[POLICY_LIMIT_TMP_BYTES]);
}

static int parse_shm_size(parse_ctx *c, json_t *v, void *target) {
        return parse_limit(c, v, &limit_descs[POLICY_LIMIT_SHM_BYTES]);
}

static const field limit_fields[] = {
        { "timeout", parse_timeout, NULL },
        { "memory", parse_memory, NULL },
        { "pids", parse_pids, NULL },
        { "cpu", parse_cpu, NULL },
        { "cpus", parse_cpus, NULL },
        { "tmpSize", parse_tmp_size, NULL },
        { "shmSize", parse_shm_size, NULL },
        { "wildcardNames", parse_wildcard_names, NULL },
};

int policy_json_limits(parse_ctx *c, json_t *v, void *target) {
        return policy_json_fields(c, v, limit_fields, ELEMENTSOF(limit_fields),
                            "\"limits\": {\"timeout\": \"30s\", \"memory\": \"1G\"}", NULL);
}

