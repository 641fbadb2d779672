#!/bin/sh
# scripts/demo.sh: a real sandboxed demo with the built-in default policy (`make demo`).
#
#   scripts/demo.sh [PATH/TO/cordon]      (default: build/cordon)
#
# In a temporary workspace, with a fake HOME holding a fake ~/.ssh/id_rsa, it shows a command that
# works, a write outside the workspace refused, a secret read refused, `touch .env` refused with no
# file left behind, and `cordon probe`. Exit 0 when everything behaved as expected, 1 otherwise.
set -u

cordon=${1:-build/cordon}
case $cordon in /*) ;; *) cordon=$(pwd)/$cordon ;; esac
if [ ! -x "$cordon" ]; then
        echo "demo: no cordon binary at $cordon (run 'make build' first)" >&2
        exit 1
fi

# Not under /tmp: the sandbox gets a private /tmp, which would hide the fake home for the wrong
# reason.
demo=$(mktemp -d /var/tmp/cordon-demo.XXXXXX)
trap 'rm -rf "$demo"' EXIT
trap 'exit 1' HUP INT PIPE TERM
home=$demo/home
ws=$demo/workspace
mkdir -p "$home/.ssh" "$ws"
echo "-----BEGIN OPENSSH PRIVATE KEY----- (fake, for the cordon demo)" > "$home/.ssh/id_rsa"
chmod 700 "$home/.ssh" && chmod 600 "$home/.ssh/id_rsa"

failures=0
n=0

if [ -t 1 ]; then bold=$(printf '\033[1m') green=$(printf '\033[32m') red=$(printf '\033[31m') \
        off=$(printf '\033[0m'); else bold= green= red= off=; fi

heading() {
        n=$((n + 1))
        printf '\n%s%d. %s%s\n' "$bold" "$n" "$1" "$off"
}

# show DISPLAY CMD...: prints DISPLAY (the command as a user would type it), runs CMD in the
# workspace with the fake HOME, indents its output; sets `status`.
show() {
        printf '   $ %s\n' "$1"
        shift
        (cd "$ws" && env HOME="$home" "$@") > "$demo/out" 2>&1
        status=$?
        sed 's/^/     /' "$demo/out"
        printf '     [exit status %d]\n' "$status"
}

verdict() {
        if [ "$1" = ok ]; then
                printf '   %sas expected:%s %s\n' "$green" "$off" "$2"
        else
                printf '   %sNOT as expected:%s %s\n' "$red" "$off" "$2"
                failures=$((failures + 1))
        fi
}

heading "A command that works: write and read a file in the workspace"
show "cordon run -- sh -c 'echo hello > out.txt && cat out.txt'" \
        "$cordon" run -- sh -c 'echo hello > out.txt && cat out.txt'
if [ "$status" -eq 0 ] && grep -qx hello "$ws/out.txt" 2>/dev/null; then
        verdict ok "it ran, and out.txt is in the workspace on the host"
else
        verdict bad "the command should have worked"
fi

heading "A write outside the workspace is refused"
show "cordon run -- sh -c 'echo pwned > \"\$HOME/outside.txt\"'" \
        "$cordon" run -- sh -c 'echo pwned > "$HOME/outside.txt"'
if [ "$status" -ne 0 ] && [ ! -e "$home/outside.txt" ]; then
        verdict ok "refused; \$HOME/outside.txt does not exist on the host"
else
        verdict bad "the write outside the workspace was not refused"
fi

heading "A secret read is refused"
show "cordon run -- sh -c 'cat ~/.ssh/id_rsa'" "$cordon" run -- sh -c 'cat ~/.ssh/id_rsa'
if [ "$status" -ne 0 ] && ! grep -q "PRIVATE KEY" "$demo/out"; then
        verdict ok "the key stayed hidden"
else
        verdict bad "the secret was readable"
fi

heading "Creating .env is refused, and no file is left behind"
show "cordon run -- touch .env" "$cordon" run -- touch .env
if [ "$status" -ne 0 ] && [ ! -e "$ws/.env" ]; then
        verdict ok "refused at creation time; no .env in the workspace on the host"
else
        verdict bad ".env was created or the command did not fail"
fi

# A server on the host's loopback, like a local dev server. The sandbox reaches it only through
# its egress proxy, and only when the policy allows that address and port.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
echo "hello from the host" > "$demo/index.html"
python3 -m http.server "$port" --bind 127.0.0.1 --directory "$demo" >/dev/null 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; rm -rf "$demo"' EXIT
for _ in 1 2 3 4 5 6 7 8 9 10; do
        python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), 1)" \
                2>/dev/null && break
        sleep 0.2
done

heading "The network goes through the egress proxy: an unlisted host is refused"
show "cordon run -- curl -sS http://127.0.0.1:$port/index.html" \
        "$cordon" run -- curl -sS "http://127.0.0.1:$port/index.html"
if grep -q "not in allowlist" "$demo/out" && ! grep -q "hello from the host" "$demo/out"; then
        verdict ok "the proxy answered 403 with the rule that refused it"
else
        verdict bad "the request was not refused by the proxy"
fi

heading "... and an allowed one works"
show "cordon run --allow-domain 127.0.0.1:$port -- curl -sS http://127.0.0.1:$port/index.html" \
        "$cordon" run --allow-domain "127.0.0.1:$port" -- curl -sS "http://127.0.0.1:$port/index.html"
if [ "$status" -eq 0 ] && grep -q "hello from the host" "$demo/out"; then
        verdict ok "allowed by --allow-domain, fetched through the proxy"
else
        verdict bad "the allowed request failed"
fi

heading "What this host can enforce: cordon probe"
show "cordon probe" "$cordon" probe
if [ "$status" -eq 0 ]; then
        verdict ok "probe ran"
else
        verdict bad "cordon probe failed"
fi

echo
if [ "$failures" -eq 0 ]; then
        echo "demo: all $n steps behaved as expected"
        exit 0
fi
echo "demo: $failures of $n steps did NOT behave as expected"
exit 1
