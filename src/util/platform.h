/* SPDX-License-Identifier: Apache-2.0 */
/* What the platform's backend provides besides the public API: src/linux/ on Linux, src/seatbelt/
 * elsewhere (exactly one of them is linked, like their cordon_run() and cordon_probe_*()).
 * Declared here, below both, so that the platform-neutral layers that ask (src/settings/) need not
 * know which platform they are built for. */
#pragma once

#include "cordon/cordon.h"

/* The backend CORDON_BACKEND_AUTO resolves to on the host `probe` describes (a cordon_backend
 * value), or -1 when no confining backend is usable there: auto never steps down to "none"
 * (docs/design/backends.md). */
int probe_auto_backend(const cordon_probe *probe);
