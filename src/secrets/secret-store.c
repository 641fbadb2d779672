/* SPDX-License-Identifier: Apache-2.0 */
/* Which store a secret is read from (secret-store.h). */
#include "secrets/secret-store.h"

int secret_store_get(const char *home, const char *name, char **value, size_t *len,
                     cordon_error *err) {
        return secret_file_get(home, name, value, len, err);
}
