# shellcheck shell=sh
# tests/integration/lib.sh: the harness of the integration suite (POSIX sh, sourced by suite.sh).
#
# Output is TAP-like ("ok N - name", "not ok N - name", diagnostics as "# ..."), ending with the
# line "N passed, N failed, N skipped". Exit 0 when nothing failed, 1 otherwise, 77 when
# everything was skipped; with CORDON_TEST_MUST_WORK=1 a skip counts as a failure.
#
# Expected from the caller: CORDON, ATTACK, NOSANDBOX (absolute paths), IT_TMP (a fresh directory
# this user owns, outside /tmp: the sandbox has a private /tmp).

N_PASS=0
N_FAIL=0
N_SKIP=0
N_TEST=0
MUST_WORK=${CORDON_TEST_MUST_WORK:-0}

ok() {
        N_TEST=$((N_TEST + 1))
        N_PASS=$((N_PASS + 1))
        echo "ok $N_TEST - $1"
}

# known_gap NAME REASON: a documented limitation (SECURITY.md) that the check still shows. TAP
# "# TODO": printed and counted apart, not a failure — so the suite stays honest about it without
# pretending it passes. Only for gaps written down as out of scope.
N_TODO=${N_TODO:-0}
known_gap() {
        N_TEST=$((N_TEST + 1))
        N_TODO=$((N_TODO + 1))
        echo "not ok $N_TEST - $1 # TODO known limitation: $2"
}

# not_ok NAME [DETAIL...]: a failure; details and the last run's output go out as diagnostics.
not_ok() {
        N_TEST=$((N_TEST + 1))
        N_FAIL=$((N_FAIL + 1))
        echo "not ok $N_TEST - $1"
        shift
        for d in "$@"; do printf '#   %s\n' "$d"; done
        show_last_run
}

skip() {
        N_TEST=$((N_TEST + 1))
        if [ "$MUST_WORK" = 1 ]; then
                N_FAIL=$((N_FAIL + 1))
                echo "not ok $N_TEST - $1 # SKIP not allowed (CORDON_TEST_MUST_WORK=1): $2"
        else
                N_SKIP=$((N_SKIP + 1))
                echo "ok $N_TEST - $1 # SKIP $2"
        fi
}

show_last_run() {
        [ -n "${LAST_OUT:-}" ] || return 0
        # printf, not echo: dash's echo would expand backslash escapes in the command text.
        printf '#   command: %s\n' "$(printf '%s' "$LAST_CMD" | tr '\n\t' '  ')"
        printf '#   status: %s\n' "$LAST_STATUS"
        sed -n '1,25s/^/#   stdout: /p' "$LAST_OUT"
        sed -n '1,40s/^/#   stderr: /p' "$LAST_ERR"
}

finish() {
        [ "$N_TODO" -gt 0 ] && echo "# $N_TODO known limitation(s) shown as TODO (see SECURITY.md)"
        echo "$N_PASS passed, $N_FAIL failed, $N_SKIP skipped"
        [ "$N_FAIL" -eq 0 ] || exit 1
        [ "$N_PASS" -gt 0 ] || exit 77
        exit 0
}

# ---- running things --------------------------------------------------------------------------

# The environment every cordon run gets: nothing from the caller but PATH, the fake HOME, and the
# sanitizer settings of an ASan build (so leaks in cordon are still reported).
base_env() {
        echo "PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"
        echo "HOME=$FAKE_HOME"
        echo "LC_ALL=C"
        for v in ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS LD_LIBRARY_PATH; do
                eval "val=\${$v:-}"
                # shellcheck disable=SC2154
                [ -n "$val" ] && echo "$v=$val"
        done
        return 0
}

RUN_SEQ=0
# run_in DIR CMD...: runs CMD (the caller's, not wrapped in cordon) in DIR with the clean
# environment plus $EXTRA_ENV (newline-separated NAME=VALUE); sets LAST_STATUS/LAST_OUT/LAST_ERR.
# stdin is /dev/null unless STDIN_FROM is set.
run_in() {
        dir=$1
        shift
        RUN_SEQ=$((RUN_SEQ + 1))
        LAST_OUT=$IT_TMP/log/$RUN_SEQ.out
        LAST_ERR=$IT_TMP/log/$RUN_SEQ.err
        LAST_CMD="(cd $dir) $*"
        envfile=$IT_TMP/log/env
        { base_env; [ -n "${EXTRA_ENV:-}" ] && printf '%s\n' "$EXTRA_ENV"; } > "$envfile"
        (
                cd "$dir" || exit 2
                # Word-splitting on newlines only: values may contain spaces.
                IFS='
'
                # shellcheck disable=SC2046
                exec env -i $(cat "$envfile") "$@"
        ) < "${STDIN_FROM:-/dev/null}" > "$LAST_OUT" 2> "$LAST_ERR"
        LAST_STATUS=$?
}

# sb [CORDON-OPTIONS...] -- CMD...: `cordon run` in the workspace ($SB_DIR, default $WS).
# $SB_OPTS (split on spaces) go before the caller's options.
sb() {
        # shellcheck disable=SC2086
        run_in "${SB_DIR:-$WS}" "$CORDON" run ${SB_OPTS:-} "$@"
}

# The number of `cordon: fatal:` lines in the last run's stderr.
fatal_lines() {
        grep -c '^cordon: fatal: ' "$LAST_ERR" || true
}

# ---- verdicts --------------------------------------------------------------------------------

# expect_refused NAME CMD...: CMD is an `attack` subcommand run inside the sandbox; exit 0 means
# the escape was refused. Also fails when the sandbox could not start (125 + fatal line): an
# attack that never ran proves nothing.
expect_refused() {
        name=$1
        shift
        sb -- "$ATTACK" "$@"
        judge_attack "$name"
}

# expect_refused_or_fail_closed NAME ARGS...: like expect_refused, but cordon refusing to start
# the sandbox at all (exit 125 with a POLICY_UNENFORCEABLE fatal line: it cannot enforce the
# policy with this input) also counts as refused — nothing ran.
expect_refused_or_fail_closed() {
        name=$1
        shift
        sb -- "$ATTACK" "$@"
        if [ "$LAST_STATUS" = 125 ] && grep -q '^cordon: fatal: POLICY_UNENFORCEABLE: ' "$LAST_ERR"; then
                ok "$name (refused to start)"
        else
                judge_attack "$name"
        fi
}

judge_attack() {
        case $LAST_STATUS in
        0) ok "$1" ;;
        1) not_ok "$1" "ESCAPE: the attack succeeded" ;;
        2) not_ok "$1" "harness error: the attack could not be set up" ;;
        125) not_ok "$1" "cordon failed to start the sandbox: $(grep '^cordon: fatal' "$LAST_ERR")" ;;
        *) not_ok "$1" "unexpected status $LAST_STATUS" ;;
        esac
}

# expect_create_refused NAME ROUTE PATH [HOST_PATH]: `attack create ROUTE PATH` inside, refused,
# and HOST_PATH (default: PATH, relative to the workspace unless absolute) absent on the host.
expect_create_refused() {
        name=$1
        sb -- "$ATTACK" create "$2" "$3"
        case $3 in /*) hostp=$3 ;; *) hostp=${SB_DIR:-$WS}/$3 ;; esac
        [ $# -ge 4 ] && hostp=$4
        if [ -e "$hostp" ] || [ -L "$hostp" ]; then
                not_ok "$name" "left behind on the host: $(ls -ld "$hostp")"
                rm -rf "$hostp"
        else
                judge_attack "$name"
        fi
        clean_aux
}

# expect_works NAME CMD...: an allowed operation inside the sandbox must succeed (status 0).
expect_works() {
        name=$1
        shift
        sb -- "$@"
        if [ "$LAST_STATUS" -eq 0 ]; then ok "$name"; else not_ok "$name" "status $LAST_STATUS"; fi
}

# host_absent NAME PATH...: none of the paths exists on the host (not even as a dangling link).
host_absent() {
        name=$1
        shift
        for p in "$@"; do
                if [ -e "$p" ] || [ -L "$p" ]; then
                        not_ok "$name" "left behind on the host: $(ls -ld "$p")"
                        rm -rf "$p"
                        return 0
                fi
        done
        ok "$name"
}

# Prints the pids of live processes whose argv[0] is MARKER.
marker_pids() {
        for d in /proc/[0-9]*; do
                a0=$(tr '\0' '\n' < "$d/cmdline" 2>/dev/null | head -n 1)
                [ "$a0" = "$1" ] && echo "${d#/proc/}"
        done
        return 0
}

# Kills what an escaped test left running (only processes carrying this run's marker).
kill_marker() {
        for p in $(marker_pids "$1"); do kill -9 "$p" 2>/dev/null || true; done
}

# ---- host state ------------------------------------------------------------------------------

# A fingerprint of everything the sandbox must not change: the fake home and the protected paths
# of the workspace (type, mode and content of each entry).
snapshot() {
        for root in "$FAKE_HOME" "$WS/.git/config" "$WS/.git/hooks" "$WS/.git/HEAD" "$WS/.zshrc" \
                "$WS/.vscode" "$WS/.claude" "$WS/.gemini" "$IT_TMP/outside"; do
                [ -e "$root" ] || continue
                find "$root" -printf '%p %y %m %l\n'
                find "$root" -type f -exec cksum {} +
        done | LC_ALL=C sort
}

SNAP_FILE=
take_snapshot() {
        SNAP_FILE=$IT_TMP/log/snapshot
        snapshot > "$SNAP_FILE"
}

# host_unchanged NAME: the host side still matches the snapshot.
host_unchanged() {
        snapshot > "$SNAP_FILE.now"
        if cmp -s "$SNAP_FILE" "$SNAP_FILE.now"; then
                ok "$1"
        else
                not_ok "$1" "the host changed:" \
                        "$(diff "$SNAP_FILE" "$SNAP_FILE.now" | sed -n '2,12p' | tr '\n' '|')"
                snapshot > "$SNAP_FILE" # re-baseline so one change is reported once
        fi
}

# Removes stray auxiliary files an attack may leave in the workspace when refused halfway.
clean_aux() {
        rm -rf "$WS"/cordon-it-aux-* "$WS"/cordon-it-auxdir-* "$WS"/cordon-it-lnk-* \
                "$WS"/cordon-it-away-* "$WS_NOGIT"/cordon-it-* 2>/dev/null || true
}
