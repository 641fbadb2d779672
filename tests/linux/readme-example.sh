#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tests/linux/readme-example.sh root|user: the C example of README.md ("Embedding", the block
# after the marker "embedding-example: c"), taken from the README as written, built as a harness
# builds one (include/cordon/cordon.h and `pkg-config --cflags --libs cordon` of the build tree's
# uninstalled cordon.pc, warnings as errors) and run as root or as the unprivileged cordon-test:
# it prints the command's output, the refusal of `touch .env` and the exit status, and leaves no
# .env behind.
#   readme-example.sh check PROGRAM   (internal) runs PROGRAM in a fresh workspace and checks
set -eu
who=$1

if [ "$who" = check ]; then
        prog=$2
        base=${CORDON_TEST_TMP:-$(dirname "$prog")}
        mkdir -p "$base/ws" "$base/home"
        cd "$base/ws"
        out=$(HOME="$base/home" LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-$(dirname "$prog")}" "$prog")
        # The output and the refusal come on two channels (the command's own stdout, the
        # program's buffered one): their order is not fixed; the exit status comes last.
        got=$(printf '%s\n' "$out" | sed '$d' | sort)
        want=$(printf '%s\n' "hello from the sandbox" "refused: file-create-name $base/ws/.env" | sort)
        last=$(printf '%s\n' "$out" | tail -n 1)
        [ "$got" = "$want" ] || { printf 'output:\n%s\nexpected:\n%s\n' "$out" "$want"; exit 1; }
        [ "$last" = "exit 1" ] || { printf 'last line %s, expected exit 1\n' "$last"; exit 1; }
        [ ! -e "$base/ws/.env" ] || { echo ".env was left behind"; exit 1; }
        echo "the README's C example printed what it says, as $(id -un)"
        exit 0
fi

build=${CORDON_BUILD_DIR:?}
src=${CORDON_SOURCE_DIR:?}
tmp=$(mktemp -d /var/tmp/cordon-readme-c.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
# The first ```c block after the marker.
awk '/<!-- embedding-example: c /{m=1; next} m && /^```c$/{c=1; next} c && /^```$/{exit}
     c {print}' "$src/README.md" > "$tmp/example.c"
lines=$(wc -l < "$tmp/example.c")
[ "$lines" -ge 5 ] && [ "$lines" -le 20 ] || { echo "README.md: no C example ($lines lines)"; exit 1; }
flags=$(PKG_CONFIG_PATH="$build/meson-uninstalled" pkg-config --cflags --libs cordon)
san=${CORDON_TEST_SANITIZE:-none}
[ "$san" = none ] && san_flags= || san_flags=-fsanitize=$san
cc -std=gnu17 -Wall -Wextra -Werror $san_flags -o "$tmp/example" "$tmp/example.c" $flags
for f in "$build"/libcordon.so*; do [ -d "$f" ] || cp -P "$f" "$tmp/"; done
chmod 755 "$tmp"
cp "$0" "$tmp/readme-example.sh"
if [ "$who" = user ]; then
        exec "$src/tests/lib/run-as-user.sh" --user cordon-test --stage "$tmp/example" \
                --stage "$tmp/readme-example.sh" -- sh "$tmp/readme-example.sh" check "$tmp/example"
fi
sh "$tmp/readme-example.sh" check "$tmp/example"
