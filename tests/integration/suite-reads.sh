# shellcheck shell=sh
# tests/integration/suite-reads.sh: read narrowing (blockReadsOutsideWorkdirs, docs/policy.md
# "Read narrowing"), sourced by suite.sh. The home holds files marked like the secrets but outside
# the secret set; under the switch every route to them is refused, while the workspace, a
# workspace inside the home, the allowRead exceptions and the system's tools keep working.

reads_fixture() {
        mkdir -p "$FAKE_HOME/docs" "$FAKE_HOME/ref" "$FAKE_HOME/proj"
        secret_file "$FAKE_HOME/docs/notes.txt"
        chmod 644 "$FAKE_HOME/docs/notes.txt"
        printf 'reference\n' > "$FAKE_HOME/ref/readme.txt"
        printf 'in the home project\n' > "$FAKE_HOME/proj/file.txt"
        ln -sf "$FAKE_HOME/docs/notes.txt" "$WS/home-notes-link"
        ln -sf "$FAKE_HOME/docs" "$WS/home-docs-link"
        # As root, another user's home and root's own, on the real paths.
        OTHER_HOME=
        if [ "$(id -u)" = 0 ] && [ -d /home ]; then
                OTHER_HOME=/home/cordon-it-reads-$ID
                mkdir -p "$OTHER_HOME" && secret_file "$OTHER_HOME/diary.txt"
                chmod 644 "$OTHER_HOME/diary.txt"
        fi
}

reads_cleanup() {
        rm -f "$WS/home-notes-link" "$WS/home-docs-link" "$WS/stolen-notes"
        rm -rf "$FAKE_HOME/docs" "$FAKE_HOME/ref" "$FAKE_HOME/proj"
        [ -n "$OTHER_HOME" ] && rm -rf "$OTHER_HOME"
        return 0
}

t_reads_attacks() {
        expect_refused "reads: ~/docs/notes.txt, every resolution route" \
                read "$FAKE_HOME/docs/notes.txt"
        expect_refused "reads: a symlink in the workspace into the home" read home-notes-link
        expect_refused "reads: a symlinked directory in the workspace into the home" \
                read home-docs-link/notes.txt
        expect_refused "reads: ../ from the workspace" read ../home/docs/notes.txt
        expect_refused "reads: /proc/self/cwd/../" read /proc/self/cwd/../home/docs/notes.txt
        expect_refused "reads: a hard link to a home file cannot be made" \
                link-secret "$FAKE_HOME/docs/notes.txt" "$WS/stolen-notes"
        if [ "$BACKEND" = native ]; then
                expect_refused "reads: the home is not listable" list "$FAKE_HOME" docs
        fi
        if [ -n "$OTHER_HOME" ]; then
                expect_refused "reads: another user's home (/home/...)" read "$OTHER_HOME/diary.txt"
        fi
        host_absent "reads: no hard link left behind" "$WS/stolen-notes"
}

t_reads_user() {
        expect_works "reads: the workspace stays readable and writable" \
                sh -c 'echo x > reads-ok.txt && cat reads-ok.txt >/dev/null && rm reads-ok.txt'
        expect_works "reads: system files and tools" sh -c 'cat /etc/passwd >/dev/null && ls /usr/bin >/dev/null'
        expect_works "reads: git in the workspace" git status --short
        expect_works "reads: python3" python3 -c 'import json, os; print(os.getcwd())'
        if command -v cc >/dev/null 2>&1; then
                expect_works "reads: a C build in the workspace" sh -c \
                        'printf "int main(void){return 0;}\n" > reads-t.c && cc -o reads-t reads-t.c && ./reads-t; s=$?; rm -f reads-t reads-t.c; exit $s'
        fi
        SB_OPTS="--block-reads-outside-workdirs --allow-read $FAKE_HOME/ref" \
                expect_works "reads: an allowRead exception is readable" cat "$FAKE_HOME/ref/readme.txt"
        SB_OPTS="--block-reads-outside-workdirs --allow-read $FAKE_HOME/ref" \
                expect_refused "reads: ... but not its sibling" read "$FAKE_HOME/docs/notes.txt"
        SB_OPTS="--block-reads-outside-workdirs --allow-read $FAKE_HOME" \
                expect_works "reads: allowRead of the whole home reads it" \
                cat "$FAKE_HOME/docs/notes.txt"
        SB_OPTS="--block-reads-outside-workdirs --allow-read $FAKE_HOME" \
                expect_refused "reads: ... and keeps the secrets hidden" \
                read "$FAKE_HOME/.ssh/id_rsa"
        sb --block-reads-outside-workdirs --allow-read "$FAKE_HOME/.ssh/known_hosts" -- true
        if [ "$LAST_STATUS" = 125 ] && grep -q "^cordon: fatal: POLICY_INVALID: allowRead '$FAKE_HOME/.ssh/known_hosts' is inside the secret" "$LAST_ERR"; then
                ok "reads: allowRead inside a secret is refused"
        else not_ok "reads: allowRead inside a secret is refused" "status $LAST_STATUS"; fi
        SB_DIR=$FAKE_HOME/proj
        expect_works "reads: a workspace inside the home works" \
                sh -c 'cat file.txt >/dev/null && echo y > new.txt && rm new.txt'
        expect_refused "reads: ... and the rest of the home stays unreadable" \
                read "$FAKE_HOME/docs/notes.txt"
        expect_refused "reads: ... also through ../" read ../docs/notes.txt
        SB_DIR=
}

t_reads_report() {
        run_in "$WS" "$CORDON" policy show --json --block-reads-outside-workdirs
        home_real=$(cd "$FAKE_HOME" && pwd -P)
        if [ "$LAST_STATUS" = 0 ] && python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); n=d["plan"]["readNarrowing"]; assert d["policy"]["blockReadsOutsideWorkdirs"] is True and sys.argv[2] in n["hidden"], n' "$LAST_OUT" "$home_real" 2>"$IT_TMP/log/reads-py"; then
                ok "reads: policy show reports the narrowed directories"
        else not_ok "reads: policy show reports the narrowed directories" "$(cat "$IT_TMP/log/reads-py")"; fi
        printf '{"permissions": {"blockReadsOutsideWorkingDirectories": true}}\n' > "$IT_TMP/srt-reads.json"
        run_in "$WS" "$CORDON" settings import "$IT_TMP/srt-reads.json"
        if [ "$LAST_STATUS" = 0 ] && grep -q '"blockReadsOutsideWorkdirs": true' "$LAST_OUT"; then
                ok "reads: settings import maps permissions.blockReadsOutsideWorkingDirectories"
        else not_ok "reads: settings import maps permissions.blockReadsOutsideWorkingDirectories" "status $LAST_STATUS"; fi
}

t_read_narrowing() {
        reads_fixture
        # Without the switch the home file is readable: the refusals below are the switch's.
        sb -- "$ATTACK" read "$FAKE_HOME/docs/notes.txt"
        if [ "$LAST_STATUS" = 1 ]; then ok "reads: off by default, the home file is readable"
        else not_ok "reads: off by default, the home file is readable" "status $LAST_STATUS"; fi
        SB_OPTS=--block-reads-outside-workdirs t_reads_attacks
        SB_OPTS=--block-reads-outside-workdirs t_reads_user
        t_reads_report
        reads_cleanup
}

# `cordon run --analytics` as this user (docs/cli.md, "Analytics records"): no text of the run
# in the records, the key made 0600 in the secret set and unreadable inside, hashes stable.
t_analytics() {
        am=zq8mark
        for n in 1 2; do
                SB_OPTS="--analytics $IT_TMP/analytics-$n.jsonl --deny-create-name *$am*" \
                        sb -- sh -c "touch x-$am.txt 2>/dev/null; echo $am; exit 0"
        done
        key=$FAKE_HOME/.config/cordon/secrets/analytics.key
        h1=$(grep -o '"targetHash":"[0-9a-f]*"' "$IT_TMP/analytics-1.jsonl")
        h2=$(grep -o '"targetHash":"[0-9a-f]*"' "$IT_TMP/analytics-2.jsonl")
        if [ -n "$h1" ] && [ "$h1" = "$h2" ] && ! grep -q "$am\|$WS" "$IT_TMP"/analytics-*.jsonl &&
                grep -q '"type":"summary"' "$IT_TMP/analytics-1.jsonl"; then
                ok "analytics: records without the run's text, hashes stable across runs"
        else not_ok "analytics: records without the run's text, hashes stable" "$(cat "$IT_TMP/analytics-1.jsonl")"; fi
        if [ "$(stat -c %a "$key")" = 600 ] && [ "$(stat -c %a "$IT_TMP/analytics-1.jsonl")" = 600 ]; then
                ok "analytics: the key and the records are 0600"
        else not_ok "analytics: the key and the records are 0600" "$(ls -l "$key")"; fi
        # Random bytes carry no marker for `attack read`: compare what comes out with the key.
        sb -- sh -c "od -An -tx1 < '$key' | tr -d ' \n'"
        if [ ! -s "$LAST_OUT" ] && grep -q "analytics.key: Permission denied" "$LAST_ERR" &&
                [ -s "$key" ]; then
                ok "analytics: the key is unreadable inside"
        else not_ok "analytics: the key is unreadable inside" "status $LAST_STATUS, out $(cat "$LAST_OUT")"; fi
        # (named *.key: the fixture's final check looks for denied names)
        rm -f "$IT_TMP"/analytics-*.jsonl "$key"
}
