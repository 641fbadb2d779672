/* SPDX-License-Identifier: Apache-2.0 */
#include "cli/help.h"

static const char overview[] =
        "Usage: cordon COMMAND [OPTIONS]\n"
        "\n"
        "Runs a command inside an OS-enforced sandbox (Linux namespaces + Landlock + seccomp).\n"
        "\n"
        "Commands:\n"
        "  run [OPTIONS] [--] CMD [ARG...]   run CMD under the resolved policy\n"
        "  explain [OPTIONS]                 classify a finished run: ok, command-failed,\n"
        "                                    sandbox-denied or sandbox-broken, and why\n"
        "  probe [--json]                    report which sandbox backends work on this host\n"
        "  policy show [--json] [OPTIONS]    print the resolved policy and its plan\n"
        "  policy show --seatbelt [OPTIONS]  print its macOS Seatbelt profile (any platform)\n"
        "  policy show --explain [OPTIONS]   print where each value came from (settings files)\n"
        "  settings import FILE              print a settings file (e.g. ~/.srt-settings.json)\n"
        "                                    as the equivalent cordon settings file\n"
        "  settings trust [PATH]             let a project settings file loosen the sandbox\n"
        "                                    (also: settings untrust [PATH], settings trusted)\n"
        "  session launch|list|destroy       manage cordond's warm sandbox sessions\n"
        "  exec SESSION [--] CMD [ARG...]    run CMD in a cordond session, like 'run'\n"
        "  terminal [--native] SESSION       a terminal in a cordond session\n"
        "  cache list | cache clear [TOOL]   the sandbox-owned tool caches (npm, pip, go, ...)\n"
        "  secret set NAME | list | rm NAME  the secrets a policy's credentials send\n"
        "  mcp [OPTIONS]                     serve the sandbox to an agent as MCP tools on stdio\n"
        "  completion bash|zsh|fish          print a shell completion script\n"
        "  version, --version                print the version\n"
        "  help [COMMAND], --help, -h        print this help, or a command's\n"
        "\n"
        "Exit status of 'run': the command's own status, 128+N when it died of signal N, and 125\n"
        "with one line 'cordon: fatal: CODE: message' on stderr when cordon itself failed.\n"
        "See docs/cli.md.\n";

#define POLICY_OPTIONS                                                                            \
        "Policy options (applied in order over the built-in default; relative paths are made\n"   \
        "absolute against the current directory; '--opt value' and '--opt=value' both work):\n"  \
        "  --policy FILE              merge a JSON policy file (repeatable)\n"                    \
        "  --settings FILE            a settings file, cordon's or srt's format (repeatable;\n"   \
        "                             below managed settings, above user and project ones)\n"    \
        "  --mode MODE                workspace-write (chat), read-only (review, plan,\n"         \
        "                             orchestrate) or danger-full-access (no sandbox)\n"          \
        "  --sandbox on|off           off runs the command UNPROTECTED\n"                         \
        "  --backend NAME             auto, native, landlock, microvm or none\n"                  \
        "  --writable PATH            add a writable root\n"                                      \
        "  --read-only PATH           add a read-only bind\n"                                     \
        "  --protect PATH             never writable, in any mode\n"                              \
        "  --runner-state-dir PATH    writable in every mode\n"                                   \
        "  --deny-read PATH           never readable (added to the secret set)\n"                 \
        "  --deny-write PATH          never writable\n"                                           \
        "  --block-reads-outside-workdirs  the home directories unreadable but for the roots\n"  \
        "  --allow-read PATH          readable despite --block-reads-outside-workdirs\n"         \
        "  --deny-create-name GLOB    a file name that may not be created in writable roots\n"   \
        "  --allow-create-name GLOB   a file name a deny-create glob with wildcards lets through\n" \
        "  --allow-create-path PATH   a path (or glob) a deny-create glob with wildcards lets through\n" \
        "  --env-pass NAME            keep this variable even if it looks secret\n"               \
        "  --env-set NAME=VALUE       set a variable for the command\n"                           \
        "  --env-scrub GLOB           also drop variables whose name matches\n"                   \
        "  --workdir DIR              the directory the command starts in\n"                      \
        "  --session-id ID            the session identifier\n"                                   \
        "  --timeout DURATION         kill the command after DURATION (30s, 500ms, 2m, 1h)\n"     \
        "  --memory SIZE              memory limit (512M, 2G)\n"                                  \
        "  --pids N                   at most N processes and threads (default 2048)\n"           \
        "  --cpus N                   the microvm backend's vCPUs (default 1)\n"                   \
        "  --cpu SECONDS              CPU-time limit\n"                                           \
        "  --tmp-size SIZE            size of the private /tmp (default 2G, at most RAM/4)\n"     \
        "  --shm-size SIZE            size of the private /dev/shm (default 256M, at most RAM/4)\n"\
        "  --no-network               the proxy refuses every destination\n"                    \
        "  --allow-domain PATTERN     let the proxy reach PATTERN (host, *.host, host:port)\n"   \
        "  --deny-domain PATTERN      refuse PATTERN even when allowed\n"                         \
        "  --resolve NAME=ADDRESS     the proxy resolves NAME to ADDRESS (like curl --resolve)\n"   \
        "  --upstream-proxy URL       reach allowed hosts through this parent proxy\n" \
        "  --egress-ask               ask (on the terminal) before an unlisted destination\n" \
        "  --ask-timeout DURATION     how long a question waits for its answer (default 30s)\n" \
        "  --microvm-accel kvm|tcg    the microvm backend's accelerator; tcg (software\n"         \
        "                             emulation) where KVM cannot boot a stock kernel\n"

static const char run_help[] =
        "Usage: cordon run [OPTIONS] [--] CMD [ARG...]\n"
        "\n"
        "Runs CMD (searched in PATH) in a sandbox built from the resolved policy and waits for it.\n"
        "Options end at '--' or at the first argument that is not an option.\n"
        "\n" POLICY_OPTIONS
        "  --events FILE|fd:N         write the run's events as JSON lines, one object each\n"
        "                             to FILE (created 0600, truncated) or to open fd N >= 3\n"
        "  --analytics FILE           the violations as records safe to send away (action,\n"
        "                             keyed hash of the path or host, counts) to FILE (0600)\n"
        "  --capture                  also put CMD's stdout and stderr into the events (they\n"
        "                             still reach cordon's own stdout and stderr unchanged)\n"
        "  --json=FILE|fd:N           at the end, write one summary object (status, backend,\n"
        "                             exit code, duration, refusals) to FILE or fd N >= 3\n"
        "  --quiet                    no 'cordon: denied ...' lines when stderr is a terminal\n"
        "  -h, --help                 print this help\n"
        "\n"
        "Exit status: CMD's own; 128+N if CMD died of signal N; 125 plus one line\n"
        "'cordon: fatal: CODE: message' on stderr if the sandbox could not be built, the command\n"
        "could not be executed or the arguments are wrong (CODE is USAGE, POLICY_INVALID,\n"
        "POLICY_UNENFORCEABLE, SANDBOX_UNAVAILABLE, LAUNCH_FAILED, EXEC_FAILED, TIMEOUT, KILLED).\n"
        "When no backend can enforce the policy nothing runs (SANDBOX_UNAVAILABLE).\n";

static const char probe_help[] =
        "Usage: cordon probe [--json]\n"
        "\n"
        "Reports each backend (native, landlock, microvm, none) as full, partial or unusable,\n"
        "what it enforces, whether it needs something installed, and the kernel facts behind it\n"
        "(user namespaces, Landlock ABI, seccomp user notification, openat2, cgroup v2, KVM),\n"
        "each found by trying the feature.\n"
        "\n"
        "  --json       machine-readable output\n"
        "  -h, --help   print this help\n";

static const char policy_help[] =
        "Usage: cordon policy show [--json | --seatbelt] [OPTIONS]\n"
        "\n"
        "Prints the policy 'cordon run' would use with the same options, resolved over the\n"
        "built-in default, and the plan derived from it (mounts, Landlock rules, seccomp rules,\n"
        "environment). --sandbox and --backend are checked but do not change the plan.\n"
        "\n"
        "  --json                     print JSON instead of indented text\n"
        "  --seatbelt                 print the macOS Seatbelt profile (SBPL) instead, as\n"
        "                             'sandbox-exec -p' takes it; works on every platform\n"
        "  --explain                  print each value with the layer, file, key and position\n"
        "                             it came from, the switches, the excluded commands and the\n"
        "                             settings that were ignored (with --json: as JSON)\n"
        POLICY_OPTIONS
        "  -h, --help                 print this help\n";

static const char explain_help[] =
        "Usage: cordon explain [--events FILE|fd:N] [--status N] [--stderr FILE] [--json]\n"
        "\n"
        "Classifies a finished run as ok, command-failed, sandbox-denied (each refusal the\n"
        "sandbox observed, with the policy change that would allow it or the rule that stands)\n"
        "or sandbox-broken (cordon itself failed: its fatal code and message). Exit status 125\n"
        "alone proves nothing: a command may exit 125 by itself.\n"
        "\n"
        "  --events FILE|fd:N   the run's events ('cordon run --events'): the best evidence\n"
        "  --status N           the exit status the run ended with (0-255)\n"
        "  --stderr FILE        the run's standard error: cordon's fatal line, and words such as\n"
        "                       'Permission denied' (reported as inferred, never as observed)\n"
        "  --json               print one JSON object (the same as 'cordon run --json=...')\n"
        "  -h, --help           print this help\n"
        "\n"
        "Exit status: 0 when the run was classified; 125 and one fatal line when the inputs\n"
        "cannot be read or do not tell how the run ended. See docs/explain.md.\n";

static const char settings_help[] =
        "Usage: cordon settings import FILE\n"
        "       cordon settings trust [PATH]\n"
        "       cordon settings untrust [PATH]\n"
        "       cordon settings trusted [--json]\n"
        "\n"
        "Reads a settings file in cordon's format or in the Node sandbox runtime's\n"
        "(~/.srt-settings.json: filesystem.*, network.*, credentials.*) and prints the equivalent\n"
        "cordon settings file on stdout. Keys cordon cannot honour are errors unless the file\n"
        "lists them in \"cordon\": {\"bestEffort\": [...]}; each one left out, and paths resolved\n"
        "against the current directory, get a warning on stderr. See docs/settings.md.\n"
        "\n"
        "Settings files are read by 'run' and 'policy show': managed\n"
        "(/etc/cordon/managed-settings.json, or $CORDON_MANAGED_SETTINGS) > --settings FILE >\n"
        "~/.config/cordon/settings.json > project settings.\n"
        "\n"
        "Project settings are <root>/.cordon/settings.json, the root being the nearest of the\n"
        "current directory and its ancestors that holds one (not above $HOME). They may always\n"
        "tighten the sandbox; what they would loosen (danger-full-access, writable binds,\n"
        "domains, excludedCommands, ...) is ignored, with a warning, until you trust the file's\n"
        "exact content:\n"
        "\n"
        "  trust [PATH]     show what the project file for PATH (a directory, default the\n"
        "                   current one, or the file) loosens, and record its SHA-256 in\n"
        "                   ~/.config/cordon/trusted-projects.json; a changed byte makes it\n"
        "                   untrusted again. A sandboxed command cannot do this: the store is\n"
        "                   read-only inside every sandbox\n"
        "  untrust [PATH]   remove the record\n"
        "  trusted          list the records and whether each file still matches\n";

static const char cache_help[] =
        "Usage: cordon cache list\n"
        "       cordon cache clear [TOOL]\n"
        "\n"
        "The sandbox-owned tool caches: one directory that sandboxed runs may write, by default\n"
        "$XDG_CACHE_HOME/cordon/tools (~/.cache/cordon/tools; /var/tmp/cordon-UID/cordon/tools\n"
        "without a home directory), with npm, pnpm, yarn, bun, pip, uv, cargo, go, gradle and\n"
        "maven pointed into it. The host's own caches are never written. 'list' prints each\n"
        "cache and its size; 'clear' removes every cache, or TOOL's (a built-in tool or a\n"
        "toolCaches.extra name), never following a link out of the cache.\n"
        "Turn them off with \"toolCaches\": false in a policy. See docs/design/tool-caches.md.\n";

static const char secret_help[] =
        "Usage: cordon secret set NAME       (the value on standard input)\n"
        "       cordon secret list [--json]\n"
        "       cordon secret rm NAME\n"
        "\n"
        "cordon's secret store: named values that a policy's credentials send to their hosts\n"
        "through the egress proxy; a sandboxed command never reads them. They live in the\n"
        "Secret Service (GNOME Keyring, KeePassXC, ...) when the session bus has one, else in\n"
        "one 0600 file per secret in ~/.config/cordon/secrets/store; each command says which\n"
        "store it used and why. NAME is 1-64 of A-Z a-z 0-9 . _ - (not starting with '.' or '-').\n"
        "  set NAME   read the value from standard input (from a terminal: a prompt, no echo);\n"
        "             one trailing newline is removed; 1-16384 bytes, no NUL. Never an argument:\n"
        "             other users can read a command line with ps.\n"
        "  list       print the names (never the values); --json: the store and the names\n"
        "  rm NAME    remove the secret\n"
        "See docs/design/secrets.md.\n";

static const char session_help[] =
        "Usage: cordon session launch [POLICY OPTIONS] [--workdir DIR] [--backend NAME]\n"
        "                             [--analytics FILE] [--socket PATH]\n"
        "       cordon session list [--json] [--socket PATH]\n"
        "       cordon session destroy [--socket PATH] SESSION\n"
        "\n"
        "Clients of cordond, the daemon that keeps warm sandbox sessions (docs/protocol.md).\n"
        "'launch' builds the session's policy layer from the same options as 'cordon run'\n"
        "(cordond applies the settings files itself; no --settings), starts the session and\n"
        "prints its id; its workspace is --workdir DIR, else the current directory. 'list'\n"
        "prints every session (--json: the daemon's result object). 'destroy' kills\n"
        "everything in the session.\n"
        "\n"
        "  --socket PATH   cordond's socket (default: $XDG_RUNTIME_DIR/cordon/cordond.sock,\n"
        "                  else /run/user/cordon-UID/ or /tmp/cordon-UID/cordond.sock)\n"
        "  --analytics FILE  launch: cordond appends every exec's analytics records to FILE\n"
        "\n" POLICY_OPTIONS
        "\n"
        "Exit status: 0, or 125 and one line 'cordon: fatal: CODE: message' (a session that\n"
        "fails to launch is destroyed again and its error reported this way).\n";

static const char exec_help[] =
        "Usage: cordon exec SESSION [--cwd DIR] [--env NAME=VALUE]... [--socket PATH]\n"
        "                   [--quiet] [--] CMD [ARG...]\n"
        "\n"
        "Runs CMD in the cordond session SESSION ('cordon session launch') and waits for it, like\n"
        "'cordon run': CMD's stdout and stderr arrive on cordon's own as CMD writes them.\n"
        "Standard input, unless it is a terminal, is read to its end first and given to CMD\n"
        "whole: at most 1 MiB of UTF-8 text without NUL (the protocol's request limit).\n"
        "Options end at '--' or at the first argument after SESSION that is not an option.\n"
        "\n"
        "  --cwd DIR          the directory CMD starts in (default: the session's workdir)\n"
        "  --env NAME=VALUE   set a variable for CMD as given (repeatable)\n"
        "  --socket PATH      cordond's socket (default as for 'cordon session')\n"
        "  --quiet            no 'cordon: denied ...' lines when stderr is a terminal (they\n"
        "                     are the same lines as 'cordon run' prints, after CMD ends)\n"
        "  -h, --help         print this help\n"
        "\n"
        "Exit status: CMD's own; 128+N if CMD died of signal N; 125 plus one line\n"
        "'cordon: fatal: CODE: message' when the daemon answered with an error (the sandbox\n"
        "could not run CMD, no such session, ...) or cannot be reached. Interrupting cordon\n"
        "closes the connection, and the daemon kills CMD with everything it started.\n";

static const char terminal_help[] =
        "Usage: cordon terminal [--native] [--socket PATH] SESSION\n"
        "\n"
        "Opens a terminal (a PTY) in the cordond session SESSION and connects it to this one:\n"
        "keys go through as typed, window size changes follow, and cordon exits with the\n"
        "shell's status. By default the shell is your own, unconfined, as an IDE terminal is;\n"
        "--native runs it inside the session's sandbox instead, and fails\n"
        "(SANDBOX_UNAVAILABLE) rather than show a host shell when the session cannot.\n"
        "\n"
        "  --native           the shell inside the session's sandbox\n"
        "  --socket PATH      cordond's socket (default as for 'cordon session')\n"
        "  -h, --help         print this help\n";

static const char mcp_help[] =
        "Usage: cordon mcp [OPTIONS]\n"
        "\n"
        "A Model Context Protocol server on stdin/stdout (JSON-RPC 2.0, one message per line):\n"
        "the tools shell, read_file, write_file, edit_file, list_directory, session_create,\n"
        "session_exec, session_destroy and session_list run every command and file operation\n"
        "under the policy these options resolve, exactly as for 'cordon run' (settings files,\n"
        "managed settings). Logs go to stderr. See docs/mcp.md.\n"
        "\n" POLICY_OPTIONS
        "  -h, --help                 print this help\n";

static const char version_help[] = "Usage: cordon version | cordon --version\n";

const char *cli_help_text(cli_command topic) {
        switch (topic) {
        case CLI_COMMAND_RUN:
                return run_help;
        case CLI_COMMAND_PROBE:
                return probe_help;
        case CLI_COMMAND_POLICY_SHOW:
                return policy_help;
        case CLI_COMMAND_VERSION:
                return version_help;
        case CLI_COMMAND_EXPLAIN:
                return explain_help;
        case CLI_COMMAND_SETTINGS_IMPORT:
        case CLI_COMMAND_SETTINGS_TRUST:
        case CLI_COMMAND_SETTINGS_UNTRUST:
        case CLI_COMMAND_SETTINGS_TRUSTED:
                return settings_help;
        case CLI_COMMAND_SESSION_LAUNCH:
        case CLI_COMMAND_SESSION_LIST:
        case CLI_COMMAND_SESSION_DESTROY:
                return session_help;
        case CLI_COMMAND_EXEC:
                return exec_help;
        case CLI_COMMAND_TERMINAL:
                return terminal_help;
        case CLI_COMMAND_CACHE:
                return cache_help;
        case CLI_COMMAND_MCP:
                return mcp_help;
        case CLI_COMMAND_SECRET_SET:
        case CLI_COMMAND_SECRET_LIST:
        case CLI_COMMAND_SECRET_RM:
                return secret_help;
        case CLI_COMMAND_HELP:
        default:
                return overview;
        }
}
