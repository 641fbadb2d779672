/* SPDX-License-Identifier: Apache-2.0 */
/* The microvm backend's terminal, host half (vm-pty.h). */
#include "linux/vm-pty.h"

#include <errno.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

static struct {
        bool on;
        pid_t owner;                /* the VMM host: only it restores (not the pump, a fork) */
        bool out_apart;             /* stdout is another terminal than stdin: its modes too */
        struct termios in, out;     /* as found */
        vm_exec_tty sent;           /* the size the guest has */
} tty;

static bool same_terminal(int a, int b) {
        struct stat sa, sb;
        return fstat(a, &sa) == 0 && fstat(b, &sb) == 0 && sa.st_rdev == sb.st_rdev;
}

/* Raw: bytes pass both ways unchanged, the guest's line discipline does the rest. TOSTOP off:
 * the VMM host writes the output from a background process group when the terminal is its
 * controlling one (vm_pty_pump_foreground). */
static int make_raw(int fd, const struct termios *found) {
        struct termios raw = *found;
        cfmakeraw(&raw);
        raw.c_lflag &= ~(tcflag_t) TOSTOP;
        raw.c_cc[VMIN] = 1;
        raw.c_cc[VTIME] = 0;
        return tcsetattr(fd, TCSANOW, &raw);
}

static void get_size(vm_exec_tty *size) {
        struct winsize ws = { 0 };
        (void) ioctl(0, TIOCGWINSZ, &ws);
        *size = (vm_exec_tty) { .rows = ws.ws_row, .cols = ws.ws_col };
}

int vm_pty_begin(const plan *p, vm_exec_tty *size) {
        if (!p->tty && !(isatty(0) && isatty(1)))
                return 0;
        /* The VMM host's mode changes and its writes from a background process group
         * (vm_pty_pump_foreground) must not stop it; inherited by the pump and the VMM. */
        (void) signal(SIGTTOU, SIG_IGN);
        if (tcgetattr(0, &tty.in) < 0)
                return -1;
        tty.out_apart = isatty(1) && !same_terminal(0, 1);
        if (tty.out_apart && tcgetattr(1, &tty.out) < 0)
                return -1;
        tty.owner = getpid();
        tty.on = true; /* from here on vm_pty_restore() puts back what was found */
        if (make_raw(0, &tty.in) < 0 || (tty.out_apart && make_raw(1, &tty.out) < 0))
                return -1;
        get_size(size);
        tty.sent = *size;
        return 1;
}

void vm_pty_restore(void) {
        if (!tty.on || getpid() != tty.owner)
                return;
        tty.on = false;
        /* TCSADRAIN: the guest's last output reaches the screen in raw mode, as it was sent. */
        (void) tcsetattr(0, TCSADRAIN, &tty.in);
        if (tty.out_apart)
                (void) tcsetattr(1, TCSADRAIN, &tty.out);
}

void vm_pty_pump_foreground(void) {
        if (tty.on && tcgetsid(0) == getsid(0))
                (void) tcsetpgrp(0, getpgrp()); /* SIGTTOU ignored: allowed from the background */
}

bool vm_pty_resized(uint8_t out[4]) {
        vm_exec_tty now;
        if (!tty.on)
                return false;
        get_size(&now);
        if (now.rows == tty.sent.rows && now.cols == tty.sent.cols)
                return false;
        tty.sent = now;
        vm_resize_encode(out, now.rows, now.cols);
        return true;
}
