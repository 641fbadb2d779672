#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tests/secrets/test_secret_cli.sh CORDON SECRET_GET: `cordon secret` with the file store (no
# session bus): set from stdin (one trailing newline removed), a value as an argument refused,
# an empty or oversized value refused, list (names only, --json), rm, bad names; a bus that
# cannot be asked is an error, never a quiet switch to the files; and the sandbox's view: a
# sandboxed command can neither read the store nor set a secret. As root and as cordon-test
# (secrets-cli-user).
set -u
here=$(cd "$(dirname "$0")" && pwd) # before any cd: $0 may be relative
abs() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
C=$(abs "$1")
GET=$(abs "$2")
base=$(mktemp -d "${CORDON_TEST_TMP:-/var/tmp}/cordon-secret-cli.XXXXXX")
trap 'rm -rf "$base"' EXIT
export HOME="$base/home"
mkdir -p "$HOME" "$base/ws"
cd "$base/ws" || exit 1
unset DBUS_SESSION_BUS_ADDRESS
# shellcheck source=tests/secrets/lib.sh
. "$here/lib.sh"

printf 'v1\n' | expect "set from stdin" 0 "" "$C" secret set tok
grep -q "the file store ~/.config/cordon/secrets/store (no session bus" "$base/out" &&
        ok "set says the store and why" || bad "set says the store and why: $(cat "$base/out")"
[ "$(od -An -c "$store/tok" | tr -d ' ')" = "v1" ] && ok "one trailing newline removed" ||
        bad "stored bytes: $(od -c "$store/tok")"
[ "$(stat -c %a "$store/tok")" = 600 ] && [ "$(stat -c %a "$store")" = 700 ] &&
        [ "$(stat -c %a "$HOME/.config/cordon")" = 700 ] && ok "modes 0600/0700" ||
        bad "modes $(stat -c %a "$store/tok" "$store")"
[ "$("$GET" tok)" = v1 ] && ok "secret_store_get reads it" || bad "secret_store_get"
printf 'a\n\n' | expect "only one newline removed" 0 "" "$C" secret set two
[ "$(od -An -c "$store/two" | tr -d ' ')" = 'a\n' ] && ok "a value's own newline kept" ||
        bad "stored: $(od -c "$store/two")"

expect "a value as an argument is refused" 125 \
        "cordon: fatal: USAGE: 'cordon secret set' takes the value on standard input" \
        "$C" secret set tok hunter2 </dev/null
[ "$("$GET" tok)" = v1 ] && ok "... and the secret is unchanged" || bad "changed by argv"
printf '' | expect "an empty value is refused" 125 "USAGE: secrets: the value is empty" \
        "$C" secret set tok
printf '\n' | expect "a lone newline is refused" 125 "the value is empty" "$C" secret set tok
head -c 16385 /dev/zero | tr '\0' x | expect "a value over 16384 bytes is refused" 125 \
        "longer than 16384" "$C" secret set big
head -c 16384 /dev/zero | tr '\0' x | expect "16384 bytes are taken" 0 "" "$C" secret set big
printf 'a\000b' | expect "a NUL in the value is refused" 125 "no NUL" "$C" secret set nul
expect "a bad name is refused" 125 "USAGE: '../x' is not a secret name" "$C" secret set ../x
expect "set needs a NAME" 125 "needs a NAME" "$C" secret set
expect "an unknown subcommand" 125 "unknown secret subcommand 'get'" "$C" secret get tok

expect "list" 0 "cordon: 3 secrets in the file store" "$C" secret list
[ "$(cat "$base/out")" = "big
tok
two" ] && ok "list prints the names only, sorted" || bad "list: $(cat "$base/out")"
grep -q v1 "$base/out" "$base/err" && bad "list shows a value" || ok "list shows no value"
expect "list --json" 0 "" "$C" secret list --json
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["store"]=="file", d
assert d["names"]==["big","tok","two"], d' "$base/out" && ok "list --json: store and names" ||
        bad "list --json: $(cat "$base/out")"
expect "list takes no operand" 125 "USAGE" "$C" secret list tok

expect "rm" 0 "" "$C" secret rm two
[ ! -e "$store/two" ] && ok "rm removed the file" || bad "rm left the file"
expect "rm of a missing secret" 125 "USAGE: secrets: no secret 'two' is stored" "$C" secret rm two

# A session bus that cannot be asked: the user's secrets may be in a service on it, so no store
# is used (never a quiet switch to the files).
DBUS_SESSION_BUS_ADDRESS=unix:path=$base/no-such-bus expect "an unreachable bus is an error" 125 \
        "LAUNCH_FAILED: secrets: cannot ask the session bus" "$C" secret list
printf 'x' | DBUS_SESSION_BUS_ADDRESS=unix:path=$base/no-such-bus expect \
        "... set too" 125 "unset DBUS_SESSION_BUS_ADDRESS to use the file store" "$C" secret set tok
[ "$("$GET" tok)" = v1 ] && ok "... and the file store is untouched" || bad "file store changed"

expect "probe" 0 "" "$C" probe --json
python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["secrets"]
assert d["store"]=="file" and d["usable"] and not d["requiresInstall"], d' "$base/out" &&
        ok "probe --json: the file store" || bad "probe --json: $(cat "$base/out")"
DBUS_SESSION_BUS_ADDRESS=unix:path=$base/no-such-bus expect "probe with an unreachable bus" 0 "" \
        "$C" probe
grep -q "^secrets: none usable (cannot ask the session bus" "$base/out" &&
        ok "... says no store is usable" || bad "probe: $(grep secrets "$base/out")"

# The sandbox: the store is read- and write-denied (src/plan/plan.c's secret set).
expect "a sandboxed command cannot read a secret file" 1 "" \
        "$C" run -- cat "$store/tok"
grep -q v1 "$base/out" && bad "... it printed the value" || ok "... and printed nothing of it"
expect "a sandboxed command cannot list the store" 2 "" "$C" run -- ls "$store"
printf 'evil' >"$base/evil"
# (The cordon inside runs without LeakSanitizer, which cannot work in a sandbox: under ASan it
# would turn the exit status into 1.)
expect "a sandboxed cordon secret set fails" 125 "LAUNCH_FAILED: secrets: cannot open" \
        "$C" run -- sh -c "ASAN_OPTIONS=detect_leaks=0 '$C' secret set tok < '$base/evil'"
[ "$("$GET" tok)" = v1 ] && ok "... and the secret is unchanged" || bad "sandbox changed it"

echo "$pass passed, $fails failed"
[ "$fails" -eq 0 ]
