/* SPDX-License-Identifier: Apache-2.0 */
/* session.terminal in the session host (session-host.c): a PTY with a shell, inside the
 * session's sandbox through init (backend native) or the user's own shell on the host (none). */
#include "linux/session-host-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "linux/process.h"
#include "linux/session-init.h"
#include "report/report.h"

/* ---- terminals (session.terminal) ---------------------------------------------------------- */

void host_local_exited(host_exec *x) {
        siginfo_t si = { 0 };
        if (waitid(P_PIDFD, (id_t) x->pidfd, &si, WEXITED | WNOHANG) < 0 || si.si_pid == 0)
                return;
        x->exited = true;
        x->status = si.si_code == CLD_EXITED ? W_EXITCODE(si.si_status, 0) : si.si_status & 0x7f;
        (void) close(x->pidfd);
        x->pidfd = -1;
}

/* Backend none: the daemon user's own shell on the host, in a PTY, unconfined — what an IDE
 * terminal is; the client asked for exactly that (docs/design/daemon.md), and the events say so. */
static pid_t spawn_local(char **argv, int slave, const char *cwd) {
        pid_t pid = fork();
        if (pid != 0)
                return pid;
        sigset_t none;
        sigemptyset(&none);
        (void) sigprocmask(SIG_SETMASK, &none, NULL);
        (void) signal(SIGPIPE, SIG_DFL);
        if (setsid() < 0 || ioctl(slave, TIOCSCTTY, 0) < 0)
                _exit(125);
        for (int i = 0; i < 3; i++)
                if (dup2(slave, i) < 0)
                        _exit(125);
        /* The shell must not inherit the daemon's sockets and sessions. */
        if (process_close_fds_keep(NULL, 0) < 0)
                _exit(125);
        if (chdir(cwd) < 0)
                (void) !chdir("/");
        (void) setenv("TERM", "xterm-256color", 0);
        execvp(argv[0], argv);
        _exit(127);
}

void host_start_terminal(host *h, uint64_t id, const char *json) {
        host_exec *x = calloc(1, sizeof(*x));
        if (!x)
                return;
        *x = (host_exec){ .h = h, .id = id, .out = -1, .err = -1, .rpt = -1, .pidfd = -1,
                          .terminal = true };
        cordon_run_options opts = { .on_event = host_on_event, .event_userdata = x };
        events_init(&x->ev, &opts, h->session_id);
        json_t *o = json_loads(json, 0, NULL);
        bool native = json_is_true(json_object_get(o, "native"));
        events_starting(&x->ev, native ? CORDON_BACKEND_NATIVE : CORDON_BACKEND_NONE);
        struct winsize ws = { .ws_col = (unsigned short) json_integer_value(json_object_get(o, "cols")),
                              .ws_row = (unsigned short) json_integer_value(json_object_get(o, "rows")) };
        json_t *aj = json_object_get(o, "argv");
        size_t argc = json_array_size(aj);
        static char sh[] = "/bin/sh", dash_i[] = "-i";
        char *def[] = { sh, dash_i, NULL };
        char **argv = argc ? calloc(argc + 1, sizeof(char *)) : def;
        for (size_t i = 0; argc && argv && i < argc; i++)
                argv[i] = (char *) json_string_value(json_array_get(aj, i));
        int m = -1, s = -1, pr[2] = { -1, -1 };
        int r = argv && h->n_execs < HOST_EXECS_MAX && openpty(&m, &s, NULL, NULL, &ws) == 0 ? 0
                                                                                        : -EIO;
        strv env = { 0 };
        if (r == 0 && native) {
                r = report_channel(pr) == 0 && strv_extend(&env, &h->p->env) >= 0 &&
                                    strv_push(&env, "TERM=xterm-256color") >= 0
                            ? session_send_exec(h->ctl, (uint32_t) id, SESSION_EXEC_TTY, argv,
                                                env.v, h->p->workdir,
                                                (int[]){ s, s, s, pr[1] })
                            : -EIO;
        } else if (r == 0) {
                x->local_pid = spawn_local(argv, s, h->p->workdir);
                r = x->local_pid > 0 ? 0 : -errno;
                if (r == 0 && (x->pidfd = (int) syscall(SYS_pidfd_open, x->local_pid, 0)) < 0)
                        r = -errno;
        }
        if (s >= 0)
                (void) close(s);
        if (pr[1] >= 0)
                (void) close(pr[1]);
        x->out = m;
        x->rpt = pr[0];
        if (argv != def)
                free(argv);
        strv_done(&env);
        json_decref(o);
        if (r < 0) {
                host_fail_exec(h, x, -r, "cannot open the terminal");
                return;
        }
        (void) fcntl(m, F_SETFL, O_NONBLOCK);
        (void) fcntl(m, F_SETFD, FD_CLOEXEC);
        events_ready(&x->ev, native ? CORDON_BACKEND_NATIVE : CORDON_BACKEND_NONE);
        h->execs[h->n_execs++] = x;
}

/* "I<id> <json string>": keyboard input; "Z<id> <cols> <rows>": a resize. */
void host_terminal_io(host *h, char kind, uint64_t id, const char *arg) {
        host_exec *x = host_find_exec(h, id);
        if (!x || !x->terminal || x->out < 0)
                return;
        if (kind == 'Z') {
                unsigned cols = 0, rows = 0;
                if (sscanf(arg, "%u %u", &cols, &rows) == 2 && cols && rows && cols <= 1000 &&
                    rows <= 1000) {
                        struct winsize ws = { .ws_col = (unsigned short) cols,
                                              .ws_row = (unsigned short) rows };
                        (void) ioctl(x->out, TIOCSWINSZ, &ws);
                }
                return;
        }
        json_t *js = json_loads(arg, JSON_DECODE_ANY, NULL);
        const char *data = json_string_value(js);
        size_t len = data ? json_string_length(js) : 0, off = 0;
        for (int tries = 0; off < len && tries < 100; tries++) {
                ssize_t w = write(x->out, data + off, len - off);
                if (w > 0) {
                        off += (size_t) w;
                        continue;
                }
                if (w < 0 && errno != EAGAIN && errno != EINTR)
                        break;
                struct pollfd pfd = { .fd = x->out, .events = POLLOUT };
                (void) poll(&pfd, 1, 10);
        }
        json_decref(js);
}
