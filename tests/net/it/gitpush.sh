# tests/net/it/gitpush.sh: the gitPush group of the network suite (sourced by suite.sh, which
# defines net, check_events and the fixtures). The git push gateway (docs/policy.md, "Git
# push"): a git smart-HTTP server (gitsrv.py: git http-backend) over HTTPS, trusted for
# upstreams by tls.upstreamCa, and over plain http://. Inside `cordon run`: clone and fetch
# pass; a push to a ref no entry allows is refused with a 403 naming the ref, one
# network-request violation carrying the ref, and the server's ref unchanged (the push never
# reached it); a push to an allowed ref pattern lands; a deletion needs "delete": true; an
# unlisted repository's push is refused at its ref advertisement; SSH to the git host is refused
# with the HTTPS hint; a push over http:// is refused. Without gitPush nothing is judged.

GH=gitpush.example.test

# The server's state: its own certificate for $GH, two bare repositories, push enabled.
start_gitsrv() {
        G=$IT_TMP/gitsrv
        mkdir -p "$G/root"
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
                -subj "/CN=$GH" -addext "subjectAltName=DNS:$GH" \
                -keyout "$G/key" -out "$G/cert" 2>/dev/null || return 1
        for r in repo other; do
                git clone -q --bare "$SRV/src" "$G/root/org/$r.git" &&
                        git -C "$G/root/org/$r.git" config http.receivepack true || return 1
        done
        : > "$G/access.log"
        $PY "$HERE/gitsrv.py" "$G/root" "$G/cert" "$G/key" "$G/access.log" "$G/ports" &
        GITSRV_PID=$!
        for _ in $(seq 100); do [ -f "$G/ports" ] && break; sleep 0.1; done
        [ -f "$G/ports" ] || return 1
        . "$G/ports"
        GP=$GIT_HTTP_PORT GT=$GIT_TLS_PORT
}

# The server's value of a ref of org/repo ("" when it has none).
srv_ref() {
        git -C "$G/root/org/repo.git" rev-parse -q --verify "$1" 2>/dev/null
}

t_gitpush() {
        if ! start_gitsrv; then
                not_ok "gitpush: the smart-HTTP server starts"
                return 0
        fi
        cat > "$IT_TMP/gitpush.json" <<JSON
{"tls": {"upstreamCa": ["$G/cert"]},
 "gitPush": {"default": "deny", "allow": [
   {"repo": "$GH/org/repo.git", "refs": ["refs/heads/agent/*"]},
   {"repo": "$GH/org/repo", "refs": ["refs/heads/tmp/*"], "delete": true}]}}
JSON
        g="--policy $IT_TMP/gitpush.json --allow-domain $GH --resolve $GH=127.0.0.1"
        g="$g --allow-domain 127.0.0.1:$GT --allow-domain 127.0.0.1:$GP"
        u=https://$GH:$GT/org/repo.git
        gq="git -c user.name=it -c user.email=it@example.invalid"
        net "gitpush: clone over https passes the gateway" 0 "cordon-net-it repository" - . \
                $g -- sh -c "git clone -q $u gp && cat gp/README"
        net "gitpush: fetch over https passes the gateway" 0 "ok" - . $g -- sh -c \
                "git -C gp fetch -q origin && echo ok"
        main_before=$(srv_ref refs/heads/main)
        net "gitpush: a push to a ref no entry allows is refused, naming the ref" 1 \
                "*remote rejected*main*(cordon: gitPush: no gitPush.allow entry allows updating refs/heads/main of $GH/org/repo)*" \
                "req:$GH:$GT~gitPush: no gitPush.allow entry allows updating refs/heads/main of $GH/org/repo" \
                . $g -- sh -c "cd gp && echo x > f && $gq add f && $gq commit -qm x &&
                git push -q origin HEAD:refs/heads/main 2>&1"
        if [ "$(srv_ref refs/heads/main)" = "$main_before" ] &&
                ! grep -q 'POST /org/repo.git/git-receive-pack' "$G/access.log"; then
                ok "gitpush: ... the refused push never reached the server"
        else
                not_ok "gitpush: ... the refused push never reached the server" "$(cat "$G/access.log")"
        fi
        if req_event "$EV" | grep -q "	POST	/org/repo.git/git-receive-pack	refs/heads/main\$"; then
                ok "gitpush: ... its network-request violation carries the method, path and ref"
        else
                not_ok "gitpush: ... its network-request violation carries the method, path and ref" \
                        "$(req_event "$EV")"
        fi
        run_in "$WS" "$CORDON" explain --events "$EV" --status 1
        case $(cat "$LAST_OUT") in
        *'ref refs/heads/main (gitPush)'*'add to gitPush.allow: {"repo": "'"$GH"'/org/repo", "refs": ["refs/heads/main"]}'*)
                ok "gitpush: cordon explain names the gitPush entry that would allow the push" ;;
        *) not_ok "gitpush: cordon explain names the gitPush entry that would allow the push" \
                "$(cat "$LAST_OUT")" ;;
        esac
        net "gitpush: a push to an allowed ref pattern lands" 0 "" - . $g -- sh -c \
                "cd gp && git push -q origin HEAD:refs/heads/agent/one"
        if [ -n "$(srv_ref refs/heads/agent/one)" ]; then ok "gitpush: ... the server has the ref"
        else not_ok "gitpush: ... the server has the ref"; fi
        # Over git's http.postBuffer (1 MiB) the push is chunked, after a "0000" probe: the
        # commands are read through the chunk framing, the packfile streamed after them; the
        # refused one is read to its end before git's rejection goes out.
        head -c 1200000 /dev/urandom > "$WS/gp/big.bin"
        net "gitpush: a large (chunked) push to an allowed ref lands" 0 "" - . $g -- sh -c \
                "cd gp && $gq add big.bin && $gq commit -qm big &&
                git push -q origin HEAD:refs/heads/agent/big"
        if [ "$(srv_ref refs/heads/agent/big)" = "$(git -C "$WS/gp" rev-parse HEAD)" ] &&
                grep -q 'POST /org/repo.git/git-receive-pack chunked' "$G/access.log"; then
                ok "gitpush: ... the server has the large push's ref, sent chunked"
        else not_ok "gitpush: ... the server has the large push's ref, sent chunked" \
                "$(cat "$G/access.log")"; fi
        net "gitpush: a large (chunked) push to a protected ref is refused, git shows why" 1 \
                "*remote rejected*(cordon: gitPush: no gitPush.allow entry allows updating refs/heads/main*" \
                "req:$GH:$GT~gitPush: no gitPush.allow entry allows updating refs/heads/main*" . \
                $g -- sh -c "cd gp && git push -q origin HEAD:refs/heads/main 2>&1"
        if [ "$(srv_ref refs/heads/main)" = "$main_before" ]; then
                ok "gitpush: ... main is unchanged"
        else not_ok "gitpush: ... main is unchanged"; fi
        # As the attacker: a hand-made receive-pack body (curl, no git) moving main, and the same
        # through a path that climbs out of an allowed repository's name.
        old=$(srv_ref refs/heads/main)
        $PY -c 'import sys
line = sys.argv[1] + " " + "1" * 40 + " refs/heads/main\0report-status\n"
sys.stdout.write("%04x%s0000" % (len(line) + 4, line))' "$old" > "$WS/evil-body"
        posts=$(grep -c POST "$G/access.log")
        post="curl -s --max-time 20 --path-as-is --data-binary @evil-body"
        post="$post -H 'Content-Type: application/x-git-receive-pack-request'"
        net "gitpush: attacker: a hand-made push body moving main gets git's rejection" 0 \
                "*ng refs/heads/main cordon: gitPush: no gitPush.allow entry allows updating refs/heads/main*" \
                "req:$GH:$GT~gitPush: no gitPush.allow entry allows updating refs/heads/main*" . \
                $g -- sh -c "$post https://$GH:$GT/org/repo.git/git-receive-pack"
        for path in /org/other/../repo.git/git-receive-pack /org/repo.git/GIT-RECEIVE-PACK \
                /org/repo.git/git-receive%2Dpack \
                "/org/repo.git/git-receive-pack?x=1"; do
                net "gitpush: attacker: a push body to $path is refused (403)" 0 \
                        "cordon: request refused: gitPush: *" "req:$GH:$GT~gitPush: *" . $g -- \
                        sh -c "$post 'https://$GH:$GT$path'"
        done
        net "gitpush: attacker: a coded push body (Content-Encoding: gzip) is refused" 0 \
                "cordon: request refused: gitPush: a push body with a Content-Encoding*" \
                "req:$GH:$GT~gitPush: *" . $g -- sh -c "$post -H 'Content-Encoding: gzip' \
                https://$GH:$GT/org/repo.git/git-receive-pack"
        if [ "$(srv_ref refs/heads/main)" = "$main_before" ] &&
                [ "$(grep -c POST "$G/access.log")" = "$posts" ]; then
                ok "gitpush: attacker: ... main is unchanged, no hand-made push reached the server"
        else not_ok "gitpush: attacker: ... main is unchanged, no hand-made push reached the server" \
                "$(cat "$G/access.log")"; fi
        net "gitpush: a deletion the entry does not allow is refused" 1 "" \
                "req:$GH:$GT~gitPush.allow\\[0\\]: refs/heads/agent/one: deleting it needs*" . \
                $g -- sh -c "cd gp && git push -q origin :refs/heads/agent/one 2>/dev/null"
        if [ -n "$(srv_ref refs/heads/agent/one)" ]; then ok "gitpush: ... the ref is still there"
        else not_ok "gitpush: ... the ref is still there"; fi
        net "gitpush: \"delete\": true allows the deletion" 0 "" - . $g -- sh -c \
                "cd gp && git push -q origin HEAD:refs/heads/tmp/x &&
                git push -q origin :refs/heads/tmp/x"
        if [ -z "$(srv_ref refs/heads/tmp/x)" ]; then ok "gitpush: ... the ref is gone"
        else not_ok "gitpush: ... the ref is gone"; fi
        net "gitpush: a push to an unlisted repository is refused at its ref advertisement" 128 "*remote: cordon: request refused: gitPush: no gitPush.allow entry names $GH/org/other*" \
                "req:$GH:$GT~gitPush: no gitPush.allow entry names $GH/org/other*" . $g -- sh -c \
                "cd gp && git push -q https://$GH:$GT/org/other.git HEAD:refs/heads/agent/a 2>&1"
        net "gitpush: ssh to the git host is refused, pointing at https" 255 "" \
                "$GH:22~gitPush: pushes over SSH cannot be inspected; use https://$GH/*" . \
                $g -- ssh -o BatchMode=yes -o StrictHostKeyChecking=no -o ConnectTimeout=10 \
                -p 22 "git@$GH" true
        net "gitpush: clone over plain http:// passes" 0 "cordon-net-it repository" - . $g -- \
                sh -c "git clone -q http://$GH:$GP/org/repo.git h-@M@ && cat h-@M@/README"
        net "gitpush: a push over plain http:// is refused, pointing at https" 1 "" \
                "req:$GH:$GP~gitPush: a push over http:// is not read by the gateway*" . $g -- sh -c \
                "cd h-$MARK && git push -q origin HEAD:refs/heads/agent/plain 2>/dev/null"
        if [ -z "$(srv_ref refs/heads/agent/plain)" ]; then
                ok "gitpush: ... the plain push never landed"
        else not_ok "gitpush: ... the plain push never landed"; fi
        # The landlock backend terminates the git host's TLS too (its session CA's bundle in a
        # directory of the run's own): clone passes, a push to a protected ref is refused.
        if "$CORDON" probe 2>/dev/null | grep -qE '^landlock +(full|partial) '; then
                net "gitpush: landlock backend: clone over https passes the gateway" 0 \
                        "cordon-net-it repository" - . --backend landlock $g -- sh -c \
                        "git clone -q $u l-@M@ && cat l-@M@/README"
                net "gitpush: landlock backend: a push to a ref no entry allows is refused" 1 \
                        "*remote rejected*main*(cordon: gitPush: no gitPush.allow entry allows updating refs/heads/main of $GH/org/repo)*" \
                        "req:$GH:$GT~gitPush: no gitPush.allow entry allows updating refs/heads/main of $GH/org/repo" \
                        . --backend landlock $g -- sh -c "git clone -q $u l2-@M@ && cd l2-@M@ &&
                        echo z > z && $gq add z && $gq commit -qm z &&
                        git push -q origin HEAD:refs/heads/main 2>&1"
        else
                skip "gitpush: landlock backend: the gateway judges pushes" "no landlock backend"
        fi
        # Without a gitPush key nothing is judged: the same push to main lands.
        echo "{\"tls\": {\"upstreamCa\": [\"$G/cert\"]}}" > "$IT_TMP/nogit.json"
        n="--policy $IT_TMP/nogit.json --allow-domain $GH --resolve $GH=127.0.0.1"
        n="$n --allow-domain 127.0.0.1:$GT --allow-domain 127.0.0.1:$GP"
        net "gitpush: without gitPush a push is not judged" 0 "" - . $n -- sh -c \
                "git clone -q http://$GH:$GP/org/repo.git n-@M@ && cd n-@M@ && echo y > g &&
                $gq add g && $gq commit -qm y && git push -q origin HEAD:refs/heads/free"
        kill "$GITSRV_PID" 2>/dev/null
        rm -rf "$WS"/gp "$WS"/h-mk* "$WS"/n-mk*
}

# Layers: an untrusted project file's gitPush turns the gateway on (a refusal), and its allow
# entries are ignored and reported (each would admit a push).
t_gitpush_layers() {
        proj=$IT_TMP/gitpush-project
        mkdir -p "$proj/.cordon"
        cat > "$proj/.cordon/settings.json" <<JSON
{"sandbox": {"gitPush": {"default": "deny",
  "allow": [{"repo": "github.com/org/repo", "refs": ["refs/heads/*"]}]}}}
JSON
        run_in "$proj" "$CORDON" policy show --json
        if $PY -c 'import json, sys
p = json.load(open(sys.argv[1]))["policy"]
assert p["gitPush"] == {"default": "deny", "allow": []}, p.get("gitPush")' "$LAST_OUT" \
                2>"$IT_TMP/log/show" &&
                grep -q "sandbox.gitPush 'github.com/org/repo': adds an allowed push" "$LAST_ERR"
        then ok "gitpush: an untrusted project file turns the gateway on, its allow entry is ignored and reported"
        else not_ok "gitpush: an untrusted project file turns the gateway on, its allow entry is ignored and reported" \
                "$(cat "$IT_TMP/log/show" "$LAST_ERR")"; fi
        bad=$IT_TMP/gitpush-bad.json
        echo '{"gitPush": {"default": "deny", "allow": [{"repo": "github.com/o/r", "refs": ["refs/heads/*"], "force": false}]}}' > "$bad"
        run_in "$WS" "$CORDON" policy show --json --policy "$bad"
        case $LAST_STATUS:$(cat "$LAST_ERR") in
        125:*"gitPush.allow[0].force"*"cannot be enforced"*'"update": false'*)
                ok "gitpush: \"force\" is refused with the hint to \"update\": false" ;;
        *) not_ok "gitpush: \"force\" is refused with the hint to \"update\": false" \
                "$LAST_STATUS $(cat "$LAST_ERR")" ;;
        esac
}
