# SPDX-License-Identifier: Apache-2.0
# What the shell tests of tests/secrets share: the store's place beneath $HOME, the counters and
# their report, and `expect`. Sourced after HOME and base are set; $phase, when set, prefixes
# every check's name.
store=$HOME/.config/cordon/secrets/store
fails=0
pass=0
ok() { echo "ok - ${phase:+$phase: }$1"; pass=$((pass + 1)); }
bad() { echo "not ok - ${phase:+$phase: }$1"; fails=$((fails + 1)); }
# expect DESC STATUS GREP-IN-STDERR CMD...: CMD's exit status and a line of its stderr.
expect() {
        desc=$1 want=$2 pat=$3
        shift 3
        "$@" >"$base/out" 2>"$base/err"
        got=$?
        if [ "$got" -eq "$want" ] && { [ -z "$pat" ] || grep -q -- "$pat" "$base/err"; }; then
                ok "$desc"
        else
                bad "$desc (exit $got, want $want; stderr: $(cat "$base/err"))"
        fi
}
