# shellcheck shell=sh
# tests/integration/names.sh: where the creation-time name rules hold (sourced by suite.sh, which
# provides the fixture and lib.sh). denyCreateNames and the fixed .cordon rule hold in every
# persistent writable root and nowhere else; committed templates pass; allowCreateNames /
# allowCreatePaths lift a wildcard deny glob for one name or path and nothing more.
# docs/design/creation-rules.md, "Where the rules hold".

# The routes that name a new file or directory (tests/lib/attack/attack-fs.c).
NAME_ROUTES="open creat mkdir mknod rename rename-dir link symlink dangling tmpfile"

t_name_scope() {
        # The private /tmp and /dev/shm are discarded at exit: no deny names there (python's
        # ensurepip writes /tmp/tmpXXXXcacert.pem). On the landlock backend the private
        # TMPDIR plays that part (the host's /tmp is not reachable).
        if [ "$BACKEND" = landlock ]; then tmpd='$TMPDIR'; else tmpd=/tmp; fi
        for p in x.pem .env id.key; do
                expect_works "name scope: $p in the private $tmpd is creatable" \
                        sh -c "echo x > $tmpd/$p && test -s $tmpd/$p"
        done
        if [ "$BACKEND" = native ]; then
                expect_works "name scope: /dev/shm/x.pem is creatable" \
                        sh -c 'echo x > /dev/shm/x.pem && mkdir /dev/shm/.cordon'
        fi
        # ... while the workspace keeps them, also next to the exemptions.
        for route in $CORE_ROUTES; do
                expect_create_refused "name scope: $route .env still refused in the workspace" \
                        "$route" .env
        done
        # A runnerStateDirs directory is persistent too.
        state=$IT_TMP/state-dir
        mkdir -p "$state"
        SB_OPTS="--runner-state-dir $state" expect_create_refused \
                "name scope: open x.pem in a runner state dir is refused" open "$state/x.pem"
        SB_OPTS="--runner-state-dir $state" expect_create_refused \
                "name scope: mkdir .cordon in a runner state dir is refused" mkdir "$state/.cordon"
        rm -rf "$state"
        # The user side: a virtual environment with ensurepip (offline; pip vendors cacert.pem).
        py=/usr/bin/python3
        if $py -c 'import ensurepip, venv' 2>/dev/null; then
                expect_works "name scope: python3 -m venv .venv (ensurepip runs)" \
                        sh -c "$py -m venv .venv && .venv/bin/python3 -m pip --version"
                rm -rf "$WS/.venv"
        else
                skip "name scope: python3 -m venv .venv" "no ensurepip in $py"
        fi
}

t_name_templates() {
        for p in .env.example .env.sample .env.template .env.dist sub/.env.example; do
                for route in open rename link; do
                        expect_works "templates: $route $p" "$ATTACK" allow-create "$route" "$p"
                        [ -e "$WS/$p" ] || not_ok "templates: $p exists on the host"
                        rm -f "$WS/$p"
                done
        done
        clean_aux
        expect_works "templates: cp .env.example .env.sample" \
                sh -c 'echo A= > .env.example && cp .env.example .env.sample'
        rm -f "$WS/.env.example" "$WS/.env.sample"
        # The .env it is copied to stays refused; so do its near neighbours.
        sb -- sh -c 'echo A= > .env.example && cp .env.example .env'
        if [ "$LAST_STATUS" -ne 0 ] && [ ! -e "$WS/.env" ]; then
                ok "templates: cp .env.example .env is refused, no .env"
        else not_ok "templates: cp .env.example .env is refused" "status $LAST_STATUS"; fi
        rm -f "$WS/.env.example" "$WS/.env"
        for p in .env.example.local .env.local .env.exampl; do
                expect_create_refused "templates: open $p is refused" open "$p"
        done
}

t_name_allow() {
        mkdir -p "$WS/tests/data"
        set -f # SB_OPTS is split unquoted: no pathname expansion of the globs in it
        opts="--allow-create-path $WS/tests/data/*.pem"
        for route in open rename link symlink; do
                SB_OPTS=$opts expect_works "allow: $route tests/data/server.pem (allowCreatePaths)" \
                        "$ATTACK" allow-create "$route" tests/data/server.pem
                [ -e "$WS/tests/data/server.pem" ] || [ -L "$WS/tests/data/server.pem" ] ||
                        not_ok "allow: tests/data/server.pem exists on the host"
                rm -f "$WS/tests/data/server.pem"
        done
        clean_aux
        # Relative on the command line: made absolute against the current directory.
        (cd "$WS" && run_in "$WS" "$CORDON" run --allow-create-path 'tests/data/*.pem' -- \
                "$ATTACK" allow-create open tests/data/rel.pem)
        if [ "$LAST_STATUS" -eq 0 ] && [ -e "$WS/tests/data/rel.pem" ]; then
                ok "allow: --allow-create-path relative to the current directory"
        else not_ok "allow: --allow-create-path relative to the current directory" "status $LAST_STATUS"; fi
        rm -f "$WS/tests/data/rel.pem"
        # Only that directory, only that glob; a literal deny name and protected paths never.
        for p in server.pem tests/server.pem tests/data/sub/x.pem tests/data/x.key tests/data/.env; do
                SB_OPTS=$opts expect_create_refused "allow: $p stays refused" open "$p"
        done
        SB_OPTS="--allow-create-name .env --allow-create-name *" expect_create_refused \
                "allow: --allow-create-name .env does not lift the literal .env" open .env
        SB_OPTS="--allow-create-name * --allow-create-path $WS/*" expect_create_refused \
                "allow: no allow entry reaches a protected path (.mcp.json)" open .mcp.json
        # The policy-file form.
        pol=$IT_TMP/log/allow-policy.json
        printf '{"allowCreateNames": ["*.test.key"], "allowCreatePaths": ["%s/tests/data/*.pem"]}\n' \
                "$WS" > "$pol"
        SB_OPTS="--policy $pol" expect_works "allow: allowCreateNames and allowCreatePaths from a policy file" \
                sh -c 'echo x > tests/data/p.pem && echo y > sub/a.test.key'
        rm -f "$WS/tests/data/p.pem" "$WS/sub/a.test.key"
        printf '{"allowCreatePaths": ["tests/data/*.pem"]}\n' > "$pol"
        FATAL_RE="^cordon: fatal: POLICY_INVALID: .*allowCreatePaths\\[0\\].*absolute" \
                expect_status "allow: a relative allowCreatePaths entry is refused" 125 1 \
                --policy "$pol" -- true
        rm -rf "$WS/tests" "$pol"
        set +f
}

# .cordon (project settings) comes into existence nowhere in a persistent root, in any case, by
# any route; nothing is created beneath an existing one; no allow entry lifts it.
t_cordon_dir() {
        for p in .cordon sub/.cordon sub/.CORDON sub/deep/.Cordon; do
                mkdir -p "$WS/sub/deep"
                for route in $NAME_ROUTES; do
                        expect_create_refused "cordon dir: $route $p" "$route" "$p"
                done
        done
        for route in $EXTRA_ROUTES; do
                expect_create_refused "cordon dir: $route sub/.cordon" "$route" sub/.cordon
        done
        set -f
        SB_OPTS="--allow-create-name .cordon --allow-create-path $WS/*" expect_create_refused \
                "cordon dir: no allow entry lifts it" mkdir sub/.cordon
        set +f
        mkdir -p "$WS/sub/.cordon"
        expect_create_refused "cordon dir: nothing beneath an existing sub/.cordon" \
                open sub/.cordon/settings.json
        rmdir "$WS/sub/.cordon"
        sb -- sh -c 'mkdir -p sub/.cordon && echo "{\"mode\":\"danger-full-access\"}" > sub/.cordon/settings.json'
        if [ "$LAST_STATUS" -ne 0 ] && [ ! -e "$WS/sub/.cordon" ]; then
                ok "cordon dir: mkdir -p sub/.cordon + settings.json fails, nothing left"
        else not_ok "cordon dir: mkdir -p sub/.cordon fails, nothing left" "status $LAST_STATUS"; fi
        ev=$IT_TMP/log/cordon-dir.jsonl
        sb --events "$ev" -- mkdir sub/.cordon
        if grep -q '"type":"violation".*\.cordon' "$ev"; then
                ok "cordon dir: the refusal is reported as a violation naming .cordon"
        else not_ok "cordon dir: the refusal is reported as a violation" "$(cat "$ev")"; fi
        rm -f "$ev"
        # Control: unconfined, the same mkdir works (the checks above can fail).
        sb --sandbox off -- mkdir sub/.cordon
        if [ -d "$WS/sub/.cordon" ]; then ok "control: unconfined, mkdir sub/.cordon works"
        else not_ok "control: unconfined, mkdir sub/.cordon works"; fi
        rm -rf "$WS/sub/.cordon" "$WS/sub/deep"
}
