#!/bin/sh
# tests/run-all.sh: the whole test suite (`make check`, and .ci/run through it).
#
#  1. installs missing Debian packages (scripts/install-deps.sh);
#  2. as root, creates the unprivileged account the integration suite runs as (cordon-test);
#  3. builds $BUILD (release, warnings are errors) and $ASAN_BUILD (ASan+UBSan);
#  4. runs every meson suite in both (unit and integration, the latter as root and as the
#     unprivileged user), the ASan build with leak detection on and UBSan halting on error;
#  5. builds the Debian packages from a copy of the tree, lints, installs and runs them
#     (tests/package/run.sh);
#  6. builds the libFuzzer targets in $FUZZ_BUILD (clang) and runs each for a bounded time over its
#     seed corpus;
#  7. prints `N passed, N failed, N skipped` summed from meson's testlog.json files (plus one
#     entry per build and per fuzz target) and exits non-zero on any failure.
#
# With CORDON_TEST_MUST_WORK=1 (CI) a skipped test counts as a failure.
# Knobs: BUILD, ASAN_BUILD, FUZZ_BUILD (directories), FUZZ_SECONDS (per target, default 20),
# CHECK_SKIP_FUZZ=1, CHECK_SKIP_ASAN=1 (local shortcuts; never set in CI).
set -u
cd "$(dirname "$0")/.."

BUILD=${BUILD:-build}
ASAN_BUILD=${ASAN_BUILD:-build-asan}
FUZZ_BUILD=${FUZZ_BUILD:-build-fuzz}
FUZZ_SECONDS=${FUZZ_SECONDS:-20}
JOBS=${JOBS:-2}
RESULTS=$(mktemp /tmp/cordon-check.XXXXXX)
trap 'rm -f "$RESULTS"' EXIT

step() { printf '\n==== %s\n' "$*"; }
# record NAME passed|failed|skipped: an extra entry for the summary (builds, fuzz runs).
record() { printf '%s\t%s\n' "$2" "$1" >> "$RESULTS"; }

step "dependencies"
if ! scripts/install-deps.sh; then
        echo "run-all: installing dependencies failed" >&2
        record "install-deps" failed
fi

if [ "$(id -u)" -eq 0 ] && ! id -u cordon-test >/dev/null 2>&1; then
        step "creating the unprivileged test user cordon-test"
        useradd -M -s /usr/sbin/nologin cordon-test || record "useradd cordon-test" failed
fi

# configure DIR OPTIONS...: sets up DIR, or re-applies OPTIONS to an existing one.
configure() {
        dir=$1
        shift
        if [ -f "$dir/build.ninja" ]; then
                meson configure "$dir" "$@" >/dev/null
        else
                meson setup "$dir" "$@" >/dev/null
        fi
}

# build NAME DIR OPTIONS...: configure + ninja; records a failure and returns 1 if either fails.
build() {
        name=$1
        dir=$2
        shift 2
        step "build $name ($dir)"
        if configure "$dir" "$@" && ninja -C "$dir" -j "$JOBS"; then
                return 0
        fi
        record "build $name" failed
        return 1
}

# run_meson_tests DIR MULTIPLIER: all suites; appends each test's result to $RESULTS.
run_meson_tests() {
        step "meson test ($1)"
        rm -f "$1/meson-logs/testlog.json"
        meson test -C "$1" --print-errorlogs --num-processes "$JOBS" \
                --timeout-multiplier "$2" || true
        if [ ! -s "$1/meson-logs/testlog.json" ]; then
                record "meson test $1 (no testlog.json)" failed
                return
        fi
        python3 - "$1" >> "$RESULTS" <<'EOF'
import json, sys
d = sys.argv[1]
for line in open(d + "/meson-logs/testlog.json"):
    t = json.loads(line)
    r = t["result"]
    kind = {"OK": "passed", "EXPECTEDFAIL": "passed", "SKIP": "skipped"}.get(r, "failed")
    print(f"{kind}\t{d}: {t['name']} ({r})")
    # The integration suites count their own checks: show them (not counted again).
    last = [l for l in (t.get("stdout") or "").splitlines() if " passed, " in l]
    if last:
        print(f"info\t{d}: {t['name']}: {last[-1]}")
EOF
}

if build release "$BUILD" -Dbuildtype=release -Dwerror=true; then
        run_meson_tests "$BUILD" 1
fi

if [ "${CHECK_SKIP_ASAN:-0}" != 1 ]; then
        if build asan "$ASAN_BUILD" -Dbuildtype=debug -Dwerror=true \
                -Db_sanitize=address,undefined -Db_lundef=false; then
                # Leak detection on; any UBSan report stops the program (and fails its test).
                ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:strict_string_checks=1:detect_stack_use_after_return=1 \
                UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
                        run_meson_tests "$ASAN_BUILD" 3
        fi
fi

# ---- the Debian package ----------------------------------------------------------------------

# Built from a copy of the tree, checked with lintian, installed, run from /usr/bin as root and
# as the unprivileged user, removed again (tests/package/run.sh). Skipped (recorded) only when
# not root: installing packages needs it.
step "Debian package (tests/package/run.sh)"
JOBS=$JOBS sh tests/package/run.sh
case $? in
0) record "debian package: build, lintian, install, run" passed ;;
77) record "debian package (skipped: not root)" skipped ;;
*) record "debian package: build, lintian, install, run" failed ;;
esac

# ---- fuzzing ---------------------------------------------------------------------------------

# Executables the fuzz build defines under fuzz/ as libFuzzer targets (not the corpus replayers).
fuzz_targets() {
        meson introspect --targets "$FUZZ_BUILD" | python3 -c '
import json, os, sys
for t in json.load(sys.stdin):
    if t["type"] == "executable" and t["subproject"] is None and t["name"].startswith("fuzz-") \
            and not t["name"].endswith("-corpus") and t["defined_in"].endswith("fuzz/meson.build"):
        print(os.path.relpath(t["filename"][0], os.path.realpath(sys.argv[1])))' "$FUZZ_BUILD"
}

run_fuzzers() {
        if ! grep -qs "option('fuzz'" meson_options.txt meson.options; then
                echo "run-all: no fuzz option in this tree; nothing to fuzz"
                return
        fi
        if ! command -v clang >/dev/null; then
                record "fuzz: clang missing" failed
                return
        fi
        step "build fuzz ($FUZZ_BUILD, clang)"
        if [ ! -f "$FUZZ_BUILD/build.ninja" ]; then
                CC=clang meson setup "$FUZZ_BUILD" -Dfuzz=enabled -Dbuildtype=debugoptimized \
                        >/dev/null || { record "build fuzz" failed; return; }
        fi
        targets=$(fuzz_targets)
        # shellcheck disable=SC2086
        if [ -z "$targets" ] || ! ninja -C "$FUZZ_BUILD" -j "$JOBS" $targets; then
                record "build fuzz" failed
                return
        fi
        for rel in $targets; do
                exe=$FUZZ_BUILD/$rel
                name=$(basename "$rel")
                corpus=fuzz/corpus/${name#fuzz-}
                work=$(mktemp -d /tmp/cordon-fuzz.XXXXXX)
                set -- -max_total_time="$FUZZ_SECONDS" -timeout=10 -rss_limit_mb=2048 \
                        -artifact_prefix="$work/"
                [ -f "fuzz/${name#fuzz-}.dict" ] && set -- "$@" -dict="fuzz/${name#fuzz-}.dict"
                [ -d "$corpus" ] || corpus=
                step "fuzz $name for ${FUZZ_SECONDS}s (${corpus:-no seed corpus})"
                # New inputs go to the scratch directory; the checked-in seeds are only read.
                if "$exe" "$@" "$work" $corpus > "$work/log" 2>&1; then
                        tail -n 2 "$work/log"
                        record "fuzz $name" passed
                else
                        tail -n 40 "$work/log"
                        ls "$work"/crash-* "$work"/leak-* "$work"/timeout-* 2>/dev/null
                        record "fuzz $name (artifacts kept in $work)" failed
                        continue
                fi
                rm -rf "$work"
        done
}

if [ "${CHECK_SKIP_FUZZ:-0}" != 1 ]; then
        run_fuzzers
fi

# ---- summary ---------------------------------------------------------------------------------

step "summary"
grep -v '^passed' "$RESULTS" | sed 's/^/  /'
passed=$(grep -c '^passed' "$RESULTS")
failed=$(grep -c '^failed' "$RESULTS")
skipped=$(grep -c '^skipped' "$RESULTS")
if [ "${CORDON_TEST_MUST_WORK:-0}" = 1 ] && [ "$skipped" -gt 0 ]; then
        echo "  CORDON_TEST_MUST_WORK=1: the $skipped skipped test(s) count as failures"
        failed=$((failed + skipped))
        skipped=0
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
