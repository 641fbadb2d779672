#!/bin/sh
# tests/plan/test-git-escape.sh: the git "configuration-based sandbox escape" routes, end to end
# with the real binary. Each route plants, from inside `cordon run`, something a later host `git`
# would execute (core.fsmonitor runs on `git status`, hooks on `git commit`); then host git runs as
# the user would and the marker file must not appear. Every route is also run once with
# `--sandbox off` on a fresh copy of its fixture: there the marker must appear, which shows the
# check can fail. Allowed cases: commits inside the sandbox in a repository and in a linked
# worktree, and `git init` in a subdirectory.
#
# Needs CORDON_BUILD_DIR (meson's test_env). Exit 77 when it cannot run here (no git, or no
# sandbox on this host); 1 on any failure.
set -u

CORDON=${CORDON_BUILD_DIR:?CORDON_BUILD_DIR is not set}/cordon
[ -x "$CORDON" ] || { echo "SKIP: $CORDON not built"; exit 77; }
command -v git >/dev/null 2>&1 || { echo "SKIP: git is not installed"; exit 77; }

# Under /var/tmp: /tmp is private inside the sandbox, and the plan treats it specially.
T=$(mktemp -d /var/tmp/cordon-git-escape-XXXXXX) || exit 1
trap 'rm -rf "$T"' EXIT INT TERM
HOME_DIR=$T/home
MARKS=$T/marks
mkdir -p "$HOME_DIR" "$MARKS"
FAILED=0
N=0
ROUTE=0

ok() { N=$((N + 1)); echo "ok $N - $1"; }
not_ok() { N=$((N + 1)); FAILED=1; echo "not ok $N - $1${2:+ # $2}"; }

# The user's git on the host: a fake HOME, no system config, a fixed identity.
hgit() {
        env -i PATH="$PATH" HOME="$HOME_DIR" GIT_CONFIG_NOSYSTEM=1 git \
                -c user.name=cordon-test -c user.email=t@example.invalid \
                -c init.defaultBranch=main "$@"
}

# cordon run in DIR with the fake HOME; extra options (e.g. --sandbox off) before "--".
sb() {
        dir=$1
        shift
        (cd "$dir" && env HOME="$HOME_DIR" GIT_CONFIG_NOSYSTEM=1 "$CORDON" run "$@")
}

probe=$(sb "$T" -- true 2>&1)
case $probe in
*SANDBOX_UNAVAILABLE*) echo "SKIP: no sandbox on this host: $probe"; exit 77 ;;
esac

new_repo() {
        mkdir -p "$1"
        hgit init -q "$1" && hgit -C "$1" commit -q --allow-empty -m init
}

# evil DIR: a git dir at DIR (relative to the current directory) whose config runs `touch $MARK`
# as core.fsmonitor, with `..` as its worktree.
EVIL='evil() { mkdir -p "$1/objects" "$1/refs/heads" && echo "ref: refs/heads/main" > "$1/HEAD" &&
printf "[core]\n\trepositoryformatversion = 0\n\tworktree = ..\n\tfsmonitor = \"touch %s\"\n" "$MARK" > "$1/config"; }'

# route NAME SETUP_FN ATTACK TRIGGER: SETUP_FN DIR builds the fixture; ATTACK runs inside the
# sandbox in DIR (with $MARK set); TRIGGER is the host git command run in DIR afterwards.
route() {
        name=$1 setup=$2 attack=$3 trigger=$4
        ROUTE=$((ROUTE + 1))
        for mode in sandbox off; do
                dir=$T/route$ROUTE-$mode # no blanks: the marker path goes into a shell command
                mark=$MARKS/route$ROUTE-$mode
                $setup "$dir" >/dev/null 2>&1 || { not_ok "$name: fixture" "setup failed"; return; }
                if [ $mode = off ]; then
                        sb "$dir" --sandbox off -- env MARK="$mark" sh -c "$EVIL
$attack" >/dev/null 2>&1
                else
                        sb "$dir" -- env MARK="$mark" sh -c "$EVIL
$attack" >/dev/null 2>&1
                fi
                (cd "$dir" && eval "$trigger") >/dev/null 2>&1
                if [ $mode = off ]; then
                        if [ -e "$mark" ]; then ok "$name: control, unconfined the plant runs on the host"
                        else not_ok "$name: control, unconfined the plant runs on the host" \
                                "the check could not detect an escape"; fi
                elif [ -e "$mark" ]; then
                        not_ok "$name" "host git ran a command planted from inside the sandbox"
                else
                        ok "$name"
                fi
        done
}

# ---- route 1: a .git *file* in a workspace without a repository -----------------------------
setup_nogit() { mkdir -p "$1"; }
route "no repository: .git file pointing at a crafted git dir" setup_nogit \
        'evil evil; echo "gitdir: evil" > .git' 'hgit status'
route "no repository: .git symlink to a crafted git dir" setup_nogit \
        'evil evil; ln -s evil .git' 'hgit status'
route "no repository: .git directory built elsewhere, renamed into place" setup_nogit \
        'mkdir -p x && evil x/g && printf "[core]\n\tfsmonitor = \"touch %s\"\n" "$MARK" > x/g/config &&
mv x/g .git' 'hgit status'

# ---- route 2: git dir internals that redirect config ----------------------------------------
setup_repo() { new_repo "$1"; }
route "repository: .git/commondir naming a crafted common dir" setup_repo \
        'evil evil; echo ../evil > .git/commondir' 'hgit status'
route "repository: a submodule git dir in .git/modules" setup_repo \
        'evil .git/modules/x && mkdir -p x && echo "gitdir: ../.git/modules/x" > x/.git &&
printf "[submodule \"x\"]\n\tpath = x\n\turl = ./x\n" > .gitmodules &&
git update-index --add --cacheinfo "160000,$(git rev-parse HEAD),x"' 'hgit status'

# A linked worktree as the workspace: its admin dir in the main repository's .git is writable
# (commits), but its commondir is not.
setup_worktree() {
        new_repo "$1-main" && hgit -C "$1-main" worktree add -q "$1" -b "wt-$(basename "$1")"
}
route "linked worktree: rewrite worktrees/N/commondir" setup_worktree \
        'evil "$PWD/evil-common"; echo "$PWD/evil-common" > "$(git rev-parse --git-dir)/commondir"' \
        'hgit status'

# ---- route 3: what the existing configuration names -----------------------------------------
setup_husky() { new_repo "$1" && hgit -C "$1" config core.hooksPath .husky && mkdir -p "$1/.husky"; }
HOOK='printf "#!/bin/sh\ntouch \"%s\"\n" "$MARK" > .husky/pre-commit; chmod +x .husky/pre-commit'
route "core.hooksPath=.husky: plant .husky/pre-commit" setup_husky "$HOOK" \
        'hgit commit -q --allow-empty -m x'
setup_husky_missing() { new_repo "$1" && hgit -C "$1" config core.hooksPath .husky; }
route "core.hooksPath=.husky (absent): create .husky/pre-commit" setup_husky_missing \
        "mkdir -p .husky; $HOOK" 'hgit commit -q --allow-empty -m x'
setup_fsmon() {
        new_repo "$1" && mkdir -p "$1/tools" && printf '#!/bin/sh\nexit 1\n' > "$1/tools/fsmon.sh" &&
                chmod +x "$1/tools/fsmon.sh" && hgit -C "$1" config core.fsmonitor ./tools/fsmon.sh
}
route "core.fsmonitor=./tools/fsmon.sh: rewrite the monitor" setup_fsmon \
        'printf "#!/bin/sh\ntouch \"%s\"\nexit 1\n" "$MARK" > tools/fsmon.sh' 'hgit status'
setup_include() {
        new_repo "$1" && : > "$1/project.gitconfig" &&
                hgit -C "$1" config include.path ../project.gitconfig
}
route "include.path=../project.gitconfig: write core.fsmonitor into it" setup_include \
        'printf "[core]\n\tfsmonitor = \"touch %s\"\n" "$MARK" > project.gitconfig' 'hgit status'

# ---- allowed: commits keep working ----------------------------------------------------------
GIT_ID='-c user.name=in -c user.email=in@example.invalid'
d=$T/commit
new_repo "$d"
sb "$d" -- sh -c "echo hello > f.txt && git add f.txt && git $GIT_ID commit -q -m 'from the sandbox'" \
        >"$T/commit.log" 2>&1
if [ "$(hgit -C "$d" log -1 --format=%s 2>/dev/null)" = "from the sandbox" ] &&
        [ "$(hgit -C "$d" status --porcelain)" = "" ]; then
        ok "allowed: git add && git commit in an existing repository"
else
        not_ok "allowed: git add && git commit in an existing repository" "$(tr '\n' ' ' < "$T/commit.log")"
fi
# The same in a repository with core.hooksPath and an fsmonitor command: still commits.
d=$T/commit-hooks
setup_fsmon "$d" && hgit -C "$d" config core.hooksPath .husky
sb "$d" -- sh -c "echo hi > g.txt && git add g.txt && git $GIT_ID commit -q -m second" \
        >"$T/commit2.log" 2>&1
if [ "$(hgit -C "$d" log -1 --format=%s 2>/dev/null)" = second ]; then
        ok "allowed: commit in a repository with core.hooksPath and core.fsmonitor"
else
        not_ok "allowed: commit in a repository with core.hooksPath and core.fsmonitor" \
                "$(tr '\n' ' ' < "$T/commit2.log")"
fi
d=$T/commit-wt
setup_worktree "$d" >/dev/null 2>&1
sb "$d" -- sh -c "echo w > w.txt && git add w.txt && git $GIT_ID commit -q -m in-worktree" \
        >"$T/commit3.log" 2>&1
if [ "$(hgit -C "$d" log -1 --format=%s 2>/dev/null)" = in-worktree ]; then
        ok "allowed: commit in a linked worktree"
else
        not_ok "allowed: commit in a linked worktree" "$(tr '\n' ' ' < "$T/commit3.log")"
fi
d=$T/init-sub
mkdir -p "$d"
sb "$d" -- sh -c "git init -q sub && cd sub && git $GIT_ID commit -q --allow-empty -m sub" \
        >"$T/init.log" 2>&1
if [ "$(hgit -C "$d/sub" log -1 --format=%s 2>/dev/null)" = sub ]; then
        ok "allowed: git init in a subdirectory of a workspace without a repository"
else
        not_ok "allowed: git init in a subdirectory of a workspace without a repository" \
                "$(tr '\n' ' ' < "$T/init.log")"
fi
# ...but not at its top (it would write .git, protected there).
d=$T/init-top
mkdir -p "$d"
sb "$d" -- git init -q . >/dev/null 2>&1
if [ ! -e "$d/.git" ]; then ok "refused: git init at the top of a workspace, nothing left"
else not_ok "refused: git init at the top of a workspace, nothing left" "$d/.git exists"; fi

echo "1..$N"
exit $FAILED
