#!/bin/sh
# tests/net/it/run.sh: runs the network suite (suite.sh) as root or as an unprivileged user
# (meson tests net-root and net-user, suite 'integration').
#
#   run.sh root|user
#
# cordon is $CORDON, else $CORDON_BUILD_DIR/cordon. As root, `user` creates the account
# cordon-test (no home, no shell) when missing and runs the suite through setpriv with a tree that
# account owns under /var/tmp (not /tmp: the sandbox has a private /tmp). Files the account cannot
# reach (the build tree, the suite) are copied into that tree. The suite starts its own servers on
# 127.0.0.1 and stops them when it ends. What this shares with the other suites' drivers is in
# tests/lib/runner.sh.
#
# Exit: the suite's (0 ok, 1 failures), 77 when skipped; with CORDON_TEST_MUST_WORK=1 a skip is a
# failure.
set -u

who=${1:?root|user}
here=$(cd "$(dirname "$0")" && pwd)
lib_dir=$(cd "$here/../../integration" && pwd)
cordon=${CORDON:-${CORDON_BUILD_DIR:-.}/cordon}
# shellcheck source=tests/lib/runner.sh
. "$here/../../lib/runner.sh"

[ -x "$cordon" ] || skip "no cordon binary at $cordon"
[ -r "$lib_dir/lib.sh" ] || skip "no tests/integration/lib.sh"
[ -x /usr/bin/python3 ] || skip "no /usr/bin/python3"
cordon=$(abspath "$cordon")

# Copies what the test user cannot reach into $tmp/bin, keeping the source layout the suite
# expects (tests/net/it, tests/integration, tests/lib, docs); sets cordon and suite_dir.
stage() {
        suite_dir=$here
        if as_user sh -c 'test -x "$1" && test -r "$2/suite.sh" && test -r "$3/lib.sh"' \
                sh "$cordon" "$here" "$lib_dir" 2>/dev/null; then
                return 0
        fi
        echo "# the build or source tree is not reachable by $test_user: copying"
        src=$here/../../..
        mkdir -p "$tmp/bin" "$tmp/src/tests/net/it" "$tmp/src/tests/integration" \
                "$tmp/src/tests/lib" "$tmp/src/docs"
        stage_cordon "$tmp/bin"
        cp "$here"/suite.sh "$here"/rules.sh "$here"/gitpush.sh "$here"/gitsrv.py "$here"/creds.sh \
                "$here"/netsrv.py "$here"/netcli.py \
                "$here"/JavaClient.java "$here"/JavaHttpsClient.java "$tmp/src/tests/net/it/"
        cp "$lib_dir/lib.sh" "$tmp/src/tests/integration/"
        cp "$src/tests/lib/events_validate.py" "$tmp/src/tests/lib/" 2>/dev/null
        cp "$src/docs/events.schema.json" "$tmp/src/docs/" 2>/dev/null
        chmod -R a+rX "$tmp/bin" "$tmp/src"
        suite_dir=$tmp/src/tests/net/it
        lib_dir=$tmp/src/tests/integration
}

case $who in
root)
        [ "$(id -u)" -eq 0 ] || skip "not root"
        make_tmp cordon-net-root
        mkdir "$tmp/run"
        sh "$here/suite.sh" "$cordon" "$tmp/run" "$lib_dir"
        rc=$?
        ;;
user)
        if [ "$(id -u)" -ne 0 ]; then
                make_tmp cordon-net-user
                mkdir "$tmp/run"
                sh "$here/suite.sh" "$cordon" "$tmp/run" "$lib_dir"
                rc=$?
        else
                ensure_test_user
                make_tmp cordon-net-user
                chmod 755 "$tmp"
                stage
                mkdir "$tmp/run"
                chown "$test_user:" "$tmp/run"
                run_as_test_user sh "$suite_dir/suite.sh" "$cordon" "$tmp/run" "$lib_dir"
                rc=$?
        fi
        ;;
*)
        echo "usage: run.sh root|user" >&2
        exit 2
        ;;
esac
exit "$rc"
