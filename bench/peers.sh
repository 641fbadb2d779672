#!/bin/sh
# bench/peers.sh [DIR]: installs the peers bench/run.py measures cordon against, from the Debian
# and npm registries only: bubblewrap, socat and ripgrep (Debian; srt needs all three), Codex CLI
# (npm @openai/codex, whose package carries its Linux binary) and srt (npm
# @anthropic-ai/sandbox-runtime). DIR (default /var/lib/cordon-bench-peers) gets node_modules/,
# a private CODEX_HOME (codex-home/config.toml: the built-in ":workspace" permission profile, so
# `codex sandbox` confines like cordon's default) and nothing else. bench/run.py --peers DIR uses
# them. Versions are pinned so that a table compares what it names.
set -eu
dir=${1:-/var/lib/cordon-bench-peers}
CODEX_VERSION=0.171.0
SRT_VERSION=0.0.83
if [ "$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi
missing=""
for p in bubblewrap socat ripgrep nodejs npm; do
        # node and npm may come from elsewhere on this machine; only install what is absent.
        case $p in nodejs) command -v node >/dev/null && continue ;; npm) command -v npm >/dev/null && continue ;; esac
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
        $sudo apt-get update -q >/dev/null
        # shellcheck disable=SC2086
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends $missing >/dev/null
fi
mkdir -p "$dir/codex-home"
cd "$dir"
[ -f package.json ] || echo '{"private": true}' > package.json
npm install --no-audit --no-fund --silent "@openai/codex@$CODEX_VERSION" \
        "@anthropic-ai/sandbox-runtime@$SRT_VERSION"
# Codex's permission profiles: ":workspace" writes in the workspace roots (the -C directory),
# reads elsewhere, no network.
printf 'default_permissions = ":workspace"\n' > codex-home/config.toml
echo "peers installed in $dir: $(./node_modules/.bin/codex --version 2>/dev/null), srt $(./node_modules/.bin/srt --version 2>/dev/null)"
