/* SPDX-License-Identifier: Apache-2.0 */
/*
 * notify-floor: what the kernel alone costs for a creation served by a seccomp user-notification
 * supervisor, without any of cordon's checks: the floor under the supervisor's cost per create
 * (docs/design/creation-rules.md, "Where the time goes").
 *
 *   notify-floor bare DIR N     N creates (O_CREAT|O_WRONLY, 100 bytes, close) in DIR, no filter
 *   notify-floor floor DIR N    the same, each openat notified to a supervisor thread, which
 *                               copies the path (process_vm_readv), creates the file itself
 *                               (O_EXCL|O_NOFOLLOW) and installs it with NOTIF_ADDFD +
 *                               ADDFD_FLAG_SEND: the minimum a race-free on-behalf create needs
 *   notify-floor status DIR N   floor, plus opening /proc/<tid> and reading its status per
 *                               create, as cordon does for the caller's umask and identity
 *
 * Prints the loop's wall time and the process's CPU time (both threads), in seconds. The
 * supervisor thread is started before the filter is installed, so it is not filtered itself;
 * SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP is set as cordon sets it. A benchmark, not a sandbox: the
 * filter checks the syscall number only.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <semaphore.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif
#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif

static int listener = -1;
static sem_t ready;
static int read_status;

static double now(int clock) {
        struct timespec ts;
        clock_gettime(clock, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static void status_of(pid_t tid) {
        char name[32], buf[8192];
        snprintf(name, sizeof name, "/proc/%d", tid);
        int dir = open(name, O_PATH | O_DIRECTORY | O_CLOEXEC);
        int fd = dir < 0 ? -1 : openat(dir, "status", O_RDONLY | O_CLOEXEC);
        if (fd >= 0 && read(fd, buf, sizeof buf) < 0)
                perror("status");
        if (fd >= 0)
                close(fd);
        if (dir >= 0)
                close(dir);
}

static void serve_one(struct seccomp_notif *n) {
        char path[4096];
        struct iovec local = { path, sizeof path - 1 };
        struct iovec remote = { (void *) n->data.args[1], 256 };
        struct seccomp_notif_resp resp = { .id = n->id };
        if (read_status)
                status_of((pid_t) n->pid);
        ssize_t got = process_vm_readv((pid_t) n->pid, &local, 1, &remote, 1, 0);
        if (got <= 0 || !memchr(path, '\0', (size_t) got)) {
                resp.error = -EFAULT;
                (void) ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
                return;
        }
        if (ioctl(listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &n->id) < 0)
                return;
        int flags = (int) n->data.args[2];
        int fd = openat(AT_FDCWD, path, flags | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                        (mode_t) n->data.args[3]);
        if (fd < 0) {
                resp.error = -errno;
                (void) ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
                return;
        }
        struct seccomp_notif_addfd a = { .id = n->id, .flags = SECCOMP_ADDFD_FLAG_SEND,
                                         .srcfd = (unsigned) fd,
                                         .newfd_flags = flags & O_CLOEXEC ? O_CLOEXEC : 0 };
        (void) ioctl(listener, SECCOMP_IOCTL_NOTIF_ADDFD, &a);
        close(fd);
}

static void *supervisor(void *arg) {
        (void) arg;
        struct seccomp_notif_sizes sz;
        if (syscall(__NR_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sz) < 0)
                return NULL;
        struct seccomp_notif *n = calloc(1, sz.seccomp_notif > sizeof *n ? sz.seccomp_notif
                                                                         : sizeof *n);
        sem_wait(&ready);
        for (;;) {
                memset(n, 0, sizeof *n);
                if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, n) == 0)
                        serve_one(n);
        }
        return NULL;
}

static int install_filter(void) {
        struct sock_filter prog[] = {
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_openat, 0, 3),
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
                BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, O_CREAT, 0, 1),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        };
        struct sock_fprog fp = { sizeof prog / sizeof prog[0], prog };
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                return -1;
        listener = (int) syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER,
                                 SECCOMP_FILTER_FLAG_NEW_LISTENER, &fp);
        if (listener < 0)
                return -1;
        (void) ioctl(listener, SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP);
        return 0;
}

int main(int argc, char **argv) {
        if (argc != 4 || (strcmp(argv[1], "bare") && strcmp(argv[1], "floor") &&
                          strcmp(argv[1], "status"))) {
                fprintf(stderr, "usage: notify-floor bare|floor|status DIR N\n");
                return 2;
        }
        long count = atol(argv[3]);
        if (mkdir(argv[2], 0755) < 0 && errno != EEXIST) {
                perror(argv[2]);
                return 1;
        }
        read_status = strcmp(argv[1], "status") == 0;
        if (strcmp(argv[1], "bare") != 0) {
                pthread_t t;
                sem_init(&ready, 0, 0);
                if (pthread_create(&t, NULL, supervisor, NULL) != 0 || install_filter() < 0) {
                        perror("filter");
                        return 1;
                }
                sem_post(&ready);
        }
        char buf[100], path[4096];
        memset(buf, 'x', sizeof buf);
        double w0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_PROCESS_CPUTIME_ID);
        for (long i = 0; i < count; i++) {
                snprintf(path, sizeof path, "%s/c%ld", argv[2], i);
                int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0644);
                if (fd < 0 || write(fd, buf, sizeof buf) != (ssize_t) sizeof buf) {
                        perror(path);
                        return 1;
                }
                close(fd);
        }
        printf("%.6f %.6f\n", now(CLOCK_MONOTONIC) - w0, now(CLOCK_PROCESS_CPUTIME_ID) - c0);
        return 0;
}
