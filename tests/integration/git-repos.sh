# shellcheck shell=sh
# tests/integration/git-repos.sh: repositories created inside the sandbox (sourced by suite.sh;
# docs/design/git-repos.md). The user side — init, commit, config, remote add, clone and push,
# submodule add, worktree add — works; every way to give a new repository a config key, hook or
# pointer that makes the user's next host `git` run something is refused, and host git is run
# afterwards to prove nothing runs.

GR=$IT_TMP/ws/gr # inside the workspace: a persistent writable root

# gr_attack NAME SCRIPT: SCRIPT in the sandbox (cwd $GR, $MARK set), expected to fail (refused);
# then host git runs `git status` and `git commit` in every directory under $GR (never climbing
# to the workspace's own repository: GIT_CEILING_DIRECTORIES): the marker must not exist.
gr_attack() {
        name=$1 script=$2
        mark=$IT_TMP/log/gr-pwned
        rm -f "$mark"
        EXTRA_ENV="MARK=$mark" SB_DIR=$GR sb -- sh -c "$script"
        st=$LAST_STATUS
        for d in "$GR"/*/; do
                (cd "$d" && env -i PATH="$PATH" HOME="$FAKE_HOME" GIT_CEILING_DIRECTORIES="$GR" git status &&
                        env -i PATH="$PATH" HOME="$FAKE_HOME" GIT_CEILING_DIRECTORIES="$GR" git -c user.name=u -c user.email=u@x \
                                commit -q --allow-empty -m host) >/dev/null 2>&1
        done
        if [ -e "$mark" ]; then
                not_ok "$name" "ESCAPE: host git ran a command planted from inside the sandbox"
        elif [ "$st" -eq 0 ]; then
                not_ok "$name" "the sandboxed script succeeded (status 0): nothing was refused"
        else
                ok "$name"
        fi
        rm -rf "$GR"
        mkdir -p "$GR"
}

gr_works() {
        name=$1
        shift
        SB_DIR=$GR expect_works "$name" "$@"
}

# FSM: a config line whose fsmonitor runs the marker.
FSM='printf "[core]\n\tfsmonitor = \"touch $MARK\"\n"'
GI='git -c user.name=a -c user.email=a@b -c init.defaultBranch=main'

t_git_repos_user() {
        mkdir -p "$GR"
        gr_works "git repos: git init sub, config, remote add, commit" sh -c "set -e
$GI init -q sub && cd sub && git config user.name x && git config user.email x@y &&
git remote add origin ../bare.git && echo a > f && git add f && git commit -qm one &&
git config --get remote.origin.url >/dev/null && git log --oneline | grep -q one"
        if env -i PATH="$PATH" HOME="$FAKE_HOME" GIT_CEILING_DIRECTORIES="$GR" git -C "$GR/sub" log --oneline 2>/dev/null | grep -q one
        then ok "git repos: the new repository works for host git"
        else not_ok "git repos: the new repository works for host git"; fi
        gr_works "git repos: clone and push against a local bare repository" sh -c "set -e
$GI init -q --bare bare.git && git clone -q bare.git cl 2>/dev/null && cd cl &&
echo b > g && git add g && $GI commit -qm two && git push -q origin HEAD:main &&
git -C ../bare.git log --oneline main | grep -q two"
        gr_works "git repos: submodule add of a local repository, commit" sh -c "set -e
$GI init -q lib && $GI -C lib commit -q --allow-empty -m lib && cd sub &&
$GI -c protocol.file.allow=always submodule add -q ../lib lib && $GI commit -qm sub &&
git submodule status | grep -q lib && git -C lib log --oneline | grep -q lib"
        gr_works "git repos: worktree add, commit in the worktree" sh -c "set -e
cd sub && git worktree add -q ../wt && cd ../wt && echo c > h && git add h &&
$GI commit -qm three && git -C ../sub log --all --oneline | grep -q three"
        gr_works "git repos: git config of ordinary keys (user, branch, pull, core.autocrlf)" \
                sh -c "cd sub && git config pull.rebase true && git config core.autocrlf input &&
git config branch.main.remote origin && git config --get pull.rebase >/dev/null"
        gr_works "git repos: git gc, fetch from the bare repository" sh -c "set -e
cd cl && git fetch -q origin && git gc -q"
        # A nested repository the user had before the run, with husky's hooksPath and a hook of
        # its own: branches, commits and `git config` of other keys keep working inside; adding
        # a dangerous key is still refused.
        git_q init -q "$GR/pre"
        git_q -C "$GR/pre" commit -q --allow-empty -m pre
        git_q -C "$GR/pre" config core.hooksPath .husky/_
        printf '#!/bin/sh\nexit 0\n' > "$GR/pre/.git/hooks/pre-commit"
        chmod +x "$GR/pre/.git/hooks/pre-commit"
        gr_works "git repos: a nested repository from before the run (hooksPath, a hook) stays usable" \
                sh -c "set -e
cd pre && git checkout -q -b feat && git config user.name x && $GI commit -q --allow-empty -m in &&
git config --get core.hooksPath | grep -q husky"
        SB_DIR=$GR sb -- sh -c 'git -C pre config core.fsmonitor x'
        if [ "$LAST_STATUS" -ne 0 ] && ! grep -q fsmonitor "$GR/pre/.git/config"; then
                ok "git repos: ... but a dangerous key added to it is refused"
        else not_ok "git repos: a dangerous key added to a nested repository is refused"; fi
        t_git_repos_http
        # Write opens without O_CREAT are performed by the supervisor now: ordinary files,
        # /dev/null, and (native: the landlock backend opens no new pseudo-terminals) /dev/tty
        # naming the caller's controlling terminal, a pty child's.
        gr_works "write opens: r+ of a file, O_RDWR of /dev/null" /usr/bin/python3 -c '
import os
open("f.txt", "w").write("a"); f = open("f.txt", "r+"); f.write("b"); f.close()
assert open("f.txt").read() == "b"
os.close(os.open("/dev/null", os.O_RDWR))'
        [ "$BACKEND" = native ] && gr_works "write opens: /dev/tty of a pty child is its controlling terminal" \
                /usr/bin/python3 -c '
import os, pty
pid, fd = pty.fork()
if pid == 0:
    t = os.open("/dev/tty", os.O_RDWR); os.write(t, b"tty-ok\n"); os._exit(0)
out = b""
while True:
    try:
        d = os.read(fd, 100)
    except OSError:
        break
    if not d:
        break
    out += d
os.waitpid(pid, 0)
assert b"tty-ok" in out, out'
        rm -rf "$GR"
}

# Clone over HTTP (dumb protocol) from a server on the host's loopback, through the run's proxy.
t_git_repos_http() {
        srv=$IT_TMP/log/git-http
        rm -rf "$srv" && mkdir -p "$srv"
        git_q init -q --bare "$srv/r.git"
        git_q clone -q "$srv/r.git" "$srv/w" 2>/dev/null
        (cd "$srv/w" && echo x > x && git_q add x && git_q commit -qm http && git_q push -q origin HEAD:main) \
                >/dev/null 2>&1
        git_q -C "$srv/r.git" symbolic-ref HEAD refs/heads/main
        git_q -C "$srv/r.git" update-server-info
        rm -f "$IT_TMP/log/ghttp.port"
        /usr/bin/python3 -c 'import http.server, functools, sys, os
class Q(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *a): pass
s = http.server.HTTPServer(("127.0.0.1", 0), functools.partial(Q, directory=sys.argv[2]))
open(sys.argv[1] + ".tmp", "w").write(str(s.server_address[1]))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
s.serve_forever()' "$IT_TMP/log/ghttp.port" "$srv" &
        pid=$!
        i=0
        while [ ! -s "$IT_TMP/log/ghttp.port" ] && [ "$i" -lt 300 ]; do # 30 s: a loaded machine
                sleep 0.1
                i=$((i + 1))
        done
        port=$(cat "$IT_TMP/log/ghttp.port" 2>/dev/null)
        SB_DIR=$GR sb --allow-domain "127.0.0.1:$port" -- sh -c \
                "git clone -q http://127.0.0.1:$port/r.git hcl && git -C hcl log --oneline | grep -q http"
        if [ "$LAST_STATUS" -eq 0 ]; then ok "git repos: clone over HTTP through the proxy"
        else not_ok "git repos: clone over HTTP through the proxy" "status $LAST_STATUS"; fi
        kill "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
        rm -rf "$srv"
}

t_git_repos_attacks() {
        mkdir -p "$GR"
        I="$GI init -q sub"
        gr_attack "git repos: git config core.fsmonitor in a new repository" \
                "$I && git -C sub config core.fsmonitor \"touch \$MARK\""
        gr_attack "git repos: append core.fsmonitor to sub/.git/config (O_APPEND|O_CREAT)" \
                "$I && $FSM >> sub/.git/config"
        gr_attack "git repos: write sub/.git/config in place (O_RDWR, no O_CREAT)" \
                "$I && /usr/bin/python3 -c 'import os,sys; f=open(\"sub/.git/config\",\"r+\"); f.seek(0,2); f.write(\"[core]\\n\\tfsmonitor = touch \"+os.environ[\"MARK\"]+\"\\n\")'"
        gr_attack "git repos: config.lock with core.fsmonitor renamed over config" \
                "$I && { cat sub/.git/config; $FSM; } > sub/.git/config.lock && mv sub/.git/config.lock sub/.git/config"
        gr_attack "git repos: config written before the directory looks like a git dir" \
                "mkdir -p sub d && $FSM > d/config && mkdir d/objects d/refs && echo 'ref: refs/heads/main' > d/HEAD && echo 'gitdir: ../d' > sub/.git"
        gr_attack "git repos: HEAD first as a symlink, then objects and refs" \
                "mkdir -p sub d && $FSM > d/config && ln -s refs/heads/main d/HEAD && mkdir d/objects d/refs && echo 'gitdir: ../d' > sub/.git"
        # The fd kept on a config created before the markers writes into an inode git never reads.
        EXTRA_ENV="MARK=$IT_TMP/log/gr-pwned" SB_DIR=$GR sb -- /usr/bin/python3 -c '
import os
os.makedirs("sub"); os.mkdir("d"); f = open("d/config", "w"); f.write("[core]\n"); f.flush()
os.mkdir("d/objects"); os.mkdir("d/refs"); open("d/HEAD", "w").write("ref: refs/heads/main\n")
open("sub/.git", "w").write("gitdir: ../d\n")
f.write("\tfsmonitor = \"touch " + os.environ["MARK"] + "\"\n"); f.close()'
        (cd "$GR/sub" && env -i PATH="$PATH" HOME="$FAKE_HOME" GIT_CEILING_DIRECTORIES="$GR" git status) >/dev/null 2>&1
        if [ ! -e "$IT_TMP/log/gr-pwned" ] && ! grep -q fsmonitor "$GR/d/config"; then
                ok "git repos: an fd kept on the config across the markers writes nowhere git reads"
        else not_ok "git repos: an fd kept on the config writes nowhere git reads" "$(cat "$GR/d/config")"; fi
        rm -rf "$GR" && mkdir -p "$GR"
        gr_attack "git repos: commondir naming a common dir whose config came first" \
                "mkdir -p sub c w && $FSM > c/config && mkdir c/objects c/refs && echo ../c > w/commondir && echo 'ref: refs/heads/main' > w/HEAD && echo 'gitdir: ../w' > sub/.git"
        gr_attack "git repos: include.path to a file written later" \
                "$I && git -C sub config include.path ../../inc && $FSM > inc"
        gr_attack "git repos: includeIf.*.path" \
                "$I && git -C sub config 'includeIf.gitdir:/.path' ../../inc && $FSM > inc"
        gr_attack "git repos: core.hooksPath to a workspace directory" \
                "$I && mkdir hk && printf '#!/bin/sh\ntouch \"%s\"\n' \"\$MARK\" > hk/pre-commit && chmod +x hk/pre-commit && git -C sub config core.hooksPath ../hk"
        HOOK='printf "#!/bin/sh\ntouch \"%s\"\n" "$MARK"'
        gr_attack "git repos: a pre-commit hook created in a new repository" \
                "$I && $HOOK > sub/.git/hooks/pre-commit && chmod +x sub/.git/hooks/pre-commit"
        gr_attack "git repos: a sample hook renamed active (mv pre-commit.sample pre-commit)" \
                "$I && $HOOK > sub/.git/hooks/pre-commit.sample && chmod +x sub/.git/hooks/pre-commit.sample && mv sub/.git/hooks/pre-commit.sample sub/.git/hooks/pre-commit"
        gr_attack "git repos: a hook linked in (ln)" \
                "$I && $HOOK > h && chmod +x h && ln h sub/.git/hooks/post-checkout"
        gr_attack "git repos: the hooks directory replaced by a symlink" \
                "$I && mkdir hk && $HOOK > hk/pre-commit && chmod +x hk/pre-commit && rm -rf sub/.git/hooks && ln -s ../../hk sub/.git/hooks"
        gr_attack "git repos: a prepared hooks directory renamed into place" \
                "$I && mkdir hk && $HOOK > hk/pre-commit && chmod +x hk/pre-commit && rm -rf sub/.git/hooks && mv hk sub/.git/hooks"
        gr_attack "git repos: hooks prepared before the directory looks like a git dir" \
                "mkdir -p sub d/hooks && $HOOK > d/hooks/pre-commit && chmod +x d/hooks/pre-commit && mkdir d/objects d/refs && echo 'ref: refs/heads/main' > d/HEAD && echo 'gitdir: ../d' > sub/.git"
        gr_attack "git repos: a whole prepared directory renamed to .git, then HEAD" \
                "mkdir -p sub x && $FSM > x/config && mkdir x/objects.t x/refs.t && echo 'ref: refs/heads/main' > x/HEAD.t && mv x sub/.git && mv sub/.git/objects.t sub/.git/objects && mv sub/.git/refs.t sub/.git/refs && mv sub/.git/HEAD.t sub/.git/HEAD"
        gr_attack "git repos: a hard link of a crafted file as config" \
                "$I && $FSM > evil && rm sub/.git/config && ln evil sub/.git/config"
        gr_attack "git repos: config as a symlink to a crafted file" \
                "$I && $FSM > evil && rm sub/.git/config && ln -s ../../evil sub/.git/config"
        gr_attack "git repos: a worktree's config.worktree written directly" \
                "$I && $GI -C sub commit -q --allow-empty -m x && git -C sub config extensions.worktreeConfig true && git -C sub worktree add -q ../wt && $FSM > sub/.git/worktrees/wt/config.worktree"
        gr_attack "git repos: a submodule's .git/modules/x/config written directly" \
                "$I && mkdir -p sub/.git/modules/x/objects sub/.git/modules/x/refs && echo 'ref: refs/heads/main' > sub/.git/modules/x/HEAD && $FSM > sub/.git/modules/x/config"
        gr_attack "git repos: filter driver (filter.x.smudge) in a new repository" \
                "$I && git -C sub config filter.x.smudge \"touch \$MARK\""
        gr_attack "git repos: core.sshCommand, core.pager, credential.helper" \
                "$I && { git -C sub config core.sshCommand x; git -C sub config core.pager x; git -C sub config credential.helper x; }"
        # Control: unconfined, the plain variant must run the marker (the checks above can fail).
        mark=$IT_TMP/log/gr-pwned
        rm -f "$mark"
        EXTRA_ENV="MARK=$mark" SB_DIR=$GR sb --sandbox off -- sh -c \
                "$I && git -C sub config core.fsmonitor \"touch \$MARK\""
        (cd "$GR/sub" && env -i PATH="$PATH" HOME="$FAKE_HOME" GIT_CEILING_DIRECTORIES="$GR" git status) >/dev/null 2>&1
        if [ -e "$mark" ]; then ok "control: unconfined, a planted fsmonitor in a new repository runs"
        else not_ok "control: unconfined, a planted fsmonitor in a new repository runs"; fi
        ev=$IT_TMP/log/gr-events.jsonl
        SB_DIR=$GR sb --events "$ev" -- sh -c "$I && git -C sub config core.fsmonitor x"
        if grep -q '"type":"violation".*"rule":"core.fsmonitor"' "$ev"; then
                ok "git repos: the refusal is a violation naming the key"
        else not_ok "git repos: the refusal is a violation naming the key" "$(grep violation "$ev")"; fi
        rm -rf "$GR" "$ev" "$mark"
}
