#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tests/secrets/test_secret_service.sh CORDON SECRET_GET: the Secret Service store with a real
# service: gnome-keyring-daemon, unlocked with a password on stdin, on a session bus of the
# test's own (dbus-daemon listening on a path socket beside the test's home, so a sandboxed
# command could name it). Through cordon: set (checked with secret-tool), replace, list, rm, the
# launcher's read (secret_store_get), a name left in the file store ignored, a locked collection
# refused (no fallback to the files), and the sandbox: no bus address in its environment, and
# the bus unreachable even when the address is passed in. Then a bus with no Secret Service:
# the file store, said so. As root and as cordon-test (secrets-service-user).
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/runner.sh"
abs() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }

for tool in dbus-daemon gnome-keyring-daemon secret-tool dbus-send; do
        command -v "$tool" >/dev/null 2>&1 ||
                skip "$tool is missing (scripts/install-deps.sh installs it)"
done

# bus_config DIR SERVICES: a session bus config listening on DIR/bus; SERVICES = 1 lets it
# start the services installed for the session (gnome-keyring's org.freedesktop.secrets).
bus_config() {
        {
                echo '<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"'
                echo ' "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">'
                echo "<busconfig><type>session</type><listen>unix:path=$1/bus</listen>"
                echo "<auth>EXTERNAL</auth>"
                [ "$2" = 1 ] && echo "<standard_session_servicedirs/>"
                echo '<policy context="default"><allow send_destination="*" eavesdrop="true"/>'
                echo '<allow eavesdrop="true"/><allow own="*"/></policy></busconfig>'
        } >"$1/bus.conf"
}

if [ "${1:-}" != --inner ]; then
        C=$(abs "$1")
        GET=$(abs "$2")
        base=$(mktemp -d "${CORDON_TEST_TMP:-/var/tmp}/cordon-secret-ss.XXXXXX")
        trap 'rm -rf "$base"' EXIT
        status=0
        for phase in service none; do
                mkdir -p "$base/$phase"
                bus_config "$base/$phase" "$([ $phase = service ] && echo 1 || echo 0)"
                dbus-run-session --config-file="$base/$phase/bus.conf" -- \
                        sh "$0" --inner "$phase" "$C" "$GET" "$base/$phase" || status=1
        done
        exit $status
fi

phase=$2 C=$3 GET=$4 base=$5
export HOME="$base/home"
mkdir -p "$HOME" "$base/ws"
cd "$base/ws" || exit 1
# shellcheck source=tests/secrets/lib.sh
. "$here/lib.sh"
out_has() { grep -q -- "$2" "$base/out" && ok "$1" || bad "$1: $(cat "$base/out")"; }

if [ "$phase" = none ]; then
        printf 'v1\n' | expect "set with no service on the bus" 0 "" "$C" secret set tok
        out_has "... says the file store and why" \
                "the file store ~/.config/cordon/secrets/store (no Secret Service on the session bus)"
        [ "$(cat "$store/tok")" = v1 ] && ok "... and wrote the file" || bad "no file"
        [ "$("$GET" tok)" = v1 ] && ok "secret_store_get reads the file" || bad "get"
        expect "probe" 0 "" "$C" probe
        out_has "probe: the file store and why" \
                "^secrets: file store ~/.config/cordon/secrets/store (no Secret Service on the session bus)$"
        out_has "probe: the keyring's install hint" "hint: install a Secret Service"
        echo "$pass passed, $fails failed"
        [ "$fails" -eq 0 ]
        exit
fi

# The daemon, unlocked (a fresh login keyring with this password). Its pid, from the bus, to
# end it (by pid) when the test is done.
printf 'pw' | gnome-keyring-daemon --unlock --components=secrets >/dev/null 2>&1
# The daemon claims its name on the bus after --unlock returns: wait for that event (a call
# before it would have the bus start a second, locked daemon). Bounded: 10 s.
owned() {
        dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
                org.freedesktop.DBus.NameHasOwner string:org.freedesktop.secrets 2>/dev/null |
                grep -q "boolean true"
}
n=0
while ! owned && [ $n -lt 200 ]; do sleep 0.05; n=$((n + 1)); done
owned || { echo "not ok - gnome-keyring-daemon never took org.freedesktop.secrets"; exit 1; }
kpid=$(dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
        org.freedesktop.DBus.GetConnectionUnixProcessID string:org.freedesktop.secrets 2>/dev/null |
        awk '/uint32/ {print $2}')
trap '[ -n "$kpid" ] && kill "$kpid" 2>/dev/null' EXIT

printf 'v1\n' | expect "set" 0 "" "$C" secret set tok
out_has "... says the Secret Service and why" \
        "in the Secret Service (org.freedesktop.secrets is on the session bus)"
[ "$(secret-tool lookup application cordon name tok)" = v1 ] &&
        ok "secret-tool finds the item" || bad "secret-tool lookup"
[ ! -e "$store/tok" ] && ok "no file written" || bad "a file was written"
expect "probe" 0 "" "$C" probe
out_has "probe: the Secret Service" \
        "^secrets: Secret Service (org.freedesktop.secrets is on the session bus)$"
expect "probe --json" 0 "" "$C" probe --json
python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["secrets"]
assert d["store"]=="secret-service" and d["usable"] and not d["requiresInstall"], d' \
        "$base/out" && ok "probe --json: the Secret Service" || bad "probe --json: $(cat "$base/out")"
[ "$("$GET" tok)" = v1 ] && ok "secret_store_get reads the service" || bad "get: $("$GET" tok 2>&1)"
printf 'v2' | expect "set again" 0 "" "$C" secret set tok
[ "$(secret-tool lookup application cordon name tok)" = v2 ] && ok "replaced" || bad "not replaced"
[ "$(secret-tool search --all application cordon name tok 2>&1 | grep -c '^secret = ')" = 1 ] &&
        ok "one item per name" || bad "$(secret-tool search --all application cordon 2>&1)"
printf 'w' | expect "set another" 0 "" "$C" secret set other.name
expect "list" 0 "cordon: 2 secrets in the Secret Service" "$C" secret list
[ "$(cat "$base/out")" = "other.name
tok" ] && ok "list: the names" || bad "list: $(cat "$base/out")"
expect "list --json" 0 "" "$C" secret list --json
out_has "list --json: the store" '"store":"secret-service"'

# A name left in the file store is not read while the service is on the bus.
mkdir -p "$store" && chmod 700 "$HOME/.config" "$HOME/.config/cordon" \
        "$HOME/.config/cordon/secrets" "$store"
printf 'fromfile' >"$store/filename" && chmod 600 "$store/filename"
expect "a file-store name is noted" 0 "'filename' in the file store is not used" "$C" secret list
expect "... and not read" 1 "no secret 'filename' is stored in the Secret Service" "$GET" filename

# The sandbox: the bus address is scrubbed, and the bus refused even when it is passed in.
expect "sandbox: run works" 0 "" "$C" run -- sh -c 'echo "[$DBUS_SESSION_BUS_ADDRESS]"'
out_has "sandbox: no DBUS_SESSION_BUS_ADDRESS" "^\[\]$"
for backend in native landlock; do
        "$C" run --backend "$backend" -- true 2>/dev/null || continue
        "$C" run --backend "$backend" --env-pass DBUS_SESSION_BUS_ADDRESS -- \
                secret-tool lookup application cordon name tok >"$base/out" 2>"$base/err"
        st=$?
        [ $st -ne 0 ] && ! grep -q v2 "$base/out" && ok "sandbox ($backend): secret-tool gets nothing" ||
                bad "sandbox ($backend): secret-tool read the secret (exit $st)"
        expect "sandbox ($backend): the bus refuses the connection" 1 "" \
                "$C" run --backend "$backend" --env-pass DBUS_SESSION_BUS_ADDRESS -- \
                dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
                org.freedesktop.DBus.ListNames
        expect "sandbox ($backend): cordon secret list fails closed" 125 \
                "cannot ask the session bus" \
                "$C" run --backend "$backend" --env-pass DBUS_SESSION_BUS_ADDRESS -- \
                env ASAN_OPTIONS=detect_leaks=0 "$C" secret list # no LeakSanitizer in a sandbox
done

expect "rm" 0 "" "$C" secret rm other.name
out_has "rm says the store" "Removed secret 'other.name' from the Secret Service"
secret-tool lookup application cordon name other.name >/dev/null 2>&1 &&
        bad "rm left the item" || ok "rm removed the item"
expect "rm of a missing secret" 125 "USAGE: secrets: no secret 'other.name'" \
        "$C" secret rm other.name

# Locked: every read and write fails, plainly; nothing falls back to the files.
coll=$(dbus-send --session --print-reply --dest=org.freedesktop.secrets /org/freedesktop/secrets \
        org.freedesktop.Secret.Service.ReadAlias string:default | awk '/object path/ {print $3}' |
        tr -d '"')
dbus-send --session --print-reply --dest=org.freedesktop.secrets /org/freedesktop/secrets \
        org.freedesktop.Secret.Service.Lock "array:objpath:$coll" >/dev/null
expect "locked: the launcher's read fails" 1 "holds the secret but cannot give it: its collection is locked" "$GET" tok
printf 'v3' | expect "locked: set fails" 125 "LAUNCH_FAILED: secrets: the Secret Service did not store the secret: its collection is locked; unlock it" \
        "$C" secret set tok
[ ! -e "$store/tok" ] && ok "locked: no file written" || bad "locked: fell back to a file"
expect "locked: list still names" 0 "" "$C" secret list
out_has "locked: list shows tok" "^tok$"

echo "$pass passed, $fails failed"
[ "$fails" -eq 0 ]
