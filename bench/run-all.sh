#!/bin/sh
# bench/run-all.sh: `make bench`. Runs bench/run.py (start-up, creation rules), bench/net.py
# (the egress proxy) and bench/daemon.py (cordond's warm sessions, with the cordond next to the
# cordon binary) against the given cordon binary and records the results in BENCHMARKS.md (each
# in its own section between its markers). Takes a few minutes.
#   bench/run-all.sh [build/cordon] [extra run.py options...]
set -eu
cd "$(dirname "$0")/.."
cordon=${1:-build/cordon}
[ $# -gt 0 ] && shift
python3 bench/run.py --cordon "$cordon" --write BENCHMARKS.md "$@"
python3 bench/net.py --cordon "$cordon" --write BENCHMARKS.md
exec python3 bench/daemon.py --cordon "$cordon" --write BENCHMARKS.md
