/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target for the CLI argument parser (src/cli/args.c). The input is split on NUL bytes into
 * argv[1..]; the parser runs (nothing is executed) and its promises are checked: on success every
 * path is absolute and `run` has a non-empty command; on failure the code is one the CLI documents
 * and the message is one printable line (a hostile argument must not forge a second fatal line).
 * Built two ways:
 *   - with libFuzzer (-DCORDON_LIBFUZZER, clang -fsanitize=fuzzer,address,undefined);
 *   - as a plain program (with fuzz/replay.c) that replays the files and directories named on its
 *     command line, so the unit suite runs the seed corpus. There, files named "valid-*" must
 *     parse and files named "invalid-*" must be refused. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"

#include "replay.h"

#define FUZZ_MAX_INPUT 8192
#define FUZZ_MAX_ARGS 128

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

__attribute__((noreturn)) static void broken(const char *what) {
        fprintf(stderr, "fuzz-cli-args: broken promise: %s\n", what);
        abort();
}

static bool is_path_flag(cli_flag f) {
        return f == CLI_FLAG_POLICY || f == CLI_FLAG_WRITABLE || f == CLI_FLAG_READ_ONLY ||
               f == CLI_FLAG_PROTECT || f == CLI_FLAG_RUNNER_STATE_DIR ||
               f == CLI_FLAG_DENY_READ || f == CLI_FLAG_DENY_WRITE || f == CLI_FLAG_WORKDIR;
}

static void check_success(const cli_args *a) {
        for (size_t i = 0; i < a->n_settings; i++) {
                const cli_setting *s = &a->settings[i];
                if ((unsigned) s->flag >= _CLI_FLAG_MAX)
                        broken("setting with an unknown flag");
                if (is_path_flag(s->flag) && (!s->text || s->text[0] != '/'))
                        broken("a path flag's value is not absolute");
                if (s->flag == CLI_FLAG_ENV_SET && (!s->text || !s->text[0] || !s->text2))
                        broken("--env-set without a NAME or VALUE");
        }
        bool has_cmd = a->command == CLI_COMMAND_RUN || a->command == CLI_COMMAND_EXEC;
        if (has_cmd && (!a->argv || !a->argv[0] || !a->argv[0][0]))
                broken("run or exec without a command");
        if (!has_cmd && a->argv)
                broken("a command vector outside run and exec");
        if (a->command == CLI_COMMAND_EXEC && (!a->session_id || !a->session_id[0]))
                broken("exec without a session");
        if ((a->socket_path && a->socket_path[0] != '/') || (a->exec_cwd && a->exec_cwd[0] != '/'))
                broken("--socket or --cwd is not absolute");
}

static void check_failure(const cordon_error *err) {
        if (err->code != CORDON_USAGE && err->code != CORDON_POLICY_INVALID &&
            err->code != CORDON_LAUNCH_FAILED)
                broken("an undocumented error code");
        size_t n = strnlen(err->message, sizeof(err->message));
        if (n == 0 || n == sizeof(err->message))
                broken("an empty or unterminated message");
        for (size_t i = 0; i < n; i++)
                if ((unsigned char) err->message[i] < 0x20 || err->message[i] == 0x7f)
                        broken("a control character in a message");
}

/* Returns the parser's result. */
static int run_one(const uint8_t *data, size_t size) {
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
        int r = cli_args_parse(argc, argv, "/fuzz/cwd", &a, &err);
        if (r == 0)
                check_success(&a);
        else
                check_failure(&err);
        cli_args_done(&a);
        free(buf);
        return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (size <= FUZZ_MAX_INPUT)
                (void) run_one(data, size);
        return 0;
}

#ifndef CORDON_LIBFUZZER
bool fuzz_replay_seed(const char *name, const uint8_t *data, size_t size) {
        /* LLVMFuzzerTestOneInput() passes over larger inputs: a seed that big tests nothing. */
        if (size > FUZZ_MAX_INPUT) {
                fprintf(stderr, "%s: larger than %d bytes\n", name, FUZZ_MAX_INPUT);
                return false;
        }
        return fuzz_named_verdict(name, run_one(data, size), NULL);
}
#endif
