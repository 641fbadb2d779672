#!/bin/sh
# tests/daemon/run.sh: runs one cordond test program as root or as an unprivileged user (meson
# tests daemon-*-root and daemon-*-user, suite integration: they start real sandboxes).
#
#   run.sh root|user PROGRAM CORDOND CORDON SCHEMA
#
# PROGRAM is test_daemon.py or test_cli_session.py in this directory. As root, `user` runs it
# through setpriv as cordon-test (created when missing, as tests/run-all.sh does) with copies of
# everything it needs in a tree that account owns under /var/tmp; `root` also stages a copy of
# cordond the tests may run as cordon-test (the other-uid checks). Exit: the program's (0 ok,
# 1 failures), 77 when skipped; with CORDON_TEST_MUST_WORK=1 a skip is a failure.
set -u

who=${1:?root|user}
prog=${2:?test program}
cordond=${3:?cordond}
cordon=${4:?cordon}
schema=${5:?events schema}
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

for b in "$cordond" "$cordon"; do [ -x "$b" ] || skip "no binary $b"; done
command -v python3 >/dev/null || skip "python3 is missing"

tmp=$(mktemp -d /var/tmp/cordon-daemon-test.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
chmod 755 "$tmp"

as_user() {
        setpriv --reuid="$test_user" --regid="$test_user" --clear-groups "$@"
}

ensure_user() {
        command -v setpriv >/dev/null || return 1
        id -u "$test_user" >/dev/null 2>&1 || useradd -M -s /usr/sbin/nologin "$test_user"
}

# Copies of the binaries (with a shared libcordon beside them, for builds that use one), the test
# programs and what they read, in $tmp/src laid out like the source tree.
stage() {
        mkdir -p "$tmp/bin" "$tmp/src/tests/daemon" "$tmp/src/tests/lib" "$tmp/src/docs" \
                "$tmp/src/src/daemon"
        cp "$cordond" "$cordon" "$tmp/bin/"
        for lib in "$(dirname "$cordon")"/libcordon.so*; do
                [ -e "$lib" ] && cp -P "$lib" "$tmp/bin/"
        done
        cp "$here"/*.py "$tmp/src/tests/daemon/"
        cp "$src/tests/lib/cordond_client.py" "$src/tests/lib/events_validate.py" \
                "$tmp/src/tests/lib/"
        cp "$schema" "$tmp/src/docs/events.schema.json"
        cp "$src/src/daemon/protocol.h" "$tmp/src/src/daemon/"
        chmod -R a+rX "$tmp/bin" "$tmp/src"
}

sanitized=$(python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import cordond_client as c
print(int(c.sanitized()))' "$src/tests/lib")

case $who in
root)
        [ "$(id -u)" -eq 0 ] || skip "not root"
        if ensure_user; then
                stage
                export CORDOND_FOR_TEST_USER="$tmp/bin/$(basename "$cordond")"
        fi
        CORDON_TEST_SANITIZED=$sanitized CORDON_TEST_TMP=$tmp \
                python3 "$here/$prog" "$cordond" "$cordon" "$schema" "$src"
        ;;
user)
        if [ "$(id -u)" -ne 0 ]; then
                CORDON_TEST_SANITIZED=$sanitized CORDON_TEST_TMP=$tmp \
                        python3 "$here/$prog" "$cordond" "$cordon" "$schema" "$src"
                exit $?
        fi
        ensure_user || skip "setpriv (util-linux) is missing or $test_user cannot be created"
        stage
        mkdir "$tmp/home" "$tmp/work"
        chown "$test_user:" "$tmp/home" "$tmp/work"
        # A clean environment, no XDG_RUNTIME_DIR: the tests give every daemon its own socket.
        as_user env -i PATH="/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin" HOME="$tmp/home" \
                LC_ALL=C.UTF-8 CORDON_TEST_TMP="$tmp/work" CORDON_TEST_SANITIZED="$sanitized" \
                CORDON_TEST_MUST_WORK="${CORDON_TEST_MUST_WORK:-0}" \
                ASAN_OPTIONS="${ASAN_OPTIONS:-}" UBSAN_OPTIONS="${UBSAN_OPTIONS:-}" \
                LD_LIBRARY_PATH="$tmp/bin" \
                python3 "$tmp/src/tests/daemon/$prog" "$tmp/bin/$(basename "$cordond")" \
                "$tmp/bin/$(basename "$cordon")" "$tmp/src/docs/events.schema.json" "$tmp/src"
        ;;
*)
        echo "usage: run.sh root|user PROGRAM CORDOND CORDON SCHEMA" >&2
        exit 2
        ;;
esac
