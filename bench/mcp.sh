#!/bin/sh
# bench/mcp.sh [build/cordon] [rounds]: bench/mcp.mjs with the MCP SDK tests/mcp pins, installed
# (`npm ci`) into a scratch copy under /var/tmp, in a scratch workspace there (the file tools
# write bench-mcp.txt in it). Needs node, npm and the npm registry.
set -eu
cd "$(dirname "$0")/.."
cordon=$(realpath "${1:-build/cordon}")
tmp=$(mktemp -d /var/tmp/cordon-bench-mcp.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cp tests/mcp/package.json tests/mcp/package-lock.json bench/mcp.mjs "$tmp/"
(cd "$tmp" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null)
mkdir "$tmp/ws"
cd "$tmp/ws" && node ../mcp.mjs "$cordon" "${2:-100}"
