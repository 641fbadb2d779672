# shellcheck shell=sh
# tests/lib/runner.sh: what the drivers of the whole-product suites share
# (tests/integration/run.sh, tests/net/it/run.sh, tests/compat/run.sh, tests/install/install.sh,
# tests/package/run.sh, tests/lib/run-as-user.sh): the skip convention, a scratch tree under
# /var/tmp removed at exit, and running a suite as the unprivileged account cordon-test through
# setpriv. Sourced by those scripts (`. runner.sh`) under `set -u`; runs nothing by itself.

test_user="cordon-test"

# skip REASON: exit 77 (a skip), or 1 when CORDON_TEST_MUST_WORK=1 makes a skip a failure.
skip() {
        echo "1..0 # SKIP $*"
        echo "0 passed, 0 failed, 1 skipped"
        if [ "${CORDON_TEST_MUST_WORK:-0}" = 1 ]; then
                echo "CORDON_TEST_MUST_WORK=1: a skip is a failure"
                exit 1
        fi
        exit 77
}

abspath() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }

# The scratch tree, $tmp: removed at exit unless CORDON_IT_KEEP=1.
tmp=
cleanup() {
        [ -n "$tmp" ] || return 0
        if [ "${CORDON_IT_KEEP:-0}" = 1 ]; then echo "# kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# make_tmp NAME: a fresh $tmp, /var/tmp/NAME.XXXXXX (not /tmp: the sandbox has a private /tmp,
# and /root is 0700).
make_tmp() {
        tmp=$(mktemp -d "/var/tmp/$1.XXXXXX") || exit 1
}

as_user() {
        setpriv --reuid="$test_user" --regid="$test_user" --clear-groups "$@"
}

# As root: setpriv and the account cordon-test (created without home or shell when missing), or
# a skip.
ensure_test_user() {
        command -v setpriv >/dev/null || skip "setpriv (util-linux) is missing"
        if ! id -u "$test_user" >/dev/null 2>&1; then
                useradd -M -s /usr/sbin/nologin "$test_user" ||
                        skip "could not create the user $test_user"
        fi
}

# stage_cordon DIR: copies $cordon into DIR with a shared libcordon beside it (meson's RUNPATH
# points into the build tree, which the test user may not reach), exports LD_LIBRARY_PATH=DIR and
# points $cordon at the copy.
stage_cordon() {
        cp "$cordon" "$1/"
        for lib in "$(dirname "$cordon")"/libcordon.so*; do
                [ -e "$lib" ] && cp -P "$lib" "$1/"
        done
        export LD_LIBRARY_PATH="$1"
        cordon=$1/$(basename "$cordon")
}

# run_as_test_user [VAR=VALUE...] CMD [ARG...]: CMD as cordon-test in a clean environment with
# HOME=$tmp/run (the suites replace HOME with a fake one anyway) and the variables the suites
# read passed through; more may be given before CMD.
run_as_test_user() {
        as_user env -i PATH="/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin" \
                HOME="$tmp/run" LC_ALL=C \
                CORDON_TEST_MUST_WORK="${CORDON_TEST_MUST_WORK:-0}" \
                CORDON_IT_ONLY="${CORDON_IT_ONLY:-}" \
                ASAN_OPTIONS="${ASAN_OPTIONS:-}" UBSAN_OPTIONS="${UBSAN_OPTIONS:-}" \
                LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}" \
                "$@"
}
