#!/bin/sh
# tests/integration/suite.sh: the attacker's suite. Every test runs `cordon run` with the built-in
# default policy (HOME = a fake home full of marked secrets, cwd = a git workspace) and one
# `attack` subcommand inside; afterwards the host side is checked too (no denied name left behind,
# secrets and protected files unchanged). Allowed cases are tested next to the refused ones.
#
#   suite.sh CORDON ATTACK NOSANDBOX IT_TMP
#
# Run by run.sh (as root, and again as an unprivileged user). Output: see lib.sh.
set -u

CORDON=$1
ATTACK=$2
NOSANDBOX=$3
IT_TMP=$4
MARK=CORDON-IT-SECRET-7f3a9c # must match SECRET_MARKER in tests/lib/attack/attack.h
ID=$$
# native, or landlock: $CORDON then runs cordon under `nosandbox --only-userns` (run.sh), so every
# run takes the landlock backend; $CORDON_IT_REAL is the binary itself. Where the two backends
# differ by design (docs/design/landlock-backend.md), a test says which one it expects.
BACKEND=${CORDON_IT_BACKEND:-native}
CORDON_REAL=${CORDON_IT_REAL:-$CORDON}

# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/names.sh
. "$(dirname "$0")/names.sh"
# shellcheck source=tests/integration/git-repos.sh
. "$(dirname "$0")/git-repos.sh"
# shellcheck source=tests/integration/suite-defaults.sh
. "$(dirname "$0")/suite-defaults.sh"

FAKE_HOME=$IT_TMP/home
WS=$IT_TMP/ws
WS_NOGIT=$IT_TMP/ws-nogit
OUTSIDE=$IT_TMP/outside
# shellcheck source=tests/integration/suite-settings.sh
. "$(dirname "$0")/suite-settings.sh" # t_project_settings

SECRETS=".ssh/id_rsa .aws/credentials .git-credentials .netrc .gnupg/private-keys.gpg
.config/gh/hosts.yml .config/gcloud/credentials.db .kube/config .docker/config.json .azure/token"

secret_file() {
        mkdir -p "$(dirname "$1")"
        printf 'fake secret for the cordon integration suite\n%s\n' "$MARK" > "$1"
        chmod 600 "$1"
}

git_q() {
        git -c user.name=cordon-it -c user.email=it@example.invalid -c init.defaultBranch=main "$@"
}

make_fixture() {
        mkdir -p "$IT_TMP/log" "$FAKE_HOME" "$WS" "$WS_NOGIT" "$OUTSIDE"
        for s in $SECRETS; do secret_file "$FAKE_HOME/$s"; done
        echo "ssh-ed25519 AAAA host" > "$FAKE_HOME/.ssh/known_hosts"
        printf '# the host user'"'"'s bashrc\n' > "$FAKE_HOME/.bashrc"
        echo "outside the workspace" > "$OUTSIDE/existing.txt"
        git_q init -q "$WS"
        printf 'all: hello\nhello: hello.c\n\tcc -o hello hello.c\n' > "$WS/Makefile"
        mkdir -p "$WS/mk" "$WS/sub" "$WS/.vscode" "$WS/.claude" "$WS/.gemini"
        printf 'all: hello\nhello: hello.c\n\tcc -O0 -o hello hello.c\n' > "$WS/mk/Makefile"
        printf '#include <stdio.h>\nint main(void) { puts("hello"); return 0; }\n' > "$WS/mk/hello.c"
        echo "a tracked file" > "$WS/file.txt"
        echo "# the project's zshrc (protected, exists)" > "$WS/.zshrc"
        secret_file "$WS/private.txt"
        ln -s "$FAKE_HOME/.ssh/id_rsa" "$WS/secret-link"
        ln -s . "$WS/alias-ws"
        ln -s .git "$WS/git-alias"
        ln -s "$WS" "$OUTSIDE/ws-alias"
        git_q -C "$WS" add Makefile mk file.txt
        git_q -C "$WS" commit -qm init
}

# ---- secrets ---------------------------------------------------------------------------------

t_secrets() {
        for s in $SECRETS; do
                expect_refused "secret: read ~/$s (every resolution route)" read "$FAKE_HOME/$s"
        done
        expect_refused "secret: read through a symlink in the workspace" read "$WS/secret-link"
        if [ "$BACKEND" = landlock ]; then
                sb -- "$ATTACK" list "$FAKE_HOME/.ssh" id_rsa
                known_gap "secret: ~/.ssh is not even listable" \
                        "landlock backend: READ_DIR cannot be carved, names in secret directories stay listable (contents do not)"
        else
                expect_refused "secret: ~/.ssh is not even listable" list "$FAKE_HOME/.ssh" id_rsa
        fi
        expect_refused "secret: hard link ~/.ssh/id_rsa into the workspace" \
                link-secret "$FAKE_HOME/.ssh/id_rsa" "$WS/stolen-key"
        host_absent "secret: no hard link left on the host" "$WS/stolen-key"
        sb -- sh -c 'cat ~/.ssh/id_rsa'
        if [ "$LAST_STATUS" -ne 0 ] && ! grep -q "$MARK" "$LAST_OUT"; then
                ok "secret: sh -c 'cat ~/.ssh/id_rsa' fails"
        else
                not_ok "secret: sh -c 'cat ~/.ssh/id_rsa' fails" "status $LAST_STATUS"
        fi
        SB_OPTS="--deny-read $WS/private.txt" expect_refused \
                "secret: --deny-read hides a workspace file" read "$WS/private.txt"
        expect_works "allowed: the same workspace file is readable without --deny-read" \
                grep -q "$MARK" "$WS/private.txt"
        expect_works "allowed: the rest of the file system is readable" \
                sh -c 'test -r /etc/passwd && cat /etc/passwd >/dev/null && ls /usr/bin >/dev/null'
}

# ---- writes outside the writable roots --------------------------------------------------------

t_outside() {
        for p in "$FAKE_HOME/x" /etc/cordon-it-x /usr/cordon-it-x "/var/tmp/cordon-it-x-$ID" \
                "$OUTSIDE/new.txt"; do
                for route in open mkdir symlink rename link tmpfile; do
                        expect_create_refused "outside: $route $p" "$route" "$p"
                done
        done
        take_snapshot
        for route in write write-creat trunc-creat unlink rename-away link-alias via-symlink; do
                expect_refused "outside: $route an existing file outside" \
                        modify "$route" "$OUTSIDE/existing.txt"
        done
        for route in write write-creat unlink via-symlink; do
                expect_refused "outside: $route ~/.bashrc" modify "$route" "$FAKE_HOME/.bashrc"
        done
        host_unchanged "outside: host files unchanged"
        SB_OPTS="--mode read-only" expect_create_refused "read-only mode: create in the workspace" \
                open ro-mode.txt
        SB_OPTS="--mode read-only" expect_refused "read-only mode: modify a workspace file" \
                modify write file.txt
}

# ---- protected paths and denied names inside the workspace -----------------------------------

CORE_ROUTES="open creat openat2 mkdir mknod rename rename-dir link symlink dangling tmpfile"
EXTRA_ROUTES="open-excl openat mkfifo rename-noreplace tmpfile-proc bind x32 ia32 procfd thread
nondumpable page-split page-end"

t_protected_create() {
        for p in .bashrc .profile .zshenv .gitconfig .mcp.json .idea .claude/settings.json \
                .claude/settings.local.json .claude/hooks .vscode/tasks.json .git/hooks/pre-commit \
                HEAD objects refs .cursor .codex .gemini/settings.json; do
                for route in $CORE_ROUTES; do
                        expect_create_refused "protected: $route $p" "$route" "$p"
                done
        done
        for p in .bashrc .git/hooks/pre-commit; do
                for route in $EXTRA_ROUTES; do
                        expect_create_refused "protected: $route $p" "$route" "$p"
                done
        done
        SB_DIR=$WS_NOGIT expect_create_refused "protected: mkdir .vscode (absent)" mkdir .vscode
        SB_DIR=$WS_NOGIT expect_refused "protected: build a fake .git elsewhere, rename it into place" \
                rename-into-git cordon-it-evil
        host_absent "protected: no .git/config or .git/hooks left by the rename" \
                "$WS_NOGIT/.git/config" "$WS_NOGIT/.git/hooks"
        rm -rf "$WS_NOGIT/cordon-it-evil" "$WS_NOGIT/.git"
        # A .git *file* ("gitdir: DIR") or symlink makes host git obey DIR/config (core.fsmonitor
        # runs on the next `git status`): the same escape as writing .git/config.
        SB_DIR=$WS_NOGIT expect_refused "protected: a .git file pointing at a crafted git dir" \
                gitfile cordon-it-gitdir
        host_absent "protected: no .git file left behind" "$WS_NOGIT/.git"
        rm -rf "$WS_NOGIT/cordon-it-gitdir" "$WS_NOGIT/.git"
        for route in open symlink; do
                SB_DIR=$WS_NOGIT expect_create_refused "protected: $route .git (no repository yet)" \
                        "$route" .git
        done
        # core.hooksPath pointing into the working tree (husky and friends): that directory is
        # the repository's hooks directory, whatever its name.
        d=$IT_TMP/git-hookspath
        new_repo "$d"
        git_q -C "$d" config core.hooksPath .husky
        mkdir -p "$d/.husky"
        SB_DIR=$d expect_create_refused "protected: a hook in core.hooksPath (.husky/pre-commit)" \
                open .husky/pre-commit
        # .git/commondir redirects where git reads config from: .git/config by another name.
        expect_refused "protected: .git/commondir pointing at a crafted git dir" \
                commondir cordon-it-common
        host_absent "protected: no .git/commondir left behind" "$WS/.git/commondir"
        rm -rf "$WS/cordon-it-common" "$WS/.git/commondir"
}

t_protected_modify() {
        take_snapshot
        for p in .git/config .zshrc; do
                for route in write write-creat trunc trunc-creat truncate rename-over exchange \
                        rename-away unlink link-alias via-symlink; do
                        expect_refused "protected: $route $p (exists)" modify "$route" "$p"
                done
        done
        for p in .git/hooks .git .vscode .claude; do
                for route in rename-away exchange unlink; do
                        expect_refused "protected: $route $p/ (exists)" modify "$route" "$p"
                done
        done
        host_unchanged "protected: .git/config, hooks, .zshrc, .vscode, .claude unchanged"
}

t_denied_names() {
        for p in .env .env.local a.pem b.KEY .x.pem A.PEM .ENV .Env.Prod sub/.env sub/c.key; do
                for route in $CORE_ROUTES; do
                        expect_create_refused "deny-create-name: $route $p" "$route" "$p"
                done
        done
        for p in .env a.pem; do
                for route in $EXTRA_ROUTES; do
                        expect_create_refused "deny-create-name: $route $p" "$route" "$p"
                done
        done
        SB_OPTS="--deny-create-name *.secret" expect_create_refused \
                "deny-create-name: a --deny-create-name glob is enforced" open x.secret
        sb -- sh -c 'touch .env'
        if [ "$LAST_STATUS" -ne 0 ] && [ ! -e "$WS/.env" ]; then
                ok "deny-create-name: touch .env fails, nothing left"
        else
                not_ok "deny-create-name: touch .env fails, nothing left" "status $LAST_STATUS"
        fi
        sb -- sh -c 'echo k > x && mv x key.pem'
        if [ "$LAST_STATUS" -ne 0 ] && [ ! -e "$WS/key.pem" ]; then
                ok "deny-create-name: mv x key.pem fails, nothing left"
        else
                not_ok "deny-create-name: mv x key.pem fails, nothing left" "status $LAST_STATUS"
        fi
        rm -f "$WS/x"
        sb -- sh -c 'echo > .bashrc'
        if [ "$LAST_STATUS" -ne 0 ] && [ ! -e "$WS/.bashrc" ]; then
                ok "protected: echo > .bashrc fails, nothing left"
        else
                not_ok "protected: echo > .bashrc fails, nothing left" "status $LAST_STATUS"
        fi
}

# End to end: plant a git configuration from inside the sandbox, then run `git status` on the host
# as the user would. core.fsmonitor is a command git runs; if the marker file appears, host git
# executed code the sandboxed command chose (a "configuration-based sandbox escape").
GIT_EVIL='mkdir -p "$1/objects" "$1/refs/heads" && echo "ref: refs/heads/main" > "$1/HEAD" &&
printf "[core]\n\trepositoryformatversion = 0\n\tworktree = %s\n\tfsmonitor = \"touch %s\"\n" "$2" "$MARK" > "$1/config"'

git_escape() {
        name=$1 dir=$2 script=$3
        mark=$IT_TMP/log/pwned-$(basename "$dir")
        EXTRA_ENV="MARK=$mark" SB_DIR=$dir sb -- sh -c "evil() { $GIT_EVIL
}; $script"
        (cd "$dir" && env -i PATH="$PATH" HOME="$FAKE_HOME" git status) >/dev/null 2>&1
        if [ -e "$mark" ]; then
                not_ok "$name" "host 'git status' ran a command planted from inside the sandbox"
        else
                ok "$name"
        fi
}

new_repo() {
        mkdir -p "$1"
        git_q init -q "$1"
        git_q -C "$1" commit -q --allow-empty -m init
}

t_git_escapes() {
        d=$IT_TMP/git-plain
        new_repo "$d"
        git_escape "git escape: append core.fsmonitor to .git/config" "$d" \
                'printf "[core]\n\tfsmonitor = \"touch %s\"\n" "$MARK" >> .git/config'
        d=$IT_TMP/git-gitfile
        mkdir -p "$d"
        git_escape "git escape: a .git file (gitdir:) in a workspace without a repository" "$d" \
                'evil evil .. && echo "gitdir: evil" > .git'
        d=$IT_TMP/git-commondir
        new_repo "$d"
        git_escape "git escape: .git/commondir naming a crafted common dir" "$d" \
                'evil evil .. && echo ../evil > .git/commondir'
        d=$IT_TMP/git-submodule
        new_repo "$d"
        git_escape "git escape: a submodule whose config lives in .git/modules/x/config" "$d" \
                'evil .git/modules/x ../../../x && mkdir x && echo "gitdir: ../.git/modules/x" > x/.git &&
printf "[submodule \"x\"]\n\tpath = x\n\turl = ./x\n" > .gitmodules &&
git update-index --add --cacheinfo "160000,$(git rev-parse HEAD),x"'
        # Control: unconfined, the plain .git/config variant must run the marker command.
        d=$IT_TMP/git-control
        new_repo "$d"
        mark=$IT_TMP/log/pwned-git-control
        EXTRA_ENV="MARK=$mark" SB_DIR=$d sb --sandbox off -- sh -c \
                'printf "[core]\n\tfsmonitor = \"touch %s\"\n" "$MARK" >> .git/config'
        (cd "$d" && env -i PATH="$PATH" HOME="$FAKE_HOME" git status) >/dev/null 2>&1
        if [ -e "$mark" ]; then ok "control: unconfined, the planted fsmonitor runs on the host"
        else not_ok "control: unconfined, the planted fsmonitor runs on the host"; fi
}

# Where $HOME and the workspace are laid out differently from the main fixture.
t_home_layouts() {
        SB_DIR=$FAKE_HOME
        expect_refused "home as workspace: ~/.ssh/id_rsa unreadable" read "$FAKE_HOME/.ssh/id_rsa"
        expect_create_refused "home as workspace: create ~/.ssh/authorized_keys" \
                open .ssh/authorized_keys
        expect_create_refused "home as workspace: create ~/.profile" open .profile
        expect_refused "home as workspace: write ~/.bashrc" modify write .bashrc
        expect_works "home as workspace: an ordinary file can be created" \
                "$ATTACK" allow-create open home-ok.txt
        rm -f "$FAKE_HOME/home-ok.txt"
        SB_DIR=

        # ~/.ssh as a symlink into a dotfiles checkout: the resolved form is hidden too.
        sl=$IT_TMP/home-sl
        secret_file "$sl/dotfiles/ssh/id_rsa"
        ln -s dotfiles/ssh "$sl/.ssh"
        FAKE_HOME=$sl expect_refused "symlinked ~/.ssh: unreadable by its link" read "$sl/.ssh/id_rsa"
        FAKE_HOME=$sl expect_refused "symlinked ~/.ssh: unreadable by its target" \
                read "$sl/dotfiles/ssh/id_rsa"

        # $HOME itself reached through a symlink.
        ln -s home "$IT_TMP/home-link"
        FAKE_HOME=$IT_TMP/home-link expect_refused "HOME through a symlink: secret by the link" \
                read "$IT_TMP/home-link/.ssh/id_rsa"
        FAKE_HOME=$IT_TMP/home-link expect_refused "HOME through a symlink: secret by the real path" \
                read "$FAKE_HOME/.ssh/id_rsa"

        # Secrets that appear while the sandbox runs (say, `aws configure` in another terminal).
        late=$IT_TMP/home-late
        mkdir -p "$late/.ssh"
        for p in .aws/credentials .ssh/id_ed25519; do
                (
                        FAKE_HOME=$late sb -- "$ATTACK" read-late "$late/$p" 4000
                        echo "$LAST_STATUS" > "$IT_TMP/log/late.status"
                        cp "$LAST_ERR" "$IT_TMP/log/late.err"
                ) &
                bg=$!
                sleep 1
                secret_file "$late/$p"
                wait "$bg"
                LAST_STATUS=$(cat "$IT_TMP/log/late.status")
                LAST_OUT=/dev/null LAST_ERR=$IT_TMP/log/late.err LAST_CMD="read-late $p"
                name="late secret: ~/$p created during the run stays unreadable"
                if [ "$p" = .aws/credentials ] && [ "$LAST_STATUS" = 1 ]; then
                        # ~/.aws did not exist at launch: nothing could be mounted over it.
                        known_gap "$name" "a secret directory created on the host during the run"
                else
                        judge_attack "$name"
                fi
        done
}

# A file given as stdin (read-only) must not become writable by reopening /proc/self/fd/0.
t_stdin_reopen() {
        take_snapshot
        for f in "$WS/.git/config" "$FAKE_HOME/.bashrc" "$OUTSIDE/existing.txt"; do
                for route in write write-creat trunc-creat; do
                        STDIN_FROM=$f expect_refused_or_fail_closed \
                                "stdin reopen: $route /proc/self/fd/0 = $f" \
                                modify "$route" /proc/self/fd/0
                done
        done
        host_unchanged "stdin reopen: the files given as stdin are unchanged"
}

# The same protected and denied names spelled differently: the rules hold for the file, not for
# one spelling of its path.
t_path_forms() {
        for spec in "./.bashrc .bashrc" "sub/../.bashrc .bashrc" "/proc/self/cwd/.bashrc .bashrc" \
                "/proc/thread-self/cwd/a.pem a.pem" "$WS/.env .env" "sub//.env sub/.env" \
                "alias-ws/.mcp.json .mcp.json" ".git/./hooks/post-commit .git/hooks/post-commit" \
                "git-alias/hooks/pre-push .git/hooks/pre-push" \
                "$OUTSIDE/ws-alias/.profile .profile" "$OUTSIDE/ws-alias/b.key b.key"; do
                # shellcheck disable=SC2086
                set -- $spec
                for route in open dangling rename; do
                        expect_create_refused "path forms: $route $1" "$route" "$1" "$WS/$2"
                done
        done
        take_snapshot
        expect_refused "path forms: write .git/config through a symlink to .git" \
                modify write git-alias/config
        expect_refused "path forms: write .git/config through /proc/self/cwd" \
                modify write-creat /proc/self/cwd/.git/config
        host_unchanged "path forms: .git unchanged"
        sb -- sh -c "cd .git/hooks && exec \"$ATTACK\" create open pre-commit"
        if [ -e "$WS/.git/hooks/pre-commit" ]; then
                not_ok "path forms: cd .git/hooks && create pre-commit" "left behind on the host"
                rm -f "$WS/.git/hooks/pre-commit"
        else
                judge_attack "path forms: cd .git/hooks && create pre-commit"
        fi
}

t_races() {
        expect_refused "race: flip the path buffer between xenv and .env (3 s)" race-flip 3
        host_absent "race: no .env after the buffer flip" "$WS/.env"
        expect_refused "race: swap a symlink between ok and bad.pem targets (3 s)" race-symlink 3
        host_absent "race: no race-bad.pem after the symlink swap" "$WS/race-bad.pem"
        rm -f "$WS/xenv" "$WS/race-ok.txt" "$WS/race-sw" "$WS/race-tmp"
        expect_works "semantics: 3,000 O_EXCL creates under a SIGALRM storm, no spurious EEXIST" \
                "$ATTACK" signal-storm 3000
        expect_works "semantics: created files and directories get the caller's umask" \
                "$ATTACK" umask-check
        expect_works "semantics: a blocked FIFO open does not stall other creates" \
                "$ATTACK" fifo-stall
        for spec in "thread ok-thread.txt" "procfd ok-procfd.txt" "openat ok-openat.txt" \
                "page-split ok-page-split.txt" "page-end ok-page-end.txt"; do
                # shellcheck disable=SC2086
                set -- $spec
                expect_works "allowed: $1 $2" "$ATTACK" allow-create "$1" "$2"
                rm -f "$WS/$2"
        done
}

# cordon inside cordon (an agent that runs cordon itself) cannot lift the outer rules. The inner
# cordon runs without LeakSanitizer: an ASan build's leak check needs ptrace, which the outer
# sandbox refuses.
t_nested() {
        inner="env ASAN_OPTIONS=detect_leaks=0 $CORDON"
        # shellcheck disable=SC2086
        sb -- $inner run -- "$ATTACK" create open nested.pem
        if [ -e "$WS/nested.pem" ]; then
                not_ok "nested: cordon run inside cordon cannot create a.pem" "nested.pem exists"
                rm -f "$WS/nested.pem"
        elif [ "$LAST_STATUS" -eq 0 ] || [ "$LAST_STATUS" -eq 125 ]; then
                ok "nested: cordon run inside cordon cannot create a.pem (status $LAST_STATUS)"
        else
                not_ok "nested: cordon run inside cordon cannot create a.pem" "status $LAST_STATUS"
        fi
        # shellcheck disable=SC2086
        sb -- $inner run --sandbox off -- "$ATTACK" create open nested-off.pem
        if [ -e "$WS/nested-off.pem" ]; then
                not_ok "nested: an inner --sandbox off cannot lift the outer rules" "created"
                rm -f "$WS/nested-off.pem"
        else
                judge_attack "nested: an inner --sandbox off cannot lift the outer rules"
        fi
        # shellcheck disable=SC2086
        sb -- $inner run --sandbox off -- "$ATTACK" read "$FAKE_HOME/.ssh/id_rsa"
        judge_attack "nested: an inner --sandbox off cannot read the hidden secret"
}

# $HOME made writable: its secrets and start-up files stay protected.
t_home_writable() {
        SB_OPTS="--writable $FAKE_HOME"
        expect_works "home writable: an ordinary file in ~ can be created" \
                "$ATTACK" allow-create open "$FAKE_HOME/ok-home.txt"
        rm -f "$FAKE_HOME/ok-home.txt"
        take_snapshot
        expect_refused "home writable: ~/.ssh/id_rsa still unreadable" read "$FAKE_HOME/.ssh/id_rsa"
        expect_create_refused "home writable: create ~/.ssh/authorized_keys" \
                open "$FAKE_HOME/.ssh/authorized_keys"
        expect_create_refused "home writable: create ~/.profile" open "$FAKE_HOME/.profile"
        expect_refused "home writable: write ~/.bashrc" modify write "$FAKE_HOME/.bashrc"
        expect_refused "home writable: rename ~/.bashrc away" modify rename-away "$FAKE_HOME/.bashrc"
        host_unchanged "home writable: home secrets and start-up files unchanged"
        SB_OPTS=
}

# ---- processes, namespaces, kernel surface ---------------------------------------------------

t_processes() {
        hostmark=cordon-it-host-$ID
        "$ATTACK" sleeper "$hostmark" 60 &
        hostpid=$!
        "$ATTACK" wait-marker "$hostmark" 5000 || true
        expect_refused "process: ptrace/process_vm_readv/mem/pidfd_getfd of pid 1" \
                proc-access init
        expect_refused "process: the same against the parent" proc-access parent
        if [ "$BACKEND" = landlock ]; then
                sb -- "$ATTACK" proc-scan "$hostmark"
                known_gap "process: host processes are not listed in /proc" \
                        "landlock backend: no PID namespace (their memory, environ and signals stay out of reach: next tests)"
        else
                expect_refused "process: host processes are not listed in /proc" proc-scan "$hostmark"
        fi
        expect_refused "process: ptrace/process_vm_readv/mem/environ/pidfd_getfd of a host process" \
                proc-access "$hostpid"
        expect_refused "process: SIGKILL to a host process by pid" kill "$hostpid" "$hostmark"
        if kill -0 "$hostpid" 2>/dev/null; then
                ok "process: the host process is still alive"
        else
                not_ok "process: the host process is still alive"
        fi
        kill "$hostpid" 2>/dev/null || true
        wait "$hostpid" 2>/dev/null || true
}

t_namespaces() {
        expect_refused "mount: umount/remount/bind/tmpfs/mount_setattr/open_tree/fsopen/chroot" \
                mount "$FAKE_HOME/.ssh" /usr "$WS/sub"
        expect_refused "userns: unshare/clone/clone3 with CLONE_NEWUSER" userns
        expect_refused "namespaces: unshare of mount/net/pid namespaces" unshare-ns
        expect_refused "namespaces: setns into any namespace" setns
}

t_kernel() {
        for s in io_uring bpf perf userfaultfd open_by_handle_at; do
                expect_refused "kernel: $s refused" syscall "$s"
        done
        expect_refused "kernel: keyctl, add_key and all of the above" kernel-surface
        expect_refused "kernel: core dumps cannot be enabled (RLIMIT_CORE hard 0)" coredump x.pem
        host_absent "kernel: no core file left" "$WS/core" "$WS/x.pem"
        for f in "$WS"/core.*; do [ -e "$f" ] && rm -f "$f" && not_ok "kernel: core file $f"; done
        expect_refused "privileges: no_new_privs set, no effective or ambient capabilities" privs
        expect_refused "devices: no raw disk, memory, kmsg, kcore, sysrq, kvm, userfaultfd, cgroup or sysctl" \
                raw-devices
        run_in "$WS" "$ATTACK" host-pty -- "$CORDON" run -- "$ATTACK" tiocsti
        judge_attack "tty: TIOCSTI into the caller's terminal"
        run_in "$WS" "$ATTACK" host-pty -- "$CORDON" run -- "$ATTACK" devtty
        judge_attack "tty: no injection through /dev/tty (plain or O_CREAT)"
}

t_network() {
        sock=$OUTSIDE/agent.sock
        abstract=cordon-it-abstract-$ID
        run_in "$WS" "$ATTACK" host-listen tcp -- "$CORDON" run -- "$ATTACK" tcp-connect "{TCP}"
        judge_attack "network: TCP connect to a host loopback listener"
        run_in "$WS" "$ATTACK" host-listen udp -- "$CORDON" run -- "$ATTACK" udp-send "{UDP}"
        judge_attack "network: UDP to a host loopback listener never arrives"
        run_in "$WS" "$ATTACK" host-listen "unix:$sock" -- \
                "$CORDON" run -- "$ATTACK" unix-connect "$sock"
        judge_attack "network: connect to a host Unix socket outside the workspace"
        run_in "$WS" "$ATTACK" host-listen "unix:$WS/ws.sock" -- \
                "$CORDON" run -- "$ATTACK" unix-connect "$WS/ws.sock"
        judge_attack "network: connect to a host Unix socket inside the workspace"
        rm -f "$sock" "$WS/ws.sock"
        run_in "$WS" "$ATTACK" host-listen "abstract:$abstract" -- \
                "$CORDON" run -- "$ATTACK" abstract-connect "$abstract"
        judge_attack "network: connect to a host abstract Unix socket"
}

# ---- allowUnixSockets: exactly the listed sockets ---------------------------------------------

# unix_run POLICY CMD...: `cordon run --policy POLICY -- attack CMD...` while `attack host-serve`
# serves $UX_OK (greets) and $UX_BAD (any connection there fails the test).
unix_run() {
        pol=$1
        shift
        run_in "$WS" "$ATTACK" host-serve "$UX_OK" "$UX_BAD" -- \
                "$CORDON" run --policy "$pol" -- "$ATTACK" "$@"
}

t_unix_sockets() {
        UX_OK=$WS/allowed-$ID.sock    # in the workspace: the command may rename things there
        UX_BAD=$OUTSIDE/forbidden-$ID.sock
        ux_link=$WS/linked-$ID.sock
        pol=$IT_TMP/log/unix-policy.json
        printf '{ "allowUnixSockets": ["%s", "%s"] }\n' "$UX_OK" "$ux_link" > "$pol"
        ln -sfn "$UX_BAD" "$ux_link"
        unix_run "$pol" unix-allowed "$UX_OK"
        if [ "$LAST_STATUS" -eq 0 ]; then ok "unix: the allowUnixSockets socket answers inside"
        else not_ok "unix: the allowUnixSockets socket answers inside" "status $LAST_STATUS"; fi
        unix_run "$pol" unix-connect "$UX_BAD"
        judge_attack "unix: another host socket is refused"
        unix_run "$pol" unix-connect "$ux_link"
        judge_attack "unix: a symlink to another socket at an allowed path is refused"
        unix_run "$pol" unix-swap "$UX_OK" "$UX_BAD" 2
        judge_attack "unix: a symlink renamed over the allowed path during connects redirects none"
        unix_run "$pol" unix-flip "$UX_OK" "$UX_BAD" 2
        judge_attack "unix: an address rewritten during connects redirects none"
        unix_run "$pol" unix-dgram "$UX_BAD"
        judge_attack "unix: no datagram socket to sendto() another socket"
        run_in "$WS" "$ATTACK" host-listen "abstract:cordon-it-ux-$ID" -- \
                "$CORDON" run --policy "$pol" -- "$ATTACK" abstract-connect "cordon-it-ux-$ID"
        judge_attack "unix: abstract sockets stay refused with allowUnixSockets"
        printf '{}\n' > "$IT_TMP/log/empty-policy.json"
        unix_run "$IT_TMP/log/empty-policy.json" unix-connect "$UX_OK"
        judge_attack "unix: without allowUnixSockets the same socket is refused"
        rm -f "$ux_link" "$UX_OK".keep "$UX_OK".evil "$UX_OK".good
}

# ---- limits: memory, pids, manual stop --------------------------------------------------------

# The probe's word on how limits.memory/limits.pids are enforced here: cgroup or rlimit.
limits_mechanism() {
        run_in "$WS" "$CORDON" probe --json
        /usr/bin/python3 -c 'import json,sys
print(json.load(open(sys.argv[1]))["kernel"]["limits"])' "$LAST_OUT" 2>/dev/null
}

t_limits() {
        mech=$(limits_mechanism)
        echo "# limits are enforced by: ${mech:-?} (as $(id -un))"
        sb --pids 32 -- "$ATTACK" forkbomb 32
        if [ "$mech" = rlimit ] && { [ "$(id -u)" -eq 0 ] || [ "$BACKEND" = landlock ]; }; then
                # Root: RLIMIT_NPROC exempts root. Landlock backend: no user namespace, so
                # RLIMIT_NPROC would count every process of the user, not the command's.
                if [ "$LAST_STATUS" -eq 125 ] && grep -q '^cordon: fatal: POLICY_UNENFORCEABLE: limits.pids' "$LAST_ERR"; then
                        ok "limits: --pids as root without a cgroup is refused (RLIMIT_NPROC exempts root)"
                else
                        not_ok "limits: --pids as root without a cgroup is refused" "status $LAST_STATUS"
                fi
        else
                judge_attack "limits: a fork bomb under --pids 32 is contained ($mech)"
        fi
        ev=$IT_TMP/log/memhog.jsonl
        sb --memory 64M --events "$ev" -- "$ATTACK" memhog 1024
        last=$(tail -n 1 "$ev" 2>/dev/null)
        case $mech in
        cgroup)
                if [ "$LAST_STATUS" -eq 125 ] && grep -q '^cordon: fatal: KILLED: ' "$LAST_ERR" &&
                        printf '%s' "$last" | grep -q '"type":"killed".*"reason":"oom"'; then
                        ok "limits: a memory hog under --memory 64M is killed: killed oom (cgroup)"
                else
                        not_ok "limits: a memory hog under --memory 64M is killed: killed oom" \
                                "status $LAST_STATUS, last event $last"
                fi ;;
        *)
                if [ "$LAST_STATUS" -eq 0 ] && printf '%s' "$last" | grep -q '"type":"exit"'; then
                        ok "limits: a memory hog under --memory 64M gets no memory (rlimit: allocations fail, no oom)"
                else
                        not_ok "limits: a memory hog under --memory 64M gets no memory (rlimit)" \
                                "status $LAST_STATUS, last event $last"
                fi ;;
        esac
        m=cordon-it-manual-$ID
        base_env > "$IT_TMP/log/env"
        # shellcheck disable=SC2046
        (cd "$WS" && IFS='
' && exec env -i $(cat "$IT_TMP/log/env") "$CORDON" run --events "$IT_TMP/log/manual.jsonl" \
                -- "$ATTACK" sleeper "$m" 1000) </dev/null >/dev/null 2>"$IT_TMP/log/manual.err" &
        cpid=$!
        if "$ATTACK" wait-marker "$m" 5000; then
                kill -TERM "$cpid"
                wait "$cpid"
                st=$?
                last=$(tail -n 1 "$IT_TMP/log/manual.jsonl")
                if [ "$st" -eq 143 ] && printf '%s' "$last" | grep -q '"reason":"manual"' &&
                        "$ATTACK" find-marker "$m" 2000 2>/dev/null; then
                        ok "limits: SIGTERM to cordon kills the sandbox: status 143, killed manual"
                else
                        not_ok "limits: SIGTERM to cordon kills the sandbox: killed manual" \
                                "status $st, last event $last"
                fi
        else
                kill -9 "$cpid" 2>/dev/null
                not_ok "limits: SIGTERM to cordon kills the sandbox" "the sleeper never started"
        fi
        kill_marker "$m"
}

# ---- inheritance and lifetime ----------------------------------------------------------------

t_inheritance() {
        sb -- "$ATTACK" fds 7< "$FAKE_HOME/.ssh/id_rsa"
        judge_attack "inheritance: fd 7 (a secret) is not open inside"
        EXTRA_ENV="GITHUB_TOKEN=ghp_cordonit
AWS_SECRET_ACCESS_KEY=cordonit
ANTHROPIC_API_KEY=cordonit
DB_PASSWORD=cordonit
CORDON_IT_NORMAL=ok value"
        sb -- "$ATTACK" env-check -GITHUB_TOKEN -AWS_SECRET_ACCESS_KEY -ANTHROPIC_API_KEY \
                -DB_PASSWORD "+CORDON_IT_NORMAL=ok value"
        judge_attack "inheritance: secret-looking variables scrubbed, ordinary ones kept"
        sb --env-pass GITHUB_TOKEN -- "$ATTACK" env-check +GITHUB_TOKEN=ghp_cordonit
        judge_attack "allowed: --env-pass keeps a secret-looking variable"
        EXTRA_ENV=
}

t_lifetime() {
        m=cordon-it-daemon-$ID
        sb -- "$ATTACK" daemonize "$m"
        if [ "$LAST_STATUS" -ne 0 ]; then
                not_ok "lifetime: a setsid+double-fork daemon dies with the run" "setup failed"
        elif "$ATTACK" find-marker "$m" 2000 2>"$IT_TMP/log/find"; then
                ok "lifetime: a setsid+double-fork daemon dies with the run"
        else
                not_ok "lifetime: a setsid+double-fork daemon dies with the run" \
                        "$(cat "$IT_TMP/log/find")"
        fi
        kill_marker "$m"

        m=cordon-it-bg-$ID
        sb -- sh -c "\"$ATTACK\" sleeper $m 1000 & exit 0"
        if "$ATTACK" find-marker "$m" 2000 2>"$IT_TMP/log/find"; then
                ok "lifetime: a background child dies when the command exits"
        else
                not_ok "lifetime: a background child dies when the command exits" \
                        "$(cat "$IT_TMP/log/find")"
        fi
        kill_marker "$m"

        for sig in KILL TERM; do
                m=cordon-it-sig$sig-$ID
                base_env > "$IT_TMP/log/env"
                # shellcheck disable=SC2046
                (cd "$WS" && IFS='
' && exec env -i $(cat "$IT_TMP/log/env") "$CORDON" run -- "$ATTACK" sleeper "$m" 1000) \
                        </dev/null >/dev/null 2>"$IT_TMP/log/sig$sig" &
                cpid=$!
                if ! "$ATTACK" wait-marker "$m" 5000; then
                        not_ok "lifetime: kill -$sig of cordon leaves nothing running" \
                                "the sandboxed sleeper never started: $(cat "$IT_TMP/log/sig$sig")"
                        kill -9 "$cpid" 2>/dev/null
                        continue
                fi
                # cordon's own children (the egress proxy, the monitor): none may outlive it,
                # whatever its credentials changes did to their parent-death signal.
                kids=$(grep -l "^PPid:[[:space:]]*$cpid\$" /proc/[0-9]*/status 2>/dev/null |
                        sed 's|^/proc/\([0-9]*\)/status$|\1|' | tr '\n' ' ')
                kill -"$sig" "$cpid"
                wait "$cpid" 2>/dev/null
                if "$ATTACK" find-marker "$m" 3000 2>"$IT_TMP/log/find"; then
                        ok "lifetime: kill -$sig of cordon leaves nothing running"
                else
                        not_ok "lifetime: kill -$sig of cordon leaves nothing running" \
                                "$(cat "$IT_TMP/log/find")"
                fi
                kill_marker "$m"
                left=
                for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 \
                        28 29 30; do
                        left=
                        for k in $kids; do
                                kill -0 "$k" 2>/dev/null && left="$left $k"
                        done
                        [ -z "$left" ] && break
                        sleep 0.1
                done
                if [ -n "$kids" ] && [ -z "$left" ]; then
                        ok "lifetime: kill -$sig of cordon: its proxy and monitor die with it"
                else
                        not_ok "lifetime: kill -$sig of cordon: its proxy and monitor die with it" \
                                "children before: '${kids}', still alive: '${left}'"
                fi
        done
}

# ---- allowed cases ---------------------------------------------------------------------------

t_allowed() {
        sb -- sh -c 'echo hello > out.txt && cat out.txt'
        if [ "$LAST_STATUS" -eq 0 ] && grep -qx hello "$LAST_OUT" && grep -qx hello "$WS/out.txt"
        then
                ok "allowed: write and read back a file in the workspace (visible on the host)"
        else
                not_ok "allowed: write and read back a file in the workspace (visible on the host)"
        fi
        rm -f "$WS/out.txt"
        for spec in "open notes.txt" "open .envrc.example" "open env" "open pem" "open a.pem.txt" \
                "open sub/ok.txt" "mkdir newdir" "rename renamed.txt" "link hard.txt" \
                "symlink sym.txt" "tmpfile tmp.txt" "dangling dangling-target.txt" \
                "mkfifo fifo" "open-excl excl.txt"; do
                # shellcheck disable=SC2086
                set -- $spec
                if [ "$BACKEND" = landlock ] && [ "$1" = tmpfile ]; then
                        # The workspace's top level is carved (its .git/config is protected):
                        # Landlock gives an unnamed O_TMPFILE file there no write right.
                        sb -- "$ATTACK" allow-create tmpfile "$2"
                        known_gap "allowed: tmpfile $2 at the workspace's top level" \
                                "landlock backend: no write right for files made after launch in a carved directory"
                        expect_works "allowed (landlock): tmpfile in a subdirectory" \
                                sh -c "cd sub && exec \"$ATTACK\" allow-create tmpfile $2"
                        rm -f "$WS/$2" "$WS/sub/$2"
                        continue
                fi
                expect_works "allowed: $1 $2" "$ATTACK" allow-create "$1" "$2"
                [ -e "$WS/$2" ] || [ -L "$WS/$2" ] || not_ok "allowed: $2 exists on the host"
                rm -rf "${WS:?}/$2"
        done
        clean_aux
        echo scratch > "$WS/scratch.txt"
        for route in write trunc rename-away exchange unlink; do
                [ -e "$WS/scratch.txt" ] || echo scratch > "$WS/scratch.txt"
                expect_works "allowed: $route an ordinary workspace file" \
                        "$ATTACK" allow-modify "$route" scratch.txt
        done
        rm -f "$WS/scratch.txt"
        clean_aux
        expect_works "allowed: mkdir, rename a directory, rm -r inside the workspace" \
                sh -c 'mkdir -p d1/d2 && echo x > d1/d2/f && mv d1 d3 && rm -r d3'
        expect_works "allowed: git add && git commit in the workspace's repository" sh -c \
                'echo x > g.txt && git add -A && git -c user.name=a -c user.email=a@b commit -qm m && git log --oneline >/dev/null'
        n=$(git -C "$WS" rev-list --count HEAD 2>/dev/null || echo 0)
        if [ "$n" -eq 2 ]; then ok "allowed: the commit is in the host repository"
        else not_ok "allowed: the commit is in the host repository" "$n commits"; fi
        # `git init` over the workspace's own repository rewrites .git/config (protected,
        # docs/policy.md): refused by design, and the config must stay as it was.
        take_snapshot
        sb -- git init -q
        if [ "$LAST_STATUS" -ne 0 ]; then ok "protected: git init over the workspace repo is refused"
        else not_ok "protected: git init over the workspace repo is refused"; fi
        host_unchanged "protected: .git/config unchanged by the refused git init"
        expect_works "allowed: git init && commit of a new repository in a subdirectory" sh -c \
                'mkdir proj && cd proj && git init -q && echo y > y && git add -A && git -c user.name=a -c user.email=a@b commit -qm m'
        rm -rf "$WS/proj"
        SB_DIR=$WS/mk expect_works "allowed: make in a project" make
        if [ -x "$WS/mk/hello" ] && [ "$("$WS/mk/hello")" = hello ]; then
                ok "allowed: the binary make built works on the host"
        else
                not_ok "allowed: the binary make built works on the host"
        fi
        echo host > "/tmp/cordon-it-host-$ID"
        if [ "$BACKEND" = landlock ]; then
                # No mount namespace: the host's /tmp stays the host's (out of reach), and the run
                # gets a private TMPDIR of its own, removed afterwards.
                sb -- sh -c "echo in > \"\$TMPDIR/x\" && grep -q in \"\$TMPDIR/x\" && echo \"\$TMPDIR\" &&
                        ! cat /tmp/cordon-it-host-$ID 2>/dev/null && ! echo in 2>/dev/null > /tmp/cordon-it-in-$ID"
                td=$(head -n 1 "$LAST_OUT")
                if [ "$LAST_STATUS" -eq 0 ] && [ -n "$td" ] && [ ! -e "$td" ]; then
                        ok "allowed (landlock): a private TMPDIR, writable, gone after the run; the host's /tmp out of reach"
                else
                        not_ok "allowed (landlock): a private TMPDIR, writable, gone after the run" \
                                "status $LAST_STATUS, TMPDIR '$td'"
                fi
        else
        expect_works "allowed: /tmp is private and writable" sh -c \
                "test ! -e /tmp/cordon-it-host-$ID && echo in > /tmp/cordon-it-in-$ID && grep -q in /tmp/cordon-it-in-$ID"
        fi
        host_absent "allowed: /tmp files of the sandbox stay in the sandbox" "/tmp/cordon-it-in-$ID"
        # /dev/shm may be writable inside (POSIX shared memory), but only as a private one.
        sb -- sh -c "echo in > /dev/shm/cordon-it-in-$ID; true"
        host_absent "allowed: /dev/shm files of the sandbox stay in the sandbox" \
                "/dev/shm/cordon-it-in-$ID"
        rm -f "/tmp/cordon-it-host-$ID"
        # Inside a pipe: a `> /dev/stdout` reopen of a regular file would truncate it, sandbox or not.
        sb -- sh -c '{ echo gone > /dev/null; echo viastdout > /dev/stdout; echo piped | tr a-z A-Z | cat; } | cat'
        if [ "$LAST_STATUS" -eq 0 ] && grep -qx viastdout "$LAST_OUT" && grep -qx PIPED "$LAST_OUT"
        then ok "allowed: > /dev/null, > /dev/stdout and a pipeline"
        else not_ok "allowed: > /dev/null, > /dev/stdout and a pipeline"; fi
        echo "from stdin" > "$IT_TMP/log/stdin"
        STDIN_FROM=$IT_TMP/log/stdin sb -- cat
        if [ "$LAST_STATUS" -eq 0 ] && grep -qx "from stdin" "$LAST_OUT"; then
                ok "allowed: stdin reaches the command"
        else not_ok "allowed: stdin reaches the command"; fi
        if [ "$BACKEND" = landlock ]; then
                expect_works "allowed (landlock): the host's pid 1 shows in /proc, its environment does not" \
                        sh -c 'test -r /proc/1/comm && ! cat /proc/1/environ >/dev/null 2>&1'
        else
        expect_works "allowed: pid 1 of the sandbox is not the host's init" \
                sh -c 'test "$(cat /proc/1/comm)" != systemd && test "$(cat /proc/1/comm)" != init'
        fi
}

# ---- the exit contract and input validation --------------------------------------------------

# expect_status NAME STATUS FATAL_LINES [CORDON-RUN-ARGS...]; with $FATAL_RE set, the fatal line
# must match it too.
expect_status() {
        name=$1 want=$2 fatals=$3
        shift 3
        sb "$@"
        got_fatals=$(fatal_lines)
        if [ "$LAST_STATUS" -eq "$want" ] && [ "$got_fatals" -eq "$fatals" ] &&
                { [ -z "${FATAL_RE:-}" ] || grep -Eq "$FATAL_RE" "$LAST_ERR"; }; then
                ok "$name"
        else
                not_ok "$name" "want status $want with $fatals fatal line(s) ${FATAL_RE:-}," \
                        "got $LAST_STATUS with $got_fatals"
        fi
}

t_exit_contract() {
        expect_status "exit: the command's status (3)" 3 0 -- sh -c 'exit 3'
        expect_status "exit: killed by SIGTERM -> 143" 143 0 -- sh -c 'kill -TERM $$'
        expect_status "exit: killed by SIGKILL -> 137" 137 0 -- sh -c 'kill -KILL $$'
        expect_status "exit: a command that exits 125 itself -> 125 without a fatal line" \
                125 0 -- sh -c 'exit 125'
        for cmd in /nonexistent/cordon-it-cmd cordon-it-no-such-command ./file.txt; do
                FATAL_RE='^cordon: fatal: EXEC_FAILED: ' expect_status \
                        "exit: $cmd cannot run -> 125 + one EXEC_FAILED line" 125 1 -- "$cmd"
        done
        for how in "--sandbox off" "--mode danger-full-access" "--backend none"; do
                # shellcheck disable=SC2086
                sb $how -- sh -c 'echo ran > ran-unprotected.txt'
                w=$(grep -c '^cordon: warning: .*UNPROTECTED' "$LAST_ERR")
                if [ "$LAST_STATUS" -eq 0 ] && [ "$w" -eq 1 ] && [ -e "$WS/ran-unprotected.txt" ]
                then ok "unprotected: $how runs and prints one UNPROTECTED warning"
                else not_ok "unprotected: $how runs and prints one UNPROTECTED warning" \
                        "status $LAST_STATUS, $w warning line(s)"; fi
                rm -f "$WS/ran-unprotected.txt"
        done
}

# Controls: unconfined, the same attacks must succeed, or the suite could not tell a broken
# sandbox from a working one.
t_controls() {
        SB_OPTS="--sandbox off"
        sb -- "$ATTACK" read "$FAKE_HOME/.ssh/id_rsa"
        [ "$LAST_STATUS" -eq 1 ] && ok "control: unconfined, the secret read is detected" ||
                not_ok "control: unconfined, the secret read is detected"
        sb -- "$ATTACK" create open control.pem
        [ "$LAST_STATUS" -eq 1 ] && ok "control: unconfined, creating a.pem is detected" ||
                not_ok "control: unconfined, creating a.pem is detected"
        rm -f "$WS/control.pem"
        # Without cordon at all (cordon closes stray fds even when it does not confine).
        run_in "$WS" "$ATTACK" fds 7< "$FAKE_HOME/.ssh/id_rsa"
        [ "$LAST_STATUS" -eq 1 ] && ok "control: without cordon, the inherited fd is detected" ||
                not_ok "control: without cordon, the inherited fd is detected"
        EXTRA_ENV="GITHUB_TOKEN=ghp_cordonit" run_in "$WS" "$ATTACK" env-check -GITHUB_TOKEN
        [ "$LAST_STATUS" -eq 1 ] && ok "control: without cordon, the secret variable is detected" ||
                not_ok "control: without cordon, the secret variable is detected"
        hostmark=cordon-it-ctl-$ID
        "$ATTACK" sleeper "$hostmark" 60 &
        ctlpid=$!
        "$ATTACK" wait-marker "$hostmark" 5000 || true
        sb -- "$ATTACK" proc-scan "$hostmark"
        [ "$LAST_STATUS" -eq 1 ] && ok "control: unconfined, a host process is seen in /proc" ||
                not_ok "control: unconfined, a host process is seen in /proc"
        kill "$ctlpid" 2>/dev/null
        wait "$ctlpid" 2>/dev/null
        SB_OPTS=
}

# expect_bad_input NAME REGEX CORDON-RUN-ARGS...: 125, one fatal line matching REGEX, and the
# command (touch ran-bad) did not run.
expect_bad_input() {
        name=$1 re=$2
        shift 2
        sb "$@" -- touch ran-bad
        n=$(fatal_lines)
        if [ "$LAST_STATUS" -eq 125 ] && [ "$n" -eq 1 ] && grep -Eq "$re" "$LAST_ERR" &&
                [ ! -e "$WS/ran-bad" ]; then
                ok "$name"
        else
                not_ok "$name" "want 125 + one fatal line matching /$re/, command not run;" \
                        "got $LAST_STATUS, $n fatal line(s)"
        fi
        rm -f "$WS/ran-bad"
}

t_bad_input() {
        P=$IT_TMP/policies
        mkdir -p "$P"
        expect_bad_input "bad input: an unknown flag" '^cordon: fatal: USAGE: ' --cordon-it-bogus
        expect_bad_input "bad input: an unknown mode" '^cordon: fatal: [A-Z_]+: .*mode' --mode bogus
        expect_bad_input "bad input: a missing policy file" \
                "^cordon: fatal: [A-Z_]+: .*$P/missing.json" --policy "$P/missing.json"
        printf '{\n  "mode": "workspace-write",\n  "cordonItBogusKey": true\n}\n' > "$P/unknown.json"
        expect_bad_input "bad input: an unknown policy key names file:line:col" \
                "^cordon: fatal: POLICY_INVALID: $P/unknown.json:3:[0-9]+" --policy "$P/unknown.json"
        printf '{\n  "mode": "chat",\n  "denyRead": [ "/x"\n}\n' > "$P/syntax.json"
        expect_bad_input "bad input: a JSON syntax error names file:line:col" \
                "^cordon: fatal: POLICY_INVALID: $P/syntax.json:[0-9]+:[0-9]+" --policy "$P/syntax.json"
        printf '{\n  "mode": 42\n}\n' > "$P/type.json"
        expect_bad_input "bad input: a wrongly typed value names file:line:col" \
                "^cordon: fatal: POLICY_INVALID: $P/type.json:2:[0-9]+" --policy "$P/type.json"
        printf '{\n  "denyRead": [\n    "relative/path"\n  ]\n}\n' > "$P/relative.json"
        expect_bad_input "bad input: a relative path in a policy names file:line:col" \
                "^cordon: fatal: POLICY_INVALID: $P/relative.json:3:[0-9]+" --policy "$P/relative.json"
        expect_bad_input "bad input: --writable of a secret directory is refused" \
                '^cordon: fatal: POLICY_INVALID: ' --writable "$FAKE_HOME/.ssh"
        ln -sfn "$FAKE_HOME/.aws" "$P/aws-link"
        expect_bad_input "bad input: --writable of a symlink to a secret directory is refused" \
                '^cordon: fatal: POLICY_INVALID: ' --writable "$P/aws-link"
        printf '{ "mode": "read-only" }\n' > "$P/good.json"
        SB_OPTS="--policy $P/good.json" expect_create_refused \
                "policy file: mode read-only from a file is applied" open ro-policy.txt
}

# ---- failing closed --------------------------------------------------------------------------

t_fail_closed() {
        run_in "$WS" "$NOSANDBOX" "$CORDON" run -- touch ran-nosandbox
        n=$(fatal_lines)
        if [ "$LAST_STATUS" -eq 125 ] && [ "$n" -eq 1 ] && grep -q \
                '^cordon: fatal: SANDBOX_UNAVAILABLE: refusing to run the command unconfined' \
                "$LAST_ERR" && [ ! -e "$WS/ran-nosandbox" ]; then
                ok "fail closed: no userns, no Landlock -> 125 SANDBOX_UNAVAILABLE, nothing ran"
        else
                not_ok "fail closed: no userns, no Landlock -> 125 SANDBOX_UNAVAILABLE, nothing ran" \
                        "status $LAST_STATUS, $n fatal line(s)"
        fi
        rm -f "$WS/ran-nosandbox"
        for only in --only-userns --only-landlock; do
                run_in "$WS" "$NOSANDBOX" "$only" "$CORDON" run -- "$ATTACK" create open nosb.pem
                n=$(fatal_lines)
                if { [ "$LAST_STATUS" -eq 0 ] && [ "$n" -eq 0 ]; } ||
                        { [ "$LAST_STATUS" -eq 125 ] && [ "$n" -eq 1 ]; }; then
                        ok "fail closed: nosandbox $only: confined or refused, never weaker"
                else
                        not_ok "fail closed: nosandbox $only: confined or refused, never weaker" \
                                "status $LAST_STATUS, $n fatal line(s)"
                fi
                host_absent "fail closed: nosandbox $only: no nosb.pem" "$WS/nosb.pem"
        done
        run_in "$WS" "$NOSANDBOX" "$CORDON" run --sandbox off -- touch ran-off
        if [ "$LAST_STATUS" -eq 0 ] && [ -e "$WS/ran-off" ]; then
                ok "fail closed: --sandbox off still runs (explicitly unprotected)"
        else
                not_ok "fail closed: --sandbox off still runs (explicitly unprotected)"
        fi
        rm -f "$WS/ran-off"
        run_in "$WS" "$CORDON" probe --json
        if [ "$BACKEND" = landlock ]; then
                n=$(probe_field native status "$LAST_OUT") l=$(probe_field landlock status "$LAST_OUT")
                if [ "$LAST_STATUS" -eq 0 ] && [ "$n" = unusable ] && [ "$l" = partial ]; then
                        ok "probe (no user namespaces): native unusable, landlock partial"
                else
                        not_ok "probe (no user namespaces): native unusable, landlock partial" \
                                "native '$n', landlock '$l'"
                fi
        elif [ "$LAST_STATUS" -eq 0 ] && probe_field native status "$LAST_OUT" | grep -qx full; then
                ok "probe: native is full on this host"
        else
                not_ok "probe: native is full on this host"
        fi
        run_in "$WS" "$NOSANDBOX" "$CORDON" probe --json
        st=$(probe_field native status "$LAST_OUT")
        if [ "$LAST_STATUS" -eq 0 ] && [ -n "$st" ] && [ "$st" != full ]; then
                ok "probe: under nosandbox native is not reported full ($st)"
        else
                not_ok "probe: under nosandbox native is not reported full" "status '$st'"
        fi
}

# probe_field BACKEND FIELD FILE: one field of one backend from `cordon probe --json`.
probe_field() {
        /usr/bin/python3 -c 'import json,sys
d = json.load(open(sys.argv[3]))
print(next(b[sys.argv[2]] for b in d["backends"] if b["name"] == sys.argv[1]))' "$@" 2>/dev/null
}

# ---- the landlock backend ----------------------------------------------------------------------

# A tiny HTTP server on the host's 127.0.0.1 (an ephemeral port, in $HTTP_PORT) answering
# "cordon-it-ok" to every GET.
start_http() {
        rm -f "$IT_TMP/log/http.port"
        /usr/bin/python3 -c 'import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.end_headers(); self.wfile.write(b"cordon-it-ok\n")
    def log_message(self, *a): pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
open(sys.argv[1] + ".tmp", "w").write(str(s.server_address[1]))
import os; os.rename(sys.argv[1] + ".tmp", sys.argv[1])
s.serve_forever()' "$IT_TMP/log/http.port" &
        HTTP_PID=$!
        for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
                [ -s "$IT_TMP/log/http.port" ] && break
                sleep 0.1
        done
        HTTP_PORT=$(cat "$IT_TMP/log/http.port" 2>/dev/null)
}

# expect_output NAME WANT CORDON-RUN-ARGS...: status 0 and stdout exactly WANT.
expect_output() {
        name=$1 want=$2
        shift 2
        sb "$@"
        got=$(cat "$LAST_OUT")
        if [ "$LAST_STATUS" -eq 0 ] && [ "$got" = "$want" ]; then ok "$name"
        else not_ok "$name" "want '$want', got '$got' (status $LAST_STATUS)"; fi
}

# The egress proxy on the host's loopback: reachable with the run's credentials only, the only
# TCP destination (Landlock names the port, the supervisor the address), every refusal reported.
t_landlock_network() {
        start_http
        [ -n "$HTTP_PORT" ] || { not_ok "landlock: the test HTTP server did not start"; return 0; }
        allow="--allow-domain 127.0.0.1:$HTTP_PORT"
        url=http://127.0.0.1:$HTTP_PORT/
        # shellcheck disable=SC2086
        expect_output "landlock network: HTTP through the proxy with the run's credentials" \
                cordon-it-ok $allow -- curl -sf "$url"
        # shellcheck disable=SC2086
        expect_output "landlock network: SOCKS5 (socks5h) with the run's credentials" \
                cordon-it-ok $allow -- sh -c "curl -sf -x \"\$ALL_PROXY\" $url"
        # shellcheck disable=SC2086
        expect_output "landlock network: the proxy refuses a request without credentials (407)" \
                407 $allow -- sh -c "p=\${HTTP_PROXY##*:}; curl -s -o /dev/null -w '%{http_code}' -x http://127.0.0.1:\$p $url"
        # shellcheck disable=SC2086
        sb $allow -- sh -c "p=\${ALL_PROXY##*:}; curl -sf --socks5-hostname 127.0.0.1:\$p $url"
        if [ "$LAST_STATUS" -ne 0 ] && ! grep -q cordon-it-ok "$LAST_OUT"; then
                ok "landlock network: SOCKS5 without credentials is refused"
        else not_ok "landlock network: SOCKS5 without credentials is refused" "status $LAST_STATUS"; fi
        ev=$IT_TMP/log/ll-direct.jsonl
        # shellcheck disable=SC2086
        sb $allow --events "$ev" -- curl -sf --noproxy '*' "$url"
        if [ "$LAST_STATUS" -ne 0 ] && ! grep -q cordon-it-ok "$LAST_OUT" &&
                grep -q "\"action\":\"network-outbound\".*\"target\":\"127.0.0.1:$HTTP_PORT\"" "$ev"; then
                ok "landlock network: a direct connect to an allowed host's port is refused and reported"
        else not_ok "landlock network: a direct connect is refused and reported" "status $LAST_STATUS"; fi
        # The proxy's own port on another address: Landlock would let the port through; the
        # supervisor holds the address to 127.0.0.1.
        # shellcheck disable=SC2086
        sb $allow -- sh -c "p=\${HTTP_PROXY##*:}; c=\${HTTP_PROXY#http://}; c=\${c%@*}; curl -sf -x http://\$c@127.0.0.2:\$p $url"
        if [ "$LAST_STATUS" -ne 0 ] && ! grep -q cordon-it-ok "$LAST_OUT"; then
                ok "landlock network: the proxy's port on another address (127.0.0.2) is refused"
        else not_ok "landlock network: the proxy's port on another address is refused"; fi
        expect_output "landlock network: --no-network: the proxy refuses (403)" 403 --no-network \
                -- sh -c "curl -s -o /dev/null -w '%{http_code}' $url"
        kill "$HTTP_PID" 2>/dev/null
        wait "$HTTP_PID" 2>/dev/null
}

t_landlock_ladder() {
        ev=$IT_TMP/log/ll-ready.jsonl
        sb --events "$ev" -- true
        n=$(grep -c '^cordon: note: using the landlock backend: ' "$LAST_ERR")
        if [ "$LAST_STATUS" -eq 0 ] && [ "$n" -eq 1 ] &&
                grep -q '"type":"ready".*"backend":"landlock"' "$ev"; then
                ok "ladder: without user namespaces the default steps down to landlock, says so once, ready names it"
        else not_ok "ladder: the default steps down to landlock and says so" "status $LAST_STATUS, $n note line(s)"; fi
        FATAL_RE='^cordon: fatal: SANDBOX_UNAVAILABLE: refusing to run the command unconfined' \
                expect_status "ladder: an explicit --backend native never steps down" 125 1 \
                --backend native -- touch ran-native
        host_absent "ladder: nothing ran under --backend native" "$WS/ran-native"
        expect_status "ladder: --backend landlock is taken as asked, without a note" 0 0 \
                --backend landlock -- true
        if grep -q '^cordon: note:' "$LAST_ERR"; then not_ok "ladder: no note for an explicit backend"
        else ok "ladder: no note for an explicit backend"; fi
        run_in "$WS" "$NOSANDBOX" --apparmor-userns "$CORDON_REAL" run -- sh -c 'echo x > ran-aa && cat ran-aa'
        if [ "$LAST_STATUS" -eq 0 ] && grep -q '^cordon: note: using the landlock backend: .*mount' "$LAST_ERR"; then
                ok "ladder: AppArmor-style userns (no mounts inside) steps down to landlock"
        else not_ok "ladder: AppArmor-style userns steps down to landlock" "status $LAST_STATUS"; fi
        rm -f "$WS/ran-aa"
        run_in "$WS" "$NOSANDBOX" --only-landlock "$CORDON_REAL" run --backend landlock -- touch ran-nol
        if [ "$LAST_STATUS" -eq 125 ] && grep -q '^cordon: fatal: SANDBOX_UNAVAILABLE: refusing to run the command unconfined: the landlock backend needs Landlock ABI' "$LAST_ERR" &&
                [ ! -e "$WS/ran-nol" ]; then
                ok "ladder: --backend landlock without Landlock is refused, nothing ran"
        else not_ok "ladder: --backend landlock without Landlock is refused" "status $LAST_STATUS"; fi
        rm -f "$WS/ran-nol"
}

# Writes in the workspace without read-only mounts: what Landlock and the supervisor keep.
t_landlock_files() {
        expect_works "landlock files: create, append and reread a new file at the workspace top" \
                sh -c 'echo a > ll-new.txt && echo b >> ll-new.txt && test "$(cat ll-new.txt)" = "a
b" && rm ll-new.txt'
        take_snapshot
        for route in write write-creat trunc trunc-creat unlink; do
                expect_refused "landlock files: $route .git/config (no read-only mount here)" \
                        modify "$route" .git/config
        done
        host_unchanged "landlock files: .git/config unchanged"
}

t_landlock() {
        if [ "$BACKEND" != landlock ]; then
                echo "# (only in the integration-landlock-* runs)"
                return 0
        fi
        t_landlock_ladder
        t_landlock_network
        t_landlock_files
}

# Protected symlinks and metadata changes (issue 11): suite-meta.sh.
# shellcheck source=tests/integration/suite-meta.sh
. "$(dirname "$0")/suite-meta.sh"
# Read narrowing (blockReadsOutsideWorkdirs) and --analytics: suite-reads.sh.
# shellcheck source=tests/integration/suite-reads.sh
. "$(dirname "$0")/suite-reads.sh"
# The command policy: suite-commands.sh.
# shellcheck source=tests/integration/suite-commands.sh
. "$(dirname "$0")/suite-commands.sh"

# ---- main ------------------------------------------------------------------------------------

echo "# cordon integration suite as $(id -un) (uid $(id -u)) in $IT_TMP"
echo "# cordon: $CORDON (backend: $BACKEND)"
make_fixture
take_snapshot
ONLY=${CORDON_IT_ONLY:-}
for group in secrets outside protected_create protected_modify denied_names name_scope \
        name_templates name_allow cordon_dir path_forms races \
        git_escapes git_repos_user git_repos_attacks nested home_writable home_layouts stdin_reopen processes namespaces kernel network \
        unix_sockets limits default_limits nss_quiet inheritance lifetime allowed landlock protected_links metadata \
        exit_contract controls bad_input fail_closed project_settings read_narrowing analytics command_policy; do
        case " $ONLY " in "  " | *" $group "*) ;; *) continue ;; esac
        echo "# -- $group"
        "t_$group"
done
left=$(find "$WS" "$WS_NOGIT" "$FAKE_HOME" \( -iname .env -o -iname '.env.*' -o -iname '*.pem' \
        -o -iname '*.key' -o -name .bashrc -o -name .mcp.json -o -name HEAD -o -name '*.secret' \) \
        ! -path "$WS/.git/*" ! -path "$FAKE_HOME/.bashrc" -print)
if [ -z "$left" ]; then ok "host: no denied or protected name anywhere in the fixture"
else not_ok "host: no denied or protected name anywhere in the fixture" "$left"; fi
finish
