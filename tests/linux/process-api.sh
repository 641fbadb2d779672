#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tests/linux/process-api.sh root|user: builds tests/linux/process-api.c as a harness would,
# against include/cordon/cordon.h alone and linked through `pkg-config --cflags --libs cordon`
# (the build tree's uninstalled cordon.pc), and runs it as root or as the unprivileged cordon-test.
set -eu
who=$1
build=${CORDON_BUILD_DIR:?}
src=${CORDON_SOURCE_DIR:?}
# Below /var/tmp: the build tree may sit where cordon-test cannot traverse (/root).
tmp=$(mktemp -d /var/tmp/cordon-process-api.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
flags=$(PKG_CONFIG_PATH="$build/meson-uninstalled" pkg-config --cflags --libs cordon)
# A sanitized library (the ASan build) needs a sanitized program: the runtime must load first.
san=${CORDON_TEST_SANITIZE:-none}
[ "$san" = none ] && san_flags= || san_flags=-fsanitize=$san
cc -std=gnu17 -Wall -Wextra -Werror $san_flags -pthread -o "$tmp/process-api" \
        "$src/tests/linux/process-api.c" $flags
echo "built with: pkg-config --cflags --libs cordon -> $flags"
for f in "$build"/libcordon.so*; do [ -d "$f" ] || cp -P "$f" "$tmp/"; done
chmod 755 "$tmp"
if [ "$who" = user ]; then
        # As cordon-test, in a scratch tree of its own (tests/lib/run-as-user.sh).
        rc=0
        "$src/tests/lib/run-as-user.sh" --user cordon-test --stage "$tmp/process-api" \
                -- "$tmp/process-api" || rc=$?
        exit $rc
fi
mkdir "$tmp/work"
cd "$tmp/work"
LD_LIBRARY_PATH=$tmp "$tmp/process-api" "$tmp/work"
