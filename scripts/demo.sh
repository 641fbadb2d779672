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
