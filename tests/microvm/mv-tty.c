/* SPDX-License-Identifier: Apache-2.0 */
/* tests/microvm/mv-tty: CORDON_SPAWN_TTY into a microvm run (docs/design/microvm.md
 * "Terminals"), as cordond's session.terminal gives a command its terminal: opens a PTY of 24x80,
 * spawns CMD on the microvm backend with microvm.accel ACCEL with the slave as its stdin,
 * stdout and stderr (the VMM host's controlling terminal), copies what the master reads to its
 * own stdout, sets the size to 50x132 on the master once the command printed a line starting
 * "ARMED" (the kernel signals the terminal's foreground group: the VMM host's stdin pump), and
 * ends with "exit=N" (the run's exit code) after the command's output.
 *     mv-tty kvm|tcg CMD [ARG...] */
#include <pty.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cordon/cordon.h"

static int fail(const char *what, const cordon_error *err) {
        fprintf(stderr, "mv-tty: %s: %s\n", what, err ? err->message : "failed");
        return 125;
}

/* Copies the terminal's output (to EIO: every holder of the slave closed it), resizing after
 * the line "ARMED". */
static void relay(int master, FILE *in) {
        char line[4096];
        while (fgets(line, sizeof(line), in)) {
                fputs(line, stdout);
                (void) fflush(stdout);
                struct winsize ws = { .ws_row = 50, .ws_col = 132 };
                if (strncmp(line, "ARMED", 5) == 0)
                        (void) ioctl(master, TIOCSWINSZ, &ws);
        }
}

int main(int argc, char *argv[]) {
        if (argc < 3)
                return fail("usage: mv-tty kvm|tcg CMD [ARG...]", NULL);
        cordon_error err = { 0 };
        cordon_policy *pol = NULL;
        char *cwd = getcwd(NULL, 0);
        if (!cwd || cordon_policy_new_default(cwd, getenv("HOME"), &pol, &err) < 0)
                return fail("policy", &err);
        if (cordon_policy_set_microvm_accel(pol, argv[1]) < 0)
                return fail("microvm.accel", NULL);
        int master = -1, slave = -1;
        struct winsize ws = { .ws_row = 24, .ws_col = 80 };
        if (openpty(&master, &slave, NULL, NULL, &ws) < 0)
                return fail("openpty", NULL);
        cordon_spawn_options o;
        cordon_spawn_options_init(&o);
        o.backend = CORDON_BACKEND_MICROVM;
        o.stdin_fd = o.stdout_fd = o.stderr_fd = slave;
        o.flags = CORDON_SPAWN_TTY;
        cordon_process *p = NULL;
        if (cordon_spawn(pol, argv + 2, &o, &p, &err) < 0)
                return fail("cordon_spawn", &err);
        (void) close(slave); /* the sandbox holds its own */
        FILE *in = fdopen(master, "r");
        if (!in)
                return fail("fdopen", NULL);
        relay(master, in);
        cordon_run_result res = { 0 };
        int r = 0;
        if (cordon_process_wait(p, -1, &res, &err) < 0)
                r = fail("cordon_process_wait", &err);
        if (r == 0)
                printf("exit=%d\n", res.exit_code);
        (void) fclose(in);
        cordon_process_free(p);
        cordon_policy_free(pol);
        free(cwd);
        return r;
}
