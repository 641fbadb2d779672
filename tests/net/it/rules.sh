# tests/net/it/rules.sh: the request-rules group of the network suite (sourced by suite.sh,
# which defines net, check_events and the servers). egressRules (docs/policy.md, "Request
# rules") over plain http://: every request judged, keep-alive's second one too; refusals are
# 403s naming the rule, with one network-request violation carrying the method and the path,
# and never reach the server. Over https:// (CONNECT, SOCKS5, redirected) a ruled host's TLS is
# terminated with the session CA, which the sandbox's clients trust through the merged bundle,
# and its requests are judged the same (t_rules_tls: curl, python, pip, Node, npm, git, Java);
# tls.passthrough keeps a host spliced.

# req_event FILE: the network-request violations of an events file, one per line.
req_event() {
        $PY "$HERE/netsrv.py" events "$1" network-request
}

t_rules() {
        cat > "$IT_TMP/rules.json" <<JSON
{"egressRules": [
  {"host": "a.example.test", "methods": ["GET", "HEAD"], "paths": ["/hello/*"],
   "action": "allow", "reason": "read-only access"},
  {"host": "a.example.test", "paths": ["/hello/secret*"], "action": "deny",
   "reason": "no secrets"},
  {"host": "tls.example.test", "methods": ["GET"], "action": "allow"}]}
JSON
        r="--policy $IT_TMP/rules.json --allow-domain a.example.test --allow-domain b.example.test"
        r="$r --allow-domain tls.example.test --allow-domain 127.0.0.1:$T $LOCAL $NAMES"
        net "rules: a GET an allow rule covers reaches the server" 0 "200/000" - + \
                $r -- $CURL "http://a.example.test:$P/hello/@M@"
        net "rules: a POST no rule allows is refused (403), never reaching the server" 0 \
                "403/000" "req:a.example.test:$P~request rules: no egressRules entry allows POST*" \
                - $r -- $CURL -d x "http://a.example.test:$P/hello/@M@"
        if req_event "$EV" | grep -q "	POST	/hello/$MARK\$"; then
                ok "rules: ... its network-request violation carries the method and the path"
        else
                not_ok "rules: ... its network-request violation carries the method and the path" \
                        "$(cat "$EV")"
        fi
        run_in "$WS" "$CORDON" explain --events "$EV" --status 0
        case $(cat "$LAST_OUT") in
        *'request POST a.example.test:'"$P/hello/$MARK"*'"host": "a.example.test", "methods": ["POST"], "paths": ["/hello/'"$MARK"'"], "action": "allow"'*)
                ok "rules: cordon explain names the request and the allow rule that would let it" ;;
        *) not_ok "rules: cordon explain names the request and the allow rule that would let it" \
                "$(cat "$LAST_OUT")" ;;
        esac
        net "rules: a deny rule wins over the allow rule, with its reason" 0 \
                "X-Cordon-Reason: no secrets" \
                "req:a.example.test:$P~egressRules\\[1\\]: deny \\* a.example.test /hello/secret\\*" \
                - $r -- sh -c "curl -s -D - -o /dev/null http://a.example.test:$P/hello/secret-@M@ |
                grep -i '^x-cordon-reason' | tr -d '\r'"
        run_in "$WS" "$CORDON" explain --events "$EV" --status 0
        case $(cat "$LAST_OUT") in
        *'remove or narrow egressRules[1]'*'no secrets'*)
                ok "rules: cordon explain names the deny rule and its reason" ;;
        *) not_ok "rules: cordon explain names the deny rule and its reason" "$(cat "$LAST_OUT")" ;;
        esac
        net "rules: a path outside every allow glob is refused" 0 "403/000" \
                "req:a.example.test:$P~request rules: no egressRules entry*" - \
                $r -- $CURL "http://a.example.test:$P/other/@M@"
        net "rules: a dot segment cannot climb out of an allowed glob" 0 "403/000" \
                "req:a.example.test:$P~request rules: the path has a '.' or '..' segment" - \
                $r -- $CURL --path-as-is "http://a.example.test:$P/hello/../other/@M@"
        net "rules: keep-alive: the second request on the connection is judged too" 0 \
                "200/000 403/000" "req:a.example.test:$P" "+-a --b" $r -- $CURL -v $O2 \
                "http://a.example.test:$P/hello/@M@-a" "http://a.example.test:$P/other/@M@-b"
        if grep -q 'Re-using existing connection' "$LAST_ERR"; then
                ok "rules: keep-alive: curl sent both requests on one proxy connection"
        else
                not_ok "rules: keep-alive: curl sent both requests on one proxy connection"
        fi
        net "rules: a host without rules is not affected" 0 "200/000" - + \
                $r -- $CURL "http://b.example.test:$P/hello/@M@"
        net "rules: python urllib's refused POST sees the 403" 0 \
                "error 403 request rules: no egressRules entry allows POST*" \
                "req:a.example.test:$P" - $r -- $CLI urllib-post "http://a.example.test:$P/hello/@M@"
        # A ruled host's tunnel is terminated (docs/design/network.md, "TLS inspection"): its
        # server's certificate is not in the system store, and no upstreamCa trusts it, so the
        # proxy refuses the request with a 502 naming why rather than trust it silently.
        net "tls: an upstream certificate nothing trusts is refused (502), never accepted" 0 \
                "502/200" "tls.example.test:$T~the server's TLS certificate for tls.example.test is not trusted*" - \
                $r -- $CURL "https://tls.example.test:$T/hello/@M@"
        t_rules_tls
        sed 's/^{/{"tls": {"passthrough": ["tls.example.test"]},/' "$IT_TMP/rules.json" \
                > "$IT_TMP/rules-pass.json"
        p="--policy $IT_TMP/rules-pass.json --allow-domain tls.example.test"
        p="$p --allow-domain 127.0.0.1:$T $NAMES"
        net "rules: tls.passthrough lets a ruled host's tunnel through, spliced" 0 "200/200" - + \
                $p -- $CURL --cacert "$CERT" "https://tls.example.test:$T/hello/@M@"
        # policy show prints both keys back.
        run_in "$WS" "$CORDON" policy show --json --policy "$IT_TMP/rules-pass.json"
        if $PY -c 'import json, sys
p = json.load(open(sys.argv[1]))["policy"]
r = p["egressRules"]
assert r[0]["methods"] == ["GET", "HEAD"] and r[1]["action"] == "deny", r
assert p["tls"]["passthrough"] == ["tls.example.test"], p["tls"]' "$LAST_OUT" 2>"$IT_TMP/log/show"
        then ok "rules: policy show prints egressRules and tls"
        else not_ok "rules: policy show prints egressRules and tls" "$(cat "$IT_TMP/log/show")"; fi
        # An untrusted project file may add deny rules, never allow rules or passthrough.
        proj=$IT_TMP/rules-project
        mkdir -p "$proj/.cordon"
        cat > "$proj/.cordon/settings.json" <<JSON
{"sandbox": {"egressRules": [{"host": "x.example", "methods": ["POST"], "action": "deny"},
                             {"host": "x.example", "action": "allow"}],
             "tls": {"passthrough": ["x.example"]}}}
JSON
        run_in "$proj" "$CORDON" policy show --json
        if $PY -c 'import json, sys
p = json.load(open(sys.argv[1]))["policy"]
assert p["egressRules"] == [{"host": "x.example", "action": "deny", "methods": ["POST"]}], p
assert p["tls"]["passthrough"] == [], p["tls"]' "$LAST_OUT" 2>"$IT_TMP/log/show" &&
                grep -q "sandbox.egressRules 'x.example': adds an allowed request" "$LAST_ERR" &&
                grep -q "sandbox.tls.passthrough 'x.example'" "$LAST_ERR"
        then ok "rules: an untrusted project file keeps its deny rules, its allow rule and passthrough are ignored"
        else not_ok "rules: an untrusted project file keeps its deny rules, its allow rule and passthrough are ignored" \
                "$(cat "$IT_TMP/log/show" "$LAST_ERR")"; fi
        # git over http:// (the server is dumb HTTP: info/refs, then objects, all GET): a
        # read-only rule lets a clone through; a rule for another repository refuses its first
        # request, GET /repo.git/info/refs.
        cat > "$IT_TMP/rules-git.json" <<JSON
{"egressRules": [{"host": "git.example.test", "methods": ["GET", "HEAD"],
                  "paths": ["/repo.git/*"], "action": "allow", "reason": "clone only"}]}
JSON
        sed 's|/repo.git/\*|/other.git/*|' "$IT_TMP/rules-git.json" > "$IT_TMP/rules-git2.json"
        g="--allow-domain git.example.test $LOCAL $NAMES"
        net "rules: git clone over http:// with a read-only rule for the repository" 0 \
                "cordon-net-it repository" - . --policy "$IT_TMP/rules-git.json" $g -- sh -c \
                "git clone -q http://git.example.test:$P/repo.git c-@M@ && cat c-@M@/README"
        net "rules: git clone of a repository no rule allows: info/refs refused" 128 "" \
                "req:git.example.test:$P~request rules: no egressRules entry allows GET*" . \
                --policy "$IT_TMP/rules-git2.json" $g -- \
                git clone -q "http://git.example.test:$P/repo.git" "c-@M@"
        if req_event "$EV" | grep -q "	GET	/repo.git/info/refs?service=git-upload-pack\$"; then
                ok "rules: ... the refused request is git's GET of info/refs"
        else
                not_ok "rules: ... the refused request is git's GET of info/refs" "$(cat "$EV")"
        fi
        rm -rf "$WS"/c-mk* "$WS"/p-mk*
}

# TLS inspection: the suite's HTTPS server, trusted for upstreams by tls.upstreamCa; the clients
# run without --cacert or -k, trusting the session CA through the variables cordon sets.
t_rules_tls() {
        sed "s|^{|{\"tls\": {\"upstreamCa\": [\"$CERT\"]},|" "$IT_TMP/rules.json" \
                > "$IT_TMP/rules-tls.json"
        s="--policy $IT_TMP/rules-tls.json --allow-domain tls.example.test"
        s="$s --allow-domain 127.0.0.1:$T $NAMES"
        net "tls: CONNECT: an allowed GET, terminated, reaches the server" 0 "200/200" - + \
                $s -- $CURL "https://tls.example.test:$T/hello/@M@"
        net "tls: ... a POST no rule allows is refused (403) inside the TLS stream" 0 "403/200" \
                "req:tls.example.test:$T~request rules: no egressRules entry allows POST*" - \
                $s -- $CURL -d x "https://tls.example.test:$T/echo/@M@"
        if req_event "$EV" | grep -q "	POST	/echo/$MARK\$"; then
                ok "tls: ... its network-request violation carries the method and the path"
        else
                not_ok "tls: ... its network-request violation carries the method and the path" \
                        "$(cat "$EV")"
        fi
        # Python's http.client: one CONNECT tunnel, a GET then a POST on it (the second request
        # of a terminated connection is judged too; `True`: the same socket carried both).
        net "tls: keep-alive: GET allowed, then POST refused on the same connection" 0 \
                "200 403 True" "req:tls.example.test:$T" "+-a --b" $s -- $PY -c "
import http.client, ssl
c = http.client.HTTPSConnection('127.0.0.1', 3128, context=ssl.create_default_context())
c.set_tunnel('tls.example.test', $T)
c.request('GET', '/hello/@M@-a'); r = c.getresponse(); r.read(); first = c.sock
c.request('POST', '/echo/@M@-b', body='x'); same = c.sock is first
r2 = c.getresponse(); r2.read()
print(r.status, r2.status, same)"
        net "tls: SOCKS5: terminated and judged too" 0 "200/000" - + $s -- \
                $CURL -x socks5h://127.0.0.1:1080 "https://tls.example.test:$T/hello/@M@"
        net "tls: redirected (no proxy variables): terminated and judged too" 0 "403/000" \
                "req:tls.example.test:$T~request rules: no egressRules entry allows POST*" - \
                $s -- $CURL --noproxy '*' -d x "https://tls.example.test:$T/echo/@M@"
        net "tls: python urllib trusts the session CA (SSL_CERT_FILE)" 0 "status 200" - + \
                $s -- $CLI urllib "https://tls.example.test:$T/hello/@M@"
        net "tls: python urllib's refused POST sees the 403" 0 \
                "error 403 request rules: no egressRules entry allows POST*" \
                "req:tls.example.test:$T" - $s -- $CLI urllib-post "https://tls.example.test:$T/echo/@M@"
        if command -v node >/dev/null; then
                net "tls: Node's fetch, redirected, trusts the session CA (NODE_EXTRA_CA_CERTS)" 0 \
                        "200 hello*" - + $s -- node -e \
                        "fetch('https://tls.example.test:$T/hello/@M@').then(async r =>
                        console.log(r.status, (await r.text()).trim()))"
        else
                skip "tls: Node's fetch" "node is missing"
        fi
        t_rules_tls_pip
        t_rules_tls_npm
        net "tls: a Host header naming another host is refused (no fronting inside the stream)" 0 \
                "403/200" "tls.example.test:$T~the Host header names another host*" - $s -- \
                $CURL -H "Host: b.example.test" \
                "https://tls.example.test:$T/hello/@M@"
        # git over https:// against the dumb-HTTP repository: a read-only rule lets a clone
        # through (GIT_SSL_CAINFO); a push asks for something no rule allows and is refused.
        cat > "$IT_TMP/rules-git-tls.json" <<JSON
{"tls": {"upstreamCa": ["$CERT"]},
 "egressRules": [{"host": "tls.example.test", "methods": ["GET", "HEAD"],
                  "paths": ["/repo.git/*"], "action": "allow"}]}
JSON
        g="--policy $IT_TMP/rules-git-tls.json --allow-domain tls.example.test"
        g="$g --allow-domain 127.0.0.1:$T $NAMES"
        net "tls: git clone over https:// with a read-only rule" 0 "cordon-net-it repository" - . \
                $g -- sh -c "git clone -q https://tls.example.test:$T/repo.git c-@M@ && cat c-@M@/README"
        net "tls: git's push request (POST git-receive-pack) is refused by the read-only rule" 0 \
                "403/200" "req:tls.example.test:$T~request rules: no egressRules entry allows POST*" \
                - $g -- $CURL -H "Content-Type: application/x-git-receive-pack-request" \
                --data-binary "0000" "https://tls.example.test:$T/repo.git/git-receive-pack"
        if req_event "$EV" | grep -q "	POST	/repo.git/git-receive-pack\$"; then
                ok "tls: ... named in its network-request violation"
        else
                not_ok "tls: ... named in its network-request violation" "$(cat "$EV")"
        fi
        # git push itself (the server is dumb HTTP, so git falls back to WebDAV after its GET of
        # info/refs): whatever it asks next is not a GET, and is refused.
        net "tls: git push over https:// fails on the read-only rule" "!0" "" . . $g -- sh -c \
                "git clone -q https://tls.example.test:$T/repo.git p-@M@ && cd p-@M@ &&
                git -c user.email=t@t -c user.name=t commit -q --allow-empty -m x &&
                git push -q origin HEAD:refs/heads/pushed-@M@"
        if req_event "$EV" | grep -qv "	GET	"; then
                ok "tls: ... refused at a request that is not a GET"
        else
                not_ok "tls: ... refused at a request that is not a GET" "$(cat "$EV")"
        fi
        # The session CA's key stays in the proxy: the sandbox sees the bundle (the system's
        # certificates and one more), no private key in it, and no proxy process.
        sys_n=$(grep -c 'BEGIN CERTIFICATE' /etc/ssl/certs/ca-certificates.crt)
        sys_sum=$(sha256sum /etc/ssl/certs/ca-certificates.crt)
        net "tls: the sandbox's bundle is the system's plus the session CA, no key" 0 \
                "$((sys_n + 1)) 0 0 /etc/ssl/certs/ca-certificates.crt" - . $s -- sh -c \
                'grep -c "BEGIN CERTIFICATE" /etc/ssl/certs/ca-certificates.crt
                grep -c "PRIVATE KEY" /etc/ssl/certs/ca-certificates.crt
                grep -l cordon-proxy /proc/[0-9]*/comm 2>/dev/null | wc -l
                echo "$SSL_CERT_FILE"'
        net "tls: ... read-only there" "!0" "" - . $s -- sh -c \
                ': > /etc/ssl/certs/ca-certificates.crt'
        if [ "$(sha256sum /etc/ssl/certs/ca-certificates.crt)" = "$sys_sum" ] &&
                ! grep -q 'ca-certificates.crt' /proc/self/mountinfo; then
                ok "tls: nothing left behind: the host's bundle is unchanged, no mount remains"
        else
                not_ok "tls: nothing left behind: the host's bundle is unchanged, no mount remains"
        fi
        net "tls: without request rules no variable is set" 0 "unset" - . \
                --allow-domain tls.example.test -- sh -c 'echo "${CURL_CA_BUNDLE:-unset}"'
        t_rules_tls_java "$s"
        t_rules_tls_landlock "$s"
        rm -rf "$WS"/c-mk* "$WS"/p-mk*
}

# served_n PATH: how many requests for PATH the HTTPS server has logged.
served_n() {
        grep -c "^port=$T method=GET path=$1 " "$SRV/access.log" || true
}

# pip from an HTTPS index on a ruled host (netsrv.py's pip index, served on the TLS port too):
# no --cert, no --trusted-host; pip trusts the session CA through what cordon sets. A rule for
# the index pages only lets pip find the wheel and refuses its download. Which of cordon's
# settings pip reads: its vendored requests lets REQUESTS_CA_BUNDLE (or CURL_CA_BUNDLE) win over
# PIP_CERT, and Debian's pip falls back on /etc/ssl/certs/ca-certificates.crt, the merged bundle
# here; so PIP_CERT alone is tried on the landlock backend, where that path is the system's.
t_rules_tls_pip() {
        cat > "$IT_TMP/rules-pip.json" <<JSON
{"tls": {"upstreamCa": ["$CERT"]},
 "egressRules": [{"host": "tls.example.test", "methods": ["GET"],
                  "paths": ["/simple/*", "/packages/*"], "action": "allow"}]}
JSON
        sed 's|, "/packages/\*"||' "$IT_TMP/rules-pip.json" > "$IT_TMP/rules-pip2.json"
        whl=/packages/tinypkg-1.0-py3-none-any.whl
        pip="$PY -m pip download --no-cache-dir --disable-pip-version-check --no-deps"
        pip="$pip --retries 0 --timeout 20 --index-url https://tls.example.test:$T/simple"
        k="--allow-domain tls.example.test --allow-domain 127.0.0.1:$T $NAMES"
        k="$k --env-set PIP_CONFIG_FILE=/dev/null"
        before=$(served_n "$whl")
        net "tls: pip downloads from an HTTPS index, terminated, trusting the session CA" 0 \
                "tinypkg-1.0-py3-none-any.whl" - . --policy "$IT_TMP/rules-pip.json" $k -- \
                sh -c "$pip -q -d dl-@M@ tinypkg && ls dl-@M@"
        if [ "$(served_n "$whl")" -gt "$before" ]; then
                ok "tls: ... the wheel came from the server"
        else
                not_ok "tls: ... the wheel came from the server" "no GET $whl in the access log"
        fi
        before=$(served_n "$whl")
        net "tls: pip's wheel download no rule allows is refused: pip fails" "!0" "" \
                "req:tls.example.test:$T~request rules: no egressRules entry allows GET*" . \
                --policy "$IT_TMP/rules-pip2.json" $k -- $pip -q -d "dl-@M@" tinypkg
        if req_event "$EV" | grep -q "	GET	$whl\$" &&
                [ "$(served_n "$whl")" -eq "$before" ]; then
                ok "tls: ... its violation names the wheel's path, which never reached the server"
        else
                not_ok "tls: ... its violation names the wheel's path, which never reached the server" \
                        "$(cat "$EV")"
        fi
        if "$CORDON" probe 2>/dev/null | grep -qE '^landlock +(full|partial) '; then
                l="--backend landlock --policy $IT_TMP/rules-pip.json $k"
                net "tls (landlock): pip trusts the session CA through PIP_CERT alone" 0 \
                        "tinypkg-1.0-py3-none-any.whl" - . $l -- sh -c \
                        "unset REQUESTS_CA_BUNDLE CURL_CA_BUNDLE SSL_CERT_FILE
                        $pip -q -d dl-@M@ tinypkg && ls dl-@M@"
                net "tls (landlock): ... and without it pip fails verification" "!0" \
                        "*CERTIFICATE_VERIFY_FAILED*" - . $l -- sh -c \
                        "unset PIP_CERT REQUESTS_CA_BUNDLE CURL_CA_BUNDLE SSL_CERT_FILE
                        $pip -d dl-@M@ tinypkg 2>&1"
        else
                skip "tls (landlock): pip and PIP_CERT" "no landlock backend here (cordon probe)"
        fi
        rm -rf "$WS"/dl-mk*
}

# npm from a registry on a ruled host (netsrv.py's npm registry: a package document and its
# tarball, with the integrity npm checks): no cafile, no strict-ssl=false; npm trusts the session
# CA through NODE_EXTRA_CA_CERTS. Its cache is in the workspace, no user config is read, and
# nothing asks for anything but the package (no audit, no update check, no retries: a refusal is
# one request). A rule for the document only lets npm resolve the package and refuses its
# tarball.
t_rules_tls_npm() {
        if ! command -v npm >/dev/null; then
                skip "tls: npm" "npm is missing (scripts/install-deps.sh)"
                return 0
        fi
        cat > "$IT_TMP/rules-npm.json" <<JSON
{"tls": {"upstreamCa": ["$CERT"]},
 "egressRules": [{"host": "tls.example.test", "methods": ["GET"], "paths": ["/npm/*"],
                  "action": "allow"}]}
JSON
        sed 's|"/npm/\*"|"/npm/tinynpm"|' "$IT_TMP/rules-npm.json" > "$IT_TMP/rules-npm2.json"
        tgz=/npm/tarballs/tinynpm-1.0.0.tgz
        npm="npm --registry https://tls.example.test:$T/npm/ --userconfig /dev/null"
        npm="$npm --no-update-notifier --no-audit --no-fund --fetch-retries 0"
        k="--allow-domain tls.example.test --allow-domain 127.0.0.1:$T $NAMES"
        before=$(served_n "$tgz")
        net "tls: npm installs from a registry, terminated, trusting NODE_EXTRA_CA_CERTS" 0 \
                "module.exports = 'cordon-net-it';" - . --policy "$IT_TMP/rules-npm.json" $k -- \
                sh -c "$npm --cache \"\$PWD/npmc-@M@\" install --no-save --prefix np-@M@ tinynpm \
                >/dev/null && cat np-@M@/node_modules/tinynpm/index.js"
        if [ "$(served_n "$tgz")" -gt "$before" ]; then
                ok "tls: ... the tarball came from the server"
        else
                not_ok "tls: ... the tarball came from the server" "no GET $tgz in the access log"
        fi
        # Node trusts its own roots, not the system's bundle: the variable is what does it.
        net "tls: ... without NODE_EXTRA_CA_CERTS npm fails verification" "!0" \
                "*SELF_SIGNED_CERT_IN_CHAIN*" - . --policy "$IT_TMP/rules-npm.json" $k -- sh -c \
                "unset NODE_EXTRA_CA_CERTS
                $npm --cache \"\$PWD/npmc-@M@\" install --no-save --prefix np-@M@ tinynpm 2>&1"
        before=$(served_n "$tgz")
        net "tls: npm's tarball download no rule allows is refused: npm fails" "!0" "" \
                "req:tls.example.test:$T~request rules: no egressRules entry allows GET*" . \
                --policy "$IT_TMP/rules-npm2.json" $k -- sh -c \
                "$npm --cache \"\$PWD/npmc-@M@\" install --no-save --prefix np-@M@ tinynpm"
        if req_event "$EV" | grep -q "	GET	$tgz\$" &&
                [ "$(served_n "$tgz")" -eq "$before" ]; then
                ok "tls: ... its violation names the tarball's path, which never reached the server"
        else
                not_ok "tls: ... its violation names the tarball's path, which never reached the server" \
                        "$(cat "$EV")"
        fi
        rm -rf "$WS"/np-mk* "$WS"/npmc-mk*
}

# The landlock backend (no mount namespace): the bundle is a file of a per-run directory under
# /tmp that the command can read and not change, named by the clients' variables; the session
# CA's key stays in the proxy process, whose memory the command cannot read; the directory is
# gone after the run, and after kill -9 of cordon.
t_rules_tls_landlock() {
        if ! "$CORDON" probe 2>/dev/null | grep -qE '^landlock +(full|partial) '; then
                skip "tls (landlock)" "no landlock backend here (cordon probe)"
                return 0
        fi
        l="--backend landlock $1"
        net "tls (landlock): curl's allowed GET, terminated, reaches the server" 0 "200/200" - + \
                $l -- $CURL "https://tls.example.test:$T/hello/@M@"
        net "tls (landlock): ... its POST no rule allows is refused (403) inside the TLS stream" 0 \
                "403/200" "req:tls.example.test:$T~request rules: no egressRules entry allows POST*" - \
                $l -- $CURL -d x "https://tls.example.test:$T/echo/@M@"
        net "tls (landlock): python urllib trusts the session CA (SSL_CERT_FILE)" 0 "status 200" - + \
                $l -- $CLI urllib "https://tls.example.test:$T/hello/@M@"
        net "tls (landlock): ... its refused POST sees the 403" 0 \
                "error 403 request rules: no egressRules entry allows POST*" \
                "req:tls.example.test:$T" - $l -- $CLI urllib-post "https://tls.example.test:$T/echo/@M@"
        # Fail closed: a client that ignores the variables trusts the system store only.
        net "tls (landlock): a client that ignores the variables fails verification" 60 "000/200" \
                - - $l -- $CURL --cacert /etc/ssl/certs/ca-certificates.crt \
                "https://tls.example.test:$T/hello/@M@"
        # A JVM reads no proxy variable and resolves no name here: it reaches nothing, judged or
        # not (no Java truststore is made on this backend).
        if command -v java >/dev/null; then
                net "tls (landlock): a JVM reaches no host (fail closed)" 0 "error: *Exception" \
                        - - $l -- \
                        java "$HERE/JavaHttpsClient.java" GET "https://tls.example.test:$T/hello/@M@"
        else
                skip "tls (landlock): a JVM reaches no host" "java missing (scripts/install-deps.sh)"
        fi
        sys_n=$(grep -c 'BEGIN CERTIFICATE' /etc/ssl/certs/ca-certificates.crt)
        net "tls (landlock): every variable names the run's bundle: the system's plus the CA, no key" \
                0 "/tmp/cordon-ca-* ca-certificates.crt 7 $((sys_n + 1)) 0" - . $l -- sh -c '
                echo "$SSL_CERT_FILE"
                ls "${SSL_CERT_FILE%/*}"
                for v in "$SSL_CERT_FILE" "$REQUESTS_CA_BUNDLE" "$NODE_EXTRA_CA_CERTS" \
                        "$GIT_SSL_CAINFO" "$CURL_CA_BUNDLE" "$PIP_CERT" "$CARGO_HTTP_CAINFO"; do
                        [ "$v" = "$SSL_CERT_FILE" ] && echo same; done | grep -c same
                grep -c "BEGIN CERTIFICATE" "$SSL_CERT_FILE"
                grep -c "PRIVATE KEY" "$SSL_CERT_FILE"; true'
        # Replacing the bundle (or planting a file next to it) would let a later client of the
        # run trust a CA of the command's: every way is refused, and it is unchanged.
        net "tls (landlock): the command cannot write, truncate, remove, replace or add to it" 0 \
                "refused refused refused refused refused refused $((sys_n + 1))" - . $l -- sh -c '
                b=$SSL_CERT_FILE d=${SSL_CERT_FILE%/*}
                echo x > "$TMPDIR/evil.pem"
                try() { if "$@" 2>/dev/null; then echo DONE; else echo refused; fi; }
                try sh -c "echo x >> \"$b\""
                try truncate -s 0 "$b"
                try rm -f "$b"
                try mv -f "$TMPDIR/evil.pem" "$b"
                try cp "$TMPDIR/evil.pem" "$d/extra.pem"
                try chmod 0666 "$b"
                grep -c "BEGIN CERTIFICATE" "$b"'
        net "tls (landlock): the session CA's key is out of reach: the proxy's memory is not readable" \
                0 "proxies 1 mem EACCES vm EPERM self read" - . $l -- $CLI peek-proxy
        # Nothing left: the directory the run named is gone after it, and after kill -9 of cordon
        # (its reaper removes it; the TMPDIR too).
        net "tls (landlock): ... the run's bundle directory" 0 "/tmp/cordon-ca-*" - . $l -- \
                sh -c 'echo "${SSL_CERT_FILE%/*}"'
        if [ ! -e "$OUT" ]; then ok "tls (landlock): ... is gone after the run"
        else not_ok "tls (landlock): ... is gone after the run" "$OUT exists"; fi
        t_rules_tls_landlock_kill "$l"
}

# kill -9 of cordon while the command runs: the guard dies with it, the monitor ends the
# command's tree, and the reaper removes the bundle directory and TMPDIR. The reaper runs on
# its own: its removal is awaited up to 20 s (it takes milliseconds; the bound only keeps a
# broken reaper from hanging the suite).
t_rules_tls_landlock_kill() {
        name="tls (landlock): after kill -9 of cordon the bundle directory and TMPDIR are gone"
        dirs=$WS/kill-dirs
        rm -f "$dirs"
        # shellcheck disable=SC2086
        (cd "$WS" && exec "$CORDON" run $1 -- sh -c \
                "echo \"\${SSL_CERT_FILE%/*} \$TMPDIR\" > $dirs.tmp && mv $dirs.tmp $dirs &&
                exec sleep 300") > "$IT_TMP/log/kill.out" 2> "$IT_TMP/log/kill.err" &
        pid=$!
        i=0
        while [ ! -s "$dirs" ] && [ $i -lt 200 ] && kill -0 "$pid" 2>/dev/null; do
                sleep 0.1; i=$((i + 1))
        done
        if [ ! -s "$dirs" ]; then
                kill -9 "$pid" 2>/dev/null
                wait "$pid" 2>/dev/null
                not_ok "$name" "the command never started: $(cat "$IT_TMP/log/kill.err")"
                return 0
        fi
        read -r ca td < "$dirs"
        [ -f "$ca/ca-certificates.crt" ] && [ -d "$td" ] || {
                kill -9 "$pid"; wait "$pid" 2>/dev/null
                not_ok "$name" "not there while the command ran: $ca $td"; return 0; }
        kill -9 "$pid"
        wait "$pid" 2>/dev/null
        i=0
        while { [ -e "$ca" ] || [ -e "$td" ]; } && [ $i -lt 200 ]; do
                sleep 0.1; i=$((i + 1))
        done
        if [ ! -e "$ca" ] && [ ! -e "$td" ]; then ok "$name"
        else not_ok "$name" "left: $(ls -d "$ca" "$td" 2>&1)"; fi
        rm -f "$dirs"
}

# Java ignores SSL_CERT_FILE: the sandbox's JVMs trust the session CA through the truststore
# mounted over the JDK's cacerts (the system's certificates plus the session CA, JKS). The JVM
# never reads the proxy variables either, so its connections are the redirected ones.
t_rules_tls_java() {
        jks=/etc/ssl/certs/java/cacerts
        if ! command -v java >/dev/null || ! command -v keytool >/dev/null || [ ! -f "$jks" ]; then
                skip "tls: Java" "no JDK with $jks (scripts/install-deps.sh)"
                return 0
        fi
        net "tls: Java's HttpsURLConnection, redirected, trusts the session CA (cacerts)" 0 \
                "status 200" - + $1 -- \
                java "$HERE/JavaHttpsClient.java" GET "https://tls.example.test:$T/hello/@M@"
        net "tls: ... its refused POST sees the 403" 0 "status 403" \
                "req:tls.example.test:$T~request rules: no egressRules entry allows POST*" - \
                $1 -- java "$HERE/JavaHttpsClient.java" POST "https://tls.example.test:$T/echo/@M@"
        # Without request rules the JDK's own store is there, and the test server's certificate
        # is in neither: the same client fails verification (so the 200 above came from the
        # session CA, not from something else trusting the server).
        net "tls: ... without request rules Java trusts only its own store (handshake fails)" 0 \
                "error: SSLHandshakeException" - . --allow-domain tls.example.test \
                --allow-domain 127.0.0.1:$T $NAMES -- \
                java "$HERE/JavaHttpsClient.java" GET "https://tls.example.test:$T/hello/@M@"
        sys_n=$(grep -c 'BEGIN CERTIFICATE' /etc/ssl/certs/ca-certificates.crt)
        jks_sum=$(sha256sum "$jks")
        net "tls: the sandbox's Java truststore is the system's certificates plus the session CA" \
                0 "$((sys_n + 1)) 1" - . $1 -- sh -c "
                keytool -list -keystore $jks -storepass changeit | grep -c trustedCertEntry
                keytool -list -v -keystore $jks -storepass changeit | grep -c 'Owner: CN=cordon session CA'"
        net "tls: ... read-only there" "!0" "" - . $1 -- sh -c ": > $jks"
        if [ "$(sha256sum "$jks")" = "$jks_sum" ] && ! grep -q 'java/cacerts' /proc/self/mountinfo
        then
                ok "tls: ... nothing left behind: the host's cacerts is unchanged, no mount remains"
        else
                not_ok "tls: ... nothing left behind: the host's cacerts is unchanged, no mount remains"
        fi
}
