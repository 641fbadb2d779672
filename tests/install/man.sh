#!/bin/sh
# tests/install/man.sh: the generated man pages (man/meson.build) format without a single
# warning, have a NAME line apropos can read, and cordon(1) documents every option of
# `cordon --help` (the page is docs/cli.md: this is where docs and parser must agree).
#
#   man.sh CORDON PAGE...
set -u
cordon=$1
shift
passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok - $*"; }
not_ok() { failed=$((failed + 1)); echo "not ok - $*"; }
tmp=$(mktemp -d /tmp/cordon-man.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT

for page in "$@"; do
        name=$(basename "$page")
        if [ ! -s "$page" ]; then
                not_ok "$name: not generated"
                continue
        fi
        # -t: the pages use no tables (man.lua), but a future one must not slip past tbl.
        groff -t -ww -z -man "$page" > "$tmp/groff" 2>&1
        [ ! -s "$tmp/groff" ] && ok "$name: groff -ww -z is silent" ||
                { sed 's/^/#   /' "$tmp/groff" | head -n 20; not_ok "$name: groff warns"; }
        LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$page" > "$tmp/text" 2> "$tmp/man"
        [ ! -s "$tmp/man" ] && [ -s "$tmp/text" ] && ok "$name: man --warnings -l is silent" ||
                { sed 's/^/#   /' "$tmp/man" | head -n 20; not_ok "$name: man --warnings warns"; }
        # lexgrog is what mandb and apropos use to find the NAME line.
        stem=${name%.*}
        lexgrog "$page" 2>&1 | grep -q ": \"$stem - ." && ok "$name: lexgrog reads its NAME line" ||
                { lexgrog "$page" 2>&1 | sed 's/^/#   /'; not_ok "$name: no NAME line lexgrog can read"; }
        # The text in ASCII (a UTF-8 rendering prints "\-" as U+2212), without overstrikes.
        case $name in cordon.1) LC_ALL=C MANWIDTH=80 man -l "$page" 2>/dev/null | col -b > "$tmp/cli"
                                cli_page=$tmp/cli ;; esac
done

# Every option the help texts list (lines "  --flag ..." or "  -h, --help ...") is in cordon(1).
if [ -n "${cli_page:-}" ]; then
        for topic in "" run explain probe policy settings session exec terminal; do
                # shellcheck disable=SC2086
                "$cordon" help $topic
        done | sed -n 's/^  \(-h, \)\{0,1\}\(--[a-z][a-z-]*\).*/\2/p' | sort -u > "$tmp/flags"
        missing=$(while read -r flag; do
                grep -q -- "$flag\b" "$cli_page" || printf ' %s' "$flag"
        done < "$tmp/flags")
        [ -s "$tmp/flags" ] && [ -z "$missing" ] &&
                ok "cordon.1 documents all $(wc -l < "$tmp/flags") options of the help texts" ||
                not_ok "cordon.1 lacks options the help lists:${missing:- (no options found in the help)}"
else
        not_ok "cordon.1 was not among the pages"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
