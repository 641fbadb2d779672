#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tests/install/symbols.sh HEADER VERSION_SCRIPT LIBRARY: the public header's CORDON_PUBLIC
# functions, the linker version script's names (src/libcordon.sym) and the built library's
# exported functions are the same set (docs/design/abi.md): nothing exported that the header
# does not promise, nothing promised that is not exported under a version node.
set -eu
header=$1 script=$2 lib=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# "CORDON_PUBLIC <type> <name>(" may span lines: join the header first.
tr '\n' ' ' < "$header" | grep -o 'CORDON_PUBLIC[^;{(]*(' | grep -o 'cordon_[a-z0-9_]*[ ]*($' |
        tr -d ' (' | sort -u > "$tmp/header"
# The version script, comments removed: every "name;" inside a node that is not a wildcard.
sed 's|/\*.*\*/||' "$script" | grep -o '^[ 	]*cordon_[a-z0-9_]*;' | tr -d ' 	;' | sort > "$tmp/script"
nm -D --defined-only "$lib" | awk '$2 == "T" { sub(/@.*/, "", $3); print $3 }' | sort -u \
        > "$tmp/library"
status=0
if sed 's|/\*.*\*/||' "$script" | grep -q 'cordon_\*'; then
        echo "not ok - $script exports by wildcard (cordon_*)"
        status=1
fi
for pair in "header script" "header library" "script library"; do
        set -- $pair
        if cmp -s "$tmp/$1" "$tmp/$2"; then
                echo "ok - the $1 and the $2 name the same $(wc -l < "$tmp/$1") functions"
        else
                echo "not ok - the $1 and the $2 differ (< only in the $1, > only in the $2):"
                diff "$tmp/$1" "$tmp/$2" | grep '^[<>]' | sed 's/^/#   /'
                status=1
        fi
done
[ "$(wc -l < "$tmp/header")" -gt 50 ] || { echo "not ok - too few functions found in $header"; status=1; }
exit $status
