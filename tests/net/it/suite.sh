#!/bin/sh
# tests/net/it/suite.sh: the egress proxy from inside the sandbox, with real clients (curl, git,
# ssh, pip, npm, python) against servers this suite starts on the host's loopback (netsrv.py: HTTP on
# two ports, HTTPS with a certificate made here, UDP, a server that speaks first, HTTP CONNECT and
# SOCKS5 upstream proxies with and without credentials; a dumb-HTTP git repository; a pip index;
# an npm registry; an sshd on its own port; for the gitPush group, gitsrv.py: git smart HTTP over HTTP and HTTPS).
# Every rule is tried allowed and refused; a refusal must come with
# exactly one `violation` event (action network-outbound, the right host:port) and must not reach
# the server; an allowed request must reach it. LOOPBACK ONLY: every name is mapped to 127.0.0.1
# with --resolve (or by the suite's upstream proxies), nothing here ever contacts another address.
#
#   suite.sh CORDON IT_TMP LIB_DIR
#
# Run by run.sh (as root, and again as an unprivileged user). LIB_DIR holds the integration
# suite's lib.sh (TAP-like output, run_in, the final "N passed, N failed, N skipped" line).
set -u

CORDON=$1
IT_TMP=$2
LIB_DIR=$3
HERE=$(cd "$(dirname "$0")" && pwd)

# shellcheck source=tests/integration/lib.sh
. "$LIB_DIR/lib.sh"

PY=/usr/bin/python3 # not a shim from the caller's PATH: the sandbox sees the system's
CLI="$PY $HERE/netcli.py"
FAKE_HOME=$IT_TMP/home
WS=$IT_TMP/ws
SRV=$IT_TMP/srv       # the servers' state: ports, access.log, udp.log, sshd
ROOT=$IT_TMP/www      # what the HTTP servers serve: repo.git, simple/, packages/, npm/
CERT=$SRV/tls-cert.crt
EVENTS_ALL=$IT_TMP/log/events.all
# curl as every test runs it: one line per URL, "HTTP-CODE/CONNECT-CODE".
CURL="curl -s -o /dev/null --max-time 20 -w %{http_code}/%{http_connect}\n"
# ... and for a second URL on the same command line (-o applies to one URL).
O2="-o /dev/null"
SRV_PID=
SSHD_PID=
REDIS_PID=
GITSRV_PID=

stop_servers() {
        for p in $SRV_PID $SSHD_PID $REDIS_PID $GITSRV_PID; do kill "$p" 2>/dev/null; done
        return 0
}
trap stop_servers EXIT
trap 'exit 130' INT TERM

# ---- the verdict -----------------------------------------------------------------------------

# access_hit MARK: the servers logged a request whose line contains MARK.
access_hit() {
        grep -qF -- "$1" "$SRV/access.log" 2>/dev/null
}

# check_hits MARK SPEC: SPEC is "." (no check) or words "+SUFFIX" (MARK+SUFFIX reached a server)
# and "-SUFFIX" (it did not); prints the first mismatch.
check_hits() {
        [ "$2" = . ] && return 0
        for _w in $2; do
                _m=$1${_w#?}
                case $_w in
                +*) access_hit "$_m" || { echo "$_m never reached the server"; return 1; } ;;
                -*) ! access_hit "$_m" || { echo "$_m REACHED the server"; return 1; } ;;
                *) echo "bad hit spec $_w"; return 1 ;;
                esac
        done
        return 0
}

# check_events FILE SPEC: SPEC "-" = no network-outbound violation; "TARGET" or
# "TARGET~RULE-GLOB" = exactly one, with that target (and a rule matching the glob); "req:"
# before either: a network-request violation (a request rule's refusal) instead. Violations of
# other actions (a client's refused AF_UNIX socketpair, say) are not this suite's business.
check_events() {
        [ "$2" = . ] && return 0
        _act=network-outbound
        case $2 in req:*) _act=network-request; set -- "$1" "${2#req:}" ;; esac
        if ! _v=$($PY "$HERE/netsrv.py" events "$1" "$_act"); then
                echo "unreadable events file"
                return 1
        fi
        _n=$(printf '%s' "$_v" | grep -c '^' || true)
        if [ "$2" = - ]; then
                [ "$_n" -eq 0 ] && return 0
                echo "unexpected violation(s): $(printf '%s' "$_v" | tr '\n\t' '| ')"
                return 1
        fi
        _want_target=${2%%~*}
        _want_rule='*'
        case $2 in *~*) _want_rule=${2#*~} ;; esac
        if [ "$_n" -ne 1 ]; then
                echo "$_n violation events, want 1 ($_want_target):" \
                        "$(printf '%s' "$_v" | tr '\n\t' '| ')"
                return 1
        fi
        _action=$(printf '%s' "$_v" | cut -f1)
        _target=$(printf '%s' "$_v" | cut -f2)
        _rule=$(printf '%s' "$_v" | cut -f4)
        [ "$_action" = "$_act" ] || { echo "action '$_action'"; return 1; }
        if [ "$_target" != "$_want_target" ]; then
                echo "target '$_target', want '$_want_target'"
                return 1
        fi
        # shellcheck disable=SC2254
        case $_rule in $_want_rule) ;; *) echo "rule '$_rule', want '$_want_rule'"; return 1 ;; esac
        return 0
}

# net NAME RC OUT EVENTS HITS [CORDON-RUN-OPTIONS...] -- CMD...
#   `cordon run --events FILE OPTIONS -- CMD` in the workspace, then:
#   RC      the exit status (a number, or "!0" for any failure but 125);
#   OUT     a glob for stdout, \r dropped and newlines folded into single spaces;
#   EVENTS  see check_events; HITS see check_hits (the mark is unique to this test).
#   Every argument may contain @M@, replaced by this test's mark (mk<N>x).
MARK=
net() {
        _name=$1 _want_rc=$2 _want_out=$3 _want_ev=$4 _want_hits=$5
        shift 5
        MARK=mk$((N_TEST + 1))x
        for _a in "$@"; do
                shift
                while :; do
                        case $_a in
                        *@M@*) _a=${_a%%@M@*}$MARK${_a#*@M@} ;;
                        *) break ;;
                        esac
                done
                set -- "$@" "$_a"
        done
        EV=$IT_TMP/log/ev.$((RUN_SEQ + 1))
        run_in "$WS" "$CORDON" run --events "$EV" "$@"
        [ -f "$EV" ] && cat "$EV" >> "$EVENTS_ALL"
        OUT=$(tr -d '\r' < "$LAST_OUT" | tr -s '\n' ' ' | sed 's/ $//')
        _why=
        case $_want_rc in
        !0) [ "$LAST_STATUS" -ne 0 ] && [ "$LAST_STATUS" -ne 125 ] ||
                _why="status $LAST_STATUS, want a failure of the command" ;;
        *) [ "$LAST_STATUS" -eq "$_want_rc" ] || _why="status $LAST_STATUS, want $_want_rc" ;;
        esac
        # shellcheck disable=SC2254
        [ -n "$_why" ] || case $OUT in
                $_want_out) ;;
                *) _why="output '$OUT', want '$_want_out'" ;;
                esac
        [ -n "$_why" ] || _why=$(check_events "$EV" "$_want_ev")
        [ -n "$_why" ] || _why=$(check_hits "$MARK" "$_want_hits")
        if [ -z "$_why" ]; then ok "$_name"; else not_ok "$_name" "$_why"; fi
}

# rq METHOD TARGET HOST [FIELD...]: a request head as netcli.py reads it ("\r\n" written as
# text); HOST "-" sends no Host field.
rq() {
        _r="$1 $2 HTTP/1.1"
        [ "$3" = - ] || _r="$_r\\r\\nHost: $3"
        shift 3
        for _f in "$@"; do _r="$_r\\r\\n$_f"; done
        printf '%s\\r\\n\\r\\n' "$_r"
}

# get URL [FIELD...]: an absolute-form GET whose Host repeats the URL's authority.
get() {
        _u=$1
        shift
        _h=${_u#http://}
        rq GET "$_u" "${_h%%/*}" "$@"
}

# Shorthands for the common options: NAMES maps every test name to 127.0.0.1; LOCAL allows the
# HTTP server's address and port explicitly (the entry that exempts it from the resolved-address
# guard; a name is still judged on its own).
NAMES=
for n in a.example.test b.example.test a.b.example.test example.test a.x.example.test \
        a.x.y.example.test b.x.example.test tls.example.test git.example.test ssh.example.test \
        pypi.example.test metadata.google.internal dev.localhost; do
        NAMES="$NAMES --resolve $n=127.0.0.1"
done

# ---- fixtures --------------------------------------------------------------------------------

git_q() {
        git -c user.name=cordon-net-it -c user.email=it@example.invalid \
                -c init.defaultBranch=main "$@"
}

make_fixture() {
        mkdir -p "$IT_TMP/log" "$FAKE_HOME" "$WS" "$SRV" "$ROOT"
        : > "$SRV/access.log"
        : > "$SRV/udp.log"
        : > "$SRV/upstream.log"
        : > "$EVENTS_ALL"
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
                -subj /CN=tls.example.test \
                -addext "subjectAltName=DNS:tls.example.test,DNS:localhost,IP:127.0.0.1" \
                -keyout "$SRV/tls-key" -out "$CERT" 2>/dev/null || return 1
        git_q init -q "$SRV/src" && echo "cordon-net-it repository" > "$SRV/src/README" &&
                git_q -C "$SRV/src" add README && git_q -C "$SRV/src" commit -qm init &&
                git clone -q --bare "$SRV/src" "$ROOT/repo.git" &&
                git -C "$ROOT/repo.git" update-server-info || return 1
        $PY "$HERE/netsrv.py" pip-index "$ROOT" || return 1
        head -c 8388608 /dev/urandom > "$ROOT/big.bin"
        BIG_SHA=$(sha256sum "$ROOT/big.bin" | cut -d' ' -f1)
        # A body for the chunked upload: 300 KiB, several chunks of curl's.
        $PY -c 'import sys; sys.stdout.write("".join("line %06d of the chunked body\n" % i
                for i in range(10000)))' > "$SRV/body"
        BODY_LEN=$(wc -c < "$SRV/body")
        BODY_SHA=$(sha256sum "$SRV/body" | cut -d' ' -f1)
        $PY "$HERE/netsrv.py" serve "$SRV" "$ROOT" "$CERT" "$SRV/tls-key" &
        SRV_PID=$!
        for _ in $(seq 100); do [ -f "$SRV/ports" ] && break; sleep 0.1; done
        [ -f "$SRV/ports" ] || return 1
        . "$SRV/ports"
        P=$HTTP_PORT P2=$HTTP2_PORT T=$TLS_PORT U=$UDP_PORT
        LOCAL="--allow-domain 127.0.0.1:$P"
        # The npm registry's document names its tarball by URL, so it is made once the HTTPS
        # port is known (the servers read ROOT at each request).
        $PY "$HERE/netsrv.py" npm-registry "$ROOT" "https://tls.example.test:$T/npm" || return 1
        echo "# servers: http $P, http $P2, https $T, udp $U"
}

# ---- plain HTTP (absolute-form through the HTTP proxy) ---------------------------------------

t_http() {
        net "http: GET allowed by its address:port" 0 "200/000" - + \
                $LOCAL -- $CURL "http://127.0.0.1:$P/hello/@M@"
        net "http: a raw IP not allowed is refused (403)" 0 "403/000" \
                "127.0.0.1:$P~not in allowlist" - \
                -- $CURL "http://127.0.0.1:$P/hello/@M@"
        net "http: a wildcard never covers an address" 0 "403/000" "127.0.0.1:$P" - \
                --allow-domain '*.example.test' -- $CURL "http://127.0.0.1:$P/hello/@M@"
        net "http: host:port allows that port only (other port refused)" 0 "403/000" \
                "127.0.0.1:$P2" - $LOCAL -- $CURL "http://127.0.0.1:$P2/hello/@M@"
        net "http: an address without a port allows every port" 0 "200/000" - + \
                --allow-domain 127.0.0.1 -- $CURL "http://127.0.0.1:$P2/hello/@M@"
        net "http: localhost:PORT allowed works" 0 "200/000" - + \
                --allow-domain "localhost:$P" -- $CURL "http://localhost:$P/hello/@M@"
        net "http: localhost:PORT does not open another port" 0 "403/000" "localhost:$P2" - \
                --allow-domain "localhost:$P" -- $CURL "http://localhost:$P2/hello/@M@"
        hdr="-s -o /dev/null --max-time 20 -D -"
        net "http: a refusal names its rule in X-Cordon-Error" 0 \
                "X-Cordon-Error: not in allowlist" "127.0.0.1:$P2" - $LOCAL -- sh -c \
                "curl $hdr http://127.0.0.1:$P2/hello/@M@ | tr -d '\r' | grep -i ^x-cordon-error"
        net "https: a refused CONNECT names its rule in X-Cordon-Error" 0 \
                "X-Cordon-Error: not in allowlist" "127.0.0.1:$T" - $LOCAL -- sh -c \
                "curl $hdr -k https://127.0.0.1:$T/hello/@M@ | tr -d '\r' | grep -i ^x-cordon-error"
        net "http: python urllib through http_proxy, allowed" 0 "status 200" - + \
                $LOCAL -- $CLI urllib "http://127.0.0.1:$P/hello/@M@"
        net "http: python urllib through http_proxy, refused" 0 "error 403 not in allowlist" \
                "127.0.0.1:$P2" - $LOCAL -- $CLI urllib "http://127.0.0.1:$P2/hello/@M@"
}

# ---- HTTPS through CONNECT -------------------------------------------------------------------

t_https() {
        tls="--allow-domain 127.0.0.1:$T $NAMES"
        net "https: CONNECT to an allowed name (local TLS server, --cacert)" 0 "200/200" - + \
                --allow-domain tls.example.test $tls -- \
                $CURL --cacert "$CERT" "https://tls.example.test:$T/hello/@M@"
        # Fronting through the proxy: CONNECT names an allowed host, the TLS server name another.
        net "https: a CONNECT tunnel whose TLS server name is another host is reset" 35 \
                "000/200" "tls.example.test:$T~asks for other.example.test*" - \
                --allow-domain tls.example.test $tls -- $CURL -k \
                --connect-to "other.example.test:$T:tls.example.test:$T" \
                "https://other.example.test:$T/hello/@M@"
        net "socks: a SOCKS5 tunnel to a name whose HTTP Host is another is reset" 0 \
                "rep=0 (closed)" "a.example.test:$P~asks for b.example.test*" - \
                --allow-domain a.example.test $LOCAL $NAMES -- \
                $CLI socks-host a.example.test "$P" b.example.test "/hello/@M@"
        net "https: CONNECT to a name not allowed is refused (403)" 56 "000/403" \
                "tls.example.test:$T~not in allowlist" - \
                $tls -- $CURL --cacert "$CERT" "https://tls.example.test:$T/hello/@M@"
        net "https: CONNECT to localhost:PORT allowed" 0 "200/200" - + \
                --allow-domain "localhost:$T" -- \
                $CURL --cacert "$CERT" "https://localhost:$T/hello/@M@"
        net "https: an allowed name mapped to 127.0.0.1 without an address entry is refused" \
                56 "000/403" "tls.example.test:$T~resolves only to refused addresses*" - \
                --allow-domain tls.example.test $NAMES -- \
                $CURL --cacert "$CERT" "https://tls.example.test:$T/hello/@M@"
        net "https: through socks5h, allowed" 0 "200/000" - + \
                --allow-domain tls.example.test $tls -- $CURL -x socks5h://127.0.0.1:1080 \
                --cacert "$CERT" "https://tls.example.test:$T/hello/@M@"
        net "https: through socks5h, refused" 97 "000/000" "tls.example.test:$T" - \
                $tls -- $CURL -x socks5h://127.0.0.1:1080 \
                --cacert "$CERT" "https://tls.example.test:$T/hello/@M@"
}

# ---- SOCKS5 ----------------------------------------------------------------------------------

t_socks() {
        a="--allow-domain a.example.test $LOCAL $NAMES"
        net "socks5h: curl -x socks5h://, allowed" 0 "200/000" - + \
                $a -- $CURL -x socks5h://127.0.0.1:1080 "http://a.example.test:$P/hello/@M@"
        net "socks5h: curl -x socks5h://, refused (reply 2)" 97 "000/000" \
                "b.example.test:$P~not in allowlist" - \
                $a -- $CURL -x socks5h://127.0.0.1:1080 "http://b.example.test:$P/hello/@M@"
        noenv="env -u http_proxy -u HTTP_PROXY -u https_proxy -u HTTPS_PROXY"
        net "socks5h: ALL_PROXY alone carries curl, allowed" 0 "200/000" - + \
                $a -- $noenv $CURL "http://a.example.test:$P/hello/@M@"
        net "socks5h: ALL_PROXY alone carries curl, refused" 97 "000/000" "b.example.test:$P" - \
                $a -- $noenv $CURL "http://b.example.test:$P/hello/@M@"
        net "socks5: UDP ASSOCIATE is not supported (reply 7)" 0 "rep=7" . . \
                $LOCAL -- $CLI socks-cmd 3
        net "socks5: BIND is not supported (reply 7)" 0 "rep=7" . . $LOCAL -- $CLI socks-cmd 2
        net "socks5: a domain with a NUL byte (allowed.test\\0.evil) is refused" 0 "rep=2" \
                "(invalid host name):$P~invalid host name*" - \
                --allow-domain allowed.test $LOCAL -- $CLI socks domain 'allowed.test\x00.evil' \
                "$P" "/hello/@M@"
        net "socks5: a domain with CR LF is refused" 0 "rep=2" "(invalid host name):$P" - \
                --allow-domain a.example.test $LOCAL $NAMES -- \
                $CLI socks domain 'a.example.test\r\n' "$P" "/hello/@M@"
        net "socks5: address type IPv4, allowed" 0 "rep=0 HTTP/1.1 200 OK" - + \
                $LOCAL -- $CLI socks ipv4 127.0.0.1 "$P" "/hello/@M@"
        net "socks5: address type IPv4, refused" 0 "rep=2" "127.0.0.1:$P2" - \
                $LOCAL -- $CLI socks ipv4 127.0.0.1 "$P2" "/hello/@M@"
        net "socks5: IPv4-mapped IPv6 (::ffff:127.0.0.1) judged as 127.0.0.1, allowed" 0 \
                "rep=0 HTTP/1.1 200 OK" - + \
                $LOCAL -- $CLI socks ipv6 ::ffff:127.0.0.1 "$P" "/hello/@M@"
        net "socks5: IPv4-mapped IPv6 judged as 127.0.0.1, other port refused" 0 "rep=2" \
                "127.0.0.1:$P2" - $LOCAL -- $CLI socks ipv6 ::ffff:127.0.0.1 "$P2" "/hello/@M@"
        net "socks5: domain 127.1 judged as 127.0.0.1, allowed" 0 "rep=0 HTTP/1.1 200 OK" - + \
                $LOCAL -- $CLI socks domain 127.1 "$P" "/hello/@M@"
        net "socks5: domain 2130706433 judged as 127.0.0.1, other port refused" 0 "rep=2" \
                "127.0.0.1:$P2" - $LOCAL -- $CLI socks domain 2130706433 "$P2" "/hello/@M@"
}

# ---- keep-alive, pipelining, framing, bodies (the forward path) ------------------------------

t_keepalive() {
        ab="--allow-domain a.example.test $LOCAL $NAMES"
        net "keep-alive: two hosts on one connection, the second judged on its own" 0 \
                "200/000 403/000" "b.example.test:$P" "+-a --b" $ab -- $CURL -v $O2 \
                "http://a.example.test:$P/hello/@M@-a" "http://b.example.test:$P/hello/@M@-b"
        if grep -q 'Re-using existing connection' "$LAST_ERR"; then
                ok "keep-alive: curl reused the proxy connection for the second host"
        else
                not_ok "keep-alive: curl reused the proxy connection for the second host"
        fi
        net "keep-alive: refused first, allowed second" 0 "403/000 200/000" \
                "b.example.test:$P" "--b +-a" $ab -- $CURL $O2 \
                "http://b.example.test:$P/hello/@M@-b" "http://a.example.test:$P/hello/@M@-a"
        net "keep-alive: two allowed hosts on one connection" 0 "200/000 200/000" - "+-a +-b" \
                --allow-domain b.example.test $ab -- $CURL $O2 \
                "http://a.example.test:$P/hello/@M@-a" "http://b.example.test:$P/hello/@M@-b"
        net "keep-alive: two requests to one host, one after the other" 0 \
                "HTTP/1.1 200 OK HTTP/1.1 200 OK" - "+-1 +-2" $LOCAL -- $CLI seq 3128 0 \
                "$(get "http://127.0.0.1:$P/hello/@M@-1")" \
                "$(get "http://127.0.0.1:$P/hello/@M@-2")"
        peers=$(grep -F "$MARK-" "$SRV/access.log" | sed 's/.* peer=//' | sort -u | wc -l)
        if [ "$peers" -eq 1 ]; then ok "keep-alive: ... rode one upstream connection (pooled)"
        else not_ok "keep-alive: ... rode one upstream connection (pooled)" "$peers connections"; fi
        # "Content-Length: 0" ends the response with its head: the connection is ready for
        # the next request at once, not after an upstream close that never comes.
        net "keep-alive: two empty (Content-Length: 0) answers on one connection" 0 \
                "HTTP/1.1 200 OK HTTP/1.1 200 OK" - "+-e1 +-e2" $LOCAL -- $CLI seq 3128 0 \
                "$(get "http://127.0.0.1:$P/empty/@M@-e1")" \
                "$(get "http://127.0.0.1:$P/empty/@M@-e2")"
        net "keep-alive: an upstream that closed while idle is not reused (no 502)" 0 \
                "HTTP/1.1 200 OK HTTP/1.1 200 OK" - "+-1 +-2" $LOCAL -- $CLI seq 3128 1 \
                "$(get "http://127.0.0.1:$P/idle-close/@M@-1")" \
                "$(get "http://127.0.0.1:$P/hello/@M@-2")"
        # /conns/ counts the connections open to the server, its own included.
        r1=$(get "http://127.0.0.1:$P2/hello/@M@-1")
        net "keep-alive: control: a client gone, its pooled upstream is closed" 0 \
                "HTTP/1.1 200 OK open=1" - + --allow-domain 127.0.0.1 -- sh -c \
                "$CLI seq 3128 0 '$r1' && sleep 0.5 && \
                curl -s --max-time 20 http://127.0.0.1:$P2/conns/@M@"
        r2=$(rq CONNECT "127.0.0.1:$P2" "127.0.0.1:$P2")
        r3=$(rq GET /hello/@M@-2 127.0.0.1 "Connection: close")
        net "keep-alive: a CONNECT after a forwarded GET leaves no upstream connection open" 0 \
                "HTTP/1.1 200 OK HTTP/1.1 200 Connection established HTTP/1.1 200 OK open=1" - \
                "+-1 +-2" --allow-domain 127.0.0.1 -- sh -c "$CLI seq 3128 0 '$r1' '$r2' '$r3' && \
                sleep 0.5 && curl -s --max-time 20 http://127.0.0.1:$P2/conns/@M@"
}

t_pipelining() {
        ab="--allow-domain a.example.test $LOCAL $NAMES"
        r1=$(get "http://a.example.test:$P/hello/@M@-a")
        r2=$(get "http://b.example.test:$P/hello/@M@-b")
        net "pipelining: an allowed and a refused request in one write, each judged" 0 \
                "HTTP/1.1 200 OK HTTP/1.1 403 Forbidden" "b.example.test:$P" "+-a --b" $ab -- \
                $CLI raw 3128 "$r1$r2"
        post=$(rq POST "http://a.example.test:$P/echo/@M@-a" "a.example.test:$P" \
                "Connection: close" "Content-Length: $(printf '%b' "$r2" | wc -c)")
        net "pipelining: a request inside a body is body, never a request" 0 \
                "HTTP/1.1 200 OK" - "+-a --b" $ab -- $CLI raw 3128 "$post$r2"
        net "framing: Content-Length and Transfer-Encoding together are refused (400)" 0 \
                "HTTP/1.1 400 *" . - $ab -- $CLI raw 3128 \
                "$(rq POST "http://a.example.test:$P/echo/@M@" "a.example.test:$P" \
                        "Content-Length: 5" "Transfer-Encoding: chunked")0\\r\\n\\r\\n"
        net "framing: HEAD then GET on one connection (a HEAD answer has no body)" 0 \
                "HTTP/1.1 200 OK HTTP/1.1 200 OK" - + $LOCAL -- $CLI raw 3128 \
                "$(rq HEAD "http://127.0.0.1:$P/repo.git/HEAD?@M@" "127.0.0.1:$P")$(get \
                        "http://127.0.0.1:$P/hello/@M@" "Connection: close")"
        net "framing: 204 and 304 (with a Content-Length) carry no body; the next answer follows" \
                0 "HTTP/1.1 204 No Content HTTP/1.1 304 Not Modified HTTP/1.1 200 OK" - \
                "+-1 +-2 +-3" $LOCAL -- $CLI seq 3128 0 \
                "$(get "http://127.0.0.1:$P/nocontent/@M@-1")" \
                "$(get "http://127.0.0.1:$P/notmodified/@M@-2")" \
                "$(get "http://127.0.0.1:$P/hello/@M@-3")"
        net "framing: a response delimited by the upstream's close" 0 \
                "body delimited by close" - + $LOCAL -- \
                curl -s --max-time 20 "http://127.0.0.1:$P/close/@M@"
        net "framing: HTTP/1.0 without a Host header" 0 "HTTP/1.? 200 OK" - + $LOCAL -- \
                $CLI raw 3128 "GET http://127.0.0.1:$P/hello/@M@ HTTP/1.0\\r\\n\\r\\n"
        net "headers: hop-by-hop fields (Proxy-Authorization, Connection-listed) stay here" \
                0 "accept connection host user-agent x-kept" - + $LOCAL -- curl -s --max-time 20 \
                -H 'Proxy-Authorization: Basic Y29yZG9uOnNlY3JldA==' -H 'Connection: x-secret' \
                -H 'X-Secret: 1' -H 'X-Kept: 1' "http://127.0.0.1:$P/headers/@M@"
}

t_bodies() {
        sum="| sha256sum | cut -c1-64"
        net "bulk: 8 MiB through the forward path, intact" 0 "$BIG_SHA" - + $LOCAL -- \
                sh -c "curl -s --max-time 20 'http://127.0.0.1:$P/big.bin?@M@' $sum"
        net "bulk: 8 MiB through a CONNECT tunnel (TLS), intact" 0 "$BIG_SHA" - + \
                --allow-domain "localhost:$T" -- sh -c "curl -s --max-time 20 --cacert $CERT \
                'https://localhost:$T/big.bin?@M@' $sum"
        net "bulk: 8 MiB through SOCKS5, intact" 0 "$BIG_SHA" - + $LOCAL -- sh -c \
                "curl -s --max-time 20 -x socks5h://127.0.0.1:1080 \
                'http://127.0.0.1:$P/big.bin?@M@' $sum"
        net "listeners: the proxy also listens on [::1]:3128" 0 "200/000" - + $LOCAL -- \
                $CURL -x 'http://[::1]:3128' "http://127.0.0.1:$P/hello/@M@"
        chunked="-s --max-time 20 -H Transfer-Encoding:chunked --data-binary @$SRV/body"
        net "chunked: a chunked request body passes through intact" 0 \
                "te=chunked len=$BODY_LEN sha256=$BODY_SHA" - + \
                $LOCAL -- curl $chunked "http://127.0.0.1:$P/echo/@M@"
        net "chunked: a chunked request to a port not allowed is refused" 0 "403/000" \
                "127.0.0.1:$P2" - $LOCAL -- \
                curl $chunked -o /dev/null -w '%{http_code}/%{http_connect}' \
                "http://127.0.0.1:$P2/echo/@M@"
        # The refusal is answered before the body arrives; the proxy must then drain what the
        # client still sends rather than close with it unread (a reset that can overtake the 403).
        net "chunked: a body sent after the refusal is drained, not reset" 0 \
                "HTTP/1.1 403 Forbidden body sent" "127.0.0.1:$P2" - $LOCAL -- \
                $CLI late-body "http://127.0.0.1:$P2/echo/@M@"
        net "chunked: a chunked response passes through unchanged (--raw)" 0 \
                "8 chunk-1 8 chunk-2 8 chunk-3 0" - + \
                $LOCAL -- curl -s --raw --max-time 20 "http://127.0.0.1:$P/chunked/@M@"
        net "chunked: a chunked response, decoded by curl" 0 "chunk-1 chunk-2 chunk-3" - + \
                $LOCAL -- curl -s --max-time 20 "http://127.0.0.1:$P/chunked/@M@"
}

# ---- the matcher: wildcards, ports, deny, case, trailing dot ---------------------------------

t_match() {
        w="--allow-domain *.example.test $LOCAL $NAMES"
        net "wildcard *.example.test: one label below" 0 "200/000" - + \
                $w -- $CURL "http://a.example.test:$P/hello/@M@"
        net "wildcard *.example.test: two labels below" 0 "200/000" - + \
                $w -- $CURL "http://a.b.example.test:$P/hello/@M@"
        net "wildcard *.example.test: the apex is refused (even with its address:port allowed)" \
                0 "403/000" "example.test:$P~not in allowlist" - \
                $w -- $CURL "http://example.test:$P/hello/@M@"
        m="--allow-domain a.*.example.test $LOCAL $NAMES"
        net "middle wildcard a.*.example.test: exactly one label" 0 "200/000" - + \
                $m -- $CURL "http://a.x.example.test:$P/hello/@M@"
        net "middle wildcard a.*.example.test: two labels refused" 0 "403/000" \
                "a.x.y.example.test:$P" - $m -- $CURL "http://a.x.y.example.test:$P/hello/@M@"
        net "middle wildcard a.*.example.test: zero labels refused" 0 "403/000" \
                "a.example.test:$P" - $m -- $CURL "http://a.example.test:$P/hello/@M@"
        net "middle wildcard a.*.example.test: another first label refused" 0 "403/000" \
                "b.x.example.test:$P" - $m -- $CURL "http://b.x.example.test:$P/hello/@M@"
        net "ports: name:port allows that port" 0 "200/000" - + \
                --allow-domain "a.example.test:$P" --allow-domain 127.0.0.1 $NAMES -- \
                $CURL "http://a.example.test:$P/hello/@M@"
        net "ports: name:port refuses another port" 0 "403/000" "a.example.test:$P2" - \
                --allow-domain "a.example.test:$P" --allow-domain 127.0.0.1 $NAMES -- \
                $CURL "http://a.example.test:$P2/hello/@M@"
}

t_deny_case() {
        w="--allow-domain *.example.test $LOCAL $NAMES"
        net "deny beats allow: --deny-domain b.example.test under *.example.test" 0 "403/000" \
                "b.example.test:$P~b.example.test" - --deny-domain b.example.test $w -- \
                $CURL "http://b.example.test:$P/hello/@M@"
        net "deny beats allow: the rest of *.example.test still allowed" 0 "200/000" - + \
                --deny-domain b.example.test $w -- $CURL "http://a.example.test:$P/hello/@M@"
        net "deny beats allow: a denied wildcard beats an exact allow" 0 "403/000" \
                "a.example.test:$P~\\*.example.test" - --deny-domain '*.example.test' \
                --allow-domain a.example.test $LOCAL $NAMES -- \
                $CURL "http://a.example.test:$P/hello/@M@"
        net "deny beats allow: a denied address beats its explicit address:port" 0 "403/000" \
                "127.0.0.1:$P~127.0.0.1" - --deny-domain 127.0.0.1 $LOCAL -- \
                $CURL "http://127.0.0.1:$P/hello/@M@"
        # A deny entry's reason travels with its refusals: the 403's header and body, the event.
        printf '{"egressDenylist": [{"host": "b.example.test", "reason": "no paste sites"}]}\n' \
                > "$IT_TMP/reason.json"
        net "reasons: a deny entry's reason in the 403 (X-Cordon-Reason)" 0 \
                "X-Cordon-Reason: no paste sites" "b.example.test:$P~b.example.test" - \
                --policy "$IT_TMP/reason.json" $w -- sh -c "curl -s -D - -o /dev/null \
                http://b.example.test:$P/hello/@M@ | grep -i '^x-cordon-reason' | tr -d '\r'"
        if $PY "$HERE/netsrv.py" events "$EV" network-outbound | grep -q "	no paste sites\$"
        then ok "reasons: ... and in the violation event (raw.reason)"
        else not_ok "reasons: ... and in the violation event (raw.reason)" "$(cat "$EV")"; fi
        net "reasons: the resolver's refusal carries it too" 0 "rcode 3" \
                "b.example.test~b.example.test" . --policy "$IT_TMP/reason.json" $w -- \
                $CLI dns 192.0.2.53 b.example.test
        if $PY "$HERE/netsrv.py" events "$EV" network-outbound | grep -q "	no paste sites\$"
        then ok "reasons: ... in its event"
        else not_ok "reasons: ... in its event" "$(cat "$EV")"; fi
        net "deny beats allow: the built-in deny list (metadata.google.internal)" 0 "403/000" \
                "metadata.google.internal:$P" - --allow-domain metadata.google.internal \
                $LOCAL $NAMES -- $CURL "http://metadata.google.internal:$P/hello/@M@"
        net "case-insensitive: A.eXample.TEST allowed by a.example.TEST" 0 "HTTP/1.1 200 OK" - + \
                --allow-domain a.example.TEST $LOCAL $NAMES -- \
                $CLI raw 3128 "$(get "http://A.eXample.TEST:$P/hello/@M@" "Connection: close")"
        net "ports: *.example.test:PORT allows that port" 0 "200/000" - + \
                --allow-domain "*.example.test:$P" --allow-domain 127.0.0.1 $NAMES -- \
                $CURL "http://a.example.test:$P/hello/@M@"
        net "ports: *.example.test:PORT refuses another port" 0 "403/000" "a.example.test:$P2" - \
                --allow-domain "*.example.test:$P" --allow-domain 127.0.0.1 $NAMES -- \
                $CURL "http://a.example.test:$P2/hello/@M@"
        net "deny beats allow: a denied host:port, that port refused" 0 "403/000" \
                "a.example.test:$P" - --deny-domain "a.example.test:$P" \
                --allow-domain a.example.test --allow-domain 127.0.0.1 $NAMES -- \
                $CURL "http://a.example.test:$P/hello/@M@"
        net "deny beats allow: a denied host:port, another port allowed" 0 "200/000" - + \
                --deny-domain "a.example.test:$P" --allow-domain a.example.test \
                --allow-domain 127.0.0.1 $NAMES -- $CURL "http://a.example.test:$P2/hello/@M@"
        net "case-insensitive: SOCKS5 domain A.EXAMPLE.TEST allowed by a.example.test" 0 \
                "rep=0 HTTP/1.1 200 OK" - + --allow-domain a.example.test $LOCAL $NAMES -- \
                $CLI socks domain A.EXAMPLE.TEST "$P" "/hello/@M@"
        net "trailing dot: a.example.test. allowed by a.example.test" 0 "HTTP/1.1 200 OK" - + \
                --allow-domain a.example.test $LOCAL $NAMES -- \
                $CLI raw 3128 "$(get "http://a.example.test.:$P/hello/@M@" "Connection: close")"
        net "trailing dot: the pattern's own trailing dot is ignored too" 0 "200/000" - + \
                --allow-domain a.example.test. $LOCAL $NAMES -- \
                $CURL "http://a.example.test:$P/hello/@M@"
        net "trailing dot: b.example.test. still refused" 0 "HTTP/1.1 403 Forbidden" \
                "b.example.test:$P" - --allow-domain a.example.test $LOCAL $NAMES -- \
                $CLI raw 3128 "$(get "http://b.example.test.:$P/hello/@M@")"
        net "--resolve keys are case-insensitive too (A.Example.Test=127.0.0.1)" 0 "200/000" - + \
                --allow-domain a.example.test $LOCAL --resolve A.Example.Test=127.0.0.1 -- \
                $CURL "http://a.example.test:$P/hello/@M@"
}

# ---- the resolved-address guard and address forms --------------------------------------------

t_guard() {
        net "guard: an allowed name mapped to 127.0.0.1, no address entry: refused" 0 "403/000" \
                "a.example.test:$P~resolves only to refused addresses*" - \
                --allow-domain a.example.test $NAMES -- $CURL "http://a.example.test:$P/hello/@M@"
        net "guard: the explicit 127.0.0.1:PORT entry exempts that port only" 0 "403/000" \
                "a.example.test:$P2~resolves only to refused addresses*" - \
                --allow-domain a.example.test $LOCAL $NAMES -- \
                $CURL "http://a.example.test:$P2/hello/@M@"
        net "guard: an address entry without a port exempts every port" 0 "200/000" - + \
                --allow-domain a.example.test --allow-domain 127.0.0.1 $NAMES -- \
                $CURL "http://a.example.test:$P2/hello/@M@"
        net "guard: an allowed name mapped to ::1 is refused" 0 "403/000" \
                "a.example.test:$P~resolves only to refused addresses*" - \
                --allow-domain a.example.test --resolve a.example.test=::1 -- \
                $CURL "http://a.example.test:$P/hello/@M@"
        net "guard: an allowed name mapped to 0.0.0.0 is refused" 0 "403/000" \
                "a.example.test:$P~resolves only to refused addresses*" - \
                --allow-domain a.example.test --resolve a.example.test=0.0.0.0 -- \
                $CURL "http://a.example.test:$P/hello/@M@"
        net "guard: *.localhost may resolve to loopback (dev.localhost:PORT)" 0 "200/000" - + \
                --allow-domain "dev.localhost:$P" $NAMES -- \
                $CURL "http://dev.localhost:$P/hello/@M@"
        # README.md's --resolve example, as written there: a name for a local server needs the
        # name allowed (the judge) and the loopback address-and-port named (the guard).
        net "README --resolve example: the name and 127.0.0.1:PORT both allowed" 0 "200/000" \
                - + --resolve dev.test=127.0.0.1 --allow-domain "dev.test:$P" \
                --allow-domain "127.0.0.1:$P" -- $CURL "http://dev.test:$P/hello/@M@"
        net "README --resolve example: the address entry alone does not allow the name" 0 \
                "403/000" "dev.test:$P~not in allowlist*" - --resolve dev.test=127.0.0.1 \
                --allow-domain "127.0.0.1:$P" -- $CURL "http://dev.test:$P/hello/@M@"
}

t_addresses() {
        # The Host field repeats the URL's authority (one that disagrees is refused, below).
        for h in 127.1 2130706433 0x7f.0.0.1 '[::ffff:127.0.0.1]'; do
                case $h in 127.1 | 0x7f.0.0.1) port=$P ;; *) port=$P2 ;; esac
                req=$(get "http://$h:$port/hello/@M@" "Connection: close")
                if [ "$port" = "$P" ]; then
                        net "address forms: $h judged as 127.0.0.1 (allowed)" 0 \
                                "HTTP/1.1 200 OK" - + $LOCAL -- $CLI raw 3128 "$req"
                else
                        net "address forms: $h judged as 127.0.0.1 (other port refused)" 0 \
                                "HTTP/1.1 403 Forbidden" "127.0.0.1:$P2" - \
                                $LOCAL -- $CLI raw 3128 "$req"
                fi
        done
        net "address forms: CONNECT [::1]:PORT not allowed, target [::1]:PORT" 0 \
                "HTTP/1.1 403 Forbidden" "[::1]:$P" . $LOCAL -- \
                $CLI raw 3128 "$(rq CONNECT "[::1]:$P" "[::1]:$P")"
        net "address forms: SOCKS5 IPv6 ::1 not allowed, target [::1]:PORT" 0 "rep=2" \
                "[::1]:$P" . $LOCAL -- $CLI socks ipv6 ::1 "$P"
        # [::1]:P is allowed but the server listens on 127.0.0.1 only: a failed dial, no refusal.
        net "dial: allowed but nothing listens: 502, no violation" 0 "HTTP/1.1 502 Bad Gateway" \
                - . --allow-domain "[::1]:$P" -- \
                $CLI raw 3128 "$(rq CONNECT "[::1]:$P" "[::1]:$P")"
        net "dial: allowed but nothing listens: SOCKS5 reply 5, no violation" 0 "rep=5" - . \
                --allow-domain "[::1]:$P" -- $CLI socks ipv6 ::1 "$P"
        net "tunnel: bytes sent before the CONNECT answer go through the tunnel" 0 \
                "HTTP/1.1 200 Connection established HTTP/1.1 200 OK" - + $LOCAL -- \
                $CLI raw 3128 "$(rq CONNECT "127.0.0.1:$P" "127.0.0.1:$P")$(rq GET \
                        /hello/@M@ 127.0.0.1 "Connection: close")"
        net "address forms: CONNECT 2130706433:PORT judged as 127.0.0.1 (allowed)" 0 \
                "HTTP/1.1 200 Connection established" - . \
                $LOCAL -- $CLI raw 3128 "$(rq CONNECT "2130706433:$P" x)"
}

# ---- hostile requests: injection, limits, slow clients ---------------------------------------

# A request the parser cannot read (CR/LF or NUL where a host or target is, a Host that
# disagrees with the URL, an oversize head) is answered 400/431 and closed. It names no
# destination the proxy could judge, so no violation event is required of it (events ".");
# that it never reaches a server is checked.
t_hostile() {
        net "CRLF: a CR inside the request target is refused (400)" 0 "HTTP/1.1 400 *" . - \
                $LOCAL -- $CLI raw 3128 \
                "$(rq GET "http://127.0.0.1:$P/hello/@M@\\rX-Injected: 1" "127.0.0.1:$P")"
        net "CRLF: a CR inside the Host header is refused (400)" 0 "HTTP/1.1 400 *" . - \
                $LOCAL -- $CLI raw 3128 \
                "$(rq GET "http://127.0.0.1:$P/hello/@M@" "127.0.0.1:$P\\rX-Injected: 1")"
        net "CRLF: %0d%0a in the authority is refused (400)" 0 "HTTP/1.1 400 *" . - \
                $LOCAL -- $CLI raw 3128 \
                "$(rq GET "http://127.0.0.1%0d%0aX-Injected:$P/hello/@M@" "127.0.0.1:$P")"
        net "CRLF: CONNECT with a CR LF in its target is refused (400)" 0 "HTTP/1.1 400 *" . . \
                $LOCAL -- $CLI raw 3128 "$(rq CONNECT "127.0.0.1:$P\\r\\nX-Injected: 1" x)"
        net "Host: a Host header that disagrees with the URL is refused (400)" 0 \
                "HTTP/1.1 400 *" . - --allow-domain a.example.test $LOCAL $NAMES -- \
                $CLI raw 3128 "$(rq GET "http://a.example.test:$P/hello/@M@" "b.example.test:$P")"
        net "NUL: a NUL byte in the request target's host is refused (400)" 0 "HTTP/1.1 400 *" . - \
                $LOCAL -- $CLI raw 3128 \
                "$(rq GET "http://127.0.0.1\\x00.evil:$P/hello/@M@" "127.0.0.1:$P")"
        body=$(printf '%0100000d' 0)
        net "limits: a refusal reaches a client still sending a 100 KB body (403, not a reset)" \
                0 "HTTP/1.1 403 Forbidden" "127.0.0.1:$P2" - $LOCAL -- $CLI raw 3128 \
                "$(rq POST "http://127.0.0.1:$P2/echo/@M@" "127.0.0.1:$P2" \
                        "Content-Length: 100000")$body"
        big=$(printf '%020000d' 0)
        net "limits: an oversize request head (20 KB header) is refused (431)" 0 \
                "HTTP/1.1 431 *" - - $LOCAL -- \
                $CLI raw 3128 "$(get "http://127.0.0.1:$P/hello/@M@" "X-Big: $big")"
        big=$(printf '%08000d' 0)
        net "limits: an 8 KB header under the limit passes" 0 "HTTP/1.1 200 OK" - + \
                $LOCAL -- $CLI raw 3128 \
                "$(get "http://127.0.0.1:$P/hello/@M@" "X-Big: $big" "Connection: close")"
        # One run, three clients at once (the suite's runtime): half an HTTP head, half a SOCKS5
        # greeting, and a legitimate CONNECT tunnel that stays idle past the handshake deadline.
        half="GET http://127.0.0.1:$P/hello/@M@-half HTTP/1.1\\r\\nHost: 127.0.0.1"
        cut="closed after 1[0-3] s (nothing)"
        net "slow-loris: half a head, half a greeting cut after ~10 s; an idle tunnel is not" \
                0 "$cut $cut HTTP/1.1 200 Connection established HTTP/1.1 200 OK" \
                - "--half +-idle" $LOCAL -- sh -c "$CLI slowloris 3128 '$half' > sl1 & \
                        $CLI slowloris 1080 '\\x05\\x02' > sl2 & \
                        $CLI tunnel-idle $P 12 /hello/@M@-idle > idle & \
                        wait; cat sl1 sl2 idle; rm -f sl1 sl2 idle"
        # The proxy out of descriptors (a hard RLIMIT_NOFILE of 128 for the whole run): idle
        # tunnels hold no pipes, so at least 40 fit (src/net/proxy-tunnel.c); the
        # tunnels past its room are refused at once (closed unanswered, or answered 502 when the
        # accept took the last descriptor), not left queued while it spins; its reload
        # of the host's addresses (every 10 s) still finds a descriptor, so it keeps serving,
        # and once the tunnels close a request passes again (src/net/proxy.c, spare_take()).
        printf '#!/bin/sh\nulimit -n 128 && exec "%s" "$@"\n' "$CORDON" > "$IT_TMP/cordon-128fds"
        chmod 755 "$IT_TMP/cordon-128fds"
        _cordon=$CORDON
        CORDON=$IT_TMP/cordon-128fds
        net "limits: out of descriptors, the proxy refuses the excess and keeps serving" 0 \
                "tunnels open refused* refused* HTTP/1.1 200 OK" - + $LOCAL -- \
                $CLI fd-flood $P 100 11 /hello/@M@
        CORDON=$_cordon
}

# ---- relays, the proxy's own ports, tools that ignore the proxy, non-TCP ---------------------

t_bypass() {
        net "relay: a relay inside the sandbox to the HTTP proxy is still judged (refused)" \
                0 "403/000" "127.0.0.1:$P2" - $LOCAL -- $CLI relay 9999 3128 \
                $CURL -x http://127.0.0.1:9999 "http://127.0.0.1:$P2/hello/@M@"
        net "relay: ... and an allowed request through it works" 0 "200/000" - + \
                $LOCAL -- $CLI relay 9999 3128 \
                $CURL -x http://127.0.0.1:9999 "http://127.0.0.1:$P/hello/@M@"
        net "relay: a relayed CONNECT is judged (refused)" 56 "000/403" "127.0.0.1:$T" - \
                $LOCAL -- $CLI relay 9999 3128 $CURL -p -x http://127.0.0.1:9999 \
                --cacert "$CERT" "https://127.0.0.1:$T/hello/@M@"
        net "relay: a relay to the SOCKS5 proxy is judged (refused)" 97 "000/000" \
                "127.0.0.1:$P2" - $LOCAL -- $CLI relay 9999 1080 \
                $CURL -x socks5h://127.0.0.1:9999 "http://127.0.0.1:$P2/hello/@M@"
        net "own ports: CONNECT 127.0.0.1:3128 is judged like any destination (refused)" 0 \
                "HTTP/1.1 403 Forbidden" "127.0.0.1:3128" . $LOCAL -- \
                $CLI raw 3128 "$(rq CONNECT 127.0.0.1:3128 127.0.0.1:3128)"
        net "own ports: CONNECT localhost:1080 through the HTTP proxy (refused)" 0 \
                "HTTP/1.1 403 Forbidden" "localhost:1080" . $LOCAL -- \
                $CLI raw 3128 "$(rq CONNECT localhost:1080 localhost:1080)"
        net "own ports: SOCKS5 CONNECT to 127.0.0.1:3128 (refused)" 0 "rep=2" \
                "127.0.0.1:3128" . $LOCAL -- $CLI socks ipv4 127.0.0.1 3128
        net "bypass: curl --noproxy '*' to the sandbox's own 127.0.0.1 reaches nothing" 7 \
                "000/000" - - $LOCAL -- $CURL --noproxy '*' "http://127.0.0.1:$P/hello/@M@"
        net "bypass: a plain socket connect (no proxy) cannot connect" 0 "error: ECONNREFUSED" \
                - . $LOCAL -- $CLI connect "$P"
        run_in "$WS" $CLI connect "$P"
        if [ "$(cat "$LAST_OUT")" = connected ]; then ok "bypass: control: it connects outside"
        else not_ok "bypass: control: it connects outside"; fi
        net "udp: a datagram to a host UDP listener is sent inside..." 0 "sent" - . \
                $LOCAL -- $CLI udp "$U" "udp-@M@"
        sleep 0.3
        if grep -qF "udp-$MARK" "$SRV/udp.log"; then
                not_ok "udp: ... and never arrives" "udp.log: $(cat "$SRV/udp.log")"
        else
                ok "udp: ... and never arrives"
        fi
        run_in "$WS" $CLI udp "$U" "udp-control-$$"
        sleep 0.3
        if grep -qF "udp-control-$$" "$SRV/udp.log"; then ok "udp: control: it arrives from outside"
        else not_ok "udp: control: it arrives from outside"; fi
}

# ---- --no-network ----------------------------------------------------------------------------

# ---- every TCP client: interception without proxy variables (src/linux/intercept.c) ---------
# The clients here ignore the proxy variables: their names are answered by the sandbox's resolver
# with synthetic addresses (198.18.0.0/15) and their connections redirected to the proxy, which
# judges each as name:port. "a.example.test" is mapped to the host's 127.0.0.1 by NAMES; LOCAL
# lets the proxy dial that address.

# A database client that knows nothing of proxies (redis-cli) against a redis-server this suite
# starts on the host's loopback.
t_redis() {
        if ! command -v redis-server >/dev/null || ! command -v redis-cli >/dev/null; then
                skip "transparent: redis-cli" "redis-server or redis-cli missing (scripts/install-deps.sh)"
                return 0
        fi
        R=$($PY -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])')
        redis-server --port "$R" --bind 127.0.0.1 --save '' --appendonly no \
                --dir "$SRV" > "$SRV/redis.log" 2>&1 &
        REDIS_PID=$!
        for _ in $(seq 50); do redis-cli -p "$R" ping >/dev/null 2>&1 && break; sleep 0.1; done
        rl="--allow-domain a.example.test:$R --allow-domain 127.0.0.1:$R $NAMES"
        net "transparent: redis-cli to an allowed name:port" 0 "PONG" - . $rl -- \
                redis-cli -h a.example.test -p "$R" ping
        # (redis-cli tries twice: one violation per connection, so the count is not checked.)
        net "transparent: redis-cli to a port not allowed is reset" "!0" "*" . . \
                --allow-domain a.example.test:1 \
                --allow-domain 127.0.0.1:$R $NAMES -- redis-cli -h a.example.test -p "$R" ping
        kill "$REDIS_PID" 2>/dev/null
        REDIS_PID=
}

# A JVM client (a plain java.net.Socket) through the interception: the JVM resolves through
# glibc, so the sandbox's resolver and the redirected TCP path are what it meets.
t_java() {
        if ! command -v java >/dev/null; then
                skip "transparent: a JVM client" "java missing (scripts/install-deps.sh)"
                return 0
        fi
        net "transparent: a JVM client reaches an allowed name:port" 0 "200" - + $1 -- \
                java "$HERE/JavaClient.java" a.example.test "$P" /hello/@M@
        net "transparent: ... and is reset on a port not allowed" 0 "error: SocketException" \
                "a.example.test:$P2~not in allowlist" - $1 -- \
                java "$HERE/JavaClient.java" a.example.test "$P2" /hello/@M@
        net "transparent: ... and cannot resolve a name not allowed" 0 "error: UnknownHostException" \
                "b.example.test~not in allowlist" - $1 -- \
                java "$HERE/JavaClient.java" b.example.test "$P" /hello/@M@
}

t_transparent() {
        tr="--allow-domain a.example.test:$P $LOCAL $NAMES"
        net "transparent: curl --noproxy reaches an allowed name:port" 0 "200/000" - + \
                $tr -- $CURL --noproxy '*' "http://a.example.test:$P/hello/@M@"
        net "transparent: ... the same name on a port not allowed is reset" "!0" "000/000" \
                "a.example.test:$P2~not in allowlist" - $tr -- \
                $CURL --noproxy '*' "http://a.example.test:$P2/hello/@M@"
        net "transparent: a plain TCP client (no proxy support at all)" 0 "HTTP/1.? 200 OK" - + \
                $tr -- $CLI tcp a.example.test "$P" "GET /hello/@M@ HTTP/1.0\r\n\r\n"
        net "transparent: a plain TCP client refused by rule is reset" 0 "error: ECONNRESET" \
                "a.example.test:$P2~not in allowlist" - $tr -- \
                $CLI tcp a.example.test "$P2" "GET /hello/@M@ HTTP/1.0\r\n\r\n"
        net "transparent: a name not allowed does not even resolve" 0 "error: *not known*" \
                "b.example.test~not in allowlist" - $tr -- \
                $CLI tcp b.example.test "$P" "GET /hello/@M@ HTTP/1.0\r\n\r\n"
        net "transparent: Python urllib with proxies disabled" 0 "200" - + $tr -- $PY -c \
                "import urllib.request as u; o = u.build_opener(u.ProxyHandler({}));
print(o.open('http://a.example.test:$P/hello/@M@', timeout=20).status)"
        if command -v node >/dev/null; then
                # Node's built-in fetch ignores HTTP(S)_PROXY.
                net "transparent: Node's built-in fetch" 0 "200" - + $tr -- node -e \
                        "fetch('http://a.example.test:$P/hello/@M@').then(r => console.log(r.status))"
        else
                skip "transparent: Node's built-in fetch" "node missing (scripts/install-deps.sh)"
        fi
        net "transparent: an IPv4 literal not allowed is reset" "!0" "000/000" \
                "192.0.2.1:81~not in allowlist" . $tr -- $CURL --noproxy '*' "http://192.0.2.1:81/@M@"
        net "transparent: an IPv6 literal not allowed is reset" "!0" "000/000" \
                "[2001:db8::1]:81~not in allowlist" . $tr -- $CURL --noproxy '*' "http://[2001:db8::1]:81/@M@"
        net "transparent: a synthetic address nothing resolved is reset" "!0" "000/000" \
                "198.18.200.1:80~*never gave out" . $tr -- $CURL --noproxy '*' "http://198.18.200.1/@M@"
        t_redis "$tr"
        t_java "$tr"
        # Domain fronting: a connection made by name asks its server for another name.
        net "transparent: HTTP to an allowed name asking for another Host is reset" "!0" \
                "000/000" "a.example.test:$P~asks for b.example.test*" - $tr -- \
                $CURL --noproxy '*' -H "Host: b.example.test" "http://a.example.test:$P/hello/@M@"
        net "transparent: ... or naming another host in an absolute-form target" 0 \
                "error: ECONNRESET" "a.example.test:$P~asks for b.example.test*" - $tr -- \
                $CLI tcp a.example.test "$P" "GET http://b.example.test/hello/@M@ HTTP/1.0\r\n\r\n"
        net "transparent: ... or a target and a Host that disagree (a server may use either)" 0 \
                "error: ECONNRESET" "a.example.test:$P~*names no single valid host" - $tr -- \
                $CLI tcp a.example.test "$P" \
                "GET http://b.example.test/hello/@M@ HTTP/1.1\r\nHost: a.example.test\r\n\r\n"
        tl="--allow-domain tls.example.test:$T --allow-domain 127.0.0.1:$T $NAMES"
        net "transparent: TLS to an allowed name with its own server name" 0 "200/000" - + \
                $tl -- $CURL --noproxy '*' --cacert "$CERT" "https://tls.example.test:$T/hello/@M@"
        net "transparent: TLS whose server name is another than the name resolved is reset" \
                "!0" "000/000*" "tls.example.test:$T~asks for other.example.test*" - $tl -- \
                sh -c "getent hosts tls.example.test >/dev/null &&
                exec $CURL --noproxy '*' -k --resolve other.example.test:$T:198.18.0.1 \
                https://other.example.test:$T/hello/@M@"
        # Allowed by name, but its address is one the guard refuses (no LOCAL entry for it).
        net "transparent: a name that resolves only to refused addresses is reset" "!0" \
                "000/000" "a.example.test:$P~resolves only to refused addresses*" - \
                --allow-domain a.example.test:$P $NAMES -- $CURL --noproxy '*' "http://a.example.test:$P/@M@"
}

# ---- the sandbox's resolver (src/net/proxy-dns.c) --------------------------------------------

t_dns() {
        net "dns: an allowed name resolves to a synthetic address" 0 "198.18.0.1 a.example.test" \
                - . --allow-domain a.example.test -- sh -c "getent hosts a.example.test | tr -s ' '"
        net "dns: a name not allowed is NXDOMAIN, reported once" 2 "" \
                "unlisted.example.invalid~not in allowlist" . -- \
                sh -c "getent hosts unlisted.example.invalid; getent ahosts unlisted.example.invalid"
        net "dns: a query sent to another server is answered by the sandbox's resolver" 0 \
                "A 198.18.0.1" - . --allow-domain a.example.test -- $CLI dns 192.0.2.53 a.example.test
        net "dns: ... and never forwarded for a name not allowed" 0 "rcode 3" \
                "leak.example.invalid~not in allowlist" . -- $CLI dns 192.0.2.53 leak.example.invalid
        net "dns: the sandbox's resolv.conf names its own resolver only (no search domains)" 0 \
                "nameserver 127.0.0.1" - . -- sh -c "grep -v '^#' /etc/resolv.conf"
        # The wildcard budget (limits.wildcardNames): names under one wildcard entry, per run.
        printf '{"limits": {"wildcardNames": 2}}\n' > "$IT_TMP/wild2.json"
        net "dns: a third name under one wildcard is past a budget of two" 0 \
                "A 198.18.0.1 A 198.18.0.2 rcode 3 A 198.18.0.1" "c.wild.test~wildcard budget*" . \
                --allow-domain '*.wild.test' --policy "$IT_TMP/wild2.json" -- sh -c \
                "for n in a b c a; do $CLI dns 192.0.2.53 \$n.wild.test; done"
        printf '{"limits": {"wildcardNames": 1}}\n' > "$IT_TMP/wild1.json"
        net "dns: the budget holds for names the proxy resolves too" 0 "200/000?403/000?" \
                "b.example.test:$P~wildcard budget*" . --allow-domain '*.example.test' $LOCAL \
                $NAMES --policy "$IT_TMP/wild1.json" -- sh -c \
                "$CURL http://a.example.test:$P/hello/@M@; $CURL http://b.example.test:$P/hello/@M@"
        net "dns: an allowed name denied for every port is NXDOMAIN" 0 "rcode 3" \
                "a.example.test~a.example.test" . --allow-domain '*.example.test' \
                --deny-domain a.example.test -- $CLI dns 192.0.2.53 a.example.test
}

# ---- an upstream proxy (egressUpstream, src/net/proxy-upstream.c) ---------------------------
# The rules decide first; what they allow is asked of the upstream by name and never resolved or
# dialled here. netsrv.py's upstreams log every request they get; they map the suite's names to
# 127.0.0.1 themselves (no --resolve: with an upstream the hosts map is not consulted).

# up NAME RC OUT EVENTS HITS ASKED [CORDON-RUN-OPTIONS...] -- CMD...: `net` with the upstreams'
# log emptied first, then one more check: ASKED "-" means no upstream was asked anything, else
# the text one of its lines must hold.
up() {
        _up_name=$1 _up_asked=$6
        : > "$SRV/upstream.log"
        _u1=$1 _u2=$2 _u3=$3 _u4=$4 _u5=$5
        shift 6
        net "$_u1" "$_u2" "$_u3" "$_u4" "$_u5" "$@"
        if [ "$_up_asked" = - ]; then
                if [ -s "$SRV/upstream.log" ]; then
                        not_ok "$_up_name: ... and no upstream was asked" \
                                "$(tr '\n' '|' < "$SRV/upstream.log")"
                else ok "$_up_name: ... and no upstream was asked"; fi
        elif grep -qF -- "$_up_asked" "$SRV/upstream.log"; then
                ok "$_up_name: ... the upstream was asked '$_up_asked'"
        else
                not_ok "$_up_name: ... the upstream was asked '$_up_asked'" \
                        "log: $(tr '\n' '|' < "$SRV/upstream.log")"
        fi
}

t_upstream() {
        uh="--upstream-proxy http://127.0.0.1:$UP_HTTP_PORT"
        us="--upstream-proxy socks5://127.0.0.1:$UP_SOCKS_PORT"
        uha="--upstream-proxy http://cordon-up:s3cr3t-up@127.0.0.1:$UP_HTTP_AUTH_PORT"
        usa="--upstream-proxy socks5h://cordon-up:s3cr3t-up@127.0.0.1:$UP_SOCKS_AUTH_PORT"
        a="--allow-domain a.example.test"
        hdr="-s -o /dev/null --max-time 20 -D -"
        up "upstream: http:// through an HTTP upstream (CONNECT by name)" 0 "200/000" - + \
                "up-http CONNECT a.example.test:$P user=-" $a $uh -- \
                $CURL "http://a.example.test:$P/hello/@M@"
        up "upstream: https through an HTTP upstream" 0 "200/200" - + \
                "up-http CONNECT tls.example.test:$T user=-" --allow-domain tls.example.test $uh \
                -- $CURL --cacert "$CERT" "https://tls.example.test:$T/hello/@M@"
        up "upstream: a SOCKS5 client through an HTTP upstream" 0 "200/000" - + \
                "up-http CONNECT a.example.test:$P" $a $uh -- \
                $CURL -x socks5h://127.0.0.1:1080 "http://a.example.test:$P/hello/@M@"
        up "upstream: a destination the rules refuse never reaches the upstream" 0 "403/000" \
                "b.example.test:$P~not in allowlist" - - $a $uh -- \
                $CURL "http://b.example.test:$P/hello/@M@"
        up "upstream: a denied one neither" 56 "000/403" "a.example.test:$T~*a.example.test*" - - \
                $a --deny-domain "a.example.test:$T" $uh -- \
                $CURL --cacert "$CERT" "https://a.example.test:$T/hello/@M@"
        up "upstream: the hosts map is not consulted: the name goes to the upstream" 0 \
                "200/000" - + "up-http CONNECT a.example.test:$P user=-" $a $NAMES $uh -- \
                $CURL "http://a.example.test:$P/hello/@M@"
        printf '{"limits": {"wildcardNames": 1}}\n' > "$IT_TMP/up-wild1.json"
        up "upstream: the wildcard budget holds before the upstream" 0 "200/000?403/000?" \
                "b.example.test:$P~wildcard budget*" "+-a --b" "CONNECT a.example.test:$P" \
                --allow-domain '*.example.test' --policy "$IT_TMP/up-wild1.json" $uh -- sh -c \
                "$CURL http://a.example.test:$P/hello/@M@-a; $CURL http://b.example.test:$P/hello/@M@-b"
        if grep -qF "CONNECT b.example.test" "$SRV/upstream.log"; then
                not_ok "upstream: ... the name past the budget was never asked of it"
        else ok "upstream: ... the name past the budget was never asked of it"; fi
        up "upstream: an address still meets the guard (metadata), before the upstream" 0 \
                "403/000" "169.254.169.254:80" - - --allow-domain 169.254.169.254:80 $uh -- \
                $CURL "http://169.254.169.254/latest/@M@"
        up "upstream: an allowed address is asked as the address" 0 "200/000" - + \
                "up-http CONNECT 127.0.0.1:$P user=-" $LOCAL $uh -- \
                $CURL "http://127.0.0.1:$P/hello/@M@"
        up "upstream: a SOCKS5 upstream (the name as ATYP 3)" 0 "200/000" - + \
                "up-socks CONNECT a.example.test:$P atyp=3 user=-" $a $us -- \
                $CURL "http://a.example.test:$P/hello/@M@"
        up "upstream: a SOCKS5 upstream with username/password" 0 "200/200" - + \
                "up-socks-auth CONNECT tls.example.test:$T atyp=3 user=cordon-up" \
                --allow-domain tls.example.test $usa -- \
                $CURL --cacert "$CERT" "https://tls.example.test:$T/hello/@M@"
        up "upstream: an HTTP upstream with Basic credentials" 0 "200/000" - + \
                "up-http-auth CONNECT a.example.test:$P user=cordon-up" $a $uha -- \
                $CURL "http://a.example.test:$P/hello/@M@"
        up "upstream: wrong HTTP credentials: 502 naming the 407, no violation" 0 \
                "HTTP/1.1 502 Bad Gateway X-Cordon-Error: the upstream proxy refused the CONNECT: it answered 407" - - \
                "up-http-auth CONNECT a.example.test:$P user=cordon-up" $a \
                --upstream-proxy "http://cordon-up:wrong-pass@127.0.0.1:$UP_HTTP_AUTH_PORT" -- \
                sh -c "curl $hdr http://a.example.test:$P/hello/@M@ | tr -d '\r' |
                grep -i -e ^x-cordon-error -e '^HTTP/1.1 502'"
        up "upstream: wrong SOCKS5 credentials: a failed dial, no violation" 0 "502/000" - - - \
                $a --upstream-proxy "socks5://cordon-up:wrong-pass@127.0.0.1:$UP_SOCKS_AUTH_PORT" \
                -- $CURL "http://a.example.test:$P/hello/@M@"
        up "upstream: no credentials where the upstream wants them: SOCKS5 reply 5" 0 \
                "rep=5" - - - $a --upstream-proxy "socks5://127.0.0.1:$UP_SOCKS_AUTH_PORT" -- \
                $CLI socks domain a.example.test "$P" "/hello/@M@"
        up "upstream: an upstream that refuses: 502" 56 "000/502" - - \
                "up-refuse CONNECT tls.example.test:$T" --allow-domain tls.example.test \
                --upstream-proxy "http://127.0.0.1:$UP_REFUSE_PORT" -- \
                $CURL --cacert "$CERT" "https://tls.example.test:$T/hello/@M@"
        up "upstream: an upstream nobody listens on: 502" 0 "502/000" - - - $a \
                --upstream-proxy "http://127.0.0.1:$U" -- $CURL "http://a.example.test:$P/hello/@M@"
        up "upstream: the redirected path too (curl --noproxy, the sandbox's resolver)" 0 \
                "200/000" - + "up-http CONNECT a.example.test:$P user=-" $a $uh -- \
                $CURL --noproxy '*' "http://a.example.test:$P/hello/@M@"
        up "upstream: a plain TCP client, redirected, through a SOCKS5 upstream" 0 \
                "HTTP/1.? 200 OK" - + "up-socks CONNECT a.example.test:$P atyp=3" $a $us -- \
                $CLI tcp a.example.test "$P" "GET /hello/@M@ HTTP/1.0\r\n\r\n"
        up "upstream: a server that speaks first, its bytes with the HTTP upstream's answer" 0 \
                "220 cordon banner" - . "up-http CONNECT a.example.test:$BANNER_PORT" $a $uh -- \
                $CLI tcp a.example.test "$BANNER_PORT" ""
        up "upstream: ... and with the SOCKS5 upstream's reply" 0 "220 cordon banner" - . \
                "up-socks CONNECT a.example.test:$BANNER_PORT" $a $us -- \
                $CLI tcp a.example.test "$BANNER_PORT" ""
        up "upstream: fronting is still refused through it" "!0" "000/000" \
                "a.example.test:$P~asks for b.example.test*" - \
                "up-http CONNECT a.example.test:$P" $a $uh -- \
                $CURL --noproxy '*' -H "Host: b.example.test" "http://a.example.test:$P/hello/@M@"
        # The landlock backend's proxy (on the host's loopback, with credentials) is the same.
        if "$CORDON" probe 2>/dev/null | grep -qE '^landlock +(full|partial) '; then
                up "upstream: the landlock backend's proxy goes through it too" 0 "200/000" - + \
                        "up-socks CONNECT a.example.test:$P atyp=3 user=-" --backend landlock $a \
                        $us -- $CURL "http://a.example.test:$P/hello/@M@"
        else
                skip "upstream: the landlock backend's proxy goes through it too" \
                        "no landlock backend here (cordon probe)"
        fi
        # The password is the operator's: never in policy show, an error or an event.
        run_in "$WS" "$CORDON" policy show --upstream-proxy \
                "http://cordon-up:s3cr3t-up@127.0.0.1:$UP_HTTP_AUTH_PORT"
        if [ "$LAST_STATUS" -eq 0 ] && grep -qF "cordon-up:****@127.0.0.1" "$LAST_OUT" &&
                ! grep -qF s3cr3t-up "$LAST_OUT" "$LAST_ERR"; then
                ok "upstream: policy show prints the URL with its password as ****"
        else
                not_ok "upstream: policy show prints the URL with its password as ****" \
                        "status $LAST_STATUS: $(grep -i upstream "$LAST_OUT" "$LAST_ERR")"
        fi
        if grep -qF -e s3cr3t-up -e wrong-pass "$EVENTS_ALL" "$IT_TMP"/log/*.err; then
                not_ok "upstream: no event and no message holds a password" \
                        "$(grep -lF -e s3cr3t-up -e wrong-pass "$EVENTS_ALL" "$IT_TMP"/log/*.err)"
        else
                ok "upstream: no event and no message holds a password"
        fi
}

t_nonet() {
        net "--no-network: an explicitly allowed address:port is refused, and reported" 0 \
                "403/000" "127.0.0.1:$P" - --no-network $LOCAL -- \
                $CURL "http://127.0.0.1:$P/hello/@M@"
        net "--no-network: SOCKS5 refused too (reply 2), and reported" 97 "000/000" \
                "localhost:$P" - --no-network --allow-domain "localhost:$P" -- \
                $CURL -x socks5h://127.0.0.1:1080 "http://localhost:$P/hello/@M@"
        net "--no-network: CONNECT refused, and reported" 56 "000/403" "localhost:$T" - \
                --no-network --allow-domain "localhost:$T" -- \
                $CURL --cacert "$CERT" "https://localhost:$T/hello/@M@"
}

# ---- git over HTTP and SSH, pip ----------------------------------------------------------------

t_git_http() {
        g="$LOCAL $NAMES"
        net "git: clone over HTTP (dumb) through the proxy" 0 "cordon-net-it repository" - . \
                --allow-domain git.example.test $g -- sh -c \
                "git clone -q http://git.example.test:$P/repo.git c-@M@ && cat c-@M@/README"
        net "git: clone over HTTP from a host not allowed is refused" 128 "" \
                "git.example.test:$P~not in allowlist" . $g -- \
                git clone -q "http://git.example.test:$P/repo.git" "c-@M@"
        rm -rf "$WS"/c-mk*
}

# The ssh server. As root: sshd as root, git clone over ssh. As another user: sshd runs as that
# user (it can authenticate nobody else), and runs commands through that account's login shell;
# when that shell is nologin (cordon-test is made so) git-upload-pack cannot run, so the allowed
# case is an sftp transfer (sshd's internal-sftp needs no shell) through the same
# GIT_SSH_COMMAND; the refused case is git clone either way. cordon sets no GIT_SSH_COMMAND:
# the SOCKS5 one here is what a user who wants that path sets.
start_sshd() {
        S=$($PY -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])')
        ssh-keygen -q -t ed25519 -N '' -f "$SRV/ssh-host" || return 1
        ssh-keygen -q -t ed25519 -N '' -f "$WS/id_test" || return 1
        SSH_USER=$(id -un)
        shell=$(getent passwd "$SSH_USER" | cut -d: -f7)
        case $shell in */nologin | */false | "") SSH_GIT=0 ;; *) SSH_GIT=1 ;; esac
        force=
        [ "$SSH_GIT" = 1 ] || force="ForceCommand internal-sftp"
        echo "restrict $(cat "$WS/id_test.pub")" > "$SRV/ssh-authorized"
        echo "[ssh.example.test]:$S $(cut -d' ' -f1,2 "$SRV/ssh-host.pub")" > "$WS/known_hosts"
        cat > "$SRV/sshd_config" <<EOF
Port $S
ListenAddress 127.0.0.1
HostKey $SRV/ssh-host
AuthorizedKeysFile $SRV/ssh-authorized
PidFile none
UsePAM no
StrictModes no
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
AllowTcpForwarding no
X11Forwarding no
Subsystem sftp internal-sftp
LogLevel VERBOSE
$force
EOF
        [ "$(id -u)" -ne 0 ] || mkdir -p /run/sshd # the privilege separation directory
        : > "$SRV/sshd.log"
        /usr/sbin/sshd -D -e -f "$SRV/sshd_config" 2>> "$SRV/sshd.log" &
        SSHD_PID=$!
        for _ in $(seq 50); do
                grep -q 'Server listening' "$SRV/sshd.log" && return 0
                sleep 0.1
        done
        return 1
}

sshd_connections() {
        grep -c 'Connection from' "$SRV/sshd.log" || true
}

t_git_ssh() {
        if ! command -v /usr/sbin/sshd >/dev/null || ! command -v nc >/dev/null; then
                skip "git: clone over ssh" "sshd or nc missing (scripts/install-deps.sh)"
                return 0
        fi
        if ! start_sshd; then
                skip "git: clone over ssh" "sshd did not start: $(tail -n 3 "$SRV/sshd.log")"
                return 0
        fi
        # What a user who wants the explicit SOCKS5 path sets (cordon sets nothing: plain ssh is
        # redirected to the proxy).
        NCSSH="ssh -o ProxyCommand='nc -X 5 -x 127.0.0.1:1080 %h %p'"
        opts="-i $WS/id_test -o UserKnownHostsFile=$WS/known_hosts -o IdentitiesOnly=yes"
        opts="$opts -o BatchMode=yes -o StrictHostKeyChecking=yes -o LogLevel=ERROR"
        s="--allow-domain 127.0.0.1:$S $NAMES"
        if [ "$SSH_GIT" = 1 ]; then
                net "git: clone over ssh (GIT_SSH_COMMAND through SOCKS5)" 0 \
                        "cordon-net-it repository" - . --allow-domain ssh.example.test $s -- \
                        sh -c "GIT_SSH_COMMAND=\"$NCSSH $opts\" git clone -q \
                        ssh://$SSH_USER@ssh.example.test:$S$ROOT/repo.git c-@M@ && cat c-@M@/README"
        else
                echo "# $SSH_USER's login shell is $shell: sshd cannot run git-upload-pack for it;"
                echo "# the allowed case is an sftp transfer through the same GIT_SSH_COMMAND"
                printf '#!/bin/sh\nexec sh -c "%s %s \\"\\$@\\"" ssh "$@"\n' \
                        "$NCSSH" "$opts" > "$WS/ssh-wrap"
                chmod 755 "$WS/ssh-wrap"
                printf 'get %s c-sftp\n' "$ROOT/repo.git/HEAD" > "$WS/sftp-batch"
                net "ssh: sftp through GIT_SSH_COMMAND's SOCKS5 ProxyCommand" 0 \
                        "ref: refs/heads/main" - . --allow-domain ssh.example.test $s -- \
                        sh -c "sftp -q -S ./ssh-wrap -b sftp-batch -P $S \
                        $SSH_USER@ssh.example.test >/dev/null && cat c-sftp"
                rm -f "$WS/c-sftp"
        fi
        net "ssh: cordon sets no GIT_SSH_COMMAND (plain ssh is redirected)" 0 "unset" - . $s -- \
                sh -c 'echo "${GIT_SSH_COMMAND-unset}"'
        net "ssh: plain ssh to the sandbox's own 127.0.0.1 reaches nothing" 255 "" - . \
                --allow-domain ssh.example.test $s -- \
                ssh $opts -p "$S" "$SSH_USER@127.0.0.1" true
        # No ProxyCommand, no GIT_SSH_COMMAND: the name resolves inside, the connection is
        # redirected to the proxy and judged as ssh.example.test:PORT (src/linux/intercept.c).
        printf 'get %s c-sftp\n' "$ROOT/repo.git/HEAD" > "$WS/sftp-batch"
        net "ssh: plain sftp to an allowed name, intercepted (no ProxyCommand)" 0 \
                "ref: refs/heads/main" - . --allow-domain "ssh.example.test:$S" $s -- \
                sh -c "sftp -q $opts -b sftp-batch -P $S $SSH_USER@ssh.example.test >/dev/null &&
                cat c-sftp"
        rm -f "$WS/c-sftp"
        if [ "$SSH_GIT" = 1 ]; then
                net "git: clone over plain ssh, intercepted (GIT_SSH_COMMAND without nc)" 0 \
                        "cordon-net-it repository" - . --allow-domain "ssh.example.test:$S" $s -- \
                        sh -c "GIT_SSH_COMMAND=\"ssh $opts\" git clone -q \
                        ssh://$SSH_USER@ssh.example.test:$S$ROOT/repo.git c-@M@ && cat c-@M@/README"
        fi
        before=$(sshd_connections)
        net "ssh: plain ssh to a port not allowed is reset, never reaching sshd" 255 "" \
                "ssh.example.test:$S~not in allowlist" . --allow-domain ssh.example.test:22 $s -- \
                ssh $opts -p "$S" "$SSH_USER@ssh.example.test" true
        if [ "$(sshd_connections)" = "$before" ]; then ok "ssh: the reset ssh never reached sshd"
        else not_ok "ssh: the reset ssh never reached sshd"; fi
        before=$(sshd_connections)
        net "git: clone over ssh to a host not allowed is refused" 128 "" \
                "ssh.example.test:$S~not in allowlist" . $s -- \
                sh -c "GIT_SSH_COMMAND=\"$NCSSH $opts\" exec git clone -q \
                ssh://$SSH_USER@ssh.example.test:$S$ROOT/repo.git c-@M@"
        if [ "$(sshd_connections)" = "$before" ]; then ok "git: the refused ssh never reached sshd"
        else not_ok "git: the refused ssh never reached sshd"; fi
        rm -rf "$WS"/c-mk*
}

t_pip() {
        pip="$PY -m pip download --no-cache-dir --disable-pip-version-check --no-deps"
        pip="$pip --retries 0 --timeout 20 --trusted-host pypi.example.test"
        pip="$pip --index-url http://pypi.example.test:$P/simple"
        net "pip: download from the local index through the proxy" 0 \
                "tinypkg-1.0-py3-none-any.whl" - . --allow-domain pypi.example.test $LOCAL $NAMES \
                --env-set PIP_CONFIG_FILE=/dev/null -- \
                sh -c "$pip -q -d dl-@M@ tinypkg && ls dl-@M@"
        net "pip: the index host not allowed is refused" 1 "" \
                "pypi.example.test:$P~not in allowlist" . $LOCAL $NAMES \
                --env-set PIP_CONFIG_FILE=/dev/null -- $pip -q -d "dl-@M@" tinypkg
        rm -rf "$WS"/dl-mk*
}

# ---- the events, validated -------------------------------------------------------------------

t_events() {
        schema=$HERE/../../../docs/events.schema.json
        validate=$HERE/../../lib/events_validate.py
        if [ ! -r "$schema" ] || [ ! -r "$validate" ]; then
                skip "events: every line valid against docs/events.schema.json" "no schema here"
                return 0
        fi
        if $PY "$validate" "$schema" "$EVENTS_ALL" > "$IT_TMP/log/validate" 2>&1; then
                ok "events: all $(wc -l < "$EVENTS_ALL") lines valid against events.schema.json"
        else
                not_ok "events: every line valid against docs/events.schema.json" \
                        "$(head -n 3 "$IT_TMP/log/validate" | tr '\n' ' ')"
        fi
}

# ---- main ------------------------------------------------------------------------------------

echo "# cordon network suite as $(id -un) (uid $(id -u)) in $IT_TMP"
echo "# cordon: $CORDON"
for t in curl git openssl; do
        command -v "$t" >/dev/null && continue
        skip "network suite" "$t is missing (scripts/install-deps.sh)"
        finish
done
if ! make_fixture; then
        not_ok "fixture: the servers started"
        finish
fi
# cordon's own diagnostics from a sanitizer build (the proxy process writes to cordon's stderr).
t_sanitizers() {
        bad=$(grep -lE 'AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|runtime error:' \
                "$IT_TMP"/log/*.err 2>/dev/null | head -n 3)
        if [ -z "$bad" ]; then ok "sanitizers: no report in any run's stderr"
        else not_ok "sanitizers: no report in any run's stderr" "$bad" \
                "$(grep -hm3 -E 'Sanitizer|runtime error' $bad)"; fi
}

# shellcheck source=tests/net/it/rules.sh
. "$HERE/rules.sh"
# shellcheck source=tests/net/it/gitpush.sh
. "$HERE/gitpush.sh"
# shellcheck source=tests/net/it/creds.sh
. "$HERE/creds.sh"

ONLY=${CORDON_IT_ONLY:-}
for group in http https socks keepalive pipelining bodies match deny_case guard addresses hostile bypass \
        transparent dns upstream nonet rules gitpush gitpush_layers creds \
        git_http git_ssh pip events sanitizers; do
        case " $ONLY " in "  " | *" $group "*) ;; *) continue ;; esac
        echo "# -- $group"
        "t_$group"
done
finish
