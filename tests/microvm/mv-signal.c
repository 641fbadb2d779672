/* SPDX-License-Identifier: Apache-2.0 */
/* tests/microvm/mv-signal: cordon_process_signal() into a microvm run (docs/design/microvm.md
 * "Channels"): spawns CMD on the microvm backend with microvm.accel ACCEL under the embedded
 * default policy for the current directory and $HOME, copies the command's stdout to its own,
 * sends SIGTERM through cordon_process_signal() once the command printed the line "ready", and
 * ends with "exit=N" (the run's exit code) after the command's output.
 *     mv-signal kvm|tcg CMD [ARG...] */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cordon/cordon.h"

static int fail(const char *what, const cordon_error *err) {
        fprintf(stderr, "mv-signal: %s: %s\n", what, err ? err->message : "failed");
        return 125;
}

/* Copies the command's output, sending the signal after the line "ready". */
static int relay(cordon_process *p, FILE *in) {
        char line[4096];
        cordon_error err = { 0 };
        while (fgets(line, sizeof(line), in)) {
                fputs(line, stdout);
                (void) fflush(stdout);
                if (strcmp(line, "ready\n") == 0 && cordon_process_signal(p, SIGTERM, &err) < 0)
                        return fail("cordon_process_signal", &err);
        }
        return 0;
}

int main(int argc, char *argv[]) {
        if (argc < 3)
                return fail("usage: mv-signal kvm|tcg CMD [ARG...]", NULL);
        cordon_error err = { 0 };
        cordon_policy *pol = NULL;
        char *cwd = getcwd(NULL, 0);
        if (!cwd || cordon_policy_new_default(cwd, getenv("HOME"), &pol, &err) < 0)
                return fail("policy", &err);
        if (cordon_policy_set_microvm_accel(pol, argv[1]) < 0)
                return fail("microvm.accel", NULL);
        int out[2];
        if (pipe(out) < 0)
                return fail("pipe", NULL);
        cordon_spawn_options o;
        cordon_spawn_options_init(&o);
        o.backend = CORDON_BACKEND_MICROVM;
        o.stdin_fd = CORDON_FD_NULL;
        o.stdout_fd = out[1];
        cordon_process *p = NULL;
        if (cordon_spawn(pol, argv + 2, &o, &p, &err) < 0)
                return fail("cordon_spawn", &err);
        (void) close(out[1]);
        FILE *in = fdopen(out[0], "r");
        int r = in ? relay(p, in) : fail("fdopen", NULL);
        cordon_run_result res = { 0 };
        if (r == 0 && cordon_process_wait(p, -1, &res, &err) < 0)
                r = fail("cordon_process_wait", &err);
        if (r == 0)
                printf("exit=%d\n", res.exit_code);
        cordon_process_free(p);
        cordon_policy_free(pol);
        free(cwd);
        return r;
}
