#!/bin/sh
# tests/mcp/run.sh: the tests of `cordon mcp` (meson suite mcp), as root or as the unprivileged
# user cordon-test.
#
#   run.sh root|user sdk CORDON        sdk.test.mjs: the official MCP client SDK, from the npm
#                                      registry at the version package-lock.json pins (npm ci,
#                                      in a copy: the source tree gets no node_modules)
#   run.sh root|user protocol CORDON   test_protocol.py: what an SDK never sends
#
# As root, `user` runs the tests through setpriv as cordon-test (created when missing, as
# tests/run-all.sh does) on a copy of cordon and of the tests in a tree that account may read
# under /var/tmp, as clients/run.sh does. Exit: the tests' (0 ok), 77 when skipped; with
# CORDON_TEST_MUST_WORK=1 a skip is a failure.
set -u

who=${1:?root|user}
what=${2:?sdk|protocol}
cordon=${3:?cordon}
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
test_user=cordon-test

skip() {
        echo "1..0 # SKIP $*"
        if [ "${CORDON_TEST_MUST_WORK:-0}" = 1 ]; then
                echo "CORDON_TEST_MUST_WORK=1: a skip is a failure"
                exit 1
        fi
        exit 77
}

[ -x "$cordon" ] || skip "no binary $cordon"
case $what in
sdk) command -v node >/dev/null && command -v npm >/dev/null || skip "node or npm is missing" ;;
protocol) [ -x /usr/bin/python3 ] || skip "/usr/bin/python3 is missing" ;;
*) echo "usage: run.sh root|user sdk|protocol CORDON" >&2; exit 2 ;;
esac

tmp=$(mktemp -d /var/tmp/cordon-mcp-test.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
chmod 755 "$tmp"

# The tests and what they read (docs/mcp.md, README.md), with the SDK installed beside them.
stage() {
        mkdir -p "$tmp/src/tests" "$tmp/src/docs"
        cp -r "$here" "$tmp/src/tests/mcp" && rm -rf "$tmp/src/tests/mcp/node_modules"
        cp "$src/docs/mcp.md" "$tmp/src/docs/" && cp "$src/README.md" "$tmp/src/"
        if [ "$what" = sdk ]; then
                (cd "$tmp/src/tests/mcp" &&
                        npm ci --ignore-scripts --no-audit --no-fund --loglevel=error) ||
                        { echo "npm ci failed"; exit 1; }
        fi
        chmod -R a+rX "$tmp/src"
}

# run_tests TREE CORDON
run_tests() {
        case $what in
        sdk) CORDON=$2 CORDON_SOURCE_DIR=$1 node --test "$1"/tests/mcp/*.test.mjs ;;
        protocol) cd "$1/tests/mcp" && CORDON=$2 /usr/bin/python3 -m unittest -v test_protocol ;;
        esac
}

as_user() {
        setpriv --reuid="$test_user" --regid="$test_user" --clear-groups "$@"
}

ensure_user() {
        command -v setpriv >/dev/null || return 1
        id -u "$test_user" >/dev/null 2>&1 || useradd -M -s /usr/sbin/nologin "$test_user"
}

case $who in
root)
        [ "$(id -u)" -eq 0 ] || skip "not root"
        stage
        run_tests "$tmp/src" "$cordon"
        ;;
user)
        stage
        if [ "$(id -u)" -ne 0 ]; then
                run_tests "$tmp/src" "$cordon"
                exit $?
        fi
        ensure_user || skip "setpriv (util-linux) is missing or $test_user cannot be created"
        mkdir -p "$tmp/bin" "$tmp/work"
        cp "$cordon" "$tmp/bin/" && chmod -R a+rX "$tmp/bin"
        chown "$test_user:" "$tmp/work"
        # A clean environment: the tests give every server a home and a workspace of its own.
        as_user env -i PATH="/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin" HOME="$tmp/work" \
                LC_ALL=C.UTF-8 CORDON_TEST_TMP="$tmp/work" \
                ASAN_OPTIONS="${ASAN_OPTIONS:-}" UBSAN_OPTIONS="${UBSAN_OPTIONS:-}" \
                sh "$tmp/src/tests/mcp/run.sh" user-staged "$what" \
                "$tmp/bin/$(basename "$cordon")" "$tmp/src"
        ;;
# The second half of `user` as root: already cordon-test, in the staged tree.
user-staged) run_tests "${4:?tree}" "$cordon" ;;
*) echo "usage: run.sh root|user sdk|protocol CORDON" >&2; exit 2 ;;
esac
