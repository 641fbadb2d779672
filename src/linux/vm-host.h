/* SPDX-License-Identifier: Apache-2.0 */
/* The microvm backend's host half inside the native sandbox (docs/design/microvm.md
 * "Confinement"): the sandbox's command process, instead of executing the command, writes the
 * guest's initramfs into a memfd, starts the VMM with the plan's exports (the root read-only,
 * each writable root read-write, slirp's network when the plan has one), sends the EXEC frame,
 * relays stdin and the signals a caller sends the command to the guest and the guest's output
 * frames to its own stdout and stderr through the reader of untrusted frames (vm-frame.h), and
 * ends as the guest command ended; with a terminal, the guest's PTY does the terminal's work and
 * the caller's terminal only passes bytes (vm-pty.h). Everything it
 * does is confined like a native command: the VMM's files, sockets and processes are the
 * sandbox's, so a guest (or VMM) that misbehaves is still in the native sandbox. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <signal.h>
#include <sys/types.h>

#include "plan/plan.h"
#include "util/util.h"

/* Execs a warm microvm session runs at once: one channel port each (docs/design/microvm.md
 * "Channels"); the session host refuses one more while that many run. */
#define VM_SESSION_EXECS_MAX 8u

/* What the launcher found for the run (launch-backends.c: the probe's VMM and kernel, the
 * accelerator the policy chose), copied into the sandbox by the fork. */
typedef struct vm_host {
        char vmm[256];
        char kernel[256];
        char modules[256];
        bool tcg;                /* microvm.accel "tcg": software emulation */
} vm_host;

/* The embedded guest agent (src/linux/meson.build: guest-agent-blob.S). */
extern const unsigned char vm_guest_agent_start[], vm_guest_agent_end[];

/* In the sandbox's command process, after report_command_started(): never returns. A failure
 * before the guest command's exit (no VMM, a protocol violation, the VM gone without the exit
 * frame) is one SANDBOX_UNAVAILABLE report on `report_fd` and exit 125. */
_noreturn_ void vm_host_main(const plan *p, const vm_host *vm, char *const argv[],
                             int report_fd);

/* A warm session's VM (docs/design/microvm.md "Lifecycle"), in the session's init: boots the VMM
 * as init's child and waits for the guest agent's READY frame; returns the VMM's pid (its end
 * is the session's). A failure is one SANDBOX_UNAVAILABLE report on `report_fd` and exit 125. */
pid_t vm_host_session_boot(const plan *p, const vm_host *vm, int report_fd);
/* In an exec's command process forked by that init: runs `argv` in the booted VM on the port
 * _prepare() gave it (execs on other ports run alongside) and ends as the guest command
 * ended. */
_noreturn_ void vm_host_session_exec(const plan *p, char *const argv[], int report_fd);
/* The signal init sends an exec's process for its kill (SESSION_MSG_KILL): forwarded into the
 * guest as SIGKILL of the command's process group, where a SIGKILL here would leave it running. */
int vm_host_kill_signal(void);
/* The signals an exec's process handles once its pump runs (the forwarded ones, the kill): a
 * microvm session's init keeps them blocked, so that they wait for the handlers. */
void vm_host_exec_signals(sigset_t *set);
/* Whether an exec left its port at a frame's boundary, for init to tell before the port's next
 * exec: before the exec's fork, _prepare() takes a free port and makes a pipe (the read end
 * returned, or -errno: -EBUSY with every port taken); after it,
 * _forked() closes init's write end; the exec's VM side writes one byte to it once its END
 * frame is sent; once the exec's process is reaped (or its fork failed), _clean() reads (and
 * closes) the read end and frees the port.
 * An exec that ended without the byte (killed outright, mid-exec) left the channel mid-frame:
 * the session must end rather than hand the next exec the rest of this one. */
int vm_host_session_exec_prepare(void);
void vm_host_session_exec_forked(void);
bool vm_host_session_exec_clean(int fd);
