#!/bin/sh
# bench/run-all.sh: `make bench`. Runs bench/run.py (start-up, creation rules), bench/net.py
# (the egress proxy) and bench/daemon.py (cordond's warm sessions, with the cordond next to the
# cordon binary) against the given cordon binary and records the results in BENCHMARKS.md (each
# in its own section between its markers). Takes a few minutes. The peers (Codex CLI, srt) are
# measured side by side when bench/peers.sh has installed them in $PEERS_DIR (default
# /var/lib/cordon-bench-peers); bubblewrap whenever it is installed.
#   bench/run-all.sh [build/cordon] [extra run.py options...]
set -eu
cd "$(dirname "$0")/.."
cordon=${1:-build/cordon}
[ $# -gt 0 ] && shift
peers=${PEERS_DIR:-/var/lib/cordon-bench-peers}
if [ -x "$peers/node_modules/.bin/codex" ] || [ -x "$peers/node_modules/.bin/srt" ]; then
        set -- --peers "$peers" "$@"
fi
python3 bench/run.py --cordon "$cordon" --write BENCHMARKS.md "$@"
python3 bench/net.py --cordon "$cordon" --write BENCHMARKS.md
exec python3 bench/daemon.py --cordon "$cordon" --write BENCHMARKS.md
