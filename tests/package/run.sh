#!/bin/sh
# tests/package/run.sh: builds the Debian packages from this tree, checks them with lintian,
# installs them on this machine and runs the installed cordon (a step of tests/run-all.sh).
#
#   tests/package/run.sh [WORKDIR]
#
#  1. copies the tree's files (git's tracked and untracked-but-not-ignored ones: what a commit
#     of the work tree would hold, never build directories) to WORKDIR/cordon-VERSION, so the
#     build cannot dirty the checkout;
#  2. dpkg-buildpackage -us -uc -b there (debian/rules: dh + meson);
#  3. lintian on the .changes: any error fails, warnings are printed;
#  4. installs the three packages with apt (their dependencies come from the archive), then, as
#     root and as the unprivileged cordon-test, runs /usr/bin/cordon probe, one sandboxed command
#     and one write the sandbox must refuse, and checks what the packages put where;
#  5. removes the packages again (purge), unless they were installed before this run.
#
# WORKDIR (default: a fresh directory under /var/tmp, removed at the end) keeps the copy, the
# logs and the .deb files.
#
# Exit: 0 ok, 1 failure, 77 skip (not root: installing needs it; CORDON_TEST_MUST_WORK=1 turns
# the skip into a failure). The last line is "N passed, N failed[, N skipped]".
set -u
cd "$(dirname "$0")/../.."
src=$(pwd)
# shellcheck source=tests/lib/runner.sh
. "$src/tests/lib/runner.sh"

[ "$(id -u)" -eq 0 ] || skip "not root: installing the packages needs root"
# A missing tool is a failure, not a skip: scripts/install-deps.sh installs them all.
for t in dpkg-buildpackage dpkg-checkbuilddeps lintian apt-get git flock; do
        command -v "$t" >/dev/null || { echo "not ok - $t is missing (scripts/install-deps.sh)"
                                         echo "0 passed, 1 failed"; exit 1; }
done

passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok - $*"; }
not_ok() { failed=$((failed + 1)); echo "not ok - $*"; }
finish() {
        echo "$passed passed, $failed failed"
        [ "$failed" -eq 0 ]
        exit $?
}

version=$(dpkg-parsechangelog -l debian/changelog -S Version)
if [ $# -ge 1 ]; then
        mkdir -p "$1"
        tmp=$(cd "$1" && pwd)
        trap - EXIT # a directory given is kept
else
        make_tmp cordon-package
fi
tree=$tmp/cordon-$version
rm -rf "$tree"
mkdir -p "$tree"
git -C "$src" ls-files -z --cached --others --exclude-standard |
        (cd "$src" && xargs -0 sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh) |
        tar -C "$src" --null -T - -cf - | tar -C "$tree" -xf -
[ -x "$tree/debian/rules" ] && ok "copied the tree to $tree" || { not_ok "copy the tree"; finish; }

echo "# dpkg-buildpackage -us -uc -b (log: $tmp/build.log)"
if (cd "$tree" && dpkg-buildpackage -us -uc -b -j"${JOBS:-2}") > "$tmp/build.log" 2>&1; then
        ok "dpkg-buildpackage -us -uc -b"
else
        tail -n 40 "$tmp/build.log" | sed 's/^/# /'
        not_ok "dpkg-buildpackage -us -uc -b"
        finish
fi
changes=$(ls "$tmp"/cordon_"$version"_*.changes)
debs=$(ls "$tmp"/cordon_"$version"_*.deb "$tmp"/libcordon0_"$version"_*.deb \
        "$tmp"/libcordon-dev_"$version"_*.deb)

# The ABI guard (docs/design/abi.md): the symbols file fits the library just built (-c2: no
# symbol or library lost; a new symbol is printed, to be added with its version), and a symbol
# of an earlier version that the library lost fails dpkg-gensymbols, as it fails a package build.
pkgdir=$tree/debian/libcordon0
if (cd "$tree" && dpkg-gensymbols -plibcordon0 -P"$pkgdir" -c2 -Idebian/libcordon0.symbols \
        -O"$tmp/symbols.now") > "$tmp/symbols.log" 2>&1; then
        ok "debian/libcordon0.symbols: the library lost none of its symbols"
else
        not_ok "debian/libcordon0.symbols does not fit the library (docs/design/abi.md)"
fi
sed 's/^/# /' "$tmp/symbols.log" | head -n 30
{ cat "$tree/debian/libcordon0.symbols"; echo " cordon_removed_since@CORDON_0.1 0.0.1"; } \
        > "$tmp/symbols.lost"
if (cd "$tree" && dpkg-gensymbols -plibcordon0 -P"$pkgdir" -c1 -I"$tmp/symbols.lost" \
        -O/dev/null) > "$tmp/symbols.log" 2>&1; then
        not_ok "a symbol lost since 0.0.1 does not fail dpkg-gensymbols"
else
        grep -q 'disappeared' "$tmp/symbols.log" &&
                ok "a symbol lost since an earlier version fails dpkg-gensymbols" ||
                { sed 's/^/# /' "$tmp/symbols.log"; not_ok "dpkg-gensymbols failed for another reason"; }
fi

lintian --fail-on error --tag-display-limit 0 "$changes" > "$tmp/lintian.log" 2>&1
rc=$?
sed 's/^/# lintian: /' "$tmp/lintian.log"
[ "$rc" -eq 0 ] && ok "lintian: no errors" || not_ok "lintian reports errors (exit $rc)"

# One install at a time on this machine: two runs of this script (two checkouts' `make check`)
# must not install and purge under each other's checks.
exec 9> /var/lock/cordon-package-test.lock
flock -w 900 9 || { not_ok "another tests/package/run.sh held the lock for 15 minutes"; finish; }

# Installed before this run (a developer's own install): leave it in place afterwards.
preinstalled=0
dpkg-query -W -f='${Status}' cordon 2>/dev/null | grep -q "install ok installed" && preinstalled=1
remove_packages() {
        [ "$preinstalled" = 1 ] && return 0
        apt-get purge -y -q -o DPkg::Lock::Timeout=300 cordon libcordon-dev libcordon0 \
                > "$tmp/purge.log" 2>&1 || { not_ok "purge the packages"; return 1; }
        [ ! -e /usr/bin/cordon ] && ok "purged: /usr/bin/cordon is gone" ||
                not_ok "purged, but /usr/bin/cordon is still there"
}

# shellcheck disable=SC2086
if DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
        -o DPkg::Lock::Timeout=300 $debs > "$tmp/install.log" 2>&1; then
        ok "apt-get install the three packages"
else
        tail -n 20 "$tmp/install.log" | sed 's/^/# /'
        not_ok "apt-get install the three packages"
        finish
fi

# Installed, not enabled (debian/rules): no cordond in every user's session.
if [ -z "$(ls /etc/systemd/user/*.wants/cordond.* 2>/dev/null)" ]; then
        ok "the cordond user units are not enabled for every user"
else
        not_ok "the package enabled $(ls /etc/systemd/user/*.wants/cordond.*)"
fi

# The installed tree, by tests/install/check-tree.sh: as root, then as cordon-test.
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
set -- /usr "/usr/lib/$multiarch" /etc /usr/share/zsh/vendor-completions \
        /usr/share/bash-completion/completions "$version"
mkdir -p "$tmp/check-root" "$tmp/check-user"
chmod 755 "$tmp"
cp "$src/tests/install/check-tree.sh" "$tmp/check-tree.sh"
chmod a+r "$tmp/check-tree.sh"
if sh "$tmp/check-tree.sh" root "" "$@" "$tmp/check-root" > "$tmp/check-root.log" 2>&1; then
        ok "the installed packages, as root (check-tree.sh)"
else
        not_ok "the installed packages, as root (check-tree.sh)"
fi
sed 's/^/#   /' "$tmp/check-root.log"
ensure_test_user
chown "$test_user:" "$tmp/check-user"
if run_as_test_user sh "$tmp/check-tree.sh" user "" "$@" "$tmp/check-user" \
        > "$tmp/check-user.log" 2>&1; then
        ok "the installed packages, as $test_user (check-tree.sh)"
else
        not_ok "the installed packages, as $test_user (check-tree.sh)"
fi
sed 's/^/#   /' "$tmp/check-user.log"
remove_packages
finish
