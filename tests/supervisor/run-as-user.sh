#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs the supervisor suite ($1) as an unprivileged user, twice: as uid 65534 with no
# capabilities, and as uid 65534 inside a new user namespace (unshare --user --map-current-user),
# where it holds capabilities only over that namespace. Needs root to switch users: skips (77)
# otherwise, since the plain `supervisor` test already runs as the current user then.
set -eu

exe=$1
if [ "$(id -u)" != 0 ]; then
        echo "not root: cannot switch to uid 65534 (the 'supervisor' test covers this user)"
        exit 77
fi
for tool in setpriv unshare; do
        command -v "$tool" >/dev/null 2>&1 || { echo "missing $tool (util-linux)"; exit 77; }
done

# A temporary directory the unprivileged user may write to; the suite makes its workspaces there.
tmp=$(mktemp -d /tmp/cordon-sup-user.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
chown 65534:65534 "$tmp"

drop="setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all"

echo "== uid 65534, no capabilities"
TMPDIR=$tmp $drop -- "$exe"

echo "== uid 65534 in a user namespace"
TMPDIR=$tmp $drop -- unshare --user --map-current-user -- "$exe"
