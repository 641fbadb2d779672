/* SPDX-License-Identifier: Apache-2.0 */
/* The microvm backend's host half, run as the native sandbox's command (vm-host.h). */
#include "linux/vm-host.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/close_range.h>
#include <unistd.h>

#include "linux/seccomp.h"
#include "linux/vm-frame.h"
#include "linux/vm-initramfs.h"
#include "linux/vm-pty.h"
#include "report/report.h"

/* Guest RAM without limits.memory, and what the VMM itself needs beyond the guest's RAM when the
 * run's cgroup caps the whole sandbox at limits.memory (qemu's own heap, TCG's code cache). */
#define GUEST_MIB_DEFAULT 512u
#define VMM_OVERHEAD_MIB 96u
#define GUEST_MIB_MIN 128u
#define TCG_CACHE_MIB "64"

static int report = -1;

_noreturn_ _printf_(1, 2) static void fail(const char *fmt, ...) {
        char msg[600];
        va_list ap;
        va_start(ap, fmt);
        (void) vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        vm_pty_restore();
        report_fatal(report, CORDON_SANDBOX_UNAVAILABLE, EPROTO,
                     "the microvm backend failed: %s", msg);
        _exit(125);
}

static void push(strv *v, const char *s) {
        if (strv_push(v, s) < 0)
                fail("out of memory");
}

_printf_(2, 3) static void pushf(strv *v, const char *fmt, ...) {
        char *s = NULL;
        va_list ap;
        va_start(ap, fmt);
        int n = vasprintf(&s, fmt, ap);
        va_end(ap);
        if (n < 0 || strv_push_take(v, s) < 0)
                fail("out of memory");
}

/* A path as a qemu option value: ',' doubled (qemu's escape), so a path cannot add options. */
static char *qemu_escaped(const char *path) {
        char *s = malloc(2 * strlen(path) + 1), *o = s;
        if (!s)
                fail("out of memory");
        for (const char *c = path; *c; c++) {
                *o++ = *c;
                if (*c == ',')
                        *o++ = ',';
        }
        *o = '\0';
        return s;
}

/* /cordon.conf for the agent: the ids the command runs as, the network, the writable roots. A
 * path with a newline would end its line early: refused (the launcher's plan never has one
 * from a real directory name it resolved, but nothing here relies on that). */
static char *agent_conf(const plan *p, unsigned ports, size_t *ret_size) {
        char *text = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&text, &size);
        if (!f)
                fail("out of memory");
        fprintf(f, "uid %u\ngid %u\nnet %s\nports %u\n", (unsigned) getuid(),
                (unsigned) getgid(), p->net.enabled ? "on" : "off", ports);
        for (size_t i = 0; i < p->writable_roots.n; i++) {
                if (strchr(p->writable_roots.v[i], '\n'))
                        fail("a writable root's path holds a newline");
                fprintf(f, "mount w%zu %s\n", i, p->writable_roots.v[i]);
        }
        if (fclose(f) != 0)
                fail("out of memory");
        *ret_size = size;
        return text;
}

/* The syscall filter for the guest's commands (seccomp.h: vm_guest), built at build time from
 * the native sandbox's rule table, as /cordon.bpf for the agent to load (guest-rules.h). */
static int guest_filter(vm_initramfs *w) {
        const void *prog = NULL;
        size_t len = 0;
        int r = seccomp_embedded_sandbox_filter(&(seccomp_options) { .vm_guest = true }, &prog,
                                                &len);
        return r < 0 ? r : vm_initramfs_bytes(w, "cordon.bpf", 0400, prog, len);
}

/* The initramfs in a memfd: the agent as /init, the modules, /cordon.conf, /cordon.bpf. */
static int initramfs(const plan *p, const vm_host *vm, unsigned ports) {
        int fd = memfd_create("cordon-initramfs", 0); /* inherited by the VMM: -initrd reads it */
        if (fd < 0)
                fail("memfd_create: %s", strerror(errno));
        vm_initramfs w;
        char missing[512] = "";
        size_t conf_size = 0;
        char *conf = agent_conf(p, ports, &conf_size);
        vm_initramfs_init(&w, fd);
        int r = vm_initramfs_dir(&w, "proc");
        if (r >= 0)
                r = vm_initramfs_dir(&w, "dev");
        if (r >= 0)
                r = vm_initramfs_bytes(&w, "init", 0755, vm_guest_agent_start,
                                       (size_t) (vm_guest_agent_end - vm_guest_agent_start));
        if (r >= 0)
                r = vm_initramfs_bytes(&w, "cordon.conf", 0644, conf, conf_size);
        if (r >= 0)
                r = guest_filter(&w);
        if (r >= 0)
                r = vm_initramfs_modules(&w, vm->modules, missing, sizeof(missing));
        if (r >= 0)
                r = vm_initramfs_end(&w);
        free(conf);
        if (r < 0)
                fail("writing the guest's initramfs: %s %s", strerror(-r), missing);
        return fd;
}

/* Guest RAM in MiB: limits.memory less the VMM's own share, else the default. */
static unsigned guest_mib(const plan *p) {
        if (!p->memory_bytes)
                return GUEST_MIB_DEFAULT;
        uint64_t mib = p->memory_bytes >> 20;
        return mib > GUEST_MIB_MIN + VMM_OVERHEAD_MIB ? (unsigned) (mib - VMM_OVERHEAD_MIB)
                                                      : GUEST_MIB_MIN;
}

/* The exports: the sandbox's root read-only; its private /tmp and /dev/shm read-write (tags tmp
 * and shm: the guest's own, whose creations the supervisor judges on the VMM's calls, as it
 * judges the native command's, where a guest tmpfs would take any name); each writable root
 * read-write under tag wN. */
static void exports(strv *a, const plan *p) {
        push(a, "-fsdev");
        push(a, "local,id=root,path=/,security_model=none,readonly=on,multidevs=remap");
        push(a, "-device");
        push(a, "virtio-9p-device,fsdev=root,mount_tag=root");
        static const char *const scratch[][2] = { { "tmp", "/tmp" }, { "shm", "/dev/shm" } };
        for (size_t i = 0; i < ELEMENTSOF(scratch); i++) {
                push(a, "-fsdev");
                pushf(a, "local,id=%s,path=%s,security_model=none,multidevs=remap", scratch[i][0],
                      scratch[i][1]);
                push(a, "-device");
                pushf(a, "virtio-9p-device,fsdev=%s,mount_tag=%s", scratch[i][0], scratch[i][0]);
        }
        for (size_t i = 0; i < p->writable_roots.n; i++) {
                char *path = qemu_escaped(p->writable_roots.v[i]);
                push(a, "-fsdev");
                pushf(a, "local,id=w%zu,path=%s,security_model=none,multidevs=remap", i, path);
                push(a, "-device");
                pushf(a, "virtio-9p-device,fsdev=w%zu,mount_tag=w%zu", i, i);
                free(path);
        }
}

/* One virtserialport per channel (docs/design/microvm.md "Channels"): port K (1 and up) is
 * cordon.ctlK on chardev ctlK, the guest's /dev/vport0pK. */
static void vmm_ports(strv *a, const int *chans, unsigned n) {
        push(a, "-device");
        push(a, "virtio-serial-device");
        for (unsigned k = 0; k < n; k++) {
                push(a, "-chardev");
                pushf(a, "socket,id=ctl%u,fd=%d", k + 1, chans[k]);
                push(a, "-device");
                pushf(a, "virtserialport,chardev=ctl%u,name=cordon.ctl%u,nr=%u", k + 1, k + 1,
                      k + 1);
        }
}

static void vmm_argv(strv *a, const plan *p, const vm_host *vm, int initrd, const int *chans,
                     unsigned n) {
        push(a, vm->vmm);
        push(a, "-M");
        push(a, "microvm,acpi=on,pit=on,pic=on,rtc=on");
        push(a, "-accel");
        push(a, vm->tcg ? "tcg,tb-size=" TCG_CACHE_MIB : "kvm");
        push(a, "-cpu");
        push(a, vm->tcg ? "max" : "host");
        push(a, "-m");
        pushf(a, "%u", guest_mib(p));
        push(a, "-smp");
        pushf(a, "%u", p->cpus ? (unsigned) p->cpus : 1u); /* limits.cpus */
        const char *fixed[] = { "-nodefaults", "-no-user-config", "-display", "none",
                                "-no-reboot", "-kernel", vm->kernel, "-initrd" };
        for (size_t i = 0; i < ELEMENTSOF(fixed); i++)
                push(a, fixed[i]);
        pushf(a, "/proc/self/fd/%d", initrd);
        push(a, "-append");
        /* Under TCG the guest cannot calibrate its TSC without the hint (docs/design/microvm.md
         * "Booting it"). */
        push(a, vm->tcg ? "quiet loglevel=0 rdinit=/init panic=-1 tsc_early_khz=2000000"
                        : "quiet loglevel=0 rdinit=/init panic=-1");
        vmm_ports(a, chans, n);
        exports(a, p);
        /* slirp: its sockets are this sandbox's, so every guest connection meets the
         * transparent interception and the proxy; no hostfwd, nothing inbound. */
        if (p->net.enabled) {
                push(a, "-netdev");
                push(a, "user,id=n0,restrict=off");
                push(a, "-device");
                push(a, "virtio-net-device,netdev=n0");
        }
}

/* The VMM with `n` channels: chans[k] is the VMM's end of port k + 1's socketpair. */
static pid_t start_vmm(const plan *p, const vm_host *vm, const int *chans, unsigned n) {
        int initrd = initramfs(p, vm, n);
        strv a = { 0 };
        vmm_argv(&a, p, vm, initrd, chans, n);
        pid_t pid = fork();
        if (pid == 0) {
                /* A process group of its own: a signal for the command's group
                 * (cordon_process_signal) is the guest's, forwarded by the VMM host, and must
                 * not end the VMM. */
                (void) setpgid(0, 0);
                /* Its output is the guest's console and qemu's own messages: stderr only. */
                int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
                if (null < 0 || dup2(null, 0) < 0 || dup2(2, 1) < 0)
                        _exit(127);
                /* Only the channel and the initramfs: forked by a warm session's init, this
                 * process holds init's descriptors (the session's control socket, the report
                 * channel), which the VMM must not have. */
                sigset_t none;
                sigemptyset(&none);
                (void) sigprocmask(SIG_SETMASK, &none, NULL); /* init's mask is not qemu's */
                if (syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) < 0 ||
                    fcntl(initrd, F_SETFD, 0) < 0)
                        _exit(127);
                for (unsigned k = 0; k < n; k++)
                        if (fcntl(chans[k], F_SETFD, 0) < 0)
                                _exit(127);
                execv(a.v[0], a.v);
                _exit(127);
        }
        if (pid < 0)
                fail("fork: %s", strerror(errno));
        (void) close(initrd);
        strv_done(&a);
        return pid;
}

/* The command's environment for the guest: the proxy variables name the sandbox's loopback
 * (PLAN_PROXY_*_URL), which the guest reaches as slirp's gateway 10.0.2.2. */
static void guest_env(const plan *p, strv *env) {
        for (size_t i = 0; p->env.v && i < p->env.n; i++) {
                const char *e = p->env.v[i], *eq = strchr(e, '='), *at = strstr(e, "127.0.0.1:");
                if (eq && at && (strcmp(eq + 1, PLAN_PROXY_HTTP_URL) == 0 ||
                                 strcmp(eq + 1, PLAN_PROXY_SOCKS_URL) == 0))
                        pushf(env, "%.*s10.0.2.2%s", (int) (at - e), e, at + strlen("127.0.0.1"));
                else
                        push(env, e);
        }
}

/* The exec id of this process's exec (vm-frame.h): a one-shot run's only exec is 1; a warm
 * session's init counts them (vm_host_session_exec_prepare) and each exec's process inherits
 * its own at the fork. */
static uint32_t exec_id = 1;

static void send_frame(int chan, vm_frame_type type, const void *data, size_t size) {
        uint8_t h[VM_FRAME_HEADER];
        vm_frame_header(h, type, exec_id, size);
        if (write_all(chan, h, sizeof(h)) < 0 || (size && write_all(chan, data, size) < 0))
                fail("writing to the guest's channel: %s", strerror(errno));
}

static void send_exec(int chan, const plan *p, char *const argv[], const vm_exec_tty *tty) {
        strv env = { 0 };
        guest_env(p, &env);
        uint8_t *payload = NULL;
        size_t size = 0;
        if (vm_exec_encode(p->workdir, argv, env.v ? env.v : (char *[]) { NULL }, tty,
                           &payload, &size) < 0)
                fail("the command and its environment exceed the exec request's %u bytes",
                     VM_FRAME_MAX_PAYLOAD);
        send_frame(chan, VM_FRAME_EXEC, payload, size);
        free(payload);
        strv_done(&env);
}

/* The signals a caller sends the command (cordon_process_signal) that go on into the guest, to
 * the command's process group, instead of ending the VMM host. */
static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };
static volatile pid_t pump_pid = -1;

static void forwarded_set(sigset_t *set) {
        sigemptyset(set);
        for (size_t i = 0; i < ELEMENTSOF(forwarded); i++)
                sigaddset(set, forwarded[i]);
        sigaddset(set, vm_host_kill_signal());
}

void vm_host_exec_signals(sigset_t *set) {
        forwarded_set(set);
}

/* In the VMM host: the pump is the channel's only writer after the exec request, so a signal is
 * passed to it and it sends the frame (two writers could interleave their frames' bytes). */
static void on_forwarded(int sig) {
        if (pump_pid > 0)
                (void) kill(pump_pid, sig);
}

/* The kill a warm session's init asks for (session-init.c, SESSION_MSG_KILL): SIGKILL would end
 * this process and leave the guest command running, so the pump sends it as a SIGNAL frame of
 * SIGKILL for the command's process group in the guest, and the exec ends with the command. */
int vm_host_kill_signal(void) {
        return SIGRTMIN;
}

/* One forwarded signal (the signalfd's next) as a SIGNAL frame; the kill request as SIGKILL.
 * SIGWINCH is not forwarded: it only says the terminal's size changed, which pump_main() sends
 * as a RESIZE frame. */
static void pump_signal(int chan, int sfd) {
        struct signalfd_siginfo si;
        if (read(sfd, &si, sizeof(si)) != (ssize_t) sizeof(si) || si.ssi_signo == SIGWINCH)
                return;
        uint32_t sig = (int) si.ssi_signo == vm_host_kill_signal() ? SIGKILL : si.ssi_signo;
        send_frame(chan, VM_FRAME_SIGNAL, &sig, sizeof(sig));
}

/* With a terminal, how often the pump looks at its size: `cordon run`'s terminal is not the
 * sandbox's controlling terminal (the command's session is its own, sandbox.c), so no SIGWINCH
 * can tell the VMM host of a change (vm-pty.h). */
#define PTY_SIZE_POLL_MS 200

/* Copies stdin into STDIN frames, then STDIN_EOF, and each forwarded signal (a signalfd) into a
 * SIGNAL frame, until `done` reads EOF (the relay took the exit frame): then the END frame, at a
 * frame's boundary, so that the channel is in step for the next exec of a warm session. With a
 * terminal, its size changes go as RESIZE frames. */
static _noreturn_ void pump_main(int chan, int done, bool tty) {
        static uint8_t buf[VM_FRAME_MAX_PAYLOAD];
        sigset_t set;
        forwarded_set(&set); /* blocked since before the fork */
        sigaddset(&set, SIGWINCH);
        (void) sigprocmask(SIG_BLOCK, &set, NULL);
        int sfd = signalfd(-1, &set, SFD_CLOEXEC);
        if (sfd < 0)
                _exit(1);
        if (tty)
                vm_pty_pump_foreground();
        struct pollfd pf[3] = { { .fd = 0, .events = POLLIN }, { .fd = sfd, .events = POLLIN },
                                { .fd = done, .events = POLLIN } };
        for (;;) {
                uint8_t size[4];
                int ready = poll(pf, 3, tty ? PTY_SIZE_POLL_MS : -1);
                if (ready < 0 && errno != EINTR)
                        _exit(1);
                if (tty && vm_pty_resized(size))
                        send_frame(chan, VM_FRAME_RESIZE, size, sizeof(size));
                if (ready <= 0)
                        continue;
                if (pf[2].revents) {
                        send_frame(chan, VM_FRAME_END, NULL, 0);
                        _exit(0);
                }
                if (pf[1].revents)
                        pump_signal(chan, sfd);
                if (pf[0].fd < 0 || !pf[0].revents)
                        continue;
                ssize_t n = read(0, buf, sizeof(buf));
                if (n < 0 && errno == EINTR)
                        continue;
                if (n > 0) {
                        send_frame(chan, VM_FRAME_STDIN, buf, (size_t) n);
                        continue;
                }
                send_frame(chan, VM_FRAME_STDIN_EOF, NULL, 0);
                pf[0].fd = -1; /* poll ignores it from now on */
        }
}

/* The pump, a process of its own, so that a guest command that does not read its stdin never
 * stalls the output relay; then the forwarded signals' handler. Returns the write end of its
 * `done` pipe: closing it ends the pump after the END frame. */
static int start_pump(int chan, bool tty) {
        sigset_t set;
        forwarded_set(&set);
        (void) sigprocmask(SIG_BLOCK, &set, NULL);
        int done[2];
        if (pipe2(done, O_CLOEXEC) < 0)
                fail("pipe: %s", strerror(errno));
        pid_t pid = fork();
        if (pid < 0)
                fail("fork: %s", strerror(errno));
        if (pid == 0) {
                report = -1; /* the VM gone under it is the relay's to report, not the pump's */
                (void) setpgid(0, 0); /* a group signal reaches it through on_forwarded only */
                (void) close(done[1]);
                vm_host_session_exec_forked(); /* the exec's report, not the pump's */
                pump_main(chan, done[0], tty);
        }
        (void) close(done[0]);
        pump_pid = pid;
        struct sigaction sa = { .sa_handler = on_forwarded, .sa_flags = SA_RESTART };
        for (size_t i = 0; i < ELEMENTSOF(forwarded); i++)
                (void) sigaction(forwarded[i], &sa, NULL);
        (void) sigaction(vm_host_kill_signal(), &sa, NULL);
        (void) sigprocmask(SIG_UNBLOCK, &set, NULL);
        return done[1];
}

/* The frames complete so far: 0 for more, 1 with *status (a wait status) at the exit frame. */
static int drain(vm_frame_reader *r, int *status) {
        vm_frame f;
        int k;
        while ((k = vm_frame_next(r, &f)) == 1) {
                if (f.type == VM_FRAME_STDOUT || f.type == VM_FRAME_STDERR) {
                        /* A closed stdout is the command's business, as it is natively. */
                        (void) write_all(f.type == VM_FRAME_STDOUT ? 1 : 2, f.data, f.size);
                } else if (f.type == VM_FRAME_ERROR) {
                        fail("the guest agent: %.*s", (int) f.size, f.data);
                } else if (f.type == VM_FRAME_READY) {
                        continue; /* a one-shot run sent its request before the boot ended */
                } else {
                        *status = (int) f.value | (f.signaled ? 0x10000 : 0);
                        return 1;
                }
        }
        if (k < 0)
                fail("the guest broke the channel's protocol: %s", r->why);
        return 0;
}

/* The guest's frames until its exit frame. Nothing may follow it in what was read: the guest
 * sends nothing after an exit until the next request, and a warm session's next exec must start
 * at a frame's boundary. */
static int relay(int chan) {
        static vm_frame_reader r;
        static uint8_t buf[65536];
        vm_frame_reader_init(&r);
        /* Its ids only: the request was sent. Ids below it are earlier execs', finished. */
        if (vm_frame_reader_open(&r, exec_id) < 0)
                fail("exec id %u out of order", exec_id);
        for (;;) {
                ssize_t n = read(chan, buf, sizeof(buf));
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        fail("the VM ended without the command's exit status");
                for (size_t at = 0; at < (size_t) n;) {
                        long took = vm_frame_feed(&r, buf + at, (size_t) n - at);
                        int status = 0;
                        if (took < 0)
                                fail("the guest broke the channel's protocol: %s", r.why);
                        at += (size_t) took;
                        if (drain(&r, &status) == 0)
                                continue;
                        if (at < (size_t) n || vm_frame_pending(&r) > 0)
                                fail("the guest broke the channel's protocol: bytes after the "
                                     "exit frame");
                        return status;
                }
        }
}

/* Ends as the guest command did: its exit code, or its signal raised on this process (the
 * launcher then reports the signal, as for a native command). */
static _noreturn_ void end_as(int status) {
        vm_pty_restore();
        if (status & 0x10000) {
                int sig = status & 0xffff;
                sigset_t set;
                sigemptyset(&set);
                sigaddset(&set, sig);
                (void) sigprocmask(SIG_UNBLOCK, &set, NULL);
                (void) signal(sig, SIG_DFL);
                (void) prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
                (void) raise(sig);
                (void) kill(getpid(), SIGKILL); /* a signal that does not end a process */
        }
        _exit(status & 0xff);
}

/* One exec on a booted VM's channel: the request, the pump, the relay to the exit frame, the
 * END frame; the guest command's wait status (0x10000 | signal for a signal). */
static int exec_in_vm(int chan, const plan *p, char *const argv[]) {
        vm_exec_tty size;
        int tty = vm_pty_begin(p, &size);
        if (tty < 0)
                fail("the terminal's modes: %s", strerror(errno));
        send_exec(chan, p, argv, tty ? &size : NULL);
        int done = start_pump(chan, tty);
        (void) close(0);
        int status = relay(chan);
        pid_t pump = pump_pid;
        pump_pid = -1;
        (void) close(done); /* the pump sends END and exits */
        int ps = 0;
        while (waitpid(pump, &ps, 0) < 0 && errno == EINTR)
                ;
        if (!WIFEXITED(ps) || WEXITSTATUS(ps) != 0)
                fail("the channel to the guest broke during the exec");
        return status;
}

/* The channel: our end, and the VMM's (-chardev socket,fd=N), which start_vmm() hands over. */
static void channel(int sv[2]) {
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
                fail("socketpair: %s", strerror(errno));
}

_noreturn_ void vm_host_main(const plan *p, const vm_host *vm, char *const argv[],
                             int report_fd) {
        report = report_fd;
        int sv[2];
        channel(sv);
        pid_t vmm = start_vmm(p, vm, &sv[1], 1);
        (void) close(sv[1]);
        int status = exec_in_vm(sv[0], p, argv);
        (void) kill(vmm, SIGKILL);
        (void) waitpid(vmm, NULL, 0);
        end_as(status);
}

/* ---- a warm session's VM (session-init.c) ---------------------------------------------------- */

/* The session's channels, one port each (docs/design/microvm.md "Channels"): an exec takes a
 * free one for its whole life, so each port has one exec and one writer per direction at a
 * time, and one exec's unread output fills only its own port. In init: which exec holds each
 * (the read end of its clean pipe, -1 when free); in an exec's process: session_chan is its
 * port's. */
static int session_chans[VM_SESSION_EXECS_MAX] = { [0 ... VM_SESSION_EXECS_MAX - 1] = -1 };
static int port_holder[VM_SESSION_EXECS_MAX] = { [0 ... VM_SESSION_EXECS_MAX - 1] = -1 };
static int session_chan = -1;
/* Init's count of the session's execs: the id the next one gets (1 and up). */
static uint32_t session_next_id = 1;
/* The write end of the pipe an exec's VM side reports on once its port is back at a frame's
 * boundary (vm_host_session_exec_prepare); held by init only from the pipe to the fork. */
static int clean_fd = -1;

/* The boot's frames: READY alone, through the same reader of untrusted frames, within
 * BOOT_TIMEOUT_S: a session launch has no limits.timeout of its own, and a guest that hangs
 * before its agent runs (a kernel that cannot start) would hold it forever. */
#define BOOT_TIMEOUT_S 300
static void wait_ready(int chan, int64_t deadline_ms) {
        static vm_frame_reader r;
        static uint8_t buf[64];
        vm_frame_reader_init(&r);
        for (;;) {
                struct pollfd pf = { .fd = chan, .events = POLLIN };
                int64_t left = deadline_ms - monotonic_ms();
                int ready = left <= 0 ? 0 : poll(&pf, 1, (int) left);
                if (ready < 0 && errno == EINTR)
                        continue;
                if (ready == 0)
                        fail("the VM did not boot within %d s", BOOT_TIMEOUT_S);
                ssize_t n = read(chan, buf, sizeof(buf));
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        fail("the VM ended while it booted");
                vm_frame f;
                int k;
                if (vm_frame_feed(&r, buf, (size_t) n) != n)
                        fail("the guest broke the channel's protocol: %s", r.why);
                while ((k = vm_frame_next(&r, &f)) == 1) {
                        if (f.type == VM_FRAME_ERROR)
                                fail("the guest agent: %.*s", (int) f.size, f.data);
                        if (f.type != VM_FRAME_READY || vm_frame_pending(&r) > 0)
                                fail("the guest broke the channel's protocol: %s before its "
                                     "request", f.type == VM_FRAME_READY ? "bytes after READY"
                                                                          : "output");
                        return;
                }
                if (k < 0)
                        fail("the guest broke the channel's protocol: %s", r.why);
        }
}

pid_t vm_host_session_boot(const plan *p, const vm_host *vm, int report_fd) {
        report = report_fd;
        int vmm_ends[VM_SESSION_EXECS_MAX];
        for (unsigned k = 0; k < VM_SESSION_EXECS_MAX; k++) {
                int sv[2];
                channel(sv);
                session_chans[k] = sv[0];
                vmm_ends[k] = sv[1];
        }
        pid_t vmm = start_vmm(p, vm, vmm_ends, VM_SESSION_EXECS_MAX);
        for (unsigned k = 0; k < VM_SESSION_EXECS_MAX; k++)
                (void) close(vmm_ends[k]);
        /* Each port's server in the guest sends its own READY: every port starts at a frame's
         * boundary. One deadline for them all: the boot, not each port, has BOOT_TIMEOUT_S. */
        int64_t deadline = monotonic_ms() + BOOT_TIMEOUT_S * 1000;
        for (unsigned k = 0; k < VM_SESSION_EXECS_MAX; k++)
                wait_ready(session_chans[k], deadline);
        report = -1;
        return vmm;
}

_noreturn_ void vm_host_session_exec(const plan *p, char *const argv[], int report_fd) {
        report = report_fd;
        if (session_chan < 0)
                fail("the session's VM is not booted");
        /* Its own port only: nothing in this process can write into another exec's. */
        for (unsigned k = 0; k < VM_SESSION_EXECS_MAX; k++)
                if (session_chans[k] != session_chan)
                        (void) close(session_chans[k]);
        /* A closed stdout must not end this process by SIGPIPE mid-exec (the channel would be
         * left in the middle of it): the output is dropped instead, the guest command runs on. */
        (void) signal(SIGPIPE, SIG_IGN);
        int status = exec_in_vm(session_chan, p, argv);
        (void) !write(clean_fd, "c", 1); /* END sent, the pump gone: the next exec may start */
        end_as(status);
}

int vm_host_session_exec_prepare(void) {
        unsigned k = 0;
        while (k < VM_SESSION_EXECS_MAX && port_holder[k] >= 0)
                k++;
        if (k == VM_SESSION_EXECS_MAX)
                return -EBUSY; /* the session host refuses before this (session-host.c) */
        int fd[2];
        if (pipe2(fd, O_CLOEXEC | O_NONBLOCK) < 0)
                return -errno;
        clean_fd = fd[1];
        port_holder[k] = fd[0];
        session_chan = session_chans[k];
        /* The next exec's id, inherited by its process: never reused in this VM. */
        exec_id = session_next_id++;
        return fd[0];
}

void vm_host_session_exec_forked(void) {
        if (clean_fd >= 0)
                (void) close(clean_fd);
        clean_fd = -1;
}

bool vm_host_session_exec_clean(int fd) {
        char c;
        bool clean = read(fd, &c, 1) == 1;
        /* The port is free again (an exec that left it mid-frame ends the session: init hands
         * out no port after that). */
        for (unsigned k = 0; k < VM_SESSION_EXECS_MAX; k++)
                if (port_holder[k] == fd)
                        port_holder[k] = -1;
        (void) close(fd);
        return clean;
}
