/* SPDX-License-Identifier: Apache-2.0 */
/* Names of public enums, and the small public parsers and getters shared by the CLI, JSON output
 * and the daemon. */
#include "util/util.h"

#include "config.h"

static const char *const backend_names[] = {
        [CORDON_BACKEND_AUTO] = "auto",
        [CORDON_BACKEND_NATIVE] = "native",
        [CORDON_BACKEND_LANDLOCK] = "landlock",
        [CORDON_BACKEND_MICROVM] = "microvm",
        [CORDON_BACKEND_NONE] = "none",
};

const char *cordon_backend_to_string(cordon_backend backend) {
        /* docs/design/backends.md: an absent or unknown stored name reads as "none" for display. */
        if ((unsigned) backend >= ELEMENTSOF(backend_names))
                return "none";
        return backend_names[backend];
}

int cordon_backend_from_string(const char *name, cordon_backend *ret) {
        if (!name)
                return -EINVAL;
        for (size_t i = 0; i < ELEMENTSOF(backend_names); i++)
                if (strcmp(name, backend_names[i]) == 0) {
                        *ret = (cordon_backend) i;
                        return 0;
                }
        /* docs/design/backends.md: the stored value "docker" maps to native. */
        if (strcmp(name, "docker") == 0) {
                *ret = CORDON_BACKEND_NATIVE;
                return 0;
        }
        return -EINVAL; /* unknown on the command line is a usage error */
}

const char *cordon_version(void) {
        return CORDON_VERSION;
}

int cordon_parse_size(const char *s, uint64_t *ret) {
        return parse_size(s, ret);
}

int cordon_parse_duration_ms(const char *s, uint64_t *ret) {
        return parse_duration_ms(s, ret);
}
