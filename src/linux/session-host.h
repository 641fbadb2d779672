/* SPDX-License-Identifier: Apache-2.0 */
/* The warm session host (session-host.c): one process per warm session, forked by the session
 * handle (session-handle.c), the only one that speaks its lines. */
#pragma once

#include "cordon/cordon.h"
#include "util/util.h"

/* Builds the session's sandbox from the resolved policy `pol` on `backend` (native for AUTO,
 * or microvm: session-init.c boots the VM) and serves exec requests arriving on
 * `link` until it closes. Never returns. */
_noreturn_ void session_host_main(const cordon_policy *pol, cordon_backend backend,
                                  const char *session_id, const char *home, const char *workdir,
                                  int link);
