/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target for the CLI argument parser (src/cli/args.c). The input is split on NUL bytes
 * into argv[1..]; the parser runs (nothing is executed) and its promises are checked: on success
 * every path is absolute and `run` has a non-empty command; on failure the message is one
 * printable line and the code is one the CLI documents. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"

#define FUZZ_MAX_INPUT 8192
#define FUZZ_MAX_ARGS 128

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool is_path_flag(cli_flag f) {
        return f == CLI_FLAG_POLICY || f == CLI_FLAG_WRITABLE || f == CLI_FLAG_READ_ONLY ||
               f == CLI_FLAG_PROTECT || f == CLI_FLAG_RUNNER_STATE_DIR ||
               f == CLI_FLAG_DENY_READ || f == CLI_FLAG_DENY_WRITE || f == CLI_FLAG_WORKDIR;
}

static void check_success(const cli_args *a) {
        for (size_t i = 0; i < a->n_settings; i++) {
                const cli_setting *s = &a->settings[i];
                if ((unsigned) s->flag >= _CLI_FLAG_MAX)
                        __builtin_trap();
                if (is_path_flag(s->flag) && (!s->text || s->text[0] != '/'))
                        __builtin_trap();
                if (s->flag == CLI_FLAG_ENV_SET && (!s->text || !s->text[0] || !s->text2))
                        __builtin_trap();
        }
        if (a->command == CLI_COMMAND_RUN && (!a->argv || !a->argv[0] || !a->argv[0][0]))
                __builtin_trap();
        if (a->command != CLI_COMMAND_RUN && a->argv)
                __builtin_trap();
}

static void check_failure(const cordon_error *err) {
        if (err->code != CORDON_USAGE && err->code != CORDON_POLICY_INVALID &&
            err->code != CORDON_LAUNCH_FAILED)
                __builtin_trap();
        size_t n = strnlen(err->message, sizeof(err->message));
        if (n == 0 || n == sizeof(err->message))
                __builtin_trap();
        for (size_t i = 0; i < n; i++)
                if ((unsigned char) err->message[i] < 0x20)
                        __builtin_trap(); /* a forged second fatal line */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (size > FUZZ_MAX_INPUT)
                return 0;
        char *buf = malloc(size + 1);
        if (!buf)
                return 0;
        memcpy(buf, data, size);
        buf[size] = '\0';
        char *argv[FUZZ_MAX_ARGS + 1] = { (char *) "cordon" };
        int argc = 1;
        for (size_t off = 0; off < size && argc < FUZZ_MAX_ARGS; argc++) {
                argv[argc] = buf + off;
                off += strlen(buf + off) + 1;
        }
        argv[argc] = NULL;

        cli_args a;
        cordon_error err = { 0 };
        if (cli_args_parse(argc, argv, "/fuzz/cwd", &a, &err) == 0)
                check_success(&a);
        else
                check_failure(&err);
        cli_args_done(&a);
        free(buf);
        return 0;
}
