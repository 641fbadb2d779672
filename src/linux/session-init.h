/* SPDX-License-Identifier: Apache-2.0 */
/* Warm sessions (cordond, docs/design/daemon.md): the sandbox's init stays up and starts each
 * exec's command on request, so an exec pays only for its own fork and exec — the namespaces,
 * mounts, Landlock domain, seccomp filter, creation-rule supervisor and egress proxy are the
 * session's.
 *
 * The session host (outside) and init (inside) talk over a SOCK_SEQPACKET pair ("ctl"): one
 * record per message, fds attached with SCM_RIGHTS. */
#pragma once

#include <stdint.h>
#include <sys/types.h>

#include "plan/plan.h"

#define SESSION_EXEC_MAX (256 * 1024) /* bytes of argv + env + cwd in one exec request */
#define SESSION_EXECS_MAX 64          /* commands running at once in one session */

typedef enum session_msg_type {
        SESSION_MSG_EXEC = 1,   /* host → init: run a command; fds: stdin, stdout, stderr, report */
        SESSION_MSG_STARTED,    /* init → host: exec_id forked as pid */
        SESSION_MSG_EXITED,     /* init → host: exec_id ended with wait status `status` */
        SESSION_MSG_KILL,       /* host → init: kill exec_id's process group (its client left) */
        SESSION_MSG_FREEZE,     /* host → init: stop every process of the session */
        SESSION_MSG_THAW,       /* host → init: let them run again */
        SESSION_MSG_SIGNAL,     /* host → init: signal `status` to exec_id's process group */
} session_msg_type;

typedef struct session_msg {
        uint32_t type;
        uint32_t exec_id;
        int32_t pid;
        int32_t status;
        /* SESSION_MSG_EXEC: counts of the NUL-terminated strings that follow the header: argc
         * arguments, envc "NAME=value" entries, then the working directory. */
        uint32_t argc, envc;
        uint32_t flags;         /* SESSION_EXEC_TTY */
} session_msg;

#define SESSION_EXEC_TTY 1u     /* fd 0 is a PTY: make it the controlling terminal */

/* Init's loop (runs confined, as PID 1 of the sandbox): serves exec requests on ctl until the host
 * closes it, then exits — which ends the PID namespace and kills every process in it. `vmm`: a
 * microvm session's VMM (vm-host.h: vm_host_session_boot), else -1; its end ends the session, and
 * the VM runs up to VM_SESSION_EXECS_MAX execs at once (vm-host.h). */
_noreturn_ void session_init_loop(const plan *p, int ctl, pid_t vmm);

/* Host side: sends one exec request. fds[4] = stdin, stdout, stderr, the exec's report channel.
 * Returns 0 or -errno (-E2BIG when argv + env + cwd exceed SESSION_EXEC_MAX). */
int session_send_exec(int ctl, uint32_t exec_id, uint32_t flags, char *const argv[],
                      char *const env[], const char *cwd, const int fds[4]);
/* Host side: asks init to kill an exec's process group. */
int session_send_kill(int ctl, uint32_t exec_id);
/* Host side: asks init to deliver `sig` to an exec's process group (cordon_process_signal). */
int session_send_signal(int ctl, uint32_t exec_id, int sig);
/* Host side: SESSION_MSG_FREEZE or SESSION_MSG_THAW. */
int session_send_simple(int ctl, session_msg_type type);
/* Host side: reads one STARTED/EXITED message; 1 on a message, 0 on EOF, -errno. */
int session_read_msg(int ctl, session_msg *m);
