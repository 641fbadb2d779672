# tests/net/it/creds.sh: the credentials group of the network suite (sourced by suite.sh, which
# defines net, check_events and the servers). credentials (docs/policy.md, "Credentials"): a
# secret of cordon's file store, bound to tls.example.test; the sandbox sees a placeholder in
# GITHUB_TOKEN. The suite's HTTPS server logs every head /echo-head/ gets to $SRV/echo.log,
# outside the sandbox: the bound host must receive the secret, and nothing the sandbox sees
# (output, the echo, events, cordon's stderr) may hold it. A placeholder sent anywhere else is
# refused (403) with one network-request violation naming the credential.

creds_store() { # NAME VALUE: a secret in the file store of $FAKE_HOME (0700 dir, 0600 file)
        _d=$FAKE_HOME/.config/cordon/secrets/store
        mkdir -p "$_d" && chmod 700 "$FAKE_HOME/.config/cordon/secrets" "$_d" &&
                (umask 077 && printf '%s' "$2" > "$_d/$1")
}

# creds_echoed MARK: the head the server logged for /echo-head/MARK.
creds_echoed() {
        grep -F -- "/echo-head/$1" "$SRV/echo.log" 2>/dev/null
}

# creds_bearer LABEL CORDON-ARGS...: curl sends the GITHUB_TOKEN placeholder as a Bearer token;
# the server's log (outside the sandbox) must hold the secret, the echo the sandbox reads must
# not.
creds_bearer() {
        _label=$1
        shift
        net "$_label: curl's Bearer placeholder: the server receives the secret" 0 \
                "*Authorization: Bearer cordon-cred-*" - + "$@" -- sh -c \
                "curl -s --max-time 20 -H \"Authorization: Bearer \$GITHUB_TOKEN\" \
                https://tls.example.test:$T/echo-head/@M@"
        if creds_echoed "$MARK" | grep -qF "Authorization: Bearer $SECRET |"; then
                ok "$_label: ... the server's log has the secret, in the proxy's one Authorization"
        else
                not_ok "$_label: ... the server's log has the secret" "$(creds_echoed "$MARK")"
        fi
        case $OUT in
        *"$SECRET"*) not_ok "$_label: ... the echo into the sandbox holds no secret" "$OUT" ;;
        *) ok "$_label: ... the echo into the sandbox holds no secret" ;;
        esac
}

# curl inside `sh -c "..."`: the -w format quoted for that shell.
CREDS_CURL="curl -s -o /dev/null --max-time 20 -w '%{http_code}/%{http_connect}\\n'"

t_creds() {
        SECRET=ghp_$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
        NPM_SECRET=npm_$(od -An -tx1 -N12 /dev/urandom | tr -d ' \n')
        creds_store github-token "$SECRET" && creds_store npm-token "$NPM_SECRET" ||
                { not_ok "creds: the secrets stored"; return; }
        cat > "$IT_TMP/creds.json" <<JSON
{"tls": {"upstreamCa": ["$CERT"]},
 "credentials": [
   {"secret": "github-token", "env": "GITHUB_TOKEN", "hosts": ["tls.example.test"],
    "header": "Authorization", "format": "Bearer {}"},
   {"secret": "npm-token", "env": "NPM_TOKEN", "hosts": ["tls.example.test"]}]}
JSON
        c="--policy $IT_TMP/creds.json --allow-domain tls.example.test"
        c="$c --allow-domain 127.0.0.1:$T --allow-domain a.example.test $LOCAL $NAMES"
        net "creds: the sandbox's GITHUB_TOKEN is a placeholder" 0 "cordon-cred-*" - . $c -- \
                sh -c 'echo "$GITHUB_TOKEN"'
        case $OUT in
        cordon-cred-????????????????????????????????) ok "creds: ... cordon-cred- and 32 hex digits" ;;
        *) not_ok "creds: ... cordon-cred- and 32 hex digits" "$OUT" ;;
        esac
        creds_bearer "creds" $c
        # No header from the client at all: the proxy sets it.
        net "creds: without the client's header the proxy sets Authorization itself" 0 \
                "*Authorization: Bearer cordon-cred-*" - + $c -- \
                curl -s --max-time 20 "https://tls.example.test:$T/echo-head/@M@"
        creds_echoed "$MARK" | grep -qF "Authorization: Bearer $SECRET |" &&
                ok "creds: ... the server got the secret" ||
                not_ok "creds: ... the server got the secret" "$(creds_echoed "$MARK")"
        # Basic auth: the placeholder as the password, and in the query; python's urllib.
        net "creds: python urllib: the placeholder in a query and a header" 0 "200 *" - + $c -- \
                $PY -c "
import os, urllib.request
u = 'https://tls.example.test:$T/echo-head/@M@?t=' + os.environ['NPM_TOKEN']
r = urllib.request.urlopen(urllib.request.Request(u, headers={'X-Npm': os.environ['NPM_TOKEN']}))
print(r.status, r.read().decode().replace(chr(10), ' '))"
        if creds_echoed "$MARK" | grep -qF "?t=$NPM_SECRET HTTP/1.1 |" &&
                creds_echoed "$MARK" | grep -qF "X-Npm: $NPM_SECRET |"; then
                ok "creds: ... the server got the secret in both places"
        else
                not_ok "creds: ... the server got the secret in both places" "$(creds_echoed "$MARK")"
        fi
        basic=$(printf 'x:%s' "$NPM_SECRET" | base64 -w0)
        net "creds: curl -u x:placeholder: the Basic credential is decoded and re-encoded" 0 \
                "*" - + $c -- sh -c \
                "curl -s --max-time 20 -H 'X-Keep: 1' -u \"x:\$NPM_TOKEN\" \
                https://tls.example.test:$T/echo-head/@M@ >/dev/null; echo done"
        # The credential with a header owns Authorization on this host: the Basic one is
        # replaced by the proxy's Bearer.
        if creds_echoed "$MARK" | grep -qF "Authorization: Bearer $SECRET |" &&
                ! creds_echoed "$MARK" | grep -qF "$basic"; then
                ok "creds: ... Authorization is the proxy's own there (the header credential's)"
        else
                not_ok "creds: ... Authorization is the proxy's own there" "$(creds_echoed "$MARK")"
        fi
        net "creds: the placeholder to another host is refused (403) and reported" 0 "403/000" \
                "req:a.example.test:$P~credentials: the placeholder of GITHUB_TOKEN (secret github-token) was sent to a host it is not bound to*" \
                - $c -- sh -c "curl -s -o /dev/null --max-time 20 -w '%{http_code}/%{http_connect}\n' \
                -H \"X-Leak: \$GITHUB_TOKEN\" http://a.example.test:$P/hello/@M@"
        run_in "$WS" "$CORDON" explain --events "$EV" --status 0
        case $(cat "$LAST_OUT") in
        *"request GET a.example.test:$P/hello/$MARK (credential placeholder)"*"no policy change allows it: credentials: the placeholder of GITHUB_TOKEN"*)
                ok "creds: cordon explain says no policy change allows it, naming the credential" ;;
        *) not_ok "creds: cordon explain says no policy change allows it" "$(cat "$LAST_OUT")" ;;
        esac
        net "creds: ... in the query too" 0 "403/000" "req:a.example.test:$P~*GITHUB_TOKEN*" - \
                $c -- sh -c "$CREDS_CURL \"http://a.example.test:$P/hello/@M@?k=\$GITHUB_TOKEN\""
        net "creds: ... and hidden in Basic" 0 "403/000" "req:a.example.test:$P~*NPM_TOKEN*" - \
                $c -- sh -c "$CREDS_CURL -u \"x:\$NPM_TOKEN\" http://a.example.test:$P/hello/@M@"
        net "creds: ... over plain http to the bound host itself (no secret in the clear)" 0 \
                "403/000" "req:tls.example.test:$P~*GITHUB_TOKEN*was sent over plain http*" - \
                $c --allow-domain "127.0.0.1:$P" -- sh -c \
                "$CREDS_CURL -H \"X-T: \$GITHUB_TOKEN\" http://tls.example.test:$P/hello/@M@"
        # The name carries the placeholder: the target is not known before the run, so the
        # violation is looked for by its rule.
        net "creds: ... as a tunnel's name (CONNECT refused)" 56 "000/403" . - $c \
                --allow-domain '*.example.test' -- sh -c \
                "$CREDS_CURL \"https://\$GITHUB_TOKEN.example.test:$T/@M@\""
        if $PY "$HERE/netsrv.py" events "$EV" | grep -q "	credentials: the placeholder of GITHUB_TOKEN (secret github-token) is in the name of the destination"; then
                ok "creds: ... reported naming the credential"
        else
                not_ok "creds: ... reported naming the credential" "$(cat "$EV")"
        fi
        creds_landlock "$c"
        creds_explain
        creds_refusals
        creds_brokers
        rm -f "$FAKE_HOME/.config/cordon/secrets/store/github-token" \
                "$FAKE_HOME/.config/cordon/secrets/store/npm-token"
}

# The landlock backend (no namespaces): its loopback proxy, forked after the secrets are read,
# is the only process that has them (the command cannot read its memory: rules.sh tries that
# for the session CA's key, which lives in the same process); the command gets the same
# placeholders.
creds_landlock() {
        if ! "$CORDON" probe 2>/dev/null | grep -qE '^landlock +(full|partial) '; then
                skip "creds (landlock)" "no landlock backend here (cordon probe)"
                return 0
        fi
        l="--backend landlock $1"
        creds_bearer "creds (landlock)" $l
        net "creds (landlock): the placeholder to another host is refused (403) and reported" 0 \
                "403/000" "req:a.example.test:$P~credentials: the placeholder of GITHUB_TOKEN (secret github-token) was sent to a host it is not bound to*" \
                - $l -- sh -c "$CREDS_CURL -H \"X-Leak: \$GITHUB_TOKEN\" http://a.example.test:$P/hello/@M@"
}

# Nothing the sandbox or the user sees holds a secret: every run's output, stderr and events.
creds_explain() {
        run_in "$WS" "$CORDON" explain --events "$EV" --status 0
        if grep -rlF -e "$SECRET" -e "$NPM_SECRET" "$IT_TMP/log" > "$IT_TMP/creds-leaks"; then
                not_ok "creds: no output, stderr, event or explanation holds a secret" \
                        "$(cat "$IT_TMP/creds-leaks")"
        else
                ok "creds: no output, stderr, event or explanation holds a secret"
        fi
}

creds_refusals() {
        cat > "$IT_TMP/creds-missing.json" <<JSON
{"credentials": [{"secret": "no-such-secret", "env": "T", "hosts": ["tls.example.test"]}]}
JSON
        run_in "$WS" "$CORDON" run --policy "$IT_TMP/creds-missing.json" -- true
        if [ "$LAST_STATUS" -eq 125 ] && [ "$(grep -c . "$LAST_ERR")" -eq 1 ] &&
                grep -q "^cordon: fatal: .*hint: cordon secret set no-such-secret" "$LAST_ERR"; then
                ok "creds: a secret not in the store refuses the run (125, one fatal line)"
        else
                not_ok "creds: a secret not in the store refuses the run" \
                        "status $LAST_STATUS: $(cat "$LAST_ERR")"
        fi
        # An untrusted project file's credential is ignored and reported.
        proj=$IT_TMP/creds-project
        mkdir -p "$proj/.cordon"
        cat > "$proj/.cordon/settings.json" <<JSON
{"sandbox": {"credentials": [{"secret": "github-token", "env": "GITHUB_TOKEN",
                              "hosts": ["evil.example"]}]}}
JSON
        run_in "$proj" "$CORDON" policy show --json
        if $PY -c 'import json, sys
assert json.load(open(sys.argv[1]))["policy"]["credentials"] == []' "$LAST_OUT" &&
                grep -q "sandbox.credentials 'GITHUB_TOKEN': sends a secret to hosts" "$LAST_ERR"
        then ok "creds: an untrusted project file's credential is ignored and reported"
        else not_ok "creds: an untrusted project file's credential is ignored and reported" \
                "$(cat "$LAST_OUT" "$LAST_ERR" | head -20)"; fi
}

# wait_for FILE PATTERN: until a line of FILE matches (at most 20 s: a bound, not a pace).
wait_for() {
        for _ in $(seq 200); do
                grep -q -- "$2" "$1" 2>/dev/null && return 0
                sleep 0.1
        done
        return 1
}

# Credential brokers (docs/settings.md, "credentialBrokers"): a test broker that records its
# calls in $SRV/broker.log, outside the sandbox; managed settings name it.
creds_brokers() {
        bk=$IT_TMP/broker.sh
        cat > "$bk" <<SH
#!/bin/sh
case \$1 in
issue) echo "issue \$2 env=\$CORDON_RUN_ID" >> "$SRV/broker.log"; echo "brk_\$2" ;;
revoke) echo "revoke \$2 stdin=\$(cat)" >> "$SRV/broker.log" ;;
hang) exec sleep 301 ;;
*) exit 3 ;;
esac
SH
        chmod 755 "$bk"
        : > "$SRV/broker.log"
        cat > "$IT_TMP/managed-brokers.json" <<JSON
{"credentialBrokers": {
   "forge": {"issue": ["$bk", "issue"], "revoke": ["$bk", "revoke"], "timeout": "10s"},
   "broken": {"issue": ["$bk", "fail"], "revoke": ["$bk", "revoke"]},
   "stuck": {"issue": ["$bk", "hang"], "revoke": ["$bk", "revoke"], "timeout": "1s"}}}
JSON
        chmod 644 "$IT_TMP/managed-brokers.json"
        cat > "$IT_TMP/creds-broker.json" <<JSON
{"tls": {"upstreamCa": ["$CERT"]},
 "credentials": [{"broker": "forge", "env": "FORGE_TOKEN", "hosts": ["tls.example.test"],
                  "header": "X-Forge"}]}
JSON
        sed 's/"forge"/"broken"/' "$IT_TMP/creds-broker.json" > "$IT_TMP/creds-broken.json"
        sed 's/"forge"/"stuck"/' "$IT_TMP/creds-broker.json" > "$IT_TMP/creds-stuck.json"
        b="--allow-domain tls.example.test --allow-domain 127.0.0.1:$T $NAMES"
        EXTRA_ENV="CORDON_MANAGED_SETTINGS=$IT_TMP/managed-brokers.json"
        net "broker: the issued credential reaches the bound host, the sandbox sees a placeholder" \
                0 "cordon-cred-* *X-Forge: cordon-cred-*" - + --policy "$IT_TMP/creds-broker.json" \
                $b -- sh -c "echo \$FORGE_TOKEN; curl -s --max-time 20 \
                https://tls.example.test:$T/echo-head/@M@"
        id=$(sed -n 's/^issue \([^ ]*\) env=.*/\1/p' "$SRV/broker.log" | head -n 1)
        if [ -n "$id" ] && grep -qx "issue $id env=$id" "$SRV/broker.log" &&
                grep -qx "revoke $id stdin=brk_$id" "$SRV/broker.log" &&
                creds_echoed "$MARK" | grep -qF "X-Forge: brk_$id |"; then
                ok "broker: issued with the run's id, injected, revoked with it at the end"
        else
                not_ok "broker: issued with the run's id, injected, revoked with it at the end" \
                        "$(cat "$SRV/broker.log")" "$(creds_echoed "$MARK")"
        fi
        if grep -rlF "brk_$id" "$IT_TMP/log" >/dev/null; then
                not_ok "broker: the credential is in no output or event"
        else
                ok "broker: the credential is in no output or event"
        fi
        net "broker: a broker that fails refuses the run (125)" 125 "" . . \
                --policy "$IT_TMP/creds-broken.json" $b -- true
        grep -q "credential broker 'broken': the issue command .* failed: it exited non-zero" \
                "$LAST_ERR" && ok "broker: ... saying which and why" ||
                not_ok "broker: ... saying which and why" "$(cat "$LAST_ERR")"
        net "broker: a broker past its timeout is killed and refuses the run (125)" 125 "" . . \
                --policy "$IT_TMP/creds-stuck.json" $b -- true
        if grep -q "credential broker 'stuck': .*did not finish within the broker's timeout" \
                "$LAST_ERR" && ! running "sleep 301"; then
                ok "broker: ... saying so, nothing of it left running"
        else
                not_ok "broker: ... saying so, nothing of it left running" "$(cat "$LAST_ERR")"
        fi
        # kill -9 of cordon: the reaper still revokes, once the run is gone.
        : > "$SRV/broker.log"
        (cd "$WS" && exec env -i $(base_env) "$EXTRA_ENV" "$CORDON" run \
                --policy "$IT_TMP/creds-broker.json" $b -- sleep 127) \
                > "$IT_TMP/log/broker-kill.out" 2> "$IT_TMP/log/broker-kill.err" &
        cpid=$!
        if wait_for "$SRV/broker.log" "^issue " && wait_for_sleep; then
                kill -9 "$cpid"
                wait "$cpid" 2>/dev/null
                id=$(sed -n 's/^issue \([^ ]*\) env=.*/\1/p' "$SRV/broker.log" | head -n 1)
                if wait_for "$SRV/broker.log" "^revoke $id stdin=brk_$id\$"; then
                        ok "broker: kill -9 of cordon: the credential is revoked all the same"
                else
                        not_ok "broker: kill -9 of cordon: the credential is revoked all the same" \
                                "$(cat "$SRV/broker.log")"
                fi
        else
                kill -9 "$cpid" 2>/dev/null
                not_ok "broker: kill -9 of cordon: the run started" "$(cat "$IT_TMP/log/broker-kill.err")"
        fi
        creds_session
        EXTRA_ENV=
}

# A cordond session: issued at its launch (with the session's id), revoked at its destroy.
creds_session() {
        d=$(dirname "$CORDON")/cordond
        [ -x "$d" ] || { skip "broker: cordond sessions" "no cordond beside $CORDON"; return; }
        mkdir -m 700 "$IT_TMP/d"
        : > "$SRV/broker.log"
        env -i $(base_env) "$EXTRA_ENV" "$d" --socket "$IT_TMP/d/s" > "$IT_TMP/log/cordond.err" 2>&1 &
        dpid=$!
        for _ in $(seq 200); do [ -S "$IT_TMP/d/s" ] && break; sleep 0.1; done
        run_in "$WS" "$CORDON" session launch --socket "$IT_TMP/d/s" \
                --policy "$IT_TMP/creds-broker.json" $b
        sid=$(cat "$LAST_OUT")
        if grep -qx "issue $sid env=$sid" "$SRV/broker.log" &&
                ! grep -q "^revoke" "$SRV/broker.log"; then
                ok "broker: a cordond session's credential is issued at its launch, for its id"
        else
                not_ok "broker: a cordond session's credential is issued at its launch" \
                        "sid '$sid': $(cat "$SRV/broker.log" "$LAST_ERR")"
        fi
        run_in "$WS" "$CORDON" session destroy --socket "$IT_TMP/d/s" "$sid"
        if wait_for "$SRV/broker.log" "^revoke $sid stdin=brk_$sid\$"; then
                ok "broker: ... and revoked at its destroy"
        else
                not_ok "broker: ... and revoked at its destroy" "$(cat "$SRV/broker.log")"
        fi
        kill "$dpid" 2>/dev/null
        wait "$dpid" 2>/dev/null
}

# running "CMD ARGS": a process whose command line is exactly that (from /proc: no procps).
running() {
        for _p in /proc/[0-9]*; do
                [ "$(tr '\0' ' ' 2>/dev/null < "$_p/cmdline")" = "$1 " ] && return 0
        done
        return 1
}

# The kill -9 run's command is running (its sleep 127).
wait_for_sleep() {
        for _ in $(seq 200); do
                running "sleep 127" && return 0
                sleep 0.1
        done
        return 1
}
