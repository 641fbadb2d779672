# shellcheck shell=sh
# tests/integration/suite-commands.sh: the command policy (commandPolicy, docs/policy.md "Command
# policy"), sourced by suite.sh: refused and approval-needing commands are not run — on this
# backend and on `none` (--sandbox off), where it is the only layer — found inside `sh -c` lines,
# and other commands and other modes still run. The "ask" run has no controlling terminal
# (setsid), so nobody can approve it (the approval itself: tests/cli/test_command_ask.py).

t_command_policy() {
        cp_policy=$IT_TMP/command-policy.json
        cat > "$cp_policy" <<'JSON'
{"commandPolicy": [
  {"command": ["touch", "cp-refused"], "action": "refuse", "modes": ["read-only"]},
  {"command": "touch cp-ask", "action": "ask"}
]}
JSON
        for sandbox in on off; do
                rm -f "$WS/cp-refused" "$WS/cp-ask" "$WS/cp-ok"
                sb --policy "$cp_policy" --mode review --sandbox "$sandbox" -- \
                        sh -c 'true && touch cp-refused; touch cp-ok'
                if [ "$LAST_STATUS" = 125 ] && [ "$(fatal_lines)" = 1 ] &&
                        grep -q "^cordon: fatal: EXEC_FAILED: the command policy refuses 'touch cp-refused' in mode read-only (commandPolicy\[0\])" "$LAST_ERR" &&
                        [ ! -e "$WS/cp-ok" ]; then
                        ok "command policy (sandbox $sandbox): refused inside sh -c, nothing ran"
                else not_ok "command policy (sandbox $sandbox): refused inside sh -c" "status $LAST_STATUS"; fi
                # shellcheck disable=SC2086
                run_in "$WS" setsid -w "$CORDON" run ${SB_OPTS:-} --policy "$cp_policy" \
                        --sandbox "$sandbox" -- env X=1 touch cp-ask
                if [ "$LAST_STATUS" = 125 ] && grep -q "needs approval for 'touch cp-ask'" "$LAST_ERR" &&
                        grep -q "nobody to ask" "$LAST_ERR" && grep -q "commandApproved" "$LAST_ERR" &&
                        [ ! -e "$WS/cp-ask" ]; then
                        ok "command policy (sandbox $sandbox): 'ask' refused with how to allow it"
                else not_ok "command policy (sandbox $sandbox): 'ask' refused" "status $LAST_STATUS"; fi
                # Not in the rule's mode, or another command: it runs.
                sb --policy "$cp_policy" --sandbox "$sandbox" -- sh -c 'touch cp-refused cp-ok'
                if [ "$LAST_STATUS" = 0 ] && [ -e "$WS/cp-refused" ] && [ -e "$WS/cp-ok" ]; then
                        ok "command policy (sandbox $sandbox): other modes and commands run"
                else not_ok "command policy (sandbox $sandbox): other modes and commands run" "status $LAST_STATUS"; fi
        done
        rm -f "$WS/cp-refused" "$WS/cp-ask" "$WS/cp-ok" "$cp_policy"
}
