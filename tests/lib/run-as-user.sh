#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs the launch suite ($1) as uid 65534 with no capabilities: agents do not run as root.
# Needs root to switch users: skips (77) otherwise, since `launch` then already runs unprivileged.
set -eu

exe=$1
if [ "$(id -u)" != 0 ]; then
        echo "not root: the 'launch' test already covers this user"
        exit 77
fi
command -v setpriv >/dev/null 2>&1 || { echo "missing setpriv (util-linux)"; exit 77; }

# The build tree may sit below a directory the user cannot traverse (/root): run a copy.
tmp=$(mktemp -d /var/tmp/cordon-launch-user.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cp "$exe" "$tmp/test-launch"
chmod 755 "$tmp" "$tmp/test-launch"
mkdir "$tmp/work"
chown 65534:65534 "$tmp/work"
cd "$tmp/work"
CORDON_TEST_TMP=$tmp/work setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
        --bounding-set=-all -- "$tmp/test-launch"
