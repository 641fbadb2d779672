/* SPDX-License-Identifier: Apache-2.0 */
/* The microvm guest agent (docs/design/microvm.md "The guest"): PID 1 of the initramfs cordon
 * writes (vm-initramfs.c), a static program that makes syscalls only. It loads the modules in
 * /m/order, reads /cordon.conf (the launcher's: the caller's uid and gid, the writable roots'
 * 9p tags and paths, whether there is a network), mounts the host's root (9p tag "root",
 * read-only: the VMM exports the native sandbox's view of it, so secrets are not there to
 * mount) and each writable root read-write at its own path, brings up the network, opens the
 * channel ports (docs/design/microvm.md "Channels"), and then a server per port sends READY
 * and serves that port's EXEC frames one after the other (the ports' at once): each command runs
 * chrooted into that root as the caller's uid and gid, with no capability and the native
 * sandbox's syscall filter (guest-rules.h), its stdin and signals taken from frames
 * and its output relayed as frames (on a PTY of the guest's own when the request asks for a
 * terminal, guest-pty.h), then the EXIT frame; the host's END frame closes the exec, and the
 * next EXEC may follow (a one-shot run's host kills the VM after the first). Every failure is
 * one ERROR frame (when the channel is open) and a power-off: the host then reports
 * SANDBOX_UNAVAILABLE. It trusts the host (the VMM is the host's), but bounds what it reads all
 * the same. */
#include <errno.h>
#include <grp.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "linux/guest-net.h"
#include "linux/guest-pty.h"
#include "linux/guest-rules.h"
#include "linux/vm-frame.h"

#define ROOT "/root"
#define PORT "/dev/vport0p%u" /* the virtio-serial device's port K: cordon.ctlK */
#define PORTS_MAX 30u           /* ports 1..30: the device's 31 less the console's 0 */

static int chan = -1;
/* The exec being served (its EXEC frame's id): every frame of it carries the id; the agent's
 * own frames (READY, ERROR) carry VM_FRAME_AGENT. */
static uint32_t cur_exec = VM_FRAME_AGENT;

/* /cordon.conf, written by the launcher (vm-host.c): "uid N", "gid N", "net on", "ports N"
 * (the channel ports, one exec at a time each), and one "mount TAG PATH" per writable root, in
 * mount order. */
#define MAX_MOUNTS 64
static struct {
        uid_t uid;
        gid_t gid;
        bool net;
        unsigned ports;
        size_t n_mounts;
        char *tag[MAX_MOUNTS], *path[MAX_MOUNTS];
} conf;

static void put(const void *data, size_t size) {
        const char *p = data;
        while (chan >= 0 && size > 0) {
                ssize_t n = write(chan, p, size);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return;
                p += n;
                size -= (size_t) n;
        }
}

static void send_frame(vm_frame_type type, const void *data, size_t size) {
        uint8_t h[VM_FRAME_HEADER];
        bool agent = type == VM_FRAME_READY || type == VM_FRAME_ERROR;
        vm_frame_header(h, type, agent ? VM_FRAME_AGENT : cur_exec, size);
        put(h, sizeof(h));
        put(data, size);
}

__attribute__((noreturn)) static void power_off(void) {
        sync();
        (void) reboot(RB_POWER_OFF);
        for (;;)
                pause();
}

__attribute__((noreturn, format(printf, 1, 2))) static void die(const char *fmt, ...) {
        char msg[VM_FRAME_MAX_ERROR];
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        size_t len = n < 0 ? 0 : (size_t) n < sizeof(msg) ? (size_t) n : sizeof(msg) - 1;
        for (size_t i = 0; i < len; i++)
                if (msg[i] < 0x20 || msg[i] > 0x7e)
                        msg[i] = '?';
        if (len > 0)
                send_frame(VM_FRAME_ERROR, msg, len);
        power_off();
}

static void load_modules(void) {
        FILE *f = fopen("/m/order", "re");
        char name[128];
        while (f && fgets(name, sizeof(name), f)) {
                name[strcspn(name, "\n")] = '\0';
                char path[160];
                (void) snprintf(path, sizeof(path), "/m/%s", name);
                int fd = open(path, O_RDONLY | O_CLOEXEC);
                if (fd < 0 || (syscall(SYS_finit_module, fd, "", 0) < 0 && errno != EEXIST))
                        die("module %s: %s", name, strerror(errno));
                (void) close(fd);
        }
        if (f)
                (void) fclose(f);
}

/* The port appears once the host's virtio-serial device has announced it, after the module
 * bound: waited for, at most 30 s (a TCG guest on a loaded host is slow). */
static void open_channel(unsigned port) {
        char path[32];
        (void) snprintf(path, sizeof(path), PORT, port);
        for (int i = 0; i < 3000 && chan < 0; i++) {
                chan = open(path, O_RDWR | O_CLOEXEC | O_NOCTTY);
                if (chan < 0)
                        (void) nanosleep(&(struct timespec) { .tv_nsec = 10000000 }, NULL);
        }
        if (chan < 0)
                power_off(); /* no channel: nothing to report on; the host sees no exit frame */
}

static void read_conf(void) {
        FILE *f = fopen("/cordon.conf", "re");
        char line[4200];
        if (!f)
                die("/cordon.conf: %s", strerror(errno));
        while (fgets(line, sizeof(line), f)) {
                line[strcspn(line, "\n")] = '\0';
                char *sp = strchr(line, ' ');
                if (!sp)
                        die("/cordon.conf: %s", line);
                *sp++ = '\0';
                if (strcmp(line, "uid") == 0)
                        conf.uid = (uid_t) strtoul(sp, NULL, 10);
                else if (strcmp(line, "gid") == 0)
                        conf.gid = (gid_t) strtoul(sp, NULL, 10);
                else if (strcmp(line, "net") == 0)
                        conf.net = strcmp(sp, "on") == 0;
                else if (strcmp(line, "ports") == 0)
                        conf.ports = (unsigned) strtoul(sp, NULL, 10);
                else if (strcmp(line, "mount") == 0 && conf.n_mounts < MAX_MOUNTS &&
                         strchr(sp, ' ') && strchr(sp, ' ')[1] == '/') {
                        char *path = strchr(sp, ' ');
                        *path++ = '\0';
                        conf.tag[conf.n_mounts] = strdup(sp);
                        conf.path[conf.n_mounts++] = strdup(path);
                } else
                        die("/cordon.conf: %s %s", line, sp);
        }
        (void) fclose(f);
        if (conf.ports < 1 || conf.ports > PORTS_MAX)
                die("/cordon.conf: ports %u", conf.ports);
}

static void read_exact(void *buf, size_t size) {
        char *p = buf;
        while (size > 0) {
                ssize_t n = read(chan, p, size);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        die("channel closed before the exec request");
                p += n;
                size -= (size_t) n;
        }
}

/* Splits `count` NUL-terminated strings starting at *at (below end) into a NULL-ended vector. */
static char **split_strings(char **at, const char *end, uint32_t count) {
        if (count > VM_FRAME_MAX_PAYLOAD / 2)
                die("exec request: %u strings", count);
        char **v = calloc((size_t) count + 1, sizeof(char *));
        if (!v)
                die("out of memory");
        for (uint32_t i = 0; i < count; i++) {
                char *nul = memchr(*at, '\0', (size_t) (end - *at));
                if (!nul)
                        die("exec request: a string without its NUL");
                v[i] = *at;
                *at = nul + 1;
        }
        return v;
}

typedef struct request {
        char *cwd;
        char **argv, **envp;
        bool tty;          /* VM_EXEC_TTY: a PTY (guest-pty.h) */
        uint16_t rows, cols;
} request;

static request read_request(void) {
        static uint8_t buf[VM_FRAME_MAX_PAYLOAD + 1];
        uint8_t h[VM_FRAME_HEADER], type = 0;
        uint32_t id = 0;
        read_exact(h, sizeof(h));
        long length = vm_frame_parse_header(h, &type, &id);
        if (type != VM_FRAME_EXEC || length < (long) VM_EXEC_FIXED || id == VM_FRAME_AGENT)
                die("expected an exec request, got type %u of length %ld for exec %u", type,
                    length, id);
        size_t size = (size_t) length;
        read_exact(buf, size);
        cur_exec = id;
        buf[size] = '\0';
        uint32_t argc, envc, flags;
        memcpy(&argc, buf, 4); /* little-endian, as the guest is x86-64 */
        memcpy(&envc, buf + 4, 4);
        memcpy(&flags, buf + 8, 4);
        char *at = (char *) buf + VM_EXEC_FIXED, *end = (char *) buf + size;
        request r = { .cwd = at, .tty = flags & VM_EXEC_TTY };
        memcpy(&r.rows, buf + 12, 2);
        memcpy(&r.cols, buf + 14, 2);
        char *nul = memchr(at, '\0', (size_t) (end - at));
        if (!nul || argc == 0)
                die("exec request without a directory or a command");
        at = nul + 1;
        r.argv = split_strings(&at, end, argc);
        r.envp = split_strings(&at, end, envc);
        return r;
}

__attribute__((noreturn)) static void child(const request *r, int in, int out, int err) {
        if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
                _exit(126);
        if (chroot(ROOT) < 0 || chdir(r->cwd) < 0) {
                dprintf(2, "cordon guest: %s: %s\n", r->cwd, strerror(errno));
                _exit(126);
        }
        (void) setsid();
        if (guest_pty_take() < 0) {
                dprintf(2, "cordon guest: TIOCSCTTY: %s\n", strerror(errno));
                _exit(126);
        }
        int e = guest_rules_drop_bounding();
        if (e < 0) {
                dprintf(2, "cordon guest: the capability bounding set: %s\n", strerror(-e));
                _exit(126);
        }
        /* The caller's ids, not root: files the command creates in the writable roots are the
         * caller's; and a caller that is root gets no capability (guest_rules_enter). */
        if (setgroups(0, NULL) < 0 || setgid(conf.gid) < 0 || setuid(conf.uid) < 0) {
                dprintf(2, "cordon guest: cannot take uid %u gid %u: %s\n", (unsigned) conf.uid,
                        (unsigned) conf.gid, strerror(errno));
                _exit(126);
        }
        /* The native sandbox's syscall filter, last: a command that cannot have it does not
         * run (fail closed), it never runs unfiltered. */
        e = guest_rules_enter();
        if (e < 0) {
                dprintf(2, "cordon guest: the syscall filter: %s\n", strerror(-e));
                _exit(126);
        }
        execvpe(r->argv[0], r->argv, r->envp);
        dprintf(2, "cordon guest: %s: %s\n", r->argv[0], strerror(errno));
        _exit(errno == ENOENT ? 127 : 126);
}

/* Relays what one of the command's pipes holds as frames; false at its end. `drain`: once the
 * command has exited, everything it holds now and no more (a process the command left behind
 * may keep the pipe open: the exec ends with its command, as a native session's exec does). */
static bool relay_pipe(int fd, bool is_err, bool drain) {
        static uint8_t buf[VM_FRAME_MAX_PAYLOAD];
        if (drain)
                (void) fcntl(fd, F_SETFL, O_NONBLOCK);
        for (;;) {
                ssize_t n = read(fd, buf, sizeof(buf));
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return false;
                send_frame(is_err ? VM_FRAME_STDERR : VM_FRAME_STDOUT, buf, (size_t) n);
                if (!drain)
                        return true;
        }
}

/* Relays the command's stdout and stderr until both end or the command (its pidfd) exits. */
static void relay(int out, int err, int pidfd) {
        struct pollfd p[3] = { { .fd = out, .events = POLLIN }, { .fd = err, .events = POLLIN },
                               { .fd = pidfd, .events = POLLIN } };
        bool exited = false;
        while ((p[0].fd >= 0 || p[1].fd >= 0) && !exited) {
                if (poll(p, 3, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        die("poll: %s", strerror(errno));
                }
                exited = p[2].revents != 0;
                for (int i = 0; i < 2; i++)
                        if (p[i].fd >= 0 && (p[i].revents || exited) &&
                            (!relay_pipe(p[i].fd, i, exited) || exited)) {
                                (void) close(p[i].fd);
                                p[i].fd = -1;
                        }
        }
        for (int i = 0; i < 2; i++)
                if (p[i].fd >= 0)
                        (void) close(p[i].fd);
}

/* Set in the pump by SIGUSR1 from the agent once the command has exited: what stdin still gets
 * is dropped, so a leftover process that holds the pipe and never reads it cannot block the pump
 * in write() and with it the END frame that closes the exec. */
static volatile sig_atomic_t command_gone;

static void on_command_gone(int sig) {
        (void) sig;
        command_gone = 1;
}

/* One STDIN frame's bytes into the command's stdin; false when it is closed for good. A command
 * that closed its stdin: the rest is dropped, as a pipe's would be (EPIPE, SIGPIPE ignored). */
static bool feed_stdin(int in, const uint8_t *buf, size_t size) {
        for (size_t at = 0; at < size;) {
                ssize_t n = write(in, buf + at, size - at);
                if (n < 0 && errno == EINTR && !command_gone)
                        continue;
                if (n <= 0)
                        return false;
                at += (size_t) n;
        }
        return true;
}

/* A process of its own writes the host's STDIN frames into the command's stdin until
 * STDIN_EOF (then closes it), so a command that does not read its stdin never stalls the output
 * relay, and delivers each SIGNAL frame to the command's process group (`cmd`: it called
 * setsid). It is the channel's only reader from the exec request to the host's END frame, at
 * which it exits: the next frame on the channel is the next exec's request. */
static pid_t stdin_pump(int in, pid_t cmd) {
        pid_t pid = fork();
        if (pid != 0)
                return pid;
        static uint8_t buf[VM_FRAME_MAX_PAYLOAD];
        for (;;) {
                uint8_t h[VM_FRAME_HEADER], type = 0;
                uint32_t id = 0;
                read_exact(h, sizeof(h));
                long length = vm_frame_parse_header(h, &type, &id);
                /* One exec at a time: every frame until END is this exec's. */
                if (length < 0 || id != cur_exec)
                        _exit(1);
                read_exact(buf, (size_t) length);
                uint32_t sig = 0;
                if (type == VM_FRAME_END)
                        _exit(0);
                if (type == VM_FRAME_SIGNAL && length == sizeof(sig)) {
                        memcpy(&sig, buf, sizeof(sig));
                        if (sig >= 1 && sig <= 64)
                                (void) kill(-cmd, (int) sig);
                } else if (type == VM_FRAME_RESIZE) {
                        guest_pty_resize(buf, (size_t) length);
                } else if (in >= 0 && type == VM_FRAME_STDIN_EOF) {
                        (void) close(in);
                        in = -1;
                        guest_pty_hangup(cmd);
                } else if (in >= 0 && type == VM_FRAME_STDIN &&
                           (command_gone || !feed_stdin(in, buf, (size_t) length))) {
                        (void) close(in);
                        in = -1;
                }
        }
}

/* The exec's end: the command's wait status as the EXIT frame, then the pump told the command
 * is gone and waited for until the host's END frame ends it. */
static void finish(pid_t cmd, pid_t pump) {
        int status = 0;
        while (waitpid(cmd, &status, 0) < 0)
                if (errno != EINTR)
                        die("waitpid: %s", strerror(errno));
        uint32_t e[2] = { WIFSIGNALED(status) ? 1u : 0u,
                          WIFSIGNALED(status) ? (uint32_t) WTERMSIG(status)
                                              : (uint32_t) WEXITSTATUS(status) };
        send_frame(VM_FRAME_EXIT, e, sizeof(e));
        (void) kill(pump, SIGUSR1);
        int ps = 0;
        while (waitpid(pump, &ps, 0) < 0)
                if (errno != EINTR)
                        die("waitpid: %s", strerror(errno));
        if (!WIFEXITED(ps) || WEXITSTATUS(ps) != 0)
                die("the channel ended during an exec");
}

static void run(const request *r) {
        int fd[6], *in = fd, *out = fd + 2, *err = fd + 4;
        if (r->tty) {
                if (guest_pty_open(ROOT, r->rows, r->cols, conf.uid, conf.gid, fd) < 0)
                        die("the terminal: %s", strerror(errno));
        } else if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0 ||
                   pipe2(err, O_CLOEXEC) < 0)
                die("pipe: %s", strerror(errno));
        (void) signal(SIGPIPE, SIG_IGN);
        pid_t pid = fork();
        if (pid < 0)
                die("fork: %s", strerror(errno));
        if (pid == 0) {
                (void) signal(SIGPIPE, SIG_DFL);
                child(r, in[0], out[1], err[1]);
        }
        (void) close(in[0]);
        (void) close(out[1]);
        (void) close(err[1]);
        int pidfd = (int) syscall(SYS_pidfd_open, pid, 0);
        if (pidfd < 0)
                die("pidfd_open: %s", strerror(errno));
        pid_t pump = stdin_pump(in[1], pid);
        if (pump < 0)
                die("fork: %s", strerror(errno));
        (void) close(in[1]);
        relay(out[0], err[0], pidfd);
        (void) close(pidfd);
        finish(pid, pump);
        /* The next exec of a warm session may have no terminal: none of this one's PTY (its
         * master closed by relay()) may make it take a controlling terminal or a SIGHUP. */
        guest_pty_forget();
}

static void mount_or_die(const char *src, const char *dst, const char *type, unsigned long flags,
                         const char *data) {
        (void) mkdir(dst, 0755);
        if (mount(src, dst, type, flags, data) < 0)
                die("mount %s on %s: %s", type, dst, strerror(errno));
}

/* The command's /dev: a tmpfs with the character devices programs expect and nothing else. Not
 * the guest's devtmpfs: that holds the channel port (the command could write frames of its own
 * into the host's stream) and the virtio devices' nodes. Made read-only once complete
 * (guest_rules_lock), with the shm export mounted on its shm directory. */
static void make_dev(void) {
        static const struct {
                const char *name;
                unsigned major, minor;
        } nodes[] = { { "null", 1, 3 }, { "zero", 1, 5 }, { "full", 1, 7 }, { "random", 1, 8 },
                      { "urandom", 1, 9 }, { "tty", 5, 0 } };
        mount_or_die("tmpfs", ROOT "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755,size=64k");
        for (size_t i = 0; i < sizeof(nodes) / sizeof(nodes[0]); i++) {
                char path[64];
                (void) snprintf(path, sizeof(path), ROOT "/dev/%s", nodes[i].name);
                if (mknod(path, S_IFCHR | 0666, makedev(nodes[i].major, nodes[i].minor)) < 0 ||
                    chmod(path, 0666) < 0)
                        die("mknod %s: %s", path, strerror(errno));
        }
        if (mkdir(ROOT "/dev/shm", 01777) < 0)
                die("mkdir /dev/shm: %s", strerror(errno));
        static const char *const links[][2] = { { "/proc/self/fd", ROOT "/dev/fd" },
                                                { "/proc/self/fd/0", ROOT "/dev/stdin" },
                                                { "/proc/self/fd/1", ROOT "/dev/stdout" },
                                                { "/proc/self/fd/2", ROOT "/dev/stderr" } };
        for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++)
                if (symlink(links[i][0], links[i][1]) < 0)
                        die("symlink %s: %s", links[i][1], strerror(errno));
}

/* mkdir -p beneath ROOT: the mount point of a writable root exists in the sandbox's view that
 * the exports show (the root's, /tmp's), so this finds it there; kept for a path that does not. */
static void make_dirs(char *path) {
        for (char *s = path + strlen(ROOT) + 1; (s = strchr(s, '/')); s++) {
                *s = '\0';
                (void) mkdir(path, 0755);
                *s = '/';
        }
        (void) mkdir(path, 0755);
}

/* Each writable root's read-write export at its own path, in the plan's order (a root inside
 * another is mounted after it). nodev/nosuid: the export holds the host's files. */
static void mount_writable(void) {
        for (size_t i = 0; i < conf.n_mounts; i++) {
                char at[4200];
                (void) snprintf(at, sizeof(at), ROOT "%s", conf.path[i]);
                make_dirs(at);
                if (mount(conf.tag[i], at, "9p", MS_NOSUID | MS_NODEV,
                          "trans=virtio,version=9p2000.L,cache=none,msize=262144") < 0)
                        die("mount %s on %s: %s", conf.tag[i], conf.path[i], strerror(errno));
        }
}

/* One port's server: READY, then its execs one after the other (each exec's frames name it by
 * its id). A process per port, so that each port has one writer and one reader, and an exec's
 * command or its host consumer that stops reading stalls only its own port. */
__attribute__((noreturn)) static void serve(void) {
        send_frame(VM_FRAME_READY, NULL, 0);
        for (;;) {
                request r = read_request();
                run(&r);
                free(r.argv);
                free(r.envp);
        }
}

static pid_t servers[PORTS_MAX];

/* A server per port: port 1's is the channel opened at the boot (its ERROR frames told the host
 * of a failed set-up), the others open theirs in their own process. */
static void start_servers(void) {
        for (unsigned k = 1; k <= conf.ports; k++) {
                pid_t pid = fork();
                if (pid < 0)
                        die("fork: %s", strerror(errno));
                if (pid == 0) {
                        if (k > 1) {
                                (void) close(chan);
                                chan = -1;
                                open_channel(k);
                        }
                        serve();
                }
                servers[k - 1] = pid;
        }
        (void) close(chan);
        chan = -1;
}

/* PID 1 from then on: reaps what the commands leave behind (orphans are its children). A server
 * that ended left its port with no one to answer: the VM powers off, the host reports it. */
__attribute__((noreturn)) static void reap_forever(void) {
        for (;;) {
                pid_t w = wait(NULL);
                if (w < 0 && errno != EINTR)
                        power_off();
                for (unsigned k = 0; w > 0 && k < conf.ports; k++)
                        if (servers[k] == w)
                                power_off();
        }
}

/* The syscall filter the host built (/cordon.bpf), loaded and tried once at boot: a guest
 * kernel that refuses it fails the boot (SANDBOX_UNAVAILABLE on the host) instead of each exec. */
static void load_filter(void) {
        int r = guest_rules_load("/cordon.bpf");
        if (r < 0)
                die("the syscall filter /cordon.bpf: %s", strerror(-r));
        r = guest_rules_check();
        if (r < 0)
                die("the guest kernel refuses the syscall filter: %s", strerror(-r));
}

/* The command's root: the host's (the sandbox's view) read-only, its own /proc and /dev, /tmp
 * and /dev/shm the sandbox's private ones (read-write 9p exports: the VMM's creations there meet
 * the host's name rules, as the native command's do), the guest's own file systems locked. */
static void make_root(void) {
        /* nosuid, nodev: the host's setuid binaries would make a guest command root in the
         * guest (no_new_privs stops that too), and a host device node would name a guest
         * device. */
        mount_or_die("root", ROOT, "9p", MS_RDONLY | MS_NOSUID | MS_NODEV,
                     "trans=virtio,version=9p2000.L,cache=none,msize=262144");
        mount_or_die("proc", ROOT "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
        make_dev();
        if (guest_pty_mount(ROOT) < 0)
                die("devpts: %s", strerror(errno));
        const char *what = NULL;
        int r = guest_rules_lock(ROOT, &what);
        if (r < 0)
                die("read-only %s: %s", what, strerror(-r));
        /* cache=mmap: shared writable mappings (shm_open, sem_open, a database's mapped files)
         * need it on 9p; only the guest uses these two exports, so nothing is incoherent. */
        mount_or_die("tmp", ROOT "/tmp", "9p", MS_NOSUID | MS_NODEV,
                     "trans=virtio,version=9p2000.L,cache=mmap,msize=262144");
        mount_or_die("shm", ROOT "/dev/shm", "9p", MS_NOSUID | MS_NODEV,
                     "trans=virtio,version=9p2000.L,cache=mmap,msize=262144");
        mount_writable();
}

int main(void) {
        /* Before the channel is open there is no one to tell: a failure just powers off. */
        if (mount("proc", "/proc", "proc", 0, NULL) < 0 ||
            mount("devtmpfs", "/dev", "devtmpfs", 0, NULL) < 0)
                power_off();
        /* Not dumpable: a guest command of uid 0 (the caller's) could otherwise open
         * /proc/1/mem or /proc/1/root of the agent and its pumps (same uid) and act unfiltered;
         * with it, that takes CAP_SYS_PTRACE, which the command never has. */
        if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
                power_off();
        load_modules();
        open_channel(1);
        read_conf();
        load_filter();
        make_root();
        if (conf.net) {
                char why[256];
                if (guest_net_up(ROOT, why, sizeof(why)) < 0)
                        die("network: %s", why);
        }
        /* Installed here, inherited by each pump at its fork: a SIGUSR1 sent before a pump had
         * installed a handler of its own would kill it. No SA_RESTART (on_command_gone). */
        struct sigaction sa = { .sa_handler = on_command_gone };
        (void) sigaction(SIGUSR1, &sa, NULL);
        start_servers();
        reap_forever();
}
