/* SPDX-License-Identifier: Apache-2.0 */
/* secret-get NAME: the value secret_store_get() returns for NAME under $HOME, on stdout; or
 * "error: CODE: message" on stderr and exit 1. The launcher's one way to read a secret, driven
 * by the shell tests (test_secret_service.sh: the Secret Service path). */
#include <stdio.h>
#include <stdlib.h>

#include "secrets/secret-store.h"

int main(int argc, char **argv) {
        if (argc != 2) {
                fputs("usage: secret-get NAME\n", stderr);
                return 2;
        }
        char *value = NULL;
        size_t len = 0;
        cordon_error err = { 0 };
        if (secret_store_get(getenv("HOME"), argv[1], &value, &len, &err) < 0) {
                fprintf(stderr, "error: %s: %s\n", cordon_code_name(err.code), err.message);
                return 1;
        }
        int ok = fwrite(value, 1, len, stdout) == len;
        secret_value_free(value, len);
        return ok && fflush(stdout) == 0 ? 0 : 1;
}
