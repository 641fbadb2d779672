#!/bin/sh
# tests/integration/suite-settings.sh: sourced by suite.sh (same fixture, same verdicts). A
# sandboxed command must never choose the next run's sandbox (docs/settings.md, "Project settings:
# the project root and trust"): a project settings file that got into the workspace (a sandboxed
# command, a clone) may tighten but not loosen until the user trusts its exact content, and
# neither the settings directories nor the trust store nor other tools' configuration can be
# written from inside.

# The project file as something that got there from outside the sandbox (a clone, an earlier
# unsandboxed tool): the directory pre-exists, written by the host side of the test.
plant_project() {
        mkdir -p "$1/.cordon"
        printf '%s\n' "$2" > "$1/.cordon/settings.json"
}

# ignored_line FILE: the last run's stderr names FILE's loosening item as ignored and says what
# to run to trust it.
ignored_line() {
        grep -q "^cordon: warning: project settings $1:.*ignored because the project settings are not trusted; to trust this exact content, run outside the sandbox: cordon settings trust $1\$" "$LAST_ERR"
}

# trust_project DIR: the user's explicit step, outside any sandbox (the real binary: under the
# landlock wrapper the user namespace would change who owns the store).
trust_project() {
        run_in "$1" "$CORDON_REAL" settings trust
}

STORE=$FAKE_HOME/.config/cordon/trusted-projects.json

t_project_settings_untrusted() {
        sub=$WS/sub
        # The exact reproduction: danger-full-access from sub/.cordon/settings.json.
        plant_project "$sub" '{"sandbox": {"mode": "danger-full-access"}}'
        SB_DIR=$sub sb -- cat "$FAKE_HOME/.ssh/id_rsa"
        if grep -q "$MARK" "$LAST_OUT"; then
                not_ok "project settings: an untrusted danger-full-access keeps the sandbox" \
                        "ESCAPE: the secret was read"
        elif ! ignored_line "$sub/.cordon/settings.json"; then
                not_ok "project settings: an untrusted danger-full-access keeps the sandbox" \
                        "no 'ignored' warning naming the trust step"
        else
                ok "project settings: an untrusted danger-full-access keeps the sandbox"
        fi
        # From a directory below the project root: the same file, the same refusal.
        mkdir -p "$sub/deeper"
        SB_DIR=$sub/deeper sb -- cat "$FAKE_HOME/.ssh/id_rsa"
        if grep -q "$MARK" "$LAST_OUT" || ! ignored_line "$sub/.cordon/settings.json"; then
                not_ok "project settings: found at the project root, still untrusted" \
                        "status $LAST_STATUS"
        else
                ok "project settings: found at the project root, still untrusted"
        fi
        # A writable bind outside the workspace.
        plant_project "$sub" "{\"sandbox\": {\"bindMounts\": [{\"hostPath\": \"$OUTSIDE\"}]}}"
        SB_DIR=$sub sb -- sh -c "echo planted > '$OUTSIDE/planted'"
        if [ -e "$OUTSIDE/planted" ]; then
                not_ok "project settings: an untrusted writable bind outside is ignored" \
                        "ESCAPE: $OUTSIDE/planted written"
                rm -f "$OUTSIDE/planted"
        elif ! ignored_line "$sub/.cordon/settings.json"; then
                not_ok "project settings: an untrusted writable bind outside is ignored" \
                        "no 'ignored' warning"
        else
                ok "project settings: an untrusted writable bind outside is ignored"
        fi
}

t_project_settings_trusted() {
        sub=$WS/sub
        plant_project "$sub" "{\"sandbox\": {\"bindMounts\": [{\"hostPath\": \"$OUTSIDE\"}]}}"
        trust_project "$sub"
        if [ "$LAST_STATUS" -ne 0 ] || ! grep -q "sandbox.bindMounts '$OUTSIDE'" "$LAST_OUT"; then
                not_ok "project settings: cordon settings trust shows what it loosens" \
                        "status $LAST_STATUS: $(head -c 300 "$LAST_ERR")"
        else
                ok "project settings: cordon settings trust shows what it loosens"
        fi
        SB_DIR=$sub sb -- sh -c "echo planted > '$OUTSIDE/planted'"
        if [ "$LAST_STATUS" -eq 0 ] && [ -e "$OUTSIDE/planted" ]; then
                ok "project settings: a trusted file is honoured"
        else
                not_ok "project settings: a trusted file is honoured" "status $LAST_STATUS"
        fi
        rm -f "$OUTSIDE/planted"
        # One byte more: untrusted again.
        printf ' ' >> "$sub/.cordon/settings.json"
        SB_DIR=$sub sb -- sh -c "echo planted > '$OUTSIDE/planted'"
        if [ -e "$OUTSIDE/planted" ]; then
                not_ok "project settings: a changed trusted file is untrusted" "ESCAPE"
                rm -f "$OUTSIDE/planted"
        elif ! ignored_line "$sub/.cordon/settings.json"; then
                not_ok "project settings: a changed trusted file is untrusted" "no warning"
        else
                ok "project settings: a changed trusted file is untrusted"
        fi
}

t_project_settings_store() {
        sub=$WS/sub
        take_snapshot
        # The trust step from inside: the store is read-only there.
        SB_DIR=$sub sb -- "$CORDON_REAL" settings trust
        if [ "$LAST_STATUS" -eq 0 ]; then
                not_ok "trust store: cordon settings trust fails inside the sandbox" "it worked"
        else
                ok "trust store: cordon settings trust fails inside the sandbox"
        fi
        for route in write write-creat trunc-creat unlink rename-away via-symlink; do
                SB_DIR=$sub expect_refused "trust store: $route it from inside" \
                        modify "$route" "$STORE"
        done
        for route in open mkdir symlink rename; do
                expect_create_refused "trust store: $route a new file in ~/.config/cordon" \
                        "$route" "$FAKE_HOME/.config/cordon/cordon-it-new.json"
        done
        host_unchanged "trust store: unchanged on the host"
        # Settings directories, in the workspace and (root-level) in the plan itself.
        rm -rf "$WS/.cordon"
        for route in open mkdir symlink rename rename-dir; do
                expect_create_refused "settings dirs: $route .cordon" "$route" .cordon
                expect_create_refused "settings dirs: $route .cordon/settings.json" "$route" \
                        .cordon/settings.json "$WS/.cordon"
        done
        rm -rf "$sub/.cordon"
}

# data/protected/names.list: files other tools execute or trust, not creatable or writable. Each
# entry itself (a directory entry as the directory), then files inside directories that exist.
PROTECTED_NEW=".cursor .cursorrules .windsurf .windsurfrules .continue .zed .amazonq .roo .roomodes
.kiro .gemini/GEMINI.md .codex opencode.json opencode.jsonc .opencode .aider.conf.yml .aiderignore
.envrc .devcontainer .devcontainer.json .github/copilot-instructions.md .github/instructions
.github/prompts .github/chatmodes .clinerules .claude.json .zlogin .zlogout"
PROTECTED_DIRS=".cursor .windsurf .continue .zed .amazonq .roo .kiro .codex .opencode .devcontainer
.github/instructions .github/prompts"
PROTECTED_INSIDE=".cursor/mcp.json .windsurf/rules .continue/config.json .zed/settings.json
.amazonq/mcp.json .roo/mcp.json .kiro/hooks .codex/config.toml .opencode/plugin
.devcontainer/devcontainer.json .github/instructions/x.instructions.md .github/prompts/x.prompt.md"

t_protected_new_entries() {
        mkdir -p "$WS/.github"
        for p in $PROTECTED_NEW; do
                for route in open mkdir symlink rename; do
                        expect_create_refused "protected: $route $p" "$route" "$p"
                done
        done
        for d in $PROTECTED_DIRS; do mkdir -p "$WS/$d"; done
        for p in $PROTECTED_INSIDE; do
                for route in open mkdir symlink rename; do
                        expect_create_refused "protected: $route $p" "$route" "$p"
                done
        done
        # Existing ones stay unwritable.
        echo '{}' > "$WS/.cursor/mcp.json"
        echo 'echo host' > "$WS/.envrc"
        echo 'x' > "$WS/.github/copilot-instructions.md"
        for p in .cursor/mcp.json .envrc .github/copilot-instructions.md; do
                for route in write trunc rename-over unlink; do
                        expect_refused "protected: $route existing $p" modify "$route" "$WS/$p"
                done
        done
        # Next to them, ordinary work goes on.
        expect_works "protected: .github/CODEOWNERS is writable" \
                sh -c 'echo "* @me" > .github/CODEOWNERS'
        expect_works "protected: src/.envrc below the root is writable" \
                sh -c 'mkdir -p src && echo x > src/.envrc'
        for d in $PROTECTED_DIRS; do rm -rf "${WS:?}/$d"; done
        rm -rf "$WS/.envrc" "$WS/.github" "$WS/src/.envrc"
}

t_project_settings() {
        t_project_settings_untrusted
        t_project_settings_trusted
        t_project_settings_store
        t_protected_new_entries
        rm -rf "$FAKE_HOME/.config/cordon" # the fixture had no store
}
