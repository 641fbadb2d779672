/* SPDX-License-Identifier: Apache-2.0 */
/* The microvm guest's terminal (docs/design/microvm.md "Terminals"): when the EXEC frame asks
 * for one (VM_EXEC_TTY), the agent opens a PTY in the guest's own devpts and the command gets
 * its slave as stdin, stdout, stderr and controlling terminal, in a session of its own; the
 * master's output goes to the host as STDOUT frames, STDIN frames are written into it, RESIZE
 * frames set its size. The guest's line discipline is the command's terminal: echo, ^C as
 * SIGINT to the guest's foreground process group, job control. Part of the static guest agent;
 * the agent is one process (the stdin pump a fork of it), so the master is held here. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A devpts instance of its own at `root`/dev/pts (the command's /dev is a tmpfs the agent
 * made) and `root`/dev/ptmx linking to its ptmx: present for every command, a terminal or
 * not. 0, or -1 with errno. */
int guest_pty_mount(const char *root);

/* Opens the PTY (`root`/dev/pts/ptmx) with the size given, its slave owned by `uid`:`gid`
 * (the command's: it may reopen its terminal by name). The fds as run() wants them: fds[0]
 * the slave (the command's stdin), fds[1] the master (the stdin pump writes it), fds[2] the
 * master (the relay reads it), fds[3] the slave (stdout), fds[4] -1 (no separate stderr:
 * a terminal is one stream), fds[5] the slave (stderr); all close-on-exec. 0, or -1 with
 * errno. */
int guest_pty_open(const char *root, uint16_t rows, uint16_t cols, uid_t uid, gid_t gid,
                   int fds[6]);

/* In the command's process after its setsid(): the slave on fd 0 becomes its controlling
 * terminal. 0 when there is no PTY (pipes) or it worked, -1 with errno. */
int guest_pty_take(void);

/* The host's terminal went away (STDIN_EOF with a PTY: the VMM host's reads of it failed):
 * SIGHUP to the command, the session leader `cmd` (its group), as a terminal's hangup signals
 * its controlling process; when that exits, the kernel signals the foreground group. Without
 * it a guest shell would wait for input that can never come, and the run with it. A command
 * that ignores SIGHUP goes on (its output is dropped on the host). Nothing without a PTY
 * (pipes: the EOF closes the command's stdin). */
void guest_pty_hangup(pid_t cmd);
/* After an exec: its PTY is gone, the next exec starts without one (guest_pty_open() again). */
void guest_pty_forget(void);

/* A RESIZE frame's payload (u16 rows | u16 columns) set on the master: the kernel sends
 * SIGWINCH to the foreground process group. A payload of another size, or no PTY, is
 * ignored. */
void guest_pty_resize(const uint8_t *payload, size_t size);
