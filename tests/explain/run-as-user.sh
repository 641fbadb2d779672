#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# explain-runs-user: test_explain.py ($1) with cordon ($2) as the unprivileged account
# cordon-test (tests/lib/runner.sh), from copies in a scratch tree the account can read.
# Needs root to switch users: skips (77) otherwise, since explain-runs then already runs
# unprivileged.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib/runner.sh
. "$here/../lib/runner.sh"

script=$(abspath "$1")
cordon=$(abspath "$2")
[ "$(id -u)" -eq 0 ] || skip "not root: explain-runs already runs as this user"
ensure_test_user
make_tmp cordon-explain-user
chmod 755 "$tmp"
cp "$cordon" "$tmp/"
for lib in "$(dirname "$cordon")"/libcordon.so*; do
        if [ -f "$lib" ]; then cp -P "$lib" "$tmp/"; fi
done
cordon=$tmp/$(basename "$cordon")
cp "$script" "$tmp/"
mkdir "$tmp/run"
chown "$test_user:" "$tmp/run"
chmod -R a+rX "$tmp"
LD_LIBRARY_PATH=$tmp run_as_test_user CORDON_TEST_TMP="$tmp/run" /usr/bin/python3 "$tmp/$(basename "$script")" \
        "$cordon"
