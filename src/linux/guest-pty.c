/* SPDX-License-Identifier: Apache-2.0 */
/* The microvm guest's terminal (guest-pty.h). */
#include "linux/guest-pty.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

static int master = -1; /* the PTY's master, once opened */

int guest_pty_mount(const char *root) {
        char pts[256], ptmx[256];
        (void) snprintf(pts, sizeof(pts), "%s/dev/pts", root);
        (void) snprintf(ptmx, sizeof(ptmx), "%s/dev/ptmx", root);
        (void) mkdir(pts, 0755);
        /* newinstance: the guest's devtmpfs has no devpts, and this one holds only the
         * command's terminals. ptmxmode 0666: the command (not root) may open PTYs of its
         * own, as on any host (they are the guest kernel's, reaching nothing outside it). */
        if (mount("devpts", pts, "devpts", MS_NOSUID | MS_NOEXEC,
                  "newinstance,ptmxmode=0666,mode=0620") < 0)
                return -1;
        return symlink("pts/ptmx", ptmx);
}

static void put_winsize(int fd, uint16_t rows, uint16_t cols) {
        struct winsize ws = { .ws_row = rows, .ws_col = cols };
        (void) ioctl(fd, TIOCSWINSZ, &ws);
}

int guest_pty_open(const char *root, uint16_t rows, uint16_t cols, uid_t uid, gid_t gid,
                   int fds[6]) {
        char ptmx[256];
        (void) snprintf(ptmx, sizeof(ptmx), "%s/dev/pts/ptmx", root);
        int m = open(ptmx, O_RDWR | O_NOCTTY | O_CLOEXEC);
        int unlock = 0;
        if (m < 0)
                return -1;
        /* TIOCGPTPEER: the slave of this very master, opened without a lookup by name. */
        int s = ioctl(m, TIOCSPTLCK, &unlock) < 0
                        ? -1
                        : ioctl(m, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
        /* The command's own terminal: its owner may reopen it (tty(1) stats it, programs
         * open their terminal by name), nobody else in the guest. */
        if (s < 0 || fchown(s, uid, gid) < 0 || fchmod(s, 0620) < 0) {
                int e = errno;
                (void) close(m);
                if (s >= 0)
                        (void) close(s);
                errno = e;
                return -1;
        }
        put_winsize(m, rows, cols);
        master = m;
        fds[0] = s;
        fds[1] = fcntl(m, F_DUPFD_CLOEXEC, 3);
        fds[2] = m;
        fds[3] = fcntl(s, F_DUPFD_CLOEXEC, 3);
        fds[4] = -1;
        fds[5] = fcntl(s, F_DUPFD_CLOEXEC, 3);
        return fds[1] < 0 || fds[3] < 0 || fds[5] < 0 ? -1 : 0;
}

int guest_pty_take(void) {
        return master < 0 ? 0 : ioctl(0, TIOCSCTTY, 0);
}

void guest_pty_resize(const uint8_t *payload, size_t size) {
        if (master < 0 || size != 4)
                return;
        put_winsize(master, (uint16_t) (payload[0] | payload[1] << 8),
                    (uint16_t) (payload[2] | payload[3] << 8));
}

void guest_pty_forget(void) {
        master = -1;
}

void guest_pty_hangup(pid_t cmd) {
        if (master >= 0)
                (void) kill(-cmd, SIGHUP);
}
