/* SPDX-License-Identifier: Apache-2.0 */
/* The cordond clients of `cordon` (docs/protocol.md, docs/cli.md): session launch, list and
 * destroy, and exec. Each connects to the daemon's socket (--socket PATH, else the daemon's own
 * default), refuses a socket served by another user, sends one request and prints what the
 * answer says. Like every command, they print exactly one "cordon: fatal: CODE: message" line and
 * return 125 when they fail; an error response from the daemon is such a failure. */
#pragma once

#include "cli/args.h"

/* cordon session launch: builds the session's policy layer from the policy flags (cli-policy.c),
 * launches the session with workdir = the last --workdir, else `cwd`, and prints its id. A
 * session that comes back in state "error" is destroyed again and its error is the fatal line.
 * Returns the exit status. */
int cli_cmd_session_launch(const cli_args *a, const char *cwd);

/* cordon session list [--json]: one line per session (or the result object with --json). */
int cli_cmd_session_list(const cli_args *a);

/* cordon session destroy SESSION: prints nothing on success. */
int cli_cmd_session_destroy(const cli_args *a);

/* cordon exec SESSION -- CMD...: streams CMD's stdout/stderr events to fds 1/2 as they arrive
 * and returns CMD's exit status (128+N for signal N), or 125 after the fatal line for an error
 * response. Standard input (unless a terminal) is read to its end first, at most 1 MiB of
 * UTF-8 text without NUL, and sent whole. */
int cli_cmd_exec(const cli_args *a);

/* cordon terminal [--native] SESSION: a PTY in the session (docs/protocol.md, session.terminal):
 * the user's own shell (backend none) unless --native asks for one inside the session's sandbox,
 * which fails rather than fall back. Keys go through raw; SIGWINCH resizes; exits with the
 * shell's status. */
int cli_cmd_terminal(const cli_args *a);
