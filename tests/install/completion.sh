#!/bin/sh
# tests/install/completion.sh: the generated completion scripts (`cordon completion SHELL`,
# installed by contrib/meson.build) offer, for each command, every option its `--help` lists:
# bash and fish are asked as a user's TAB would ask them, zsh's script is parsed (driving zsh's
# completion needs a terminal) and syntax-checked. The other direction, that the parser takes
# every option offered, is tests/cli/test-completion.c.
#
#   completion.sh CORDON BASH_SCRIPT ZSH_SCRIPT FISH_SCRIPT
set -u
cordon=$1 bash_script=$2 zsh_script=$3 fish_script=$4
passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok - $*"; }
not_ok() { failed=$((failed + 1)); echo "not ok - $*"; }
tmp=$(mktemp -d /tmp/cordon-completion.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT

for sh in bash zsh fish; do
        command -v "$sh" >/dev/null || { not_ok "$sh is not installed (scripts/install-deps.sh)"; continue; }
done
bash -n "$bash_script" && ok "bash -n: the bash script parses" || not_ok "bash -n fails"
zsh -n "$zsh_script" && ok "zsh -n: the zsh script parses" || not_ok "zsh -n fails"
fish -n "$fish_script" && ok "fish -n: the fish script parses" || not_ok "fish -n fails"
# zsh takes the script both ways: found in $fpath by compinit (the installed file), and sourced.
mkdir "$tmp/fpath"
cp "$zsh_script" "$tmp/fpath/_cordon"
out=$(zsh -fc 'fpath=("$1" $fpath); autoload -U compinit; compinit -u -D; print -r -- $_comps[cordon]
               source "$2"; print -r -- $_comps[cordon]' zsh "$tmp/fpath" "$zsh_script" 2>&1)
[ "$out" = "_cordon
_cordon" ] && ok "zsh: compinit finds _cordon in \$fpath, and sourcing it registers it" ||
        not_ok "zsh: the completion is not registered: '$out'"

# help TOPIC -> the words that start the command on the line. (`cordon help settings` lists no
# options: `settings import` takes only --help.)
# `cordon help session` lists the policy options for `session launch`, --settings among them,
# and says launch does not read it (the parser refuses it): it is not offered there.
while read -r topic words; do
        # shellcheck disable=SC2086
        "$cordon" help $topic | sed -n 's/^  \(-h, \)\{0,1\}\(--[a-z][a-z-]*\).*/\2/p' | sort -u |
                { [ "$topic" = session ] && grep -vx -- --settings || cat; } > "$tmp/help"
        "$cordon" help $topic | grep -q -- '^  -h, --help' && echo -h >> "$tmp/help"
        [ -s "$tmp/help" ] || { not_ok "cordon help $topic lists no options"; continue; }
        n=$(wc -l < "$tmp/help")
        # bash: what TAB offers after "cordon WORDS -" (run's "--json=" counts as --json)
        # shellcheck disable=SC2086
        bash -c '. "$1"; shift; COMP_WORDS=(cordon "$@" -); COMP_CWORD=$(($# + 1)); _cordon
                 printf "%s\n" "${COMPREPLY[@]%=}"' sh "$bash_script" $words > "$tmp/bash" 2>&1
        missing=$(grep -vxF -f "$tmp/bash" "$tmp/help" | tr '\n' ' ')
        [ -z "$missing" ] && ok "bash: cordon $words offers the $n options of 'cordon help $topic'" ||
                not_ok "bash: cordon $words does not offer: $missing"
        # fish: complete -C runs the completions as TAB does
        fish -c 'source $argv[1]; complete -C "cordon $argv[2] -" | string split -f1 \t' \
                "$fish_script" "$words" > "$tmp/fish" 2>&1
        missing=$(grep -vxF -f "$tmp/fish" "$tmp/help" | tr '\n' ' ')
        [ -z "$missing" ] && ok "fish: cordon $words offers the $n options of 'cordon help $topic'" ||
                not_ok "fish: cordon $words does not offer: $missing"
        # zsh: the _arguments specs of the command's case arm, ("run") ... ;;
        awk -v key="(\"$words\")" '{ line = $0; gsub(/^ +| +$/, "", line) }
                line == key { on = 1; next } on && line == ";;" { exit } on' "$zsh_script" |
                sed -n "s/^ *'\*\{0,1\}\(-[-a-z]*\).*/\1/p" | sed 's/=$//' \
                > "$tmp/zsh"
        missing=$(grep -vxF -f "$tmp/zsh" "$tmp/help" | tr '\n' ' ')
        [ -z "$missing" ] && ok "zsh: cordon $words has specs for the $n options of 'cordon help $topic'" ||
                not_ok "zsh: cordon $words lacks: $missing"
done <<'TOPICS'
run run
explain explain
probe probe
policy policy show
session session launch
exec exec
terminal terminal
TOPICS

# The commands of the overview, each offered as the first word.
"$cordon" --help | sed -n 's/^  \([a-z][a-z]*\)[ ,].*/\1/p' | sort -u > "$tmp/commands"
bash -c '. "$1"; COMP_WORDS=(cordon ""); COMP_CWORD=1; _cordon; printf "%s\n" "${COMPREPLY[@]}"' \
        sh "$bash_script" > "$tmp/bash"
missing=$(grep -vxF -f "$tmp/bash" "$tmp/commands" | tr '\n' ' ')
[ -s "$tmp/commands" ] && [ -z "$missing" ] &&
        ok "bash: cordon offers the $(wc -l < "$tmp/commands") commands of 'cordon --help'" ||
        not_ok "bash: cordon does not offer the commands: $missing"
fish -c 'source $argv[1]; complete -C "cordon " | string split -f1 \t' "$fish_script" > "$tmp/fish"
missing=$(grep -vxF -f "$tmp/fish" "$tmp/commands" | tr '\n' ' ')
[ -s "$tmp/commands" ] && [ -z "$missing" ] &&
        ok "fish: cordon offers the commands of 'cordon --help'" ||
        not_ok "fish: cordon does not offer the commands: $missing"

# Values: --mode and --backend complete to what the parser takes.
out=$(bash -c '. "$1"; COMP_WORDS=(cordon run --backend ""); COMP_CWORD=3; _cordon
               echo "${COMPREPLY[*]}"' sh "$bash_script")
[ "$out" = "auto native landlock microvm none" ] && ok "bash: --backend completes to the backends" ||
        not_ok "bash: --backend completes to '$out'"
out=$(fish -c 'source $argv[1]; complete -C "cordon policy show --mode r" | string split -f1 \t' \
        "$fish_script" | tr '\n' ' ')
[ "$out" = "read-only review " ] && ok "fish: --mode r completes to read-only, review" ||
        not_ok "fish: --mode r completes to '$out'"

# The operands offered after "help" and "completion" are ones the command takes.
for cmd in help completion; do
        words=$(bash -c '. "$1"; COMP_WORDS=(cordon "$2" ""); COMP_CWORD=2; _cordon
                         echo "${COMPREPLY[*]}"' sh "$bash_script" "$cmd")
        bad=$(for w in $words; do "$cordon" "$cmd" "$w" > /dev/null 2>&1 || printf ' %s' "$w"; done)
        [ -n "$words" ] && [ -z "$bad" ] && ok "bash: every word offered after '$cmd' works: $words" ||
                not_ok "bash: after '$cmd', offered '$words', refused:$bad"
done

# The command itself: the scripts on stdout, exit 0; a bad shell is one fatal line and 125.
"$cordon" completion bash | cmp -s - "$bash_script" && ok "the bash script is cordon's output" ||
        not_ok "the bash script differs from 'cordon completion bash'"
"$cordon" completion tcsh > "$tmp/out" 2> "$tmp/err"
rc=$?
[ "$rc" -eq 125 ] && [ ! -s "$tmp/out" ] &&
        [ "$(cat "$tmp/err")" = "cordon: fatal: USAGE: unknown shell 'tcsh'; use bash, zsh or fish" ] &&
        ok "cordon completion tcsh: exit 125 and one fatal line" ||
        not_ok "cordon completion tcsh: exit $rc, stderr '$(cat "$tmp/err")'"
"$cordon" completion > /dev/null 2> "$tmp/err"
rc=$?
[ "$rc" -eq 125 ] && [ "$(wc -l < "$tmp/err")" -eq 1 ] &&
        ok "cordon completion (no shell): exit 125 and one fatal line" ||
        not_ok "cordon completion (no shell): exit $rc, stderr '$(cat "$tmp/err")'"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
