#!/bin/sh
# tests/compat/run.sh: runs the compatibility suite (suite.sh) as root or as an unprivileged user
# (meson tests compat-root, compat-user, and with CORDON_IT_BACKEND=landlock compat-landlock-root
# and compat-landlock-user; suite 'compat').
#
#   run.sh root|user NOSANDBOX
#
# cordon is $CORDON, else $CORDON_BUILD_DIR/cordon. As root, `user` creates the account
# cordon-test (no home, no shell) when missing and runs the suite through setpriv with a tree that
# account owns under /var/tmp. Files the account cannot reach are copied into that tree. With
# CORDON_IT_BACKEND=landlock, cordon runs under `nosandbox --only-userns` (a host without user
# namespaces), so every run takes the landlock backend. The suite reaches one remote host,
# registry.npmjs.org (through the sandbox's egress proxy); everything else is on loopback.
# What this shares with the other suites' drivers is in tests/lib/runner.sh.
#
# Exit: the suite's (0 ok, 1 failures), 77 when skipped; with CORDON_TEST_MUST_WORK=1 a skip is a
# failure.
set -u

who=${1:?root|user}
nosandbox=${2:?nosandbox helper}
here=$(cd "$(dirname "$0")" && pwd)
lib_dir=$(cd "$here/../integration" && pwd)
net_dir=$(cd "$here/../net/it" && pwd)
cordon=${CORDON:-${CORDON_BUILD_DIR:-.}/cordon}
backend=${CORDON_IT_BACKEND:-native}
# shellcheck source=tests/lib/runner.sh
. "$here/../lib/runner.sh"

[ -x "$cordon" ] || skip "no cordon binary at $cordon"
[ -x "$nosandbox" ] || skip "no helper $nosandbox"
[ -x /usr/bin/python3 ] || skip "no /usr/bin/python3"
cordon=$(abspath "$cordon")
nosandbox=$(abspath "$nosandbox")

# Copies what the test user cannot reach into $tmp/bin and $tmp/src (the suite, lib.sh, the local
# pip index of the network suite); sets cordon, nosandbox, suite_dir, lib_dir and net_dir.
stage() {
        suite_dir=$here
        if as_user sh -c 'test -x "$1" && test -x "$2" && test -r "$3/suite.sh" &&
                          test -r "$4/lib.sh" && test -r "$5/netsrv.py"' \
                sh "$cordon" "$nosandbox" "$here" "$lib_dir" "$net_dir" 2>/dev/null; then
                return 0
        fi
        echo "# the build or source tree is not reachable by $test_user: copying"
        mkdir -p "$tmp/bin" "$tmp/src/compat" "$tmp/src/integration" "$tmp/src/net"
        stage_cordon "$tmp/bin"
        cp "$nosandbox" "$tmp/bin/"
        cp "$here/suite.sh" "$tmp/src/compat/"
        cp "$lib_dir/lib.sh" "$tmp/src/integration/"
        cp "$net_dir/netsrv.py" "$tmp/src/net/"
        chmod -R a+rX "$tmp/bin" "$tmp/src"
        nosandbox=$tmp/bin/$(basename "$nosandbox")
        suite_dir=$tmp/src/compat
        lib_dir=$tmp/src/integration
        net_dir=$tmp/src/net
}

# The landlock runs: $cordon becomes a wrapper that denies user namespaces to the real binary.
wrap_landlock() {
        [ "$backend" = landlock ] || return 0
        mkdir -p "$tmp/bin"
        chmod 755 "$tmp/bin"
        printf '#!/bin/sh\nexec "%s" --only-userns "%s" "$@"\n' "$nosandbox" "$cordon" \
                > "$tmp/bin/cordon-landlock"
        chmod 755 "$tmp/bin/cordon-landlock"
        cordon=$tmp/bin/cordon-landlock
}

run_suite() {
        CORDON_IT_BACKEND=$backend sh "$suite_dir/suite.sh" "$cordon" "$tmp/run" "$lib_dir" \
                "$net_dir"
}

case $who in
root)
        [ "$(id -u)" -eq 0 ] || skip "not root"
        make_tmp cordon-compat-root
        suite_dir=$here
        wrap_landlock
        mkdir "$tmp/run"
        run_suite
        rc=$?
        ;;
user)
        make_tmp cordon-compat-user
        suite_dir=$here
        if [ "$(id -u)" -ne 0 ]; then
                wrap_landlock
                mkdir "$tmp/run"
                run_suite
                rc=$?
        else
                ensure_test_user
                chmod 755 "$tmp"
                stage
                wrap_landlock
                mkdir "$tmp/run"
                chown "$test_user:" "$tmp/run"
                run_as_test_user CORDON_IT_BACKEND="$backend" sh "$suite_dir/suite.sh" \
                        "$cordon" "$tmp/run" "$lib_dir" "$net_dir"
                rc=$?
        fi
        ;;
*)
        echo "usage: run.sh root|user NOSANDBOX" >&2
        exit 2
        ;;
esac
exit "$rc"
