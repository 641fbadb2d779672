#!/bin/sh
# tests/integration/run.sh: runs suite.sh as root or as an unprivileged user (meson tests
# integration-root and integration-user).
#
#   run.sh root|user ATTACK NOSANDBOX
#
# With CORDON_IT_BACKEND=landlock (meson tests integration-landlock-root and -user), cordon runs
# under `nosandbox --only-userns` (a host without user namespaces) through a wrapper script, so
# every run takes the landlock backend; the suite knows which expectations differ.
#
# cordon is $CORDON, else $CORDON_BUILD_DIR/cordon. As root, `user` creates the account
# cordon-test (no home, no shell) when missing and runs the suite through setpriv with a tree that
# account owns under /var/tmp (not /tmp: the sandbox has a private /tmp, and /root is 0700). If the
# binaries are not reachable by that account they are copied into the tree. What this shares with
# the other suites' drivers is in tests/lib/runner.sh.
#
# Exit: the suite's (0 ok, 1 failures), 77 when skipped; with CORDON_TEST_MUST_WORK=1 a skip is a
# failure.
set -u

who=${1:?root|user}
attack=${2:?attack helper}
nosandbox=${3:?nosandbox helper}
here=$(cd "$(dirname "$0")" && pwd)
cordon=${CORDON:-${CORDON_BUILD_DIR:-.}/cordon}
# shellcheck source=tests/lib/runner.sh
. "$here/../lib/runner.sh"

[ -x "$cordon" ] || skip "no cordon binary at $cordon"
for t in "$attack" "$nosandbox"; do [ -x "$t" ] || skip "no helper $t"; done
cordon=$(abspath "$cordon")
attack=$(abspath "$attack")
nosandbox=$(abspath "$nosandbox")

# Copies what the test user cannot reach into $tmp/bin; sets cordon/attack/nosandbox/suite_dir.
stage_binaries() {
        suite_dir=$here
        if as_user sh -c 'test -x "$1" && test -x "$2" && test -x "$3" && test -r "$4/suite.sh"' \
                sh "$cordon" "$attack" "$nosandbox" "$here" 2>/dev/null; then
                return 0
        fi
        echo "# the build tree is not reachable by $test_user: copying the binaries"
        mkdir -p "$tmp/bin"
        stage_cordon "$tmp/bin"
        cp "$attack" "$nosandbox" "$here/suite.sh" "$here/suite-meta.sh" "$here/lib.sh" "$here/suite-settings.sh" "$here/names.sh" "$here/git-repos.sh" "$here/suite-defaults.sh" "$here/suite-reads.sh" "$here/suite-commands.sh" \
                "$tmp/bin/"
        chmod -R a+rX "$tmp/bin"
        attack=$tmp/bin/$(basename "$attack")
        nosandbox=$tmp/bin/$(basename "$nosandbox")
        suite_dir=$tmp/bin
}

backend=${CORDON_IT_BACKEND:-native}
cordon_real=$cordon

# The landlock runs: $cordon becomes a wrapper (readable by the test user) that denies user
# namespaces to the real binary and everything it starts.
wrap_landlock() {
        [ "$backend" = landlock ] || return 0
        mkdir -p "$tmp/bin"
        chmod 755 "$tmp/bin"
        printf '#!/bin/sh\nexec "%s" --only-userns "%s" "$@"\n' "$nosandbox" "$cordon" \
                > "$tmp/bin/cordon-landlock"
        chmod 755 "$tmp/bin/cordon-landlock"
        cordon_real=$cordon
        cordon=$tmp/bin/cordon-landlock
}

case $who in
root)
        [ "$(id -u)" -eq 0 ] || skip "not root"
        make_tmp cordon-it-root
        wrap_landlock
        CORDON_IT_BACKEND=$backend CORDON_IT_REAL=$cordon_real \
                sh "$here/suite.sh" "$cordon" "$attack" "$nosandbox" "$tmp/run"
        rc=$?
        ;;
user)
        if [ "$(id -u)" -ne 0 ]; then
                make_tmp cordon-it-user
                wrap_landlock
                CORDON_IT_BACKEND=$backend CORDON_IT_REAL=$cordon_real \
                        sh "$here/suite.sh" "$cordon" "$attack" "$nosandbox" "$tmp/run"
                rc=$?
        else
                ensure_test_user
                make_tmp cordon-it-user
                chmod 755 "$tmp"
                stage_binaries
                wrap_landlock
                mkdir "$tmp/run"
                chown "$test_user:" "$tmp/run"
                run_as_test_user CORDON_IT_BACKEND="$backend" CORDON_IT_REAL="$cordon_real" \
                        sh "$suite_dir/suite.sh" "$cordon" "$attack" "$nosandbox" "$tmp/run"
                rc=$?
        fi
        ;;
*)
        echo "usage: run.sh root|user ATTACK NOSANDBOX" >&2
        exit 2
        ;;
esac
exit "$rc"
