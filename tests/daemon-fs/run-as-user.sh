#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs a test ("$@") as uid 65534 without capabilities: the fs.* rules are the policy's, not the
# file permissions', and must hold the same for an unprivileged daemon. Needs root to switch
# users: skips (77) otherwise, where the plain tests already run unprivileged.
set -eu
if [ "$(id -u)" != 0 ]; then
        echo "not root: cannot switch to uid 65534 (the plain tests cover this user)"
        exit 77
fi
command -v setpriv >/dev/null 2>&1 || { echo "missing setpriv (util-linux)"; exit 77; }
exec setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all \
        -- "$@"
