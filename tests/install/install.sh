#!/bin/sh
# tests/install/install.sh: `meson install` into a DESTDIR staging tree, then check-tree.sh on it
# as root or as the unprivileged cordon-test (meson tests install-root and install-user).
#
#   install.sh root|user PREFIX LIBDIR SYSCONFDIR ZSHDIR BASHDIR VERSION
#
# The build directory is $CORDON_BUILD_DIR. Exit 0 ok, 1 failure, 77 skip.
set -u
who=$1
shift
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib/runner.sh
. "$here/../lib/runner.sh"
build=${CORDON_BUILD_DIR:?CORDON_BUILD_DIR is not set}

case $who in
root) [ "$(id -u)" -eq 0 ] || skip "not root" ;;
user) ;;
*) echo "usage: install.sh root|user ..." >&2; exit 2 ;;
esac
make_tmp "cordon-install-$who"
chmod 755 "$tmp"
dest=$tmp/dest
# --no-rebuild: meson test has built everything; a rebuild here would race the other tests.
if ! meson install -C "$build" --destdir "$dest" --no-rebuild --quiet > "$tmp/install.log" 2>&1
then
        sed 's/^/# /' "$tmp/install.log"
        echo "not ok - meson install --destdir"
        echo "0 passed, 1 failed"
        exit 1
fi
echo "ok - meson install --destdir $dest"
chmod -R a+rX "$dest"
mkdir "$tmp/scratch"
if [ "$who" = root ] || [ "$(id -u)" -ne 0 ]; then
        sh "$here/check-tree.sh" "$who" "$dest" "$@" "$tmp/scratch"
        exit $?
fi
ensure_test_user
chown "$test_user:" "$tmp/scratch"
cp "$here/check-tree.sh" "$tmp/check-tree.sh"
chmod a+r "$tmp/check-tree.sh"
run_as_test_user CORDON_TEST_SANITIZE="${CORDON_TEST_SANITIZE:-none}" sh "$tmp/check-tree.sh" "$who" "$dest" "$@" "$tmp/scratch"
