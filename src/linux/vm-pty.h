/* SPDX-License-Identifier: Apache-2.0 */
/* The microvm backend's terminal, host half (docs/design/microvm.md "Terminals"): in the VMM
 * host, when the run has a terminal — stdin and stdout are terminals, or CORDON_SPAWN_TTY
 * (plan.tty) — the guest command gets a PTY of the guest's own (guest-pty.h) and this side
 * only passes bytes: the caller's terminal is put in raw mode (no echo, no line editing, no
 * signal characters, no output processing), so ^C reaches the guest's line discipline as the
 * byte 0x03 instead of raising SIGINT on the host, and the guest's output is written through
 * unchanged. Its modes are restored when the VMM host ends (vm_pty_restore). The terminal's
 * size goes with the EXEC frame, and a change of it as a RESIZE frame. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "linux/vm-frame.h"
#include "plan/plan.h"

/* Decides whether the run has a terminal; if so saves its modes, makes it raw, and fills
 * *size with its size: 1 with a terminal, 0 without, -1 with errno when its modes cannot be
 * read or set (the run fails then, rather than go on with a terminal whose ^C would end the
 * run on the host and whose echo would double every key). */
int vm_pty_begin(const plan *p, vm_exec_tty *size);

/* The terminal's modes as vm_pty_begin found them; idempotent, async-signal-safe (a fail()
 * or the end of the run calls it). Nothing without a terminal. */
void vm_pty_restore(void);

/* In the stdin pump, before its first read of the terminal: when the terminal is the VMM
 * host's controlling terminal (CORDON_SPAWN_TTY: a PTY cordond or a library caller opened),
 * the pump's process group becomes its foreground group, so reading it raises no SIGTTIN and
 * a size change set on its master raises SIGWINCH in the pump. */
void vm_pty_pump_foreground(void);

/* The terminal's size now, in *out as a RESIZE payload, when it differs from the size last
 * sent (the EXEC frame's, then each RESIZE's). true when a frame is due. */
bool vm_pty_resized(uint8_t out[4]);
