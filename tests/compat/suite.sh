#!/bin/sh
# tests/compat/suite.sh: everyday agent tasks under the built-in default policy, each asserting
# that it works — npm install and npx from the real npm registry (the one remote host this suite
# reaches, through the sandbox's egress proxy), a second install served from the sandbox-owned
# tool cache, python3 -m venv + pip from a local index, git init/commit/clone/push against local
# repositories and a loopback HTTP server, make + cc, tar of thousands of files, ls -l and id — and
# their security twins: the host's own npm cache unchanged, the tool cache root never taken from a
# symlink or another user, a name rule still refusing .env in the workspace.
#
#   suite.sh CORDON IT_TMP LIB_DIR NET_DIR
#
# Run by run.sh (as root, and again as an unprivileged user; native and landlock backends).
# LIB_DIR holds the integration suite's lib.sh (TAP-like output, run_in, sb), NET_DIR the network
# suite's netsrv.py (a loopback HTTP server and a PEP 503 index). Output: see lib.sh.
set -u

CORDON=$1
IT_TMP=$2
LIB_DIR=$3
NET_DIR=$4
BACKEND=${CORDON_IT_BACKEND:-native}
MARK=CORDON-COMPAT-HOST-CACHE-5d1e

# shellcheck source=tests/integration/lib.sh
. "$LIB_DIR/lib.sh"

PY=/usr/bin/python3 # not a shim from the caller's PATH: the sandbox sees the system's
FAKE_HOME=$IT_TMP/home
WS=$IT_TMP/ws
OUTSIDE=$IT_TMP/outside
SRV=$IT_TMP/srv
ROOT=$IT_TMP/www
CACHE=$FAKE_HOME/.cache/cordon/tools # the tool cache root (docs/design/tool-caches.md)
NPM="npm --no-audit --no-fund --no-update-notifier"
SRV_PID=

stop_servers() {
        [ -n "$SRV_PID" ] && kill "$SRV_PID" 2>/dev/null
        SRV_PID=
}
trap 'stop_servers' EXIT

git_q() {
        git -c user.name=cordon-compat -c user.email=compat@example.invalid \
                -c init.defaultBranch=main "$@"
}

# A fingerprint of a tree: every entry's path, type, size, mode and content hash.
tree_sum() {
        (cd "$1" && find . -printf '%p %y %s %m\n' | sort && find . -type f -exec sha256sum {} + |
                sort) | sha256sum | cut -d' ' -f1
}

make_fixture() {
        mkdir -p "$IT_TMP/log" "$FAKE_HOME" "$WS" "$OUTSIDE" "$SRV" "$ROOT" || return 1
        # The invoking user's own npm cache, with a marker: it must come out unchanged.
        mkdir -p "$FAKE_HOME/.npm/_cacache/index-v5" || return 1
        echo "$MARK" > "$FAKE_HOME/.npm/_cacache/index-v5/marker"
        echo "$MARK" > "$FAKE_HOME/.npm/marker"
        HOST_NPM_SUM=$(tree_sum "$FAKE_HOME/.npm")
        git_q init -q "$WS" && git_q -C "$WS" commit -q --allow-empty -m init || return 1
        mkdir -p "$WS/mk" "$WS/npm1" "$WS/npm2" "$WS/py"
        printf 'all: hello\nhello: hello.c\n\tcc -O0 -o hello hello.c\n' > "$WS/mk/Makefile"
        printf '#include <stdio.h>\nint main(void) { puts("hello"); return 0; }\n' > "$WS/mk/hello.c"
        # A bare repository in the workspace to push to, and one served over HTTP to clone.
        git_q init -q "$SRV/src" && echo "compat repository" > "$SRV/src/README" &&
                git_q -C "$SRV/src" add README && git_q -C "$SRV/src" commit -qm init &&
                git clone -q --bare "$SRV/src" "$WS/remote.git" &&
                git clone -q --bare "$SRV/src" "$ROOT/repo.git" &&
                git -C "$ROOT/repo.git" update-server-info || return 1
        make_tarball || return 1
        start_server
}

# 3000 files in 30 directories.
make_tarball() {
        mkdir -p "$IT_TMP/tarsrc" || return 1
        $PY - "$IT_TMP/tarsrc" <<'EOF' || return 1
import os, sys
for d in range(30):
    os.makedirs(os.path.join(sys.argv[1], "d%02d" % d))
    for f in range(100):
        with open(os.path.join(sys.argv[1], "d%02d" % d, "f%03d.txt" % f), "w") as fh:
            fh.write("file %d of directory %d\n" % (f, d))
EOF
        tar czf "$WS/many.tgz" -C "$IT_TMP/tarsrc" .
}

start_server() {
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
                -subj /CN=localhost -keyout "$SRV/tls-key" -out "$SRV/tls-cert" 2>/dev/null ||
                return 1
        $PY "$NET_DIR/netsrv.py" pip-index "$ROOT" || return 1
        : > "$SRV/access.log"
        : > "$SRV/udp.log"
        $PY "$NET_DIR/netsrv.py" serve "$SRV" "$ROOT" "$SRV/tls-cert" "$SRV/tls-key" &
        SRV_PID=$!
        for _ in $(seq 100); do [ -f "$SRV/ports" ] && break; sleep 0.1; done
        [ -f "$SRV/ports" ] || return 1
        . "$SRV/ports"
        P=$HTTP_PORT
        # Loopback only: the names resolve to 127.0.0.1 in the proxy (--resolve).
        LOCAL="--resolve pypi.example.test=127.0.0.1 --resolve git.example.test=127.0.0.1"
        LOCAL="$LOCAL --allow-domain pypi.example.test:$P --allow-domain git.example.test:$P"
        # A name that resolves to loopback passes only with the address:port allowed explicitly.
        LOCAL="$LOCAL --allow-domain 127.0.0.1:$P"
}

# works NAME CMD...: the command inside the sandbox exits 0 (a fatal line is a failure too).
works() {
        name=$1
        shift
        sb -- "$@"
        if [ "$LAST_STATUS" -eq 0 ] && [ "$(fatal_lines)" -eq 0 ]; then ok "$name"
        else not_ok "$name" "status $LAST_STATUS"; fi
}

# works_with NAME "CORDON-OPTIONS" CMD...
works_with() {
        name=$1
        opts=$2
        shift 2
        # shellcheck disable=SC2086
        sb $opts -- "$@"
        if [ "$LAST_STATUS" -eq 0 ] && [ "$(fatal_lines)" -eq 0 ]; then ok "$name"
        else not_ok "$name" "status $LAST_STATUS"; fi
}

check() { # check NAME CONDITION-COMMAND...
        name=$1
        shift
        if "$@"; then ok "$name"; else not_ok "$name" "host check failed: $*"; fi
}

# fatal_with NAME CODE TEXT: the last run failed closed: 125, exactly one fatal line with CODE
# that mentions TEXT.
fatal_with() {
        if [ "$LAST_STATUS" = 125 ] && [ "$(fatal_lines)" = 1 ] &&
                grep "^cordon: fatal: $2: " "$LAST_ERR" | grep -q -- "$3"; then
                ok "$1"
        else
                not_ok "$1" "expected exit 125 and one '$2' fatal line mentioning '$3'"
        fi
}

# ---- npm and npx ------------------------------------------------------------------------------

t_npm() {
        SB_DIR=$WS/npm1 works "npm install of a package with a dependency (is-odd -> is-number)" \
                $NPM install is-odd@3.0.1
        check "npm install: the dependency is in the workspace on the host" \
                test -f "$WS/npm1/node_modules/is-number/package.json"
        SB_DIR=$WS/npm1 works "node requires the installed package" \
                node -e 'process.exit(require("is-odd")(3) ? 0 : 1)'
        check "npm's cache is the sandbox-owned one (tool cache root)" \
                test -d "$CACHE/npm/_cacache"
        check "the tool cache root is the user's own, mode 0700" \
                test "$(stat -c '%u %a' "$CACHE")" = "$(id -u) 700"
        SB_DIR=$WS/npm2 works "a second npm install is served from the sandbox cache (--offline)" \
                $NPM install --offline is-odd@3.0.1
        check "npm install --offline: the dependency is in place" \
                test -f "$WS/npm2/node_modules/is-number/package.json"
        sb -- npx --yes semver@7.6.3 -r '>=1.0.0' 1.2.3
        if [ "$LAST_STATUS" -eq 0 ] && [ "$(cat "$LAST_OUT")" = 1.2.3 ]; then
                ok "npx runs a package's binary from the registry (semver)"
        else not_ok "npx runs a package's binary from the registry (semver)"; fi
        sb -- npx --offline --yes semver@7.6.3 2.0.0
        if [ "$LAST_STATUS" -eq 0 ] && [ "$(cat "$LAST_OUT")" = 2.0.0 ]; then
                ok "npx --offline runs the binary from the sandbox cache"
        else not_ok "npx --offline runs the binary from the sandbox cache"; fi
}

# The security twins of t_npm: the host's own cache is neither used nor writable.
t_host_cache() {
        check "the host's ~/.npm is unchanged after sandboxed installs" \
                test "$(tree_sum "$FAKE_HOME/.npm")" = "$HOST_NPM_SUM"
        sb -- sh -c 'echo poisoned > "$HOME/.npm/_cacache/index-v5/marker"'
        if [ "$LAST_STATUS" -ne 0 ] && grep -qx "$MARK" "$FAKE_HOME/.npm/_cacache/index-v5/marker"
        then ok "the host's ~/.npm cannot be poisoned from inside"
        else not_ok "the host's ~/.npm cannot be poisoned from inside"; fi
        sb -- sh -c 'npm config get cache'
        if [ "$(cat "$LAST_OUT")" = "$CACHE/npm" ]; then ok "npm config get cache names the sandbox cache"
        else not_ok "npm config get cache names the sandbox cache" "got $(cat "$LAST_OUT")"; fi
}

# Packages unpack test fixtures and CA bundles into the caches (uv's certifi/cacert.pem, a
# crate's tests/key.pem): denyCreateNames do not hold there; .cordon and the workspace's rules do.
t_cache_names() {
        works "a *.pem and a .env unpack into the tool cache" sh -c \
                'mkdir -p "$1/uv/t" && echo x > "$1/uv/t/cacert.pem" && echo x > "$1/uv/t/.env"' \
                sh "$CACHE"
        check "the cache's cacert.pem is on the host" test -f "$CACHE/uv/t/cacert.pem"
        rm -rf "$CACHE/uv/t"
        sb -- sh -c 'mkdir -p "$1/uv/t/.cordon"' sh "$CACHE"
        if [ "$LAST_STATUS" -ne 0 ] && [ ! -e "$CACHE/uv/t/.cordon" ]; then
                ok "no .cordon in the tool cache either"
        else not_ok "no .cordon in the tool cache either"; fi
        rm -rf "$CACHE/uv/t"
}

# Every built-in tool points into the root; env.set and "toolCaches": false win.
t_tool_env() {
        sb -- sh -c 'for v in npm_config_cache PNPM_HOME YARN_CACHE_FOLDER \
                BUN_INSTALL_CACHE_DIR PIP_CACHE_DIR UV_CACHE_DIR CARGO_HOME GOMODCACHE GOCACHE \
                GRADLE_USER_HOME MAVEN_OPTS CLANG_MODULE_CACHE_PATH; do eval "echo \$v=\${$v:-}"; done'
        missing=$(grep -v "=.*$CACHE/" "$LAST_OUT" | tr '\n' ' ')
        if [ "$LAST_STATUS" -eq 0 ] && [ -z "$missing" ]; then
                ok "npm pnpm yarn bun pip uv cargo go gradle maven clang point into the tool cache root"
        else not_ok "every built-in tool points into the tool cache root" "not: $missing"; fi
        printf '{"toolCaches": false}\n' > "$IT_TMP/off.json"
        sb --policy "$IT_TMP/off.json" -- sh -c 'test -z "${npm_config_cache:-}${GOCACHE:-}"'
        if [ "$LAST_STATUS" -eq 0 ]; then ok "\"toolCaches\": false sets no cache variable"
        else not_ok "\"toolCaches\": false sets no cache variable"; fi
        sb --policy "$IT_TMP/off.json" -- sh -c 'echo x > "$1/npm/x"' sh "$CACHE"
        if [ "$LAST_STATUS" -ne 0 ] && [ ! -e "$CACHE/npm/x" ]; then
                ok "\"toolCaches\": false: the root is not writable either"
        else not_ok "\"toolCaches\": false: the root is not writable either"; rm -f "$CACHE/npm/x"; fi
        printf '{"toolCaches": {"extra": [{"name": "sbt", "env": "COURSIER_CACHE"}]}}\n' \
                > "$IT_TMP/extra.json"
        sb --policy "$IT_TMP/extra.json" -- sh -c 'mkdir -p "$COURSIER_CACHE" && echo "$COURSIER_CACHE"'
        if [ "$LAST_STATUS" -eq 0 ] && [ "$(cat "$LAST_OUT")" = "$CACHE/sbt" ] && [ -d "$CACHE/sbt" ]
        then ok "toolCaches.extra: a tool cordon does not know gets <root>/NAME"
        else not_ok "toolCaches.extra: a tool cordon does not know gets <root>/NAME"; fi
        sb --env-set GOCACHE=/var/empty -- sh -c 'echo "$GOCACHE"'
        if [ "$(cat "$LAST_OUT")" = /var/empty ]; then ok "env.set wins over a tool cache variable"
        else not_ok "env.set wins over a tool cache variable" "got $(cat "$LAST_OUT")"; fi
        run_in "$WS" "$CORDON" policy show --json
        if grep -q '"env": "npm_config_cache"' "$LAST_OUT" && grep -q '"toolCaches"' "$LAST_OUT"
        then ok "cordon policy show --json lists the tool caches"
        else not_ok "cordon policy show --json lists the tool caches"; fi
}

# What a tool obeys rather than caches stays read-only in the cache root (cargo's config and
# credentials, gradle's init scripts and properties); the caches themselves stay writable.
t_cache_config() {
        sb -- sh -c 'mkdir -p "$CARGO_HOME/registry" "$GRADLE_USER_HOME/caches" &&
                     touch "$CARGO_HOME/registry/x" "$GRADLE_USER_HOME/caches/x"'
        if [ "$LAST_STATUS" -eq 0 ]; then ok "cargo's registry and gradle's caches are writable"
        else not_ok "cargo's registry and gradle's caches are writable"; fi
        for f in cargo/config.toml cargo/config cargo/credentials.toml gradle/init.d/evil.gradle \
                gradle/init.gradle gradle/gradle.properties; do
                sb -- sh -c 'mkdir -p "$(dirname "$1")"; echo planted > "$1"' sh "$CACHE/$f"
                if [ "$LAST_STATUS" -ne 0 ] && [ ! -e "$CACHE/$f" ]; then
                        ok "planting $f in the tool caches is refused"
                else not_ok "planting $f in the tool caches is refused"; rm -rf "$CACHE/$f"; fi
        done
}

# Where the root is without a home directory, and the roots cordon refuses to use.
t_cache_root() {
        EXTRA_ENV="HOME=$IT_TMP/no-such-home"
        sb -- sh -c 'mkdir -p "$npm_config_cache" && echo ok > "$npm_config_cache/probe" &&
                     echo "$npm_config_cache"'
        EXTRA_ENV=
        want=/var/tmp/cordon-$(id -u)/cordon/tools/npm
        if [ "$LAST_STATUS" -eq 0 ] && [ "$(tail -n 1 "$LAST_OUT")" = "$want" ] &&
                [ "$(stat -c '%u %a' "/var/tmp/cordon-$(id -u)")" = "$(id -u) 700" ]; then
                ok "no home directory: the cache lives in /var/tmp/cordon-UID (0700, own)"
        else not_ok "no home directory: the cache lives in /var/tmp/cordon-UID (0700, own)"; fi
        # An attacker's symlink where cordon would create its directory.
        mkdir -p "$IT_TMP/xdg-link"
        ln -s "$OUTSIDE" "$IT_TMP/xdg-link/cordon"
        EXTRA_ENV="XDG_CACHE_HOME=$IT_TMP/xdg-link" sb -- true
        fatal_with "a symlinked cache root is refused (fail closed)" LAUNCH_FAILED "symlink"
        check "a symlinked cache root: nothing created where it points" \
                test -z "$(ls -A "$OUTSIDE")"
        mkdir -p "$IT_TMP/xdg-open/cordon" && chmod 777 "$IT_TMP/xdg-open/cordon"
        EXTRA_ENV="XDG_CACHE_HOME=$IT_TMP/xdg-open" sb -- true
        fatal_with "a world-writable cache directory is refused" LAUNCH_FAILED "writable by group"
        if [ "$(id -u)" -eq 0 ] && id -u nobody >/dev/null 2>&1; then
                mkdir -p "$IT_TMP/xdg-other/cordon" && chown nobody "$IT_TMP/xdg-other/cordon"
                EXTRA_ENV="XDG_CACHE_HOME=$IT_TMP/xdg-other" sb -- true
                fatal_with "a cache directory of another user is refused" LAUNCH_FAILED \
                        "another user"
        fi
        # Only root can hand a directory to another user: the root runs (compat-root,
        # compat-landlock-root) check that refusal; the user runs have nothing to count.
        EXTRA_ENV="XDG_CACHE_HOME=$IT_TMP/xdg" sb -- sh -c 'echo "$PIP_CACHE_DIR"'
        EXTRA_ENV=
        if [ "$(cat "$LAST_OUT")" = "$IT_TMP/xdg/cordon/tools/pip" ]; then
                ok "XDG_CACHE_HOME places the root"
        else not_ok "XDG_CACHE_HOME places the root" "got $(cat "$LAST_OUT")"; fi
}

# ---- python --------------------------------------------------------------------------------

t_python() {
        idx="--disable-pip-version-check --retries 0 --timeout 20"
        idx="$idx --trusted-host pypi.example.test --index-url http://pypi.example.test:$P/simple"
        SB_DIR=$WS/py works_with "python3 -m venv" "--events $IT_TMP/log/venv.events" \
                $PY -m venv .venv
        # Which rule refused what, when something was: the name rules are another change's.
        grep -o '"rule":"[^"]*"' "$IT_TMP/log/venv.events" | sort | uniq -c |
                sed 's/^/# info: venv refusals: /'
        SB_DIR=$WS/py works_with "pip install from a local index in the venv" \
                "$LOCAL --env-set PIP_CONFIG_FILE=/dev/null" sh -c ".venv/bin/pip install $idx tinypkg"
        # The same index and cache without ensurepip: the system's pip installs into a venv made
        # --without-pip.
        SB_DIR=$WS/py works "python3 -m venv --without-pip" $PY -m venv --without-pip .venv2
        SB_DIR=$WS/py works_with "pip install --python .venv2 from a local index" \
                "$LOCAL --env-set PIP_CONFIG_FILE=/dev/null" \
                sh -c "$PY -m pip --python .venv2/bin/python install $idx tinypkg &&
                       .venv2/bin/python -c 'import tinypkg'"
        # pip caches only what the server marks cacheable (the local server does not): ask it.
        sb -- $PY -m pip cache dir
        if [ "$LAST_STATUS" -eq 0 ] && [ "$(cat "$LAST_OUT")" = "$CACHE/pip" ]; then
                ok "pip's cache is the sandbox-owned one"
        else not_ok "pip's cache is the sandbox-owned one" "got $(cat "$LAST_OUT")"; fi
}

# ---- git -----------------------------------------------------------------------------------

t_git() {
        works "git init sub + commit" sh -c 'git init -q sub && cd sub && echo a > a &&
                git add a && git -c user.name=c -c user.email=c@example.invalid commit -qm a'
        works "git clone from the workspace's bare repository, commit, push" sh -c '
                git clone -q remote.git c1 && cd c1 && echo change >> README &&
                git -c user.name=c -c user.email=c@example.invalid commit -qam change &&
                git push -q origin HEAD:main'
        check "the push reached the bare repository on the host" \
                test "$(git -C "$WS/remote.git" log --format=%s -n 1 main)" = change
        works_with "git clone over HTTP from a loopback server (through the proxy)" "$LOCAL" \
                git clone -q "http://git.example.test:$P/repo.git" c2
        check "the HTTP clone has the repository's file" test -f "$WS/c2/README"
}

# ---- build, archives, basics ---------------------------------------------------------------

t_build() {
        SB_DIR=$WS/mk works "make + cc" sh -c 'make -s && ./hello'
        check "the built binary is on the host" test -x "$WS/mk/hello"
        works "tar xzf of 3000 files" sh -c 'mkdir -p out && tar xzf many.tgz -C out'
        n=$(find "$WS/out" -type f | wc -l)
        check "tar: all 3000 files are on the host" test "$n" -eq 3000
}

# The refusals glibc's NSS lookups cause (socket(AF_UNIX) for nscd, systemd-userdb) are another
# change's to silence; their number is shown as information, never asserted. Counted in the
# events: the `cordon: denied` lines appear only on a terminal.
t_basics() {
        for c in "ls -l /" "id"; do
                # shellcheck disable=SC2086
                works_with "$c works" "--events $IT_TMP/log/basics.events" $c
                n=$(grep -c '"type":"violation"' "$IT_TMP/log/basics.events")
                echo "# info: '$c': $n refusal(s) reported"
        done
}

t_names() {
        sb -- sh -c 'echo TOKEN=x > .env'
        if [ "$LAST_STATUS" -ne 0 ] && [ ! -e "$WS/.env" ]; then
                ok "a name rule still refuses .env in the workspace"
        else not_ok "a name rule still refuses .env in the workspace"; rm -f "$WS/.env"; fi
}

# `cordon cache list|clear`: on the host, over a tree sandboxed commands wrote (hostile).
t_cache_cmd() {
        run_in "$WS" "$CORDON" cache list
        if [ "$LAST_STATUS" -eq 0 ] && grep -q "^  npm .* npm$" "$LAST_OUT"; then
                ok "cordon cache list shows the npm cache"
        else not_ok "cordon cache list shows the npm cache"; fi
        echo "$MARK" > "$OUTSIDE/keep.txt"
        sb -- sh -c 'ln -s "$1" "$npm_config_cache/evil-dir" &&
                     ln -s "$1/keep.txt" "$npm_config_cache/evil-file" &&
                     mkdir -p "$GOMODCACHE/m@v1/sub" && echo x > "$GOMODCACHE/m@v1/sub/f" &&
                     chmod -R a-w "$GOMODCACHE/m@v1" &&
                     mkdir -p "$npm_config_cache/locked/in" && chmod 000 "$npm_config_cache/locked" &&
                     mkdir "$(dirname "$npm_config_cache")/$(printf "esc\033[2Jname")"' sh "$OUTSIDE"
        [ "$LAST_STATUS" -eq 0 ] || not_ok "planting links and a read-only tree in the cache"
        run_in "$WS" "$CORDON" cache list
        if [ "$LAST_STATUS" -eq 0 ] && ! grep -q "$(printf '\033')" "$LAST_OUT" &&
                grep -q "esc?\[2Jname" "$LAST_OUT"; then
                ok "cordon cache list prints a hostile name without its escape sequence"
        else not_ok "cordon cache list prints a hostile name without its escape sequence"; fi
        run_in "$WS" "$CORDON" cache clear npm
        if [ "$LAST_STATUS" -eq 0 ] && [ ! -e "$CACHE/npm" ] && [ ! -L "$CACHE/npm" ] &&
                grep -qx "$MARK" "$OUTSIDE/keep.txt"; then
                ok "cordon cache clear npm: removed, links out of the cache not followed"
        else not_ok "cordon cache clear npm: removed, links out of the cache not followed"; fi
        rm -rf "$WS/npm2/node_modules"
        SB_DIR=$WS/npm2 sb -- $NPM install --offline is-odd@3.0.1
        if [ "$LAST_STATUS" -ne 0 ]; then ok "after clear npm: an --offline install finds nothing"
        else not_ok "after clear npm: an --offline install finds nothing"; fi
        run_in "$WS" "$CORDON" cache clear go
        if [ "$LAST_STATUS" -eq 0 ] && [ ! -e "$CACHE/go" ]; then
                ok "cordon cache clear go: a read-only module tree is removed"
        else not_ok "cordon cache clear go: a read-only module tree is removed"; fi
        run_in "$WS" "$CORDON" cache clear nmp
        if [ "$LAST_STATUS" = 125 ] && [ "$(fatal_lines)" = 1 ]; then
                ok "cordon cache clear of an unknown tool is a usage error"
        else not_ok "cordon cache clear of an unknown tool is a usage error"; fi
        run_in "$WS" "$CORDON" cache clear
        if [ "$LAST_STATUS" -eq 0 ] && [ -d "$CACHE" ] && [ -z "$(ls -A "$CACHE")" ] &&
                [ "$(ls -A "$OUTSIDE")" = keep.txt ]; then
                ok "cordon cache clear: every cache removed, the root kept"
        else not_ok "cordon cache clear: every cache removed, the root kept"; fi
}

echo "# compatibility suite as $(id -un) (uid $(id -u)), backend $BACKEND"
for tool in node npm git make cc tar openssl; do
        command -v "$tool" >/dev/null || { skip "compatibility suite" "$tool is missing"; finish; }
done
if ! make_fixture; then
        not_ok "fixture" "could not set up the workspace, the repositories or the local server"
        finish
fi
CORDON_IT_ONLY=${CORDON_IT_ONLY:-}
for group in npm host_cache tool_env cache_names cache_config cache_root python git build basics names cache_cmd; do
        case " ${CORDON_IT_ONLY:-$group} " in *" $group "*) ;; *) continue ;; esac
        "t_$group"
done
stop_servers
finish
