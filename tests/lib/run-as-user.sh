#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tests/lib/run-as-user.sh: runs a test as an unprivileged user: agents do not run as root, and
# what a test checks must hold the same without privileges (the *-user tests in meson).
#
#   run-as-user.sh [--user cordon-test] [--stage FILE]... [--tmp-var VAR] [--userns] \
#           -- PROGRAM [ARG...]
#
# By default PROGRAM runs as uid/gid 65534 with no capabilities (setpriv, no inheritable ones,
# an empty bounding set), in the environment it was given. With --user cordon-test it runs as
# that account (created without home or shell when missing) in the clean environment of
# tests/lib/runner.sh's run_as_test_user (HOME is the scratch tree's run/).
#
# It gets a scratch tree /var/tmp/cordon-user-NAME.XXXXXX (removed at exit unless
# CORDON_IT_KEEP=1; not /tmp: the sandbox has a private /tmp) whose directory run/, owned by the
# user, is exported as $CORDON_TEST_TMP, or as VAR with --tmp-var: the tests make their trees
# there. The current directory stays (meson gives relative paths).
#   --stage FILE  copies FILE into the scratch tree (the build tree may sit below a directory
#                 the user cannot traverse, such as /root) and replaces every argument equal to
#                 FILE with the copy; a shared libcordon beside FILE is copied too, and
#                 LD_LIBRARY_PATH then points at the copies.
#   --userns      runs PROGRAM a second time, inside a new user namespace
#                 (unshare --user --map-current-user), where it holds capabilities only over
#                 that namespace.
#
# Needs root to switch users: skips (77) otherwise, since the plain test then already runs
# unprivileged (with CORDON_TEST_MUST_WORK=1 a skip is a failure). Exit: PROGRAM's.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib/runner.sh
. "$here/runner.sh"

usage() {
        echo "usage: run-as-user.sh [--user cordon-test] [--stage FILE]... [--tmp-var VAR]" \
                "[--userns] -- PROGRAM [ARG...]" >&2
        exit 2
}

user=65534
tmp_var=CORDON_TEST_TMP
userns=0
staged=
while [ $# -gt 0 ]; do
        case $1 in
        --user) [ $# -ge 2 ] || usage; user=$2; shift 2 ;;
        --stage) [ $# -ge 2 ] || usage; staged="$staged$2
"; shift 2 ;;
        --tmp-var) [ $# -ge 2 ] || usage; tmp_var=$2; shift 2 ;;
        --userns) userns=1; shift ;;
        --) shift; break ;;
        *) usage ;;
        esac
done
[ $# -ge 1 ] || usage
case $user in
65534 | "$test_user") ;;
*) echo "run-as-user.sh: --user is 65534 or $test_user" >&2; exit 2 ;;
esac

[ "$(id -u)" -eq 0 ] || skip "not root: cannot switch users (the plain test already runs as this user)"
command -v setpriv >/dev/null 2>&1 || skip "setpriv (util-linux) is missing"
if [ "$userns" = 1 ]; then
        command -v unshare >/dev/null 2>&1 || skip "unshare (util-linux) is missing"
fi
if [ "$user" = "$test_user" ]; then
        ensure_test_user
        owner="$test_user:"
else
        owner=65534:65534
fi

make_tmp "cordon-user-$(basename "$1")"
chmod 755 "$tmp"
mkdir "$tmp/run"
chown "$owner" "$tmp/run"

# The staged copies, and the command line with each staged file replaced by its copy.
libs=0
while IFS= read -r file; do
        [ -n "$file" ] || continue
        [ -f "$file" ] || { echo "run-as-user.sh: --stage $file: no such file" >&2; exit 2; }
        cp "$file" "$tmp/"
        for lib in "$(dirname "$file")"/libcordon.so*; do
                if [ -f "$lib" ]; then cp -P "$lib" "$tmp/"; libs=1; fi
        done
done <<EOF
$staged
EOF
chmod -R a+rX "$tmp"
for arg in "$@"; do
        shift
        if printf '%s' "$staged" | grep -qxF -- "$arg"; then
                arg=$tmp/$(basename "$arg")
        fi
        set -- "$@" "$arg"
done
[ "$libs" = 0 ] || export LD_LIBRARY_PATH="$tmp"

# run_as [PREFIX...] -- : PROGRAM as the user, after PREFIX (a command that execs the rest).
run_as() {
        if [ "$user" = "$test_user" ]; then
                run_as_test_user "$tmp_var=$tmp/run" "$@"
        else
                env "$tmp_var=$tmp/run" setpriv --reuid=65534 --regid=65534 --clear-groups \
                        --inh-caps=-all --bounding-set=-all -- "$@"
        fi
}

if [ "$userns" = 0 ]; then
        run_as "$@"
        exit 0
fi
echo "== uid $user, no capabilities"
run_as "$@"
echo "== uid $user in a user namespace"
run_as unshare --user --map-current-user -- "$@"
