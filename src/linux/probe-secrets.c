/* SPDX-License-Identifier: Apache-2.0 */
/* The secret store in `cordon probe` (probe.h, docs/design/secrets.md "Which store"): which one
 * cordon uses here and why, and what would let it use the user's keyring. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linux/probe.h"
#include "secrets/secret-store.h"

void probe_secrets_evaluate(int r, bool service, bool bus, const char *why, probe_secrets *ret) {
        *ret = (probe_secrets) { .usable = r >= 0, .service = r >= 0 && service };
        if (r < 0) {
                (void) snprintf(ret->detail, sizeof(ret->detail), "none usable (%s)", why);
                ret->requires_install = strstr(why, "libsystemd") != NULL;
                (void) snprintf(ret->hint, sizeof(ret->hint), "%s",
                                ret->requires_install
                                        ? "install libsystemd0, or unset "
                                          "DBUS_SESSION_BUS_ADDRESS to use the file store"
                                        : "make the session bus answer, or unset "
                                          "DBUS_SESSION_BUS_ADDRESS to use the file store");
                return;
        }
        if (service) {
                (void) snprintf(ret->detail, sizeof(ret->detail), "Secret Service (%s)", why);
                return;
        }
        (void) snprintf(ret->detail, sizeof(ret->detail), "file store ~/%s (%s)", SECRET_FILE_DIR,
                        why);
        /* A session bus with no keyring on it: a desktop without one, or a keyring not
         * installed. The file store works, but the keyring is where secrets belong. */
        if (bus) {
                ret->requires_install = true;
                (void) snprintf(ret->hint, sizeof(ret->hint),
                                "install a Secret Service (gnome-keyring, or KeePassXC with its "
                                "Secret Service integration) to keep secrets in a keyring");
        }
}

void probe_secrets_collect(probe_secrets *ret) {
        secret_backend b = SECRET_BACKEND_FILE;
        char why[256] = "";
        int r = secret_store_which(&b, why, sizeof(why));
        const char *addr = getenv("DBUS_SESSION_BUS_ADDRESS");
        probe_secrets_evaluate(r, b == SECRET_BACKEND_SERVICE, addr && addr[0], why, ret);
}
