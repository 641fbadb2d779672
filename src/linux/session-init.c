/* SPDX-License-Identifier: Apache-2.0 */
/* The warm session's init loop and its wire format (session-init.h).
 *
 * Init runs inside the sandbox with every restriction already applied (Landlock, seccomp with the
 * supervisor attached, no capabilities, non-dumpable), so each command it forks inherits exactly
 * the confinement of a `cordon run` command. It keeps the ctl socket close-on-exec: commands never
 * hold it. It blocks SIGCHLD and reads it from a signalfd: a blocked signal is queued even for a
 * PID-namespace init, and the only other sender, a command, can at worst cause a spurious wake-up. */
#include "linux/session-init.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "linux/sandbox.h"
#include "linux/vm-host.h"

#define MSG_BUF (sizeof(session_msg) + SESSION_EXEC_MAX)

static int send_msg(int ctl, const session_msg *m) {
        ssize_t n;
        do
                n = send(ctl, m, sizeof(*m), MSG_NOSIGNAL);
        while (n < 0 && errno == EINTR);
        return n < 0 ? -errno : 0;
}

int session_read_msg(int ctl, session_msg *m) {
        ssize_t n;
        do
                n = recv(ctl, m, sizeof(*m), 0);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return -errno;
        if (n == 0)
                return 0;
        return n == (ssize_t) sizeof(*m) ? 1 : -EBADMSG;
}

int session_send_exec(int ctl, uint32_t exec_id, uint32_t flags, char *const argv[],
                      char *const env[], const char *cwd, const int fds[4]) {
        size_t len = sizeof(session_msg), argc = 0, envc = 0;
        for (; argv[argc]; argc++)
                len += strlen(argv[argc]) + 1;
        for (; env && env[envc]; envc++)
                len += strlen(env[envc]) + 1;
        len += strlen(cwd) + 1;
        if (len > MSG_BUF)
                return -E2BIG;
        char *buf = malloc(len);
        if (!buf)
                return -ENOMEM;
        session_msg h = { .type = SESSION_MSG_EXEC, .exec_id = exec_id, .argc = (uint32_t) argc,
                          .envc = (uint32_t) envc, .flags = flags };
        memcpy(buf, &h, sizeof(h));
        size_t o = sizeof(h);
        for (size_t i = 0; i < argc; o += strlen(argv[i]) + 1, i++)
                memcpy(buf + o, argv[i], strlen(argv[i]) + 1);
        for (size_t i = 0; i < envc; o += strlen(env[i]) + 1, i++)
                memcpy(buf + o, env[i], strlen(env[i]) + 1);
        memcpy(buf + o, cwd, strlen(cwd) + 1);
        union {
                struct cmsghdr h;
                char b[CMSG_SPACE(4 * sizeof(int))];
        } u;
        memset(&u, 0, sizeof(u));
        struct iovec iov = { .iov_base = buf, .iov_len = len };
        struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b,
                              .msg_controllen = sizeof(u.b) };
        struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(4 * sizeof(int));
        memcpy(CMSG_DATA(c), fds, 4 * sizeof(int));
        ssize_t n;
        do
                n = sendmsg(ctl, &msg, MSG_NOSIGNAL);
        while (n < 0 && errno == EINTR);
        free(buf);
        return n < 0 ? -errno : 0;
}

int session_send_simple(int ctl, session_msg_type type) {
        session_msg m = { .type = type };
        return send_msg(ctl, &m);
}

int session_send_kill(int ctl, uint32_t exec_id) {
        session_msg m = { .type = SESSION_MSG_KILL, .exec_id = exec_id };
        return send_msg(ctl, &m);
}

int session_send_signal(int ctl, uint32_t exec_id, int sig) {
        session_msg m = { .type = SESSION_MSG_SIGNAL, .exec_id = exec_id, .status = sig };
        return send_msg(ctl, &m);
}

/* ---- init's side ----------------------------------------------------------------------------- */

typedef struct running {
        pid_t pid;
        uint32_t exec_id;
        int clean_fd;     /* a microvm exec's (vm_host_session_exec_prepare), else -1 */
} running;

/* Splits the strings of an EXEC record into argv, env and cwd (pointers into buf); false when the
 * record is malformed (counts that do not match the NUL-terminated strings present). */
static bool unpack(char *buf, size_t len, const session_msg *h, char **argv, char **env,
                   char **cwd) {
        size_t o = sizeof(*h), need = (size_t) h->argc + h->envc + 1;
        char **slot[] = { argv, env };
        uint32_t count[] = { h->argc, h->envc };
        for (size_t k = 0; k < 2; k++) {
                for (uint32_t i = 0; i < count[k]; i++) {
                        char *end = memchr(buf + o, '\0', len - o);
                        if (!end)
                                return false;
                        slot[k][i] = buf + o;
                        o = (size_t) (end - buf) + 1;
                }
                slot[k][count[k]] = NULL;
        }
        char *end = o < len ? memchr(buf + o, '\0', len - o) : NULL;
        if (!end || h->argc == 0 || need > SESSION_EXEC_MAX)
                return false;
        *cwd = buf + o;
        return true;
}

/* The command's process: fds 0-2 from the request, then exactly what a run's command does. */
static _noreturn_ void exec_child(const plan *p, char **argv, char **env, const char *cwd,
                                  const int fds[4], bool tty) {
        for (int i = 0; i < 3; i++)
                if (dup2(fds[i], i) < 0)
                        _exit(125);
        plan q = *p; /* a shallow copy: only env and workdir differ per exec */
        q.env.v = env;
        q.env.n = 0;
        while (env[q.env.n])
                q.env.n++;
        q.workdir = (char *) cwd;
        q.tty = tty;
        sandbox_unconfined_main(&q, argv, fds[3]);
}

static void start_exec(const plan *p, int ctl, char *buf, size_t len, const int fds[4],
                       running *run, size_t *n_run) {
        session_msg h;
        memcpy(&h, buf, sizeof(h));
        char **argv = calloc((size_t) h.argc + 1, sizeof(char *));
        char **env = calloc((size_t) h.envc + 1, sizeof(char *));
        char *cwd = NULL;
        pid_t pid = -1;
        /* A microvm session's VM runs VM_SESSION_EXECS_MAX at once (one channel port each);
         * the host refuses one more before it gets here (session-host.c). */
        size_t max = p->vm ? VM_SESSION_EXECS_MAX : SESSION_EXECS_MAX;
        int clean_fd = -1;
        if (argv && env && *n_run < max && unpack(buf, len, &h, argv, env, &cwd) &&
            cwd[0] == '/' && (!p->vm || (clean_fd = vm_host_session_exec_prepare()) >= 0)) {
                pid = fork();
                if (pid == 0)
                        exec_child(p, argv, env, cwd, fds, h.flags & SESSION_EXEC_TTY);
                if (p->vm)
                        vm_host_session_exec_forked();
        }
        if (pid < 0 && clean_fd >= 0)
                (void) vm_host_session_exec_clean(clean_fd); /* frees its port */
        free(argv);
        free(env);
        session_msg m = { .type = pid > 0 ? SESSION_MSG_STARTED : SESSION_MSG_EXITED,
                          .exec_id = h.exec_id, .pid = pid,
                          .status = pid > 0 ? 0 : (125 << 8) };
        if (pid > 0)
                run[(*n_run)++] = (running){ .pid = pid, .exec_id = h.exec_id,
                                             .clean_fd = clean_fd };
        (void) send_msg(ctl, &m);
}

/* Reaps every exited child: tracked commands are reported, orphans (daemons the commands left)
 * are simply reaped. */
static void reap(int ctl, pid_t vmm, running *run, size_t *n_run) {
        for (;;) {
                int st;
                pid_t w = waitpid(-1, &st, WNOHANG);
                if (w <= 0)
                        return;
                if (w == vmm)
                        _exit(0); /* the session's VM is gone: so is the session */
                for (size_t i = 0; i < *n_run; i++)
                        if (run[i].pid == w) {
                                /* A microvm exec that left the channel mid-exec: the session
                                 * ends, its execs fail (the next one would read the rest of
                                 * this one); no exit is reported for it, it did not end. */
                                if (run[i].clean_fd >= 0 &&
                                    !vm_host_session_exec_clean(run[i].clean_fd))
                                        _exit(0);
                                session_msg m = { .type = SESSION_MSG_EXITED,
                                                  .exec_id = run[i].exec_id, .pid = w,
                                                  .status = st };
                                (void) send_msg(ctl, &m);
                                run[i] = run[--*n_run];
                                break;
                        }
        }
}

/* An exec's kill: its process group. In a microvm session the process is the VM's side of the
 * exec (vm-host.c): SIGKILL would end it and leave the guest command running (and the channel
 * mid-frame for the next exec), so it is asked to kill the command in the guest, and the exec
 * ends when that command has. */
static void kill_exec(const plan *p, pid_t pid) {
        if (p->vm) {
                (void) kill(pid, vm_host_kill_signal());
                return;
        }
        (void) kill(-pid, SIGKILL);
        (void) kill(pid, SIGKILL);
}

/* One EXEC record with its four fds; false on EOF or error (the host is gone). */
static bool serve_one(const plan *p, int ctl, char *buf, running *run, size_t *n_run) {
        int fds[4] = { -1, -1, -1, -1 };
        union {
                struct cmsghdr h;
                char b[CMSG_SPACE(4 * sizeof(int))];
        } u;
        struct iovec iov = { .iov_base = buf, .iov_len = MSG_BUF };
        struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b,
                              .msg_controllen = sizeof(u.b) };
        ssize_t n = recvmsg(ctl, &msg, MSG_CMSG_CLOEXEC);
        if (n < 0 && errno == EINTR)
                return true;
        if (n <= 0)
                return false;
        struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
        size_t nfds = 0;
        if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
                nfds = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                memcpy(fds, CMSG_DATA(c), (nfds > 4 ? 4 : nfds) * sizeof(int));
        }
        session_msg h;
        if ((size_t) n >= sizeof(h) && !(msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
                memcpy(&h, buf, sizeof(h));
                if (h.type == SESSION_MSG_EXEC && nfds == 4)
                        start_exec(p, ctl, buf, (size_t) n, fds, run, n_run);
                /* The command leads its own process group (setsid): the group is its tree,
                 * minus what deliberately left it; those die with the session. */
                /* Suspend: kill(-1) from a PID namespace's init reaches every other process of
                 * the namespace and nothing outside it; SIGSTOP cannot be caught or blocked,
                 * and every process is stopped, so none is left to SIGCONT the others. */
                if (h.type == SESSION_MSG_FREEZE || h.type == SESSION_MSG_THAW)
                        (void) kill(-1, h.type == SESSION_MSG_FREEZE ? SIGSTOP : SIGCONT);
                for (size_t i = 0; h.type == SESSION_MSG_KILL && i < *n_run; i++)
                        if (run[i].exec_id == h.exec_id)
                                kill_exec(p, run[i].pid);
                /* A tracked pid is this init's unreaped child or a group it leads: no reuse. */
                for (size_t i = 0; h.type == SESSION_MSG_SIGNAL && i < *n_run; i++)
                        if (run[i].exec_id == h.exec_id && h.status > 0 && h.status < _NSIG)
                                (void) kill(-run[i].pid, h.status);
        }
        for (size_t i = 0; i < 4; i++)
                if (fds[i] >= 0)
                        (void) close(fds[i]);
        return true;
}

_noreturn_ void session_init_loop(const plan *p, int ctl, pid_t vmm) {
        sigset_t chld;
        sigemptyset(&chld);
        sigaddset(&chld, SIGCHLD);
        (void) sigprocmask(SIG_BLOCK, &chld, NULL);
        /* A microvm exec's forwarded signals and its kill signal stay blocked from its fork
         * until its handlers are in place (vm-host.c: start_pump): delivered before, their
         * default action would end the exec's process with the guest command running and the
         * channel mid-exec. */
        sigset_t vm_sigs;
        vm_host_exec_signals(&vm_sigs);
        if (p->vm)
                (void) sigprocmask(SIG_BLOCK, &vm_sigs, NULL);
        int sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
        char *buf = malloc(MSG_BUF);
        running run[SESSION_EXECS_MAX];
        size_t n_run = 0;
        if (sfd < 0 || !buf)
                _exit(125);
        for (;;) {
                struct pollfd pfd[2] = { { .fd = ctl, .events = POLLIN }, { .fd = sfd, .events = POLLIN } };
                if (poll(pfd, 2, -1) < 0 && errno != EINTR)
                        _exit(125);
                if (pfd[1].revents & POLLIN) {
                        struct signalfd_siginfo si;
                        while (read(sfd, &si, sizeof(si)) == sizeof(si))
                                ;
                }
                reap(ctl, vmm, run, &n_run);
                if ((pfd[0].revents & (POLLIN | POLLHUP | POLLERR)) &&
                    !serve_one(p, ctl, buf, run, &n_run))
                        _exit(0); /* the session is over: the PID namespace dies with init */
        }
}
