#!/bin/sh
# bench/run-all.sh: `make bench`. Runs bench/run.py against the given cordon binary and records the
# results in BENCHMARKS.md (the section between the results markers). Takes a few minutes.
#   bench/run-all.sh [build/cordon] [extra run.py options...]
set -eu
cd "$(dirname "$0")/.."
cordon=${1:-build/cordon}
[ $# -gt 0 ] && shift
exec python3 bench/run.py --cordon "$cordon" --write BENCHMARKS.md "$@"
