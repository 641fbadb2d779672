# shellcheck shell=sh
# tests/integration/suite-meta.sh: sourced by suite.sh (same variables and verdicts, lib.sh).
# Protected entries that are symlinks, and metadata changes (chmod, chown, utimes, xattrs)
# outside the writable roots and on protected files and secrets (issue 11, items 2 and 3), on
# both backends. Each attack has an unconfined control (the attack helper without cordon, on
# the same file) showing it works there; the everyday operations inside the workspace must work.

# Every route of `attack meta` that the kernel itself serves (fchmod and fsetxattr on an O_PATH
# fd are EBADF without cordon: no attack).
META_ROUTES="chmod fchmodat fchmodat2-nofollow fchmod-ro fchmodat2-empty chmod-procfd
chmod-symlink chown lchown fchown-ro fchownat-empty utime utimes futimesat utimensat
utimensat-nofollow touch-now futimens-ro utimensat-empty utimensat-nullpath setxattr lsetxattr
fsetxattr-ro setxattrat setxattr-big removexattr lremovexattr fremovexattr-ro removexattrat"
# File attribute flags (chattr +d through FS_IOC_SETFLAGS and FS_IOC_FSSETXATTR): the landlock
# backend refuses them everywhere, so they are attacks only.
META_IOCTL_ROUTES="chattr-nodump fssetxattr-nodump"

# control NAME CMD...: CMD run in the workspace without cordon must report an escape (1).
control() {
        name=$1
        shift
        run_in "${SB_DIR:-$WS}" "$@"
        if [ "$LAST_STATUS" -eq 1 ]; then ok "control: without cordon, $name works"
        else not_ok "control: without cordon, $name works" "status $LAST_STATUS: $(head -c 300 "$LAST_ERR")"; fi
}

# ---- protected entries that are symlinks -----------------------------------------------------

links_fixture() {
        mkdir -p "$WS/cfg" "$WS/tools"
        for f in claude pp dw g; do echo "{\"f\": \"$f\"}" > "$WS/cfg/$f.json"; done
        ln -s ../cfg/claude.json "$WS/.claude/settings.json" # a mandatory glob entry's match
        ln -s cfg/pp.json "$WS/pp-link"                      # --protect, literal
        ln -s cfg/dw.json "$WS/dw-link"                      # --deny-write, literal
        ln -s ../cfg/g.json "$WS/tools/g.lock"               # --deny-write, a glob's match
        LINK_OPTS="--protect $WS/pp-link --deny-write $WS/dw-link --deny-write $WS/tools/*.lock"
}

links_sum() {
        (cd "$WS/cfg" && cksum ./*.json) > "$IT_TMP/log/links.sum"
}

links_unchanged() {
        if (cd "$WS/cfg" && cksum ./*.json) | cmp -s - "$IT_TMP/log/links.sum"; then ok "$1"
        else
                not_ok "$1" "a link's target changed:" \
                        "$( (cd "$WS/cfg" && cksum ./*.json) | diff "$IT_TMP/log/links.sum" - | tr '\n' '|')"
                (cd "$WS/cfg" && cksum ./*.json) > "$IT_TMP/log/links.sum"
        fi
}

t_protected_links() {
        links_fixture
        control "a write through .claude/settings.json -> cfg/claude.json" \
                "$ATTACK" modify write-creat .claude/settings.json
        links_sum
        SB_OPTS=$LINK_OPTS
        for p in .claude/settings.json cfg/claude.json pp-link cfg/pp.json dw-link cfg/dw.json \
                tools/g.lock cfg/g.json; do
                for route in write-creat trunc-creat write trunc via-symlink link-alias rename-over \
                        rename-away exchange; do
                        expect_refused "protected links: $route $p" modify "$route" "$p"
                done
                case $p in cfg/*) expect_refused "protected links: unlink $p" modify unlink "$p" ;; esac
                clean_aux
        done
        links_unchanged "protected links: no target changed"
        # The links themselves, last (put back if an unlink worked). Native: each is a read-only
        # bind of itself (a mountpoint: EBUSY); landlock: unlink is notified.
        for p in .claude/settings.json pp-link dw-link tools/g.lock; do
                t=$(readlink "$WS/$p")
                expect_refused "protected links: unlink the link $p" modify unlink "$p"
                [ -L "$WS/$p" ] || ln -s "$t" "$WS/$p"
        done
        # A symlink made during the run that points at a protected file.
        for target in .git/config cfg/claude.json; do
                sb -- sh -c "ln -s $target cordon-it-lnk-run && echo x >> cordon-it-lnk-run"
                if [ "$LAST_STATUS" -ne 0 ]; then ok "protected links: ln -s $target x; echo >> x refused"
                else not_ok "protected links: ln -s $target x; echo >> x refused" "it worked"; fi
                rm -f "$WS/cordon-it-lnk-run"
        done
        for p in cfg/claude.json .git/config; do
                for route in chmod fchmod-ro touch-now setxattr; do
                        expect_refused "protected links: $route $p" meta "$route" "$p"
                done
        done
        links_unchanged "protected links: no target changed (after the run-time links)"
        expect_works "protected links: an ordinary file next to them stays writable" \
                sh -c 'echo x > cfg/other.json && rm cfg/other.json'
        SB_OPTS=
        rm -rf "$WS/cfg" "$WS/tools" "$WS/.claude/settings.json" "$WS/pp-link" "$WS/dw-link"
        t_hard_links
}

# Hard links made before the run: another name of a protected file or secret.
t_hard_links() {
        echo '{"hl": 1}' > "$WS/hlp.json"
        ln "$WS/hlp.json" "$WS/hl-p.txt"
        ln "$WS/.git/config" "$WS/hl-config"
        ln "$FAKE_HOME/.netrc" "$WS/hl-netrc"
        control "a write through a hard link of a file" "$ATTACK" modify write hl-p.txt
        control "a read of a hard link of ~/.netrc" "$ATTACK" read hl-netrc
        take_snapshot
        cp "$WS/hlp.json" "$IT_TMP/log/hlp.json"
        SB_OPTS="--protect $WS/hlp.json"
        for p in hl-p.txt hl-config; do
                for route in write write-creat trunc trunc-creat via-symlink; do
                        expect_refused "hard links: $route $p (made before the run)" modify "$route" "$p"
                done
                for route in chmod setxattr; do
                        expect_refused "hard links: $route $p (made before the run)" meta "$route" "$p"
                done
                clean_aux
        done
        expect_refused "hard links: read ~/.netrc by another name" read hl-netrc
        SB_OPTS=
        host_unchanged "hard links: .git/config unchanged"
        if cmp -s "$WS/hlp.json" "$IT_TMP/log/hlp.json"; then ok "hard links: the protected file unchanged"
        else not_ok "hard links: the protected file unchanged" "$(cat "$WS/hlp.json")"; fi
        rm -f "$WS/hlp.json" "$WS/hl-p.txt" "$WS/hl-config" "$WS/hl-netrc"
}

# ---- metadata --------------------------------------------------------------------------------

meta_fixture() {
        META_REPO=$IT_TMP/meta-repo
        new_repo "$META_REPO"
        printf '#!/bin/sh\nexit 0\n' > "$META_REPO/.git/hooks/pre-commit"
        chmod 0644 "$META_REPO/.git/hooks/pre-commit"
        echo "meta" > "$WS/meta-ok.txt"
        mkdir -p "$IT_TMP/tarsrc"
        printf '#!/bin/sh\n' > "$IT_TMP/tarsrc/run.sh"
        chmod 0750 "$IT_TMP/tarsrc/run.sh"
        touch -d '2001-02-03 04:05:06' "$IT_TMP/tarsrc/run.sh"
        tar -C "$IT_TMP/tarsrc" -cf "$IT_TMP/meta.tar" run.sh
}

t_metadata() {
        meta_fixture
        take_snapshot
        control "chmod 0644 ~/.ssh/id_rsa" "$ATTACK" meta chmod "$FAKE_HOME/.ssh/id_rsa"
        for route in $META_ROUTES $META_IOCTL_ROUTES; do
                control "$route of a file outside the workspace" \
                        "$ATTACK" meta "$route" "$OUTSIDE/existing.txt"
        done
        SB_DIR=$META_REPO control "chmod of .git/hooks/pre-commit" \
                "$ATTACK" meta chmod .git/hooks/pre-commit
        for p in "$FAKE_HOME/.ssh/id_rsa" "$FAKE_HOME/.bashrc" "$OUTSIDE/existing.txt" \
                "$WS/.git/config" "$WS/.git/hooks" "$WS/.zshrc"; do
                for route in $META_ROUTES $META_IOCTL_ROUTES; do
                        expect_refused "metadata: $route $p" meta "$route" "$p"
                done
                clean_aux
        done
        # Races: the path buffer and a symlink flip between a workspace file and the target.
        control "chmod through a flipping path of a file outside" \
                "$ATTACK" meta-race 1 "$OUTSIDE/existing.txt"
        for p in "$OUTSIDE/existing.txt" "$FAKE_HOME/.ssh/id_rsa"; do
                expect_refused "metadata race: flip the path and a symlink towards $p (3 s)" \
                        meta-race 3 "$p"
        done
        rm -f "$WS"/race-*
        for route in chmod fchmod-ro fchmodat2-empty utimensat setxattr; do
                SB_DIR=$META_REPO expect_refused "metadata: $route .git/hooks/pre-commit" \
                        meta "$route" .git/hooks/pre-commit
        done
        host_unchanged "metadata: secrets, protected and outside files unchanged (mode, content)"
        if [ -x "$META_REPO/.git/hooks/pre-commit" ]; then
                not_ok "metadata: the hook is still not executable" "chmod +x worked"
        else ok "metadata: the hook is still not executable"; fi
        if [ "$BACKEND" = landlock ]; then
                ev=$IT_TMP/log/meta-events.jsonl
                sb --events "$ev" -- "$ATTACK" meta chmod "$FAKE_HOME/.ssh/id_rsa"
                if grep -q '"action":"file-metadata","target":"'"$FAKE_HOME"'/.ssh/id_rsa"' "$ev"; then
                        ok "metadata: the refusal is a file-metadata violation naming the file"
                else not_ok "metadata: the refusal is a file-metadata violation naming the file" \
                        "$(grep violation "$ev" | head -c 300)"; fi
        fi
        t_metadata_allowed
}

# The user side: every route on a workspace file, and the tools that use them.
t_metadata_allowed() {
        for route in $META_ROUTES; do
                expect_works "metadata allowed: $route of a workspace file" \
                        "$ATTACK" allow-meta "$route" meta-ok.txt
        done
        clean_aux
        expect_works "metadata allowed: chmod +x, touch, cp -p, cp -a in the workspace" sh -c '
                printf "#!/bin/sh\n" > m.sh && chmod +x m.sh && test -x m.sh &&
                touch -d "2002-03-04 05:06:07" m.sh && cp -p m.sh m2.sh &&
                test "$(stat -c %Y m.sh)" = "$(stat -c %Y m2.sh)" && test -x m2.sh &&
                cp -a m.sh m3.sh && test "$(stat -c %a%Y m.sh)" = "$(stat -c %a%Y m3.sh)" &&
                rm m.sh m2.sh m3.sh'
        expect_works "metadata allowed: tar x keeps modes and times" sh -c '
                mkdir -p tx && tar -C tx -xpf "$1" && test "$(stat -c %a tx/run.sh)" = 750 &&
                test "$(stat -c %Y tx/run.sh)" = "$(stat -c %Y "$2")" && rm -r tx' sh \
                "$IT_TMP/meta.tar" "$IT_TMP/tarsrc/run.sh"
        SB_DIR=$META_REPO expect_works "metadata allowed: git add, commit, checkout of an executable" sh -c '
                printf "#!/bin/sh\n" > tool.sh && chmod 755 tool.sh &&
                git -c user.name=it -c user.email=it@example.invalid add tool.sh &&
                git -c user.name=it -c user.email=it@example.invalid commit -qm tool &&
                rm tool.sh && git checkout -q -- tool.sh && test -x tool.sh &&
                git update-index --chmod=-x tool.sh && git status --short >/dev/null'
        expect_works "metadata allowed: in the run's TMPDIR" sh -c '
                f=${TMPDIR:-/tmp}/m.$$ && echo x > "$f" && chmod 600 "$f" && touch "$f" && rm "$f"'
        rm -f "$WS/meta-ok.txt"
}
