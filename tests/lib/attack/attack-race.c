/* SPDX-License-Identifier: Apache-2.0 */
/*
 * attack: races against the creation-rule supervisor and the semantics it must preserve. A
 * supervisor that checks a path and then lets the kernel re-read it loses these races within a
 * few thousand attempts (docs/design/creation-rules-study.md); one that copies once and performs
 * the call itself never does.
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "attack.h"

static atomic_bool stop;

static double now_s(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static bool exists(const char *p) {
        struct stat st;
        return lstat(p, &st) == 0;
}

/* ---- path buffer flip ------------------------------------------------------------------------ */

static char flip_buf[16] = "xenv";

static void *flipper(void *arg) {
        (void) arg;
        volatile char *b = flip_buf; /* every store must happen */
        while (!atomic_load(&stop)) {
                /* One byte decides: "xenv" (allowed) <-> ".env" (denied). */
                for (int i = 0; i < 64; i++)
                        b[0] = '.';
                for (int i = 0; i < 64; i++)
                        b[0] = 'x';
        }
        return NULL;
}

/* race-flip SECONDS: open(buf, O_CREAT) while another thread flips buf between an allowed and a
 * denied name. .env must never appear. */
static int cmd_race_flip(int argc, char **argv) {
        double end = now_s() + atof(argv[0]);
        pthread_t t;
        long attempts = 0, created = 0;
        if (pthread_create(&t, NULL, flipper, NULL) != 0)
                return harness("pthread_create failed");
        while (now_s() < end && !exists(".env")) {
                int fd = open(flip_buf, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
                attempts++;
                if (fd >= 0)
                        created++, close(fd);
        }
        atomic_store(&stop, true);
        pthread_join(t, NULL);
        (void) unlink("xenv");
        if (exists(".env"))
                return escaped(".env created after %ld attempts", attempts);
        if (created == 0)
                return harness("not even xenv was created in %ld attempts", attempts);
        return refused("%ld attempts, %ld allowed creates, no .env", attempts, created);
}

/* ---- symlink swap ---------------------------------------------------------------------------- */

static void *swapper(void *arg) {
        (void) arg;
        while (!atomic_load(&stop)) {
                (void) unlink("race-tmp");
                if (symlink("race-ok.txt", "race-tmp") < 0)
                        continue;
                (void) rename("race-tmp", "race-sw");
                (void) unlink("race-tmp");
                if (symlink("race-bad.pem", "race-tmp") < 0)
                        continue;
                (void) rename("race-tmp", "race-sw");
        }
        return NULL;
}

/* race-symlink SECONDS: open("race-sw", O_CREAT) while another thread atomically swaps race-sw
 * between -> race-ok.txt and -> race-bad.pem. race-bad.pem must never appear. */
static int cmd_race_symlink(int argc, char **argv) {
        double end = now_s() + atof(argv[0]);
        pthread_t t;
        long attempts = 0, created = 0;
        if (pthread_create(&t, NULL, swapper, NULL) != 0)
                return harness("pthread_create failed");
        while (now_s() < end && !exists("race-bad.pem")) {
                int fd = open("race-sw", O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
                attempts++;
                if (fd >= 0)
                        created++, close(fd);
        }
        atomic_store(&stop, true);
        pthread_join(t, NULL);
        bool bad = exists("race-bad.pem");
        (void) unlink("race-sw");
        (void) unlink("race-tmp");
        (void) unlink("race-ok.txt");
        if (bad)
                return escaped("race-bad.pem created after %ld attempts", attempts);
        if (created == 0)
                return harness("nothing was created in %ld attempts", attempts);
        return refused("%ld attempts, %ld allowed creates, no race-bad.pem", attempts, created);
}

/* ---- semantics the supervisor must keep ------------------------------------------------------ */

static void on_alarm(int sig) {
        (void) sig;
}

/* signal-storm N: N O_CREAT|O_EXCL creates of fresh names under a 50 µs SIGALRM storm (handler with
 * SA_RESTART). A supervisor that lets a signal restart a call it already performed turns the
 * restart into a spurious EEXIST. */
static int cmd_signal_storm(int argc, char **argv) {
        long n = atol(argv[0]), spurious = 0, other = 0;
        struct sigaction sa = { .sa_handler = on_alarm, .sa_flags = SA_RESTART };
        sigaction(SIGALRM, &sa, NULL);
        struct itimerval it = { { 0, 50 }, { 0, 50 } };
        setitimer(ITIMER_REAL, &it, NULL);
        char name[64];
        for (long i = 0; i < n; i++) {
                snprintf(name, sizeof name, "storm-%ld", i);
                int fd = open(name, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
                if (fd >= 0)
                        close(fd);
                else if (errno == EEXIST)
                        spurious++;
                else
                        other++;
        }
        struct itimerval off = { { 0, 0 }, { 0, 0 } };
        setitimer(ITIMER_REAL, &off, NULL);
        for (long i = 0; i < n; i++) {
                snprintf(name, sizeof name, "storm-%ld", i);
                (void) unlink(name);
        }
        if (spurious || other)
                return failed("%ld spurious EEXIST and %ld other errors in %ld creates", spurious,
                              other, n);
        return worked("%ld exclusive creates under a signal storm, none failed", n);
}

/* umask-check: files and directories get the caller's umask (the supervisor creates them). */
static int cmd_umask_check(int argc, char **argv) {
        umask(027);
        int fd = open("umask-f", O_CREAT | O_WRONLY | O_CLOEXEC, 0666);
        int r = mkdir("umask-d", 0777);
        struct stat f = { 0 }, d = { 0 };
        bool ok = fd >= 0 && r == 0 && stat("umask-f", &f) == 0 && stat("umask-d", &d) == 0;
        if (fd >= 0)
                close(fd);
        (void) unlink("umask-f");
        (void) rmdir("umask-d");
        if (!ok)
                return failed("create/mkdir/stat: %s", strerror(errno));
        if ((f.st_mode & 07777) != 0640 || (d.st_mode & 07777) != 0750)
                return failed("umask 027 gave file %04o (want 0640), dir %04o (want 0750)",
                              f.st_mode & 07777, d.st_mode & 07777);
        return worked("file 0640, dir 0750 under umask 027");
}

static void *fifo_writer(void *arg) {
        int fd = open(arg, O_CREAT | O_WRONLY | O_CLOEXEC, 0644); /* blocks until a reader */
        if (fd >= 0)
                close(fd);
        return NULL;
}

/* fifo-stall: an O_CREAT open of a FIFO without a reader blocks; other creates in the sandbox
 * must go on meanwhile (one stuck supervisor worker must not stall everyone). */
static int cmd_fifo_stall(int argc, char **argv) {
        (void) unlink("stall-fifo");
        if (mkfifo("stall-fifo", 0644) < 0)
                return harness("mkfifo: %s", strerror(errno));
        pthread_t t;
        static char fifo[] = "stall-fifo";
        if (pthread_create(&t, NULL, fifo_writer, fifo) != 0)
                return harness("pthread_create failed");
        usleep(200000);
        alarm(10); /* a hang below kills us: the driver sees a signal status */
        double t0 = now_s();
        int fd = open("stall-other.txt", O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
        double dt = now_s() - t0;
        alarm(0);
        int e = errno;
        int rd = open("stall-fifo", O_RDONLY | O_NONBLOCK | O_CLOEXEC); /* releases the writer */
        pthread_join(t, NULL);
        if (rd >= 0)
                close(rd);
        if (fd >= 0)
                close(fd);
        (void) unlink("stall-other.txt");
        (void) unlink("stall-fifo");
        if (fd < 0)
                return failed("create while a FIFO open blocks: %s", strerror(e));
        if (dt > 2.0)
                return failed("create took %.1f s while a FIFO open blocked", dt);
        return worked("create took %.3f s while a FIFO open blocked", dt);
}

/* ---- devices --------------------------------------------------------------------------------- */

/* raw-devices: raw disks, memory and kernel interfaces would bypass every path rule. */
static int cmd_raw_devices(int argc, char **argv) {
        static const struct {
                const char *path;
                int flags;
        } devs[] = {
                { "/dev/vda", O_RDONLY },    { "/dev/sda", O_RDONLY },
                { "/dev/nvme0n1", O_RDONLY }, { "/dev/xvda", O_RDONLY },
                { "/dev/mem", O_RDONLY },    { "/dev/kmem", O_RDONLY },
                { "/dev/port", O_RDONLY },   { "/dev/kmsg", O_RDONLY },
                { "/proc/kcore", O_RDONLY }, { "/proc/sysrq-trigger", O_WRONLY },
                { "/dev/userfaultfd", O_RDWR }, { "/dev/kvm", O_RDWR },
                /* writable kernel and cgroup knobs of the host */
                { "/sys/fs/cgroup/cgroup.procs", O_WRONLY },
                { "/sys/fs/cgroup/memory/cgroup.procs", O_WRONLY },
                { "/sys/fs/cgroup/cpu/cgroup.procs", O_WRONLY },
                { "/sys/kernel/mm/transparent_hugepage/enabled", O_WRONLY },
                { "/proc/sys/kernel/core_pattern", O_WRONLY },
        };
        int n = 0;
        for (size_t i = 0; i < sizeof devs / sizeof devs[0]; i++) {
                int fd = open(devs[i].path, devs[i].flags | O_CLOEXEC | O_NONBLOCK);
                if (fd >= 0) {
                        fprintf(stderr, "  %s: OPENED\n", devs[i].path);
                        close(fd);
                        n++;
                }
        }
        if (n)
                return escaped("%d raw device or kernel interface(s) could be opened", n);
        return refused("no raw device or kernel interface could be opened");
}

/* devtty: the caller's controlling terminal must not be reachable through /dev/tty (plain, or
 * through an O_CREAT open the supervisor would perform with its own terminal). */
static int cmd_devtty(int argc, char **argv) {
        int n = 0;
        static const int flags[] = { O_RDWR, O_RDWR | O_CREAT };
        for (size_t i = 0; i < 2; i++) {
                int fd = open("/dev/tty", flags[i] | O_CLOEXEC | O_NOCTTY, 0644);
                if (fd < 0) {
                        fprintf(stderr, "  open /dev/tty%s: %s\n", i ? " O_CREAT" : "",
                                strerror(errno));
                        continue;
                }
                char c = '#';
                if (ioctl(fd, TIOCSTI, &c) == 0) {
                        fprintf(stderr, "  TIOCSTI through /dev/tty%s worked\n", i ? " O_CREAT" : "");
                        n++;
                }
                close(fd);
        }
        if (n)
                return escaped("keystrokes injected through /dev/tty");
        return refused("no injection through /dev/tty");
}

/* privs: no_new_privs set, and no effective or ambient capabilities left (a root command in its
 * user namespace would otherwise hold every capability there). */
static int cmd_privs(int argc, char **argv) {
        int nnp = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
        FILE *f = fopen("/proc/self/status", "re");
        if (!f)
                return harness("/proc/self/status: %s", strerror(errno));
        char line[256];
        unsigned long long eff = ~0ULL, amb = ~0ULL;
        while (fgets(line, sizeof line, f)) {
                (void) sscanf(line, "CapEff: %llx", &eff);
                (void) sscanf(line, "CapAmb: %llx", &amb);
        }
        fclose(f);
        fprintf(stderr, "  no_new_privs %d, CapEff %016llx, CapAmb %016llx\n", nnp, eff, amb);
        if (nnp != 1 || eff != 0 || amb != 0)
                return escaped("no_new_privs %d, effective capabilities %llx, ambient %llx", nnp,
                               eff, amb);
        return refused("no_new_privs set, no capabilities");
}

const attack_cmd attack_race_cmds[] = {
        { "privs", "", 0, cmd_privs },
        { "race-flip", "SECONDS", 1, cmd_race_flip },
        { "race-symlink", "SECONDS", 1, cmd_race_symlink },
        { "signal-storm", "N", 1, cmd_signal_storm },
        { "umask-check", "", 0, cmd_umask_check },
        { "fifo-stall", "", 0, cmd_fifo_stall },
        { "raw-devices", "", 0, cmd_raw_devices },
        { "devtty", "", 0, cmd_devtty },
        { NULL, NULL, 0, NULL },
};
