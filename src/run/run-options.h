/* SPDX-License-Identifier: Apache-2.0 */
/* cordon_run()'s options as the library reads them, the same on every platform: each launcher
 * (src/linux/process-handle.c, src/seatbelt/launch-macos.c) has its own cordon_run(), and both
 * take the caller's struct through run_options_read() before anything else, so an options struct
 * the library cannot honour is refused identically everywhere (docs/design/library.md, "Options
 * that grow"). */
#pragma once

#include "cordon/cordon.h"

/* The caller's options as this library knows them (options_read_sized: a smaller struct gets
 * the defaults for the rest; an unset size, or a non-zero byte beyond what is known here, is
 * refused with CORDON_USAGE); the defaults (cordon_run_options_init) for a NULL `in`. */
int run_options_read(const cordon_run_options *in, cordon_run_options *out, cordon_error *err);
